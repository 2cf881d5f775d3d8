//! The ideal flow completion time: the flow alone in the fabric, in closed form.
//!
//! On one path, a flow of n packets crosses hops of rate C_i and propagation delay d_i, store
//! and forward. With the network otherwise empty, packet j leaves hop i at
//!
//! ```text
//!   D(i, j) = max(D(i-1, j) + d_(i-1),  D(i, j-1)) + w_j * 8 / C_i
//! ```
//!
//! (the tandem-queue recursion: a packet starts on hop i when it has fully arrived and the
//! previous packet has left), and the flow completes at D(h, n) + d_h. With equal rates this
//! reduces to (S + n*H)*8/C + h*d + (h-1)*w_max*8/C, where w_max is the largest packet: a
//! short last packet waits at every hop for the full packet ahead of it, so it is the full
//! packet's serialization that adds per hop (the last packet's when S is a multiple of the
//! MTU). The path is the first equal-cost choice at every hop.
//!
//! A flow sprayed packet by packet over the equal-cost paths (UET's REPS, adaptive routing)
//! is not held to one path's rate: where the fabric is slower than the host links, it beats
//! any one path. Its ideal is then the lower bound of [`spread_fct`] over the layers of the
//! equal-cost paths (every path crosses each layer once, so a layer's links together are a
//! cut: the classic max-flow bound). A flow's ideal is the smaller of the two, so no flow,
//! however routed, can beat it.

use crate::ids::{NodeId, PortId};
use crate::network::Network;
use crate::nic::Transport;
use crate::packet::{on_wire, roce_data_frame, uet_data_frame};
use crate::workload::FlowSpec;
use sim_core::{BitRate, Duration};

/// Rates and delays along the first shortest path from `f.src` to `f.dst`.
pub fn path(net: &Network, f: &FlowSpec) -> Vec<(BitRate, Duration)> {
    let mut hops = Vec::new();
    let (mut node, dst_node) = (net.host_node[f.src.idx()], net.host_node[f.dst.idx()]);
    while node != dst_node && hops.len() <= net.names.len() {
        let Some(&port) = net.router.tables().next_hops(node, f.dst).first() else {
            return Vec::new();
        };
        hops.push((net.ports[port.idx()].rate, net.links[port.idx()].delay));
        node = net.port_node[net.peer[port.idx()].idx()];
    }
    hops
}

/// The frame a data packet of `payload` bytes takes in `transport` (RoCEv2: 62 B of headers;
/// UET: 102 B).
pub fn data_frame(transport: Transport) -> fn(u32) -> u32 {
    match transport {
        Transport::Roce => roce_data_frame,
        Transport::Uet => uet_data_frame,
    }
}

/// Ideal FCT of `f` with payload `mtu` per packet in frames of `frame(payload)` bytes over
/// `hops`, in O(hops).
///
/// For n-1 identical full packets, all at the source at time 0, the recursion has the closed
/// form D(i, j) = P_i + (j-1) * M_i, with P_i = sum over k <= i of s_k (+ d_k for k < i) and
/// M_i = max over k <= i of s_k (s_k the full packet's serialization on hop k; by induction
/// on i: the larger of the two terms of the max is always the one with M_i). The last, possibly
/// shorter, packet then takes one step of the recursion through every hop.
pub fn ideal_fct(f: &FlowSpec, mtu: u32, frame: fn(u32) -> u32, hops: &[(BitRate, Duration)]) -> Duration {
    if hops.is_empty() {
        return Duration::ZERO;
    }
    let n = f.size.div_ceil(mtu as u64);
    let wire = |payload: u64| on_wire(frame(payload as u32));
    let (full, last) = (wire(mtu as u64), wire(f.size - (n - 1) * mtu as u64));
    let (mut p, mut m, mut arrived) = (0u64, 0u64, 0u64);
    for (i, &(rate, delay)) in hops.iter().enumerate() {
        // D(i, n-1): when the full packet ahead of the last one leaves hop i (0 if none).
        let s = rate.tx_time(full).0;
        p += s + if i > 0 { hops[i - 1].1.0 } else { 0 };
        m = m.max(s);
        let ahead = if n > 1 { p + (n - 2) * m } else { 0 };
        let done = arrived.max(ahead) + rate.tx_time(last).0;
        arrived = done + delay.0;
    }
    Duration(arrived)
}

