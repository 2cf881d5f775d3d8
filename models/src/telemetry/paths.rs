//! Where each flow's data went, for `flows.csv`: the switch egress ports its first data
//! packet took (a flow that keeps one entropy, RoCEv2's QP or UET without spraying, keeps
//! that path until a failover or a path change), and how many of its data packets left its
//! first switch by each port (a sprayed flow's uplink shares; one port for a hashed flow).
//!
//! So an ECMP collision can be read flow by flow: two flows with the same uplink in `path`
//! shared it. Memory is per flow (a few ports each), nothing per packet; a packet costs one
//! lookup at each switch and a short scan at its first.

use crate::ids::{FlowId, PortId};
use crate::packet::{Kind, Packet, flags};
use sim_core::Time;

/// Paths, per flow.
#[derive(Debug, Default)]
pub struct PathLog {
    /// Per port: true when its peer is a host (a frame arriving there is at its first switch).
    from_host: Vec<bool>,
    /// Per flow: the switch egress ports of its first data packet (PSN 0, first send), and
    /// when it was queued at each (to put together the parts of a path a run on several
    /// threads saw apart).
    first: Vec<Vec<(PortId, Time)>>,
    /// Per flow: data packets out of each egress port of its first switch.
    first_hop: Vec<Vec<(PortId, u32)>>,
}

impl PathLog {
    /// A log for `flows` flows on a fabric whose ports are `from_host[p]` when their peer is
    /// a host.
    pub fn new(from_host: Vec<bool>, flows: usize) -> PathLog {
        PathLog {
            from_host,
            first: vec![Vec::new(); flows],
            first_hop: vec![Vec::new(); flows],
        }
    }

    /// A switch queued `pkt`, which arrived on `in_port`, for egress `out`.
    #[inline]
    pub fn forwarded(&mut self, in_port: PortId, out: PortId, pkt: &Packet, now: Time) {
        if pkt.kind != Kind::Data || pkt.flow == FlowId::NONE {
            return;
        }
        let f = pkt.flow.idx();
        if pkt.seq == 0 && !pkt.has(flags::RETX) {
            if let Some(path) = self.first.get_mut(f) {
                path.push((out, now));
            }
        }
        if self.from_host.get(in_port.idx()).copied().unwrap_or(false)
            && let Some(hops) = self.first_hop.get_mut(f)
        {
            match hops.iter_mut().find(|(p, _)| *p == out) {
                Some((_, n)) => *n += 1,
                None => hops.push((out, 1)),
            }
        }
    }

    /// Flow `f`'s first data packet's egress ports at the switches, in order.
    pub fn path(&self, f: usize) -> impl Iterator<Item = PortId> + '_ {
        self.first.get(f).into_iter().flatten().map(|&(p, _)| p)
    }

    /// Add what another part of the same run logged (a run on several threads): each flow's
    /// first path in time order, its first switch's shares from the part that has them.
    pub fn absorb(&mut self, other: PathLog) {
        for (mine, theirs) in self.first.iter_mut().zip(other.first) {
            if !theirs.is_empty() {
                mine.extend(theirs);
                mine.sort_by_key(|&(_, t)| t);
            }
        }
        for (mine, theirs) in self.first_hop.iter_mut().zip(other.first_hop) {
            for (p, n) in theirs {
                match mine.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, m)) => *m += n,
                    None => mine.push((p, n)),
                }
            }
        }
    }

    /// Flow `f`'s data packets out of each egress port of its first switch, most first.
    pub fn uplinks(&self, f: usize) -> Vec<(PortId, u32)> {
        let mut v = self.first_hop.get(f).cloned().unwrap_or_default();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;

    #[test]
    fn the_first_packet_draws_the_path_and_the_first_switch_counts_every_packet() {
        let mut log = PathLog {
            from_host: vec![true, false, false, false],
            first: vec![Vec::new(); 1],
            first_hop: vec![Vec::new(); 1],
        };
        let data = |seq: u32, retx: bool| {
            Packet::data(
                FlowId(0),
                HostId(1),
                seq,
                1000,
                1064,
                7,
                3,
                if retx { flags::RETX } else { 0 },
                sim_core::Time::ZERO,
            )
        };
        // PSN 0 in at port 0 (from the host), out at 2; then at the next switch, in 1 out 3.
        log.forwarded(PortId(0), PortId(2), &data(0, false), Time::ZERO);
        log.forwarded(PortId(1), PortId(3), &data(0, false), Time::ZERO);
        // Later packets: counted at the first switch only, by their egress.
        log.forwarded(PortId(0), PortId(2), &data(1, false), Time::ZERO);
        log.forwarded(PortId(0), PortId(1), &data(2, false), Time::ZERO);
        log.forwarded(PortId(1), PortId(3), &data(2, false), Time::ZERO);
        // A resend of PSN 0 does not redraw the path.
        log.forwarded(PortId(0), PortId(1), &data(0, true), Time::ZERO);
        assert_eq!(log.path(0).collect::<Vec<_>>(), [PortId(2), PortId(3)]);
        assert_eq!(log.uplinks(0), [(PortId(1), 2), (PortId(2), 2)]);
        let ack = Packet::control(Kind::Ack, FlowId(0), HostId(0), 0, 64, 3);
        log.forwarded(PortId(0), PortId(2), &ack, Time::ZERO);
        assert_eq!(
            log.uplinks(0),
            [(PortId(1), 2), (PortId(2), 2)],
            "control frames are not data"
        );
    }
}
