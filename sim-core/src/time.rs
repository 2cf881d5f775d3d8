//! Simulated time in integer picoseconds.
//!
//! [`Time`] is an instant since the start of the run; [`Duration`] a span. Only meaningful
//! operators exist: `Time + Duration = Time`, `Time - Time = Duration`, `Duration * n`.
//! There is no floating-point time anywhere in the simulator.

use crate::parse::{Limit, UnitError, parse_quantity};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub u64);

const TIME_UNITS: &[(&str, u128)] = &[
    ("ps", 1),
    ("ns", 1_000),
    ("us", 1_000_000),
    ("µs", 1_000_000),
    ("ms", 1_000_000_000),
    ("s", 1_000_000_000_000),
    ("min", 60_000_000_000_000),
    ("h", 3_600_000_000_000_000),
];

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    /// The span from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    /// The longest duration a scenario may configure: 10^6 s (about 11.6 days), so that sums
    /// and small multiples of configured times stay far inside 64-bit picoseconds (2^64 ps is
    /// about 213 days).
    pub const LIMIT: Limit = Limit {
        max: 1_000_000 * 1_000_000_000_000,
        text: "1000000s (about 11.6 days)",
    };

    pub const fn from_ns(ns: u64) -> Self {
        Duration(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        Duration(us * 1_000_000)
    }
    /// Parse `"1us"`, `"250ns"`, `"1.5ms"`, `"0s"`.
    pub fn parse(s: &str) -> Result<Self, UnitError> {
        parse_quantity(s, "a duration", "1us", TIME_UNITS, Self::LIMIT).map(Duration)
    }

    /// `self * n`, or None past [`Duration::LIMIT`].
    pub fn checked_mul(self, n: u64) -> Option<Duration> {
        self.0
            .checked_mul(n)
            .filter(|&v| v <= Self::LIMIT.max)
            .map(Duration)
    }

    /// `self + d`, or None past [`Duration::LIMIT`].
    pub fn checked_add(self, d: Duration) -> Option<Duration> {
        self.0
            .checked_add(d.0)
            .filter(|&v| v <= Self::LIMIT.max)
            .map(Duration)
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Duration) -> Time {
        Time(self.0 + d.0)
    }
}
impl AddAssign<Duration> for Time {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Sub for Time {
    type Output = Duration;
    /// Panics in debug builds if `rhs` is later than `self` (a causality bug).
    #[inline]
    fn sub(self, rhs: Time) -> Duration {
        debug_assert!(rhs <= self, "time went backwards: {rhs} is after {self}");
        Duration(self.0 - rhs.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    #[inline]
    fn mul(self, n: u64) -> Duration {
        Duration(self.0 * n)
    }
}

fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match ps {
        0 => write!(f, "0s"),
        _ if ps % 1_000_000_000_000 == 0 => write!(f, "{}s", ps / 1_000_000_000_000),
        _ if ps % 1_000_000_000 == 0 => write!(f, "{}ms", ps / 1_000_000_000),
        _ if ps % 1_000_000 == 0 => write!(f, "{}us", ps / 1_000_000),
        _ if ps % 1_000 == 0 => write!(f, "{}ns", ps / 1_000),
        _ => write!(f, "{ps}ps"),
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(Duration::parse("1us").unwrap(), Duration(1_000_000));
        assert_eq!(Duration::parse("250ns").unwrap(), Duration(250_000));
        assert_eq!(Duration::parse("1.5us").unwrap(), Duration(1_500_000));
        assert!(Duration::parse("1.25ps").unwrap_err().0.contains("resolution"));
        assert_eq!(Duration::parse("0s").unwrap(), Duration::ZERO);
        assert_eq!(Duration::parse("2ms").unwrap(), Duration(2_000_000_000));
    }

    #[test]
    fn bad_durations_name_the_expected_form() {
        let e = Duration::parse("1 fortnight").unwrap_err().0;
        assert!(e.contains("expected a duration like \"1us\""), "{e}");
        assert!(Duration::parse("-1us").unwrap_err().0.contains("negative"));
        assert!(Duration::parse("10").is_err(), "a bare number has no unit");
    }

    #[test]
    fn arithmetic_and_display() {
        let t = Time::ZERO + Duration::from_us(3);
        assert_eq!(t - Time(1_000_000), Duration::from_us(2));
        assert_eq!(t.to_string(), "3us");
        assert_eq!(Duration(1500).to_string(), "1500ps");
        assert_eq!(Duration::from_ns(7) * 3, Duration(21_000));
    }
}
