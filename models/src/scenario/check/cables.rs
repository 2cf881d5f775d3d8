//! Cables: ends that cannot agree. A cable whose two ends run different FEC modes never
//! comes up (802.3 clause 91.5.3.1: the receiver cannot lock onto codeword markers the other
//! end does not send, and a port without FEC sees them as errors), so the run routes around it
//! or, for a host's only cable, cannot deliver at all: the homelab classic of a 100G switch
//! port left at its default FEC against a NIC set to another.

use super::{Finding, Level};
use crate::topology::Topology;

pub fn check(topo: &Topology, out: &mut Vec<Finding>) {
    let down = topo.links.iter().filter(|l| !l.up).count();
    for m in &topo.fec_mismatches {
        out.push(Finding {
            level: Level::Warning,
            id: "fec-mismatch",
            key: m.key.clone(),
            file: None,
            problem: format!(
                "one end runs FEC {} and the other {}: these cables never come up ({down} \
                 cable{} down for the whole run); traffic routes around them, and a host whose \
                 only cable it is cannot send or receive",
                m.ends[0].name(),
                m.ends[1].name(),
                if down == 1 { "" } else { "s" },
            ),
            fix: format!(
                "set both ends to the same mode: fec = \"{}\" (what the port's speed needs: \
                 rs-528 at 25G and 100G NRZ, rs-544 at 50G and up on PAM4 lanes)",
                if m.ends[0] == crate::fec::Fec::None {
                    m.ends[1].name()
                } else {
                    m.ends[0].name()
                }
            ),
        });
    }
}
