//! Fixtures: build a scenario from TOML text and run it.

use models::report::VariantReport;
use models::scenario::{self, Overrides, Scenario};
use models::sim::Sim;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run the `sim` binary as a user would.
pub fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .output()
        .expect("sim runs")
}

/// Run `sim ARGS` with its output discarded, press Ctrl-C (SIGINT) after `after`, and wait
/// for it to exit: its exit code.
#[cfg(unix)]
pub fn ctrl_c_after(args: &[&str], after: std::time::Duration) -> Option<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sim runs");
    std::thread::sleep(after);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    child.wait().expect("sim ends").code()
}

/// `sim run FILE --out OUT -q` plus `extra` arguments.
pub fn sim_run(file: &Path, out: &Path, extra: &[&str]) -> Output {
    sim_on("run", file, out, extra)
}

/// `sim COMMAND FILE --out OUT -q` plus `extra` arguments (`run`, `sweep`).
pub fn sim_on(command: &str, file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        command,
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    sim(&args)
}

/// The `summary.json` a run wrote into `out`.
pub fn summary_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// A fresh, empty temporary directory for one test.
pub fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn scenario(toml: &str) -> Scenario {
    scenario::parse(toml, "test.toml", "test", &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Run every variant.
pub fn run_unchecked(toml: &str) -> Vec<VariantReport> {
    let s = scenario(toml);
    s.variants
        .iter()
        .map(|v| {
            let mut sim = Sim::new(&s, v);
            sim.run();
            VariantReport::new(&sim, 0.0)
        })
        .collect()
}

/// Run every variant; assert the invariants held.
pub fn run(toml: &str) -> Vec<VariantReport> {
    let reports = run_unchecked(toml);
    for r in &reports {
        for i in &r.summary.invariants {
            assert!(
                i.ok,
                "{}: invariant {} failed: {}",
                r.summary.name, i.name, i.detail
            );
        }
    }
    reports
}

/// Wire bytes of a RoCEv2 data packet with `payload` bytes: 62 B of headers in the frame
/// (Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4) and 20 B of preamble + IFG.
pub fn roce_wire(payload: u64) -> u64 {
    (payload + 62).max(64) + 20
}

/// Seconds to send `bytes` at `gbps`.
pub fn tx_ns(bytes: u64, gbps: f64) -> f64 {
    bytes as f64 * 8.0 / gbps
}

pub fn assert_close(got: f64, expected: f64, tol_abs: f64, tol_rel: f64, what: &str) {
    let tol = tol_abs.max(tol_rel * expected.abs());
    assert!(
        (got - expected).abs() <= tol,
        "{what}: got {got}, expected {expected} (tolerance {tol})"
    );
}

/// Counter `name` of port `port` at `node` in a variant's report (0 if absent).
pub fn counter(r: &models::report::VariantReport, node: &str, port: &str, name: &str) -> u64 {
    r.counters
        .iter()
        .find(|c| c.node == node && c.port == port && c.counter == name)
        .map_or(0, |c| c.value)
}

/// Counter `name` summed over every port of a variant's report.
pub fn counter_total(r: &models::report::VariantReport, name: &str) -> u64 {
    r.counters
        .iter()
        .filter(|c| c.counter == name)
        .map(|c| c.value)
        .sum()
}

/// When the last flow of a variant finished at its receiver (ns; 0 if none did).
pub fn last_finish(r: &models::report::VariantReport) -> f64 {
    r.flows.iter().filter_map(|f| f.finish_ns).fold(0.0, f64::max)
}

/// The findings `id` the configuration check raises on the first variant of `toml`.
pub fn findings(toml: &str, id: &str) -> Vec<models::scenario::check::Finding> {
    let s = scenario(toml);
    s.variants[0]
        .findings
        .iter()
        .filter(|f| f.id == id)
        .cloned()
        .collect()
}
