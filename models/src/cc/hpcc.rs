//! HPCC: High Precision Congestion Control (Li et al., SIGCOMM 2019, Algorithm 1), for RoCEv2
//! as in the paper, from the INT records switches stamp into data packets ([`crate::int`]).
//!
//! Per ACK, for every hop on the path, the egress link's utilisation is its transmit rate
//! (byte-counter difference over timestamp difference against the previous ACK's record)
//! plus its queue (the smaller of the two samples, filtering a transient) over B x T:
//! `u_i = min(q, q') / (B T) + txRate / B`. The most utilised hop gives `u`, folded into the
//! normalised in-flight `U` by a time-weighted EWMA over T (tau clipped to T). The window is
//!
//! - `W = Wc / (U / eta) + W_AI` while `U >= eta` or after `maxStage` rounds of growth
//!   (multiplicative step toward eta; `incStage = 0`),
//! - `W = Wc + W_AI` otherwise (additive increase; `incStage += 1`),
//!
//! where the reference window `Wc` moves only once per RTT (the first ACK beyond the
//! sequence sent at the last update); ACKs in between react with `W` alone. The sender paces
//! at `W / T` and keeps at most `W` in flight. T is the longest unloaded round trip in the
//! fabric (the ns-3 simulator's `GLOBAL_T`), W starts at line rate x T.
//!
//! Defaults: eta = 0.95 and maxStage = 5 (the paper, section 5.1); W_AI from the HPCC ns-3
//! simulator's `run.py` (`RATE_AI` = 10 Mb/s per 25 Gb/s of line rate, times T); a floor of
//! 1 Gb/s (`MIN_RATE` in its configuration template). The first ACK only records the hops
//! (`rdma-hw.cc` `UpdateRateHp`); a path whose hop count changes starts its records over.

use super::api::{Ack, CongestionControl, Ctx};
use crate::int::IntHop;
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration};

/// `nic.cc = { kind = "hpcc", ... }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HpccConfig {
    /// Target utilisation eta.
    #[serde(default = "default_eta")]
    pub eta: f64,
    /// Rounds of additive increase before a multiplicative step (maxStage).
    #[serde(default = "default_max_stage")]
    pub max_stage: u32,
    /// Additive increase per update, W_AI (default: 0.04 % of line rate x T).
    #[serde(default)]
    pub additive_increase: Option<Bytes>,
    /// Lowest pacing rate.
    #[serde(default = "default_min_rate")]
    pub min_rate: BitRate,
}

fn default_eta() -> f64 {
    0.95
}
fn default_max_stage() -> u32 {
    5
}
fn default_min_rate() -> BitRate {
    BitRate::gbps(1)
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: default_eta(),
            max_stage: default_max_stage(),
            additive_increase: None,
            min_rate: default_min_rate(),
        }
    }
}

impl HpccConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(("eta", format!("must be in (0, 1], got {}", self.eta)));
        }
        if self.max_stage > 1000 {
            return Err((
                "max_stage",
                format!("must be at most 1000, got {}", self.max_stage),
            ));
        }
        if self.min_rate.0 == 0 {
            return Err(("min_rate", "must be greater than zero".into()));
        }
        Ok(())
    }
}

/// One flow's HPCC state.
#[derive(Debug, Clone)]
pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    w_ai: f64,
    /// T, in picoseconds.
    t: f64,
    min_w: f64,
    max_w: f64,
    /// Current window W and reference window Wc, bytes.
    pub w: f64,
    pub wc: f64,
    /// Normalised in-flight U.
    pub u: f64,
    inc_stage: u32,
    last_update_seq: u64,
    /// The previous ACK's records (L), and whether any were seen.
    last: Vec<IntHop>,
    seen: bool,
}

impl Hpcc {
    pub fn new(c: &HpccConfig, ctx: &Ctx) -> Hpcc {
        let t = ctx.network_rtt.max(Duration(1));
        let max_w = ctx.line_rate.bytes_in(t).max(ctx.mtu as u64) as f64;
        // RATE_AI = 10 Mb/s per 25 Gb/s (`run.py`), as a window over T.
        let w_ai = c
            .additive_increase
            .map_or(max_w * 10.0 / 25_000.0, |b| b.0 as f64);
        let min_w = (c.min_rate.min(ctx.line_rate).bytes_in(t) as f64).max(1.0);
        Hpcc {
            eta: c.eta,
            max_stage: c.max_stage,
            w_ai,
            t: t.0 as f64,
            min_w,
            max_w,
            w: max_w,
            wc: max_w,
            u: 1.0,
            inc_stage: 0,
            last_update_seq: 0,
            last: Vec::new(),
            seen: false,
        }
    }

    /// MeasureInflight (Algorithm 1, lines 1-10): the EWMA of the most utilised hop's `u`.
    fn measure(&mut self, hops: &[IntHop]) -> f64 {
        let mut best: Option<(f64, f64)> = None;
        for (new, old) in hops.iter().zip(&self.last) {
            let tau = new.ts.0.saturating_sub(old.ts.0) as f64;
            if tau <= 0.0 || new.rate.0 == 0 {
                continue;
            }
            let b = new.rate.0 as f64;
            let tx_rate = new.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8.0 / (tau * 1e-12);
            let bt = b / 8.0 * self.t * 1e-12;
            let u = new.qlen.min(old.qlen) as f64 / bt + tx_rate / b;
            if best.is_none_or(|(bu, _)| u > bu) {
                best = Some((u, tau));
            }
        }
        if let Some((u, tau)) = best {
            let tau = tau.min(self.t);
            self.u = (1.0 - tau / self.t) * self.u + tau / self.t * u;
        }
        self.u
    }

