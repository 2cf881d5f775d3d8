//! RoCEv2 lossless fabric against theory: PFC headroom, dynamic thresholds, DCQCN fairness,
//! go-back-N under loss, pause propagation.

use crate::common::*;
use models::ids::{NodeId, PortId};
use models::sim::Sim;

/// Headroom by the textbook (Cisco white paper) form, bytes: both frames in progress, the
/// PAUSE, the cable both ways, the peer's response (60 quanta).
fn textbook_headroom(gbps: f64, delay_ns: f64, mtu: u64) -> f64 {
    let bytes_per_ns = gbps / 8.0;
    2.0 * roce_wire(mtu) as f64 + 84.0 + 2.0 * delay_ns * bytes_per_ns + 60.0 * 512.0 / 8.0
}

fn incast_with_headroom(headroom: Option<u64>) -> models::report::VariantReport {
    let h = headroom
        .map(|b| format!("headroom = \"{b}B\""))
        .unwrap_or_default();
    let toml = format!(
        r#"
        [topology]
        kind = "star"
        hosts = 9
        host_link = {{ rate = "100Gbps", cable = "100m" }}
        [switch]
        buffer = "1MB"
        [pfc]
        priorities = [3]
        {h}
        [[workload]]
        kind = "incast"
        size = "1MB"
        "#
    );
    run_unchecked(&toml).remove(0)
}

#[test]
fn adequate_headroom_means_no_lossless_drop_and_half_of_it_drops() {
    let full = incast_with_headroom(None);
    assert!(full.summary.pfc_pause_frames > 0, "the incast must trigger PFC");
    assert_eq!(full.summary.drops, 0, "computed headroom: lossless");
    assert!(full.summary.invariants.iter().all(|i| i.ok));

    let need = textbook_headroom(100.0, 500.0, 4096);
    let half = incast_with_headroom(Some((need / 2.0) as u64));
    assert!(
        half.summary.drops_by_reason["headroom_exceeded"] > 0,
        "half the headroom the cable needs must overflow"
    );
}

/// Peak occupancy of `port` at `node` for the first variant.
fn peak(r: &models::report::VariantReport, node: &str, port: &str) -> f64 {
    counter(r, node, port, "peak_queue_bytes") as f64
}

#[test]
fn congested_queues_settle_at_the_dynamic_threshold() {
    // S receivers, each fed by two line-rate senders: S congested lossy queues sharing B.
    // Choudhury-Hahne: each settles at alpha B / (1 + alpha S).
    let buffer = 2_000_000.0;
    for (s, alpha_log2) in [(1u32, 0i8), (2, 0), (4, 0), (3, -1), (2, 1)] {
        let alpha = 2f64.powi(alpha_log2 as i32);
        let mut flows = String::new();
        for r in 0..s {
            for k in 0..2 {
                let src = s + 2 * r + k;
                flows += &format!("[[flow]]\nsrc = {src}\ndst = {r}\nsize = \"4MB\"\n");
            }
        }
        let toml = format!(
            r#"
            [topology]
            kind = "star"
            hosts = {hosts}
            host_link = {{ rate = "100Gbps", cable = "2m" }}
            [switch]
            buffer = "{buffer}B"
            cell = "1B"
            queue_alpha = {alpha_log2}
            {flows}
            "#,
            hosts = 3 * s
        );
        let r = run_unchecked(&toml).remove(0);
        let expected = alpha * buffer / (1.0 + alpha * s as f64);
        for recv in 0..s {
            let got = peak(&r, "sw0", &format!("to-h{recv}"));
            assert_close(
                got,
                expected,
                0.0,
                0.03,
                &format!("S = {s}, alpha = {alpha}, queue to h{recv}"),
            );
        }
    }
}

/// Bytes each flow has delivered by `until` (runs are deterministic: a run cut at `until`
/// follows the same trajectory as the full run up to that time).
fn delivered_by(toml: &str, until_us: u64) -> Vec<u64> {
    let s = scenario(&format!("{toml}\n[run]\nmax_time = \"{until_us}us\"\n"));
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    sim.flows.iter().map(|f| f.received_bytes).collect()
}

