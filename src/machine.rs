//! What this machine and process may use: the default `run.max_memory`, half of the least of
//! physical memory, a cgroup's `memory.max` and the address-space limit (`ulimit -v`). The
//! scenario loader compares each variant's estimated memory (`models::budget`) with it
//! before anything large is allocated.

/// The default `run.max_memory`: half the least of physical memory, the cgroup's limit and
/// the address-space limit, with where it came from. None when nothing is known.
pub fn machine_limit() -> Option<(u64, String)> {
    let mut best: Option<(u64, String)> = None;
    let mut consider = |bytes: u64, what: &str| {
        if best.as_ref().is_none_or(|(b, _)| bytes < *b) {
            best = Some((bytes, what.to_string()));
        }
    };
    if let Some(kb) = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
    }) {
        consider(kb * 1024, "this machine's memory");
    }
    if let Some(b) = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
    {
        consider(b, "the cgroup's memory.max");
    }
    #[cfg(unix)]
    if let Some(b) = rustix::process::getrlimit(rustix::process::Resource::As).current {
        consider(b, "the address-space limit (ulimit -v)");
    }
    best.map(|(b, what)| (b / 2, format!("half of {what}")))
}
