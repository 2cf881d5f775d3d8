//! The command line as a user drives it: results contract, determinism, overrides, errors.

use crate::common::{sim, summary_json, tmp};
use std::path::{Path, PathBuf};
use std::process::Output;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const GOOD: &str = r#"# a small star
name = "tiny"
seed = 5

[topology]
kind = "star"
hosts = 6
host_link = { rate = "100Gbps", cable = "2m" }

[[workload]]
kind = "permutation"
size = "200KB"

[[variant]]
name = "a"

[[variant]]
name = "b"
nic.mtu = "1024B"
"#;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run a scenario that must be rejected; return stderr.
fn rejected(text: &str, extra: &[&str]) -> String {
    let dir = tmp("bad");
    let file = write(&dir, "bad.toml", text);
    let out = dir.join("out");
    let mut args = vec!["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = sim(&args);
    assert_eq!(
        o.status.code(),
        Some(2),
        "expected exit 2, stderr: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "no results for a rejected scenario");
    err
}

#[test]
fn run_writes_the_results_contract() {
    let dir = tmp("contract");
    let file = write(&dir, "tiny.toml", GOOD);
    let out = dir.join("out");
    let o = sim(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("FCT p99") && table.contains("events/s"), "{table}");

    let summary = summary_json(&out);
    assert_eq!(summary["scenario"], "tiny");
    assert_eq!(summary["seed"], 5);
    assert!(summary["version"].is_string());
    let variants = summary["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    for v in variants {
        for key in [
            "name",
            "flows_total",
            "flows_completed",
            "goodput_gbps",
            "drops",
            "events",
            "packet_hops",
            "wall_seconds",
            "events_per_second",
        ] {
            assert!(!v[key].is_null(), "summary variant lacks {key}");
        }
        for key in ["p50", "p99", "max"] {
            assert!(v["fct_ns"][key].as_f64().unwrap() > 0.0);
        }
        for key in ["p50", "p99"] {
            assert!(v["slowdown"][key].as_f64().unwrap() >= 1.0);
        }
        assert_eq!(v["flows_total"], 6);
        assert!(
            v["invariants"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i["ok"] == true)
        );
    }

    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    assert_eq!(
        flows.lines().next().unwrap(),
        "variant,flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,sender_finish_ns,sender_fct_ns,ideal_fct_ns,slowdown,entropy,path,uplinks,status"
    );
    assert_eq!(flows.lines().count(), 1 + 12);
    let counters = std::fs::read_to_string(out.join("counters.csv")).unwrap();
    assert_eq!(
        counters.lines().next().unwrap(),
        "variant,node,port,counter,value"
    );
    assert!(counters.contains("b,sw0,to-h3,tx_bytes,"));
}

#[test]
fn same_seed_same_results_other_seed_other_permutation() {
    let dir = tmp("seed");
    let file = write(&dir, "tiny.toml", GOOD);
    let run = |seed: &str, out: &str| {
        let out = dir.join(out);
        let o = sim(&[
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--seed",
            seed,
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
        let counters = std::fs::read_to_string(out.join("counters.csv")).unwrap();
        (flows, counters)
    };
    let a = run("7", "a");
    assert_eq!(a, run("7", "b"), "same seed must give identical outputs");
    let c = run("8", "c");
    let pairs = |csv: &str| {
        csv.lines()
            .skip(1)
            .map(|l| l.split(',').take(4).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
    };
    assert_ne!(
        pairs(&a.0),
        pairs(&c.0),
        "a different seed draws a different permutation"
    );
}

#[test]
fn set_overrides_any_key_before_validation() {
    let dir = tmp("set");
    let file = write(&dir, "tiny.toml", GOOD);
    let out = dir.join("out");
    let o = sim(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "topology.hosts=9",
        "--set",
        "workload[0].size=10KB",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = summary_json(&out);
    assert_eq!(summary["variants"][0]["flows_total"], 9);

    let err = rejected(GOOD, &["--set", "topology.host_link.rate=fast"]);
    assert!(err.contains("--set topology.host_link.rate=fast"), "{err}");
    assert!(err.contains("expected a rate"), "{err}");
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let err = rejected(&GOOD.replace("seed = 5", "seed = 5\nsede = 6"), &[]);
    assert!(err.contains("bad.toml:4:"), "{err}");
    assert!(err.contains("sede"), "{err}");
}

#[test]
fn unknown_nested_key_is_named() {
    let err = rejected(&GOOD.replace("kind = \"star\"", "kind = \"star\"\nhost = 6"), &[]);
    assert!(err.contains("host"), "{err}");
    assert!(err.contains("bad.toml:"), "{err}");
}

#[test]
fn bad_unit_says_what_was_expected() {
    let err = rejected(&GOOD.replace("\"100Gbps\"", "\"100 furlongs\""), &[]);
    assert!(err.contains("topology"), "{err}");
    assert!(err.contains("expected a rate like \"100Gbps\""), "{err}");
}

#[test]
fn units_are_read_whatever_their_case_unless_that_changes_them() {
    // "25gbps" is what a user types from `ethtool`'s "25000Mb/s"; "25GBps" is bytes.
    let dir = tmp("units-case");
    let file = write(&dir, "u.toml", &GOOD.replace("\"100Gbps\"", "\"100gbps\""));
    let o = sim(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = rejected(&GOOD.replace("\"100Gbps\"", "\"100GBps\""), &[]);
    assert!(err.contains("bytes per second"), "{err}");
    let err = rejected(&GOOD.replace("size = \"200KB\"", "size = \"200kb\""), &[]);
    assert!(err.contains("in bits"), "{err}");
}

#[test]
fn help_teaches_by_example_and_points_to_the_scenarios() {
    for args in [&["--help"][..], &["run", "--help"]] {
        let o = sim(args);
        assert!(o.status.success());
        let help = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(help.contains("Examples:"), "{args:?}: {help}");
        assert!(
            help.contains("sim run scenarios/leaf-spine.toml"),
            "{args:?}: {help}"
        );
    }
    let o = sim(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(help.contains("scenarios/*.toml"), "{help}");
    // Every `sim run` and `sim check` example runs as written (its own --out replaced).
    let run_help = String::from_utf8_lossy(&sim(&["run", "--help"]).stdout).to_string();
    let out = std::env::temp_dir().join(format!("sim-help-examples-{}", std::process::id()));
    let root_dir = env!("CARGO_MANIFEST_DIR");
    for line in help.lines().chain(run_help.lines()) {
        let line = line.trim_start();
        if !(line.starts_with("sim run scenarios/") || line.starts_with("sim check scenarios/")) {
            continue;
        }
        // Words, a '...' quoted one kept whole; the example's description after two spaces.
        let cmd = line.split("   ").next().unwrap();
        let mut words: Vec<String> = Vec::new();
        let mut quoted: Option<String> = None;
        for w in cmd.split_whitespace().skip(1) {
            match (&mut quoted, w.strip_prefix('\'')) {
                (None, Some(rest)) if rest.ends_with('\'') => words.push(rest.trim_end_matches('\'').into()),
                (None, Some(rest)) => quoted = Some(rest.to_string()),
                (Some(q), _) if w.ends_with('\'') => {
                    words.push(format!("{q} {}", w.trim_end_matches('\'')));
                    quoted = None;
                }
                (Some(q), _) => *q = format!("{q} {w}"),
                (None, None) => words.push(w.to_string()),
            }
        }
        if let Some(i) = words.iter().position(|w| w == "--out") {
            words.drain(i..i + 2);
        }
        for w in words.iter_mut().filter(|w| w.starts_with("scenarios/")) {
            *w = format!("{root_dir}/{w}");
        }
        if words[0] == "run" {
            if !words.iter().any(|w| w == "--plots") {
                words.extend(["--plots".into(), "none".into()]);
            }
            words.extend(["--out".into(), out.to_str().unwrap().into()]);
        }
        let args: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
        let o = sim(&args);
        assert!(
            matches!(o.status.code(), Some(0 | 5 | 6 | 7 | 8)),
            "the example `{line}` exits {:?}: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    // Every example's scenario is shipped.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for word in help
        .split_whitespace()
        .filter(|w| w.starts_with("scenarios/") && w.ends_with(".toml"))
    {
        assert!(root.join(word).is_file(), "{word}");
    }
}

#[test]
fn negative_size_is_rejected() {
    let err = rejected(&GOOD.replace("size = \"200KB\"", "size = -5"), &[]);
    assert!(err.contains("workload[0].size"), "{err}");
    assert!(err.contains("negative"), "{err}");
    let err = rejected(&GOOD.replace("size = \"200KB\"", "size = \"-5KB\""), &[]);
    assert!(err.contains("negative"), "{err}");
}

#[test]
fn missing_file_exits_2() {
    let o = sim(&["run", "/nonexistent/scenario.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/scenario.toml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unknown_host_in_a_flow_is_named() {
    let text = GOOD.replace(
        "[[workload]]\nkind = \"permutation\"\nsize = \"200KB\"",
        "[[flow]]\nsrc = \"h1\"\ndst = \"h42\"\nsize = \"1MB\"",
    );
    let err = rejected(&text, &[]);
    assert!(err.contains("flow[0].dst"), "{err}");
    assert!(err.contains("h0..h5"), "{err}");
    assert!(err.contains("bad.toml:"), "{err}");
}

#[test]
fn invalid_toml_points_at_the_line() {
    let err = rejected(&GOOD.replace("seed = 5", "seed = = 5"), &[]);
    assert!(err.contains("bad.toml:3:"), "{err}");
}

#[test]
fn variants_cannot_change_topology_or_traffic() {
    let err = rejected(&format!("{GOOD}topology.hosts = 3\n"), &[]);
    assert!(err.contains("variant[1].topology"), "{err}");
}

#[test]
fn every_shipped_scenario_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut ran = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with('#'),
                "{} must open with a comment saying what it shows",
                path.display()
            );
            let out = tmp(&format!(
                "shipped-{}",
                path.file_stem().unwrap().to_string_lossy()
            ));
            let o = sim(&[
                "run",
                path.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "-q",
            ]);
            // A scenario that exists to show a deadlock ends with its exit code (6); one whose
            // variant starves a class until its senders give up, with flows unfinished (7).
            let expected = match path.file_stem().and_then(|s| s.to_str()) {
                Some("pfc-deadlock") => 6,
                Some("mixed-fabric") => 7,
                _ => 0,
            };
            assert_eq!(
                o.status.code(),
                Some(expected),
                "{}: {}",
                path.display(),
                stderr(&o)
            );
            ran += 1;
        }
    }
    assert!(ran >= 4);
}

#[test]
fn the_scenarios_folder_loads_wherever_it_is_copied() {
    // Every file a shipped scenario reads sits in scenarios/ itself: a user copies the folder
    // and runs it there.
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let dest = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy(&p, &dest);
            } else {
                std::fs::copy(&p, &dest).unwrap();
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let away = tmp("scenarios-copied").join("elsewhere");
    copy(&root, &away);
    let mut loaded = 0;
    for e in std::fs::read_dir(&away).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let ov = models::scenario::Overrides::default();
            if let Err(err) = models::scenario::load(&p, &ov) {
                panic!("{} does not load once copied: {err}", p.display());
            }
            loaded += 1;
        }
    }
    assert!(loaded >= 25, "{loaded} scenarios");
}
