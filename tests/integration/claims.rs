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

#[test]
fn ai_cluster_cx7() {
    let r = run("ai-cluster-cx7", &[], 0);
    let (n, size, gbps) = (16.0, 64e6, 400.0);
    // "The ideal collective is 2(n-1)/n * S/B = 2.40 ms (2.45 ms in wire bytes) plus NCCL's
    // 8.4 us": to 0.5 %.
    let ideal = 2.0 * (n - 1.0) / n * ns(size, gbps);
    r.about("the ideal collective is 2.40 ms", ideal, 2.40 * MS, 0.005);
    let wire = ideal * (4096.0 + ROCE_OVERHEAD) / 4096.0;
    r.about("2.45 ms in wire bytes", wire, 2.45 * MS, 0.005);
    let floor = wire + 8.4 * US;
    for v in ["roce-pfc-dcqcn", "uec-reps-nscc"] {
        let j = r.job(v, "gradients");
        let f = |k: &str| j[k].as_f64().unwrap();
        let list = |k: &str| -> Vec<f64> {
            j[k].as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        r.exactly(&format!("{v}: four iterations"), f("iterations_completed"), 4.0);
        // busbw is algbw x 2(n-1)/n (nccl-tests), algbw the size over the collective's time.
        r.about(
            &format!("{v}: busbw = algbw x 2(n-1)/n"),
            f("busbw_gbps"),
            f("algbw_gbps") * 2.0 * (n - 1.0) / n,
            1e-9,
        );
        r.about(
            &format!("{v}: algbw = S / time"),
            f("algbw_gbps"),
            size * 8.0 / f("time_ns"),
            1e-6,
        );
        // Each step is compute (1 ms) + collective.
        for (step, it) in list("step_ns").iter().zip(list("iteration_ns")) {
            r.about(
                &format!("{v}: a step is 1 ms of compute + the collective"),
                step - it,
                MS,
                1e-6,
            );
            r.check(
                it >= floor * 0.999,
                &format!("{v}: no iteration beats the ideal {floor} ns"),
                it,
            );
        }
    }
    let roce = r.job("roce-pfc-dcqcn", "gradients");
    // "about 4.7 ms a collective": 5 %; "every iteration over 1.7 times the wire-byte ideal".
    r.about(
        "RoCEv2: about 4.7 ms a collective",
        roce["time_ns"].as_f64().unwrap(),
        4.7 * MS,
        0.05,
    );
    for it in roce["iteration_ns"].as_array().unwrap() {
        let it = it.as_f64().unwrap();
        r.check(
            it > 1.7 * floor,
            "RoCEv2: every iteration over 1.7 times the wire-byte ideal",
            format!("{it} ns against {floor} ns"),
        );
    }
    let uet = r.job("uec-reps-nscc", "gradients");
    // "UET ... stays within 10 % of that ideal (about 2.7 ms)": 5 % on the 2.7 ms.
    r.about(
        "UET: about 2.7 ms a collective",
        uet["time_ns"].as_f64().unwrap(),
        2.7 * MS,
        0.05,
    );
    for it in uet["iteration_ns"].as_array().unwrap() {
        let it = it.as_f64().unwrap();
        r.check(
            it <= 1.10 * floor,
            "UET: every iteration within 10 % of the wire-byte ideal",
            format!("{it} ns against {floor} ns"),
        );
    }
}

/// Flows between leaves of `per_leaf` hosts, and all flows, of a variant.
fn crossing(r: &Run, variant: &str, per_leaf: usize) -> (usize, usize) {
    let leaf = |h: &str| h[1..].parse::<usize>().unwrap() / per_leaf;
    let f = r.flows_of(variant);
    (f.iter().filter(|f| leaf(&f.src) != leaf(&f.dst)).count(), f.len())
}

#[test]
fn as7326_leaf_spine() {
    let v = "as7326-leaf-spine";
    let r = run(v, &[], 0);
    // "the ideal (4 MB / 25G = 1.28 ms, 1.31 ms in wire bytes)": 0.5 %.
    r.about("4 MB / 25G = 1.28 ms", ns(4e6, 25.0), 1.28 * MS, 0.005);
    let ideal = ns(roce_wire(4e6, 4096.0), 25.0);
    r.about("1.31 ms in wire bytes", ideal, 1.31 * MS, 0.005);
    // "With two leaves about half of a permutation crosses the spines": 40 to 60 %.
    let (cross, all) = crossing(&r, v, 48);
    let share = cross as f64 / all as f64;
    r.check(
        (0.4..=0.6).contains(&share),
        "about half of the permutation crosses the spines",
        format!("{cross} of {all}"),
    );
    // "the uplinks' tx_bytes are uneven (the busiest carries over twice what the least
    // busy does)".
    let up: Vec<f64> = r
        .counters_named(
            v,
            "tx_bytes",
            |n| n.starts_with("leaf"),
            |p| p.starts_with("to-spine"),
        )
        .iter()
        .map(|x| x.2)
        .collect();
    r.check(up.len() == 16, "two leaves of 8 uplinks", up.len());
    let (hi, lo) = (max(up.iter().copied()), min(up.iter().copied()));
    r.check(
        hi > 2.0 * lo,
        "the busiest uplink carries over twice the least busy's bytes",
        format!("{hi} against {lo}"),
    );
    // "the FCT p50 sits at the ideal": 3 %; "the p99 is about 1.4 times it": 0.1; "(about
    // 1.86 ms)": 5 %.
    r.about(
        "the FCT p50 sits at the ideal",
        r.num(v, "fct_ns.p50"),
        ideal,
        0.03,
    );
    let p99 = r.num(v, "fct_ns.p99");
    r.about(
        "the p99 is about 1.4 times the ideal",
        p99 / ideal,
        1.4,
        0.1 / 1.4,
    );
    r.about("the p99 is about 1.86 ms", p99, 1.86 * MS, 0.05);
    // "DCQCN keeps the 32 MB buffer short of PFC: no pause."
    r.exactly("no pause", r.num(v, "pfc_pause_frames"), 0.0);

    // "With more leaves (--set topology.leaves=4) about three quarters of the traffic
    // crosses the spines [65 to 85 %] and the tail grows to about 4 times the ideal [10 %]
    // (FCT p99 about 5.3 ms [5 %]), still without a pause."
    let r = run(v, &["--set", "topology.leaves=4"], 0);
    let (cross, all) = crossing(&r, v, 48);
    let share = cross as f64 / all as f64;
    r.check(
        (0.65..=0.85).contains(&share),
        "about three quarters of the traffic crosses the spines",
        format!("{cross} of {all}"),
    );
    let p99 = r.num(v, "fct_ns.p99");
    r.about("the tail grows to about 4 times the ideal", p99 / ideal, 4.0, 0.1);
    r.about("FCT p99 about 5.3 ms", p99, 5.3 * MS, 0.05);
    r.exactly("still without a pause", r.num(v, "pfc_pause_frames"), 0.0);
}

#[test]
fn as7726_spine() {
    let r = run("as7726-spine", &[], 0);
    // "every port is both a sender and a receiver of 31 flows".
    for v in ["roce-pfc-dcqcn", "uec-nscc"] {
        let f = r.flows_of(v);
        r.exactly(&format!("{v}: 32 x 31 flows"), f.len() as f64, 992.0);
        for h in 0..32 {
            let h = format!("h{h}");
            let sent = f.iter().filter(|f| f.src == h).count();
            let got = f.iter().filter(|f| f.dst == h).count();
            r.check(
                sent == 31 && got == 31,
                &format!("{v}: {h} sends and receives 31 flows"),
                format!("{sent} sent, {got} received"),
            );
        }
    }
    // "31 x 256 KB at 100 Gb/s = 635 us (648 us in wire bytes)": 0.5 %.
    r.about(
        "31 x 256 KB at 100 Gb/s = 635 us",
        31.0 * ns(256e3, 100.0),
        635.0 * US,
        0.005,
    );
    let exchange = 31.0 * ns(roce_wire(256e3, 4096.0), 100.0);
    r.about("648 us in wire bytes", exchange, 648.0 * US, 0.005);
    for v in ["roce-pfc-dcqcn", "uec-nscc"] {
        // "each flow takes about as long as the whole exchange": the median, 5 %.
        r.about(
            &format!("{v}: a flow takes about as long as the whole exchange (p50)"),
            r.num(v, "fct_ns.p50"),
            exchange,
            0.05,
        );
        // "The congested egress queues stay at a few hundred KB (peak_queue_bytes of sw0's
        // ports, under 1 MB)".
        let peak = max(r
            .counters_named(v, "peak_queue_bytes", |n| n == "sw0", |_| true)
            .iter()
            .map(|x| x.2));
        r.check(
            (100e3..1e6).contains(&peak),
            &format!("{v}: sw0's queues peak at a few hundred KB, under 1 MB"),
            peak,
        );
    }
    r.exactly(
        "RoCEv2 never pauses",
        r.num("roce-pfc-dcqcn", "pfc_pause_frames"),
        0.0,
    );
    // "UET's NSCC keeps the completion times tight (p50 about 0.67 ms [5 %], p99 within 5 %
    // of it, about a dozen trims [6 to 18])".
    let p50 = r.num("uec-nscc", "fct_ns.p50");
    r.about("UET: p50 about 0.67 ms", p50, 0.67 * MS, 0.05);
    let p99 = r.num("uec-nscc", "fct_ns.p99");
    r.check(
        p99 <= 1.05 * p50,
        "UET: p99 within 5 % of p50",
        format!("{p99} against {p50}"),
    );
    let trims = r.num("uec-nscc", "trimmed");
    r.check((6.0..=18.0).contains(&trims), "UET: about a dozen trims", trims);
    // "RoCEv2's DCQCN spreads them (p99 about 1.4 times the p50 [0.1], the last flow at about
    // 0.95 ms [5 %])".
    let v = "roce-pfc-dcqcn";
    r.about(
        "RoCEv2: p99 about 1.4 times the p50",
        r.num(v, "fct_ns.p99") / r.num(v, "fct_ns.p50"),
        1.4,
        0.1 / 1.4,
    );
    r.about(
        "RoCEv2: the last flow at about 0.95 ms",
        r.num(v, "fct_ns.max"),
        0.95 * MS,
        0.05,
    );
}

#[test]
fn campus_crs504() {
    let r = run("campus-crs504", &[], 0);
    // "The campus profile reserves 8 KB of headroom per port, far less than the ~67 KB that
    // 100 m at 100G needs": as the run's headroom-short warning computes them (5 %).
    let warning = r
        .stderr
        .lines()
        .find(|l| l.contains("of headroom per lossless class where the cable can deliver"))
        .unwrap_or_else(|| panic!("{}: no headroom-short warning: {}", r.label, r.stderr));
    let bytes_after = |what: &str| -> f64 {
        let rest = &warning[warning.find(what).unwrap() + what.len()..];
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    r.about("8 KB of headroom per port", bytes_after("hold "), 8e3, 0.05);
    r.about(
        "100 m at 100G needs ~67 KB",
        bytes_after("can deliver "),
        67e3,
        0.05,
    );
    let short = "campus-headroom";
    // "frames already on the wire when XOFF goes out overflow it (thousands of
    // drop_headroom_exceeded in counters.csv: lossless in name only), go-back-N resends them".
    let drops = r.num(short, "drops_by_reason.headroom_exceeded");
    r.check(drops >= 1000.0, "thousands of headroom drops", drops);
    r.exactly("every drop is a headroom drop", r.num(short, "drops"), drops);
    let counted: f64 = r
        .counters_named(short, "drop_headroom_exceeded", |n| n == "sw0", |_| true)
        .iter()
        .map(|x| x.2)
        .sum();
    r.exactly(
        "drop_headroom_exceeded in counters.csv counts them",
        counted,
        drops,
    );
    let resent = r.num(short, "retransmitted_packets");
    r.check(resent >= drops, "go-back-N resends them", resent);
    // "the 4 MB take about 7.6 ms instead of 1 ms": 5 %.
    r.about(
        "the 4 MB take about 7.6 ms",
        r.num(short, "fct_ns.max"),
        7.6 * MS,
        0.05,
    );
    for h in ["h1", "h2", "h3"] {
        let fct = r.flows_of(short).iter().find(|f| f.src == h).unwrap().fct();
        let paused = r.counter(short, h, "to-sw0", "rx_prio3_pause_duration") * US;
        let pauses = r.counter(short, h, "to-sw0", "rx_prio3_pause");
        // "with the senders paused for over half of it (rx_prio3_pause_duration)".
        r.check(
            paused > 0.5 * fct,
            &format!("{h} is paused for over half of its flow"),
            format!("{paused} ns paused of {fct} ns"),
        );
        // "The pauses come and go every few microseconds": under 10 us each on average.
        r.check(
            paused / pauses < 10.0 * US,
            &format!("{h}'s pauses last a few microseconds"),
            format!("{pauses} pauses over {paused} ns"),
        );
    }
    // "none near the 50 us watchdog set here, so tx_pause_storm_warning_events stays 0".
    for v in [short, "computed-headroom"] {
        r.exactly(&format!("{v}: no storm"), r.num(v, "pfc_storms"), 0.0);
        let storms = r.counters_named(v, "tx_pause_storm_warning_events", |_| true, |_| true);
        r.check(
            !storms.is_empty(),
            "tx_pause_storm_warning_events is counted",
            "none",
        );
        for (n, p, x) in storms {
            r.exactly(
                &format!("{v}: {n} {p} tx_pause_storm_warning_events stays 0"),
                x,
                0.0,
            );
        }
    }
    // "The second variant gives the same switch enough headroom for the cable: no drops, and
    // the 12 MB arrive at line rate (about 0.98 ms)": line rate to 2 %, 0.98 ms to 3 %.
    let v = "computed-headroom";
    r.exactly("enough headroom: no drops", r.num(v, "drops"), 0.0);
    let last = r.num(v, "fct_ns.max");
    r.about(
        "the 12 MB arrive at line rate",
        last,
        3.0 * ns(roce_wire(4e6, 4096.0), 100.0),
        0.02,
    );
    r.about("the 12 MB arrive in about 0.98 ms", last, 0.98 * MS, 0.03);
}

#[test]
fn cc_compare() {
    let r = run("cc-compare", &[], 0);
    let peak = |v: &str| r.counter(v, "leaf1", "to-h15", "peak_queue_bytes");
    // dcqcn: "The incast fills leaf1's port to h15 (over a megabyte) until the CNPs cut the
    // senders, and PFC pauses (a few hundred frames) spread it to the spines' queues."
    let v = "dcqcn";
    r.check(
        peak(v) > 1e6,
        "DCQCN: leaf1's port to h15 holds over a megabyte",
        peak(v),
    );
    r.check(
        r.num(v, "cnps") > 0.0,
        "DCQCN: the CNPs cut the senders",
        r.num(v, "cnps"),
    );
    let pauses = r.num(v, "pfc_pause_frames");
    r.check(
        (100.0..1000.0).contains(&pauses),
        "DCQCN: a few hundred PFC frames",
        pauses,
    );
    let spines = r.counters_named(
        v,
        "rx_prio3_pause",
        |n| n.starts_with("spine"),
        |p| p == "to-leaf1",
    );
    r.check(
        spines.iter().any(|x| x.2 > 0.0),
        "DCQCN: leaf1 pauses the spines",
        format!("{spines:?}"),
    );
    let spine_q = max(r
        .counters_named(
            v,
            "peak_queue_bytes",
            |n| n.starts_with("spine"),
            |p| p == "to-leaf1",
        )
        .iter()
        .map(|x| x.2));
    r.check(
        spine_q > 100e3,
        "DCQCN: the spines' queues to leaf1 fill",
        spine_q,
    );
    // hpcc: "The incast port's queue peaks at about 130 KB [15 %] (the first round trip's
    // burst, a tenth of DCQCN's [under 15 %]) and no pause is sent."
    r.about(
        "HPCC: the incast port's queue peaks at about 130 KB",
        peak("hpcc"),
        130e3,
        0.15,
    );
    r.check(
        peak("hpcc") < 0.15 * peak("dcqcn"),
        "HPCC: a tenth of DCQCN's queue",
        format!("{} against {}", peak("hpcc"), peak("dcqcn")),
    );
    r.exactly("HPCC: no pause", r.num("hpcc", "pfc_pause_frames"), 0.0);
    // swift: "no ECN. It keeps a standing queue at its target, a few hundred KB at the incast
    // port".
    r.exactly("Swift: no ECN", r.num("swift", "ecn_marked"), 0.0);
    r.check(
        (100e3..1e6).contains(&peak("swift")),
        "Swift: a few hundred KB at the incast port",
        peak("swift"),
    );
    r.exactly("Swift: no pause", r.num("swift", "pfc_pause_frames"), 0.0);
    // nscc: "no PFC: a few dozen trims [24 to 60], each resent on its NACK".
    let v = "nscc";
    let trims = r.num(v, "trimmed");
    r.check((24.0..60.0).contains(&trims), "NSCC: a few dozen trims", trims);
    r.exactly("NSCC: a NACK for each trim", r.num(v, "nacks"), trims);
    r.exactly("NSCC: each trim resent", r.num(v, "retransmitted_packets"), trims);
    r.exactly("NSCC: no timeout", r.num(v, "rtos"), 0.0);
    r.exactly("NSCC: no PFC", r.num(v, "pfc_pause_frames"), 0.0);
    // "The 6.1 MB for h15 (the incast and h5's permutation flow) take 0.49 ms at line rate
    // [1 %]; the last of them arrives at about 1.0 ms under DCQCN, 0.67 ms HPCC, 0.55 ms Swift
    // and 0.54 ms NSCC [5 % each]."
    for (v, want) in [("dcqcn", 1.0), ("hpcc", 0.67), ("swift", 0.55), ("nscc", 0.54)] {
        let to15: Vec<&Flow> = r.flows_of(v).into_iter().filter(|f| f.dst == "h15").collect();
        let bytes: f64 = to15.iter().map(|f| f.size).sum();
        r.about(&format!("{v}: 6.1 MB for h15"), bytes, 6.1e6, 0.01);
        r.about(
            "they take 0.49 ms at line rate",
            ns(bytes, 100.0),
            0.49 * MS,
            0.01,
        );
        r.about(
            &format!("{v}: the last of h15's bytes arrives at about {want} ms"),
            max(to15.iter().map(|f| f.finish())),
            want * MS,
            0.05,
        );
    }
}

#[test]
fn dac_2node() {
    let r = run("dac-2node", &[], 0);
    // mtu-4096: "its serialization time (payload + 82 B per 4096 B packet at 100 Gb/s) plus
    // 15 ns of cable, plus the ACKs of the reverse flow sharing the wire: about 83 us";
    // mtu-1024: "about 93 us, 11 % more". The sum to 1 %, the rounded times to 2 %.
    let mut fct = HashMap::new();
    for (v, mtu, want) in [("mtu-4096", 4096.0, 83.0), ("mtu-1024", 1024.0, 93.0)] {
        for (src, dst) in [("h0", "h1"), ("h1", "h0")] {
            // The ACKs on this flow's wire are the ones its sender sends for the other flow.
            let acks = r.counter(v, src, "nic", "acks_sent");
            let expect = ns(roce_wire(1e6, mtu), 100.0) + 15.0 + ns(acks * ROCE_ACK_WIRE, 100.0);
            let f = r.flows_of(v).into_iter().find(|f| f.src == src).unwrap();
            r.about(
                &format!("{v}: {src} -> {dst} takes serialization + cable + the reverse ACKs"),
                f.fct(),
                expect,
                0.01,
            );
            r.about(&format!("{v}: about {want} us"), f.fct(), want * US, 0.02);
        }
        r.exactly(&format!("{v}: no drops"), r.num(v, "drops"), 0.0);
        fct.insert(v, r.num(v, "fct_ns.max"));
    }
    r.about(
        "MTU 1024 costs 11 % more",
        fct["mtu-1024"] / fct["mtu-4096"],
        1.11,
        0.01,
    );
    // slow-host-pfc: "the NICs pause each other (tx_prio3_pause / rx_prio3_pause on the h0 and
    // h1 ports): no loss, half rate" (twice the mtu-4096 time, 5 %).
    let v = "slow-host-pfc";
    for (h, p) in [("h0", "to-h1"), ("h1", "to-h0")] {
        for c in ["tx_prio3_pause", "rx_prio3_pause"] {
            r.check(r.counter(v, h, p, c) > 0.0, &format!("{v}: {h} {c}"), 0);
        }
    }
    r.exactly("slow-host-pfc: no loss", r.num(v, "drops"), 0.0);
    r.about(
        "slow-host-pfc: half rate",
        r.num(v, "fct_ns.max") / fct["mtu-4096"],
        2.0,
        0.05,
    );
    // slow-host-lossy: "the NIC's buffer overflows (rx_prio3_discards), and go-back-N resends
    // (retransmitted_packets in summary.json)".
    let v = "slow-host-lossy";
    let discards =
        r.counter(v, "h0", "to-h1", "rx_prio3_discards") + r.counter(v, "h1", "to-h0", "rx_prio3_discards");
    r.check(discards > 0.0, "slow-host-lossy: rx_prio3_discards", discards);
    r.exactly(
        "slow-host-lossy: the drops are the NICs'",
        r.num(v, "drops_by_reason.nic_rx_full"),
        discards,
    );
    r.check(
        r.num(v, "retransmitted_packets") > 0.0,
        "slow-host-lossy: go-back-N resends",
        r.num(v, "retransmitted_packets"),
    );
    // dcqcn-ce: "every 20th: 12 of a flow's 245. Each mark makes the receiver send a CNP
    // (np_cnp_sent; 20 packets take at least 6.7 us, over ConnectX's 4 us minimum)".
    let v = "dcqcn-ce";
    r.about(
        "20 packets take 6.7 us at line rate",
        20.0 * ns(4096.0 + ROCE_OVERHEAD, 100.0),
        6.7 * US,
        0.01,
    );
    for (rx, tx) in [("h1", "h0"), ("h0", "h1")] {
        r.exactly(
            &format!("{v}: {tx} sends 245 packets"),
            r.counter(v, tx, "nic", "data_packets_sent"),
            245.0,
        );
        r.exactly(
            &format!("{v}: {rx} sees 12 marks"),
            r.counter(v, rx, "nic", "np_ecn_marked_roce_packets"),
            12.0,
        );
        r.exactly(
            &format!("{v}: a CNP for each mark"),
            r.counter(v, rx, "nic", "np_cnp_sent"),
            12.0,
        );
        r.exactly(
            &format!("{v}: {tx} handles each CNP"),
            r.counter(v, tx, "nic", "rp_cnp_handled"),
            12.0,
        );
    }
    // "each CNP cuts the sender's rate by alpha/2 (the first to about half [10 %]), and the
    // byte counter and timer bring it back between cuts".
    let rate = r.series(v, "flow_rate_limit_bps", "flow 0");
    let line = rate[0].1;
    let first = rate.iter().find(|x| x.1 < 0.99 * line).unwrap().1;
    r.about(
        "the first CNP cuts the rate to about half",
        first / line,
        0.5,
        0.1,
    );
    r.check(
        rate.windows(2).any(|w| w[1].1 > w[0].1 && w[0].1 < line),
        "the rate comes back between cuts",
        format!("{rate:?}"),
    );
    // "each 1 MB takes about 190 us": 5 %.
    for f in r.flows_of(v) {
        r.about(
            "dcqcn-ce: each 1 MB takes about 190 us",
            f.fct(),
            190.0 * US,
            0.05,
        );
    }
}

#[test]
fn dgx_spark_2node() {
    let r = run("dgx-spark-2node", &[], 0);
    // roce-both-halves: "the two finish together at 2 x 8 MB x 1106/1024 x 8 / 200 Gb/s,
    // 185.2 Gb/s of payload": the formula to 0.05 Gb/s, the run to 0.5 %.
    let t = ns(2.0 * 8e6 * 1106.0 / 1024.0, 200.0);
    let gbps = 2.0 * 8e6 * 8.0 / t;
    r.about("185.2 Gb/s of payload", gbps, 185.2, 0.05 / 185.2);
    for f in r.flows_of("roce-both-halves") {
        r.about(
            "both halves: each 8 MB finishes at the wire's time",
            f.fct(),
            t,
            0.005,
        );
    }
    r.about(
        "both halves: 185.2 Gb/s",
        r.num("roce-both-halves", "goodput_gbps"),
        185.2,
        0.005,
    );
    // "The playbook reports 189.85 Gb/s, 2.5 % above": to 0.2 %.
    r.about(
        "189.85 Gb/s is 2.5 % above",
        189.85 / 185.2 - 1.0,
        0.025,
        0.002 / 0.025,
    );
    // roce-one-half: "its NIC pauses the sender with PFC, and the pair gets half: 92.6 Gb/s".
    let v = "roce-one-half";
    r.check(
        r.num(v, "pfc_pause_frames") > 0.0,
        "one half: the NIC pauses the sender",
        0,
    );
    r.about("one half: 92.6 Gb/s", r.num(v, "goodput_gbps"), 92.6, 0.005);
    // roce-jumbo: "196.1 Gb/s".
    r.about(
        "jumbo: 196.1 Gb/s",
        r.num("roce-jumbo", "goodput_gbps"),
        196.1,
        0.005,
    );
    // "UET ... lossy (no PFC): about 179 and 89 Gb/s, without a drop": 1.5 %.
    for (v, want) in [("uec-both-halves", 179.0), ("uec-one-half", 89.0)] {
        r.about(
            &format!("{v}: about {want} Gb/s"),
            r.num(v, "goodput_gbps"),
            want,
            0.015,
        );
        r.exactly(&format!("{v}: no drop"), r.num(v, "drops"), 0.0);
        r.exactly(&format!("{v}: no PFC"), r.num(v, "pfc_pause_frames"), 0.0);
    }
    // "with no switch nothing marks ECN, so it [DCQCN] never acts here".
    for v in ["roce-both-halves", "roce-one-half", "roce-jumbo"] {
        r.exactly(&format!("{v}: nothing marks ECN"), r.num(v, "ecn_marked"), 0.0);
        r.exactly(&format!("{v}: DCQCN never acts"), r.num(v, "cnps"), 0.0);
    }
}

#[test]
fn ecn_leaf_spine() {
    let r = run("ecn-leaf-spine", &[], 0);
    for v in ["roce", "uec-nscc"] {
        r.exactly(
            &format!("{v}: every flow completes"),
            r.num(v, "flows_completed"),
            r.num(v, "flows_total"),
        );
    }
    // "one ECN ramp for both, so a sweep over `switch.ecn.kmin` moves both at once": a kmin
    // set on the command line changes both variants' marking.
    let k = run("ecn-leaf-spine", &["--set", "switch.ecn.kmin=\"50KB\""], 0);
    for v in ["roce", "uec-nscc"] {
        let (a, b) = (r.num(v, "ecn_marked"), k.num(v, "ecn_marked"));
        k.check(
            a != b,
            &format!("{v}: switch.ecn.kmin moves its marking"),
            format!("{a} marks both ways"),
        );
    }
    // "Each seed draws another random permutation (and so other ECMP collisions for RoCE)."
    let s = run("ecn-leaf-spine", &["--seed", "2"], 0);
    let pairs = |r: &Run| -> Vec<(String, String)> {
        r.flows_of("roce")
            .iter()
            .map(|f| (f.src.clone(), f.dst.clone()))
            .collect()
    };
    s.check(
        pairs(&r) != pairs(&s),
        "each seed draws another permutation",
        "the same pairs",
    );
}

#[test]
fn fat_tree_k4() {
    let v = "fat-tree-k4";
    let r = run(v, &[], 0);
    let f = r.flows_of(v);
    // "the ideal 2 MB/100 Gb/s (171 us with headers and six 1 us links)": the serialization
    // and the links to 2 % (the switches' latency aside), flows.csv's ideal for a cross-pod
    // flow to 1 %.
    let wire = ns(roce_wire(2e6, 4096.0), 100.0) + 6.0 * US;
    r.about(
        "2 MB at 100 Gb/s with headers and six 1 us links",
        wire,
        171.0 * US,
        0.02,
    );
    let ideal = max(f.iter().map(|f| f.ideal_ns));
    r.about("the ideal is 171 us", ideal, 171.0 * US, 0.01);
    // "the few flows whose hashes collide with no other do [within 5 % of the ideal], but
    // most share an uplink ... and take about twice that [at least 1.8 times]".
    let alone = f.iter().filter(|f| f.slowdown() <= 1.05).count();
    let shared = f.iter().filter(|f| f.slowdown() >= 1.8).count();
    r.check(
        (1..=f.len() / 4).contains(&alone),
        "a few flows finish at the ideal",
        alone,
    );
    r.check(
        shared > f.len() / 2,
        "most flows take about twice the ideal",
        shared,
    );
    // "(the busiest uplinks carry two flows' bytes: tx_bytes in counters.csv)": 2 %.
    let busiest = max(r
        .counters_named(v, "tx_bytes", |n| !n.starts_with('h'), |p| !p.starts_with("to-h"))
        .iter()
        .map(|x| x.2));
    r.about(
        "the busiest uplinks carry two flows' bytes",
        busiest,
        2.0 * roce_wire(2e6, 4096.0),
        0.02,
    );
    // "(FCT p50 about 330 us)": 5 %.
    r.about("FCT p50 about 330 us", r.num(v, "fct_ns.p50"), 330.0 * US, 0.05);
}

#[test]
fn fat_tree_k8() {
    let r = run("fat-tree-k8", &[], 0);
    // "per-flow ECMP collisions and PFC for RoCEv2 (thousands of pause frames, slowdown p99
    // about 7.5 [10 %]: FCT p99 about 1.3 ms [5 %])".
    let v = "roce-pfc-dcqcn";
    let pauses = r.num(v, "pfc_pause_frames");
    r.check(pauses >= 1000.0, "RoCEv2: thousands of pause frames", pauses);
    r.about(
        "RoCEv2: slowdown p99 about 7.5",
        r.num(v, "slowdown.p99"),
        7.5,
        0.1,
    );
    r.about(
        "RoCEv2: FCT p99 about 1.3 ms",
        r.num(v, "fct_ns.p99"),
        1.3 * MS,
        0.05,
    );
    // "spraying, trimming and NSCC for UET (about a hundred trims [50 to 200], no pause,
    // slowdown p99 about 1.2 [5 %]: FCT p99 about 0.21 ms [5 %])".
    let v = "uec-oblivious-nscc";
    let trims = r.num(v, "trimmed");
    r.check(
        (50.0..=200.0).contains(&trims),
        "UET: about a hundred trims",
        trims,
    );
    r.exactly("UET: no pause", r.num(v, "pfc_pause_frames"), 0.0);
    r.about("UET: slowdown p99 about 1.2", r.num(v, "slowdown.p99"), 1.2, 0.05);
    r.about(
        "UET: FCT p99 about 0.21 ms",
        r.num(v, "fct_ns.p99"),
        0.21 * MS,
        0.05,
    );
}

#[test]
fn homelab_mixed() {
    let r = run("homelab-mixed", &[], 0);
    let nas = |v: &str| -> Vec<f64> {
        let f: Vec<f64> = r
            .flows_of(v)
            .iter()
            .filter(|f| f.dst == "nas")
            .map(|f| f.finish())
            .collect();
        assert_eq!(f.len(), 5, "{}: {v}: five flows into the NAS", r.label);
        f
    };
    // roce-pfc: "the Spectrum-2 spine's deep buffer takes the excess (its queue to the NAS
    // peaks near 4 MB [10 %]) without a pause".
    let v = "roce-pfc";
    r.about(
        "PFC alone: the spine's queue to the NAS peaks near 4 MB",
        r.counter(v, "spine", "to-nas", "peak_queue_bytes"),
        4e6,
        0.1,
    );
    // "the only pauses, a few [under 30], are leaf1's to lab0".
    for (n, p, x) in r.counters_named(v, "tx_prio3_pause", |_| true, |_| true) {
        let lab0 = n == "leaf1" && p == "to-lab0";
        r.check(
            lab0 == (x > 0.0),
            &format!("PFC alone: the only pauses are leaf1's to lab0 ({n} {p})"),
            x,
        );
    }
    let pauses = r.num(v, "pfc_pause_frames");
    r.check((1.0..30.0).contains(&pauses), "PFC alone: a few pauses", pauses);
    // "whose line-rate flow shares lab1's port with the NAS's ACKs": lab0 -> lab1 within 5 %
    // of its ideal.
    let lab = r.flows_of(v).into_iter().find(|f| f.src == "lab0").unwrap();
    r.check(
        lab.slowdown() <= 1.05,
        "PFC alone: lab0 -> lab1 runs at line rate",
        lab.slowdown(),
    );
    // "the five flows into the NAS share the port losslessly, finishing together [within 1 %]
    // at about 1.63 ms [3 %] (20 MB at 100G: 1.6 ms)".
    r.about("20 MB at 100G: 1.6 ms", ns(20e6, 100.0), 1.6 * MS, 0.001);
    r.exactly("PFC alone: lossless", r.num(v, "drops"), 0.0);
    let f = nas(v);
    let (first, last) = (min(f.iter().copied()), max(f.iter().copied()));
    r.check(
        last - first < 0.01 * last,
        "PFC alone: the NAS flows finish together",
        format!("{first} to {last}"),
    );
    r.about("PFC alone: they finish at about 1.63 ms", last, 1.63 * MS, 0.03);
    // roce-dcqcn: "keeps that queue short (about 120 KB [15 %]) but spreads their finish times
    // (about 1.55 to 1.88 ms [3 %])", no pause.
    let v = "roce-dcqcn";
    r.exactly("DCQCN: no pause", r.num(v, "pfc_pause_frames"), 0.0);
    r.about(
        "DCQCN: the spine's queue to the NAS about 120 KB",
        r.counter(v, "spine", "to-nas", "peak_queue_bytes"),
        120e3,
        0.15,
    );
    let f = nas(v);
    r.about(
        "DCQCN: the first NAS flow finishes at about 1.55 ms",
        min(f.iter().copied()),
        1.55 * MS,
        0.03,
    );
    r.about(
        "DCQCN: the last NAS flow finishes at about 1.88 ms",
        max(f.iter().copied()),
        1.88 * MS,
        0.03,
    );
    // uec-nscc: "needs neither: no pause, drop or trim".
    let v = "uec-nscc";
    for k in ["pfc_pause_frames", "drops", "trimmed"] {
        r.exactly(&format!("UET: no {k}"), r.num(v, k), 0.0);
    }
    // "lab0-p2 -> lab1-p2 runs at 100G over the DAC, beside it all, at its ideal": 1 %.
    for v in ["roce-pfc", "roce-dcqcn", "uec-nscc"] {
        let dac = r.flows_of(v).into_iter().find(|f| f.src == "lab0-p2").unwrap();
        r.about(
            &format!("{v}: the DAC flow at its ideal"),
            dac.slowdown(),
            1.0,
            0.01,
        );
    }
}

/// Of the permutation's flows (1 MB) to hosts other than h47: the median FCT, and the slowest
/// one's FCT and ideal.
fn leaf_spine_others(r: &Run, v: &str) -> (f64, f64, f64) {
    let f: Vec<&Flow> = r
        .flows_of(v)
        .into_iter()
        .filter(|f| f.size == 1e6 && f.dst != "h47")
        .collect();
    assert!(f.len() >= 40, "{}: {v}: {} permutation flows", r.label, f.len());
    let slowest = f.iter().max_by(|a, b| a.fct().total_cmp(&b.fct())).unwrap();
    (
        median(f.iter().map(|f| f.fct()).collect()),
        slowest.fct(),
        slowest.ideal_ns,
    )
}

#[test]
fn leaf_spine() {
    let r = run("leaf-spine", &[], 0);
    // The same run without the incast: it starts long after the permutation is done.
    let alone = run("leaf-spine", &["--set", "workload[1].start=\"50ms\""], 0);
    // roce: "leaf3 pauses the spines, the spines pause the leaves, the leaves pause their
    // hosts (pause_graph.png: about 1500 PFC frames [5 %])".
    let v = "roce";
    r.about(
        "RoCEv2: about 1500 PFC frames",
        r.num(v, "pfc_pause_frames"),
        1500.0,
        0.05,
    );
    for (who, node, port) in [
        ("leaf3 pauses the spines", "leaf3", "to-spine"),
        ("the spines pause the leaves", "spine", "to-leaf"),
        ("the leaves pause their hosts", "leaf", "to-h"),
    ] {
        let sent: f64 = r
            .counters_named(
                v,
                "tx_prio3_pause",
                |n| n.starts_with(node),
                |p| p.starts_with(port),
            )
            .iter()
            .map(|x| x.2)
            .sum();
        r.check(sent > 0.0, &format!("RoCEv2: {who}"), sent);
    }
    // "permutation flows to hosts other than h47 wait behind the pauses (their FCT p50 rises
    // by a fifth over a run without the incast [1.15 to 1.25]; the slowest takes about 2 ms
    // [10 %] against an ideal of 0.33 ms [3 %])".
    let (with, slowest, ideal) = leaf_spine_others(&r, v);
    let (without, ..) = leaf_spine_others(&alone, v);
    r.about(
        "RoCEv2: the others' FCT p50 rises by a fifth",
        with / without,
        1.2,
        0.05 / 1.2,
    );
    r.about("RoCEv2: the slowest takes about 2 ms", slowest, 2.0 * MS, 0.1);
    r.about("RoCEv2: against an ideal of 0.33 ms", ideal, 0.33 * MS, 0.03);
    // "ECMP loads some uplinks double (ecmp_balance.png)": a leaf's one uplink carries twice
    // its other's.
    let up = |v: &str, leaf: usize| -> Vec<f64> {
        (0..2)
            .map(|s| r.counter(v, &format!("leaf{leaf}"), &format!("to-spine{s}"), "tx_bytes"))
            .collect()
    };
    r.check(
        (0..4).any(|l| {
            let u = up(v, l);
            max(u.clone()) >= 2.0 * min(u)
        }),
        "RoCEv2: ECMP loads some uplinks double",
        format!("{:?}", (0..4).map(|l| up(v, l)).collect::<Vec<_>>()),
    );
    // uec-nscc: "The incast's first windows are trimmed at leaf3 (about 15 trims [10 to 20],
    // each resent at once on its NACK) and the other flows do not wait: their FCT p50 stays
    // where it is without the incast [3 %]. Spraying loads every uplink about evenly (a
    // leaf's two within a fifth of each other)."
    let v = "uec-nscc";
    let at_leaf3 = r.counter(v, "leaf3", "to-h47", "trimmed");
    r.check(
        (10.0..=20.0).contains(&at_leaf3),
        "UET: about 15 trims at leaf3",
        at_leaf3,
    );
    let trims = r.num(v, "trimmed");
    r.exactly("UET: a NACK for each trim", r.num(v, "nacks"), trims);
    r.exactly("UET: each trim resent", r.num(v, "retransmitted_packets"), trims);
    r.exactly("UET: at once: no timeout", r.num(v, "rtos"), 0.0);
    let (with, ..) = leaf_spine_others(&r, v);
    let (without, ..) = leaf_spine_others(&alone, v);
    r.about(
        "UET: the others' FCT p50 stays where it is",
        with / without,
        1.0,
        0.03,
    );
    for l in 0..4 {
        let u = up(v, l);
        r.check(
            min(u.clone()) > 0.0 && max(u.clone()) <= 1.2 * min(u.clone()),
            &format!("UET: spraying loads leaf{l}'s uplinks about evenly"),
            format!("{u:?}"),
        );
    }
}

#[test]
fn link_failure() {
    let r = run("link-failure", &[], 0);
    // "what is on the cable or queued for it is lost (drops_by_reason.link_down); for 100 us
    // ... the switches at both ends keep hashing onto the dead port, and the losses stop at
    // 250 us" [150 us to 251 us].
    let mut ev = r.csv(
        "events.csv",
        &["variant", "time_ns", "node", "port", "prio", "flow", "event"],
    );
    let drops: Vec<(String, f64, String)> = ev
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[6] == "drop")
        .map(|x| {
            (
                x[0].to_string(),
                x[1].parse().unwrap(),
                format!("{} {}", &x[2], &x[3]),
            )
        })
        .collect();
    for v in ["roce", "uec"] {
        let d = r.num(v, "drops");
        r.check(d > 0.0, &format!("{v}: frames are lost"), d);
        r.exactly(
            &format!("{v}: every loss is link_down"),
            r.num(v, "drops_by_reason.link_down"),
            d,
        );
        let mine: Vec<_> = drops.iter().filter(|x| x.0 == v).collect();
        r.exactly(&format!("{v}: events.csv lists each drop"), mine.len() as f64, d);
        let (first, last) = (min(mine.iter().map(|x| x.1)), max(mine.iter().map(|x| x.1)));
        r.check(
            first >= 150.0 * US && last <= 251.0 * US,
            &format!("{v}: losses from the cut at 150 us until routing converges at 250 us"),
            format!("{first} to {last} ns"),
        );
        for end in ["leaf0 to-spine1", "spine1 to-leaf0"] {
            r.check(
                mine.iter().any(|x| x.2 == end),
                &format!("{v}: {end} keeps sending onto the dead cable"),
                "none",
            );
        }
        // "Every flow still completes."
        r.exactly(
            &format!("{v}: every flow completes"),
            r.num(v, "flows_completed"),
            r.num(v, "flows_total"),
        );
    }
    // "RoCEv2 recovers by go-back-N: the receiver NAKs ... and the sender resends everything
    // from there (over twice as many packets as were lost); its retransmission timer never has
    // to fire."
    let v = "roce";
    r.check(r.num(v, "nacks") > 0.0, "RoCEv2: the receivers NAK", 0);
    let (resent, lost) = (r.num(v, "retransmitted_packets"), r.num(v, "drops"));
    r.check(
        resent > 2.0 * lost,
        "RoCEv2: over twice as many packets resent as lost",
        format!("{resent} for {lost}"),
    );
    r.exactly("RoCEv2: the timer never fires", r.num(v, "rtos"), 0.0);
    // "UET resends only what was lost (no more packets than were dropped), found from its
    // selective ACKs [90 % of them], with at most a probe or a short timeout for a flow's tail
    // [two timeouts at most]."
    let v = "uec";
    let (resent, lost) = (r.num(v, "retransmitted_packets"), r.num(v, "drops"));
    r.check(
        resent <= lost,
        "UET: no more resent than lost",
        format!("{resent} for {lost}"),
    );
    let sack = r.num(v, "sack_losses");
    r.check(
        sack >= 0.9 * resent,
        "UET: losses found from selective ACKs",
        format!("{sack} of {resent}"),
    );
    r.check(
        r.num(v, "rtos") <= 2.0,
        "UET: at most a short timeout",
        r.num(v, "rtos"),
    );
}

#[test]
fn mixed_fabric() {
    // mixed-strict leaves flows unfinished: "make `sim run` exit 7".
    let r = run("mixed-fabric", &[], 7);
    let time = |v: &str, j: &str| r.job(v, j)["time_ns"].as_f64().unwrap();
    let (a, b) = ("tenant-a-allreduce", "tenant-b-alltoall");
    // "the RoCEv2 all-reduce takes about 6.1 ms, the UET all-to-all about 2.6 ms" (5 %).
    r.about(
        "mixed-dwrr: the all-reduce about 6.1 ms",
        time("mixed-dwrr", a),
        6.1 * MS,
        0.05,
    );
    r.about(
        "mixed-dwrr: the all-to-all about 2.6 ms",
        time("mixed-dwrr", b),
        2.6 * MS,
        0.05,
    );
    // mixed-strict: "its flows time out again and again and give up (nic.rto_retries): the
    // all-to-all never completes (0/1 iterations) while the all-reduce runs as if alone (about
    // 4.2 ms)" ... "(summary.json's `incomplete` counts them)".
    let v = "mixed-strict";
    r.exactly(
        "mixed-strict: the all-to-all never completes",
        r.job(v, b)["iterations_completed"].as_f64().unwrap(),
        0.0,
    );
    r.about(
        "mixed-strict: the all-reduce about 4.2 ms",
        time(v, a),
        4.2 * MS,
        0.05,
    );
    let gave_up = r
        .flows_of(v)
        .iter()
        .filter(|f| f.status.contains("nic.rto_retries"))
        .count();
    r.check(
        gave_up > 0,
        "mixed-strict: UET flows give up (nic.rto_retries)",
        gave_up,
    );
    let unfinished = r.num(v, "flows_total") - r.num(v, "flows_completed");
    let incomplete = r.v(v)["incomplete"].as_str().unwrap_or_default();
    r.check(
        unfinished > 0.0 && incomplete.starts_with(&format!("{unfinished} of")),
        "mixed-strict: summary.json's incomplete counts the unfinished flows",
        incomplete,
    );
    // all-roce: "the all-reduce about 4.2 ms, the all-to-all ... about 6.0 ms" (5 %).
    r.about(
        "all-roce: the all-reduce about 4.2 ms",
        time("all-roce", a),
        4.2 * MS,
        0.05,
    );
    r.about(
        "all-roce: the all-to-all about 6.0 ms",
        time("all-roce", b),
        6.0 * MS,
        0.05,
    );
}

#[test]
fn nccl_tests() {
    let r = run("nccl-tests", &[], 0);
    let n = 8.0;
    let j = |v: &str| r.job(v, "all_reduce_perf");
    for v in ["roce-pfc-dcqcn", "uec-reps-nscc"] {
        let (alg, bus) = (
            j(v)["algbw_gbps"].as_f64().unwrap(),
            j(v)["busbw_gbps"].as_f64().unwrap(),
        );
        r.about(
            &format!("{v}: busbw = algbw x 2(n-1)/n"),
            bus,
            alg * 2.0 * (n - 1.0) / n,
            1e-9,
        );
    }
    let roce = j("roce-pfc-dcqcn")["time_ns"].as_f64().unwrap();
    let uet = j("uec-reps-nscc")["time_ns"].as_f64().unwrap();
    // "RoCEv2's all-reduce takes about 21.7 ms [5 %], over twice UET's. UET ... gets close to
    // the line rate (about 10.0 ms [5 %], busbw about 94 Gb/s [3 %])."
    r.about("RoCEv2: about 21.7 ms", roce, 21.7 * MS, 0.05);
    r.check(
        roce > 2.0 * uet,
        "RoCEv2: over twice UET's time",
        format!("{roce} against {uet}"),
    );
    r.about("UET: about 10.0 ms", uet, 10.0 * MS, 0.05);
    r.about(
        "UET: busbw about 94 Gb/s",
        j("uec-reps-nscc")["busbw_gbps"].as_f64().unwrap(),
        94.0,
        0.03,
    );
}

#[test]
fn pfc_deadlock() {
    // A run stopped by a deadlock exits 6.
    let r = run("pfc-deadlock", &[], 6);
    let cycle = [
        "sw0 to-sw1",
        "sw1 to-sw2",
        "sw2 to-sw3",
        "sw3 to-sw4",
        "sw4 to-sw0",
    ];
    // roce-pfc: "`sim` finds the cycle, reports it (summary.json `pfc_deadlocks`: the ports in
    // order, the priority, since when) and stops the run ...; the flows are listed as
    // unfinished." roce-pfc-continue: the same, reported and left to run to `run.max_time`.
    for v in ["roce-pfc", "roce-pfc-continue"] {
        let d = &r.v(v)["pfc_deadlocks"][0];
        let ports: Vec<&str> = d["cycle"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        r.check(
            ports == cycle,
            &format!("{v}: the cycle's ports in order"),
            format!("{ports:?}"),
        );
        r.exactly(
            &format!("{v}: on priority 3"),
            d["priority"].as_f64().unwrap(),
            3.0,
        );
        r.check(
            d["since_ns"].as_f64().is_some(),
            &format!("{v}: since when"),
            &d["since_ns"],
        );
        r.exactly(
            &format!("{v}: no flow finishes"),
            r.num(v, "flows_completed"),
            0.0,
        );
        for f in r.flows_of(v) {
            r.check(
                f.status.starts_with("unfinished"),
                &format!("{v}: flows listed as unfinished"),
                &f.status,
            );
        }
    }
    let stop = r.v("roce-pfc")["incomplete"].as_str().unwrap();
    r.check(
        stop.contains("PFC deadlock"),
        "roce-pfc: the deadlock stops the run",
        stop,
    );
    let cont = r.v("roce-pfc-continue")["incomplete"].as_str().unwrap();
    r.check(
        cont.contains("run.max_time"),
        "roce-pfc-continue: runs to run.max_time",
        cont,
    );
    r.exactly(
        "roce-pfc-continue: runs to 2 ms",
        r.num("roce-pfc-continue", "simulated_ns"),
        2.0 * MS,
    );
    // "no data moves after the deadlock (compare the delivered bytes in flows.csv)": each
    // flow delivered no more by 2 ms than when the deadlock stopped the other run.
    for (a, b) in r.flows_of("roce-pfc").iter().zip(r.flows_of("roce-pfc-continue")) {
        r.exactly(
            "roce-pfc-continue: no data moves after the deadlock",
            b.delivered(),
            a.delivered(),
        );
    }
    // uet-lossy: "every flow finishes, at twice its ideal as each ring cable carries two flows
    // (about 0.66 ms) [3 %]. NSCC's ECN marks keep the queues under the 100 KB trim threshold
    // here: no packet is trimmed."
    let v = "uet-lossy";
    r.exactly("UET: every flow finishes", r.num(v, "flows_completed"), 5.0);
    for f in r.flows_of(v) {
        r.about("UET: each flow at twice its ideal", f.slowdown(), 2.0, 0.03);
        r.about("UET: about 0.66 ms", f.fct(), 0.66 * MS, 0.03);
    }
    r.exactly("UET: nothing pauses a cable", r.num(v, "pfc_pause_frames"), 0.0);
    r.check(r.num(v, "ecn_marked") > 0.0, "UET: NSCC's ECN marks", 0);
    r.exactly("UET: no packet is trimmed", r.num(v, "trimmed"), 0.0);
}

#[test]
fn pfc_incast() {
    let r = run("pfc-incast", &[], 0);
    let senders = (1..16).map(|h| format!("h{h}"));
    // pfc-only: "it pauses all fifteen senders (tx_prio3_pause on the switch's ports,
    // rx_prio3_pause on the NICs): no drops, but the senders spend most of the run paused
    // (over 80 % of it)".
    let v = "pfc-only";
    let run_ns = r.num(v, "fct_ns.max");
    for h in senders.clone() {
        r.check(
            r.counter(v, "sw0", &format!("to-{h}"), "tx_prio3_pause") > 0.0,
            &format!("PFC only: the switch pauses {h}"),
            0,
        );
        let paused = r.counter(v, &h, "to-sw0", "rx_prio3_pause_duration") * US;
        r.check(
            paused > 0.8 * run_ns,
            &format!("PFC only: {h} paused over 80 % of the run"),
            format!("{paused} of {run_ns} ns"),
        );
    }
    r.exactly("PFC only: no drops", r.num(v, "drops"), 0.0);
    // "15 x 2 MB at 100 Gb/s is the ideal (2.45 ms in wire bytes) [0.5 %], which PFC alone
    // reaches [2 %]."
    let ideal = 15.0 * ns(roce_wire(2e6, 4096.0), 100.0);
    r.about(
        "15 x 2 MB at 100 Gb/s: 2.45 ms in wire bytes",
        ideal,
        2.45 * MS,
        0.005,
    );
    r.about("PFC alone reaches the ideal", run_ns, ideal, 0.02);
    // pfc-dcqcn: "CNPs (np_cnp_sent at the receiver, rp_cnp_handled at the senders) ... the
    // switch spends a small fraction of the time in XOFF (tx_prio3_pause_duration, under
    // 10 %), at the price of some throughput (about 75 against 98 Gb/s [3 %])".
    let v = "pfc-dcqcn";
    r.check(
        r.counter(v, "h0", "nic", "np_cnp_sent") > 0.0,
        "DCQCN: the receiver sends CNPs",
        0,
    );
    let run_ns = r.num(v, "fct_ns.max");
    for h in senders {
        r.check(
            r.counter(v, &h, "nic", "rp_cnp_handled") > 0.0,
            &format!("DCQCN: {h} handles CNPs"),
            0,
        );
        let xoff = r.counter(v, "sw0", &format!("to-{h}"), "tx_prio3_pause_duration") * US;
        r.check(
            xoff < 0.1 * run_ns,
            &format!("DCQCN: the switch holds {h} in XOFF under 10 % of the time"),
            format!("{xoff} of {run_ns} ns"),
        );
    }
    r.about("DCQCN: about 75 Gb/s", r.num(v, "goodput_gbps"), 75.0, 0.03);
    r.about(
        "PFC only: about 98 Gb/s",
        r.num("pfc-only", "goodput_gbps"),
        98.0,
        0.03,
    );
    r.check(
        run_ns >= ideal,
        "DCQCN: the receiver link is the bottleneck",
        run_ns,
    );
}

#[test]
fn pfc_watchdog() {
    let r = run("pfc-watchdog", &[], 0);
    let flow = |v: &str, src: &str| r.flows_of(v).into_iter().find(|f| f.src == src).unwrap().clone();
    let ideal = flow("off", "h0").ideal_ns;
    r.about("h0's ideal is 0.65 ms", ideal, 0.65 * MS, 0.01);
    // off and alert: "the queue to h1 sits out the storm, and the pause spreads back to h0:
    // h0's flow takes its ideal (0.65 ms) plus the storm's 350 us" [2 %].
    for v in ["off", "alert"] {
        r.about(
            &format!("{v}: h0's flow takes its ideal plus the storm"),
            flow(v, "h0").fct(),
            ideal + 350.0 * US,
            0.02,
        );
        r.check(
            r.counter(v, "h0", "to-sw0", "rx_prio3_pause") > 0.0,
            &format!("{v}: the pause spreads back to h0"),
            0,
        );
    }
    // alert: "with the storm counted (`show pfcwd stats` in sonic_counters.csv)".
    let mut sc = r.csv(
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
    );
    let detected: Vec<(String, f64)> = sc
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[4] == "show pfcwd stats" && &x[6] == "STORM DETECTED")
        .map(|x| (x[0].to_string(), x[7].parse().unwrap()))
        .collect();
    for v in ["alert", "forward", "drop"] {
        r.check(
            detected.iter().any(|x| x.0 == v && x.1 >= 1.0),
            &format!("{v}: show pfcwd stats counts the storm"),
            format!("{detected:?}"),
        );
    }
    // forward: "after 20 us the switch ignores h1's PFC ...; h0's flow finishes almost as if
    // there were no storm (within 10 % of its ideal)". events.csv: "pfcwd_storm and
    // pfcwd_restore events".
    let mut ev = r.csv(
        "events.csv",
        &["variant", "time_ns", "node", "port", "prio", "flow", "event"],
    );
    let wd: Vec<(String, f64, String)> = ev
        .records()
        .map(|x| x.unwrap())
        .filter(|x| x[6].starts_with("pfcwd"))
        .map(|x| (x[0].to_string(), x[1].parse().unwrap(), x[6].to_string()))
        .collect();
    for v in ["alert", "forward", "drop"] {
        for e in ["pfcwd_storm", "pfcwd_restore"] {
            r.check(
                wd.iter().any(|x| x.0 == v && x.2 == e),
                &format!("{v}: events.csv has {e}"),
                format!("{wd:?}"),
            );
        }
        // The storm starts at 50 us; detected 20 us later (and the PFC frame's hop, 2 us).
        let at = wd.iter().find(|x| x.0 == v && x.2 == "pfcwd_storm").unwrap().1;
        r.check(
            (70.0 * US..72.0 * US).contains(&at),
            &format!("{v}: the watchdog acts 20 us into the storm"),
            at,
        );
    }
    r.check(
        wd.iter().all(|x| x.0 != "off"),
        "off: no watchdog",
        format!("{wd:?}"),
    );
    let fwd = flow("forward", "h0").fct();
    r.check(
        fwd <= 1.1 * ideal,
        "forward: h0's flow within 10 % of its ideal",
        fwd,
    );
    // drop: "the queue's frames, and what arrives for it, are dropped until the restore;
    // RoCEv2 retransmits after it."
    let v = "drop";
    let d = r.num(v, "drops_by_reason.pfc_watchdog");
    r.check(d > 0.0, "drop: the watchdog drops the queue's frames", d);
    r.check(
        r.num(v, "retransmitted_packets") >= d,
        "drop: RoCEv2 retransmits",
        r.num(v, "retransmitted_packets"),
    );
    r.exactly("drop: every flow completes", r.num(v, "flows_completed"), 2.0);
    // "h2 -> h3 ... compare its FCT, at its ideal in every variant" [1 %].
    for v in ["off", "alert", "forward", "drop"] {
        r.about(
            &format!("{v}: h2 -> h3 at its ideal"),
            flow(v, "h2").slowdown(),
            1.0,
            0.01,
        );
    }
}

#[test]
fn rail_cluster() {
    let r = run("rail-cluster", &[], 0);
    let (n, size) = (64.0, 64.0 * 1024.0 * 1024.0);
    // "It runs at about 2(n-1)/n x S / (8 x 100G) = 1.32 ms [0.5 %] (about 1.4 ms with headers
    // and hops [5 %])". "The tree all-reduce ... runs at one NIC's rate (busbw about 100 Gb/s
    // [10 %], seven to eight times the ring's time [6.5 to 8.5])".
    let ideal = 2.0 * (n - 1.0) / n * ns(size, 800.0);
    r.about("2(n-1)/n x S / (8 x 100G) = 1.32 ms", ideal, 1.32 * MS, 0.005);
    for v in ["roce-dcqcn", "uec-nscc"] {
        let ring = r.job(v, "ring")["time_ns"].as_f64().unwrap();
        r.check(
            ring >= ideal,
            &format!("{v}: the ring is no faster than the ideal"),
            ring,
        );
        r.about(&format!("{v}: the ring about 1.4 ms"), ring, 1.4 * MS, 0.05);
        let tree = r.job(v, "tree");
        r.about(
            &format!("{v}: the tree's busbw about 100 Gb/s"),
            tree["busbw_gbps"].as_f64().unwrap(),
            100.0,
            0.1,
        );
        let x = tree["time_ns"].as_f64().unwrap() / ring;
        r.check(
            (6.5..=8.5).contains(&x),
            &format!("{v}: the tree takes seven to eight times the ring's time"),
            x,
        );
    }
}

#[test]
fn sn3700c_incast() {
    let r = run("sn3700c-incast", &[], 0);
    let peak = |v: &str| r.counter(v, "sw0", "to-h0", "peak_queue_bytes");
    // pfc-only: "the congested queue grows to megabytes (...: about 40 MB [5 %]) before the
    // dynamic threshold makes the switch pause senders (pfc_pause_frames)".
    r.about(
        "PFC only: the queue grows to about 40 MB",
        peak("pfc-only"),
        40e6,
        0.05,
    );
    r.check(
        r.num("pfc-only", "pfc_pause_frames") > 0.0,
        "PFC only: the switch pauses senders",
        0,
    );
    // pfc-dcqcn: "the switch never pauses, but the queue still grows to megabytes: about 16 MB
    // in the first 150 us [10 %], ... once that has drained [under 1 MB] the rates climb back
    // together and overshoot, building it again (to about 34 MB [10 %])".
    let v = "pfc-dcqcn";
    r.exactly(
        "DCQCN: the switch never pauses",
        r.num(v, "pfc_pause_frames"),
        0.0,
    );
    let q = r.series(v, "queue_bytes", "sw0 to-h0");
    let (t1, first) = q
        .iter()
        .filter(|x| x.0 <= 150.0 * US)
        .fold((0.0, 0.0), |a, x| if x.1 > a.1 { *x } else { a });
    r.about("DCQCN: about 16 MB in the first 150 us", first, 16e6, 0.1);
    let (t2, _) = q.iter().fold((0.0, 0.0), |a, x| if x.1 > a.1 { *x } else { a });
    let low = min(q.iter().filter(|x| x.0 > t1 && x.0 < t2).map(|x| x.1));
    r.check(low < 1e6, "DCQCN: the first queue drains before the second", low);
    r.about("DCQCN: the queue builds again to about 34 MB", peak(v), 34e6, 0.1);
    // "The overshoot costs some throughput (about 91 against 98 Gb/s [3 %])."
    r.about("DCQCN: about 91 Gb/s", r.num(v, "goodput_gbps"), 91.0, 0.03);
    r.about(
        "PFC only: about 98 Gb/s",
        r.num("pfc-only", "goodput_gbps"),
        98.0,
        0.03,
    );
}

#[test]
fn sn3700c() {
    let v = "sn3700c";
    let r = run(v, &[], 0);
    // "the incasts fill h0's queue (peak_queue_bytes of sw0's to-h0 port: about 6 MB [10 %],
    // against under 1 MB at every other port)".
    r.about(
        "h0's queue peaks at about 6 MB",
        r.counter(v, "sw0", "to-h0", "peak_queue_bytes"),
        6e6,
        0.1,
    );
    for (_, p, x) in r.counters_named(v, "peak_queue_bytes", |n| n == "sw0", |p| p != "to-h0") {
        r.check(x < 1e6, &format!("under 1 MB at sw0 {p}"), x);
    }
    // "the background flows to h0 have a median slowdown over 20, the others about 1.2 [10 %]".
    let incast = |f: &Flow| {
        f.dst == "h0" && f.size == 64e3 && ((f.start_ns - 100.0 * US) / (200.0 * US)).fract() == 0.0
    };
    let bg: Vec<&Flow> = r.flows_of(v).into_iter().filter(|f| !incast(f)).collect();
    let to_h0 = median(
        bg.iter()
            .filter(|f| f.dst == "h0")
            .map(|f| f.slowdown())
            .collect(),
    );
    let others = median(
        bg.iter()
            .filter(|f| f.dst != "h0")
            .map(|f| f.slowdown())
            .collect(),
    );
    r.check(
        to_h0 > 20.0,
        "background flows to h0: median slowdown over 20",
        to_h0,
    );
    r.about(
        "the other background flows: median slowdown about 1.2",
        others,
        1.2,
        0.1,
    );
    // "the rare frame errors cost go-back-N retransmissions (retx), and no timeout fires"
    // (local_ack_timeout 10 = 4 ms: "longer than the worst queueing under the incasts").
    let errors = r.num(v, "drops_by_reason.link_error");
    r.check(errors > 0.0, "frame errors", errors);
    r.check(
        r.num(v, "retransmitted_packets") >= errors,
        "go-back-N retransmissions",
        r.num(v, "retransmitted_packets"),
    );
    r.exactly("no timeout fires", r.num(v, "rtos"), 0.0);
}

/// What a scenario's SONiC file set (summary.json `sonic.set`, as TOML values), against the
/// comment's reading of the file: each `(key, text)` is the key's value (or, for a table or
/// an array, in it), and each `(size in B, the comment's MB)` agree to 0.5 %.
fn sonic_file_says(r: &Run, variant: &str, keys: &[(&str, &str)], sizes: &[(f64, f64)]) {
    let set = &r.v(variant)["sonic"]["set"];
    for (k, text) in keys {
        let got = set[*k].as_str().unwrap_or_default();
        // A table or array holds the text; a scalar is it.
        let holds = if got.starts_with(['{', '[']) {
            got.contains(text)
        } else {
            got == *text
        };
        r.check(holds, &format!("the SONiC file sets {k} to {text}"), got);
    }
    for (bytes, mb) in sizes {
        r.about("a size the comment reads from the file", *bytes, mb * 1e6, 0.005);
    }
}

#[test]
fn sonic_as7326() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sonic-as7326.toml");
    let r = run("sonic-as7326", &[], 0);
    // "a 26.3 MB shared pool and a 6.3 MB shared headroom pool, dynamic_th -3, lossless xoff
    // 65024 B on 25G ports and 173568 B on 100G ports, xon_offset 2048 B, WRED-ECN 1-2 MB at
    // 5 %, DWRR 14/15, PFC watchdog 400 ms".
    sonic_file_says(
        &r,
        "as-configured",
        &[
            ("switch.shared_pool", "\"26284032B\""),
            ("switch.headroom_pool", "\"6291456B\""),
            ("switch.pg_alpha", "-3"),
            ("pfc.headroom_by_rate", "25000Mbps = \"65024B\""),
            ("pfc.headroom_by_rate", "100000Mbps = \"173568B\""),
            ("pfc.xon_offset", "\"2048B\""),
            (
                "switch.ecn",
                "kmax = \"2097152B\", kmin = \"1048576B\", pmax = 0.05",
            ),
            ("switch.scheduler.dwrr", "0 = 14"),
            ("switch.scheduler.dwrr", "3 = 15"),
            ("pfc.watchdog", "\"400ms\""),
        ],
        &[(26284032.0, 26.3), (6291456.0, 6.3)],
    );
    // "the run prints each SONiC table and field it does not act on".
    r.check(
        r.stderr.contains("note[sonic-not-modelled]"),
        "the run prints what it does not act on",
        &r.stderr,
    );
    // "As configured, ... pauses the senders' links (about 80 PFC frames [10 %]); tuned, ...
    // no pause is sent, and the goodput drops from about 65 to 56 Gb/s [3 %]".
    r.about(
        "as configured: about 80 PFC frames",
        r.num("as-configured", "pfc_pause_frames"),
        80.0,
        0.1,
    );
    r.exactly("tuned: no pause", r.num("tuned", "pfc_pause_frames"), 0.0);
    r.about(
        "as configured: about 65 Gb/s",
        r.num("as-configured", "goodput_gbps"),
        65.0,
        0.03,
    );
    r.about("tuned: about 56 Gb/s", r.num("tuned", "goodput_gbps"), 56.0, 0.03);
    r.check(
        r.num("tuned", "cnps") > r.num("as-configured", "cnps"),
        "tuned: DCQCN cuts the senders more",
        r.num("tuned", "cnps"),
    );
    // "`sim export sonic scenarios/sonic-as7326.toml --variant tuned` writes the tuned settings
    // back as config_db.json tables (WRED_PROFILE with the 10-100 KB band)".
    let o = sim(&["export", "sonic", file.to_str().unwrap(), "--variant", "tuned"]);
    r.check(
        o.status.success(),
        "sim export sonic --variant tuned",
        String::from_utf8_lossy(&o.stderr),
    );
    let db: Value = serde_json::from_slice(&o.stdout).unwrap();
    let wred = db["WRED_PROFILE"].as_object().unwrap();
    r.check(
        wred.values()
            .any(|p| p["green_min_threshold"] == "10000" && p["green_max_threshold"] == "100000"),
        "the export's WRED_PROFILE holds the 10-100 KB band",
        format!("{wred:?}"),
    );
}

