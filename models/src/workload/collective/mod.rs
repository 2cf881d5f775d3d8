//! AI collectives as NCCL runs them, expanded into dependent messages.
//!
//! A collective becomes one flow per network message (an RDMA write of one slice, a UET
//! message), each starting when the data it forwards has arrived and the message before it
//! on the same connection has completed. The structure that changes the network's load
//! follows NCCL 2.30 (`NVIDIA/nccl`; what each part reads is cited where it is built):
//!
//! - **channels** (`NCCL_MIN_NCHANNELS`/`NCCL_MAX_NCHANNELS`, `src/graph/connect.cc`): each
//!   channel is its own ring or tree over the ranks with its own connections, and takes one
//!   contiguous share of the buffer (`scheduleCollTasksToPlan`, `src/enqueue.cc`). Default 2:
//!   a DGX H100 runs 16 ring channels over 8 NICs, two per NIC.
//! - **QPs per connection** (`NCCL_IB_QPS_PER_CONNECTION`, default 1,
//!   `src/transport/net_ib/connect.cc`): successive messages of a connection rotate over its
//!   QPs (`NCCL_IB_SPLIT_DATA_ON_QPS=0`, the default since 2.20). Each QP has its own UDP
//!   source port (mlx5 derives it from the QP numbers), so its own ECMP path; every message
//!   of one QP takes the same path.
//! - **chunking and pipelining**: a ring moves the buffer in loops of n chunks, each chunk
//!   one network message of at most a slice (1 MiB for Simple all-reduce: 4 MiB buffer / 8
//!   steps x 2 steps per slice, `src/include/collectives.h`, `src/enqueue.cc`
//!   `calcCollChunking`); trees and broadcast use 512 KiB chunks, point-to-point 128 KiB
//!   (`NCCL_P2P_NET_CHUNKSIZE`). A rank forwards a chunk as soon as it has arrived
//!   (`src/device/prims_simple.h`), so chunks of one collective overlap across the ring.
//! - **latency**: a per-call base latency (NCCL's tuning model: `baseLat` 8.4 us for Simple
//!   ring and tree, `src/graph/tuning.cc`) before the first message, and an optional
//!   per-message protocol latency after a message's data dependency is met.
//!
//! Sizes are nccl-tests' (`doc/PERFORMANCE.md` in `NVIDIA/nccl-tests`): all-reduce and
//! broadcast move a buffer of S per rank; all-gather's S is the whole output (S/n from each
//! rank), reduce-scatter's the whole input, all-to-all's the rank's whole send buffer (S/n to
//! each peer); send/recv sends S per pair. Bus bandwidth is algbw times 2(n-1)/n for
//! all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 otherwise.
//!
//! One rank per host (one GPU per node, as on a homelab or a rail of a cluster): NVLink
//! hops inside a node are not modelled.

mod config;
mod halving;
mod p2p;
mod ring;
mod tree;

pub use config::{CollectiveConfig, Ctx};

use super::{Deps, FlowSpec};
use crate::ids::HostId;
use serde::Deserialize;
use sim_core::{Duration, Time};
use std::collections::HashMap;

/// The collective operation (nccl-tests' `*_perf` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// `ring-allreduce` is the name earlier scenarios used: all-reduce on the ring.
    #[serde(alias = "ring-allreduce")]
    AllReduce,
    AllGather,
    ReduceScatter,
    /// Every rank sends S/n to every other rank: the MoE expert exchange.
    AllToAll,
    /// From `root` to every rank.
    Broadcast,
    /// Each pair's first host sends S to its second (default: every rank to the next).
    SendRecv,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "all-reduce",
            Op::AllGather => "all-gather",
            Op::ReduceScatter => "reduce-scatter",
            Op::AllToAll => "all-to-all",
            Op::Broadcast => "broadcast",
            Op::SendRecv => "send-recv",
        }
    }

    /// nccl-tests' bus bandwidth factor (`doc/PERFORMANCE.md`): busbw = algbw x this.
    pub fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Op::AllReduce => 2.0 * (n - 1.0) / n,
            Op::AllGather | Op::ReduceScatter | Op::AllToAll => (n - 1.0) / n,
            Op::Broadcast | Op::SendRecv => 1.0,
        }
    }
}

