//! Single flows and incasts against their closed forms.
//!
//! Store and forward over h equal hops: FCT = (S + n*H)*8/C + h*d + (h-1)*w*8/C, where w is
//! the wire size of the largest packet. (The reference's form writes the last packet's size
//! there; the two agree when S is a multiple of the MTU. When the last packet is shorter it
//! cannot overtake the full packet ahead of it, so at every hop after the first it waits for
//! that packet's serialization: the tandem-queue recursion D(i,j) = max(D(i-1,j)+d, D(i,j-1))
//! + w_j/C gives exactly this.) Incast: N senders of S bytes finish together at N*S_wire*8/C.

use crate::common::*;

/// Closed-form FCT of one flow of `size` bytes over `h` equal hops of `gbps` and `delay_ns`.
fn single_flow_fct(size: u64, mtu: u64, h: u64, gbps: f64, delay_ns: f64) -> f64 {
    let n = size.div_ceil(mtu);
    let last = size - (n - 1) * mtu;
    let all_wire: u64 = (n - 1) * roce_wire(mtu) + roce_wire(last);
    let largest = if n > 1 { roce_wire(mtu) } else { roce_wire(last) };
    tx_ns(all_wire, gbps) + h as f64 * delay_ns + (h - 1) as f64 * tx_ns(largest, gbps)
}

#[test]
fn single_mtu_multiple_flow_matches_the_reference_form_exactly() {
    // S a multiple of the MTU: the reference's (h-1)*w_last term applies as written.
    let (size, h, gbps, d) = (40u64 * 4096, 2u64, 100.0, 700.0);
    let reference = tx_ns(size + 40 * 82, gbps) + h as f64 * d + (h - 1) as f64 * tx_ns(4096 + 82, gbps);
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "100Gbps", delay = "700ns" }
        [[flow]]
        src = 0
        dst = 1
        size = "160KiB"
    "#;
    assert_close(fct_of_only_flow(toml), reference, 10.0, 1e-3, "reference form");
}

fn fct_of_only_flow(toml: &str) -> f64 {
    let r = run(toml);
    assert_eq!(r[0].summary.flows_completed, 1);
    r[0].flows[0].fct_ns.unwrap()
}

#[test]
fn single_flow_back_to_back_matches_serialization_plus_propagation() {
    // Configurations chosen to exercise rounding: odd sizes, non-power-of-two MTUs, 25G-800G.
    for (rate, cable_m, size, mtu) in [
        (100u64, 3u64, 1_000_000u64, 4096u64),
        (25, 1, 777_777, 1024),
        (400, 7, 65_537, 4096),
        (800, 2, 9_999, 2048),
    ] {
        let toml = format!(
            r#"
            [topology]
            kind = "back-to-back"
            link = {{ rate = "{rate}Gbps", cable = "{cable_m}m" }}
            [nic]
            mtu = "{mtu}B"
            [[flow]]
            src = "h0"
            dst = "h1"
            size = "{size}B"
            "#
        );
        let expected = single_flow_fct(size, mtu, 1, rate as f64, 5.0 * cable_m as f64);
        assert_close(
            fct_of_only_flow(&toml),
            expected,
            10.0,
            1e-3,
            &format!("{rate}G {size}B mtu {mtu}"),
        );
    }
}

#[test]
fn single_flow_through_one_switch() {
    for (rate, delay_ns, size) in [(100u64, 1000u64, 2_000_000u64), (25, 150, 123_456)] {
        let toml = format!(
            r#"
            [topology]
            kind = "star"
            hosts = 4
            host_link = {{ rate = "{rate}Gbps", delay = "{delay_ns}ns" }}
            [[flow]]
            src = "h1"
            dst = "h3"
            size = "{size}B"
            start = "3us"
            "#
        );
        let expected = single_flow_fct(size, 4096, 2, rate as f64, delay_ns as f64);
        assert_close(fct_of_only_flow(&toml), expected, 10.0, 1e-3, "star");
    }
}

