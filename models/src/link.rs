//! A link direction: propagation only (serialization belongs to the sending [`Port`]).
//!
//! Signals travel about 5 ns per metre in copper twinax (DAC) and in fibre (velocity factor
//! about 0.67 c; IEEE 802.3 clause 30.5 and vendor DAC datasheets). A link in flight keeps its
//! packets in a FIFO (in the network's [`PacketPool`]) with their arrival times; the
//! simulation holds one pending event per busy link, for the head packet only.
//!
//! [`Port`]: crate::port::Port

use crate::packet::Packet;
use crate::pool::{Fifo, PacketPool};
use rand::RngExt;
use sim_core::{Duration, Length, SimRng, Time};

/// Propagation delay per metre of cable: 5 ns.
pub const PS_PER_MM: u64 = 5;

/// Propagation delay of a cable of the given length.
pub fn cable_delay(len: Length) -> Duration {
    Duration(len.millimetres() * PS_PER_MM)
}

/// The wire leaving one port. Not `Clone`: its FIFO indexes the network's packet pool, and a
/// copy would free the same slots twice.
/// A link that loses frames stores how, out of line (most cables lose none: a cable's hot
/// state stays 24 bytes).
#[derive(Debug, Default)]
pub struct Link {
    pub delay: Duration,
    errors: Option<Box<Lossy>>,
    flight: Fifo,
}

/// A lossy cable's errors and the random stream its frame losses are drawn from: one stream
/// per cable direction, so that a frame lost on one cable cannot shift the draws of another
/// (and a partition of the fabric draws the same losses as the whole).
#[derive(Debug)]
struct Lossy {
    errors: Errors,
    rng: SimRng,
    tally: Tally,
}

/// What the receiver's FEC counters are made of (`crate::fec::FecCounters`).
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    /// Frame bits received, and frames lost to a codeword the FEC could not correct.
    bits: u64,
    fec_lost: u64,
    /// Time the cable was down, and since when it is.
    down: Duration,
    down_since: Option<Time>,
}

/// rand's `Bernoulli` scale (2^64): a draw of `p` is one `u64` below `p` x 2^64.
const SCALE: f64 = 2.0 * (1u64 << 63) as f64;

/// How a cable loses frames.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Errors {
    /// Probability that a frame is corrupted on the way (discarded by the receiver's FCS check).
    pub loss: f64,
    /// Bit error rate after FEC: a frame of b bits is lost with probability 1-(1-ber)^b.
    pub ber: f64,
    /// Bit errors before FEC, as the FEC leaves them ([`crate::fec`]).
    pub fec: crate::fec::BitErrors,
}

impl Link {
    /// A cable losing frames with probability `loss` and bits at `ber` (unit tests).
    #[cfg(test)]
    pub fn new(delay: Duration, loss: f64, ber: f64) -> Self {
        Link::with_errors(
            delay,
            Errors {
                loss,
                ber,
                ..Errors::default()
            },
            || sim_core::RngStreams::new(1).stream("link-loss", 0),
        )
    }

    /// A link losing frames as `errors` says, drawing from the stream `rng` makes (none lost:
    /// kept inline as nothing, and no stream made).
    pub fn with_errors(delay: Duration, errors: Errors, rng: impl FnOnce() -> SimRng) -> Self {
        let lossless = errors.loss == 0.0 && errors.ber == 0.0 && errors.fec.pre_fec_ber == 0.0;
        Link {
            delay,
            errors: (!lossless).then(|| {
                Box::new(Lossy {
                    errors,
                    rng: rng(),
                    tally: Tally::default(),
                })
            }),
            flight: Fifo::default(),
        }
    }

    /// Draw whether a frame of `frame` bytes arrives corrupted (its FCS fails). The draw is
    /// rand's `random_bool(loss)` (one `u64` against loss x 2^64); the frames lost to the FEC
    /// are those whose draw falls in its share of it, below P(a codeword fails) x 2^64.
    #[inline]
    pub fn corrupts(&mut self, frame: u16) -> bool {
        let (loss, fec_loss) = self.loss_of(frame);
        let Some(l) = self.errors.as_deref_mut() else {
            return false;
        };
        if l.errors.fec.fec != crate::fec::Fec::None {
            l.tally.bits += frame as u64 * 8;
        }
        if loss <= 0.0 {
            return false;
        }
        if loss >= 1.0 {
            return true;
        }
        let v: u64 = l.rng.random();
        if v < (fec_loss * SCALE) as u64 {
            l.tally.fec_lost += 1;
        }
        v < (loss * SCALE) as u64
    }

