//! Claims of sn3700c, sonic-as7326, sonic-mixed, sonic-sn3700c, spray-vs-ecmp, three-node.

use super::*;

#[test]
fn sn3700c() {
    let v = "sn3700c";
    let r = run(v, &[], 0);
    // "the incasts fill h0's queue (peak_queue_bytes of sw0's to-h0 port: about 2.9 MB
    // [10 %], against under 1 MB at every other port)".
    r.about(
        "h0's queue peaks at about 2.9 MB",
        r.counter(v, "sw0", "to-h0", "peak_queue_bytes"),
        2.9e6,
        0.1,
    );
    for (_, p, x) in r.counters_named(v, "peak_queue_bytes", |n| n == "sw0", |p| p != "to-h0") {
        r.check(x < 1e6, &format!("under 1 MB at sw0 {p}"), x);
    }
    // "the background flows to h0 have a median slowdown over 20, the others about 1.2 [10 %]".
    let incast = |f: &Flow| {
        f.dst == "h0" && f.size == 64e3 && ((f.start_ns - 100.0 * US) / (200.0 * US)).fract() == 0.0
    };
    let bg: Vec<&Flow> = r.flows_of(v).into_iter().filter(|f| !incast(f)).collect();
    let to_h0 = median(
        bg.iter()
            .filter(|f| f.dst == "h0")
            .map(|f| f.slowdown())
            .collect(),
    );
    let others = median(
        bg.iter()
            .filter(|f| f.dst != "h0")
            .map(|f| f.slowdown())
            .collect(),
    );
    r.check(
        to_h0 > 20.0,
        "background flows to h0: median slowdown over 20",
        to_h0,
    );
    r.about(
        "the other background flows: median slowdown about 1.2",
        others,
        1.2,
        0.1,
    );
    // "the 640 MB a run sends [5 %] expect half a corrupted frame (8 bits a byte at 1e-10;
    // seed 1 draws none): each costs a go-back-N retransmission (retx), and no timeout
    // fires" (local_ack_timeout 10 = 4 ms: "longer than the worst queueing under the
    // incasts").
    let sent: f64 = r
        .counters_named(v, "tx_bytes", |_| true, |_| true)
        .iter()
        .map(|x| x.2)
        .sum();
    r.about("640 MB sent", sent, 640e6, 0.05);
    r.about("half a corrupted frame expected", sent * 8.0 * 1e-10, 0.5, 0.05);
    let errors = r.num(v, "drops_by_reason.link_error");
    r.exactly("seed 1 draws no frame error", errors, 0.0);
    r.check(
        r.num(v, "retransmitted_packets") >= errors,
        "go-back-N retransmissions",
        r.num(v, "retransmitted_packets"),
    );
    r.exactly("no timeout fires", r.num(v, "rtos"), 0.0);
}

/// What a scenario's SONiC file set (summary.json `sonic.set`, as TOML values), against the
/// comment's reading of the file: each `(key, text)` is the key's value (or, for a table or
/// an array, in it), and each `(size in B, the comment's MB)` agree to 0.5 %.
fn sonic_file_says(r: &Run, variant: &str, keys: &[(&str, &str)], sizes: &[(f64, f64)]) {
    let set = &r.v(variant)["sonic"]["set"];
    for (k, text) in keys {
        let got = set[*k].as_str().unwrap_or_default();
        // A table or array holds the text; a scalar is it.
        let holds = if got.starts_with(['{', '[']) {
            got.contains(text)
        } else {
            got == *text
        };
        r.check(holds, &format!("the SONiC file sets {k} to {text}"), got);
    }
    for (bytes, mb) in sizes {
        r.about("a size the comment reads from the file", *bytes, mb * 1e6, 0.005);
    }
}

