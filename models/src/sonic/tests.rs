//! The importer against the example files' documented values (SONiC's templates, see
//! `scenarios/sonic/`), the exporter by round trip, and the errors' JSON paths.

use super::import;
use crate::scenario::{Overrides, parse};
use std::collections::BTreeMap;

fn example(name: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sonic");
    std::fs::read_to_string(root.join(name)).unwrap()
}

fn settings(src: &str) -> BTreeMap<String, String> {
    import(src)
        .unwrap()
        .set
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect()
}

#[test]
fn the_trident3_example_sets_its_templates_values() {
    // Dell S5232F-P-25G's Trident 3 buffers and SONiC's generic AZURE QoS.
    let s = settings(&example("as7326-56x.json"));
    let want = [
        ("pfc.priorities", "[3, 4]"),
        ("switch.shared_pool", "\"26284032B\""),
        ("switch.headroom_pool", "\"6291456B\""),
        ("switch.pg_alpha", "-3"),
        ("pfc.xon_offset", "\"2048B\""),
        (
            "pfc.headroom_by_rate",
            "{ 100000Mbps = \"173568B\", 25000Mbps = \"65024B\" }",
        ),
        ("switch.pg_min", "\"1024B\""),
        ("switch.queue_alpha", "3"),
        (
            "switch.ecn",
            "{ kmax = \"2097152B\", kmin = \"1048576B\", pmax = 0.05 }",
        ),
        ("pfc.watchdog", "\"400ms\""),
        ("pfc.watchdog_action", "\"drop\""),
        ("pfc.watchdog_restore", "\"400ms\""),
    ];
    for (k, v) in want {
        assert_eq!(s.get(k).map(String::as_str), Some(v), "{k}");
    }
    assert!(s["switch.scheduler.dwrr"].contains("3 = 15") && s["switch.scheduler.dwrr"].contains("0 = 14"));
    // SONiC's AZURE map: DSCP 3 and 4 are the lossless classes, 26 (RoCEv2's usual marking)
    // goes to TC 1, 46 to 5, 48 to 6.
    let dscp = &s["switch.dscp_to_tc"];
    for (d, tc) in [(3, 3), (4, 4), (26, 1), (46, 5), (48, 6), (0, 1)] {
        assert!(
            dscp.contains(&format!(" {d} = {tc},")) || dscp.contains(&format!("{{ {d} = {tc},")),
            "DSCP {d}: {dscp}"
        );
    }
}

#[test]
fn the_spectrum2_example_tells_profiles_of_one_speed_apart_by_cable() {
    let s = settings(&example("sn3700c.json"));
    assert_eq!(s["switch.shared_pool"], "\"14542848B\"");
    assert!(
        !s.contains_key("switch.headroom_pool"),
        "each PG reserves its own headroom"
    );
    assert_eq!(s["switch.pg_alpha"], "0");
    assert_eq!(
        s["pfc.headroom_by_rate"],
        "{ \"100000Mbps/40m\" = \"44032B\", \"100000Mbps/5m\" = \"33792B\" }"
    );
    // Spectrum reserves size = xon + xoff as headroom: no guaranteed minimum besides it.
    assert!(!s.contains_key("switch.pg_min"));
}

#[test]
fn every_field_the_model_does_not_act_on_is_named() {
    let w = import(&example("as7326-56x.json")).unwrap().warnings;
    for f in ["POLL_INTERVAL", "pfcwd_sw_enable", "yellow and red"] {
        assert!(w.iter().any(|x| x.contains(f)), "no warning names {f}: {w:#?}");
    }
    let src = r#"{"BUFFER_PROFILE": {"p": {"size": "0", "packet_discard_action": "trim"}}, "FLEX_COUNTER_TABLE": {}}"#;
    let w = import(src).unwrap().warnings;
    assert!(
        w.iter()
            .any(|x| x == "BUFFER_PROFILE: fields not modelled: packet_discard_action"),
        "{w:?}"
    );
    assert!(w.iter().any(|x| x.contains("FLEX_COUNTER_TABLE")), "{w:?}");
}

