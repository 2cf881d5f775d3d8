//! The fabric as arenas: nodes, their ports (each with its outgoing link), and routing.
//!
//! Ports of a node are contiguous ids, so "the ports of node n" is a range and a port's index
//! within its node is `port - range.start`. `peer[p]` is the port at the other end of p's
//! cable: packets p transmits arrive at `peer[p]`'s node.

use crate::ids::{HostId, NodeId, PortId, SwitchId};
use crate::link::Link;
use crate::pool::PacketPool;
use crate::port::Port;
use crate::routing::{Graph, Router, Routes, Routing};
use crate::topology::{NodeKind, Topology};
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Host(HostId),
    Switch(SwitchId),
}

/// Not `Clone`: its ports' and links' FIFOs index into `pool`.
#[derive(Debug)]
pub struct Network {
    pub names: Vec<String>,
    pub roles: Vec<Role>,
    pub node_ports: Vec<Range<u32>>,
    pub ports: Vec<Port>,
    /// `links[p]` is the wire leaving port `p`.
    pub links: Vec<Link>,
    /// The frames every port queue, cable and NIC receive buffer (`Sim::rx`) holds.
    pub pool: PacketPool,
    /// INT stacks of the packets that carry one (HPCC).
    pub int: crate::int::IntPool,
    pub port_node: Vec<NodeId>,
    pub peer: Vec<PortId>,
    /// Routing tables, ECMP hashes and the switches' policy.
    pub router: Router,
    pub host_node: Vec<NodeId>,
    pub switch_node: Vec<NodeId>,
    /// Ports whose cable works (faults take them down).
    pub port_up: Vec<bool>,
    /// Link level retry of the cable leaving each port (`crate::llr`); empty when no cable
    /// runs it, so the hot path asks one flag.
    pub llr: Vec<Option<Box<crate::llr::Llr>>>,
    hosts_forward: bool,
}

/// How `t`'s cables land on ports: ports are numbered node by node, each node's in the order
/// its cables are listed.
pub struct Wiring {
    pub node_ports: Vec<Range<u32>>,
    pub port_node: Vec<NodeId>,
    /// The port at the other end of each port's cable.
    pub peer: Vec<PortId>,
    /// The cable (index into `t.links`) of each port.
    pub port_link: Vec<u32>,
}

impl Wiring {
    pub fn of(t: &Topology) -> Wiring {
        let mut degree = vec![0u32; t.nodes.len()];
        for l in &t.links {
            degree[l.a.idx()] += 1;
            degree[l.b.idx()] += 1;
        }
        let mut node_ports = Vec::with_capacity(degree.len());
        let mut next = 0u32;
        for d in &degree {
            node_ports.push(next..next + d);
            next += d;
        }
        let total = next as usize;
        let mut fill: Vec<u32> = node_ports.iter().map(|r| r.start).collect();
        let mut port_node = vec![NodeId(0); total];
        let mut peer = vec![PortId(0); total];
        let mut port_link = vec![0u32; total];
        for (i, l) in t.links.iter().enumerate() {
            let (pa, pb) = (fill[l.a.idx()], fill[l.b.idx()]);
            fill[l.a.idx()] += 1;
            fill[l.b.idx()] += 1;
            for (p, q, node) in [(pa, pb, l.a), (pb, pa, l.b)] {
                port_node[p as usize] = node;
                peer[p as usize] = PortId(q);
                port_link[p as usize] = i as u32;
            }
        }
        Wiring {
            node_ports,
            port_node,
            peer,
            port_link,
        }
    }

    /// Whether `t` is routed from addresses ([`crate::routing::Clos`]) rather than by
    /// per-destination tables.
    pub fn is_clos(&self, t: &Topology) -> bool {
        let (port_peer_node, is_host) = self.graph_parts(t);
        crate::routing::Clos::build(&Graph {
            node_ports: &self.node_ports,
            port_peer_node: &port_peer_node,
            is_host: &is_host,
            hosts: &t.hosts,
            hosts_forward: t.hosts_forward,
            port_up: None,
        })
        .is_some()
    }

