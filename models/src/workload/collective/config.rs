//! A `[[workload]] kind = "collective"` table as written, and its checks.

use super::{Algorithm, Op, Plan};
use crate::error::FieldError;
use crate::ids::HostId;
use crate::workload::HostRef;
use serde::Deserialize;
use sim_core::{Bytes, Duration, Time};

/// NCCL's per-call base latency of Simple ring and tree (`baseLat`, `src/graph/tuning.cc`).
pub const NCCL_BASE_LATENCY: Duration = Duration(8_400_000);

/// Two channels: what a DGX H100 gives each NIC (16 ring channels over 8 NICs, NVIDIA/nccl
/// issue #1453's log).
pub const DEFAULT_CHANNELS: u32 = 2;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveConfig {
    pub op: Op,
    /// All-reduce: ring (default), tree or halving-doubling; the other operations have one.
    #[serde(default)]
    pub algorithm: Option<Algorithm>,
    pub size: Bytes,
    /// Ranks in ring order (default: every host in order).
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
    /// Place the job on these servers (by index), one rank per GPU, each on its GPU's NIC
    /// (multi-NIC servers, `kind = "rail"`); instead of `hosts`.
    #[serde(default)]
    pub servers: Option<Vec<u32>>,
    /// The job's name in the results (default `<op>-<workload index>`).
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub channels: Option<u32>,
    #[serde(default)]
    pub qps_per_connection: Option<u32>,
    /// Largest network message (default: 1 MiB for rings, 512 KiB for trees and broadcast,
    /// 128 KiB point-to-point, the whole step for halving-doubling).
    #[serde(default)]
    pub chunk: Option<Bytes>,
    /// Before the first message of each call (default NCCL's 8.4 us).
    #[serde(default)]
    pub latency: Option<Duration>,
    /// After a message's data has arrived, before it goes on (default 0: NCCL keeps 8 steps
    /// posted ahead, hiding its per-message overhead).
    #[serde(default)]
    pub message_latency: Duration,
    /// Broadcast: the root (default the first rank).
    #[serde(default)]
    pub root: Option<HostRef>,
    /// Send/recv: [sender, receiver] pairs (default every rank to the next, as
    /// nccl-tests' sendrecv_perf).
    #[serde(default)]
    pub pairs: Option<Vec<[HostRef; 2]>>,
    /// Training iterations: compute for `compute`, then the collective, this many times.
    #[serde(default = "one")]
    pub iterations: u32,
    #[serde(default)]
    pub compute: Duration,
    #[serde(default)]
    pub start: Duration,
    #[serde(default = "crate::workload::default_prio")]
    pub prio: u8,
}

fn one() -> u32 {
    1
}

/// What a check needs from its generator: the key of a field, the host count.
pub struct Ctx<'a> {
    pub key: &'a dyn Fn(&str) -> String,
    pub topo: &'a crate::topology::Topology,
    pub workload: u32,
}

