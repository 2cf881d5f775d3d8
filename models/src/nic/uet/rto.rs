//! The UET sender's retransmission timeout: adapted to the measured round trip, backed off on
//! repeated expiry.
//!
//! The estimator is TCP's (RFC 6298, section 2): the first sample R sets SRTT = R and
//! RTTVAR = R/2; later ones RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R| and SRTT = 7/8 SRTT + 1/8 R;
//! RTO = SRTT + 4 RTTVAR. Samples come only from acknowledgements of packets sent once
//! (Karn's algorithm; the UET ACK's `retx` flag says when the packet was a resend). The
//! timeout never falls below the configured base (`nic.rto`, by default 15 us + 6 network
//! round trips as uet-htsim's main_uec sets it), so an idle fabric behaves as before, and
//! grows with a queue that lengthens the round trip, so a deep buffer does not time out
//! packets that are only waiting. On each expiry without progress it doubles, as UE 1.0's PDS
//! backs off (RTO_INIT_TIME x 2^retries), up to `nic.rto_max`; after `nic.rto_retries`
//! expiries without progress the PDC gives up (UE PDS `Max_RTO_Retx_Cnt`, 5 by default).

use sim_core::Duration;

/// One PDC's timer state.
#[derive(Debug, Clone, Default)]
pub struct RetxTimer {
    /// Smoothed round trip and its mean deviation, in picoseconds (None before a sample).
    srtt: Option<f64>,
    rttvar: f64,
    /// Expiries since the last progress.
    pub retries: u32,
}

impl RetxTimer {
    /// A round trip measured on a packet sent once.
    pub fn sample(&mut self, rtt: Duration) {
        let r = rtt.0 as f64;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
    }

    /// The smoothed round trip (zero before a sample).
    pub fn srtt(&self) -> Duration {
        Duration(self.srtt.unwrap_or(0.0) as u64)
    }

    /// The timeout now: SRTT + 4 RTTVAR, at least `base`, doubled per expiry, at most `max`.
    pub fn rto(&self, base: Duration, max: Duration) -> Duration {
        let estimate = self.srtt.map_or(0.0, |s| s + 4.0 * self.rttvar) as u64;
        let rto = Duration(estimate.max(base.0));
        let backed_off = rto.0.saturating_mul(1u64 << self.retries.min(40));
        Duration(backed_off.min(max.0.max(base.0)))
    }

    /// New data was acknowledged: the backoff ends.
    pub fn progress(&mut self) {
        self.retries = 0;
    }

    /// The timer expired with data outstanding.
    pub fn expired(&mut self) {
        self.retries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_follows_rfc_6298_above_its_floor_and_backs_off_to_its_ceiling() {
        let (base, max) = (Duration::from_us(20), Duration::from_us(1000));
        let mut t = RetxTimer::default();
        assert_eq!(t.rto(base, max), base, "no sample yet: the base");
        t.sample(Duration::from_us(40));
        // SRTT 40, RTTVAR 20: 40 + 4 x 20 = 120 us.
        assert_eq!(t.rto(base, max), Duration::from_us(120));
        t.sample(Duration::from_us(40));
        // RTTVAR 3/4 x 20 + 1/4 x 0 = 15; SRTT 40: 100 us.
        assert_eq!(t.rto(base, max), Duration::from_us(100));
        t.expired();
        t.expired();
        assert_eq!(t.rto(base, max), Duration::from_us(400), "doubled twice");
        t.expired();
        t.expired();
        assert_eq!(t.rto(base, max), max, "capped");
        t.progress();
        assert_eq!(t.rto(base, max), Duration::from_us(100));
        let mut fast = RetxTimer::default();
        fast.sample(Duration::from_us(2));
        assert_eq!(fast.rto(base, max), base, "never below the base");
    }
}
