//! `[switch.tier.<name>]`: settings, and SONiC files, per tier or per switch, acting on those
//! switches only; errors naming the tier key.

use crate::common::*;
use models::asic::Asic;
use std::path::Path;

/// Three leaves under one spine, 100G, 1 us cables: h0 (leaf0) and h4 (leaf1) send 2 MB each
/// to h8 (leaf2). The spine's egress to leaf2 is the bottleneck, so the spine's PGs from
/// leaf0 and leaf1 reach their XOFF; its pauses hold the leaves' uplinks, so the leaves' PGs
/// from h0 and h4 reach theirs.
fn fabric(tiers: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 3
        spines = 1
        hosts_per_leaf = 4
        host_link = {{ rate = "100Gbps", delay = "1us" }}
        fabric_link = {{ rate = "100Gbps", delay = "1us" }}
        [switch]
        asic = "trident3"
        sonic_counters = true
        [pfc]
        priorities = [3]
        xoff = "40000B"
        {tiers}
        [[flow]]
        src = "h0"
        dst = "h8"
        size = "2MB"
        [[flow]]
        src = "h4"
        dst = "h8"
        size = "2MB"
        "#
    )
}

fn pg_shared(r: &models::report::VariantReport, switch: &str, iface: &str) -> u64 {
    r.sonic
        .iter()
        .find(|s| {
            &*s.switch == switch
                && &*s.interface == iface
                && s.command == "show priority-group watermark shared"
                && s.column == "PG3"
        })
        .unwrap_or_else(|| panic!("{switch} {iface}"))
        .value
        .parse()
        .unwrap()
}

/// The shared watermark of a PG with a static XOFF of `xoff` bytes: it takes whole frames
/// while under the threshold, so it stops at the first frame that reaches it.
fn at_xoff(xoff: u64, cell: u64) -> u64 {
    let c = (4096u64 + 62).div_ceil(cell);
    xoff.div_ceil(cell).div_ceil(c) * c * cell
}

#[test]
fn a_tiers_buffer_and_thresholds_act_on_its_switches_only() {
    let tiered = fabric(
        r#"
        [switch.tier.spine]
        asic = "spectrum2"
        pfc = { xoff = "100000B" }
        "#,
    );
    let r = run(&tiered).remove(0);
    let (td3, sp2) = (
        Asic::Trident3.profile().cell as u64,
        Asic::Spectrum2.profile().cell as u64,
    );
    // The spine's ports are cabled leaf0, leaf1, leaf2: Ethernet0 comes from leaf0.
    assert_eq!(
        pg_shared(&r, "spine0", "Ethernet0"),
        at_xoff(100_000, sp2),
        "spine: its tier's"
    );
    assert_eq!(pg_shared(&r, "spine0", "Ethernet4"), at_xoff(100_000, sp2));
    // A leaf's ports: its hosts first; h0 on Ethernet0.
    assert_eq!(
        pg_shared(&r, "leaf0", "Ethernet0"),
        at_xoff(40_000, td3),
        "leaf: [switch]'s"
    );
    assert_eq!(r.summary.drops, 0);
    // A tier written with [switch]'s own values changes nothing.
    let plain = run(&fabric("")).remove(0);
    let same = run(&fabric(
        "[switch.tier.spine]\nasic = \"trident3\"\npfc = { xoff = \"40000B\" }",
    ))
    .remove(0);
    assert_eq!(plain.summary.events, same.summary.events);
    let fct = |r: &models::report::VariantReport| r.flows.iter().map(|f| f.fct_ns).collect::<Vec<_>>();
    assert_eq!(fct(&plain), fct(&same));
    assert_eq!(pg_shared(&plain, "spine0", "Ethernet0"), at_xoff(40_000, td3));
}

#[test]
fn a_switch_named_in_full_takes_its_own_tier_over_its_stems() {
    let r = run(&fabric(
        r#"
        [switch.tier.leaf]
        pfc = { xoff = "60000B" }
        [switch.tier.leaf1]
        pfc = { xoff = "80000B" }
        "#,
    ))
    .remove(0);
    let td3 = Asic::Trident3.profile().cell as u64;
    assert_eq!(pg_shared(&r, "leaf0", "Ethernet0"), at_xoff(60_000, td3));
    assert_eq!(pg_shared(&r, "leaf1", "Ethernet0"), at_xoff(80_000, td3));
}

