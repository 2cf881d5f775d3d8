//! Swift: delay-based congestion control (Kumar et al., "Swift: Delay is Simple and Effective
//! for Congestion Control in the Datacenter", SIGCOMM 2020, Algorithm 1 and section 3), as a
//! sender-side window for RoCEv2 or UET.
//!
//! The delay is the NIC-timestamped round trip: the ACK echoes the data packet's transmit
//! time, and a receiver that held its ACK reports the hold, which is taken off (the paper's
//! fabric delay: RTT minus the remote endpoint's time). Against a target that grows with the
//! path's hops and shrinks with the window (flow-based scaling, section 3.5),
//!
//! `target = base + hops h + clamp(alpha / sqrt(cwnd) + beta', 0, fs_range)`, with
//! `alpha = fs_range / (1/sqrt(fs_min) - 1/sqrt(fs_max))`, `beta' = -alpha / sqrt(fs_max)`
//! (cwnd in packets),
//!
//! an ACK under target adds `ai` packets per RTT (`ai / cwnd` per packet acked; `ai` per
//! packet below one packet), one over target cuts the window by
//! `max(1 - beta (delay - target) / delay, 1 - max_mdf)`, at most once per RTT. A timeout
//! cuts by `max_mdf` (to the minimum after `RETX_RESET_THRESHOLD` = 5 in a row), as does a
//! NAK or a trim (fast recovery). Below one packet the window paces: one packet every
//! `rtt / cwnd` (section 3.4; the window may go down to 0.001 packets for large incasts).
//!
//! The paper's constants are not public; the defaults are uet-htsim's (`sim/swift.cpp`
//! `SwiftSrc`, set there to reproduce the paper's figure 17): base target 20 us, h = base /
//! 6.55 per switch, fs_range = 5 base, fs_min 0.1 and fs_max 100 packets, ai 1, beta 0.8,
//! max_mdf 0.5. A target well above the fabric's round trip is Swift's design (its paper's
//! fabrics have round trips of tens of microseconds): the standing queue it keeps is what
//! carries the link through the ripple of many flows' additive increase. On a fabric whose
//! round trip is a microsecond, a smaller `base_target` trades that margin for a shorter
//! queue. The window starts at the path's BDP.

use super::api::{Ack, CongestionControl, Ctx, Trim};
use serde::Deserialize;
use sim_core::{BitRate, Duration, Time};

/// `nic.cc = { kind = "swift", ... }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwiftConfig {
    /// Target delay before hop and flow scaling (default 20 us).
    #[serde(default)]
    pub base_target: Option<Duration>,
    /// Added per switch on the path (default: base_target / 6.55).
    #[serde(default)]
    pub per_hop: Option<Duration>,
    /// Flow-scaling range (default: 5 x base_target); 0 turns flow scaling off.
    #[serde(default)]
    pub fs_range: Option<Duration>,
    /// Additive increase, packets per RTT (default 1).
    #[serde(default)]
    pub ai: Option<f64>,
    /// Multiplicative-decrease gain (default 0.8).
    #[serde(default)]
    pub beta: Option<f64>,
    /// Largest cut per decrease (default 0.5).
    #[serde(default)]
    pub max_mdf: Option<f64>,
}

impl SwiftConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (key, v, lo, hi) in [
            ("ai", self.ai, 0.0, 1e6),
            ("beta", self.beta, 0.0, 1.0),
            ("max_mdf", self.max_mdf, 0.0, 1.0),
        ] {
            if let Some(v) = v {
                if !(v > lo && v <= hi) {
                    return Err((key, format!("must be in ({lo}, {hi}], got {v}")));
                }
            }
        }
        if self.base_target == Some(Duration::ZERO) {
            return Err(("base_target", "must be greater than zero".into()));
        }
        Ok(())
    }
}

/// uet-htsim's `_base_delay`.
const DEFAULT_BASE_TARGET: Duration = Duration::from_us(20);
const FS_MIN: f64 = 0.1;
const FS_MAX: f64 = 100.0;
const MIN_CWND: f64 = 0.001;
const RETX_RESET_THRESHOLD: u32 = 5;

/// One flow's Swift state (window in packets, as the paper counts it).
#[derive(Debug, Clone)]
pub struct Swift {
    mtu: f64,
    /// Target before flow scaling: base + hops x h, in ps.
    fixed_target: f64,
    fs_range: f64,
    fs_alpha: f64,
    fs_beta: f64,
    ai: f64,
    beta: f64,
    max_mdf: f64,
    max_cwnd: f64,
    pub cwnd: f64,
    /// Smoothed RTT, ps.
    srtt: f64,
    last_decrease: Option<Time>,
    retransmits: u32,
}

impl Swift {
    pub fn new(c: &SwiftConfig, ctx: &Ctx) -> Swift {
        let base = c.base_target.unwrap_or(DEFAULT_BASE_TARGET).0 as f64;
        let h = c.per_hop.map_or(base / 6.55, |d| d.0 as f64);
        let fs_range = c.fs_range.map_or(5.0 * base, |d| d.0 as f64);
        let fs_alpha = fs_range / (1.0 / FS_MIN.sqrt() - 1.0 / FS_MAX.sqrt());
        let mtu = ctx.mtu as f64;
        let bdp = (ctx.bdp() as f64 / mtu).max(1.0);
        Swift {
            mtu,
            fixed_target: base + h * ctx.hops as f64,
            fs_range,
            fs_alpha,
            fs_beta: -fs_alpha / FS_MAX.sqrt(),
            ai: c.ai.unwrap_or(1.0),
            beta: c.beta.unwrap_or(0.8),
            max_mdf: c.max_mdf.unwrap_or(0.5),
            max_cwnd: (ctx.size as f64 / mtu).max(bdp).max(1.0),
            cwnd: bdp,
            srtt: ctx.base_rtt.0 as f64,
            last_decrease: None,
            retransmits: 0,
        }
    }