#[test]
fn the_watchdogs_action_and_restoration_are_taken_without_a_warning() {
    let w = import(&example("as7326-56x.json")).unwrap().warnings;
    assert!(
        !w.iter()
            .any(|x| x.contains("PFC_WD.*.action") || x.contains("restoration")),
        "{w:#?}"
    );
    let bad = r#"{"PFC_WD": {"Ethernet0": {"detection_time": "200", "action": "shutdown"}}}"#;
    assert_eq!(import(bad).unwrap_err().path, "PFC_WD.Ethernet0.action");
}

#[test]
fn malformed_files_and_values_name_their_json_path() {
    let e = import("{\"BUFFER_POOL\": {").unwrap_err();
    assert!(e.path.starts_with("line 1"), "{e}");
    let bad = |src: &str, path: &str| {
        let e = import(src).unwrap_err();
        assert_eq!(e.path, path, "{e}");
    };
    bad(
        r#"{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,9"}}}"#,
        "PORT_QOS_MAP.Ethernet0.pfc_enable",
    );
    bad(
        r#"{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}, "BUFFER_PROFILE": {"p": {"dynamic_th": "12"}}, "BUFFER_PG": {"Ethernet0|3": {"profile": "p"}}}"#,
        "BUFFER_PROFILE.p.dynamic_th",
    );
    bad(
        r#"{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}, "BUFFER_PG": {"Ethernet0|3": {"profile": "missing"}}}"#,
        "BUFFER_PG.Ethernet0|3.profile",
    );
    bad(
        r#"{"BUFFER_PG": {"Ethernet0|9-3": {"profile": "p"}}}"#,
        "BUFFER_PG.Ethernet0|9-3",
    );
    bad(
        r#"{"QUEUE": {"Ethernet0|3": {"scheduler": "s"}}, "SCHEDULER": {"s": {"type": "DWRR", "weight": "0"}}}"#,
        "SCHEDULER.s.weight",
    );
    bad(
        r#"{"BUFFER_POOL": {"ingress_lossless_pool": {"size": 12.5}}}"#,
        "BUFFER_POOL.ingress_lossless_pool.size",
    );
    bad(
        r#"{"PFC_WD": {"Ethernet0": {"detection_time": "x"}}}"#,
        "PFC_WD.Ethernet0.detection_time",
    );
}

#[test]
fn old_style_references_resolve() {
    let src = r#"{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}},
        "BUFFER_PROFILE": {"p": {"pool": "[BUFFER_POOL|ingress_lossless_pool]", "xoff": "1000", "dynamic_th": "1"}},
        "BUFFER_PG": {"Ethernet0,Ethernet4|3": {"profile": "[BUFFER_PROFILE|p]"}}}"#;
    let s = settings(src);
    assert_eq!(
        (s["pfc.headroom"].as_str(), s["switch.pg_alpha"].as_str()),
        ("\"1000B\"", "1")
    );
}

/// A scenario on `file` (one switch kind, the example's port speeds and cables).
fn scenario_on(file: &str, host: &str, cable: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sonic");
    format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 2
        host_link = {{ rate = "{host}", cable = "{cable}" }}
        fabric_link = {{ rate = "100Gbps", cable = "40m" }}
        [switch]
        sonic = "{}"
        [[flow]]
        src = "h0"
        dst = "h3"
        size = "1MB"
        "#,
        dir.join(file).display()
    )
}

#[test]
fn import_export_import_gives_the_same_settings() {
    for (file, host, cable) in [
        ("as7326-56x.json", "25Gbps", "5m"),
        ("sn3700c.json", "100Gbps", "5m"),
    ] {
        let first = settings(&example(file));
        let s = parse(
            &scenario_on(file, host, cable),
            "t.toml",
            "t",
            &Overrides::default(),
        )
        .unwrap();
        let v = &s.variants[0];
        let (sw, pfc) = v.switch_settings(0);
        let json =
            super::export::export(sw, pfc, &s.switch_cables(0).unwrap(), &[], &[], v.max_frame()).unwrap();
        let again = settings(&serde_json::to_string(&json).unwrap());
        assert_eq!(first, again, "{file}: round trip");
    }
}

