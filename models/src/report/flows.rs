//! `flows.csv`'s rows: each flow's times, ideal and slowdown, and why an unfinished one did not
//! finish.

use super::{FlowRecord, ns, stop_text};
use crate::sim::Sim;
use std::fmt;

pub(super) fn flow_records(sim: &Sim, ports: &[Box<str>]) -> Vec<FlowRecord> {
    sim.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ideal = sim.bounds[i].ideal;
            let start = f.started.unwrap_or(f.spec.start);
            let fct = f.finish.map(|t| (t - start).as_ns_f64());
            let status = match f.finish {
                Some(_) => FlowStatus::Completed,
                None => FlowStatus::Unfinished(unfinished(sim, f)),
            };
            FlowRecord {
                flow_id: i as u32,
                src: sim.net.names[sim.net.host_node[f.spec.src.idx()].idx()].clone(),
                dst: sim.net.names[sim.net.host_node[f.spec.dst.idx()].idx()].clone(),
                size_bytes: f.spec.size,
                start_ns: ns(start),
                finish_ns: f.finish.map(ns),
                fct_ns: fct,
                sender_finish_ns: f.sender_done.map(ns),
                sender_fct_ns: f.sender_done.map(|t| (t - start).as_ns_f64()),
                ideal_fct_ns: ideal.as_ns_f64(),
                slowdown: fct.map(|x| x / ideal.as_ns_f64().max(1e-3)),
                nvlink: sim.is_local(i),
                entropy: f.entropy,
                path: if sim.is_local(i) {
                    "nvlink".into()
                } else {
                    path(sim, ports, i)
                },
                uplinks: uplinks(sim, ports, i),
                status,
            }
        })
        .collect()
}

/// Flow `i`'s first data packet's egress ports at the switches, `node:port` each (`ports`:
/// every port's name).
fn path(sim: &Sim, ports: &[Box<str>], i: usize) -> String {
    let net = &sim.net;
    let mut s = String::new();
    for p in sim.paths.path(i) {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&net.names[net.port_node[p.idx()].idx()]);
        s.push(':');
        s.push_str(&ports[p.idx()]);
    }
    s
}

/// Flow `i`'s data packets per egress port of its first switch, `port=count` each.
fn uplinks(sim: &Sim, ports: &[Box<str>], i: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for (p, n) in sim.paths.uplinks(i) {
        if !s.is_empty() {
            s.push(' ');
        }
        let _ = write!(s, "{}={n}", ports[p.idx()]);
    }
    s
}

/// How a flow ended: flows.csv's `status`, written as `completed` or `unfinished: <why>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowStatus {
    Completed,
    Unfinished(Unfinished),
}

/// Why a flow did not finish: the cause, and the sentence flows.csv gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    pub why: Why,
    pub detail: String,
}

/// The causes of an unfinished flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It waits for flows (a collective's data, a `.cm` trigger) that never completed.
    Waiting,
    /// Its start time is past the end of the run.
    NeverStarted,
    /// No route from its source to its destination.
    NoRoute,
    /// Its sender's cable is down at the end of the run (cut, or never up: FEC ends differ).
    CableDown,
    /// Its sender's cable is held in LLR's FLUSH state under `flush_action = "block"`.
    LlrBlocked,
    /// Its sender gave up after `nic.rto_retries` timeouts.
    GaveUp,
    /// Packets were dropped and recovery did not complete.
    Lost,
    /// A limit, a deadlock or Ctrl-C stopped the run while it was sending.
    Stopped,
    /// Nothing stopped the run, nothing was lost, and yet events ran out while it was
    /// sending: the simulator lost track of it (what the `flows_accounted` invariant catches).
    Stalled,
}

impl Why {
    /// A few words, as summary.json's `incomplete` counts flows by cause.
    pub fn summary(self) -> &'static str {
        match self {
            Why::Waiting => "never started, waiting for flows that never completed",
            Why::NeverStarted => "never started",
            Why::NoRoute => "had no route",
            Why::CableDown => "had their sender's cable down",
            Why::LlrBlocked => "had their sender's cable blocked in LLR's FLUSH state",
            Why::GaveUp => "gave up after nic.rto_retries timeouts",
            Why::Lost => "lost packets and did not recover",
            Why::Stopped => "were in progress when the run stopped",
            Why::Stalled => "were in progress when events ran out",
        }
    }
}

impl FlowStatus {
    pub fn is_completed(&self) -> bool {
        matches!(self, FlowStatus::Completed)
    }
}

