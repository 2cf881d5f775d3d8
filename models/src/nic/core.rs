//! What every transport's flow has: its spec and packetization, where it sits in the NIC's
//! scheduler, pacing, the retransmission timer, its congestion control, and statistics. The
//! transport's own state is beside it in [`super::flow::Flow`].

use crate::cc::Sender;
use crate::cc::api::CongestionControl;
use crate::ids::{FlowId, PortId};
use crate::packet::Packet;
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

/// What every transport's flow has.
#[derive(Debug)]
pub struct FlowCore {
    pub spec: FlowSpec,
    /// Packets in the message: ceil(size / mtu).
    pub packets: u32,
    mtu: u32,
    /// UDP source port of the flow's packets (its ECMP entropy), per QP as NICs set it.
    pub entropy: u16,
    /// The host port this flow leaves by (set when it starts).
    pub port: PortId,
    pub sched: Sched,
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
    /// Retransmission timeouts that resent data: counted when the first resend after the
    /// timer fired leaves, so a timeout whose packets were acknowledged before the sender
    /// could resend them (a PFC pause holding its port) is not one.
    pub timeouts: u64,
    /// The retransmission timer fired and nothing has been resent since.
    pub timed_out: bool,
    /// UET: PSNs presumed lost from selective ACKs (resent without a timeout).
    pub sack_losses: u64,
    /// UET RCCC: requests to send after a credit wait.
    pub credit_requests: u64,
    /// UET: SLEEK probes sent.
    pub probes: u64,
    /// UET: PSNs a probe's ACK showed lost (resent without a timeout).
    pub probe_losses: u64,
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

impl FlowCore {
    /// Take the receiver's side from `rx` (a run on several threads: the copy of the
    /// partition its receiver is in). Drops are counted wherever they happen: the caller
    /// adds them up.
    pub fn take_receiver(&mut self, rx: &FlowCore) {
        self.finish = rx.finish;
        self.received_bytes = rx.received_bytes;
        self.out_of_sequence = rx.out_of_sequence;
        self.duplicates = rx.duplicates;
        self.ecn_marked = rx.ecn_marked;
        self.cnps_sent = rx.cnps_sent;
        self.trimmed_received = rx.trimmed_received;
    }

    /// A flow of `spec` not started yet, cut into packets of `mtu` payload bytes, its
    /// packets carrying `entropy`.
    pub fn new(spec: FlowSpec, mtu: u32, entropy: u16) -> Self {
        let packets = spec.size.div_ceil(mtu as u64) as u32;
        FlowCore {
            spec,
            packets,
            mtu,
            entropy,
            port: PortId::NONE,
            sched: Sched::Idle,
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
            timed_out: false,
            sack_losses: 0,
            credit_requests: 0,
            probes: 0,
            probe_losses: 0,
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

    /// The sender's control variable, for telemetry: DCQCN's current rate (bit/s), a window
    /// (bytes: NSCC, HPCC, Swift, DCTCP); 0 without either.
    pub fn control_value(&self) -> f64 {
        self.cc.control_value()
    }

    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// Payload of packet `seq`: a full MTU except possibly the last.
    #[inline]
    pub fn payload_of(&self, seq: u32) -> u32 {
        payload_of(self.spec.size, self.mtu, self.packets, seq)
    }

    /// Payload bytes in the packets before PSN `seq`.
    #[inline]
    pub fn bytes_before(&self, seq: u32) -> u64 {
        (seq as u64 * self.mtu as u64).min(self.spec.size)
    }

    /// Data packet `seq` of this flow (`retx`: a resend): its payload, `frame` bytes,
    /// `entropy` and flags (`LAST` added on the last packet; a resend is counted and flagged
    /// `RETX`).
    pub fn data_packet(
        &mut self,
        id: FlowId,
        (seq, retx): (u32, bool),
        entropy: u16,
        frame: u32,
        mut fl: u8,
        now: Time,
    ) -> Packet {
        let payload = self.payload_of(seq);
        if seq + 1 == self.packets {
            fl |= crate::packet::flags::LAST;
        }
        if retx {
            fl |= crate::packet::flags::RETX;
            self.retransmitted += 1;
            self.retransmitted_bytes += payload as u64;
            self.timeouts += u64::from(std::mem::take(&mut self.timed_out));
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
}

/// Packets of a message of `size` bytes at `mtu`.
pub fn packets_for(size: u64, mtu: u32) -> u32 {
    size.div_ceil(mtu as u64) as u32
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