/// One hop of the equal-cost paths from a source to a destination: every link a packet may
/// take there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    /// How many links.
    pub links: u32,
    /// Their rates together.
    pub capacity: BitRate,
    /// The fastest one's rate.
    pub rate: BitRate,
    /// The shortest one's propagation delay.
    pub delay: Duration,
}

/// What [`layers`] reads of each port, packed: its rate, its cable's delay and the node at the
/// far end. A port is 512 bytes; the flows of a k=64 fat tree visit 140 M ports on their way
/// through the core layer, each a cache miss when read from the ports themselves.
pub struct PortHops(Vec<(BitRate, Duration, NodeId)>);

impl PortHops {
    pub fn new(net: &Network) -> Self {
        PortHops(
            (0..net.ports.len())
                .map(|p| {
                    let peer = net.peer[p];
                    // A port without a cable is never a next hop.
                    let far = if peer == PortId::NONE {
                        NodeId(u32::MAX)
                    } else {
                        net.port_node[peer.idx()]
                    };
                    (net.ports[p].rate, net.links[p].delay, far)
                })
                .collect(),
        )
    }
}

/// The layers of the equal-cost paths from `f.src` to `f.dst`: the links at each distance from
/// the source. None if there is no route or the paths are not all of one length (then the
/// layers are not cuts).
pub fn layers(net: &Network, hops: &PortHops, f: &FlowSpec) -> Option<Vec<Layer>> {
    let dst_node = net.host_node[f.dst.idx()];
    let mut frontier = vec![net.host_node[f.src.idx()]];
    let mut layers = Vec::new();
    let mut next = Vec::new();
    while frontier != [dst_node] {
        if frontier.contains(&dst_node) || layers.len() > net.names.len() {
            return None;
        }
        let mut layer = Layer {
            links: 0,
            capacity: BitRate(0),
            rate: BitRate(0),
            delay: Duration(u64::MAX),
        };
        next.clear();
        for &node in &frontier {
            let ports = net.router.tables().next_hops(node, f.dst);
            if ports.is_empty() {
                return None;
            }
            for &port in ports {
                let (rate, delay, far) = hops.0[port.idx()];
                layer.links += 1;
                layer.capacity = BitRate(layer.capacity.0.saturating_add(rate.0));
                layer.rate = layer.rate.max(rate);
                layer.delay = layer.delay.min(delay);
                next.push(far);
            }
        }
        // Each node once (a layer's figures do not depend on the order; a search of `next`
        // for each of a k=64 fat tree's 32,768 core-layer ports cost seconds per run).
        next.sort_unstable_by_key(|n| n.0);
        next.dedup();
        layers.push(layer);
        std::mem::swap(&mut frontier, &mut next);
    }
    Some(layers)
}

