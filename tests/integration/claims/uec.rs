//! Claims of uec-incast, victim-flow, websearch-load, ber-dac, llr-ber.

use super::*;

#[test]
fn uec_incast() {
    let r = run("uec-incast", &[], 0);
    // "The UET variants finish near the ideal 31 x 1 MB at 100 Gb/s = 2.54 ms [0.5 %; near:
    // within 3 %]. RoCEv2 takes about 30 % longer [0.05]".
    let ideal = 31.0 * ns(roce_wire(1e6, 4096.0), 100.0);
    r.about("31 x 1 MB at 100 Gb/s = 2.54 ms", ideal, 2.54 * MS, 0.005);
    for v in ["uec-nscc", "uec-rccc"] {
        let last = r.num(v, "fct_ns.max");
        r.check(
            last >= 0.999 * ideal && last <= 1.03 * ideal,
            &format!("{v}: finishes near the ideal"),
            last,
        );
    }
    let roce = r.num("roce-pfc-dcqcn", "fct_ns.max");
    r.about(
        "RoCEv2 takes about 30 % longer",
        roce / r.num("uec-nscc", "fct_ns.max"),
        1.3,
        0.05 / 1.3,
    );
    // roce-pfc-dcqcn: "the switch pauses the senders (pfc_pause_frames), DCQCN slows them on
    // CNPs"; "PFC holds the receiver's queue near 1.35 MB [median of its samples over 100 KB,
    // 5 %], over 100 us of delay in DCQCN's loop ...; the port idles [under a tenth busy] for a
    // few hundred microseconds [200 us or more] while the rates climb back".
    let v = "roce-pfc-dcqcn";
    r.check(
        r.num(v, "pfc_pause_frames") > 0.0,
        "RoCEv2: the switch pauses the senders",
        0,
    );
    r.check(r.num(v, "cnps") > 0.0, "RoCEv2: DCQCN slows them on CNPs", 0);
    let q = r.series(v, "queue_bytes", "sw0 to-h0");
    let held = median(q.iter().filter(|x| x.1 > 100e3).map(|x| x.1).collect());
    r.about("RoCEv2: PFC holds the queue near 1.35 MB", held, 1.35e6, 0.05);
    r.check(
        ns(held, 100.0) > 100.0 * US,
        "RoCEv2: over 100 us of delay",
        ns(held, 100.0),
    );
    let busy = r.series(v, "tx_utilisation", "sw0 to-h0");
    let step = busy[1].0 - busy[0].0;
    let (mut idle, mut longest) = (0.0, 0.0_f64);
    for x in &busy {
        idle = if x.1 < 0.1 { idle + step } else { 0.0 };
        longest = longest.max(idle);
    }
    r.check(
        longest >= 200.0 * US,
        "RoCEv2: the port idles for a few hundred microseconds",
        longest,
    );
    // uec-nscc: "the first windows overflow the queue, which trims (trims in the table); each
    // trimmed header comes back as a NACK and the sender resends that one packet at once, with
    // no timeout (rtos = 0 in summary.json)".
    let v = "uec-nscc";
    let trims = r.num(v, "trimmed");
    r.check(trims > 0.0, "NSCC: the queue trims", trims);
    r.exactly("NSCC: a NACK for each trim", r.num(v, "nacks"), trims);
    r.exactly(
        "NSCC: each trimmed packet resent",
        r.num(v, "retransmitted_packets"),
        trims,
    );
    r.exactly("NSCC: rtos = 0", r.num(v, "rtos"), 0.0);
    // "The trim threshold sits above 31 MTU: NSCC's window never goes below one packet per
    // sender" (the plotted flows' flow_window_bytes).
    r.check(
        150e3 > 31.0 * 4096.0,
        "the trim threshold sits above 31 MTU",
        150e3,
    );
    let windows: Vec<f64> = r
        .csv(
            "timeseries.csv",
            &["variant", "time_ns", "series", "key", "value"],
        )
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[0] == v && &x[2] == "flow_window_bytes")
        .map(|x| x[4].parse().unwrap())
        .collect();
    r.check(!windows.is_empty(), "NSCC: windows in timeseries.csv", "none");
    let least = min(windows.iter().copied());
    r.check(least >= 4096.0, "NSCC: the window never below one packet", least);
    // uec-rccc: "after one speculative window (its burst is what peak_queue_bytes of sw0's
    // port to h0 shows, held at the trim threshold [150 KB, 10 %]), ... the queue at the
    // receiver's port averages about 50 KB [20 %], well under a packet per sender [half of
    // 31 x 4178 B] (queue_bytes in timeseries.csv; NSCC's sits near 125 KB [10 %])."
    r.about(
        "RCCC: the first window's burst, at the trim threshold",
        r.counter("uec-rccc", "sw0", "to-h0", "peak_queue_bytes"),
        150e3,
        0.1,
    );
    let mean = |v: &str| -> f64 {
        let q: Vec<f64> = r
            .series(v, "queue_bytes", "sw0 to-h0")
            .iter()
            .filter(|x| x.0 >= 100.0 * US && x.0 <= r.num(v, "fct_ns.max"))
            .map(|x| x.1)
            .collect();
        q.iter().sum::<f64>() / q.len() as f64
    };
    let rccc = mean("uec-rccc");
    r.about("RCCC: the queue averages about 50 KB", rccc, 50e3, 0.2);
    r.check(
        rccc < 0.5 * 31.0 * (4096.0 + ROCE_OVERHEAD),
        "RCCC: well under a packet per sender",
        rccc,
    );
    r.about("NSCC: the queue sits near 125 KB", mean("uec-nscc"), 125e3, 0.1);
}

