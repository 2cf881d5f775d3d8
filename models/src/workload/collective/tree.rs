//! NCCL's double binary tree all-reduce (`src/graph/trees.cc` `ncclGetBtree`/`ncclGetDtree`;
//! Sanders, Speck and Träff, "Two-tree algorithms for full bandwidth broadcast, reduction
//! and scan", Parallel Computing 2009; NVIDIA, "Massively Scale Your Deep Learning Training
//! with NCCL 2.4").
//!
//! Tree one is the in-order binary tree on ranks 0..n: rank 0 is the root with the single
//! child P (the largest power of two below n); a rank r whose lowest set bit is b has the
//! children r - b/2 and r + b/2 (the latter pulled in while past n-1), so odd ranks are the
//! leaves. Tree two is its mirror (rank r in position n-1-r) for even n, its shift by one for
//! odd n: a rank interior in one tree is a leaf in the other. Each tree carries half the
//! buffer. Chunk by chunk (`runTreeSplit`, `src/device/all_reduce.h`), a rank sends a chunk up
//! once all its children's parts of it have arrived, the root turns it around, and each rank
//! sends what came down on to its children: every rank sends and receives about 2S in all,
//! and on an idle fabric the time is about 2S/B plus the pipeline's fill of 2 x depth chunks.
//!
//! A connection's receiver has `NCCL_STEPS` (8) chunk slots (`src/include/device.h`; the
//! sender waits for a free slot in `prims_simple.h` `waitPeer`), and a slot frees only once
//! the receiver has passed its chunk on: so a sender runs at most [`STEPS`] chunks ahead of
//! the rank it feeds. Without that back-pressure the leaves' streams, which wait for
//! nothing, finish early under fair NIC sharing and leave the interior streams to run the
//! tail pipeline-bound, about 5 % slower in all.

use super::{Builder, Wait, shares};

/// Chunk slots per connection (`NCCL_STEPS`).
const STEPS: usize = 8;

/// Parent and children of every position in tree one (position = rank).
pub(super) fn btree(n: usize) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    let mut parent = vec![None; n];
    let mut children = vec![Vec::new(); n];
    if n < 2 {
        return (parent, children);
    }
    let mut link = |p: usize, c: usize| {
        parent[c] = Some(p);
        children[p].push(c);
    };
    let top = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
    link(0, top);
    for r in 1..n {
        let b = r & r.wrapping_neg();
        if b < 2 {
            continue;
        }
        link(r, r - b / 2);
        let mut step = b / 2;
        while step > 0 && r + step >= n {
            step /= 2;
        }
        if step > 0 {
            link(r, r + step);
        }
    }
    (parent, children)
}

pub(super) fn all_reduce(b: &mut Builder) {
    let p = b.plan();
    let n = p.ranks.len();
    let (parent, children) = btree(n);
    // Rank of each position in each tree.
    let rank_of = |tree: usize, pos: usize| match tree {
        0 => pos,
        _ if n % 2 == 0 => n - 1 - pos,
        _ => (pos + 1) % n,
    };
    let trees = if n > 2 { 2 } else { 1 };
    let (chunk, size, channels) = (p.chunk, p.size, p.channels as u64);
    // NCCL puts channel c on tree c mod 2 (the second half of the doubled channels on the
    // second tree, `src/graph/connect.cc`): each tree carries half the buffer.
    let per_tree = channels.div_ceil(trees as u64).max(1);
    for (t, half) in shares(size, trees as u64).into_iter().enumerate() {
        for (c, region) in shares(half, per_tree).into_iter().enumerate() {
            let ch = (c * trees + t) as u32;
            let tag = t as u8;
            // Every chunk's message up from / down to each position so far.
            let mut up_hist: Vec<Vec<u32>> = vec![Vec::new(); n];
            let mut down_hist: Vec<Vec<u32>> = vec![Vec::new(); n];
            for (i, m) in shares(region, region.div_ceil(chunk)).into_iter().enumerate() {
                let mut up: Vec<Option<u32>> = vec![None; n];
                // Reduce up: children before parents (deepest positions first).
                for pos in post_order(&children) {
                    let Some(par) = parent[pos] else { continue };
                    let mut data: Vec<u32> = children[pos].iter().filter_map(|&k| up[k]).collect();
                    // The parent's slot for chunk i - STEPS frees when it sent that chunk on
                    // (up, or back down to us if it is the root).
                    if i >= STEPS {
                        let freed = match parent[par] {
                            Some(_) => up_hist[par][i - STEPS],
                            None => down_hist[pos][i - STEPS],
                        };
                        data.push(freed);
                    }
                    let id = b.send(
                        rank_of(t, pos),
                        rank_of(t, par),
                        ch,
                        tag,
                        m,
                        Wait::on(data, up_hist[pos].last().copied()),
                    );
                    up[pos] = Some(id);
                    up_hist[pos].push(id);
                }
                // Broadcast down: the root once every child's part is in, the others once
                // the chunk came down to them.
                let mut down: Vec<Option<u32>> = vec![None; n];
                for pos in pre_order(&children) {
                    let data: Vec<u32> = match parent[pos] {
                        None => children[pos].iter().filter_map(|&k| up[k]).collect(),
                        Some(_) => down[pos].into_iter().collect(),
                    };
                    for &k in &children[pos] {
                        // A child with children of its own frees its slot by sending down.
                        let mut data = data.clone();
                        if i >= STEPS
                            && let Some(&g) = children[k].first()
                        {
                            data.push(down_hist[g][i - STEPS]);
                        }
                        let id = b.send(
                            rank_of(t, pos),
                            rank_of(t, k),
                            ch,
                            tag,
                            m,
                            Wait::on(data, down_hist[k].last().copied()),
                        );
                        down[k] = Some(id);
                        down_hist[k].push(id);
                    }
                }
            }
        }
    }
}

/// Positions with every child before its parent.
fn post_order(children: &[Vec<usize>]) -> Vec<usize> {
    let mut v = pre_order(children);
    v.reverse();
    v
}

/// Positions from the root (0) down, every parent before its children.
fn pre_order(children: &[Vec<usize>]) -> Vec<usize> {
    let mut out = Vec::with_capacity(children.len());
    let mut stack = vec![0];
    while let Some(p) = stack.pop() {
        out.push(p);
        stack.extend(children[p].iter().rev());
    }
    out
}