#[test]
fn single_flow_through_two_switches() {
    // Dumbbell with an equal-rate bottleneck: host -> switch -> switch -> host, h = 3.
    let toml = r#"
        [topology]
        kind = "dumbbell"
        hosts_per_side = 2
        host_link = { rate = "200Gbps", delay = "400ns" }
        bottleneck_link = { rate = "200Gbps", delay = "400ns" }
        [nic]
        mtu = "1024B"
        [[flow]]
        src = 0
        dst = 3
        size = "500KB"
    "#;
    let expected = single_flow_fct(500_000, 1024, 3, 200.0, 400.0);
    assert_close(fct_of_only_flow(toml), expected, 10.0, 1e-3, "dumbbell");
}

#[test]
fn single_flow_across_a_fat_tree_crosses_five_switches() {
    // h0 to the last host is in another pod: edge, agg, core, agg, edge: h = 6 hops.
    let toml = r#"
        [topology]
        kind = "fat-tree"
        k = 4
        host_link = { rate = "100Gbps", delay = "1us" }
        fabric_link = { rate = "100Gbps", delay = "1us" }
        [[flow]]
        src = "h0"
        dst = "h15"
        size = "1MB"
    "#;
    let expected = single_flow_fct(1_000_000, 4096, 6, 100.0, 1000.0);
    assert_close(fct_of_only_flow(toml), expected, 10.0, 1e-3, "fat tree");
}

#[test]
fn incast_with_ample_buffer_finishes_at_n_times_size_over_capacity() {
    for (n, size, rate) in [(8u64, 1_000_000u64, 100u64), (15, 300_000, 25)] {
        let toml = format!(
            r#"
            [topology]
            kind = "star"
            hosts = {hosts}
            host_link = {{ rate = "{rate}Gbps", delay = "500ns" }}
            [switch]
            buffer = "1GB"
            [[workload]]
            kind = "incast"
            receiver = "h0"
            size = "{size}B"
            "#,
            hosts = n + 1
        );
        let r = run(&toml);
        assert_eq!(r[0].summary.flows_completed as u64, n);
        assert_eq!(r[0].summary.drops, 0);
        let np = size.div_ceil(4096);
        let s_wire = (np - 1) * roce_wire(4096) + roce_wire(size - (np - 1) * 4096);
        let expected = tx_ns(n * s_wire, rate as f64);
        let makespan = r[0].summary.fct_ns.max.unwrap();
        assert_close(
            makespan,
            expected,
            0.0,
            0.01,
            &format!("incast {n} x {size}B at {rate}G"),
        );
    }
}

#[test]
fn ecmp_spreads_a_permutation_over_all_spines() {
    // 64 flows over 4 spines: every spine carries some traffic (probability of an idle
    // spine is 4 * (3/4)^(32 cross-leaf flows) < 1e-3 for any seed; checked for this one).
    let toml = r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 4
        hosts_per_leaf = 32
        host_link = { rate = "100Gbps", delay = "100ns" }
        fabric_link = { rate = "100Gbps", delay = "100ns" }
        [switch]
        buffer = "1GB"
        [[workload]]
        kind = "permutation"
        size = "64KB"
    "#;
    let r = run(toml);
    for spine in 0..4 {
        let bytes: u64 = r[0]
            .counters
            .iter()
            .filter(|c| *c.node == format!("spine{spine}") && c.counter == "tx_bytes")
            .map(|c| c.value)
            .sum();
        assert!(bytes > 0, "spine{spine} carried nothing");
    }
}

