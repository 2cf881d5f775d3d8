//! What a run produced: per-flow records, counters, summary statistics and the invariants
//! every run is checked against.

use crate::drop::DropReason;
use crate::network::Role;
use crate::sim::{Sim, StopReason};
use serde::Serialize;
use std::collections::HashSet;
use std::sync::Arc;

/// One row of `flows.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct FlowRecord {
    pub flow_id: u32,
    pub src: String,
    pub dst: String,
    pub size_bytes: u64,
    pub start_ns: f64,
    pub finish_ns: Option<f64>,
    pub fct_ns: Option<f64>,
    pub ideal_fct_ns: f64,
    pub slowdown: Option<f64>,
    /// `completed`, or `unfinished: <reason>`.
    pub status: String,
}

/// One row of `counters.csv`. Names are shared between rows (a large fabric has some
/// 100 k rows naming a few thousand nodes and ports and a few dozen counters).
#[derive(Debug, Clone)]
pub struct CounterRow {
    pub node: Arc<str>,
    pub port: Arc<str>,
    pub counter: Arc<str>,
    pub value: u64,
}

/// A PFC storm: `port` held its peer in XOFF longer than `pfc.watchdog`.
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

#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Quantiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct Slowdown {
    pub p50: f64,
    pub p99: f64,
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
    pub fct_ns: Quantiles,
    pub slowdown: Slowdown,
    /// Payload bytes delivered, over the span from the first flow start to the last delivery.
    pub goodput_gbps: f64,
    pub drops: u64,
    /// Drops by reason (`lossy_buffer_full`, `headroom_exceeded`, `no_route`, `link_error`).
    pub drops_by_reason: std::collections::BTreeMap<&'static str, u64>,
    /// PFC frames sent by every port (XOFF, refresh and XON).
    pub pfc_pause_frames: u64,
    /// Data packets marked CE by switches.
    pub ecn_marked: u64,
    /// CNPs sent by notification points.
    pub cnps: u64,
    /// Data packets sent more than once (go-back-N rewinds and timeouts).
    pub retransmitted_packets: u64,
    /// Retransmission timeouts (`local_ack_timeout_err`).
    pub rtos: u64,
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
    /// Why the run stopped early, if it did.
    pub incomplete: Option<String>,
    /// PFC storms (all), the first of them with where they started, and deadlocks found.
    pub pfc_storms: u64,
    pub pfc_storm_list: Vec<StormRecord>,
    pub pfc_deadlocks: Vec<DeadlockRecord>,
    pub invariants: Vec<Invariant>,
}

impl VariantSummary {
    pub fn invariants_hold(&self) -> bool {
        self.invariants.iter().all(|i| i.ok)
    }
}

/// Everything one variant's run produced.
pub struct VariantReport {
    pub summary: VariantSummary,
    pub flows: Vec<FlowRecord>,
    pub counters: Vec<CounterRow>,
}

/// Nearest-rank percentile of sorted data (`q` in 0..=1).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn ns(t: sim_core::Time) -> f64 {
    t.as_ns_f64()
}

impl VariantReport {
    pub fn new(sim: &Sim, wall_seconds: f64) -> Self {
        let flows = flow_records(sim);
        let mut fcts: Vec<f64> = flows.iter().filter_map(|f| f.fct_ns).collect();
        let mut slow: Vec<f64> = flows.iter().filter_map(|f| f.slowdown).collect();
        fcts.sort_by(f64::total_cmp);
        slow.sort_by(f64::total_cmp);
        let t = &sim.totals;
        let delivered: u64 = sim.flows.iter().map(|f| f.received_bytes).sum();
        let first_start = sim
            .flows
            .iter()
            .map(|f| f.started.unwrap_or(f.spec.start))
            .min()
            .unwrap_or_default();
        let last = sim
            .flows
            .iter()
            .filter_map(|f| f.finish)
            .max()
            .unwrap_or(t.end_time)
            .max(first_start);
        let span = (last - first_start).as_secs_f64();
        let per_sec = |x: u64| {
            if wall_seconds > 0.0 {
                x as f64 / wall_seconds
            } else {
                0.0
            }
        };
        let summary = VariantSummary {
            name: sim.variant.name.clone(),
            flows_total: flows.len(),
            flows_completed: fcts.len(),
            unfinished_flows: flows
                .iter()
                .filter(|f| f.finish_ns.is_none())
                .map(|f| f.flow_id)
                .take(UNFINISHED_LISTED)
                .collect(),
            fct_ns: Quantiles {
                p50: percentile(&fcts, 0.5),
                p99: percentile(&fcts, 0.99),
                max: fcts.last().copied().unwrap_or(0.0),
            },
            slowdown: Slowdown {
                p50: percentile(&slow, 0.5),
                p99: percentile(&slow, 0.99),
            },
            goodput_gbps: if span > 0.0 {
                delivered as f64 * 8.0 / span / 1e9
            } else {
                0.0
            },
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
            incomplete: sim.stopped.as_ref().map(stop_text),
            pfc_storms: sim.watch.storms_total,
            pfc_storm_list: sim
                .watch
                .storms
                .iter()
                .map(|st| StormRecord {
                    port: sim.net.port_label(st.port),
                    priority: st.prio,
                    start_ns: ns(st.start),
                    duration_ns: st.duration.as_ns_f64(),
                    started_by: sim.net.port_label(st.origin),
                })
                .collect(),
            pfc_deadlocks: sim
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
                .collect(),
            invariants: invariants(sim, &flows),
        };
        VariantReport {
            summary,
            flows,
            counters: counters(sim),
        }
    }
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

fn flow_records(sim: &Sim) -> Vec<FlowRecord> {
    sim.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ideal = sim.bounds[i].ideal;
            let start = f.started.unwrap_or(f.spec.start);
            let fct = f.finish.map(|t| (t - start).as_ns_f64());
            let status = match f.finish {
                Some(_) => "completed".to_string(),
                None => format!("unfinished: {}", unfinished_reason(sim, f)),
            };
            FlowRecord {
                flow_id: i as u32,
                src: format!("h{}", f.spec.src.0),
                dst: format!("h{}", f.spec.dst.0),
                size_bytes: f.spec.size,
                start_ns: ns(start),
                finish_ns: f.finish.map(ns),
                fct_ns: fct,
                ideal_fct_ns: ideal.as_ns_f64(),
                slowdown: fct.map(|x| x / ideal.as_ns_f64().max(1e-3)),
                status,
            }
        })
        .collect()
}

