//! The fabric over time: goodput, and ECN marks with CNPs.

use super::chart::{Chart, Marks, Quantity, Scale, Series};
use super::{Outcome, Run, png};
use anyhow::Result;
use std::path::Path;

/// Samples the goodput is averaged over: about 1/60 of the run, at least 5 (a single sample
/// interval holds a few packets, and its rate saws between them).
fn window(samples: usize) -> usize {
    (samples / 60).max(5)
}

/// `(time, rate)`: bytes delivered over the `w` samples centred on each sample (fewer at the
/// ends), as bit/s.
pub fn moving_rate(times: &[f64], bytes: &[u64], w: usize) -> Vec<(f64, f64)> {
    let n = times.len().min(bytes.len());
    let half = (w / 2).max(1);
    (0..n)
        .filter_map(|i| {
            let (a, b) = (i.saturating_sub(half), (i + half).min(n - 1));
            let dt = (times[b] - times[a]) * 1e-9;
            (b > a && dt > 0.0).then(|| (times[i], bytes[b].saturating_sub(bytes[a]) as f64 * 8.0 / dt))
        })
        .collect()
}

/// Goodput of all hosts over time, a line per variant: a moving average over a window the
/// title states.
pub fn throughput(path: &Path, run: &Run) -> Result<Outcome> {
    if run.variants.iter().all(|d| d.telemetry.sampler.times.len() < 3) {
        return Ok(Outcome::Skipped("the runs were shorter than two samples".into()));
    }
    let mut span_ns: f64 = 0.0;
    let mut series = Vec::new();
    for d in &run.variants {
        let s = &d.telemetry.sampler;
        let times: Vec<f64> = s.times.iter().map(|t| t.as_ns_f64()).collect();
        let bytes: Vec<u64> = s.totals.iter().map(|t| t.delivered_bytes).collect();
        let w = window(times.len());
        if times.len() > 1 {
            let interval = (times[times.len() - 1] - times[0]) / (times.len() - 1) as f64;
            span_ns = span_ns.max(interval * (2 * (w / 2).max(1)) as f64);
        }
        series.push(Series {
            label: d.name().to_string(),
            color: d.color(),
            points: moving_rate(&times, &bytes, w),
            marks: Marks::Line,
            ..Series::default()
        });
    }
    let window = Scale::for_max(Quantity::Time, span_ns).text(span_ns);
    let title = format!("{}: goodput over time (moving average over {window})", run.title);
    let mut chart = Chart::new(
        &title,
        ("time", Quantity::Time),
        ("goodput, all hosts", Quantity::Rate),
    );
    chart.series = series;
    note_identical(&mut chart.series);
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}

/// ECN marks (solid) and CNPs (dashed), cumulative, per variant.
pub fn ecn(path: &Path, run: &Run) -> Result<Outcome> {
    let title = format!("{}: ECN marks (solid) and CNPs (dashed), cumulative", run.title);
    let mut chart = Chart::new(&title, ("time", Quantity::Time), ("count", Quantity::Count));
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
        let none = if seen(&marks) { "" } else { " (none)" };
        chart.series.push(Series {
            label: format!("{} ECN marks{none}", d.name()),
            color: d.color(),
            points: marks,
            ..Series::default()
        });
        if seen(&cnps) {
            chart.series.push(Series {
                label: format!("{} CNPs", d.name()),
                color: d.color(),
                dashed: true,
                points: cnps,
                ..Series::default()
            });
        }
    }
    if !any {
        return Ok(Outcome::Skipped("no ECN marks or CNPs in this run".into()));
    }
    note_identical(&mut chart.series);
    png(path, |root| chart.draw(root))?;
    Ok(Outcome::Written)
}

/// A series drawn exactly over an earlier one hides it: its legend entry says so ("alert
/// (same as off)"), so a reader does not take the hidden one for missing.
pub(super) fn note_identical(series: &mut [Series]) {
    for j in 1..series.len() {
        let (before, rest) = series.split_at_mut(j);
        let s = &mut rest[0];
        if s.label.is_empty() || s.points.is_empty() {
            continue;
        }
        if let Some(first) = before
            .iter()
            .find(|o| !o.label.is_empty() && o.points == s.points)
        {
            s.label = format!("{} (same as {})", s.label, first.label);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_moving_rate_averages_a_sawtooth_to_its_mean() {
        // 1 us samples; alternately 2 and 8 bytes delivered per sample: 40 Mb/s on average.
        let times: Vec<f64> = (0..20).map(|i| i as f64 * 1000.0).collect();
        let mut bytes = vec![0u64];
        for i in 1..20 {
            bytes.push(bytes[i - 1] + if i % 2 == 0 { 2 } else { 8 });
        }
        let r = moving_rate(&times, &bytes, 4);
        assert_eq!(r.len(), 20);
        for &(_, v) in &r[2..18] {
            assert!((v - 40e6).abs() < 1e-6, "{v}");
        }
    }

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.into(),
            points: points.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn a_series_under_an_identical_one_is_named_in_the_legend() {
        let mut s = vec![
            series("off", &[(0.0, 1.0), (1.0, 2.0)]),
            series("alert", &[(0.0, 1.0), (1.0, 2.0)]),
            series("forward", &[(0.0, 1.0), (1.0, 3.0)]),
        ];
        note_identical(&mut s);
        let labels: Vec<&str> = s.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["off", "alert (same as off)", "forward"]);
    }
}