#[test]
fn sonic_mixed() {
    let r = run("sonic-mixed", &[], 0);
    // "sonic_counters.csv holds every switch's counters as SONiC's show commands print them
    // (`show pfc counters`, `show queue counters`, PG and queue watermarks; `show pfcwd stats`
    // for the queues the watchdog watched)".
    let mut sc = r.csv(
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
    );
    let rows: Vec<(String, String)> = sc
        .records()
        .map(|x| x.unwrap())
        .map(|x| (x[1].to_string(), x[4].to_string()))
        .collect();
    for sw in ["leaf0", "leaf1", "spine0", "spine1"] {
        for cmd in [
            "show pfc counters",
            "show queue counters",
            "show priority-group watermark shared",
            "show priority-group watermark headroom",
            "show queue watermark unicast",
        ] {
            r.check(
                rows.iter().any(|x| x.0 == sw && x.1 == cmd),
                &format!("{sw}: `{cmd}` in sonic_counters.csv"),
                "no row",
            );
        }
    }
    r.check(
        rows.iter().any(|x| x.1 == "show pfcwd stats"),
        "`show pfcwd stats` for the watched queues",
        "no row",
    );
    // "summary.json lists what each file set under `sonic_tiers`".
    let tiers = &r.v("sonic-mixed")["sonic_tiers"];
    for (tier, file) in [("leaf", "sonic/as7326-56x.json"), ("spine", "sonic/sn3700c.json")] {
        r.check(
            tiers[tier]["file"] == file,
            &format!("sonic_tiers: {tier} from {file}"),
            &tiers[tier]["file"],
        );
        r.check(
            tiers[tier]["set"].as_object().is_some_and(|s| !s.is_empty()),
            &format!("sonic_tiers: what the {tier} file set"),
            &tiers[tier]["set"],
        );
    }
}