#[test]
fn two_dcqcn_flows_converge_to_fair_shares_with_a_bounded_queue() {
    // The DCQCN paper's parameters (Zhu et al. 2015: Kmin 5 KB, Kmax 200 KB, Pmax 1 %).
    let (kmin, kmax) = (5_000.0, 200_000.0);
    let toml = format!(
        r#"
        [topology]
        kind = "star"
        hosts = 3
        host_link = {{ rate = "100Gbps", cable = "2m" }}
        [switch]
        buffer = "16MB"
        ecn = {{ kmin = "{kmin}B", kmax = "{kmax}B", pmax = 0.01 }}
        [nic]
        cc = {{ kind = "dcqcn", preset = "dcqcn-paper" }}
        [[flow]]
        src = 1
        dst = 0
        size = "2GB"
        [[flow]]
        src = 2
        dst = 0
        size = "2GB"
        "#
    );
    // Average rates over [10 ms, 60 ms], after the start-up transient.
    let (t1, t2) = (10_000u64, 60_000u64);
    let (a, b) = (delivered_by(&toml, t1), delivered_by(&toml, t2));
    let rate = |i: usize| (b[i] - a[i]) as f64 * 8.0 / ((t2 - t1) as f64 * 1e3); // Gb/s
    let goodput = 100.0 * 4096.0 / roce_wire(4096) as f64;
    let fair = goodput / 2.0;
    for i in 0..2 {
        assert_close(rate(i), fair, 0.0, 0.10, &format!("flow {i} rate vs fair share"));
    }
    assert!(
        rate(0) + rate(1) > 0.9 * goodput,
        "under-used: {} + {} Gb/s",
        rate(0),
        rate(1)
    );
    let r = run_unchecked(&format!("{toml}\n[run]\nmax_time = \"{t2}us\"\n")).remove(0);
    assert_eq!(r.summary.drops, 0);
    assert!(r.summary.cnps > 0, "the shared queue must be marked");
    let q = peak(&r, "sw0", "to-h0");
    assert!(
        q < 2.0 * kmax,
        "queue {q} B should stay near the marking band [{kmin}, {kmax}]"
    );
}

#[test]
fn go_back_n_goodput_under_random_loss() {
    // Back to back, window K = the bandwidth-delay product in packets, so each loss costs the
    // K packets in flight behind it: goodput / line rate = (1 - p) / (1 + p (K + 1)).
    let (gbps, mtu, delay_ns) = (100.0, 4096u64, 2_500.0);
    let t_pkt = tx_ns(roce_wire(mtu), gbps);
    let rtt = 2.0 * delay_ns + t_pkt + tx_ns(86, gbps);
    let k = (rtt / t_pkt).round() as u64;
    for p in [0.002, 0.01, 0.02] {
        let size = 20_000 * mtu;
        let toml = format!(
            r#"
            seed = 3
            [topology]
            kind = "back-to-back"
            link = {{ rate = "100Gbps", delay = "{delay_ns}ns", loss = {p} }}
            [nic]
            window = "{w}B"
            local_ack_timeout = 2
            [[flow]]
            src = 0
            dst = 1
            size = "{size}B"
            "#,
            w = k * mtu
        );
        let r = run_unchecked(&toml).remove(0);
        let fct = r.flows[0].fct_ns.expect("go-back-N completes the flow");
        let line = tx_ns(roce_wire(mtu), gbps) / mtu as f64; // ns per payload byte at line rate
        let efficiency = size as f64 * line / fct;
        let expected = (1.0 - p) / (1.0 + p * (k + 1) as f64);
        assert_close(efficiency, expected, 0.0, 0.10, &format!("p = {p}, K = {k}"));
    }
}

