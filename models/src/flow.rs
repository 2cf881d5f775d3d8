//! A flow: one RDMA message on a RoCEv2 reliable-connected (RC) queue pair, sender and
//! receiver side.
//!
//! Go-back-N reliability as an RC QP implements it (IBA 1.4, sections 9.7.5 responder and
//! 9.7.6 requester; NVIDIA ConnectX): packets carry a PSN; the responder accepts only the
//! expected PSN, acknowledges cumulatively (coalesced every `ack_every` packets, and always the
//! last), and on a gap sends one NAK "PSN sequence error" carrying the PSN it expects, then
//! discards out-of-order packets silently until that PSN arrives. The requester rewinds to the
//! NAKed PSN and resends everything from there; a retransmission timer (`local_ack_timeout`,
//! 4.096 us x 2^n, IBA 9.7.6.1.3) recovers a lost tail or a lost NAK.
//!
//! Congestion control (DCQCN) plugs in through `rate` and the `rp`/`np` state the NIC drives.

use crate::cc::dcqcn::{NotificationPoint, ReactionPoint};
use crate::ids::{FlowId, PortId};
use crate::packet::{Charge, Kind, Packet, flags, roce_ack_frame, roce_data_frame};
use crate::workload::FlowSpec;
use sim_core::Time;

/// Where a flow sits in its NIC's scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sched {
    /// Nothing it may send now (all sent, or window full).
    Idle,
    /// In its port's round-robin list.
    Ready,
    /// Rate-limited until its next transmit time.
    Sleeping,
}

/// What the responder answers to a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    None,
    Ack(u32),
    Nak(u32),
}

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
    pub sched: Sched,
    // Requester.
    pub next_seq: u32,
    /// Highest PSN sent + 1 (anything below it sent again is a retransmission).
    pub max_sent: u32,
    /// Cumulative ACK: packets below it are acknowledged.
    pub acked: u32,
    /// Unacknowledged-bytes window (None: unlimited).
    pub window: Option<u64>,
    /// Earliest time the rate limiter lets the next packet go.
    pub next_tx: Time,
    /// When the last data packet was sent, and its wire bytes (to re-pace after a rate change).
    pub last_tx: Time,
    pub last_wire: u64,
    pub rto_deadline: Time,
    pub rto_pending: bool,
    pub cc_timer_pending: bool,
    pub rp: Option<ReactionPoint>,
    pub sender_done: Option<Time>,
    pub retransmitted: u64,
    pub timeouts: u64,
    pub naks_received: u64,
    pub cnp_handled: u64,
    pub cnp_ignored: u64,
    // Responder.
    pub expected: u32,
    pub received_bytes: u64,
    since_ack: u32,
    nak_outstanding: bool,
    pub np: NotificationPoint,
    pub out_of_sequence: u64,
    pub duplicates: u64,
    pub ecn_marked: u64,
    pub cnps_sent: u64,
    /// When the last byte reached the receiver.
    pub finish: Option<Time>,
    // Accounting.
    pub dropped_packets: u32,
}

