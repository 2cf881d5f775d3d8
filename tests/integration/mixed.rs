//! RoCEv2 and UET on one fabric (`nic.class`), and the switch's scheduler between classes.

use crate::common::*;

/// Two 4 MB flows into h2 through one switch egress at 100G, h0's on priority 3 and h1's on
/// priority 1, line rate (no congestion control), a deep lossy buffer.
fn two_classes(scheduler: &str) -> Vec<models::report::VariantReport> {
    run(&format!(
        r#"
        [topology]
        kind = "star"
        hosts = 3
        host_link = {{ rate = "100Gbps", delay = "500ns" }}
        [switch]
        buffer = "64MB"
        {scheduler}
        [nic]
        mtu = "4096B"
        ack_every = 64
        [[flow]]
        src = "h0"
        dst = "h2"
        size = "4MB"
        prio = 3
        [[flow]]
        src = "h1"
        dst = "h2"
        size = "4MB"
        prio = 1
        "#
    ))
}

#[test]
fn dwrr_shares_an_egress_by_weight_and_strict_priority_does_not() {
    // Both queues backlogged at the egress to h2 (200G arrive for 100G). DRR's share of a
    // backlogged queue is its weight over the sum: with 75:25 the class-3 flow gets 3/4 of
    // B, finishing at S/(3B/4) = 4/3 S/B; the class-1 flow has then sent S/3 and sends the
    // rest alone: 2 S/B. Strict priority: class 3 alone first (S/B), class 1 after (2 S/B).
    let s = 4_000_000u64;
    let t = tx_ns(roce_wire(4096) * s.div_ceil(4096), 100.0);
    let fct = |r: &models::report::VariantReport, id: usize| r.flows[id].fct_ns.unwrap();
    let dwrr = two_classes("scheduler = { dwrr = { 3 = 75, 1 = 25 } }").remove(0);
    assert_close(fct(&dwrr, 0), 4.0 / 3.0 * t, 0.0, 0.02, "DWRR 75 % class");
    assert_close(fct(&dwrr, 1), 2.0 * t, 0.0, 0.02, "DWRR 25 % class");
    let strict = two_classes("").remove(0);
    assert_close(fct(&strict, 0), t, 0.0, 0.02, "strict: the higher class alone");
    assert_close(
        fct(&strict, 1),
        2.0 * t,
        0.0,
        0.02,
        "strict: the lower class after it",
    );
}

#[test]
fn one_run_carries_both_transports_each_in_its_class() {
    let reports = run(&std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/mixed-fabric.toml"),
    )
    .unwrap()
    .replace(
        "name = \"mixed-fabric\"",
        "name = \"mixed-fabric\"\nrun.max_time = \"20ms\"",
    ));
    let mixed = &reports[0];
    assert_eq!(mixed.summary.name, "mixed-dwrr");
    // Both tenants' jobs completed, every invariant held (run checks them).
    assert_eq!(mixed.summary.jobs.len(), 2);
    assert!(mixed.summary.jobs.iter().all(|j| j.iterations_completed == 1));
    // UET's flows sprayed (REPS changes entropy between packets); RoCEv2's never do: the
    // all-RoCEv2 variant has none.
    assert!(mixed.summary.ev_changes > 0);
    assert_eq!(reports[2].summary.ev_changes, 0);
}

#[test]
fn pfc_pauses_only_the_rocev2_class_and_trimming_cuts_only_uet() {
    // An 8-to-1 incast, four RoCEv2 senders on lossless priority 3 and four UET senders on
    // lossy priority 1, into one 100G port: the RoCEv2 class fills its PG past XOFF and is
    // paused; the UET class is never paused, and its packets over the trim threshold are
    // cut to headers (RoCEv2 packets are not trimmable).
    let mut toml = String::from(
        r#"
        [topology]
        kind = "star"
        hosts = 9
        host_link = { rate = "100Gbps", delay = "500ns" }
        [pfc]
        priorities = [3]
        [switch]
        buffer = "4MB"
        trim = { threshold = "100KB" }
        [nic]
        mtu = "4096B"
        class = { prio = 1, transport = "uet", cc = { kind = "nscc" }, lb = { kind = "oblivious" } }
        "#,
    );
    for (h, prio) in [(0, 3), (1, 3), (2, 3), (3, 3), (4, 1), (5, 1), (6, 1), (7, 1)] {
        toml += &format!("[[flow]]\nsrc = \"h{h}\"\ndst = \"h8\"\nsize = \"2MB\"\nprio = {prio}\n");
    }
    let r = run(&toml).remove(0);
    assert_eq!(r.summary.flows_completed, 8);
    let sum = |name: &str| counter_total(&r, name);
    assert!(
        sum("tx_prio3_pause") > 0 || sum("rx_prio3_pause") > 0,
        "the RoCEv2 class was paused"
    );
    assert_eq!(
        sum("tx_prio1_pause") + sum("rx_prio1_pause"),
        0,
        "the UET class never is"
    );
    assert!(r.summary.trimmed > 0, "UET packets were trimmed");
    assert_eq!(
        r.summary.drops, 0,
        "lossless RoCEv2 lost nothing, trimmed UET nothing whole"
    );
    assert!(r.flows[..4].iter().all(|f| f.status.is_completed()));
}

#[test]
fn a_class_must_be_the_other_transport() {
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "100Gbps", delay = "1us" }
        [nic]
        class = { prio = 1, transport = "roce" }
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "1MB"
    "#;
    let e = models::scenario::parse(toml, "t.toml", "t", &Default::default())
        .expect_err("same transport twice")
        .to_string();
    assert!(e.contains("nic.class.transport"), "{e}");
}