    /// Probability that a frame of `frame` bytes is lost on this cable, and that a codeword
    /// under it fails (a part of the first).
    #[inline]
    pub fn loss_of(&self, frame: u16) -> (f64, f64) {
        let Some(Lossy { errors: e, .. }) = self.errors.as_deref() else {
            return (0.0, 0.0);
        };
        if e.ber == 0.0 && e.fec.pre_fec_ber == 0.0 {
            return (e.loss, 0.0);
        }
        let bit_loss = -(frame as f64 * 8.0 * (-e.ber).ln_1p()).exp_m1();
        let fec_loss = e.fec.frame_loss(frame as u32);
        (
            1.0 - (1.0 - e.loss) * (1.0 - bit_loss) * (1.0 - fec_loss),
            fec_loss,
        )
    }

    /// The cable went down (or came back up) at `now`: its FEC counts no codewords meanwhile.
    pub fn set_up(&mut self, up: bool, now: Time) {
        if let Some(l) = self.errors.as_deref_mut() {
            let t = &mut l.tally;
            match (up, t.down_since) {
                (false, None) => t.down_since = Some(now),
                (true, Some(s)) => (t.down, t.down_since) = (t.down + now.saturating_since(s), None),
                _ => {}
            }
        }
    }

    /// The FEC counters of the port this cable arrives at, for a run that ended at `end` on a
    /// cable of `rate` (None without FEC or pre-FEC bit errors): the codewords of the time
    /// it was up, 5,120 MAC bits each, idle or not (`crate::fec::BitErrors::counters`),
    /// drawn from the stream `rng` makes (made only for such a cable).
    pub fn fec_counters(
        &self,
        rate: sim_core::BitRate,
        end: Time,
        rng: impl FnOnce() -> SimRng,
    ) -> Option<crate::fec::FecCounters> {
        let l = self.errors.as_deref()?;
        let fec = &l.errors.fec;
        if fec.fec == crate::fec::Fec::None || fec.pre_fec_ber <= 0.0 {
            return None;
        }
        let t = &l.tally;
        let down = t.down + t.down_since.map_or(Duration::ZERO, |s| end.saturating_since(s));
        let up = end.saturating_since(Time::ZERO).0.saturating_sub(down.0);
        let per = crate::fec::CODEWORD_MAC_BITS;
        let codewords = (up as f64 * 1e-12 * rate.0 as f64 / per) as u64;
        let under = (t.bits as f64 / per) as u64;
        Some(fec.counters(codewords, under, t.fec_lost, &mut rng()))
    }

    /// The last bit of `p` left the sender at `now`. Returns the arrival time when the link
    /// was idle, i.e. when the caller must schedule the head-arrival event.
    #[inline]
    pub fn send(&mut self, pool: &mut PacketPool, now: Time, p: Packet) -> Option<Time> {
        let at = now + self.delay;
        let idle = self.flight.is_empty();
        pool.push(&mut self.flight, at, p);
        idle.then_some(at)
    }

    /// The head packet arrives at `now`. Returns it and, if more are in flight, the next
    /// arrival time; None for a stale event (the link was cut since it was scheduled).
    #[inline]
    pub fn arrive(&mut self, pool: &mut PacketPool, now: Time) -> Option<(Packet, Option<Time>)> {
        if pool.front(&self.flight).is_none_or(|(t, _)| t != now) {
            return None;
        }
        let (_, p) = pool.pop(&mut self.flight)?;
        Some((p, pool.front(&self.flight).map(|(t, _)| t)))
    }

    /// The memory of the head packet, for a prefetch hint.
    #[inline]
    pub fn head(&self, pool: &PacketPool) -> Option<*const u8> {
        pool.front_slot(&self.flight)
    }

