//! `PORT.<port>.fec` from a SONiC file on the cables (models/src/scenario/port_fec.rs): each
//! port runs the Reed-Solomon code IEEE 802.3 gives its lanes, an end the scenario leaves open
//! follows it, and ends forced to different modes keep their cable down with a finding that
//! names the file.

use crate::common::*;

/// A star of two 100G hosts whose switch reads `json`; `fec` is the host cables' own, if any.
fn star(name: &str, json: &str, fec: &str) -> (String, std::path::PathBuf) {
    let dir = tmp(name);
    let file = dir.join("config_db.json");
    std::fs::write(&file, json).unwrap();
    let toml = format!(
        r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = {{ rate = "100Gbps", cable = "3m" {fec} }}
        [nic]
        mtu = "4096B"
        [switch]
        sonic = "{}"
        [[flow]]
        src = "h1"
        dst = "h0"
        size = "10KB"
        "#,
        file.display()
    );
    (toml, dir)
}

fn ports(fec0: &str, fec1: &str) -> String {
    format!(
        r#"{{"PORT": {{
            "Ethernet0": {{"speed": "100000", "lanes": "0,1,2,3"{fec0}}},
            "Ethernet4": {{"speed": "100000", "lanes": "4,5"{fec1}}}}}}}"#
    )
}

#[test]
fn a_files_rs_ports_run_the_code_of_their_lanes_and_add_its_codeword_at_each_hop() {
    // Ethernet0: 100G on four NRZ lanes, RS(528,514) (clause 91); Ethernet4: 100G on two
    // PAM4 lanes, RS(544,514). Below 200G the decoder holds one codeword of 5,120 MAC bits:
    // 51.2 ns at 100G on each of the flow's two hops (the receiver's completion: h1 to h0).
    let (plain, _d1) = star("sonic-fec-plain", &ports("", ""), "");
    let rs = ports(r#", "fec": "rs""#, r#", "fec": "rs""#);
    let (coded, _d2) = star("sonic-fec-rs", &rs, "");
    let fct = |t: &str| run(t)[0].flows[0].fct_ns.unwrap();
    assert_close(
        fct(&coded) - fct(&plain),
        2.0 * 51.2,
        0.001,
        0.0,
        "two hops of RS-FEC (ns)",
    );
    let notes = findings(&coded, "sonic-fec");
    let said: Vec<&str> = notes.iter().map(|f| f.problem.as_str()).collect();
    assert_eq!(notes.len(), 2, "{said:#?}");
    assert!(said.iter().any(|p| p.contains("rs-528 on 1 cable")), "{said:#?}");
    assert!(said.iter().any(|p| p.contains("rs-544 on 1 cable")), "{said:#?}");
    assert!(findings(&coded, "fec-mismatch").is_empty());
    // `none` and `auto` leave the cables as they were.
    let open = ports(r#", "fec": "none""#, r#", "fec": "auto""#);
    let (open, _d3) = star("sonic-fec-open", &open, "");
    assert_close(fct(&open), fct(&plain), 0.0, 0.0, "no FEC (ns)");
    assert!(findings(&open, "sonic-fec").is_empty());
}

#[test]
fn a_port_forced_to_another_mode_than_its_cable_keeps_the_cable_down_and_says_where() {
    // The scenario sets RS(528,514) on the host cables; the file runs Ethernet4 without FEC.
    let json = ports(r#", "fec": "rs""#, r#", "fec": "none""#);
    let (toml, _d) = star("sonic-fec-mismatch", &json, r#", fec = "rs-528""#);
    let f = findings(&toml, "fec-mismatch");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].key, "PORT.*.fec");
    assert!(f[0].file.as_deref().unwrap().ends_with("config_db.json"));
    assert!(
        f[0].problem.contains("1 cable never comes up")
            && f[0].problem.contains("Ethernet4 runs none")
            && f[0].problem.contains("h1 runs rs-528"),
        "{}",
        f[0].problem
    );
    // h1's only cable is down: its flow cannot start, and the run says why.
    let r = run_unchecked(&toml).remove(0);
    assert_eq!(r.summary.flows_completed, 0);
    // Ethernet0 agrees with the scenario: h0's cable is up and nothing is noted for it.
    assert!(findings(&toml, "sonic-fec").is_empty());
}

#[test]
fn leaves_and_spines_from_files_that_disagree_on_fec_cut_the_fabric_and_hosts_follow_their_leaf() {
    let dir = tmp("sonic-fec-tiers");
    let leaf = r#"{"PORT": {
        "Ethernet0": {"speed": "25000", "fec": "rs"}, "Ethernet1": {"speed": "25000", "fec": "rs"},
        "Ethernet48": {"speed": "100000", "fec": "rs"}, "Ethernet52": {"speed": "100000", "fec": "rs"}}}"#;
    let spine = r#"{"PORT": {
        "Ethernet0": {"speed": "100000", "fec": "none"}, "Ethernet4": {"speed": "100000", "fec": "none"}}}"#;
    std::fs::write(dir.join("leaf.json"), leaf).unwrap();
    std::fs::write(dir.join("spine.json"), spine).unwrap();
    let toml = format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 2
        host_link = {{ rate = "25Gbps", cable = "3m" }}
        fabric_link = {{ rate = "100Gbps", cable = "10m" }}
        [switch.tier.leaf]
        sonic = "{}"
        [switch.tier.spine]
        sonic = "{}"
        [[flow]]
        src = "h0"
        dst = "h2"
        size = "10KB"
        "#,
        dir.join("leaf.json").display(),
        dir.join("spine.json").display()
    );
    let f = findings(&toml, "fec-mismatch");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(
        f[0].problem.starts_with("4 cables never come up"),
        "{}",
        f[0].problem
    );
    assert!(
        f[0].problem
            .contains("leaf0 Ethernet48 runs rs-528, spine0 Ethernet0 runs none"),
        "{}",
        f[0].problem
    );
    // The hosts' ends follow their leaf's RS(528,514): 204.8 ns a hop at 25G.
    let n = findings(&toml, "sonic-fec");
    assert!(
        n.iter()
            .any(|f| f.problem.contains("rs-528 on 4 cables") && f.problem.contains("204.8 ns")),
        "{n:#?}"
    );
    // No path between the leaves: the flow does not finish, and says why.
    let r = run_unchecked(&toml).remove(0);
    assert_eq!(r.summary.flows_completed, 0);
    let status = r.flows[0].status.to_string();
    assert!(status.contains("no route from h0 to h2"), "{status}");
}

