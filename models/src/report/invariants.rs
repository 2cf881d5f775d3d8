//! The invariants every run is checked against: packets and bytes conserved, the packet pool
//! consistent, each flow delivered exactly once, causality, no lossless drop with adequate
//! headroom, buffers drained, every flow accounted for.

use super::{FlowRecord, FlowStatus, Invariant, Why};
use crate::drop::DropReason;
use crate::sim::Sim;

pub(super) fn invariants(sim: &Sim, flows: &[FlowRecord]) -> Vec<Invariant> {
    let t = &sim.totals;
    let (fp, fb) = sim.in_flight();
    let mut out = Vec::new();
    let mut check = |name, ok, detail: String| out.push(Invariant { name, ok, detail });
    // Link level retry's terms appear only in runs with LLR cables (`sim/llr.rs`).
    let llr = !sim.net.llr.is_empty();
    let (copies, discarded) = (t.llr_copies, t.llr_discarded);
    check(
        "packets_conserved",
        t.injected_packets + copies == t.delivered_packets + t.dropped_packets + discarded + fp,
        match llr {
            false => format!(
                "sent {} = delivered {} + dropped {} + in flight {fp}",
                t.injected_packets, t.delivered_packets, t.dropped_packets
            ),
            true => format!(
                "sent {} + LLR copies {copies} = delivered {} + dropped {} + LLR discarded \
                 {discarded} + in flight {fp}",
                t.injected_packets, t.delivered_packets, t.dropped_packets
            ),
        },
    );
    let serializing = sim.net.ports.iter().filter(|p| p.is_busy()).count()
        + sim.rx.iter().flatten().filter(|b| b.drain.is_busy()).count();
    let pooled = sim.net.pool.len();
    let staged = sim.llr_staged();
    let ctl = if llr { sim.llr_ctl_in_fabric() } else { 0 };
    check(
        "packet_pool_consistent",
        (pooled + serializing) as u64 + staged == fp + ctl,
        match llr {
            false => format!(
                "{pooled} frames in the packet pool + {serializing} serializing = {fp} found in queues and on cables"
            ),
            true => format!(
                "{pooled} frames in the packet pool + {serializing} serializing + {staged} held for \
                 LLR buffer room = {fp} found in queues and on cables + {ctl} LLR ordered sets"
            ),
        },
    );
    // INT terms appear only in runs that used INT (HPCC), so other runs read as before.
    let int = sim.net.int.used();
    let int_added = if int {
        format!(" + INT records added {}", t.int_bytes)
    } else {
        String::new()
    };
    let (copy_b, disc_b) = (t.llr_copy_bytes, t.llr_discarded_bytes);
    let (llr_in, llr_out) = match llr {
        false => (String::new(), String::new()),
        true => (
            format!(" + LLR copies {copy_b}"),
            format!(" + LLR discarded {disc_b}"),
        ),
    };
    check(
        "bytes_conserved",
        t.injected_bytes + t.int_bytes + copy_b
            == t.delivered_bytes + t.dropped_bytes + t.trimmed_bytes + disc_b + fb,
        format!(
            "sent {}{int_added}{llr_in} = delivered {} + dropped {} + trimmed off {}{llr_out} + in flight {fb} (frame bytes)",
            t.injected_bytes, t.delivered_bytes, t.dropped_bytes, t.trimmed_bytes
        ),
    );
    if int {
        let int_in_flight = sim.int_in_flight();
        check(
            "int_stacks_accounted",
            sim.net.int.live() == int_in_flight,
            format!(
                "{} INT stacks held = {int_in_flight} packets carrying INT in queues and on cables",
                sim.net.int.live()
            ),
        );
    }
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
    if fp == 0 && sim.cbfc.on() && !int {
        let (ok, detail) = credits_conserved(sim);
        check("credits_conserved", ok, detail);
    }
    let (ok, detail) = flows_accounted(flows);
    check("flows_accounted", ok, detail);
    out
}

/// CBFC with nothing left in the fabric: on every cable that is up, each VC's sender has
/// consumed exactly the credits its receiver freed (returned by updates, or given back for
/// frames lost on the link when its credit state was re-initialised). INT, which grows a
/// frame inside a switch, is left out (docs/cbfc.md).
fn credits_conserved(sim: &Sim) -> (bool, String) {
    let (net, cbfc) = (&sim.net, &sim.cbfc);
    let mut off = Vec::new();
    for s in 0..net.ports.len() {
        let r = net.peer[s].idx();
        if !net.port_up[s] {
            continue; // a cable still down holds its lost frames' credits until it is up
        }
        for p in cbfc.mask.iter() {
            let (tx, rx) = (cbfc.vc(s, p), cbfc.vc(r, p));
            if tx.consumed != rx.freed + rx.held {
                off.push(format!(
                    "{} priority {p}: consumed {}, freed {} + held {}",
                    net.port_label(crate::ids::PortId(s as u32)),
                    tx.consumed,
                    rx.freed,
                    rx.held
                ));
            }
        }
    }
    match off.len() {
        0 => (
            true,
            "every VC's consumed credits were freed by its receiver".into(),
        ),
        n => (
            false,
            format!("{n} VCs unbalanced: {}", off[..n.min(5)].join("; ")),
        ),
    }
}

/// Every flow completed, or did not for a cause the run can name; a flow still sending when
/// events ran out, with nothing stopped and nothing lost, is one the simulator lost.
fn flows_accounted(flows: &[FlowRecord]) -> (bool, String) {
    let completed = flows.iter().filter(|f| f.status.is_completed()).count();
    let stalled = flows
        .iter()
        .filter(|f| matches!(&f.status, FlowStatus::Unfinished(u) if u.why == Why::Stalled))
        .count();
    let mut detail = format!(
        "{completed} flows completed, {} unfinished with a reason",
        flows.len() - completed - stalled
    );
    if stalled > 0 {
        detail += &format!(", {stalled} still sending when events ran out, with no cause");
    }
    (stalled == 0, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Unfinished;

    fn flow(status: FlowStatus) -> FlowRecord {
        FlowRecord {
            flow_id: 0,
            src: "h0".into(),
            dst: "h1".into(),
            size_bytes: 1,
            start_ns: 0.0,
            finish_ns: None,
            fct_ns: None,
            sender_finish_ns: None,
            sender_fct_ns: None,
            ideal_fct_ns: 1.0,
            slowdown: None,
            nvlink: false,
            entropy: 0,
            path: String::new(),
            uplinks: String::new(),
            status,
        }
    }

    #[test]
    fn a_flow_the_simulator_lost_fails_flows_accounted() {
        let unfinished = |why| {
            FlowStatus::Unfinished(Unfinished {
                why,
                detail: "x".into(),
            })
        };
        let named = [flow(FlowStatus::Completed), flow(unfinished(Why::GaveUp))];
        assert_eq!(
            flows_accounted(&named),
            (true, "1 flows completed, 1 unfinished with a reason".to_string())
        );
        let lost = [flow(FlowStatus::Completed), flow(unfinished(Why::Stalled))];
        let (ok, detail) = flows_accounted(&lost);
        assert!(!ok, "{detail}");
        assert!(detail.contains("1 still sending when events ran out"), "{detail}");
    }
}
