//! Graph topologies (`kind = "graph"`, inline and from an edge-list file) against the built-in
//! shapes they equal, their errors, and the CE-marking source that drives DCQCN on a DAC.

use crate::capture_plain::read_pcap;
use crate::common::*;

/// A leaf-spine of `leaves` x `hosts` hosts and `spines` spines written as a graph, nodes and
/// cables in the order the built-in shape lays them out (so ports, and ECMP, number alike).
fn leaf_spine_graph(leaves: u32, hosts: u32, spines: u32) -> (String, String) {
    let (mut nodes, mut links, mut edges) = (Vec::new(), Vec::new(), Vec::new());
    let mut h = 0;
    for l in 0..leaves {
        for _ in 0..hosts {
            nodes.push(format!("{{ name = \"h{h}\", kind = \"host\" }}"));
            links.push(format!(
                "{{ a = \"h{h}\", b = \"leaf{l}\", rate = \"100Gbps\", delay = \"1us\" }}"
            ));
            edges.push(format!("host h{h}\nh{h} leaf{l} 100Gbps 1us"));
            h += 1;
        }
        nodes.push(format!("{{ name = \"leaf{l}\", kind = \"switch\" }}"));
        edges.push(format!("switch leaf{l}"));
    }
    for s in 0..spines {
        nodes.push(format!("{{ name = \"spine{s}\", kind = \"switch\" }}"));
        edges.push(format!("switch spine{s}"));
        for l in 0..leaves {
            links.push(format!(
                "{{ a = \"leaf{l}\", b = \"spine{s}\", rate = \"100Gbps\", delay = \"1us\" }}"
            ));
            edges.push(format!("leaf{l} spine{s} 100Gbps 1us"));
        }
    }
    let inline = format!(
        "kind = \"graph\"\nnodes = [{}]\nlinks = [{}]",
        nodes.join(", "),
        links.join(", ")
    );
    (inline, edges.join("\n") + "\n")
}

fn with_topology(topology: &str) -> String {
    format!(
        r#"
        [topology]
        {topology}
        [nic]
        cc = {{ kind = "dcqcn", preset = "connectx" }}
        [switch]
        ecn = {{ kmin = "20KB", kmax = "200KB", pmax = 0.2 }}
        [pfc]
        priorities = [3]
        [[workload]]
        kind = "permutation"
        size = "512KB"
        [[workload]]
        kind = "incast"
        receiver = "h0"
        senders = 5
        size = "256KB"
        "#
    )
}

#[test]
fn a_graph_equal_to_a_leaf_spine_runs_exactly_as_it_does() {
    let builtin = with_topology(
        r#"kind = "leaf-spine"
        leaves = 3
        spines = 2
        hosts_per_leaf = 4
        host_link = { rate = "100Gbps", delay = "1us" }
        fabric_link = { rate = "100Gbps", delay = "1us" }"#,
    );
    let (inline, edges) = leaf_spine_graph(3, 4, 2);
    let dir = tmp("graph-file");
    std::fs::write(dir.join("fabric.edges"), edges).unwrap();
    let from_file = with_topology(&format!(
        "kind = \"graph\"\nfile = \"{}\"",
        dir.join("fabric.edges").display()
    ));
    let a = run(&builtin).remove(0);
    for other in [with_topology(&inline), from_file] {
        let b = run(&other).remove(0);
        assert_eq!(a.summary.events, b.summary.events);
        assert_eq!(a.summary.ecn_marked, b.summary.ecn_marked);
        assert_eq!(a.summary.pfc_pause_frames, b.summary.pfc_pause_frames);
        let fct = |r: &models::report::VariantReport| {
            r.flows
                .iter()
                .map(|f| (f.src.clone(), f.fct_ns))
                .collect::<Vec<_>>()
        };
        assert_eq!(fct(&a), fct(&b));
    }
}

