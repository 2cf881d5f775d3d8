//! Hostile inputs, generated: the scenario parser, `--set` and the htsim importer never
//! panic or hang, every rejection names where (file and line, a key, or the `--set`
//! argument), and whatever is accepted runs with every invariant holding.
//!
//! Property tests with a fixed case budget and seed, so CI runs the same cases every time
//! (`PROPTEST_CASES=5000 FUZZ_SEED=7 cargo test --release --test integration fuzz` for a
//! longer hunt over other cases).

use models::scenario::{self, Origin, Overrides, Scenario, ScenarioError};
use models::sim::Sim;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::PathBuf;

/// Values that have broken parsers elsewhere: signs, zero, overflow, NaN, wrong types and
/// units, names that do not exist.
const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1",
    "7",
    "8",
    "255",
    "65536",
    "4294967296",
    "18446744073709551616",
    "1e308",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "2.0",
    "true",
    "\"\"",
    "\"0B\"",
    "\"-1B\"",
    "\"1B\"",
    "\"64B\"",
    "\"9001B\"",
    "\"1e30Gbps\"",
    "\"0Gbps\"",
    "\"1bps\"",
    "\"0ns\"",
    "\"1ps\"",
    "\"99999999999999999999s\"",
    "\"1.5.5us\"",
    "\"10 parsecs\"",
    "\"1ms\"",
    "\"4KB\"",
    "\"1TB\"",
    "\"h0\"",
    "\"h999\"",
    "\"sw0\"",
    "\"nope\"",
    "[]",
    "[1, 2, 3]",
    "[3, 3]",
    "[-1]",
    "{}",
    "{ kind = \"x\" }",
    "{ kind = \"dcqcn\" }",
    "{ rate = \"1Gbps\" }",
    "\"\\u0000\"",
    "\"ecmp\"",
    // At and just past the simulator's limits (durations 10^6 s, sizes 1 PiB, rates
    // 100 Tb/s, cables 40,000 km) and the integer widths.
    "\"1000000s\"",
    "\"1000001s\"",
    "\"1PiB\"",
    "\"100Tbps\"",
    "\"40000km\"",
    "4294967295",
    "9223372036854775807",
    "1000000",
    "\"reps\"",
    "\"uet\"",
    "\"roce\"",
];

/// Keys a `--set` or an inserted line may touch: real ones and near misses.
const KEYS: &[&str] = &[
    "seed",
    "name",
    "topology.kind",
    "topology.hosts",
    "topology.k",
    "topology.leaves",
    "topology.spines",
    "topology.hosts_per_leaf",
    "topology.host_link",
    "topology.host_link.rate",
    "topology.host_link.delay",
    "topology.fabric_link.loss",
    "switch.buffer",
    "switch.asic",
    "switch.cell",
    "switch.ports",
    "switch.ecn",
    "switch.ecn.kmin",
    "switch.trim",
    "switch.trim.threshold",
    "switch.routing",
    "pfc.priorities",
    "pfc.quanta",
    "pfc.xoff",
    "pfc.headroom",
    "pfc.deadlock_timeout",
    "pfc.on_deadlock",
    "nic.mtu",
    "nic.cc",
    "nic.transport",
    "nic.lb",
    "nic.window",
    "nic.rx_rate",
    "run.max_time",
    "run.max_events",
    "run.max_wall",
    "run.max_samples",
    "workload",
    "workload[0].size",
    "workload[0].kind",
    "workload[7].size",
    "flow[0].src",
    "flow[0].dst",
    "flow[0].size",
    "flow[0].prio",
    "flow[99999999999].size",
    "variant[0].nic.mtu",
    "variant[0].topology.k",
    "fault[0].at",
    "capture[0].node",
    "switch.buffer.x",
    "a..b",
    "[",
    "]",
    ".",
    "",
    "x[",
    "x[-1]",
];

pub(crate) fn scenario_files() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    // A file that vanished between the listing and the read (an editor's or another
    // process's temporary) is not a scenario.
    files
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            Some((p, text))
        })
        .collect()
}

/// A rejection says where: a file position, a key, or the `--set` argument.
pub(crate) fn says_where(e: &ScenarioError) -> bool {
    match &e.origin {
        Origin::File { line, .. } => *line >= 1,
        Origin::FileOnly(_) => e.key.is_some(),
        Origin::CommandLine(arg) => !arg.is_empty() && e.to_string().starts_with("--set "),
    }
}

/// Run every variant of an accepted scenario for a bounded number of events (fuzzed fabrics
/// can be large; the point is that nothing panics and the books balance).
fn run_bounded(s: &Scenario) {
    if s.topology.nodes.len() > 400 || s.flows.len() > 5_000 {
        return;
    }
    for v in &s.variants {
        let mut v = v.clone();
        v.limits.max_events = Some(v.limits.max_events.unwrap_or(u64::MAX).min(30_000));
        let mut sim = Sim::new(s, &v);
        sim.run();
        let r = models::report::VariantReport::new(&sim, 0.0);
        for i in &r.summary.invariants {
            assert!(i.ok, "{}: invariant {} failed: {}", v.name, i.name, i.detail);
        }
    }
}

