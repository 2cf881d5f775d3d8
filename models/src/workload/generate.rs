//! One generator per `[[workload]]` kind. Each turns its table into flows before the run,
//! drawing from the workload's own seeded stream, and refuses counts it cannot hold.

use super::{FlowSpec, HostRef, MAX_FLOWS, WorkloadConfig, cdf, check_prio, check_size, collective, htsim};
use crate::error::FieldError;
use crate::ids::HostId;
use crate::topology::Topology;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_distr::{Distribution, Exp};
use sim_core::{Duration, RngStreams, SimRng, Time};
use std::path::Path;

/// A generator's flows, and the job when it is a collective.
pub type Generated = (Vec<FlowSpec>, Option<collective::JobSpec>);

/// How many flows the workloads may still add: the least of [`MAX_FLOWS`] and what the run's
/// memory limit holds (`run.max_memory`, or the command's share of the machine), so that a
/// workload whose shape asks for more is refused before it is built, not aborted by the
/// allocator while it is.
#[derive(Debug, Clone)]
pub struct FlowCap {
    pub flows: usize,
    /// What sets it, for the message: "the 10000000 a scenario may have".
    pub why: String,
}

impl FlowCap {
    /// The cap for a scenario that already has `have` flows, under `memory` (bytes, and
    /// where the limit comes from) when one applies, at `per_flow` bytes a flow (the
    /// scenario's memory estimate, `scenario::budget::per_flow`).
    pub fn new(have: usize, memory: Option<(u64, &str)>, per_flow: u64) -> FlowCap {
        let mut cap = FlowCap {
            flows: MAX_FLOWS,
            why: format!("the {MAX_FLOWS} a scenario may have"),
        };
        if let Some((bytes, source)) = memory {
            let per = per_flow.max(1);
            let fit = usize::try_from(bytes / per).unwrap_or(usize::MAX);
            if fit < cap.flows {
                cap = FlowCap {
                    flows: fit,
                    why: format!(
                        "the {fit} that fit in {:.2} GiB ({source}) at about {per} B each; raise run.max_memory if the machine has the memory",
                        bytes as f64 / (1u64 << 30) as f64
                    ),
                };
            }
        }
        cap.flows = cap.flows.saturating_sub(have);
        cap
    }
}

/// What every generator knows: its position in `[[workload]]`, the fabric, its stream, and
/// how many flows it may make.
struct Gen<'a> {
    index: usize,
    topo: &'a Topology,
    rng: SimRng,
    cap: &'a FlowCap,
}

impl Gen<'_> {
    fn key(&self, field: &str) -> String {
        format!("workload[{}].{field}", self.index)
    }

    fn hosts(&self) -> usize {
        self.topo.hosts.len()
    }

    /// Refuse, naming `field`, a workload that would expand into more flows than its cap.
    fn at_most(&self, field: &str, count: f64, what: String) -> Result<(), FieldError> {
        if count > self.cap.flows as f64 {
            return Err(FieldError::new(
                self.key(field),
                format!("{what}: about {count:.3e} flows, more than {}", self.cap.why),
            ));
        }
        Ok(())
    }

    /// The workload's `size` and `prio`, checked.
    fn size_and_prio(&self, size: sim_core::Bytes, prio: u8) -> Result<(u64, u8), FieldError> {
        Ok((
            check_size(size, &self.key("size"))?,
            check_prio(prio, &self.key("prio"))?,
        ))
    }

    /// Resolve a list of hosts written in the workload under `field`.
    fn host_list(&self, field: &str, list: &[HostRef]) -> Result<Vec<HostId>, FieldError> {
        list.iter()
            .enumerate()
            .map(|(i, h)| h.resolve(self.topo, &self.key(&format!("{field}[{i}]"))))
            .collect()
    }
}

