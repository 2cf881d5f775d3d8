//! Event-queue structures under the classic **hold** model (Vaucher & Duval, 1975).
//!
//! The queue is pre-filled with `N` events at times uniform in `[0, 10 us)`; each measured
//! operation ("hold") pops the earliest event and pushes one at `popped_time + increment`, so
//! the pending-set size stays at `N` and one queue persists across all iterations. Increments
//! are precomputed (2^16, cycled, seeded Xoshiro256++) from a mix typical of our fabrics:
//! 50% serialization of 4 KB at 100 Gb/s (334_720 ps, +/-10%), 40% link propagation (exactly
//! 1 us, so equal-time ties occur), 10% timers uniform in 10-50 us. Every structure orders on
//! `(time, insertion seq)`, is FIFO on ties, and carries a 12-byte payload; a pre-check asserts
//! all four pop the identical sequence. Results read as elements (= holds) per second.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dary_heap::QuaternaryHeap;
use priority_queue::PriorityQueue;
use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
use sim_core::Time;
use sim_core::queue::{EventQueue, HeapQueue};
use std::cmp::{Ordering, Reverse};
use std::time::Duration;

/// Realistic simulator event: 4-byte tag + up to 8 bytes of data = 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ev {
    TxDone(u32),
    Arrive(u32),
    Timer { flow: u32, generation: u32 },
}
const _: () = assert!(size_of::<Ev>() == 12);
/// FIFO on ties, as every structure here orders.
impl sim_core::queue::Simultaneous for Ev {}

/// The hold-model interface every structure under test implements.
trait Hold {
    fn push(&mut self, t: u64, ev: Ev);
    fn pop(&mut self) -> (u64, Ev);
}

/// `sim_core`'s queues share the same API.
macro_rules! sim_core_hold {
    ($($q:ident),*) => {$(
        impl Hold for $q<Ev> {
            fn push(&mut self, t: u64, ev: Ev) {
                $q::push(self, Time(t), ev)
            }
            fn pop(&mut self) -> (u64, Ev) {
                let (t, e) = $q::pop(self).unwrap();
                (t.0, e)
            }
        }
    )*};
}
sim_core_hold!(HeapQueue, EventQueue);

/// 4-ary heap entry: ordered on the `(time, seq)` key only.
struct Entry {
    key: (u64, u64),
    ev: Ev,
}
impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key)
    }
}

#[derive(Default)]
struct Dary {
    heap: QuaternaryHeap<Reverse<Entry>>,
    seq: u64,
}
impl Hold for Dary {
    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            key: (t, self.seq),
            ev,
        }));
    }
    fn pop(&mut self) -> (u64, Ev) {
        let Reverse(e) = self.heap.pop().unwrap();
        (e.key.0, e.ev)
    }
}

/// `priority-queue` (indexed heap, default SipHash hasher). The item is a slot in a side slab
/// holding the payload (slots recycled through a free list); the priority is `(time, seq)`.
#[derive(Default)]
struct Pq {
    pq: PriorityQueue<u64, Reverse<(u64, u64)>>,
    slab: Vec<Ev>,
    free: Vec<u64>,
    seq: u64,
}
impl Hold for Pq {
    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slab.push(ev);
            self.slab.len() as u64 - 1
        });
        self.slab[slot as usize] = ev;
        self.pq.push(slot, Reverse((t, self.seq)));
    }
    fn pop(&mut self) -> (u64, Ev) {
        let (slot, Reverse((t, _))) = self.pq.pop().unwrap();
        self.free.push(slot);
        (t, self.slab[slot as usize])
    }
}

/// Precomputed `(increment ps, event to schedule)` pairs drawn from the realistic mix.
fn increments() -> Vec<(u64, Ev)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5eed);
    (0..1u32 << 16)
        .map(|i| match rng.random_range(0..100u32) {
            0..50 => (rng.random_range(301_248..=368_192u64), Ev::TxDone(i)),
            50..90 => (1_000_000, Ev::Arrive(i)),
            _ => (
                rng.random_range(10_000_000..=50_000_000u64),
                Ev::Timer {
                    flow: i,
                    generation: i >> 3,
                },
            ),
        })
        .collect()
}

/// A queue of `n` events at times uniform in `[0, 10 us)`.
fn filled<Q: Hold>(mut q: Q, n: usize) -> Q {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(n as u64);
    for i in 0..n as u32 {
        q.push(rng.random_range(0..10_000_000u64), Ev::Arrive(i));
    }
    q
}

/// One hold operation; `i` walks the precomputed increments.
#[inline(always)]
fn hold<Q: Hold>(q: &mut Q, incs: &[(u64, Ev)], i: &mut usize) -> (u64, Ev) {
    let (t, ev) = q.pop();
    let (dt, next) = incs[*i & (incs.len() - 1)];
    *i += 1;
    q.push(t + dt, next);
    (t, ev)
}

/// Hash of the first `ops` popped `(time, event)` pairs: all structures must agree.
fn trace<Q: Hold>(q: Q, n: usize, incs: &[(u64, Ev)], ops: usize) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let (mut q, mut i) = (filled(q, n), 0);
    let h = BuildHasherDefault::<DefaultHasher>::default();
    (0..ops).fold(0, |acc, _| {
        acc.rotate_left(5) ^ h.hash_one(hold(&mut q, incs, &mut i))
    })
}

fn bench_hold(c: &mut Criterion) {
    let incs = increments();
    let mut g = c.benchmark_group("hold");
    g.throughput(Throughput::Elements(1));
    for n in [1_000usize, 10_000, 100_000] {
        let ops = 3 * n;
        let traces = [
            trace(HeapQueue::new(), n, &incs, ops),
            trace(Dary::default(), n, &incs, ops),
            trace(Pq::default(), n, &incs, ops),
            trace(EventQueue::new(), n, &incs, ops),
        ];
        assert!(
            traces.iter().all(|&t| t == traces[0]),
            "pop orders differ: {traces:x?}"
        );

        macro_rules! run {
            ($name:literal, $q:expr) => {{
                let (mut q, mut i) = (filled($q, n), 0usize);
                g.bench_with_input(BenchmarkId::new($name, n), &n, |b, _| {
                    b.iter(|| hold(&mut q, &incs, &mut i))
                });
            }};
        }
        run!("binary_heap", HeapQueue::new());
        run!("dary_heap_4", Dary::default());
        run!("priority_queue", Pq::default());
        run!("radix_heap", EventQueue::new());
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(20);
    targets = bench_hold
}
criterion_main!(benches);
