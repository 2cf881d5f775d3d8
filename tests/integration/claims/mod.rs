//! Every shipped scenario's claims hold: each number or effect a scenario's leading comment
//! states is asserted here against a run of the file as shipped, through the command line
//! (`--plots none`), within the tolerance written beside it. A comment that drifts from what
//! the simulator does fails here; change a claim here only with the comment that makes it.
//!
//! The expected values are the comments' (rounded as they are written there, or computed
//! from the configured sizes and rates as the comment computes them), never pasted output.

use crate::common::{sim, sim_run, summary_json, tmp};
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const US: f64 = 1e3;
const MS: f64 = 1e6;
/// Preamble, IFG and the RoCEv2 headers of a data frame (Eth 14 + IPv4 20 + UDP 8 + BTH 12 +
/// ICRC 4 + FCS 4 + 20): what every 4096 B (or smaller) payload pays on the wire.
const ROCE_OVERHEAD: f64 = 82.0;
/// A RoCEv2 ACK on the wire: 62 B of headers + 4 B AETH + 20 B preamble and IFG.
const ROCE_ACK_WIRE: f64 = 86.0;

/// A flow of `flows.csv`.
#[derive(Debug, Clone)]
struct Flow {
    variant: String,
    src: String,
    dst: String,
    size: f64,
    start_ns: f64,
    finish_ns: Option<f64>,
    fct_ns: Option<f64>,
    ideal_ns: f64,
    slowdown: Option<f64>,
    status: String,
}

impl Flow {
    fn fct(&self) -> f64 {
        self.fct_ns.expect("a completed flow")
    }
    fn finish(&self) -> f64 {
        self.finish_ns.expect("a completed flow")
    }
    fn slowdown(&self) -> f64 {
        self.slowdown.expect("a completed flow")
    }
    /// `N` of the status' "(N of M bytes delivered)".
    fn delivered(&self) -> f64 {
        let head = self
            .status
            .rsplit_once(" of ")
            .and_then(|(h, _)| h.rsplit_once('('))
            .map(|(_, n)| n)
            .unwrap_or_else(|| panic!("no delivered bytes in {:?}", self.status));
        head.parse().unwrap()
    }
}

type CounterKey = (String, String, String, String);

/// One run of a shipped scenario, and its results.
struct Run {
    /// The scenario, and the arguments it ran with beyond the file, for messages.
    label: String,
    out: PathBuf,
    summary: Value,
    stderr: String,
    counters: OnceCell<HashMap<CounterKey, f64>>,
    flows: OnceCell<Vec<Flow>>,
}

/// Run `scenarios/NAME.toml` as shipped (plus `extra`), expecting exit code `exit`, and check
/// that every variant's invariants held.
fn run(name: &str, extra: &[&str], exit: i32) -> Run {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let label = if extra.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", extra.join(" "))
    };
    let dir: String = format!("claims-{name}-{}", extra.join("-"))
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let out = tmp(&dir).join("out");
    let mut args = vec!["--plots", "none"];
    args.extend_from_slice(extra);
    let o = sim_run(&file, &out, &args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(exit),
        "{label}: `sim run` exits {exit}: {stderr}"
    );
    let summary = summary_json(&out);
    for v in summary["variants"].as_array().unwrap() {
        for i in v["invariants"].as_array().unwrap() {
            assert!(
                i["ok"] == true,
                "{label}: variant {}: invariant {} failed: {}",
                v["name"],
                i["name"],
                i["detail"]
            );
        }
    }
    Run {
        label,
        out,
        summary,
        stderr,
        counters: OnceCell::new(),
        flows: OnceCell::new(),
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        // Kept when a claim failed, to look at.
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(self.out.parent().unwrap());
        }
    }
}

