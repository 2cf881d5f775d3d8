//! Rabenseifner's all-reduce: reduce-scatter by recursive halving, then all-gather by
//! recursive doubling (Thakur, Rabenseifner and Gropp, "Optimization of collective
//! communication operations in MPICH", IJHPCA 2005; MPICH
//! `allreduce_intra_reduce_scatter_allgather.c`). For p = 2^k ranks: at halving step s
//! (s = 1..k) rank r exchanges S/2^s with r XOR p/2^s; the doubling steps replay them in
//! reverse with the same sizes. Each rank sends 2(p-1)/p x S in 2 log2 p steps, so
//! T = 2 log2(p) a + 2(p-1)/p x S/B. Each channel carries its share of the buffer as its own
//! chain of exchanges; a message waits for the one its rank received at the step before and
//! for its own previous message.

use super::{Builder, Wait, shares};

pub(super) fn all_reduce(b: &mut Builder) {
    let p = b.plan();
    let n = p.ranks.len();
    let k = n.trailing_zeros() as usize;
    let (size, channels) = (p.size, p.channels as u64);
    // (partner distance, fraction divisor) of each of the 2k steps.
    let steps: Vec<(usize, u64)> = (1..=k)
        .map(|s| (n >> s, 1u64 << s))
        .chain((1..=k).rev().map(|s| (n >> s, 1u64 << s)))
        .collect();
    for (c, region) in shares(size, channels).into_iter().enumerate() {
        let c = c as u32;
        // got[r]: the message rank r received at the step before; mine[r] its own last.
        let mut got: Vec<Option<u32>> = vec![None; n];
        let mut mine: Vec<Option<u32>> = vec![None; n];
        for &(dist, div) in &steps {
            let m = region.div_ceil(div);
            let mut now = vec![None; n];
            for r in 0..n {
                let peer = r ^ dist;
                let id = b.send(r, peer, c, 0, m, Wait::on(got[r], mine[r]));
                now[peer] = Some(id);
                mine[r] = Some(id);
            }
            got = now;
        }
    }
}