/// A lower bound on the completion of `f` spread over `layers` in any way, packet by packet.
///
/// Whatever the routing, layer i cannot send before a packet reaches it: A_i, the earlier of
/// the first packet and the last (the shortest, which may overtake the others on another
/// path, though over one source cable it leaves after them), each at its serialization on
/// the fastest link of every layer before and the shortest delays. Then the layer takes at
/// least the wire bytes W of all n packets over its capacity C_i (and a packet's time on its
/// fastest link), and the packet it sends last still crosses every later layer, at least as
/// small as the last packet:
///
/// ```text
///   T >= max_i [ A_i + max(W / C_i, w_n * 8 / r_i) + d_i + sum_(k > i) (w_n * 8 / r_k + d_k) ]
/// ```
///
/// On one path whose last packet is full, the largest term is the tandem recursion's answer.
pub fn spread_fct(f: &FlowSpec, mtu: u32, frame: fn(u32) -> u32, layers: &[Layer]) -> Duration {
    if layers.is_empty() {
        return Duration::ZERO;
    }
    let n = f.size.div_ceil(mtu as u64);
    let wire = |payload: u64| on_wire(frame(payload as u32));
    let (full, last) = (wire(mtu as u64), wire(f.size - (n - 1) * mtu as u64));
    let first = if n > 1 { full } else { last };
    // After layer i: the last packet over every later layer (filled from the end).
    let mut after = vec![0u64; layers.len()];
    for i in (0..layers.len() - 1).rev() {
        let l = &layers[i + 1];
        after[i] = after[i + 1] + l.rate.tx_time(last).0 + l.delay.0;
    }
    // When the first packet and the last one can reach layer i (packets between are the
    // first's size and leave the source after it). Over one source cable the last packet
    // starts after the n - 1 before it, as the NIC sends in order.
    let (mut reach_first, mut reach_last) = (0u64, 0u64);
    if layers[0].links == 1 {
        reach_last = (n - 1) * layers[0].rate.tx_time(full).0;
    }
    let mut bound = 0u64;
    for (i, l) in layers.iter().enumerate() {
        let all = if l.links == 1 {
            (n - 1) * l.rate.tx_time(full).0 + l.rate.tx_time(last).0
        } else {
            l.capacity.tx_time((n - 1) * full + last).0
        };
        let sent = reach_first.min(reach_last) + all.max(l.rate.tx_time(last).0);
        bound = bound.max(sent + l.delay.0 + after[i]);
        reach_first += l.rate.tx_time(first).0 + l.delay.0;
        reach_last += l.rate.tx_time(last).0 + l.delay.0;
    }
    Duration(bound)
}

/// A flow's reference times on the healthy fabric (computed before any fault): `ideal`, alone
/// on its first shortest path or spread over all of them, whichever is faster (the slowdown's
/// denominator), and `floor`, a lower bound under
/// any routing, spraying over parallel paths included (what the causality invariant checks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowBounds {
    pub ideal: Duration,
    pub floor: Duration,
}

/// Bounds for every flow, in `transport`'s framing. Faults only remove or slow cables, so
/// paths on the healthy fabric are the shortest and fastest any flow can take.
pub fn bounds(
    net: &Network,
    flows: &[FlowSpec],
    mtu: u32,
    transport: impl Fn(u8) -> Transport,
) -> Vec<FlowBounds> {
    let fastest = net.ports.iter().map(|p| p.rate).max().unwrap_or(BitRate(1));
    let port_hops = PortHops::new(net);
    let bound = |f: &FlowSpec| {
        let frame = data_frame(transport(f.prio));
        let hops = path(net, f);
        let one_path = ideal_fct(f, mtu, frame, &hops);
        let spread = layers(net, &port_hops, f)
            .filter(|l| l.iter().any(|l| l.links > 1))
            .map_or(one_path, |l| spread_fct(f, mtu, frame, &l));
        FlowBounds {
            ideal: one_path.min(spread),
            floor: min_fct(net, f, (mtu, frame), &hops, fastest),
        }
    };
    // A flow's bounds depend on it and the fabric alone; they are found destination by
    // destination, then source by source, so that flows one after the other read the same
    // ports: hosts are numbered switch by switch, so the flows into one pod of a k=64 fat
    // tree read the same 1,024 core ports down into it, where in the flows' own order each
    // read a thousand ports the flow before had not (a miss each: 1.3 s of the set-up).
    let mut order: Vec<u32> = (0..flows.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (flows[i as usize].dst, flows[i as usize].src, i));
    let zero = FlowBounds {
        ideal: Duration::ZERO,
        floor: Duration::ZERO,
    };
    let mut out = vec![zero; flows.len()];
    for i in order {
        out[i as usize] = bound(&flows[i as usize]);
    }
    out
}