fn flow(src: HostId, dst: HostId, size: u64, start: Duration, prio: u8) -> FlowSpec {
    FlowSpec::new(src, dst, size, Time::ZERO + start, prio)
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
        self.generate_with_job(index, topo, streams, dir, &FlowCap::new(0, None, 1))
            .map(|g| g.0)
    }

    /// As [`generate`](Self::generate), with the job a collective reports (flow indices local
    /// to the returned list), making no more flows than `cap`.
    pub fn generate_with_job(
        &self,
        index: usize,
        topo: &Topology,
        streams: &RngStreams,
        dir: &Path,
        cap: &FlowCap,
    ) -> Result<Generated, FieldError> {
        let mut g = Gen {
            index,
            topo,
            rng: streams.stream("workload", index as u64),
            cap,
        };
        match self {
            WorkloadConfig::Permutation { size, start, prio } => permutation(&mut g, *size, *start, *prio),
            WorkloadConfig::Incast {
                receiver,
                senders,
                size,
                start,
                period,
                repeat,
                prio,
            } => {
                let rounds = Rounds {
                    start: *start,
                    period: *period,
                    repeat: *repeat,
                };
                incast(&g, receiver, *senders, *size, rounds, *prio)
            }
            WorkloadConfig::AllToAll { size, start, prio } => all_to_all(&g, *size, *start, *prio),
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
                let sizes = match (size, cdf) {
                    (Some(s), None) => Sizes::Fixed(check_size(*s, &g.key("size"))?),
                    (None, Some(c)) => {
                        Sizes::Cdf(load_cdf(c, dir).map_err(|e| FieldError::new(g.key("cdf"), e))?)
                    }
                    _ => {
                        return Err(FieldError::new(
                            g.key("size"),
                            "give either a fixed `size` or a size distribution `cdf`",
                        ));
                    }
                };
                let spec = Open {
                    load: *load,
                    sizes,
                    duration: *duration,
                    start: *start,
                };
                poisson(&mut g, spec, sources.as_deref(), dst.as_ref(), *prio)
            }
            WorkloadConfig::Htsim { file, prio } => htsim_file(&g, file, dir, *prio),
            WorkloadConfig::Collective(c) => return collective(&g, c),
        }
        .map(|flows| (flows, None))
    }
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

/// Every host sends `size` to one peer; the peers form a seeded random derangement.
fn permutation(
    g: &mut Gen,
    size: sim_core::Bytes,
    start: Duration,
    prio: u8,
) -> Result<Vec<FlowSpec>, FieldError> {
    let (size, prio) = g.size_and_prio(size, prio)?;
    let peers = derangement(g.hosts(), &mut g.rng);
    Ok(peers
        .into_iter()
        .enumerate()
        .map(|(src, dst)| flow(HostId(src as u32), HostId(dst as u32), size, start, prio))
        .collect())
}

/// When an incast starts, and how often it repeats.
struct Rounds {
    start: Duration,
    period: Option<Duration>,
    repeat: u32,
}

/// `senders` hosts (default: all others) each send `size` to `receiver`, every round.
fn incast(
    g: &Gen,
    receiver: &HostRef,
    senders: Option<u32>,
    size: sim_core::Bytes,
    rounds: Rounds,
    prio: u8,
) -> Result<Vec<FlowSpec>, FieldError> {
    let (size, prio) = g.size_and_prio(size, prio)?;
    let n = g.hosts();
    let dst = receiver.resolve(g.topo, &g.key("receiver"))?;
    let count = senders.unwrap_or(n as u32 - 1) as usize;
    if count == 0 || count > n - 1 {
        return Err(FieldError::new(
            g.key("senders"),
            format!("must be between 1 and {} (hosts - 1), got {count}", n - 1),
        ));
    }
    let repeat = rounds.repeat;
    if repeat == 0 || (repeat > 1 && rounds.period.is_none_or(|p| p == Duration::ZERO)) {
        return Err(FieldError::new(
            g.key("repeat"),
            "repeating an incast needs repeat >= 1 and a non-zero `period`",
        ));
    }
    g.at_most(
        "repeat",
        count as f64 * repeat as f64,
        format!("{count} senders x {repeat} repeats"),
    )?;
    // The last round's start, within the time limit (no wrap-around to t = 0).
    let period = rounds.period.unwrap_or(Duration::ZERO);
    period
        .checked_mul(repeat as u64 - 1)
        .and_then(|span| span.checked_add(rounds.start))
        .ok_or_else(|| {
            FieldError::new(
                g.key("repeat"),
                format!(
                    "{repeat} rounds every {period} from {} start past the simulator's time limit of {}",
                    rounds.start,
                    Duration::LIMIT.text
                ),
            )
        })?;
    let mut flows = Vec::with_capacity(count * repeat as usize);
    for r in 0..repeat as u64 {
        let at = rounds.start + rounds.period.unwrap_or(Duration::ZERO) * r;
        let srcs = (0..n as u32).map(HostId).filter(|&h| h != dst).take(count);
        flows.extend(srcs.map(|src| flow(src, dst, size, at, prio)));
    }
    Ok(flows)
}