#[test]
fn sonic_sn3700c() {
    let r = run("sonic-sn3700c", &[], 0);
    // "a 14.5 MB ingress lossless pool, dynamic_th 0, lossless xoff 33792 B on 5 m host ports
    // and 44032 B on 40 m uplinks ...; PFC on 3 and 4, WRED-ECN 1-2 MB at 5 %, DWRR 14/15; PFC
    // watchdog 200 ms".
    sonic_file_says(
        &r,
        "as-configured",
        &[
            ("switch.shared_pool", "\"14542848B\""),
            ("switch.pg_alpha", "0"),
            ("pfc.headroom_by_rate", "\"100000Mbps/5m\" = \"33792B\""),
            ("pfc.headroom_by_rate", "\"100000Mbps/40m\" = \"44032B\""),
            ("pfc.priorities", "[3, 4]"),
            (
                "switch.ecn",
                "kmax = \"2097152B\", kmin = \"1048576B\", pmax = 0.05",
            ),
            ("switch.scheduler.dwrr", "0 = 14"),
            ("switch.scheduler.dwrr", "3 = 15"),
            ("pfc.watchdog", "\"200ms\""),
        ],
        &[(14542848.0, 14.5)],
    );
    let peak = |v: &str| r.counter(v, "leaf1", "to-h13", "peak_queue_bytes");
    // "As configured, the queue to h13 grows to about 6 MB [10 %], well past the band [2 MB],
    // ...: the buffer absorbs it and the incast runs near line rate (about 88 Gb/s [3 %]); at
    // 20 KB it marks early and cuts the senders hard: the queue peaks lower (about 2.3 MB
    // [10 %]) at the price of throughput (about 57 Gb/s [3 %])".
    r.about(
        "as configured: the queue to h13 grows to about 6 MB",
        peak("as-configured"),
        6e6,
        0.1,
    );
    r.check(
        peak("as-configured") > 2.0 * 1024.0 * 1024.0,
        "well past the 1-2 MB band",
        peak("as-configured"),
    );
    r.exactly(
        "as configured: the buffer absorbs it",
        r.num("as-configured", "drops"),
        0.0,
    );
    r.about(
        "as configured: about 88 Gb/s",
        r.num("as-configured", "goodput_gbps"),
        88.0,
        0.03,
    );
    r.about(
        "ecn-20KB: the queue peaks at about 2.3 MB",
        peak("ecn-20KB"),
        2.3e6,
        0.1,
    );
    r.about(
        "ecn-20KB: about 57 Gb/s",
        r.num("ecn-20KB", "goodput_gbps"),
        57.0,
        0.03,
    );
    r.check(
        r.num("ecn-20KB", "cnps") > r.num("as-configured", "cnps"),
        "ecn-20KB: marks early and cuts the senders hard",
        r.num("ecn-20KB", "cnps"),
    );
}

