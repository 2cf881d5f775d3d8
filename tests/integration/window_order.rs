//! Window order gives the results of time order (`models/src/sim/window.rs`): a run on one
//! thread that handles each short window's events node by node writes what the run in time
//! order writes, for every shipped scenario and bench that can run so, and for shipped
//! scenarios with their numbers scaled.

use crate::parallel::fingerprint;
use models::scenario::{Overrides, Scenario, load};
use models::sim::Sim;
use sim_core::Duration;
use std::path::Path;

/// Run every variant of `scenario` in time order and in window order and compare everything
/// the outputs are made of. Returns how many runs went over to window order.
fn compare(scenario: &Scenario, label: &str) -> usize {
    let mut windowed = 0;
    for v in &scenario.variants {
        let mut timed = Sim::new(scenario, v);
        timed.window_order = false;
        timed.run();
        assert!(!timed.ran_in_windows());
        let mut win = Sim::new(scenario, v);
        win.run();
        if !win.ran_in_windows() {
            continue;
        }
        if std::env::var("WIN_DEBUG").is_ok() {
            eprintln!("WINDOWED {label} / {}", v.name);
        }
        windowed += 1;
        let (want, got) = (fingerprint(&timed), fingerprint(&win));
        if want != got {
            let line = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{label} / {} in window order differs from time order, first at line {line}:\n  time:   {}\n  window: {}",
                v.name,
                want.lines().nth(line).unwrap_or(""),
                got.lines().nth(line).unwrap_or("")
            );
        }
    }
    windowed
}

#[test]
fn every_scenario_in_window_order_gives_the_results_of_time_order() {
    let mut files: Vec<_> = std::fs::read_dir("scenarios")
        .expect("scenarios/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    // The benches small enough for a test: an incast whose senders' timers are held at every
    // window (their node finishes no flow), trims in the event log, and a permutation.
    files.extend(
        [
            "benches/i128-incast.toml",
            "benches/p128-uec.toml",
            "benches/fat-tree-k8.toml",
        ]
        .map(Into::into),
    );
    let mut windowed = 0;
    for f in &files {
        let s = load(f, &Overrides::default()).expect("a shipped file loads");
        windowed += compare(&s, &f.display().to_string());
    }
    // Short cables (a homelab's DACs), CBFC, faults and captures keep most in time order;
    // these thirteen must not be: spray-vs-ecmp's four, fat-tree-k8's two, campus-crs504's
    // two, fat-tree-k4, sn3700c (PFC), the three benches.
    assert!(windowed >= 13, "only {windowed} runs went over to window order");
}

/// A time limit inside a window: every event up to it runs, none after, as in time order.
#[test]
fn a_time_limit_inside_a_window_stops_as_time_order_does() {
    for limit in ["20us", "20.3us", "100.7us"] {
        let ov = Overrides {
            set: vec![format!("run.max_time={limit}")],
            ..Default::default()
        };
        let s = load(Path::new("benches/i128-incast.toml"), &ov).expect("loads");
        assert_eq!(compare(&s, limit), 1, "{limit}: window order was not used");
    }
}

/// The shipped files that run in window order with one to three numbers scaled (0.01x to
/// 10x: rates, delays, sizes, counts, buffers, thresholds), in window order and in time
/// order. A fixed seed and budget; `PROPTEST_CASES=400 FUZZ_SEED=3 cargo test --release
/// --test integration window_order` hunts wider.
#[test]
fn scaled_scenarios_in_window_order_give_the_results_of_time_order() {
    use crate::fuzz::{Edit, apply, runner};
    use proptest::prelude::*;
    let files: Vec<_> = [
        "scenarios/spray-vs-ecmp.toml",
        "scenarios/fat-tree-k8.toml",
        "scenarios/fat-tree-k4.toml",
        "benches/i128-incast.toml",
        "benches/p128-uec.toml",
        "benches/fat-tree-k8.toml",
    ]
    .map(|f| {
        (
            Path::new(f).to_path_buf(),
            std::fs::read_to_string(f).expect("a shipped file"),
        )
    })
    .into();
    let factor = prop::sample::select(&[0.01, 0.1, 0.5, 2.0, 3.0, 10.0][..]);
    let edits = prop::collection::vec(
        (0..10_000usize, factor).prop_map(|(n, f)| Edit::Scale(n, f)),
        1..4,
    );
    let windowed = std::cell::Cell::new(0usize);
    runner(24)
        .run(&(0..files.len(), edits), |(f, edits)| {
            let (path, text) = &files[f];
            let mutated = edits.iter().fold(text.clone(), |t, e| apply(&t, e));
            let label = format!("{} with {edits:?}", path.display());
            let Ok(mut s) = models::scenario::parse(&mutated, &label, "fuzz", &Overrides::default()) else {
                return Ok(());
            };
            if s.topology.nodes.len() > 300 || s.flows.len() > 2_000 {
                return Ok(());
            }
            for v in &mut s.variants {
                v.limits.max_time = Some(v.limits.time().min(Duration(200_000_000)));
            }
            windowed.set(windowed.get() + compare(&s, &label));
            Ok(())
        })
        .unwrap();
    // Scaled cables under 100 ns, or scaled sample intervals, keep some in time order.
    assert!(
        windowed.get() >= 6,
        "only {} runs went over to window order",
        windowed.get()
    );
}

/// PFC in window order: the deadlock scenario's ring (a cyclic buffer dependency, the looks
/// that find it, the watchdog's storms and its actions) on cables long enough for windows,
/// 30 and 40 m where the file has 3 and 10 m.
#[test]
fn pfc_deadlocks_looks_and_storms_in_window_order_are_those_of_time_order() {
    let file = Path::new("scenarios/pfc-deadlock.toml");
    for action in ["alert", "forward", "drop"] {
        let ov = Overrides {
            set: vec![
                format!("pfc.watchdog_action={action}"),
                "pfc.watchdog=20us".into(),
                "topology.host_link.cable=30m".into(),
                "topology.ring_link.cable=40m".into(),
            ],
            ..Default::default()
        };
        let s = load(file, &ov).expect("loads");
        // The case does what the comparison needs: storms, and a deadlock found by a look.
        let mut one = Sim::new(&s, &s.variants[1]);
        one.run();
        assert!(one.ran_in_windows(), "{action}: not in window order");
        assert!(
            one.watch.storms_total >= 5,
            "{action}: {} storms",
            one.watch.storms_total
        );
        if action == "alert" {
            // The watchdog only alerts: the ring stays deadlocked, and a look finds it.
            let mut deadlocked = Sim::new(&s, &s.variants[0]);
            deadlocked.run();
            assert!(!deadlocked.watch.deadlocks.is_empty(), "no deadlock found");
        }
        assert_eq!(
            compare(&s, action),
            s.variants.len(),
            "{action}: every variant in window order"
        );
    }
}
