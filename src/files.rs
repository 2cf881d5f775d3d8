//! Writing files a user opens: each to a temporary name beside it, then renamed into place,
//! so a reader never sees half a file.

use anyhow::{Context, Result};
use std::fs;
use std::path::Path;

/// Write `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}
