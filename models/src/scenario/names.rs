//! Names that become file names: a scenario's `name` (its results directory,
//! `results/<name>`), a sweep's, a variant's and a capture's (`<capture>-<variant>.pcap`).
//! Each is checked before anything runs, so that a name never writes outside the results
//! directory (`"../../x"`, an absolute path), never makes `results/` itself the results
//! (`""`), and never fails only after an hour's run (a `/` in a variant, a name longer than a
//! file name may be).

/// Longest file name on the filesystems sim runs on (ext4, XFS, APFS, NTFS: 255 bytes).
pub const MAX_FILE_NAME: usize = 255;

/// Why `name` cannot be one path component of at most `max` bytes, if it cannot.
pub fn file_name(name: &str, max: usize) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("a name must not be empty: it names a file or directory".into());
    }
    if name == "." || name == ".." {
        return Err(format!(
            "{name:?} is not a name of its own: it names a directory already there"
        ));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '/' | '\\') || c.is_control()) {
        return Err(format!(
            "{c:?} may not be in a name: names are file names, not paths (use - or _)"
        ));
    }
    if name.len() > max {
        return Err(format!(
            "{} bytes is longer than a file name may be ({max} bytes here)",
            name.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_empty_names_are_refused() {
        for bad in [
            "", " ", ".", "..", "../../x", "/abs", "a/b", "a\\b", "a\0b", "a\nb",
        ] {
            assert!(file_name(bad, MAX_FILE_NAME).is_err(), "{bad:?}");
        }
        assert!(file_name(&"x".repeat(256), MAX_FILE_NAME).is_err());
        for good in ["leaf-spine", "roce dcqcn", "ùéc_1.2", "..x", &"x".repeat(255)] {
            assert!(file_name(good, MAX_FILE_NAME).is_ok(), "{good:?}");
        }
    }
}
