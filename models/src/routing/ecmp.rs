//! ECMP: one member of an equal-cost next-hop set per packet, by hashing the 5-tuple (src IP,
//! dst IP, protocol, UDP source port = the packet's entropy, UDP destination port) with a CRC,
//! as Broadcom (RTAG7) and NVIDIA ASICs do, and taking it modulo the number of members
//! (RFC 2992). A CRC is linear in its input: cycling the low bits of the entropy through a
//! full power-of-two round hits every member equally often, which is what makes oblivious
//! packet spraying even. Each switch XORs a seed and reads a different window of the CRC's
//! bits, as ASICs select per-switch hash bits to avoid polarisation (the same choice at every
//! tier).

use crate::ids::{FlowId, HostId};

/// A switch's ECMP hash function: CRC-32 of the 5-tuple, then a switch-specific GF(2)-linear
/// map to 16 bits (as ASICs pick per-switch hash functions and bit windows). The flow (which
/// names both hosts) and the destination stand in for the IP addresses, the entropy is the
/// UDP source port; the protocol and destination port are constant per transport. Being
/// linear end to end, a full round of low entropy bits spreads evenly over power-of-two
/// member counts at every tier, and different switches make independent choices.
#[derive(Debug, Clone)]
pub struct EcmpHash {
    rows: [u32; 16],
    seed: u16,
}

impl EcmpHash {
    /// The hash function of the switch whose seed is `key`.
    pub fn new(key: u64) -> Self {
        let mut state = key;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            sim_core::rng::mix64(state)
        };
        // Draw rows until every group size 2^m (m <= 6) sees the low 6 entropy bits at full
        // rank: one round of 64 EVs then covers every member equally. The first m output bits
        // have rank m for every m exactly when the first 6 do (independent rows stay so in
        // any subset), and the CRC's response to each entropy bit is the same for every draw.
        let diffs = entropy_bit_diffs();
        loop {
            let mut rows = [0u32; 16];
            for r in &mut rows {
                *r = next() as u32;
            }
            let h = EcmpHash {
                rows,
                seed: next() as u16,
            };
            if h.rank(6, &diffs) == 6 {
                return h;
            }
        }
    }

    /// GF(2) rank of the map from the entropy bits whose CRC differences are `diffs` to the
    /// low `m` output bits.
    fn rank(&self, m: usize, diffs: &[u32; 6]) -> usize {
        let mut cols = diffs.map(|d| {
            (0..m).fold(0u16, |acc, i| {
                acc | ((((self.rows[i] & d).count_ones() & 1) as u16) << i)
            })
        });
        let mut rank = 0;
        for bit in 0..m {
            if let Some(p) = (rank..cols.len()).find(|&k| cols[k] >> bit & 1 == 1) {
                cols.swap(rank, p);
                let pivot = cols[rank];
                for (k, c) in cols.iter_mut().enumerate() {
                    if k != rank && *c >> bit & 1 == 1 {
                        *c ^= pivot;
                    }
                }
                rank += 1;
            }
        }
        rank
    }

    #[inline]
    pub fn hash(&self, flow: FlowId, dst: HostId, entropy: u16) -> u64 {
        let mut bytes = [0u8; 10];
        bytes[..4].copy_from_slice(&flow.0.to_le_bytes());
        bytes[4..8].copy_from_slice(&dst.0.to_le_bytes());
        bytes[8..].copy_from_slice(&entropy.to_le_bytes());
        let crc = crc32fast::hash(&bytes);
        let mut out = 0u16;
        for (i, &row) in self.rows.iter().enumerate() {
            out |= (((row & crc).count_ones() & 1) as u16) << i;
        }
        (out ^ self.seed) as u64
    }
}

/// What flipping each of the low 6 entropy bits does to the CRC (it is linear: the difference
/// is the same whatever the rest of the 5-tuple).
fn entropy_bit_diffs() -> [u32; 6] {
    let zero = crc32fast::hash(&[0u8; 10]);
    std::array::from_fn(|j| {
        let mut b = [0u8; 10];
        b[8..].copy_from_slice(&(1u16 << j).to_le_bytes());
        crc32fast::hash(&b) ^ zero
    })
}

/// Pick one of `n` members from a hash (modulo, as hash-threshold ECMP does).
#[inline]
pub fn pick(hash: u64, n: usize) -> usize {
    (hash % n as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_is_roughly_uniform() {
        let h = EcmpHash::new(99);
        let mut counts = [0u32; 4];
        for e in 0..4000u16 {
            counts[pick(h.hash(FlowId(1), HostId(2), e.wrapping_mul(7919)), 4)] += 1;
        }
        for c in counts {
            assert!((900..1100).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn a_full_round_of_low_entropy_bits_spreads_evenly() {
        // Linear hash: 256 consecutive entropy values over 8 members, 32 each.
        for salt in [0u64, 0xdead_beef_0000_0007, 0x1234_5678_9abc_def0] {
            let h = EcmpHash::new(salt);
            let mut counts = [0u32; 8];
            for e in 0..256u16 {
                counts[pick(h.hash(FlowId(3), HostId(9), 0x5a00 ^ e), 8)] += 1;
            }
            assert_eq!(counts, [32; 8], "salt {salt:x}");
        }
    }

    #[test]
    fn every_switch_spreads_a_round_of_64_evs_evenly() {
        for key in 0..200u64 {
            let h = EcmpHash::new(key);
            for n in [2usize, 4, 8, 16, 32, 64] {
                let mut counts = vec![0u32; n];
                for e in 0..64u16 {
                    counts[pick(h.hash(FlowId(key as u32), HostId(5), 0x3c40 ^ e), n)] += 1;
                }
                assert!(
                    counts.iter().all(|&c| c == 64 / n as u32),
                    "key {key}, n {n}: {counts:?}"
                );
            }
        }
    }

    #[test]
    fn salt_changes_the_choice() {
        let same = (0..1000u16)
            .filter(|&e| {
                pick(EcmpHash::new(1).hash(FlowId(0), HostId(1), e), 8)
                    == pick(EcmpHash::new(2).hash(FlowId(0), HostId(1), e), 8)
            })
            .count();
        assert!(same < 250, "salts should decorrelate choices: {same}/1000 equal");
    }
}
