//! Ultra Ethernet against theory: ECMP collisions vs spraying, trimming incast, NACK and
//! resend, NSCC fairness, RCCC queues, selective repeat vs go-back-N under loss.

use crate::common::*;
use models::sim::Sim;

/// UET data packets carry 102 B of headers (Eth 14 + IPv4 20 + UDP 8 + PDS 12 + SES 44 +
/// FCS 4) and 20 B of preamble and IFG.
fn uet_wire(payload: u64) -> u64 {
    payload + 102 + 20
}

/// N hosts on leaf0 each send to one host on leaf1 over N spines (equal rates everywhere).
fn cross_leaf(n: u32, lb: &str, seed: u64, size: &str) -> String {
    let mut flows = String::new();
    for i in 0..n {
        flows += &format!("[[flow]]\nsrc = {i}\ndst = {}\nsize = \"{size}\"\n", n + i);
    }
    format!(
        r#"
        seed = {seed}
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = {n}
        hosts_per_leaf = {n}
        host_link = {{ rate = "100Gbps", delay = "200ns" }}
        fabric_link = {{ rate = "100Gbps", delay = "200ns" }}
        [switch]
        buffer = "64MB"
        [nic]
        transport = "uet"
        lb = {{ kind = "{lb}" }}
        {flows}
        "#
    )
}

#[test]
fn per_flow_ecmp_idles_about_one_in_e_uplinks_and_spraying_uses_them_all() {
    // N flows hashed onto N uplinks: each uplink is idle with probability (1 - 1/N)^N.
    let n = 8u32;
    let seeds = 60;
    let mut idle = 0usize;
    for seed in 1..=seeds {
        let r = run(&cross_leaf(n, "ecmp", seed, "64KB")).remove(0);
        idle += (0..n)
            .filter(|s| {
                r.counters.iter().any(|c| {
                    c.node == "leaf0"
                        && *c.port == format!("to-spine{s}")
                        && c.counter == "tx_bytes"
                        && c.value == 0
                })
            })
            .count();
    }
    let expected = (1.0 - 1.0 / n as f64).powi(n as i32);
    let got = idle as f64 / (seeds as usize * n as usize) as f64;
    assert!(
        (got - expected).abs() < 0.05,
        "idle uplink fraction {got}, expected {expected}"
    );

    // Spraying: the same flows keep the N uplinks busy, >= 95 % of their capacity.
    let size = 4_000_000u64;
    let r = run(&cross_leaf(n, "oblivious", 1, "4MB")).remove(0);
    let makespan = r.summary.fct_ns.max.unwrap();
    let capacity_ns = tx_ns(n as u64 * size.div_ceil(4096) * uet_wire(4096), n as f64 * 100.0);
    assert!(
        capacity_ns / makespan >= 0.95,
        "sprayed throughput {} of capacity",
        capacity_ns / makespan
    );
}

fn incast(cc: &str, trim: &str, senders: u32, size: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = {hosts}
        host_link = {{ rate = "100Gbps", cable = "3m" }}
        [switch]
        asic = "spectrum2"
        buffer = "4MB"
        trim = {{ threshold = "{trim}" }}
        ecn = {{ kmin = "20KB", kmax = "80KB", pmax = 1.0 }}
        [nic]
        transport = "uet"
        lb = {{ kind = "reps" }}
        cc = {{ kind = "{cc}" }}
        [[workload]]
        kind = "incast"
        receiver = "h0"
        size = "{size}"
        "#,
        hosts = senders + 1
    )
}

#[test]
fn trimming_incast_finishes_near_the_ideal_without_timeouts() {
    let (n, size) = (31u64, 1_000_000u64);
    let r = run(&incast("nscc", "150KB", n as u32, "1MB")).remove(0);
    assert!(r.summary.trimmed > 0, "the incast must trim");
    assert_eq!(r.summary.rtos, 0);
    assert_eq!(r.summary.drops, 0);
    let np = size.div_ceil(4096);
    let s_wire = (np - 1) * uet_wire(4096) + uet_wire(size - (np - 1) * 4096);
    let ideal = tx_ns(n * s_wire, 100.0);
    assert_close(
        r.summary.fct_ns.max.unwrap(),
        ideal,
        0.0,
        0.03,
        "trimming incast makespan",
    );
}

#[test]
fn every_trimmed_packet_is_nacked_and_resent_exactly_once() {
    // A tight trim threshold and no other loss: each trim is a NACK and one resend.
    let r = run(&incast("nscc", "20KB", 15, "256KiB")).remove(0);
    let s = &r.summary;
    assert!(s.trimmed > 10);
    assert_eq!(s.rtos, 0);
    assert_eq!(s.nacks, s.trimmed, "one NACK per trimmed packet");
    assert_eq!(
        s.retransmitted_packets, s.trimmed,
        "one resend per trimmed packet"
    );
    assert_eq!(
        s.retransmitted_bytes,
        s.trimmed * 4096,
        "the resend carries the PSN's payload"
    );
}

/// Bytes each flow has delivered by `until_us`, and the bottleneck queue then.
fn snapshot(toml: &str, until_us: u64, port: (&str, &str)) -> (Vec<u64>, u64) {
    let s = scenario(&format!("{toml}\n[run]\nmax_time = \"{until_us}us\"\n"));
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    let net = &sim.net;
    let node = net.names.iter().position(|n| n == port.0).unwrap() as u32;
    let p = net
        .ports_of(models::ids::NodeId(node))
        .find(|&p| net.port_name(p) == format!("to-{}", port.1))
        .unwrap();
    (
        sim.flows.iter().map(|f| f.received_bytes).collect(),
        net.ports[p.idx()].occupancy(),
    )
}