    /// What the route builders need besides the port ranges: each port's far node, and which
    /// nodes are hosts.
    fn graph_parts(&self, t: &Topology) -> (Vec<NodeId>, Vec<bool>) {
        let is_host = t.nodes.iter().map(|s| s.kind == NodeKind::Host).collect();
        let port_peer_node = self.peer.iter().map(|q| self.port_node[q.idx()]).collect();
        (port_peer_node, is_host)
    }
}

impl Network {
    /// The fabric of `t`, its switches routing by `policy`, hash salts from `streams`.
    pub fn build(t: &Topology, policy: Routing, streams: &sim_core::RngStreams) -> Network {
        let n = t.nodes.len();
        let wiring = Wiring::of(t);
        let (port_peer_node, is_host) = wiring.graph_parts(t);
        let Wiring {
            node_ports,
            port_node,
            peer,
            port_link,
        } = wiring;
        let ports: Vec<Port> = port_link
            .iter()
            .map(|&l| Port::new(t.links[l as usize].rate))
            .collect();
        let links: Vec<Link> = port_link
            .iter()
            .enumerate()
            .map(|(p, &l)| {
                let l = &t.links[l as usize];
                Link::with_errors(l.delay, l.errors, || streams.stream("link-loss", p as u64))
            })
            .collect();
        let (mut roles, mut host_node, mut switch_node) = (Vec::with_capacity(n), Vec::new(), Vec::new());
        for (i, spec) in t.nodes.iter().enumerate() {
            roles.push(match spec.kind {
                NodeKind::Host => {
                    host_node.push(NodeId(i as u32));
                    Role::Host(HostId(host_node.len() as u32 - 1))
                }
                NodeKind::Switch => {
                    switch_node.push(NodeId(i as u32));
                    Role::Switch(SwitchId(switch_node.len() as u32 - 1))
                }
            });
        }
        debug_assert_eq!(host_node, t.hosts);
        // A cable whose ends' FEC modes differ never comes up; routing never learns it.
        let port_up: Vec<bool> = port_link.iter().map(|&l| t.links[l as usize].up).collect();
        let all_up = port_up.iter().all(|&u| u);
        let tables = Routes::build(&Graph {
            node_ports: &node_ports,
            port_peer_node: &port_peer_node,
            is_host: &is_host,
            hosts: &t.hosts,
            hosts_forward: t.hosts_forward,
            port_up: (!all_up).then_some(&port_up[..]),
        });
        let llr: Vec<Option<Box<crate::llr::Llr>>> = match t.links.iter().any(|l| l.llr.is_some()) {
            false => Vec::new(),
            true => port_link
                .iter()
                .zip(&port_node)
                .map(|(&l, &node)| {
                    let l = &t.links[l as usize];
                    let end = usize::from(node != l.a);
                    // This direction runs its sender's profile, but for the spacing of the
                    // ACKs its receiver sends: the receiving port's (CTLOS_TARGET_SPACING).
                    let cfg = |c: &[crate::llr::LlrConfig; 2]| crate::llr::LlrConfig {
                        ctlos_spacing: c[1 - end].ctlos_spacing,
                        ..c[end]
                    };
                    l.llr.as_ref().map(|c| Box::new(crate::llr::Llr::new(cfg(c))))
                })
                .collect(),
        };
        Network {
            names: t.nodes.iter().map(|s| s.name.clone()).collect(),
            roles,
            node_ports,
            ports,
            links,
            pool: PacketPool::default(),
            int: crate::int::IntPool::default(),
            port_node,
            peer,
            router: Router::new(tables, streams, n, switch_node.len(), policy),
            host_node,
            switch_node,
            port_up,
            llr,
            hosts_forward: t.hosts_forward,
        }
    }