#[test]
fn pauses_propagate_hop_by_hop_toward_the_senders() {
    // Three 25G senders on leaf0 to one 25G receiver on leaf1 over 100G fabric links: the
    // congestion is at leaf1's port to h3. leaf1 pauses the spine, the spine pauses leaf0,
    // leaf0 pauses the senders, in that order.
    let toml = r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 1
        hosts_per_leaf = 3
        host_link = { rate = "25Gbps", cable = "3m" }
        fabric_link = { rate = "100Gbps", cable = "10m" }
        [switch]
        buffer = "500KB"
        [pfc]
        priorities = [3]
        [[flow]]
        src = 0
        dst = 3
        size = "2MB"
        [[flow]]
        src = 1
        dst = 3
        size = "2MB"
        [[flow]]
        src = 2
        dst = 3
        size = "2MB"
    "#;
    let s = scenario(toml);
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    let net = &sim.net;
    let node = |name: &str| NodeId(net.names.iter().position(|n| n == name).unwrap() as u32);
    let port = |from: &str, to: &str| -> PortId {
        net.ports_of(node(from))
            .find(|&p| net.port_name(p) == format!("to-{to}"))
            .unwrap()
    };
    let first = |from: &str, to: &str| net.ports[port(from, to).idx()].xoff.first();
    let leaf1 = first("leaf1", "spine0").expect("leaf1 pauses the spine");
    let spine = first("spine0", "leaf0").expect("the spine pauses leaf0");
    let leaf0 = first("leaf0", "h0").expect("leaf0 pauses its senders");
    assert!(
        leaf1 < spine && spine < leaf0,
        "order: leaf1 {leaf1}, spine {spine}, leaf0 {leaf0}"
    );
    assert!(
        net.ports[port("h0", "leaf0").idx()].pause.frames(3) > 0,
        "the sender's NIC was paused"
    );
    assert!(first("leaf1", "h3").is_none(), "the receiver is never paused");
    assert_eq!(sim.totals.dropped_packets, 0);
}

#[test]
fn a_slow_host_makes_its_nic_pause_the_sender() {
    // The host drains 40 Gb/s behind a 100 Gb/s port. With PFC the NIC pauses the sender
    // and nothing is lost: the flow runs at the drain rate, S_wire * 8 / 40G plus the
    // first frame's trip. Without PFC the NIC's buffer overflows.
    let toml = |pfc: &str| {
        format!(
            r#"
            [topology]
            kind = "back-to-back"
            link = {{ rate = "100Gbps", cable = "3m" }}
            [nic]
            rx_rate = "40Gbps"
            local_ack_timeout = 4
            {pfc}
            [[flow]]
            src = 0
            dst = 1
            size = "4MB"
            "#
        )
    };
    let r = run(&toml("[pfc]\npriorities = [3]")).remove(0);
    assert_eq!(r.summary.drops, 0);
    assert!(r.summary.pfc_pause_frames > 0);
    let n = 4_000_000u64.div_ceil(4096);
    let wire = 4_000_000 + n * 82;
    let expected = tx_ns(wire, 40.0) + tx_ns(roce_wire(4096), 100.0) + 15.0;
    assert_close(
        r.flows[0].fct_ns.unwrap(),
        expected,
        0.0,
        0.01,
        "drain-limited FCT",
    );
    let lossy = run(&toml("")).remove(0);
    assert!(lossy.summary.drops_by_reason["nic_rx_full"] > 0);
    assert!(lossy.summary.retransmitted_packets > 0);
}

#[test]
fn a_queue_pair_cut_off_retries_at_its_own_timeout() {
    // A 1 MB WRITE on a DAC whose cable goes down for good at 20 us. The QP's timer expires
    // at its `local_ack_timeout` (IBA 9.7.6.1.3: 4.096 us x 2^n, here n = 6, 262.144 us), from
    // its first timeout on: in 2 ms that is the first 262 us after the last ACK, then one
    // every 262 us (counters.csv's local_ack_timeout_err; the NIC has no carrier, so none of
    // them resends anything and `rtos` stays 0). (It once re-armed with UET's timeout after
    // the first, some 25 us.)
    let toml = r#"
        [topology]
        kind = "back-to-back"
        link = { rate = "100Gbps", cable = "3m" }
        [nic]
        local_ack_timeout = 6
        [[flow]]
        src = 0
        dst = 1
        size = "1MB"
        [[fault]]
        link = ["h0", "h1"]
        kind = "down"
        at = "20us"
        [run]
        max_time = "2ms"
    "#;
    let r = run(toml).remove(0);
    let rto_us: f64 = 4.096 * 64.0;
    // The last ACK came before the cable went down (by 20 us): every timeout after it is one
    // RTO apart until 2 ms.
    let expected = ((2000.0 - 20.0) / rto_us).floor() as u64;
    let expiries = counter(&r, "h0", "nic", "local_ack_timeout_err");
    assert!(
        (expected - 1..=expected).contains(&expiries),
        "{expiries} timeouts in 2 ms at a {rto_us} us timeout (expected about {expected})"
    );
    assert_eq!(r.summary.rtos, 0, "nothing resent without carrier");
}
