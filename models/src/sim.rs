//! One run of one variant: the event loop and the packet path.
//!
//! ```text
//!  FlowStart ─▶ NIC ready list ─▶ host egress Port ──TxDone──▶ Link ──Arrive──▶ node
//!                  ▲   (pull, round robin)    (serialize)      (propagate)       │
//!                  │                                                             ▼
//!             ACK to sender ◀── NIC rx (in-order, cumulative ACK) ◀── host? ── switch:
//!                                                                    route (ECMP) ─▶ admit
//!                                                                    (drop-tail) ─▶ egress Port
//! ```
//!
//! Three events drive everything: `TxDone(port)` (a frame finished serializing: hand it to
//! the link, start the next), `Arrive(port)` (the head frame on port's link reached the far
//! end), and `FlowStart(flow)`. A busy port has exactly one pending event, a busy link one.

use crate::flow::Flow;
use crate::ids::{FlowId, HostId, NodeId, PortId};
use crate::network::{Network, Role};
use crate::packet::{Kind, Packet};
use crate::routing::{ecmp_hash, pick};
use crate::scenario::{Scenario, Variant};
use sim_core::{EventQueue, RngStreams, Time};

/// Everything that can happen. 8 bytes: keeps the event queue's entries small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    TxDone(PortId),
    Arrive(PortId),
    FlowStart(FlowId),
}

/// Why a run stopped before its events ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    MaxTime(Time),
    MaxEvents(u64),
}

/// Totals the invariants are checked against.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub events: u64,
    /// Frames that finished crossing a link (one per hop).
    pub packet_hops: u64,
    pub injected_packets: u64,
    pub injected_bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    /// Packets a switch could not route (no path to the destination).
    pub unroutable: u64,
    /// Events popped with a time earlier than the previous one (must stay 0).
    pub causality_violations: u64,
    pub end_time: Time,
}

/// Per-host counters.
#[derive(Debug, Clone, Default)]
pub struct HostCounters {
    pub data_packets_sent: u64,
    pub acks_sent: u64,
    pub out_of_sequence: u64,
}

pub struct Sim<'a> {
    pub variant: &'a Variant,
    pub net: Network,
    pub flows: Vec<Flow>,
    pub nics: Vec<crate::nic::Nic>,
    pub host_counters: Vec<HostCounters>,
    /// ECMP salt of each node.
    salt: Vec<u64>,
    queue: EventQueue<Event>,
    now: Time,
    pub totals: Totals,
    pub stopped: Option<StopReason>,
}

