//! Buffers: headroom against what a cable delivers after XOFF, and ECN thresholds against
//! the queue at which PFC pauses (lossless) or the queue stops growing (lossy).
//!
//! Headroom follows the Cisco white paper's sum that `pfc.rs` computes; ECN before PFC is
//! DCQCN's own rule (Zhu et al., SIGCOMM 2015, section 5: the ECN thresholds must sit below
//! the PFC threshold, or PFC acts before the congestion control can); a queue's limit is the
//! dynamic threshold's steady state with one active queue (Choudhury and Hahne, ToN 1998).

use super::{Fabric, Finding, Level, Scope};
use crate::cc::CcConfig;
use crate::pfc::PfcConfig;
use crate::prio::PrioMask;
use crate::scenario::Variant;
use crate::topology::Topology;
use sim_core::{BitRate, Duration};

/// Metres of cable a propagation delay stands for (5 ns per metre).
fn metres(d: Duration) -> f64 {
    d.0 as f64 / 5_000.0
}

/// True when a congestion control slows its senders on CE marks.
fn reacts_to_ecn(cc: &CcConfig) -> bool {
    matches!(cc, CcConfig::Dcqcn(_) | CcConfig::Dctcp(_)) || cc.nscc().is_some()
}

pub fn check(
    topo: &Topology,
    fabric: &Fabric,
    used: &PrioMask,
    v: &Variant,
    s: &Scope,
    out: &mut Vec<Finding>,
) {
    headroom(topo, fabric, v, s, out);
    ecn(topo, used, v, s, out);
}

/// Ports short of headroom under one key, and the worst of them.
#[derive(Clone, Copy)]
struct Short {
    ports: usize,
    given: u64,
    needed: u64,
    rate: BitRate,
    cable: Duration,
}

/// Lossless ports whose headroom is short of what their cable delivers after XOFF.
fn headroom(topo: &Topology, fabric: &Fabric, v: &Variant, s: &Scope, out: &mut Vec<Finding>) {
    if s.pfc.priorities.is_empty() {
        return;
    }
    let cell = s.switch.mmu_params(s.pfc.mask(), None, None).cell;
    // Per key that set the headroom: ports short, and the worst of them.
    let mut short: std::collections::BTreeMap<Option<String>, Short> = Default::default();
    let mut total = 0;
    for &sw in &s.switches {
        let Some(layout) = v.resolved.buffers.get(sw) else {
            continue;
        };
        total += layout.headroom_adequate.len();
        for (i, _) in layout
            .headroom_adequate
            .iter()
            .enumerate()
            .filter(|(_, ok)| !**ok)
        {
            let Some(l) = fabric.cables[sw].get(i).map(|&l| &topo.links[l as usize]) else {
                continue;
            };
            let (rate, cable) = (l.rate, l.delay);
            let needed = PfcConfig::headroom_needed(
                rate,
                cable + s.switch.latency,
                v.max_frame(),
                s.pfc.response_time(rate),
                cell,
            );
            let (key, given) = match s.pfc.headroom_source(rate, cable) {
                Some((k, b)) => (k.map(str::to_string), b),
                None => (
                    Some("(asic)".to_string()),
                    s.switch.profile_headroom().unwrap_or(0),
                ),
            };
            let port = Short {
                ports: 0,
                given,
                needed,
                rate,
                cable,
            };
            let e = short.entry(key).or_insert(port);
            e.ports += 1;
            if needed - given > e.needed - e.given {
                *e = Short {
                    ports: e.ports,
                    ..port
                };
            }
        }
    }
    for (
        key,
        Short {
            ports: n,
            given,
            needed,
            rate,
            cable,
        },
    ) in short
    {
        let at = match key.as_deref() {
            Some("(asic)") => ("switch.asic", None),
            Some(k) => ("pfc.headroom_by_rate", Some(format!("\"{k}\""))),
            None => ("pfc.headroom", None),
        };
        let (at, sub) = (at.0, at.1);
        // A fixed headroom from the ASIC profile is not computed per cable: setting one is the
        // fix; a configured one can also be dropped for the computed, per-cable headroom.
        let or = if at == "switch.asic" {
            format!(
                "or pfc.headroom = \"{needed}B\" for every port (the ASIC profile reserves a fixed headroom, not the cable's)"
            )
        } else {
            "or leave pfc.headroom unset for the headroom each cable needs".to_string()
        };
        out.push(s.finding(
            Level::Warning,
            "headroom-short",
            (at, sub.as_deref()),
            format!(
                "{n} of the {total} ports of {} hold {given} B of headroom per lossless class where the cable can deliver {needed} B after XOFF (worst: {rate} on {:.0} m: a frame in service, the PAUSE, the cable both ways, the peer's {}-quanta response): a paused class can overflow its headroom and drop (summary.json drops_by_reason.headroom_exceeded)",
                s.who(topo),
                metres(cable),
                s.pfc.response_quanta
            ),
            format!(
                "give these ports at least {needed} B (pfc.headroom_by_rate = {{ \"{rate}/{:.0}m\" = \"{needed}B\" }}), {or}",
                metres(cable)
            ),
        ));
    }
}

/// ECN thresholds above the queue a congested class reaches: the PFC XOFF of a lone
/// lossless PG, or a lone lossy queue's limit.
fn ecn(topo: &Topology, used: &PrioMask, v: &Variant, s: &Scope, out: &mut Vec<Finding>) {
    let Some(e) = &s.switch.ecn else { return };
    let lossless = s.pfc.mask();
    let mut kinds = [false; 2]; // [lossy, lossless] classes carrying ECN-reacting data
    for p in used.iter() {
        if reacts_to_ecn(v.nic.cc_for(v.nic.transport_of(p))) {
            // The class the switches put it in is the one the MMU accounts.
            let (class, _) = super::qos::class_of(v, s, p);
            kinds[lossless.contains(class) as usize] = true;
        }
    }
    for (is_lossless, id) in [(true, "ecn-after-pfc"), (false, "ecn-above-queue-limit")] {
        if !kinds[is_lossless as usize] {
            continue;
        }
        let limit = s
            .switches
            .iter()
            .filter_map(|&i| v.resolved.buffers.get(i))
            .map(|b| b.mmu.lone_limit(is_lossless))
            .min();
        let Some(limit) = limit.filter(|&l| e.kmin.0 >= l) else {
            continue;
        };
        let (problem, fix) = if is_lossless {
            (
                format!(
                    "ECN starts marking at {} B, but a lossless class congested by one sender pauses it at {limit} B of queue on {} (its XOFF): PFC acts before any CE mark, so the congestion control slows nobody until pauses have spread upstream (DCQCN's rule: ECN below the PFC threshold)",
                    e.kmin.0,
                    s.who(topo)
                ),
                format!("lower switch.ecn.kmin (and kmax) well below {limit} B"),
            )
        } else {
            (
                format!(
                    "ECN starts marking at {} B, but a lossy queue on {} stops taking buffer at {limit} B (its dynamic threshold with the pool to itself): frames drop before any is marked",
                    e.kmin.0,
                    s.who(topo)
                ),
                format!(
                    "lower switch.ecn.kmin (and kmax) below {limit} B, or give the queues more (switch.queue_alpha)"
                ),
            )
        };
        out.push(s.finding(Level::Warning, id, ("switch.ecn", Some("kmin")), problem, fix));
    }
}
