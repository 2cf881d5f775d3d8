//! What a sweep's plots read from sweep.csv: metrics in words and units, axes as the
//! quantities the user wrote (placed by value, in the unit their magnitude calls for) or as
//! categories, the rows with their failures, and the statistics (mean and Student-t 95 %
//! interval across seeds) and tick arithmetic the line plots and heat maps share.

use crate::plots::Scale;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use sim_core::{BitRate, Bytes, Duration, Length};
use std::collections::BTreeSet;
use std::ops::Range;
/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom (tables, e.g. NIST
/// Engineering Statistics Handbook 1.3.6.7.2); coarse steps above 30 are conservative.
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        31..=40 => 2.042,
        41..=60 => 2.021,
        61..=120 => 2.000,
        121..=1000 => 1.980,
        _ => 1.960,
    }
}

/// Mean and 95 % confidence half-width (NaN for fewer than two samples).
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, t95(xs.len() - 1) * (var / n).sqrt())
}

/// What a metric or an axis measures, in its base unit: the run plots' quantities.
pub(super) use crate::plots::Quantity as Kind;

/// The unit that draws values up to `max` (base units) with at most four digits.
pub(super) fn unit(kind: Kind, max: f64) -> Scale {
    Scale::for_max(kind, max)
}

/// A number with three significant digits and no trailing zeros: "0.064", "4.1", "150".
pub(super) fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() { "0".into() } else { v.to_string() };
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A swept value as written, a plain number far from 1 in exponent form (`1e-12`, not
/// `0.000000000001`, which is how a TOML float reaches sweep.csv).
fn as_written(v: &str) -> String {
    let v = v.trim();
    match v.parse::<f64>() {
        Ok(x) if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) => format!("{x:e}"),
        _ => v.to_string(),
    }
}

/// A round step (1, 2 or 5 times a power of ten) near `x`.
pub(super) fn nice(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    let m = x / p;
    p * if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    }
}

/// Round values to label an axis from `lo` to `hi`: 1-2-5 steps, or 1, 2, 5 times powers of
/// ten on a log axis; whole numbers only if `whole`.
pub(super) fn ticks(lo: f64, hi: f64, log: bool, whole: bool) -> Vec<f64> {
    if log && lo > 0.0 {
        let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let of = |ms: &[f64]| -> Vec<f64> {
            let all = (a..=b).flat_map(|k| ms.iter().map(move |m| m * 10f64.powi(k)));
            all.filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
                .collect()
        };
        let t = of(&[1.0, 2.0, 5.0]);
        return if t.len() > 10 { of(&[1.0]) } else { t };
    }
    let mut step = nice((hi - lo) / 6.0);
    if whole {
        step = step.max(1.0);
    }
    let first = (lo / step - 1e-9).ceil();
    (0..100)
        .map(|i| (first + i as f64) * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v })
        .collect()
}

/// `label` (which may end in its unit in parentheses) saying that its axis is logarithmic.
pub(super) fn log_label(label: &str) -> String {
    match label.strip_suffix(')') {
        Some(l) => format!("{l}, log scale)"),
        None => format!("{label} (log scale)"),
    }
}

/// A metric of sweep.csv, in words and units.
pub(super) struct Metric {
    pub key: String,
    pub col: usize,
    pub name: String,
    pub kind: Kind,
    /// sweep.csv's value times this is in base units (goodput is in Gb/s there).
    pub to_base: f64,
    /// The least it can physically be, base units (-inf: unbounded).
    pub floor: f64,
}

