//! `sim sweep` and `sim merge`: parameter sweeps on a laptop (rayon) or a cluster (shards).
//!
//! A sweep file names a base scenario and axes (any scenario key, by dotted path, with a list
//! of values or a numeric range), crossed (or zipped) and replicated over seeds. Every point
//! runs all the scenario's variants, independently and deterministically, so the points can
//! run in any order, in parallel or in shards on different machines, and give the same
//! numbers. Each point writes its own results directory; `sweep.csv` has one row per point x
//! seed x variant, and PNG plots show each metric against each axis, a line per variant with
//! the mean and a 95 % confidence band across seeds (and the other axes).

mod axes;
mod heatmap;
mod merge;
mod plots;
mod run;
mod spec;

pub use merge::{MergeArgs, merge};
pub use run::{SweepArgs, run};

use crate::exit;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::ExitCode;

/// The sweep's description, saved beside its results so `sim merge` can plot shards.
#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    name: String,
    keys: Vec<String>,
    metrics: Vec<String>,
    /// Points in the whole sweep (all shards), this directory's shard `[i, n]`, and a hash
    /// of the sweep and base scenario texts: `sim merge` checks that shards belong together.
    points: usize,
    shard: [usize; 2],
    hash: String,
    /// Ctrl-C stopped the sweep: the rows of points not run say `interrupted`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
}

/// FNV-1a, stable across builds (unlike std's hasher).
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// sweep.csv's columns after the point, seed and axis values: summary.json paths (deterministic
/// numbers only, no wall time, so a sweep's CSV is the same however it was run).
const COLUMNS: [&str; 20] = [
    "variant",
    "status",
    "flows_total",
    "flows_completed",
    "fct_ns.p50",
    "fct_ns.p99",
    "fct_ns.max",
    "slowdown.p50",
    "slowdown.p99",
    "goodput_gbps",
    "drops",
    "pfc_pause_frames",
    "ecn_marked",
    "cnps",
    "trimmed",
    "retransmitted_packets",
    // The first collective job's nccl-tests figures (empty without one).
    "jobs.0.time_ns",
    "jobs.0.algbw_gbps",
    "jobs.0.busbw_gbps",
    "error",
];

/// Write sweep.csv, sweep.json and the plots into `dir` (staging for `out`); the exit code
/// says whether any point failed.
fn finish(dir: &Path, out: &Path, meta: &Meta, mut rows: Vec<Vec<String>>) -> Result<ExitCode> {
    rows.sort_by_key(|r| {
        (
            r[0].parse::<usize>().unwrap_or(usize::MAX),
            r[2 + meta.keys.len()].clone(),
        )
    });
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["point".to_string(), "seed".to_string()];
    header.extend(meta.keys.iter().cloned());
    header.extend(COLUMNS.iter().map(|c| c.to_string()));
    w.write_record(&header)?;
    for r in &rows {
        w.write_record(r)?;
    }
    crate::files::write(&dir.join("sweep.csv"), &w.into_inner()?)?;
    crate::files::write(
        &dir.join("sweep.json"),
        serde_json::to_string_pretty(meta)?.as_bytes(),
    )?;
    plots::write(dir, &meta.name, &meta.keys, &meta.metrics, &header, &rows)?;
    outln!(
        "sweep: {} rows in {}",
        rows.len(),
        out.join("sweep.csv").display()
    );
    // Rows by status, the ones that are not `ok` named for the user.
    let mut not_ok: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in rows.iter().filter(|r| r[3 + meta.keys.len()] != "ok") {
        *not_ok.entry(r[3 + meta.keys.len()].as_str()).or_default() += 1;
    }
    if !not_ok.is_empty() {
        let counts: Vec<String> = not_ok.iter().map(|(s, n)| format!("{n} {s}")).collect();
        errln!(
            "rows not ok: {}; see the `status` and `error` columns of sweep.csv",
            counts.join(", ")
        );
    }
    if meta.interrupted {
        return Ok(ExitCode::from(exit::INTERRUPTED));
    }
    if !not_ok.is_empty() {
        return Ok(ExitCode::from(exit::SWEEP_FAILURES));
    }
    Ok(ExitCode::SUCCESS)
}