#[test]
fn victim_flow() {
    let r = run("victim-flow", &[], 0);
    let victim = |v: &str| {
        r.flows_of(v)
            .into_iter()
            .find(|f| f.src == "h3")
            .unwrap()
            .slowdown()
    };
    // pfc-only: "the right switch ... pauses the left switch's uplink on priority 3; ... the
    // victim h3 -> h5 crawls ... a slowdown of about 3 [5 %]"; "pause_graph.png shows the
    // right switch pausing the uplink and the left switch pausing the senders, h3 among them".
    let v = "pfc-only";
    r.about("PFC only: the victim's slowdown about 3", victim(v), 3.0, 0.05);
    r.check(
        r.counter(v, "right", "to-left", "tx_prio3_pause") > 0.0,
        "PFC only: the right switch pauses the uplink",
        0,
    );
    r.check(
        r.counter(v, "left", "to-h3", "tx_prio3_pause") > 0.0,
        "PFC only: the left switch pauses h3",
        0,
    );
    // pfc-dcqcn: "the uplink is paused far less (under half the time), and the victim gets much
    // of its rate back (a slowdown of about 1.6 [10 %])".
    let paused = |v: &str| r.counter(v, "right", "to-left", "tx_prio3_pause_duration");
    r.check(
        paused("pfc-dcqcn") < 0.5 * paused("pfc-only"),
        "DCQCN: the uplink paused under half the time",
        format!("{} us against {} us", paused("pfc-dcqcn"), paused("pfc-only")),
    );
    r.about(
        "DCQCN: the victim's slowdown about 1.6",
        victim("pfc-dcqcn"),
        1.6,
        0.1,
    );
}