#[test]
fn two_nscc_flows_share_fairly_with_the_queue_near_the_target_delay() {
    let toml = r#"
        [topology]
        kind = "dumbbell"
        hosts_per_side = 2
        host_link = { rate = "100Gbps", delay = "1us" }
        bottleneck_link = { rate = "100Gbps", delay = "1us" }
        [switch]
        buffer = "16MB"
        ecn = { kmin = "20KB", kmax = "80KB", pmax = 1.0 }
        [nic]
        transport = "uet"
        cc = { kind = "nscc" }
        [[flow]]
        src = 0
        dst = 2
        size = "1GB"
        [[flow]]
        src = 1
        dst = 3
        size = "1GB"
    "#;
    let (t1, t2) = (500u64, 2_500u64);
    let (a, _) = snapshot(toml, t1, ("left", "right"));
    let (b, _) = snapshot(toml, t2, ("left", "right"));
    let x: Vec<f64> = (0..2).map(|i| (b[i] - a[i]) as f64).collect();
    let jain = (x[0] + x[1]).powi(2) / (2.0 * (x[0] * x[0] + x[1] * x[1]));
    assert!(jain >= 0.95, "Jain's index {jain} ({x:?})");
    // Target delay without trimming: one network RTT (uet-htsim). Network RTT: 3 hops of 1 us
    // both ways, a 4198 B frame forward and an 84 B ACK back per hop.
    let rtt_ns = 6_000.0 + 3.0 * (tx_ns(uet_wire(4096), 100.0) + tx_ns(84, 100.0));
    let target_bytes = rtt_ns * 100.0 / 8.0;
    let samples: Vec<f64> = (0..8)
        .map(|k| snapshot(toml, t1 + 250 * k, ("left", "right")).1 as f64)
        .collect();
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    assert!(
        mean <= 2.0 * target_bytes,
        "mean queue {mean} B vs target delay x C = {target_bytes} B ({samples:?})"
    );
}

#[test]
fn rccc_keeps_the_receiver_queue_to_a_few_packets_per_sender() {
    let senders = 15u64;
    let toml = incast("rccc", "4MB", senders as u32, "4MB");
    // After the speculative first window has drained, sample the receiver's port.
    let samples: Vec<u64> = [1_000u64, 1_500, 2_000, 2_500, 3_000]
        .iter()
        .map(|&t| snapshot(&toml, t, ("sw0", "h0")).1)
        .collect();
    let worst = *samples.iter().max().unwrap();
    assert!(
        worst <= senders * 4 * 4198,
        "queue {worst} B over {senders} senders ({samples:?})"
    );
    let r = run(&toml).remove(0);
    assert_eq!(r.summary.drops, 0);
}

#[test]
fn selective_repeat_keeps_goodput_near_one_minus_p_where_go_back_n_falls() {
    // Random frame loss p on a 100G cable; UET resends only what was lost.
    for p in [0.005, 0.02] {
        let toml = |transport: &str, extra: &str| {
            format!(
                r#"
                seed = 5
                [topology]
                kind = "back-to-back"
                link = {{ rate = "100Gbps", delay = "2500ns", loss = {p} }}
                [nic]
                transport = "{transport}"
                local_ack_timeout = 2
                {extra}
                [[flow]]
                src = 0
                dst = 1
                size = "80MB"
                "#
            )
        };
        let uet = run(&toml("uet", "")).remove(0);
        let line = tx_ns(uet_wire(4096), 100.0) / 4096.0;
        let uet_eff = 80e6 * line / uet.flows[0].fct_ns.unwrap();
        assert_close(uet_eff, 1.0 - p, 0.0, 0.05, &format!("UET goodput at p = {p}"));
        let gbn = run(&toml("roce", "window = \"65536B\"")).remove(0);
        let line = tx_ns(roce_wire(4096), 100.0) / 4096.0;
        let gbn_eff = 80e6 * line / gbn.flows[0].fct_ns.unwrap();
        assert!(
            gbn_eff < uet_eff - 2.0 * p,
            "go-back-N {gbn_eff} should fall below selective repeat {uet_eff}"
        );
    }
}

#[test]
fn rccc_flows_smaller_than_the_speculative_window_finish() {
    // A message that fits in the speculative credit must not wait for credit it never asked
    // for, even when packets are trimmed (the receiver re-grants a trimmed packet's credit).
    for (size, trim) in [("200KB", "4MB"), ("60KB", "8KB"), ("1B", "4MB")] {
        let toml = format!(
            r#"
            [topology]
            kind = "star"
            hosts = 9
            host_link = {{ rate = "100Gbps", delay = "2us" }}
            [switch]
            trim = {{ threshold = "{trim}" }}
            [nic]
            transport = "uet"
            cc = {{ kind = "rccc" }}
            [[workload]]
            kind = "incast"
            size = "{size}"
            "#
        );
        let r = run(&toml).remove(0);
        assert_eq!(r.summary.flows_completed, 8, "size {size}, trim {trim}");
    }
}