    /// Recompute every routing table over the cables that work now (what the routing
    /// protocol converges to after a failure or a repair).
    pub fn reroute(&mut self) {
        let (port_peer_node, is_host) = self.route_graph_parts();
        self.router.set_tables(Routes::build(&Graph {
            node_ports: &self.node_ports,
            port_peer_node: &port_peer_node,
            is_host: &is_host,
            hosts: &self.host_node,
            hosts_forward: self.hosts_forward,
            port_up: Some(&self.port_up),
        }));
    }

    /// What the route builder needs besides the port ranges: each port's far node, and which
    /// nodes are hosts.
    pub(crate) fn route_graph_parts(&self) -> (Vec<NodeId>, Vec<bool>) {
        let is_host = self.roles.iter().map(|r| matches!(r, Role::Host(_))).collect();
        let port_peer_node = self.peer.iter().map(|q| self.port_node[q.idx()]).collect();
        (port_peer_node, is_host)
    }

    /// The port of `a` cabled to `b` (the `nth` such cable, from 0).
    pub fn port_between(&self, a: NodeId, b: NodeId, nth: usize) -> Option<PortId> {
        self.ports_of(a)
            .filter(|p| self.port_node[self.peer[p.idx()].idx()] == b)
            .nth(nth)
    }

    /// The node and the port's name: `leaf0 to-spine1`.
    pub fn port_label(&self, p: PortId) -> String {
        format!(
            "{} {}",
            self.names[self.port_node[p.idx()].idx()],
            self.port_name(p)
        )
    }

    /// A readable name for a port: the node it is cabled to, with `#k` for the k-th parallel
    /// cable to the same node (`to-spine1`, `to-spine1#2`).
    pub fn port_name(&self, p: PortId) -> String {
        let node = self.port_node[p.idx()];
        let far = self.port_node[self.peer[p.idx()].idx()];
        let nth = self.node_ports[node.idx()]
            .clone()
            .take_while(|&q| q != p.0)
            .filter(|&q| self.port_node[self.peer[q as usize].idx()] == far)
            .count();
        cable_name(&self.names[far.idx()], nth)
    }

    /// Every port's [`Network::port_name`], by port, in one pass: a report names each port
    /// many times (a flow's path and uplinks, the counters' rows), and a k=64 fat tree has
    /// 393,216 of them, where finding one port's `#k` takes a pass over its node's ports.
    pub fn port_names(&self) -> Vec<Box<str>> {
        let mut names: Vec<Box<str>> = vec![Box::default(); self.ports.len()];
        // Cables seen so far from the node being named to each far node.
        let mut seen = vec![0u32; self.names.len()];
        let far = |q: u32| self.port_node[self.peer[q as usize].idx()].idx();
        for r in &self.node_ports {
            for q in r.clone() {
                let to = far(q);
                names[q as usize] = cable_name(&self.names[to], seen[to] as usize).into();
                seen[to] += 1;
            }
            for q in r.clone() {
                seen[far(q)] = 0;
            }
        }
        names
    }

    /// Every port's index range as `PortId`s.
    pub fn ports_of(&self, n: NodeId) -> impl Iterator<Item = PortId> {
        self.node_ports[n.idx()].clone().map(PortId)
    }
}

