//! Quantities with units, parsed from the strings users write in scenario files.
//!
//! Rates and sizes follow the conventions of the datasheets users read: rates are decimal
//! (100 Gb/s = 100e9 bit/s); sizes say which prefix they mean (`KB` = 1000 B, `KiB` = 1024 B).
//! Parsing is exact decimal arithmetic (no floating point), so `"1.5us"` is exactly 1 500 000 ps.

use crate::parse::{Limit, UnitError, parse_quantity};
use crate::time::Duration;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

const BYTE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("PiB", 1 << 50),
];

impl Bytes {
    /// The largest size a scenario may configure: 1 PiB (2^50 B).
    pub const LIMIT: Limit = Limit {
        max: 1 << 50,
        text: "1PiB (2^50 bytes)",
    };

    /// Parse `"4KiB"`, `"42MB"`, `"1500B"`.
    pub fn parse(s: &str) -> Result<Self, UnitError> {
        // A lowercase `b` is a bit (IEC 80000-13): "8Mb" and "8mb" are refused, not guessed.
        if let Some(bits) = s.trim().strip_suffix('b') {
            // The prefix as the byte units spell it: "16mb" -> "16MB", "4kib" -> "4KiB".
            let bytes: String = bits
                .chars()
                .map(|c| if c == 'i' { c } else { c.to_ascii_uppercase() })
                .collect();
            return Err(UnitError(format!(
                "\"{s}\" is in bits; sizes are in bytes (did you mean \"{bytes}B\"?)"
            )));
        }
        parse_quantity(s, "a size", "4KiB", BYTE_UNITS, Self::LIMIT).map(Bytes)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        match b {
            _ if b >= 1 << 20 && b % (1 << 20) == 0 => write!(f, "{}MiB", b >> 20),
            _ if b >= 1_000_000 && b % 1_000_000 == 0 => write!(f, "{}MB", b / 1_000_000),
            _ if b >= 1 << 10 && b % (1 << 10) == 0 => write!(f, "{}KiB", b >> 10),
            _ if b >= 1000 && b % 1000 == 0 => write!(f, "{}KB", b / 1000),
            _ => write!(f, "{b}B"),
        }
    }
}

/// A line rate in bits per second (decimal prefixes, as on datasheets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
    ("b/s", 1),
    ("Kb/s", 1_000),
    ("Mb/s", 1_000_000),
    ("Gb/s", 1_000_000_000),
    ("Tb/s", 1_000_000_000_000),
    ("G", 1_000_000_000),
];

impl BitRate {
    pub const fn gbps(g: u64) -> Self {
        BitRate(g * 1_000_000_000)
    }

    /// The fastest rate a scenario may configure: 100 Tb/s (a 1.6T port is 1.6 Tb/s).
    pub const LIMIT: Limit = Limit {
        max: 100_000_000_000_000,
        text: "100Tbps",
    };

    /// Parse `"100Gbps"`, `"25Gb/s"`, `"400G"`.
    pub fn parse(s: &str) -> Result<Self, UnitError> {
        // Case does not matter ("25gbps", "400g") except for bytes: "GBps" is not a bit rate.
        let t = s.trim_end();
        let tail = t.get(t.len().saturating_sub(3)..).unwrap_or("");
        if tail.starts_with('B')
            && (tail[1..].eq_ignore_ascii_case("ps") || tail[1..].eq_ignore_ascii_case("/s"))
        {
            return Err(UnitError(format!(
                "\"{s}\" is in bytes per second; rates are in bits per second, like \"100Gbps\""
            )));
        }
        let r = parse_quantity(s, "a rate", "100Gbps", RATE_UNITS, Self::LIMIT)?;
        if r == 0 {
            return Err(UnitError(format!(
                "a rate must be greater than zero, got \"{s}\""
            )));
        }
        Ok(BitRate(r))
    }

    /// Time to put `bytes` on the wire at this rate, rounded up to the next picosecond
    /// (exact for every standard Ethernet rate: 8 bits at 100 Gb/s is 80 ps).
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Duration {
        let ps = (bytes as u128 * 8 * 1_000_000_000_000).div_ceil(self.0 as u128);
        // Saturates rather than wraps (a petabyte at 1 bit/s); never reached by frames.
        Duration(ps.min(u64::MAX as u128) as u64)
    }