#[test]
fn the_scenario_runs_with_the_files_thresholds_and_its_own_keys_win() {
    let toml = scenario_on("as7326-56x.json", "25Gbps", "5m") + "\n[pfc]\nxon_offset = \"4096B\"\n";
    let s = parse(&toml, "t.toml", "t", &Overrides::default()).unwrap();
    let v = &s.variants[0];
    assert_eq!(v.pfc.priorities, vec![3, 4]);
    assert_eq!(
        v.pfc.xon_offset.map(|b| b.0),
        Some(4096),
        "the scenario's key wins"
    );
    let e = v.switch.ecn.as_ref().unwrap();
    assert_eq!((e.kmin.0, e.kmax.0, e.pmax), (1_048_576, 2_097_152, 0.05));
    let info = v.sonic.as_ref().unwrap();
    assert_eq!(info.overridden, vec!["pfc.xon_offset".to_string()]);
    // Each 25G host port gets the 25G profile's xoff as headroom, each 100G uplink the
    // 100G one's.
    assert_eq!(
        v.pfc.headroom_for(
            sim_core::BitRate::gbps(25),
            crate::link::cable_delay(sim_core::Length::parse("5m").unwrap())
        ),
        Some(65_024)
    );
    assert_eq!(
        v.pfc.headroom_for(
            sim_core::BitRate::gbps(100),
            crate::link::cable_delay(sim_core::Length::parse("40m").unwrap())
        ),
        Some(173_568)
    );
}

#[test]
fn a_value_the_scenario_refuses_is_named_by_its_json_path() {
    // A pool of 0 B passes the importer (a whole number) but not `switch.shared_pool`'s check: the
    // error names the file's JSON path, not the key the import wrote it to.
    let dir = tempfile::tempdir().unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&example("sn3700c.json")).unwrap();
    json["BUFFER_POOL"]["ingress_lossless_pool"]["size"] = "0".into();
    let file = dir.path().join("leaf.json");
    std::fs::write(&file, json.to_string()).unwrap();
    let toml = scenario_on("sn3700c.json", "100Gbps", "5m").replace(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/sonic/sn3700c.json")
            .display()
            .to_string(),
        &file.display().to_string(),
    );
    let e = parse(&toml, "t.toml", "t", &Overrides::default()).unwrap_err();
    assert_eq!(
        e.key.as_deref(),
        Some("BUFFER_POOL.ingress_lossless_pool.size"),
        "{e}"
    );
    assert!(e.to_string().contains("leaf.json"), "{e}");
    assert!(e.to_string().contains("switch.shared_pool"), "{e}");
}

#[test]
fn a_buffer_pg_key_of_thousands_of_ports_is_read_in_linear_memory() {
    // 30,000 ports in one key: each port once, not the key copied per port (that was
    // 30,000 x 400 KB, more memory than the machine has).
    let ports: Vec<String> = (0..30_000).map(|i| format!("Ethernet{i}")).collect();
    let src = format!(
        r#"{{"PORT_QOS_MAP": {{"Ethernet0": {{"pfc_enable": "3"}}}},
            "BUFFER_PROFILE": {{"p": {{"xoff": "1000", "dynamic_th": "1"}}}},
            "BUFFER_PG": {{"{}|3": {{"profile": "p"}}}}}}"#,
        ports.join(",")
    );
    let s = settings(&src);
    assert_eq!(s["pfc.headroom"], "\"1000B\"");
}

