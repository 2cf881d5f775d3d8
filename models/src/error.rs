//! The error every configuration check returns: the dotted key at fault and what was expected.
//! A leaf: models report a [`FieldError`] by key, and the scenario loader
//! ([`crate::scenario`]) attaches the file, line and `--set` argument it came from.

use std::fmt;

/// A value that failed validation, named by its dotted key path (`topology.host_link.rate`,
/// `flow[2].dst`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.message)
    }
}

/// For a `kind` that takes no other keys (`nic.cc = { kind = "none" }`): refuse any. serde
/// ignores the rest of an internally tagged unit variant's table, even with
/// `deny_unknown_fields`, so such variants deserialize through this.
pub(crate) fn no_keys<'de, D: serde::Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoKeys {}
    <NoKeys as serde::Deserialize>::deserialize(d).map(|_| ())
}
