//! DCTCP as a window (RFC 8257 section 3): the worked example of a congestion-control plug-in
//! (`docs/congestion-control.md` shows this file as written).
//!
//! Once per window of data the sender folds the fraction of ECN-echoed bytes into alpha
//! (gain g = 1/16, alpha starting at 1), and on an echo cuts the window by alpha/2, at most
//! once per window; otherwise it grows by one packet per round trip.

use super::api::{Ack, CongestionControl, Ctx};
use serde::Deserialize;

/// `nic.cc = { kind = "dctcp", g = 0.0625 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DctcpConfig {
    /// EWMA gain of alpha.
    #[serde(default = "default_g")]
    pub g: f64,
}

fn default_g() -> f64 {
    1.0 / 16.0
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    g: f64,
    mtu: f64,
    pub cwnd: f64,
    pub alpha: f64,
    /// Bytes acknowledged and ECN-echoed in this window, and where the window ends.
    acked: u64,
    marked: u64,
    window_end: u64,
    /// No second cut before this sequence is acknowledged.
    cut_until: u64,
}

impl Dctcp {
    pub fn new(c: &DctcpConfig, ctx: &Ctx) -> Dctcp {
        Dctcp {
            g: c.g,
            mtu: ctx.mtu as f64,
            cwnd: ctx.bdp().max(ctx.mtu as u64) as f64,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
            cut_until: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, ack: &Ack) {
        self.acked += ack.newly_acked;
        if ack.ecn {
            self.marked += ack.newly_acked;
        }
        if ack.acked >= self.window_end {
            let f = self.marked as f64 / self.acked.max(1) as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            (self.acked, self.marked, self.window_end) = (0, 0, ack.sent);
        }
        if ack.ecn && ack.acked >= self.cut_until {
            self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(self.mtu);
            self.cut_until = ack.sent;
        } else if !ack.ecn {
            self.cwnd += self.mtu * ack.newly_acked as f64 / self.cwnd;
        }
    }

    fn window(&self) -> Option<u64> {
        Some(self.cwnd as u64)
    }
}
