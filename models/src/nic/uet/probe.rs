//! SLEEK's probes: how a UET sender with a small window finds a loss that selective ACKs
//! cannot show it (uet-htsim `UecSrc::processAck`, `sendProbe`, with `probe_first_trial_time`
//! 3 and `probe_retry_time` 5; a UE 1.0 PDS control packet of type PROBE, answered by an ACK
//! with its `p` flag), timed no sooner than TCP's tail loss probe (RFC 8985, section 7.2:
//! two smoothed round trips).
//!
//! Every ACK re-arms the probe timer while data is unacknowledged or waits to be sent: one
//! base round trip plus the target delay ahead when nothing is left to send, three base round
//! trips ahead otherwise, and never under two smoothed round trips (our choice: uet-htsim's
//! base-RTT timer alone fires on every flow of an incast, whose ACKs come one per queue
//! drain; the smoothed RTT follows the queue, so a probe goes only when an ACK is overdue).
//! If it fires (no ACK came meanwhile), the sender sends a probe, and again every five base
//! round trips (at least two smoothed) until an ACK comes. The probe's ACK carries the
//! receiver's selective view; if it came back with a queueing delay under the target, the
//! network is not holding the packets sent before the probe: those it does not acknowledge
//! are lost and resent at once.

use sim_core::{Duration, Time};

/// uet-htsim `probe_first_trial_time`: base round trips to the first probe with data left.
const FIRST_TRIAL: u64 = 3;
/// uet-htsim `probe_retry_time`: base round trips between probes.
const RETRY: u64 = 5;

/// A sender's probe timer.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// When the timer fires (None: stopped).
    pub due: Option<Time>,
    /// When its pending event runs (None: none pending). An event at any other time is stale.
    pub at: Option<Time>,
    /// When the last probe left.
    pub sent_at: Option<Time>,
}

impl Probe {
    /// An ACK arrived at `now`: the timer restarts while data is unacknowledged (`unacked`)
    /// or waits to be sent (`backlog`), `base` + `target` ahead when nothing is left to send,
    /// `3 base` otherwise, at least `2 srtt`; it stops otherwise (uet-htsim re-arms on `cum_ack < _highest_sent
    /// || _backlog > 0`). Returns when to schedule an event: the timer now fires before the
    /// pending one.
    pub fn on_ack(&mut self, now: Time, unacked: bool, backlog: bool, clock: Clock) -> Option<Time> {
        let wait = match backlog {
            false => clock.base + clock.target,
            true => clock.base * FIRST_TRIAL,
        };
        self.due = (unacked || backlog).then(|| now + wait.max(clock.srtt * 2));
        let due = self.due.filter(|&d| self.at.is_none_or(|a| d < a))?;
        self.at = Some(due);
        Some(due)
    }

    /// An event ran at `now`: `Fire` (send a probe; the next is five base round trips later,
    /// at least two smoothed),
    /// `Later(t)` (re-armed since: run again at `t`), or `Stop` (stopped, or a stale event).
    pub fn on_timer(&mut self, now: Time, clock: Clock) -> Tick {
        if self.at != Some(now) {
            return Tick::Stop;
        }
        match self.due {
            None => {
                self.at = None;
                Tick::Stop
            }
            Some(t) if now < t => {
                self.at = Some(t);
                Tick::Later(t)
            }
            Some(_) => {
                let next = now + (clock.base * RETRY).max(clock.srtt * 2);
                (self.due, self.at, self.sent_at) = (Some(next), Some(next), Some(now));
                Tick::Fire(next)
            }
        }
    }

    /// The ACK of the probe sent at `sent` came back at `now`: true when its queueing delay,
    /// over the base round trip, is under the target, so what was sent before the probe and
    /// is not acknowledged is lost (uet-htsim: `is_probe_ack() && delay < _target_Qdelay`).
    pub fn shows_loss(now: Time, sent: Time, clock: Clock) -> bool {
        now.saturating_since(sent).0.saturating_sub(clock.base.0) < clock.target.0
    }
}

/// What times a flow's probes.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// The congestion control's base round trip (NSCC's).
    pub base: Duration,
    /// Its target queueing delay.
    pub target: Duration,
    /// The smoothed round trip the flow measures (RFC 6298; zero before a sample).
    pub srtt: Duration,
}

/// What the probe timer's event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    Fire(Time),
    Later(Time),
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_waits_one_rtt_and_target_when_idle_three_rtts_with_data_then_probes_every_five() {
        let us = Duration::from_us;
        let clock = Clock {
            base: us(2),
            target: us(1),
            srtt: us(1),
        };
        let mut p = Probe::default();
        let t = |x| Time::ZERO + us(x);
        assert_eq!(
            p.on_ack(t(10), true, false, clock),
            Some(t(13)),
            "base + target: nothing left to send"
        );
        assert_eq!(
            p.on_ack(t(11), true, true, clock),
            None,
            "3 base: later than the pending event"
        );
        assert_eq!(p.due, Some(t(17)));
        assert_eq!(p.on_timer(t(13), clock), Tick::Later(t(17)));
        assert_eq!(p.on_timer(t(17), clock), Tick::Fire(t(27)), "then every 5 base");
        assert_eq!(p.sent_at, Some(t(17)));
        assert_eq!(
            p.on_ack(t(18), false, true, clock),
            Some(t(24)),
            "earlier than the pending event: a new one"
        );
        assert_eq!(
            p.on_timer(t(24), clock),
            Tick::Fire(t(34)),
            "data waits to be sent: it still fires"
        );
        assert_eq!(
            p.on_timer(t(27), clock),
            Tick::Stop,
            "the superseded event is stale"
        );
        assert_eq!(
            p.on_ack(t(30), false, false, clock),
            None,
            "all acknowledged, nothing to send"
        );
        assert_eq!(p.on_timer(t(34), clock), Tick::Stop);
        assert_eq!(p.at, None);
        // A probe answered within base + target shows loss; one that queued longer does not.
        assert!(Probe::shows_loss(t(19), t(17), clock));
        assert!(!Probe::shows_loss(t(21), t(17), clock));
    }

    #[test]
    fn a_queue_that_stretches_the_round_trip_stretches_the_timer() {
        // An incast: ACKs come once per 20 us queue drain on a 2 us path. The timer waits two
        // smoothed round trips, not three base ones, so an ACK on time stops it first.
        let us = Duration::from_us;
        let clock = Clock {
            base: us(2),
            target: us(1),
            srtt: us(20),
        };
        let mut p = Probe::default();
        let t = |x| Time::ZERO + us(x);
        assert_eq!(p.on_ack(t(0), true, true, clock), Some(t(40)));
        assert_eq!(p.on_ack(t(20), true, true, clock), None);
        assert_eq!(p.on_timer(t(40), clock), Tick::Later(t(60)));
        assert_eq!(
            p.on_timer(t(60), clock),
            Tick::Fire(t(100)),
            "overdue: a probe, the next 2 srtt on"
        );
    }
}