impl<'a> Sim<'a> {
    pub fn new(scenario: &Scenario, variant: &'a Variant) -> Self {
        let net = Network::build(&scenario.topology);
        let streams = RngStreams::new(scenario.seed);
        let salt = (0..net.names.len())
            .map(|n| streams.key("ecmp-salt", n as u64))
            .collect();
        let mtu = variant.nic.mtu.0 as u32;
        let flows: Vec<Flow> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, s)| Flow::new(s.clone(), mtu, streams.key("entropy", i as u64) as u16))
            .collect();
        let nics = net.host_node.iter().map(|&n| {
            let r = &net.node_ports[n.idx()];
            crate::nic::Nic::new(r.start, r.len())
        });
        let mut queue = EventQueue::new();
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.spec.start, Event::FlowStart(FlowId(i as u32)));
        }
        Sim {
            variant,
            nics: nics.collect(),
            host_counters: vec![HostCounters::default(); net.host_node.len()],
            net,
            flows,
            salt,
            queue,
            now: Time::ZERO,
            totals: Totals::default(),
            stopped: None,
        }
    }

    /// Run until no events remain or a limit is reached.
    pub fn run(&mut self) {
        self.run_with_progress(|_| {});
    }

    /// Run, calling `progress(now)` about every million events.
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(Time)) {
        let limits = &self.variant.limits;
        let max_time = limits.max_time.map(|d| Time::ZERO + d).unwrap_or(Time::MAX);
        let max_events = limits.max_events.unwrap_or(u64::MAX);
        while let Some((t, ev)) = self.queue.pop() {
            if t > max_time {
                self.stopped = Some(StopReason::MaxTime(max_time));
                self.now = max_time;
                break;
            }
            if self.totals.events >= max_events {
                self.stopped = Some(StopReason::MaxEvents(max_events));
                break;
            }
            if t < self.now {
                self.totals.causality_violations += 1;
            }
            self.now = t;
            self.totals.events += 1;
            match ev {
                Event::TxDone(p) => self.on_tx_done(p),
                Event::Arrive(p) => self.on_arrive(p),
                Event::FlowStart(f) => self.on_flow_start(f),
            }
            if self.totals.events & 0xf_ffff == 0 {
                progress(self.now);
            }
        }
        self.totals.end_time = self.now;
    }

    pub fn now(&self) -> Time {
        self.now
    }

    fn on_flow_start(&mut self, f: FlowId) {
        let (src, dst, entropy) = {
            let flow = &self.flows[f.idx()];
            (flow.spec.src, flow.spec.dst, flow.entropy)
        };
        let node = self.net.host_node[src.idx()];
        let Some(port) = self.egress(node, src, dst, entropy) else {
            self.totals.unroutable += 1;
            return;
        };
        self.flows[f.idx()].port = port;
        self.nics[src.idx()].make_ready(port.0, f);
        self.kick(port);
    }

    /// The port a packet from `src` to `dst` leaves `node` by: ECMP over the equal-cost set.
    #[inline]
    fn egress(&self, node: NodeId, src: HostId, dst: HostId, entropy: u16) -> Option<PortId> {
        let hops = self.net.routes.next_hops(node, dst);
        match hops.len() {
            0 if !self.net.routes.has_table(node) => Some(PortId(self.net.node_ports[node.idx()].start)),
            0 => None,
            1 => Some(hops[0]),
            n => Some(hops[pick(ecmp_hash(self.salt[node.idx()], src, dst, entropy), n)]),
        }
    }

    /// Start the next transmission on an idle port: queued frames first, then (on a host)
    /// the next data packet of the next ready flow.
    #[inline]
    fn kick(&mut self, p: PortId) {
        if self.net.ports[p.idx()].is_busy() {
            return;
        }
        let pkt = match self.net.ports[p.idx()].dequeue() {
            Some(pkt) => pkt,
            None => match self.net.roles[self.net.port_node[p.idx()].idx()] {
                Role::Host(h) => match self.next_data(h, p) {
                    Some(pkt) => pkt,
                    None => return,
                },
                Role::Switch(_) => return,
            },
        };
        let d = self.net.ports[p.idx()].begin_tx(pkt);
        self.queue.push(self.now + d, Event::TxDone(p));
    }

    fn next_data(&mut self, h: HostId, p: PortId) -> Option<Packet> {
        let f = self.nics[h.idx()].next_ready(p.0)?;
        let flow = &mut self.flows[f.idx()];
        let pkt = flow.next_packet(f, self.now);
        if flow.has_more() {
            self.nics[h.idx()].make_ready(p.0, f);
        }
        self.host_counters[h.idx()].data_packets_sent += 1;
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += pkt.frame as u64;
        Some(pkt)
    }

    fn on_tx_done(&mut self, p: PortId) {
        let pkt = self.net.ports[p.idx()].end_tx();
        if let Some(at) = self.net.links[p.idx()].send(self.now, pkt) {
            self.queue.push(at, Event::Arrive(p));
        }
        self.kick(p);
    }

    fn on_arrive(&mut self, p: PortId) {
        let (pkt, next) = self.net.links[p.idx()].arrive();
        if let Some(at) = next {
            self.queue.push(at, Event::Arrive(p));
        }
        self.totals.packet_hops += 1;
        let node = self.net.port_node[self.net.peer[p.idx()].idx()];
        match self.net.roles[node.idx()] {
            Role::Host(h) if pkt.dst == h => self.deliver(h, pkt),
            _ => self.forward(node, pkt),
        }
    }

    /// Route `pkt` at `node` and admit it to the egress buffer (drop-tail at switches).
    fn forward(&mut self, node: NodeId, pkt: Packet) {
        let Some(out) = self.egress(node, pkt.src, pkt.dst, pkt.entropy) else {
            self.totals.unroutable += 1;
            self.drop(pkt);
            return;
        };
        let port = &mut self.net.ports[out.idx()];
        if matches!(self.net.roles[node.idx()], Role::Switch(_))
            && !self.variant.switch.admits(port.occupancy(), pkt.frame)
        {
            port.counters.tx_drops += 1;
            self.drop(pkt);
            return;
        }
        port.enqueue(pkt);
        self.kick(out);
    }

    fn drop(&mut self, pkt: Packet) {
        self.totals.dropped_packets += 1;
        self.totals.dropped_bytes += pkt.frame as u64;
        if pkt.kind == Kind::Data {
            self.flows[pkt.flow.idx()].dropped_packets += 1;
        }
    }

    /// `pkt` reached its destination host.
    fn deliver(&mut self, h: HostId, pkt: Packet) {
        self.totals.delivered_packets += 1;
        self.totals.delivered_bytes += pkt.frame as u64;
        let flow = &mut self.flows[pkt.flow.idx()];
        match pkt.kind {
            Kind::Data => {
                let oos = flow.out_of_sequence;
                let ack = flow.receive(self.now, &pkt, self.variant.nic.ack_every);
                self.host_counters[h.idx()].out_of_sequence += flow.out_of_sequence - oos;
                if let Some(ack) = ack {
                    self.send_control(h, ack);
                }
            }
            Kind::Ack => flow.on_ack(self.now, &pkt),
        }
    }

    /// Queue a control frame (ACK) at host `h` toward its destination.
    fn send_control(&mut self, h: HostId, pkt: Packet) {
        let node = self.net.host_node[h.idx()];
        let Some(port) = self.egress(node, pkt.src, pkt.dst, pkt.entropy) else {
            self.totals.unroutable += 1;
            return;
        };
        self.host_counters[h.idx()].acks_sent += 1;
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += pkt.frame as u64;
        self.net.ports[port.idx()].enqueue(pkt);
        self.kick(port);
    }

    /// Packets and frame bytes still inside the fabric (queued, serializing, on a wire).
    pub fn in_flight(&self) -> (u64, u64) {
        let held = self.net.ports.iter().flat_map(|p| p.held());
        let flying = self.net.links.iter().flat_map(|l| l.in_flight());
        held.chain(flying)
            .fold((0, 0), |(n, b), p| (n + 1, b + p.frame as u64))
    }
}
