//! Workloads through whole runs: collectives against their closed form, htsim matrices.

use crate::common::*;

#[test]
fn ring_all_reduce_takes_two_n_minus_one_chunk_steps() {
    // n hosts on one switch at B: 2(n-1) steps of one chunk S/n each, back to back.
    // Each step is a single-flow transfer through one switch: (c + k*H)*8/B + 2d + w*8/B.
    for (n, size) in [(4u64, 8_000_000u64), (8, 4_194_304)] {
        let toml = format!(
            r#"
            [topology]
            kind = "star"
            hosts = {n}
            host_link = {{ rate = "100Gbps", delay = "500ns" }}
            [nic]
            ack_every = 64
            [[workload]]
            kind = "collective"
            op = "ring-allreduce"
            size = "{size}B"
            # The ring as one message per step (one channel, chunks of S/n, no NCCL latency):
            # the schedule this closed form counts.
            channels = 1
            chunk = "1GB"
            latency = "0us"
            "#
        );
        let r = run(&toml).remove(0);
        assert_eq!(r.summary.flows_completed as u64, n * 2 * (n - 1));
        let chunk = size.div_ceil(n);
        let k = chunk.div_ceil(4096);
        let last = chunk - (k - 1) * 4096;
        let step = tx_ns((k - 1) * roce_wire(4096) + roce_wire(last), 100.0)
            + 2.0 * 500.0
            + tx_ns(roce_wire(4096), 100.0);
        let expected = 2.0 * (n - 1) as f64 * step;
        let done = r.flows.iter().filter_map(|f| f.finish_ns).fold(0.0, f64::max);
        assert_close(
            done,
            expected,
            0.0,
            0.02,
            &format!("ring all-reduce on {n} hosts"),
        );
        // The bandwidth term alone is 2(n-1)/n * S/B.
        let bandwidth_term = 2.0 * (n - 1) as f64 / n as f64 * tx_ns(size, 100.0);
        assert!(done > bandwidth_term);
    }
}

#[test]
fn published_htsim_permutation_replays() {
    // uet-htsim's perm_128n_128c_2MB.cm on a 128-host fat tree, every flow completes.
    let toml = r#"
        [topology]
        kind = "fat-tree"
        k = 8
        host_link = { rate = "100Gbps", delay = "1us" }
        fabric_link = { rate = "100Gbps", delay = "1us" }
        [nic]
        transport = "uet"
        lb = { kind = "oblivious" }
        cc = { kind = "nscc" }
        [switch]
        trim = { threshold = "200KB" }
        [[workload]]
        kind = "htsim"
        file = "benches/htsim/perm_128n_128c_2MB.cm"
    "#;
    let r = run(toml).remove(0);
    assert_eq!(r.summary.flows_total, 128);
    assert_eq!(r.summary.flows_completed, 128);
    assert!(r.flows.iter().all(|f| f.size_bytes == 2_000_000));
}
