//! The fabric over time: goodput, and ECN marks with CNPs.

use super::chart::{Chart, Quantity, Series};
use super::{Outcome, Run, png};
use anyhow::Result;
use std::path::Path;

/// Goodput of all hosts over time, a line per variant.
pub fn throughput(path: &Path, run: &Run) -> Result<Outcome> {
    let title = format!("{}: goodput over time", run.title);
    let mut chart = Chart::new(
        &title,
        ("time", Quantity::Time),
        ("goodput, all hosts", Quantity::Rate),
    );
    for d in &run.variants {
        let s = &d.telemetry.sampler;
        let points = s
            .times
            .windows(2)
            .zip(s.totals.windows(2))
            .map(|(t, v)| {
                let dt = (t[1] - t[0]).as_secs_f64().max(1e-15);
                (
                    t[1].as_ns_f64(),
                    (v[1].delivered_bytes - v[0].delivered_bytes) as f64 * 8.0 / dt,
                )
            })
            .collect();
        chart.series.push(Series {
            label: d.name().to_string(),
            color: d.color(),
            dashed: false,
            points,
        });
    }
    if chart.series.iter().all(|s| s.points.len() < 2) {
        return Ok(Outcome::Skipped("the runs were shorter than two samples".into()));
    }
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}

/// ECN marks (solid) and CNPs (dashed), cumulative, per variant.
pub fn ecn(path: &Path, run: &Run) -> Result<Outcome> {
    let title = format!("{}: ECN marks (solid) and CNPs (dashed), cumulative", run.title);
    let mut chart = Chart::new(&title, ("time", Quantity::Time), ("count", Quantity::Count));
    chart.legend = super::chart::Corner::UpperLeft;
    let mut any = false;
    for d in &run.variants {
        let s = &d.telemetry.sampler;
        let t = |i: usize| s.times[i].as_ns_f64();
        let marks: Vec<(f64, f64)> = (0..s.times.len())
            .map(|i| (t(i), s.totals[i].ecn_marked as f64))
            .collect();
        let cnps: Vec<(f64, f64)> = (0..s.times.len())
            .map(|i| (t(i), s.totals[i].cnps as f64))
            .collect();
        let seen = |v: &[(f64, f64)]| v.last().is_some_and(|p| p.1 > 0.0);
        any |= seen(&marks) || seen(&cnps);
        chart.series.push(Series {
            label: format!("{} marks", d.name()),
            color: d.color(),
            dashed: false,
            points: marks,
        });
        if seen(&cnps) {
            chart.series.push(Series {
                label: String::new(),
                color: d.color(),
                dashed: true,
                points: cnps,
            });
        }
    }
    if !any {
        return Ok(Outcome::Skipped("no ECN marks or CNPs in this run".into()));
    }
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}