#[test]
fn spray_vs_ecmp() {
    let r = run("spray-vs-ecmp", &[], 0);
    // "The slowdown p99 (summary.json): about 4.8 with ECMP, 2.0 adaptive [10 %], 1.2
    // oblivious and 1.1 with REPS [5 %], which trims no packet at all."
    for (v, want, tol) in [
        ("ecmp", 4.8, 0.1),
        ("adaptive", 2.0, 0.1),
        ("oblivious", 1.2, 0.05),
        ("reps", 1.1, 0.05),
    ] {
        r.about(
            &format!("{v}: slowdown p99 about {want}"),
            r.num(v, "slowdown.p99"),
            want,
            tol,
        );
        r.exactly(
            &format!("{v}: every flow completes"),
            r.num(v, "flows_completed"),
            128.0,
        );
    }
    r.exactly("REPS trims no packet", r.num("reps", "trimmed"), 0.0);
}

#[test]
fn three_node() {
    let v = "three-node";
    let r = run(v, &[], 0);
    // "an all-to-all exchange runs at full line rate on every link at once ... and the
    // exchange finishes in the time of one flow" (4 MB at 100 Gb/s with headers, 3 %).
    let one = ns(roce_wire(4e6, 4096.0), 100.0);
    let f = r.flows_of(v);
    r.exactly("all-to-all of three: six flows", f.len() as f64, 6.0);
    for f in f {
        r.about(
            &format!("{} -> {} in the time of one flow", f.src, f.dst),
            f.fct(),
            one,
            0.03,
        );
    }
    r.exactly("no drops", r.num(v, "drops"), 0.0);
}

