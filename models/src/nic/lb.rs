//! Sender-side load balancing: which entropy value (EV) each packet carries.
//!
//! Switches hash the EV with the flow (it is the UDP source port), so the sender steers
//! packets among equal-cost paths by choosing EVs (UE 1.0 packet spraying; Hoefler et al.,
//! arXiv 2508.08906, section on load balancing):
//!
//! * `ecmp`: one EV per flow, the classic per-flow hash (RoCEv2's only mode);
//! * `oblivious`: cycle through `evs` values, packet by packet;
//! * `reps`: Recycled Entropy Packet Spraying (Bonato et al., "REPS: Recycled Entropy Packet
//!   Spraying for Adaptive Load Balancing and Failure Mitigation", 2024; uet-htsim
//!   `uec_mp.cpp`): EVs whose ACKs came back without ECN are queued for reuse; a packet takes
//!   the oldest recycled EV, or explores a fresh one when none is left. EVs that saw ECN or a
//!   NACK are not recycled, so traffic drifts away from congested paths.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LbKind {
    #[default]
    Ecmp,
    Oblivious,
    Reps,
}

/// `[nic.lb]`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LbConfig {
    #[serde(default)]
    pub kind: LbKind,
    /// Distinct EVs a flow sprays over, a power of two (uet-htsim default 64; UE 1.0 allows
    /// 16 bits).
    #[serde(default = "default_evs")]
    pub evs: u16,
}

/// uet-htsim's default (`-paths 64`).
fn default_evs() -> u16 {
    64
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig {
            kind: LbKind::Ecmp,
            evs: default_evs(),
        }
    }
}

/// Per-flow EV state.
#[derive(Debug, Clone)]
pub struct EvSelector {
    kind: LbKind,
    evs: u16,
    /// The flow's own entropy (its EV under ECMP, the offset of every sprayed EV).
    base: u16,
    next: u16,
    /// Oblivious: this round's XOR mask.
    mask: u16,
    recycled: std::collections::VecDeque<u16>,
    /// Distinct EVs changed from one packet to the next (a path change).
    pub changes: u64,
    last: Option<u16>,
}

/// At most this many EVs wait for reuse (REPS's buffer; about a BDP of packets).
const RECYCLE_CAP: usize = 256;

impl EvSelector {
    pub fn new(cfg: &LbConfig, base: u16) -> Self {
        EvSelector {
            kind: cfg.kind,
            evs: cfg.evs.max(1),
            base,
            next: 0,
            mask: 0,
            recycled: std::collections::VecDeque::new(),
            changes: 0,
            last: None,
        }
    }

    /// The entropy for the next packet; `explore` is a fresh random draw.
    #[inline]
    pub fn choose(&mut self, explore: impl FnOnce() -> u16) -> u16 {
        let ev = match self.kind {
            LbKind::Ecmp => 0,
            // Each round is the counter XOR a mask redrawn at every wrap: every EV once per
            // round, in an order that changes from round to round (uet-htsim `UecMpOblivious`),
            // so flows that happen to collide in one round do not stay in step.
            LbKind::Oblivious => {
                if self.next == 0 {
                    self.mask = explore() % self.evs;
                }
                let ev = self.next ^ self.mask;
                self.next = (self.next + 1) % self.evs;
                ev
            }
            // REPS explores the first round of EVs in order, then reuses the recycled ones,
            // and draws a random EV when none is left (uet-htsim `UecMpReps::nextEntropy`).
            LbKind::Reps if self.next < self.evs => {
                self.next += 1;
                self.next - 1
            }
            LbKind::Reps => self.recycled.pop_front().unwrap_or_else(|| explore() % self.evs),
        };
        // The EV replaces the low bits of the flow's entropy (uet-htsim: upper EV bits are a
        // per-flow constant), so one round of `evs` values covers every low-bit pattern.
        let entropy = self.base ^ ev;
        if self.last.is_some_and(|l| l != entropy) {
            self.changes += 1;
        }
        self.last = Some(entropy);
        entropy
    }

    /// An ACK came back for a packet that carried `entropy`.
    #[inline]
    pub fn on_ack(&mut self, entropy: u16, ecn: bool) {
        if self.kind == LbKind::Reps && !ecn && self.recycled.len() < RECYCLE_CAP {
            self.recycled.push_back(entropy ^ self.base);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecmp_keeps_one_ev_oblivious_covers_every_ev_each_round() {
        let mut e = EvSelector::new(
            &LbConfig {
                kind: LbKind::Ecmp,
                evs: 8,
            },
            100,
        );
        assert!((0..10).all(|_| e.choose(|| 5) == 100));
        let mut o = EvSelector::new(
            &LbConfig {
                kind: LbKind::Oblivious,
                evs: 4,
            },
            100,
        );
        let mut masks = [1u16, 2].into_iter();
        let evs: Vec<u16> = (0..8).map(|_| o.choose(|| masks.next().unwrap()) ^ 100).collect();
        assert_eq!(
            evs,
            vec![1, 0, 3, 2, 2, 3, 0, 1],
            "each round: 0..4 XOR that round's mask"
        );
    }

    #[test]
    fn reps_explores_a_round_then_reuses_clean_evs_and_forgets_marked_ones() {
        let mut r = EvSelector::new(
            &LbConfig {
                kind: LbKind::Reps,
                evs: 4,
            },
            0,
        );
        let first: Vec<u16> = (0..4).map(|_| r.choose(|| 99)).collect();
        assert_eq!(first, vec![0, 1, 2, 3], "the first round explores every EV");
        assert_eq!(r.choose(|| 7), 3, "nothing recycled yet: a random EV (7 mod 4)");
        r.on_ack(1, false);
        r.on_ack(2, true);
        assert_eq!(r.choose(|| 0), 1, "the clean EV comes back");
        assert_eq!(r.choose(|| 0), 0, "the marked one does not");
    }
}
