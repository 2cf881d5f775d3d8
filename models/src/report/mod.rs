//! What a run produced: per-flow records, counters, summary statistics and the invariants
//! every run is checked against.

mod counters;
mod flows;
pub use flows::{FlowStatus, Unfinished, Why};
mod invariants;
pub mod jobs;
mod sonic;
pub use counters::{Counter, Counters};
pub use sonic::SonicRow;

use crate::drop::DropReason;
use crate::sim::{Sim, StopReason};
use serde::Serialize;

/// One row of `flows.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct FlowRecord {
    pub flow_id: u32,
    pub src: String,
    pub dst: String,
    pub size_bytes: u64,
    pub start_ns: f64,
    /// When the last byte reached the receiver.
    pub finish_ns: Option<f64>,
    pub fct_ns: Option<f64>,
    /// When the sender learned of the completion: the last ACK's arrival (htsim ends a flow
    /// there).
    pub sender_finish_ns: Option<f64>,
    pub sender_fct_ns: Option<f64>,
    pub ideal_fct_ns: f64,
    pub slowdown: Option<f64>,
    /// Between two GPUs of one server: it took NVLink, not the network (left out of the
    /// variant's FCT, slowdown and goodput figures).
    pub nvlink: bool,
    /// The UDP source port of its packets (ECMP's entropy), as the flow starts: a sprayed
    /// flow moves it per packet.
    pub entropy: u16,
    /// The switch egress ports its first data packet took: `leaf0:to-spine1 spine1:to-leaf2
    /// leaf2:to-h11` (empty for a flow inside one server, or never sent).
    pub path: String,
    /// Its data packets out of each egress port of its first switch, most first:
    /// `to-spine0=120 to-spine1=118` (one port for a hashed flow; a sprayed flow's shares).
    pub uplinks: String,
    /// `completed`, or `unfinished: <reason>`.
    pub status: FlowStatus,
}

/// A PFC storm: egress `port` held paused without a break for `pfc.watchdog` or longer
/// (SONiC's PFC watchdog definition; `crate::pause::Held`).
#[derive(Debug, Clone, Serialize)]
pub struct StormRecord {
    pub port: String,
    pub priority: u8,
    pub start_ns: f64,
    pub duration_ns: f64,
    /// The port whose XOFF began the chain of pauses (the stuck receiver, the incast port).
    pub started_by: String,
}