#[test]
fn uec_incast() {
    let r = run("uec-incast", &[], 0);
    // "The UET variants finish near the ideal 31 x 1 MB at 100 Gb/s = 2.54 ms [0.5 %; near:
    // within 3 %]. RoCEv2 takes about 30 % longer [0.05]".
    let ideal = 31.0 * ns(roce_wire(1e6, 4096.0), 100.0);
    r.about("31 x 1 MB at 100 Gb/s = 2.54 ms", ideal, 2.54 * MS, 0.005);
    for v in ["uec-nscc", "uec-rccc"] {
        let last = r.num(v, "fct_ns.max");
        r.check(
            last >= 0.999 * ideal && last <= 1.03 * ideal,
            &format!("{v}: finishes near the ideal"),
            last,
        );
    }
    let roce = r.num("roce-pfc-dcqcn", "fct_ns.max");
    r.about(
        "RoCEv2 takes about 30 % longer",
        roce / r.num("uec-nscc", "fct_ns.max"),
        1.3,
        0.05 / 1.3,
    );
    // roce-pfc-dcqcn: "the switch pauses the senders (pfc_pause_frames), DCQCN slows them on
    // CNPs"; "PFC holds the receiver's queue near 1.35 MB [median of its samples over 100 KB,
    // 5 %], over 100 us of delay in DCQCN's loop ...; the port idles [under a tenth busy] for a
    // few hundred microseconds [200 us or more] while the rates climb back".
    let v = "roce-pfc-dcqcn";
    r.check(
        r.num(v, "pfc_pause_frames") > 0.0,
        "RoCEv2: the switch pauses the senders",
        0,
    );
    r.check(r.num(v, "cnps") > 0.0, "RoCEv2: DCQCN slows them on CNPs", 0);
    let q = r.series(v, "queue_bytes", "sw0 to-h0");
    let held = median(q.iter().filter(|x| x.1 > 100e3).map(|x| x.1).collect());
    r.about("RoCEv2: PFC holds the queue near 1.35 MB", held, 1.35e6, 0.05);
    r.check(
        ns(held, 100.0) > 100.0 * US,
        "RoCEv2: over 100 us of delay",
        ns(held, 100.0),
    );
    let busy = r.series(v, "tx_utilisation", "sw0 to-h0");
    let step = busy[1].0 - busy[0].0;
    let (mut idle, mut longest) = (0.0, 0.0_f64);
    for x in &busy {
        idle = if x.1 < 0.1 { idle + step } else { 0.0 };
        longest = longest.max(idle);
    }
    r.check(
        longest >= 200.0 * US,
        "RoCEv2: the port idles for a few hundred microseconds",
        longest,
    );
    // uec-nscc: "the first windows overflow the queue, which trims (trims in the table); each
    // trimmed header comes back as a NACK and the sender resends that one packet at once, with
    // no timeout (rtos = 0 in summary.json)".
    let v = "uec-nscc";
    let trims = r.num(v, "trimmed");
    r.check(trims > 0.0, "NSCC: the queue trims", trims);
    r.exactly("NSCC: a NACK for each trim", r.num(v, "nacks"), trims);
    r.exactly(
        "NSCC: each trimmed packet resent",
        r.num(v, "retransmitted_packets"),
        trims,
    );
    r.exactly("NSCC: rtos = 0", r.num(v, "rtos"), 0.0);
    // "The trim threshold sits above 31 MTU: NSCC's window never goes below one packet per
    // sender" (the plotted flows' flow_window_bytes).
    r.check(
        150e3 > 31.0 * 4096.0,
        "the trim threshold sits above 31 MTU",
        150e3,
    );
    let windows: Vec<f64> = r
        .csv(
            "timeseries.csv",
            &["variant", "time_ns", "series", "key", "value"],
        )
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[0] == v && &x[2] == "flow_window_bytes")
        .map(|x| x[4].parse().unwrap())
        .collect();
    r.check(!windows.is_empty(), "NSCC: windows in timeseries.csv", "none");
    let least = min(windows.iter().copied());
    r.check(least >= 4096.0, "NSCC: the window never below one packet", least);
    // uec-rccc: "after one speculative window (its burst is what peak_queue_bytes of sw0's
    // port to h0 shows, held at the trim threshold [150 KB, 10 %]), ... the queue at the
    // receiver's port averages about 50 KB [20 %], well under a packet per sender [half of
    // 31 x 4178 B] (queue_bytes in timeseries.csv; NSCC's sits near 125 KB [10 %])."
    r.about(
        "RCCC: the first window's burst, at the trim threshold",
        r.counter("uec-rccc", "sw0", "to-h0", "peak_queue_bytes"),
        150e3,
        0.1,
    );
    let mean = |v: &str| -> f64 {
        let q: Vec<f64> = r
            .series(v, "queue_bytes", "sw0 to-h0")
            .iter()
            .filter(|x| x.0 >= 100.0 * US && x.0 <= r.num(v, "fct_ns.max"))
            .map(|x| x.1)
            .collect();
        q.iter().sum::<f64>() / q.len() as f64
    };
    let rccc = mean("uec-rccc");
    r.about("RCCC: the queue averages about 50 KB", rccc, 50e3, 0.2);
    r.check(
        rccc < 0.5 * 31.0 * (4096.0 + ROCE_OVERHEAD),
        "RCCC: well under a packet per sender",
        rccc,
    );
    r.about("NSCC: the queue sits near 125 KB", mean("uec-nscc"), 125e3, 0.1);
}

