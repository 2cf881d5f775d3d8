//! Routing: which egress a packet leaves a node by.
//!
//! * [`clos`]: the same next-hop sets computed from a host's leaf and pod, in a regular Clos
//!   fabric with every cable up (no per-destination tables);
//! * [`tables`]: all-shortest-path next-hop sets per node and destination (BGP/OSPF ECMP),
//!   for any other topology, and rebuilt over the working cables after a failure;
//! * [`ecmp`]: each node's 5-tuple hash, picking one member of a set per packet;
//! * [`adaptive`]: the switch's policy (ECMP, or the least-loaded egress per packet or per
//!   flowlet) and its flowlet tables.
//!
//! [`Router`] holds all three for a fabric: the switches and hosts ask it, never the tables.

pub mod adaptive;
pub mod clos;
pub mod ecmp;
pub mod tables;

pub use adaptive::Routing;
pub use clos::Clos;
pub use ecmp::{EcmpHash, pick};
pub use tables::{Graph, Tables};

use crate::ids::{FlowId, HostId, NodeId, PortId, SwitchId};
use crate::packet::Packet;
use adaptive::Flowlets;
use sim_core::{RngStreams, Time};

/// Next-hop sets of every node toward every host: from addresses where the fabric is a
/// regular Clos, from tables otherwise. Both give the same sets in the same port order.
#[derive(Debug, Clone)]
pub enum Routes {
    Clos(Clos),
    Tables(Tables),
}

impl Routes {
    pub fn build(g: &Graph) -> Routes {
        match Clos::build(g) {
            Some(c) => Routes::Clos(c),
            None => Routes::Tables(Tables::build(g)),
        }
    }

    /// Egress ports on a shortest path from `node` toward host `dst`; empty if unreachable.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: HostId) -> &[PortId] {
        match self {
            Routes::Clos(c) => c.next_hops(node, dst),
            Routes::Tables(t) => t.next_hops(node, dst),
        }
    }

    /// The member `choose(n)` of the `n` next hops from `node` toward `dst` (asked only when
    /// there are several), without reading the member list where the ports are consecutive.
    #[inline(always)]
    pub fn pick(&self, node: NodeId, dst: HostId, choose: impl FnOnce(usize) -> usize) -> Option<PortId> {
        match self {
            Routes::Clos(c) => c.pick(node, dst, choose),
            Routes::Tables(t) => {
                let hops = t.next_hops(node, dst);
                match hops.len() {
                    0 => None,
                    1 => Some(hops[0]),
                    n => Some(hops[choose(n)]),
                }
            }
        }
    }
}

/// The fabric's routing state: tables, per-node hashes, the switches' policy and flowlets.
#[derive(Debug, Clone)]
pub struct Router {
    /// Read through [`Router::tables`]; replaced only by [`Router::set_tables`], which
    /// forgets its hints.
    tables: Routes,
    /// ECMP hash function of each node (each switch has its own salt).
    hashers: Vec<EcmpHash>,
    policy: Routing,
    /// Per switch, when adaptive routing keeps flowlets.
    flowlets: Vec<Flowlets>,
    /// The flow whose 5-tuple a flow's packets carry, where messages share a queue pair (a
    /// collective's): the QP's first message. Empty when every flow is its own connection.
    connection: Vec<FlowId>,
    /// The last two answers of [`Router::hint`], handed back by the event loop
    /// ([`Router::remember`]), the latest first: its prefetch computes a frame's egress an
    /// event before the frame's switch routes it, and [`Router::choose`] reads it instead of
    /// hashing the frame again. Two, as the loop computes the next event's hint before it
    /// handles the current one. An answer is a function of its question while the tables
    /// and the connections stay ([`Router::set_tables`] and [`Router::share_connections`]
    /// forget them).
    hints: [Option<Asked>; 2],
}

/// An ECMP question at a node, and its answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Asked {
    node: NodeId,
    flow: FlowId,
    dst: HostId,
    entropy: u16,
    pub out: Option<PortId>,
}

