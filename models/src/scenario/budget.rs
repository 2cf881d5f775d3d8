//! The memory a run will need, estimated from the scenario's sizes before anything large is
//! allocated, so that a run that cannot fit is refused up front (naming what is big) rather
//! than aborted by the allocator an hour in.
//!
//! The estimate counts the structures that grow with the scenario: routing tables (one row
//! per switch, or per forwarding host, of one entry per host: a switchless ring of N hosts
//! is N x N), ports and cables, flows and their per-packet state, the frames the buffers can
//! hold, the time series, event log and captures at their configured caps, and the result
//! files, which are built in memory before they are written. It is an upper bound on what
//! each cap allows, not a prediction of the peak: a run usually needs less.

use super::{Scenario, Variant};
use crate::topology::NodeKind;
use std::mem::size_of;

/// One contributor to a run's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// What it is, for a user ("routing tables").
    pub what: String,
    /// The scenario key that sizes it.
    pub key: String,
    pub bytes: u64,
}

/// Bytes of one CSV row of each result file (a generous average of the rows we write).
const CSV_ROW: u64 = 96;

/// Bytes each flow costs for the whole run: its spec (with a collective's dependency list),
/// its state, its bounds, and its rows of flows.csv.
pub fn per_flow() -> u64 {
    (size_of::<crate::workload::FlowSpec>() + 32 + size_of::<crate::nic::flow::Flow>() + 64) as u64
        + 2 * CSV_ROW
}

/// The memory `v`, a variant of `s`, needs, by contributor, largest first.
pub fn estimate(s: &Scenario, v: &Variant) -> Vec<Need> {
    let t = &s.topology;
    let hosts = t.hosts.len() as u64;
    let wiring = crate::network::Wiring::of(t);
    let switches = t.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as u64;
    // A regular Clos is routed from addresses: a few words per node and host, no tables.
    let routes = if wiring.is_clos(t) {
        Need {
            what: format!("routes from addresses ({} nodes, {hosts} hosts)", t.nodes.len()),
            key: "topology".into(),
            bytes: t.nodes.len() as u64 * 32 + hosts * 24 + wiring.peer.len() as u64 * 4,
        }
    } else {
        let rows = t
            .nodes
            .iter()
            .zip(&wiring.node_ports)
            .filter(|(n, r)| n.kind == NodeKind::Switch || r.len() > 1)
            .count() as u64;
        Need {
            what: format!("routing tables ({rows} forwarding nodes x {hosts} destinations)"),
            key: "topology".into(),
            bytes: rows * hosts * 4,
        }
    };
    drop(wiring);
    let ports = 2 * t.links.len() as u64;
    let flows = s.flows.len() as u64;
    let mtu = v.nic.mtu.0.max(64);
    let mut needs = vec![
        routes,
        Need {
            what: format!("ports and cables ({ports} ports)"),
            key: "topology".into(),
            bytes: ports
                * (size_of::<crate::port::Port>() + size_of::<crate::link::Link>() + 8 * 16 + 64) as u64,
        },
        Need {
            what: format!("flows ({flows}: state, bounds, flows.csv)"),
            key: "workload".into(),
            bytes: flows * per_flow(),
        },
    ];
    if v.nic.uses(crate::nic::Transport::Uet) {
        needs.push(Need {
            what: "UET per-packet state".into(),
            key: "run.max_flow_state".into(),
            bytes: s
                .flows
                .iter()
                .map(|f| crate::nic::uet::UetPdc::state_bytes(f.size.div_ceil(mtu)))
                .sum(),
        });
    }
    // Frames held at once: no more than the switches' buffers and the cables' bandwidth-delay
    // products hold, nor more than the traffic has, in frames of at least 1 KB.
    let buffer = v.switch.buffer.map_or(v.switch.asic.profile().buffer, |b| b.0);
    let in_flight: u128 = t
        .links
        .iter()
        .map(|l| 2 * l.rate.bytes_in(l.delay) as u128)
        .sum::<u128>()
        + switches as u128 * buffer as u128;
    let traffic: u128 = s.flows.iter().map(|f| f.size as u128).sum();
    let frames = (in_flight.min(traffic) / mtu.min(1024) as u128) as u64 + ports;
    needs.push(Need {
        what: "frames in buffers and on cables".into(),
        key: "switch.buffer".into(),
        bytes: frames.saturating_mul(size_of::<crate::packet::Packet>() as u64 + 8),
    });
    let l = &v.limits;
    let sampled = (ports.min(crate::telemetry::MAX_SAMPLED_PORTS as u64)) + 6;
    needs.push(Need {
        what: format!("time series ({sampled} series x run.max_samples, timeseries.csv)"),
        key: "run.max_samples".into(),
        bytes: (l.max_samples as u64).saturating_mul(sampled * (4 + CSV_ROW) * 3 / 2),
    });
    needs.push(Need {
        what: "event log (events.csv)".into(),
        key: "run.event_log".into(),
        bytes: (l.event_log as u64)
            .min(l.events())
            .saturating_mul(crate::telemetry::LOG_ROW_BYTES as u64 + CSV_ROW),
    });
    for (i, c) in s.captures.iter().enumerate() {
        needs.push(Need {
            what: format!("capture {}", c.name),
            key: format!("capture[{i}].max_packets"),
            // Frames are spelt out as the pcap is written, one at a time.
            bytes: (c.max_packets as u64).saturating_mul(size_of::<crate::capture::Record>() as u64),
        });
    }
    needs.sort_by_key(|n| std::cmp::Reverse(n.bytes));
    needs
}

