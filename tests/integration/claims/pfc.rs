//! Claims of pfc-deadlock, pfc-incast, pfc-watchdog, rail-cluster, sn3700c-incast.

use super::*;

#[test]
fn pfc_deadlock() {
    // A run stopped by a deadlock exits 6.
    let r = run("pfc-deadlock", &[], 6);
    let cycle = [
        "sw0 to-sw1",
        "sw1 to-sw2",
        "sw2 to-sw3",
        "sw3 to-sw4",
        "sw4 to-sw0",
    ];
    // roce-pfc: "`sim` finds the cycle, reports it (summary.json `pfc_deadlocks`: the ports in
    // order, the priority, since when) and stops the run ...; the flows are listed as
    // unfinished." roce-pfc-continue: the same, reported and left to run to `run.max_time`.
    for v in ["roce-pfc", "roce-pfc-continue"] {
        let d = &r.v(v)["pfc_deadlocks"][0];
        let ports: Vec<&str> = d["cycle"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        r.check(
            ports == cycle,
            &format!("{v}: the cycle's ports in order"),
            format!("{ports:?}"),
        );
        r.exactly(
            &format!("{v}: on priority 3"),
            d["priority"].as_f64().unwrap(),
            3.0,
        );
        r.check(
            d["since_ns"].as_f64().is_some(),
            &format!("{v}: since when"),
            &d["since_ns"],
        );
        r.exactly(
            &format!("{v}: no flow finishes"),
            r.num(v, "flows_completed"),
            0.0,
        );
        for f in r.flows_of(v) {
            r.check(
                f.status.starts_with("unfinished"),
                &format!("{v}: flows listed as unfinished"),
                &f.status,
            );
        }
    }
    let stop = r.v("roce-pfc")["incomplete"].as_str().unwrap();
    r.check(
        stop.contains("PFC deadlock"),
        "roce-pfc: the deadlock stops the run",
        stop,
    );
    let cont = r.v("roce-pfc-continue")["incomplete"].as_str().unwrap();
    r.check(
        cont.contains("run.max_time"),
        "roce-pfc-continue: runs to run.max_time",
        cont,
    );
    r.exactly(
        "roce-pfc-continue: runs to 2 ms",
        r.num("roce-pfc-continue", "simulated_ns"),
        2.0 * MS,
    );
    // "no data moves after the deadlock (compare the delivered bytes in flows.csv)": each
    // flow delivered no more by 2 ms than when the deadlock stopped the other run.
    for (a, b) in r.flows_of("roce-pfc").iter().zip(r.flows_of("roce-pfc-continue")) {
        r.exactly(
            "roce-pfc-continue: no data moves after the deadlock",
            b.delivered(),
            a.delivered(),
        );
    }
    // uet-lossy: "every flow finishes, at twice its ideal as each ring cable carries two flows
    // (about 0.66 ms) [3 %]. NSCC's ECN marks keep the queues under the 100 KB trim threshold
    // here: no packet is trimmed."
    let v = "uet-lossy";
    r.exactly("UET: every flow finishes", r.num(v, "flows_completed"), 5.0);
    for f in r.flows_of(v) {
        r.about("UET: each flow at twice its ideal", f.slowdown(), 2.0, 0.03);
        r.about("UET: about 0.66 ms", f.fct(), 0.66 * MS, 0.03);
    }
    r.exactly("UET: nothing pauses a cable", r.num(v, "pfc_pause_frames"), 0.0);
    r.check(r.num(v, "ecn_marked") > 0.0, "UET: NSCC's ECN marks", 0);
    r.exactly("UET: no packet is trimmed", r.num(v, "trimmed"), 0.0);
}

#[test]
fn pfc_incast() {
    let r = run("pfc-incast", &[], 0);
    let senders = (1..16).map(|h| format!("h{h}"));
    // pfc-only: "it pauses all fifteen senders (tx_prio3_pause on the switch's ports,
    // rx_prio3_pause on the NICs): no drops, but the senders spend most of the run paused
    // (over 80 % of it)".
    let v = "pfc-only";
    let run_ns = r.num(v, "fct_ns.max");
    for h in senders.clone() {
        r.check(
            r.counter(v, "sw0", &format!("to-{h}"), "tx_prio3_pause") > 0.0,
            &format!("PFC only: the switch pauses {h}"),
            0,
        );
        let paused = r.counter(v, &h, "to-sw0", "rx_prio3_pause_duration") * US;
        r.check(
            paused > 0.8 * run_ns,
            &format!("PFC only: {h} paused over 80 % of the run"),
            format!("{paused} of {run_ns} ns"),
        );
    }
    r.exactly("PFC only: no drops", r.num(v, "drops"), 0.0);
    // "15 x 2 MB at 100 Gb/s is the ideal (2.45 ms in wire bytes) [0.5 %], which PFC alone
    // reaches [2 %]."
    let ideal = 15.0 * ns(roce_wire(2e6, 4096.0), 100.0);
    r.about(
        "15 x 2 MB at 100 Gb/s: 2.45 ms in wire bytes",
        ideal,
        2.45 * MS,
        0.005,
    );
    r.about("PFC alone reaches the ideal", run_ns, ideal, 0.02);
    // pfc-dcqcn: "CNPs (np_cnp_sent at the receiver, rp_cnp_handled at the senders) ... the
    // switch spends a small fraction of the time in XOFF (tx_prio3_pause_duration, under
    // 10 %), at the price of some throughput (about 75 against 98 Gb/s [3 %])".
    let v = "pfc-dcqcn";
    r.check(
        r.counter(v, "h0", "nic", "np_cnp_sent") > 0.0,
        "DCQCN: the receiver sends CNPs",
        0,
    );
    let run_ns = r.num(v, "fct_ns.max");
    for h in senders {
        r.check(
            r.counter(v, &h, "nic", "rp_cnp_handled") > 0.0,
            &format!("DCQCN: {h} handles CNPs"),
            0,
        );
        let xoff = r.counter(v, "sw0", &format!("to-{h}"), "tx_prio3_pause_duration") * US;
        r.check(
            xoff < 0.1 * run_ns,
            &format!("DCQCN: the switch holds {h} in XOFF under 10 % of the time"),
            format!("{xoff} of {run_ns} ns"),
        );
    }
    r.about("DCQCN: about 75 Gb/s", r.num(v, "goodput_gbps"), 75.0, 0.03);
    r.about(
        "PFC only: about 98 Gb/s",
        r.num("pfc-only", "goodput_gbps"),
        98.0,
        0.03,
    );
    r.check(
        run_ns >= ideal,
        "DCQCN: the receiver link is the bottleneck",
        run_ns,
    );
}

#[test]
fn pfc_watchdog() {
    let r = run("pfc-watchdog", &[], 0);
    let flow = |v: &str, src: &str| r.flows_of(v).into_iter().find(|f| f.src == src).unwrap().clone();
    let ideal = flow("off", "h0").ideal_ns;
    r.about("h0's ideal is 0.65 ms", ideal, 0.65 * MS, 0.01);
    // off and alert: "the queue to h1 sits out the storm, and the pause spreads back to h0:
    // h0's flow takes its ideal (0.65 ms) plus the storm's 350 us" [2 %].
    for v in ["off", "alert"] {
        r.about(
            &format!("{v}: h0's flow takes its ideal plus the storm"),
            flow(v, "h0").fct(),
            ideal + 350.0 * US,
            0.02,
        );
        r.check(
            r.counter(v, "h0", "to-sw0", "rx_prio3_pause") > 0.0,
            &format!("{v}: the pause spreads back to h0"),
            0,
        );
    }
    // alert: "with the storm counted (`show pfcwd stats` in sonic_counters.csv)".
    let mut sc = r.sonic_counters();
    let detected: Vec<(String, f64)> = sc
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[4] == "show pfcwd stats" && &x[6] == "STORM DETECTED")
        .map(|x| (x[0].to_string(), x[7].parse().unwrap()))
        .collect();
    for v in ["alert", "forward", "drop"] {
        r.check(
            detected.iter().any(|x| x.0 == v && x.1 >= 1.0),
            &format!("{v}: show pfcwd stats counts the storm"),
            format!("{detected:?}"),
        );
    }
    // forward: "after 20 us the switch ignores h1's PFC ...; h0's flow finishes almost as if
    // there were no storm (within 10 % of its ideal)". events.csv: "pfcwd_storm and
    // pfcwd_restore events".
    let mut ev = r.csv(
        "events.csv",
        &["variant", "time_ns", "node", "port", "prio", "flow", "event"],
    );
    let wd: Vec<(String, f64, String)> = ev
        .records()
        .map(|x| x.unwrap())
        .filter(|x| x[6].starts_with("pfcwd"))
        .map(|x| (x[0].to_string(), x[1].parse().unwrap(), x[6].to_string()))
        .collect();
    for v in ["alert", "forward", "drop"] {
        for e in ["pfcwd_storm", "pfcwd_restore"] {
            r.check(
                wd.iter().any(|x| x.0 == v && x.2 == e),
                &format!("{v}: events.csv has {e}"),
                format!("{wd:?}"),
            );
        }
        // The storm starts at 50 us; detected 20 us later (and the PFC frame's hop, 2 us).
        let at = wd.iter().find(|x| x.0 == v && x.2 == "pfcwd_storm").unwrap().1;
        r.check(
            (70.0 * US..72.0 * US).contains(&at),
            &format!("{v}: the watchdog acts 20 us into the storm"),
            at,
        );
    }
    r.check(
        wd.iter().all(|x| x.0 != "off"),
        "off: no watchdog",
        format!("{wd:?}"),
    );
    let fwd = flow("forward", "h0").fct();
    r.check(
        fwd <= 1.1 * ideal,
        "forward: h0's flow within 10 % of its ideal",
        fwd,
    );
    // drop: "the queue's frames, and what arrives for it, are dropped until the restore;
    // RoCEv2 retransmits after it."
    let v = "drop";
    let d = r.num(v, "drops_by_reason.pfc_watchdog");
    r.check(d > 0.0, "drop: the watchdog drops the queue's frames", d);
    r.check(
        r.num(v, "retransmitted_packets") >= d,
        "drop: RoCEv2 retransmits",
        r.num(v, "retransmitted_packets"),
    );
    r.exactly("drop: every flow completes", r.num(v, "flows_completed"), 2.0);
    // "h2 -> h3 ... compare its FCT, at its ideal in every variant" [1 %].
    for v in ["off", "alert", "forward", "drop"] {
        r.about(
            &format!("{v}: h2 -> h3 at its ideal"),
            flow(v, "h2").slowdown(),
            1.0,
            0.01,
        );
    }
}

