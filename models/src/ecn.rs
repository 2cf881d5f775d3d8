//! ECN marking by WRED on egress queue depth (RFC 3168 marking, RED's linear ramp: Floyd and
//! Jacobson, "Random Early Detection Gateways", 1993), as DCQCN deploys it on switches
//! (Zhu et al., SIGCOMM 2015, section 3): below Kmin never, above Kmax always, in between with
//! probability Pmax x (q - Kmin) / (Kmax - Kmin). Only ECN-capable (ECT) packets are marked CE.
//! Marking at dequeue (HPCC's simulator, Spectrum's default) signals congestion a queue-drain
//! earlier than marking at enqueue.

use crate::error::FieldError;
use serde::Deserialize;
use sim_core::Bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MarkAt {
    Enqueue,
    #[default]
    Dequeue,
}

/// `[switch.ecn]`: WRED-ECN on every egress queue.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    pub kmin: Bytes,
    pub kmax: Bytes,
    pub pmax: f64,
    #[serde(default)]
    pub mark_at: MarkAt,
}

impl EcnConfig {
    pub fn validate(&self, key: &str) -> Result<(), FieldError> {
        if self.kmin > self.kmax {
            return Err(FieldError::new(
                format!("{key}.kmin"),
                format!("kmin ({}) must not exceed kmax ({})", self.kmin, self.kmax),
            ));
        }
        if !(self.pmax > 0.0 && self.pmax <= 1.0) {
            return Err(FieldError::new(
                format!("{key}.pmax"),
                format!("must be in (0, 1], got {}", self.pmax),
            ));
        }
        Ok(())
    }

    /// Marking probability at queue depth `q` bytes.
    #[inline]
    pub fn probability(&self, q: u64) -> f64 {
        let (kmin, kmax) = (self.kmin.0, self.kmax.0);
        if q <= kmin {
            0.0
        } else if q >= kmax {
            1.0
        } else {
            self.pmax * (q - kmin) as f64 / (kmax - kmin) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wred_ramp_is_linear_between_kmin_and_kmax() {
        let e = EcnConfig {
            kmin: Bytes(100_000),
            kmax: Bytes(400_000),
            pmax: 0.2,
            mark_at: MarkAt::Dequeue,
        };
        assert_eq!(e.probability(50_000), 0.0);
        assert!((e.probability(250_000) - 0.1).abs() < 1e-12);
        assert_eq!(e.probability(400_000), 1.0);
        let bad = EcnConfig {
            kmin: Bytes(5),
            kmax: Bytes(4),
            ..e.clone()
        };
        assert_eq!(bad.validate("switch.ecn").unwrap_err().path, "switch.ecn.kmin");
    }
}