impl Metric {
    pub fn new(key: &str, col: usize) -> Metric {
        let counts = [
            ("flows_total", "flows"),
            ("flows_completed", "flows completed"),
            ("drops", "dropped packets"),
            ("pfc_pause_frames", "PFC pause frames"),
            ("ecn_marked", "ECN-marked packets"),
            ("cnps", "CNPs"),
            ("trimmed", "trimmed packets"),
            ("retransmitted_packets", "retransmitted packets"),
        ];
        let (name, kind, to_base, floor) = if let Some(p) = key.strip_prefix("fct_ns.") {
            (format!("FCT {p}"), Kind::Time, 1.0, 0.0)
        } else if let Some(p) = key.strip_prefix("slowdown.") {
            (format!("slowdown {p}"), Kind::Plain, 1.0, 1.0)
        } else if key == "goodput_gbps" {
            ("goodput".into(), Kind::Rate, 1e9, 0.0)
        } else if key == "jobs.0.busbw_gbps" {
            ("bus bandwidth".into(), Kind::Rate, 1e9, 0.0)
        } else if key == "jobs.0.algbw_gbps" {
            ("algorithm bandwidth".into(), Kind::Rate, 1e9, 0.0)
        } else if key == "jobs.0.time_ns" {
            ("collective time".into(), Kind::Time, 1.0, 0.0)
        } else if let Some((_, n)) = counts.iter().find(|c| c.0 == key) {
            (n.to_string(), Kind::Count, 1.0, 0.0)
        } else {
            (key.to_string(), Kind::Plain, 1.0, f64::NEG_INFINITY)
        };
        Metric {
            key: key.into(),
            col,
            name,
            kind,
            to_base,
            floor,
        }
    }

    /// A sweep.csv cell, as it is there (None when empty or not a number).
    pub fn raw(&self, r: &[String]) -> Option<f64> {
        r[self.col].parse::<f64>().ok().filter(|y| y.is_finite())
    }
}

/// A swept key: its readable name, its values and where each goes on a plot.
pub(super) struct Axis {
    pub key: String,
    pub col: usize,
    /// The axis title, with its unit.
    pub label: String,
    /// Positions are logarithms (the values span a decade or more).
    log: bool,
    /// Values in plotting order: ascending for quantities, the sweep's order for categories.
    pub values: Vec<String>,
    /// The values in the sweep's order (sweep_stats.csv's).
    pub seen: Vec<String>,
    /// Each value's position on the plot (its index for categories, ln of it on a log axis).
    pub pos: Vec<f64>,
    /// Each value's tick label (scaled to the axis' unit).
    pub ticks: Vec<String>,
    /// Evenly spaced categories, not quantities.
    pub categorical: bool,
}

/// Words for the parts of a scenario key.
const WORDS: [(&str, &str); 16] = [
    ("ecn", "ECN"),
    ("pfc", "PFC"),
    ("mtu", "MTU"),
    ("nic", "NIC"),
    ("cc", "CC"),
    ("lb", "LB"),
    ("kmin", "Kmin"),
    ("kmax", "Kmax"),
    ("pmax", "Pmax"),
    ("rto", "RTO"),
    ("ecmp", "ECMP"),
    ("dcqcn", "DCQCN"),
    ("nscc", "NSCC"),
    ("uet", "UET"),
    ("xoff", "XOFF"),
    ("xon", "XON"),
];

/// `switch.ecn.kmin` as "ECN Kmin", `workload[0].size` as "workload 0 size".
pub(super) fn readable(key: &str) -> String {
    let mut segs: Vec<&str> = key.split('.').collect();
    if segs.len() >= 3 && ["switch", "nic", "topology"].contains(&segs[0]) {
        segs.remove(0);
    }
    let word = |s: &str| {
        let s = s.replace(['[', '_'], " ").replace(']', "");
        match WORDS.iter().find(|w| w.0 == s) {
            Some(w) => w.1.to_string(),
            None => s,
        }
    };
    segs.iter().map(|s| word(s)).collect::<Vec<_>>().join(" ")
}

/// The values in base units if all are numbers, or all quantities of one kind.
pub(super) fn quantities(vs: &[String]) -> Option<(Kind, Vec<f64>)> {
    type Parse = fn(&str) -> Option<f64>;
    let kinds: [(Kind, Parse); 5] = [
        (Kind::Plain, |v| v.parse::<f64>().ok().filter(|x| x.is_finite())),
        (Kind::Bytes, |v| Bytes::parse(v).ok().map(|b| b.0 as f64)),
        (Kind::Time, |v| Duration::parse(v).ok().map(|d| d.0 as f64 / 1e3)),
        (Kind::Rate, |v| BitRate::parse(v).ok().map(|r| r.0 as f64)),
        (Kind::Length, |v| Length::parse(v).ok().map(|l| l.0 as f64)),
    ];
    kinds.iter().find_map(|(k, parse)| {
        let xs: Option<Vec<f64>> = vs.iter().map(|v| parse(v.trim())).collect();
        xs.map(|xs| (*k, xs))
    })
}

