//! The congestion-control interface every scheme implements: DCQCN's reaction point
//! ([`super::dcqcn`]), NSCC ([`super::nscc`]), RCCC's credit ([`super::rccc`]), HPCC
//! ([`super::hpcc`]), Swift ([`super::swift`]), the worked example DCTCP ([`super::dctcp`])
//! and line rate ([`super::sender::Line`]). A flow holds one [`super::Sender`], built when it
//! starts ([`super::Senders::build`]), and its transport asks it and tells it, on one path
//! whatever the scheme:
//!
//! - before every packet: [`allows`](CongestionControl::allows) (the window or the credit),
//!   and the pace [`rate`](CongestionControl::rate) (the port's line rate caps it);
//! - as a packet leaves: [`on_sent`](CongestionControl::on_sent) (DCQCN's byte counter,
//!   RCCC's credit), then, on UET, [`pull_target`](CongestionControl::pull_target) and
//!   [`asks_ack`](CongestionControl::asks_ack);
//! - on feedback:
//!
//! | event | when | RoCEv2 | UET |
//! |---|---|---|---|
//! | [`on_sack`](CongestionControl::on_sack) | a selective ACK, before loss detection reads [`loss_window`](CongestionControl::loss_window) | - | yes (NSCC, RCCC) |
//! | [`on_ack`](CongestionControl::on_ack) | an ACK, once the transport has taken it | cumulative ACK | selective ACK |
//! | [`on_nack`](CongestionControl::on_nack) | the receiver saw a gap | NAK (go back N) | - |
//! | [`on_trim`](CongestionControl::on_trim) | a switch trimmed a packet | - | NACK of a trim |
//! | [`on_cnp`](CongestionControl::on_cnp) | a CNP arrived (the receiver runs DCQCN's NP) | yes | - |
//! | [`on_credit`](CongestionControl::on_credit) | the receiver granted credit | - | yes (RCCC) |
//! | [`on_timeout`](CongestionControl::on_timeout) | the retransmission timer expired | yes | yes |
//! | [`on_timer`](CongestionControl::on_timer) | the time [`timer_due`](CongestionControl::timer_due) asked for came | yes | yes |
//!
//! Each [`Ack`] carries the bytes it newly acknowledged, the round-trip sample from the
//! NIC's timestamps (the ACK echoes the data packet's transmit time; a UET receiver that held
//! its ACK subtracts the hold, as UET's ACK_CC reports its service time), the ECN echo, and
//! the INT hop records of the acknowledged packet when the scheme asks for them
//! ([`CongestionControl::wants_int`]; the switches then stamp it, see [`crate::int`]).
//!
//! To add a scheme: write a file in `models/src/cc/` with a config struct and a type that
//! implements this trait, add `pub mod` for it and one variant and one line of
//! [`super::CcConfig::build`] in `cc/mod.rs`; `nic.cc = { kind = "<its name>" }` selects it.
//! `docs/congestion-control.md` walks through DCTCP this way.

use crate::int::IntHop;
use sim_core::{BitRate, Duration, Time};

/// What a flow's scheme may know when it is built.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// The sender's port rate.
    pub line_rate: BitRate,
    /// Unloaded round trip of this flow's path (full data frame out, ACK back, at every hop).
    pub base_rtt: Duration,
    /// Unloaded round trip of the longest path any flow takes (HPCC's global T).
    pub network_rtt: Duration,
    /// Payload bytes of a full packet.
    pub mtu: u32,
    /// Switches on the flow's path.
    pub hops: u32,
    /// Bytes in the message.
    pub size: u64,
}

impl Ctx {
    /// Bytes the line rate carries in the path's base RTT.
    pub fn bdp(&self) -> u64 {
        self.line_rate.bytes_in(self.base_rtt)
    }
}

/// One acknowledgement, as the sender's NIC sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ack<'a> {
    pub now: Time,
    /// Payload bytes this ACK acknowledged for the first time.
    pub newly_acked: u64,
    /// Payload bytes acknowledged so far (cumulative).
    pub acked: u64,
    /// Payload bytes sent so far (the next byte to send, as a sequence number).
    pub sent: u64,
    /// Payload bytes in flight after this ACK.
    pub inflight: u64,
    /// Round trip of the acknowledged packet: the ACK's arrival minus the data's transmit
    /// time, less any hold at the receiver.
    pub rtt: Duration,
    /// The acknowledged data (or, coalesced, some of it) was CE-marked.
    pub ecn: bool,
    /// INT hop records of the acknowledged packet, first switch first (empty unless the
    /// scheme asked for INT).
    pub int: &'a [IntHop],
}

/// A selective ACK as UET's sender takes it, before it looks for losses (NSCC's input,
/// uet-htsim `processAck`).
#[derive(Debug, Clone, Copy)]
pub struct SackFeedback {
    pub now: Time,
    /// Payload bytes the SACK acknowledged for the first time (in or out of order).
    pub newly_acked: u64,
    /// The ACK's arrival minus the acknowledged packet's transmit time.
    pub rtt: Duration,
    pub ecn: bool,
    /// Payload bytes in flight after it.
    pub inflight: u64,
    /// It answers a loss probe: `rtt` is the probe's round trip, a header's, not a packet's.
    pub probe: bool,
}

