//! Packet FIFOs sharing one slab: every port queue and every cable in flight.
//!
//! Each queued or flying frame sits in a slot of the network's one [`PacketPool`]; a [`Fifo`]
//! is a head and a tail index, and its slots link through their `next` field. A freed slot is
//! the next one reused (last in, first out), so a frame entering a queue is written to a slot
//! that is still in cache, and packet memory follows the most frames the fabric held at once
//! (the slab grows by doubling and is not shrunk), not the sum of every queue's largest
//! backlog. uet-htsim also recycles packets through per-type free lists (`PacketDB` in its
//! `sim/network.h`), there to avoid an allocation per packet.

use crate::packet::Packet;
use sim_core::Time;

const NIL: u32 = u32::MAX;

/// One frame and when it leaves its FIFO (cables: the arrival time; queues: unused).
/// A slot is one cache line.
#[derive(Debug)]
#[repr(C, align(64))]
struct Slot {
    pkt: Packet,
    at: Time,
    next: u32,
}

/// A FIFO of frames held in a [`PacketPool`]: the pool's slots from `head` to `tail`. Not
/// `Clone`: two handles on the same slots would free them twice.
#[derive(Debug)]
pub struct Fifo {
    head: u32,
    tail: u32,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo { head: NIL, tail: NIL }
    }
}

impl Fifo {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// The slab all FIFOs of a network draw from.
#[derive(Debug)]
pub struct PacketPool {
    slots: Vec<Slot>,
    /// Head of the free list, linked through `next`.
    free: u32,
    held: usize,
}

impl Default for PacketPool {
    fn default() -> Self {
        PacketPool {
            slots: Vec::new(),
            free: NIL,
            held: 0,
        }
    }
}

impl PacketPool {
    /// Frames held in all FIFOs.
    pub fn len(&self) -> usize {
        self.held
    }

    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// Append `pkt` (leaving at `at`) to `q`.
    #[inline]
    pub(crate) fn push(&mut self, q: &mut Fifo, at: Time, pkt: Packet) {
        let slot = Slot { pkt, at, next: NIL };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.slots[i as usize].next;
            self.slots[i as usize] = slot;
            i
        } else {
            assert!(self.slots.len() < NIL as usize, "more than 2^32 - 1 frames held");
            self.slots.push(slot);
            (self.slots.len() - 1) as u32
        };
        if q.tail == NIL {
            q.head = i;
        } else {
            self.slots[q.tail as usize].next = i;
        }
        q.tail = i;
        self.held += 1;
    }

    /// Remove the head of `q`.
    #[inline]
    pub(crate) fn pop(&mut self, q: &mut Fifo) -> Option<(Time, Packet)> {
        if q.head == NIL {
            return None;
        }
        let i = q.head;
        let s = &mut self.slots[i as usize];
        let out = (s.at, s.pkt);
        q.head = s.next;
        s.next = self.free;
        self.free = i;
        if q.head == NIL {
            q.tail = NIL;
        }
        self.held -= 1;
        Some(out)
    }

    /// Move the frames of `q` from this pool to `to`, in order (a partition's port or cable
    /// joining the whole run's state at the end of a run on several threads).
    pub(crate) fn move_to(&mut self, q: &mut Fifo, to: &mut PacketPool) {
        let mut moved = Fifo::default();
        while let Some((at, pkt)) = self.pop(q) {
            to.push(&mut moved, at, pkt);
        }
        *q = moved;
    }

    /// Remove the tail of `q`: a walk from its head, for the rare cut of a queue's last frame.
    pub(crate) fn pop_back(&mut self, q: &mut Fifo) -> Option<(Time, Packet)> {
        let t = q.tail;
        if t == NIL || q.head == t {
            return self.pop(q);
        }
        let mut i = q.head;
        while self.slots[i as usize].next != t {
            i = self.slots[i as usize].next;
        }
        self.slots[i as usize].next = NIL;
        q.tail = i;
        let s = &mut self.slots[t as usize];
        let out = (s.at, s.pkt);
        s.next = self.free;
        self.free = t;
        self.held -= 1;
        Some(out)
    }

    /// The tail of `q` without removing it.
    #[inline]
    pub(crate) fn back(&self, q: &Fifo) -> Option<&Packet> {
        (q.tail != NIL).then(|| &self.slots[q.tail as usize].pkt)
    }

    /// The head of `q` without removing it.
    #[inline]
    pub(crate) fn front(&self, q: &Fifo) -> Option<(Time, &Packet)> {
        (q.head != NIL).then(|| {
            let s = &self.slots[q.head as usize];
            (s.at, &s.pkt)
        })
    }

    /// The head slot of `q`, for a prefetch hint (None when `q` is empty).
    #[inline]
    pub(crate) fn front_slot(&self, q: &Fifo) -> Option<*const u8> {
        self.slots
            .get(q.head as usize)
            .map(|s| s as *const Slot as *const u8)
    }

    /// The tail slot of `q` (the next push links it) and the free slot the next push takes,
    /// for a prefetch hint.
    #[inline]
    pub(crate) fn push_slots(&self, q: &Fifo) -> [Option<*const u8>; 2] {
        let slot = |i: u32| self.slots.get(i as usize).map(|s| s as *const Slot as *const u8);
        [slot(q.tail), slot(self.free)]
    }