impl Axis {
    pub fn new(key: &str, col: usize, rows: &[Vec<String>]) -> Axis {
        let mut seen: Vec<String> = Vec::new();
        for r in rows {
            if !seen.contains(&r[col]) {
                seen.push(r[col].clone());
            }
        }
        let name = readable(key);
        let Some((kind, base)) = quantities(&seen) else {
            return Axis {
                key: key.into(),
                col,
                label: name,
                log: false,
                values: seen.clone(),
                pos: (0..seen.len()).map(|i| i as f64).collect(),
                ticks: seen.clone(),
                seen,
                categorical: true,
            };
        };
        let mut order: Vec<usize> = (0..seen.len()).collect();
        order.sort_by(|&a, &b| base[a].total_cmp(&base[b]));
        let s = unit(kind, base.iter().fold(0.0, |m, x| x.abs().max(m)));
        let scaled: Vec<f64> = order.iter().map(|&i| base[i] / s.div).collect();
        let (lo, hi) = (scaled[0], scaled[scaled.len() - 1]);
        let log = scaled.len() >= 3 && lo > 0.0 && hi / lo >= 10.0;
        // Values spanning many decades (8 B to 1 GiB) read best as written, each in its own
        // unit; the axis title then names no unit.
        let wide = log && hi / lo >= 1e4;
        Axis {
            key: key.into(),
            col,
            label: if wide { name } else { s.label(&name) },
            log,
            values: order.iter().map(|&i| seen[i].clone()).collect(),
            pos: scaled.iter().map(|&v| if log { v.ln() } else { v }).collect(),
            ticks: if wide {
                order.iter().map(|&i| as_written(&seen[i])).collect()
            } else {
                scaled.iter().map(|&v| num(v)).collect()
            },
            seen,
            categorical: false,
        }
    }

    /// The title of a line plot's x axis, which says when it is logarithmic.
    pub fn line_label(&self) -> String {
        if self.log {
            log_label(&self.label)
        } else {
            self.label.clone()
        }
    }

    pub fn index(&self, v: &str) -> Option<usize> {
        self.values.iter().position(|x| x == v)
    }

    /// The tick label at plot position `p` (one of `pos`), blank elsewhere.
    pub fn tick_at(&self, p: f64) -> String {
        self.pos
            .iter()
            .position(|&q| (q - p).abs() <= 1e-9 * q.abs().max(1.0))
            .map(|i| self.ticks[i].clone())
            .unwrap_or_default()
    }

    /// Positions to label: every value, or every k-th when there are many.
    pub fn key_points(&self) -> Vec<f64> {
        let step = self.pos.len().div_ceil(16).max(1);
        self.pos.iter().step_by(step).copied().collect()
    }
}

/// A linear axis with ticks at exactly `keys` (the swept values): plotters' `WithKeyPoints`
/// cannot label f64 axes.
pub(super) struct Keyed(pub Range<f64>, pub Vec<f64>);

impl Ranged for Keyed {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;
    fn map(&self, v: &f64, (a, b): (i32, i32)) -> i32 {
        let t = (v - self.0.start) / (self.0.end - self.0.start);
        a + (t * (b - a) as f64).round() as i32
    }
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.1.clone()
        }
    }
    fn range(&self) -> Range<f64> {
        self.0.clone()
    }
}

/// sweep.csv's rows and where they keep what the plots need.
pub(super) struct Sweep<'a> {
    pub rows: &'a [Vec<String>],
    pub variant: usize,
    pub status: usize,
    pub seed: usize,
    pub point: usize,
    /// The axes' columns.
    pub keys: Vec<(String, usize)>,
    /// Variants in first-seen order (their colours).
    pub variants: Vec<String>,
}

