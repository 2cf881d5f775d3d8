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
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_distr::{Distribution, Exp};
use serde::Deserialize;
use sim_core::{Bytes, Duration, RngStreams, Time};
use std::fmt;
use std::path::Path;

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
    fn resolve(&self, hosts: usize, key: &str) -> Result<HostId, FieldError> {
        let idx = match self {
            HostRef::Index(i) => Some(*i),
            HostRef::Name(s) => s.strip_prefix('h').and_then(|n| n.parse::<u64>().ok()),
        };
        match idx {
            Some(i) if (i as usize) < hosts => Ok(HostId(i as u32)),
            _ => Err(FieldError::new(
                key,
                format!(
                    "unknown host {self}: this topology has hosts h0..h{}",
                    hosts.saturating_sub(1)
                ),
            )),
        }
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
    /// A ring collective over `hosts` (default: all, in order) on a message of `size` bytes.
    Collective {
        op: collective::Collective,
        size: Bytes,
        #[serde(default)]
        hosts: Option<Vec<HostRef>>,
        #[serde(default)]
        start: Duration,
        #[serde(default = "default_prio")]
        prio: u8,
    },
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
    let n = topo.hosts.len();
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (src, dst) = (
                f.src.resolve(n, &format!("flow[{i}].src"))?,
                f.dst.resolve(n, &format!("flow[{i}].dst"))?,
            );
            if src == dst {
                return Err(FieldError::new(
                    format!("flow[{i}].dst"),
                    format!("a flow to itself (h{})", src.0),
                ));
            }
            Ok(FlowSpec {
                src,
                dst,
                size: check_size(f.size, &format!("flow[{i}].size"))?,
                start: Time::ZERO + f.start,
                prio: check_prio(f.prio, &format!("flow[{i}].prio"))?,
                deps: Deps::None,
            })
        })
        .collect()
}

/// A uniformly random derangement of `0..n` (no host sends to itself), by rejection:
/// a uniform shuffle is a derangement with probability about 1/e.
fn derangement(n: usize, rng: &mut impl rand::Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    loop {
        p.shuffle(rng);
        if p.iter().enumerate().all(|(i, &x)| i != x) {
            return p;
        }
    }
}

