//! The pending-event set.
//!
//! Events are ordered by `(time, rank, insertion sequence)`: events due at the same
//! picosecond pop in the order of their [`Simultaneous::rank`], and events of equal rank in
//! the order they were pushed. A simulator that ranks its events by what they are and which
//! entity they belong to (a port, a flow) gets an order of simultaneous events that does not
//! depend on when, or by whom, each was scheduled: the order a partitioned, parallel run can
//! reproduce (each partition sees its own events in the order the whole run would), and the
//! freedom to schedule an event earlier than it used to be without moving any result. Types
//! that keep the default rank (0) get plain FIFO on ties, as NeXosim and htsim document.
//!
//! [`EventQueue`] is a **radix heap** (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for
//! the shortest path problem", JACM 1990). A discrete-event simulation never schedules into the
//! past, so the queue is *monotone*: every pushed time is at least the last popped one. A radix
//! heap exploits that: an event goes into the bucket of the highest bit of `time ^ last`, so
//! pushes are O(1) and each event moves between buckets at most 64 times over its life, in
//! practice three to seven times on our fabrics. Buckets are kept in push order and
//! redistributed in order; each keeps its earliest time, so a refill is one pass over the
//! bucket; the events due "now" are then sorted by rank, stably, which gives FIFO among equal
//! ranks without storing a sequence number (entries stay 8 bytes + payload). An event pushed
//! for "now" is inserted after every pending one of its rank or lower (at the back, in the
//! common case).
//!
//! [`HeapQueue`] is the textbook binary heap on `(time, rank, seq)`, kept as the reference the
//! radix heap is tested and benchmarked against (`benches/event_queue.rs`; README,
//! "Performance").

use crate::time::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// The order of events due at the same picosecond: lower ranks first, equal ranks in push
/// order. The default, 0 for every event, is FIFO on ties.
pub trait Simultaneous {
    /// True when two events of equal rank are equal (the rank encodes the whole event): the
    /// queue may then order them without keeping their push order, which is faster.
    const RANK_IS_IDENTITY: bool = false;

    #[inline]
    fn rank(&self) -> u64 {
        0
    }
}

macro_rules! fifo_on_ties {
    ($($t:ty),*) => {$(impl Simultaneous for $t {})*};
}
fifo_on_ties!(u8, u16, u32, u64, i32, i64, char, &str);

/// Monotone radix-heap event queue, ranked on equal times. See the module docs.
///
/// Events are `Copy` (a simulator's events are ids): the queue reads them out of its lists
/// instead of moving each list in and out of place.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Time of the last popped event; all pending events are at or after it.
    last: u64,
    /// Events at exactly `last` with their ranks, from `head` on, by rank (stably: equal
    /// ranks in push order); the ones before `head` have popped.
    now: Vec<(u64, E)>,
    head: usize,
    /// `buckets[i]` holds events whose time differs from `last` first in bit `i`.
    buckets: [Vec<(u64, E)>; 64],
    /// The earliest time in each bucket (`u64::MAX` when empty): the next `last` when the
    /// bucket is moved down, found without a pass over it.
    mins: [u64; 64],
    /// Bit `i` set when `buckets[i]` is non-empty.
    occupied: u64,
    len: usize,
}

impl<E: Simultaneous + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The bucket of a time that differs from `last` by `diff` (not 0): its highest set bit.
#[inline(always)]
fn bucket_of(diff: u64) -> usize {
    (63 - diff.leading_zeros()) as usize & 63
}

impl<E: Simultaneous + Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            last: 0,
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            mins: [u64::MAX; 64],
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
    #[inline(always)]
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
            self.push_now(event);
        } else {
            let b = bucket_of(diff);
            self.buckets[b].push((t, event));
            self.mins[b] = self.mins[b].min(t);
            self.occupied |= 1 << b;
        }
    }

    /// An event for "now": after every pending one of its rank or lower.
    #[inline]
    fn push_now(&mut self, event: E) {
        let r = event.rank();
        if self.head == self.now.len() {
            self.now.clear();
            self.head = 0;
        }
        if self.now.last().is_none_or(|&(b, _)| b <= r) {
            self.now.push((r, event));
        } else {
            let at = self.head + self.now[self.head..].partition_point(|&(b, _)| b <= r);
            self.now.insert(at, (r, event));
        }
    }

    /// Remove and return the earliest event (by rank, then FIFO, among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.head == self.now.len() {
            self.refill()?;
        }
        let (_, e) = self.now[self.head];
        self.head += 1;
        self.len -= 1;
        Some((Time(self.last), e))
    }

    /// The event `i` places after the next (0: the next) when it is due at the last popped
    /// time, found without a search (None does not mean the queue is empty): a hint of what
    /// to fetch from memory ahead of it.
    #[inline]
    pub fn due_now(&self, i: usize) -> Option<&E> {
        self.now.get(self.head + i).map(|(_, e)| e)
    }

    /// Time of the earliest pending event, without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if self.head < self.now.len() {
            return Some(Time(self.last));
        }
        if self.occupied == 0 {
            return None;
        }
        Some(Time(self.mins[self.occupied.trailing_zeros() as usize & 63]))
    }

    /// Move the lowest non-empty bucket down: its minimum becomes `last`. Called when no
    /// event is due now.
    #[inline(never)]
    fn refill(&mut self) -> Option<()> {
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize & 63;
        self.occupied &= !(1 << b);
        let last = self.mins[b];
        self.mins[b] = u64::MAX;
        self.last = last;
        self.now.clear();
        self.head = 0;
        // Every event of bucket `b` agrees with the new `last` above bit `b` and in it (it
        // differed from the old one first there, as the new one does), so it moves below `b`:
        // the buckets below are written while `b` is read, and `b` keeps its capacity (no
        // allocation in steady state, and no bucket's capacity handed to another).
        let (lower, upper) = self.buckets.split_at_mut(b);
        // The occupied bits are gathered in a register and written once.
        let bucket = &mut upper[0];
        let mut occupied = self.occupied;
        for &(t, e) in bucket.iter() {
            let diff = t ^ last;
            if diff == 0 {
                self.now.push((e.rank(), e));
            } else {
                let nb = bucket_of(diff);
                lower[nb].push((t, e));
                self.mins[nb] = self.mins[nb].min(t);
                occupied |= 1 << nb;
            }
        }
        self.occupied = occupied;
        bucket.clear();
        let now = &mut self.now[..];
        if !now.is_sorted_by_key(|&(r, _)| r) {
            if E::RANK_IS_IDENTITY {
                // Equal ranks are equal events: their order is no one's concern.
                now.sort_unstable_by_key(|&(r, _)| r);
            } else {
                // Stable: equal ranks keep their push order.
                now.sort_by_key(|&(r, _)| r);
            }
        }
        Some(())
    }
}

