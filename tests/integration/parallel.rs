//! A run on several threads gives the results of one (issue: one run on every core).
//!
//! The model-level check cuts every shipped scenario the engine can cut, short cables
//! included (a window then holds a handful of events, which checks the engine harder than a
//! fabric worth cutting does), at 2 and 3 partitions, and compares everything the outputs
//! are written from. The command-level check compares every output file byte for byte.

use crate::common::{sim_run, tmp};
use models::scenario::{Overrides, Scenario, load};
use models::sim::CutRule;
use models::sim::Sim;
use sim_core::Duration;
use std::path::Path;

/// Everything the outputs are made of, spelled out.
pub(crate) fn fingerprint(sim: &Sim) -> String {
    let mut s = format!("{:?}\n{:?}\n{:?}\n", sim.totals, sim.stopped, sim.now());
    // Frames still in the fabric, and the pool's count of them (`packet_pool_consistent`:
    // a partition's copy of another's frames must not stay in the pool put together).
    s += &format!("{:?} {}\n", sim.in_flight(), sim.net.pool.len());
    for (i, f) in sim.flows.iter().enumerate() {
        let path: Vec<_> = sim.paths.path(i).collect();
        s += &format!("{f:?} {path:?} {:?}\n", sim.paths.uplinks(i));
    }
    for r in sim.log.rows() {
        s += &format!("{r:?}\n");
    }
    s += &format!("{:?}\n{:?}\n", sim.sampler, sim.flow_sampler);
    let w = &sim.watch;
    s += &format!(
        "{:?}\n{}\n{:?}\n{:?}\n",
        w.storms, w.storms_total, w.deadlocks, sim.wd
    );
    for p in &sim.net.ports {
        s += &format!("{:?} {:?} {:?}\n", p.counters, p.tx, p.busy(sim.now()));
        s += &format!("{:?} {:?}\n", p.pause, p.xoff);
    }
    for (h, c) in sim.host_counters.iter().enumerate() {
        s += &format!("{h} {c:?} {:?}\n", sim.nics[h]);
    }
    for sw in &sim.switches {
        s += &format!("{sw:?}\n");
    }
    s
}

/// Panic with the first line where fingerprint `got` differs from `want` (`what` names the
/// runs; `names` the two kinds).
pub(crate) fn differs(want: &str, got: &str, what: &str, names: (&str, &str)) -> ! {
    let line = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    panic!(
        "{what} differs from {}, first at line {line}:\n  {}: {}\n  {}: {}",
        names.0,
        names.0,
        want.lines().nth(line).unwrap_or(""),
        names.1,
        got.lines().nth(line).unwrap_or("")
    );
}

/// Run every variant of `file` on one thread and cut into `parts` (cables of any length,
/// however little work a window holds; a small fabric runs its first windows alone until
/// they have held 16 events, then is built again and cut at time zero), and, when `back` is
/// set, also with first windows too sparse to cut: cut at once and back on one thread after
/// them, and run alone through them and on from there. Every such run is compared with one thread's (a variant the engine
/// cannot cut, as `why_sequential` says, is not); returns how many of them were cut.
fn compare(file: &Path, parts: &[usize], back: bool) -> usize {
    compare_with(file, &Overrides::default(), parts, back)
}

/// [`compare`] with `--set` overrides.
fn compare_with(file: &Path, ov: &Overrides, parts: &[usize], back: bool) -> usize {
    let scenario = load(file, ov).expect("a shipped scenario loads");
    compare_scenario(&scenario, &file.display().to_string(), parts, back)
}

