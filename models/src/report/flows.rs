//! `flows.csv`'s rows: each flow's times, ideal and slowdown, and why an unfinished one did not
//! finish.

use super::{FlowRecord, ns, stop_text};
use crate::sim::Sim;

pub(super) fn flow_records(sim: &Sim) -> Vec<FlowRecord> {
    sim.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ideal = sim.bounds[i].ideal;
            let start = f.started.unwrap_or(f.spec.start);
            let fct = f.finish.map(|t| (t - start).as_ns_f64());
            let status = match f.finish {
                Some(_) => "completed".to_string(),
                None => format!("unfinished: {}", unfinished_reason(sim, f).1),
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
                status,
            }
        })
        .collect()
}

/// Why a flow did not finish, in a few words (what summary.json's `incomplete` counts) and in
/// full (flows.csv's `status`).
pub(super) fn unfinished_reason(sim: &Sim, f: &crate::nic::Flow) -> (&'static str, String) {
    if f.waiting > 0 {
        return (
            "never started, waiting for flows that never completed",
            format!(
                "never started: waiting for {} more of flows {:?} to complete",
                f.waiting,
                f.spec.deps.needs().1
            ),
        );
    }
    if f.port.is_none() && f.spec.start > sim.totals.end_time {
        return match &sim.stopped {
            Some(s) => ("never started", format!("never started ({})", stop_text(s))),
            None => ("never started", "never started".into()),
        };
    }
    if f.port.is_none() {
        return (
            "had no route",
            format!("no route from h{} to h{}", f.spec.src.0, f.spec.dst.0),
        );
    }
    let progress = format!("{} of {} bytes delivered", f.received_bytes, f.spec.size);
    if f.gave_up {
        return (
            "gave up after nic.rto_retries timeouts",
            format!(
                "the sender gave up after {} retransmission timeouts in a row without progress (nic.rto_retries; {progress})",
                sim.variant.nic.rto_retries + 1
            ),
        );
    }
    if f.dropped_packets > 0 && sim.stopped.is_none() {
        return (
            "lost packets and did not recover",
            format!(
                "{} of its packets were dropped and recovery did not complete ({progress})",
                f.dropped_packets
            ),
        );
    }
    match &sim.stopped {
        Some(s) => (
            "were in progress when the run stopped",
            format!(
                "in progress when the run was {s_text} ({} of {} bytes delivered)",
                f.received_bytes,
                f.spec.size,
                s_text = stop_text(s)
            ),
        ),
        None => (
            "were in progress when events ran out",
            format!(
                "in progress when events ran out ({} of {} bytes delivered)",
                f.received_bytes, f.spec.size
            ),
        ),
    }
}

/// Why a run that was not stopped left flows unfinished, as summary.json's `incomplete`
/// says it: `"800 of 960 flows unfinished: 800 gave up after nic.rto_retries timeouts"`.
pub(super) fn unfinished_summary(sim: &Sim) -> Option<String> {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for f in sim.flows.iter().filter(|f| f.finish.is_none()) {
        let (why, _) = unfinished_reason(sim, f);
        match counts.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => counts.push((why, 1)),
        }
    }
    if counts.is_empty() {
        return None;
    }
    let n: usize = counts.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = counts.iter().map(|(w, c)| format!("{c} {w}")).collect();
    Some(format!(
        "{n} of {} flows unfinished: {} (flows.csv has each one's reason)",
        sim.flows.len(),
        parts.join(", ")
    ))
}
