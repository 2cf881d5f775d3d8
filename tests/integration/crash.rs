//! Nothing a user has is lost, whatever happens while results are written: a SIGKILL at every
//! step of writing them, a file-size limit (a full disk's error), a read-only or impossible
//! `--out`, and Ctrl-C before every variant ran.

use crate::common::{sim_run, summary_json, tmp};
use std::path::Path;
use std::process::Command;

const TWO_VARIANTS: &str = r#"
[topology]
kind = "star"
hosts = 4
host_link = { rate = "100Gbps", cable = "3m" }
[[workload]]
kind = "incast"
size = "64KB"
[[variant]]
name = "a"
[[variant]]
name = "b"
nic.mtu = "1024B"
"#;

/// The complete results of one run: the marker lists every file, every listed file is
/// there, and nothing else is. The run's seed, from summary.json.
fn complete(out: &Path) -> u64 {
    let marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(".sim-results")).unwrap()).unwrap();
    let files: Vec<&str> = marker["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let mut present: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".sim-results")
        .collect();
    present.sort();
    assert_eq!(
        present,
        files,
        "{}: the files are not the marker's",
        out.display()
    );
    assert!(files.contains(&"summary.json") && files.contains(&"flows.csv"));
    summary_json(out)["seed"].as_u64().unwrap()
}

/// The binary under test has the crash hook only when built with `--features crash-test`
/// (the README's test command has `--all-features`): without it this test cannot run, and
/// fails rather than pass without checking.
#[cfg(unix)]
#[test]
fn a_kill_at_any_step_of_writing_leaves_the_old_results_or_the_new() {
    if !cfg!(feature = "crash-test") {
        panic!("build the tests with --all-features (or --features crash-test): the crash hook is off");
    }
    let dir = tmp("kill-steps");
    let file = dir.join("s.toml");
    std::fs::write(&file, TWO_VARIANTS).unwrap();
    let out = dir.join("out");
    assert!(sim_run(&file, &out, &["--seed", "1"]).status.success());
    let mut old_kept = 0;
    let mut new_kept = 0;
    // Every step: each result file, then the renames that put the directory in place.
    for step in 1..=40 {
        let o = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args([
                "run",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "-q",
            ])
            .args(["--seed", &(step + 1).to_string()])
            .env("SIM_TEST_KILL_AT", step.to_string())
            .output()
            .unwrap();
        let seed = complete(&out);
        if o.status.success() {
            // Past the last step: the new results are in place, nothing was killed.
            assert_eq!(seed, step + 1);
            assert!(step > 10, "only {step} steps to write a run's results?");
            break;
        }
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(o.status.signal(), Some(9), "step {step}: {:?}", o.status);
        if seed == step + 1 {
            new_kept += 1;
        } else {
            old_kept += 1;
        }
        // The next command cleans what the killed one left beside --out.
        assert!(sim_run(&file, &out, &["--seed", "1"]).status.success());
        assert_eq!(complete(&out), 1);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "step {step}: left behind {left:?}");
    }
    assert!(old_kept > 10 && new_kept >= 1, "old {old_kept}, new {new_kept}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_names_the_file_and_keeps_the_earlier_results() {
    // A file-size limit (as `ulimit -f`) fails writes with EFBIG exactly as a full disk fails
    // them with ENOSPC, without needing a full disk: the error names the file.
    let dir = tmp("full");
    let file = dir.join("s.toml");
    std::fs::write(&file, TWO_VARIANTS).unwrap();
    let out = dir.join("out");
    assert!(sim_run(&file, &out, &[]).status.success());
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let o = Command::new("prlimit")
        .arg("--fsize=20000")
        .arg(env!("CARGO_BIN_EXE_sim"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
            "--seed",
            "9",
        ])
        .output();
    let Ok(o) = o else {
        panic!("prlimit (util-linux) is needed for this test");
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writing") && (err.contains(".csv") || err.contains(".png")),
        "{err}"
    );
    assert!(err.contains("as it was"), "{err}");
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    complete(&out);
}

#[test]
fn an_impossible_out_fails_before_the_run() {
    let dir = tmp("impossible");
    let file = dir.join("s.toml");
    std::fs::write(&file, TWO_VARIANTS).unwrap();
    std::fs::write(dir.join("a-file"), b"x").unwrap();
    for out in [
        dir.join("a-file").join("x"),
        Path::new("/proc/sim-test/x").to_path_buf(),
        Path::new(".").to_path_buf(),
        Path::new("..").to_path_buf(),
    ] {
        let t0 = std::time::Instant::now();
        let o = sim_run(&file, &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.contains("--out"), "{err}");
        assert!(o.stdout.is_empty(), "{}: it ran first", out.display());
        assert!(t0.elapsed().as_secs() < 5);
    }
    // A read-only directory (meaningful only for a user whom permissions bind: root writes
    // anyway, and then the results simply go there).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let bound = std::fs::write(ro.join("probe"), b"").is_err();
        let o = sim_run(&file, &ro.join("out"), &[]);
        if bound {
            assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(o.stdout.is_empty());
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn compare_writes_only_a_directory_of_its_own() {
    let dir = tmp("compare-out");
    let file = dir.join("s.toml");
    std::fs::write(&file, TWO_VARIANTS).unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    assert!(sim_run(&file, &a, &[]).status.success());
    assert!(sim_run(&file, &b, &["--seed", "2"]).status.success());
    let before = std::fs::read(a.join("report.md")).unwrap();
    let compare = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_sim"))
            .args([
                "compare",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    // Into one of the runs it compares: refused, the run's report untouched.
    let o = compare(&a);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(a.join("report.md")).unwrap(), before);
    // Into a folder of the user's: refused.
    let mine = dir.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("report.md"), b"my report").unwrap();
    assert_eq!(compare(&mine).status.code(), Some(2));
    assert_eq!(std::fs::read(mine.join("report.md")).unwrap(), b"my report");
    // Its own directory, twice.
    let c = dir.join("c");
    assert!(compare(&c).status.success());
    assert!(compare(&c).status.success());
    assert!(c.join("compare.png").exists() && c.join("report.md").exists());
}

#[cfg(unix)]
#[test]
fn ctrl_c_lists_the_variants_not_run() {
    // Two variants of a 100 GB flow. One at a time, the first is interrupted and the second
    // never starts; two at a time, both are interrupted.
    for (jobs, not_run, cut) in [("1", vec!["second"], 1), ("2", vec![], 2)] {
        let dir = tmp(&format!("ctrl-c-variants-{jobs}"));
        let file = dir.join("s.toml");
        std::fs::write(
            &file,
            "[topology]\nkind = \"back-to-back\"\nlink = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"100GB\"\n[[variant]]\nname = \"first\"\n[[variant]]\nname = \"second\"\n",
        )
        .unwrap();
        let out = dir.join("out");
        let args = [
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
            "--jobs",
            jobs,
        ];
        let code = crate::common::ctrl_c_after(&args, std::time::Duration::from_millis(1000));
        assert_eq!(code, Some(130));
        let s = summary_json(&out);
        assert_eq!(s["stopped"], "interrupted (Ctrl-C)");
        assert_eq!(s["variants_not_run"], serde_json::json!(not_run), "--jobs {jobs}");
        let variants = s["variants"].as_array().unwrap();
        assert_eq!(variants.len(), cut, "--jobs {jobs}");
        for v in variants {
            assert_eq!(v["incomplete"], "interrupted (Ctrl-C)", "--jobs {jobs}");
        }
        complete(&out);
    }
}
