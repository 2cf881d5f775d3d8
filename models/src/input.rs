//! Reading the files a user names (scenarios, traffic matrices, sweeps, earlier results):
//! regular files only, no larger than a limit checked before reading, and text that is
//! UTF-8, or an error with the line of the first bad byte. A FIFO, a device (`/dev/zero`) or
//! a directory is refused without being read, so a wrong path never hangs or fills memory.

use std::io::Read;
use std::path::Path;

/// Largest scenario or sweep file: far above any hand-written file (the biggest shipped
/// scenario is a few KB).
pub const MAX_CONFIG: u64 = 16 << 20;
/// Largest data file (an imported traffic matrix; uet-htsim's 8192-host permutation is
/// 250 KB, a million-flow matrix about 50 MB).
pub const MAX_DATA: u64 = 1 << 30;
/// Largest SONiC `config_db.json`: a 128-port switch's whole running configuration is under
/// 2 MB.
pub const MAX_SONIC: u64 = 16 << 20;
/// Largest topology file (an edge list or an htsim `.topo`): a 65,536-host fat tree's edge
/// list, a line per cable, is about 8 MB; a `.topo` is under 1 KB.
pub const MAX_TOPOLOGY: u64 = 64 << 20;

/// Why a file cannot be read: the message names no path (callers do) and starts with
/// `line N:` when one line is at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl From<String> for ReadError {
    fn from(message: String) -> Self {
        ReadError { line: None, message }
    }
}

/// The text of `path`, or why it cannot be read.
pub fn read_text(path: &Path, max: u64) -> Result<String, ReadError> {
    read(path, max).map_err(ReadError::from).and_then(|bytes| {
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            ReadError {
                line: Some(line),
                message: format!("not UTF-8 text (byte {} of the file)", at + 1),
            }
        })
    })
}

fn read(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("not a regular file (it is {})", kind_of(&meta)));
    }
    if meta.len() > max {
        return Err(format!(
            "{} bytes, more than the {} a file of this kind may have",
            meta.len(),
            size_text(max)
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "more than the {} a file of this kind may have",
            size_text(max)
        ));
    }
    Ok(bytes)
}

/// `16777216 bytes (16 MiB)`: a limit as a user reads it.
fn size_text(max: u64) -> String {
    match max {
        m if m >= 1 << 20 && m % (1 << 20) == 0 => format!("{m} bytes ({} MiB)", m >> 20),
        m => format!("{m} bytes"),
    }
}

fn kind_of(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_big_files_and_bad_bytes_are_refused() {
        let msg = |p: &Path, max| read_text(p, max).unwrap_err().to_string();
        assert!(msg(Path::new("/dev/zero"), MAX_CONFIG).contains("device"));
        assert!(msg(Path::new("/"), MAX_CONFIG).contains("directory"));
        let dir = std::env::temp_dir().join(format!("sim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.toml");
        std::fs::write(&f, b"x = 1\ny = \"\xff\"\n").unwrap();
        assert_eq!(
            msg(&f, MAX_CONFIG),
            "line 2: not UTF-8 text (byte 12 of the file)"
        );
        std::fs::write(&f, vec![b'#'; 100]).unwrap();
        assert!(msg(&f, 99).contains("more than the 99 bytes"), "{}", msg(&f, 99));
        assert_eq!(read_text(&f, 100).unwrap().len(), 100);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
