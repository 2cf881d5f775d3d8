//! The switches' PFC watchdog (`pfc.watchdog_action`, SONiC's PFC_WD) against a storm from a
//! hung receiver, and `sonic_counters.csv` against the configured sizes.
//!
//! The storm: h1 sends XOFF for priority 3 with no break from 50 us to 250 us (a `pfc-storm`
//! fault), h0 sends it 8 MB meanwhile (long enough to see the restore). Times follow from the configuration alone:
//! the XOFF reaches sw0 after its 84 B on the wire at 100 Gb/s (6.72 ns) and the 1 us cable,
//! and acts after the 60-quanta response time (60 x 512 bit / 100 Gb/s = 307.2 ns).

use crate::common::*;

const START_NS: f64 = 50_000.0;
const END_NS: f64 = 250_000.0;
const DETECT_NS: f64 = 20_000.0;
const RESTORE_NS: f64 = 400_000.0;
/// A PFC frame's wire time and the cable.
const HOP_NS: f64 = 6.72 + 1_000.0;
const RESPONSE_NS: f64 = 307.2;

fn storm(restore: &str) -> String {
    format!(
        r#"
        name = "wd"
        [topology]
        kind = "star"
        hosts = 2
        host_link = {{ rate = "100Gbps", delay = "1us" }}
        [pfc]
        priorities = [3]
        watchdog = "20us"
        watchdog_restore = "{restore}"
        [switch]
        sonic_counters = true
        [[fault]]
        link = ["h1", "sw0"]
        kind = "pfc-storm"
        priority = 3
        at = "50us"
        until = "250us"
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "8MB"
        [[variant]]
        name = "off"
        [[variant]]
        name = "alert"
        pfc.watchdog_action = "alert"
        [[variant]]
        name = "forward"
        pfc.watchdog_action = "forward"
        [[variant]]
        name = "drop"
        pfc.watchdog_action = "drop"
    "#
    )
}

/// `sonic_counters.csv` as (variant, interface, command, column, counter) -> value.
fn sonic_csv(
    out: &std::path::Path,
) -> std::collections::HashMap<(String, String, String, String, String), String> {
    let mut r = csv::Reader::from_path(out.join("sonic_counters.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    assert_eq!(
        h.iter().collect::<Vec<_>>(),
        [
            "variant",
            "switch",
            "interface",
            "port",
            "command",
            "column",
            "counter",
            "value"
        ]
    );
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            let k = |i: usize| rec[i].to_string();
            ((k(0), k(2), k(4), k(5), k(6)), k(7))
        })
        .collect()
}

/// pfcwd events of a variant from `events.csv`: (time ns, event).
fn wd_events(out: &std::path::Path, variant: &str) -> Vec<(f64, String)> {
    let mut r = csv::Reader::from_path(out.join("events.csv")).unwrap();
    r.records()
        .map(|x| x.unwrap())
        .filter(|x| &x[0] == variant && x[6].starts_with("pfcwd"))
        .map(|x| (x[1].parse().unwrap(), x[6].to_string()))
        .collect()
}

