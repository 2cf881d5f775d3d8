//! The Ultra Ethernet packet delivery context (PDC) in reliable unordered delivery (RUD),
//! sender and receiver side: per-PSN state, selective ACKs, NACKs and timeouts.
//!
//! UE 1.0 PDS (Hoefler et al., arXiv 2508.08906, "Packet Delivery Sublayer"; uet-htsim
//! `uec.cpp`): every packet carries a PSN and its own entropy value; the receiver accepts
//! packets in any order, reassembles by PSN, and acknowledges selectively: a cumulative PSN
//! plus a 64-bit bitmap of the PSNs after a base, sent every `ack_bytes` of new data (about
//! 16 KB), at once for an ECN-marked packet, a duplicate, or the message's completion. A
//! trimmed packet (headers only, its payload cut by a congested switch) is answered with a
//! NACK for its PSN, and the sender resends that PSN at once, on a new EV. A PSN still
//! unacknowledged when enough packets sent after it have been acknowledged is presumed lost
//! and resent at once (uet-htsim's SLEEK, `UecSrc::runSleek`: about one and a half windows
//! of later packets, at least 5, so the reordering of sprayed paths is not taken for loss);
//! the retransmission timeout resends what is left. The receiver also acknowledges on a timer
//! (`Sim`'s ACK coalescing timer), so a delivered packet is acknowledged in bounded time even
//! when no later packet asks for it. Only lost packets are resent: selective repeat, where
//! RoCEv2's go-back-N resends everything after a loss.

use std::collections::VecDeque;

/// Per-PSN sender state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Tx {
    Unsent,
    InFlight,
    Acked,
    /// NACKed or timed out, waiting in the retransmit queue.
    Lost,
}

/// A selective acknowledgement: everything below `cum`, and PSN `base + i` for bit i of `bitmap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sack {
    pub cum: u32,
    pub base: u32,
    pub bitmap: u64,
}

#[derive(Debug, Clone)]
pub struct UetPdc {
    // Sender.
    tx: Vec<Tx>,
    /// When each PSN from `acked_below` to `next_new` was last sent (for the retransmission
    /// timer): only those can be in flight, so a message of any length keeps a window's worth.
    sent: VecDeque<sim_core::Time>,
    /// The entropy each of those PSNs was last sent on (its path, for a loss probe).
    ev: VecDeque<u16>,
    next_new: u32,
    retx: VecDeque<u32>,
    /// Payload bytes sent and neither acknowledged nor known lost.
    pub inflight: u64,
    acked: u32,
    /// Every PSN below this one is acknowledged.
    acked_below: u32,
    /// PSNs in the `Lost` state (the retransmit queue may also hold stale entries).
    lost: u32,
    /// One past the highest PSN acknowledged.
    highest_acked: u32,
    // Receiver.
    rcvd: Vec<u64>,
    /// Lowest PSN not yet received.
    cum: u32,
    /// New payload bytes since the last ACK (0: nothing owed).
    since_ack: u64,
    /// The PSN that arrived last (an ACK on the timer covers it).
    last_psn: u32,
    received: u32,
}

impl UetPdc {
    /// Free the per-packet state of the sides this copy does not run (a partition of a run
    /// on several threads that sends or receives none of the flow's packets).
    pub fn shed(&mut self, sender: bool, receiver: bool) {
        if !sender {
            (self.sent, self.ev) = (VecDeque::new(), VecDeque::new());
            // The receiver counts the message's packets by `tx`.
            if !receiver {
                self.tx = Vec::new();
            }
        }
        if !receiver {
            self.rcvd = Vec::new();
        }
    }

    /// Take the receiver's side from `rx` (a run on several threads: its receiver's copy).
    pub fn take_receiver(&mut self, rx: &mut UetPdc) {
        self.rcvd = std::mem::take(&mut rx.rcvd);
        self.cum = rx.cum;
        self.since_ack = rx.since_ack;
        self.last_psn = rx.last_psn;
        self.received = rx.received;
    }

    /// Bytes of per-packet state a flow of `packets` keeps (sender state per PSN, receiver
    /// bitmap), for the memory check at validation; the send times are kept for the PSNs in
    /// flight only.
    pub const fn state_bytes(packets: u64) -> u64 {
        packets * std::mem::size_of::<Tx>() as u64 + packets.div_ceil(64) * 8
    }

