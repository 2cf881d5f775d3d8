//! Building a run: the fabric, its switches, the flows with their transport state, the NICs'
//! per-host parameters, telemetry and the first events, all from a loaded scenario and one of
//! its (resolved) variants.
//!
//! Random streams: each switch's ECMP salt, each flow's entropy and REPS draws, and each
//! workload generator have their own stream, keyed by `(seed, kind, index)`; so do each
//! switch's WRED marking and trimming draws (`wred`, by switch) and each lossy cable
//! direction's frame errors (`link-loss`, by sending port). No stream is shared between two
//! entities: a draw on one switch or cable cannot move another's, so changing one part of a
//! fabric leaves the random numbers of the rest as they were (common random numbers across a
//! sweep's variants), and a partition of the fabric draws what the whole would.

use super::{Event, Sim, Totals};
use crate::cc::Senders;
use crate::cc::nscc::NsccParams;
use crate::ideal;
use crate::ids::{FlowId, HostId, NodeId, PortId, SwitchId};
use crate::network::{Network, Role};
use crate::nic::lb::EvSelector;
use crate::nic::uet::Pacer;
use crate::nic::{Flow, HostCounters, Nic, Proto, Transport};
use crate::packet::on_wire;
use crate::scenario::{Scenario, Variant};
use crate::switch::Switch;
use sim_core::{BitRate, Duration, EventQueue, RngStreams, Time};
use std::sync::Arc;

/// Unloaded round trip over `hops`: propagation both ways, a full data frame forward and a
/// 64 B ACK back at every hop (uet-htsim `calculate_rtt`).
fn base_rtt(hops: &[(BitRate, Duration)], max_frame: u32) -> Duration {
    hops.iter().fold(Duration::ZERO, |acc, &(rate, d)| {
        acc + d * 2 + rate.tx_time(on_wire(max_frame)) + rate.tx_time(on_wire(crate::packet::MIN_FRAME))
    })
}

/// What a run derives from each flow's paths through the fabric: the unloaded round trip of
/// the path it takes first and the switches on it, and the bounds on its completion. Every
/// copy of a run cut into partitions has the same: the copies take it from the first instead
/// of searching the fabric again (a k=64 fat tree's 65,536 flows cross 140 M ports).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Paths {
    rtt: Vec<Duration>,
    hops: Vec<u8>,
    bounds: Vec<ideal::FlowBounds>,
}

impl Paths {
    /// Each flow's paths, searched on `threads` threads, each a run of consecutive flows (a
    /// flow's figures depend on it and the fabric alone, so the split changes none).
    fn find(scenario: &Scenario, variant: &Variant, net: &Network, threads: usize) -> Self {
        let flows = &scenario.flows;
        let chunk = flows.len().div_ceil(threads.max(1)).max(1);
        if threads <= 1 || flows.len() <= chunk {
            return Self::of(scenario, variant, net, flows);
        }
        let parts: Vec<Paths> = std::thread::scope(|scope| {
            let searches: Vec<_> = flows
                .chunks(chunk)
                .map(|c| scope.spawn(move || Self::of(scenario, variant, net, c)))
                .collect();
            searches
                .into_iter()
                .map(|s| s.join().expect("a path search does not panic"))
                .collect()
        });
        let mut all = Paths {
            rtt: Vec::with_capacity(flows.len()),
            hops: Vec::with_capacity(flows.len()),
            bounds: Vec::with_capacity(flows.len()),
        };
        for p in parts {
            all.rtt.extend(p.rtt);
            all.hops.extend(p.hops);
            all.bounds.extend(p.bounds);
        }
        all
    }

