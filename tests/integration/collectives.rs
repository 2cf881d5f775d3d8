//! Collectives as NCCL runs them, against their closed forms on an idle fabric, and the
//! job-level results (nccl-tests' algbw and busbw).
//!
//! Every rank sits on one switch at B = 100 Gb/s; ACKs are coalesced (every 64 packets) so
//! they take a negligible share of the links the data shares. The wire carries
//! roce_wire(4096) bytes per 4096 of payload, so each closed form's bytes are scaled by that.

use crate::common::*;

const B: f64 = 100.0;
const MIB: u64 = 1 << 20;

fn star(n: usize, workload: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = {n}
        host_link = {{ rate = "100Gbps", delay = "500ns" }}
        [nic]
        mtu = "4096B"
        ack_every = 64
        [[workload]]
        kind = "collective"
        {workload}
        "#
    )
}

/// Wire time (ns) of `payload` bytes at B, in 4096 B packets.
fn wire_ns(payload: f64) -> f64 {
    tx_ns(1, B) * payload * roce_wire(4096) as f64 / 4096.0
}

/// NCCL's base latency, added once per call.
const BASE_NS: f64 = 8_400.0;

fn job(toml: &str) -> models::report::jobs::JobRecord {
    let r = run(toml).remove(0);
    assert_eq!(r.summary.flows_completed, r.summary.flows_total);
    r.summary.jobs[0].clone()
}

#[test]
fn ring_all_reduce_moves_two_n_minus_one_over_n_of_the_buffer_at_line_rate() {
    // Patarasuk and Yuan / nccl-tests PERFORMANCE.md: t = 2(n-1)/n x S/B. The channels keep
    // the link busy while one of them waits for its next chunk, so the per-step latencies
    // hide behind the other's data.
    for (n, size) in [(4usize, 32 * MIB), (8, 64 * MIB)] {
        let j = job(&star(
            n,
            &format!(
                r#"op = "all-reduce"
            size = "{size}B""#
            ),
        ));
        let nf = n as f64;
        let expected = 2.0 * (nf - 1.0) / nf * wire_ns(size as f64) + BASE_NS;
        assert_close(
            j.time_ns.unwrap(),
            expected,
            0.0,
            0.02,
            &format!("ring all-reduce, {n} ranks"),
        );
        // nccl-tests' definitions, exactly.
        let algbw = size as f64 * 8.0 / j.time_ns.unwrap();
        assert_close(j.algbw_gbps.unwrap(), algbw, 0.0, 1e-12, "algbw = S / t");
        assert_close(
            j.busbw_gbps.unwrap(),
            algbw * 2.0 * (nf - 1.0) / nf,
            0.0,
            1e-12,
            "busbw",
        );
        // A ring all-reduce never beats its bandwidth bound.
        assert!(j.time_ns.unwrap() > 2.0 * (nf - 1.0) / nf * tx_ns(size, B));
    }
}

#[test]
fn all_gather_and_reduce_scatter_take_half_an_all_reduce() {
    // (n-1)/n x S/B, S being the whole output (all-gather) or input (reduce-scatter).
    let (n, size) = (8usize, 64 * MIB);
    for op in ["all-gather", "reduce-scatter"] {
        let j = job(&star(
            n,
            &format!(
                r#"op = "{op}"
            size = "{size}B""#
            ),
        ));
        let expected = (n as f64 - 1.0) / n as f64 * wire_ns(size as f64) + BASE_NS;
        assert_close(j.time_ns.unwrap(), expected, 0.0, 0.02, op);
        assert_close(
            j.busbw_gbps.unwrap(),
            j.algbw_gbps.unwrap() * 7.0 / 8.0,
            0.0,
            1e-12,
            op,
        );
    }
}

#[test]
fn halving_doubling_sends_the_same_bytes_in_two_log_p_steps() {
    // Rabenseifner: 2 log2(p) a + 2(p-1)/p x S/B: 6 exchanges for 8 ranks.
    let (n, size) = (8usize, 64 * MIB);
    let toml = star(
        n,
        &format!(
            r#"op = "all-reduce"
        algorithm = "halving-doubling"
        size = "{size}B"
        channels = 1"#
        ),
    );
    let r = run(&toml).remove(0);
    // One message per rank and step.
    assert_eq!(r.summary.flows_total, n * 6);
    let j = &r.summary.jobs[0];
    let expected = 2.0 * 7.0 / 8.0 * wire_ns(size as f64) + BASE_NS;
    // With one channel each step's latency (2 x 500 ns + a packet) is exposed: 6 of them.
    let step = 1000.0 + wire_ns(4096.0);
    assert_close(
        j.time_ns.unwrap(),
        expected + 6.0 * step,
        0.0,
        0.02,
        "halving-doubling",
    );
    // Six ranks cannot halve: the error names the key.
    let bad = star(
        6,
        r#"op = "all-reduce"
        algorithm = "halving-doubling"
        size = "1MB""#,
    );
    let e = models::scenario::parse(&bad, "t.toml", "t", &Default::default())
        .expect_err("six ranks are refused")
        .to_string();
    assert!(
        e.contains("workload[0].hosts") && e.contains("power-of-two"),
        "{e}"
    );
}

