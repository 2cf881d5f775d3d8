//! Reliability: bounded runs, PFC deadlocks and storms, invariants under combined faults.

use crate::common::*;
use std::path::Path;

fn variant<'a>(s: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    s["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_ring_deadlock_is_found_reported_and_stopped() {
    let out = tmp("deadlock");
    let o = sim_run(&root().join("scenarios/pfc-deadlock.toml"), &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(6),
        "a deadlock's exit code: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = summary_json(&out);

    let v = variant(&s, "roce-pfc");
    let d = &v["pfc_deadlocks"][0];
    // The flows go two hops clockwise, so the dependency is the clockwise ring: each switch's
    // egress to the next, in order.
    let cycle: Vec<String> = (0..5).map(|i| format!("sw{i} to-sw{}", (i + 1) % 5)).collect();
    let mut got: Vec<String> = serde_json::from_value(d["cycle"].clone()).unwrap();
    let first = got
        .iter()
        .position(|p| p == &cycle[0])
        .expect("sw0's egress is in the cycle");
    got.rotate_left(first);
    assert_eq!(got, cycle);
    assert_eq!(d["priority"], 3);
    // Reported once stuck for pfc.deadlock_timeout (default 200 us), at the first check
    // after that: checks run every quarter of it.
    let stuck = d["detected_ns"].as_f64().unwrap() - d["since_ns"].as_f64().unwrap();
    assert!((200_000.0..=250_000.0).contains(&stuck), "stuck for {stuck} ns");
    let why = v["incomplete"]
        .as_str()
        .expect("stopped runs are marked incomplete");
    assert!(why.contains("PFC deadlock on priority 3"), "{why}");
    assert_eq!(v["unfinished_flows"], serde_json::json!([0, 1, 2, 3, 4]));
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    let stuck_rows = flows
        .lines()
        .filter(|l| l.starts_with("roce-pfc,"))
        .collect::<Vec<_>>();
    assert_eq!(stuck_rows.len(), 5);
    assert!(
        stuck_rows
            .iter()
            .all(|l| l.contains("unfinished: in progress when the run was stopped by a PFC deadlock"))
    );

    // "continue" reports the same cycle and runs on to run.max_time.
    let c = variant(&s, "roce-pfc-continue");
    assert_eq!(c["pfc_deadlocks"][0]["since_ns"], d["since_ns"]);
    assert!(c["incomplete"].as_str().unwrap().contains("run.max_time"));

    // Without PFC there is no buffer dependency: every flow finishes.
    let u = variant(&s, "uet-lossy");
    assert_eq!(u["flows_completed"], 5);
    assert_eq!(u["pfc_deadlocks"], serde_json::json!([]));
    assert!(u["incomplete"].is_null());
}

#[test]
fn nothing_moves_in_a_deadlocked_ring() {
    // Delivered bytes at 1 ms and at 2 ms are the same: the cycle is truly stuck.
    let delivered = |t: &str| {
        let out = tmp(&format!("deadlock-still-{t}"));
        let set = format!("run.max_time={t}");
        let o = sim_run(
            &root().join("scenarios/pfc-deadlock.toml"),
            &out,
            &["--set", &set, "--variant", "roce-pfc-continue"],
        );
        assert_eq!(o.status.code(), Some(6), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out.join("flows.csv")).unwrap()
    };
    let (a, b) = (delivered("1ms"), delivered("2ms"));
    let bytes = |csv: &str| -> Vec<String> {
        csv.lines()
            .skip(1)
            .map(|l| l.split('(').nth(1).expect("progress in the status").to_string())
            .collect()
    };
    assert_eq!(bytes(&a), bytes(&b));
}

#[test]
fn a_pfc_incast_pauses_without_a_deadlock() {
    let out = tmp("no-deadlock");
    let o = sim_run(&root().join("scenarios/pfc-incast.toml"), &out, &[]);
    assert!(o.status.success());
    for v in summary_json(&out)["variants"].as_array().unwrap() {
        assert!(v["pfc_pause_frames"].as_u64().unwrap() > 0, "the incast pauses");
        assert_eq!(v["pfc_deadlocks"], serde_json::json!([]));
        assert!(v["incomplete"].is_null());
    }
}

