//! The allocator (Linux): jemalloc, asked to back its memory with transparent huge pages
//! (`opt.thp` "always" and `opt.metadata_thp`, jemalloc(3)).
//!
//! A large fabric's state (ports, routing rows, the packet slab, per-flow state) is read at
//! random, so with 4 KiB pages many of those reads likely also miss the TLB (this machine
//! exposes no TLB counters; `AnonHugePages` in `/proc/PID/smaps_rollup` shows 35-51 MB of
//! P1024 RoCEv2's memory on huge pages). Measured A/B against the system allocator on a
//! kernel in `madvise` THP mode: 0.75-0.83 of the CPU time on P1024 and 0.80 on P8192, for
//! 11-22 MB more peak memory (`benches/README.md`). A kernel without THP ignores the advice.
//! Other platforms keep the system allocator: jemalloc warns at every start where THP does
//! not exist, and the pages are the whole gain.

use std::ffi::c_char;

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// A C string pointer jemalloc can read (`const char *malloc_conf`).
#[repr(transparent)]
pub struct Conf(*const c_char);

// SAFETY: it points at a static, immutable C string.
unsafe impl Sync for Conf {}

/// jemalloc reads its options from this symbol at start-up. tikv-jemalloc-sys prefixes its
/// symbols with `_rjem_` unless the `unprefixed_malloc_on_supported_platforms` feature is
/// enabled somewhere in the dependency graph (then this would silently not apply; check
/// with `_RJEM_MALLOC_CONF=confirm_conf:true sim --version`).
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: Conf = Conf(c"thp:always,metadata_thp:always".as_ptr());
