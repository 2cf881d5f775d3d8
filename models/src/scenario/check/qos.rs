//! Classes: where each flow's data lands at the switches, against the PFC priorities and
//! the ECN marking its congestion control needs.
//!
//! The mistakes behind most RoCEv2 outages are a class mismatch between the NICs and the
//! switches: NVIDIA's "RoCE configuration" guides for ConnectX and for SONiC (DSCP 26 to the
//! lossless switch priority 3, CNPs on DSCP 48 / priority 6) and Microsoft's RDMA-at-scale
//! experience (Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM 2016, section 3:
//! DSCP-based PFC, and why the priority must survive the path) set both ends together; a
//! switch that puts the NICs' DSCP in a class without PFC runs RoCEv2 lossy. DCQCN needs the
//! switches to mark ECN (Zhu et al., SIGCOMM 2015, section 3: the congestion point).

use super::{Finding, Level, Scope};
use crate::cc::CcConfig;
use crate::nic::{Transport, Trust};
use crate::packet::dscp_of;
use crate::prio::PrioMask;
use crate::scenario::Variant;
use crate::topology::Topology;
use crate::workload::FlowSpec;

/// The priorities data is sent at over the fabric (flows between NICs of one server take
/// NVLink, not the switches).
pub fn data_priorities(topo: &Topology, flows: &[FlowSpec]) -> PrioMask {
    let mut m = PrioMask::EMPTY;
    for f in flows.iter().filter(|f| !topo.same_server(f.src, f.dst)) {
        m.insert(f.prio);
    }
    m
}

/// The class a scope's switches give data sent at `prio`, and the key that decides it:
/// `switch.dscp_to_tc` (an entry for its DSCP), `nic.trust` (untagged, classified by DSCP
/// >> 3 for want of a map) or the 802.1Q tag itself (`pfc.priorities` is then the key).
pub(super) fn class_of(v: &Variant, s: &Scope, prio: u8) -> (u8, &'static str) {
    let untagged = v.nic.trust == Trust::Dscp;
    let dscp = dscp_of(prio);
    let classes = s.switch.dscp_classes(untagged).ok().flatten();
    match classes.and_then(|m| m[dscp as usize]) {
        Some(c) if s.switch.dscp_to_tc.is_some() => (c, "switch.dscp_to_tc"),
        Some(c) => (c, "nic.trust"),
        None => (prio, "pfc.priorities"),
    }
}

/// RoCEv2 in a lossy class while PFC is on; PFC on a class nothing uses.
pub fn check(topo: &Topology, used: &PrioMask, v: &Variant, s: &Scope, out: &mut Vec<Finding>) {
    let lossless = s.pfc.mask();
    if lossless.is_empty() {
        return;
    }
    let list = |m: PrioMask| m.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ");
    let mut carried = PrioMask::EMPTY;
    let mut lossy_roce = false;
    for p in used.iter() {
        let (c, key) = class_of(v, s, p);
        carried.insert(c);
        if v.nic.transport_of(p) != Transport::Roce || lossless.contains(c) {
            continue;
        }
        lossy_roce = true;
        let dscp = dscp_of(p);
        let target = if lossless.contains(p) {
            p
        } else {
            lossless.iter().next().unwrap_or(p)
        };
        let problem = format!(
            "RoCEv2 data sent at priority {p} (DSCP {dscp}) is put in class {c} by {}, and PFC protects class {} only: this traffic runs lossy. Under congestion its frames are dropped and resent go-back-N instead of paused; pause counters and headroom stay idle",
            s.who(topo),
            list(lossless)
        );
        let (at, fix) = match key {
            "switch.dscp_to_tc" => {
                let (json, file) = s.locate("switch.dscp_to_tc", Some(&dscp.to_string()));
                let sonic = match file {
                    Some(_) => format!(
                        " (in the SONiC file: \"{dscp}\": \"{target}\" under {})",
                        json.rsplit_once('.').map_or(json.as_str(), |(m, _)| m)
                    ),
                    None => String::new(),
                };
                (
                    Some(dscp.to_string()),
                    format!(
                        "map DSCP {dscp} to a lossless class, as NVIDIA's RoCE configuration for SONiC does: switch.dscp_to_tc = {{ \"{dscp}\" = {target} }}{sonic}"
                    ),
                )
            }
            "nic.trust" => (
                None,
                format!(
                    "with nic.trust = \"dscp\" and no switch.dscp_to_tc the switches classify by DSCP >> 3; map DSCP {dscp} to class {target} (switch.dscp_to_tc = {{ \"{dscp}\" = {target} }}) or send at priority {target}"
                ),
            ),
            _ => (
                None,
                format!(
                    "add {c} to pfc.priorities, or send the flows at a lossless priority (the workload's prio = {target})"
                ),
            ),
        };
        out.push(s.finding(
            Level::Warning,
            "roce-lossy-class",
            (key, at.as_deref()),
            problem,
            fix,
        ));
    }
    if lossy_roce || s.switch.headroom_pool.is_some() || s.switch.shared_pool.is_some() {
        // The root cause is already said; with a shared headroom pool an idle class
        // reserves nothing, and a shared pool given as such (SONiC's) loses nothing to it.
        return;
    }
    for q in lossless.iter().filter(|&q| !carried.contains(q)) {
        let reserved: u64 = s
            .switches
            .iter()
            .filter_map(|&i| v.resolved.buffers.get(i))
            .map(|b| b.mmu.headroom_bytes())
            .max()
            .unwrap_or(0);
        out.push(s.finding(
            Level::Warning,
            "pfc-idle-priority",
            ("pfc.priorities", None),
            format!(
                "PFC is on priority {q}, which no flow's data travels in at {}: each of them reserves headroom for it ({reserved} B on the busiest switch), taken from the shared pool every other class uses",
                s.who(topo)
            ),
            format!(
                "drop {q} from pfc.priorities, or send traffic at it; a shared headroom pool (switch.headroom_pool) reserves nothing per class"
            ),
        ));
    }
}

/// DCQCN (or DCTCP) on the fabric with no switch marking ECN and no `nic.ce_share`.
pub fn check_ecn_marking(v: &Variant, scopes: &[Scope], out: &mut Vec<Finding>) {
    if scopes.is_empty() || v.nic.ce_share.is_some() || scopes.iter().any(|s| s.switch.ecn.is_some()) {
        return;
    }
    for t in [Transport::Roce, Transport::Uet] {
        if !v.nic.uses(t) {
            continue;
        }
        let name = match v.nic.cc_for(t) {
            CcConfig::Dcqcn(_) => "DCQCN",
            CcConfig::Dctcp(_) => "DCTCP",
            _ => continue,
        };
        out.push(Finding {
            level: Level::Warning,
            id: "dcqcn-without-ecn",
            key: "switch.ecn".into(),
            file: None,
            problem: format!(
                "{name} slows a sender only on CE marks, and no switch marks ECN (switch.ecn is unset everywhere, nic.ce_share too): its senders stay at line rate; only PFC pauses or drops limit the queues"
            ),
            fix: "set switch.ecn, e.g. the DCQCN paper's { kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01 } at 40G (Zhu et al., SIGCOMM 2015), or pick a congestion control that reads delay (nic.cc = { kind = \"swift\" })".into(),
        });
    }
}
