//! A flow: one message from one host to another, and the transport state of both ends.
//!
//! What every transport shares lives here (packetization, the NIC scheduler's view, pacing,
//! the retransmission timer, statistics); the protocol itself is a RoCEv2 RC queue pair
//! ([`super::roce`], go-back-N) or a UET packet delivery context ([`super::uet`], selective
//! repeat with per-packet entropy).

use super::lb::EvSelector;
use super::roce::qp::RoceQp;
use super::uet::pdc::UetPdc;
use crate::cc::Sender;
use crate::cc::api::CongestionControl;
use crate::ids::{FlowId, PortId};
use crate::packet::{Packet, flags, roce_data_frame, uet_data_frame};
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

/// The protocol state of a flow.
#[derive(Debug, Clone)]
pub enum Proto {
    Roce(RoceQp),
    Uet(Box<Uet>),
}

/// A UET flow: the PDC, its load balancing and its congestion window / credits.
#[derive(Debug, Clone)]
pub struct Uet {
    pub pdc: UetPdc,
    pub ev: EvSelector,
    /// State of a small PRNG (SplitMix64) for REPS exploration.
    pub ev_rng: u64,
    /// The sender's retransmission timeout (adaptive, backed off).
    pub timer: super::uet::rto::RetxTimer,
    /// The receiver's ACK coalescing timer is scheduled.
    pub ack_timer: bool,
    /// The last data packet the receiver took: its send time, its arrival and its entropy (an
    /// ACK sent later on the timer echoes the send time shifted by the hold, as UET's ACK_CC
    /// reports the receiver's `service_time`, so the sender's round-trip sample stays true).
    pub last_data: (Time, Time, u16),
    /// RCCC: the sender's credit-wait timer is scheduled, and how often it has expired since
    /// credit last arrived (it doubles each time).
    pub credit_timer: bool,
    pub credit_waits: u32,
    /// When credit last arrived (a wait is measured from it).
    pub last_credit: Time,
    // Receiver side of RCCC.
    /// Credit the sender has asked for in all, in quanta (its cumulative pull target).
    pub want: u64,
    /// Credit granted in all, in quanta.
    pub granted: u64,
    /// In its receiver's pacer list.
    pub listed: bool,
}

impl Uet {
    pub fn new(packets: u32, ev: EvSelector, seed: u64) -> Self {
        Uet {
            pdc: UetPdc::new(packets),
            ev,
            ev_rng: seed,
            timer: Default::default(),
            ack_timer: false,
            last_data: (Time::ZERO, Time::ZERO, 0),
            credit_timer: false,
            credit_waits: 0,
            last_credit: Time::ZERO,
            want: 0,
            granted: 0,
            listed: false,
        }
    }
}

#[derive(Debug)]
pub struct Flow {
    pub spec: FlowSpec,
    /// Packets in the message: ceil(size / mtu).
    pub packets: u32,
    mtu: u32,
    /// UDP source port of the flow's packets (its ECMP entropy), per QP as NICs set it.
    pub entropy: u16,
    /// The host port this flow leaves by (set when it starts).
    pub port: PortId,
    pub sched: Sched,
    pub proto: Proto,
    /// Its congestion control (`crate::cc`), built when the flow starts: line rate until then.
    pub cc: Sender,
    /// Earliest time the rate limiter lets the next packet go.
    pub next_tx: Time,
    /// When the last data packet was sent, and its wire bytes (to re-pace after a rate change).
    pub last_tx: Time,
    pub last_wire: u64,
    pub rto_deadline: Time,
    pub rto_pending: bool,
    /// The sender gave up: its retransmission timer expired too often without progress.
    pub gave_up: bool,
    pub cc_timer_pending: bool,
    pub sender_done: Option<Time>,
    /// When the flow started (its spec's start, or later when it waited for other flows).
    pub started: Option<Time>,
    /// Completions of other flows it still waits for.
    pub waiting: u32,
    /// When the last byte reached the receiver.
    pub finish: Option<Time>,
    pub received_bytes: u64,
    // Statistics.
    pub retransmitted: u64,
    pub retransmitted_bytes: u64,
    /// Retransmission timeouts that resent data.
    pub timeouts: u64,
    /// UET: PSNs presumed lost from selective ACKs (resent without a timeout).
    pub sack_losses: u64,
    /// UET RCCC: requests to send after a credit wait.
    pub credit_requests: u64,
    pub naks_received: u64,
    pub acks_received: u64,
    pub cnp_handled: u64,
    pub cnp_ignored: u64,
    pub out_of_sequence: u64,
    pub duplicates: u64,
    pub ecn_marked: u64,
    pub cnps_sent: u64,
    pub trimmed_received: u64,
    pub dropped_packets: u32,
}

