//! Claims of cc-compare, dac-2node, dgx-spark-2node, ecn-leaf-spine, fat-tree-k4, fat-tree-k8.

use super::*;

#[test]
fn cc_compare() {
    let r = run("cc-compare", &[], 0);
    let peak = |v: &str| r.counter(v, "leaf1", "to-h15", "peak_queue_bytes");
    // dcqcn: "The incast fills leaf1's port to h15 (over a megabyte) until the CNPs cut the
    // senders, and PFC pauses (a few hundred frames) spread it to the spines' queues."
    let v = "dcqcn";
    r.check(
        peak(v) > 1e6,
        "DCQCN: leaf1's port to h15 holds over a megabyte",
        peak(v),
    );
    r.check(
        r.num(v, "cnps") > 0.0,
        "DCQCN: the CNPs cut the senders",
        r.num(v, "cnps"),
    );
    let pauses = r.num(v, "pfc_pause_frames");
    r.check(
        (100.0..1000.0).contains(&pauses),
        "DCQCN: a few hundred PFC frames",
        pauses,
    );
    let spines = r.counters_named(
        v,
        "rx_prio3_pause",
        |n| n.starts_with("spine"),
        |p| p == "to-leaf1",
    );
    r.check(
        spines.iter().any(|x| x.2 > 0.0),
        "DCQCN: leaf1 pauses the spines",
        format!("{spines:?}"),
    );
    let spine_q = max(r
        .counters_named(
            v,
            "peak_queue_bytes",
            |n| n.starts_with("spine"),
            |p| p == "to-leaf1",
        )
        .iter()
        .map(|x| x.2));
    r.check(
        spine_q > 100e3,
        "DCQCN: the spines' queues to leaf1 fill",
        spine_q,
    );
    // hpcc: "The incast port's queue peaks at about 130 KB [15 %] (the first round trip's
    // burst, a tenth of DCQCN's [under 15 %]) and no pause is sent."
    r.about(
        "HPCC: the incast port's queue peaks at about 130 KB",
        peak("hpcc"),
        130e3,
        0.15,
    );
    r.check(
        peak("hpcc") < 0.15 * peak("dcqcn"),
        "HPCC: a tenth of DCQCN's queue",
        format!("{} against {}", peak("hpcc"), peak("dcqcn")),
    );
    r.exactly("HPCC: no pause", r.num("hpcc", "pfc_pause_frames"), 0.0);
    // swift: "no ECN. It keeps a standing queue at its target, a few hundred KB at the incast
    // port".
    r.exactly("Swift: no ECN", r.num("swift", "ecn_marked"), 0.0);
    r.check(
        (100e3..1e6).contains(&peak("swift")),
        "Swift: a few hundred KB at the incast port",
        peak("swift"),
    );
    r.exactly("Swift: no pause", r.num("swift", "pfc_pause_frames"), 0.0);
    // nscc: "no PFC: a few dozen trims [24 to 60], each resent on its NACK (and one more
    // packet the selective ACKs showed lost, reordered by the spraying)".
    let v = "nscc";
    let trims = r.num(v, "trimmed");
    r.check((24.0..60.0).contains(&trims), "NSCC: a few dozen trims", trims);
    r.exactly("NSCC: a NACK for each trim", r.num(v, "nacks"), trims);
    r.exactly(
        "NSCC: each trim resent, and one SACK loss",
        r.num(v, "retransmitted_packets"),
        trims + r.num(v, "sack_losses"),
    );
    r.check(
        r.num(v, "sack_losses") <= 1.0,
        "NSCC: one packet the selective ACKs showed lost",
        r.num(v, "sack_losses"),
    );
    r.exactly("NSCC: no timeout", r.num(v, "rtos"), 0.0);
    r.exactly("NSCC: no PFC", r.num(v, "pfc_pause_frames"), 0.0);
    // "The 6.1 MB for h15 (the incast and h5's permutation flow) take 0.49 ms at line rate
    // [1 %]; the last of them arrives at about 1.15 ms under DCQCN, 0.67 ms HPCC, 0.55 ms Swift
    // and 0.54 ms NSCC [5 % each]."
    for (v, want) in [("dcqcn", 1.15), ("hpcc", 0.67), ("swift", 0.55), ("nscc", 0.54)] {
        let to15: Vec<&Flow> = r.flows_of(v).into_iter().filter(|f| f.dst == "h15").collect();
        let bytes: f64 = to15.iter().map(|f| f.size).sum();
        r.about(&format!("{v}: 6.1 MB for h15"), bytes, 6.1e6, 0.01);
        r.about(
            "they take 0.49 ms at line rate",
            ns(bytes, 100.0),
            0.49 * MS,
            0.01,
        );
        r.about(
            &format!("{v}: the last of h15's bytes arrives at about {want} ms"),
            max(to15.iter().map(|f| f.finish())),
            want * MS,
            0.05,
        );
    }
}