#[test]
fn sonic_as7326() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sonic-as7326.toml");
    let r = run("sonic-as7326", &[], 0);
    // "a 26.3 MB shared pool and a 6.3 MB shared headroom pool, dynamic_th -3, lossless xoff
    // 65024 B on 25G ports and 173568 B on 100G ports, xon_offset 2048 B, WRED-ECN 1-2 MB at
    // 5 %, DWRR 14/15, PFC watchdog 400 ms".
    sonic_file_says(
        &r,
        "as-configured",
        &[
            ("switch.shared_pool", "\"26284032B\""),
            ("switch.headroom_pool", "\"6291456B\""),
            ("switch.pg_alpha", "-3"),
            ("pfc.headroom_by_rate", "25000Mbps = \"65024B\""),
            ("pfc.headroom_by_rate", "100000Mbps = \"173568B\""),
            ("pfc.xon_offset", "\"2048B\""),
            (
                "switch.ecn",
                "kmax = \"2097152B\", kmin = \"1048576B\", pmax = 0.05",
            ),
            ("switch.scheduler.dwrr", "0 = 14"),
            ("switch.scheduler.dwrr", "3 = 15"),
            ("pfc.watchdog", "\"400ms\""),
        ],
        &[(26284032.0, 26.3), (6291456.0, 6.3)],
    );
    // "the run prints each SONiC table and field it does not act on".
    r.check(
        r.stderr.contains("note[sonic-not-modelled]"),
        "the run prints what it does not act on",
        &r.stderr,
    );
    // "As configured, ... pauses the senders' links (about 240 PFC frames [10 %]); tuned, ...
    // no pause is sent (seeds 1 and 2), and the goodput drops from about 65 to 56 Gb/s
    // [3 %]".
    r.about(
        "as configured: about 240 PFC frames",
        r.num("as-configured", "pfc_pause_frames"),
        240.0,
        0.1,
    );
    r.exactly("tuned: no pause", r.num("tuned", "pfc_pause_frames"), 0.0);
    r.about(
        "as configured: about 65 Gb/s",
        r.num("as-configured", "goodput_gbps"),
        65.0,
        0.03,
    );
    r.about("tuned: about 56 Gb/s", r.num("tuned", "goodput_gbps"), 56.0, 0.03);
    r.check(
        r.num("tuned", "cnps") > r.num("as-configured", "cnps"),
        "tuned: DCQCN cuts the senders more",
        r.num("tuned", "cnps"),
    );
    // "`sim export sonic scenarios/sonic-as7326.toml --variant tuned` writes the tuned settings
    // back as config_db.json tables (WRED_PROFILE with the 10-100 KB band)".
    let o = sim(&["export", "sonic", file.to_str().unwrap(), "--variant", "tuned"]);
    r.check(
        o.status.success(),
        "sim export sonic --variant tuned",
        String::from_utf8_lossy(&o.stderr),
    );
    let db: Value = serde_json::from_slice(&o.stdout).unwrap();
    let wred = db["WRED_PROFILE"].as_object().unwrap();
    r.check(
        wred.values()
            .any(|p| p["green_min_threshold"] == "10000" && p["green_max_threshold"] == "100000"),
        "the export's WRED_PROFILE holds the 10-100 KB band",
        format!("{wred:?}"),
    );
}

#[test]
fn sonic_mixed() {
    let r = run("sonic-mixed", &[], 0);
    // "sonic_counters.csv holds every switch's counters as SONiC's show commands print them
    // (`show pfc counters`, `show queue counters`, PG and queue watermarks; `show pfcwd stats`
    // for the queues the watchdog watched)".
    let mut sc = r.sonic_counters();
    let rows: Vec<(String, String)> = sc
        .records()
        .map(|x| x.unwrap())
        .map(|x| (x[1].to_string(), x[4].to_string()))
        .collect();
    for sw in ["leaf0", "leaf1", "spine0", "spine1"] {
        for cmd in [
            "show pfc counters",
            "show queue counters",
            "show priority-group watermark shared",
            "show priority-group watermark headroom",
            "show queue watermark unicast",
        ] {
            r.check(
                rows.iter().any(|x| x.0 == sw && x.1 == cmd),
                &format!("{sw}: `{cmd}` in sonic_counters.csv"),
                "no row",
            );
        }
    }
    r.check(
        rows.iter().any(|x| x.1 == "show pfcwd stats"),
        "`show pfcwd stats` for the watched queues",
        "no row",
    );
    // "summary.json lists what each file set under `sonic_tiers`".
    let tiers = &r.v("sonic-mixed")["sonic_tiers"];
    for (tier, file) in [("leaf", "sonic/as7326-56x.json"), ("spine", "sonic/sn3700c.json")] {
        r.check(
            tiers[tier]["file"] == file,
            &format!("sonic_tiers: {tier} from {file}"),
            &tiers[tier]["file"],
        );
        r.check(
            tiers[tier]["set"].as_object().is_some_and(|s| !s.is_empty()),
            &format!("sonic_tiers: what the {tier} file set"),
            &tiers[tier]["set"],
        );
    }
}