#[test]
fn victim_flow() {
    let r = run("victim-flow", &[], 0);
    let victim = |v: &str| {
        r.flows_of(v)
            .into_iter()
            .find(|f| f.src == "h3")
            .unwrap()
            .slowdown()
    };
    // pfc-only: "the right switch ... pauses the left switch's uplink on priority 3; ... the
    // victim h3 -> h5 crawls ... a slowdown of about 3 [5 %]"; "pause_graph.png shows the
    // right switch pausing the uplink and the left switch pausing the senders, h3 among them".
    let v = "pfc-only";
    r.about("PFC only: the victim's slowdown about 3", victim(v), 3.0, 0.05);
    r.check(
        r.counter(v, "right", "to-left", "tx_prio3_pause") > 0.0,
        "PFC only: the right switch pauses the uplink",
        0,
    );
    r.check(
        r.counter(v, "left", "to-h3", "tx_prio3_pause") > 0.0,
        "PFC only: the left switch pauses h3",
        0,
    );
    // pfc-dcqcn: "the uplink is paused far less (under half the time), and the victim gets much
    // of its rate back (a slowdown of about 1.6 [10 %])".
    let paused = |v: &str| r.counter(v, "right", "to-left", "tx_prio3_pause_duration");
    r.check(
        paused("pfc-dcqcn") < 0.5 * paused("pfc-only"),
        "DCQCN: the uplink paused under half the time",
        format!("{} us against {} us", paused("pfc-dcqcn"), paused("pfc-only")),
    );
    r.about(
        "DCQCN: the victim's slowdown about 1.6",
        victim("pfc-dcqcn"),
        1.6,
        0.1,
    );
}