impl CollectiveConfig {
    /// The checked plan, with `size` and `prio` already checked by the caller.
    pub fn plan(&self, cx: &Ctx, size: u64, prio: u8) -> Result<Plan, FieldError> {
        let key = cx.key;
        let err = |f: &str, m: String| FieldError::new(key(f), m);
        let resolve = |h: &HostRef, f: &str| h.resolve(cx.topo, &key(f));
        let ranks: Vec<HostId> = match (&self.hosts, &self.servers) {
            (Some(_), Some(_)) => return Err(err("servers", "give `hosts` or `servers`, not both".into())),
            (None, Some(servers)) => {
                let t = cx.topo;
                let last = t.server.last().copied().unwrap_or(0);
                if let Some(bad) = servers.iter().find(|&&s| s > last) {
                    return Err(err(
                        "servers",
                        format!("no server {bad}: the servers are 0..{last}"),
                    ));
                }
                servers
                    .iter()
                    .flat_map(|&s| (0..t.hosts.len() as u32).filter(move |&h| t.server[h as usize] == s))
                    .map(HostId)
                    .collect()
            }
            (Some(list), None) => list
                .iter()
                .enumerate()
                .map(|(i, h)| resolve(h, &format!("hosts[{i}]")))
                .collect::<Result<_, _>>()?,
            (None, None) => (0..cx.topo.hosts.len() as u32).map(HostId).collect(),
        };
        let mut seen = std::collections::HashSet::new();
        if ranks.len() < 2 || !ranks.iter().all(|h| seen.insert(*h)) {
            return Err(err(
                "hosts",
                "a collective needs at least two distinct hosts".into(),
            ));
        }
        let n = ranks.len();
        let algorithm = match (self.op, self.algorithm) {
            (Op::AllReduce, None) => Algorithm::Ring,
            (Op::AllReduce, Some(a @ (Algorithm::Ring | Algorithm::Tree | Algorithm::HalvingDoubling))) => a,
            (Op::AllGather | Op::ReduceScatter, None | Some(Algorithm::Ring)) => Algorithm::Ring,
            (Op::AllToAll | Op::SendRecv, None | Some(Algorithm::Direct)) => Algorithm::Direct,
            (Op::Broadcast, None | Some(Algorithm::Chain)) => Algorithm::Chain,
            (op, Some(a)) => {
                return Err(err(
                    "algorithm",
                    format!(
                        "{} has no {} algorithm here (all-reduce: ring, tree or halving-doubling)",
                        op.name(),
                        a.name()
                    ),
                ));
            }
        };
        if algorithm == Algorithm::HalvingDoubling && !n.is_power_of_two() {
            return Err(err(
                "hosts",
                format!("halving-doubling needs a power-of-two number of ranks, got {n} (use ring or tree)"),
            ));
        }
        let channels = self.channels.unwrap_or(DEFAULT_CHANNELS);
        if !(1..=64).contains(&channels) {
            return Err(err(
                "channels",
                format!("NCCL runs 1 to 64 channels (MAXCHANNELS), got {channels}"),
            ));
        }
        let qps = self.qps_per_connection.unwrap_or(1);
        if !(1..=128).contains(&qps) {
            return Err(err(
                "qps_per_connection",
                format!("NCCL_IB_QPS_PER_CONNECTION is 1 to 128, got {qps}"),
            ));
        }
        let chunk = match self.chunk {
            Some(Bytes(0)) => return Err(err("chunk", "a chunk must hold at least one byte".into())),
            Some(c) => c.0,
            None => match algorithm {
                Algorithm::Ring => 1 << 20,
                Algorithm::Tree | Algorithm::Chain => 512 << 10,
                Algorithm::Direct => 128 << 10,
                Algorithm::HalvingDoubling => u64::MAX,
            },
        };
        let index = |h: &HostRef, f: &str| -> Result<usize, FieldError> {
            let id = resolve(h, f)?;
            ranks
                .iter()
                .position(|r| *r == id)
                .ok_or_else(|| err(f, format!("{h} is not one of the collective's hosts")))
        };
        let root = match &self.root {
            Some(h) if self.op == Op::Broadcast => index(h, "root")?,
            Some(_) => {
                return Err(err(
                    "root",
                    format!("only a broadcast has a root, this is {}", self.op.name()),
                ));
            }
            None => 0,
        };
        let pairs = match &self.pairs {
            Some(_) if self.op != Op::SendRecv => {
                return Err(err(
                    "pairs",
                    format!("only send-recv takes pairs, this is {}", self.op.name()),
                ));
            }
            Some(list) => {
                let mut v = Vec::with_capacity(list.len());
                for (i, [a, b]) in list.iter().enumerate() {
                    let (a, b) = (
                        index(a, &format!("pairs[{i}][0]"))?,
                        index(b, &format!("pairs[{i}][1]"))?,
                    );
                    if a == b {
                        return Err(err(&format!("pairs[{i}]"), "a host cannot send to itself".into()));
                    }
                    v.push((a, b));
                }
                if v.is_empty() {
                    return Err(err("pairs", "give at least one [sender, receiver] pair".into()));
                }
                v
            }
            None => (0..n).map(|i| (i, (i + 1) % n)).collect(),
        };
        if self.iterations == 0 {
            return Err(err("iterations", "at least one iteration".into()));
        }
        let rails = rails(cx.topo, &ranks);
        Ok(Plan {
            op: self.op,
            algorithm,
            rails,
            ranks,
            size,
            channels,
            qps,
            chunk,
            latency: self.latency.unwrap_or(NCCL_BASE_LATENCY),
            message_latency: self.message_latency,
            root,
            pairs,
            iterations: self.iterations,
            compute: self.compute,
            start: Time::ZERO + self.start,
            prio,
            workload: cx.workload,
        })
    }
}

/// NICs per server when `ranks` are whole servers of several NICs, each server's NICs together
/// and in order (NCCL's one rank per GPU, on its nearest NIC); else 1.
fn rails(t: &crate::topology::Topology, ranks: &[HostId]) -> u32 {
    if t.nvlink.is_none() {
        return 1;
    }
    let of = |h: HostId| t.server[h.idx()];
    let per = t.server.iter().filter(|&&s| s == of(ranks[0])).count();
    let whole = per > 1
        && ranks.len() % per == 0
        && ranks.chunks(per).all(|c| {
            let first = (0..t.hosts.len()).position(|h| t.server[h] == of(c[0]));
            first.is_some_and(|f| c.iter().enumerate().all(|(i, h)| h.idx() == f + i))
        });
    if whole { per as u32 } else { 1 }
}
