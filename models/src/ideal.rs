//! The ideal flow completion time: the flow alone on its path, in closed form.
//!
//! A flow of n packets crosses hops of rate C_i and propagation delay d_i, store and forward.
//! With the network otherwise empty, packet j leaves hop i at
//!
//! ```text
//!   D(i, j) = max(D(i-1, j) + d_(i-1),  D(i, j-1)) + w_j * 8 / C_i
//! ```
//!
//! (the tandem-queue recursion: a packet starts on hop i when it has fully arrived and the
//! previous packet has left), and the flow completes at D(h, n) + d_h. With equal rates this
//! reduces to (S + n*H)*8/C + h*d + (h-1)*w_max*8/C, where w_max is the largest packet: a
//! short last packet waits at every hop for the full packet ahead of it, so it is the full
//! packet's serialization that adds per hop (the last packet's when S is a multiple of the MTU). The path is the first equal-cost choice at
//! every hop; in the shipped topologies all equal-cost paths have the same rates and delays.

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
        let Some(&port) = net.router.tables.next_hops(node, f.dst).first() else {
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

/// A flow's reference times on the healthy fabric (computed before any fault): `ideal`, alone
/// on its first shortest path (the slowdown's denominator), and `floor`, a lower bound under
/// any routing, spraying over parallel paths included (what the causality invariant checks).
#[derive(Debug, Clone, Copy)]
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
    flows
        .iter()
        .map(|f| {
            let frame = data_frame(transport(f.prio));
            let hops = path(net, f);
            FlowBounds {
                ideal: ideal_fct(f, mtu, frame, &hops),
                floor: min_fct(net, f, (mtu, frame), &hops, fastest),
            }
        })
        .collect()
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
    let capacity =
        |node: crate::ids::NodeId| BitRate(net.ports_of(node).map(|p| net.ports[p.idx()].rate.0).sum());
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

    #[test]
    fn the_closed_form_is_the_recursion() {
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let rates = [10, 25, 40, 50, 100, 200, 400, 800];
        for _ in 0..2000 {
            let hops: Vec<(BitRate, Duration)> = (0..rng.random_range(1..7))
                .map(|_| {
                    let r = BitRate::gbps(rates[rng.random_range(0..rates.len())]);
                    (r, Duration(rng.random_range(0..3_000_000)))
                })
                .collect();
            let mtu = [256, 1024, 4096, 9000][rng.random_range(0..4)];
            let f = FlowSpec {
                src: HostId(0),
                dst: HostId(1),
                size: rng.random_range(1..200_000),
                start: Time::ZERO,
                prio: 3,
                deps: crate::workload::Deps::None,
                after: sim_core::Duration::ZERO,
                qp: None,
            };
            assert_eq!(
                ideal_fct(&f, mtu, roce_data_frame, &hops),
                recursion(&f, mtu, &hops),
                "{hops:?} {} B",
                f.size
            );
        }
    }

    #[test]
    fn the_lower_bound_lets_spraying_beat_one_slow_path_but_not_the_host_link() {
        // 100G hosts, two spines at 50G: one path's ideal is bound by 50G, spraying over
        // both is not; no routing beats the 100G host cables.
        let link = |gbps: u64| crate::topology::LinkConfig {
            rate: BitRate::gbps(gbps),
            delay: Some(Duration::from_ns(100)),
            cable: None,
            loss: 0.0,
            ber: 0.0,
        };
        let topo = crate::topology::TopologyConfig::LeafSpine {
            leaves: 2,
            spines: 2,
            hosts_per_leaf: 1,
            host_link: link(100),
            fabric_link: link(50),
            links_per_spine: 1,
        }
        .build()
        .unwrap();
        let net = Network::build(
            &topo,
            crate::routing::Routing::Ecmp,
            &sim_core::RngStreams::new(1),
        );
        let f = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: 4096 * 100,
            start: Time::ZERO,
            prio: 3,
            deps: crate::workload::Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        let w = 4096 + 82;
        let (c, d) = (BitRate::gbps(100), 100_000);
        // All 100 frames at 100G, then the last one over 3 more hops at the fastest (100G),
        // and 4 cables of 100 ns.
        let expected = c.tx_time(100 * w).0 + 3 * c.tx_time(w).0 + 4 * d;
        let b = bounds(&net, &[f], 4096, |_| Transport::Roce)[0];
        assert_eq!(b.floor, Duration(expected));
        assert!(b.floor < b.ideal);
    }
}