/// Every host sends `size` to every other host.
fn all_to_all(
    g: &Gen,
    size: sim_core::Bytes,
    start: Duration,
    prio: u8,
) -> Result<Vec<FlowSpec>, FieldError> {
    let (size, prio) = g.size_and_prio(size, prio)?;
    let n = g.hosts();
    g.at_most(
        "kind",
        n as f64 * (n as f64 - 1.0),
        format!("all-to-all over {n} hosts"),
    )?;
    let mut flows = Vec::with_capacity(n * n.saturating_sub(1));
    for s in 0..n as u32 {
        for d in (0..n as u32).filter(|&d| d != s) {
            flows.push(flow(HostId(s), HostId(d), size, start, prio));
        }
    }
    Ok(flows)
}

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
            let text = crate::input::read_text(&path, crate::input::MAX_DATA)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            cdf::SizeCdf::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
    }
}

/// An open-loop load: what each source offers, and when.
struct Open {
    load: f64,
    sizes: Sizes,
    duration: Duration,
    start: Duration,
}

/// Each source starts flows at Poisson times, offering `load` of its link rate in payload
/// bytes, to uniform destinations among the other hosts (or `dst`).
fn poisson(
    g: &mut Gen,
    spec: Open,
    sources: Option<&[HostRef]>,
    dst: Option<&HostRef>,
    prio: u8,
) -> Result<Vec<FlowSpec>, FieldError> {
    let prio = check_prio(prio, &g.key("prio"))?;
    let Open {
        load,
        sizes,
        duration,
        start,
    } = spec;
    if !(load > 0.0 && load <= 1.0) {
        return Err(FieldError::new(
            g.key("load"),
            format!("must be in (0, 1], got {load}"),
        ));
    }
    let n = g.hosts();
    let dst = dst.map(|d| d.resolve(g.topo, &g.key("dst"))).transpose()?;
    let srcs: Vec<HostId> = match sources {
        Some(list) => g.host_list("sources", list)?,
        None => (0..n as u32).map(HostId).filter(|&h| Some(h) != dst).collect(),
    };
    let end = Time::ZERO + start + duration;
    let expected: f64 = srcs
        .iter()
        .map(|&src| {
            load * g.topo.host_rate(src).as_gbps() * 1e9 * duration.as_secs_f64() / (sizes.mean() * 8.0)
        })
        .sum();
    g.at_most(
        "duration",
        expected,
        format!("{load} load of {} sources for {duration}", srcs.len()),
    )?;
    let mut flows = Vec::new();
    for &src in &srcs {
        if Some(src) == dst {
            return Err(FieldError::new(g.key("dst"), "a source cannot send to itself"));
        }
        let rate = g.topo.host_rate(src).as_gbps() * 1e9;
        // Mean inter-arrival (ps) so that the mean size per gap is `load` of the rate.
        let mean_gap_ps = sizes.mean() * 8.0 / (load * rate) * 1e12;
        let exp = Exp::new(1.0 / mean_gap_ps).expect("a positive load and rate give a positive mean gap");
        let mut t = (Time::ZERO + start).0 as f64;
        loop {
            t += exp.sample(&mut g.rng);
            if t >= end.0 as f64 {
                break;
            }
            let d = dst.unwrap_or_else(|| {
                let d = g.rng.random_range(0..n - 1);
                HostId(if d >= src.idx() { d + 1 } else { d } as u32)
            });
            let size = sizes.sample(&mut g.rng);
            flows.push(FlowSpec::new(src, d, size, Time(t as u64), prio));
        }
    }
    Ok(flows)
}

/// A uet-htsim connection matrix (`.cm`), path relative to the scenario file.
fn htsim_file(g: &Gen, file: &str, dir: &Path, prio: u8) -> Result<Vec<FlowSpec>, FieldError> {
    let prio = check_prio(prio, &g.key("prio"))?;
    let path = dir.join(file);
    let text = crate::input::read_text(&path, crate::input::MAX_DATA)
        .map_err(|e| FieldError::new(g.key("file"), format!("cannot read {}: {e}", path.display())))?;
    let flows = htsim::parse(&text, g.hosts(), prio, g.cap)
        .map_err(|e| FieldError::new(g.key("file"), format!("{}: {e}", path.display())))?;
    g.at_most("file", flows.len() as f64, path.display().to_string())?;
    Ok(flows)
}

/// A collective as NCCL runs it, and the job that reports it.
fn collective(g: &Gen, c: &collective::CollectiveConfig) -> Result<Generated, FieldError> {
    let (size, prio) = g.size_and_prio(c.size, c.prio)?;
    let key = |f: &str| g.key(f);
    let cx = collective::Ctx {
        key: &key,
        topo: g.topo,
        workload: g.index as u32,
    };
    let plan = c.plan(&cx, size, prio)?;
    g.at_most(
        "size",
        collective::message_count(&plan),
        format!("{} of {size} B", plan.op.name()),
    )?;
    let name = c
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-{}", plan.op.name(), g.index));
    let (flows, job) = collective::expand(&plan, name);
    Ok((flows, Some(job)))
}