impl Sweep<'_> {
    pub fn ok(&self, r: &[String]) -> bool {
        r[self.status] == "ok"
    }

    /// Runs (point x seed) among the rows `keep` picks, and how many of them failed for
    /// `variant` (or for any variant): a failed row without a variant failed its whole run.
    pub fn runs(&self, keep: impl Fn(&[String]) -> bool, variant: Option<&str>) -> (usize, usize) {
        let (mut all, mut failed) = (BTreeSet::new(), BTreeSet::new());
        for r in self.rows.iter().filter(|r| keep(r)) {
            all.insert(&r[self.point]);
            let v = &r[self.variant];
            if !self.ok(r) && (variant.is_none() || v.is_empty() || Some(v.as_str()) == variant) {
                failed.insert(&r[self.point]);
            }
        }
        (failed.len(), all.len())
    }

    /// What failed, for a plot's subtitle: runs, points, and which points if few.
    pub fn failures(&self) -> Option<String> {
        let (failed, runs) = self.runs(|_| true, None);
        if failed == 0 {
            return None;
        }
        let at = |r: &Vec<String>| self.keys.iter().map(|(_, c)| r[*c].clone()).collect::<Vec<_>>();
        let points: BTreeSet<Vec<String>> = self.rows.iter().map(at).collect();
        let mut bad: Vec<Vec<String>> = Vec::new();
        for r in self.rows.iter().filter(|r| !self.ok(r)) {
            if !bad.contains(&at(r)) {
                bad.push(at(r));
            }
        }
        let mut note = format!(
            "{failed} of {runs} runs failed, at {} of {} points",
            bad.len(),
            points.len()
        );
        if bad.len() <= 3 {
            let leaf = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
            let list: Vec<String> = bad
                .iter()
                .map(|p| {
                    let kv = self
                        .keys
                        .iter()
                        .zip(p)
                        .map(|((k, _), v)| format!("{}={v}", leaf(k)));
                    kv.collect::<Vec<_>>().join(" ")
                })
                .collect();
            note += &format!(" ({})", list.join("; "));
        }
        Some(note)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn tiny_and_huge_numbers_read_in_exponent_form() {
        assert_eq!(super::as_written("0.000000000001"), "1e-12");
        assert_eq!(super::as_written("0.0000003"), "3e-7");
        assert_eq!(super::as_written("0.01"), "0.01");
        assert_eq!(super::as_written("64KiB"), "64KiB");
        assert_eq!(super::as_written(" 2000000 "), "2e6");
    }
    use super::*;

    #[test]
    fn confidence_interval_matches_the_t_formula() {
        // Samples 1..=5: mean 3, s^2 = 2.5, half-width t(4) * sqrt(2.5 / 5).
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, 3.0);
        assert!((h - 2.776 * 0.5f64.sqrt()).abs() < 1e-12);
        assert!(mean_ci(&[7.0]).1.is_nan());
        assert!(t95(1) > t95(10) && t95(10) > t95(10_000));
    }

    #[test]
    fn axes_read_as_quantities_or_categories() {
        let rows = |vs: &[&str]| vs.iter().map(|v| vec![v.to_string()]).collect::<Vec<_>>();
        let a = Axis::new("switch.ecn.kmin", 0, &rows(&["20KB", "5KB", "4KiB"]));
        assert_eq!(a.label, "ECN Kmin (KB)");
        assert_eq!(a.values, ["4KiB", "5KB", "20KB"]);
        assert_eq!(a.ticks, ["4.1", "5", "20"]);
        let a = Axis::new(
            "topology.host_link.rate",
            0,
            &rows(&["100Gbps", "400Gbps", "25Gbps"]),
        );
        assert_eq!(a.line_label(), "host link rate (Gb/s, log scale)");
        assert!((a.pos[0] - 25f64.ln()).abs() < 1e-12);
        let a = Axis::new("nic.rto", 0, &rows(&["250ns", "1us"]));
        assert_eq!((a.label.as_str(), a.ticks[0].as_str()), ("NIC RTO (us)", "0.25"));
        let a = Axis::new("workload[0].size", 0, &rows(&["1MB", "lots"]));
        assert_eq!(
            (a.label.as_str(), a.pos.as_slice()),
            ("workload 0 size", &[0.0, 1.0][..])
        );
        assert_eq!(Metric::new("fct_ns.p99", 0).name, "FCT p99");
        assert_eq!(Metric::new("slowdown.p99", 0).floor, 1.0);
    }
}
