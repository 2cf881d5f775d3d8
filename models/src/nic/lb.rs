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
    /// Distinct EVs a flow sprays over (uet-htsim: 64... 256; UE 1.0 allows 16 bits).
    #[serde(default = "default_evs")]
    pub evs: u16,
}

fn default_evs() -> u16 {
    256
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
            recycled: std::collections::VecDeque::new(),
            changes: 0,
            last: None,
        }
    }

    /// The entropy for the next packet; `explore` is a fresh random draw (REPS).
    #[inline]
    pub fn choose(&mut self, explore: impl FnOnce() -> u16) -> u16 {
        let ev = match self.kind {
            LbKind::Ecmp => 0,
            LbKind::Oblivious => {
                let ev = self.next;
                self.next = (self.next + 1) % self.evs;
                ev
            }
            LbKind::Reps => self.recycled.pop_front().unwrap_or_else(|| explore() % self.evs),
        };
        let entropy = self.base.wrapping_add(ev);
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
            self.recycled.push_back(entropy.wrapping_sub(self.base));
        }
    }

    pub fn is_spraying(&self) -> bool {
        self.kind != LbKind::Ecmp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecmp_keeps_one_ev_oblivious_cycles() {
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
        let evs: Vec<u16> = (0..6).map(|_| o.choose(|| 0)).collect();
        assert_eq!(evs, vec![100, 101, 102, 103, 100, 101]);
    }

    #[test]
    fn reps_reuses_clean_evs_and_forgets_marked_ones() {
        let mut r = EvSelector::new(
            &LbConfig {
                kind: LbKind::Reps,
                evs: 64,
            },
            0,
        );
        assert_eq!(r.choose(|| 7), 7, "nothing recycled yet: explore");
        r.on_ack(7, false);
        r.on_ack(9, true);
        assert_eq!(r.choose(|| 30), 7, "the clean EV comes back");
        assert_eq!(r.choose(|| 30), 30, "the marked one does not");
    }
}