#[test]
fn double_binary_tree_moves_twice_the_buffer_per_rank() {
    // Each rank is interior in one tree (S/2 up, 2 x S/2 down) and a leaf in the other (S/2
    // up): 2S out and 2S in per rank, so t = 2S/B on an idle fabric plus the pipeline's fill
    // (2 x depth chunks, under 1 % at 256 MiB). NCCL's slot credits (NCCL_STEPS) keep every
    // stream going to the end; without them the leaves' streams finish early and the tail
    // runs pipeline-bound, 5 % over. Odd rank counts mirror by shifting; more channels add
    // streams per NIC.
    let size = 256 * MIB;
    for (n, channels) in [(8usize, 2u32), (7, 2), (8, 4)] {
        let j = job(&star(
            n,
            &format!(
                r#"op = "all-reduce"
            algorithm = "tree"
            channels = {channels}
            size = "{size}B""#
            ),
        ));
        let expected = 2.0 * wire_ns(size as f64) + BASE_NS;
        let t = j.time_ns.unwrap();
        assert!(t >= expected, "{n} ranks: {t} ns under the bound {expected}");
        assert_close(
            t,
            expected,
            0.0,
            0.02,
            &format!("tree, {n} ranks, {channels} channels"),
        );
    }
}

#[test]
fn all_to_all_sends_n_minus_one_over_n_of_the_buffer() {
    // Every rank sends S/n to each of n-1 peers at once: (n-1)/n x S/B at the sender, and
    // each receiver takes in the same from n-1 senders.
    let (n, size) = (8usize, 64 * MIB);
    let j = job(&star(
        n,
        &format!(
            r#"op = "all-to-all"
        size = "{size}B""#
        ),
    ));
    let expected = 7.0 / 8.0 * wire_ns(size as f64) + BASE_NS;
    assert_close(j.time_ns.unwrap(), expected, 0.0, 0.02, "all-to-all");
    assert_close(
        j.busbw_gbps.unwrap(),
        j.algbw_gbps.unwrap() * 7.0 / 8.0,
        0.0,
        1e-12,
        "busbw",
    );
}

#[test]
fn broadcast_is_the_buffer_plus_the_chain_fill() {
    // A chain of n-1 hops, chunk by chunk: S/B plus (n-2) chunk times (the first chunk's
    // trip down the chain), each chunk time being C chunks at B with C channels.
    let (n, size, chunk, c) = (4usize, 64 * MIB, 512u64 << 10, 2.0);
    let j = job(&star(
        n,
        &format!(
            r#"op = "broadcast"
        size = "{size}B"
        root = "h2""#
        ),
    ));
    let expected = wire_ns(size as f64) + (n as f64 - 2.0) * c * wire_ns(chunk as f64) + BASE_NS;
    assert_close(j.time_ns.unwrap(), expected, 0.0, 0.02, "broadcast");
    assert_eq!(j.busbw_gbps, j.algbw_gbps);
}

#[test]
fn training_iterations_add_compute_to_every_step() {
    let j = job(&star(
        4,
        r#"op = "all-reduce"
        size = "8MiB"
        iterations = 3
        compute = "200us""#,
    ));
    assert_eq!(j.iterations_completed, 3);
    for (it, st) in j.iteration_ns.iter().zip(&j.step_ns) {
        assert_close(
            st.unwrap() - it.unwrap(),
            200_000.0,
            1e-3,
            0.0,
            "step = compute + collective",
        );
    }
    let total: f64 = j.step_ns.iter().map(|s| s.unwrap()).sum();
    assert_close(
        j.elapsed_ns.unwrap(),
        total,
        1e-3,
        0.0,
        "the job is its steps back to back",
    );
    // Idle fabric, same traffic: every iteration takes the same time.
    let first = j.iteration_ns[0].unwrap();
    assert!(j.iteration_ns.iter().all(|t| (t.unwrap() - first).abs() < 1e-3));
}

/// More than the ACKs of a run (every 64th packet acknowledged) could put on a link: 1 MB,
/// where every ring edge carries 2 x 3/4 x 16 MiB = 24 MiB of data.
const DATA: u64 = 1_000_000;

/// Spine-facing leaf ports that carried data in a run of `channels` channels.
fn uplinks_used(channels: u32, qps: u32) -> usize {
    // 2 leaves x 8 spines; the ring alternates leaves, so every edge crosses the spine layer.
    let toml = format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 8
        hosts_per_leaf = 2
        host_link = {{ rate = "100Gbps", delay = "500ns" }}
        fabric_link = {{ rate = "100Gbps", delay = "500ns" }}
        [nic]
        ack_every = 64
        [[workload]]
        kind = "collective"
        op = "all-reduce"
        size = "16MiB"
        hosts = [0, 2, 1, 3]
        channels = {channels}
        qps_per_connection = {qps}
        "#
    );
    let r = run(&toml).remove(0);
    let mut ports: Vec<String> = r
        .counters
        .iter()
        .filter(|c| {
            c.node.starts_with("leaf")
                && c.port.contains("spine")
                && c.counter == "tx_bytes"
                && c.value > DATA
        })
        .map(|c| format!("{} {}", c.node, c.port))
        .collect();
    ports.sort();
    ports.dedup();
    ports.len()
}

#[test]
fn channels_and_qps_spread_a_job_over_more_uplinks() {
    // One channel, one QP: the 4 ring edges are 4 connections, so at most 4 leaf uplinks
    // carry data (every message of a QP takes its path). Eight channels give 32
    // connections over the 16 uplinks, and 4 QPs each 128.
    let one = uplinks_used(1, 1);
    let many = uplinks_used(8, 1);
    let qps = uplinks_used(1, 8);
    assert!(one <= 4, "one channel used {one} uplinks");
    assert!(
        many > one && many >= 10,
        "8 channels used {many} uplinks, 1 used {one}"
    );
    assert!(qps > one, "8 QPs per connection used {qps} uplinks, 1 used {one}");
}
