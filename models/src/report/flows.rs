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
                None => format!("unfinished: {}", unfinished_reason(sim, f)),
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
    if f.gave_up {
        return format!(
            "the sender gave up after {} retransmission timeouts in a row without progress (nic.rto_retries; {progress})",
            sim.variant.nic.rto_retries + 1
        );
    }
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
