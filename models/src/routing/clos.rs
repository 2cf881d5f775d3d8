//! Up/down routing of a regular Clos fabric from host addresses, without per-destination
//! tables: a leaf-spine, a fat tree (Al-Fares et al., SIGCOMM 2008, section 3), a rail fabric,
//! or a graph shaped like one.
//!
//! In such a fabric a switch's shortest paths toward a host follow from where the host is:
//! below the switch, the down ports toward the host's leaf (or pod); elsewhere, every up port
//! (each leads on a shortest path: every spine reaches every leaf, every core every pod). So a
//! switch keeps its up group and one down group per child, and each host its leaf and pod:
//! memory grows with ports and hosts, not with switches x hosts (a k = 64 fat tree has 5,120
//! switches and 65,536 hosts: 1.3 GB of tables, against a few MB here).
//!
//! [`Clos::build`] recognises the shape from the cables alone and answers `None` unless the
//! shortest paths are exactly the up/down paths, so its next-hop sets (and their port order)
//! are the ones [`super::Tables`] computes by BFS; the tests compare the two on every shape.
//! A fabric with a failed cable, hosts that forward, or hosts with several cables is routed
//! by tables.

use super::tables::Graph;
use crate::ids::{HostId, NodeId, PortId};

const NONE: u32 = u32::MAX;

/// Next-hop sets of a regular two- or three-tier Clos fabric.
///
/// Laid out for the lookup every switch hop makes: a node's tier, pod and up group share one
/// cache line, and so do a host's leaf, pod, key and the leaf's ports to it, so that a next
/// hop reads two records and at most one down group (a k = 64 fat tree's per-field arrays had
/// cost up to eight misses a hop). A group of consecutive ports is named by its first port,
/// so picking a member reads no port list.
#[derive(Debug, Clone, Default)]
pub struct Clos {
    /// Per node: its tier, pod, up group and down groups.
    node: Vec<NodeRoute>,
    /// Per host: its leaf, pod, key and the leaf's ports to it.
    host: Vec<HostRoute>,
    /// Down groups: node `s`'s for key `k` is `down[node[s].down_start + k]`.
    down: Vec<Span>,
    tiers: u8,
    /// The members of every group, for [`Clos::next_hops`]'s slices.
    ports: Vec<PortId>,
}

/// A group of egress ports: `ports[at..at + len]`, and its first port if they are
/// consecutive (`NONE` otherwise).
#[derive(Debug, Clone, Copy)]
struct Span {
    at: u32,
    len: u32,
    first: u32,
}

impl Span {
    const EMPTY: Span = Span {
        at: 0,
        len: 0,
        first: NONE,
    };
}

/// A node's routing record (one cache line).
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct NodeRoute {
    /// 0 host, 1 leaf (edge), 2 spine (aggregation), 3 core.
    level: u8,
    /// Its pod (aggregation switches), `NONE` elsewhere.
    pod: u32,
    /// Where its down groups start in `down`: a leaf has none (its hosts are
    /// [`HostRoute::group`]), a spine of a two-tier fabric one per leaf, an aggregation switch
    /// one per edge of its pod, a core one per pod.
    down_start: u32,
    /// Its up group (all ports to the tier above; a host's only port), empty at the top.
    up: Span,
}

/// A host's routing record (one cache line).
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct HostRoute {
    /// Its leaf, and the group of the leaf's ports to it.
    leaf: NodeId,
    group: Span,
    /// Its leaf's index (among all leaves in a two-tier fabric, within its pod in a
    /// three-tier one) and its pod.
    key: u32,
    pod: u32,
}