    /// Bytes that this rate carries in `d` (rounded down).
    pub fn bytes_in(self, d: Duration) -> u64 {
        (self.0 as u128 * d.0 as u128 / 8 / 1_000_000_000_000).min(u64::MAX as u128) as u64
    }

    pub fn as_gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        match r {
            _ if r % 1_000_000_000 == 0 => write!(f, "{}Gbps", r / 1_000_000_000),
            _ if r % 1_000_000 == 0 => write!(f, "{}Mbps", r / 1_000_000),
            _ if r % 1_000 == 0 => write!(f, "{}Kbps", r / 1_000),
            _ => write!(f, "{r}bps"),
        }
    }
}

/// A physical length in millimetres (cable lengths).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Length(pub u64);

const LENGTH_UNITS: &[(&str, u128)] = &[("mm", 1), ("cm", 10), ("m", 1000), ("km", 1_000_000)];

impl Length {
    /// The longest cable a scenario may configure: 40,000 km (once round the Earth; 200 ms).
    pub const LIMIT: Limit = Limit {
        max: 40_000 * 1_000_000,
        text: "40000km",
    };

    /// Parse `"3m"`, `"50cm"`, `"2km"`.
    pub fn parse(s: &str) -> Result<Self, UnitError> {
        parse_quantity(s, "a length", "3m", LENGTH_UNITS, Self::LIMIT).map(Length)
    }
    pub fn millimetres(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % 1000 == 0 {
            write!(f, "{}m", self.0 / 1000)
        } else {
            write!(f, "{}mm", self.0)
        }
    }
}

