//! Window order gives the results of time order (`models/src/sim/window/`): a run on one
//! thread that handles each short window's events node by node writes what the run in time
//! order writes, for every shipped scenario and bench that can run so, and for shipped
//! scenarios with their numbers scaled.

use crate::parallel::fingerprint;
use models::scenario::{Overrides, Scenario, load};
use models::sim::Sim;
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
            let what = format!("{label} / {} in window order", v.name);
            crate::parallel::differs(&want, &got, &what, ("time order", "window order"));
        }
    }
    windowed
}

#[test]
fn every_scenario_in_window_order_gives_the_results_of_time_order() {
    let mut files: Vec<_> = crate::fuzz::scenario_files()
        .into_iter()
        .map(|(p, _)| p)
        .collect();
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
    let windowed = crate::fuzz::on_scaled(&files, 24, compare);
    // Scaled cables under 100 ns, or scaled sample intervals, keep some in time order.
    assert!(windowed >= 6, "only {windowed} runs went over to window order");
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