#[test]
fn a_graph_names_its_hosts_and_its_switches_asics() {
    let toml = r#"
        [topology]
        kind = "graph"
        nodes = [
          { name = "core", kind = "switch", asic = "spectrum2" },
          { name = "nas", kind = "host" },
          { name = "pc", kind = "host" },
        ]
        links = [
          { a = "nas", b = "core", rate = "100Gbps", cable = "3m" },
          { a = "pc", b = "core", rate = "25Gbps", cable = "3m", count = 1 },
        ]
        [[flow]]
        src = "pc"
        dst = "nas"
        size = "1MB"
    "#;
    let s = scenario(toml);
    let v = &s.variants[0];
    assert_eq!(v.switch_of(0).asic, models::asic::Asic::Spectrum2);
    let r = run(toml).remove(0);
    assert_eq!((r.flows[0].src.as_str(), r.flows[0].dst.as_str()), ("pc", "nas"));
    // 1 MB at the 25G NIC: serialization of 245 frames of 4096 B payload, within 2 %.
    let frames = 1_000_000u64.div_ceil(4096);
    let wire = (frames - 1) * roce_wire(4096) + roce_wire(1_000_000 - (frames - 1) * 4096);
    assert_close(
        r.flows[0].fct_ns.unwrap(),
        tx_ns(wire, 25.0),
        0.0,
        0.02,
        "pc -> nas at 25G",
    );
    assert!(counter(&r, "core", "to-nas", "tx_packets") >= frames);
}

