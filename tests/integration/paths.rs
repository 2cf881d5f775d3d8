//! Each flow's path in flows.csv: the switch ports its first data packet crossed, and how its
//! data packets left its first switch, so an ECMP collision can be read flow by flow.

use crate::common::*;

/// Two leaves of 4 hosts under 4 spines; every host of leaf0 sends 400 KB to one of leaf1.
fn fabric(nic: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 4
        hosts_per_leaf = 4
        host_link = {{ rate = "100Gbps", cable = "2m" }}
        fabric_link = {{ rate = "100Gbps", cable = "2m" }}
        [nic]
        mtu = "4096B"
        {nic}
        [[flow]]
        src = "h0"
        dst = "h4"
        size = "400KB"
        [[flow]]
        src = "h1"
        dst = "h5"
        size = "400KB"
        [[flow]]
        src = "h2"
        dst = "h6"
        size = "400KB"
        [[flow]]
        src = "h3"
        dst = "h7"
        size = "400KB"
        "#
    )
}

/// `port=count` pairs of an `uplinks` cell.
fn shares(cell: &str) -> Vec<(String, u64)> {
    cell.split_whitespace()
        .map(|p| {
            let (port, n) = p.split_once('=').unwrap();
            (port.to_string(), n.parse().unwrap())
        })
        .collect()
}

#[test]
fn a_hashed_flow_keeps_one_path_and_its_uplink_carries_all_of_it() {
    let r = run(&fabric("")).remove(0);
    let packets = 400_000u64.div_ceil(4096);
    let mut used = Vec::new();
    for (i, f) in r.flows.iter().enumerate() {
        let hops: Vec<&str> = f.path.split(' ').collect();
        // leaf0 -> a spine -> leaf1 -> the destination: three switch egress ports.
        assert_eq!(hops.len(), 3, "flow {i}: {}", f.path);
        assert!(hops[0].starts_with("leaf0:to-spine"), "flow {i}: {}", f.path);
        assert_eq!(hops[2], format!("leaf1:to-h{}", i + 4), "flow {i}");
        let spine = hops[0].trim_start_matches("leaf0:to-");
        assert!(
            hops[1].starts_with(&format!("{spine}:to-leaf1")),
            "the spine it went to sends it on: {}",
            f.path
        );
        // One uplink, all of its packets (no loss here: PFC off, no congestion but at leaf1's
        // host ports, one sender each).
        let s = shares(&f.uplinks);
        assert_eq!(s, vec![(format!("to-{spine}"), packets)], "flow {i}");
        used.push(spine.to_string());
        assert!(f.entropy > 0);
    }
    // The uplinks' tx counters hold what the flows that chose them sent: a collision (two
    // flows on one uplink) doubles its bytes.
    for spine in ["spine0", "spine1", "spine2", "spine3"] {
        let flows = used.iter().filter(|s| *s == spine).count() as u64;
        let tx = counter(&r, "leaf0", &format!("to-{spine}"), "tx_packets");
        assert_eq!(tx, flows * packets, "{spine}: {flows} flows");
    }
}

#[test]
fn a_sprayed_flow_reports_its_share_on_every_uplink() {
    let r = run(&fabric(
        r#"transport = "uet"
        lb = { kind = "oblivious" }"#,
    ))
    .remove(0);
    for (i, f) in r.flows.iter().enumerate() {
        let s = shares(&f.uplinks);
        assert_eq!(s.len(), 4, "flow {i} sprays over the 4 uplinks: {}", f.uplinks);
        let sent: u64 = s.iter().map(|x| x.1).sum();
        assert!(sent >= 400_000u64.div_ceil(4096), "flow {i}: {sent}");
        // Sorted, busiest first.
        assert!(s.windows(2).all(|w| w[0].1 >= w[1].1), "{}", f.uplinks);
    }
}
