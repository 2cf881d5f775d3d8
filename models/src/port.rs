//! Egress port: per-priority FIFOs and the serializer.
//!
//! Eight FIFOs, one per 802.1p priority, served in strict priority (7 highest), work
//! conserving (IEEE 802.1Q clause 8.6.8.1, strict priority transmission selection). A frame
//! occupies the wire for its length plus 20 B of preamble and inter-frame gap (IEEE 802.3
//! clause 4.4.2); a busy port holds exactly one pending event, its transmission-done.

use crate::packet::Packet;
use sim_core::{BitRate, Duration};
use std::collections::VecDeque;

pub const PRIORITIES: usize = 8;

/// Counters kept per port, named as `ethtool -S` names them where a name exists.
#[derive(Debug, Clone, Default)]
pub struct PortCounters {
    pub tx_packets: u64,
    /// Frame bytes (headers + payload, without preamble and IFG), as NICs count them.
    pub tx_bytes: u64,
    /// Packets dropped at this egress because its buffer was full.
    pub tx_drops: u64,
    /// Largest occupancy seen (waiting + in service), in frame bytes.
    pub peak_queue_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct Port {
    pub rate: BitRate,
    queues: [VecDeque<Packet>; PRIORITIES],
    /// Bit p set when `queues[p]` is non-empty.
    nonempty: u8,
    /// Frame bytes waiting plus the frame in service.
    occupancy: u64,
    in_service: Option<Packet>,
    pub counters: PortCounters,
}

impl Port {
    pub fn new(rate: BitRate) -> Self {
        Port {
            rate,
            queues: Default::default(),
            nonempty: 0,
            occupancy: 0,
            in_service: None,
            counters: PortCounters::default(),
        }
    }

    /// Frame bytes held by this port (waiting and in service).
    #[inline]
    pub fn occupancy(&self) -> u64 {
        self.occupancy
    }

    #[inline]
    pub fn is_busy(&self) -> bool {
        self.in_service.is_some()
    }

    /// True when a frame is waiting to be sent.
    #[inline]
    pub fn has_queued(&self) -> bool {
        self.nonempty != 0
    }

    /// Append `p` to the FIFO of its priority.
    #[inline]
    pub fn enqueue(&mut self, p: Packet) {
        debug_assert!((p.prio as usize) < PRIORITIES);
        self.occupancy += p.frame as u64;
        self.counters.peak_queue_bytes = self.counters.peak_queue_bytes.max(self.occupancy);
        self.nonempty |= 1 << p.prio;
        self.queues[p.prio as usize].push_back(p);
    }

    /// Take the next frame by strict priority. None if nothing is waiting.
    #[inline]
    pub fn dequeue(&mut self) -> Option<Packet> {
        if self.nonempty == 0 {
            return None;
        }
        let prio = 7 - self.nonempty.leading_zeros() as usize;
        let q = &mut self.queues[prio];
        let p = q.pop_front();
        if q.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        if let Some(p) = &p {
            self.occupancy -= p.frame as u64;
        }
        p
    }

    /// Start serializing `p`; returns how long it occupies the wire.
    /// The port must be idle.
    #[inline]
    pub fn begin_tx(&mut self, p: Packet) -> Duration {
        debug_assert!(self.in_service.is_none(), "port already transmitting");
        self.occupancy += p.frame as u64;
        self.counters.peak_queue_bytes = self.counters.peak_queue_bytes.max(self.occupancy);
        let d = self.rate.tx_time(p.wire_bytes());
        self.in_service = Some(p);
        d
    }

    /// The frame in service has left: return it for the link.
    #[inline]
    pub fn end_tx(&mut self) -> Packet {
        let p = self.in_service.take().expect("tx-done on an idle port");
        self.occupancy -= p.frame as u64;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += p.frame as u64;
        p
    }

    /// Every packet held: waiting and in service.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.queues.iter().flatten().chain(self.in_service.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::*;
    use crate::packet::{Kind, Packet};
    use sim_core::Time;

    fn pkt(seq: u32, prio: u8, frame: u32) -> Packet {
        Packet {
            sent_at: Time::ZERO,
            flow: FlowId(0),
            seq,
            src: HostId(0),
            dst: HostId(1),
            payload: 0,
            frame,
            entropy: 0,
            kind: Kind::Data,
            prio,
            flags: 0,
        }
    }

    #[test]
    fn strict_priority_then_fifo() {
        let mut port = Port::new(BitRate::gbps(100));
        port.enqueue(pkt(1, 0, 100));
        port.enqueue(pkt(2, 3, 100));
        port.enqueue(pkt(3, 0, 100));
        port.enqueue(pkt(4, 3, 100));
        let order: Vec<u32> = std::iter::from_fn(|| port.dequeue()).map(|p| p.seq).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(port.occupancy(), 0);
    }

    #[test]
    fn serialization_includes_preamble_and_ifg() {
        let mut port = Port::new(BitRate::gbps(100));
        // 4158 B frame + 20 B = 4178 B = 33424 bits = 334.24 ns at 100 Gb/s.
        let d = port.begin_tx(pkt(0, 0, 4158));
        assert_eq!(d, Duration(334_240));
        assert!(port.is_busy());
        assert_eq!(port.occupancy(), 4158);
        let p = port.end_tx();
        assert_eq!(
            (p.seq, port.counters.tx_packets, port.counters.tx_bytes),
            (0, 1, 4158)
        );
        assert_eq!(port.occupancy(), 0);
    }
}
