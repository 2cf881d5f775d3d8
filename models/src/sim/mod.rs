//! One run of one variant: the event loop.
//!
//! ```text
//!  FlowStart ─▶ NIC scheduler ─▶ host egress Port ──TxDone──▶ Link ──Arrive──▶ node
//!   (host.rs)   (pull: prio, RR,     (serialize)              (propagate,      │
//!                rate limiter)                                  frame errors)   ▼
//!  ACK/NAK/CNP ◀── NIC rx: go-back-N, ECN → CNP ◀── host ── switch (fabric.rs): route (ECMP)
//!   to sender       (host.rs)                               ─▶ MMU admit | drop ─▶ egress Port
//!                                                           PFC XOFF/XON ◀─ ingress accounting
//! ```
//!
//! Events: `TxDone(port)` (a frame finished serializing: hand it to the link, start the next),
//! `Arrive(port)` (the head frame on port's link reached the far end), `FlowStart`, and the
//! timers: `Resume` (a PFC pause expired), `PfcRefresh` (re-send XOFF), `NicWake` (a
//! rate-limited QP may send), `Rto` (retransmission timer), `CcTimer` (DCQCN rate increase),
//! `DeadlockCheck` (a look for cyclic pause dependencies while ports are paused; `pfc_watch.rs`).
//! A busy port has exactly one pending `TxDone`, a busy link one `Arrive`.

mod fabric;
mod host;
pub mod pfc_watch;
mod uet;

use crate::cc::dcqcn::DcqcnParams;
use crate::cc::nscc::NsccParams;
use crate::drop::DropReason;
use crate::flow::{Flow, Proto, Uet};
use crate::ideal;
use crate::ids::{FlowId, PortId};
use crate::network::Network;
use crate::nic::CcConfig;
use crate::nic::Transport;
use crate::nic::lb::EvSelector;
use crate::nic::roce::RoceQp;
use crate::packet::Packet;
use crate::scenario::{Scenario, Variant};
use crate::switch::Routing;
use crate::switch::{SwitchBuffers, build_buffers};
use sim_core::{BitRate, Duration};
use sim_core::{EventQueue, RngStreams, SimRng, Time};

/// Everything that can happen. 8 bytes: keeps the event queue's entries small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    TxDone(PortId),
    Arrive(PortId),
    FlowStart(FlowId),
    Resume(PortId),
    PfcRefresh(PortId),
    NicWake(PortId),
    Rto(FlowId),
    CcTimer(FlowId),
    /// The host finished taking a frame from a NIC receive buffer.
    RxDone(PortId),
    /// A receiver's RCCC pacer may grant credit again.
    CreditTick(crate::ids::HostId),
    /// Fault number `n` (an index into the scenario's resolved faults) happens.
    Fault(u32),
    /// Take a time-series sample.
    Sample,
    /// Routing converges on the cables that work now.
    Reroute,
    /// Look for a cyclic pause dependency (while ports are paused).
    DeadlockCheck,
}

/// Entries in a switch's flowlet table (as ASIC flowlet tables, indexed by a flow hash).
const FLOWLET_SLOTS: usize = 4096;

/// Unloaded round trip over `hops`: propagation both ways, a full data frame forward and a
/// 64 B ACK back at every hop (uet-htsim `calculate_rtt`).
fn base_rtt(hops: &[(BitRate, Duration)], max_frame: u32) -> Duration {
    hops.iter().fold(Duration::ZERO, |acc, &(rate, d)| {
        acc + d * 2 + rate.tx_time((max_frame + crate::packet::PREAMBLE_IFG) as u64) + rate.tx_time(84)
    })
}

