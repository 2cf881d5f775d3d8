//! Writing result files. Each goes into the command's private staging directory
//! (`results_dir.rs`), which replaces `--out` whole when everything is written, so no file
//! needs its own temporary name; an error names the file it failed on.

use anyhow::{Context, Result};
use std::path::Path;

/// Write `bytes` to `path`.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    fault_point();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// A file to stream into (a large CSV), buffered: what `write` is for bytes built in memory.
pub fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>> {
    fault_point();
    let f = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    Ok(std::io::BufWriter::with_capacity(1 << 16, f))
}

/// Crash testing (the `crash-test` feature, which the test suite builds with and release
/// binaries do not): with `SIM_TEST_KILL_AT=N` in the environment, the process kills itself
/// (SIGKILL, no clean-up) at the N-th step of writing results (each file, and each rename of
/// the results directory), so tests can check that every step leaves complete results.
#[cfg(not(feature = "crash-test"))]
#[inline(always)]
pub fn fault_point() {}

#[cfg(feature = "crash-test")]
pub fn fault_point() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STEP: AtomicU64 = AtomicU64::new(0);
    let Some(at) = std::env::var("SIM_TEST_KILL_AT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    if STEP.fetch_add(1, Ordering::SeqCst) + 1 == at {
        #[cfg(unix)]
        let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        std::process::abort();
    }
}