#[test]
fn sonic_sn3700c() {
    let r = run("sonic-sn3700c", &[], 0);
    // "a 14.5 MB ingress lossless pool, dynamic_th 0, lossless xoff 33792 B on 5 m host ports
    // and 44032 B on 40 m uplinks ...; PFC on 3 and 4, WRED-ECN 1-2 MB at 5 %, DWRR 14/15; PFC
    // watchdog 200 ms".
    sonic_file_says(
        &r,
        "as-configured",
        &[
            ("switch.shared_pool", "\"14542848B\""),
            ("switch.pg_alpha", "0"),
            ("pfc.headroom_by_rate", "\"100000Mbps/5m\" = \"33792B\""),
            ("pfc.headroom_by_rate", "\"100000Mbps/40m\" = \"44032B\""),
            ("pfc.priorities", "[3, 4]"),
            (
                "switch.ecn",
                "kmax = \"2097152B\", kmin = \"1048576B\", pmax = 0.05",
            ),
            ("switch.scheduler.dwrr", "0 = 14"),
            ("switch.scheduler.dwrr", "3 = 15"),
            ("pfc.watchdog", "\"200ms\""),
        ],
        &[(14542848.0, 14.5)],
    );
    let peak = |v: &str| r.counter(v, "leaf1", "to-h13", "peak_queue_bytes");
    // "As configured, the queue to h13 grows to about 6 MB [10 %], well past the band [2 MB],
    // ...: the buffer absorbs it and the incast runs near line rate (about 88 Gb/s [3 %]); at
    // 20 KB it marks early and cuts the senders hard: the queue peaks lower (about 2.6 MB
    // [10 %]) at the price of throughput (about 57 Gb/s [3 %])".
    r.about(
        "as configured: the queue to h13 grows to about 6 MB",
        peak("as-configured"),
        6e6,
        0.1,
    );
    r.check(
        peak("as-configured") > 2.0 * 1024.0 * 1024.0,
        "well past the 1-2 MB band",
        peak("as-configured"),
    );
    r.exactly(
        "as configured: the buffer absorbs it",
        r.num("as-configured", "drops"),
        0.0,
    );
    r.about(
        "as configured: about 88 Gb/s",
        r.num("as-configured", "goodput_gbps"),
        88.0,
        0.03,
    );
    r.about(
        "ecn-20KB: the queue peaks at about 2.6 MB",
        peak("ecn-20KB"),
        2.6e6,
        0.1,
    );
    r.about(
        "ecn-20KB: about 57 Gb/s",
        r.num("ecn-20KB", "goodput_gbps"),
        57.0,
        0.03,
    );
    r.check(
        r.num("ecn-20KB", "cnps") > r.num("as-configured", "cnps"),
        "ecn-20KB: marks early and cuts the senders hard",
        r.num("ecn-20KB", "cnps"),
    );
}

#[test]
fn spray_vs_ecmp() {
    let r = run("spray-vs-ecmp", &[], 0);
    // "The slowdown p99 (summary.json): about 4.8 with ECMP, 2.7 adaptive [10 %], 1.2
    // oblivious and 1.1 with REPS [5 %], which trims no packet at all."
    for (v, want, tol) in [
        ("ecmp", 4.8, 0.1),
        ("adaptive", 2.7, 0.1),
        ("oblivious", 1.2, 0.05),
        ("reps", 1.1, 0.05),
    ] {
        r.about(
            &format!("{v}: slowdown p99 about {want}"),
            r.num(v, "slowdown.p99"),
            want,
            tol,
        );
        r.exactly(
            &format!("{v}: every flow completes"),
            r.num(v, "flows_completed"),
            128.0,
        );
    }
    r.exactly("REPS trims no packet", r.num("reps", "trimmed"), 0.0);
}

#[test]
fn three_node() {
    let v = "three-node";
    let r = run(v, &[], 0);
    // "an all-to-all exchange runs at full line rate on every link at once ... and the
    // exchange finishes in the time of one flow" (4 MB at 100 Gb/s with headers, 3 %).
    let one = ns(roce_wire(4e6, 4096.0), 100.0);
    let f = r.flows_of(v);
    r.exactly("all-to-all of three: six flows", f.len() as f64, 6.0);
    for f in f {
        r.about(
            &format!("{} -> {} in the time of one flow", f.src, f.dst),
            f.fct(),
            one,
            0.03,
        );
    }
    r.exactly("no drops", r.num(v, "drops"), 0.0);
}
