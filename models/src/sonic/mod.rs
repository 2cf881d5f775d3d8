//! SONiC's `config_db.json` in and out: the tables that shape a switch's data plane
//! (buffers, PFC, ECN, scheduling, the PFC watchdog) as this simulator's settings.
//!
//! Table and field formats follow SONiC's configuration reference
//! (`sonic-buildimage/src/sonic-yang-models/doc/Configuration.md` and the `sonic-*.yang`
//! models) and the per-platform templates (`files/build_templates/buffers_config.j2`,
//! `qos_config.j2`, `device/*/pg_profile_lookup.ini`): every value is a string; keys join a
//! port (or a comma list of ports) and an index or range with `|`; a reference is a plain
//! name or, in configurations from before 2021, `[TABLE|name]`.
//!
//! - [`import()`]: `switch.sonic = "config_db.json"` turns the file into settings, with a
//!   warning for each table and field the model does not act on;
//! - [`export`]: `sim export sonic` writes a scenario's switch settings back as a fragment.

pub mod export;
pub mod import;
mod imported;
pub mod llr;
mod pfcwd;
mod read;
mod schema;

pub use import::import;
pub use imported::{Imported, PortLlr, SonicPort};

use serde_json::{Map, Value};

/// A value that is wrong, and where it is (a JSON path such as
/// `BUFFER_PROFILE.pg_lossless_100000_5m_profile.dynamic_th`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn err(path: &str, message: impl Into<String>) -> JsonError {
    JsonError {
        path: path.to_string(),
        message: message.into(),
    }
}

/// One table's entries: key and fields.
type Entries<'a> = Vec<(&'a str, &'a Map<String, Value>)>;

/// `table` as an object of objects (entries that are not objects are an error).
fn table<'a>(root: &'a Map<String, Value>, name: &str) -> Result<Entries<'a>, JsonError> {
    let Some(v) = root.get(name) else {
        return Ok(Vec::new());
    };
    let t = v
        .as_object()
        .ok_or_else(|| err(name, "expected an object of entries"))?;
    t.iter()
        .map(|(k, v)| {
            v.as_object()
                .map(|o| (k.as_str(), o))
                .ok_or_else(|| err(&format!("{name}.{k}"), "expected an object of fields"))
        })
        .collect()
}

/// A field's string (SONiC writes numbers as strings; bare JSON numbers are taken too).
fn text(o: &Map<String, Value>, path: &str, field: &str) -> Result<Option<String>, JsonError> {
    match o.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(err(&format!("{path}.{field}"), "expected a string")),
    }
}

/// A field as an integer in `range`.
fn int(
    o: &Map<String, Value>,
    path: &str,
    field: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<i64>, JsonError> {
    let Some(s) = text(o, path, field)? else {
        return Ok(None);
    };
    let at = format!("{path}.{field}");
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| err(&at, format!("expected an integer, got {s:?}")))?;
    if !range.contains(&v) {
        return Err(err(
            &at,
            format!("must be {} to {}, got {v}", range.start(), range.end()),
        ));
    }
    Ok(Some(v))
}

/// A reference: `name` or `[TABLE|name]` (the format before sonic-utilities' db_migrator
/// 3.0.2).
fn reference(s: &str) -> &str {
    s.strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|r| r.split_once(['|', ':']))
        .map_or(s, |(_, name)| name)
}

/// A `ports|index` key: its ports and the indices `lo-hi` or `i` cover.
fn port_key<'k>(path: &str, key: &'k str, max: u8) -> Result<(Vec<&'k str>, Vec<u8>), JsonError> {
    let (ports, idx) = key
        .split_once('|')
        .ok_or_else(|| err(path, format!("expected <port>|<index>, got {key:?}")))?;
    let parse = |s: &str| -> Result<u8, JsonError> {
        s.parse::<u8>()
            .ok()
            .filter(|&i| i <= max)
            .ok_or_else(|| err(path, format!("index {s:?} is not 0..={max}")))
    };
    let range = match idx.split_once('-') {
        Some((lo, hi)) => {
            let (lo, hi) = (parse(lo)?, parse(hi)?);
            if lo > hi {
                return Err(err(path, format!("range {idx:?} runs backwards")));
            }
            (lo..=hi).collect()
        }
        None => vec![parse(idx)?],
    };
    Ok((ports.split(',').collect(), range))
}

/// `"3,4"` as priorities.
fn priority_list(path: &str, s: &str) -> Result<Vec<u8>, JsonError> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|p| {
            p.trim()
                .parse::<u8>()
                .ok()
                .filter(|&p| p < 8)
                .ok_or_else(|| err(path, format!("expected priorities 0..=7 like \"3,4\", got {s:?}")))
        })
        .collect()
}

#[cfg(test)]
mod tests;