    /// The paths of `flows`, some of the scenario's.
    fn of(
        scenario: &Scenario,
        variant: &Variant,
        net: &Network,
        flows: &[crate::workload::FlowSpec],
    ) -> Self {
        let (rtt, hops) = flows
            .iter()
            .map(|f| {
                let hops = ideal::path(net, f);
                let switches = hops.len().saturating_sub(1).min(255) as u8;
                (base_rtt(&hops, variant.max_frame()), switches)
            })
            .unzip();
        let mtu = variant.nic.mtu.0 as u32;
        let mut bounds = ideal::bounds(net, flows, mtu, |prio| variant.nic.transport_of(prio));
        let t = &scenario.topology;
        for (f, b) in flows.iter().zip(&mut bounds) {
            if t.same_server(f.src, f.dst) {
                let d = t.nvlink.expect("servers have NVLink").tx_time(f.size);
                (b.ideal, b.floor) = (d, d);
            }
        }
        Paths { rtt, hops, bounds }
    }
}

impl<'a> Sim<'a> {
    /// Build the run of `variant` on `scenario`'s fabric and traffic.
    pub fn new(scenario: &Scenario, variant: &'a Variant) -> Self {
        Self::build(scenario, variant, None, 1)
    }

    /// [`Sim::new`], its flows' paths searched on `threads` threads (a k=64 fat tree's
    /// 65,536 flows cross 140 M ports): the same run.
    pub fn with_threads(scenario: &Scenario, variant: &'a Variant, threads: usize) -> Self {
        Self::build(scenario, variant, None, threads)
    }

    /// What this run derived from its flows' paths, for a copy of it ([`Sim::with_paths`]).
    pub(super) fn paths(&self) -> Paths {
        let (rtt, hops) = self.senders.paths();
        Paths {
            rtt: rtt.to_vec(),
            hops: hops.to_vec(),
            bounds: self.bounds.clone(),
        }
    }

    /// [`Sim::new`], with what a run built before derived from its flows' paths.
    pub(super) fn with_paths(scenario: &Scenario, variant: &'a Variant, paths: Paths) -> Self {
        Self::build(scenario, variant, Some(paths), 1)
    }

