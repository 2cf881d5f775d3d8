//! Sets of 802.1p priorities (traffic classes 0..=7), one bit each: which priorities a port
//! holds frames for, which its peer has paused, which are lossless. Strict priority serves the
//! highest member first (IEEE 802.1Q clause 8.6.8.1).

use std::ops::{BitAnd, BitOr, Not};

/// The eight 802.1p priorities.
pub const PRIORITIES: usize = 8;

/// A set of priorities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PrioMask(u8);

impl PrioMask {
    pub const EMPTY: PrioMask = PrioMask(0);
    pub const ALL: PrioMask = PrioMask(0xff);

    /// The set holding priority `p` alone.
    #[inline]
    pub const fn of(p: u8) -> PrioMask {
        PrioMask(1 << p)
    }

    /// The set as its class-enable bits (bit p for priority p), as PFC frames carry it.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    #[inline]
    pub const fn contains(self, p: u8) -> bool {
        self.0 & 1 << p != 0
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub fn insert(&mut self, p: u8) {
        self.0 |= 1 << p;
    }

    #[inline]
    pub fn remove(&mut self, p: u8) {
        self.0 &= !(1 << p);
    }

    /// The highest priority in the set (the one strict priority serves first).
    #[inline]
    pub const fn highest(self) -> Option<u8> {
        if self.0 == 0 {
            None
        } else {
            Some(7 - self.0.leading_zeros() as u8)
        }
    }

    /// How many priorities the set holds.
    #[inline]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The priorities in the set, lowest first.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..PRIORITIES as u8).filter(move |&p| self.contains(p))
    }
}

impl FromIterator<u8> for PrioMask {
    fn from_iter<I: IntoIterator<Item = u8>>(it: I) -> Self {
        it.into_iter().fold(PrioMask::EMPTY, |m, p| m | PrioMask::of(p))
    }
}

impl BitOr for PrioMask {
    type Output = PrioMask;
    #[inline]
    fn bitor(self, o: PrioMask) -> PrioMask {
        PrioMask(self.0 | o.0)
    }
}

impl BitAnd for PrioMask {
    type Output = PrioMask;
    #[inline]
    fn bitand(self, o: PrioMask) -> PrioMask {
        PrioMask(self.0 & o.0)
    }
}

impl Not for PrioMask {
    type Output = PrioMask;
    #[inline]
    fn not(self) -> PrioMask {
        PrioMask(!self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_takes_the_highest_member() {
        let m: PrioMask = [0, 3, 5].into_iter().collect();
        assert_eq!(m.highest(), Some(5));
        assert_eq!((m & !PrioMask::of(5)).highest(), Some(3));
        assert_eq!(PrioMask::EMPTY.highest(), None);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![0, 3, 5]);
        assert_eq!((m.bits(), m.len()), (0b10_1001, 3));
    }
}
