//! Traffic: what flows exist, between which hosts, how large, starting when.
//!
//! Every generator turns its `[[workload]]` table into a list of [`FlowSpec`]s before the run
//! starts, drawing from its own seeded stream, so variants of a scenario see identical traffic.
//! New generators (size CDFs, collectives, imported traffic matrices) are new enum variants
//! with a `generate` arm; nothing else changes.

pub mod cdf;
pub mod collective;
pub mod htsim;

use crate::error::FieldError;
use crate::ids::HostId;
use crate::topology::Topology;
use serde::Deserialize;
use sim_core::{Bytes, Duration, Time};
use std::fmt;

/// Default 802.1p priority of data: the lossless class most RoCE deployments configure
/// (NVIDIA "RoCE configuration for ConnectX": PFC on priority 3).
pub const DEFAULT_PRIO: u8 = 3;

/// One message from `src` to `dst`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSpec {
    pub src: HostId,
    pub dst: HostId,
    pub size: u64,
    /// Earliest start; a flow with dependencies starts when they are met, not before this.
    pub start: Time,
    pub prio: u8,
    /// Flows (by index in the scenario) whose completion at their receiver this one waits for.
    pub deps: Deps,
    /// Delay after `start` (no dependencies) or after the dependencies are met: a
    /// collective's protocol latency or a training step's compute.
    pub after: Duration,
    /// The queue pair (connection) the message travels on, when several messages share one:
    /// they share its UDP source port and so its ECMP path. None: a connection of its own.
    pub qp: Option<u64>,
}

impl FlowSpec {
    /// A message of its own connection, starting at `start`.
    pub fn new(src: HostId, dst: HostId, size: u64, start: Time, prio: u8) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            size,
            start,
            prio,
            deps: Deps::None,
            after: Duration::ZERO,
            qp: None,
        }
    }
}

/// What a flow waits for before it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Deps {
    #[default]
    None,
    /// Start when any one of these has completed (a collective step; htsim's oneshot trigger).
    Any(Vec<u32>),
    /// Start when this many of these have completed (htsim's barrier trigger).
    AtLeast(u32, Vec<u32>),
}

impl Deps {
    /// Completions needed, and of which flows.
    pub fn needs(&self) -> (u32, &[u32]) {
        match self {
            Deps::None => (0, &[]),
            Deps::Any(v) => (1, v),
            Deps::AtLeast(k, v) => (*k, v),
        }
    }

    /// Shift the flow indices by `base` (when a generator's flows join the scenario's list).
    fn offset(&mut self, base: u32) {
        if let Deps::Any(v) | Deps::AtLeast(_, v) = self {
            v.iter_mut().for_each(|i| *i += base);
        }
    }
}

/// Append a generator's flows, rebasing their dependencies.
pub fn append(all: &mut Vec<FlowSpec>, mut more: Vec<FlowSpec>) {
    let base = all.len() as u32;
    for f in &mut more {
        f.deps.offset(base);
    }
    all.extend(more);
}

/// A host named `"h3"` or by its index `3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRef {
    Index(u64),
    Name(String),
}

