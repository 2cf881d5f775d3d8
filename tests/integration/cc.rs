//! HPCC, Swift and the DCTCP plug-in against their papers' own properties, computed here from
//! the configured sizes: HPCC holds the bottleneck at eta with an empty queue and shares it
//! within a few round trips; Swift holds the round trip at its target and shares fairly; the
//! worked example in the docs is the file that runs; INT's bytes are on the wire.
//!
//! The fabric: two senders and one receiver on a switch, 100 Gb/s links of 2 us, 1000 B
//! payloads (the HPCC paper's packet size), so T is about 8 us and a BDP about 100 packets.

use crate::common::*;
use models::ids::{NodeId, PortId};
use models::report::VariantReport;
use models::sim::Sim;

const B: f64 = 100e9;
/// Link delay, ns.
const D: f64 = 2_000.0;
/// RoCEv2 frame of a 1000 B payload: 62 B of headers.
const FRAME: f64 = 1062.0;

fn fabric(flows: &str, variant: &str, extra: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = 3
        host_link = {{ rate = "100Gbps", delay = "2us" }}
        [switch]
        buffer = "16MB"
        {extra}
        [nic]
        mtu = "1000B"
        [run]
        sample_interval = "1us"
        {flows}
        [[variant]]
        name = "v"
        {variant}
        "#
    )
}

const TWO_AT_ONCE: &str = r#"
    [[flow]]
    src = "h1"
    dst = "h0"
    size = "20MB"
    [[flow]]
    src = "h2"
    dst = "h0"
    size = "20MB"
"#;

/// A 20 MB flow h1 -> h0 from the start and a flow of `second` h2 -> h0 from 500 us.
fn late_start(second: &str) -> String {
    format!(
        r#"
        [[flow]]
        src = "h1"
        dst = "h0"
        size = "20MB"
        [[flow]]
        src = "h2"
        dst = "h0"
        size = "{second}"
        start = "500us"
        "#
    )
}

/// Run the scenario's one variant, check its invariants, and hand the finished run to `f`.
fn with_run<T>(toml: &str, f: impl FnOnce(&Sim, &VariantReport) -> T) -> T {
    let s = scenario(toml);
    let mut sim = Sim::new(&s, &s.variants[0]);
    sim.run();
    let r = VariantReport::new(&sim, 0.0);
    for i in &r.summary.invariants {
        assert!(i.ok, "invariant {} failed: {}", i.name, i.detail);
    }
    assert_eq!(r.summary.flows_completed, r.summary.flows_total);
    f(&sim, &r)
}

fn node(sim: &Sim, name: &str) -> NodeId {
    NodeId(sim.net.names.iter().position(|n| n == name).unwrap() as u32)
}

/// Queue samples (time ns, frame bytes) of the switch's port toward h0.
fn bottleneck_queue(sim: &Sim) -> Vec<(f64, f64)> {
    let p: PortId = sim
        .net
        .port_between(node(sim, "sw0"), node(sim, "h0"), 0)
        .unwrap();
    let i = sim.sampler.ports.iter().position(|&q| q == p).unwrap();
    sim.sampler
        .times
        .iter()
        .zip(sim.sampler.queues[i].dense(sim.sampler.times.len()))
        .map(|(t, q)| (t.as_ns_f64(), q as f64))
        .collect()
}

fn mean_in(samples: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| (from..to).contains(t))
        .map(|s| s.1)
        .collect();
    assert!(v.len() > 10, "too few samples in [{from}, {to}]");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Payload rate (bit/s) of flow `f` over [from, to] ns, from its sampled delivered bytes.
fn rate(sim: &Sim, f: u32, from: f64, to: f64) -> f64 {
    let fs = &sim.flow_sampler;
    let col = fs.column(f).unwrap();
    let at = |t: f64| {
        let k = fs.times.iter().position(|x| x.as_ns_f64() >= t).unwrap();
        (fs.times[k].as_ns_f64(), fs.at(col, k).0 as f64)
    };
    let ((t0, b0), (t1, b1)) = (at(from), at(to));
    (b1 - b0) * 8.0 / ((t1 - t0) * 1e-9)
}

/// T: the unloaded round trip (uet-htsim's `calculate_rtt`, the HPCC simulator's base RTT):
/// both links both ways, a full data frame out and a 64 B ACK back, with preamble and IFG.
fn base_rtt_ns() -> f64 {
    2.0 * (2.0 * D + (FRAME + 20.0 + 16.0) * 8.0 / B * 1e9 + 84.0 * 8.0 / B * 1e9)
}

