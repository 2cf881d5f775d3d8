//! UET loss recovery (UE 1.0 PDS RUD) through whole runs: losses found from selective ACKs
//! are resent without a timeout, the retransmission timeout follows the measured round trip,
//! RCCC keeps granting across lost grants and requests, and a PDC that cannot make progress
//! gives up with a reason.

use crate::common::*;

/// UET wire bytes of a data packet with `payload` bytes: 102 B of headers in the frame
/// (Eth 14 + FCS 4 + IPv4 20 + UDP 8 + PDS 12 + SES 44) and 20 B of preamble + IFG.
fn uet_wire(payload: u64) -> u64 {
    payload + 102 + 20
}

/// One UET flow of `size` across a dumbbell whose host cables lose a share `loss` of frames.
fn lossy(cc: &str, size: &str, loss: f64) -> String {
    format!(
        r#"
        [topology]
        kind = "dumbbell"
        hosts_per_side = 1
        host_link = {{ rate = "100Gbps", delay = "1us", loss = {loss} }}
        bottleneck_link = {{ rate = "100Gbps", delay = "1us" }}
        [nic]
        transport = "uet"
        cc = {{ kind = "{cc}" }}
        [run]
        max_time = "20ms"
        [[flow]]
        src = 0
        dst = 1
        size = "{size}"
        "#
    )
}

#[test]
fn losses_found_from_selective_acks_are_resent_without_a_timeout() {
    // 1 % of frames lost each way, seeds 1-5: lost data packets are found by the packets
    // after them being acknowledged, so timeouts stay few (only a loss no later packet
    // reveals, at the flow's tail, waits for one, or for a loss probe under NSCC), and a run
    // that needed neither runs at about (1 - p) of line rate.
    let wire = 2_000_000f64.div_euclid(4096.0).ceil() * uet_wire(4096) as f64;
    let ideal = tx_ns(wire as u64, 100.0) + 3.0 * 1000.0;
    for cc in ["none", "nscc", "rccc"] {
        let mut without_timeout = 0;
        for seed in 1..=5 {
            let r = run(&format!("seed = {seed}\n{}", lossy(cc, "2MB", 0.01))).remove(0);
            let s = &r.summary;
            assert_eq!(s.flows_completed, 1, "{cc} seed {seed}: {}", r.flows[0].status);
            assert!(s.sack_losses >= 5, "{cc} seed {seed}: losses found from SACKs");
            assert!(
                s.rtos <= 3,
                "{cc} seed {seed}: {} timeouts; lost data is resent when found",
                s.rtos
            );
            without_timeout += (s.rtos == 0) as u32;
            if s.rtos == 0 && s.probes == 0 {
                let fct = r.flows[0].fct_ns.unwrap();
                assert!(
                    fct <= 1.2 * ideal / (1.0 - 0.01),
                    "{cc} seed {seed}: {fct} ns against {ideal} ns at line rate"
                );
            }
        }
        assert!(
            without_timeout >= 2,
            "{cc}: {without_timeout} of 5 runs without a timeout"
        );
    }
}

/// One UET NSCC flow of 2 MB over a 3 m 100G cable (back to back) losing 1 % of frames each
/// way, with SLEEK's loss probes on or off.
fn short_lossy_cable(seed: u64, probes: bool) -> String {
    format!(
        r#"
        seed = {seed}
        [topology]
        kind = "back-to-back"
        link = {{ rate = "100Gbps", cable = "3m", loss = 0.01 }}
        [nic]
        transport = "uet"
        cc = {{ kind = "nscc", loss_probes = {probes} }}
        [run]
        max_time = "50ms"
        [[flow]]
        src = 0
        dst = 1
        size = "2MB"
        "#
    )
}

#[test]
fn on_a_short_lossy_cable_nscc_finds_a_lost_tail_with_a_probe_not_a_timeout() {
    // A 3 m cable's BDP is under one packet, so NSCC's window holds about two: a loss near
    // the window's end has no later packets to reveal it in the SACKs. SLEEK's probe (after
    // three base RTTs without an ACK) brings back the receiver's view with no queueing
    // behind it, so the missing packet is resent at once, not after the timeout.
    let wire = 2_000_000f64.div_euclid(4096.0).ceil() * uet_wire(4096) as f64;
    let ideal = tx_ns(wire as u64, 100.0) / (1.0 - 0.01);
    let (mut rtos_without, mut probe_losses) = (0, 0);
    for seed in 1..=5 {
        let r = run(&short_lossy_cable(seed, true)).remove(0);
        let fct = r.flows[0].fct_ns.unwrap();
        probe_losses += r.summary.probe_losses;
        assert!(r.summary.rtos <= 2, "seed {seed}: {} timeouts", r.summary.rtos);
        assert!(
            fct <= 1.2 * ideal,
            "seed {seed}: {fct} ns against {ideal} ns at (1 - p) of line rate"
        );
        let r = run(&short_lossy_cable(seed, false)).remove(0);
        assert_eq!(r.summary.probes, 0, "loss_probes = false sends none");
        rtos_without += r.summary.rtos;
    }
    assert!(
        probe_losses >= 5,
        "probes found {probe_losses} losses over five seeds"
    );
    assert!(
        rtos_without > 10,
        "without probes the tail losses wait for the timer: {rtos_without}"
    );
}