/// A NACK of a trimmed packet, as UET's sender takes it.
#[derive(Debug, Clone, Copy)]
pub struct Trim {
    pub now: Time,
    /// Payload bytes of the trimmed packet.
    pub bytes: u64,
    /// The trim was at the last hop (the receiver's link: credit's business under RCCC).
    pub last_hop: bool,
    /// The NACK queued a resend (a second NACK of one packet does not).
    pub requeued: bool,
    /// Payload bytes in flight after it.
    pub inflight: u64,
}

/// What a CNP did to a DCQCN reaction point: a rate cut, or nothing within the monitor
/// period (`rp_cnp_handled`, `rp_cnp_ignored`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CnpOutcome {
    Handled,
    Ignored,
}

/// A sender-side congestion-control scheme for one flow.
pub trait CongestionControl: std::fmt::Debug + Send {
    /// An ACK arrived and the transport has taken it.
    fn on_ack(&mut self, ack: &Ack);
    /// UET: a selective ACK, before the sender looks for losses.
    fn on_sack(&mut self, _s: &SackFeedback) {}
    /// RoCEv2: a NAK (PSN sequence error) arrived; `now`.
    fn on_nack(&mut self, _now: Time) {}
    /// UET: a switch trimmed one of the flow's packets (its NACK came back).
    fn on_trim(&mut self, _t: &Trim) {}
    /// A CNP arrived for this flow's QP: what it did, for a scheme that reacts to CNPs by
    /// DCQCN's rules (None: not counted as handled or ignored).
    fn on_cnp(&mut self, _now: Time) -> Option<CnpOutcome> {
        None
    }
    /// The retransmission timer expired with data outstanding; it took `lost` payload bytes
    /// out of flight (UET; RoCEv2 goes back to the last ACK and says 0).
    fn on_timeout(&mut self, _now: Time, _lost: u64) {}
    /// The time [`Self::timer_due`] returned has come.
    fn on_timer(&mut self, _now: Time) {}
    /// When the scheme wants [`Self::on_timer`] next (None: never).
    fn timer_due(&self) -> Option<Time> {
        None
    }
    /// A data packet of `wire` bytes left (DCQCN's byte counter, RCCC's credit).
    fn on_sent(&mut self, _now: Time, _wire: u64) {}
    /// RCCC: a credit packet said the receiver has granted `total` quanta in all; the bytes
    /// newly granted.
    fn on_credit(&mut self, _total: u64) -> u64 {
        0
    }
    /// RCCC: the credit in hand, in bytes (None: no credit gate).
    fn credit(&self) -> Option<i64> {
        None
    }
    /// RCCC: the cumulative pull target to carry in a packet, in quanta, with `backlog` bytes
    /// left to send in packets of `packet` bytes (None: no credit).
    fn pull_target(&self, _backlog: u64, _packet: u64) -> Option<u32> {
        None
    }
    /// Bytes the sender may have in flight (None: no window).
    fn window(&self) -> Option<u64>;
    /// May a packet of `size` payload bytes go with `inflight` outstanding? By default when
    /// nothing is in flight (a window under one packet paces instead of stalling) or when the
    /// packet fits the window.
    fn allows(&self, inflight: u64, size: u64) -> bool {
        inflight == 0 || self.window().is_none_or(|w| inflight + size <= w)
    }
    /// The pace between packets, as a rate (None: the line rate).
    fn rate(&self) -> Option<BitRate> {
        None
    }
    /// UET: should the packet about to go ask for an ACK at once (the sender will soon wait
    /// for one)? By default when less than one ACK's worth (`ack_bytes`) of window is left.
    fn asks_ack(&self, inflight: u64, _mtu: u64, ack_bytes: u64) -> bool {
        self.window()
            .is_some_and(|w| w.saturating_sub(inflight) < ack_bytes)
    }
    /// UET: the window selective-ACK loss detection scales its threshold by (NSCC's; None: the
    /// path's ceiling).
    fn loss_window(&self) -> Option<f64> {
        None
    }
    /// UET: the base round trip and the target queueing delay that time SLEEK's probes
    /// (uet-htsim probes only under a sender's window, NSCC's). None: the flow does not probe.
    fn probe_clock(&self) -> Option<(Duration, Duration)> {
        None
    }
    /// Ask the switches to stamp INT into this flow's data packets.
    fn wants_int(&self) -> bool {
        false
    }
    /// RoCEv2: the receiver's ACKs echo CE marks (as a DCTCP receiver does, RFC 8257 section
    /// 3.2). Real RoCEv2 ACKs do not: DCQCN answers marks with CNPs.
    fn echoes_ecn(&self) -> bool {
        true
    }
    /// The control variable the flow plots show: a window in bytes, or a rate in bit/s.
    fn control_value(&self) -> f64 {
        self.window().map_or(0.0, |w| w as f64)
    }
}