impl Flow {
    /// The sender's control variable, for telemetry: DCQCN's current rate (bit/s), a window
    /// (bytes: NSCC, HPCC, Swift, DCTCP); 0 without either.
    pub fn control_value(&self) -> f64 {
        self.cc.control_value()
    }

    pub fn new(spec: FlowSpec, mtu: u32, entropy: u16, proto: Proto) -> Self {
        let packets = spec.size.div_ceil(mtu as u64) as u32;
        Flow {
            spec,
            packets,
            mtu,
            entropy,
            port: PortId::NONE,
            sched: Sched::Idle,
            proto,
            cc: Sender::Line,
            next_tx: Time::ZERO,
            last_tx: Time::ZERO,
            last_wire: 0,
            rto_deadline: Time::ZERO,
            rto_pending: false,
            gave_up: false,
            cc_timer_pending: false,
            sender_done: None,
            started: None,
            waiting: 0,
            finish: None,
            received_bytes: 0,
            retransmitted: 0,
            retransmitted_bytes: 0,
            timeouts: 0,
            sack_losses: 0,
            credit_requests: 0,
            naks_received: 0,
            acks_received: 0,
            cnp_handled: 0,
            cnp_ignored: 0,
            out_of_sequence: 0,
            duplicates: 0,
            ecn_marked: 0,
            cnps_sent: 0,
            trimmed_received: 0,
            dropped_packets: 0,
        }
    }

    /// Packets of a message of `size` bytes at `mtu`.
    pub fn packets_for(size: u64, mtu: u32) -> u32 {
        size.div_ceil(mtu as u64) as u32
    }

    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// Payload of packet `seq`: a full MTU except possibly the last.
    #[inline]
    pub fn payload_of(&self, seq: u32) -> u32 {
        payload_of(self.spec.size, self.mtu, self.packets, seq)
    }

    /// True when the sender may send a packet now (rate limiting aside).
    #[inline]
    pub fn can_send(&self) -> bool {
        if self.gave_up {
            return false;
        }
        let transport = match &self.proto {
            Proto::Roce(q) => q.can_send(self.packets, self.mtu),
            Proto::Uet(u) => u.pdc.has_work(),
        };
        transport && self.cc.allows(self.inflight(), self.mtu as u64)
    }

    /// Payload bytes sent and not yet acknowledged.
    #[inline]
    pub fn inflight(&self) -> u64 {
        match &self.proto {
            Proto::Roce(q) => self.bytes_before(q.next_seq) - self.bytes_before(q.acked),
            Proto::Uet(u) => u.pdc.inflight,
        }
    }

    /// Payload bytes acknowledged (UET: in whole packets acknowledged).
    pub fn acked_bytes(&self) -> u64 {
        match &self.proto {
            Proto::Roce(q) => self.bytes_before(q.acked),
            Proto::Uet(u) => self.bytes_before(u.pdc.progress().0),
        }
    }

    /// Payload bytes sent at least once.
    pub fn sent_bytes(&self) -> u64 {
        match &self.proto {
            Proto::Roce(q) => self.bytes_before(q.max_sent),
            Proto::Uet(u) => self.bytes_before(u.pdc.progress().1),
        }
    }

    /// Payload bytes in the packets before PSN `seq`.
    #[inline]
    pub fn bytes_before(&self, seq: u32) -> u64 {
        (seq as u64 * self.mtu as u64).min(self.spec.size)
    }