#[test]
fn the_watchdog_detects_acts_and_restores_at_the_configured_times() {
    let out = tmp("pfcwd");
    let file = out.with_extension("toml");
    std::fs::write(&file, storm("400us")).unwrap();
    let o = sim_run(&file, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let since = START_NS + HOP_NS + RESPONSE_NS;
    let detected = since + DETECT_NS;
    // The storm's last PFC frame is h1's XON as the storm ends.
    let xon = END_NS + HOP_NS;
    assert!(wd_events(&out, "off").is_empty(), "no watchdog when it is off");
    for (variant, restored) in [
        ("alert", xon),
        ("forward", xon + RESTORE_NS),
        ("drop", xon + RESTORE_NS),
    ] {
        let ev = wd_events(&out, variant);
        assert_eq!(ev.len(), 2, "{variant}: one storm, one restore: {ev:?}");
        assert_eq!(ev[0].1, "pfcwd_storm");
        assert_close(ev[0].0, detected, 0.01, 0.0, &format!("{variant}: detection"));
        assert_eq!(ev[1].1, "pfcwd_restore");
        assert_close(ev[1].0, restored, 0.01, 0.0, &format!("{variant}: restoration"));
    }
    let csv = sonic_csv(&out);
    let get = |v: &str, command: &str, column: &str, counter: &str| {
        let k = (
            v.to_string(),
            "Ethernet4".to_string(),
            command.to_string(),
            column.to_string(),
            counter.to_string(),
        );
        csv.get(&k).cloned().unwrap_or_else(|| panic!("no row {k:?}"))
    };
    for v in ["alert", "forward", "drop"] {
        let st = |c: &str| get(v, "show pfcwd stats", "Ethernet4:3", c);
        assert_eq!(st("STATUS"), "operational", "{v}");
        assert_eq!(st("STORM DETECTED"), "1", "{v}");
        assert_eq!(st("STORM RESTORED"), "1", "{v}");
    }
    // h1 sent XOFF at 50 us, one refresh half a pause (65535 quanta) later, and the XON.
    let refresh_ns = 65_535.0 * 512.0 / 100.0 / 2.0;
    let frames = 2 + (((END_NS - START_NS) / refresh_ns).ceil() as u64 - 1);
    assert_eq!(get("off", "show pfc counters", "PFC3", "Rx"), frames.to_string());

    let reports = summaries(&out);
    let fct = |v: &str| reports[v]["fct_ns"]["max"].as_f64().unwrap();
    // Off and alert: the queue sits out the whole pause. Forward: only the detection time,
    // then it sends, its frames taken (h1 is not short of buffer, only stuck sending PFC).
    let paused = xon - since;
    assert_close(
        fct("off") - fct("forward"),
        paused - DETECT_NS,
        200.0,
        0.0,
        "forward gains the storm after detection",
    );
    assert_close(fct("alert"), fct("off"), 0.01, 0.0, "alert leaves PFC alone");
    assert_eq!(reports["forward"]["drops"], 0, "forward drops nothing here");
    // Drop: everything for h1 is discarded until the restore; the flow completes after it.
    let drops = reports["drop"]["drops_by_reason"]["pfc_watchdog"]
        .as_u64()
        .unwrap();
    let tx_drop: u64 = get("drop", "show pfcwd stats", "Ethernet4:3", "TX DROP")
        .parse()
        .unwrap();
    let rx_drop: u64 = get("drop", "show pfcwd stats", "Ethernet4:3", "RX DROP")
        .parse()
        .unwrap();
    assert!(tx_drop > 0);
    assert_eq!(
        drops,
        tx_drop + rx_drop,
        "every watchdog drop is in show pfcwd stats"
    );
    assert!(
        fct("drop") > xon + RESTORE_NS - START_NS,
        "resumes after the restore"
    );
    for v in ["off", "alert", "forward", "drop"] {
        assert_eq!(reports[v]["flows_completed"], 1, "{v}");
        for i in reports[v]["invariants"].as_array().unwrap() {
            assert!(i["ok"].as_bool().unwrap(), "{v}: {i}");
        }
    }
}

#[test]
fn a_restoration_shorter_than_the_refresh_lets_the_storm_in_again() {
    // 40 us without a PFC frame restores the queue before h1's next refresh (168 us after
    // its XOFF), which pauses it again: two storms, each detected 20 us into its pause.
    let out = tmp("pfcwd-short");
    let file = out.with_extension("toml");
    std::fs::write(&file, storm("40us")).unwrap();
    assert!(sim_run(&file, &out, &[]).status.success());
    let refresh_ns = 65_535.0 * 512.0 / 100.0 / 2.0;
    let since = START_NS + HOP_NS + RESPONSE_NS;
    let ev = wd_events(&out, "drop");
    let times: Vec<f64> = ev.iter().map(|e| e.0).collect();
    let want = [
        since + DETECT_NS,
        since + DETECT_NS + 40_000.0,
        since + refresh_ns + DETECT_NS,
        END_NS + HOP_NS + 40_000.0,
    ];
    assert_eq!(times.len(), 4, "{ev:?}");
    for (got, want) in times.iter().zip(want) {
        assert_close(*got, want, 0.01, 0.0, "storm / restore time");
    }
}

#[test]
fn one_storm_is_one_storm_in_the_summary_the_port_counters_and_show_pfcwd_stats() {
    // SONiC's definition: a queue held paused without a break for the detection time. With
    // the 40 us restoration, forward and drop see two storms on sw0's port to h1, each lifted
    // by the watchdog exactly 20 us into its pause (h1's first XOFF, then its refresh 168 us
    // later); off and alert one, held until h1's XON arrives.
    let refresh_ns = 65_535.0 * 512.0 / 100.0 / 2.0;
    let since = START_NS + HOP_NS + RESPONSE_NS;
    for r in run(&storm("40us")) {
        let v = r.summary.name.clone();
        let at_port: Vec<(f64, f64)> = r
            .summary
            .pfc_storm_list
            .iter()
            .filter(|s| s.port == "sw0 to-h1")
            .map(|s| (s.start_ns, s.duration_ns))
            .collect();
        let want = match v.as_str() {
            "off" | "alert" => vec![(since, END_NS + HOP_NS - since)],
            _ => vec![(since, DETECT_NS), (since + refresh_ns, DETECT_NS)],
        };
        assert_eq!(at_port.len(), want.len(), "{v}: {at_port:?}");
        for ((start, d), (ws, wd)) in at_port.iter().zip(&want) {
            assert_close(*start, *ws, 0.01, 0.0, &format!("{v}: storm start"));
            assert_close(*d, *wd, 0.01, 0.0, &format!("{v}: storm duration"));
        }
        // Every storm listed and counted once, at the port it held.
        let counted = counter_total(&r, "pfc_storm_detected");
        assert_eq!(r.summary.pfc_storms, counted, "{v}");
        assert_eq!(
            r.summary.pfc_storms as usize,
            r.summary.pfc_storm_list.len(),
            "{v}"
        );
        let port = counter(&r, "sw0", "to-h1", "pfc_storm_detected");
        assert_eq!(port as usize, want.len(), "{v}");
        // The watchdog, where one runs, counts the same storms on that queue.
        let pfcwd = r.sonic.iter().find(|s| {
            &*s.interface == "Ethernet4" && s.command == "show pfcwd stats" && s.counter == "STORM DETECTED"
        });
        match pfcwd {
            Some(row) => assert_eq!(row.value, port.to_string(), "{v}: show pfcwd stats"),
            None => assert_eq!(v, "off", "only off runs no watchdog"),
        }
    }
}

/// `summary.json`'s variants by name.
fn summaries(out: &std::path::Path) -> std::collections::HashMap<String, serde_json::Value> {
    summary_json(out)["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap().to_string(), v.clone()))
        .collect()
}

#[test]
fn sonic_queue_and_watermark_counters_follow_the_configured_sizes() {
    // Four senders of 64 frames each to one receiver through a static XOFF of 40 KB: the
    // receiver's queue counts every frame; each ingress PG takes shared cells while under the
    // threshold (so it stops at the first whole frame past it), and its headroom holds what
    // arrives while the pause takes effect.
    let mut toml = r#"
        [topology]
        kind = "star"
        hosts = 5
        host_link = { rate = "100Gbps", delay = "1us" }
        [switch]
        sonic_counters = true
        [pfc]
        priorities = [3]
        xoff = "40000B"
    "#
    .to_string();
    for src in 0..4 {
        toml += &format!("[[flow]]\nsrc = {src}\ndst = 4\nsize = \"{}B\"\n", 64 * 4096);
    }
    let r = run(&toml).remove(0);
    let row = |iface: &str, command: &str, column: &str, counter: &str| -> String {
        r.sonic
            .iter()
            .find(|s| {
                &*s.interface == iface && s.command == command && s.column == column && s.counter == counter
            })
            .map(|s| s.value.clone())
            .unwrap_or_else(|| panic!("{iface} {command} {column} {counter}"))
    };
    // Ethernet16 is sw0's fifth port, to h4.
    let frame = 4096 + 62;
    assert_eq!(
        row("Ethernet16", "show queue counters", "UC3", "Counter/pkts"),
        (4 * 64).to_string()
    );
    assert_eq!(
        row("Ethernet16", "show queue counters", "UC3", "Counter/bytes"),
        (4 * 64 * frame).to_string()
    );
    assert_eq!(row("Ethernet16", "show queue counters", "UC3", "Drop/pkts"), "0");
    let paused: u64 = row("Ethernet0", "show pfc counters", "PFC3", "Tx")
        .parse()
        .unwrap();
    assert!(paused > 0, "the incast pauses h0");
    // Trident 3 (the default profile): 256 B cells.
    let cell = 256u64;
    let c = (frame as u64).div_ceil(cell);
    let threshold = 40_000u64.div_ceil(cell);
    let shared: u64 = row(
        "Ethernet0",
        "show priority-group watermark shared",
        "PG3",
        "bytes",
    )
    .parse()
    .unwrap();
    assert_eq!(
        shared,
        threshold.div_ceil(c) * c * cell,
        "shared watermark at the XOFF"
    );
    let headroom: u64 = row(
        "Ethernet0",
        "show priority-group watermark headroom",
        "PG3",
        "bytes",
    )
    .parse()
    .unwrap();
    // Frames the sender still starts in the XOFF's round trip, and the one it is sending.
    let lag_ns = 2.0 * 1000.0 + tx_ns(84, 100.0) + 60.0 * 512.0 / 100.0;
    let frames = (lag_ns / tx_ns(roce_wire(4096), 100.0)).ceil() as u64 + 1;
    assert!(
        headroom > 0 && headroom <= frames * c * cell,
        "headroom watermark {headroom} within {frames} frames"
    );
    assert_eq!(
        row(
            "Ethernet0",
            "show priority-group watermark shared",
            "PG0",
            "bytes"
        ),
        "N/A"
    );
    assert_eq!(
        row("Ethernet0", "show priority-group drop counters", "PG3", "pkts"),
        "0"
    );
    // The receiver's egress queue held at least what four paused PGs release at once.
    let q: u64 = row("Ethernet16", "show queue watermark unicast", "UC3", "bytes")
        .parse()
        .unwrap();
    assert!(q >= 4 * frame as u64, "queue watermark {q}");
}