#[test]
fn a_computed_headroom_is_exported_as_the_run_lays_it_out_and_imports_back_the_same() {
    // No pfc.headroom: the run computes each port's from its cable. The export must write
    // those figures (it refused before), and a box configured from it must reserve the same.
    let dir = std::env::temp_dir().join(format!("sim-sonic-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fabric = |switch: &str| {
        format!(
            r#"
            [topology]
            kind = "leaf-spine"
            leaves = 2
            spines = 1
            hosts_per_leaf = 3
            host_link = {{ rate = "25Gbps", cable = "3m" }}
            fabric_link = {{ rate = "100Gbps", cable = "100m" }}
            [switch]
            asic = "trident3"
            {switch}
            [pfc]
            priorities = [3]
            [[flow]]
            src = "h0"
            dst = "h3"
            size = "1MB"
            "#
        )
    };
    let s = parse(&fabric(""), "t.toml", "t", &Overrides::default()).unwrap();
    let v = &s.variants[0];
    let (sw, pfc) = v.switch_settings(0);
    let json = super::export::export(sw, pfc, &s.switch_cables(0).unwrap(), &[], &[], v.max_frame()).unwrap();
    let profiles = json["BUFFER_PROFILE"].as_object().unwrap();
    let xoff = |name: &str| profiles[name]["xoff"].as_str().unwrap().parse::<u64>().unwrap();
    // A 100 m cable needs more headroom than a 3 m one, at four times the rate.
    assert!(xoff("pg_lossless_100000_100m_profile") > 2 * xoff("pg_lossless_25000_3m_profile"));
    let file = dir.join("leaf0.json");
    std::fs::write(&file, serde_json::to_string(&json).unwrap()).unwrap();
    let imported = parse(
        &fabric(&format!("sonic = \"{}\"", file.display())),
        "t.toml",
        "t",
        &Overrides::default(),
    )
    .unwrap();
    let (a, b) = (
        &v.resolved.buffers[0].mmu,
        &imported.variants[0].resolved.buffers[0].mmu,
    );
    assert_eq!(
        a.headroom_bytes(),
        b.headroom_bytes(),
        "the same headroom reserved"
    );
    assert_eq!(
        a.shared_pool_bytes(),
        b.shared_pool_bytes(),
        "the same shared pool"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ports_rs_is_the_code_802_3_gives_its_lanes() {
    use crate::fec::Fec;
    let port = |speed: u64, lanes: Option<&str>, fec: &str| super::SonicPort {
        name: "Ethernet0".into(),
        speed_mbps: Some(speed),
        lanes: lanes.map(str::to_string),
        alias: None,
        fec: Some(fec.into()),
        llr: None,
    };
    // NRZ lanes of 25G: RS(528,514) (clauses 91, 108); PAM4 lanes of 50G and up: RS(544,514)
    // (clauses 91, 119, 134).
    for (speed, lanes, want) in [
        (25_000, None, Fec::Rs528),
        (100_000, None, Fec::Rs528),
        (100_000, Some("0,1,2,3"), Fec::Rs528),
        (100_000, Some("0,1"), Fec::Rs544),
        (100_000, Some("0"), Fec::Rs544),
        (50_000, None, Fec::Rs544),
        (50_000, Some("0,1"), Fec::Rs528),
        (200_000, Some("0,1,2,3"), Fec::Rs544),
        (400_000, Some("0,1,2,3,4,5,6,7"), Fec::Rs544),
    ] {
        assert_eq!(
            port(speed, lanes, "rs").fec_mode(speed),
            Some(want),
            "{speed} {lanes:?}"
        );
    }
    assert_eq!(port(100_000, None, "none").fec_mode(100_000), Some(Fec::None));
    assert_eq!(port(100_000, None, "auto").fec_mode(100_000), None);
    assert_eq!(port(25_000, None, "fc").fec_mode(25_000), None);
}

/// Two ports and the LLR tables of SONiC's LLR design (its §2.4.1.5 sample profile), with
/// `port` as Ethernet0's `LLR_PORT` fields and `profile` added to the profile's.
fn llr_file(mode: &str, port: &str, profile: &str) -> String {
    format!(
        r#"{{"PORT": {{"Ethernet0": {{"speed": "100000"}}, "Ethernet4": {{"speed": "100000"}}}},
            {mode}
            "LLR_PORT": {{"Ethernet0": {{{port}}}}},
            "LLR_PROFILE": {{"llr_800000_40m_profile": {{
                "max_outstanding_frames": "4096", "max_outstanding_bytes": "262144",
                "max_replay_count": "3", "pcs_lost_timeout": "50000", "data_age_timeout": "20000",
                "ctlos_spacing_bytes": "2048", "init_action": "best_effort"{profile}}}}}}}"#
    )
}

const STATIC: &str = r#""LLR_CONFIG": {"GLOBAL": {"mode": "static"}},"#;
const BOTH: &str =
    r#""llr_local": "enabled", "llr_remote": "enabled", "llr_profile": "llr_800000_40m_profile""#;

#[test]
fn llr_tables_give_each_port_its_enables_and_its_profile_with_the_yang_defaults() {
    use crate::llr::FrameAction;
    use sim_core::{Bytes, Duration};
    let got = import(&llr_file(
        STATIC,
        BOTH,
        r#", "max_replay_timer": "5000", "flush_action": "block""#,
    ))
    .unwrap();
    let llr = got.ports[0].llr.clone().expect("Ethernet0's entry");
    assert!(llr.local && llr.remote);
    let (name, s) = llr.profile.clone().unwrap();
    assert_eq!(name, "llr_800000_40m_profile");
    assert_eq!((s.frames, s.buffer), (Some(4096), Some(Bytes(262_144))));
    assert_eq!(s.replay_timer, Some(Duration::from_ns(5_000)));
    assert_eq!(s.replay_count, Some(3));
    assert_eq!(s.pcs_lost_timeout, Some(Duration::from_ns(50_000)));
    assert_eq!(s.data_age_timeout, Some(Duration::from_ns(20_000)));
    assert_eq!(s.flush_action, Some(FrameAction::Block));
    // llrorch always creates profiles with RE_INIT_ON_FLUSH.
    assert_eq!(s.re_init_on_flush, Some(true));
    assert_eq!(llr.settings(), Some(s));
    assert!(got.ports[1].llr.is_none(), "no entry for Ethernet4");
    assert!(
        got.warnings.iter().all(|w| !w.contains("LLR")),
        "{:?}",
        got.warnings
    );
    // What a profile leaves out takes sonic-llr-profile's YANG defaults: one replay.
    let sparse = r#"{"PORT": {"Ethernet0": {}}, "LLR_CONFIG": {"GLOBAL": {"mode": "static"}},
        "LLR_PORT": {"Ethernet0": {"llr_local": "enabled", "llr_remote": "enabled", "profile": "p"}},
        "LLR_PROFILE": {"p": {"max_outstanding_frames": "10", "max_outstanding_bytes": "40000"}}}"#;
    let got = import(sparse).unwrap();
    let s = got.ports[0].llr.clone().unwrap().profile.unwrap().1;
    assert_eq!(s.replay_count, Some(1));
    assert_eq!(s.ctlos_spacing, Some(Bytes(2_048)));
    assert_eq!(
        (s.init_action, s.flush_action),
        (Some(FrameAction::BestEffort), Some(FrameAction::BestEffort))
    );
    // ... but for the replay timer, whose default (0) the model cannot run: said out loud.
    assert_eq!(s.replay_timer, Some(crate::llr::REPLAY_TIMER));
    assert!(
        got.warnings
            .iter()
            .any(|w| w.starts_with("LLR_PROFILE.p.max_replay_timer")),
        "{:?}",
        got.warnings
    );
}