#[test]
fn dac_2node() {
    let r = run("dac-2node", &[], 0);
    // mtu-4096: "its serialization time (payload + 82 B per 4096 B packet at 100 Gb/s) plus
    // 15 ns of cable, plus the ACKs of the reverse flow sharing the wire: about 83 us";
    // mtu-1024: "about 93 us, 11 % more". The sum to 1 %, the rounded times to 2 %.
    let mut fct = HashMap::new();
    for (v, mtu, want) in [("mtu-4096", 4096.0, 83.0), ("mtu-1024", 1024.0, 93.0)] {
        for (src, dst) in [("h0", "h1"), ("h1", "h0")] {
            // The ACKs on this flow's wire are the ones its sender sends for the other flow.
            let acks = r.counter(v, src, "nic", "acks_sent");
            let expect = ns(roce_wire(1e6, mtu), 100.0) + 15.0 + ns(acks * ROCE_ACK_WIRE, 100.0);
            let f = r.flows_of(v).into_iter().find(|f| f.src == src).unwrap();
            r.about(
                &format!("{v}: {src} -> {dst} takes serialization + cable + the reverse ACKs"),
                f.fct(),
                expect,
                0.01,
            );
            r.about(&format!("{v}: about {want} us"), f.fct(), want * US, 0.02);
        }
        r.exactly(&format!("{v}: no drops"), r.num(v, "drops"), 0.0);
        fct.insert(v, r.num(v, "fct_ns.max"));
    }
    r.about(
        "MTU 1024 costs 11 % more",
        fct["mtu-1024"] / fct["mtu-4096"],
        1.11,
        0.01,
    );
    // slow-host-pfc: "the NICs pause each other (tx_prio3_pause / rx_prio3_pause on the h0 and
    // h1 ports): no loss, half rate" (twice the mtu-4096 time, 5 %).
    let v = "slow-host-pfc";
    for (h, p) in [("h0", "to-h1"), ("h1", "to-h0")] {
        for c in ["tx_prio3_pause", "rx_prio3_pause"] {
            r.check(r.counter(v, h, p, c) > 0.0, &format!("{v}: {h} {c}"), 0);
        }
    }
    r.exactly("slow-host-pfc: no loss", r.num(v, "drops"), 0.0);
    r.about(
        "slow-host-pfc: half rate",
        r.num(v, "fct_ns.max") / fct["mtu-4096"],
        2.0,
        0.05,
    );
    // slow-host-lossy: "the NIC's buffer overflows (rx_prio3_discards), and go-back-N resends
    // (retransmitted_packets in summary.json)".
    let v = "slow-host-lossy";
    let discards =
        r.counter(v, "h0", "to-h1", "rx_prio3_discards") + r.counter(v, "h1", "to-h0", "rx_prio3_discards");
    r.check(discards > 0.0, "slow-host-lossy: rx_prio3_discards", discards);
    r.exactly(
        "slow-host-lossy: the drops are the NICs'",
        r.num(v, "drops_by_reason.nic_rx_full"),
        discards,
    );
    r.check(
        r.num(v, "retransmitted_packets") > 0.0,
        "slow-host-lossy: go-back-N resends",
        r.num(v, "retransmitted_packets"),
    );
    // dcqcn-ce: "every 20th: 12 of a flow's 245. Each mark makes the receiver send a CNP
    // (np_cnp_sent; 20 packets take at least 6.7 us, over ConnectX's 4 us minimum)".
    let v = "dcqcn-ce";
    r.about(
        "20 packets take 6.7 us at line rate",
        20.0 * ns(4096.0 + ROCE_OVERHEAD, 100.0),
        6.7 * US,
        0.01,
    );
    for (rx, tx) in [("h1", "h0"), ("h0", "h1")] {
        r.exactly(
            &format!("{v}: {tx} sends 245 packets"),
            r.counter(v, tx, "nic", "data_packets_sent"),
            245.0,
        );
        r.exactly(
            &format!("{v}: {rx} sees 12 marks"),
            r.counter(v, rx, "nic", "np_ecn_marked_roce_packets"),
            12.0,
        );
        r.exactly(
            &format!("{v}: a CNP for each mark"),
            r.counter(v, rx, "nic", "np_cnp_sent"),
            12.0,
        );
        r.exactly(
            &format!("{v}: {tx} handles each CNP"),
            r.counter(v, tx, "nic", "rp_cnp_handled"),
            12.0,
        );
    }
    // "each CNP cuts the sender's rate by alpha/2 (the first to about half [10 %]), and the
    // byte counter and timer bring it back between cuts".
    let rate = r.series(v, "flow_rate_limit_bps", "flow 0");
    let line = rate[0].1;
    let first = rate.iter().find(|x| x.1 < 0.99 * line).unwrap().1;
    r.about(
        "the first CNP cuts the rate to about half",
        first / line,
        0.5,
        0.1,
    );
    r.check(
        rate.windows(2).any(|w| w[1].1 > w[0].1 && w[0].1 < line),
        "the rate comes back between cuts",
        format!("{rate:?}"),
    );
    // "each 1 MB takes about 190 us": 5 %.
    for f in r.flows_of(v) {
        r.about(
            "dcqcn-ce: each 1 MB takes about 190 us",
            f.fct(),
            190.0 * US,
            0.05,
        );
    }
}