/// The sum of `needs`.
pub fn total(needs: &[Need]) -> u64 {
    needs.iter().fold(0u64, |a, n| a.saturating_add(n.bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(topology: &str, extra: &str) -> Scenario {
        let text = format!(
            "[topology]\n{topology}\n[[workload]]\nkind = \"permutation\"\nsize = \"1MB\"\n{extra}\n"
        );
        crate::scenario::parse(&text, "t.toml", "t", &Default::default()).unwrap()
    }

    #[test]
    fn a_switchless_ring_needs_a_square_table() {
        let link = "link = { rate = \"100Gbps\", delay = \"1us\" }";
        let small = scenario(&format!("kind = \"ring\"\nhosts = 100\n{link}"), "");
        let big = scenario(&format!("kind = \"ring\"\nhosts = 1000\n{link}"), "");
        let table = |s: &Scenario| {
            estimate(s, &s.variants[0])
                .into_iter()
                .find(|n| n.what.starts_with("routing"))
                .unwrap()
                .bytes
        };
        assert_eq!(table(&small), 100 * 100 * 4);
        assert_eq!(table(&big), 1000 * 1000 * 4);
    }

    #[test]
    fn a_regular_clos_needs_no_tables() {
        // k = 16: 1,024 hosts, 320 switches; tables would be 320 x 1,024 entries of 4 bytes.
        let link = "host_link = { rate = \"400Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"400Gbps\", delay = \"1us\" }";
        let s = scenario(&format!("kind = \"fat-tree\"\nk = 16\n{link}"), "");
        let needs = estimate(&s, &s.variants[0]);
        assert!(
            needs.iter().all(|n| !n.what.starts_with("routing tables")),
            "{needs:?}"
        );
        let routes = needs
            .iter()
            .find(|n| n.what.starts_with("routes from addresses"))
            .unwrap();
        assert!(routes.bytes < 320 * 1024 * 4 / 10, "{routes:?}");
    }

    #[test]
    fn caps_scale_their_contributors_and_the_largest_comes_first() {
        let topo = "kind = \"star\"\nhosts = 4\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }";
        let s = scenario(topo, "[run]\nmax_samples = 100000000\n");
        let needs = estimate(&s, &s.variants[0]);
        assert_eq!(needs[0].key, "run.max_samples");
        assert!(needs[0].bytes > 10_000_000_000, "{needs:?}");
        assert!(total(&needs) >= needs[0].bytes);
    }
}