fn check(text: &str, file: &str, set: Vec<String>) {
    let ov = Overrides {
        set,
        ..Default::default()
    };
    match scenario::parse(text, file, "fuzz", &ov) {
        Ok(s) => run_bounded(&s),
        Err(e) => assert!(says_where(&e), "a rejection that does not say where: {e}"),
    }
}

/// One edit of a scenario's text.
#[derive(Debug, Clone)]
pub(crate) enum Edit {
    /// Replace the value of the n-th `key = value` line.
    Value(usize, &'static str),
    DeleteLine(usize),
    SwapLines(usize, usize),
    InsertLine(usize, &'static str, &'static str),
    Truncate(usize),
    Byte(usize, u8),
    /// Scale the n-th number in the text (its unit kept): plausible but unusual scenarios
    /// that get past validation and exercise the simulator itself.
    Scale(usize, f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    let pos = 0..10_000usize;
    prop_oneof![
        4 => (pos.clone(), prop::sample::select(HOSTILE)).prop_map(|(n, v)| Edit::Value(n, v)),
        1 => pos.clone().prop_map(Edit::DeleteLine),
        1 => (pos.clone(), pos.clone()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        2 => (pos.clone(), prop::sample::select(KEYS), prop::sample::select(HOSTILE))
            .prop_map(|(n, k, v)| Edit::InsertLine(n, k, v)),
        1 => pos.clone().prop_map(Edit::Truncate),
        1 => (pos.clone(), any::<u8>()).prop_map(|(n, b)| Edit::Byte(n, b)),
        6 => (pos, prop::sample::select(&[0.0, 0.01, 0.1, 0.5, 2.0, 3.0, 10.0, 100.0][..]))
            .prop_map(|(n, f)| Edit::Scale(n, f)),
    ]
}

pub(crate) fn apply(text: &str, e: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let n = lines.len().max(1);
    match *e {
        Edit::Value(i, v) => {
            let assigns: Vec<usize> = (0..lines.len())
                .filter(|&j| !lines[j].trim_start().starts_with('#') && lines[j].contains('='))
                .collect();
            if !assigns.is_empty() {
                let j = assigns[i % assigns.len()];
                let key = lines[j].split('=').next().unwrap().to_string();
                lines[j] = format!("{key}= {v}");
            }
        }
        Edit::DeleteLine(i) => {
            if !lines.is_empty() {
                lines.remove(i % n);
            }
        }
        Edit::SwapLines(a, b) => {
            if !lines.is_empty() {
                lines.swap(a % n, b % n);
            }
        }
        Edit::InsertLine(i, k, v) => lines.insert(i % (lines.len() + 1), format!("{k} = {v}")),
        Edit::Truncate(i) => {
            let s = lines.join("\n");
            let mut cut = i % (s.len() + 1);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            return s[..cut].to_string();
        }
        Edit::Scale(i, f) => {
            let s = lines.join("\n");
            let numbers: Vec<(usize, usize)> = number_spans(&s);
            if numbers.is_empty() {
                return s;
            }
            let (a, b) = numbers[i % numbers.len()];
            let x: f64 = s[a..b].parse().unwrap_or(1.0) * f;
            let x = if s[a..b].contains('.') {
                format!("{x}")
            } else {
                format!("{}", x.round() as u64)
            };
            return format!("{}{x}{}", &s[..a], &s[b..]);
        }
        Edit::Byte(i, b) => {
            let mut bytes = lines.join("\n").into_bytes();
            if !bytes.is_empty() {
                let j = i % bytes.len();
                bytes[j] = b;
            }
            return String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    lines.join("\n")
}

/// Byte spans of the unsigned decimal numbers in `s` outside comments (`12`, `0.5`).
fn number_spans(s: &str) -> Vec<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut spans = Vec::new();
    let (mut i, mut comment) = (0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'#' => comment = true,
            b'\n' => comment = false,
            c if c.is_ascii_digit() && !comment && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                    i += 1;
                }
                spans.push((start, i));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    spans
}

/// Run `check` on `cases` of `files` (path, text) with one to three of their numbers scaled
/// (each edit multiplies one number by 0.01 to 10: rates, delays, sizes, counts, buffers,
/// thresholds), each that still parses and stays small (300 nodes, 2,000 flows) bounded to
/// 200 us of simulated time (which a run cut into partitions or windows keeps; a bound on
/// events would not be: where it falls depends on the order of the events). Returns the sum
/// of what `check` returned (`label` names the case in a failure).
pub(crate) fn on_scaled(
    files: &[(PathBuf, String)],
    cases: u32,
    check: impl Fn(&Scenario, &str) -> usize,
) -> usize {
    let factor = prop::sample::select(&[0.01, 0.1, 0.5, 2.0, 3.0, 10.0][..]);
    let edits = prop::collection::vec(
        (0..10_000usize, factor).prop_map(|(n, f)| Edit::Scale(n, f)),
        1..4,
    );
    let total = std::cell::Cell::new(0usize);
    runner(cases)
        .run(&(0..files.len(), edits), |(f, edits)| {
            let (path, text) = &files[f];
            let mutated = edits.iter().fold(text.clone(), |t, e| apply(&t, e));
            let label = format!("{} with {edits:?}", path.display());
            let Ok(mut s) = scenario::parse(&mutated, &label, "fuzz", &Overrides::default()) else {
                return Ok(());
            };
            if s.topology.nodes.len() > 300 || s.flows.len() > 2_000 {
                return Ok(());
            }
            for v in &mut s.variants {
                v.limits.max_time = Some(v.limits.time().min(sim_core::Duration(200_000_000)));
            }
            total.set(total.get() + check(&s, &label));
            Ok(())
        })
        .unwrap();
    total.get()
}

pub(crate) fn runner(cases: u32) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    // FUZZ_SEED=n explores other cases than CI's fixed ones.
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

#[test]
fn mutated_scenarios_are_rejected_with_a_place_or_run_cleanly() {
    let files = scenario_files();
    let strategy = (0..files.len(), prop::collection::vec(edit(), 1..4));
    runner(1000)
        .run(&strategy, |(f, edits)| {
            let (path, text) = &files[f];
            let mutated = edits.iter().fold(text.clone(), |t, e| apply(&t, e));
            check(&mutated, path.to_str().unwrap(), Vec::new());
            Ok(())
        })
        .unwrap();
}

#[test]
fn hostile_set_arguments_are_rejected_naming_the_argument_or_run_cleanly() {
    let files = scenario_files();
    let arg = (
        prop::sample::select(KEYS),
        prop::sample::select(HOSTILE),
        any::<bool>(),
    )
        .prop_map(|(k, v, eq)| if eq { format!("{k}={v}") } else { format!("{k}{v}") });
    let strategy = (0..files.len(), prop::collection::vec(arg, 1..3));
    runner(500)
        .run(&strategy, |(f, set)| {
            let (path, text) = &files[f];
            check(text, path.to_str().unwrap(), set);
            Ok(())
        })
        .unwrap();
}

/// A `.cm` line: well-formed, nearly so, or noise.
fn cm_line() -> impl Strategy<Value = String> {
    let num = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("18446744073709551616".to_string()),
        (0u64..20).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        Just("x".to_string()),
    ];
    prop_oneof![
        (num.clone(), num.clone(), num.clone(), num.clone(), num.clone())
            .prop_map(|(s, d, id, t, b)| format!("{s}->{d} id {id} start {t} size {b}")),
        (num.clone(), num.clone(), num.clone(), num.clone())
            .prop_map(|(s, d, id, t)| format!("{s}->{d} id {id} trigger {t} size 1000")),
        (num.clone(), num.clone(), num.clone())
            .prop_map(|(s, d, t)| format!("{s}->{d} start 0 size 4096 send_done_trigger {t}")),
        (
            num.clone(),
            prop::sample::select(&["oneshot", "multishot", "barrier", "barrier 3", "", "bogus"][..])
        )
            .prop_map(|(id, k)| format!("trigger id {id} {k}")),
        num.clone().prop_map(|n| format!("Nodes {n}")),
        num.prop_map(|n| format!("Connections {n}")),
        "[ -~]{0,40}",
        Just("->".to_string()),
        Just("1->2 size".to_string()),
    ]
}

#[test]
fn hostile_htsim_matrices_are_rejected_by_line_or_imported() {
    let strategy = (prop::collection::vec(cm_line(), 0..12), 1usize..20);
    runner(2000)
        .run(&strategy, |(lines, hosts)| {
            let text = lines.join("\n");
            match models::workload::htsim::parse(&text, hosts, 3, &models::workload::FlowCap::new(0, None, 1))
            {
                Ok(flows) => {
                    for f in &flows {
                        prop_assert!(f.src.idx() < hosts && f.dst.idx() < hosts && f.src != f.dst);
                        prop_assert!(f.size > 0);
                    }
                }
                // A line's fault names the line; the one whole-file fault names what is missing.
                Err(e) => prop_assert!(
                    e.starts_with("line ") || e.starts_with("missing the `Nodes N` line"),
                    "no line in: {}",
                    e
                ),
            }
            Ok(())
        })
        .unwrap();
}