#[test]
fn a_deep_buffer_rccc_incast_times_nothing_out() {
    // 16 senders into one 100G port of a 42 MB Spectrum-2: the queue lengthens every round
    // trip far beyond the unloaded one, but nothing is lost, so nothing may be resent; the
    // last flow finishes as the link allows: N S_wire 8 / C.
    let (n, size) = (16u64, 4_000_000u64);
    let toml = format!(
        r#"
        [topology]
        kind = "star"
        hosts = {}
        host_link = {{ rate = "100Gbps", delay = "1us" }}
        [switch]
        asic = "spectrum2"
        [nic]
        transport = "uet"
        cc = {{ kind = "rccc" }}
        [[workload]]
        kind = "incast"
        size = "{size}B"
        "#,
        n + 1
    );
    let r = run(&toml).remove(0);
    assert_eq!(r.summary.flows_completed as u64, n);
    assert_eq!((r.summary.rtos, r.summary.retransmitted_packets), (0, 0));
    let packets = size.div_ceil(4096);
    let last = size - (packets - 1) * 4096;
    let wire = n * ((packets - 1) * uet_wire(4096) + uet_wire(last));
    assert_close(
        r.summary.fct_ns.max.unwrap(),
        tx_ns(wire, 100.0),
        0.0,
        0.03,
        "last completion",
    );
}

#[test]
fn the_timeout_grows_with_the_measured_round_trip() {
    // 8 senders at line rate (no congestion control) into one 100G port of a deep buffer:
    // the queue grows to about 7/8 of the 16 MB sent, a millisecond of queueing delay, fifty
    // times the 20 us floor of the timeout. Nothing is lost, so a timeout that follows the
    // measured round trip never fires; a fixed 20 us one would resend what is only queued.
    let toml = |rto: &str| {
        format!(
            r#"
            [topology]
            kind = "star"
            hosts = 9
            host_link = {{ rate = "100Gbps", delay = "1us" }}
            [switch]
            asic = "spectrum2"
            [nic]
            transport = "uet"
            {rto}
            [[workload]]
            kind = "incast"
            size = "2MB"
            "#
        )
    };
    let adaptive = run(&toml("rto = \"20us\"")).remove(0);
    assert_eq!(adaptive.summary.rtos, 0, "the queue delays ACKs; nothing is lost");
    assert_eq!(adaptive.summary.retransmitted_packets, 0);
}

#[test]
fn an_rccc_sender_that_lost_its_grants_asks_again_and_finishes() {
    // Heavy loss on both host cables: grants, requests and data are lost, and every loss is
    // made good: the credit totals resynchronise, a sender left without credit asks again.
    let r = run(&lossy("rccc", "2MB", 0.05)).remove(0);
    assert_eq!(r.summary.flows_completed, 1, "{}", r.flows[0].status);
    assert!(r.summary.credit_requests > 0, "a starved sender asks again");
    assert!(r.summary.rtos <= r.summary.retransmitted_packets);
}

#[test]
fn a_sender_cut_off_for_good_gives_up_after_its_timeout_retries() {
    let toml = format!(
        "{}\n[[fault]]\nlink = [\"h1\", \"right\"]\nat = \"10us\"\nkind = \"down\"\n",
        lossy("nscc", "8MB", 0.0).replace("max_time = \"20ms\"", "max_time = \"1s\"")
    );
    let r = run_unchecked(&toml).remove(0);
    assert_eq!(r.summary.flows_completed, 0);
    assert!(
        r.flows[0]
            .status
            .to_string()
            .contains("retransmission timer expired 6 times in a row"),
        "{}",
        r.flows[0].status
    );
    // The run ends by itself when nothing more can happen, and says why its flow did not
    // finish (exit 7, not 0).
    assert_eq!(r.summary.ending, models::report::Ending::Unfinished);
    assert_eq!(
        r.summary.incomplete.as_deref(),
        Some(
            "1 of 1 flows unfinished: 1 gave up after nic.rto_retries timeouts (flows.csv has each one's reason)"
        )
    );
    assert_eq!(r.summary.goodput_gbps, None, "nothing completed: no goodput");
    // The timer expired six times (nic.rto_retries + 1); `rtos` counts those that resent
    // something, each at least one packet.
    assert_eq!(counter(&r, "h0", "nic", "local_ack_timeout_err"), 6);
    assert!((1..=5).contains(&r.summary.rtos), "{}", r.summary.rtos);
    assert!(r.summary.rtos <= r.summary.retransmitted_packets);
}