impl Asked {
    #[inline]
    fn is(&self, node: NodeId, pkt: &Packet) -> bool {
        self.node == node && self.flow == pkt.flow && self.dst == pkt.dst && self.entropy == pkt.entropy
    }
}

impl Router {
    /// Routing over `tables` for `nodes` nodes, `switches` of which run `policy`; hash salts
    /// come from the scenario's `ecmp-salt` streams.
    pub fn new(tables: Routes, streams: &RngStreams, nodes: usize, switches: usize, policy: Routing) -> Self {
        let hashers = (0..nodes)
            .map(|n| EcmpHash::new(streams.key("ecmp-salt", n as u64)))
            .collect();
        let flowlets = match policy {
            Routing::Adaptive { flowlet_gap: Some(_) } => vec![Flowlets::default(); switches],
            _ => Vec::new(),
        };
        Router {
            tables,
            hashers,
            policy,
            flowlets,
            connection: Vec::new(),
            hints: [None; 2],
        }
    }

    /// The next-hop sets.
    #[inline]
    pub fn tables(&self) -> &Routes {
        &self.tables
    }

    /// Route over `tables` from now on (after a failure or a repair).
    pub fn set_tables(&mut self, tables: Routes) {
        self.tables = tables;
        self.hints = [None; 2];
    }

    /// Messages of one queue pair hash as its first message does: one 5-tuple, one path.
    pub fn share_connections(&mut self, connection: Vec<FlowId>) {
        self.connection = connection;
        self.hints = [None; 2];
    }

    #[inline]
    fn conn(&self, flow: FlowId) -> FlowId {
        self.connection.get(flow.idx()).copied().unwrap_or(flow)
    }

    /// The ECMP egress from `node` for a packet of `flow` to `dst` carrying `entropy`.
    #[inline]
    pub fn ecmp(&self, node: NodeId, flow: FlowId, dst: HostId, entropy: u16) -> Option<PortId> {
        self.tables.pick(node, dst, |n| {
            pick(self.hashers[node.idx()].hash(self.conn(flow), dst, entropy), n)
        })
    }

    /// Keep an answer of [`Router::hint`]: the switch it was asked for routes that frame next.
    #[inline]
    pub fn remember(&mut self, a: Asked) {
        self.hints = [Some(a), self.hints[0]];
    }

    /// The lines [`Router::hint`] reads first for `pkt` at `node`: its hash function and, in
    /// a Clos fabric, the node's and the destination's routing records (a prefetch hint, an
    /// event before the hint itself).
    #[inline]
    pub fn hint_lines(&self, node: NodeId, pkt: &Packet) -> [*const u8; 3] {
        let hasher = self.hashers.as_ptr().wrapping_add(node.idx()) as *const u8;
        match &self.tables {
            Routes::Clos(c) => {
                let [n, h] = c.lines(node, pkt.dst);
                [hasher, n, h]
            }
            Routes::Tables(_) => [hasher; 3],
        }
    }

    /// The egress [`Router::choose`] will pick for `pkt` at `node`, where it depends on the
    /// packet alone (ECMP; None under adaptive routing): a prefetch hint, which
    /// [`Router::remember`] keeps for that `choose`.
    #[inline]
    pub fn hint(&self, node: NodeId, pkt: &Packet) -> Option<Asked> {
        match self.policy {
            Routing::Adaptive { .. } => None,
            _ => Some(Asked {
                node,
                flow: pkt.flow,
                dst: pkt.dst,
                entropy: pkt.entropy,
                out: self.ecmp(node, pkt.flow, pkt.dst, pkt.entropy),
            }),
        }
    }