#[test]
fn dgx_spark_2node() {
    let r = run("dgx-spark-2node", &[], 0);
    // roce-both-halves: "the two finish together at 2 x 8 MB x 1106/1024 x 8 / 200 Gb/s,
    // 185.2 Gb/s of payload": the formula to 0.05 Gb/s, the run to 0.5 %.
    let t = ns(2.0 * 8e6 * 1106.0 / 1024.0, 200.0);
    let gbps = 2.0 * 8e6 * 8.0 / t;
    r.about("185.2 Gb/s of payload", gbps, 185.2, 0.05 / 185.2);
    for f in r.flows_of("roce-both-halves") {
        r.about(
            "both halves: each 8 MB finishes at the wire's time",
            f.fct(),
            t,
            0.005,
        );
    }
    r.about(
        "both halves: 185.2 Gb/s",
        r.num("roce-both-halves", "goodput_gbps"),
        185.2,
        0.005,
    );
    // "The playbook reports 189.85 Gb/s, 2.5 % above": to 0.2 %.
    r.about(
        "189.85 Gb/s is 2.5 % above",
        189.85 / 185.2 - 1.0,
        0.025,
        0.002 / 0.025,
    );
    // roce-one-half: "its NIC pauses the sender with PFC, and the pair gets half: 92.6 Gb/s".
    let v = "roce-one-half";
    r.check(
        r.num(v, "pfc_pause_frames") > 0.0,
        "one half: the NIC pauses the sender",
        0,
    );
    r.about("one half: 92.6 Gb/s", r.num(v, "goodput_gbps"), 92.6, 0.005);
    // roce-jumbo: "196.1 Gb/s".
    r.about(
        "jumbo: 196.1 Gb/s",
        r.num("roce-jumbo", "goodput_gbps"),
        196.1,
        0.005,
    );
    // "UET ... lossy (no PFC): about 179 and 89 Gb/s, without a drop": 1.5 %.
    for (v, want) in [("uec-both-halves", 179.0), ("uec-one-half", 89.0)] {
        r.about(
            &format!("{v}: about {want} Gb/s"),
            r.num(v, "goodput_gbps"),
            want,
            0.015,
        );
        r.exactly(&format!("{v}: no drop"), r.num(v, "drops"), 0.0);
        r.exactly(&format!("{v}: no PFC"), r.num(v, "pfc_pause_frames"), 0.0);
    }
    // "with no switch nothing marks ECN, so it [DCQCN] never acts here".
    for v in ["roce-both-halves", "roce-one-half", "roce-jumbo"] {
        r.exactly(&format!("{v}: nothing marks ECN"), r.num(v, "ecn_marked"), 0.0);
        r.exactly(&format!("{v}: DCQCN never acts"), r.num(v, "cnps"), 0.0);
    }
}