fn unfinished_reason(sim: &Sim, f: &crate::nic::Flow) -> String {
    if f.waiting > 0 {
        return format!(
            "never started: waiting for {} more of flows {:?} to complete",
            f.waiting,
            f.spec.deps.needs().1
        );
    }
    if f.port.is_none() && f.spec.start > sim.totals.end_time {
        return match &sim.stopped {
            Some(s) => format!("never started ({})", stop_text(s)),
            None => "never started".into(),
        };
    }
    if f.port.is_none() {
        return format!("no route from h{} to h{}", f.spec.src.0, f.spec.dst.0);
    }
    let progress = format!("{} of {} bytes delivered", f.received_bytes, f.spec.size);
    if f.dropped_packets > 0 && sim.stopped.is_none() {
        return format!(
            "{} of its packets were dropped and recovery did not complete ({progress})",
            f.dropped_packets
        );
    }
    match &sim.stopped {
        Some(s) => format!(
            "in progress when the run was {s_text} ({} of {} bytes delivered)",
            f.received_bytes,
            f.spec.size,
            s_text = stop_text(s)
        ),
        None => format!(
            "in progress when events ran out ({} of {} bytes delivered)",
            f.received_bytes, f.spec.size
        ),
    }
}

fn invariants(sim: &Sim, flows: &[FlowRecord]) -> Vec<Invariant> {
    let t = &sim.totals;
    let (fp, fb) = sim.in_flight();
    let mut out = Vec::new();
    let mut check = |name, ok, detail: String| out.push(Invariant { name, ok, detail });
    check(
        "packets_conserved",
        t.injected_packets == t.delivered_packets + t.dropped_packets + fp,
        format!(
            "sent {} = delivered {} + dropped {} + in flight {fp}",
            t.injected_packets, t.delivered_packets, t.dropped_packets
        ),
    );
    let serializing = sim.net.ports.iter().filter(|p| p.is_busy()).count()
        + sim.rx.iter().flatten().filter(|b| b.drain.is_busy()).count();
    let pooled = sim.net.pool.len();
    check(
        "packet_pool_consistent",
        (pooled + serializing) as u64 == fp,
        format!(
            "{pooled} frames in the packet pool + {serializing} serializing = {fp} found in queues and on cables"
        ),
    );
    check(
        "bytes_conserved",
        t.injected_bytes == t.delivered_bytes + t.dropped_bytes + t.trimmed_bytes + fb,
        format!(
            "sent {} = delivered {} + dropped {} + trimmed off {} + in flight {fb} (frame bytes)",
            t.injected_bytes, t.delivered_bytes, t.dropped_bytes, t.trimmed_bytes
        ),
    );
    let over: Vec<usize> = sim
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.received_bytes > f.spec.size || (f.finish.is_some() && f.received_bytes != f.spec.size)
        })
        .map(|(i, _)| i)
        .collect();
    check(
        "delivered_exactly_once",
        over.is_empty(),
        if over.is_empty() {
            "every flow's bytes reached the application at most once, completed flows exactly once".into()
        } else {
            format!("flows delivered more or less than their size: {over:?}")
        },
    );
    let early: Vec<u32> = flows
        .iter()
        .zip(&sim.bounds)
        .filter(|(r, b)| r.fct_ns.is_some_and(|fct| fct + 1e-3 < b.floor.as_ns_f64()))
        .map(|(r, _)| r.flow_id)
        .collect();
    check(
        "causality",
        t.causality_violations == 0 && early.is_empty(),
        format!(
            "{} events out of time order; {} flows faster than physically possible {:?}",
            t.causality_violations,
            early.len(),
            &early[..early.len().min(10)]
        ),
    );
    let lossless = !sim.variant.pfc.mask().is_empty();
    check(
        "lossless_no_drop",
        t.lossless_drops_adequate == 0,
        if lossless {
            format!(
                "{} lossless drops on ports whose headroom covers their cable ({} headroom drops in all)",
                t.lossless_drops_adequate,
                t.drops_by_reason[DropReason::HeadroomExceeded as usize]
            )
        } else {
            "PFC is off: no lossless class".into()
        },
    );
    if fp == 0 {
        let leaked = sim.switches.iter().filter(|s| !s.mmu.is_empty()).count();
        check(
            "buffers_drained",
            leaked == 0,
            format!("{leaked} switches hold buffer cells with no packet inside"),
        );
    }
    let unexplained = flows
        .iter()
        .filter(|f| f.status != "completed" && !f.status.starts_with("unfinished: "))
        .count();
    check(
        "flows_accounted",
        unexplained == 0,
        format!(
            "{} flows completed, {} unfinished with a reason",
            flows.iter().filter(|f| f.status == "completed").count(),
            flows.len() - unexplained - flows.iter().filter(|f| f.status == "completed").count()
        ),
    );
    out
}