    /// The target delay at the current window, ps.
    pub fn target(&self) -> f64 {
        let fs = (self.fs_alpha / self.cwnd.sqrt() + self.fs_beta).clamp(0.0, self.fs_range);
        self.fixed_target + fs
    }

    fn can_decrease(&self, now: Time) -> bool {
        self.last_decrease
            .is_none_or(|t| (now.0 - t.0) as f64 >= self.srtt)
    }

    fn cut(&mut self, now: Time, factor: f64) {
        self.cwnd = (self.cwnd * factor).clamp(MIN_CWND, self.max_cwnd);
        self.last_decrease = Some(now);
    }
}

impl CongestionControl for Swift {
    fn on_ack(&mut self, ack: &Ack) {
        let delay = ack.rtt.0 as f64;
        self.srtt = 0.875 * self.srtt + 0.125 * delay;
        self.retransmits = 0;
        let target = self.target();
        let acked = ack.newly_acked as f64 / self.mtu;
        if delay < target {
            if self.cwnd >= 1.0 {
                self.cwnd += self.ai * acked / self.cwnd;
            } else {
                self.cwnd += self.ai * acked;
            }
            self.cwnd = self.cwnd.min(self.max_cwnd);
        } else if self.can_decrease(ack.now) {
            let f = (1.0 - self.beta * (delay - target) / delay).max(1.0 - self.max_mdf);
            self.cut(ack.now, f);
        }
    }

    fn on_nack(&mut self, now: Time) {
        self.retransmits = 0;
        if self.can_decrease(now) {
            self.cut(now, 1.0 - self.max_mdf);
        }
    }

    fn on_trim(&mut self, t: &Trim) {
        self.on_nack(t.now);
    }

    fn on_timeout(&mut self, now: Time, _lost: u64) {
        self.retransmits += 1;
        if self.retransmits >= RETX_RESET_THRESHOLD {
            self.cut(now, 0.0);
        } else if self.can_decrease(now) {
            self.cut(now, 1.0 - self.max_mdf);
        }
    }

    fn window(&self) -> Option<u64> {
        Some((self.cwnd * self.mtu) as u64)
    }

    /// Below one packet: one packet per `srtt / cwnd`.
    fn rate(&self) -> Option<BitRate> {
        (self.cwnd < 1.0).then(|| BitRate((self.cwnd * self.mtu * 8.0 / (self.srtt * 1e-12)) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx {
            line_rate: BitRate::gbps(100),
            base_rtt: Duration::from_us(5),
            network_rtt: Duration::from_us(5),
            mtu: 4096,
            hops: 2,
            size: 1 << 30,
        }
    }

    fn ack(now_us: u64, rtt_us: f64) -> Ack<'static> {
        Ack {
            now: Time(now_us * 1_000_000),
            newly_acked: 4096,
            acked: 0,
            sent: 0,
            inflight: 0,
            rtt: Duration((rtt_us * 1e6) as u64),
            ecn: false,
            int: &[],
        }
    }

    #[test]
    fn the_target_scales_with_hops_and_falls_as_the_window_grows() {
        let s = Swift::new(&SwiftConfig::default(), &ctx());
        let base = 20e6;
        let mut small = s.clone();
        small.cwnd = FS_MIN;
        assert!((small.target() - (base + 2.0 * base / 6.55 + 5.0 * base)).abs() < 1.0);
        let mut big = s;
        big.cwnd = FS_MAX;
        assert!((big.target() - (base + 2.0 * base / 6.55)).abs() < 1.0);
    }

    #[test]
    fn under_target_adds_ai_per_rtt_and_over_target_cuts_once_per_rtt() {
        let mut s = Swift::new(&SwiftConfig::default(), &ctx());
        s.cwnd = 10.0;
        for _ in 0..10 {
            s.on_ack(&ack(1, 1.0));
        }
        // Ten ACKs of one packet at cwnd ~10: about one packet more.
        assert!((s.cwnd - 11.0).abs() < 0.05, "cwnd {}", s.cwnd);
        let before = s.cwnd;
        let target = s.target() / 1e6;
        let delay = 2.0 * target;
        s.on_ack(&ack(100, delay));
        let expected = before * (1.0 - 0.8 * (delay - target) / delay).max(0.5);
        assert!((s.cwnd - expected).abs() < 1e-6, "{} vs {expected}", s.cwnd);
        s.on_ack(&ack(100, delay));
        assert!((s.cwnd - expected).abs() < 1e-6, "no second cut within an RTT");
    }

    #[test]
    fn below_one_packet_it_paces_one_packet_per_rtt_over_cwnd() {
        let mut s = Swift::new(&SwiftConfig::default(), &ctx());
        s.cwnd = 0.5;
        let r = s.rate().expect("paced");
        let gap = r.tx_time(4096).0 as f64;
        assert!((gap - 2.0 * s.srtt).abs() / gap < 1e-6, "one packet per 2 RTTs");
    }
}