#[test]
fn storms_name_the_slow_receiver_that_started_them() {
    // h4 takes data at 25 Gb/s (PCIe-bound), h0 sends to it at 100 Gb/s: h4's NIC pauses
    // `right`, whose ingress from the bottleneck fills and pauses `left`, which pauses h0.
    // Nothing else congests, so every storm (a paused egress), two hops away included,
    // started at h4's NIC.
    let toml = r#"
        [topology]
        kind = "dumbbell"
        hosts_per_side = 4
        host_link = { rate = "100Gbps", delay = "500ns" }
        bottleneck_link = { rate = "100Gbps", delay = "1us" }
        [switch]
        buffer = "1MB"
        [nic]
        rx_rate = "25Gbps"
        [pfc]
        priorities = [3]
        watchdog = "2us"
        [[flow]]
        src = 0
        dst = 4
        size = "4MB"
    "#;
    let r = run(toml).remove(0);
    let storms = &r.summary.pfc_storm_list;
    assert!(!storms.is_empty());
    assert_eq!(r.summary.pfc_storms as usize, storms.len());
    assert!(
        storms.iter().any(|s| s.port == "h0 to-left"),
        "the pause reached the sender, two switches from h4: {storms:?}"
    );
    let mut seen = std::collections::HashSet::new();
    for s in storms {
        assert!(
            seen.insert((s.port.clone(), s.priority, s.start_ns.to_bits())),
            "recorded twice: {s:?}"
        );
        assert_eq!(s.started_by, "h4 to-right", "{s:?}");
        assert!(s.duration_ns >= 2_000.0, "as long as the watchdog: {s:?}");
    }
    assert!(r.summary.pfc_deadlocks.is_empty());
    // At line rate h4 keeps up: no pause, no storm.
    let r = run(&toml.replace("rx_rate = \"25Gbps\"", "")).remove(0);
    assert_eq!(r.summary.pfc_pause_frames, 0);
    assert_eq!(r.summary.pfc_storms, 0);
}

#[test]
fn an_event_limit_stops_the_run_exactly_there_and_lists_what_is_unfinished() {
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 4
        host_link = { rate = "100Gbps", delay = "1us" }
        [[workload]]
        kind = "incast"
        receiver = "h0"
        size = "1MB"
        [run]
        max_events = 5000
    "#;
    let r = run(toml).remove(0);
    let s = &r.summary;
    assert_eq!(s.events, 5000);
    assert!(
        s.incomplete
            .as_deref()
            .unwrap()
            .contains("run.max_events after 5000 events")
    );
    let unfinished: Vec<u32> = r
        .flows
        .iter()
        .filter(|f| f.finish_ns.is_none())
        .map(|f| f.flow_id)
        .collect();
    assert_eq!(
        unfinished,
        vec![0, 1, 2],
        "3 MB cannot cross a 100G link in 5000 events"
    );
    assert_eq!(s.unfinished_flows, unfinished);
    assert!(
        r.flows
            .iter()
            .all(|f| f.status.to_string().contains("stopped by run.max_events"))
    );
}

#[test]
fn a_wall_clock_limit_stops_a_run_and_marks_it() {
    // 100 GB over a 100G DAC is 8 s simulated, tens of millions of events: far more than 3 s
    // of wall clock. The event loop stops at 90 % of run.max_wall, the results are written in
    // the rest, the process ends within the limit and says so in its exit code.
    let dir = tmp("max-wall");
    let file = dir.join("long.toml");
    std::fs::write(
        &file,
        "[topology]\nkind = \"back-to-back\"\nlink = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"100GB\"\n[run]\nmax_wall = \"3s\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let t0 = std::time::Instant::now();
    let o = sim_run(&file, &out, &[]);
    let took = t0.elapsed();
    assert_eq!(o.status.code(), Some(5), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        took < std::time::Duration::from_millis(3500),
        "ran {took:?} with run.max_wall = 3s"
    );
    let v = &summary_json(&out)["variants"][0];
    assert!(
        v["incomplete"].as_str().unwrap().contains("run.max_wall"),
        "{}",
        v["incomplete"]
    );
    assert!(!v["unfinished_flows"].as_array().unwrap().is_empty());
}

#[test]
fn a_wall_clock_limit_covers_set_up_and_leaves_earlier_results() {
    // A switchless ring's routes take N BFS of N nodes: 6000 hosts take seconds to set up,
    // past a 300 ms limit. The command stops there (exit 5), and the earlier results at
    // --out are left as they were.
    let dir = tmp("max-wall-setup");
    let file = dir.join("ring.toml");
    let ring = |hosts: u32, wall: &str| {
        format!(
            "[topology]\nkind = \"ring\"\nhosts = {hosts}\nlink = {{ rate = \"100Gbps\", delay = \"1us\" }}\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n[run]\nmax_wall = \"{wall}\"\n"
        )
    };
    let out = dir.join("out");
    std::fs::write(&file, ring(10, "10min")).unwrap();
    assert!(sim_run(&file, &out, &[]).status.success());
    let before = std::fs::read(out.join("summary.json")).unwrap();
    std::fs::write(&file, ring(6000, "300ms")).unwrap();
    let t0 = std::time::Instant::now();
    let o = sim_run(&file, &out, &[]);
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("run.max_wall") && err.contains("setting up"),
        "{err}"
    );
    assert!(
        took < std::time::Duration::from_millis(1300),
        "ran {took:?} with run.max_wall = 300ms"
    );
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "staging left behind: {left:?}");
}