#[test]
fn nscc_on_a_parking_lot_shares_each_link_fairly_among_its_one_hop_flows_and_starves_the_long_one() {
    // Three switches in a chain, 100G everywhere: one flow crosses both chain links, two
    // one-hop flows cross each. Max-min gives every flow C/3. NSCC measures each flow's delay
    // against one network-wide target: the one-hop flows hold their queue near it, so the
    // long flow, which sums both queues, always sees delay over the target with ECN, and is
    // cut once per base RTT while its round trip spans several (UE 1.0 CMS quadrants;
    // uet-htsim `updateCwndOnAck_NSCC`, `multiplicative_decrease`). It keeps moving, far below
    // C/3: uet-htsim on the same chain gives it 2.36 Gb/s over these 3 ms
    // (benches/htsim-drivers/parking_lot.cpp). Flows on one path share equally: each starts from its own path's base RTT.
    let toml = r#"
        [topology]
        kind = "chain"
        switches = 3
        hosts_per_switch = 3
        host_link = { rate = "100Gbps", delay = "1us" }
        chain_link = { rate = "100Gbps", delay = "1us" }
        [switch]
        ecn = { kmin = "20KB", kmax = "80KB", pmax = 1.0 }
        trim = { threshold = "200KB" }
        [nic]
        transport = "uet"
        cc = { kind = "nscc" }
        [run]
        max_time = "3ms"
        [[flow]]
        src = "h0"
        dst = "h6"
        size = "100MB"
        [[flow]]
        src = "h1"
        dst = "h3"
        size = "100MB"
        [[flow]]
        src = "h2"
        dst = "h4"
        size = "100MB"
        [[flow]]
        src = "h4"
        dst = "h7"
        size = "100MB"
        [[flow]]
        src = "h5"
        dst = "h8"
        size = "100MB"
        "#;
    let s = scenario(toml);
    let mut sim = models::sim::Sim::new(&s, &s.variants[0]);
    sim.run();
    let gbps: Vec<f64> = sim
        .flows
        .iter()
        .map(|f| f.received_bytes as f64 * 8.0 / 3e-3 / 1e9)
        .collect();
    let (long, short) = (gbps[0], &gbps[1..]);
    let jain = short.iter().sum::<f64>().powi(2) / (4.0 * short.iter().map(|x| x * x).sum::<f64>());
    assert!(jain >= 0.98, "one-hop flows {short:?}: Jain {jain}");
    let link_a = long + short[0] + short[1];
    assert!(
        link_a >= 0.95 * 100.0 * 4096.0 / 4218.0,
        "link A carries {link_a} Gb/s"
    );
    assert!(
        long > 0.5 && long < 100.0 / 3.0 / 4.0,
        "the long flow gets {long} Gb/s"
    );
}

#[test]
fn timeouts_while_pfc_holds_the_sender_count_once_their_resend_leaves() {
    // The receiver storms PFC on the flow's lossless priority from 20 to 100 us: the switch
    // holds the flow's packets, its ingress passes XOFF and pauses the sender. The timer
    // expires during the pause (and again, backed off) with nothing the sender may resend;
    // the resend leaves once the pause lifts. `rtos` counts timeouts that resent data: one,
    // whatever the timer did meanwhile (the NIC's `local_ack_timeout_err` counts each expiry).
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "100Gbps", cable = "3m" }
        [switch]
        asic = "trident3"
        [nic]
        transport = "uet"
        cc = { kind = "nscc" }
        [pfc]
        priorities = [3]
        [[fault]]
        link = ["h1", "sw0"]
        kind = "pfc-storm"
        priority = 3
        at = "20us"
        until = "100us"
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "8MB"
        prio = 3
    "#;
    let r = run(toml).remove(0);
    assert_eq!(r.summary.flows_completed, 1, "{}", r.flows[0].status);
    let expiries = counter(&r, "h0", "nic", "local_ack_timeout_err");
    assert!(
        expiries >= 2,
        "the 80 us pause outlasts the timer twice: {expiries}"
    );
    assert_eq!(
        r.summary.rtos, 1,
        "one resend after the pause, {expiries} expiries"
    );
    assert!(r.summary.retransmitted_packets >= 1);
}
