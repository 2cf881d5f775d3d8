//! Shortest-path routing with every equal-cost next hop, and ECMP.
//!
//! Each switch (and each host with more than one port) holds, per destination host, the set
//! of egress ports on a shortest path: what BGP or OSPF with ECMP multipath installs in a Clos
//! fabric (RFC 7938, "Use of BGP for Routing in Large-Scale Data Centers"). Sets are interned
//! (a leaf has "the direct port" and "all uplinks"), so tables stay small at 8192 hosts.
//!
//! ECMP picks one member per packet by hashing the 5-tuple (src IP, dst IP, protocol, UDP
//! source port = the packet's entropy, UDP destination port) with a CRC, as Broadcom (RTAG7)
//! and NVIDIA ASICs do, and taking it modulo the number of members (RFC 2992). A CRC is
//! linear in its input: cycling the low bits of the entropy through a full power-of-two
//! round hits every member equally often, which is what makes oblivious packet spraying
//! even. Each switch XORs a seed and reads a different window of the CRC's bits, as ASICs
//! select per-switch hash bits to avoid polarisation (the same choice at every tier).

use crate::ids::{FlowId, HostId, NodeId, PortId};
use std::collections::{HashMap, VecDeque};
use std::ops::Range;

/// What the route builder needs to know about the graph.
pub struct Graph<'a> {
    /// Ports of each node, as a contiguous range of port ids.
    pub node_ports: &'a [Range<u32>],
    /// The node at the far end of each port's cable.
    pub port_peer_node: &'a [NodeId],
    pub is_host: &'a [bool],
    /// Node of each host.
    pub hosts: &'a [NodeId],
    /// Hosts forward transit traffic (switchless rings).
    pub hosts_forward: bool,
    /// Ports whose cable works (all, when None).
    pub port_up: Option<&'a [bool]>,
}

impl Graph<'_> {
    #[inline]
    fn up(&self, p: u32) -> bool {
        self.port_up.is_none_or(|u| u[p as usize])
    }
}

/// Routing tables for every node.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// Per node: row index into `table`, or `NONE` for single-port hosts (default route).
    row_of_node: Vec<u32>,
    /// `table[row * hosts + dst]` = next-hop group, `NONE` when unreachable.
    table: Vec<u32>,
    hosts: usize,
    /// Group `g` is `group_ports[group_start[g]..group_start[g + 1]]`.
    group_start: Vec<u32>,
    group_ports: Vec<PortId>,
}

const NONE: u32 = u32::MAX;

impl Routes {
    /// Compute all-shortest-path next hops by one BFS per destination attachment point.
    pub fn build(g: &Graph) -> Routes {
        let n_nodes = g.node_ports.len();
        let n_hosts = g.hosts.len();
        let mut routes = Routes {
            row_of_node: vec![NONE; n_nodes],
            hosts: n_hosts,
            ..Default::default()
        };
        routes.group_start.push(0);
        let mut rows = 0u32;
        for n in 0..n_nodes {
            if !g.is_host[n] || g.node_ports[n].len() > 1 {
                routes.row_of_node[n] = rows;
                rows += 1;
            }
        }
        routes.table = vec![NONE; rows as usize * n_hosts];
        let mut interned: HashMap<Vec<PortId>, u32> = HashMap::new();

        // A host with one cable to a switch is reached through that switch: hosts sharing a
        // switch share one BFS (its distances plus the last hop).
        let anchor = |h: NodeId| -> NodeId {
            let ports = &g.node_ports[h.idx()];
            if ports.len() == 1 {
                let peer = g.port_peer_node[ports.start as usize];
                if !g.is_host[peer.idx()] {
                    return peer;
                }
            }
            h
        };
        let mut by_anchor: Vec<(NodeId, Vec<usize>)> = Vec::new();
        let mut anchor_index: HashMap<NodeId, usize> = HashMap::new();
        for (hi, &h) in g.hosts.iter().enumerate() {
            let a = anchor(h);
            let i = *anchor_index.entry(a).or_insert_with(|| {
                by_anchor.push((a, Vec::new()));
                by_anchor.len() - 1
            });
            by_anchor[i].1.push(hi);
        }

        let mut dist = vec![u32::MAX; n_nodes];
        let mut queue = VecDeque::new();
        let mut hops = Vec::new();
        for (a, dest_hosts) in &by_anchor {
            bfs(g, *a, &mut dist, &mut queue);
            for n in 0..n_nodes {
                let row = routes.row_of_node[n];
                if row == NONE || dist[n] == u32::MAX {
                    continue;
                }
                // Next hops toward the anchor, shared by all its hosts.
                hops.clear();
                if n != a.idx() {
                    for p in g.node_ports[n].clone().filter(|&p| g.up(p)) {
                        let m = g.port_peer_node[p as usize];
                        if dist[m.idx()] != u32::MAX && dist[m.idx()] + 1 == dist[n] {
                            hops.push(PortId(p));
                        }
                    }
                }
                let toward_anchor = if hops.is_empty() {
                    NONE
                } else {
                    routes.intern(&mut interned, &hops)
                };
                for &hi in dest_hosts {
                    let h = g.hosts[hi];
                    let group = if n == a.idx() && n != h.idx() {
                        // The anchor switch itself: the port(s) cabled to the host.
                        hops.clear();
                        hops.extend(
                            g.node_ports[n]
                                .clone()
                                .filter(|&p| g.up(p) && g.port_peer_node[p as usize] == h)
                                .map(PortId),
                        );
                        routes.intern(&mut interned, &hops)
                    } else {
                        toward_anchor
                    };
                    routes.table[row as usize * n_hosts + hi] = group;
                }
            }
        }
        routes
    }