/// [`compare`] on a scenario already loaded (`label` names it in a failure).
fn compare_scenario(scenario: &Scenario, label: &str, parts: &[usize], back: bool) -> usize {
    let mut compared = 0;
    for v in &scenario.variants {
        let mut one = Sim::new(scenario, v);
        one.run();
        let want = fingerprint(&one);
        let rule = |min_events, probe_below_hosts| CutRule {
            min_lookahead: Duration(1),
            min_events,
            probe_below_hosts,
        };
        let sparse = [rule(u64::MAX, 0), rule(u64::MAX, usize::MAX)];
        let modes = parts
            .iter()
            .map(|&n| (n, rule(1, usize::MAX)))
            .chain(sparse.into_iter().filter(|_| back).map(|r| (2, r)));
        for (n, rule) in modes {
            let min_events = rule.min_events;
            // A two-host scenario is cut in two.
            let n = n.min(one.net.host_node.len());
            let mut cut = Sim::new(scenario, v);
            let why = cut.run_threads_cut_at(scenario, n, rule, |_| true);
            let was_cut = why.is_none();
            if let Some(why) = why.filter(|w| !w.contains("events per window")) {
                if std::env::var("PAR_DEBUG").is_ok() {
                    eprintln!("SEQ {label} / {} at {n}: {why}", v.name);
                }
                continue;
            }
            if std::env::var("PAR_DEBUG").is_ok() {
                let how = if was_cut { "cut" } else { "alone" };
                eprintln!("CUT {label} / {} at {n} ({min_events}): {how}", v.name);
            }
            let got = fingerprint(&cut);
            if got != want {
                if std::env::var("PAR_DEBUG").is_ok() {
                    for (a, b) in want.lines().zip(got.lines()).filter(|(a, b)| a != b).take(8) {
                        eprintln!("ONE {}\nCUT {}", &a[..a.len().min(600)], &b[..b.len().min(600)]);
                    }
                }
                let what = format!(
                    "{label} / {} at {n} partitions ({min_events} events per window)",
                    v.name
                );
                differs(&want, &got, &what, ("one thread", "cut"));
            }
            compared += usize::from(was_cut);
        }
    }
    compared
}

#[test]
fn every_cuttable_scenario_gives_the_results_of_one_thread() {
    let mut files: Vec<_> = std::fs::read_dir("scenarios")
        .expect("scenarios/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    if let Ok(only) = std::env::var("PAR_ONLY") {
        files.retain(|f| f.to_string_lossy().contains(&only));
    }
    // Three partitions: a flow's sender, its receiver and the first partition may all differ.
    let mut compared: usize = files.iter().map(|f| compare(f, &[3], false)).sum();
    for bench in ["benches/p128-uec.toml", "benches/i128-incast.toml"] {
        // Also cut for the first windows only, then on one thread from there.
        compared += compare(Path::new(bench), &[2, 4], true);
    }
    // Most shipped scenarios run PFC, faults or captures, which stay on one thread; the
    // rest must have been cut.
    assert!(compared >= 10, "only {compared} runs were cut");
}

/// A limit reached while a small fabric runs its first windows alone ends the run there,
/// on one thread, with one thread's results: it is not built again and cut because the
/// windows before the limit were dense.
#[test]
fn a_limit_among_the_first_windows_ends_the_run_alone() {
    let ov = Overrides {
        set: vec!["run.max_time=500ns".into()],
        ..Default::default()
    };
    // The first window (1 us) holds 128 flow starts, dense at 16 events, and the limit.
    assert_eq!(
        compare_with(Path::new("benches/p128-uec.toml"), &ov, &[2], false),
        0,
        "compared with one thread, and not cut"
    );
}

/// PFC cut: a cyclic pause dependency (found, and stopping the run or not), with every
/// switch's watchdog acting on the queues it holds paused. Storms, the watchdog's per-queue
/// state and what it drops are kept by each partition and put together at the end.
#[test]
fn pfc_deadlocks_and_the_watchdog_cut_as_on_one_thread() {
    let file = Path::new("scenarios/pfc-deadlock.toml");
    for action in ["alert", "forward", "drop"] {
        let ov = Overrides {
            set: vec![
                format!("pfc.watchdog_action={action}"),
                "pfc.watchdog=20us".into(),
            ],
            ..Default::default()
        };
        // The case does what the comparison needs: storms the watchdog acted on.
        let scenario = load(file, &ov).expect("loads");
        let mut one = Sim::new(&scenario, &scenario.variants[1]);
        one.run();
        assert!(
            one.watch.storms_total >= 5 && !one.wd.queues.is_empty(),
            "{action}"
        );
        assert_eq!(
            compare_with(file, &ov, &[2, 3], false),
            6,
            "{action}: every variant cut"
        );
    }
}

