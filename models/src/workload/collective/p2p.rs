//! Point-to-point collectives: all-to-all and send/recv pairs.
//!
//! NCCL expands `ncclAlltoAll` into a send and a receive per peer (`src/enqueue.cc`); on the
//! network each peer's message goes in `NCCL_P2P_NET_CHUNKSIZE` steps (128 KiB, `src/init.cc`)
//! one after another on each of its channels. Every peer's stream starts at once (NCCL's
//! rounds of 8 peers per batch are not modelled), so on a non-blocking fabric a rank's
//! (n-1)/n x S leave at its link rate: T = (n-1)/n x S/B, with the incast at every receiver
//! that makes all-to-all the MoE pattern it is.

use super::{Builder, Wait, shares};

/// One message stream of `size` from rank `a` to rank `b`, split over the channels and cut
/// into chunks, each chunk after the one before it on its channel.
fn stream(b: &mut Builder, a: usize, to: usize, size: u64) {
    let (chunk, channels) = (b.plan().chunk, b.plan().channels as u64);
    for (c, part) in shares(size, channels).into_iter().enumerate() {
        let mut prev = None;
        for m in shares(part, part.div_ceil(chunk)) {
            prev = Some(b.send(a, to, c as u32, 0, m, Wait::on(None, prev)));
        }
    }
}

/// Every rank sends S/n to every other rank (nccl-tests' S: the rank's whole send buffer;
/// the S/n it keeps is a local copy).
pub(super) fn all_to_all(b: &mut Builder) {
    let n = b.plan().ranks.len();
    let each = (b.plan().size / n as u64).max(1);
    for a in 0..n {
        // Peers in NCCL's order from a: a+1, a+2, ... (the self copy is local).
        for d in 1..n {
            stream(b, a, (a + d) % n, each);
        }
    }
}

/// Each pair's first rank sends S to its second.
pub(super) fn send_recv(b: &mut Builder) {
    let pairs = b.plan().pairs.clone();
    let size = b.plan().size;
    for (a, to) in pairs {
        stream(b, a, to, size);
    }
}