#[test]
fn rail_cluster() {
    let r = run("rail-cluster", &[], 0);
    let (n, size) = (64.0, 64.0 * 1024.0 * 1024.0);
    // "It runs at about 2(n-1)/n x S / (8 x 100G) = 1.32 ms [0.5 %] (about 1.4 ms with headers
    // and hops [5 %])". "The tree all-reduce ... runs at one NIC's rate (busbw about 100 Gb/s
    // [10 %], seven to eight times the ring's time [6.5 to 8.5])".
    let ideal = 2.0 * (n - 1.0) / n * ns(size, 800.0);
    r.about("2(n-1)/n x S / (8 x 100G) = 1.32 ms", ideal, 1.32 * MS, 0.005);
    for v in ["roce-dcqcn", "uec-nscc"] {
        let ring = r.job(v, "ring")["time_ns"].as_f64().unwrap();
        r.check(
            ring >= ideal,
            &format!("{v}: the ring is no faster than the ideal"),
            ring,
        );
        r.about(&format!("{v}: the ring about 1.4 ms"), ring, 1.4 * MS, 0.05);
        let tree = r.job(v, "tree");
        r.about(
            &format!("{v}: the tree's busbw about 100 Gb/s"),
            tree["busbw_gbps"].as_f64().unwrap(),
            100.0,
            0.1,
        );
        let x = tree["time_ns"].as_f64().unwrap() / ring;
        r.check(
            (6.5..=8.5).contains(&x),
            &format!("{v}: the tree takes seven to eight times the ring's time"),
            x,
        );
    }
}

