//! What the plots are for, in the shipped scenarios that exist to show it: the victim flow
//! starving, DCQCN's rates collapsing, ECMP's collisions and the deadlock cycle are each in
//! the series their plot draws, and the plot is written and readable.

use crate::common::{sim_run, summary_json, tmp};
use crate::results::assert_readable;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn run(name: &str, extra: &[&str]) -> PathBuf {
    let out = tmp(&format!("plots-{name}")).join("out");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let o = sim_run(&file, &out, extra);
    assert!(
        matches!(o.status.code(), Some(0 | 6)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// `timeseries.csv` rows of `variant` and `series`: key -> [(time ns, value)].
fn series(out: &Path, variant: &str, name: &str) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut m: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut r = csv::Reader::from_path(out.join("timeseries.csv")).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        if &rec[0] == variant && &rec[2] == name {
            m.entry(rec[3].to_string())
                .or_default()
                .push((rec[1].parse().unwrap(), rec[4].parse().unwrap()));
        }
    }
    m
}

#[test]
fn the_victim_flow_is_drawn_and_starves_behind_the_pauses() {
    let out = run("victim-flow", &[]);
    assert_readable(&out.join("flow_rates.png"));
    // Flow 3 (h3 -> h5, marked victim) has an idle 25G port to itself, but shares the paused
    // uplink: with PFC only it averages well under half its line rate.
    let v = &series(&out, "pfc-only", "flow_delivered_bytes")["flow 3"];
    let (first, last) = (v.iter().find(|p| p.1 > 0.0).unwrap(), v.last().unwrap());
    let gbps = (last.1 - first.1) * 8.0 / (last.0 - first.0);
    assert!(gbps < 0.5 * 25.0, "the victim averaged {gbps:.1} Gb/s of 25");
}

#[test]
fn dcqcn_collapsing_to_nothing_shows_in_the_rate_limits() {
    let out = run("pfc-incast", &[]);
    assert_readable(&out.join("flow_rates.png"));
    assert_readable(&out.join("pfc_buffers.png"));
    // Some sender's DCQCN rate limit stays under 2 % of its 100 Gb/s for 200 us or more.
    let limits = series(&out, "pfc-dcqcn", "flow_rate_limit_bps");
    let longest = limits
        .values()
        .map(|v| {
            let (mut best, mut since) = (0.0f64, None::<f64>);
            for &(t, r) in v {
                match (r < 2e9, since) {
                    (true, None) => since = Some(t),
                    (false, Some(s)) => {
                        best = best.max(t - s);
                        since = None;
                    }
                    _ => {}
                }
            }
            best
        })
        .fold(0.0, f64::max);
    assert!(
        longest >= 200_000.0,
        "the longest stretch under 2 Gb/s is {longest} ns"
    );
}

#[test]
fn ecmp_collisions_show_on_the_uplinks_and_spraying_evens_them() {
    let out = run("spray-vs-ecmp", &[]);
    assert_readable(&out.join("ecmp_balance.png"));
    assert_readable(&out.join("link_utilisation.png"));
    // Uplink bytes (edge and aggregation ports toward the tier above) per variant.
    let mut r = csv::Reader::from_path(out.join("counters.csv")).unwrap();
    let mut up: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        let (node, port) = (&rec[1], &rec[2]);
        let upward = (node.starts_with("edge") && port.starts_with("to-agg"))
            || (node.starts_with("agg") && port.starts_with("to-core"));
        if &rec[3] == "tx_bytes" && upward {
            up.entry(rec[0].to_string())
                .or_default()
                .push(rec[4].parse().unwrap());
        }
    }
    let spread = |v: &[f64]| v.iter().copied().fold(0.0, f64::max) / (v.iter().sum::<f64>() / v.len() as f64);
    assert!(spread(&up["ecmp"]) > 2.5, "ECMP max/mean {}", spread(&up["ecmp"]));
    assert!(spread(&up["reps"]) < 1.5, "REPS max/mean {}", spread(&up["reps"]));
}

#[test]
fn the_deadlock_cycle_is_drawn_on_cables_that_were_paused() {
    let out = run("pfc-deadlock", &["--variant", "roce-pfc"]);
    assert_readable(&out.join("pause_graph.png"));
    assert_readable(&out.join("pauses.png"));
    let s = summary_json(&out);
    let cycle: Vec<String> = s["variants"][0]["pfc_deadlocks"][0]["cycle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert_eq!(cycle.len(), 5);
    // Each egress of the cycle was paused by the next switch: its peer's port toward it kept
    // it paused (tx_prio3_pause_duration), which is the arrow the graph draws.
    let counters = std::fs::read_to_string(out.join("counters.csv")).unwrap();
    for egress in &cycle {
        let (node, port) = egress.split_once(' ').unwrap();
        let peer = port.trim_start_matches("to-");
        let row = format!("roce-pfc,{peer},to-{node},tx_prio3_pause_duration,");
        let paused = counters
            .lines()
            .find(|l| l.starts_with(&row))
            .map(|l| l[row.len()..].parse::<u64>().unwrap());
        assert!(paused.is_some_and(|us| us > 0), "{egress}: {paused:?}");
    }
}