    /// ComputeWind (lines 11-20).
    fn compute(&mut self, u: f64, update_wc: bool) {
        let w = if u >= self.eta || self.inc_stage >= self.max_stage {
            let w = self.wc / (u.max(1e-9) / self.eta) + self.w_ai;
            if update_wc {
                self.inc_stage = 0;
            }
            w
        } else {
            if update_wc {
                self.inc_stage += 1;
            }
            self.wc + self.w_ai
        };
        self.w = w.clamp(self.min_w, self.max_w);
        if update_wc {
            self.wc = self.w;
        }
    }
}

impl CongestionControl for Hpcc {
    /// NewAck (lines 21-28).
    fn on_ack(&mut self, ack: &Ack) {
        if ack.int.is_empty() {
            return;
        }
        if !self.seen || ack.int.len() != self.last.len() {
            if !self.seen {
                self.last_update_seq = ack.sent;
            }
            self.seen = true;
            self.last.clear();
            self.last.extend_from_slice(ack.int);
            return;
        }
        let u = self.measure(ack.int);
        let full = ack.acked > self.last_update_seq;
        self.compute(u, full);
        if full {
            self.last_update_seq = ack.sent;
        }
        self.last.copy_from_slice(ack.int);
    }

    fn window(&self) -> Option<u64> {
        Some(self.w as u64)
    }

    /// R = W / T.
    fn rate(&self) -> Option<BitRate> {
        Some(BitRate((self.w * 8.0 / (self.t * 1e-12)) as u64))
    }

    fn wants_int(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::Time;

    fn ctx() -> Ctx {
        Ctx {
            line_rate: BitRate::gbps(100),
            base_rtt: Duration::from_us(8),
            network_rtt: Duration::from_us(8),
            mtu: 4096,
            hops: 1,
            size: 1 << 30,
        }
    }

    fn hop(ts_ns: u64, tx_bytes: u64, qlen: u64) -> IntHop {
        IntHop {
            ts: Time(ts_ns * 1000),
            tx_bytes,
            qlen,
            rate: BitRate::gbps(100),
        }
    }

    fn ack(acked: u64, sent: u64, int: &[IntHop]) -> Ack<'_> {
        Ack {
            now: Time::ZERO,
            newly_acked: 4096,
            acked,
            sent,
            inflight: sent - acked,
            rtt: Duration::from_us(8),
            ecn: false,
            int,
        }
    }

    #[test]
    fn starts_at_line_rate_and_the_first_ack_only_records() {
        let mut h = Hpcc::new(&HpccConfig::default(), &ctx());
        let bdp = BitRate::gbps(100).bytes_in(Duration::from_us(8)) as f64;
        assert_eq!(h.w, bdp);
        h.on_ack(&ack(4096, 100_000, &[hop(0, 0, 0)]));
        assert_eq!(h.w, bdp, "the first ACK changes nothing");
    }

    #[test]
    fn a_link_at_line_rate_with_a_queue_cuts_the_window_toward_eta() {
        // Over one T the hop sent B x T bytes (u_rate = 1) and held a queue of one BDP
        // (u_queue = 1): U -> (1 - 1) U + 1 x 2 = 2, so W = Wc eta / 2 + W_AI.
        let c = HpccConfig::default();
        let mut h = Hpcc::new(&c, &ctx());
        let bdp = BitRate::gbps(100).bytes_in(Duration::from_us(8));
        h.on_ack(&ack(0, 1, &[hop(0, 0, bdp)]));
        h.on_ack(&ack(4096, 200_000, &[hop(8_000, bdp, bdp)]));
        let w_ai = bdp as f64 * 10.0 / 25_000.0;
        assert!((h.u - 2.0).abs() < 1e-9, "U = {}", h.u);
        assert!(
            (h.w - (bdp as f64 * 0.95 / 2.0 + w_ai)).abs() < 1e-6,
            "W = {}",
            h.w
        );
        assert_eq!(h.wc, h.w, "a full update moves Wc");
    }

    #[test]
    fn between_full_updates_only_w_moves_and_growth_is_additive_until_max_stage() {
        let c = HpccConfig::default();
        let mut h = Hpcc::new(&c, &ctx());
        let bdp = BitRate::gbps(100).bytes_in(Duration::from_us(8));
        // An idle link (u = 0.5 < eta): additive increase from Wc.
        h.on_ack(&ack(0, 1, &[hop(0, 0, 0)]));
        h.wc = bdp as f64 / 2.0;
        h.u = 0.5;
        let half = bdp / 2;
        h.on_ack(&ack(4096, 8192, &[hop(8_000, half, 0)]));
        let w_ai = bdp as f64 * 10.0 / 25_000.0;
        assert!((h.w - (bdp as f64 / 2.0 + w_ai)).abs() < 1e-6);
        let wc = h.wc;
        // An ACK below the sequence of the last update: W reacts, Wc stays.
        h.on_ack(&ack(8000, 9000, &[hop(16_000, 2 * half, 0)]));
        assert_eq!(h.wc, wc, "fast reaction leaves Wc");
        for i in 0..10 {
            h.on_ack(&ack(
                100_000 * (i + 2),
                100_000 * (i + 3),
                &[hop(8_000 * (i + 3), half * (i + 3), 0)],
            ));
        }
        assert!(h.inc_stage <= c.max_stage, "incStage resets after maxStage");
    }
}
