//! Shortest-path routing tables with every equal-cost next hop.
//!
//! Each switch (and each host with more than one port) holds, per destination host, the set
//! of egress ports on a shortest path: what BGP or OSPF with ECMP multipath installs in a Clos
//! fabric (RFC 7938, "Use of BGP for Routing in Large-Scale Data Centers"). Sets are interned
//! (a leaf has "the direct port" and "all uplinks"), so tables stay small at 8192 hosts.

use crate::ids::{HostId, NodeId, PortId};
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

/// Routing tables for every node (any topology; [`super::Clos`] routes regular fabrics
/// without them).
#[derive(Debug, Clone, Default)]
pub struct Tables {
    /// Per node: row index into `table`, or `NONE` for single-port hosts (default route).
    row_of_node: Vec<u32>,
    /// Per node without a table: its only port, the default route (`PortId::NONE` otherwise).
    only_port: Vec<PortId>,
    /// `table[row * hosts + dst]` = next-hop group, `NONE` when unreachable.
    table: Vec<u32>,
    hosts: usize,
    /// Group `g` is `group_ports[group_start[g]..group_start[g + 1]]`.
    group_start: Vec<u32>,
    group_ports: Vec<PortId>,
}

const NONE: u32 = u32::MAX;

impl Tables {
    /// Compute all-shortest-path next hops by one BFS per destination attachment point.
    pub fn build(g: &Graph) -> Tables {
        let n_nodes = g.node_ports.len();
        let n_hosts = g.hosts.len();
        let mut routes = Tables {
            row_of_node: vec![NONE; n_nodes],
            hosts: n_hosts,
            ..Default::default()
        };
        routes.group_start.push(0);
        let mut rows = 0u32;
        routes.only_port = vec![PortId::NONE; n_nodes];
        for n in 0..n_nodes {
            if !g.is_host[n] || g.node_ports[n].len() > 1 {
                routes.row_of_node[n] = rows;
                rows += 1;
            } else if g.node_ports[n].len() == 1 {
                routes.only_port[n] = PortId(g.node_ports[n].start);
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
    /// A single-port host has no table: its only port is its route to everywhere.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: HostId) -> &[PortId] {
        let row = self.row_of_node[node.idx()];
        if row == NONE {
            let only = &self.only_port[node.idx()];
            return if only.is_none() {
                &[]
            } else {
                std::slice::from_ref(only)
            };
        }
        let g = self.table[row as usize * self.hosts + dst.idx()];
        if g == NONE {
            return &[];
        }
        &self.group_ports[self.group_start[g as usize] as usize..self.group_start[g as usize + 1] as usize]
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
