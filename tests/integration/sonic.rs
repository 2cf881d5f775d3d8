//! A SONiC configuration's values act in the run as the closed forms say, the command line
//! exits 2 naming the JSON path of a bad value, prints what it does not model, and exports
//! what it imported.

use crate::common::*;
use models::sim::Sim;
use std::path::Path;

/// A scenario on a star of `hosts` 100G hosts whose switch reads `json` (written to a file).
fn star_with(name: &str, json: &str, hosts: usize, workload: &str) -> (String, std::path::PathBuf) {
    let dir = tmp(name);
    let file = dir.join("config_db.json");
    std::fs::write(&file, json).unwrap();
    let toml = format!(
        r#"
        [topology]
        kind = "star"
        hosts = {hosts}
        host_link = {{ rate = "100Gbps", delay = "100ns" }}
        [switch]
        sonic = "{}"
        {workload}
        "#,
        file.display()
    );
    (toml, dir)
}

#[test]
fn a_static_xoff_and_xon_offset_from_sonic_pause_as_the_pfc_closed_form_says() {
    // As in pfc.rs: 4 senders at C into one port, static XOFF S, hysteresis X: each ingress
    // PG pauses for N (d + h) frame times, d the frames between XOFF and XON in 256 B cells
    // (17 per 4158 B frame), h the frames still arriving in the XOFF's round trip.
    let (s_bytes, x_bytes) = (2_000_000u64, 100_000u64);
    let json = format!(
        r#"{{
        "PORT_QOS_MAP": {{"Ethernet0": {{"pfc_enable": "3"}}}},
        "BUFFER_POOL": {{"ingress_lossless_pool": {{"type": "ingress", "mode": "static", "size": "16777216"}}}},
        "BUFFER_PROFILE": {{"pg_lossless_100000_5m_profile": {{"pool": "ingress_lossless_pool", "size": "0",
            "xoff": "131072", "xon_offset": "{x_bytes}", "static_th": "{s_bytes}"}}}},
        "BUFFER_PG": {{"Ethernet0|3": {{"profile": "pg_lossless_100000_5m_profile"}}}}
        }}"#
    );
    let (toml, _dir) = star_with(
        "sonic-xoff",
        &json,
        5,
        "[[workload]]\nkind = \"incast\"\nsize = \"16MB\"",
    );
    let s = scenario(&toml);
    let v = &s.variants[0];
    assert_eq!(
        (v.pfc.xoff.unwrap().0, v.pfc.xon_offset.unwrap().0),
        (s_bytes, x_bytes)
    );
    let mut sim = Sim::new(&s, v);
    sim.run();
    let r = models::report::VariantReport::new(&sim, 0.0);
    assert!(r.summary.invariants.iter().all(|i| i.ok));
    assert_eq!(r.summary.drops, 0);
    let (n, cell, delay_ns) = (4u64, 256u64, 100.0);
    let (frame, wire) = (4096u64 + 62, roce_wire(4096));
    let c = frame.div_ceil(cell);
    let (s_cells, x_cells) = (s_bytes.div_ceil(cell), x_bytes.div_ceil(cell));
    let drained = (s_cells.div_ceil(c) * c - (s_cells - x_cells)).div_ceil(c);
    let frame_ns = tx_ns(wire, 100.0);
    let lag_ns = 2.0 * delay_ns + tx_ns(84, 100.0) + 60.0 * 512.0 / 100.0;
    let t_off = n as f64 * (drained as f64 + (lag_ns / frame_ns).ceil()) * frame_ns;
    let (off, _) = crate::pfc::cycles(&sim);
    assert!(off.len() >= 100, "{} pauses", off.len());
    assert_close(crate::pfc::median(off), t_off, 0.0, 0.06, "XOFF -> XON (ns)");
}

