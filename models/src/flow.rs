//! Per-flow transport state: the sender that packetizes a message and the receiver that
//! acknowledges it.
//!
//! This is the transport's skeleton: packets carry a sequence number (the RoCEv2 PSN), the
//! receiver accepts them in order and returns cumulative ACKs (the next expected PSN, as an
//! RC responder does; IBA 9.7.5.1), coalesced every `ack_every` packets and on the last.
//! Loss recovery and congestion control hook in here (`on_ack`, and the sender's choice of
//! what to send next); without them a lost packet leaves the flow unfinished, and the run
//! reports it so.

use crate::ids::{FlowId, PortId};
use crate::packet::{Kind, Packet, flags, roce_ack_frame, roce_data_frame};
use crate::workload::FlowSpec;
use sim_core::Time;

#[derive(Debug, Clone)]
pub struct Flow {
    pub spec: FlowSpec,
    /// Packets in the message: ceil(size / mtu).
    pub packets: u32,
    mtu: u32,
    /// UDP source port of the flow's packets (ECMP entropy), per QP as NICs set it.
    pub entropy: u16,
    /// The host port this flow leaves by (set when it starts).
    pub port: PortId,
    // Sender.
    pub next_seq: u32,
    /// Cumulative ACK received: packets below it are acknowledged.
    pub acked: u32,
    pub sender_done: Option<Time>,
    // Receiver.
    pub expected: u32,
    pub received_bytes: u64,
    since_ack: u32,
    pub out_of_sequence: u64,
    pub duplicates: u64,
    /// When the last byte reached the receiver.
    pub finish: Option<Time>,
    // Accounting.
    pub dropped_packets: u32,
}

impl Flow {
    pub fn new(spec: FlowSpec, mtu: u32, entropy: u16) -> Self {
        let packets = spec.size.div_ceil(mtu as u64) as u32;
        Flow {
            spec,
            packets,
            mtu,
            entropy,
            port: PortId(u32::MAX),
            next_seq: 0,
            acked: 0,
            sender_done: None,
            expected: 0,
            received_bytes: 0,
            since_ack: 0,
            out_of_sequence: 0,
            duplicates: 0,
            finish: None,
            dropped_packets: 0,
        }
    }

    /// Payload of packet `seq`: a full MTU except possibly the last.
    #[inline]
    pub fn payload_of(&self, seq: u32) -> u32 {
        if seq + 1 < self.packets {
            self.mtu
        } else {
            (self.spec.size - (self.packets as u64 - 1) * self.mtu as u64) as u32
        }
    }

    #[inline]
    pub fn has_more(&self) -> bool {
        self.next_seq < self.packets
    }

    /// Build the next data packet.
    #[inline]
    pub fn next_packet(&mut self, id: FlowId, now: Time) -> Packet {
        let seq = self.next_seq;
        self.next_seq += 1;
        let payload = self.payload_of(seq);
        Packet {
            sent_at: now,
            flow: id,
            seq,
            src: self.spec.src,
            dst: self.spec.dst,
            payload,
            frame: roce_data_frame(payload),
            entropy: self.entropy,
            kind: Kind::Data,
            prio: self.spec.prio,
            flags: if seq + 1 == self.packets { flags::LAST } else { 0 },
        }
    }

    /// A data packet reached the receiver. Returns the ACK to send back, if one is due.
    #[inline]
    pub fn receive(&mut self, now: Time, p: &Packet, ack_every: u32) -> Option<Packet> {
        if p.seq == self.expected {
            self.expected += 1;
            self.received_bytes += p.payload as u64;
            self.since_ack += 1;
            if self.expected == self.packets {
                self.finish = Some(now);
            }
        } else if p.seq > self.expected {
            self.out_of_sequence += 1;
            return None;
        } else {
            self.duplicates += 1;
        }
        if self.since_ack >= ack_every || p.is_last() || p.seq < self.expected - 1 {
            self.since_ack = 0;
            Some(Packet {
                sent_at: p.sent_at,
                flow: p.flow,
                seq: self.expected,
                src: p.dst,
                dst: p.src,
                payload: 0,
                frame: roce_ack_frame(),
                entropy: p.entropy,
                kind: Kind::Ack,
                prio: p.prio,
                flags: 0,
            })
        } else {
            None
        }
    }

    /// An ACK reached the sender.
    #[inline]
    pub fn on_ack(&mut self, now: Time, p: &Packet) {
        if p.seq > self.acked {
            self.acked = p.seq;
            if self.acked == self.packets {
                self.sender_done = Some(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;

    fn flow(size: u64) -> Flow {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size,
            start: Time::ZERO,
            prio: 3,
        };
        Flow::new(spec, 1000, 7)
    }

    #[test]
    fn message_is_cut_into_mtu_packets_with_a_short_last() {
        let mut f = flow(2500);
        assert_eq!(f.packets, 3);
        let p: Vec<Packet> = (0..3).map(|_| f.next_packet(FlowId(0), Time::ZERO)).collect();
        assert_eq!(
            p.iter().map(|p| p.payload).collect::<Vec<_>>(),
            vec![1000, 1000, 500]
        );
        assert!(p[2].is_last() && !p[1].is_last());
        assert!(!f.has_more());
    }

    #[test]
    fn receiver_acks_cumulatively_and_discards_out_of_order() {
        let mut tx = flow(3000);
        let mut rx = flow(3000);
        let p: Vec<Packet> = (0..3).map(|_| tx.next_packet(FlowId(0), Time::ZERO)).collect();
        assert_eq!(
            rx.receive(Time(1), &p[0], 2),
            None,
            "coalesced: no ACK after one packet"
        );
        assert_eq!(rx.receive(Time(2), &p[2], 2), None, "gap: discarded");
        assert_eq!(rx.out_of_sequence, 1);
        let ack = rx
            .receive(Time(3), &p[1], 2)
            .expect("second in-order packet is acked");
        assert_eq!((ack.seq, ack.kind, ack.dst), (2, Kind::Ack, HostId(0)));
        let ack = rx
            .receive(Time(4), &p[2], 2)
            .expect("last packet is always acked");
        assert_eq!(ack.seq, 3);
        assert_eq!((rx.finish, rx.received_bytes), (Some(Time(4)), 3000));
        tx.on_ack(Time(5), &ack);
        assert_eq!(tx.sender_done, Some(Time(5)));
    }
}
