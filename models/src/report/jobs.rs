//! Job-level results of collectives, as nccl-tests reports them (`doc/PERFORMANCE.md` in
//! `NVIDIA/nccl-tests`): the time of one collective call, algbw = S / time and
//! busbw = algbw x the operation's factor (2(n-1)/n for all-reduce, (n-1)/n for all-gather,
//! reduce-scatter and all-to-all, 1 otherwise).

use super::FlowRecord;
use crate::workload::collective::{JobSpec, Op};
use serde::Serialize;

/// One entry of a variant's `jobs` in `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct JobRecord {
    pub name: String,
    pub op: &'static str,
    pub algorithm: &'static str,
    pub ranks: usize,
    pub size_bytes: u64,
    /// nccl-tests' columns: elements of `type` (`size_bytes` / 4 for its default float),
    /// the reduction (`sum`, or `none` for the operations that do not reduce) and the root
    /// (-1: none).
    pub count: u64,
    #[serde(rename = "type")]
    pub dtype: &'static str,
    pub redop: &'static str,
    pub root: i64,
    /// Mean time of one collective call over the iterations that completed: from when the
    /// call was issued (after its compute) to its last message's arrival. Null if none did.
    pub time_ns: Option<f64>,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
    /// The same in GB/s (10^9 bytes per second), as nccl-tests prints them.
    #[serde(rename = "algbw_GBps")]
    pub algbw_gbytes: Option<f64>,
    #[serde(rename = "busbw_GBps")]
    pub busbw_gbytes: Option<f64>,
    /// Each iteration's collective time (null from the first that did not complete).
    pub iteration_ns: Vec<Option<f64>>,
    /// Each iteration's step time: compute plus collective.
    pub step_ns: Vec<Option<f64>>,
    /// From the job's start to its last message's arrival (null if unfinished).
    pub elapsed_ns: Option<f64>,
    pub iterations_completed: usize,
}

/// Records of `jobs` from the flows of one run.
pub fn records(jobs: &[JobSpec], flows: &[FlowRecord]) -> Vec<JobRecord> {
    jobs.iter().map(|j| record(j, flows)).collect()
}

fn record(j: &JobSpec, flows: &[FlowRecord]) -> JobRecord {
    let compute = j.compute.as_ns_f64();
    // The call is issued when the previous iteration ended (the job's start for the first)
    // plus the compute.
    let mut released = j.start.as_ns_f64();
    let (mut iteration_ns, mut step_ns) = (Vec::new(), Vec::new());
    let mut ended = true;
    for r in &j.iterations {
        let last = if ended {
            flows[r.start as usize..r.end as usize]
                .iter()
                .map(|f| f.finish_ns)
                .try_fold(f64::MIN, |m, x| x.map(|x| m.max(x)))
        } else {
            None
        };
        match last {
            Some(end) => {
                iteration_ns.push(Some(end - released - compute));
                step_ns.push(Some(end - released));
                released = end;
            }
            None => {
                ended = false;
                iteration_ns.push(None);
                step_ns.push(None);
            }
        }
    }
    let done: Vec<f64> = iteration_ns.iter().flatten().copied().collect();
    let time_ns = (!done.is_empty()).then(|| done.iter().sum::<f64>() / done.len() as f64);
    let algbw = time_ns.map(|t| j.size_bytes as f64 * 8.0 / t);
    let busbw = algbw.map(|a| a * j.op.bus_factor(j.ranks));
    let reduces = matches!(j.op, Op::AllReduce | Op::ReduceScatter);
    JobRecord {
        name: j.name.clone(),
        op: j.op.name(),
        algorithm: j.algorithm.name(),
        ranks: j.ranks,
        size_bytes: j.size_bytes,
        count: j.size_bytes / 4,
        dtype: "float",
        redop: if reduces { "sum" } else { "none" },
        root: j.root.map_or(-1, |r| r as i64),
        time_ns,
        algbw_gbps: algbw,
        busbw_gbps: busbw,
        algbw_gbytes: algbw.map(|a| a / 8.0),
        busbw_gbytes: busbw.map(|b| b / 8.0),
        iteration_ns,
        step_ns,
        elapsed_ns: ended.then_some(released - j.start.as_ns_f64()),
        iterations_completed: done.len(),
    }
}