    /// Build the next data packet. The caller checked `can_send`.
    #[inline]
    pub fn next_packet(&mut self, id: FlowId, now: Time) -> Packet {
        let (size, mtu, packets) = (self.spec.size, self.mtu, self.packets);
        let (seq, retx, entropy, frame, mut fl) = match &mut self.proto {
            Proto::Roce(q) => {
                let (seq, retx) = q.take_psn();
                (
                    seq,
                    retx,
                    self.entropy,
                    roce_data_frame(payload_of(size, mtu, packets, seq)),
                    flags::ECT,
                )
            }
            Proto::Uet(u) => {
                let (seq, retx) = u
                    .pdc
                    .take_psn(now, |p| payload_of(size, mtu, packets, p))
                    .expect("can_send checked");
                let rng = &mut u.ev_rng;
                let entropy = u.ev.choose(|| (sim_core::rng::mix64(bump(rng)) >> 48) as u16);
                let frame = uet_data_frame(payload_of(size, mtu, packets, seq));
                (seq, retx, entropy, frame, flags::ECT | flags::TRIMMABLE)
            }
        };
        let payload = self.payload_of(seq);
        if seq + 1 == self.packets {
            fl |= flags::LAST;
        }
        if retx {
            fl |= flags::RETX;
            self.retransmitted += 1;
            self.retransmitted_bytes += payload as u64;
        }
        Packet::data(
            id,
            self.spec.dst,
            seq,
            payload as u16,
            frame as u16,
            entropy,
            self.spec.prio,
            fl,
            now,
        )
    }

    /// Path (entropy) changes between consecutive packets (UET spraying).
    pub fn ev_changes(&self) -> u64 {
        match &self.proto {
            Proto::Roce(_) => 0,
            Proto::Uet(u) => u.ev.changes,
        }
    }

    /// Data waiting to be sent (new or to resend).
    pub fn has_work(&self) -> bool {
        match &self.proto {
            Proto::Roce(q) => q.next_seq < self.packets,
            Proto::Uet(u) => u.pdc.has_work(),
        }
    }

    /// True while data is unacknowledged.
    pub fn outstanding(&self) -> bool {
        match &self.proto {
            Proto::Roce(q) => q.outstanding(),
            Proto::Uet(u) => u.pdc.outstanding(),
        }
    }

    /// The retransmission timer expired at `now` with data outstanding. Returns the payload
    /// bytes presumed lost (UET: those out for `rto` or longer; RoCEv2 rewinds to the last ACK).
    pub fn on_timeout(&mut self, now: Time, rto: sim_core::Duration) -> u64 {
        let (size, mtu, packets) = (self.spec.size, self.mtu, self.packets);
        match &mut self.proto {
            Proto::Roce(q) => {
                q.on_timeout();
                0
            }
            Proto::Uet(u) => u.pdc.on_timeout(now, rto, |p| payload_of(size, mtu, packets, p)),
        }
    }

    /// The retransmission timeout in force: RoCEv2's fixed `base` (the verbs
    /// `local_ack_timeout`), UET's adaptive one (at least `base`, at most `max`).
    pub fn rto(&self, base: sim_core::Duration, max: sim_core::Duration) -> sim_core::Duration {
        match &self.proto {
            Proto::Roce(_) => base,
            Proto::Uet(u) => u.timer.rto(base, max),
        }
    }

    /// When the retransmission timer should next fire: RoCEv2 `rto` after the last progress
    /// (`rto_deadline`), UET `rto` after the oldest packet still in flight was sent.
    pub fn rto_due(&self, rto: sim_core::Duration) -> Time {
        match &self.proto {
            Proto::Roce(_) => self.rto_deadline,
            Proto::Uet(u) => u.pdc.oldest_in_flight().map_or(self.rto_deadline, |t| t + rto),
        }
    }
}

fn bump(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    *state
}

/// Payload of packet `seq` of a message of `size` bytes cut into `packets` of `mtu`.
#[inline]
pub fn payload_of(size: u64, mtu: u32, packets: u32, seq: u32) -> u32 {
    if seq + 1 < packets {
        mtu
    } else {
        (size - (packets as u64 - 1) * mtu as u64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;

    #[test]
    fn message_is_cut_into_mtu_packets_with_a_short_last() {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: 2500,
            start: Time::ZERO,
            prio: 3,
            deps: crate::workload::Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        let mut f = Flow::new(spec, 1000, 7, Proto::Roce(RoceQp::new(None)));
        assert_eq!(f.packets, 3);
        let p: Vec<Packet> = (0..3).map(|_| f.next_packet(FlowId(0), Time::ZERO)).collect();
        assert_eq!(
            p.iter().map(|p| p.payload).collect::<Vec<_>>(),
            vec![1000, 1000, 500]
        );
        assert_eq!(p[0].frame as u32, 1000 + 62);
        assert!(p[2].is_last() && !p[1].is_last());
        assert!(!f.can_send());
    }
}