#[test]
fn firecode_is_named_as_not_modelled_and_leaves_the_cable_as_the_scenario_says() {
    let (toml, _d) = star("sonic-fec-fc", &ports(r#", "fec": "fc""#, ""), "");
    let f = findings(&toml, "sonic-not-modelled");
    assert!(
        f.iter()
            .any(|f| f.key == "PORT.Ethernet0.fec" && f.problem.contains("clause 74")),
        "{f:#?}"
    );
    assert!(findings(&toml, "sonic-fec").is_empty());
}

#[test]
fn an_export_says_rs_where_a_cable_runs_it_and_imports_back_to_the_same_cables() {
    // RS(528,514) on the host cables, none on the fabric's: leaf0's export marks its two host
    // ports rs and leaves its uplinks' fec out (the box keeps its own default).
    let dir = tmp("sonic-fec-export");
    let file = dir.join("s.toml");
    let toml = r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 2
        host_link = { rate = "100Gbps", cable = "3m", fec = "rs-528" }
        fabric_link = { rate = "100Gbps", cable = "10m" }
        [[flow]]
        src = "h0"
        dst = "h2"
        size = "100KB"
        "#;
    std::fs::write(&file, toml).unwrap();
    let exported = dir.join("leaf0.json");
    let o = crate::common::sim(&[
        "export",
        "sonic",
        file.to_str().unwrap(),
        "--switch",
        "leaf0",
        "--out",
        exported.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    let fec: Vec<Option<&str>> = (0..4)
        .map(|i| j["PORT"][format!("Ethernet{}", 4 * i)]["fec"].as_str())
        .collect();
    assert_eq!(fec, [Some("rs"), Some("rs"), None, None], "{j:#}");
    // Imported again on leaf0 of the same fabric: its host cables still run RS(528,514) (no
    // mismatch, no note: nothing changes), and the flow takes the same time.
    let with = toml.replace(
        "[[flow]]",
        &format!(
            "[switch.tier.leaf0]\nsonic = \"{}\"\n[[flow]]",
            exported.display()
        ),
    );
    assert!(findings(&with, "fec-mismatch").is_empty());
    assert!(findings(&with, "sonic-fec").is_empty());
    let fct = |t: &str| run(t)[0].flows[0].fct_ns.unwrap();
    assert_close(fct(&with), fct(toml), 0.0, 0.0, "the same run (ns)");
    // A port whose cable a mismatch keeps down is exported with its own end's mode: leaf0's
    // Ethernet20 in fec-mismatch.toml runs rs against spine1's none.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = crate::common::sim(&[
        "export",
        "sonic",
        root.join("scenarios/fec-mismatch.toml").to_str().unwrap(),
        "--variant",
        "spine1-at-none",
        "--switch",
        "leaf0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for i in 0..6 {
        assert_eq!(j["PORT"][format!("Ethernet{}", 4 * i)]["fec"], "rs", "{j:#}");
    }
}