    /// The egress switch `sw` (node `node`) picks for `pkt` at `now`: ECMP, or adaptive
    /// routing by `load(port)` = (paused for the packet's priority, queued bytes).
    #[inline]
    pub fn choose(
        &mut self,
        node: NodeId,
        sw: SwitchId,
        pkt: &Packet,
        now: Time,
        load: impl Fn(&PortId) -> (bool, u64),
    ) -> Option<PortId> {
        let Routing::Adaptive { flowlet_gap } = self.policy else {
            // The event before this one computed the hint for this frame, the latest for the next.
            if let Some(a) = &self.hints[1]
                && a.is(node, pkt)
            {
                return a.out;
            }
            if let Some(a) = &self.hints[0]
                && a.is(node, pkt)
            {
                return a.out;
            }
            return self.ecmp(node, pkt.flow, pkt.dst, pkt.entropy);
        };
        let hops = self.tables.next_hops(node, pkt.dst);
        if hops.len() <= 1 || pkt.is_link_control() {
            return hops.first().copied();
        }
        let hash = self.hashers[node.idx()].hash(self.conn(pkt.flow), pkt.dst, pkt.entropy);
        if let Some(gap) = flowlet_gap {
            if let Some(p) = self.flowlets[sw.idx()].current(hash, now, gap, hops) {
                return Some(p);
            }
        }
        let best = adaptive::least_loaded(hops, pick(hash, hops.len()), load)?;
        if flowlet_gap.is_some() {
            self.flowlets[sw.idx()].start(hash, now, best);
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::Asked;
    use crate::ids::{FlowId, HostId, SwitchId};
    use crate::network::Network;
    use crate::packet::Packet;
    use crate::topology::{LinkConfig, TopologyConfig};
    use sim_core::{BitRate, Duration, Time};

    #[test]
    fn a_remembered_hint_answers_its_own_question_only_and_until_the_tables_change() {
        let link = LinkConfig::plain(BitRate::gbps(100), Duration::from_us(1));
        let t = TopologyConfig::FatTree {
            k: 4,
            host_link: link.clone(),
            fabric_link: link,
        }
        .build()
        .unwrap();
        let mut net = Network::build(&t, super::Routing::Ecmp, &sim_core::RngStreams::new(1));
        // A switch with two next hops toward host 12.
        let edge = *net
            .switch_node
            .iter()
            .find(|&&n| net.router.tables().next_hops(n, HostId(12)).len() == 2)
            .unwrap();
        let frame = |entropy| Packet::data(FlowId(3), HostId(12), 0, 1000, 1100, entropy, 3, 0, Time::ZERO);
        let r = &mut net.router;
        let choose =
            |r: &mut super::Router, p: &Packet| r.choose(edge, SwitchId(0), p, Time::ZERO, |_| (false, 0));
        // Two frames whose egresses differ (up to another aggregation switch).
        let (a, b) = (
            frame(0),
            (1..64)
                .map(frame)
                .find(|p| r.ecmp(edge, p.flow, p.dst, p.entropy) != r.ecmp(edge, FlowId(3), HostId(12), 0))
                .unwrap(),
        );
        let (out_a, out_b) = (
            r.ecmp(edge, a.flow, a.dst, a.entropy),
            r.ecmp(edge, b.flow, b.dst, b.entropy),
        );
        // A hint is what the hash gives; remembered, another frame's question is still hashed.
        let hint = r.hint(edge, &a).unwrap();
        assert_eq!(hint.out, out_a);
        r.remember(hint);
        assert_eq!(choose(r, &b), out_b);
        assert_eq!(choose(r, &a), out_a);
        // The answer is read, not computed again: a forged one comes back, for its own
        // question, while it is one of the last two remembered.
        let forged = Asked { out: out_b, ..hint };
        r.remember(forged);
        r.remember(r.hint(edge, &b).unwrap());
        assert_eq!(choose(r, &a), out_b);
        r.remember(r.hint(edge, &b).unwrap());
        assert_eq!(choose(r, &a), out_a, "a third hint pushes the first out");
        // New tables, or new connections (whose 5-tuples are hashed), forget every answer.
        r.remember(forged);
        r.share_connections(Vec::new());
        assert_eq!(choose(r, &a), out_a);
        r.remember(forged);
        net.reroute();
        assert_eq!(choose(&mut net.router, &a), out_a);
    }
}