#[test]
fn tier_errors_name_the_key_and_exit_2() {
    let dir = tmp("tier-errors");
    for (tiers, key, words) in [
        (
            "[switch.tier.border]\nasic = \"spectrum2\"",
            "switch.tier.border",
            "names no switch",
        ),
        (
            "[switch.tier.spine]\nrouting = \"adaptive\"",
            "switch.tier.spine.routing",
            "whole fabric",
        ),
        (
            "[switch.tier.spine]\npfc = { priorities = [4] }",
            "switch.tier.spine.pfc.priorities",
            "whole fabric",
        ),
        (
            "[switch.tier.spine]\nbuffer = \"lots\"",
            "switch.tier.spine",
            "lots",
        ),
        (
            "[switch.tier.spine]\npfc = { watchdog_action = \"shutdown\" }",
            "switch.tier.spine.pfc",
            "shutdown",
        ),
    ] {
        let file = dir.join("t.toml");
        std::fs::write(&file, fabric(tiers)).unwrap();
        let o = sim_run(&file, &dir.join("out"), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{tiers}: {err}");
        assert!(err.contains(key) && err.contains(words), "{tiers}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A tier's SONiC file whose lossless priorities differ from the fabric's (a scenario
    // that writes `pfc.priorities` itself would win over the file).
    let json = dir.join("p4.json");
    std::fs::write(&json, r#"{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "4"}}}"#).unwrap();
    let file = dir.join("t.toml");
    let toml = fabric(&format!("[switch.tier.spine]\nsonic = \"{}\"", json.display()))
        .replace("priorities = [3]", "")
        .replace("xoff = \"40000B\"", "");
    std::fs::write(&file, toml).unwrap();
    let o = sim_run(&file, &dir.join("out"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("switch.tier.spine.sonic") && err.contains("[4]"),
        "{err}"
    );
}

#[test]
fn the_mixed_scenario_takes_each_tiers_file_and_exports_each_box() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = root.join("scenarios/sonic-mixed.toml");
    let dir = tmp("tier-mixed");
    let out = dir.join("out");
    let o = sim_run(&s, &out, &["--plots", "none"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("note[sonic-not-modelled]: PFC_WD in sonic/as7326-56x.json")
            && err.contains("note[sonic-not-modelled]: PFC_WD in sonic/sn3700c.json"),
        "{err}"
    );
    let j = summary_json(&out);
    let tiers = &j["variants"][0]["sonic_tiers"];
    assert_eq!(tiers["leaf"]["set"]["switch.shared_pool"], "\"26284032B\"");
    assert_eq!(tiers["spine"]["set"]["switch.shared_pool"], "\"14542848B\"");
    for (switch, buffer, headroom) in [
        ("leaf0", "26284032B", "173568B"),
        ("spine1", "14542848B", "44032B"),
    ] {
        let exported = dir.join(format!("{switch}.json"));
        let o = sim(&[
            "export",
            "sonic",
            s.to_str().unwrap(),
            "--switch",
            switch,
            "--out",
            exported.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let back = models::sonic::import(&std::fs::read_to_string(&exported).unwrap()).unwrap();
        let get = |k: &str| back.set.iter().find(|(x, _)| x == k).map(|(_, v)| v.to_string());
        assert_eq!(
            get("switch.shared_pool"),
            Some(format!("\"{buffer}\"")),
            "{switch}"
        );
        // One lossless profile exports as `pfc.headroom`, several as `pfc.headroom_by_rate`.
        let h = get("pfc.headroom_by_rate").or(get("pfc.headroom")).unwrap();
        assert!(
            h.contains(headroom),
            "{switch}: its 100G/40m uplinks' headroom in {h}"
        );
    }
}

#[test]
fn port_counts_are_checked_against_each_switchs_own_asic() {
    // Twenty campus leaves (16 ports) under one spine with twenty cables: a campus spine
    // cannot take them, a Spectrum-2 spine can.
    let toml = |tier: &str| {
        format!(
            r#"
            [topology]
            kind = "leaf-spine"
            leaves = 20
            spines = 1
            hosts_per_leaf = 2
            host_link = {{ rate = "10Gbps", cable = "3m" }}
            fabric_link = {{ rate = "10Gbps", cable = "3m" }}
            [switch]
            asic = "campus"
            {tier}
            [[flow]]
            src = "h0"
            dst = "h39"
            size = "10KB"
            "#
        )
    };
    let e = models::scenario::parse(&toml(""), "t.toml", "t", &Default::default()).unwrap_err();
    assert!(e.to_string().contains("spine0 has 20 cables"), "{e}");
    let r = run(&toml("[switch.tier.spine]\nasic = \"spectrum2\"")).remove(0);
    assert_eq!(r.summary.flows_completed, 1);
}