impl<'de> Deserialize<'de> for HostRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = HostRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a host such as \"h3\" or its index 3")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<HostRef, E> {
                Ok(HostRef::Name(s.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<HostRef, E> {
                u64::try_from(v)
                    .map(HostRef::Index)
                    .map_err(|_| E::custom(format!("no host has index {v}")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<HostRef, E> {
                Ok(HostRef::Index(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl HostRef {
    /// The host this names in `topo`: by index, or by name (`h3`; a graph's own names).
    fn resolve(&self, topo: &Topology, key: &str) -> Result<HostId, FieldError> {
        let hosts = topo.hosts.len();
        let found = match self {
            HostRef::Index(i) => (*i < hosts as u64).then_some(HostId(*i as u32)),
            HostRef::Name(s) => topo.host_named(s),
        };
        found.ok_or_else(|| {
            let name = |i: usize| topo.node_name(topo.hosts[i]);
            let which = if name(0) == "h0" {
                format!("hosts h0..h{}", hosts - 1)
            } else {
                let shown: Vec<String> = (0..hosts.min(6)).map(|i| format!("\"{}\"", name(i))).collect();
                let more = if hosts > 6 { ", ..." } else { "" };
                format!("hosts {}{more} (index 0..{})", shown.join(", "), hosts - 1)
            };
            FieldError::new(key, format!("unknown host {self}: this topology has {which}"))
        })
    }
}

impl fmt::Display for HostRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostRef::Index(i) => write!(f, "{i}"),
            HostRef::Name(s) => write!(f, "\"{s}\""),
        }
    }
}

/// One `[[flow]]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub src: HostRef,
    pub dst: HostRef,
    pub size: Bytes,
    #[serde(default)]
    pub start: Duration,
    #[serde(default = "default_prio")]
    pub prio: u8,
    /// The flow whose fate the scenario is about (a victim of head-of-line blocking): its
    /// rate is always drawn in `flow_rates.png` and it is marked in the plots.
    #[serde(default)]
    pub victim: bool,
}

fn default_prio() -> u8 {
    DEFAULT_PRIO
}

/// One `[[workload]]` generator as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Every host sends `size` to one peer; the peers form a seeded random derangement.
    Permutation {
        size: Bytes,
        #[serde(default)]
        start: Duration,
        #[serde(default = "default_prio")]
        prio: u8,
    },
    /// `senders` hosts (default: all others) each send `size` to `receiver` at once; with
    /// `period`, again every period, `repeat` times in all.
    Incast {
        #[serde(default = "h0")]
        receiver: HostRef,
        #[serde(default)]
        senders: Option<u32>,
        size: Bytes,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        period: Option<Duration>,
        #[serde(default = "one")]
        repeat: u32,
        #[serde(default = "default_prio")]
        prio: u8,
    },
    /// Every host sends `size` to every other host.
    AllToAll {
        size: Bytes,
        #[serde(default)]
        start: Duration,
        #[serde(default = "default_prio")]
        prio: u8,
    },
    /// Each source starts flows at Poisson times so that it offers `load` (fraction of its
    /// link rate, counted in payload bytes) from `start` for `duration`. Sizes are `size`, or
    /// drawn from `cdf` ("websearch", "fb-hadoop" or { file = "..." }); destinations are
    /// uniform over the other hosts, or `dst` when given.
    Poisson {
        load: f64,
        #[serde(default)]
        size: Option<Bytes>,
        #[serde(default)]
        cdf: Option<cdf::CdfConfig>,
        duration: Duration,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        sources: Option<Vec<HostRef>>,
        #[serde(default)]
        dst: Option<HostRef>,
        #[serde(default = "default_prio")]
        prio: u8,
    },
    /// A uet-htsim connection matrix (`.cm`), path relative to the scenario file.
    Htsim {
        file: String,
        #[serde(default = "default_prio")]
        prio: u8,
    },
    /// A collective over `hosts` (default: all, in order) as NCCL runs it
    /// (`collective/mod.rs`), optionally repeated as training iterations.
    Collective(Box<collective::CollectiveConfig>),
}

fn one() -> u32 {
    1
}

fn h0() -> HostRef {
    HostRef::Index(0)
}

fn check_size(size: Bytes, key: &str) -> Result<u64, FieldError> {
    if size.0 == 0 {
        return Err(FieldError::new(key, "a flow must carry at least one byte"));
    }
    if size.0 > u32::MAX as u64 * 1024 {
        return Err(FieldError::new(
            key,
            format!("{size} is larger than the supported 4 TiB per flow"),
        ));
    }
    Ok(size.0)
}

fn check_prio(prio: u8, key: &str) -> Result<u8, FieldError> {
    if prio > 7 {
        Err(FieldError::new(
            key,
            format!("802.1p priorities are 0..=7, got {prio}"),
        ))
    } else {
        Ok(prio)
    }
}

/// Validate explicit `[[flow]]` entries.
pub fn explicit_flows(flows: &[FlowConfig], topo: &Topology) -> Result<Vec<FlowSpec>, FieldError> {
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (src, dst) = (
                f.src.resolve(topo, &format!("flow[{i}].src"))?,
                f.dst.resolve(topo, &format!("flow[{i}].dst"))?,
            );
            if src == dst {
                return Err(FieldError::new(
                    format!("flow[{i}].dst"),
                    format!("a flow to itself (h{})", src.0),
                ));
            }
            Ok(FlowSpec::new(
                src,
                dst,
                check_size(f.size, &format!("flow[{i}].size"))?,
                Time::ZERO + f.start,
                check_prio(f.prio, &format!("flow[{i}].prio"))?,
            ))
        })
        .collect()
}

mod generate;
pub use generate::FlowCap;

/// What one open-loop (`poisson`) workload offers the fabric: each source sends `load` of its
/// NIC's line rate in payload, to destinations uniform over the other hosts or to `dst`, for
/// `duration`. The configuration check compares it with the cables it must cross.
#[derive(Debug, Clone)]
pub struct Offered {
    /// Its index in `[[workload]]`.
    pub index: usize,
    pub load: f64,
    pub sources: Vec<HostId>,
    pub dst: Option<HostId>,
    pub duration: Duration,
}

/// The open-loop workloads of `configs` (already validated by flow generation: a host that
/// does not resolve leaves its workload out).
pub fn offered(configs: &[WorkloadConfig], topo: &Topology) -> Vec<Offered> {
    let mut out = Vec::new();
    for (index, c) in configs.iter().enumerate() {
        let WorkloadConfig::Poisson {
            load,
            duration,
            sources,
            dst,
            ..
        } = c
        else {
            continue;
        };
        let dst = match dst.as_ref().map(|d| d.resolve(topo, "")).transpose() {
            Ok(d) => d,
            Err(_) => continue,
        };
        let sources = match sources {
            Some(list) => match list.iter().map(|h| h.resolve(topo, "")).collect() {
                Ok(l) => l,
                Err(_) => continue,
            },
            None => (0..topo.hosts.len() as u32)
                .map(HostId)
                .filter(|&h| Some(h) != dst)
                .collect(),
        };
        out.push(Offered {
            index,
            load: *load,
            sources,
            dst,
            duration: *duration,
        });
    }
    out
}

/// Most flows a scenario may have: each costs about 200 B of state, so 10 million fit a laptop.
pub const MAX_FLOWS: usize = 10_000_000;

#[cfg(test)]
mod tests;
