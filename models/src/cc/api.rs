//! The congestion-control plug-in point: a sender-side window and pacing rate, driven by the
//! feedback a flow's transport receives. HPCC ([`super::hpcc`]), Swift ([`super::swift`])
//! and the worked example DCTCP ([`super::dctcp`]) are written against it; DCQCN and NSCC
//! predate it and keep their own state in the transports (`nic/roce`, `nic/uet`).
//!
//! One [`CongestionControl`] per flow, built when the flow starts from its [`Ctx`]. The NIC
//! asks it before every packet: a packet goes when nothing is in flight or when in-flight
//! bytes plus the packet fit in [`CongestionControl::window`], and no sooner than
//! [`CongestionControl::rate`] allows after the previous one (the port's line rate caps
//! both). It hears about:
//!
//! | event | when | RoCEv2 | UET |
//! |---|---|---|---|
//! | [`on_ack`](CongestionControl::on_ack) | an ACK arrived | cumulative ACK | selective ACK |
//! | [`on_nack`](CongestionControl::on_nack) | the receiver saw a gap | NAK (go back N) | - |
//! | [`on_trim`](CongestionControl::on_trim) | a switch trimmed a packet | - | NACK of a trim |
//! | [`on_cnp`](CongestionControl::on_cnp) | a CNP arrived (the receiver runs DCQCN's NP) | yes | - |
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

/// A sender-side congestion-control scheme for one flow.
pub trait CongestionControl: std::fmt::Debug {
    /// An ACK arrived.
    fn on_ack(&mut self, ack: &Ack);
    /// RoCEv2: a NAK (PSN sequence error) arrived; `now`.
    fn on_nack(&mut self, _now: Time) {}
    /// UET: a switch trimmed a packet of `bytes` payload (the NACK came back).
    fn on_trim(&mut self, _now: Time, _bytes: u64) {}
    /// A CNP arrived for this flow's QP.
    fn on_cnp(&mut self, _now: Time) {}
    /// The retransmission timer expired with data outstanding.
    fn on_timeout(&mut self, _now: Time) {}
    /// The time [`Self::timer_due`] returned has come.
    fn on_timer(&mut self, _now: Time) {}
    /// When the scheme wants [`Self::on_timer`] next (None: never).
    fn timer_due(&self) -> Option<Time> {
        None
    }
    /// Bytes the sender may have in flight (None: no window).
    fn window(&self) -> Option<u64>;
    /// The pace between packets, as a rate (None: the line rate).
    fn rate(&self) -> Option<BitRate> {
        None
    }
    /// Ask the switches to stamp INT into this flow's data packets.
    fn wants_int(&self) -> bool {
        false
    }
}

/// May a packet of `size` payload bytes go with `inflight` outstanding under `cc`? Always
/// when nothing is in flight (a window under one packet paces instead of stalling).
#[inline]
pub fn admits(cc: &dyn CongestionControl, inflight: u64, size: u64) -> bool {
    inflight == 0 || cc.window().is_none_or(|w| inflight + size <= w)
}