/// The name of the `nth` cable (from 0) from a node to the node named `to`: `to-spine1`, then
/// `to-spine1#2`.
fn cable_name(to: &str, nth: usize) -> String {
    if nth == 0 {
        format!("to-{to}")
    } else {
        format!("to-{to}#{}", nth + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{LinkConfig, TopologyConfig};
    use sim_core::{BitRate, Duration};

    fn link(g: u64) -> LinkConfig {
        LinkConfig::plain(BitRate::gbps(g), Duration::from_ns(100))
    }

    #[test]
    fn every_port_named_at_once_as_one_by_one() {
        let t = TopologyConfig::LeafSpine {
            leaves: 2,
            spines: 2,
            hosts_per_leaf: 2,
            host_link: link(25),
            fabric_link: link(100),
            links_per_spine: 3,
        }
        .build()
        .unwrap();
        let net = Network::build(&t, Routing::Ecmp, &sim_core::RngStreams::new(1));
        let all = net.port_names();
        assert_eq!(all.len(), net.ports.len());
        for (p, name) in all.iter().enumerate() {
            assert_eq!(&**name, net.port_name(PortId(p as u32)), "port {p}");
        }
        // Three cables from each leaf to each spine: the second and third are numbered.
        let leaf0 = NodeId(t.nodes.iter().position(|n| n.name == "leaf0").unwrap() as u32);
        let to_spine1: Vec<&str> = net
            .ports_of(leaf0)
            .map(|p| &*all[p.idx()])
            .filter(|n| n.starts_with("to-spine1"))
            .collect();
        assert_eq!(to_spine1, ["to-spine1", "to-spine1#2", "to-spine1#3"]);
    }

    #[test]
    fn leaf_routes_up_over_every_spine_and_down_directly() {
        let t = TopologyConfig::LeafSpine {
            leaves: 2,
            spines: 3,
            hosts_per_leaf: 2,
            host_link: link(25),
            fabric_link: link(100),
            links_per_spine: 1,
        }
        .build()
        .unwrap();
        let net = Network::build(&t, Routing::Ecmp, &sim_core::RngStreams::new(1));
        let leaf0 = NodeId(t.nodes.iter().position(|n| n.name == "leaf0").unwrap() as u32);
        // h2 is on leaf1: three equal-cost uplinks.
        let up = net.router.tables().next_hops(leaf0, HostId(2));
        assert_eq!(up.len(), 3);
        assert!(
            up.iter()
                .all(|&p| net.names[net.port_node[net.peer[p.idx()].idx()].idx()].starts_with("spine"))
        );
        // h1 is local: one port, cabled to h1.
        let down = net.router.tables().next_hops(leaf0, HostId(1));
        assert_eq!(down.len(), 1);
        assert_eq!(net.port_name(down[0]), "to-h1");
        // Peers are symmetric.
        for p in 0..net.ports.len() {
            assert_eq!(net.peer[net.peer[p].idx()], PortId(p as u32));
        }
    }

    #[test]
    fn fat_tree_has_k_over_2_squared_core_paths() {
        let t = TopologyConfig::FatTree {
            k: 4,
            host_link: link(100),
            fabric_link: link(100),
        }
        .build()
        .unwrap();
        let net = Network::build(&t, Routing::Ecmp, &sim_core::RngStreams::new(1));
        let edge = NodeId(t.nodes.iter().position(|n| n.name == "edge0-0").unwrap() as u32);
        let agg = NodeId(t.nodes.iter().position(|n| n.name == "agg0-0").unwrap() as u32);
        let far = HostId(15); // pod 3
        assert_eq!(
            net.router.tables().next_hops(edge, far).len(),
            2,
            "k/2 aggregation uplinks"
        );
        assert_eq!(
            net.router.tables().next_hops(agg, far).len(),
            2,
            "k/2 core uplinks"
        );
        assert_eq!(
            net.router.tables().next_hops(agg, HostId(0)).len(),
            1,
            "down to its edge"
        );
    }

    #[test]
    fn switchless_ring_routes_through_hosts() {
        let t = TopologyConfig::Ring {
            hosts: 5,
            link: link(100),
        }
        .build()
        .unwrap();
        let net = Network::build(&t, Routing::Ecmp, &sim_core::RngStreams::new(1));
        // h0 reaches h2 through h1 (2 hops one way, 3 the other).
        let hops = net.router.tables().next_hops(t.hosts[0], HostId(2));
        assert_eq!(hops.len(), 1);
        assert_eq!(net.port_name(hops[0]), "to-h1");
        // Opposite host in a 4-ring would be a tie; in a 5-ring h0->h3 goes via h4.
        assert_eq!(
            net.port_name(net.router.tables().next_hops(t.hosts[0], HostId(3))[0]),
            "to-h4"
        );
    }
}