#[test]
fn conservation_holds_with_failures_loss_and_trimming_together() {
    // A leaf-spine with a spine cable that fails and comes back, lossy cables, bit errors,
    // trimming (UET) and PFC with go-back-N (RoCEv2): every invariant holds, every byte is
    // delivered, dropped with a reason, trimmed or in flight, and every flow finishes.
    let toml = r#"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 4
        host_link = { rate = "100Gbps", delay = "500ns", loss = 0.001 }
        fabric_link = { rate = "100Gbps", delay = "500ns", ber = 1e-8 }
        [switch]
        buffer = "1MB"
        failover = "10us"
        [[workload]]
        kind = "permutation"
        size = "1MB"
        [[fault]]
        link = ["leaf0", "spine1"]
        kind = "down"
        at = "30us"
        until = "200us"
        [[fault]]
        link = ["leaf1", "spine0"]
        kind = "flap"
        at = "50us"
        period = "40us"
        count = 3
        [[variant]]
        name = "uet-trim"
        nic.transport = "uet"
        nic.lb = { kind = "reps" }
        nic.cc = { kind = "nscc" }
        switch.trim = { threshold = "8KB" }
        [[variant]]
        name = "roce-pfc"
        pfc.priorities = [3]
        nic.cc = { kind = "dcqcn" }
        switch.ecn = { kmin = "20KB", kmax = "200KB", pmax = 0.2 }
    "#;
    for r in run(toml) {
        let s = &r.summary;
        assert_eq!(s.flows_completed, 8, "{}: {:?}", s.name, r.flows);
        assert!(s.drops > 0, "{}: the cables lose frames", s.name);
        if s.name == "uet-trim" {
            assert!(s.trimmed > 0, "the permutation collides and trims");
        }
        for i in &s.invariants {
            assert!(i.ok, "{}: {} {}", s.name, i.name, i.detail);
        }
    }
}