fn counters(sim: &Sim) -> Vec<CounterRow> {
    let net = &sim.net;
    let lossless = sim.variant.pfc.mask();
    let us = |d: sim_core::Duration| d.0 / 1_000_000;
    let mut rows = Vec::new();
    let mut names: HashSet<Arc<str>> = HashSet::new();
    let mut intern = move |s: &str| -> Arc<str> {
        if let Some(n) = names.get(s) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(s);
        names.insert(n.clone());
        n
    };
    let mut push = |node: &str, port: &str, counter: &str, value: u64| {
        rows.push(CounterRow {
            node: intern(node),
            port: intern(port),
            counter: intern(counter),
            value,
        });
    };
    for (n, name) in net.names.iter().enumerate() {
        for p in net.ports_of(crate::ids::NodeId(n as u32)) {
            let port = &net.ports[p.idx()];
            let c = &port.counters;
            let pname = net.port_name(p);
            for (counter, value) in [
                ("tx_packets", port.tx.packets),
                ("tx_bytes", port.tx.bytes),
                ("peak_queue_bytes", port.tx.peak_queue_bytes),
                ("ecn_marked", c.ecn_marked),
                ("trimmed", c.trimmed),
                ("drop_lossy_buffer_full", c.drops_lossy),
                ("drop_headroom_exceeded", c.drops_headroom),
                ("drop_link_error", c.drops_link_error),
            ] {
                push(name, &pname, counter, value);
            }
            // PFC counters (mlx5 names) for lossless priorities and any that saw a pause.
            for prio in 0..8 {
                let (rx, tx) = (&port.pause, &port.xoff);
                if !lossless.contains(prio as u8)
                    && rx.frames[prio] == 0
                    && tx.frames[prio] == 0
                    && c.rx_discards[prio] == 0
                {
                    continue;
                }
                if matches!(net.roles[n], Role::Host(_)) {
                    push(
                        name,
                        &pname,
                        &format!("rx_prio{prio}_discards"),
                        c.rx_discards[prio],
                    );
                }
                push(name, &pname, &format!("rx_prio{prio}_pause"), rx.frames[prio]);
                push(name, &pname, &format!("tx_prio{prio}_pause"), tx.frames[prio]);
                push(
                    name,
                    &pname,
                    &format!("rx_prio{prio}_pause_duration"),
                    us(rx.duration[prio]),
                );
                push(
                    name,
                    &pname,
                    &format!("tx_prio{prio}_pause_duration"),
                    us(tx.duration[prio]),
                );
            }
            if !lossless.is_empty() {
                push(name, &pname, "tx_pause_storm_warning_events", port.xoff.storms);
                push(name, &pname, "pfc_storm_detected", port.pause.storms);
            }
        }
        if let Role::Host(h) = net.roles[n] {
            let c = &sim.host_counters[h.idx()];
            for (counter, value) in [
                ("data_packets_sent", c.data_packets_sent),
                ("acks_sent", c.acks_sent),
                ("naks_sent", c.naks_sent),
                ("np_ecn_marked_roce_packets", c.np_ecn_marked_roce_packets),
                ("np_cnp_sent", c.np_cnp_sent),
                ("rp_cnp_handled", c.rp_cnp_handled),
                ("rp_cnp_ignored", c.rp_cnp_ignored),
                ("out_of_sequence", c.out_of_sequence),
                ("packet_seq_err", c.packet_seq_err),
                ("local_ack_timeout_err", c.local_ack_timeout_err),
            ] {
                push(name, "nic", counter, value);
            }
        }
    }
    rows
}