/// Serde glue shared by every unit type: deserialize from a string with units (and, where
/// it is unambiguous, from a bare integer in base units), serialize as the display string.
macro_rules! unit_serde {
    ($ty:ty, $expecting:expr, $from_int:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        <$ty>::parse(s).map_err(|e| E::custom(e.0))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        let from_int: Option<fn(u64) -> $ty> = $from_int;
                        match (from_int, u64::try_from(v)) {
                            (Some(f), Ok(u)) => <$ty>::LIMIT
                                .check(u as u128, "the number", &v.to_string())
                                .map(f)
                                .map_err(|e| E::custom(e.0)),
                            (Some(_), Err(_)) => Err(E::custom(format!("must not be negative, got {v}"))),
                            (None, _) => Err(E::custom(format!(
                                "a bare number ({v}) is ambiguous here; write it with a unit, {}",
                                $expecting
                            ))),
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(i64::try_from(v).map_err(|_| {
                            E::custom(format!(
                                "{v} is over the simulator's limit of {}",
                                <$ty>::LIMIT.text
                            ))
                        })?)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "got the number {v}; write it with a unit, {}",
                            $expecting
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
}

unit_serde!(
    Bytes,
    "a size such as \"4KiB\", \"42MB\" or a byte count",
    Some(Bytes)
);
unit_serde!(BitRate, "a rate such as \"100Gbps\"", None);
unit_serde!(Length, "a length such as \"3m\"", None);
unit_serde!(Duration, "a duration such as \"1us\" or \"250ns\"", None);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_ignore_case_unless_it_changes_their_meaning() {
        assert_eq!(BitRate::parse("25gbps").unwrap(), BitRate::gbps(25));
        assert_eq!(BitRate::parse("400g").unwrap(), BitRate::gbps(400));
        for bytes in ["25GBps", "25GB/s", "10GB/S", "1BPS"] {
            let e = BitRate::parse(bytes).unwrap_err().0;
            assert!(e.contains("bytes per second"), "{e}");
        }
        assert_eq!(Bytes::parse("4KIB").unwrap(), Bytes(4096));
        let e = Bytes::parse("16mb").unwrap_err().0;
        assert!(e.contains("did you mean \"16MB\""), "{e}");
        let e = Bytes::parse("4kib").unwrap_err().0;
        assert!(e.contains("did you mean \"4KiB\""), "{e}");
        assert_eq!(Bytes::parse("2mB").unwrap(), Bytes(2_000_000));
        for bits in ["8Mb", "8mb", "1500b", "4kib"] {
            let e = Bytes::parse(bits).unwrap_err().0;
            assert!(e.contains("in bits"), "{bits}: {e}");
        }
        assert_eq!(Duration::parse("1MS").unwrap(), Duration::parse("1ms").unwrap());
        assert_eq!(Length::parse("3M").unwrap(), Length::parse("3m").unwrap());
    }

    #[test]
    fn sizes_parse_with_decimal_and_binary_prefixes() {
        assert_eq!(Bytes::parse("42MB").unwrap(), Bytes(42_000_000));
        assert_eq!(Bytes::parse("32MiB").unwrap(), Bytes(32 * 1024 * 1024));
        assert_eq!(Bytes::parse("4KiB").unwrap(), Bytes(4096));
        assert_eq!(Bytes::parse("1.5KB").unwrap(), Bytes(1500));
        assert_eq!(Bytes::parse("1_000B").unwrap(), Bytes(1000));
    }

    #[test]
    fn bad_sizes_say_what_was_expected() {
        let e = Bytes::parse("12 parsecs").unwrap_err().0;
        assert!(e.contains("expected a size like \"4KiB\""), "{e}");
        assert!(Bytes::parse("-5MB").unwrap_err().0.contains("negative"));
        assert!(Bytes::parse("5Mb").unwrap_err().0.contains("bits"));
        assert!(Bytes::parse("0.5B").unwrap_err().0.contains("resolution"));
        assert!(Bytes::parse("").is_err());
        assert!(Bytes::parse("1.2.3MB").is_err());
    }

    #[test]
    fn rates_are_decimal() {
        assert_eq!(BitRate::parse("100Gbps").unwrap(), BitRate(100_000_000_000));
        assert_eq!(BitRate::parse("25Gb/s").unwrap(), BitRate::gbps(25));
        assert_eq!(BitRate::parse("2.5Gbps").unwrap(), BitRate(2_500_000_000));
        assert_eq!(BitRate::parse("200Gbps").unwrap(), BitRate::gbps(200));
        assert_eq!(BitRate::parse("400G").unwrap(), BitRate(400_000_000_000));
        assert_eq!(BitRate::parse("0.4Tbps").unwrap(), BitRate::gbps(400));
        assert!(
            BitRate::parse("0Gbps")
                .unwrap_err()
                .0
                .contains("greater than zero")
        );
        assert!(BitRate::parse("100GBps").is_err());
    }

    #[test]
    fn serialization_time_is_exact_at_standard_rates() {
        // 1 byte = 8 bits; at 100 Gb/s one bit lasts 10 ps.
        assert_eq!(BitRate::gbps(100).tx_time(1), Duration(80));
        assert_eq!(BitRate::gbps(800).tx_time(1), Duration(10));
        assert_eq!(BitRate::gbps(400).tx_time(1), Duration(20));
        assert_eq!(BitRate::gbps(200).tx_time(4178), Duration(4178 * 40));
        assert_eq!(BitRate::gbps(25).tx_time(4178), Duration(4178 * 320));
        // 1 bit at 3 bit/s is 333333333333.33 ps: rounded up.
        assert_eq!(BitRate(3).tx_time(1), Duration(2_666_666_666_667));
        assert_eq!(BitRate::gbps(100).bytes_in(Duration(80_000)), 1000);
    }

    #[test]
    fn lengths_parse() {
        assert_eq!(Length::parse("3m").unwrap(), Length(3000));
        assert_eq!(Length::parse("0.5m").unwrap(), Length(500));
        assert_eq!(Length::parse("2km").unwrap(), Length(2_000_000));
    }

    #[test]
    fn display_round_trips() {
        for s in ["32MiB", "42MB", "4KiB", "1500B"] {
            assert_eq!(Bytes::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(BitRate::parse("400Gbps").unwrap().to_string(), "400Gbps");
    }
}
