//! The pending-event set.
//!
//! Events are ordered by `(time, insertion sequence)`: two events scheduled for the same
//! picosecond pop in the order they were pushed (FIFO on ties). Together with seeded random
//! streams this makes every run reproducible, and it matches the order NeXosim and htsim
//! document for simultaneous events.
//!
//! [`EventQueue`] is a **radix heap** (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for
//! the shortest path problem", JACM 1990). A discrete-event simulation never schedules into the
//! past, so the queue is *monotone*: every pushed time is at least the last popped one. A radix
//! heap exploits that: an event goes into bucket `64 - leading_zeros(time ^ last)`, so pushes
//! are O(1) and each event moves between buckets at most 64 times over its life, in practice
//! once or twice. Buckets are kept in push order and redistributed in order, which gives FIFO
//! on ties without storing a sequence number (entries stay 8 bytes + payload).
//!
//! [`HeapQueue`] is the textbook binary heap on `(time, seq)`, kept as the reference the radix
//! heap is tested and benchmarked against (`benches/event_queue.rs`; README, "Performance").

use crate::time::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

/// Monotone radix-heap event queue, FIFO on equal times. See the module docs.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Time of the last popped event; all pending events are at or after it.
    last: u64,
    /// Events at exactly `last`, in push order.
    now: VecDeque<(u64, E)>,
    /// `buckets[i - 1]` holds events whose time differs from `last` first in bit `i - 1`.
    buckets: Vec<Vec<(u64, E)>>,
    /// Bit `i - 1` set when `buckets[i - 1]` is non-empty.
    occupied: u64,
    len: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            last: 0,
            now: VecDeque::new(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            occupied: 0,
            len: 0,
        }
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The time of the last popped event (the simulation's "now").
    #[inline]
    pub fn now(&self) -> Time {
        Time(self.last)
    }

    /// Schedule `event` at `at`. Scheduling before the last popped time is a causality bug:
    /// it panics in debug builds and is clamped to "now" in release builds.
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        debug_assert!(
            at.0 >= self.last,
            "event scheduled in the past: {} < {}",
            at.0,
            self.last
        );
        let t = at.0.max(self.last);
        self.len += 1;
        let diff = t ^ self.last;
        if diff == 0 {
            self.now.push_back((t, event));
        } else {
            let b = 63 - diff.leading_zeros() as usize;
            self.buckets[b].push((t, event));
            self.occupied |= 1 << b;
        }
    }

    /// Remove and return the earliest event (FIFO among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.now.is_empty() {
            self.refill()?;
        }
        self.len -= 1;
        self.now.pop_front().map(|(t, e)| (Time(t), e))
    }

    /// The next event when it is due at the last popped time, found without a search (None
    /// does not mean the queue is empty): a hint of what to fetch from memory ahead of it.
    #[inline]
    pub fn next_now(&self) -> Option<&E> {
        self.now.front().map(|(_, e)| e)
    }

    /// The event after that one when it, too, is due now (a hint, as [`Self::next_now`]).
    #[inline]
    pub fn second_now(&self) -> Option<&E> {
        self.now.get(1).map(|(_, e)| e)
    }

    /// Time of the earliest pending event, without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if let Some(&(t, _)) = self.now.front() {
            return Some(Time(t));
        }
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize;
        self.buckets[b].iter().map(|e| e.0).min().map(Time)
    }

    /// Move the lowest non-empty bucket down: its minimum becomes `last`.
    #[cold]
    fn refill(&mut self) -> Option<()> {
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize;
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        self.occupied &= !(1 << b);
        self.last = bucket
            .iter()
            .map(|e| e.0)
            .min()
            .expect("occupied bucket is non-empty");
        for (t, e) in bucket.drain(..) {
            let diff = t ^ self.last;
            if diff == 0 {
                self.now.push_back((t, e));
            } else {
                let nb = 63 - diff.leading_zeros() as usize;
                debug_assert!(nb < b);
                self.buckets[nb].push((t, e));
                self.occupied |= 1 << nb;
            }
        }
        self.buckets[b] = bucket; // keep its capacity: no allocation in steady state
        Some(())
    }
}

/// Binary-heap event queue on `(time, seq)`: the reference implementation.
#[derive(Debug)]
pub struct HeapQueue<E> {
    heap: BinaryHeap<Reverse<HeapEntry<E>>>,
    seq: u64,
}

#[derive(Debug)]
struct HeapEntry<E> {
    key: (u64, u64),
    event: E,
}
impl<E> PartialEq for HeapEntry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for HeapEntry<E> {}
impl<E> PartialOrd for HeapEntry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for HeapEntry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key)
    }
}

impl<E> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> HeapQueue<E> {
    pub fn new() -> Self {
        HeapQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        self.seq += 1;
        self.heap.push(Reverse(HeapEntry {
            key: (at.0, self.seq),
            event,
        }));
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|Reverse(e)| (Time(e.key.0), e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};

    #[test]
    fn equal_times_pop_in_push_order() {
        let mut q = EventQueue::new();
        for i in 0..10 {
            q.push(Time(5), i);
        }
        q.push(Time(3), 100);
        assert_eq!(q.pop(), Some((Time(3), 100)));
        q.push(Time(5), 10); // pushed while "now" is 3: goes to a bucket, still after 0..10
        for i in 0..=10 {
            assert_eq!(q.pop(), Some((Time(5), i)));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn radix_heap_matches_binary_heap_on_random_hold_workload() {
        // Same pushes into both; every pop must agree on time and payload (so ties are FIFO).
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let (mut radix, mut heap) = (EventQueue::new(), HeapQueue::new());
        let mut id = 0u32;
        for _ in 0..1000 {
            let t = Time(rng.random_range(0..1000u64));
            radix.push(t, id);
            heap.push(t, id);
            id += 1;
        }
        for _ in 0..200_000 {
            let a = radix.pop().unwrap();
            assert_eq!(Some(a), heap.pop());
            assert_eq!(radix.now(), a.0);
            // Mix of ties (delta 0), small and huge jumps.
            for _ in 0..rng.random_range(0..3u32) {
                let delta = match rng.random_range(0..4u32) {
                    0 => 0,
                    1 => rng.random_range(0..100u64),
                    2 => rng.random_range(0..1_000_000u64),
                    _ => rng.random_range(0..1u64 << 40),
                };
                radix.push(a.0 + crate::Duration(delta), id);
                heap.push(a.0 + crate::Duration(delta), id);
                id += 1;
            }
            if radix.is_empty() {
                break;
            }
        }
        assert_eq!(radix.len(), heap.len());
        while let Some(a) = radix.pop() {
            assert_eq!(Some(a), heap.pop());
        }
        assert!(heap.is_empty());
    }

    #[test]
    fn peek_reports_the_earliest() {
        let mut q = EventQueue::new();
        assert_eq!(q.peek_time(), None);
        q.push(Time(90), 'a');
        q.push(Time(40), 'b');
        assert_eq!(q.peek_time(), Some(Time(40)));
        assert_eq!(q.pop(), Some((Time(40), 'b')));
        assert_eq!(q.peek_time(), Some(Time(90)));
    }
}