#[test]
fn a_wred_profiles_band_marks_what_the_queue_puts_above_it() {
    // Two senders at C into one port, no congestion control, ECN at K with probability 1
    // (green min = max = K, 100 %): the queue grows one frame per frame time while both send
    // and drains as fast after, so every packet but the first and last K / frame leaving
    // finds K or more behind it: marks = 2N - 2 K / frame.
    let k = 400_000u64;
    let json = format!(
        r#"{{
        "WRED_PROFILE": {{"W": {{"wred_green_enable": "true", "ecn": "ecn_green",
            "green_min_threshold": "{k}", "green_max_threshold": "{k}", "green_drop_probability": "100"}}}},
        "QUEUE": {{"Ethernet0|3": {{"wred_profile": "W"}}}}
        }}"#
    );
    let flows = "[[flow]]\nsrc = \"h1\"\ndst = \"h0\"\nsize = \"4096000B\"\n[[flow]]\nsrc = \"h2\"\ndst = \"h0\"\nsize = \"4096000B\"";
    let (toml, _dir) = star_with("sonic-wred", &json, 3, flows);
    let r = run(&toml).remove(0);
    let n = 1000.0;
    let expected = 2.0 * n - 2.0 * k as f64 / (4096.0 + 62.0);
    assert_close(r.summary.ecn_marked as f64, expected, 4.0, 0.01, "ECN marks");
}

