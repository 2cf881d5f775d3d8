//! The comparison of variants: `compare.png` and `report.md`, built from `summary.json`
//! (so the numbers are the summary's), for one run or across runs (`sim compare`).

use crate::plots;
use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One variant's headline numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub completed: u64,
    pub total: u64,
    pub fct_p50_us: f64,
    pub fct_p99_us: f64,
    pub fct_max_us: f64,
    pub slowdown_p50: f64,
    pub slowdown_p99: f64,
    pub goodput_gbps: f64,
    pub drops: u64,
    pub trimmed: u64,
    pub pauses: u64,
    pub retransmitted: u64,
    pub rtos: u64,
}

/// The metrics `compare.png` draws: label, unit, value.
pub const METRICS: [(&str, &str); 7] = [
    ("FCT p50", "us"),
    ("FCT p99", "us"),
    ("goodput", "Gb/s"),
    ("drops", "packets"),
    ("PFC pauses", "frames"),
    ("trims", "packets"),
    ("retransmits", "packets"),
];

impl Row {
    pub fn metric(&self, i: usize) -> f64 {
        match i {
            0 => self.fct_p50_us,
            1 => self.fct_p99_us,
            2 => self.goodput_gbps,
            3 => self.drops as f64,
            4 => self.pauses as f64,
            5 => self.trimmed as f64,
            _ => self.retransmitted as f64,
        }
    }
}

/// Rows of a `summary.json`, variant names prefixed with `prefix` when given.
pub fn rows(summary: &Value, prefix: Option<&str>) -> Result<Vec<Row>> {
    let variants = summary["variants"]
        .as_array()
        .context("summary.json has no `variants` array")?;
    let f = |v: &Value, k: &str| v.pointer(k).and_then(Value::as_f64).unwrap_or(0.0);
    let u = |v: &Value, k: &str| v.pointer(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(variants
        .iter()
        .map(|v| Row {
            name: match prefix {
                Some(p) => format!("{p}/{}", v["name"].as_str().unwrap_or("?")),
                None => v["name"].as_str().unwrap_or("?").to_string(),
            },
            completed: u(v, "/flows_completed"),
            total: u(v, "/flows_total"),
            fct_p50_us: f(v, "/fct_ns/p50") / 1e3,
            fct_p99_us: f(v, "/fct_ns/p99") / 1e3,
            fct_max_us: f(v, "/fct_ns/max") / 1e3,
            slowdown_p50: f(v, "/slowdown/p50"),
            slowdown_p99: f(v, "/slowdown/p99"),
            goodput_gbps: f(v, "/goodput_gbps"),
            drops: u(v, "/drops"),
            trimmed: u(v, "/trimmed"),
            pauses: u(v, "/pfc_pause_frames"),
            retransmitted: u(v, "/retransmitted_packets"),
            rtos: u(v, "/rtos"),
        })
        .collect())
}

/// `report.md`: a Markdown table users can paste, and a line naming the best per metric.
pub fn markdown(title: &str, rows: &[Row]) -> String {
    let mut s = format!("# {title}\n\n");
    s += "| variant | flows completed | FCT p50 (us) | FCT p99 (us) | FCT max (us) | slowdown p50 | slowdown p99 | goodput (Gb/s) | drops | trims | PFC pauses | retransmits | timeouts |\n";
    s += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {}/{} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} | {:.3} | {} | {} | {} | {} | {} |",
            r.name,
            r.completed,
            r.total,
            r.fct_p50_us,
            r.fct_p99_us,
            r.fct_max_us,
            r.slowdown_p50,
            r.slowdown_p99,
            r.goodput_gbps,
            r.drops,
            r.trimmed,
            r.pauses,
            r.retransmitted,
            r.rtos
        );
    }
    if rows.len() > 1 {
        let best = |i: usize, lower: bool| {
            rows.iter()
                .min_by(|a, b| {
                    let (x, y) = (a.metric(i), b.metric(i));
                    if lower { x.total_cmp(&y) } else { y.total_cmp(&x) }
                })
                .map(|r| r.name.clone())
                .unwrap_or_default()
        };
        let _ = write!(
            s,
            "\nLowest FCT p99: **{}**. Highest goodput: **{}**. Fewest drops: **{}**.\n",
            best(1, true),
            best(2, false),
            best(3, true)
        );
    }
    s
}

/// Write `compare.png` and `report.md` into `dir`.
pub fn write(dir: &Path, title: &str, rows: &[Row]) -> Result<()> {
    plots::compare(&dir.join("compare.png"), title, rows)?;
    crate::output::write_atomic(&dir.join("report.md"), markdown(title, rows).as_bytes())
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Results directories of earlier runs (each with a summary.json).
    #[arg(required = true, num_args = 2..)]
    pub dirs: Vec<PathBuf>,
    /// Where to write compare.png and report.md [default: results/compare].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `sim compare DIR_A DIR_B ...`.
pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    let mut all = Vec::new();
    let mut names = Vec::new();
    for d in &args.dirs {
        let path = d.join("summary.json");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let v: Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        let label = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| d.display().to_string());
        all.extend(rows(&v, Some(&label))?);
        names.push(label);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results/compare"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    write(&out, &format!("{} compared", names.join(" vs ")), &all)?;
    println!("comparison: {}", out.display());
    Ok(ExitCode::SUCCESS)
}
