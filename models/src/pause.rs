//! A port's two sides of IEEE 802.1Qbb PFC: [`PauseState`], the paused side (an egress that
//! must hold a priority, until when), and [`XoffState`], the pausing side (an ingress that
//! asked its peer to hold). Both keep the counters NICs show in `ethtool -S`
//! (`rx_prio{p}_pause`, `tx_prio{p}_pause`, `*_pause_duration`). The protocol, its timing and
//! headroom are in [`crate::pfc`].

use crate::ids::PortId;
use crate::pfc::PfcConfig;
use crate::prio::PrioMask;
use sim_core::{BitRate, Duration, Time};

/// The paused side of a port: which priorities its egress must hold, until when.
///
/// Only the priority mask lives in the port; the timers and counters are allocated when the
/// port first receives a PFC frame, so a fabric without PFC, or the ports of one that never
/// pause, do not carry them (392 bytes a port: 150 MB at 393,216 ports).
#[derive(Debug, Clone, Default)]
pub struct PauseState {
    /// Priorities with a pause that may still be in force (set by XOFF, cleared by XON): a
    /// port that was never paused answers `mask` without reading the timers.
    armed: PrioMask,
    t: Option<Box<PauseTimers>>,
}

#[derive(Debug, Clone)]
struct PauseTimers {
    until: [Time; 8],
    from: [Time; 8],
    /// Start of the pause interval being accumulated, per priority.
    open: [Option<Time>; 8],
    frames: [u64; 8],
    /// Total time paused, per priority.
    duration: [Duration; 8],
    /// Pause intervals as long as the watchdog or longer: PFC storms.
    storms: u64,
    /// Per priority, the origin of the pause chain the last PFC frame belonged to.
    origin: [PortId; 8],
}

/// A PFC storm, as SONiC's PFC watchdog defines one (its detection time, `pfc.watchdog`): a
/// lossless queue held paused without a break, every refresh arriving before the last pause
/// ran out and no XON, for the detection time or longer. Counted once per unbroken pause at
/// the paused egress, so the summary, `pfc_storm_detected` and `show pfcwd stats` agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub prio: u8,
    pub start: Time,
    pub end: Time,
    /// The port whose XOFF started the chain of pauses this one belonged to, as the last PFC
    /// frame of the pause said ([`PauseState::set_origin`]).
    pub origin: PortId,
}

impl PauseTimers {
    /// A port never paused.
    const NONE: PauseTimers = PauseTimers {
        until: [Time::ZERO; 8],
        from: [Time::ZERO; 8],
        open: [None; 8],
        frames: [0; 8],
        duration: [Duration::ZERO; 8],
        storms: 0,
        origin: [PortId(0); 8],
    };

    /// Close the pause interval on `p` at `end`: the storm it was, if it lasted the watchdog.
    fn close(&mut self, p: usize, end: Time, watchdog: Duration) -> Option<Held> {
        let start = self.open[p].take()?;
        let d = end.saturating_since(start);
        self.duration[p] += d;
        (d >= watchdog).then(|| {
            self.storms += 1;
            Held {
                prio: p as u8,
                start,
                end: end.max(start),
                origin: self.origin[p],
            }
        })
    }
}

impl PauseState {
    #[inline]
    fn t(&self) -> &PauseTimers {
        self.t.as_deref().unwrap_or(&PauseTimers::NONE)
    }

    fn t_mut(&mut self) -> &mut PauseTimers {
        self.t.get_or_insert_with(|| Box::new(PauseTimers::NONE))
    }

    /// True while priority `p` may not start a frame.
    #[inline]
    pub fn is_paused(&self, p: usize, now: Time) -> bool {
        let t = self.t();
        t.from[p] <= now && now < t.until[p]
    }

    /// Priorities that may not start a frame now.
    #[inline]
    pub fn mask(&self, now: Time) -> PrioMask {
        if self.armed.is_empty() {
            return PrioMask::EMPTY;
        }
        self.armed
            .iter()
            .filter(|&p| self.is_paused(p as usize, now))
            .collect()
    }

    /// PFC frames received for priority `p` (obeyed or not).
    pub fn frames(&self, p: usize) -> u64 {
        self.t().frames[p]
    }

    /// Time paused on priority `p` (closed intervals; see [`Self::finish`]).
    pub fn duration(&self, p: usize) -> Duration {
        self.t().duration[p]
    }

    /// Pause intervals as long as the watchdog or longer ([`Held`]).
    pub fn storms(&self) -> u64 {
        self.t().storms
    }

    /// Count a PFC frame for `p` that is not obeyed (a watchdog disabled PFC on it).
    pub fn count_frame(&mut self, p: usize) {
        self.t_mut().frames[p] += 1;
    }