    fn build(scenario: &Scenario, variant: &'a Variant, paths: Option<Paths>, threads: usize) -> Self {
        let streams = RngStreams::new(scenario.seed);
        let mut net = fabric(scenario, variant, &streams);
        let from_host = (0..net.ports.len())
            .map(|p| {
                let peer = net.peer[p];
                peer != PortId::NONE && matches!(net.roles[net.port_node[peer.idx()].idx()], Role::Host(_))
            })
            .collect();
        let paths_log = crate::telemetry::PathLog::new(from_host, scenario.flows.len());
        let mtu = variant.nic.mtu.0 as u32;
        let mut flows = flows(scenario, variant, &streams);
        for s in 0..net.switch_node.len() {
            if let Ok(Some(w)) = variant.switch_of(s).scheduler.weights() {
                let ports: Vec<PortId> = net.ports_of(net.switch_node[s]).collect();
                for p in ports {
                    net.ports[p.idx()].set_dwrr(w);
                }
            }
        }
        if scenario.flows.iter().any(|f| f.qp.is_some()) {
            net.router.share_connections(connections(scenario));
        }
        let Paths {
            rtt: path_rtt,
            hops: path_hops,
            bounds,
        } = paths.unwrap_or_else(|| {
            // No more threads than cores, whatever `--threads` says, and none for fewer than
            // 256 flows each: starting a thread costs more than so small a search.
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let search = threads.min(cores).min(scenario.flows.len() / 256).max(1);
            Paths::find(scenario, variant, &net, search)
        });
        // The unloaded round trip of the longest path a flow takes: NSCC's scaling reference
        // (uet-htsim's network_rtt) and the base of the UET retransmission timeout.
        let network_rtt = path_rtt.iter().copied().max().unwrap_or(Duration::from_us(1));
        let t = &scenario.topology;
        let servers = t.nvlink.map(|bw| (t.server.clone(), bw));
        let hosts = net.host_node.len();
        let host_rate = |h: usize| scenario.topology.host_rate(HostId(h as u32));
        let trimming = variant.switch_configs().any(|(s, _)| s.trim.is_some());
        let nscc: Vec<Option<Arc<NsccParams>>> = (0..hosts)
            .map(|h| {
                variant
                    .nic
                    .cc_for(Transport::Uet)
                    .nscc()
                    .map(|c| Arc::new(NsccParams::new(c, host_rate(h), network_rtt, mtu, trimming)))
            })
            .collect();
        let maxwnd = (0..hosts)
            .map(|h| (1.5 * host_rate(h).bytes_in(network_rtt) as f64) as u64)
            .collect();
        let dcqcn = variant
            .resolved
            .dcqcn
            .iter()
            .map(|p| p.clone().map(Arc::new))
            .collect();
        let senders = Senders::new(dcqcn, nscc, maxwnd, path_rtt, path_hops, network_rtt);
        // RoCEv2's timeout is the QP's; UET's defaults to its base RTO plus six round trips.
        let rto_roce = variant.nic.rto();
        let rto = variant.nic.rto.unwrap_or(Duration::from_us(15) + network_rtt * 6);
        let timers = crate::nic::protocol::Timers {
            rto_roce,
            rto,
            rto_max: variant.nic.rto_max,
            rto_retries: variant.nic.rto_retries,
            ack: variant.nic.ack_timeout.unwrap_or(network_rtt),
            credit: variant.nic.credit_timeout.unwrap_or(rto),
        };
        let nics = net
            .host_node
            .iter()
            .map(|&n| {
                let r = &net.node_ports[n.idx()];
                Nic::new(r.start, r.len())
            })
            .collect();
        let (queue, dependents) = first_events(scenario, &mut flows);
        let telemetry = variant.limits.telemetry();
        let sampled: Vec<PortId> = (0..net.ports.len() as u32)
            .map(PortId)
            .filter(|p| matches!(net.roles[net.port_node[p.idx()].idx()], Role::Switch(_)))
            .take(crate::telemetry::MAX_SAMPLED_PORTS)
            .collect();
        let mut mirrored = vec![false; net.ports.len()];
        let captures = scenario
            .captures
            .iter()
            .map(|c| {
                mirrored[c.port.idx()] = true;
                crate::capture::Capture::new(c.clone(), c.port, net.peer[c.port.idx()])
            })
            .collect();
        let watchdog = variant
            .switch_configs()
            .any(|(_, p)| p.watchdog_action != crate::pfc::WatchdogAction::Off);
        let wd = crate::pfc_wd::PfcWd::new(watchdog, net.ports.len());
        let cbfc = if variant.pfc.is_cbfc() {
            crate::cbfc::Cbfc::new(&variant.pfc.cbfc, variant.pfc.cbfc_mask(), net.ports.len())
        } else {
            crate::cbfc::Cbfc::default()
        };
        let prefetching = super::prefetch::worth_it(&net, scenario.flows.len());
        Sim {
            jobs: scenario.jobs.clone(),
            variant,
            switches: switches(&net, variant, &streams),
            rx: rx_buffers(&net, variant),
            nics,
            host_counters: vec![HostCounters::default(); hosts],
            net,
            flows,
            senders,
            pacers: vec![Pacer::default(); hosts],
            dependents,
            finished: 0,
            faults: scenario.faults.clone(),
            sampler: crate::telemetry::Sampler::new(&telemetry, sampled, !variant.pfc.priorities.is_empty()),
            flow_sampler: crate::telemetry::FlowSampler::new(
                scenario.flows.len(),
                &scenario.traced_flows(),
                telemetry.max_samples,
                control_kind(variant),
            ),
            log: crate::telemetry::EventLog::new(telemetry.event_log),
            paths: paths_log,
            captures,
            mirrored,
            timers,
            prefetching,
            window_order: true,
            win: None,
            windowed: false,
            queue,
            now: Time::ZERO,
            totals: Totals::default(),
            stopped: None,
            wall_deadline: None,
            give_back: None,
            watch: Default::default(),
            wd,
            cbfc,
            servers,
            bounds,
            seed: scenario.seed,
            part: None,
            parallel: None,
        }
    }
}