impl Run {
    /// A variant's object in summary.json.
    fn v(&self, variant: &str) -> &Value {
        self.summary["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == variant)
            .unwrap_or_else(|| panic!("{}: no variant {variant}", self.label))
    }

    /// A number of a variant's summary by dotted path: `fct_ns.p99`.
    fn num(&self, variant: &str, path: &str) -> f64 {
        let mut x = self.v(variant);
        for k in path.split('.') {
            x = &x[k];
        }
        x.as_f64()
            .unwrap_or_else(|| panic!("{}: {variant}: {path} is {x}", self.label))
    }

    /// A job of a variant's summary (`jobs`).
    fn job(&self, variant: &str, job: &str) -> &Value {
        self.v(variant)["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["name"] == job)
            .unwrap_or_else(|| panic!("{}: {variant}: no job {job}", self.label))
    }

    /// A results CSV whose first columns must be `columns` (the ones read here by position).
    fn csv(&self, file: &str, columns: &[&str]) -> csv::Reader<std::fs::File> {
        let mut r = csv::Reader::from_path(self.out.join(file)).unwrap();
        let h = r.headers().unwrap().clone();
        assert!(
            h.iter().take(columns.len()).eq(columns.iter().copied()),
            "{}: {file} has columns {h:?}",
            self.label
        );
        r
    }

    /// `sonic_counters.csv`, its header checked.
    fn sonic_counters(&self) -> csv::Reader<std::fs::File> {
        self.csv(
            "sonic_counters.csv",
            &[
                "variant",
                "switch",
                "interface",
                "port",
                "command",
                "column",
                "counter",
                "value",
            ],
        )
    }

    fn counters(&self) -> &HashMap<CounterKey, f64> {
        self.counters.get_or_init(|| {
            let mut r = self.csv("counters.csv", &["variant", "node", "port", "counter", "value"]);
            r.records()
                .map(|x| {
                    let x = x.unwrap();
                    (
                        (x[0].into(), x[1].into(), x[2].into(), x[3].into()),
                        x[4].parse().unwrap(),
                    )
                })
                .collect()
        })
    }

    /// A counter of counters.csv; it must be there.
    fn counter(&self, variant: &str, node: &str, port: &str, name: &str) -> f64 {
        let k = (variant.into(), node.into(), port.into(), name.into());
        *self.counters().get(&k).unwrap_or_else(|| {
            panic!(
                "{}: counters.csv has no {name} for {variant} {node} {port}",
                self.label
            )
        })
    }

    /// (node, port, value) of every counter `name` of a variant whose node and port match.
    fn counters_named(
        &self,
        variant: &str,
        name: &str,
        node: impl Fn(&str) -> bool,
        port: impl Fn(&str) -> bool,
    ) -> Vec<(String, String, f64)> {
        let mut v: Vec<_> = self
            .counters()
            .iter()
            .filter(|((va, n, p, c), _)| va == variant && c == name && node(n) && port(p))
            .map(|((_, n, p, _), x)| (n.clone(), p.clone(), *x))
            .collect();
        v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        v
    }

    fn flows(&self) -> &[Flow] {
        self.flows.get_or_init(|| {
            let mut r = csv::Reader::from_path(self.out.join("flows.csv")).unwrap();
            let h = r.headers().unwrap().clone();
            let col = |name: &str| {
                h.iter()
                    .position(|c| c == name)
                    .unwrap_or_else(|| panic!("flows.csv has no column {name}: {h:?}"))
            };
            let [
                variant,
                src,
                dst,
                size,
                start,
                finish,
                fct,
                ideal,
                slowdown,
                status,
            ] = [
                "variant",
                "src",
                "dst",
                "size_bytes",
                "start_ns",
                "finish_ns",
                "fct_ns",
                "ideal_fct_ns",
                "slowdown",
                "status",
            ]
            .map(col);
            let opt = |s: &str| (!s.is_empty()).then(|| s.parse::<f64>().unwrap());
            r.records()
                .map(|x| {
                    let x = x.unwrap();
                    Flow {
                        variant: x[variant].into(),
                        src: x[src].into(),
                        dst: x[dst].into(),
                        size: x[size].parse().unwrap(),
                        start_ns: x[start].parse().unwrap(),
                        finish_ns: opt(&x[finish]),
                        fct_ns: opt(&x[fct]),
                        ideal_ns: x[ideal].parse().unwrap(),
                        slowdown: opt(&x[slowdown]),
                        status: x[status].into(),
                    }
                })
                .collect()
        })
    }

    fn flows_of(&self, variant: &str) -> Vec<&Flow> {
        let f: Vec<_> = self.flows().iter().filter(|f| f.variant == variant).collect();
        assert!(!f.is_empty(), "{}: no flows of {variant}", self.label);
        f
    }

    /// A variant's series `series` at `key` on the sampling grid (the times of the fabric-wide
    /// `delivered_bytes` rows), as (time ns, value); 0 where timeseries.csv has no row (it
    /// writes per-port rows only where non-zero).
    fn series(&self, variant: &str, series: &str, key: &str) -> Vec<(f64, f64)> {
        let mut r = self.csv(
            "timeseries.csv",
            &["variant", "time_ns", "series", "key", "value"],
        );
        let mut grid = Vec::new();
        let mut at = HashMap::new();
        for x in r.records() {
            let x = x.unwrap();
            if &x[0] != variant {
                continue;
            }
            let t: f64 = x[1].parse().unwrap();
            if &x[2] == "delivered_bytes" && &x[3] == "fabric" {
                grid.push(t);
            }
            if &x[2] == series && &x[3] == key {
                at.insert(t.to_bits(), x[4].parse::<f64>().unwrap());
            }
        }
        assert!(
            !at.is_empty(),
            "{}: {variant} has no {series} {key} in timeseries.csv",
            self.label
        );
        grid.iter()
            .map(|t| (*t, at.get(&t.to_bits()).copied().unwrap_or(0.0)))
            .collect()
    }

    /// `got` within `tol` (relative) of the comment's `want`.
    fn about(&self, claim: &str, got: f64, want: f64, tol: f64) {
        assert!(
            (got - want).abs() <= tol * want.abs(),
            "{}: {claim}: the run shows {got}, the comment says about {want} (tolerance {} %)",
            self.label,
            tol * 100.0
        );
    }

    fn check(&self, ok: bool, claim: &str, shows: impl std::fmt::Display) {
        assert!(ok, "{}: {claim}: the run shows {shows}", self.label);
    }

    /// Exactly `want` (a count the scenario's point rests on).
    fn exactly(&self, claim: &str, got: f64, want: f64) {
        assert!(
            got == want,
            "{}: {claim}: the run shows {got}, the comment says {want}",
            self.label
        );
    }
}

fn median(mut x: Vec<f64>) -> f64 {
    assert!(!x.is_empty());
    x.sort_by(f64::total_cmp);
    let n = x.len();
    if n % 2 == 1 {
        x[n / 2]
    } else {
        (x[n / 2 - 1] + x[n / 2]) / 2.0
    }
}

fn max(x: impl IntoIterator<Item = f64>) -> f64 {
    x.into_iter().fold(f64::NEG_INFINITY, f64::max)
}

fn min(x: impl IntoIterator<Item = f64>) -> f64 {
    x.into_iter().fold(f64::INFINITY, f64::min)
}

/// Wire bytes of `size` B of RoCEv2 payload in packets of `mtu` B.
fn roce_wire(size: f64, mtu: f64) -> f64 {
    size + (size / mtu).ceil() * ROCE_OVERHEAD
}

/// ns to send `bytes` at `gbps`.
fn ns(bytes: f64, gbps: f64) -> f64 {
    bytes * 8.0 / gbps
}

mod cbfc;
mod control;
mod fabrics;
mod hardware;
mod pfc;
mod sonic;
mod uec;
