//! Each finding on a case built to have it and on its fix (which must be clean), with the
//! numbers it states taken from the closed forms it cites.

use super::Finding;
use crate::pfc::PfcConfig;
use crate::scenario::{Overrides, parse};
use sim_core::{BitRate, Duration};

/// A 4-host star (100G, `cable`) with an incast, plus `extra` TOML.
fn star(cable: &str, extra: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = 4
        host_link = {{ rate = "100Gbps", cable = "{cable}" }}
        [[workload]]
        kind = "incast"
        size = "1MB"
        {extra}
        "#
    )
}

fn findings(toml: &str) -> Vec<Finding> {
    let s = parse(toml, "t.toml", "t", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    s.variants[0].findings.clone()
}

fn ids(toml: &str) -> Vec<&'static str> {
    findings(toml).iter().map(|f| f.id).collect()
}

const ROCE_PFC3: &str = "[pfc]\npriorities = [3]\n[nic]\ntrust = \"dscp\"\n";

#[test]
fn rocev2_mapped_to_a_class_without_pfc_is_named_at_the_map_entry() {
    let bad = star(
        "5m",
        &format!("{ROCE_PFC3}[switch]\ndscp_to_tc = {{ \"26\" = 1 }}"),
    );
    let f = findings(&bad);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].id, f[0].key.as_str()),
        ("roce-lossy-class", "switch.dscp_to_tc.26")
    );
    assert!(
        f[0].problem.contains("class 1") && f[0].fix.contains("\"26\" = 3"),
        "{f:#?}"
    );
    let fixed = star(
        "5m",
        &format!("{ROCE_PFC3}[switch]\ndscp_to_tc = {{ \"26\" = 3 }}"),
    );
    assert!(ids(&fixed).is_empty(), "{:#?}", findings(&fixed));
    // Untagged frames with no map: the switches classify DSCP 26 by its top bits, class 3.
    assert!(ids(&star("5m", ROCE_PFC3)).is_empty());
}

#[test]
fn pfc_on_a_priority_the_flows_do_not_use_is_named_at_pfc_priorities() {
    // Flows at the default priority 3, PFC on 4 only: RoCEv2 runs lossy.
    let f = findings(&star("5m", "[pfc]\npriorities = [4]"));
    assert_eq!(
        f.iter().map(|f| f.id).collect::<Vec<_>>(),
        ["roce-lossy-class"],
        "{f:#?}"
    );
    assert_eq!(f[0].key, "pfc.priorities");
    // UET on the same classes is not RoCEv2: nothing to say about its class.
    assert!(
        !ids(&star("5m", "[pfc]\npriorities = [4]\n[nic]\ntransport = \"uet\""))
            .contains(&"roce-lossy-class")
    );
}

#[test]
fn an_idle_pfc_priority_is_named_only_where_it_costs_shared_buffer() {
    let idle = star("5m", "[pfc]\npriorities = [3, 4]");
    assert_eq!(ids(&idle), ["pfc-idle-priority"]);
    let f = &findings(&idle)[0];
    assert!(f.problem.contains("priority 4"), "{f:#?}");
    // A shared headroom pool reserves nothing per class; SONiC's given pool loses nothing.
    for pool in ["headroom_pool = \"1MB\"", "shared_pool = \"4MB\""] {
        let t = star("5m", &format!("[pfc]\npriorities = [3, 4]\n[switch]\n{pool}"));
        assert!(ids(&t).is_empty(), "{pool}: {:#?}", findings(&t));
    }
}

#[test]
fn dcqcn_without_any_ecn_marking_is_named() {
    let dcqcn = "[nic]\ncc = { kind = \"dcqcn\" }\n";
    assert_eq!(ids(&star("5m", dcqcn)), ["dcqcn-without-ecn"]);
    let marked = format!("{dcqcn}[switch]\necn = {{ kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01 }}");
    assert!(ids(&star("5m", &marked)).is_empty());
    let shared = "[nic]\ncc = { kind = \"dcqcn\" }\nce_share = 0.5\n";
    assert!(ids(&star("5m", shared)).is_empty());
}

