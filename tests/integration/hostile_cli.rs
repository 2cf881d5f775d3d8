//! The command line against hostile input, as a script drives it: no panic, no abort, no lost
//! file, an exit code that says what happened, and a refusal that names its key, JSON path
//! or file. Each case is one a probe of hostile inputs found breaking an earlier version.

use crate::common::{sim, sim_on, sim_run, summary_json, tmp};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A two-host scenario (`extra` appended), written to `dir/name.toml`.
fn dac(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "[topology]\nkind = \"back-to-back\"\nlink = {{ rate = \"100Gbps\", cable = \"3m\" }}\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"64KB\"\n{extra}"
        ),
    )
    .unwrap();
    file
}

/// The run refused its input: exit 2, no panic, every word of `words` in the message.
fn refused(o: &Output, words: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in words {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

#[test]
fn merge_compare_and_sweep_refuse_an_out_that_is_or_holds_an_input() {
    let dir = tmp("out-is-input");
    let scenario = dac(&dir, "s", "");
    let sweep = dir.join("sw.toml");
    std::fs::write(
        &sweep,
        "name = \"sw\"\nscenario = \"s.toml\"\n[[axis]]\nkey = \"flow[0].size\"\nvalues = [\"10KB\", \"20KB\"]\n",
    )
    .unwrap();
    let (sh0, sh1) = (dir.join("SH0"), dir.join("SH1"));
    for (i, sh) in [&sh0, &sh1].iter().enumerate() {
        let o = sim_on(
            "sweep",
            &sweep,
            sh,
            &["--shard", &format!("{i}/2"), "--plots", "none"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let points = |d: &Path| std::fs::read_dir(d.join("points")).unwrap().count();
    let before = points(&sh0);
    assert!(before > 0);
    // Shard 0 as the merge's --out: refused, naming both, and its points are still there.
    let (a, b) = (sh0.to_str().unwrap(), sh1.to_str().unwrap());
    refused(
        &sim(&["merge", a, b, "--out", a]),
        &["--out", ": is ", "SH0", "inputs"],
    );
    assert_eq!(points(&sh0), before, "shard 0's points were lost");
    // A directory that holds an input, and one inside an input.
    let parent = dir.to_str().unwrap();
    refused(&sim(&["merge", a, b, "--out", parent]), &["holds"]);
    let inside = sh1.join("merged");
    refused(
        &sim(&["merge", a, b, "--out", inside.to_str().unwrap()]),
        &["is inside"],
    );
    // The same for compare (its inputs are runs), sweep (its file) and run (its scenario).
    let (r1, r2) = (dir.join("r1"), dir.join("r2"));
    for r in [&r1, &r2] {
        assert_eq!(sim_run(&scenario, r, &["--plots", "none"]).status.code(), Some(0));
    }
    let (r1s, r2s) = (r1.to_str().unwrap(), r2.to_str().unwrap());
    refused(&sim(&["compare", r1s, r2s, "--out", r1s]), &["is", "r1"]);
    refused(&sim_on("sweep", &sweep, &dir, &[]), &["holds", "sw.toml"]);
    refused(&sim_run(&scenario, &dir, &[]), &["holds", "s.toml"]);
    assert!(scenario.exists() && sweep.exists() && r1.join("summary.json").exists());
    // A well-placed merge still works.
    let merged = dir.join("merged");
    let o = sim(&["merge", a, b, "--out", merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn names_of_any_length_are_shown_short_and_written_whole() {
    let dir = tmp("long-names");
    let long = "v".repeat(70_000);
    let body = std::fs::read_to_string(dac(&dir, "base", "")).unwrap();
    let file = dir.join("long.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"{}\"\n{body}[[variant]]\nname = \"{long}\"\n",
            "s".repeat(70_000)
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.lines().all(|l| l.chars().count() < 400), "{table}");
    assert!(table.contains('\u{2026}'), "{table}");
    // The files keep the whole name.
    assert_eq!(summary_json(&out)["variants"][0]["name"], long.as_str());
    // Without --out the name would be a directory's: refused before the run, naming `name`.
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["run", file.to_str().unwrap(), "-q"])
        .current_dir(&dir)
        .output()
        .unwrap();
    refused(&o, &["`name`", "longer than a file name may be", "--out"]);
    assert!(!dir.join("results").exists());
}

#[test]
fn names_are_not_paths() {
    let dir = tmp("names-paths");
    for (extra, words) in [
        ("name = \"../../x\"\n", vec!["`name`", "not paths"]),
        ("name = \"/tmp/abs\"\n", vec!["`name`", "not paths"]),
        ("name = \"\"\n", vec!["`name`", "empty"]),
        ("name = \"..\"\n", vec!["`name`"]),
    ] {
        // `name` is a top-level key: it goes before the tables.
        let file = dir.join("n.toml");
        let body = std::fs::read_to_string(dac(&dir, "base", "")).unwrap();
        std::fs::write(&file, format!("{extra}{body}")).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(["run", file.to_str().unwrap(), "-q"])
            .current_dir(&dir)
            .output()
            .unwrap();
        refused(&o, &words);
        assert!(!dir.join("results").exists() && !dir.parent().unwrap().join("x").exists());
    }
    // A variant with a slash, a capture whose file name would pass 255 bytes: refused before
    // the run, not after it.
    let slash = dac(&dir, "slash", "[[variant]]\nname = \"roce/dcqcn\"\n");
    refused(
        &sim_run(&slash, &dir.join("o1"), &[]),
        &["variant[0].name", "not paths"],
    );
    let cap = dac(
        &dir,
        "cap",
        &format!("[[capture]]\nnode = \"h0\"\nname = \"{}\"\n", "c".repeat(250)),
    );
    refused(&sim_run(&cap, &dir.join("o2"), &[]), &["capture[0].name", "255"]);
}

#[test]
fn sweep_ranges_too_long_to_count_are_refused() {
    let dir = tmp("sweep-range");
    dac(&dir, "s", "");
    for to in ["1e300", "inf", "nan"] {
        let sweep = dir.join("sw.toml");
        std::fs::write(
            &sweep,
            format!("scenario = \"s.toml\"\n[[axis]]\nkey = \"flow[0].size\"\nrange = {{ from = 1, to = {to}, step = 1 }}\n"),
        )
        .unwrap();
        refused(&sim_on("sweep", &sweep, &dir.join("out"), &[]), &["axis[0]"]);
    }
}

#[test]
fn a_closed_stdout_stops_the_printing_not_the_run() {
    // `sim run ... | head -1`: the pipe closes after one line; the run writes its results and
    // exits as its table says, with no panic.
    let dir = tmp("broken-pipe");
    let file = dac(&dir, "s", "");
    let out = dir.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(out.join("summary.json").exists());
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_refused_without_being_read() {
    let dir = tmp("devices");
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = std::time::Instant::now();
    for path in [Path::new("/dev/zero"), fifo.as_path()] {
        let p = path.display();
        for (toml, key) in [
            (
                format!("[topology]\nkind = \"htsim\"\nfile = \"{p}\"\n"),
                "topology.file",
            ),
            (
                format!("[topology]\nkind = \"graph\"\nfile = \"{p}\"\n"),
                "topology.file",
            ),
        ] {
            let file = dir.join("t.toml");
            std::fs::write(
                &file,
                format!("{toml}[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n"),
            )
            .unwrap();
            refused(
                &sim_run(&file, &dir.join("out"), &[]),
                &[key, "not a regular file"],
            );
        }
        let file = dac(&dir, "sonic", &format!("[switch]\nsonic = \"{p}\"\n"));
        refused(
            &sim_run(&file, &dir.join("out"), &[]),
            &["switch.sonic", "not a regular file"],
        );
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "a read blocked"
    );
}

#[test]
fn a_collective_too_big_for_the_memory_limit_is_refused_from_its_shape() {
    // 1,024 NICs' ring all-reduce is about 4 million messages: refused by its shape before
    // a single one is built, naming the workload and the limit.
    let dir = tmp("rail-1024");
    let file = dir.join("rail.toml");
    std::fs::write(
        &file,
        "[topology]\nkind = \"rail\"\nunits = 4\nservers_per_unit = 32\nnics_per_host = 8\nspines = 8\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\nfabric_link = { rate = \"100Gbps\", cable = \"30m\" }\n[[workload]]\nkind = \"collective\"\nop = \"all-reduce\"\nsize = \"64MiB\"\n[run]\nmax_memory = \"1GiB\"\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    refused(
        &sim_run(&file, &dir.join("out"), &[]),
        &["workload[0].size", "run.max_memory", "flows"],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn runs_that_leave_flows_unfinished_never_exit_0() {
    let dir = tmp("unfinished");
    // A trigger cycle: each connection waits for the other to complete.
    std::fs::write(
        dir.join("cycle.cm"),
        "Nodes 2\nConnections 2\n0->1 id 1 trigger 1 size 1000 send_done_trigger 2\n1->0 id 2 trigger 2 size 1000 send_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n",
    )
    .unwrap();
    let file = dir.join("cycle.toml");
    std::fs::write(
        &file,
        "[topology]\nkind = \"back-to-back\"\nlink = { rate = \"100Gbps\", cable = \"3m\" }\n[[workload]]\nkind = \"htsim\"\nfile = \"cycle.cm\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let v = &summary_json(&out)["variants"][0];
    let why = v["incomplete"].as_str().unwrap();
    assert!(
        why.contains("2 of 2 flows unfinished") && why.contains("never completed"),
        "{why}"
    );
    assert!(
        v["goodput_gbps"].is_null(),
        "no flow completed: {}",
        v["goodput_gbps"]
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 of 2 flows unfinished"));
    // Stopped by a limit before anything completed: exit 5, and no goodput either.
    let file = dac(&dir, "short", "[run]\nmax_time = \"50ns\"\n");
    let o = sim_run(&file, &dir.join("out2"), &[]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(summary_json(&dir.join("out2"))["variants"][0]["goodput_gbps"].is_null());
}

#[test]
fn keys_a_kind_does_not_take_are_refused() {
    let dir = tmp("kind-keys");
    for (set, key) in [
        (
            "nic.cc={kind=\"none\",target_delay=\"5us\"}",
            "nic.cc.target_delay",
        ),
        (
            "switch.routing={kind=\"ecmp\",flowlet_gap=\"5us\"}",
            "switch.routing.flowlet_gap",
        ),
    ] {
        let file = dac(&dir, "s", "");
        refused(
            &sim_run(&file, &dir.join("out"), &["--set", set]),
            &[key, "unknown key"],
        );
    }
    let file = dac(
        &dir,
        "uet",
        "[nic]\ntransport = \"uet\"\ncc = { kind = \"nscc-rccc\", target_delay = \"5us\" }\n",
    );
    refused(
        &sim_run(&file, &dir.join("out"), &[]),
        &["nic.cc.target_delay", "unknown key"],
    );
}

#[test]
fn numbers_past_64_bits_name_their_key() {
    let dir = tmp("u64");
    let file = dac(&dir, "s", "[nic]\nlocal_ack_timeout = 9223372036854775808\n");
    refused(
        &sim_run(&file, &dir.join("out"), &[]),
        &["`nic.local_ack_timeout`", "out of range"],
    );
}

#[test]
fn a_malformed_value_in_an_unused_sonic_profile_is_refused_by_its_json_path() {
    let dir = tmp("sonic-banana");
    let json = dir.join("leaf.json");
    std::fs::write(
        &json,
        r#"{"BUFFER_POOL": {"ingress_lossless_pool": {"size": "12000000", "type": "ingress", "mode": "dynamic"}},
            "BUFFER_PROFILE": {"unused_profile": {"pool": "ingress_lossless_pool", "size": "banana", "dynamic_th": "0"}}}"#,
    )
    .unwrap();
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "[topology]\nkind = \"star\"\nhosts = 2\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\n[switch]\nsonic = \"leaf.json\"\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n",
    )
    .unwrap();
    refused(
        &sim_run(&file, &dir.join("out"), &[]),
        &["BUFFER_PROFILE.unused_profile.size", "banana", "leaf.json"],
    );
}

#[test]
fn malformed_shards_are_refused_naming_their_file() {
    let dir = tmp("bad-shards");
    let sh = dir.join("SH0");
    std::fs::create_dir_all(&sh).unwrap();
    std::fs::write(sh.join("sweep.json"), "{ not json").unwrap();
    let s = sh.to_str().unwrap();
    let out = dir.join("m");
    refused(
        &sim(&["merge", s, "--out", out.to_str().unwrap()]),
        &["SH0/sweep.json"],
    );
    std::fs::write(
        sh.join("sweep.json"),
        r#"{"name": "x", "keys": ["a"], "metrics": [], "points": 1, "shard": [0, 1], "hash": "0"}"#,
    )
    .unwrap();
    std::fs::write(sh.join("sweep.csv"), "point,seed,a\n0,1\n").unwrap();
    refused(
        &sim(&["merge", s, "--out", out.to_str().unwrap()]),
        &["SH0/sweep.csv", "columns"],
    );
    // compare: a summary.json that is not one.
    let r = dir.join("r");
    std::fs::create_dir_all(&r).unwrap();
    std::fs::write(r.join("summary.json"), "[]").unwrap();
    let rs = r.to_str().unwrap();
    refused(
        &sim(&["compare", rs, rs, "--out", out.to_str().unwrap()]),
        &["r/summary.json"],
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_in_a_sweep_keeps_the_points_done_and_exits_130() {
    let dir = tmp("sweep-ctrl-c");
    // A quick point first, then points long enough to be cut (100 GB over 100G is 8 s
    // simulated, tens of millions of events: several seconds of wall clock even in release).
    dac(&dir, "s", "");
    let sweep = dir.join("sw.toml");
    std::fs::write(
        &sweep,
        "scenario = \"s.toml\"\n[[axis]]\nkey = \"flow[0].size\"\nvalues = [\"10KB\", \"100GB\", \"100GB\", \"100GB\", \"100GB\", \"100GB\"]\n",
    )
    .unwrap();
    let out = dir.join("out");
    let (s, o) = (sweep.to_str().unwrap(), out.to_str().unwrap());
    let args = ["sweep", s, "--out", o, "-q", "--jobs", "1", "--plots", "none"];
    let code = crate::common::ctrl_c_after(&args, std::time::Duration::from_millis(1500));
    assert_eq!(code, Some(130));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(meta["interrupted"], true);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let statuses: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(4).unwrap())
        .collect();
    assert_eq!(statuses.len(), 6, "{csv}");
    assert_eq!(statuses[0], "ok", "the point done before Ctrl-C: {csv}");
    assert!(statuses[1..].iter().all(|s| *s == "interrupted"), "{csv}");
}
