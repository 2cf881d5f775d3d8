//! CBFC's credit loop: an allocation per VC (`pfc.cbfc.buffer_per_vc`) short of a cable's
//! credit round trip runs that cable below line rate, at `allocation / loop` (Kung and Morris,
//! "Credit-Based Flow Control for ATM Networks", IEEE Network 1995: buffer = rate x round
//! trip), however idle the fabric is.

use super::{Finding, Level};
use crate::packet::on_wire;
use crate::scenario::Variant;
use crate::topology::Topology;

/// The loop on a cable of `rate` and one-way `delay` (a switch's pipeline latency included):
/// a frame's serialization, the cable, then its credit update waits behind at most one frame
/// in service on the way back, is serialized, and crosses the cable.
fn credit_loop(rate: sim_core::BitRate, delay: sim_core::Duration, max_frame: u32) -> sim_core::Duration {
    let frame = rate.tx_time(on_wire(max_frame));
    frame + frame + rate.tx_time(on_wire(crate::cbfc::UPDATE_FRAME)) + delay + delay
}

/// Bytes of allocation a VC on that cable needs for line rate: a frame's credits for every
/// frame time of the loop, and the frames' credits a receiver may hold back below its update
/// threshold.
pub fn needed(v: &Variant, rate: sim_core::BitRate, delay: sim_core::Duration) -> u64 {
    let c = &v.pfc.cbfc;
    let max_frame = v.max_frame();
    let loop_ = credit_loop(rate, delay + v.switch.latency, max_frame);
    let frames = loop_.0.div_ceil(rate.tx_time(on_wire(max_frame)).0.max(1));
    let per_frame = c.cost(max_frame);
    let held_back = c.cost(c.update_threshold.0 as u32).div_ceil(per_frame) - 1;
    (frames + held_back) * per_frame * c.credit.0
}

pub fn check(topo: &Topology, v: &Variant, out: &mut Vec<Finding>) {
    if !v.pfc.is_cbfc() {
        return;
    }
    let given = v.pfc.cbfc.buffer_per_vc.0;
    let worst = topo
        .links
        .iter()
        .map(|l| (needed(v, l.rate, l.delay), l))
        .filter(|(n, _)| *n > given)
        .max_by_key(|(n, _)| *n);
    let Some((need, l)) = worst else { return };
    let short = topo
        .links
        .iter()
        .filter(|k| needed(v, k.rate, k.delay) > given)
        .count();
    let loop_ = credit_loop(l.rate, l.delay + v.switch.latency, v.max_frame());
    let gbps = given as f64 * 8.0 / (loop_.0 as f64 / 1e3);
    out.push(Finding {
        level: Level::Warning,
        id: "cbfc-below-bdp",
        key: "pfc.cbfc.buffer_per_vc".into(),
        file: None,
        problem: format!(
            "{short} cable(s) have a credit loop longer than {given} B of credit covers: on the \
             worst, {} with {} of delay, the loop takes {} and a VC runs at most about {gbps:.0} \
             Gb/s (allocation / loop), never line rate",
            l.rate, l.delay, loop_
        ),
        fix: format!("buffer_per_vc = \"{need}B\" or more"),
    });
}
