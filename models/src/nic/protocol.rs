//! The transport interface: what both ends of one flow do, behind one trait ([`Protocol`])
//! the run calls whatever the protocol, and what the handlers are given and return. RoCEv2's
//! RC queue pair ([`super::roce`]: go-back-N, NAK, DCQCN's notification point) and UET's
//! packet delivery context ([`super::uet`]: selective ACK, NACK of trimmed packets, RCCC's
//! credit, RUD) each implement it in their own files; [`super::transport::Proto`] holds one
//! and dispatches statically.
//!
//! The handlers act on the flow's shared state ([`FlowCore`]: its spec, statistics and
//! congestion control) and their own, and return what the NIC must send; they touch nothing
//! else, so one flow can be driven alone in a test.

use super::core::FlowCore;
use super::counters::HostCounters;
use crate::cc::dcqcn::DcqcnParams;
use crate::ids::{FlowId, HostId};
use crate::packet::Packet;
use sim_core::{Duration, Time};

/// A run's transport timer settings, resolved when it is built.
#[derive(Debug, Clone, Copy)]
pub struct Timers {
    /// RoCEv2's retransmission timeout (the QP's `timeout` attribute).
    pub rto_roce: Duration,
    /// UET's retransmission timeout (its floor).
    pub rto: Duration,
    /// UET's ceiling of a backed-off timeout.
    pub rto_max: Duration,
    /// Timeouts in a row without progress before a sender gives up.
    pub rto_retries: u32,
    /// UET's ACK coalescing timeout.
    pub ack: Duration,
    /// UET's RCCC credit-wait timeout.
    pub credit: Duration,
}

/// What a receiver knows when a data packet arrives.
#[derive(Debug)]
pub struct Rx<'a> {
    pub now: Time,
    /// The receiving host's counters.
    pub counters: &'a mut HostCounters,
    /// RoCEv2: the receiver's DCQCN notification point, where it runs.
    pub np: Option<&'a DcqcnParams>,
    /// RoCEv2: acknowledge every `ack_every` packets (and always the last).
    pub ack_every: u32,
    /// UET: acknowledge every `ack_bytes` of payload (or sooner, see `uet`).
    pub ack_bytes: u64,
    /// UET: the priority of control packets.
    pub control_prio: u8,
    /// UET: the receiver runs RCCC (it grants credit).
    pub rccc: bool,
}

/// What a receiver does with one data packet (or trimmed header).
#[derive(Debug, Default)]
pub struct DataOutcome {
    /// RoCEv2: a CNP for the sender (the packet was CE-marked and one was due).
    pub cnp: Option<Packet>,
    /// The ACK, NAK or NACK, if one is due.
    pub reply: Option<Packet>,
    /// New payload bytes delivered to the application.
    pub delivered: u64,
    /// The message's last byte arrived.
    pub completed: bool,
    /// UET RCCC: the sender wants credit (enlist it with the receiver's pacer).
    pub wants_credit: bool,
    /// UET: data is owed an ACK and no ACK timer runs: start one.
    pub arm_ack_timer: bool,
}

/// What a sender knows when an ACK, NAK or NACK arrives.
#[derive(Debug)]
pub struct Feedback<'a> {
    pub now: Time,
    /// The sending host's counters.
    pub counters: &'a mut HostCounters,
    pub timers: &'a Timers,
    /// UET: the ceiling of the loss-detection window (1.5 BDP).
    pub maxwnd: u64,
}

/// What the sender learned from feedback.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FeedbackOutcome {
    /// An acknowledgement (RoCEv2's ACK or NAK, UET's selective ACK), which the congestion
    /// control hears of once the transport has taken it; not a UET NACK.
    pub acked: bool,
    /// UET: packets presumed lost from a selective ACK (queued for a resend).
    pub lost: u64,
    /// UET: schedule the sender's probe timer then (SLEEK; `uet::probe`).
    pub probe_timer: Option<Time>,
}

/// What a retransmission timeout did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Nothing to resend (UET: nothing had been out for a timeout).
    Idle,
    /// The sender gave up: too many timeouts in a row without progress.
    GaveUp,
    /// Data goes again; `lost`: payload bytes taken out of flight (UET; RoCEv2 goes back to
    /// the last ACK and says 0).
    Resend { lost: u64 },
}