#[test]
fn numeric_edge_cases_are_rejected_naming_the_key() {
    let base = r#"
        [topology]
        kind = "star"
        hosts = 4
        host_link = { rate = "100Gbps", cable = "3m" }
        [switch]
        buffer = "1MB"
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "1MB"
    "#;
    let cases: &[(&[&str], &str)] = &[
        (&["topology.host_link.rate=0Gbps"], "topology.host_link.rate"),
        (&["topology.host_link.rate=-5Gbps"], "topology.host_link.rate"),
        (
            &[r#"topology.host_link={rate="100Gbps",delay="0ns"}"#],
            "topology.host_link.delay",
        ),
        (
            &[r#"topology.host_link={rate="100Gbps",cable="0m"}"#],
            "topology.host_link.cable",
        ),
        (&["flow[0].size=0B"], "flow[0].size"),
        (&["flow[0].size=-1B"], "flow[0].size"),
        (&["flow[0].start=-1us"], "flow[0].start"),
        (&["flow[0].dst=h0"], "flow[0].dst"),
        (&["switch.buffer=0B"], "switch.buffer"),
        (
            &[r#"switch.ecn={kmin="2MB",kmax="3MB",pmax=0.1}"#],
            "switch.ecn.kmin",
        ),
        (
            &[r#"switch.ecn={kmin="20KB",kmax="10KB",pmax=0.1}"#],
            "switch.ecn.kmin",
        ),
        (&[r#"switch.trim={threshold="5MB"}"#], "switch.trim.threshold"),
        (&["pfc.priorities=[3]", "pfc.xoff=5MB"], "pfc.xoff"),
        (&["pfc.priorities=[3]", "pfc.quanta=100"], "pfc.quanta"),
        (&["topology.hosts=200"], "switch.asic"),
        (&["topology.hosts=200", "switch.ports=150"], "switch.ports"),
        (&["run.max_events=0"], "run.max_events"),
        (&["run.max_wall=0s"], "run.max_wall"),
        (
            &[
                "workload=[{kind=\"all-to-all\",size=\"1KB\"}]",
                "topology.hosts=5000",
                "switch.ports=5000",
            ],
            "workload[0].kind",
        ),
        (
            &[
                "nic.transport=uet",
                "flow[0].size=1TB",
                "run.max_flow_state=100MB",
            ],
            "run.max_flow_state",
        ),
    ];
    for (set, key) in cases {
        let ov = models::scenario::Overrides {
            set: set.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let e = models::scenario::parse(base, "edge.toml", "edge", &ov)
            .err()
            .unwrap_or_else(|| panic!("{set:?} was accepted"));
        assert!(e.to_string().contains(&format!("`{key}`")), "{set:?}: {e}");
    }
    // The boundaries themselves are accepted. The default refresh (half the pause) must come
    // early enough that a 4096 B frame in service (4096 + 62 + 20 B on the wire), the PFC
    // frame (64 + 20 B) and the 60-quanta response still fit before the pause ends:
    // q/2 quanta > (4178 + 84) * 8 / 512 + 60, at 512 bits a quantum.
    let least = ((2.0f64 * ((4178.0 + 84.0) * 8.0 / 512.0 + 60.0)).floor() as u32) + 1;
    let just_short = format!("pfc.quanta={}", least - 1);
    let enough = format!("pfc.quanta={least}");
    let e = models::scenario::parse(
        base,
        "edge.toml",
        "edge",
        &models::scenario::Overrides {
            set: vec!["pfc.priorities=[3]".into(), just_short],
            ..Default::default()
        },
    )
    .expect_err("one quantum short is refused");
    assert!(
        e.to_string().contains(&format!("use at least {least} quanta")),
        "{e}"
    );
    for set in [
        &["pfc.priorities=[3]", enough.as_str()][..],
        &["topology.hosts=128"][..],
    ] {
        let ov = models::scenario::Overrides {
            set: set.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        models::scenario::parse(base, "edge.toml", "edge", &ov).unwrap_or_else(|e| panic!("{set:?}: {e}"));
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_run_and_still_writes_its_results() {
    let out = tmp("ctrl-c");
    let file = root().join("benches/p8192-uec.toml");
    let args = [
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
        "--threads",
        "1",
    ];
    // Loading takes about 1 s of CPU and the run some 10 s (P1024 can finish in 2 s on a
    // quiet machine): interrupt it mid-way, with room on both sides for a busy machine.
    let code = ctrl_c_after(&args, std::time::Duration::from_millis(2000));
    assert_eq!(code, Some(130));
    let v = &summary_json(&out)["variants"][0];
    assert_eq!(v["incomplete"], "interrupted (Ctrl-C)");
    // On one thread the simulator looks at the flag every PROGRESS_EVENTS events.
    assert_eq!(v["events"].as_u64().unwrap() % models::sim::PROGRESS_EVENTS, 0);
    assert!(!v["unfinished_flows"].as_array().unwrap().is_empty());
    // On two, between windows (every simulated microsecond here).
    let mut args = args;
    args[6] = "2";
    let code = ctrl_c_after(&args, std::time::Duration::from_millis(2000));
    assert_eq!(code, Some(130));
    let v = &summary_json(&out)["variants"][0];
    assert_eq!(v["incomplete"], "interrupted (Ctrl-C)");
    assert!(!v["unfinished_flows"].as_array().unwrap().is_empty());
}

#[test]
fn a_deadlock_is_found_while_other_priorities_keep_moving() {
    // The deadlocked ring plus a lossy (priority 0) flow over sw0 -> sw1, part of the cycle:
    // it keeps crossing the paused egress, which must not hide the stuck priority 3.
    let text = std::fs::read_to_string(root().join("scenarios/pfc-deadlock.toml")).unwrap();
    let text = text.replace(
        "[[variant]]\nname = \"roce-pfc\"\n",
        "[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"8MB\"\nprio = 0\n\n[[variant]]\nname = \"roce-pfc\"\n",
    );
    let s = scenario(&text);
    let v = s.variants.iter().find(|v| v.name == "roce-pfc").unwrap();
    let mut sim = models::sim::Sim::new(&s, v);
    sim.run();
    let r = models::report::VariantReport::new(&sim, 0.0);
    assert_eq!(r.summary.flows_total, 6);
    assert_eq!(r.summary.pfc_deadlocks.len(), 1, "{:?}", r.summary.incomplete);
    assert_eq!(r.summary.pfc_deadlocks[0].priority, 3);
    assert!(r.summary.incomplete.as_deref().unwrap().contains("PFC deadlock"));
    // Found while the lossy flow was still on its way (8 MB needs at least 640 us at 100G).
    let lossy = &r.flows[5];
    assert!(lossy.finish_ns.is_none(), "{lossy:?}");
    assert!(r.summary.pfc_deadlocks[0].detected_ns < 640_000.0);
}