    /// A PFC frame for `prio` with `quanta` arrived. Returns when the pause ends, so the
    /// caller can restart the port then, and the storm the frame ended, if any (an XON, or a
    /// new pause after the last one ran out).
    pub fn on_frame(
        &mut self,
        now: Time,
        prio: u8,
        quanta: u16,
        rate: BitRate,
        response: Duration,
        watchdog: Duration,
    ) -> (Time, Option<Held>) {
        let p = prio as usize;
        self.t_mut().frames[p] += 1;
        let start = now + response;
        if quanta == 0 {
            // XON: resume now (a port resumes as soon as it parses the frame).
            return (now, self.lift(prio, now, watchdog));
        }
        let end = start + PfcConfig::pause_time(rate, quanta);
        let t = self.t_mut();
        let continuing = t.open[p].is_some() && t.until[p] >= start;
        let mut storm = None;
        if !continuing {
            let until = t.until[p];
            storm = t.close(p, until, watchdog);
            t.open[p] = Some(start);
            t.from[p] = start;
        }
        t.until[p] = end;
        self.armed.insert(prio);
        (end, storm)
    }

    /// The pause on `p` just received (after [`Self::on_frame`]) belongs to the chain of
    /// pauses `origin` started: the PFC frame says so (`crate::packet::Packet::pause_origin`),
    /// so the paused side knows it without reading the pausing side's state.
    pub fn set_origin(&mut self, p: u8, origin: PortId) {
        self.t_mut().origin[p as usize] = origin;
    }

    /// The origin of the chain of pauses the last PFC frame on `p` belonged to.
    pub fn origin(&self, p: u8) -> PortId {
        self.t().origin[p as usize]
    }

    /// When the continuous pause on `p` in force (or about to be: frames act after the
    /// port's response time) began; None when no pause is pending.
    pub fn paused_since(&self, p: u8, now: Time) -> Option<Time> {
        let (t, p) = (self.t(), p as usize);
        t.open[p].filter(|_| now < t.until[p])
    }

    /// When the pause on `p` ends, as the frames received so far set it.
    pub fn paused_until(&self, p: u8) -> Time {
        self.t().until[p as usize]
    }

    /// Lift the pause on `p` now, as an XON would (a PFC watchdog disabling PFC on it).
    /// Returns the storm it ended, if any.
    pub fn lift(&mut self, p: u8, now: Time, watchdog: Duration) -> Option<Held> {
        let i = p as usize;
        let t = self.t_mut();
        let storm = t.close(i, now.max(t.from[i]).min(t.until[i]), watchdog);
        t.until[i] = now;
        self.armed.remove(p);
        storm
    }

    /// Whether the timers were never allocated (no PFC frame arrived).
    #[cfg(test)]
    pub(crate) fn t_is_none(&self) -> bool {
        self.t.is_none()
    }

    /// Close every open interval at `now` (end of run) for the counters. Returns the storms
    /// among them.
    pub fn finish(&mut self, now: Time, watchdog: Duration) -> Vec<Held> {
        let Some(t) = self.t.as_deref_mut() else {
            return Vec::new();
        };
        (0..8)
            .filter_map(|p| {
                let end = t.until[p].min(now);
                t.close(p, end, watchdog)
            })
            .collect()
    }
}

/// The pausing side of a port: which priorities it has asked its peer to hold.
///
/// As with [`PauseState`], the port holds the masks; the timers, counters and pause-chain
/// origins are allocated when first written (the port enters XOFF or sends a PFC frame).
#[derive(Debug, Clone, Default)]
pub struct XoffState {
    /// Priorities in XOFF.
    pub mask: PrioMask,
    /// Priorities held in XOFF whatever the buffer holds (a `pfc-storm` fault).
    pub forced: PrioMask,
    /// A refresh event is scheduled for this port.
    pub refresh_pending: bool,
    t: Option<Box<XoffTimers>>,
}

#[derive(Debug, Clone)]
struct XoffTimers {
    /// When this port first asked its peer to pause (any priority).
    first: Option<Time>,
    since: [Time; 8],
    frames: [u64; 8],
    /// Total time in XOFF, per priority.
    duration: [Duration; 8],
    /// XOFF periods as long as the watchdog or longer (`tx_pause_storm_warning_events`): the
    /// pausing side of a [`Held`] storm.
    storms: u64,
    /// Per priority, the port whose XOFF started the chain of pauses this one belongs to:
    /// itself when its own buffer filled, else the origin of the pause that stalled the
    /// egress its frames wait in.
    origin: [PortId; 8],
}

impl XoffTimers {
    /// A port never in XOFF.
    const NONE: XoffTimers = XoffTimers {
        first: None,
        since: [Time::ZERO; 8],
        frames: [0; 8],
        duration: [Duration::ZERO; 8],
        storms: 0,
        origin: [PortId(0); 8],
    };
}

impl XoffState {
    #[inline]
    fn t(&self) -> &XoffTimers {
        self.t.as_deref().unwrap_or(&XoffTimers::NONE)
    }

    fn t_mut(&mut self) -> &mut XoffTimers {
        self.t.get_or_insert_with(|| Box::new(XoffTimers::NONE))
    }