/// How an all-reduce is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// NCCL's ring: reduce-scatter then all-gather around the ring, 2(n-1) steps.
    Ring,
    /// NCCL's double binary tree: reduce up, broadcast down, half the data on each tree.
    Tree,
    /// Rabenseifner's recursive halving (reduce-scatter) then doubling (all-gather), as MPI
    /// libraries run it; NCCL has no such algorithm. Power-of-two rank counts.
    HalvingDoubling,
    /// Point-to-point (all-to-all, send/recv): every pair its own connections.
    Direct,
    /// Broadcast along a chain from the root, chunk by chunk.
    Chain,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Direct => "direct",
            Algorithm::Chain => "chain",
        }
    }
}

/// Everything a collective needs, checked.
#[derive(Debug, Clone)]
pub struct Plan {
    pub op: Op,
    pub algorithm: Algorithm,
    /// Ranks in order (ring order for rings; ranks 0.. for trees and halving-doubling).
    pub ranks: Vec<HostId>,
    /// NICs per server when the ranks are whole multi-NIC servers (1 otherwise): rings then
    /// run `channels` per NIC, each on one rail (`ring.rs`).
    pub rails: u32,
    /// nccl-tests' size.
    pub size: u64,
    pub channels: u32,
    pub qps: u32,
    /// Largest network message.
    pub chunk: u64,
    /// Before the first message of each call.
    pub latency: Duration,
    /// After each message's data has arrived, before it is sent on.
    pub message_latency: Duration,
    /// Broadcast root (an index into `ranks`).
    pub root: usize,
    /// Send/recv pairs (indices into `ranks`).
    pub pairs: Vec<(usize, usize)>,
    pub iterations: u32,
    /// Compute before each iteration's collective (training step = compute + collective).
    pub compute: Duration,
    pub start: Time,
    pub prio: u8,
    /// Makes this workload's QP keys unique in the scenario.
    pub workload: u32,
}

/// A collective job as the results report it: which flows make each iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub op: Op,
    pub algorithm: Algorithm,
    pub ranks: usize,
    pub size_bytes: u64,
    /// A broadcast's root (its index among the ranks); None for the other operations.
    pub root: Option<usize>,
    pub compute: Duration,
    pub start: Time,
    /// Scenario flow indices of each iteration.
    pub iterations: Vec<std::ops::Range<u32>>,
}

impl JobSpec {
    /// Shift the flow ranges by `base` (when the workload's flows join the scenario's).
    pub fn offset(&mut self, base: u32) {
        for r in &mut self.iterations {
            *r = r.start + base..r.end + base;
        }
    }
}

/// Messages under construction: each call returns the new message's index, connections are
/// numbered as they first appear and keep their QPs across iterations.
pub(crate) struct Builder<'p> {
    plan: &'p Plan,
    pub flows: Vec<FlowSpec>,
    conns: HashMap<(u32, u32, u32, u8), (u64, u32)>,
    /// Deps of an iteration's first messages (the previous iteration's end), and their delay.
    gate: Deps,
    gate_after: Duration,
}

/// What one message waits for: the data it forwards (received from a peer) and the previous
/// message of its own connection; either may be absent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wait {
    pub data: Vec<u32>,
    pub prev: Option<u32>,
}

impl Wait {
    pub fn on(data: impl IntoIterator<Item = u32>, prev: Option<u32>) -> Wait {
        Wait {
            data: data.into_iter().collect(),
            prev,
        }
    }
}

impl<'p> Builder<'p> {
    fn new(plan: &'p Plan) -> Self {
        Builder {
            plan,
            flows: Vec::new(),
            conns: HashMap::new(),
            gate: Deps::None,
            gate_after: Duration::ZERO,
        }
    }

    pub fn plan(&self) -> &Plan {
        self.plan
    }

