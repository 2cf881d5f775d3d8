//! The comparison of variants: `compare.png` and `report.md`, built from `summary.json`
//! (so the numbers are the summary's), for one run or across runs (`sim compare`).

use crate::files;
use crate::metrics::{Row, Table, flow_table, job_table};
use crate::plots;
use crate::results_dir::{Kind, Staging};
use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn markdown_table(t: &Table) -> String {
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let header: Vec<String> = t.header.iter().map(|h| h.to_string()).collect();
    let mut s = line(&header);
    s += &format!("|{}\n", "---|".repeat(t.header.len()));
    for r in &t.rows {
        s += &line(r);
    }
    s
}

/// `report.md`: a Markdown table users can paste, and a line naming the best per metric,
/// unless `note` says why no variant can be named best (runs of different scenarios).
pub fn markdown(title: &str, rows: &[Row], note: Option<&str>) -> String {
    let mut s = format!("# {title}\n\n");
    if let Some(n) = note {
        let _ = writeln!(s, "> {n}\n");
    }
    // A run of collectives is judged by its jobs first, in nccl-tests' units.
    if let Some(jobs) = job_table(rows) {
        s += "## Collective jobs (as nccl-tests reports them)\n\n";
        s += &markdown_table(&jobs);
        s += "\n## Flows\n\n";
    }
    s += &markdown_table(&flow_table(rows));
    if rows.iter().any(|r| !r.findings.is_empty()) {
        s += "\n## Configuration warnings\n\nSettings that will not do what they were written for (`sim check` prints them with their fix).\n\n";
        let said = crate::check::by_variant(
            rows.iter()
                .flat_map(|r| r.findings.iter().map(move |f| (f, r.name.as_str()))),
        );
        for ([id, at, problem, fix], names) in said {
            let _ = writeln!(
                s,
                "- **{id}** at `{at}` ({}): {problem}. Fix: {fix}.",
                names.join(", ")
            );
        }
    }
    // Only variants whose flows all completed compete: a run that left flows unfinished is
    // never "best" (its FCTs describe the flows that got through, its goodput is partial).
    let complete: Vec<&Row> = rows.iter().filter(|r| r.complete()).collect();
    let best = |i: usize, lower: bool| {
        let all: Vec<Option<f64>> = rows.iter().map(|r| r.metric(i)).collect();
        winner(
            &complete
                .iter()
                .filter_map(|r| r.metric(i).map(|v| (v, r.name.as_str())))
                .collect::<Vec<_>>(),
            &all,
            lower,
        )
    };
    if rows.len() > 1 && note.is_none() {
        let mut first_job = rows.iter().flat_map(|r| r.jobs.iter().map(|j| j.name.as_str()));
        if let Some(job) = first_job.next() {
            let busbw: Vec<(f64, &str)> = complete
                .iter()
                .filter_map(|r| {
                    let j = r.jobs.iter().find(|j| j.name == job)?;
                    Some((j.busbw_gbps?, r.name.as_str()))
                })
                .collect();
            let all: Vec<Option<f64>> = rows
                .iter()
                .map(|r| r.jobs.iter().find(|j| j.name == job).and_then(|j| j.busbw_gbps))
                .collect();
            let _ = write!(s, "\nHighest busbw ({job}): {}.", winner(&busbw, &all, false));
        }
        let _ = write!(
            s,
            "\nLowest FCT p99: {}. Highest goodput: {}. Fewest drops: {}.\n",
            best(1, true),
            best(2, false),
            best(3, true)
        );
    }
    let unfinished: Vec<&str> = rows
        .iter()
        .filter(|r| !r.complete())
        .map(|r| r.name.as_str())
        .collect();
    if !unfinished.is_empty() {
        let _ = write!(
            s,
            "\nUnfinished flows (not compared): {}.\n",
            unfinished.join(", ")
        );
    }
    s
}