    pub fn new(packets: u32) -> Self {
        UetPdc {
            tx: vec![Tx::Unsent; packets as usize],
            sent: VecDeque::new(),
            ev: VecDeque::new(),
            next_new: 0,
            retx: VecDeque::new(),
            inflight: 0,
            acked: 0,
            acked_below: 0,
            lost: 0,
            highest_acked: 0,
            rcvd: vec![0; (packets as usize).div_ceil(64)],
            cum: 0,
            since_ack: 0,
            last_psn: 0,
            received: 0,
        }
    }

    /// Something to send: a retransmission or new data.
    #[inline]
    pub fn has_work(&self) -> bool {
        self.lost > 0 || (self.next_new as usize) < self.tx.len()
    }

    /// The next PSN to send at `now` (retransmissions first); true when it is a
    /// retransmission. `payload(psn)` gives its size, added to the bytes in flight.
    #[inline]
    pub fn take_psn(&mut self, now: sim_core::Time, payload: impl Fn(u32) -> u32) -> Option<(u32, bool)> {
        let mut resend = None;
        while let Some(psn) = self.retx.pop_front() {
            if self.tx[psn as usize] == Tx::Lost {
                self.lost -= 1;
                resend = Some(psn);
                break;
            }
        }
        let (psn, retx) = match resend {
            Some(psn) => (psn, true),
            None if (self.next_new as usize) < self.tx.len() => {
                self.next_new += 1;
                self.sent.push_back(now);
                self.ev.push_back(0);
                (self.next_new - 1, false)
            }
            None => return None,
        };
        self.tx[psn as usize] = Tx::InFlight;
        let at = self.at(psn);
        self.sent[at] = now;
        self.inflight += payload(psn) as u64;
        Some((psn, retx))
    }

    fn ack_one(&mut self, psn: u32, payload: &impl Fn(u32) -> u32) -> u64 {
        match self.tx.get(psn as usize) {
            Some(Tx::InFlight) => {
                self.inflight -= payload(psn) as u64;
            }
            Some(Tx::Lost) => self.lost -= 1,
            _ => return 0,
        }
        self.tx[psn as usize] = Tx::Acked;
        self.acked += 1;
        self.highest_acked = self.highest_acked.max(psn + 1);
        payload(psn) as u64
    }