/// Why a run stopped before its events ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    MaxTime(Time),
    MaxEvents(u64),
    /// The wall-clock bound.
    MaxWall(std::time::Duration),
    /// A PFC deadlock (`pfc.on_deadlock = "stop"`), described.
    PfcDeadlock(String),
    /// The caller asked it to stop (Ctrl-C).
    Interrupted,
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
    /// Drops by [`DropReason`] (indexed as `DropReason::ALL`).
    pub drops_by_reason: [u64; DropReason::COUNT],
    /// PFC frames sent (XOFF, refreshes and XON).
    pub pfc_frames: u64,
    /// Data frames marked CE.
    pub ecn_marked: u64,
    /// Payload bytes delivered to applications (new data only).
    pub delivered_payload: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// Data frames trimmed to their headers, and the bytes cut off them.
    pub trimmed: u64,
    pub trimmed_bytes: u64,
    /// Drops in a lossless class on a port whose headroom covers its cable.
    pub lossless_drops_adequate: u64,
    /// Events popped with a time earlier than the previous one (must stay 0).
    pub causality_violations: u64,
    pub end_time: Time,
}

/// Per-host counters (the names are the mlx5 `ethtool -S` / RDMA hw_counters ones).
#[derive(Debug, Clone, Default)]
pub struct HostCounters {
    pub data_packets_sent: u64,
    pub acks_sent: u64,
    pub naks_sent: u64,
    pub np_ecn_marked_roce_packets: u64,
    pub np_cnp_sent: u64,
    pub rp_cnp_handled: u64,
    pub rp_cnp_ignored: u64,
    pub out_of_sequence: u64,
    pub packet_seq_err: u64,
    pub local_ack_timeout_err: u64,
}

pub struct Sim<'a> {
    pub variant: &'a Variant,
    pub net: Network,
    pub flows: Vec<Flow>,
    pub nics: Vec<crate::nic::Nic>,
    pub host_counters: Vec<HostCounters>,
    pub buffers: SwitchBuffers,
    /// NIC receive buffers by port (only host ports, only when the host drains slower;
    /// boxed, so a fabric without them spends a pointer per port).
    pub rx: Vec<Option<Box<crate::nic::rx::RxBuffer>>>,
    /// DCQCN parameters resolved for each host's line rate (None: no congestion control).
    dcqcn: Vec<Option<DcqcnParams>>,
    /// NSCC parameters per host (UET with NSCC).
    nscc: Vec<Option<crate::cc::nscc::NsccParams>>,
    /// 1.5 BDP per host: NSCC's maximum window and RCCC's speculative credit.
    uet_maxwnd: Vec<u64>,
    /// RCCC credit pacers, per receiving host.
    pacers: Vec<uet::Pacer>,
    /// Flows waiting on each flow's completion.
    dependents: Vec<Vec<u32>>,
    /// Flows that have delivered their last byte.
    finished: usize,
    /// The scenario's faults, in time order.
    faults: Vec<crate::fault::FaultAction>,
    /// Time series, sampled.
    pub sampler: crate::telemetry::Sampler,
    /// Drops, trims and pause transitions.
    pub log: crate::telemetry::EventLog,
    /// Mirrored ports (`[[capture]]`), and which ports have one.
    pub captures: Vec<crate::capture::Capture>,
    mirrored: Vec<bool>,
    /// Flowlet tables per switch (adaptive routing with a flowlet gap): (port, last seen).
    flowlets: Vec<Vec<(u32, Time)>>,
    /// ECMP hash function of each node.
    hashers: Vec<crate::routing::EcmpHash>,
    /// WRED marking draws.
    wred_rng: SimRng,
    /// Frame-error draws.
    loss_rng: SimRng,
    rto: sim_core::Duration,
    queue: EventQueue<Event>,
    now: Time,
    pub totals: Totals,
    pub stopped: Option<StopReason>,
    /// PFC storms and deadlocks found.
    pub watch: pfc_watch::PfcWatch,
    /// Each flow's ideal FCT and lower bound on the healthy fabric.
    pub bounds: Vec<ideal::FlowBounds>,
}

