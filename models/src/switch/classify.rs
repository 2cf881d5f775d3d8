//! What a switch does to a frame's headers on its way through, besides forwarding it: the
//! class it takes from its DSCP (SONiC's `DSCP_TO_TC_MAP`, when the switch classifies by DSCP),
//! and the INT record of a frame that carries an INT stack (INT-MD v2.1: room for the record
//! at ingress, so buffers count it; its egress fields as the frame leaves: the time, the
//! port's byte counter, the queue behind it, the line rate).

use super::{DscpClasses, Switch};
use crate::int::{IntHop, IntPool};
use crate::packet::{Kind, Packet};
use crate::port::Port;
use sim_core::Time;

impl Switch {
    /// Classify by DSCP, when this switch does: the frame takes its DSCP's class, unless the
    /// map keeps the frame's own (an unlisted DSCP when NICs tag, and PFC frames always).
    #[inline]
    pub fn classify(&self, pkt: &mut Packet) {
        if let Some(classes) = &self.dscp
            && let Some(c) = classes[pkt.dscp as usize & 63]
            && !pkt.is_link_control()
        {
            pkt.prio = c;
        }
    }

    /// Classify by DSCP with `classes` (None: the frames keep their 802.1Q class).
    pub fn set_dscp_classes(&mut self, classes: Option<DscpClasses>) {
        self.dscp = classes.map(Box::new);
    }
}

/// A data frame carrying INT entered a switch: room for the switch's record, which the frame
/// carries from here on (buffers count it). The bytes it grew by (0 without INT, or with a
/// full stack).
#[inline]
pub fn int_ingress(int: &mut IntPool, pkt: &mut Packet) -> u64 {
    if pkt.kind != Kind::Data || pkt.int_ref() == 0 {
        return 0;
    }
    let grown = int.push(pkt.int_ref());
    pkt.frame += grown as u16;
    grown as u64
}

/// A data frame carrying INT leaves switch egress `port` at `now`: the record's egress fields.
#[inline]
pub fn int_egress(int: &mut IntPool, pkt: &Packet, port: &Port, now: Time) {
    if pkt.kind == Kind::Data && pkt.int_ref() != 0 {
        let hop = IntHop {
            ts: now,
            tx_bytes: port.tx.bytes,
            qlen: port.occupancy(),
            rate: port.rate,
        };
        int.stamp(pkt.int_ref(), hop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, HostId};

    fn frame(kind: Kind, dscp: u8, prio: u8) -> Packet {
        let mut p = Packet::control(kind, FlowId(0), HostId(1), 0, 64, prio);
        p.dscp = dscp;
        p
    }

    #[test]
    fn dscp_sets_the_class_where_the_map_has_one_and_pfc_frames_keep_theirs() {
        let mut s = crate::switch::tests::one_switch();
        let mut p = frame(Kind::Data, 26, 0);
        s.classify(&mut p);
        assert_eq!(p.prio, 0, "no map: the frame keeps its class");
        let mut classes: DscpClasses = [None; 64];
        classes[26] = Some(3);
        s.set_dscp_classes(Some(classes));
        s.classify(&mut p);
        assert_eq!(p.prio, 3, "DSCP 26 (RoCEv2's) to class 3");
        let mut other = frame(Kind::Data, 10, 5);
        s.classify(&mut other);
        assert_eq!(other.prio, 5, "an unlisted DSCP keeps the tag's class");
        let mut pause = frame(Kind::Pause, 26, 7);
        s.classify(&mut pause);
        assert_eq!(pause.prio, 7, "PFC frames are not classified");
    }

    #[test]
    fn an_int_frame_grows_at_ingress_and_is_stamped_at_egress() {
        let mut pool = IntPool::default();
        let mut p = frame(Kind::Data, 0, 3);
        assert_eq!(int_ingress(&mut pool, &mut p), 0, "no INT stack: nothing");
        p.set_int_ref(pool.alloc());
        let before = p.frame;
        let grown = int_ingress(&mut pool, &mut p);
        assert_eq!((grown, p.frame - before), (20, 20), "a 20 B record");
        let port = Port::new(sim_core::BitRate::gbps(100));
        int_egress(&mut pool, &p, &port, Time(5_000));
        let hop = pool.get(p.int_ref()).hops()[0];
        assert_eq!((hop.ts, hop.rate), (Time(5_000), sim_core::BitRate::gbps(100)));
    }
}
