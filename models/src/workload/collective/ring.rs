//! Ring collectives (all-reduce, all-gather, reduce-scatter) and the chain broadcast.
//!
//! NCCL's `runRing` (`src/device/all_reduce.h`): a channel's share of the buffer moves in
//! loops of n chunks; in each loop every rank sends 2(n-1) chunks (all-reduce: n-1 of
//! reduce-scatter, then n-1 of all-gather) or n-1 (all-gather, reduce-scatter), each one the
//! chunk it received at the step before (after step 0, which sends its own). A chunk is at
//! most a slice; the last loop's chunks shrink to what is left (`all_reduce.h` resets
//! `chunkCount` to ceil(rem/n)). So every rank sends 2(n-1)/n x S (or (n-1)/n x S), and on
//! an idle fabric the time is 2(n-1)/n x S/B plus 2(n-1) per-step latencies per loop.
//!
//! On multi-NIC servers (`Plan::rails` R > 1) NCCL runs `channels` rings per NIC, each on one
//! rail n (NCCL's topology search keeps a ring's way into and out of a server on one NIC; its
//! PXN hands a GPU's data over NVLink to the GPU on the rail). The ring enters each server at
//! GPU n, visits its GPUs n, n+1, ... over NVLink, and leaves from NIC n to GPU n of the next
//! server: a rail-aligned ring's fabric traffic never leaves its rail.

use super::{Builder, Op, Wait, shares};

/// A ring collective over the plan's ranks in order, on every channel.
pub(super) fn collective(b: &mut Builder) {
    let p = b.plan();
    let n = p.ranks.len();
    let steps = if p.op == Op::AllReduce { 2 * (n - 1) } else { n - 1 };
    // Every rank's buffer is S for all-reduce; all-gather and reduce-scatter count S as the
    // whole (n x each rank's part), and each step moves one part: S/n as for all-reduce.
    let rails = p.rails.max(1) as usize;
    let (chunk, size, channels) = (p.chunk, p.size, p.channels as u64 * rails as u64);
    for (c, region) in shares(size, channels).into_iter().enumerate() {
        let (order, via) = ring_order(n, rails, c % rails);
        let c = c as u32;
        // Loops of n chunks, each chunk at most `chunk`; the last loop's chunks are what
        // remains split n ways.
        let per_loop = chunk.saturating_mul(n as u64);
        let loops = region.div_ceil(per_loop).max(1);
        // prev[i]: rank i's last message on this channel (its edge to i+1).
        let mut prev: Vec<Option<u32>> = vec![None; n];
        for l in 0..loops {
            let left = region - l * per_loop;
            let m = if left >= per_loop {
                chunk
            } else {
                left.div_ceil(n as u64)
            };
            // sent[i]: the message rank i sent at the step before, in this loop.
            let mut sent: Vec<Option<u32>> = vec![None; n];
            for _ in 0..steps {
                let mut now = vec![None; n];
                // Position i of the ring (rank order[i]) sends to position i + 1.
                for i in 0..n {
                    let from = (i + n - 1) % n;
                    let data = sent[from];
                    let id = b.send(via[i], order[(i + 1) % n], c, 0, m, Wait::on(data, prev[i]));
                    now[i] = Some(id);
                    prev[i] = Some(id);
                }
                sent = now;
            }
        }
    }
}

/// The ring's ranks in order, and the rank whose NIC sends each position's message: the
/// ranks in order on single-NIC hosts; on servers of `rails` NICs, rail `rail`'s ring (each
/// server's GPUs from `rail` on, leaving through NIC `rail`).
fn ring_order(n: usize, rails: usize, rail: usize) -> (Vec<usize>, Vec<usize>) {
    if rails <= 1 {
        return ((0..n).collect(), (0..n).collect());
    }
    let order: Vec<usize> = (0..n / rails)
        .flat_map(|k| (0..rails).map(move |g| k * rails + (rail + g) % rails))
        .collect();
    let via = (0..n)
        .map(|i| {
            let leaves = (i + 1) % rails == 0; // the server's last GPU of this ring
            if leaves {
                (i / rails) * rails + rail
            } else {
                order[i]
            }
        })
        .collect();
    (order, via)
}

/// Broadcast from the root along the ranks in order from it (NCCL's ring broadcast,
/// `src/device/broadcast.h`: the root sends, middle ranks receive and forward, the last only
/// receives), chunk by chunk on every channel.
pub(super) fn broadcast(b: &mut Builder) {
    let p = b.plan();
    let n = p.ranks.len();
    let (root, chunk, size, channels) = (p.root, p.chunk, p.size, p.channels as u64);
    let order: Vec<usize> = (0..n).map(|k| (root + k) % n).collect();
    for (c, region) in shares(size, channels).into_iter().enumerate() {
        let c = c as u32;
        let mut prev: Vec<Option<u32>> = vec![None; n - 1];
        for m in shares(region, region.div_ceil(chunk)) {
            let mut upstream: Option<u32> = None;
            for h in 0..n - 1 {
                let id = b.send(order[h], order[h + 1], c, 0, m, Wait::on(upstream, prev[h]));
                prev[h] = Some(id);
                upstream = Some(id);
            }
        }
    }
}