    pub fn enter(&mut self, now: Time, p: u8) {
        let t = self.t_mut();
        t.first.get_or_insert(now);
        t.since[p as usize] = now;
        self.mask.insert(p);
    }

    /// Whether the timers were never allocated (never in XOFF).
    #[cfg(test)]
    pub(crate) fn t_is_none(&self) -> bool {
        self.t.is_none()
    }

    /// When this port first asked its peer to pause (any priority).
    pub fn first(&self) -> Option<Time> {
        self.t().first
    }

    /// PFC frames this port sent for priority `p`.
    pub fn frames(&self, p: usize) -> u64 {
        self.t().frames[p]
    }

    /// Count a PFC frame sent for priority `p`.
    pub fn count_frame(&mut self, p: usize) {
        self.t_mut().frames[p] += 1;
    }

    /// Time in XOFF on priority `p` (closed periods; see [`Self::finish`]).
    pub fn duration(&self, p: usize) -> Duration {
        self.t().duration[p]
    }

    /// XOFF periods as long as the watchdog or longer (the pausing side of a storm).
    pub fn storms(&self) -> u64 {
        self.t().storms
    }

    /// The port whose XOFF started the pause chain this port's XOFF on `p` belongs to.
    pub fn origin(&self, p: usize) -> PortId {
        self.t().origin[p]
    }

    pub fn set_origin(&mut self, p: usize, origin: PortId) {
        self.t_mut().origin[p] = origin;
    }

    /// Leave XOFF on `p`, counting the period as a storm warning when it lasted the watchdog.
    pub fn leave(&mut self, now: Time, p: u8, watchdog: Duration) {
        self.mask.remove(p);
        let t = self.t_mut();
        let d = now - t.since[p as usize];
        t.duration[p as usize] += d;
        if d >= watchdog {
            t.storms += 1;
        }
    }

    /// Close the XOFF periods still open at the end of the run (they stay open in `mask`).
    pub fn finish(&mut self, now: Time, watchdog: Duration) {
        for p in self.mask.iter() {
            self.leave(now, p, watchdog);
            self.mask.insert(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_port_resumes_on_xon_and_counts_the_duration() {
        let mut s = PauseState::default();
        let rate = BitRate::gbps(100);
        let resp = Duration::from_ns(300);
        let end = s.on_frame(Time(0), 3, 0xffff, rate, resp, Duration::from_us(1000));
        assert_eq!(end.0, Time(300_000) + PfcConfig::pause_time(rate, 0xffff));
        assert!(!s.is_paused(3, Time(100_000)), "not before the response time");
        assert!(s.is_paused(3, Time(400_000)));
        assert!(!s.is_paused(2, Time(400_000)), "other priorities flow");
        s.on_frame(Time(2_300_000), 3, 0, rate, resp, Duration::from_us(1000));
        assert!(!s.is_paused(3, Time(2_300_001)));
        assert_eq!(s.duration(3), Duration(2_000_000));
        assert_eq!(s.frames(3), 2);
    }

    #[test]
    fn refreshed_pause_is_one_interval_and_expired_pause_ends_by_itself() {
        let mut s = PauseState::default();
        let rate = BitRate::gbps(100);
        let q = 1000; // 5.12 us
        s.on_frame(Time(0), 0, q, rate, Duration::ZERO, Duration::from_us(8));
        s.on_frame(Time(3_000_000), 0, q, rate, Duration::ZERO, Duration::from_us(8));
        assert!(s.is_paused(0, Time(7_000_000)));
        assert!(!s.is_paused(0, Time(8_200_000)), "expired without a refresh");
        let held = s.finish(Time(20_000_000), Duration::from_us(8));
        assert_eq!(s.duration(0), Duration(3_000_000 + 5_120_000));
        assert_eq!(s.storms(), 1, "8.12 us continuous > 8 us watchdog");
        let (start, end) = (Time::ZERO, Time(8_120_000));
        assert_eq!(
            held,
            vec![Held {
                prio: 0,
                start,
                end,
                origin: PortId(0)
            }],
            "closed where it ran out"
        );
    }

    #[test]
    fn a_pause_exactly_the_watchdog_long_is_a_storm_and_a_shorter_one_is_not() {
        // SONiC's watchdog detects a storm once the queue has been paused for the detection
        // time; the watchdog lifting the pause at that instant must count it too.
        let (rate, w) = (BitRate::gbps(100), Duration::from_us(20));
        let mut s = PauseState::default();
        s.on_frame(Time::ZERO, 3, 0xffff, rate, Duration::ZERO, w);
        let held = s.lift(3, Time(20_000_000), w);
        assert_eq!(
            held.map(|h| (h.start, h.end)),
            Some((Time::ZERO, Time(20_000_000)))
        );
        s.on_frame(Time(30_000_000), 3, 0xffff, rate, Duration::ZERO, w);
        let (_, ended) = s.on_frame(Time(49_999_999), 3, 0, rate, Duration::ZERO, w);
        assert_eq!(ended, None, "19.999999 us is not a storm");
        assert_eq!(s.storms(), 1);
    }
}