/// The network of ports and cables, routing by the variant's policy, each cable with the
/// FEC and the LLR its switches' SONiC files set (`crate::scenario::port_fec`, `port_llr`). A switch's pipeline
/// latency delays every frame it receives: it is folded into the cables that lead into
/// switches.
fn fabric(scenario: &Scenario, variant: &Variant, streams: &RngStreams) -> Network {
    let mut own = crate::scenario::port_fec::apply(&scenario.topology, variant);
    if let Some(t) = crate::scenario::port_llr::apply(own.as_ref().unwrap_or(&scenario.topology), variant) {
        own = Some(t);
    }
    let topo = own.as_ref().unwrap_or(&scenario.topology);
    let mut net = Network::build(topo, variant.switch.routing, streams);
    if variant.switch.latency > Duration::ZERO {
        for p in 0..net.ports.len() {
            let far = net.port_node[net.peer[p].idx()];
            if matches!(net.roles[far.idx()], Role::Switch(_)) {
                net.links[p].delay += variant.switch.latency;
            }
        }
    }
    net
}

/// Every flow with its transport's state: a RoCEv2 QP, or a UET PDC with its load balancer.
fn flows(scenario: &Scenario, variant: &Variant, streams: &RngStreams) -> Vec<Flow> {
    let mtu = variant.nic.mtu.0 as u32;
    let window = variant.nic.window.map(|w| w.0);

    scenario
        .flows
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // The UDP source port carries the entropy; NICs keep it in the dynamic range
            // 49152-65535 (RFC 6335), so it never looks like a well-known service to a
            // dissector and 14 bits vary.
            // Messages of one queue pair share its port (mlx5 derives it from the QP numbers).
            let key = match s.qp {
                Some(qp) => streams.key("qp", qp),
                None => streams.key("entropy", i as u64),
            };
            let entropy = 0xc000 | (key as u16 & 0x3fff);
            let proto = if variant.nic.transport_of(s.prio) == Transport::Uet {
                let packets = crate::nic::core::packets_for(s.size, mtu);
                let ev = EvSelector::new(variant.nic.lb_of(s.prio), entropy);
                Proto::uet(packets, ev, streams.key("ev", i as u64))
            } else {
                Proto::roce(window)
            };
            Flow::new(s.clone(), mtu, entropy, proto)
        })
        .collect()
}

/// For each flow, the first flow of its queue pair (itself when it has a connection of its
/// own): the flow whose addresses its packets' ECMP hash reads.
fn connections(scenario: &Scenario) -> Vec<FlowId> {
    let mut first = std::collections::HashMap::new();
    scenario
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| match f.qp {
            Some(qp) => *first.entry(qp).or_insert(FlowId(i as u32)),
            None => FlowId(i as u32),
        })
        .collect()
}

/// The first events (flows without dependencies start, faults, the first sample), and for
/// each flow the flows that wait for it.
fn first_events(scenario: &Scenario, flows: &mut [Flow]) -> (EventQueue<Event>, Vec<Vec<u32>>) {
    let mut dependents = vec![Vec::new(); flows.len()];
    let mut queue = EventQueue::new();
    for (i, f) in flows.iter_mut().map(|f| &mut f.core).enumerate() {
        let (need, on) = f.spec.deps.needs();
        f.waiting = need;
        for &d in on {
            dependents[d as usize].push(i as u32);
        }
        if need == 0 {
            queue.push(f.spec.start + f.spec.after, Event::FlowStart(FlowId(i as u32)));
        }
    }
    for (i, f) in scenario.faults.iter().enumerate() {
        queue.push(f.at, Event::Fault(i as u32));
    }
    queue.push(Time::ZERO, Event::Sample);
    (queue, dependents)
}