#[test]
fn outputs_are_byte_identical_at_any_thread_count() {
    let dir = tmp("threads");
    let file = Path::new("benches/p128-uec.toml");
    let run = |t: &str| {
        let out = dir.join(t);
        let o = sim_run(file, &out, &["--plots", "none", "--threads", t]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let one = run("1");
    for t in ["2", "3"] {
        let many = run(t);
        for f in [
            "flows.csv",
            "counters.csv",
            "timeseries.csv",
            "events.csv",
            "report.md",
        ] {
            let (a, b) = (one.join(f), many.join(f));
            assert_eq!(
                std::fs::read(&a).expect("written"),
                std::fs::read(&b).expect("written"),
                "{f} differs at --threads {t}"
            );
        }
    }
}

/// `benches/same-results.sh`, which checks a change against the build before it, passes
/// what gives the same files at 1 and 2 threads and names each file a change moves (here a
/// build that runs another seed).
#[test]
fn the_same_results_script_passes_the_same_files_and_names_the_moved_ones() {
    let dir = tmp("same-results");
    let sim = env!("CARGO_BIN_EXE_sim");
    let script = |extra: &[&str]| {
        let o = std::process::Command::new("bash")
            .arg("benches/same-results.sh")
            .args(["--threads", "1 2"])
            .args(extra)
            .arg("scenarios/dac-2node.toml")
            .env("SIM", sim)
            .env("TMPDIR", &dir)
            .output()
            .expect("bash runs");
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (code, out) = script(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("identical: "), "{out}");
    let other = dir.join("other-seed");
    std::fs::write(&other, format!("#!/bin/sh\nexec '{sim}' \"$@\" --seed 7\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, out) = script(&["--against", other.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("dac-2node: flows.csv differs (old at --threads 1"),
        "{out}"
    );
}

/// Shipped scenarios with their numbers scaled (rates, delays, sizes, counts, buffers,
/// thresholds: each edit multiplies one number of the file by 0.01 to 10), cut into 2 and 3
/// partitions on cables of any length, give the results of one thread. The shipped files
/// are what the engine was written against; these are fabrics, loads and timings nobody
/// chose. A fixed seed and budget, so CI runs the same cases (`PROPTEST_CASES=400
/// FUZZ_SEED=3 cargo test --release --test integration scaled_scenarios` hunts wider).
#[test]
fn scaled_scenarios_give_the_results_of_one_thread() {
    let files = crate::fuzz::scenario_files();
    let cut = crate::fuzz::on_scaled(&files, 24, |s, label| compare_scenario(s, label, &[2, 3], false));
    assert!(cut >= 10, "only {cut} runs were cut");
}

/// What a cut run reports of itself (`Sim::parallel`, `summary.json`'s `parallel`): the
/// frames that crossed between partitions are the frames the cut cables' ports sent, as a
/// run on one thread counts them port by port; every window is counted, every thread's
/// time is either handling events or waiting, and a run that goes back to one thread says
/// so.
#[test]
fn a_cut_run_reports_its_windows_and_the_frames_that_crossed() {
    use models::sim::parallelism::Partitioning;
    let file = Path::new("benches/fat-tree-k8.toml");
    let scenario = load(file, &Overrides::default()).expect("loads");
    let v = &scenario.variants[0];
    let mut one = Sim::new(&scenario, v);
    one.run();
    assert!(one.parallel.is_none(), "one thread reports no threads");
    for threads in [2, 3] {
        let part = Partitioning::by_hosts(&one.net, threads);
        let node = |p: usize| part.of_node[one.net.port_node[p].idx()];
        let carried: u64 = (0..one.net.ports.len())
            .filter(|&p| node(p) != node(one.net.peer[p].idx()))
            .map(|p| one.net.ports[p].tx.packets)
            .sum();
        assert!(carried > 0);
        let rule = CutRule {
            min_lookahead: Duration(1),
            min_events: 1,
            probe_below_hosts: 0,
        };
        let mut cut = Sim::new(&scenario, v);
        assert_eq!(cut.run_threads_cut_at(&scenario, threads, rule, |_| true), None);
        let r = cut.parallel.as_ref().expect("a cut run reports how it went");
        assert_eq!(
            (r.threads, r.crossed_frames, r.went_back),
            (threads, carried, false)
        );
        assert!(r.windows > 0 && r.busy_seconds.len() == threads);
        assert!(r.busy_seconds.iter().all(|&b| b > 0.0) && r.waiting_seconds.iter().all(|&w| w >= 0.0));
    }
    // Too little work a window (by a rule no run meets): back to one thread after the first
    // windows, and said.
    let rule = CutRule {
        min_lookahead: Duration(1),
        min_events: u64::MAX,
        probe_below_hosts: 0,
    };
    let mut back = Sim::new(&scenario, v);
    assert!(back.run_threads_cut_at(&scenario, 2, rule, |_| true).is_some());
    let r = back.parallel.as_ref().expect("the windows run cut are reported");
    assert!(r.went_back && r.windows == models::sim::DENSITY_WINDOWS);
}
