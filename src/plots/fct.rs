//! Completion times: the slowdown CDF per variant, and FCT p50/p99 by flow size.

use super::chart::{Chart, Marks, Quantity, Series};
use super::{Outcome, Run, png};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Size bins below which `fct_by_size.png` draws dots only: a line through two or three bins
/// would draw a trend the data does not have.
const MIN_BINS_FOR_LINE: usize = 4;

/// The FCT slowdown CDF, a line per variant: an empirical CDF, so a step at each flow's
/// slowdown (a few flows are a few steps, not diagonals between them).
pub fn cdf(path: &Path, run: &Run) -> Result<Outcome> {
    let title = format!("{}: FCT slowdown CDF", run.title);
    let mut chart = Chart::new(
        &title,
        ("slowdown (FCT / ideal FCT)", Quantity::Plain),
        ("fraction of flows", Quantity::Plain),
    );
    chart.log_x = None;
    chart.pad_x = true;
    let mut drawn: Vec<(String, Vec<f64>, usize)> = Vec::new();
    for d in &run.variants {
        let mut s: Vec<f64> = d.report.flows.iter().filter_map(|f| f.slowdown).collect();
        s.sort_by(f64::total_cmp);
        let unfinished = d.report.flows.len() - s.len();
        let mut label = match unfinished {
            0 => d.name().to_string(),
            u => format!("{} ({u} unfinished)", d.name()),
        };
        // A CDF drawn over an earlier one hides it: the legend says so.
        let same = |v: &[f64]| {
            v.len() == s.len()
                && v.iter()
                    .zip(&s)
                    .all(|(a, b)| (a - b).abs() <= 1e-3 * a.abs().max(1.0))
        };
        if let Some(first) = drawn.iter().find(|o| o.2 == d.report.flows.len() && same(&o.1)) {
            label = format!("{label} (same as {})", first.0);
        }
        drawn.push((d.name().into_owned(), s.clone(), d.report.flows.len()));
        chart.series.push(Series {
            label,
            color: d.color(),
            points: cdf_steps(&s, d.report.flows.len()),
            marks: Marks::Line,
            ..Series::default()
        });
    }
    if chart.is_empty() {
        return Ok(Outcome::Skipped("no flow completed".into()));
    }
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}

/// FCT p50 (solid) and p99 (dashed) by flow size: power-of-two size bins, each drawn at the
/// mean size of its flows; dots only when there are too few bins for a line to mean anything.
pub fn by_size(path: &Path, run: &Run) -> Result<Outcome> {
    let mut sizes = std::collections::BTreeSet::new();
    let mut per_variant = Vec::new();
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
        per_variant.push((d, p50, p99));
    }
    if sizes.len() < 2 {
        return Ok(Outcome::Skipped(
            "every flow has about one size (compare.png has its FCT)".into(),
        ));
    }
    let bins = per_variant.iter().map(|v| v.1.len()).max().unwrap_or(0);
    let lines = bins >= MIN_BINS_FOR_LINE;
    let title = if lines {
        format!("{}: FCT by flow size (p50 solid, p99 dashed)", run.title)
    } else {
        format!(
            "{}: FCT by flow size, {} size bins (p50 dots, p99 rings)",
            run.title, bins
        )
    };
    let mut chart = Chart::new(&title, ("flow size", Quantity::Bytes), ("FCT", Quantity::Time));
    // Log only when sizes span decades: a narrow span would get a single decade tick.
    chart.log_x = None;
    chart.log_y = None;
    chart.pad_x = true;
    for (d, p50, p99) in per_variant {
        let marks = if lines { Marks::Auto } else { Marks::Dots };
        chart.series.push(Series {
            label: format!("{} p50", d.name()),
            color: d.color(),
            points: p50,
            marks,
            ..Series::default()
        });
        chart.series.push(Series {
            label: format!("{} p99", d.name()),
            color: d.color(),
            dashed: true,
            points: p99,
            marks: if lines { Marks::Auto } else { Marks::Rings },
            ..Series::default()
        });
    }
    if chart.is_empty() {
        return Ok(Outcome::Skipped("no flow completed".into()));
    }
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}

/// An empirical CDF of `sorted` values as a step function, each value lifting the fraction
/// by 1/`n` (`n` may exceed the values: unfinished flows count in the total but never
/// arrive): from (first, 0) up at each distinct value, flat until the next.
pub fn cdf_steps(sorted: &[f64], n: usize) -> Vec<(f64, f64)> {
    let n = n.max(1) as f64;
    let mut out = Vec::new();
    let mut below = 0usize;
    let mut i = 0;
    while i < sorted.len() {
        let x = sorted[i];
        let mut j = i;
        while j < sorted.len() && sorted[j] == x {
            j += 1;
        }
        out.push((x, below as f64 / n));
        below = j;
        out.push((x, below as f64 / n));
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cdf_steps;

    #[test]
    fn an_empirical_cdf_is_drawn_as_steps() {
        // Three flows of four finished (one unfinished): up a quarter at each value, the
        // tie at 2.0 one step of a half, flat in between, never reaching 1.
        let s = cdf_steps(&[1.0, 2.0, 2.0], 4);
        assert_eq!(s, vec![(1.0, 0.0), (1.0, 0.25), (2.0, 0.25), (2.0, 0.75)]);
        // Every segment is flat or vertical: no diagonal between two flows.
        assert!(s.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1));
        assert!(cdf_steps(&[], 3).is_empty());
    }
}
