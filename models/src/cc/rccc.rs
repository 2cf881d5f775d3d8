//! RCCC: Ultra Ethernet receiver credit-based congestion control.
//!
//! After uet-htsim (`htsim/sim/uec.cpp`: `UecSink::pull`, `UecPullPacer`,
//! `UecSrc::computePullTarget`, `handlePull`, `stopSpeculating`) and UE 1.0 (Hoefler et al.,
//! arXiv 2508.08906, RCCC): a sender starts with a speculative credit of 1.5 BDP, enough to
//! fill the path once; its first feedback (ACK, NACK or credit) ends the speculation. From then
//! on it sends only against credit that the receiver grants, `credit_per_pull` (4 MTU) at a
//! time, round robin across the flows that ask for it, paced so that the grants add up to 99 %
//! of the receiver's line rate. Every data packet tells the receiver how much the sender needs
//! in all (a cumulative pull target), and every credit packet how much the receiver has
//! granted in all, so a lost request or grant is made good by the next one. Credit counts wire bytes (a packet costs its frame, preamble and gap), so grants at
//! 99 % of line rate never outrun the link. An incast therefore queues at the senders, not at
//! the receiver's switch port.

use super::api::{Ack, CongestionControl, SackFeedback, Trim};
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration, Time};

/// `nic.cc = { kind = "rccc", ... }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcccConfig {
    /// Credit granted per pull (default 4 MTU, "as per default in the UEC spec" in uet-htsim).
    #[serde(default)]
    pub credit: Option<Bytes>,
}

/// The receiver paces grants at this fraction of its line rate (`UecPullPacer` modifier).
pub const PACER_SHARE: f64 = 0.99;

impl RcccConfig {
    pub fn credit_per_pull(&self, mtu: u32) -> u64 {
        self.credit.map_or(4 * mtu as u64, |b| b.0)
    }

    /// Time the pacer waits after granting `bytes` on a `rate` link.
    pub fn pace(rate: BitRate, bytes: u64) -> Duration {
        Duration((rate.tx_time(bytes).0 as f64 / PACER_SHARE) as u64)
    }
}

/// Credit is requested in quanta of 256 B (uet-htsim `UEC_PULL_QUANTUM`).
pub const QUANTUM: u64 = 256;

/// A sender's credit.
#[derive(Debug, Clone)]
pub struct RcccSender {
    credit: i64,
    cap: i64,
    speculating: bool,
    /// Credit received so far, in bytes (the base of cumulative requests).
    received: u64,
}

impl RcccSender {
    /// Start with `speculative` bytes of credit (1.5 BDP), which is also the cap.
    pub fn new(speculative: u64) -> Self {
        RcccSender {
            credit: speculative as i64,
            cap: speculative as i64,
            speculating: true,
            received: 0,
        }
    }

    #[inline]
    pub fn has_credit(&self) -> bool {
        self.credit > 0
    }

    /// `bytes` went on the wire: they are paid from the credit.
    pub fn spend(&mut self, bytes: u64) {
        self.credit -= bytes as i64;
    }

    /// Any feedback from the receiver ends the speculative phase.
    pub fn on_feedback(&mut self) {
        if self.speculating {
            self.speculating = false;
            self.credit = self.credit.min(0);
        }
    }

    /// A credit packet arrived saying the receiver has granted `total` quanta in all: what is
    /// new in it is this sender's (a grant lost on the way is made good by the next one).
    /// Returns the bytes newly granted.
    pub fn grant(&mut self, total: u64) -> u64 {
        self.on_feedback();
        let newly = (total * QUANTUM).saturating_sub(self.received);
        self.received += newly;
        self.credit = (self.credit + newly as i64).min(self.cap);
        newly
    }

    /// Bytes to ask for: what is left to send, at most the cap, minus the credit in hand;
    /// while speculating, at least one packet's worth when anything is left (uet-htsim
    /// `computePullTarget`), so the request survives the end of speculation.
    pub fn need(&self, backlog: u64, packet: u64) -> u64 {
        let held = if self.speculating { 0 } else { self.credit.max(0) };
        let need = (backlog.min(self.cap as u64) as i64 - held).max(0) as u64;
        if self.speculating && backlog > 0 {
            need.max(packet)
        } else {
            need
        }
    }

    /// The cumulative pull target to carry in a packet, in quanta: all credit received so
    /// far plus what is needed now. The receiver grants up to the highest target it has seen,
    /// so a request repeated by every packet is granted once.
    pub fn target(&self, backlog: u64, packet: u64) -> u32 {
        ((self.received + self.need(backlog, packet)).div_ceil(QUANTUM)).min(u32::MAX as u64) as u32
    }

    /// The credit in hand, in bytes (negative once overspent).
    pub fn held(&self) -> i64 {
        self.credit
    }
}

impl CongestionControl for RcccSender {
    /// Credit, not ACKs, paces an RCCC sender; an ACK's only news is that feedback came
    /// ([`Self::on_sack`]).
    fn on_ack(&mut self, _ack: &Ack) {}

    fn on_sack(&mut self, _s: &SackFeedback) {
        self.on_feedback();
    }

    fn on_trim(&mut self, _t: &Trim) {
        self.on_feedback();
    }

    fn on_sent(&mut self, _now: Time, wire: u64) {
        self.spend(wire);
    }

    fn on_credit(&mut self, total: u64) -> u64 {
        self.grant(total)
    }

    fn credit(&self) -> Option<i64> {
        Some(self.credit)
    }

    fn pull_target(&self, backlog: u64, packet: u64) -> Option<u32> {
        Some(self.target(backlog, packet))
    }

    fn window(&self) -> Option<u64> {
        None
    }

    fn allows(&self, _inflight: u64, _size: u64) -> bool {
        self.has_credit()
    }

    /// Once the credit is spent the sender will wait: ask for an ACK now.
    fn asks_ack(&self, _inflight: u64, _mtu: u64, _ack_bytes: u64) -> bool {
        self.credit <= 0
    }

    fn control_value(&self) -> f64 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speculation_ends_at_the_first_feedback() {
        let mut s = RcccSender::new(10_000);
        s.spend(4_000);
        assert!(s.has_credit());
        s.on_feedback();
        assert!(!s.has_credit(), "positive speculative credit is dropped");
        assert_eq!(s.grant(64), 16_384, "64 quanta in all");
        assert_eq!(s.held(), 10_000, "capped at 1.5 BDP");
        assert_eq!(s.grant(64), 0, "a repeated total grants nothing");
        s.spend(12_000);
        assert!(!s.has_credit());
    }

    #[test]
    fn need_is_backlog_minus_credit_and_targets_are_cumulative() {
        let mut s = RcccSender::new(100_000);
        assert_eq!(
            s.need(1_000_000, 4_218),
            100_000,
            "while speculating, ask for the cap"
        );
        assert_eq!(s.need(1_000, 4_218), 4_218, "at least a packet while speculating");
        s.on_feedback();
        assert_eq!(s.need(1_000_000, 4_218), 100_000);
        s.grant(62);
        assert_eq!(s.need(50_000, 4_218), 50_000 - 62 * 256);
        assert_eq!(s.target(50_000, 4_218), 50_000u64.div_ceil(256) as u32);
    }

    #[test]
    fn grants_are_paced_below_line_rate() {
        // 16 KiB at 100 Gb/s is 1.31 us; at 99 % it takes 1.324 us.
        let d = RcccConfig::pace(BitRate::gbps(100), 16_384);
        assert_eq!(d, Duration((1_310_720.0 / 0.99) as u64));
    }
}