#[test]
fn headroom_short_of_the_cable_is_named_with_what_the_cable_needs() {
    // 100 m of fibre (500 ns) at 100G: the white paper's sum (`pfc.rs`) with the NIC's
    // largest frame, the switch's cell and a 60-quanta response.
    let t = star("100m", "[pfc]\npriorities = [3]\nheadroom = \"8KB\"");
    let f = findings(&t);
    assert_eq!(
        f.iter().map(|f| f.id).collect::<Vec<_>>(),
        ["headroom-short"],
        "{f:#?}"
    );
    let v = &parse(&t, "t.toml", "t", &Overrides::default()).unwrap().variants[0];
    let rate = BitRate::gbps(100);
    let cell = v.switch.mmu_params(v.pfc.mask(), None, None).cell;
    let needed = PfcConfig::headroom_needed(
        rate,
        Duration::from_ns(500),
        v.max_frame(),
        v.pfc.response_time(rate),
        cell,
    );
    assert!(needed > 8192, "100 m needs more than 8 KB: {needed}");
    assert_eq!(f[0].key, "pfc.headroom");
    assert!(f[0].problem.starts_with("4 of the 4 ports"), "{}", f[0].problem);
    assert!(
        f[0].problem.contains(&format!("deliver {needed} B")),
        "{}",
        f[0].problem
    );
    let enough = star(
        "100m",
        &format!("[pfc]\npriorities = [3]\nheadroom = \"{needed}B\""),
    );
    assert!(ids(&enough).is_empty(), "{:#?}", findings(&enough));
}

#[test]
fn ecn_marking_above_the_pfc_threshold_is_named() {
    // A static XOFF at 50 KB of shared use: one sender pauses at 50 KB of queue.
    let t = |kmin: &str| {
        star(
            "5m",
            &format!(
                "[pfc]\npriorities = [3]\nxoff = \"50KB\"\n[nic]\ncc = {{ kind = \"dcqcn\" }}\n[switch]\necn = {{ kmin = \"{kmin}\", kmax = \"400KB\", pmax = 0.2 }}"
            ),
        )
    };
    assert_eq!(ids(&t("100KB")), ["ecn-after-pfc"]);
    assert!(ids(&t("20KB")).is_empty(), "{:#?}", findings(&t("20KB")));
}

#[test]
fn ecn_marking_above_what_a_lossy_queue_holds_is_named() {
    // Lossy: a 2 MB buffer, alpha 1 (log2 0): a lone queue stops at half the shared pool.
    let t = |kmin: &str| {
        star(
            "5m",
            &format!(
                "[nic]\ncc = {{ kind = \"dcqcn\" }}\n[switch]\nbuffer = \"2MB\"\nqueue_alpha = 0\necn = {{ kmin = \"{kmin}\", kmax = \"1900KB\", pmax = 0.2 }}"
            ),
        )
    };
    assert_eq!(ids(&t("1500KB")), ["ecn-above-queue-limit"]);
    assert!(ids(&t("500KB")).is_empty());
}

#[test]
fn a_sonic_port_table_for_another_box_is_named_once() {
    let dir = std::env::temp_dir().join(format!("sim-check-ports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ports = |mbps: u64| {
        let p: Vec<String> = (0..56)
            .map(|i| {
                format!(
                    "\"Ethernet{}\": {{\"speed\": \"{mbps}\", \"lanes\": \"{i}\", \"alias\": \"etp{i}\"}}",
                    i * 4
                )
            })
            .collect();
        format!("{{\"PORT\": {{{}}}}}", p.join(","))
    };
    for (mbps, expect) in [(25_000, true), (100_000, false)] {
        let file = dir.join(format!("{mbps}.json"));
        std::fs::write(&file, ports(mbps)).unwrap();
        let t = star("5m", &format!("[switch]\nsonic = \"{}\"", file.display()));
        let f = findings(&t);
        let port: Vec<&Finding> = f.iter().filter(|f| f.id == "sonic-ports").collect();
        assert_eq!(port.len(), expect as usize, "{f:#?}");
        if expect {
            assert!(
                port[0].problem.contains("56 ports: 56 at 25G"),
                "{}",
                port[0].problem
            );
            assert!(port[0].problem.contains("4 at 100G"), "{}", port[0].problem);
        }
        // The fields the import does not read: one note for the whole table.
        let notes: Vec<&Finding> = f.iter().filter(|f| f.id == "sonic-not-modelled").collect();
        assert_eq!(notes.len(), 1, "{notes:#?}");
        // `lanes` is read: it picks the Reed-Solomon code of a port whose `fec` is rs.
        assert!(
            notes[0].problem.ends_with("fields not modelled: alias"),
            "{notes:#?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_silenced_finding_is_left_out_and_an_unknown_id_is_refused() {
    let t = star(
        "5m",
        "[pfc]\npriorities = [4]\n[check]\nsilence = [\"roce-lossy-class\"]",
    );
    assert!(ids(&t).is_empty());
    let e = parse(
        &star("5m", "[check]\nsilence = [\"roce-lossy\"]"),
        "t.toml",
        "t",
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("check.silence[0]") && e.to_string().contains("roce-lossy-class"),
        "{e}"
    );
}

/// A 4-leaf spine with `spines` uplinks per leaf (100G everywhere, 8 hosts per leaf) under a
/// uniform Poisson load.
fn poisson_leaf_spine(spines: u32, load: f64) -> String {
    format!(
        r#"
        [topology]
        kind = "leaf-spine"
        leaves = 4
        spines = {spines}
        hosts_per_leaf = 8
        host_link = {{ rate = "100Gbps", cable = "3m" }}
        fabric_link = {{ rate = "100Gbps", cable = "3m" }}
        [[workload]]
        kind = "poisson"
        load = {load}
        size = "100KB"
        duration = "10us"
        "#
    )
}

#[test]
fn an_open_loop_load_over_a_leafs_uplinks_is_named_with_the_load_that_fits() {
    // Each leaf's 8 hosts send 8 x 50 Gb/s, 24 of every 31 destinations beyond the leaf:
    // 309.7 Gb/s over 2 x 100G, 1.55 times; the load that fits is 0.5 / 1.548 = 0.323.
    let f = findings(&poisson_leaf_spine(2, 0.5));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].id, f[0].key.as_str()),
        ("load-over-capacity", "workload[0].load")
    );
    assert!(
        f[0].problem.contains("leaf0's cables")
            && f[0].problem.contains("310 Gb/s out")
            && f[0].problem.contains("1.55 times")
            && f[0].problem.contains("3 more cuts"),
        "{f:#?}"
    );
    assert!(f[0].fix.contains("to 0.32 or less"), "{f:#?}");
    // Its fixes: the load it names (0.32 x 1.548 / 0.5 = 0.99 of the uplinks), or a leaf
    // with as much up as down.
    assert!(ids(&poisson_leaf_spine(2, 0.32)).is_empty());
    assert!(ids(&poisson_leaf_spine(8, 1.0)).is_empty());
}

