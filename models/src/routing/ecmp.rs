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
///
/// The map is drawn as 16 rows of 32 bits (output bit `i` is the parity of row `i` AND the
/// CRC) and kept as its 32 columns, four 16-bit columns to a word: the output is the XOR of
/// the columns of the CRC's set bits, four at a time through a 16-entry mask of lanes (about
/// half the instructions of sixteen parities, in the same 64 bytes).
#[derive(Debug, Clone)]
pub struct EcmpHash {
    cols: [u64; 8],
    seed: u16,
}

impl EcmpHash {
    /// The hash function of the switch whose seed is `key`.
    pub fn new(key: u64) -> Self {
        let (rows, seed) = draw(key);
        Self::of_rows(&rows, seed)
    }

    /// The function whose map has these rows.
    fn of_rows(rows: &[u32; 16], seed: u16) -> Self {
        let cols = std::array::from_fn(|w| {
            (0..4).fold(0u64, |word, lane| {
                let j = 4 * w + lane;
                let col = (0..16).fold(0u64, |c, i| c | ((rows[i] >> j) as u64 & 1) << i);
                word | col << (16 * lane)
            })
        });
        EcmpHash { cols, seed }
    }

    #[inline]
    pub fn hash(&self, flow: FlowId, dst: HostId, entropy: u16) -> u64 {
        let crc = crc_5tuple(flow, dst, entropy);
        let mut acc = 0u64;
        for (w, &col) in self.cols.iter().enumerate() {
            acc ^= LANES[(crc >> (4 * w)) as usize & 15] & col;
        }
        let out = (acc ^ acc >> 16 ^ acc >> 32 ^ acc >> 48) as u16;
        (out ^ self.seed) as u64
    }
}

/// The rows and seed of the map for `key`: rows are drawn until every group size 2^m (m <= 6)
/// sees the low 6 entropy bits at full rank, so one round of 64 EVs covers every member
/// equally. The first m output bits have rank m for every m exactly when the first 6 do
/// (independent rows stay so in any subset), and the CRC's response to each entropy bit is
/// the same for every draw.
fn draw(key: u64) -> ([u32; 16], u16) {
    let mut state = key;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        sim_core::rng::mix64(state)
    };
    let diffs = entropy_bit_diffs();
    loop {
        let mut rows = [0u32; 16];
        for r in &mut rows {
            *r = next() as u32;
        }
        let seed = next() as u16;
        if rank(&rows, 6, &diffs) == 6 {
            return (rows, seed);
        }
    }
}

/// GF(2) rank of the map from the entropy bits whose CRC differences are `diffs` to the low
/// `m` output bits of the map whose rows are `rows`.
fn rank(rows: &[u32; 16], m: usize, diffs: &[u32; 6]) -> usize {
    let mut cols = diffs.map(|d| {
        (0..m).fold(0u16, |acc, i| {
            acc | ((((rows[i] & d).count_ones() & 1) as u16) << i)
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

/// For each 4 bits of the CRC, the 16-bit lanes of a column word to keep: lane `l` when bit
/// `l` is set.
const LANES: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut m = 0;
    while m < 16 {
        let mut l = 0;
        while l < 4 {
            if m >> l & 1 == 1 {
                t[m] |= 0xffff << (16 * l);
            }
            l += 1;
        }
        m += 1;
    }
    t
};

/// CRC-32 (IEEE 802.3: reflected, polynomial 0x04C11DB7, initial and final inversion) of the
/// 10-byte 5-tuple (flow, destination and entropy, little-endian). A CRC of a fixed length is
/// affine in its bytes: the CRC of ten zero bytes XOR each byte's own contribution, one table
/// per position, built when the crate compiles.
#[inline]
fn crc_5tuple(flow: FlowId, dst: HostId, entropy: u16) -> u32 {
    crc10(&tuple_bytes(flow, dst, entropy))
}

/// The bytes the CRC reads: flow, destination and entropy, little-endian.
#[inline]
fn tuple_bytes(flow: FlowId, dst: HostId, entropy: u16) -> [u8; 10] {
    let mut bytes = [0u8; 10];
    bytes[..4].copy_from_slice(&flow.0.to_le_bytes());
    bytes[4..8].copy_from_slice(&dst.0.to_le_bytes());
    bytes[8..].copy_from_slice(&entropy.to_le_bytes());
    bytes
}

#[inline]
fn crc10(bytes: &[u8; 10]) -> u32 {
    let mut crc = CRC10.zero;
    for (table, &b) in CRC10.by_byte.iter().zip(bytes) {
        crc ^= table[b as usize];
    }
    crc
}

struct Crc10 {
    zero: u32,
    by_byte: [[u32; 256]; 10],
}

static CRC10: Crc10 = {
    // The byte-at-a-time table: byte `b` alone in a cleared register, shifted out.
    let mut table = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut reg = b as u32;
        let mut i = 0;
        while i < 8 {
            reg = (reg >> 1) ^ (0xedb8_8320 & 0u32.wrapping_sub(reg & 1));
            i += 1;
        }
        table[b] = reg;
        b += 1;
    }
    // Byte `k`'s contribution: its byte, then the 9 - k zero bytes after it.
    let mut by_byte = [[0u32; 256]; 10];
    let mut k = 0;
    while k < 10 {
        let mut b = 0;
        while b < 256 {
            let mut reg = table[b];
            let mut z = k + 1;
            while z < 10 {
                reg = (reg >> 8) ^ table[(reg & 0xff) as usize];
                z += 1;
            }
            by_byte[k][b] = reg;
            b += 1;
        }
        k += 1;
    }
    // Ten zero bytes from the all-ones register, inverted.
    let mut reg = !0u32;
    let mut z = 0;
    while z < 10 {
        reg = (reg >> 8) ^ table[(reg & 0xff) as usize];
        z += 1;
    }
    Crc10 { zero: !reg, by_byte }
};

/// What flipping each of the low 6 entropy bits does to the CRC (it is linear: the difference
/// is the same whatever the rest of the 5-tuple).
fn entropy_bit_diffs() -> [u32; 6] {
    let zero = crc10(&[0u8; 10]);
    std::array::from_fn(|j| {
        let mut b = [0u8; 10];
        b[8..].copy_from_slice(&(1u16 << j).to_le_bytes());
        crc10(&b) ^ zero
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
    fn the_tables_compute_the_ieee_crc_and_the_columns_the_rows_parities() {
        let mut n = 0u64;
        let mut next = || {
            n += 1;
            sim_core::rng::mix64(n)
        };
        for key in 0..300u64 {
            let (rows, seed) = draw(key);
            let h = EcmpHash::of_rows(&rows, seed);
            for _ in 0..50 {
                let (flow, dst, entropy) = (next() as u32, next() as u32, next() as u16);
                let bytes = tuple_bytes(FlowId(flow), HostId(dst), entropy);
                // The reference: the crc32fast crate, then sixteen parities.
                let crc = crc32fast::hash(&bytes);
                assert_eq!(crc10(&bytes), crc);
                let out = (0..16).fold(0u16, |o, i| o | (((rows[i] & crc).count_ones() & 1) as u16) << i);
                assert_eq!(h.hash(FlowId(flow), HostId(dst), entropy), (out ^ seed) as u64);
            }
        }
        // The check value of CRC-32/ISO-HDLC (the same CRC, over "123456789").
        assert_eq!(crc32fast::hash(b"123456789"), 0xcbf4_3926);
    }

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