    fn intern(&mut self, interned: &mut HashMap<Vec<PortId>, u32>, ports: &[PortId]) -> u32 {
        if let Some(&g) = interned.get(ports) {
            return g;
        }
        let g = (self.group_start.len() - 1) as u32;
        self.group_ports.extend_from_slice(ports);
        self.group_start.push(self.group_ports.len() as u32);
        interned.insert(ports.to_vec(), g);
        g
    }

    /// Egress ports on a shortest path from `node` toward host `dst`; empty if unreachable.
    /// Single-port hosts have no table: the caller uses their only port.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: HostId) -> &[PortId] {
        let row = self.row_of_node[node.idx()];
        if row == NONE {
            return &[];
        }
        let g = self.table[row as usize * self.hosts + dst.idx()];
        if g == NONE {
            return &[];
        }
        &self.group_ports[self.group_start[g as usize] as usize..self.group_start[g as usize + 1] as usize]
    }

    /// True when `node` has its own table (switches, multi-port hosts).
    pub fn has_table(&self, node: NodeId) -> bool {
        self.row_of_node[node.idx()] != NONE
    }
}

/// Distances (in hops) from `src` to every node; hosts other than `src` are not transited
/// unless the topology lets hosts forward.
fn bfs(g: &Graph, src: NodeId, dist: &mut [u32], queue: &mut VecDeque<NodeId>) {
    dist.fill(u32::MAX);
    dist[src.idx()] = 0;
    queue.push_back(src);
    while let Some(n) = queue.pop_front() {
        if n != src && g.is_host[n.idx()] && !g.hosts_forward {
            continue;
        }
        for p in g.node_ports[n.idx()].clone().filter(|&p| g.up(p)) {
            let m = g.port_peer_node[p as usize];
            if dist[m.idx()] == u32::MAX {
                dist[m.idx()] = dist[n.idx()] + 1;
                queue.push_back(m);
            }
        }
    }
}

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
        // rank: one round of 64 EVs then covers every member equally.
        loop {
            let mut rows = [0u32; 16];
            for r in &mut rows {
                *r = next() as u32;
            }
            let h = EcmpHash {
                rows,
                seed: next() as u16,
            };
            if (1..=6).all(|m| h.rank(m, 6) == m) {
                return h;
            }
        }
    }

    /// GF(2) rank of the map from the low `bits` entropy bits to the low `m` output bits.
    fn rank(&self, m: usize, bits: usize) -> usize {
        let zero = crc32fast::hash(&[0u8; 10]);
        let mut cols: Vec<u16> = (0..bits)
            .map(|j| {
                let mut b = [0u8; 10];
                b[8..].copy_from_slice(&(1u16 << j).to_le_bytes());
                let d = crc32fast::hash(&b) ^ zero;
                (0..m).fold(0u16, |acc, i| {
                    acc | ((((self.rows[i] & d).count_ones() & 1) as u16) << i)
                })
            })
            .collect();
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