#[test]
fn an_open_loop_load_into_one_host_over_its_cable_is_named() {
    // Three sources at 0.5 of 100G into h0: 150 Gb/s into a 100G cable.
    let into = |load: f64| {
        star(
            "3m",
            &format!(
                "[[workload]]\nkind = \"poisson\"\nload = {load}\nsize = \"10KB\"\n\
                 duration = \"10us\"\nsources = [\"h1\", \"h2\", \"h3\"]\ndst = \"h0\""
            ),
        )
    };
    let f: Vec<Finding> = findings(&into(0.5))
        .into_iter()
        .filter(|f| f.id == "load-over-capacity")
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].key, "workload[1].load");
    assert!(f[0].problem.contains("h0's cable 150 Gb/s in"), "{f:#?}");
    assert!(f[0].fix.contains("to 0.33 or less"), "{f:#?}");
    assert!(!ids(&into(0.33)).contains(&"load-over-capacity"));
}

#[test]
fn traffic_between_nics_of_one_server_is_not_counted_on_the_fabric() {
    // Rail-optimised: each rail leaf has one NIC of each of 4 servers (100G) and 4 x 100G
    // spine cables. A NIC sends uniformly over the 63 others, 7 of which are its server's
    // own (NVLink): 4 x 100 x (63 - 3 - 7) / 63 = 336.5 Gb/s leaves each leaf, over 400G.
    // Counting the mates as fabric traffic would give 4 x 100 x 60/63 = 381; with 3 spines
    // (300G) both are over, and the finding says 336.
    let rail = |spines: u32| {
        format!(
            r#"
            [topology]
            kind = "rail"
            units = 2
            servers_per_unit = 4
            nics_per_host = 8
            spines = {spines}
            host_link = {{ rate = "100Gbps", cable = "3m" }}
            fabric_link = {{ rate = "100Gbps", cable = "3m" }}
            [[workload]]
            kind = "poisson"
            load = 1.0
            size = "100KB"
            duration = "10us"
            "#
        )
    };
    assert!(ids(&rail(4)).is_empty(), "{:#?}", findings(&rail(4)));
    let f = findings(&rail(3));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].problem.contains("337 Gb/s out"), "{f:#?}");
}

#[test]
fn bit_errors_with_the_fec_off_are_named_with_the_code_the_speed_runs() {
    let dac = |rate: &str, extra: &str| {
        format!(
            "[topology]\nkind = \"back-to-back\"\nlink = {{ rate = \"{rate}\", cable = \"3m\", \
             pre_fec_ber = 1e-6{extra} }}\n[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"1MB\"\n"
        )
    };
    let f = findings(&dac("100Gbps", ""));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].id, f[0].key.as_str()),
        ("ber-without-fec", "topology.link.fec")
    );
    // 1-(1-1e-6)^(4158 x 8) = 3.27 %.
    assert!(
        f[0].problem.contains("3.27e-2") && f[0].fix.contains("rs-528"),
        "{f:#?}"
    );
    assert!(
        findings(&dac("400Gbps", ""))
            .iter()
            .any(|f| f.fix.contains("rs-544"))
    );
    // Its fix, and speeds that run without FEC (10G), are clean.
    assert!(ids(&dac("100Gbps", ", fec = \"rs-528\"")).is_empty());
    assert!(ids(&dac("10Gbps", "")).is_empty());
}