/// Binary-heap event queue on `(time, rank, seq)`: the reference implementation.
#[derive(Debug)]
pub struct HeapQueue<E> {
    heap: BinaryHeap<Reverse<HeapEntry<E>>>,
    seq: u64,
}

#[derive(Debug)]
struct HeapEntry<E> {
    key: (u64, u64, u64),
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

impl<E: Simultaneous> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Simultaneous> HeapQueue<E> {
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
            key: (at.0, event.rank(), self.seq),
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

    /// An event whose same-time rank is `.0`, told apart by `.1`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Ranked(u64, u32);
    impl Simultaneous for Ranked {
        fn rank(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn the_hints_name_the_events_due_now_in_the_order_they_pop() {
        let mut q = EventQueue::new();
        for i in 0..6 {
            q.push(Time(5), i);
        }
        q.push(Time(9), 6);
        assert_eq!(q.pop(), Some((Time(5), 0)));
        let hints = [q.due_now(0), q.due_now(1), q.due_now(2), q.due_now(3)];
        assert_eq!(hints, [Some(&1), Some(&2), Some(&3), Some(&4)]);
        for i in 1..5 {
            assert_eq!(q.pop(), Some((Time(5), i)));
        }
        // One more event due now; the one at 9 is not named until its time comes.
        assert_eq!((q.due_now(0), q.due_now(1)), (Some(&5), None));
    }

    #[test]
    fn equal_times_pop_by_rank_whenever_and_in_whatever_order_they_were_pushed() {
        let mut q = EventQueue::new();
        q.push(Time(5), Ranked(2, 0));
        q.push(Time(5), Ranked(1, 1));
        q.push(Time(3), Ranked(9, 2));
        assert_eq!(q.pop(), Some((Time(3), Ranked(9, 2))));
        // Pushed while "now" is 3 (into a bucket): still ordered by rank at 5.
        q.push(Time(5), Ranked(0, 3));
        q.push(Time(5), Ranked(1, 4));
        assert_eq!(q.pop(), Some((Time(5), Ranked(0, 3))));
        // Pushed for "now" (5): before the pending rank 2, after the rank 1 already there.
        q.push(Time(5), Ranked(1, 5));
        q.push(Time(5), Ranked(3, 6));
        q.push(Time(5), Ranked(0, 7));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e.1).collect();
        assert_eq!(order, vec![7, 1, 4, 5, 0, 6]);
    }

    #[test]
    fn ranked_radix_heap_matches_the_ranked_binary_heap() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let (mut radix, mut heap) = (EventQueue::new(), HeapQueue::new());
        let mut id = 0u32;
        for _ in 0..500 {
            let e = Ranked(rng.random_range(0..4u64), id);
            let t = Time(rng.random_range(0..50u64));
            radix.push(t, e);
            heap.push(t, e);
            id += 1;
        }
        for _ in 0..100_000 {
            let Some(a) = radix.pop() else { break };
            assert_eq!(Some(a), heap.pop());
            for _ in 0..rng.random_range(0..3u32) {
                let delta = [0, 0, rng.random_range(0..20u64), rng.random_range(0..1u64 << 30)]
                    [rng.random_range(0..4usize)];
                let e = Ranked(rng.random_range(0..4u64), id);
                radix.push(a.0 + crate::Duration(delta), e);
                heap.push(a.0 + crate::Duration(delta), e);
                id += 1;
            }
        }
        while let Some(a) = radix.pop() {
            assert_eq!(Some(a), heap.pop());
        }
        assert!(heap.is_empty());
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
            let next = radix.peek_time();
            let a = radix.pop().unwrap();
            assert_eq!(next, Some(a.0));
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
