//! The comparison of variants: `compare.png` and `report.md`, built from `summary.json`
//! (so the numbers are the summary's), for one run or across runs (`sim compare`).

use crate::files::write_atomic;
use crate::metrics::Row;
use crate::plots;
use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    write_atomic(&dir.join("report.md"), markdown(title, rows).as_bytes())
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
        all.extend(crate::metrics::rows(&v, Some(&label))?);
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
