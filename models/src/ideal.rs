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
use crate::packet::{PREAMBLE_IFG, roce_data_frame};
use crate::workload::FlowSpec;
use sim_core::{BitRate, Duration};

/// Rates and delays along the first shortest path from `f.src` to `f.dst`.
pub fn path(net: &Network, f: &FlowSpec) -> Vec<(BitRate, Duration)> {
    let mut hops = Vec::new();
    let (mut node, dst_node) = (net.host_node[f.src.idx()], net.host_node[f.dst.idx()]);
    while node != dst_node && hops.len() <= net.names.len() {
        let next = net.routes.next_hops(node, f.dst);
        let port = match next.first() {
            Some(&p) => p,
            None if !net.routes.has_table(node) => crate::ids::PortId(net.node_ports[node.idx()].start),
            None => return Vec::new(),
        };
        hops.push((net.ports[port.idx()].rate, net.links[port.idx()].delay));
        node = net.port_node[net.peer[port.idx()].idx()];
    }
    hops
}

/// Ideal FCT of `f` with payload `mtu` per packet over `hops`.
pub fn ideal_fct(f: &FlowSpec, mtu: u32, hops: &[(BitRate, Duration)]) -> Duration {
    if hops.is_empty() {
        return Duration::ZERO;
    }
    let n = f.size.div_ceil(mtu as u64);
    let wire = |j: u64| {
        let payload = if j + 1 < n {
            mtu
        } else {
            (f.size - (n - 1) * mtu as u64) as u32
        };
        (roce_data_frame(payload) + PREAMBLE_IFG) as u64
    };
    // done[i] = D(i, j) for the current packet j.
    let mut done = vec![0u64; hops.len()];
    for j in 0..n {
        let w = wire(j);
        let mut arrived = 0u64; // D(i-1, j) + d_(i-1); the source has every packet at 0
        for (i, &(rate, delay)) in hops.iter().enumerate() {
            let start = arrived.max(done[i]);
            done[i] = start + rate.tx_time(w).0;
            arrived = done[i] + delay.0;
        }
    }
    Duration(done[hops.len() - 1] + hops[hops.len() - 1].1.0)
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
        };
        let c = BitRate::gbps(100);
        let d = Duration::from_ns(500);
        for h in 1..=4 {
            let hops = vec![(c, d); h];
            // n = 3 packets (4096, 4096, 1808), H = 82 B on the wire each.
            let largest = 4096 + 82;
            let expected =
                c.tx_time(10_000 + 3 * 82).0 + h as u64 * d.0 + (h as u64 - 1) * c.tx_time(largest).0;
            assert_eq!(ideal_fct(&f, 4096, &hops), Duration(expected), "h = {h}");
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
        };
        let (fast, slow, d) = (BitRate::gbps(100), BitRate::gbps(25), Duration::from_ns(100));
        let w = 4096 + 82;
        let expected = fast.tx_time(w).0 + d.0 + slow.tx_time(10 * w).0 + d.0;
        assert_eq!(ideal_fct(&f, 4096, &[(fast, d), (slow, d)]), Duration(expected));
    }
}