    /// Apply a selective ACK; returns the payload bytes newly acknowledged.
    pub fn on_sack(&mut self, s: Sack, payload: impl Fn(u32) -> u32) -> u64 {
        let mut newly = 0;
        for p in self.acked_below..s.cum.min(self.tx.len() as u32) {
            newly += self.ack_one(p, &payload);
        }
        let mut bits = s.bitmap;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            newly += self.ack_one(s.base + i, &payload);
        }
        while (self.acked_below as usize) < self.tx.len() && self.tx[self.acked_below as usize] == Tx::Acked {
            self.acked_below += 1;
            self.sent.pop_front();
            self.ev.pop_front();
        }
        newly
    }

    /// Presume lost every PSN in flight that was sent before the highest acknowledged one
    /// and has at least `k` acknowledged PSNs above it; queue them for a resend. Returns the
    /// payload bytes presumed lost. The scan starts at the lowest unacknowledged PSN and stops
    /// at the first PSN with fewer than `k` acknowledged above it, so it costs nothing while
    /// nothing is lost.
    pub fn sack_losses(&mut self, k: u32, payload: impl Fn(u32) -> u32) -> u64 {
        if self.highest_acked == 0 || self.acked_below >= self.highest_acked {
            return 0;
        }
        let newest = self.sent[self.at(self.highest_acked - 1)];
        let mut acked_at_or_below = self.acked_below;
        let mut bytes = 0;
        for psn in self.acked_below..self.highest_acked {
            let i = psn as usize;
            match self.tx[i] {
                Tx::Acked => acked_at_or_below += 1,
                _ if self.acked - acked_at_or_below < k => break,
                Tx::InFlight if self.sent[self.at(psn)] < newest => bytes += self.lose(psn, payload(psn)),
                _ => {}
            }
        }
        bytes
    }

    /// A NACK for `psn` (its payload was trimmed): resend it next. Returns true when the
    /// PSN was in flight (the payload bytes leave the in-flight count).
    pub fn on_nack(&mut self, psn: u32, payload: u32) -> bool {
        if self.tx.get(psn as usize) != Some(&Tx::InFlight) {
            return false;
        }
        self.tx[psn as usize] = Tx::Lost;
        self.lost += 1;
        self.inflight -= payload as u64;
        self.retx.push_front(psn);
        true
    }

    /// The retransmission timer expired at `now`: packets in flight for `rto` or longer are
    /// presumed lost (uet-htsim `rtxTimerExpired`; younger ones may still be acknowledged).
    /// Returns the payload bytes presumed lost.
    pub fn on_timeout(
        &mut self,
        now: sim_core::Time,
        rto: sim_core::Duration,
        payload: impl Fn(u32) -> u32,
    ) -> u64 {
        self.lose_in_flight(payload, |sent, _| sent + rto <= now)
    }

    /// Presume lost PSN `psn` (in flight, `payload` bytes): it waits for a resend.
    fn lose(&mut self, psn: u32, payload: u32) -> u64 {
        self.tx[psn as usize] = Tx::Lost;
        self.lost += 1;
        self.retx.push_back(psn);
        self.inflight -= payload as u64;
        payload as u64
    }

    /// Presume lost every PSN in flight for which `lost(sent at, entropy)` holds. Returns
    /// their payload bytes.
    fn lose_in_flight(
        &mut self,
        payload: impl Fn(u32) -> u32,
        lost: impl Fn(sim_core::Time, u16) -> bool,
    ) -> u64 {
        let mut bytes = 0;
        for psn in self.acked_below..self.next_new {
            let i = psn as usize;
            let at = self.at(psn);
            if self.tx[i] == Tx::InFlight && lost(self.sent[at], self.ev[at]) {
                bytes += self.lose(psn, payload(psn));
            }
        }
        bytes
    }

    /// PSN `psn` leaves on entropy `ev`.
    #[inline]
    pub fn sent_on(&mut self, psn: u32, ev: u16) {
        let at = self.at(psn);
        self.ev[at] = ev;
    }

    /// Where PSN `psn` (sent, not below `acked_below`) is in `sent` and `ev`.
    #[inline]
    fn at(&self, psn: u32) -> usize {
        (psn - self.acked_below) as usize
    }

    /// The entropy of the lowest PSN in flight: where a probe goes to follow it.
    pub fn oldest_path(&self) -> Option<u16> {
        (self.acked_below..self.next_new)
            .find(|&p| self.tx[p as usize] == Tx::InFlight)
            .map(|p| self.ev[self.at(p)])
    }

    /// A probe sent at `t` on entropy `ev` came back with little queueing: every PSN still in
    /// flight that was sent on that path before it is lost (the probe queued behind them and
    /// passed); queue them for a resend. Returns the payload bytes.
    pub fn lost_before(&mut self, t: sim_core::Time, ev: u16, payload: impl Fn(u32) -> u32) -> u64 {
        self.lose_in_flight(payload, |sent, on| sent < t && on == ev)
    }

    /// When the oldest packet still in flight was sent.
    pub fn oldest_in_flight(&self) -> Option<sim_core::Time> {
        (self.acked_below..self.next_new)
            .filter(|&p| self.tx[p as usize] == Tx::InFlight)
            .map(|p| self.sent[self.at(p)])
            .min()
    }

    pub fn outstanding(&self) -> bool {
        self.inflight > 0
    }

    /// PSNs presumed lost and waiting for a resend.
    pub fn lost_packets(&self) -> u32 {
        self.lost
    }

    /// Packets still to send: new data and queued retransmissions.
    pub fn backlog_packets(&self) -> u64 {
        (self.tx.len() as u64 - self.next_new as u64) + self.lost as u64
    }

    /// Lowest PSN not yet received.
    pub fn cumulative(&self) -> u32 {
        self.cum
    }

    /// Packets acknowledged, and new packets sent (PSNs taken for the first time).
    pub fn progress(&self) -> (u32, u32) {
        (self.acked, self.next_new)
    }

    pub fn all_acked(&self) -> bool {
        self.acked as usize == self.tx.len()
    }

    // Receiver.

    /// A data packet with PSN `psn` arrived. Returns whether it was new and the selective ACK
    /// to send, if one is due: every `ack_bytes` of new data, or at once when `urgent` (an
    /// ECN-marked packet or an ACK request), for a duplicate, or at completion.
    pub fn receive(&mut self, psn: u32, payload: u32, urgent: bool, ack_bytes: u64) -> (bool, Option<Sack>) {
        let (w, b) = ((psn / 64) as usize, psn % 64);
        let new = self.rcvd[w] & 1 << b == 0;
        if new {
            self.rcvd[w] |= 1 << b;
            self.received += 1;
            self.since_ack += payload as u64;
            while (self.cum as usize) < self.tx.len() && self.has(self.cum) {
                self.cum += 1;
            }
        }
        self.last_psn = psn;
        let complete = self.received as usize == self.tx.len();
        if self.since_ack >= ack_bytes || urgent || complete || !new {
            self.since_ack = 0;
            return (new, Some(self.sack_for(psn)));
        }
        (new, None)
    }

    /// True while data has arrived that no ACK has covered yet.
    pub fn owes_ack(&self) -> bool {
        self.since_ack > 0
    }

    /// A probe asks for the receiver's view now: the selective ACK of the latest PSN (it
    /// covers what was owed).
    pub fn ack_now(&mut self) -> Sack {
        self.since_ack = 0;
        self.sack_for(self.last_psn)
    }

    /// The ACK coalescing timer fired: the ACK owed, if any.
    pub fn flush_ack(&mut self) -> Option<Sack> {
        if self.since_ack == 0 {
            return None;
        }
        self.since_ack = 0;
        Some(self.sack_for(self.last_psn))
    }

    fn has(&self, psn: u32) -> bool {
        self.rcvd[(psn / 64) as usize] & 1 << (psn % 64) != 0
    }

    /// A SACK whose bitmap covers the triggering PSN: based at `cum` when it is near,
    /// otherwise ending at it (uet-htsim: `max(psn - 63, cum + 1)`).
    pub fn sack_for(&self, psn: u32) -> Sack {
        let base = if psn < self.cum + 64 { self.cum } else { psn - 63 };
        let bitmap = (0..64u32)
            .filter(|&i| ((base + i) as usize) < self.tx.len() && self.has(base + i))
            .fold(0u64, |m, i| m | 1 << i);
        Sack {
            cum: self.cum,
            base,
            bitmap,
        }
    }

    pub fn all_received(&self) -> bool {
        self.received as usize == self.tx.len()
    }

    /// True when `psn` was already received (a trimmed copy of it needs no NACK).
    pub fn received_psn(&self, psn: u32) -> bool {
        self.has(psn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use sim_core::{Duration, Time};

    const MTU: u32 = 1000;
    const T0: Time = Time(0);
    fn pay(_: u32) -> u32 {
        MTU
    }

    #[test]
    fn out_of_order_arrivals_are_acked_selectively() {
        let mut rx = UetPdc::new(100);
        let (new, ack) = rx.receive(3, MTU, false, 16_000);
        assert!(new && ack.is_none(), "below the ACK threshold");
        let (_, ack) = rx.receive(0, MTU, true, 16_000);
        let s = ack.expect("ECN-marked: ACK at once");
        assert_eq!((s.cum, s.base), (1, 1));
        assert_eq!(s.bitmap, 1 << 2, "PSN 3 = base + 2");
        let (new, ack) = rx.receive(3, MTU, false, 16_000);
        assert!(!new && ack.is_some(), "a duplicate is re-acknowledged");
    }

    #[test]
    fn a_probe_shows_lost_only_what_it_followed_and_was_sent_before_it() {
        let mut tx = UetPdc::new(10);
        for (i, ev) in [7, 9, 7, 7].into_iter().enumerate() {
            let t = Time(Duration::from_us(i as u64).0);
            let (psn, _) = tx.take_psn(t, pay).unwrap();
            tx.sent_on(psn, ev);
        }
        assert_eq!(tx.oldest_path(), Some(7), "PSN 0's path");
        // A probe on path 7 left at 2.5 us: PSNs 0 and 2 went before it on that path, PSN 1
        // on another (it may still be queued there), PSN 3 after it.
        let probe_sent = Time(Duration::from_us(2).0 + Duration::from_us(1).0 / 2);
        assert_eq!(tx.lost_before(probe_sent, 7, pay), 2000);
        assert_eq!(tx.take_psn(T0, pay), Some((0, true)));
        assert_eq!(tx.take_psn(T0, pay), Some((2, true)));
        assert_eq!(
            tx.take_psn(T0, pay),
            Some((4, false)),
            "PSNs 1 and 3 are still in flight"
        );
    }

    #[test]
    fn sender_frees_inflight_from_sacks_and_resends_only_the_lost() {
        let mut tx = UetPdc::new(10);
        for _ in 0..5 {
            tx.take_psn(T0, pay);
        }
        assert_eq!(tx.inflight, 5000);
        // PSNs 0, 1 and 3 arrived; 2 was trimmed.
        let acked = tx.on_sack(
            Sack {
                cum: 2,
                base: 2,
                bitmap: 0b10,
            },
            pay,
        );
        assert_eq!(acked, 3000);
        assert!(tx.on_nack(2, MTU));
        assert_eq!(tx.inflight, 1000, "PSN 4 is still out");
        assert_eq!(tx.take_psn(T0, pay), Some((2, true)), "the NACKed PSN goes first");
        assert_eq!(tx.take_psn(T0, pay), Some((5, false)));
        assert!(!tx.on_nack(2, MTU) || tx.inflight > 0);
    }

    #[test]
    fn a_late_ack_for_a_resend_candidate_leaves_no_phantom_work() {
        let mut tx = UetPdc::new(2);
        tx.take_psn(T0, pay);
        tx.take_psn(T0, pay);
        assert!(tx.on_nack(1, MTU));
        // The original copy of PSN 1 was acknowledged after all (the NACK raced it).
        tx.on_sack(
            Sack {
                cum: 2,
                base: 2,
                bitmap: 0,
            },
            pay,
        );
        assert!(!tx.has_work(), "PSN 1 no longer needs a resend");
        assert_eq!(tx.take_psn(T0, pay), None);
    }

    #[test]
    fn timeout_resends_only_what_has_been_out_for_an_rto() {
        let mut tx = UetPdc::new(5);
        for _ in 0..4 {
            tx.take_psn(T0, pay);
        }
        tx.take_psn(Time(50), pay); // PSN 4, younger
        tx.on_sack(
            Sack {
                cum: 1,
                base: 1,
                bitmap: 0b10,
            },
            pay,
        ); // 0 and 2 acked
        assert_eq!(tx.oldest_in_flight(), Some(T0));
        assert_eq!(
            tx.on_timeout(Time(100), Duration(100), pay),
            2 * MTU as u64,
            "1 and 3, not 4"
        );
        let again: Vec<u32> = std::iter::from_fn(|| tx.take_psn(Time(100), pay))
            .map(|(p, _)| p)
            .collect();
        assert_eq!(again, vec![1, 3]);
        tx.on_sack(
            Sack {
                cum: 5,
                base: 5,
                bitmap: 0,
            },
            pay,
        );
        assert!(tx.all_acked() && !tx.outstanding());
    }

    #[test]
    fn a_psn_passed_by_k_acknowledged_later_psns_is_presumed_lost_once() {
        let mut tx = UetPdc::new(20);
        for t in 0..12 {
            tx.take_psn(Time(t), pay);
        }
        // PSN 2 is missing; 3..=9 arrived: 2 + 7 acknowledged, 7 of them above PSN 2.
        let acked = tx.on_sack(
            Sack {
                cum: 2,
                base: 3,
                bitmap: 0x7f,
            },
            pay,
        );
        assert_eq!(acked, 9 * MTU as u64);
        assert_eq!(tx.sack_losses(8, pay), 0, "7 later PSNs acknowledged: not yet");
        assert_eq!(
            tx.sack_losses(7, pay),
            MTU as u64,
            "PSN 2 alone: 10 and 11 have none above"
        );
        assert_eq!(tx.sack_losses(7, pay), 0, "already queued for a resend");
        assert_eq!(tx.take_psn(Time(20), pay), Some((2, true)));
        assert_eq!(
            tx.sack_losses(1, pay),
            0,
            "resent after PSN 9: nothing acknowledged since"
        );
    }

    #[test]
    fn the_ack_timer_flushes_what_the_byte_counter_held_back() {
        let mut rx = UetPdc::new(10);
        let (_, ack) = rx.receive(0, MTU, false, 16_000);
        assert!(ack.is_none() && rx.owes_ack());
        let s = rx.flush_ack().expect("one packet owed");
        assert_eq!((s.cum, s.base, s.bitmap), (1, 1, 0));
        assert!(!rx.owes_ack() && rx.flush_ack().is_none());
    }

    #[test]
    fn far_psn_gets_its_own_block() {
        let mut rx = UetPdc::new(1000);
        let (_, ack) = rx.receive(700, MTU, true, 16_000);
        let s = ack.unwrap();
        assert_eq!((s.cum, s.base, s.bitmap), (0, 637, 1 << 63));
    }
}