#[test]
fn websearch_load() {
    let r = run("websearch-load", &[], 0);
    // "Small flows (under 100 KB ...): under RoCEv2 + DCQCN the slowest 1 % of them take 8 to
    // 20 times their ideal over seeds 1-3 ..., under UET + NSCC about 6.5 times (6.3-6.7). The large flows (1 MB and
    // more) ... slow most under DCQCN (their median slowdown is the highest of any size,
    // about 3) and about 2 under NSCC."
    let class = |v: &str, lo: f64, hi: f64| -> Vec<f64> {
        r.flows_of(v)
            .iter()
            .filter(|f| f.size >= lo && f.size < hi)
            .map(|f| f.slowdown())
            .collect()
    };
    let p99 = |mut x: Vec<f64>| {
        x.sort_by(f64::total_cmp);
        x[(x.len() as f64 * 0.99) as usize]
    };
    let roce_small = p99(class("roce-pfc-dcqcn", 0.0, 100e3));
    r.check(
        (8.0..=20.0).contains(&roce_small),
        "DCQCN: the slowest 1 % of small flows at 8-20x",
        roce_small,
    );
    let uec_small = p99(class("uec-reps-nscc", 0.0, 100e3));
    r.check(
        (6.25..=6.75).contains(&uec_small),
        "NSCC: the slowest 1 % of small flows at 6.3-6.7x",
        uec_small,
    );
    let large = median(class("roce-pfc-dcqcn", 1e6, f64::INFINITY));
    r.about(
        "DCQCN: the large flows' median slowdown about 3",
        large,
        3.0,
        0.15,
    );
    for (lo, hi) in [(0.0, 10e3), (10e3, 100e3), (100e3, 1e6)] {
        let m = median(class("roce-pfc-dcqcn", lo, hi));
        r.check(
            large > m,
            &format!("DCQCN: the large flows' median slowdown above flows of {lo}-{hi} B"),
            format!("{large} against {m}"),
        );
    }
    let large = median(class("uec-reps-nscc", 1e6, f64::INFINITY));
    r.about("NSCC: the large flows' median slowdown about 2", large, 2.0, 0.15);
}

