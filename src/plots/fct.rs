//! Completion times: the slowdown CDF per variant, and FCT p50/p99 by flow size.

use super::chart::{Chart, Quantity, Series};
use super::{Outcome, Run, png};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// The FCT slowdown CDF, a line per variant.
pub fn cdf(path: &Path, run: &Run) -> Result<Outcome> {
    let title = format!("{}: FCT slowdown CDF", run.title);
    let mut chart = Chart::new(
        &title,
        ("slowdown (FCT / ideal FCT)", Quantity::Plain),
        ("fraction of flows", Quantity::Plain),
    );
    chart.log_x = None;
    chart.legend = super::chart::Corner::LowerRight;
    for d in &run.variants {
        let mut s: Vec<f64> = d.report.flows.iter().filter_map(|f| f.slowdown).collect();
        s.sort_by(f64::total_cmp);
        let n = d.report.flows.len().max(1) as f64;
        let unfinished = d.report.flows.len() - s.len();
        let label = match unfinished {
            0 => d.name().to_string(),
            u => format!("{} ({u} unfinished)", d.name()),
        };
        chart.series.push(Series {
            label,
            color: d.color(),
            dashed: false,
            points: s
                .iter()
                .enumerate()
                .map(|(i, &x)| (x, (i + 1) as f64 / n))
                .collect(),
        });
    }
    if chart.is_empty() {
        return Ok(Outcome::Skipped("no flow completed".into()));
    }
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}

/// FCT p50 (solid) and p99 (dashed) by flow size: power-of-two size bins, each drawn at the
/// mean size of its flows.
pub fn by_size(path: &Path, run: &Run) -> Result<Outcome> {
    let title = format!("{}: FCT by flow size (p50 solid, p99 dashed)", run.title);
    let mut chart = Chart::new(&title, ("flow size", Quantity::Bytes), ("FCT", Quantity::Time));
    // Log only when sizes span decades: a narrow span would get a single decade tick.
    chart.log_x = None;
    chart.log_y = None;
    chart.legend = super::chart::Corner::UpperLeft;
    let mut sizes = std::collections::BTreeSet::new();
    for d in &run.variants {
        let mut bins: BTreeMap<u32, (Vec<f64>, f64, usize)> = BTreeMap::new();
        for f in &d.report.flows {
            sizes.insert(64 - f.size_bytes.leading_zeros());
            if let Some(fct) = f.fct_ns {
                let b = bins.entry(64 - f.size_bytes.leading_zeros()).or_default();
                b.0.push(fct);
                b.1 += f.size_bytes as f64;
                b.2 += 1;
            }
        }
        let (mut p50, mut p99) = (Vec::new(), Vec::new());
        for (_, (mut v, total, n)) in bins {
            v.sort_by(f64::total_cmp);
            let size = total / n as f64;
            if let (Some(a), Some(b)) = (
                models::report::percentile(&v, 0.5),
                models::report::percentile(&v, 0.99),
            ) {
                p50.push((size, a));
                p99.push((size, b));
            }
        }
        chart.series.push(Series {
            label: format!("{} p50", d.name()),
            color: d.color(),
            dashed: false,
            points: p50,
        });
        chart.series.push(Series {
            label: String::new(),
            color: d.color(),
            dashed: true,
            points: p99,
        });
    }
    if sizes.len() < 2 {
        return Ok(Outcome::Skipped(
            "every flow has about one size (compare.png has its FCT)".into(),
        ));
    }
    if chart.is_empty() {
        return Ok(Outcome::Skipped("no flow completed".into()));
    }
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}
