use super::tree::btree;
use super::*;

fn plan(op: Op, algorithm: Algorithm, n: u32, size: u64) -> Plan {
    Plan {
        rails: 1,
        op,
        algorithm,
        ranks: (0..n).map(HostId).collect(),
        size,
        channels: 1,
        qps: 1,
        chunk: u64::MAX,
        latency: Duration::ZERO,
        message_latency: Duration::ZERO,
        root: 0,
        pairs: (0..n as usize).map(|i| (i, (i + 1) % n as usize)).collect(),
        iterations: 1,
        compute: Duration::ZERO,
        start: Time::ZERO,
        prio: 3,
        workload: 0,
    }
}

#[test]
fn the_ring_is_two_n_minus_one_chained_steps_of_s_over_n() {
    let (flows, job) = expand(&plan(Op::AllReduce, Algorithm::Ring, 4, 4_000_000), "j".into());
    assert_eq!(flows.len(), 4 * 6);
    assert!(
        flows
            .iter()
            .all(|f| f.size == 1_000_000 && f.dst.0 == (f.src.0 + 1) % 4)
    );
    // Host 2's second send waits for host 1's first (which delivered to host 2) and its own.
    assert_eq!(flows[4 + 2].deps, Deps::AtLeast(2, vec![1, 2]));
    assert_eq!(job.iterations, vec![0..24]);
    let (ag, _) = expand(&plan(Op::AllGather, Algorithm::Ring, 4, 4_000_000), "j".into());
    assert_eq!(ag.len(), 12);
}

#[test]
fn every_rank_sends_what_the_closed_forms_count() {
    let s = 8 << 20;
    let per_rank =
        |flows: &[FlowSpec], r: u32| flows.iter().filter(|f| f.src.0 == r).map(|f| f.size).sum::<u64>();
    let mut p = plan(Op::AllReduce, Algorithm::Ring, 8, s);
    p.channels = 2;
    p.chunk = 256 << 10;
    let (ring, _) = expand(&p, "r".into());
    assert!(
        (0..8).all(|r| per_rank(&ring, r) == 2 * 7 * s / 8),
        "ring: 2(n-1)/n S each"
    );
    p.algorithm = Algorithm::HalvingDoubling;
    let (hd, _) = expand(&p, "h".into());
    assert!(
        (0..8).all(|r| per_rank(&hd, r) == 2 * 7 * s / 8),
        "halving-doubling: 2(p-1)/p S each"
    );
    p.op = Op::AllToAll;
    p.algorithm = Algorithm::Direct;
    let (a2a, _) = expand(&p, "a".into());
    assert!(
        (0..8).all(|r| per_rank(&a2a, r) == 7 * s / 8),
        "all-to-all: (n-1)/n S each"
    );
    // Tree: 2S in all per rank whose position is interior in one tree and a leaf in the
    // other; the whole is 2(n-1) x S/2 up and down over both trees.
    p.op = Op::AllReduce;
    p.algorithm = Algorithm::Tree;
    let (tree, _) = expand(&p, "t".into());
    let total: u64 = tree.iter().map(|f| f.size).sum();
    assert_eq!(total, 2 * 2 * 7 * s / 2);
}

#[test]
fn the_binary_tree_has_odd_leaves_and_reaches_every_rank() {
    for n in 2..40 {
        let (parent, children) = btree(n);
        assert_eq!(parent[0], None);
        assert!(
            (1..n).all(|r| parent[r].is_some()),
            "n = {n}: every rank but 0 has a parent"
        );
        assert!(children.iter().all(|c| c.len() <= 2));
        assert!(
            (1..n).step_by(2).all(|r| children[r].is_empty()),
            "n = {n}: odd ranks are leaves"
        );
        // Depth about log2 n.
        let depth = |mut r: usize| {
            let mut d = 0;
            while let Some(p) = parent[r] {
                r = p;
                d += 1;
            }
            d
        };
        let deepest = (0..n).map(depth).max().unwrap();
        assert!(
            deepest <= (n as f64).log2().ceil() as usize + 1,
            "n = {n}: depth {deepest}"
        );
    }
}

#[test]
fn messages_of_a_connection_rotate_over_its_qps() {
    let mut p = plan(Op::SendRecv, Algorithm::Direct, 2, 1 << 20);
    p.pairs = vec![(0, 1)];
    p.chunk = 128 << 10;
    p.qps = 4;
    let (flows, _) = expand(&p, "s".into());
    let qps: Vec<u64> = flows.iter().map(|f| f.qp.unwrap() & 0xff).collect();
    assert_eq!(qps, [0, 1, 2, 3, 0, 1, 2, 3]);
}

#[test]
fn iterations_wait_for_the_previous_one_and_its_compute() {
    let mut p = plan(Op::AllReduce, Algorithm::Ring, 3, 3000);
    p.iterations = 2;
    p.compute = Duration(5_000_000);
    let (flows, job) = expand(&p, "i".into());
    assert_eq!(job.iterations, vec![0..12, 12..24]);
    // The second iteration's first sends wait for the first's last three (the sinks).
    assert_eq!(flows[12].deps, Deps::AtLeast(3, vec![9, 10, 11]));
    assert_eq!(flows[12].after, Duration(5_000_000));
    assert_eq!(
        flows[0].after,
        Duration(5_000_000),
        "the first iteration computes too"
    );
}