impl serde::Serialize for FlowStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for FlowStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowStatus::Completed => f.write_str("completed"),
            FlowStatus::Unfinished(u) => write!(f, "unfinished: {}", u.detail),
        }
    }
}

/// Why `f` did not finish.
fn unfinished(sim: &Sim, f: &crate::nic::Flow) -> Unfinished {
    let (why, detail) = unfinished_reason(sim, f);
    Unfinished { why, detail }
}

fn unfinished_reason(sim: &Sim, f: &crate::nic::Flow) -> (Why, String) {
    if f.waiting > 0 {
        return (
            Why::Waiting,
            format!(
                "never started: waiting for {} more of flows {:?} to complete",
                f.waiting,
                f.spec.deps.needs().1
            ),
        );
    }
    if f.port.is_none() && f.spec.start > sim.totals.end_time {
        return match &sim.stopped {
            Some(s) => (Why::NeverStarted, format!("never started ({})", stop_text(s))),
            None => (Why::NeverStarted, "never started".into()),
        };
    }
    if f.port.is_none() {
        return (
            Why::NoRoute,
            format!("no route from h{} to h{}", f.spec.src.0, f.spec.dst.0),
        );
    }
    let progress = format!("{} of {} bytes delivered", f.received_bytes, f.spec.size);
    if !sim.net.port_up[f.port.idx()] && sim.stopped.is_none() {
        return (
            Why::CableDown,
            format!("its sender's cable is down, so its NIC has no carrier ({progress})"),
        );
    }
    let llr = sim.net.llr.get(f.port.idx()).and_then(|l| l.as_ref());
    if llr.is_some_and(|l| l.blocked() && l.state() == crate::llr::TxState::Flush) {
        return (
            Why::LlrBlocked,
            format!(
                "its sender's cable flushed its LLR replay buffer and stays in FLUSH \
                 (re_init_on_flush = false), holding every new frame (flush_action = \"block\"; {progress})"
            ),
        );
    }
    if f.gave_up {
        return (
            Why::GaveUp,
            format!(
                "the sender gave up: its retransmission timer expired {} times in a row without progress (nic.rto_retries; {progress})",
                sim.variant.nic.rto_retries + 1
            ),
        );
    }
    if f.dropped_packets > 0 && sim.stopped.is_none() {
        return (
            Why::Lost,
            format!(
                "{} of its packets were dropped and recovery did not complete ({progress})",
                f.dropped_packets
            ),
        );
    }
    if f.spec.src != f.spec.dst && crate::ideal::path(&sim.net, &f.spec).is_empty() {
        // The routing knows no way there (cables down, from the start or for good): what
        // the sender sent was dropped on the way (`no_route`) until a limit stopped the run.
        let stopped = sim
            .stopped
            .as_ref()
            .map_or(String::new(), |s| format!("; {}", stop_text(s)));
        return (
            Why::NoRoute,
            format!(
                "no route from h{} to h{}: the fabric has no path between them with the cables that are up ({progress}{stopped})",
                f.spec.src.0, f.spec.dst.0
            ),
        );
    }
    match &sim.stopped {
        Some(s) => (
            Why::Stopped,
            format!(
                "in progress when the run was {s_text} ({} of {} bytes delivered)",
                f.received_bytes,
                f.spec.size,
                s_text = stop_text(s)
            ),
        ),
        None => (
            Why::Stalled,
            format!(
                "in progress when events ran out ({} of {} bytes delivered)",
                f.received_bytes, f.spec.size
            ),
        ),
    }
}

/// Why a run that was not stopped left flows unfinished, as summary.json's `incomplete`
/// says it: `"800 of 960 flows unfinished: 800 gave up after nic.rto_retries timeouts"`.
pub(super) fn unfinished_summary(flows: &[FlowRecord]) -> Option<String> {
    let mut counts: Vec<(Why, usize)> = Vec::new();
    for f in flows {
        if let FlowStatus::Unfinished(u) = &f.status {
            match counts.iter_mut().find(|(w, _)| *w == u.why) {
                Some((_, n)) => *n += 1,
                None => counts.push((u.why, 1)),
            }
        }
    }
    if counts.is_empty() {
        return None;
    }
    let n: usize = counts.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = counts
        .iter()
        .map(|(w, c)| format!("{c} {}", w.summary()))
        .collect();
    Some(format!(
        "{n} of {} flows unfinished: {} (flows.csv has each one's reason)",
        flows.len(),
        parts.join(", ")
    ))
}