impl<'a> Sim<'a> {
    /// Build the fabric for `variant`. The scenario was validated, so layouts succeed.
    pub fn new(scenario: &Scenario, variant: &'a Variant) -> Self {
        let mut net = Network::build(&scenario.topology);
        // A switch's pipeline latency delays every frame it receives: fold it into the cables
        // that lead into switches.
        if variant.switch.latency > Duration::ZERO {
            for p in 0..net.ports.len() {
                let far = net.port_node[net.peer[p].idx()];
                if matches!(net.roles[far.idx()], crate::network::Role::Switch(_)) {
                    net.links[p].delay += variant.switch.latency;
                }
            }
        }
        let streams = RngStreams::new(scenario.seed);
        let hashers = (0..net.names.len())
            .map(|n| crate::routing::EcmpHash::new(streams.key("ecmp-salt", n as u64)))
            .collect();
        let mtu = variant.nic.mtu.0 as u32;
        let window = variant.nic.window.map(|w| w.0);
        let uet = variant.nic.transport == Transport::Uet;
        let flows: Vec<Flow> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, s)| {
                // The UDP source port carries the entropy; NICs keep it in the dynamic range
                // 49152-65535 (RFC 6335), so it never looks like a well-known service to a
                // dissector and 14 bits vary.
                let entropy = 0xc000 | (streams.key("entropy", i as u64) as u16 & 0x3fff);
                let proto = if uet {
                    let packets = Flow::packets_for(s.size, mtu);
                    let ev = EvSelector::new(&variant.nic.lb, entropy);
                    Proto::Uet(Box::new(Uet::new(packets, ev, streams.key("ev", i as u64))))
                } else {
                    Proto::Roce(RoceQp::new(window))
                };
                Flow::new(s.clone(), mtu, entropy, proto)
            })
            .collect();
        // The unloaded round trip of the longest path a flow takes: NSCC's scaling reference
        // (uet-htsim's network_rtt) and the base of the UET retransmission timeout.
        let network_rtt = scenario
            .flows
            .iter()
            .map(|f| base_rtt(&ideal::path(&net, f), variant.max_frame()))
            .max()
            .unwrap_or(Duration::from_us(1));
        let bounds = ideal::bounds(&net, &scenario.flows, mtu);
        let host_rate = |h: usize| scenario.topology.host_rate(crate::ids::HostId(h as u32));
        let trimming = variant.switch.trim.is_some();
        let nscc = (0..net.host_node.len())
            .map(|h| {
                variant
                    .nic
                    .cc
                    .nscc()
                    .map(|c| NsccParams::new(c, host_rate(h), network_rtt, mtu, trimming))
            })
            .collect();
        let uet_maxwnd = (0..net.host_node.len())
            .map(|h| (1.5 * host_rate(h).bytes_in(network_rtt) as f64) as u64)
            .collect();
        let rto = match variant.nic.transport {
            Transport::Roce => variant.nic.rto(),
            Transport::Uet => variant.nic.rto.unwrap_or(Duration::from_us(15) + network_rtt * 6),
        };
        let flowlets = match variant.switch.routing {
            Routing::Adaptive { flowlet_gap: Some(_) } => {
                vec![vec![(u32::MAX, Time::ZERO); FLOWLET_SLOTS]; net.switch_node.len()]
            }
            _ => Vec::new(),
        };
        let nics = net.host_node.iter().map(|&n| {
            let r = &net.node_ports[n.idx()];
            crate::nic::Nic::new(r.start, r.len())
        });
        let dcqcn = (0..net.host_node.len())
            .map(|h| match &variant.nic.cc {
                CcConfig::Dcqcn(c) => {
                    let rate = scenario.topology.host_rate(crate::ids::HostId(h as u32));
                    Some(c.resolve(rate).expect("validated when the scenario was loaded"))
                }
                _ => None,
            })
            .collect();
        let buffers = build_buffers(
            &scenario.topology,
            &variant.switch,
            &variant.pfc,
            variant.max_frame(),
        )
        .expect("validated when the scenario was loaded");
        let per_host = crate::nic::rx::build(
            &scenario.topology,
            &variant.nic,
            &variant.pfc,
            variant.max_frame(),
            variant.switch.latency,
        )
        .expect("validated when the scenario was loaded");
        let mut rx: Vec<Option<Box<_>>> = (0..net.ports.len()).map(|_| None).collect();
        for (h, bufs) in per_host.into_iter().enumerate() {
            for (p, b) in net.ports_of(net.host_node[h]).zip(bufs) {
                rx[p.idx()] = Some(Box::new(b));
            }
        }
        let mut flows = flows;
        let mut dependents = vec![Vec::new(); flows.len()];
        let mut queue = EventQueue::new();
        for (i, f) in flows.iter_mut().enumerate() {
            let (need, on) = f.spec.deps.needs();
            f.waiting = need;
            for &d in on {
                dependents[d as usize].push(i as u32);
            }
            if need == 0 {
                queue.push(f.spec.start, Event::FlowStart(FlowId(i as u32)));
            }
        }
        for (i, f) in scenario.faults.iter().enumerate() {
            queue.push(f.at, Event::Fault(i as u32));
        }
        let telemetry = variant.limits.telemetry();
        queue.push(Time::ZERO, Event::Sample);
        let sampled: Vec<PortId> = (0..net.ports.len() as u32)
            .map(PortId)
            .filter(|p| {
                matches!(
                    net.roles[net.port_node[p.idx()].idx()],
                    crate::network::Role::Switch(_)
                )
            })
            .take(crate::telemetry::MAX_SAMPLED_PORTS)
            .collect();
        let mut mirrored = vec![false; net.ports.len()];
        let captures: Vec<crate::capture::Capture> = scenario
            .captures
            .iter()
            .map(|c| {
                let port = match c.peer {
                    Some(peer) => net.port_between(c.node, peer, c.cable),
                    None => net.ports_of(c.node).next(),
                }
                .expect("capture points are validated against the topology");
                mirrored[port.idx()] = true;
                crate::capture::Capture::new(c.clone(), port, net.peer[port.idx()])
            })
            .collect();
        Sim {
            variant,
            nics: nics.collect(),
            host_counters: vec![HostCounters::default(); net.host_node.len()],
            net,
            flows,
            buffers,
            rx,
            dcqcn,
            nscc,
            uet_maxwnd,
            pacers: vec![uet::Pacer::default(); scenario.topology.hosts.len()],
            flowlets,
            dependents,
            finished: 0,
            faults: scenario.faults.clone(),
            sampler: crate::telemetry::Sampler::new(&telemetry, sampled),
            log: crate::telemetry::EventLog::new(telemetry.event_log),
            captures,
            mirrored,
            hashers,
            wred_rng: streams.stream("wred", 0),
            loss_rng: streams.stream("link-loss", 0),
            rto,
            queue,
            now: Time::ZERO,
            totals: Totals::default(),
            stopped: None,
            watch: Default::default(),
            bounds,
        }
    }

    /// Run until no events remain or a limit is reached.
    pub fn run(&mut self) {
        self.run_with_progress(|_| true);
    }

    /// Run, calling `progress(now)` about every million events.
    /// `progress` returns false to stop the run there (it is then marked interrupted).
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(Time) -> bool) {
        let limits = &self.variant.limits;
        let max_time = Time::ZERO + limits.time();
        let max_events = limits.events();
        let max_wall = limits.wall();
        let started = std::time::Instant::now();
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
            // Once every flow has finished, only the packets still moving matter: idle timers
            // (retransmission, rate increase, samples, refreshes) would only stretch the run.
            if self.finished == self.flows.len()
                && !matches!(
                    ev,
                    Event::TxDone(_) | Event::Arrive(_) | Event::Resume(_) | Event::RxDone(_)
                )
            {
                continue;
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
                Event::Resume(p) => self.kick(p),
                Event::PfcRefresh(p) => self.on_pfc_refresh(p),
                Event::NicWake(p) => self.on_nic_wake(p),
                Event::Rto(f) => self.on_rto(f),
                Event::CcTimer(f) => self.on_cc_timer(f),
                Event::RxDone(p) => self.on_rx_done(p),
                Event::CreditTick(h) => self.on_credit_tick(h),
                Event::Fault(i) => self.on_fault(i as usize),
                Event::Reroute => self.net.reroute(),
                Event::Sample => self.on_sample(),
                Event::DeadlockCheck => self.on_deadlock_check(),
            }
            if self.stopped.is_some() {
                break;
            }
            if self.totals.events & 0xf_ffff == 0 {
                if !progress(self.now) {
                    self.stopped = Some(StopReason::Interrupted);
                    break;
                }
                if started.elapsed() > max_wall {
                    self.stopped = Some(StopReason::MaxWall(max_wall));
                    break;
                }
            }
        }
        self.totals.end_time = self.now;
        let watchdog = self.variant.pfc.watchdog;
        for p in 0..self.net.ports.len() {
            let port = &mut self.net.ports[p];
            port.pause.finish(self.now, watchdog);
            for (prio, start) in port.xoff.finish(self.now, watchdog) {
                self.record_storm(PortId(p as u32), prio, start);
            }
        }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    fn schedule(&mut self, at: Time, ev: Event) {
        self.queue.push(at, ev);
    }

    /// Flow `f` has delivered its last byte: start the flows that waited for it.
    fn completed(&mut self, f: FlowId) {
        self.finished += 1;
        let now = self.now;
        for i in 0..self.dependents[f.idx()].len() {
            let d = self.dependents[f.idx()][i] as usize;
            let flow = &mut self.flows[d];
            if flow.waiting > 0 {
                flow.waiting -= 1;
                if flow.waiting == 0 {
                    let at = flow.spec.start.max(now);
                    self.queue.push(at, Event::FlowStart(FlowId(d as u32)));
                }
            }
        }
    }

    /// Record a time-series sample; keep sampling while anything else is pending.
    fn on_sample(&mut self) {
        let t = &self.totals;
        let totals = crate::telemetry::Totals {
            delivered_bytes: t.delivered_payload,
            ecn_marked: t.ecn_marked,
            cnps: t.cnps,
            pfc_frames: t.pfc_frames,
            trimmed: t.trimmed,
            drops: t.dropped_packets,
        };
        let ports = &self.net.ports;
        self.sampler
            .record(self.now, totals, |p| ports[p.idx()].occupancy());
        // Sample while flows are unfinished (not while only idle timers remain).
        if self.finished < self.flows.len() && !self.queue.is_empty() {
            let at = self.now + self.sampler.interval;
            self.queue.push(at, Event::Sample);
        }
    }

    /// The DSCP this variant's NICs put on CNPs (DCQCN `cnp_dscp`), if they send any.
    pub fn cnp_dscp(&self) -> Option<u8> {
        self.dcqcn.iter().flatten().next().map(|d| d.cnp_dscp)
    }

    /// Copy a frame `p` sent (`tx`) or received to the captures mirroring `p`.
    #[inline]
    fn mirror(&mut self, p: PortId, tx: bool, pkt: &Packet) {
        if self.mirrored[p.idx()] {
            let now = self.now;
            for c in self.captures.iter_mut().filter(|c| c.port == p) {
                c.observe(now, tx, pkt);
            }
        }
    }

    /// Log an event at port `at` (PortId(u32::MAX) when none).
    #[inline]
    fn log(&mut self, at: PortId, pkt: &Packet, event: &'static str, reason: &'static str) {
        let flow = if pkt.kind == crate::packet::Kind::Pause {
            u32::MAX
        } else {
            pkt.flow.0
        };
        self.log.push(crate::telemetry::LogRow {
            time: self.now,
            port: at,
            prio: pkt.prio,
            flow,
            event,
            reason,
        });
    }

    /// Account a packet leaving the fabric unseen, lost at port `at`.
    fn drop(&mut self, pkt: Packet, reason: DropReason, at: PortId) {
        self.log(at, &pkt, "drop", reason.name());
        self.totals.dropped_packets += 1;
        self.totals.dropped_bytes += pkt.frame as u64;
        self.totals.drops_by_reason[reason as usize] += 1;
        if pkt.kind == crate::packet::Kind::Data {
            self.flows[pkt.flow.idx()].dropped_packets += 1;
        }
    }

    /// Packets and frame bytes still inside the fabric (queued, serializing, on a wire).
    pub fn in_flight(&self) -> (u64, u64) {
        let pool = &self.net.pool;
        let rx = self.rx.iter().flatten().flat_map(|b| b.drain.held(pool));
        let held = self.net.ports.iter().flat_map(|p| p.held(pool)).chain(rx);
        let flying = self.net.links.iter().flat_map(|l| l.in_flight(pool));
        held.chain(flying)
            .fold((0, 0), |(n, b), p| (n + 1, b + p.frame as u64))
    }
}
