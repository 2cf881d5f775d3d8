//! Transmission selection between an egress port's priority queues: strict priority (IEEE
//! 802.1Q clause 8.6.8.1) or deficit weighted round robin (Shreedhar and Varghese, "Efficient
//! fair queueing using deficit round robin", SIGCOMM 1995; 802.1Q clause 8.6.8.2 ETS), as
//! SONiC's `SCHEDULER` table sets each queue (`type` STRICT or DWRR with a `weight`).
//!
//! `switch.scheduler = { dwrr = { 3 = 50, 1 = 50 } }` shares the port between priorities 3
//! and 1 in proportion to their weights whenever both have frames; priorities not listed
//! stay strict and go first (SAI serves strict queues ahead of DWRR ones). Each visit gives
//! a queue a quantum of weight / (least weight) x 9216 B (a jumbo frame, so every visit can
//! send), and an emptied queue forgets its deficit.

use crate::error::FieldError;
use crate::prio::{PRIORITIES, PrioMask};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Bytes of quantum for the least weight: one jumbo frame.
const BASE_QUANTUM: u64 = 9216;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    /// DWRR weight (1..=100, as SONiC takes them) per priority ("3" = 50).
    #[serde(default)]
    pub dwrr: BTreeMap<String, u32>,
}

impl SchedulerConfig {
    /// The DWRR weights by priority (0: strict), checked; None when every queue is strict.
    pub fn weights(&self) -> Result<Option<[u32; PRIORITIES]>, FieldError> {
        if self.dwrr.is_empty() {
            return Ok(None);
        }
        let mut w = [0u32; PRIORITIES];
        for (k, &v) in &self.dwrr {
            let key = format!("switch.scheduler.dwrr.{k}");
            let p: u8 = k
                .parse()
                .ok()
                .filter(|p| (*p as usize) < PRIORITIES)
                .ok_or_else(|| FieldError::new(&key, format!("a priority 0..=7, got {k:?}")))?;
            if !(1..=100).contains(&v) {
                return Err(FieldError::new(
                    &key,
                    format!("SONiC weights are 1 to 100, got {v}"),
                ));
            }
            w[p as usize] = v;
        }
        Ok(Some(w))
    }
}

/// One port's DWRR state.
#[derive(Debug, Clone)]
pub struct Dwrr {
    quantum: [u64; PRIORITIES],
    deficit: [u64; PRIORITIES],
    /// Priorities scheduled by weight.
    members: PrioMask,
    /// The queue whose turn it is.
    turn: u8,
    /// Whether `turn` has had its quantum for this visit.
    credited: bool,
}

impl Dwrr {
    pub fn new(weights: [u32; PRIORITIES]) -> Dwrr {
        let least = weights.iter().copied().filter(|&w| w > 0).min().unwrap_or(1) as u64;
        let mut members = PrioMask::EMPTY;
        let mut quantum = [0; PRIORITIES];
        for (p, &w) in weights.iter().enumerate() {
            if w > 0 {
                members.insert(p as u8);
                quantum[p] = (w as u64 * BASE_QUANTUM).div_ceil(least);
            }
        }
        Dwrr {
            quantum,
            deficit: [0; PRIORITIES],
            members,
            turn: members.highest().unwrap_or(0),
            credited: false,
        }
    }

    /// The priority to send from among `ready` (non-empty, not paused), whose head frame is
    /// `head(p)` bytes: a strict one if any, else the DWRR turn. Charges the frame.
    pub fn pick(&mut self, ready: PrioMask, head: impl Fn(u8) -> u64) -> Option<u8> {
        let strict = ready & !self.members;
        if let Some(p) = strict.highest() {
            return Some(p);
        }
        let ready = ready & self.members;
        if ready.is_empty() {
            return None;
        }
        // Queues that emptied lose their deficit (DRR: an idle queue saves no credit).
        for p in (self.members & !ready).iter() {
            self.deficit[p as usize] = 0;
        }
        loop {
            let t = self.turn;
            if ready.contains(t) {
                if !self.credited {
                    self.deficit[t as usize] += self.quantum[t as usize];
                    self.credited = true;
                }
                let size = head(t);
                if self.deficit[t as usize] >= size {
                    self.deficit[t as usize] -= size;
                    return Some(t);
                }
            }
            self.advance();
        }
    }

    /// The next member after `turn`, from the highest priority down, wrapping.
    fn advance(&mut self) {
        let mut p = self.turn;
        loop {
            p = if p == 0 { (PRIORITIES - 1) as u8 } else { p - 1 };
            if self.members.contains(p) {
                break;
            }
        }
        self.turn = p;
        self.credited = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_share_the_port_in_proportion() {
        // Two always-backlogged queues with weights 3:1 and 1000 B frames: bytes served
        // follow the weights (DRR's long-run share is quantum_i / sum of quanta).
        let mut w = [0; PRIORITIES];
        w[3] = 75;
        w[1] = 25;
        let mut d = Dwrr::new(w);
        let ready = PrioMask::of(3) | PrioMask::of(1);
        let mut served = [0u64; PRIORITIES];
        for _ in 0..40_000 {
            let p = d.pick(ready, |_| 1000).unwrap();
            served[p as usize] += 1000;
        }
        let share = served[3] as f64 / (served[3] + served[1]) as f64;
        assert!((share - 0.75).abs() < 0.01, "share {share}");
    }

    #[test]
    fn strict_queues_go_first_and_a_lone_queue_takes_the_port() {
        let mut w = [0; PRIORITIES];
        w[3] = 50;
        w[1] = 50;
        let mut d = Dwrr::new(w);
        assert_eq!(d.pick(PrioMask::of(6) | PrioMask::of(3), |_| 1500), Some(6));
        assert!((0..100).all(|_| d.pick(PrioMask::of(1), |_| 9000) == Some(1)));
        assert_eq!(d.pick(PrioMask::EMPTY, |_| 1), None);
    }

    #[test]
    fn bad_weights_name_their_key() {
        let c = SchedulerConfig {
            dwrr: [("9".to_string(), 10)].into(),
        };
        assert_eq!(c.weights().unwrap_err().path, "switch.scheduler.dwrr.9");
        let c = SchedulerConfig {
            dwrr: [("3".to_string(), 0)].into(),
        };
        assert!(c.weights().unwrap_err().message.contains("1 to 100"));
    }
}