impl Flow {
    pub fn new(spec: FlowSpec, mtu: u32, entropy: u16, window: Option<u64>) -> Self {
        let packets = spec.size.div_ceil(mtu as u64) as u32;
        Flow {
            spec,
            packets,
            mtu,
            entropy,
            port: PortId(u32::MAX),
            sched: Sched::Idle,
            next_seq: 0,
            max_sent: 0,
            acked: 0,
            window,
            next_tx: Time::ZERO,
            last_tx: Time::ZERO,
            last_wire: 0,
            rto_deadline: Time::ZERO,
            rto_pending: false,
            cc_timer_pending: false,
            rp: None,
            sender_done: None,
            retransmitted: 0,
            timeouts: 0,
            naks_received: 0,
            cnp_handled: 0,
            cnp_ignored: 0,
            expected: 0,
            received_bytes: 0,
            since_ack: 0,
            nak_outstanding: false,
            np: NotificationPoint::default(),
            out_of_sequence: 0,
            duplicates: 0,
            ecn_marked: 0,
            cnps_sent: 0,
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

    /// True when the requester may send a packet now (rate limiting aside).
    #[inline]
    pub fn can_send(&self) -> bool {
        if self.next_seq >= self.packets {
            return false;
        }
        match self.window {
            None => true,
            Some(w) => (self.next_seq - self.acked) as u64 * (self.mtu as u64) < w,
        }
    }

    /// Build the next data packet (ECN-capable: RoCEv2 NICs send ECT(0) when ECN is on).
    #[inline]
    pub fn next_packet(&mut self, id: FlowId, now: Time) -> Packet {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut fl = flags::ECT;
        if seq + 1 == self.packets {
            fl |= flags::LAST;
        }
        if seq < self.max_sent {
            self.retransmitted += 1;
            fl |= flags::RETX;
        }
        self.max_sent = self.max_sent.max(self.next_seq);
        let payload = self.payload_of(seq);
        Packet {
            sent_at: now,
            flow: id,
            seq,
            src: self.spec.src,
            dst: self.spec.dst,
            in_port: 0,
            payload: payload as u16,
            frame: roce_data_frame(payload) as u16,
            entropy: self.entropy,
            kind: Kind::Data,
            prio: self.spec.prio,
            flags: fl,
            charge: Charge::None,
        }
    }

    /// The responder's handling of a data packet (go-back-N).
    #[inline]
    pub fn receive(&mut self, now: Time, p: &Packet, ack_every: u32) -> Response {
        if p.seq == self.expected {
            self.expected += 1;
            self.nak_outstanding = false;
            self.received_bytes += p.payload as u64;
            self.since_ack += 1;
            if self.expected == self.packets {
                self.finish = Some(now);
            }
            if self.since_ack >= ack_every || p.is_last() {
                self.since_ack = 0;
                return Response::Ack(self.expected);
            }
            Response::None
        } else if p.seq > self.expected {
            self.out_of_sequence += 1;
            if self.nak_outstanding {
                return Response::None;
            }
            self.nak_outstanding = true;
            Response::Nak(self.expected)
        } else {
            // A duplicate (the requester rewound further than needed): re-acknowledge.
            self.duplicates += 1;
            Response::Ack(self.expected)
        }
    }

    /// An ACK or NAK for `psn` reached the requester. Returns true when it made progress.
    #[inline]
    pub fn on_ack(&mut self, now: Time, psn: u32, nak: bool) -> bool {
        if nak {
            self.naks_received += 1;
        }
        let progress = psn > self.acked;
        if progress {
            self.acked = psn;
            if self.acked == self.packets {
                self.sender_done = Some(now);
            }
        }
        if nak && psn >= self.acked && psn < self.next_seq {
            self.next_seq = psn; // go back N
        }
        if self.next_seq < self.acked {
            self.next_seq = self.acked;
        }
        progress
    }

    /// The retransmission timer expired with data outstanding: rewind to the last ACK.
    pub fn on_timeout(&mut self) {
        self.timeouts += 1;
        self.next_seq = self.acked;
    }

    /// True while data is unacknowledged.
    pub fn outstanding(&self) -> bool {
        self.acked < self.next_seq
    }

    /// The ACK/NAK packet for a response.
    pub fn response_packet(&self, data: &Packet, psn: u32, nak: bool) -> Packet {
        let mut p = Packet::control(
            if nak { Kind::Nak } else { Kind::Ack },
            data.flow,
            data.dst,
            data.src,
            psn,
            roce_ack_frame(),
            data.prio,
        );
        p.sent_at = data.sent_at;
        p.entropy = data.entropy;
        p
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
        Flow::new(spec, 1000, 7, None)
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
        assert!(!f.can_send());
    }

    #[test]
    fn responder_acks_cumulatively_and_naks_a_gap_once() {
        let mut tx = flow(4000);
        let mut rx = flow(4000);
        let p: Vec<Packet> = (0..4).map(|_| tx.next_packet(FlowId(0), Time::ZERO)).collect();
        assert_eq!(rx.receive(Time(1), &p[0], 2), Response::None, "coalesced");
        assert_eq!(
            rx.receive(Time(2), &p[2], 2),
            Response::Nak(1),
            "gap: NAK the expected PSN"
        );
        assert_eq!(rx.receive(Time(3), &p[3], 2), Response::None, "one NAK per gap");
        assert_eq!(rx.out_of_sequence, 2);
        // The requester goes back to PSN 1 and resends 1, 2, 3.
        assert!(tx.on_ack(Time(4), 1, true));
        assert_eq!(tx.next_seq, 1);
        let again: Vec<Packet> = (0..3).map(|_| tx.next_packet(FlowId(0), Time(5))).collect();
        assert_eq!(tx.retransmitted, 3);
        assert_eq!(rx.receive(Time(6), &again[0], 2), Response::Ack(2));
        assert_eq!(rx.receive(Time(7), &again[1], 2), Response::None);
        assert_eq!(
            rx.receive(Time(8), &again[2], 2),
            Response::Ack(4),
            "last is always acked"
        );
        assert_eq!((rx.finish, rx.received_bytes), (Some(Time(8)), 4000));
        tx.on_ack(Time(9), 4, false);
        assert_eq!(tx.sender_done, Some(Time(9)));
    }

    #[test]
    fn window_limits_unacknowledged_bytes() {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: 10_000,
            start: Time::ZERO,
            prio: 3,
        };
        let mut f = Flow::new(spec, 1000, 0, Some(3000));
        for _ in 0..3 {
            assert!(f.can_send());
            f.next_packet(FlowId(0), Time::ZERO);
        }
        assert!(!f.can_send());
        f.on_ack(Time(1), 1, false);
        assert!(f.can_send());
    }

    #[test]
    fn timeout_rewinds_to_the_last_ack() {
        let mut f = flow(5000);
        for _ in 0..5 {
            f.next_packet(FlowId(0), Time::ZERO);
        }
        f.on_ack(Time(1), 2, false);
        f.on_timeout();
        assert_eq!((f.next_seq, f.timeouts), (2, 1));
    }
}