    /// The slot after the head of `q`, for a prefetch hint (None when `q` holds under two
    /// frames). Reads the head slot.
    #[inline]
    pub(crate) fn second_slot(&self, q: &Fifo) -> Option<*const u8> {
        let head = self.slots.get(q.head as usize)?;
        self.slots
            .get(head.next as usize)
            .map(|s| s as *const Slot as *const u8)
    }

    /// The frames of `q`, head first.
    pub(crate) fn iter<'a>(&'a self, q: &Fifo) -> impl Iterator<Item = (Time, &'a Packet)> + 'a {
        let mut i = q.head;
        std::iter::from_fn(move || {
            (i != NIL).then(|| {
                let s = &self.slots[i as usize];
                i = s.next;
                (s.at, &s.pkt)
            })
        })
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
    fn fifos_keep_their_order_and_reuse_freed_slots_first() {
        let mut pool = PacketPool::default();
        let (mut a, mut b) = (Fifo::default(), Fifo::default());
        for s in 0..3 {
            pool.push(&mut a, Time(s as u64), pkt(s));
            pool.push(&mut b, Time::ZERO, pkt(10 + s));
        }
        assert_eq!(pool.len(), 6);
        let seqs = |pool: &PacketPool, q: &Fifo| pool.iter(q).map(|(_, p)| p.seq).collect::<Vec<_>>();
        assert_eq!(
            (seqs(&pool, &a), seqs(&pool, &b)),
            (vec![0, 1, 2], vec![10, 11, 12])
        );
        let (t, p) = pool.pop(&mut a).unwrap();
        assert_eq!((t, p.seq), (Time(0), 0));
        pool.push(&mut b, Time::ZERO, pkt(13));
        assert_eq!(pool.slots.len(), 6, "the freed slot was reused");
        while pool.pop(&mut a).is_some() {}
        assert!(a.is_empty() && pool.front(&a).is_none());
        assert_eq!(seqs(&pool, &b), vec![10, 11, 12, 13]);
        assert_eq!(pool.len(), 4);
        pool.push(&mut a, Time(9), pkt(7));
        assert_eq!(pool.front(&a).map(|(t, p)| (t, p.seq)), Some((Time(9), 7)));
    }

    #[test]
    fn random_operations_match_one_vecdeque_per_fifo() {
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        use std::collections::VecDeque;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut pool = PacketPool::default();
        let mut fifos: [Fifo; 5] = std::array::from_fn(|_| Fifo::default());
        let mut model: [VecDeque<(Time, u32)>; 5] = Default::default();
        let mut peak = 0;
        for step in 0..50_000u32 {
            let q = rng.random_range(0..5);
            if rng.random_bool(0.52) {
                let at = Time(rng.random_range(0..1000));
                pool.push(&mut fifos[q], at, pkt(step));
                model[q].push_back((at, step));
            } else {
                let got = pool.pop(&mut fifos[q]).map(|(t, p)| (t, p.seq));
                assert_eq!(got, model[q].pop_front(), "step {step}, fifo {q}");
            }
            let held: usize = model.iter().map(VecDeque::len).sum();
            peak = peak.max(held);
            assert_eq!(pool.len(), held);
            assert_eq!(
                pool.front(&fifos[q]).map(|(t, p)| (t, p.seq)),
                model[q].front().copied()
            );
        }
        for (f, m) in fifos.iter().zip(&model) {
            assert!(pool.iter(f).map(|(t, p)| (t, p.seq)).eq(m.iter().copied()));
        }
        assert_eq!(
            pool.slots.len(),
            peak,
            "slots are reused: as many as were ever held at once"
        );
    }

    #[test]
    fn taking_from_either_end_matches_a_vecdeque() {
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        use std::collections::VecDeque;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(10);
        let mut pool = PacketPool::default();
        let mut fifos: [Fifo; 3] = std::array::from_fn(|_| Fifo::default());
        let mut model: [VecDeque<u32>; 3] = Default::default();
        for step in 0..20_000u32 {
            let q = rng.random_range(0..3);
            match rng.random_range(0..5) {
                0 | 1 => {
                    pool.push(&mut fifos[q], Time::ZERO, pkt(step));
                    model[q].push_back(step);
                }
                2 => assert_eq!(pool.pop(&mut fifos[q]).map(|(_, p)| p.seq), model[q].pop_front()),
                _ => {
                    assert_eq!(pool.back(&fifos[q]).map(|p| p.seq), model[q].back().copied());
                    let got = pool.pop_back(&mut fifos[q]).map(|(_, p)| p.seq);
                    assert_eq!(got, model[q].pop_back(), "step {step}, fifo {q}");
                }
            }
            assert_eq!(pool.len(), model.iter().map(VecDeque::len).sum::<usize>());
        }
        for (f, m) in fifos.iter().zip(&model) {
            assert!(pool.iter(f).map(|(_, p)| p.seq).eq(m.iter().copied()));
        }
    }
}