impl WorkloadConfig {
    /// Expand into flows. `index` is this generator's position in `[[workload]]`; `dir` the
    /// scenario file's folder (for files it names). Dependencies index the returned list.
    pub fn generate(
        &self,
        index: usize,
        topo: &Topology,
        streams: &RngStreams,
        dir: &Path,
    ) -> Result<Vec<FlowSpec>, FieldError> {
        let key = |field: &str| format!("workload[{index}].{field}");
        let n = topo.hosts.len();
        let mut rng = streams.stream("workload", index as u64);
        let host = |i: usize| HostId(i as u32);
        let flow = |src, dst, size, start: Duration, prio| FlowSpec {
            src,
            dst,
            size,
            start: Time::ZERO + start,
            prio,
            deps: Deps::None,
        };
        let mut flows = Vec::new();
        let at_most = |field: &str, count: f64, what: String| {
            if count > MAX_FLOWS as f64 {
                Err(FieldError::new(
                    key(field),
                    format!("{what}: about {count:.3e} flows, more than the {MAX_FLOWS} a scenario may have"),
                ))
            } else {
                Ok(())
            }
        };
        match self {
            WorkloadConfig::Permutation { size, start, prio } => {
                let (size, prio) = (check_size(*size, &key("size"))?, check_prio(*prio, &key("prio"))?);
                for (src, dst) in derangement(n, &mut rng).into_iter().enumerate() {
                    flows.push(flow(host(src), host(dst), size, *start, prio));
                }
            }
            WorkloadConfig::Incast {
                receiver,
                senders,
                size,
                start,
                period,
                repeat,
                prio,
            } => {
                let (size, prio) = (check_size(*size, &key("size"))?, check_prio(*prio, &key("prio"))?);
                let dst = receiver.resolve(n, &key("receiver"))?;
                let count = senders.unwrap_or(n as u32 - 1) as usize;
                if count == 0 || count > n - 1 {
                    return Err(FieldError::new(
                        key("senders"),
                        format!("must be between 1 and {} (hosts - 1), got {count}", n - 1),
                    ));
                }
                if *repeat == 0 || (*repeat > 1 && period.is_none_or(|p| p == Duration::ZERO)) {
                    return Err(FieldError::new(
                        key("repeat"),
                        "repeating an incast needs repeat >= 1 and a non-zero `period`",
                    ));
                }
                at_most(
                    "repeat",
                    count as f64 * *repeat as f64,
                    format!("{count} senders x {repeat} repeats"),
                )?;
                for r in 0..*repeat as u64 {
                    let at = *start + period.unwrap_or(Duration::ZERO) * r;
                    for src in (0..n).map(host).filter(|&h| h != dst).take(count) {
                        flows.push(flow(src, dst, size, at, prio));
                    }
                }
            }
            WorkloadConfig::AllToAll { size, start, prio } => {
                let (size, prio) = (check_size(*size, &key("size"))?, check_prio(*prio, &key("prio"))?);
                at_most(
                    "kind",
                    n as f64 * (n as f64 - 1.0),
                    format!("all-to-all over {n} hosts"),
                )?;
                for s in 0..n {
                    for d in (0..n).filter(|&d| d != s) {
                        flows.push(flow(host(s), host(d), size, *start, prio));
                    }
                }
            }
            WorkloadConfig::Poisson {
                load,
                size,
                cdf,
                duration,
                start,
                sources,
                dst,
                prio,
            } => {
                let prio = check_prio(*prio, &key("prio"))?;
                let dist = match (size, cdf) {
                    (Some(s), None) => Sizes::Fixed(check_size(*s, &key("size"))?),
                    (None, Some(c)) => {
                        Sizes::Cdf(load_cdf(c, dir).map_err(|e| FieldError::new(key("cdf"), e))?)
                    }
                    _ => {
                        return Err(FieldError::new(
                            key("size"),
                            "give either a fixed `size` or a size distribution `cdf`",
                        ));
                    }
                };
                if !(*load > 0.0 && *load <= 1.0) {
                    return Err(FieldError::new(
                        key("load"),
                        format!("must be in (0, 1], got {load}"),
                    ));
                }
                let dst = dst.as_ref().map(|d| d.resolve(n, &key("dst"))).transpose()?;
                let srcs: Vec<HostId> = match sources {
                    Some(list) => list
                        .iter()
                        .enumerate()
                        .map(|(i, h)| h.resolve(n, &key(&format!("sources[{i}]"))))
                        .collect::<Result<_, _>>()?,
                    None => (0..n).map(host).filter(|&h| Some(h) != dst).collect(),
                };
                let end = Time::ZERO + *start + *duration;
                let expected: f64 = srcs
                    .iter()
                    .map(|&src| {
                        load * topo.host_rate(src).as_gbps() * 1e9 * duration.as_secs_f64()
                            / (dist.mean() * 8.0)
                    })
                    .sum();
                at_most(
                    "duration",
                    expected,
                    format!("{load} load of {} sources for {duration}", srcs.len()),
                )?;
                for &src in &srcs {
                    if Some(src) == dst {
                        return Err(FieldError::new(key("dst"), "a source cannot send to itself"));
                    }
                    let rate = topo.host_rate(src).as_gbps() * 1e9;
                    // Mean inter-arrival (ps) so that the mean size per gap is `load` of the rate.
                    let mean_gap_ps = dist.mean() * 8.0 / (load * rate) * 1e12;
                    let exp = Exp::new(1.0 / mean_gap_ps).expect("positive rate");
                    let mut t = (Time::ZERO + *start).0 as f64;
                    loop {
                        t += exp.sample(&mut rng);
                        if t >= end.0 as f64 {
                            break;
                        }
                        let d = dst.unwrap_or_else(|| {
                            let d = rng.random_range(0..n - 1);
                            host(if d >= src.idx() { d + 1 } else { d })
                        });
                        let size = dist.sample(&mut rng);
                        flows.push(FlowSpec {
                            src,
                            dst: d,
                            size,
                            start: Time(t as u64),
                            prio,
                            deps: Deps::None,
                        });
                    }
                }
            }
            WorkloadConfig::Htsim { file, prio } => {
                let prio = check_prio(*prio, &key("prio"))?;
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    FieldError::new(key("file"), format!("cannot read {}: {e}", path.display()))
                })?;
                flows = htsim::parse(&text, n, prio)
                    .map_err(|e| FieldError::new(key("file"), format!("{}: {e}", path.display())))?;
                at_most("file", flows.len() as f64, path.display().to_string())?;
            }
            WorkloadConfig::Collective {
                op,
                size,
                hosts,
                start,
                prio,
            } => {
                let (size, prio) = (check_size(*size, &key("size"))?, check_prio(*prio, &key("prio"))?);
                let ring: Vec<HostId> = match hosts {
                    Some(list) => list
                        .iter()
                        .enumerate()
                        .map(|(i, h)| h.resolve(n, &key(&format!("hosts[{i}]"))))
                        .collect::<Result<_, _>>()?,
                    None => (0..n).map(host).collect(),
                };
                let mut seen = std::collections::HashSet::new();
                if ring.len() < 2 || !ring.iter().all(|h| seen.insert(*h)) {
                    return Err(FieldError::new(
                        key("hosts"),
                        "a ring needs at least two distinct hosts",
                    ));
                }
                let r = ring.len() as f64;
                // All-reduce is a reduce-scatter then an all-gather: twice the steps.
                let steps = if *op == collective::Collective::RingAllreduce {
                    2.0
                } else {
                    1.0
                };
                at_most(
                    "hosts",
                    steps * r * (r - 1.0),
                    format!("a ring of {} hosts", ring.len()),
                )?;
                flows = collective::ring(*op, &ring, size, Time::ZERO + *start, prio);
            }
        }
        Ok(flows)
    }
}

/// Most flows a scenario may have: each costs about 200 B of state, so 10 million fit a laptop.
pub const MAX_FLOWS: usize = 10_000_000;

/// Flow sizes: fixed, or drawn from a CDF.
enum Sizes {
    Fixed(u64),
    Cdf(cdf::SizeCdf),
}

impl Sizes {
    fn mean(&self) -> f64 {
        match self {
            Sizes::Fixed(s) => *s as f64,
            Sizes::Cdf(c) => c.mean(),
        }
    }
    fn sample(&self, rng: &mut impl rand::Rng) -> u64 {
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::Cdf(c) => c.sample(rng),
        }
    }
}

fn load_cdf(c: &cdf::CdfConfig, dir: &Path) -> Result<cdf::SizeCdf, String> {
    match c {
        cdf::CdfConfig::Named(n) if n == "websearch" => Ok(cdf::SizeCdf::websearch()),
        cdf::CdfConfig::Named(n) if n == "fb-hadoop" => Ok(cdf::SizeCdf::fb_hadoop()),
        cdf::CdfConfig::Named(n) => Err(format!(
            "unknown distribution \"{n}\": expected \"websearch\", \"fb-hadoop\" or {{ file = \"...\" }}"
        )),
        cdf::CdfConfig::File { file } => {
            let path = dir.join(file);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            cdf::SizeCdf::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests;