    /// A message of `size` from rank `a` to rank `b` on channel `channel` (`tag` tells apart
    /// connections of one pair and channel, e.g. the two trees).
    pub fn send(&mut self, a: usize, b: usize, channel: u32, tag: u8, size: u64, wait: Wait) -> u32 {
        let p = self.plan;
        let (src, dst) = (p.ranks[a], p.ranks[b]);
        let next = self.conns.len() as u64;
        let conn = self
            .conns
            .entry((src.0, dst.0, channel, tag))
            .or_insert((next, 0));
        // Round-robin over the connection's QPs (NCCL_IB_SPLIT_DATA_ON_QPS=0).
        let qp = (p.workload as u64) << 48 | conn.0 << 8 | (conn.1 % p.qps) as u64;
        conn.1 = conn.1.wrapping_add(1);
        let first = wait.data.is_empty() && wait.prev.is_none();
        let (deps, after) = if first {
            (self.gate.clone(), self.gate_after)
        } else {
            let all: Vec<u32> = wait.data.iter().copied().chain(wait.prev).collect();
            let after = if wait.data.is_empty() {
                Duration::ZERO
            } else {
                p.message_latency
            };
            (Deps::AtLeast(all.len() as u32, all), after)
        };
        self.flows.push(FlowSpec {
            src,
            dst,
            size: size.max(1),
            start: p.start,
            prio: p.prio,
            deps,
            after,
            qp: Some(qp),
        });
        (self.flows.len() - 1) as u32
    }
}

/// `total` split into `parts` nearly equal shares, none empty (fewer parts if too small).
pub(crate) fn shares(total: u64, parts: u64) -> Vec<u64> {
    let parts = parts.clamp(1, total.max(1));
    (0..parts)
        .map(|i| total / parts + u64::from(i < total % parts))
        .collect()
}

/// Expand `plan` into its flows and the job that reports them (flow indices local to the
/// returned list).
pub fn expand(plan: &Plan, name: String) -> (Vec<FlowSpec>, JobSpec) {
    let mut b = Builder::new(plan);
    let mut iterations = Vec::with_capacity(plan.iterations as usize);
    b.gate_after = plan.compute + plan.latency;
    for _ in 0..plan.iterations {
        let from = b.flows.len() as u32;
        match (plan.op, plan.algorithm) {
            (Op::AllReduce, Algorithm::Tree) => tree::all_reduce(&mut b),
            (Op::AllReduce, Algorithm::HalvingDoubling) => halving::all_reduce(&mut b),
            (Op::AllReduce | Op::AllGather | Op::ReduceScatter, _) => ring::collective(&mut b),
            (Op::Broadcast, _) => ring::broadcast(&mut b),
            (Op::AllToAll, _) => p2p::all_to_all(&mut b),
            (Op::SendRecv, _) => p2p::send_recv(&mut b),
        }
        let to = b.flows.len() as u32;
        // The next iteration starts (after its compute) once every message of this one has
        // completed: the messages no other message of this iteration waits for.
        let mut waited = vec![false; (to - from) as usize];
        for f in &b.flows[from as usize..] {
            for &d in f.deps.needs().1 {
                if d >= from {
                    waited[(d - from) as usize] = true;
                }
            }
        }
        let last: Vec<u32> = (from..to).filter(|&i| !waited[(i - from) as usize]).collect();
        b.gate = Deps::AtLeast(last.len() as u32, last);
        iterations.push(from..to);
    }
    let job = JobSpec {
        name,
        op: plan.op,
        algorithm: plan.algorithm,
        ranks: plan.ranks.len(),
        size_bytes: plan.size,
        root: (plan.op == Op::Broadcast).then_some(plan.root),
        compute: plan.compute,
        start: plan.start,
        iterations,
    };
    (b.flows, job)
}

/// Messages a plan will make, an upper bound, to refuse runaway sizes before building.
pub fn message_count(plan: &Plan) -> f64 {
    let n = plan.ranks.len() as f64;
    let c = plan.channels as f64;
    let per = |bytes: f64| (bytes / plan.chunk as f64).ceil().max(1.0);
    let one = match (plan.op, plan.algorithm) {
        (Op::AllReduce, Algorithm::Tree) => 4.0 * n * per(plan.size as f64 / 2.0) * c,
        (Op::AllReduce, Algorithm::HalvingDoubling) => 2.0 * n * n.log2().ceil() * c,
        (Op::AllReduce, _) => 2.0 * n * (n - 1.0) * per(plan.size as f64 / (n * c)).max(1.0) * c,
        (Op::AllGather | Op::ReduceScatter, _) => n * (n - 1.0) * per(plan.size as f64 / (n * c)) * c,
        (Op::AllToAll, _) => n * (n - 1.0) * per(plan.size as f64 / (n * c)) * c,
        (Op::Broadcast, _) => n * per(plan.size as f64 / c) * c,
        (Op::SendRecv, _) => plan.pairs.len() as f64 * per(plan.size as f64 / c) * c,
    };
    one * plan.iterations as f64
}

#[cfg(test)]
mod tests;