/// Every byte leaves through the source's own cables and enters through the destination's,
/// so all frames take at least their wire time at the smaller of the two nodes' total rates;
/// then the last frame still crosses the remaining hops store and forward (at no more than
/// the `fastest` rate in the fabric), and every hop's propagation delay.
fn min_fct(
    net: &Network,
    f: &FlowSpec,
    (mtu, frame): (u32, fn(u32) -> u32),
    hops: &[(BitRate, Duration)],
    fastest: BitRate,
) -> Duration {
    if hops.is_empty() {
        return Duration::ZERO;
    }
    let n = f.size.div_ceil(mtu as u64);
    let last = f.size - (n - 1) * mtu as u64;
    let wire = |payload: u64| on_wire(frame(payload as u32));
    let total = (n - 1) * wire(mtu as u64) + wire(last);
    let capacity = |node: NodeId| BitRate(net.ports_of(node).map(|p| net.ports[p.idx()].rate.0).sum());
    let edge = capacity(net.host_node[f.src.idx()]).min(capacity(net.host_node[f.dst.idx()]));
    let propagation: Duration = hops.iter().map(|h| h.1).fold(Duration::ZERO, |a, d| a + d);
    edge.tx_time(total) + fastest.tx_time(wire(last)) * (hops.len() as u64 - 1) + propagation
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;
    use sim_core::Time;

    #[test]
    fn equal_rates_reduce_to_the_textbook_form() {
        let f = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: 10_000,
            start: Time::ZERO,
            prio: 3,
            deps: crate::workload::Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        let c = BitRate::gbps(100);
        let d = Duration::from_ns(500);
        for h in 1..=4 {
            let hops = vec![(c, d); h];
            // n = 3 packets (4096, 4096, 1808), H = 82 B on the wire each.
            let largest = 4096 + 82;
            let expected =
                c.tx_time(10_000 + 3 * 82).0 + h as u64 * d.0 + (h as u64 - 1) * c.tx_time(largest).0;
            assert_eq!(
                ideal_fct(&f, 4096, roce_data_frame, &hops),
                Duration(expected),
                "h = {h}"
            );
        }
    }

    #[test]
    fn slow_last_hop_is_the_bottleneck() {
        // 100G then 25G: the 25G hop serializes everything; the 100G hop adds one packet.
        let f = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: 4096 * 10,
            start: Time::ZERO,
            prio: 3,
            deps: crate::workload::Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        let (fast, slow, d) = (BitRate::gbps(100), BitRate::gbps(25), Duration::from_ns(100));
        let w = 4096 + 82;
        let expected = fast.tx_time(w).0 + d.0 + slow.tx_time(10 * w).0 + d.0;
        assert_eq!(
            ideal_fct(&f, 4096, roce_data_frame, &[(fast, d), (slow, d)]),
            Duration(expected)
        );
    }

    /// The tandem recursion written out packet by packet: the reference for the closed form.
    fn recursion(f: &FlowSpec, mtu: u32, hops: &[(BitRate, Duration)]) -> Duration {
        let n = f.size.div_ceil(mtu as u64);
        let mut done = vec![0u64; hops.len()];
        for j in 0..n {
            let payload = if j + 1 < n {
                mtu as u64
            } else {
                f.size - (n - 1) * mtu as u64
            };
            let w = on_wire(roce_data_frame(payload as u32));
            let mut arrived = 0u64;
            for (i, &(rate, delay)) in hops.iter().enumerate() {
                done[i] = arrived.max(done[i]) + rate.tx_time(w).0;
                arrived = done[i] + delay.0;
            }
        }
        Duration(done[hops.len() - 1] + hops[hops.len() - 1].1.0)
    }

    /// One to six hops of random rates (10-800 Gb/s) and delays (up to 3 us).
    fn random_hops(rng: &mut impl rand::RngExt) -> Vec<(BitRate, Duration)> {
        let rates = [10, 25, 40, 50, 100, 200, 400, 800];
        (0..rng.random_range(1..7))
            .map(|_| {
                let r = BitRate::gbps(rates[rng.random_range(0..rates.len())]);
                (r, Duration(rng.random_range(0..3_000_000)))
            })
            .collect()
    }

    #[test]
    fn the_closed_form_is_the_recursion() {
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for _ in 0..2000 {
            let hops = random_hops(&mut rng);
            let mtu = [256, 1024, 4096, 9000][rng.random_range(0..4)];
            let f = flow(rng.random_range(1..200_000));
            assert_eq!(
                ideal_fct(&f, mtu, roce_data_frame, &hops),
                recursion(&f, mtu, &hops),
                "{hops:?} {} B",
                f.size
            );
        }
    }

    fn flow(size: u64) -> FlowSpec {
        FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size,
            start: Time::ZERO,
            prio: 3,
            deps: crate::workload::Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        }
    }

    fn single(hops: &[(BitRate, Duration)]) -> Vec<Layer> {
        hops.iter()
            .map(|&(rate, delay)| Layer {
                links: 1,
                capacity: rate,
                rate,
                delay,
            })
            .collect()
    }

    #[test]
    fn the_spread_bound_never_exceeds_one_path_and_is_it_when_packets_are_equal() {
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for _ in 0..2000 {
            let hops = random_hops(&mut rng);
            let mtu = [256, 1024, 4096, 9000][rng.random_range(0..4)];
            let size = rng.random_range(1..200_000u64);
            let (bound, exact) = (
                spread_fct(&flow(size), mtu, roce_data_frame, &single(&hops)),
                recursion(&flow(size), mtu, &hops),
            );
            assert!(bound <= exact, "{hops:?} {size} B: {bound:?} > {exact:?}");
            let whole = size.div_ceil(mtu as u64) * mtu as u64;
            assert_eq!(
                spread_fct(&flow(whole), mtu, roce_data_frame, &single(&hops)),
                recursion(&flow(whole), mtu, &hops),
                "{hops:?} {whole} B in full packets: the bound is the answer"
            );
        }
    }

    #[test]
    fn no_way_of_spraying_packets_over_parallel_paths_beats_the_bound() {
        // A host cable, k disjoint paths of m hops, a host cable (a leaf-spine is k = spines,
        // m = 2): packets assigned to paths at random, each link store and forward in order
        // of arrival. Every assignment takes at least the bound.
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let rates = [25, 50, 100, 200, 400];
        for _ in 0..500 {
            let pick = |rng: &mut Xoshiro256PlusPlus| {
                let r = BitRate::gbps(rates[rng.random_range(0..rates.len())]);
                (r, Duration(rng.random_range(0..2_000_000)))
            };
            let (edge_in, edge_out) = (pick(&mut rng), pick(&mut rng));
            let (k, m) = (rng.random_range(1..5usize), rng.random_range(1..4usize));
            let middle: Vec<(BitRate, Duration)> = (0..m).map(|_| pick(&mut rng)).collect();
            let mtu = [1024, 4096][rng.random_range(0..2)];
            let size = rng.random_range(1..100_000u64);
            let n = size.div_ceil(mtu as u64);
            // Free times: edge in, k x m middle links, edge out.
            let (mut t_in, mut t_out) = (0u64, 0u64);
            let mut t_mid = vec![vec![0u64; m]; k];
            let mut end = 0u64;
            // Packets leave the source in order; the last link serves them as they come.
            let mut arrivals: Vec<(u64, u64)> = Vec::new();
            for j in 0..n {
                let payload = if j + 1 < n {
                    mtu as u64
                } else {
                    size - (n - 1) * mtu as u64
                };
                let w = on_wire(roce_data_frame(payload as u32));
                t_in += edge_in.0.tx_time(w).0;
                let mut at = t_in + edge_in.1.0;
                let p = rng.random_range(0..k);
                for (h, &(r, d)) in middle.iter().enumerate() {
                    t_mid[p][h] = t_mid[p][h].max(at) + r.tx_time(w).0;
                    at = t_mid[p][h] + d.0;
                }
                arrivals.push((at, w));
            }
            arrivals.sort_unstable();
            for (at, w) in arrivals {
                t_out = t_out.max(at) + edge_out.0.tx_time(w).0;
                end = t_out + edge_out.1.0;
            }
            let mut layers = single(&[edge_in]);
            for &(r, d) in &middle {
                layers.push(Layer {
                    links: k as u32,
                    capacity: BitRate(r.0 * k as u64),
                    rate: r,
                    delay: d,
                });
            }
            layers.extend(single(&[edge_out]));
            let bound = spread_fct(&flow(size), mtu, roce_data_frame, &layers);
            assert!(
                bound.0 <= end,
                "k {k} {edge_in:?} {middle:?} {edge_out:?} {size} B: bound {bound:?} > {end} ps"
            );
        }
    }

    fn leaf_spine(host_gbps: u64, fabric_gbps: u64, spines: u32) -> Network {
        let link =
            |gbps: u64| crate::topology::LinkConfig::plain(BitRate::gbps(gbps), Duration::from_ns(100));
        let topo = crate::topology::TopologyConfig::LeafSpine {
            leaves: 2,
            spines,
            hosts_per_leaf: 1,
            host_link: link(host_gbps),
            fabric_link: link(fabric_gbps),
            links_per_spine: 1,
        }
        .build()
        .unwrap();
        Network::build(
            &topo,
            crate::routing::Routing::Ecmp,
            &sim_core::RngStreams::new(1),
        )
    }

    #[test]
    fn spraying_over_a_slow_fabric_is_held_to_the_host_cables_not_to_one_path() {
        // 100G hosts, two spines at 50G: one path is bound by 50G, the two together carry
        // 100G. 100 full frames: the ideal is the host cable's 100 frames, the first frame's
        // time on each later hop (at 50G across the spines) and 4 cables of 100 ns.
        let net = leaf_spine(100, 50, 2);
        let f = flow(4096 * 100);
        let w = 4096 + 82;
        let (c, half, d) = (BitRate::gbps(100), BitRate::gbps(50), 100_000);
        let spread = c.tx_time(w).0 + 2 * half.tx_time(w).0 + c.tx_time(100 * w).0 + 4 * d;
        let one_path = c.tx_time(w).0 + half.tx_time(100 * w).0 + c.tx_time(w).0 + 4 * d;
        let b = bounds(&net, &[f], 4096, |_| Transport::Roce)[0];
        assert_eq!(b.ideal, Duration(spread));
        assert!(b.ideal.0 < one_path);
        // No routing beats the 100G host cables: all 100 frames at 100G, then the last one
        // over 3 more hops at the fastest (100G), and 4 cables of 100 ns.
        assert_eq!(
            b.floor,
            Duration(c.tx_time(100 * w).0 + 3 * c.tx_time(w).0 + 4 * d)
        );
        assert!(b.floor < b.ideal);
    }

    #[test]
    fn on_a_fabric_as_fast_as_its_hosts_the_ideal_is_one_path() {
        // Spreading cannot beat one path when the host cables are the bottleneck: the ideal
        // is the tandem recursion's, last packet short or not.
        for size in [4096 * 100, 4096 * 100 + 7] {
            let net = leaf_spine(100, 100, 4);
            let f = flow(size);
            let b = bounds(&net, std::slice::from_ref(&f), 4096, |_| Transport::Roce)[0];
            assert_eq!(b.ideal, recursion(&f, 4096, &path(&net, &f)), "{size} B");
        }
    }
}