#[test]
fn llr_entries_that_cannot_apply_are_warned_and_values_the_model_cannot_run_are_refused() {
    let warned = |json: &str, starts: &str| {
        let got = import(json).unwrap();
        assert!(
            got.warnings.iter().any(|w| w.starts_with(starts)),
            "{starts}: {:?}",
            got.warnings
        );
        got
    };
    // Dynamic mode: LLDP decides, which SONiC's phase I does not have.
    let dynamic = r#""LLR_CONFIG": {"GLOBAL": {"mode": "dynamic"}},"#;
    let got = warned(&llr_file(dynamic, BOTH, ""), "LLR_CONFIG.GLOBAL.mode: dynamic");
    assert!(got.ports[0].llr.is_none());
    // No mode at all: read as static, said.
    let got = warned(&llr_file("", BOTH, ""), "LLR_CONFIG.GLOBAL.mode: missing");
    assert!(got.ports[0].llr.is_some());
    // A profile without a mandatory field is not created: the port binds nothing.
    let no_bytes = llr_file(STATIC, BOTH, "").replace(r#""max_outstanding_bytes": "262144","#, "");
    let got = warned(
        &no_bytes,
        "LLR_PROFILE.llr_800000_40m_profile: max_outstanding_bytes missing",
    );
    assert_eq!(got.ports[0].llr.clone().unwrap().settings(), None);
    // Enabled with no profile: the port's LLR stays down.
    let unbound = r#""llr_local": "enabled", "llr_remote": "enabled""#;
    let got = warned(
        &llr_file(STATIC, unbound, ""),
        "LLR_PORT.Ethernet0: LLR enabled with no llr_profile",
    );
    assert_eq!(got.ports[0].llr.clone().unwrap().settings(), None);
    // One direction only: not a profile the port runs.
    let half = r#""llr_local": "enabled", "llr_profile": "llr_800000_40m_profile""#;
    let got = import(&llr_file(STATIC, half, "")).unwrap();
    assert_eq!(got.ports[0].llr.clone().unwrap().settings(), None);
    // A port the PORT table does not have.
    let json =
        llr_file(STATIC, BOTH, "").replace(r#""LLR_PORT": {"Ethernet0""#, r#""LLR_PORT": {"Ethernet8""#);
    warned(&json, "LLR_PORT.Ethernet8: no port Ethernet8 in PORT");
    // Refused, by their JSON paths: outside the YANG ranges, and what the model cannot run.
    for (extra, path) in [
        (
            r#", "max_replay_count": "0""#,
            "LLR_PROFILE.llr_800000_40m_profile.max_replay_count",
        ),
        (
            r#", "ctlos_spacing_bytes": "100""#,
            "LLR_PROFILE.llr_800000_40m_profile.ctlos_spacing_bytes",
        ),
        (
            r#", "flush_action": "drop""#,
            "LLR_PROFILE.llr_800000_40m_profile.flush_action",
        ),
        (
            r#", "max_replay_timer": "70000""#,
            "LLR_PROFILE.llr_800000_40m_profile.max_replay_timer",
        ),
    ] {
        let json = llr_file(STATIC, BOTH, "")
            .replace(r#", "max_replay_count": "3""#, "")
            .replace(
                r#""init_action": "best_effort""#,
                &format!(r#""init_action": "best_effort"{extra}"#),
            );
        let e = import(&json).unwrap_err();
        assert_eq!(e.path, path, "{e}");
    }
    let zero = llr_file(STATIC, BOTH, "").replace(
        r#""max_outstanding_frames": "4096""#,
        r#""max_outstanding_frames": "0""#,
    );
    let e = import(&zero).unwrap_err();
    assert_eq!(
        e.path, "LLR_PROFILE.llr_800000_40m_profile.max_outstanding_frames",
        "{e}"
    );
    let e = import(&llr_file(STATIC, r#""llr_local": "on""#, "")).unwrap_err();
    assert_eq!(e.path, "LLR_PORT.Ethernet0.llr_local", "{e}");
}

#[test]
fn llr_profiles_export_as_llr_tables_and_import_back_the_same() {
    // Host cables with a stated profile, fabric cables with the defaults (a buffer from the
    // 40 m cable's round trip): two profiles per leaf, each written in full.
    let toml = r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 2
        host_link = { rate = "100Gbps", cable = "3m", llr = { frames = 100, replay_count = 2, flush_action = "discard", ctlos_spacing = "4KiB" } }
        fabric_link = { rate = "400Gbps", cable = "40m", llr = true }
        [[flow]]
        src = "h0"
        dst = "h3"
        size = "1MB"
        "#;
    let s = parse(toml, "t.toml", "t", &Overrides::default()).unwrap();
    let v = &s.variants[0];
    let (sw, pfc) = v.switch_settings(0);
    let cables = s.switch_cables(0).unwrap();
    let llr = s.switch_cable_llr(0, v).unwrap();
    assert!(llr.iter().all(Option::is_some));
    let json = super::export::export(sw, pfc, &cables, &[], &llr, v.max_frame()).unwrap();
    let names: Vec<&String> = json["LLR_PROFILE"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["llr_100000_3m_profile", "llr_400000_40m_profile"]);
    assert_eq!(
        json["LLR_PROFILE"]["llr_100000_3m_profile"]["flush_action"],
        "discard"
    );
    let got = import(&serde_json::to_string(&json).unwrap()).unwrap();
    assert!(
        got.warnings.iter().all(|w| !w.contains("LLR")),
        "{:?}",
        got.warnings
    );
    for ((port, &(rate, delay)), want) in got.ports.iter().zip(&cables).zip(&llr) {
        let settings = port.llr.as_ref().and_then(|l| l.settings()).expect("an LLR port");
        let cable = crate::llr::LlrCable {
            ends: [true, true],
            settings,
        };
        assert_eq!(cable.resolve("", rate, delay).unwrap(), *want, "{}", port.name);
    }
}