#[test]
fn ber_dac() {
    let r = run("ber-dac", &[], 0);
    // "without FEC a 4,158 B frame is lost with 1-(1-1e-6)^33,264 = 3.3 %".
    let frame = 4096.0 + ROCE_OVERHEAD - 20.0;
    r.about("a 4,158 B frame", frame, 4158.0, 0.0);
    let lost = 1.0 - (1.0f64 - 1e-6).powf(frame * 8.0);
    r.about("lost with 3.3 %", lost, 0.033, 0.02);
    // The clean run: no bit errors (the same cable's time, nothing lost).
    let clean = run("ber-dac", &["--set", "topology.link.pre_fec_ber=0"], 0);
    let clean_fct = |v: &str| clean.flows_of(v)[0].fct();
    // "UET ... finishes the 8 MB within 10 % of its clean time".
    let uet = r.flows_of("uet-selective-repeat")[0].fct();
    let uet_clean = clean_fct("uet-selective-repeat");
    r.check(
        uet <= 1.10 * uet_clean && r.num("uet-selective-repeat", "drops") > 0.0,
        "UET within 10 % of its clean time, with frames lost",
        format!("{uet} ns against {uet_clean} ns"),
    );
    // "the sender waits out its ACK timeout (... 67 ms ...), so the 8 MB take over 60 ms
    // instead of 0.65".
    let timeout = 4.096 * US * 2f64.powi(14);
    r.about("local_ack_timeout = 14: 67 ms", timeout, 67.0 * MS, 0.01);
    let roce = r.flows_of("rocev2-go-back-n")[0].fct();
    r.check(roce > 60.0 * MS, "RoCEv2's 8 MB take over 60 ms", roce);
    r.about(
        "instead of 0.65 ms",
        clean_fct("rocev2-go-back-n"),
        0.65 * MS,
        0.01,
    );
    // "With RS(528,514) on both ends no frame is lost ... each transport finishes in its
    // clean time plus 51.2 ns".
    let coded = run("ber-dac", &["--set", "topology.link.fec=\"rs-528\""], 0);
    for v in ["rocev2-go-back-n", "uet-selective-repeat"] {
        coded.exactly("no frame lost under RS(528,514)", coded.num(v, "drops"), 0.0);
        coded.about(
            "its clean time plus 51.2 ns",
            coded.flows_of(v)[0].fct() - clean_fct(v),
            51.2,
            0.001,
        );
    }
    // "a cable whose ends disagree (fec = ["rs-528", "none"]) never comes up, and `sim check`
    // says so".
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ber-dac.toml");
    let o = sim(&[
        "check",
        file.to_str().unwrap(),
        "--set",
        "topology.link.fec=[\"rs-528\", \"none\"]",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    r.check(
        o.status.code() == Some(8) && err.contains("fec-mismatch") && err.contains("never come up"),
        "sim check names the FEC mismatch",
        err,
    );
    // "`sim check` on this file as it is warns that the FEC is off (ber-without-fec), naming
    // rs-528".
    let o = sim(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    r.check(
        o.status.code() == Some(8) && err.contains("ber-without-fec") && err.contains("fec = \"rs-528\""),
        "sim check warns that the FEC is off",
        err,
    );
}

#[test]
fn llr_ber() {
    let r = run("llr-ber", &[], 0);
    let (roce, uet) = ("rocev2-go-back-n", "uet-selective-repeat");
    // "with LLR neither transport resends anything end to end (no drops, no retransmissions)".
    for v in [roce, uet] {
        r.exactly("no drops with LLR", r.num(v, "drops"), 0.0);
        r.exactly(
            "no retransmissions with LLR",
            r.num(v, "retransmitted_packets"),
            0.0,
        );
        // "Every frame the cable corrupted shows at h1 as both drop_link_error and
        // llr_rx_bad, and h0 replayed on each NACK (llr_tx_replay)".
        let bad = r.counter(v, "h1", "to-h0", "llr_rx_bad");
        r.check(bad > 0.0, "frames were corrupted", bad);
        r.exactly(
            "drop_link_error = llr_rx_bad at h1",
            r.counter(v, "h1", "to-h0", "drop_link_error"),
            bad,
        );
        let nacks = r.counter(v, "h0", "to-h1", "llr_rx_nack_ctl_os");
        let replays = r.counter(v, "h0", "to-h1", "llr_tx_replay");
        r.check(
            nacks > 0.0 && replays >= nacks,
            "h0 replayed on each NACK",
            replays,
        );
    }
    // "RoCEv2 finishes the 8 MB in 0.70 ms, within 10 % of its clean 0.65 ms".
    let clean = run("llr-ber", &["--set", "topology.link.pre_fec_ber=0"], 0);
    let clean_fct = |v: &str| clean.flows_of(v)[0].fct();
    let roce_fct = r.flows_of(roce)[0].fct();
    r.about("RoCEv2 finishes in 0.70 ms", roce_fct, 0.70 * MS, 0.01 / 0.70);
    r.about("its clean 0.65 ms", clean_fct(roce), 0.65 * MS, 0.01);
    r.check(
        roce_fct <= 1.10 * clean_fct(roce),
        "RoCEv2 within 10 % of clean",
        roce_fct,
    );
    // "where on the same cable without LLR ... it waits out ACK timeouts and takes over 60 ms".
    let off = run("llr-ber", &["--set", "topology.link.llr=false"], 0);
    let off_roce = off.flows_of(roce)[0].fct();
    r.check(
        off_roce > 60.0 * MS,
        "RoCEv2 without LLR takes over 60 ms",
        off_roce,
    );
    r.check(
        off.num(roce, "rtos") > 0.0,
        "it waits out ACK timeouts",
        off.num(roce, "rtos"),
    );
    // "UET finishes within 10 % of its clean time with LLR or without it, and a little sooner
    // without (0.68 ms against 0.71 ms)".
    let (with, without) = (r.flows_of(uet)[0].fct(), off.flows_of(uet)[0].fct());
    let uet_clean = clean_fct(uet);
    r.check(
        with <= 1.10 * uet_clean && without <= 1.10 * uet_clean,
        "UET within 10 % of clean either way",
        format!("{with} and {without} ns against {uet_clean} ns"),
    );
    r.about("UET without LLR: 0.68 ms", without, 0.68 * MS, 0.01 / 0.68);
    r.about("UET with LLR: 0.71 ms", with, 0.71 * MS, 0.01 / 0.71);
    r.check(without < with, "UET a little sooner without LLR", without);
    // "two 4 KiB frames on this 3 m cable": the NACK is back within a frame's serialization.
    let ser = ns(roce_wire(4096.0, 4096.0), 100.0);
    let back = 2.0 * 15.0 + 0.64 + ns(ROCE_ACK_WIRE, 100.0);
    r.exactly(
        "frames started before the NACK is back",
        ((ser + back) / ser).ceil(),
        2.0,
    );
    // "With no bit errors LLR costs RoCEv2 about 1.25 us: an 8 B ordered set (0.64 ns) on h0's
    // wire for each of the 1,954 ACKs h1 sends".
    let plain = run(
        "llr-ber",
        &[
            "--set",
            "topology.link.pre_fec_ber=0",
            "--set",
            "topology.link.llr=false",
        ],
        0,
    );
    let acks = clean.counter(roce, "h1", "to-h0", "tx_packets");
    r.exactly("1,954 ACKs", acks, 1954.0);
    r.about("8 B at 100G", ns(8.0, 100.0), 0.64, 0.0);
    let cost = clean_fct(roce) - plain.flows_of(roce)[0].fct();
    r.about("LLR costs RoCEv2 about 1.25 us", cost, 1.25 * US, 0.01);
    r.about("an ordered set per ACK", cost, acks * 0.64, 0.01);
    // "With RS(528,514) ... each transport finishes in its clean time with LLR plus 51.2 ns".
    let coded = run("llr-ber", &["--set", "topology.link.fec=\"rs-528\""], 0);
    for v in [roce, uet] {
        coded.exactly("no frame corrupted under RS(528,514)", coded.num(v, "drops"), 0.0);
        coded.exactly(
            "no replay under RS(528,514)",
            coded.counter(v, "h0", "to-h1", "llr_tx_replay"),
            0.0,
        );
        coded.about(
            "its clean time with LLR plus 51.2 ns",
            coded.flows_of(v)[0].fct() - clean_fct(v),
            51.2,
            0.01,
        );
    }
    // "At 1e-5 (28 % of 4 KiB frames corrupted) ... LLR gives up on some frames after 3
    // replays in a row (llr_tx_flush) and the transports resend them end to end; both still
    // finish, in about 2 ms".
    let frame = roce_wire(4096.0, 4096.0) - 20.0;
    r.about(
        "28 % of 4 KiB frames",
        1.0 - (1.0f64 - 1e-5).powf(frame * 8.0),
        0.28,
        0.01 / 0.28,
    );
    let high = run("llr-ber", &["--set", "topology.link.pre_fec_ber=1e-5"], 0);
    for v in [roce, uet] {
        high.check(
            high.counter(v, "h0", "to-h1", "llr_tx_flush") > 0.0,
            "LLR gives up on some frames",
            0,
        );
        high.check(
            high.num(v, "retransmitted_packets") > 0.0,
            "the transports resend them",
            0,
        );
        high.about(
            "both finish in about 2 ms",
            high.flows_of(v)[0].fct(),
            2.0 * MS,
            0.05,
        );
    }
    // "where without LLR RoCEv2 does not finish within the 1 s run and UET's selective repeat
    // finishes in under 1.1 ms".
    let high_off = run(
        "llr-ber",
        &[
            "--set",
            "topology.link.pre_fec_ber=1e-5",
            "--set",
            "topology.link.llr=false",
        ],
        5,
    );
    high_off.check(
        high_off.flows_of(roce)[0].fct_ns.is_none(),
        "RoCEv2 without LLR does not finish",
        0,
    );
    let u = high_off.flows_of(uet)[0].fct();
    high_off.check(u < 1.1 * MS, "UET alone finishes in under 1.1 ms", u);
    // "each corrupted replay waits out the 5 us replay timer".
    high.check(
        high.counter(uet, "h0", "to-h1", "llr_tx_replay_timer") > 0.0,
        "replays by the timer",
        0,
    );
    // "`sim check` with LLR on one end only ... warns (llr-mismatch)".
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/llr-ber.toml");
    let o = sim(&[
        "check",
        file.to_str().unwrap(),
        "--set",
        "topology.link.llr=[true, false]",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    r.check(
        o.status.code() == Some(8) && err.contains("llr-mismatch") && err.contains("without LLR"),
        "sim check warns of one-sided LLR",
        err,
    );
}