#[test]
fn hpcc_holds_the_bottleneck_at_eta_with_an_empty_queue() {
    // Li et al. section 3.3: at the fixed point of the per-RTT update every flow's window
    // satisfies Wc = Wc eta / U + W_AI, so U* = eta + N W_AI / (B T): with the ns-3 W_AI
    // (0.04 % of B T) and N = 2, U* = 0.95 + 0.0008. U counts transmitted frame bytes
    // (INT's 16 + 20 B included), so the payload arrives at B U* x 1000 / 1098, and the
    // queue's term is zero: the queue stays under a packet or two.
    let toml = fabric(TWO_AT_ONCE, r#"nic.cc = { kind = "hpcc" }"#, "");
    with_run(&toml, |sim, r| {
        let u = 0.95 + 2.0 * 10.0 / 25_000.0;
        let frame_int = FRAME + 16.0 + 20.0;
        let bytes = 2.0 * 20e6 * frame_int / 1000.0;
        let expected = bytes * 8.0 / (B * u) * 1e9;
        let last = last_finish(r);
        // Both start at line rate (W = B T): one round trip of overload, then eta.
        assert_close(last, expected, 0.0, 0.015, "two HPCC flows at eta");
        let q = mean_in(&bottleneck_queue(sim), 200_000.0, 0.9 * last);
        assert!(q < 2.0 * frame_int, "mean queue {q} B: not near zero");
        let peak = bottleneck_queue(sim)
            .iter()
            .filter(|s| s.0 > 200_000.0)
            .map(|s| s.1)
            .fold(0.0, f64::max);
        assert!(
            peak < 10.0 * frame_int,
            "queue peaked at {peak} B after the start"
        );
    });
}

#[test]
fn hpcc_shares_a_link_within_a_few_round_trips_of_a_second_flow_starting() {
    // A newcomer starts at line rate (W = B T) against an incumbent at eta B T: the next
    // full update scales both by the same eta / U, which leaves them about equal.
    let toml = fabric(&late_start("10MB"), r#"nic.cc = { kind = "hpcc" }"#, "");
    with_run(&toml, |sim, _| {
        let t = base_rtt_ns();
        let from = 500_000.0 + 10.0 * t;
        let (a, b) = (
            rate(sim, 0, from, from + 100_000.0),
            rate(sim, 1, from, from + 100_000.0),
        );
        assert!(
            (a - b).abs() / (a + b) < 0.05,
            "10 RTTs after the start: {a:.3e} vs {b:.3e}"
        );
        let sum = (a + b) * 1098.0 / 1000.0;
        assert_close(sum, 0.95 * B, 0.0, 0.02, "the pair's frame rate");
    });
}

#[test]
fn swift_holds_the_round_trip_at_its_target_and_the_link_busy_on_either_transport() {
    // Flow and hop scaling off: the target is the 20 us base. The round trip settles at the
    // target, so the queue holds (target - T) x B of wire bytes, give or take the flows'
    // additive increase of N packets per round trip; the queue never empties, so the link
    // runs at line rate. RoCEv2 frames carry 62 B of headers, UET's 102 B.
    for (transport, frame) in [("roce", FRAME), ("uet", 1102.0)] {
        let toml = fabric(
            TWO_AT_ONCE,
            &format!(
                r#"nic.transport = "{transport}"
                nic.cc = {{ kind = "swift", base_target = "20us", per_hop = "0ns", fs_range = "0ns" }}"#
            ),
            "",
        );
        with_run(&toml, |sim, r| {
            let wire = frame + 20.0;
            let expected_q = (20_000.0 - base_rtt_ns()) * 1e-9 * B / 8.0 * frame / wire;
            let last = last_finish(r);
            let q = mean_in(&bottleneck_queue(sim), 300_000.0, 0.9 * last);
            assert_close(
                q,
                expected_q,
                2.0 * frame,
                0.05,
                &format!("{transport}: Swift's standing queue"),
            );
            let line = 2.0 * 20e6 * wire / 1000.0 * 8.0 / B * 1e9;
            assert_close(
                last,
                line,
                0.0,
                0.01,
                &format!("{transport}: two flows keep the link busy"),
            );
        });
    }
}

#[test]
fn swift_flow_scaling_shares_fairly_after_a_late_start() {
    // Section 3.5: the smaller window gets the larger target, so the newcomer grows while
    // the incumbent backs off, until both are equal (Jain's index of the two rates near 1).
    let flows = late_start("20MB");
    // 4 KiB packets, so the windows (tens of packets) are inside the flow-scaling range
    // (under fs_max = 100 packets).
    let toml = fabric(&flows, r#"nic.cc = { kind = "swift" }"#, "").replace("1000B", "4096B");
    with_run(&toml, |sim, _| {
        let (a, b) = (rate(sim, 0, 1.5e6, 2.5e6), rate(sim, 1, 1.5e6, 2.5e6));
        let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
        assert!(jain > 0.995, "Jain's index {jain:.4} ({a:.3e} vs {b:.3e})");
        let wire = 4096.0 + 62.0 + 20.0;
        assert_close(a + b, B * 4096.0 / wire, 0.0, 0.02, "the pair's payload rate");
    });
}

#[test]
fn swift_paces_a_large_incast_below_one_packet_per_round_trip() {
    // 256 senders on one 100G port: at the 20 us base target (plus flow scaling, up to
    // 100 us at small windows) the port holds B x target, under 256 packets of 4 KiB, so
    // every window ends under a packet, which Swift paces (one packet per rtt / cwnd)
    // rather than stalls. No loss, and the link stays busy.
    let mut toml = String::from(
        r#"
        [topology]
        kind = "star"
        hosts = 257
        host_link = { rate = "100Gbps", cable = "3m" }
        [switch]
        buffer = "16MB"
        ports = 260
        [nic]
        mtu = "4096B"
        cc = { kind = "swift" }
        [run]
        sample_interval = "1us"
        [[workload]]
        kind = "incast"
        receiver = "h0"
        size = "64KiB"
        [[variant]]
        name = "v"
        "#,
    );
    toml.push('\n');
    with_run(&toml, |sim, r| {
        assert_eq!(r.summary.drops, 0);
        let fs = &sim.flow_sampler;
        let smallest = (0..fs.times.len())
            .filter(|&k| fs.times[k].as_ns_f64() > 20_000.0)
            .flat_map(|k| (0..fs.flows.len()).map(move |c| fs.at(c, k).1))
            .filter(|&w| w > 0.0)
            .fold(f64::MAX, f64::min);
        assert!(
            smallest < 4096.0,
            "the smallest window was {smallest} B: never under a packet"
        );
        let last = last_finish(r);
        let line = 256.0 * 65_536.0 * (4096.0 + 62.0 + 20.0) / 4096.0 * 8.0 / B * 1e9;
        assert!(
            last < line * 1.05,
            "the incast took {last} ns, {line} at line rate"
        );
    });
}

#[test]
fn the_dctcp_example_in_the_docs_is_the_file_that_runs_and_holds_its_queue_near_k() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/congestion-control.md")).unwrap();
    let file = std::fs::read_to_string(root.join("models/src/cc/dctcp.rs")).unwrap();
    assert!(
        doc.contains(&file),
        "docs/congestion-control.md must show models/src/cc/dctcp.rs as it is"
    );
    // RFC 8257 / Alizadeh et al.: with marking at K (instantaneous queue, p = 1) the queue
    // oscillates just above K, by about N packets, and never empties when K > B T / 7.
    let k = 30_000.0;
    let toml = fabric(
        TWO_AT_ONCE,
        r#"nic.cc = { kind = "dctcp" }"#,
        r#"ecn = { kmin = "30KB", kmax = "30KB", pmax = 1.0 }"#,
    );
    with_run(&toml, |sim, r| {
        assert!(k > B * base_rtt_ns() * 1e-9 / 8.0 / 7.0);
        let first_done = r
            .flows
            .iter()
            .filter_map(|f| f.finish_ns)
            .fold(f64::MAX, f64::min);
        let q = bottleneck_queue(sim);
        let mean = mean_in(&q, 200_000.0, first_done);
        assert!(
            mean > 0.3 * k && mean < k + 8.0 * FRAME,
            "mean queue {mean} B against K {k}"
        );
    });
}

#[test]
fn int_headers_are_on_the_wire_and_echoed_in_the_acks() {
    // One HPCC flow of 1000 packets through one switch: each data frame carries the 16 B
    // shim and metadata header and one 20 B record on the switch's egress; each ACK (one
    // per packet) carries the same stack back.
    let flows = r#"
        [[flow]]
        src = "h1"
        dst = "h0"
        size = "1000000B"
    "#;
    let toml = fabric(flows, r#"nic.cc = { kind = "hpcc" }"#, "");
    with_run(&toml, |_, r| {
        let tx = |node: &str, port: &str| counter(r, node, port, "tx_bytes");
        assert_eq!(
            tx("h1", "to-sw0"),
            1000 * (1062 + 16),
            "the source adds the headers"
        );
        assert_eq!(
            tx("sw0", "to-h0"),
            1000 * (1062 + 16 + 20),
            "the switch its record"
        );
        assert_eq!(
            tx("h0", "to-sw0"),
            1000 * (66 + 16 + 20),
            "every ACK echoes the stack"
        );
    });
}

#[test]
fn a_scheme_on_the_wrong_transport_or_a_bad_value_names_its_key() {
    let e = models::scenario::parse(
        &fabric(
            TWO_AT_ONCE,
            "nic.transport = \"uet\"\nnic.cc = { kind = \"hpcc\" }",
            "",
        ),
        "t.toml",
        "t",
        &Default::default(),
    )
    .expect_err("HPCC on UET is refused")
    .to_string();
    assert!(e.contains("nic.cc") && e.contains("RoCEv2"), "{e}");
    let e = models::scenario::parse(
        &fabric(TWO_AT_ONCE, r#"nic.cc = { kind = "swift", beta = 1.5 }"#, ""),
        "t.toml",
        "t",
        &Default::default(),
    )
    .expect_err("beta above 1 is refused")
    .to_string();
    assert!(e.contains("nic.cc.beta"), "{e}");
}