#[test]
fn sn3700c_incast() {
    let r = run("sn3700c-incast", &[], 0);
    let peak = |v: &str| r.counter(v, "sw0", "to-h0", "peak_queue_bytes");
    // pfc-only: "the congested queue grows to megabytes (...: about 40 MB [5 %]) before the
    // dynamic threshold makes the switch pause senders (pfc_pause_frames)".
    r.about(
        "PFC only: the queue grows to about 40 MB",
        peak("pfc-only"),
        40e6,
        0.05,
    );
    r.check(
        r.num("pfc-only", "pfc_pause_frames") > 0.0,
        "PFC only: the switch pauses senders",
        0,
    );
    // pfc-dcqcn: "the switch never pauses, but the queue still grows to megabytes: about 16 MB
    // in the first 150 us [10 %], ... once that has drained [under 1 MB] the rates climb back
    // together and overshoot, building it again (to about 34 MB [10 %])".
    let v = "pfc-dcqcn";
    r.exactly(
        "DCQCN: the switch never pauses",
        r.num(v, "pfc_pause_frames"),
        0.0,
    );
    let q = r.series(v, "queue_bytes", "sw0 to-h0");
    let (t1, first) = q
        .iter()
        .filter(|x| x.0 <= 150.0 * US)
        .fold((0.0, 0.0), |a, x| if x.1 > a.1 { *x } else { a });
    r.about("DCQCN: about 16 MB in the first 150 us", first, 16e6, 0.1);
    let (t2, _) = q.iter().fold((0.0, 0.0), |a, x| if x.1 > a.1 { *x } else { a });
    let low = min(q.iter().filter(|x| x.0 > t1 && x.0 < t2).map(|x| x.1));
    r.check(low < 1e6, "DCQCN: the first queue drains before the second", low);
    r.about("DCQCN: the queue builds again to about 34 MB", peak(v), 34e6, 0.1);
    // "The overshoot costs some throughput (about 91 against 98 Gb/s [3 %])."
    r.about("DCQCN: about 91 Gb/s", r.num(v, "goodput_gbps"), 91.0, 0.03);
    r.about(
        "PFC only: about 98 Gb/s",
        r.num("pfc-only", "goodput_gbps"),
        98.0,
        0.03,
    );
}
