//! How much of one run could go in parallel: the measurement the parallel engine is designed
//! from.
//!
//! A conservative parallel engine (Chandy and Misra, "Distributed simulation: a case study in
//! design and verification of distributed programs", IEEE TSE 1979; windowed as in Nicol's
//! YAWNS, "The cost of conservative synchronization in parallel discrete event simulations",
//! JACM 1993, and as Unison runs ns-3) cuts the fabric into partitions, each with its own
//! event queue, and lets every partition run a window of simulated time as long as the
//! lookahead `L` (the least time a frame needs to cross a cut cable: its propagation and the
//! serialisation of the smallest frame) before they exchange the frames that crossed. Within a
//! window the partitions are independent, and the window lasts as long as its busiest
//! partition. So a sequential run in which each event is charged to the partition that would
//! handle it measures what such an engine can gain:
//!
//! * `speedup <= events / sum over windows of (most events of one partition in the window)`,
//! * every partition waits, in each window, for the busiest one (`waiting`),
//! * and every window ends in a barrier (`windows`), which costs whatever a barrier costs on
//!   the machine (a few hundred nanoseconds between cores of one socket).
//!
//! Events that belong to no partition (samples, faults, rerouting, the look for deadlocks)
//! run at the barriers and are counted apart. Because simultaneous events are ordered by what
//! they are and whose (`Event`'s rank), not by when they were scheduled, a partition sees its
//! own events in the order the whole run does: the measurement and the engine agree on what
//! each partition does.

use super::{Event, Sim};
use crate::ids::NodeId;
use crate::network::Network;
use sim_core::{Duration, Time};

/// The smallest frame a cable carries (64 B, plus 8 B of preamble and 12 B of gap: IEEE
/// 802.3 clause 4): its serialisation is part of every cut cable's lookahead.
const MIN_WIRE_BYTES: u64 = 84;

/// A cut of the fabric into partitions.
#[derive(Debug, Clone)]
pub struct Partitioning {
    pub parts: usize,
    /// Each node's partition.
    pub of_node: Vec<u32>,
    /// The least time a frame takes across a cut cable (None: nothing is cut).
    pub lookahead: Option<Duration>,
    /// Cable directions whose ends are in different partitions.
    pub cut: usize,
}

impl Partitioning {
    /// `parts` partitions: the hosts in order, in equal contiguous blocks (the topologies
    /// number a pod's or a leaf's hosts together); each switch, nearest the hosts first, joins
    /// the partition most of its already placed neighbours are in (a tie goes to the partition
    /// with the fewest switches so far, which spreads a Clos's spines and cores evenly).
    pub fn by_hosts(net: &Network, parts: usize) -> Self {
        let parts = parts.max(1);
        let n = net.roles.len();
        let hosts = net.host_node.len().max(1);
        let mut of_node = vec![u32::MAX; n];
        let mut frontier = Vec::new();
        for (h, &node) in net.host_node.iter().enumerate() {
            of_node[node.idx()] = (h * parts / hosts) as u32;
            frontier.push(node);
        }
        let mut switches = vec![0usize; parts];
        let neighbours = |node: NodeId| {
            let r = net.node_ports[node.idx()].clone();
            (r.start..r.end).map(|p| net.port_node[net.peer[p as usize].idx()])
        };
        while !frontier.is_empty() {
            // The unplaced neighbours of this ring, in node order (deterministic).
            let mut next: Vec<NodeId> = frontier
                .iter()
                .flat_map(|&f| neighbours(f))
                .filter(|m| of_node[m.idx()] == u32::MAX)
                .collect();
            next.sort_unstable_by_key(|m| m.0);
            next.dedup();
            for &m in &next {
                let mut votes = vec![0usize; parts];
                for k in neighbours(m) {
                    if let Some(v) = votes.get_mut(of_node[k.idx()] as usize) {
                        *v += 1;
                    }
                }
                let best = (0..parts)
                    .max_by_key(|&i| (votes[i], std::cmp::Reverse(switches[i]), std::cmp::Reverse(i)))
                    .unwrap_or(0);
                of_node[m.idx()] = best as u32;
                switches[best] += 1;
            }
            frontier = next;
        }
        // Nodes no host reaches (an unused switch) go to partition 0.
        for p in of_node.iter_mut().filter(|p| **p == u32::MAX) {
            *p = 0;
        }
        Self::with_nodes(net, parts, of_node)
    }

    /// Two partitions: every host (its NIC and the transports of the flows it sends and
    /// receives) in partition 0, every switch in partition 1. No flow's state is then split
    /// between two partitions; the host cables are the cut.
    pub fn hosts_and_fabric(net: &Network) -> Self {
        let of_node = net
            .roles
            .iter()
            .map(|r| matches!(r, crate::network::Role::Switch(_)) as u32)
            .collect();
        Self::with_nodes(net, 2, of_node)
    }

    /// The cut cables of the partitioning `of_node`, and its lookahead.
    fn with_nodes(net: &Network, parts: usize, of_node: Vec<u32>) -> Self {
        let (mut lookahead, mut cut) = (None::<Duration>, 0);
        for p in 0..net.ports.len() {
            let (a, b) = (net.port_node[p], net.port_node[net.peer[p].idx()]);
            if of_node[a.idx()] != of_node[b.idx()] {
                cut += 1;
                let l = net.links[p].delay + net.ports[p].rate.tx_time(MIN_WIRE_BYTES);
                lookahead = Some(lookahead.map_or(l, |x: Duration| x.min(l)));
            }
        }
        Partitioning {
            parts,
            of_node,
            lookahead,
            cut,
        }
    }
}