impl Clos {
    /// Up/down routing for `g` if it is a regular Clos fabric with every cable up.
    pub fn build(g: &Graph) -> Option<Clos> {
        let n = g.node_ports.len();
        if g.hosts_forward || g.port_up.is_some_and(|u| u.iter().any(|&x| !x)) || g.hosts.is_empty() {
            return None;
        }
        let peer = |p: u32| g.port_peer_node[p as usize].idx();
        // Levels: hosts 0, then the hop count from the nearest host, over switches.
        let mut level = vec![u8::MAX; n];
        let mut frontier = Vec::new();
        for &h in g.hosts {
            let ports = &g.node_ports[h.idx()];
            if ports.len() != 1 || g.is_host[peer(ports.start)] {
                return None;
            }
            level[h.idx()] = 0;
        }
        for &h in g.hosts {
            let s = peer(g.node_ports[h.idx()].start);
            if level[s] == u8::MAX {
                level[s] = 1;
                frontier.push(s);
            }
        }
        let mut lvl = 1u8;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &s in &frontier {
                for p in g.node_ports[s].clone() {
                    let m = peer(p);
                    if level[m] == u8::MAX {
                        level[m] = lvl + 1;
                        next.push(m);
                    }
                }
            }
            frontier = next;
            lvl += 1;
            if lvl > 4 {
                return None;
            }
        }
        let tiers = *level.iter().max()?;
        if tiers == u8::MAX || tiers > 3 {
            return None; // disconnected, or deeper than a three-tier fabric
        }
        // Every cable joins adjacent levels (no leaf-to-leaf, no edge-to-core cable).
        for (s, ports) in g.node_ports.iter().enumerate() {
            for p in ports.clone() {
                if level[s].abs_diff(level[peer(p)]) != 1 {
                    return None;
                }
            }
        }
        let lv: &[u8] = &level;
        let of_level = move |l: u8| (0..n).filter(move |&s| lv[s] == l);
        let leaves: Vec<usize> = of_level(1).collect();
        let mut leaf_index = vec![NONE; n];
        for (i, &s) in leaves.iter().enumerate() {
            leaf_index[s] = i as u32;
        }
        let below = move |s: usize| {
            g.node_ports[s]
                .clone()
                .map(peer)
                .filter(move |&m| lv[m] + 1 == lv[s])
        };
        let above = move |s: usize| {
            g.node_ports[s]
                .clone()
                .map(peer)
                .filter(move |&m| lv[m] == lv[s] + 1)
        };
        // Pods (three tiers): the leaves and aggregation switches joined through each other;
        // every aggregation switch must reach every leaf of its pod, and every core every pod.
        let mut pod_of_node = vec![NONE; n];
        let mut pods = 0u32;
        let mut pos_in_pod = vec![NONE; n];
        if tiers == 3 {
            for &l in &leaves {
                if pod_of_node[l] != NONE {
                    continue;
                }
                let aggs: Vec<usize> = above(l).collect();
                let first = *aggs.first()?;
                let mut edges: Vec<usize> = below(first).collect();
                edges.sort_unstable();
                edges.dedup();
                for (i, &e) in edges.iter().enumerate() {
                    if pod_of_node[e] != NONE {
                        return None;
                    }
                    pod_of_node[e] = pods;
                    pos_in_pod[e] = i as u32;
                }
                let mut members: Vec<usize> = edges.iter().flat_map(|&e| above(e)).collect();
                members.sort_unstable();
                members.dedup();
                for &a in &members {
                    let mut under: Vec<usize> = below(a).collect();
                    under.sort_unstable();
                    under.dedup();
                    if under != edges || above(a).next().is_none() || pod_of_node[a] != NONE {
                        return None;
                    }
                    pod_of_node[a] = pods;
                }
                pods += 1;
            }
            for c in of_level(3) {
                let mut reach: Vec<u32> = below(c).map(|a| pod_of_node[a]).collect();
                reach.sort_unstable();
                reach.dedup();
                if reach.len() != pods as usize {
                    return None;
                }
            }
        } else if tiers == 2 {
            for s in of_level(2) {
                let mut under: Vec<usize> = below(s).collect();
                under.sort_unstable();
                under.dedup();
                if under.len() != leaves.len() {
                    return None;
                }
            }
        }
        if tiers >= 2 && leaves.iter().any(|&l| above(l).next().is_none()) {
            return None;
        }