#[test]
fn the_command_line_names_the_json_path_warns_and_exports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bad = r#"{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}, "BUFFER_PROFILE": {"p": {"xoff": "lots"}}, "BUFFER_PG": {"Ethernet0|3": {"profile": "p"}}}"#;
    let (toml, dir) = star_with(
        "sonic-cli",
        bad,
        3,
        "[[flow]]\nsrc = \"h1\"\ndst = \"h0\"\nsize = \"1MB\"",
    );
    let file = dir.join("s.toml");
    std::fs::write(&file, &toml).unwrap();
    let o = sim_run(&file, &dir.join("out"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("s.toml:7") && err.contains("switch.sonic") && err.contains("BUFFER_PROFILE.p.xoff"),
        "{err}"
    );
    // The shipped scenario: warnings on stderr, the settings in summary.json, and an export
    // that imports to the same settings.
    let s = root.join("scenarios/sonic-as7326.toml");
    let out = dir.join("as7326");
    let o = sim_run(&s, &out, &["--plots", "none", "--variant", "tuned"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("note[sonic-not-modelled]: PFC_WD in sonic/as7326-56x.json")
            && err.contains("POLL_INTERVAL"),
        "{err}"
    );
    assert!(
        !err.contains("warning["),
        "the shipped file maps RoCEv2 to its lossless class: {err}"
    );
    let j = summary_json(&out);
    let sonic = &j["variants"][0]["sonic"];
    assert_eq!(sonic["set"]["switch.pg_alpha"], "-3");
    assert_eq!(
        sonic["overridden"],
        serde_json::json!(["switch.dscp_to_tc", "switch.ecn"])
    );
    let exported = dir.join("exported.json");
    let o = sim(&[
        "export",
        "sonic",
        s.to_str().unwrap(),
        "--variant",
        "tuned",
        "--out",
        exported.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let back = models::sonic::import(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    let ecn = back
        .set
        .iter()
        .find(|(k, _)| k == "switch.ecn")
        .unwrap()
        .1
        .to_string();
    assert!(
        ecn.contains("10000B") && ecn.contains("100000B"),
        "the tuned band: {ecn}"
    );
    let o = sim(&[
        "export",
        "sonic",
        s.to_str().unwrap(),
        "--out",
        exported.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "an existing file is not replaced");
}

#[test]
fn rocev2_marked_dscp_26_lands_in_azures_lossy_class_until_the_map_says_otherwise() {
    // SONiC's AZURE DSCP_TO_TC_MAP sends DSCP 26 (the usual RoCEv2 marking, priority 3 here)
    // to TC 1, which is lossy: an incast into a small buffer then drops where PFC would
    // have paused. Mapping 26 to 3, as a lossless RoCEv2 deployment must, makes it lossless.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sonic/as7326-56x.json");
    let toml = |extra: &str| {
        format!(
            r#"
            [topology]
            kind = "star"
            hosts = 9
            host_link = {{ rate = "25Gbps", cable = "5m" }}
            [switch]
            asic = "trident3"
            sonic = "{}"
            shared_pool = "3MB"
            {extra}
            [nic]
            trust = "dscp"
            [[workload]]
            kind = "incast"
            size = "1MB"
            "#,
            root.display()
        )
    };
    // The check says so before anything runs, where the file says it, with the fix.
    let f = &scenario(&toml("")).variants[0].findings;
    let lossy: Vec<_> = f.iter().filter(|f| f.id == "roce-lossy-class").collect();
    assert_eq!(lossy.len(), 1, "{f:#?}");
    assert_eq!(lossy[0].key, "DSCP_TO_TC_MAP.AZURE.26");
    assert!(
        lossy[0]
            .file
            .as_deref()
            .is_some_and(|p| p.ends_with("as7326-56x.json"))
    );
    assert!(lossy[0].fix.contains("\"26\" = 3"), "{}", lossy[0].fix);
    let fixed_toml = toml(r#"dscp_to_tc = { "26" = 3 }"#);
    assert!(
        scenario(&fixed_toml).variants[0]
            .findings
            .iter()
            .all(|f| f.id != "roce-lossy-class")
    );
    let azure = run(&toml("")).remove(0);
    assert!(azure.summary.drops > 0, "lossy TC 1 drops");
    assert_eq!(azure.summary.pfc_pause_frames, 0, "no PFC on TC 1");
    let fixed = run(&toml(r#"dscp_to_tc = { "26" = 3 }"#)).remove(0);
    assert_eq!(fixed.summary.drops, 0);
    assert!(fixed.summary.pfc_pause_frames > 0, "TC 3 is lossless: it pauses");
    // The drops are the lossy queue's, at the incast port.
    let lossy = |r| counter(r, "sw0", "to-h0", "drop_lossy_buffer_full");
    assert_eq!((lossy(&azure) > 0, lossy(&fixed)), (true, 0));
}

#[test]
fn an_imported_trident3_pauses_at_the_shared_pool_sonic_gives_it() {
    // The AS7326-56X leaf fully cabled (48 x 25G, 8 x 100G). SONiC's BUFFER_POOL size,
    // 26,284,032 B (102,672 cells of 256 B), is the shared pool; the 6,291,456 B xoff is the
    // headroom pool, and each PG's headroom is not carved out of the shared pool again.
    // Two 25G senders into one 25G port on lossless priority 3: each ingress PG gains half
    // the excess, and both pause when x = alpha (B - 2x), x = alpha B / (1 + 2 alpha) (alpha =
    // 2^-3: dynamic_th -3), after their 4-cell minimum (the profile's size, 1024 B).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sonic/as7326-56x.json");
    let toml = format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 8
        hosts_per_leaf = 48
        host_link = {{ rate = "25Gbps", cable = "5m" }}
        fabric_link = {{ rate = "100Gbps", cable = "40m" }}
        [switch]
        asic = "trident3"
        sonic = "{}"
        dscp_to_tc = {{ "26" = 3 }}
        [nic]
        cc = {{ kind = "none" }}
        [run]
        max_time = "2ms"
        [[flow]]
        src = "h1"
        dst = "h0"
        size = "8MB"
        [[flow]]
        src = "h2"
        dst = "h0"
        size = "8MB"
        "#,
        root.display()
    );
    let s = scenario(&toml);
    let v = &s.variants[0];
    assert_eq!(v.switch.shared_pool.map(|b| b.0), Some(26_284_032));
    assert_eq!(v.switch.headroom_pool.map(|b| b.0), Some(6_291_456));
    let mut sim = Sim::new(&s, v);
    let (alpha, b): (f64, f64) = (0.125, 102_672.0);
    // Before the run: one PG's threshold is alpha B, plus its minimum.
    let port = sim.net.ports_of(sim.net.switch_node[0]).next().unwrap();
    let (_, xoff, _) = sim.switches[0].pg_sample(port);
    assert_eq!(xoff, (b * alpha) as u64 * 256 + 1024, "alpha x the pool as given");
    sim.run();
    // Each PG gains half of what the 25G port does not drain: 17 cells a frame, frames
    // arriving at 2 x 25G and leaving at 25G (4178 B each on the wire).
    let frames_per_s = 25e9 / (4178.0 * 8.0) / 2.0;
    let x = alpha * b / (1.0 + 2.0 * alpha) + 4.0;
    let expected_ns = (x / 17.0).ceil() / frames_per_s * 1e9;
    let first = sim
        .log
        .rows()
        .find(|r| r.event == models::telemetry::Trace::Xoff)
        .map(|r| r.time.as_ns_f64())
        .expect("an XOFF");
    assert_close(first, expected_ns, 0.0, 0.02, "first XOFF (ns)");
}

#[test]
fn sonic_counters_carry_the_boxs_own_port_names_matched_by_speed() {
    // Ethernet0 runs at 25G, Ethernet4 to Ethernet16 at 100G: the three 100G cables take
    // the first three free 100G ports, in port order, whatever order the JSON lists them in.
    let json = r#"{"PORT": {
        "Ethernet16": {"speed": "100000", "lanes": "16,17,18,19"},
        "Ethernet0": {"speed": "25000", "lanes": "0"},
        "Ethernet8": {"speed": "100000", "lanes": "8,9,10,11"},
        "Ethernet4": {"speed": "100000", "lanes": "4,5,6,7"},
        "Ethernet12": {"speed": "100000", "lanes": "12,13,14,15"}}}"#;
    let (toml, _dir) = star_with(
        "sonic-port-names",
        json,
        3,
        "[[flow]]\nsrc = \"h1\"\ndst = \"h0\"\nsize = \"10KB\"",
    );
    let s = scenario(&toml);
    assert!(
        s.variants[0].findings.iter().all(|f| f.id != "sonic-ports"),
        "every cable has a port"
    );
    let r = run(&toml).remove(0);
    let mut names: Vec<(String, String)> = r
        .sonic
        .iter()
        .map(|row| (row.port.to_string(), row.interface.to_string()))
        .collect();
    names.sort();
    names.dedup();
    let want: Vec<(String, String)> = [
        ("to-h0", "Ethernet4"),
        ("to-h1", "Ethernet8"),
        ("to-h2", "Ethernet12"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(names, want);
    // A file with one 100G port: the other two cables find none, and the check says so.
    let one = r#"{"PORT": {"Ethernet0": {"speed": "100000"}, "Ethernet4": {"speed": "25000"}}}"#;
    let (toml, _dir) = star_with(
        "sonic-port-names-short",
        one,
        3,
        "[[flow]]\nsrc = \"h1\"\ndst = \"h0\"\nsize = \"10KB\"",
    );
    let f = scenario(&toml).variants[0].findings.clone();
    let ports: Vec<_> = f.iter().filter(|f| f.id == "sonic-ports").collect();
    assert_eq!(ports.len(), 1, "{f:#?}");
    assert!(
        ports[0]
            .problem
            .contains("sw0's cable to h1 (100G), sw0's cable to h2 (100G)"),
        "{}",
        ports[0].problem
    );
}

#[test]
fn a_cbfc_priority_is_exported_as_a_pfc_one_with_its_headroom_and_the_user_is_told() {
    // config_db.json has no CBFC table. pfc-vs-cbfc.toml's cbfc variant keeps priority 3
    // lossless by credits; its export must keep it lossless on a box (pfc_enable 3, a lossless
    // profile whose xoff is the headroom the cable needs, as the pfc variant's export has)
    // and say so on stderr.
    let s = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/pfc-vs-cbfc.toml");
    let export = |variant: &str| {
        let o = sim(&["export", "sonic", s.to_str().unwrap(), "--variant", variant]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (json, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (cbfc, warning) = export("cbfc");
    let (pfc, quiet) = export("pfc");
    assert!(
        warning.contains("priority 3") && warning.contains("CBFC"),
        "{warning}"
    );
    assert!(!quiet.contains("CBFC"), "{quiet}");
    assert_eq!(cbfc["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"], "3");
    assert_eq!(cbfc["BUFFER_PROFILE"], pfc["BUFFER_PROFILE"]);
    let xoff = |j: &serde_json::Value| -> Vec<u64> {
        let profiles = j["BUFFER_PROFILE"].as_object().unwrap();
        profiles
            .values()
            .filter_map(|p| p.get("xoff")?.as_str()?.parse().ok())
            .collect()
    };
    assert!(xoff(&cbfc).iter().all(|&x| x > 0) && !xoff(&cbfc).is_empty());
}