/// A cyclic pause dependency that made no progress for `pfc.deadlock_timeout`.
#[derive(Debug, Clone, Serialize)]
pub struct DeadlockRecord {
    pub priority: u8,
    pub since_ns: f64,
    pub detected_ns: f64,
    /// Egress ports in dependency order, each paused by the node of the next.
    pub cycle: Vec<String>,
    pub nodes: Vec<String>,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Invariant {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// Quantiles of a set of values; each is null when the set is empty (no flow completed).
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Quantiles {
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

impl Quantiles {
    /// Nearest-rank quantiles of `sorted`.
    pub fn of(sorted: &[f64]) -> Quantiles {
        Quantiles {
            p50: percentile(sorted, 0.5),
            p99: percentile(sorted, 0.99),
            max: sorted.last().copied(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Slowdown {
    pub p50: Option<f64>,
    pub p99: Option<f64>,
}

/// Unfinished flow ids listed in `summary.json`.
pub const UNFINISHED_LISTED: usize = 1000;

/// One entry of `summary.json`'s `variants`.
#[derive(Debug, Clone, Serialize)]
pub struct VariantSummary {
    pub name: String,
    pub flows_total: usize,
    pub flows_completed: usize,
    /// Ids of the flows that did not complete (the first [`UNFINISHED_LISTED`]; flows.csv has
    /// every flow with the reason it did not finish).
    pub unfinished_flows: Vec<u32>,
    /// Completion at the receiver (its last byte arrived), of the flows that crossed the
    /// network (copies inside a server are in `nvlink_fct_ns`).
    pub fct_ns: Quantiles,
    /// Completion at the sender (its last ACK arrived).
    pub sender_fct_ns: Quantiles,
    pub slowdown: Slowdown,
    /// Payload bytes the network delivered, over the span from the first network flow's
    /// start to the last one's completion; null when no flow completed (no span to measure
    /// it over).
    pub goodput_gbps: Option<f64>,
    /// Flows between GPUs of one server (NVLink copies), counted in `flows_total`.
    #[serde(skip_serializing_if = "is_zero")]
    pub nvlink_flows: usize,
    /// Their completion times, apart from the network's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvlink_fct_ns: Option<Quantiles>,
    pub drops: u64,
    /// Drops by reason (`lossy_buffer_full`, `headroom_exceeded`, `no_route`, `link_error`).
    pub drops_by_reason: std::collections::BTreeMap<&'static str, u64>,
    /// PFC frames sent by every port (XOFF, refresh and XON).
    pub pfc_pause_frames: u64,
    /// Data packets marked CE: by switches, and by the sending NICs (`nic.ce_share`).
    pub ecn_marked: u64,
    /// CNPs sent by notification points.
    pub cnps: u64,
    /// Data packets sent more than once (go-back-N rewinds and timeouts).
    pub retransmitted_packets: u64,
    /// Retransmission timeouts that resent data (`local_ack_timeout_err`).
    pub rtos: u64,
    /// UET: packets presumed lost from selective ACKs and resent without a timeout.
    pub sack_losses: u64,
    /// UET NSCC: loss probes sent (SLEEK: no ACK came for a while).
    pub probes: u64,
    /// UET NSCC: packets a probe's ACK showed lost, resent without a timeout.
    pub probe_losses: u64,
    /// UET RCCC: requests to send (a sender out of credit asking its receiver again).
    pub credit_requests: u64,
    /// Payload bytes sent more than once.
    pub retransmitted_bytes: u64,
    /// Data packets trimmed to their headers by switches.
    pub trimmed: u64,
    /// NACKs (UET: for trimmed packets) and NAKs (RoCEv2: PSN sequence errors) received.
    pub nacks: u64,
    /// ACKs received by senders (UET: selective ACKs).
    pub acks: u64,
    /// Times a sender moved a flow to another entropy value (path) between two packets.
    pub ev_changes: u64,
    pub events: u64,
    pub packet_hops: u64,
    pub simulated_ns: f64,
    pub wall_seconds: f64,
    pub events_per_second: f64,
    pub packet_hops_per_second: f64,
    /// Simulated seconds per wall-clock second (above 1: faster than the real fabric).
    pub simulated_per_wall: f64,
    /// How a run on several threads spent its wall-clock time (absent on one thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<crate::sim::ParallelRun>,
    /// Why the run stopped early, or why flows were left unfinished though it was not
    /// stopped (a sender gave up, a flow waits for one that never completes); null when
    /// every flow completed.
    pub incomplete: Option<String>,
    /// How the run ended, for the exit code (`incomplete` says it in words).
    #[serde(skip)]
    pub ending: Ending,
    /// PFC storms (all), the first of them with where they started, and deadlocks found.
    pub pfc_storms: u64,
    pub pfc_storm_list: Vec<StormRecord>,
    pub pfc_deadlocks: Vec<DeadlockRecord>,
    /// CBFC's credits, update frames and stalls (absent unless `pfc.mode = "cbfc"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cbfc: Option<crate::cbfc::CbfcTotals>,
    /// Collective jobs, as nccl-tests reports them (absent when the scenario has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<jobs::JobRecord>,
    /// The SONiC file the switch settings came from (absent without `switch.sonic`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonic: Option<SonicRecord>,
    /// Each `[switch.tier.<name>]` with its own SONiC file: what that file set.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sonic_tiers: std::collections::BTreeMap<String, SonicRecord>,
    /// What the configuration check found in this variant's settings (`crate::scenario::check`).
    pub config_findings: Vec<crate::scenario::check::Finding>,
    /// Finding ids the scenario silenced (`check.silence`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_silenced: Vec<String>,
    pub invariants: Vec<Invariant>,
}

/// How a variant's run ended: what decides `sim run`'s exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ending {
    /// Every flow completed.
    #[default]
    Complete,
    /// Stopped by `run.max_time`, `run.max_events` or `run.max_wall`.
    Limit,
    /// Stopped by a PFC deadlock (`pfc.on_deadlock = "stop"`).
    Deadlock,
    /// Stopped by Ctrl-C.
    Interrupted,
    /// Not stopped, but flows were left unfinished (a sender gave up, a dependency that
    /// never completes, no route, events ran out).
    Unfinished,
}

impl Ending {
    fn of(sim: &Sim) -> Ending {
        match &sim.stopped {
            Some(StopReason::MaxTime(_) | StopReason::MaxEvents(_) | StopReason::MaxWall(_)) => Ending::Limit,
            Some(StopReason::PfcDeadlock(_)) => Ending::Deadlock,
            Some(StopReason::Interrupted) => Ending::Interrupted,
            None if sim.flows.iter().any(|f| f.finish.is_none()) => Ending::Unfinished,
            None => Ending::Complete,
        }
    }
}

/// What `switch.sonic` set: each key and value (as TOML writes it), the keys the scenario
/// wrote over, and what the file holds that the model does not act on.
#[derive(Debug, Clone, Serialize)]
pub struct SonicRecord {
    pub file: String,
    pub set: std::collections::BTreeMap<String, String>,
    pub overridden: Vec<String>,
    pub warnings: Vec<String>,
}

impl SonicRecord {
    fn of(s: &crate::scenario::sonic::SonicInfo) -> Self {
        SonicRecord {
            file: s.file.clone(),
            set: s
                .imported
                .set
                .iter()
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect(),
            overridden: s.overridden.clone(),
            warnings: s.imported.warnings.clone(),
        }
    }
}

/// Everything one variant's run produced.
pub struct VariantReport {
    pub summary: VariantSummary,
    pub flows: Vec<FlowRecord>,
    pub counters: Counters,
    /// `sonic_counters.csv`'s rows (only when the variant asks for them).
    pub sonic: Vec<SonicRow>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Nearest-rank percentile of sorted data (`q` in 0..=1); None for no data.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

fn ns(t: sim_core::Time) -> f64 {
    t.as_ns_f64()
}

impl VariantReport {
    pub fn new(sim: &Sim, wall_seconds: f64) -> Self {
        let ports = sim.net.port_names();
        let flows = flows::flow_records(sim, &ports);
        let completed = flows.iter().filter(|f| f.fct_ns.is_some()).count();
        // The network's flows; copies inside a server apart.
        let net = || flows.iter().filter(|f| !f.nvlink);
        let mut fcts: Vec<f64> = net().filter_map(|f| f.fct_ns).collect();
        let mut slow: Vec<f64> = net().filter_map(|f| f.slowdown).collect();
        let mut sender: Vec<f64> = net().filter_map(|f| f.sender_fct_ns).collect();
        let nvlink_flows = flows.iter().filter(|f| f.nvlink).count();
        let mut local: Vec<f64> = flows
            .iter()
            .filter(|f| f.nvlink)
            .filter_map(|f| f.fct_ns)
            .collect();
        local.sort_by(f64::total_cmp);
        fcts.sort_by(f64::total_cmp);
        slow.sort_by(f64::total_cmp);
        sender.sort_by(f64::total_cmp);
        let t = &sim.totals;
        let per_sec = |x: u64| {
            if wall_seconds > 0.0 {
                x as f64 / wall_seconds
            } else {
                0.0
            }
        };
        let (pfc_storm_list, pfc_deadlocks) = pfc_records(sim);
        let summary = VariantSummary {
            name: sim.variant.name.clone(),
            flows_total: flows.len(),
            flows_completed: completed,
            unfinished_flows: flows
                .iter()
                .filter(|f| f.finish_ns.is_none())
                .map(|f| f.flow_id)
                .take(UNFINISHED_LISTED)
                .collect(),
            fct_ns: Quantiles::of(&fcts),
            sender_fct_ns: Quantiles::of(&sender),
            slowdown: Slowdown {
                p50: percentile(&slow, 0.5),
                p99: percentile(&slow, 0.99),
            },
            goodput_gbps: (!fcts.is_empty()).then(|| goodput_gbps(sim)),
            nvlink_flows,
            nvlink_fct_ns: (nvlink_flows > 0).then(|| Quantiles::of(&local)),
            drops: t.dropped_packets,
            drops_by_reason: DropReason::ALL
                .iter()
                .map(|r| (r.name(), t.drops_by_reason[*r as usize]))
                .collect(),
            pfc_pause_frames: t.pfc_frames,
            ecn_marked: t.ecn_marked,
            cnps: sim.flows.iter().map(|f| f.cnps_sent).sum(),
            retransmitted_packets: sim.flows.iter().map(|f| f.retransmitted).sum(),
            rtos: sim.flows.iter().map(|f| f.timeouts).sum(),
            sack_losses: sim.flows.iter().map(|f| f.sack_losses).sum(),
            probes: sim.flows.iter().map(|f| f.probes).sum(),
            probe_losses: sim.flows.iter().map(|f| f.probe_losses).sum(),
            credit_requests: sim.flows.iter().map(|f| f.credit_requests).sum(),
            retransmitted_bytes: sim.flows.iter().map(|f| f.retransmitted_bytes).sum(),
            trimmed: t.trimmed,
            nacks: sim.flows.iter().map(|f| f.naks_received).sum(),
            acks: sim.flows.iter().map(|f| f.acks_received).sum(),
            ev_changes: sim.flows.iter().map(|f| f.ev_changes()).sum(),
            events: t.events,
            packet_hops: t.packet_hops,
            simulated_ns: ns(t.end_time),
            wall_seconds,
            events_per_second: per_sec(t.events),
            packet_hops_per_second: per_sec(t.packet_hops),
            simulated_per_wall: ns(t.end_time) * 1e-9 / wall_seconds.max(1e-9),
            parallel: sim.parallel.clone(),
            incomplete: sim
                .stopped
                .as_ref()
                .map(stop_text)
                .or_else(|| flows::unfinished_summary(&flows)),
            ending: Ending::of(sim),
            pfc_storms: sim.watch.storms_total,
            pfc_storm_list,
            pfc_deadlocks,
            cbfc: sim.cbfc.on().then(|| sim.cbfc.totals()),
            jobs: jobs::records(&sim.jobs, &flows),
            sonic: sim.variant.sonic.as_ref().map(SonicRecord::of),
            sonic_tiers: sim
                .variant
                .tiers
                .iter()
                .filter_map(|t| Some((t.name.clone(), SonicRecord::of(t.sonic.as_ref()?))))
                .collect(),
            config_findings: sim.variant.findings.clone(),
            config_silenced: sim.variant.silence.clone(),
            invariants: invariants::invariants(sim, &flows),
        };
        VariantReport {
            summary,
            flows,
            counters: counters::counters(sim, &ports),
            sonic: sonic::sonic_rows(sim),
        }
    }
}

/// Payload delivered over the span from the first flow start to the last completion.
fn goodput_gbps(sim: &Sim) -> f64 {
    let net = || {
        sim.flows
            .iter()
            .enumerate()
            .filter(|(i, _)| !sim.is_local(*i))
            .map(|(_, f)| f)
    };
    let delivered: u64 = net().map(|f| f.received_bytes).sum();
    let first_start = net()
        .map(|f| f.started.unwrap_or(f.spec.start))
        .min()
        .unwrap_or_default();
    let last = net()
        .filter_map(|f| f.finish)
        .max()
        .unwrap_or(sim.totals.end_time)
        .max(first_start);
    let span = (last - first_start).as_secs_f64();
    if span > 0.0 {
        delivered as f64 * 8.0 / span / 1e9
    } else {
        0.0
    }
}

/// The PFC storms listed and the deadlocks found, with readable port names.
fn pfc_records(sim: &Sim) -> (Vec<StormRecord>, Vec<DeadlockRecord>) {
    // Listed as their pauses ended; reported in the order they began.
    let mut listed: Vec<_> = sim.watch.storms.iter().collect();
    listed.sort_by_key(|st| (st.start, st.port, st.prio));
    let storms = listed
        .into_iter()
        .map(|st| StormRecord {
            port: sim.net.port_label(st.port),
            priority: st.prio,
            start_ns: ns(st.start),
            duration_ns: st.duration.as_ns_f64(),
            started_by: sim.net.port_label(st.origin),
        })
        .collect();
    let deadlocks = sim
        .watch
        .deadlocks
        .iter()
        .map(|d| DeadlockRecord {
            priority: d.prio,
            since_ns: ns(d.since),
            detected_ns: ns(d.detected),
            cycle: d.cycle.iter().map(|&p| sim.net.port_label(p)).collect(),
            nodes: d
                .cycle
                .iter()
                .map(|&p| sim.net.names[sim.net.port_node[p.idx()].idx()].clone())
                .collect(),
            text: sim.describe(d),
        })
        .collect();
    (storms, deadlocks)
}

fn stop_text(s: &StopReason) -> String {
    match s {
        StopReason::MaxTime(t) => format!("stopped by run.max_time at {t}"),
        StopReason::MaxEvents(n) => format!("stopped by run.max_events after {n} events"),
        StopReason::PfcDeadlock(text) => format!("stopped by a {text}"),
        StopReason::Interrupted => "interrupted (Ctrl-C)".to_string(),
        StopReason::MaxWall(d) => format!("stopped by run.max_wall after {d:?} of wall-clock time"),
    }
}