/// One transport protocol: the sender's and the receiver's state of one flow and how they
/// react. Methods with a default are one transport's mechanism that the other lacks (UET's
/// ACK timer and credit, RoCEv2's INT).
pub trait Protocol {
    // The sender: what may go, and the next packet.
    /// The transport's own window lets a packet go (congestion control and pacing aside).
    fn may_send(&self, f: &FlowCore) -> bool;
    /// Payload bytes sent and not yet acknowledged.
    fn inflight(&self, f: &FlowCore) -> u64;
    /// Payload bytes acknowledged.
    fn acked_bytes(&self, f: &FlowCore) -> u64;
    /// Payload bytes sent at least once.
    fn sent_bytes(&self, f: &FlowCore) -> u64;
    /// Data waiting to be sent (new or to resend).
    fn has_work(&self, f: &FlowCore) -> bool;
    /// Data is unacknowledged.
    fn outstanding(&self) -> bool;
    /// The next data packet (the caller checked `may_send`): its PSN, whether it is a resend,
    /// its entropy and frame.
    fn next_packet(&mut self, f: &mut FlowCore, id: FlowId, now: Time) -> Packet;
    /// The packet is about to go: what the transport adds to it (UET: the pull target, an
    /// ACK request).
    fn on_sent(&mut self, _f: &mut FlowCore, _pkt: &mut Packet, _ack_bytes: u64) {}
    /// Its data packets may carry INT, and its ACKs echo it (RoCEv2, for HPCC).
    fn carries_int(&self) -> bool {
        false
    }
    /// Path (entropy) changes between consecutive packets (UET spraying).
    fn ev_changes(&self) -> u64 {
        0
    }

    // The retransmission timer.
    /// The floor of its timeout among the run's timers.
    fn rto_base(&self, t: &Timers) -> Duration;
    /// The timeout in force: RoCEv2's fixed `base`, UET's adaptive one (at least `base`, at
    /// most `max`).
    fn rto(&self, base: Duration, max: Duration) -> Duration;
    /// When the timer should next fire.
    fn rto_due(&self, f: &FlowCore, rto: Duration) -> Time;
    /// The timer expired at `now` with data outstanding (`retries`: how many timeouts in a row
    /// without progress it may take).
    fn on_timeout(&mut self, f: &mut FlowCore, now: Time, rto: Duration, retries: u32) -> Expiry;

    // Arrivals.
    /// The receiver: a data packet (or a trimmed header) arrived.
    fn on_data(&mut self, f: &mut FlowCore, rx: &mut Rx, pkt: &Packet) -> DataOutcome;
    /// The sender: an ACK, a NAK or a NACK arrived.
    fn on_feedback(&mut self, f: &mut FlowCore, fb: &mut Feedback, pkt: &Packet) -> FeedbackOutcome;

    // UET: the receiver's ACK timer, and RCCC's credit.
    /// The receiver's ACK coalescing timer fired: the ACK owed, if any.
    fn on_ack_timer(
        &mut self,
        _f: &mut FlowCore,
        _id: FlowId,
        _c: &mut HostCounters,
        _now: Time,
        _prio: u8,
    ) -> Option<Packet> {
        None
    }
    /// The sender: a credit packet arrived.
    fn on_credit(&mut self, _f: &mut FlowCore, _pkt: &Packet, _now: Time) {}
    /// The receiver: a request to send arrived; true when the flow now wants credit.
    fn on_rts(&mut self, _pkt: &Packet) -> bool {
        false
    }
    /// The receiver's credit accounts of this flow (RCCC's pacer serves them).
    fn grants(&mut self) -> Option<&mut Grants> {
        None
    }
    /// The sender waits for credit (out of it, with data to send).
    fn credit_blocked(&self, _f: &FlowCore) -> bool {
        false
    }
    /// When a credit wait started at `since` ends (`base` doubled per request unanswered).
    fn credit_wait_ends(&self, _base: Duration, _since: Time) -> Option<Time> {
        None
    }
    /// Arm the credit-wait timer; false when it already runs.
    fn arm_credit_timer(&mut self) -> bool {
        false
    }
    /// The credit-wait timer fired.
    fn credit_timer_fired(&mut self) {}
    /// The credit wait ended with no credit: a request to send, if the sender still waits.
    fn credit_request(&mut self, _f: &mut FlowCore, _id: FlowId, _prio: u8) -> Option<Packet> {
        None
    }

    // UET: SLEEK's probes.
    /// The sender's probe timer ran at `now`: None when it stops, else when it runs next and
    /// the probe to send now, if one is due.
    fn on_probe_timer(
        &mut self,
        _f: &mut FlowCore,
        _id: FlowId,
        _now: Time,
    ) -> Option<(Time, Option<Packet>)> {
        None
    }
    /// The receiver: a probe arrived; its answer (an ACK, at priority `prio`).
    fn on_probe(&mut self, _f: &FlowCore, _c: &mut HostCounters, _pkt: &Packet, _prio: u8) -> Option<Packet> {
        None
    }
}

/// What RCCC's credit pacer (`uet::pacer`) needs of a flow: its credit accounts (None: not a
/// UET flow), its sender, and whether its last byte has arrived.
pub trait PacerFlow {
    fn grants(&mut self) -> Option<&mut Grants>;
    fn sender(&self) -> HostId;
    fn done(&self) -> bool;
}

/// RCCC, the receiver side: its credit accounts of one flow, in quanta (the credit pacer,
/// `uet::pacer`, serves them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Grants {
    /// Credit the sender has asked for in all (its cumulative pull target).
    pub want: u64,
    /// Credit granted in all.
    pub granted: u64,
    /// In its receiver's pacer list.
    pub listed: bool,
}