/// The best of the competing variants' `(value, name)` pairs (lower or higher is better),
/// as report.md names it: no winner when the best value is shared ("a tie", and between
/// whom when not everyone), nor when every variant, finished or not, has the same value;
/// a lone competitor is said to be alone.
pub fn winner(vals: &[(f64, &str)], all: &[Option<f64>], lower: bool) -> String {
    let Some(&(first, _)) = vals.first() else {
        return "none (no variant completed every flow)".into();
    };
    let best = vals
        .iter()
        .map(|v| v.0)
        .fold(first, |a, b| if lower { a.min(b) } else { a.max(b) });
    let number = |v: f64| {
        let t = format!("{v:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if all.len() > 1 && all.iter().all(|v| *v == Some(best)) {
        return format!("a tie ({} in every variant)", number(best));
    }
    let tied: Vec<String> = vals
        .iter()
        .filter(|v| v.0 == best)
        .map(|v| format!("**{}**", v.1))
        .collect();
    match tied.len() {
        1 if vals.len() == 1 && all.len() > 1 => {
            format!("{} (the only variant that completed every flow)", tied[0])
        }
        1 => tied[0].clone(),
        n if n == vals.len() => format!(
            "a tie ({} in every variant that completed every flow)",
            number(best)
        ),
        n => format!(
            "a tie between {} and {} ({})",
            tied[..n - 1].join(", "),
            tied[n - 1],
            number(best)
        ),
    }
}

/// Write `report.md` (with `note` first, the runs compared and the command that made each,
/// and the plots not written with why) and, with `png`, `compare.png` into `dir`.
pub fn write(
    dir: &Path,
    title: &str,
    rows: &[Row],
    png: bool,
    note: Option<&str>,
    runs: &[(String, String)],
    skipped: &[(String, String)],
) -> Result<()> {
    if png {
        plots::compare(&dir.join("compare.png"), title, rows)?;
    }
    let mut md = markdown(title, rows, note);
    if !runs.is_empty() {
        md += "
## Runs

";
        for (label, command) in runs {
            let _ = writeln!(md, "- `{label}`: `{command}`");
        }
    }
    if !skipped.is_empty() {
        md += "\n## Plots not written\n\n";
        for (file, why) in skipped {
            let _ = writeln!(md, "- `{file}`: {why}.");
        }
    }
    files::write(&dir.join("report.md"), md.as_bytes())
}

/// Why runs cannot be ranked against each other, if they cannot: they are of different
/// scenarios (another name, host count or flow count: another fabric or traffic), given as
/// (label, scenario name, hosts, flows) per run. Runs of one scenario with other settings
/// (`--set switch.buffer=...`) are what a comparison is for, and are ranked.
fn mismatch(runs: &[(String, String, u64, u64)]) -> Option<String> {
    let first = runs.first()?;
    let same = |r: &(String, String, u64, u64)| (&r.1, r.2, r.3) == (&first.1, first.2, first.3);
    if runs.iter().all(same) {
        return None;
    }
    let list: Vec<String> = runs
        .iter()
        .map(|(label, name, hosts, flows)| format!("{label}: {name}, {hosts} hosts, {flows} flows"))
        .collect();
    Some(format!(
        "These runs are of different scenarios ({}): their variants did not see the same fabric and traffic, so the numbers are shown side by side and no variant is named best.",
        list.join("; ")
    ))
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
    let mut scenarios = Vec::new();
    let mut runs = Vec::new();
    // A run is named by its folder, or by the path given when two folders share a name
    // (`a/leaf-spine` and `results/leaf-spine`).
    let base = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned());
    let label_of = |d: &Path| match base(d) {
        Some(b)
            if args
                .dirs
                .iter()
                .filter(|o| base(o).as_deref() == Some(&b))
                .count()
                == 1 =>
        {
            b
        }
        _ => d.display().to_string(),
    };
    for d in &args.dirs {
        let path = d.join("summary.json");
        let text = models::input::read_text(&path, models::input::MAX_DATA)
            .map_err(|e| crate::exit::BadInput::new(format!("{}: cannot read it: {e}", path.display())))?;
        let bad = |e: &dyn std::fmt::Display| {
            crate::exit::BadInput::new(format!(
                "{}: not the summary.json of a `sim run`: {e}",
                path.display()
            ))
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| bad(&e))?;
        let label = label_of(d);
        all.extend(crate::metrics::rows(&v, Some(&label)).map_err(|e| bad(&format!("{e:#}")))?);
        let flows = v["variants"][0]["flows_total"].as_u64().unwrap_or(0);
        let name = v["scenario"].as_str().unwrap_or("?").to_string();
        scenarios.push((label.clone(), name, v["hosts"].as_u64().unwrap_or(0), flows));
        // What made it: the command line its summary.json keeps (what differs between two
        // runs of one scenario is usually a --set).
        let command = match &v["command_line"] {
            Value::Array(words) => words
                .iter()
                .map(|w| w.as_str().unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(" "),
            _ => "(not recorded)".to_string(),
        };
        runs.push((label.clone(), command));
        names.push(label);
    }
    let note = mismatch(&scenarios);
    if let Some(n) = &note {
        errln!("note: {n}");
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results/compare"));
    let inputs: Vec<&Path> = args.dirs.iter().map(PathBuf::as_path).collect();
    let staging = Staging::prepare(&out, Kind::Compare, &inputs)?;
    let title = format!("{} compared", names.join(" vs "));
    write(staging.dir(), &title, &all, true, note.as_deref(), &runs, &[])?;
    crate::html::write(staging.dir(), &title, &all, note.as_deref(), &runs, &[])?;
    staging.commit().with_context(|| {
        format!(
            "comparison not written to {} (anything there is as it was)",
            out.display()
        )
    })?;
    outln!("comparison: {}", out.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::winner;

    #[test]
    fn a_shared_best_names_no_winner() {
        let all = [Some(0.0), Some(0.0), Some(0.0)];
        let vals = [(0.0, "roce"), (0.0, "uec"), (0.0, "rccc")];
        assert_eq!(winner(&vals, &all, true), "a tie (0 in every variant)");
        // Unfinished variants do not compete, but a value every variant has is still a tie.
        assert_eq!(winner(&vals[..1], &all, true), "a tie (0 in every variant)");
        let all = [Some(0.0), Some(5.0), Some(0.0)];
        let vals = [(0.0, "roce"), (5.0, "uec"), (0.0, "rccc")];
        assert_eq!(
            winner(&vals, &all, true),
            "a tie between **roce** and **rccc** (0)"
        );
        assert_eq!(winner(&vals, &all, false), "**uec**");
        let four = [(0.0, "a"), (0.0, "b"), (0.0, "c"), (1.0, "d")];
        let all4 = [Some(0.0), Some(0.0), Some(0.0), Some(1.0)];
        assert_eq!(
            winner(&four, &all4, true),
            "a tie between **a**, **b** and **c** (0)"
        );
        assert_eq!(
            winner(
                &[(0.0, "a"), (0.0, "b")],
                &[Some(0.0), Some(0.0), Some(3.0)],
                true
            ),
            "a tie (0 in every variant that completed every flow)"
        );
        assert_eq!(
            winner(&[(1.5, "roce")], &[Some(1.5), Some(0.5)], true),
            "**roce** (the only variant that completed every flow)"
        );
        assert_eq!(
            winner(&[], &[Some(1.0)], true),
            "none (no variant completed every flow)"
        );
        assert_eq!(
            winner(&[(12.25, "a"), (12.25, "b")], &[Some(12.25), Some(12.25)], false),
            "a tie (12.25 in every variant)"
        );
    }
}