    /// The head frame, for a prefetch hint of what its arrival will touch.
    #[inline]
    pub fn head_frame<'a>(&self, pool: &'a PacketPool) -> Option<&'a Packet> {
        pool.front(&self.flight).map(|(_, p)| p)
    }

    /// The memory of the frame behind the head, whose arrival time the head's arrival reads.
    #[inline]
    pub fn second(&self, pool: &PacketPool) -> Option<*const u8> {
        pool.second_slot(&self.flight)
    }

    /// The slots a frame sent next will touch: the last frame's on the wire, and a free one.
    #[inline]
    pub fn send_slots(&self, pool: &PacketPool) -> [Option<*const u8>; 2] {
        pool.push_slots(&self.flight)
    }

    /// Move the frames on the wire from pool `from` to pool `to` (`PacketPool::move_to`).
    pub fn rehome(&mut self, from: &mut PacketPool, to: &mut PacketPool) {
        from.move_to(&mut self.flight, to);
    }

    /// The cable was cut: everything on it is lost.
    pub fn cut(&mut self, pool: &mut PacketPool) -> Vec<Packet> {
        std::iter::from_fn(|| pool.pop(&mut self.flight).map(|(_, p)| p)).collect()
    }

    /// Packets currently on the wire.
    pub fn in_flight<'a>(&'a self, pool: &'a PacketPool) -> impl Iterator<Item = &'a Packet> {
        pool.iter(&self.flight).map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::*;
    use crate::packet::Kind;

    fn pkt(seq: u32) -> Packet {
        Packet::control(Kind::Data, FlowId(0), HostId(1), seq, 64, 0)
    }

    #[test]
    fn bit_errors_lose_longer_frames_more_often() {
        let l = Link::new(Duration::ZERO, 0.0, 1e-9);
        // 1 - (1 - 1e-9)^(4178 * 8) ~= 3.34e-5.
        assert!(
            (l.loss_of(4178).0 - 3.3424e-5).abs() < 1e-8,
            "{}",
            l.loss_of(4178).0
        );
        assert!(l.loss_of(64).0 < l.loss_of(4178).0);
    }

    #[test]
    fn a_cable_stays_small_and_keeps_its_errors_out_of_line() {
        // Every frame hop touches its cable: 24 bytes, whatever error models exist.
        assert!(
            std::mem::size_of::<Link>() <= 24,
            "{}",
            std::mem::size_of::<Link>()
        );
        assert_eq!(Link::new(Duration::ZERO, 0.0, 0.0).loss_of(1500).0, 0.0);
        assert_eq!(Link::new(Duration::ZERO, 0.25, 0.0).loss_of(1500).0, 0.25);
    }

    #[test]
    fn three_metre_dac_is_15ns() {
        assert_eq!(cable_delay(Length::parse("3m").unwrap()), Duration::from_ns(15));
    }

    #[test]
    fn idle_link_asks_for_one_event_busy_link_for_none() {
        let mut l = Link::new(Duration::from_ns(100), 0.0, 0.0);
        let pool = &mut PacketPool::default();
        assert_eq!(l.send(pool, Time(0), pkt(0)), Some(Time(100_000)));
        assert_eq!(l.send(pool, Time(5), pkt(1)), None);
        assert_eq!(l.arrive(pool, Time(99_999)), None, "not yet: a stale event");
        let (p, next) = l.arrive(pool, Time(100_000)).unwrap();
        assert_eq!((p.seq, next), (0, Some(Time(100_005))));
        let (p, next) = l.arrive(pool, Time(100_005)).unwrap();
        assert_eq!((p.seq, next), (1, None));
    }

    #[test]
    fn a_cut_cable_loses_everything_in_flight_and_frees_its_slots() {
        let mut l = Link::new(Duration::from_ns(100), 0.0, 0.0);
        let pool = &mut PacketPool::default();
        for s in 0..3 {
            l.send(pool, Time(s), pkt(s as u32));
        }
        let lost: Vec<u32> = l.cut(pool).iter().map(|p| p.seq).collect();
        assert_eq!(lost, vec![0, 1, 2]);
        assert!(pool.is_empty() && l.in_flight(pool).next().is_none());
        assert_eq!(l.arrive(pool, Time(100_000)), None, "the head's event is stale");
        assert_eq!(
            l.send(pool, Time(200_000), pkt(3)),
            Some(Time(300_000)),
            "idle again"
        );
    }
}