/// Each switch with the buffer the variant resolved for it.
fn switches(net: &Network, variant: &Variant, streams: &RngStreams) -> Vec<Switch> {
    let classes = dscp_classes(variant);
    net.switch_node
        .iter()
        .zip(&variant.resolved.buffers)
        .enumerate()
        .map(|(s, (&node, layout))| {
            let edge_hosts = net
                .ports_of(node)
                .map(
                    |p| match net.roles[net.port_node[net.peer[p.idx()].idx()].idx()] {
                        Role::Host(h) => h,
                        Role::Switch(_) => HostId::NONE,
                    },
                )
                .collect();
            let first = PortId(net.node_ports[node.idx()].start);
            let rng = streams.stream("wred", s as u64);
            let mut sw = Switch::new(SwitchId(s as u32), node, first, layout, edge_hosts, rng);
            let tier = variant.resolved.switch_tier.get(s).copied().unwrap_or(0);
            sw.set_dscp_classes(classes[tier as usize]);
            sw
        })
        .collect()
}

/// The class each tier's switches give each DSCP (`[switch]` first): None where they keep
/// the frame's 802.1Q class.
fn dscp_classes(variant: &Variant) -> Vec<Option<crate::switch::DscpClasses>> {
    let dscp = variant.nic.trust == crate::nic::Trust::Dscp;
    variant
        .switch_configs()
        .map(|(s, _)| s.dscp_classes(dscp).expect("checked at validation"))
        .collect()
}

/// The NIC receive buffer of every host port, where the variant has them.
fn rx_buffers(net: &Network, variant: &Variant) -> Vec<Option<Box<crate::nic::rx::RxBuffer>>> {
    let mut rx: Vec<Option<Box<_>>> = (0..net.ports.len()).map(|_| None).collect();
    for (h, specs) in variant.resolved.rx.iter().enumerate() {
        let node: NodeId = net.host_node[h];
        for (p, spec) in net.ports_of(node).zip(specs) {
            rx[p.idx()] = Some(Box::new(crate::nic::rx::RxBuffer::new(*spec)));
        }
    }
    rx
}

/// What a flow's control series shows in this variant.
fn control_kind(v: &Variant) -> crate::telemetry::Control {
    use crate::nic::Transport;
    use crate::telemetry::Control;
    let dcqcn = matches!(v.nic.cc_for(Transport::Roce), crate::nic::CcConfig::Dcqcn(_));
    let nscc = v.nic.cc_for(Transport::Uet).nscc().is_some();
    let plugin = v.nic.cc.is_plugin();
    // With both transports the main one's control is drawn (the other's flows show 0).
    match (v.nic.transport, nscc, dcqcn) {
        _ if plugin => Control::Window,
        (Transport::Uet, true, _) => Control::Window,
        (Transport::Roce, _, true) => Control::Rate,
        _ => Control::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_searched_on_several_threads_are_those_of_one() {
        // A k=4 fat tree's 16 flows in runs of 6, 6 and 4, and in 16 runs of one.
        let text = r#"
            [topology]
            kind = "fat-tree"
            k = 4
            host_link = { rate = "100Gbps", delay = "1us" }
            fabric_link = { rate = "100Gbps", delay = "1us" }
            [[workload]]
            kind = "permutation"
            size = "1MB"
        "#;
        let scenario = crate::scenario::parse(text, "t.toml", "t", &Default::default()).unwrap();
        let variant = &scenario.variants[0];
        let net = fabric(&scenario, variant, &RngStreams::new(scenario.seed));
        let one = Paths::find(&scenario, variant, &net, 1);
        assert_eq!(one.rtt.len(), 16);
        assert!(one.rtt.iter().all(|&r| r > Duration::ZERO));
        for threads in [3, 16, 40] {
            assert_eq!(Paths::find(&scenario, variant, &net, threads), one);
        }
    }
}