#[test]
fn websearch_load() {
    let r = run("websearch-load", &[], 0);
    // "small flows suffer queueing behind large ones (flows under 100 KB, which need
    // microseconds, wait up to 5 to 10 times that [the slowest small flow at 5 to 11]), and
    // the large ones [1 MB and more], which share links with each other, slow most (their
    // median slowdown is the highest)".
    for v in ["roce-pfc-dcqcn", "uec-reps-nscc"] {
        let f = r.flows_of(v);
        let class = |lo: f64, hi: f64| -> Vec<f64> {
            f.iter()
                .filter(|f| f.size >= lo && f.size < hi)
                .map(|f| f.slowdown())
                .collect()
        };
        let small = class(0.0, 100e3);
        let worst = max(small.iter().copied());
        r.check(
            (5.0..=11.0).contains(&worst),
            &format!("{v}: small flows wait up to 5 to 10 times their ideal"),
            worst,
        );
        let large = median(class(1e6, f64::INFINITY));
        for (lo, hi) in [(0.0, 10e3), (10e3, 100e3), (100e3, 1e6)] {
            let m = median(class(lo, hi));
            r.check(
                large > m,
                &format!("{v}: the large flows' median slowdown above flows of {lo}-{hi} B"),
                format!("{large} against {m}"),
            );
        }
    }
}