        let mut c = Clos {
            node: level
                .iter()
                .map(|&level| NodeRoute {
                    level,
                    pod: NONE,
                    down_start: NONE,
                    up: Span::EMPTY,
                })
                .collect(),
            tiers,
            ..Default::default()
        };
        let mut groups: Vec<Vec<PortId>> = Vec::new();
        for s in 0..n {
            let ports = g.node_ports[s].clone();
            match c.node[s].level {
                0 => c.node[s].up = c.push(&[PortId(ports.start)]),
                l => {
                    if l < tiers {
                        let up: Vec<PortId> = ports
                            .clone()
                            .filter(|&p| c.node[peer(p)].level > l)
                            .map(PortId)
                            .collect();
                        c.node[s].up = c.push(&up);
                    }
                    // Down groups, keyed by the child a destination sits under.
                    let key = |m: usize| match (tiers, l) {
                        (_, 1) => None,
                        (2, 2) => Some(leaf_index[m]),
                        (3, 2) => Some(pos_in_pod[m]),
                        _ => Some(pod_of_node[m]),
                    };
                    let keys = match (tiers, l) {
                        (_, 1) => 0,
                        (2, 2) => leaves.len(),
                        (3, 2) => leaves
                            .iter()
                            .filter(|&&e| pod_of_node[e] == pod_of_node[s])
                            .count(),
                        _ => pods as usize,
                    };
                    if keys > 0 {
                        groups.clear();
                        groups.resize(keys, Vec::new());
                        for p in ports.filter(|&p| c.node[peer(p)].level < l) {
                            groups[key(peer(p))? as usize].push(PortId(p));
                        }
                        c.node[s].down_start = c.down.len() as u32;
                        for group in &groups {
                            let span = c.push(group);
                            c.down.push(span);
                        }
                    }
                    if l == 2 && tiers == 3 {
                        c.node[s].pod = pod_of_node[s];
                    }
                }
            }
        }
        for &h in g.hosts {
            let leaf = peer(g.node_ports[h.idx()].start);
            let to_host: Vec<PortId> = g.node_ports[leaf]
                .clone()
                .filter(|&p| peer(p) == h.idx())
                .map(PortId)
                .collect();
            let group = c.push(&to_host);
            c.host.push(HostRoute {
                leaf: NodeId(leaf as u32),
                group,
                key: if tiers == 3 {
                    pos_in_pod[leaf]
                } else {
                    leaf_index[leaf]
                },
                pod: pod_of_node[leaf],
            });
        }
        Some(c)
    }

    /// Store a group's members; its span.
    fn push(&mut self, ports: &[PortId]) -> Span {
        let at = self.ports.len() as u32;
        self.ports.extend_from_slice(ports);
        let consecutive = ports.windows(2).all(|w| w[1].0 == w[0].0.wrapping_add(1));
        Span {
            at,
            len: ports.len() as u32,
            first: match ports.first() {
                Some(p) if consecutive => p.0,
                _ => NONE,
            },
        }
    }

    /// The group of egress ports on a shortest path from `node` toward host `dst`.
    #[inline]
    fn span(&self, node: NodeId, dst: HostId) -> Span {
        let n = &self.node[node.idx()];
        match n.level {
            0 => n.up,
            1 => {
                let h = &self.host[dst.idx()];
                if h.leaf == node { h.group } else { n.up }
            }
            2 => {
                let h = &self.host[dst.idx()];
                if self.tiers == 2 || n.pod == h.pod {
                    self.down[(n.down_start + h.key) as usize]
                } else {
                    n.up
                }
            }
            _ => self.down[(n.down_start + self.host[dst.idx()].pod) as usize],
        }
    }

    /// The records [`Self::pick`] reads first for `dst` at `node` (a prefetch hint: the
    /// down group it may read after them depends on them).
    #[inline]
    pub fn lines(&self, node: NodeId, dst: HostId) -> [*const u8; 2] {
        [
            self.node.as_ptr().wrapping_add(node.idx()) as *const u8,
            self.host.as_ptr().wrapping_add(dst.idx()) as *const u8,
        ]
    }

    /// Egress ports on a shortest path from `node` toward host `dst`.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: HostId) -> &[PortId] {
        let s = self.span(node, dst);
        &self.ports[s.at as usize..(s.at + s.len) as usize]
    }

    /// The member `choose(n)` (below `n`) of the `n` egress ports [`Clos::next_hops`] gives,
    /// asked only when there are several; None if there are none.
    #[inline(always)]
    pub fn pick(&self, node: NodeId, dst: HostId, choose: impl FnOnce(usize) -> usize) -> Option<PortId> {
        let s = self.span(node, dst);
        let i = match s.len {
            0 => return None,
            1 => 0,
            n => choose(n as usize) as u32,
        };
        Some(if s.first != NONE {
            PortId(s.first + i)
        } else {
            self.ports[(s.at + i) as usize]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Tables;
    use super::*;
    use crate::network::Network;
    use crate::routing::Routing;
    use crate::topology::TopologyConfig;

    /// The fabric of `toml` (a `[topology]` table's body) and the graph its routes see.
    fn routes(toml: &str) -> (Option<Clos>, Tables, usize, usize) {
        let cfg: TopologyConfig = toml::from_str(toml).unwrap();
        let t = cfg.build().unwrap();
        let net = Network::build(&t, Routing::Ecmp, &sim_core::RngStreams::new(1));
        let (port_peer_node, is_host) = net.route_graph_parts();
        let g = Graph {
            node_ports: &net.node_ports,
            port_peer_node: &port_peer_node,
            is_host: &is_host,
            hosts: &t.hosts,
            hosts_forward: t.hosts_forward,
            port_up: None,
        };
        (Clos::build(&g), Tables::build(&g), t.nodes.len(), t.hosts.len())
    }

    /// Clos routing recognises `toml`'s fabric and gives the BFS tables' next hops, in the
    /// same order, from every node to every host.
    fn same_as_tables(toml: &str) {
        let (clos, tables, nodes, hosts) = routes(toml);
        let clos = clos.unwrap_or_else(|| panic!("not recognised as a Clos fabric: {toml}"));
        for n in 0..nodes as u32 {
            for h in 0..hosts as u32 {
                let (a, b) = (
                    clos.next_hops(NodeId(n), HostId(h)),
                    tables.next_hops(NodeId(n), HostId(h)),
                );
                assert_eq!(a, b, "node {n} to h{h} in {toml}");
                assert!(!a.is_empty());
                // Each member picked without the list is the list's.
                for i in 0..a.len() {
                    let picked = clos.pick(NodeId(n), HostId(h), |m| {
                        assert_eq!(m, a.len(), "asked only with several members");
                        i
                    });
                    assert_eq!(picked, Some(a[i]), "node {n} to h{h}, member {i}");
                }
            }
        }
    }

    const LINKS: &str = r#"host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "100Gbps", delay = "1us" }"#;

    #[test]
    fn fat_trees_leaf_spines_and_rails_route_as_their_tables() {
        for k in [2, 4, 6, 8] {
            same_as_tables(&format!("kind = \"fat-tree\"\nk = {k}\n{LINKS}"));
        }
        for (l, s, h, x) in [(1, 1, 3, 1), (2, 3, 2, 1), (4, 2, 3, 2), (3, 4, 1, 3)] {
            same_as_tables(&format!(
                "kind = \"leaf-spine\"\nleaves = {l}\nspines = {s}\nhosts_per_leaf = {h}\nlinks_per_spine = {x}\n{LINKS}"
            ));
        }
        same_as_tables(&format!(
            "kind = \"rail\"\nunits = 2\nservers_per_unit = 3\nnics_per_host = 4\nspines = 2\n{LINKS}"
        ));
        same_as_tables("kind = \"star\"\nhosts = 5\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }");
    }

    #[test]
    fn irregular_fabrics_keep_tables() {
        // A ring of hosts forwards; a chain of switches is deeper than three tiers; a
        // dumbbell's and a switch ring's switches are cabled within a tier.
        for toml in [
            "kind = \"ring\"\nhosts = 4\nlink = { rate = \"100Gbps\", delay = \"1us\" }",
            "kind = \"back-to-back\"\nlink = { rate = \"100Gbps\", delay = \"1us\" }",
        ] {
            assert!(routes(toml).0.is_none(), "{toml}");
        }
        // A spine that misses a leaf: the leaf-to-leaf paths are not all up/down.
        let graph = r#"kind = "graph"
nodes = [{ name = "l0", kind = "switch" }, { name = "l1", kind = "switch" }, { name = "l2", kind = "switch" },
         { name = "s0", kind = "switch" }, { name = "s1", kind = "switch" },
         { name = "a", kind = "host" }, { name = "b", kind = "host" }, { name = "c", kind = "host" }]
links = [{ a = "a", b = "l0", rate = "100Gbps", delay = "1us" }, { a = "b", b = "l1", rate = "100Gbps", delay = "1us" },
         { a = "c", b = "l2", rate = "100Gbps", delay = "1us" },
         { a = "l0", b = "s0", rate = "100Gbps", delay = "1us" }, { a = "l1", b = "s0", rate = "100Gbps", delay = "1us" },
         { a = "l2", b = "s0", rate = "100Gbps", delay = "1us" },
         { a = "l0", b = "s1", rate = "100Gbps", delay = "1us" }, { a = "l1", b = "s1", rate = "100Gbps", delay = "1us" }]"#;
        assert!(routes(graph).0.is_none());
        // With s1 cabled to l2 as well, it is a leaf-spine.
        same_as_tables(&graph.replace(
            "{ a = \"l1\", b = \"s1\", rate = \"100Gbps\", delay = \"1us\" }]",
            "{ a = \"l1\", b = \"s1\", rate = \"100Gbps\", delay = \"1us\" }, { a = \"l2\", b = \"s1\", rate = \"100Gbps\", delay = \"1us\" }]",
        ));
    }
}