/// Events charged to partitions, window by window.
#[derive(Debug, Clone)]
pub struct WindowCount {
    pub cut: Partitioning,
    window: u64,
    current: Option<u64>,
    in_window: Vec<u64>,
    /// Events of each partition over the run.
    pub per_part: Vec<u64>,
    /// Sum over windows of the busiest partition's events.
    pub critical: u64,
    /// Windows with at least one event.
    pub windows: u64,
    /// Events that belong to no partition (they run at barriers).
    pub global: u64,
    /// Frames that arrived from another partition (each crosses between two queues).
    pub crossings: u64,
}

impl WindowCount {
    pub fn new(cut: Partitioning) -> Self {
        let parts = cut.parts;
        WindowCount {
            window: cut.lookahead.map_or(u64::MAX, |l| l.0.max(1)),
            cut,
            current: None,
            in_window: vec![0; parts],
            per_part: vec![0; parts],
            critical: 0,
            windows: 0,
            global: 0,
            crossings: 0,
        }
    }

    /// An event at `t` handled at `site` (None: at a barrier), a frame's arrival from
    /// `from` when it is one.
    #[inline]
    pub fn count(&mut self, t: Time, site: Option<NodeId>, from: Option<NodeId>) {
        let w = t.0 / self.window;
        if self.current != Some(w) {
            self.close();
            self.current = Some(w);
        }
        match site {
            Some(n) => {
                let part = self.cut.of_node[n.idx()];
                self.in_window[part as usize] += 1;
                if from.is_some_and(|f| self.cut.of_node[f.idx()] != part) {
                    self.crossings += 1;
                }
            }
            None => self.global += 1,
        }
    }

    /// Close the open window (call once more after the run).
    pub fn close(&mut self) {
        let max = self.in_window.iter().copied().max().unwrap_or(0);
        if max > 0 {
            self.critical += max;
            self.windows += 1;
        }
        for (total, n) in self.per_part.iter_mut().zip(self.in_window.iter_mut()) {
            *total += *n;
            *n = 0;
        }
    }

    /// Events charged to partitions.
    pub fn events(&self) -> u64 {
        self.per_part.iter().sum()
    }

    /// The bound on the speedup: events over the critical path's events (barriers free).
    pub fn bound(&self) -> f64 {
        self.events() as f64 / self.critical.max(1) as f64
    }

    /// The speedup when each barrier costs as much as `barrier_events` events and the
    /// global events run at barriers, alone.
    pub fn projected(&self, barrier_events: f64) -> f64 {
        let serial = (self.events() + self.global) as f64;
        serial / (self.critical as f64 + self.global as f64 + barrier_events * self.windows as f64)
    }
}

impl Sim<'_> {
    /// The node whose state `ev` changes (None: the whole fabric's, as a sample's).
    pub fn site(&self, ev: Event) -> Option<NodeId> {
        let net = &self.net;
        let host = |h: crate::ids::HostId| net.host_node[h.idx()];
        Some(match ev {
            Event::TxDone(p)
            | Event::Resume(p)
            | Event::PfcRefresh(p)
            | Event::NicWake(p)
            | Event::RxDone(p)
            | Event::WdCheck(p, _)
            | Event::WdRestore(p, _)
            | Event::LlrTimer(p)
            | Event::CbfcTick(p) => net.port_node[p.idx()],
            Event::Arrive(p) => net.port_node[net.peer[p.idx()].idx()],
            Event::FlowStart(f)
            | Event::Rto(f)
            | Event::CcTimer(f)
            | Event::CreditWait(f)
            | Event::Probe(f)
            | Event::LocalDone(f) => host(self.flows[f.idx()].spec.src),
            Event::AckTimer(f) => host(self.flows[f.idx()].spec.dst),
            Event::CreditTick(h) => host(h),
            Event::Fault(_) | Event::Sample | Event::Reroute | Event::DeadlockCheck => return None,
        })
    }

    /// Run to the end with every event charged to each of `counts`' partitionings.
    pub fn run_counting(&mut self, counts: &mut [WindowCount]) {
        self.run_observed(|sim, t, ev| {
            let site = sim.site(ev);
            let from = match ev {
                Event::Arrive(p) => Some(sim.net.port_node[p.idx()]),
                _ => None,
            };
            for c in counts.iter_mut() {
                c.count(t, site, from);
            }
        });
        for c in counts.iter_mut() {
            c.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_nodes_two_parts() -> WindowCount {
        WindowCount::new(Partitioning {
            parts: 2,
            of_node: vec![0, 1],
            lookahead: Some(Duration(10)),
            cut: 2,
        })
    }

    #[test]
    fn windows_charge_the_busiest_partition() {
        let mut c = two_nodes_two_parts();
        // Window 0: 3 events on node 0, 1 on node 1; window 1: 2 and 2; a global one.
        for (t, n) in [(0, 0), (1, 0), (2, 1), (9, 0), (10, 1), (12, 0), (15, 1), (19, 0)] {
            c.count(Time(t), Some(NodeId(n)), None);
        }
        c.count(Time(25), None, None);
        c.close();
        assert_eq!(c.events(), 8);
        assert_eq!((c.critical, c.windows, c.global), (3 + 2, 2, 1));
        assert!((c.bound() - 8.0 / 5.0).abs() < 1e-12);
        // Barriers as costly as an event each: 9 events of work over 5 + 1 + 2.
        assert!((c.projected(1.0) - 9.0 / 8.0).abs() < 1e-12);
    }

    #[test]
    fn a_frame_from_another_partition_crosses() {
        let mut c = two_nodes_two_parts();
        c.count(Time(1), Some(NodeId(1)), Some(NodeId(0)));
        c.count(Time(2), Some(NodeId(1)), Some(NodeId(1)));
        c.count(Time(3), Some(NodeId(0)), None);
        c.close();
        assert_eq!((c.crossings, c.events()), (1, 3));
    }
}
