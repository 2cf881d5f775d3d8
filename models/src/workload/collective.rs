//! AI collectives as dependent flows: ring all-reduce, all-gather and reduce-scatter.
//!
//! The bandwidth-optimal ring algorithms (Patarasuk and Yuan, "Bandwidth optimal all-reduce
//! algorithms for clusters of workstations", JPDC 2009; NCCL's ring): the message of S bytes
//! is cut into n chunks of S/n; in each step every host sends one chunk to its successor on
//! the ring, and a host's next step starts when the chunk it needs has arrived from its
//! predecessor. Reduce-scatter and all-gather take n-1 steps each; all-reduce is the two in a
//! row, 2(n-1) steps, completing in about 2(n-1)/n * S/B plus the per-step latencies.

use super::{Deps, FlowSpec};
use crate::ids::HostId;
use serde::Deserialize;
use sim_core::Time;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    RingAllreduce,
    AllGather,
    ReduceScatter,
}

impl Collective {
    fn steps(self, n: usize) -> usize {
        match self {
            Collective::RingAllreduce => 2 * (n - 1),
            Collective::AllGather | Collective::ReduceScatter => n - 1,
        }
    }
}

/// Flows of one collective over `ring` (hosts in ring order) on a message of `size` bytes.
/// Step 0 starts at `start`; every later send of host i waits for host i-1's previous send.
pub fn ring(kind: Collective, ring: &[HostId], size: u64, start: Time, prio: u8) -> Vec<FlowSpec> {
    let n = ring.len();
    let chunk = size.div_ceil(n as u64).max(1);
    let mut flows = Vec::with_capacity(n * kind.steps(n));
    for step in 0..kind.steps(n) {
        for i in 0..n {
            let deps = if step == 0 {
                Deps::None
            } else {
                // The predecessor's send of the previous step, which delivers to host i.
                let pred = (i + n - 1) % n;
                Deps::Any(vec![((step - 1) * n + pred) as u32])
            };
            flows.push(FlowSpec {
                src: ring[i],
                dst: ring[(i + 1) % n],
                size: chunk,
                start,
                prio,
                deps,
            });
        }
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_reduce_is_two_n_minus_one_chained_steps() {
        let hosts: Vec<HostId> = (0..4).map(HostId).collect();
        let f = ring(Collective::RingAllreduce, &hosts, 4_000_000, Time::ZERO, 3);
        assert_eq!(f.len(), 4 * 6);
        assert!(
            f.iter()
                .all(|x| x.size == 1_000_000 && x.dst.0 == (x.src.0 + 1) % 4)
        );
        // Host 2's second send waits for host 1's first (which delivers to host 2).
        assert_eq!(f[4 + 2].deps, Deps::Any(vec![1]));
        assert_eq!(
            ring(Collective::AllGather, &hosts, 4_000_000, Time::ZERO, 3).len(),
            12
        );
    }
}