#[test]
fn malformed_graphs_exit_2_naming_the_node_or_link() {
    let dir = tmp("graph-errors");
    let graph = |nodes: &str, links: &str| {
        format!(
            "[topology]\nkind = \"graph\"\nnodes = [{nodes}]\nlinks = [{links}]\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n"
        )
    };
    let (sw, a, b, c) = (
        r#"{ name = "sw", kind = "switch" }"#,
        r#"{ name = "a", kind = "host" }"#,
        r#"{ name = "b", kind = "host" }"#,
        r#"{ name = "c", kind = "host" }"#,
    );
    let l = |x: &str, y: &str| format!(r#"{{ a = "{x}", b = "{y}", rate = "100Gbps", cable = "3m" }}"#);
    for (toml, words) in [
        (
            graph(&[sw, a, b].join(","), &[l("a", "sw"), l("b", "nope")].join(",")),
            vec!["topology.links[1]", "no node named \"nope\""],
        ),
        (
            graph(&[sw, a, b, c].join(","), &[l("a", "sw"), l("b", "sw")].join(",")),
            vec!["topology.nodes[3]", "host \"c\" has no cable"],
        ),
        (
            graph(
                &[sw, a, b, c].join(","),
                &[l("a", "sw"), l("b", "sw"), l("a", "c")].join(","),
            ),
            vec!["topology.links[2]", "between hosts \"a\" and \"c\""],
        ),
        (
            graph(
                &[sw, r#"{ name = "sw2", kind = "switch" }"#, a, b, c].join(","),
                &[l("a", "sw"), l("b", "sw"), l("c", "sw2"), l("sw2", "sw2")].join(","),
            ),
            vec!["topology.links[3]", "to itself"],
        ),
        (
            graph(
                &[sw, r#"{ name = "sw2", kind = "switch" }"#, a, b, c].join(","),
                &[l("a", "sw"), l("b", "sw"), l("c", "sw2")].join(","),
            ),
            vec!["not connected", "\"sw2\""],
        ),
        (
            graph(
                &[sw, a, b].join(","),
                &[l("a", "sw"), l("b", "sw"), l("a", "sw")].join(","),
            ),
            vec!["topology.nodes[1]", "2 cables"],
        ),
        (
            graph(&[sw, a, a].join(","), &l("a", "sw")),
            vec!["topology.nodes[2]", "two nodes are named \"a\""],
        ),
    ] {
        let file = dir.join("g.toml");
        std::fs::write(&file, &toml).unwrap();
        let o = sim_run(&file, &dir.join("out"), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{toml}: {err}");
        for w in &words {
            assert!(err.contains(w), "{words:?} in: {err}");
        }
        assert!(!err.contains("panicked"));
    }
    // An edge-list file names its line.
    std::fs::write(
        dir.join("bad.edges"),
        "switch sw\nhost a b\na sw 100Gbps 3m\nb sw fast 3m\n",
    )
    .unwrap();
    let file = dir.join("g.toml");
    let toml = format!(
        "[topology]\nkind = \"graph\"\nfile = \"{}\"\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n",
        dir.join("bad.edges").display()
    );
    std::fs::write(&file, toml).unwrap();
    let o = sim_run(&file, &dir.join("out"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.edges:4") && err.contains("rate fast"), "{err}");
}

#[test]
fn ce_marks_from_the_sender_drive_dcqcn_on_a_dac() {
    // 1 MB in 4096 B packets, 5 % marked: packets 19, 39, ... leave CE-marked. At line rate
    // and at half of it they are 6.7 us or more apart, over ConnectX's 4 us between CNPs and
    // between cuts, so each makes a CNP and each CNP a cut. The first cut sets the rate to
    // C (1 - alpha / 2), alpha = 1023/1024 (ConnectX's initial alpha).
    let share = 0.05;
    let toml = format!(
        r#"
        [topology]
        kind = "back-to-back"
        link = {{ rate = "100Gbps", cable = "3m" }}
        [nic]
        mtu = "4096B"
        cc = {{ kind = "dcqcn", preset = "connectx" }}
        ce_share = {share}
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "1MB"
        [[capture]]
        name = "h0"
        node = "h0"
        "#
    );
    let out = crate::capture::run("ce-dac", &toml, &["--plots", "none"]);
    let packets = 1_000_000u64.div_ceil(4096);
    let marked = (packets as f64 * share).floor() as u64;
    let csv = std::fs::read_to_string(out.join("counters.csv")).unwrap();
    let get = |node: &str, name: &str| -> u64 {
        csv.lines()
            .find(|l| l.contains(&format!(",{node},nic,{name},")))
            .and_then(|l| l.rsplit(',').next())
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(get("h1", "np_ecn_marked_roce_packets"), marked);
    assert_eq!(get("h1", "np_cnp_sent"), marked);
    assert_eq!(get("h0", "rp_cnp_handled"), marked);
    let summary = crate::common::summary_json(&out);
    assert_eq!(
        summary["variants"][0]["ecn_marked"].as_u64(),
        Some(marked),
        "summary.json counts the NIC's own CE marks too"
    );
    // The capture at h0: data frames out, CNPs (BTH opcode 0x81) in.
    let pcap = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "pcap"))
        .expect("the capture");
    let frames = read_pcap(&pcap);
    let opcode = |b: &[u8]| {
        let l2 = if b[12..14] == [0x81, 0x00] { 18 } else { 14 };
        b[l2 + 28]
    };
    let cnp = frames
        .iter()
        .find(|f| opcode(&f.bytes) == 0x81)
        .expect("a CNP")
        .ns;
    let data: Vec<u64> = frames
        .iter()
        .filter(|f| f.bytes.len() == 4096 + 62)
        .map(|f| f.ns)
        .collect();
    let before: Vec<u64> = data.iter().copied().filter(|&t| t < cnp).collect();
    let after: Vec<u64> = data.iter().copied().filter(|&t| t > cnp).collect();
    let wire = roce_wire(4096);
    let gap = |v: &[u64], i: usize| (v[i + 1] - v[i]) as f64;
    assert_close(
        gap(&before, before.len() - 2),
        tx_ns(wire, 100.0),
        1.0,
        0.0,
        "line rate before the cut",
    );
    let cut = 100.0 * (1.0 - 1023.0 / 1024.0 / 2.0);
    assert_close(gap(&after, 1), tx_ns(wire, cut), 1.0, 0.0, "the first cut's rate");
}

#[test]
fn htsim_topo_files_import_as_the_fat_trees_they_describe() {
    // uet-htsim's own files, as the repository ships them.
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/htsim");
    // htsim's 128-host three-tier file is the k = 8 fat tree at 100G with 1 us cables.
    let traffic = r#"
        [[workload]]
        kind = "permutation"
        size = "256KB"
    "#;
    let builtin = format!(
        "[topology]\nkind = \"fat-tree\"\nk = 8\nhost_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\nfabric_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\n{traffic}"
    );
    let file = data.join("fat_tree_128_1os.topo");
    let imported = format!(
        "[topology]\nkind = \"htsim\"\nfile = \"{}\"\n{traffic}",
        file.display()
    );
    let (a, b) = (run(&builtin).remove(0), run(&imported).remove(0));
    assert_eq!(a.summary.events, b.summary.events);
    let fct = |r: &models::report::VariantReport| r.flows.iter().map(|f| f.fct_ns).collect::<Vec<_>>();
    assert_eq!(fct(&a), fct(&b));
    // The 8192-host two-tier file: 128 ToRs of 64 hosts, each on all 64 spines at 400G.
    let t = scenario(&format!(
        "[topology]\nkind = \"htsim\"\nfile = \"{}\"\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n",
        data.join("leaf_spine_8192_400g.topo").display()
    ))
    .topology;
    let switches = t
        .nodes
        .iter()
        .filter(|n| n.kind == models::topology::NodeKind::Switch)
        .count();
    assert_eq!(
        (t.hosts.len(), switches, t.links.len()),
        (8192, 128 + 64, 8192 + 128 * 64)
    );
    assert!(t.links.iter().all(|l| l.rate == sim_core::BitRate::gbps(400)));
    // A file that is not such a fat tree names its line or its mismatch.
    let dir = tmp("htsim-topo");
    for (text, words) in [
        (
            "Nodes 16\nTiers 2\nTier 0\nRadix_Down 4\nQueue 9\n",
            "unknown key Queue",
        ),
        (
            "Nodes 16\nTiers 2\nPodsize 16\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 2\nDownlink_Latency_ns 1000\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 3\nDownlink_Latency_ns 1000\n",
            "Radix_Down 3 is not 4 ToRs",
        ),
        // 2^64 ns (213 days) wrapped to 384 ps, and 18446744074 Gb/s to 0.29 Gb/s: refused
        // with the schema's own limits, as the TOML keys are.
        (
            "Nodes 16\nTiers 2\nTier 0\nDownlink_speed_Gbps 100\nDownlink_Latency_ns 18446744073709551\n",
            "Downlink_Latency_ns 18446744073709551: a duration \"18446744073709551ns\" is over the simulator's limit of 1000000s",
        ),
        (
            "Nodes 16\nTiers 2\nTier 0\nDownlink_speed_Gbps 18446744074\n",
            "Downlink_speed_Gbps 18446744074: a rate \"18446744074Gbps\" is over the simulator's limit of 100Tbps",
        ),
        (
            "Nodes 16\nTiers 2\nTier 0\nDownlink_speed_Gbps 100001\n",
            "over the simulator's limit of 100Tbps",
        ),
        (
            "Nodes 16\nTiers 2\nTier 0\nRadix_Up 18446744073709551615\n",
            "Radix_Up 18446744073709551615: at most 16777216",
        ),
    ] {
        std::fs::write(dir.join("x.topo"), text).unwrap();
        let toml = format!(
            "[topology]\nkind = \"htsim\"\nfile = \"{}\"\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n",
            dir.join("x.topo").display()
        );
        std::fs::write(dir.join("x.toml"), toml).unwrap();
        let o = sim_run(&dir.join("x.toml"), &dir.join("out"), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(words) && err.contains("x.topo"), "{words}: {err}");
    }
}

/// One scalable unit of four servers with four NICs, 100G to the rail leaves, `spine_gbps`
/// from each leaf to the one spine.
fn rail(spine_gbps: u32, extra: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "rail"
        units = 1
        servers_per_unit = 4
        nics_per_host = 4
        spines = 1
        host_link = {{ rate = "100Gbps", delay = "1us" }}
        fabric_link = {{ rate = "{spine_gbps}Gbps", delay = "1us" }}
        {extra}
        "#
    )
}

/// An all-reduce of `size` over `n` ranks moves 2(n-1)/n x size through each rank's link;
/// 4096 B packets add 62 B of headers and 20 B of preamble and gap each.
fn ring_ns(n: f64, size: f64, gbps: f64) -> f64 {
    2.0 * (n - 1.0) / n * size * roce_wire(4096) as f64 / 4096.0 * 8.0 / gbps
}

#[test]
fn a_rail_aligned_ring_never_crosses_a_spine_and_a_cross_rail_ring_runs_at_its_capacity() {
    let size = 64u64 << 20;
    let r = run(&rail(
        25,
        &format!("[[workload]]\nkind = \"collective\"\nop = \"all-reduce\"\nsize = \"{size}B\"\n"),
    ))
    .remove(0);
    let job = &r.summary.jobs[0];
    assert_eq!(job.ranks, 16);
    // Every server's four NICs share it: each carries a quarter at 100G.
    assert_close(
        job.time_ns.unwrap(),
        ring_ns(16.0, size as f64, 4.0 * 100.0),
        0.0,
        0.06,
        "rail-aligned ring",
    );
    for leaf in 0..4 {
        assert_eq!(
            counter(&r, &format!("leaf0-{leaf}"), "to-spine0", "tx_bytes"),
            0,
            "rail {leaf}"
        );
    }
    // Ranks on different rails of different servers: every hop between servers crosses the
    // spine, whose 25G cables set the time.
    let size = 16u64 << 20;
    let r = run(&rail(
        25,
        &format!(
            "[[workload]]\nkind = \"collective\"\nop = \"all-reduce\"\nsize = \"{size}B\"\nhosts = [\"h0\", \"h5\", \"h10\", \"h15\"]\n"
        ),
    ))
    .remove(0);
    assert_close(
        r.summary.jobs[0].time_ns.unwrap(),
        ring_ns(4.0, size as f64, 25.0),
        0.0,
        0.05,
        "cross-rail ring",
    );
    assert!(counter(&r, "spine0", "to-leaf0-1", "tx_bytes") > 0);
}

#[test]
fn gpus_of_one_server_talk_over_nvlink_and_jobs_take_whole_servers() {
    // h0 and h3 are NICs 0 and 3 of server 0: 1 MB takes 1 MB / 450 GB/s, and no NIC sends.
    let r = run(&rail(
        100,
        "[[flow]]\nsrc = \"h0\"\ndst = \"h3\"\nsize = \"1000000B\"\n",
    ))
    .remove(0);
    let nvlink_ns = 1_000_000.0 * 8.0 / 3600.0;
    assert_close(r.flows[0].fct_ns.unwrap(), nvlink_ns, 0.01, 0.0, "NVLink time");
    assert_eq!(counter(&r, "h0", "to-leaf0-0", "tx_packets"), 0);
    // A job on servers 1 and 2 ranks their eight GPUs.
    let job = "[[workload]]\nkind = \"collective\"\nop = \"all-gather\"\nsize = \"1MiB\"\nservers = [1, 2]\n";
    let r = run(&rail(100, job)).remove(0);
    assert_eq!(r.summary.jobs[0].ranks, 8);
    assert_eq!(
        counter(&r, "h0", "to-leaf0-0", "tx_packets"),
        0,
        "server 0 has no rank"
    );
    let e = models::scenario::parse(
        &rail(100, &job.replace("[1, 2]", "[1, 9]")),
        "t.toml",
        "t",
        &Default::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no server 9"), "{e}");
}

#[test]
fn a_dac_between_two_servers_second_ports_runs_beside_the_fabric() {
    // Servers a and b: port 1 on the switch, port 2 on a 100G DAC to the other's port 2.
    let toml = r#"
        [topology]
        kind = "graph"
        nodes = [
          { name = "sw", kind = "switch" },
          { name = "a1", kind = "host", server = "a" }, { name = "b1", kind = "host", server = "b" },
          { name = "a2", kind = "host", server = "a" }, { name = "b2", kind = "host", server = "b" },
        ]
        links = [
          { a = "a1", b = "sw", rate = "25Gbps", delay = "1us" },
          { a = "b1", b = "sw", rate = "25Gbps", delay = "1us" },
          { a = "a2", b = "b2", rate = "100Gbps", delay = "5ns" },
        ]
        [[flow]]
        src = "a2"
        dst = "b2"
        size = "4MB"
        [[flow]]
        src = "a1"
        dst = "b1"
        size = "1MB"
        [[flow]]
        src = "a1"
        dst = "a2"
        size = "1MB"
    "#;
    let r = run(toml).remove(0);
    let frames = 4_000_000u64.div_ceil(4096);
    let wire = (frames - 1) * roce_wire(4096) + roce_wire(4_000_000 - (frames - 1) * 4096);
    assert_close(
        r.flows[0].fct_ns.unwrap(),
        tx_ns(wire, 100.0),
        0.0,
        0.01,
        "a2 -> b2 over the DAC at 100G",
    );
    assert_eq!(
        counter(&r, "sw", "to-b1", "tx_packets"),
        counter(&r, "a1", "to-sw", "tx_packets"),
        "only a1 -> b1 on the switch"
    );
    // a1 -> a2 stays inside server a (NVLink's default 3.6 Tb/s).
    assert_close(
        r.flows[2].fct_ns.unwrap(),
        1e6 * 8.0 / 3600.0,
        0.01,
        0.0,
        "inside the server",
    );
}