#[test]
fn a_uet_flow_alone_takes_its_own_framing_and_reports_a_slowdown_of_one() {
    // UET data frames carry 102 B of headers (Eth 14 + FCS 4 + IPv4 20 + UDP 8 + PDS 12 + SES
    // 44), 122 B on the wire: one flow alone over two hops at line rate is exactly its ideal.
    let (size, mtu, gbps, d) = (1_000_000u64, 4096u64, 100.0, 500.0);
    let n = size.div_ceil(mtu);
    let last = size - (n - 1) * mtu;
    let wire = |p: u64| p + 122;
    let expected = tx_ns((n - 1) * wire(mtu) + wire(last), gbps) + 2.0 * d + tx_ns(wire(mtu), gbps);
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "100Gbps", delay = "500ns" }
        [nic]
        transport = "uet"
        [[flow]]
        src = 0
        dst = 1
        size = "1MB"
    "#;
    let r = run(toml).remove(0);
    let f = &r.flows[0];
    assert_close(f.ideal_fct_ns, expected, 1.0, 1e-6, "ideal FCT in UET framing");
    assert_close(f.fct_ns.unwrap(), expected, 10.0, 1e-3, "FCT");
    assert_close(f.slowdown.unwrap(), 1.0, 0.0, 1e-3, "slowdown");
}

#[test]
fn no_flow_beats_its_ideal_when_spraying_over_a_fabric_slower_than_its_hosts() {
    // 100G hosts, four spines at 25G. One flow of 4 MB alone, sprayed by REPS or hashed
    // by ECMP. Spread over the four paths, the fabric carries 100G: the ideal is the first
    // packet's way to the last host cable (100G, then 25G twice), all the wire bytes at 100G
    // there, and the four delays. ECMP, held to one 25G path, takes about four times that.
    let (size, mtu) = (4_000_000u64, 4096u64);
    let n = size.div_ceil(mtu);
    let wire = |p: u64| p + 122;
    let all = (n - 1) * wire(mtu) + wire(size - (n - 1) * mtu);
    let first = tx_ns(wire(mtu), 100.0) + 2.0 * tx_ns(wire(mtu), 25.0);
    let expected = first + tx_ns(all, 100.0) + 4.0 * 100.0;
    let toml = r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 4
        hosts_per_leaf = 1
        host_link = { rate = "100Gbps", delay = "100ns" }
        fabric_link = { rate = "25Gbps", delay = "100ns" }
        [nic]
        transport = "uet"
        cc = { kind = "nscc" }
        lb = { kind = "reps" }
        [[flow]]
        src = 0
        dst = 1
        size = "4MB"
        [[variant]]
        name = "reps"
        [[variant]]
        name = "ecmp"
        nic.lb = { kind = "ecmp" }
    "#;
    let r = run(toml);
    for v in &r {
        let f = &v.flows[0];
        assert_close(f.ideal_fct_ns, expected, 1.0, 1e-6, "ideal over the four paths");
        assert!(
            f.slowdown.unwrap() >= 1.0,
            "{}: slowdown {:?}",
            v.summary.name,
            f.slowdown
        );
    }
    let one_path = tx_ns(all, 25.0);
    assert!(r[1].flows[0].fct_ns.unwrap() >= one_path, "ECMP: one 25G path");
    assert!(r[1].flows[0].slowdown.unwrap() > 3.9);
    assert!(r[0].flows[0].slowdown.unwrap() < 2.0, "REPS uses the four paths");
}

#[test]
fn the_sender_learns_of_completion_one_ack_later() {
    // flows.csv's sender-side completion is the last ACK's arrival: the receiver answers the
    // last packet at once with a 66 B ACK (BTH + AETH), 86 B on the wire, one cable back.
    let toml = r#"
        [topology]
        kind = "back-to-back"
        link = { rate = "100Gbps", delay = "700ns" }
        [[flow]]
        src = 0
        dst = 1
        size = "1MB"
    "#;
    let r = run(toml).remove(0);
    let f = &r.flows[0];
    let ack = tx_ns(86, 100.0) + 700.0;
    assert_close(
        f.sender_fct_ns.unwrap() - f.fct_ns.unwrap(),
        ack,
        0.01,
        0.0,
        "last ACK's trip",
    );
    assert_close(
        f.sender_finish_ns.unwrap(),
        f.finish_ns.unwrap() + ack,
        0.01,
        0.0,
        "sender finish",
    );
}