#[test]
fn ecn_leaf_spine() {
    let r = run("ecn-leaf-spine", &[], 0);
    for v in ["roce", "uec-nscc"] {
        r.exactly(
            &format!("{v}: every flow completes"),
            r.num(v, "flows_completed"),
            r.num(v, "flows_total"),
        );
    }
    // "one ECN ramp for both, so a sweep over `switch.ecn.kmin` moves both at once": a kmin
    // set on the command line changes both variants' marking.
    let k = run("ecn-leaf-spine", &["--set", "switch.ecn.kmin=\"50KB\""], 0);
    for v in ["roce", "uec-nscc"] {
        let (a, b) = (r.num(v, "ecn_marked"), k.num(v, "ecn_marked"));
        k.check(
            a != b,
            &format!("{v}: switch.ecn.kmin moves its marking"),
            format!("{a} marks both ways"),
        );
    }
    // "Each seed draws another random permutation (and so other ECMP collisions for RoCE)."
    let s = run("ecn-leaf-spine", &["--seed", "2"], 0);
    let pairs = |r: &Run| -> Vec<(String, String)> {
        r.flows_of("roce")
            .iter()
            .map(|f| (f.src.clone(), f.dst.clone()))
            .collect()
    };
    s.check(
        pairs(&r) != pairs(&s),
        "each seed draws another permutation",
        "the same pairs",
    );
}

#[test]
fn fat_tree_k4() {
    let v = "fat-tree-k4";
    let r = run(v, &[], 0);
    let f = r.flows_of(v);
    // "the ideal 2 MB/100 Gb/s (171 us with headers and six 1 us links)": the serialization
    // and the links to 2 % (the switches' latency aside), flows.csv's ideal for a cross-pod
    // flow to 1 %.
    let wire = ns(roce_wire(2e6, 4096.0), 100.0) + 6.0 * US;
    r.about(
        "2 MB at 100 Gb/s with headers and six 1 us links",
        wire,
        171.0 * US,
        0.02,
    );
    let ideal = max(f.iter().map(|f| f.ideal_ns));
    r.about("the ideal is 171 us", ideal, 171.0 * US, 0.01);
    // "the few flows whose hashes collide with no other do [within 5 % of the ideal], but
    // most share an uplink ... and take about twice that [at least 1.8 times]".
    let alone = f.iter().filter(|f| f.slowdown() <= 1.05).count();
    let shared = f.iter().filter(|f| f.slowdown() >= 1.8).count();
    r.check(
        (1..=f.len() / 4).contains(&alone),
        "a few flows finish at the ideal",
        alone,
    );
    r.check(
        shared > f.len() / 2,
        "most flows take about twice the ideal",
        shared,
    );
    // "(the busiest uplinks carry two flows' bytes: tx_bytes in counters.csv)": 2 %.
    let busiest = max(r
        .counters_named(v, "tx_bytes", |n| !n.starts_with('h'), |p| !p.starts_with("to-h"))
        .iter()
        .map(|x| x.2));
    r.about(
        "the busiest uplinks carry two flows' bytes",
        busiest,
        2.0 * roce_wire(2e6, 4096.0),
        0.02,
    );
    // "(FCT p50 about 330 us)": 5 %.
    r.about("FCT p50 about 330 us", r.num(v, "fct_ns.p50"), 330.0 * US, 0.05);
}

#[test]
fn fat_tree_k8() {
    let r = run("fat-tree-k8", &[], 0);
    // "per-flow ECMP collisions and PFC for RoCEv2 (thousands of pause frames, slowdown p99
    // about 7 [10 %]: FCT p99 about 1.2 ms [5 %])".
    let v = "roce-pfc-dcqcn";
    let pauses = r.num(v, "pfc_pause_frames");
    r.check(pauses >= 1000.0, "RoCEv2: thousands of pause frames", pauses);
    r.about("RoCEv2: slowdown p99 about 7", r.num(v, "slowdown.p99"), 7.0, 0.1);
    r.about(
        "RoCEv2: FCT p99 about 1.2 ms",
        r.num(v, "fct_ns.p99"),
        1.2 * MS,
        0.05,
    );
    // "spraying, trimming and NSCC for UET (about a hundred trims [50 to 200], no pause,
    // slowdown p99 about 1.2 [5 %]: FCT p99 about 0.21 ms [5 %])".
    let v = "uec-oblivious-nscc";
    let trims = r.num(v, "trimmed");
    r.check(
        (50.0..=200.0).contains(&trims),
        "UET: about a hundred trims",
        trims,
    );
    r.exactly("UET: no pause", r.num(v, "pfc_pause_frames"), 0.0);
    r.about("UET: slowdown p99 about 1.2", r.num(v, "slowdown.p99"), 1.2, 0.05);
    r.about(
        "UET: FCT p99 about 0.21 ms",
        r.num(v, "fct_ns.p99"),
        0.21 * MS,
        0.05,
    );
}
