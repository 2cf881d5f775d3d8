//! `queues.png`: queues against the thresholds that act on them: each variant's hottest
//! egress queues with the ECN marking band (Kmin, Kmax) and the trim threshold.

use super::chart::{Chart, Level, Quantity, Scale, Series};
use super::{Outcome, Run, VariantData, png, series_color};
use anyhow::Result;
use models::telemetry::Sparse;
use plotters::prelude::*;
use std::path::Path;

/// Hottest series drawn per panel.
const HOT: usize = 4;

/// The `HOT` sampled ports with the highest peak of `series`, hottest first, leaving out
/// those that never reached 2 % of the hottest's peak (flat lines at zero say nothing).
pub(super) fn hottest(series: &[Sparse]) -> Vec<usize> {
    let peak = |i: usize| series[i].peak();
    let mut idx: Vec<usize> = (0..series.len()).filter(|&i| peak(i) > 0).collect();
    idx.sort_by_key(|&i| std::cmp::Reverse(peak(i)));
    let top = idx.first().map_or(0, |&i| peak(i));
    idx.retain(|&i| peak(i) as u64 * 50 >= top as u64);
    idx.truncate(HOT);
    idx
}

/// Lay out one panel per variant (one row, or two columns) and draw each.
fn panels(
    path: &Path,
    run: &Run,
    title: &str,
    draw: impl Fn(&super::Area, &VariantData) -> Result<()>,
) -> Result<()> {
    png(path, |root| {
        let n = run.variants.len().max(1);
        let cols = if n <= 2 { n } else { 2 };
        let rows = n.div_ceil(cols);
        let (top, body) = root.split_vertically(44);
        top.titled(&format!("{}: {title}", run.title), ("sans-serif", 22))
            .map_err(super::e)?;
        let cells = body.split_evenly((rows, cols));
        for (d, cell) in run.variants.iter().zip(cells.iter()) {
            draw(cell, d)?;
        }
        Ok(())
    })
}

pub(super) fn time_series(d: &VariantData, values: &[u32]) -> Vec<(f64, f64)> {
    d.telemetry
        .sampler
        .times
        .iter()
        .zip(values)
        .map(|(t, &q)| (t.as_ns_f64(), q as f64))
        .collect()
}

/// `queues.png`.
pub fn queues(path: &Path, run: &Run) -> Result<Outcome> {
    if run
        .variants
        .iter()
        .all(|d| hottest(&d.telemetry.sampler.queues).is_empty())
    {
        return Ok(Outcome::Skipped("no switch queue ever held a frame".into()));
    }
    // A port keeps one colour in every panel: colours go to ports in the order the panels
    // first show them.
    let mut colour_of: Vec<String> = Vec::new();
    for d in &run.variants {
        let s = &d.telemetry.sampler;
        for i in hottest(&s.queues) {
            let label = d.telemetry.label(s.ports[i].0);
            if !colour_of.contains(&label) {
                colour_of.push(label);
            }
        }
    }
    // One y unit for every panel (as pfc_buffers.png): the highest queue or threshold drawn.
    let highest = run
        .variants
        .iter()
        .flat_map(|d| {
            let s = &d.telemetry.sampler;
            let queues = hottest(&s.queues)
                .into_iter()
                .flat_map(|i| s.queues[i].dense(s.times.len()))
                .map(f64::from);
            let v = &d.variant.switch;
            let ecn = v.ecn.iter().flat_map(|e| [e.kmin.0 as f64, e.kmax.0 as f64]);
            let trim = v.trim.as_ref().and_then(|t| t.threshold).map(|t| t.0 as f64);
            queues.chain(ecn).chain(trim).collect::<Vec<f64>>()
        })
        .fold(0.0, f64::max);
    let unit = Scale::for_max(Quantity::Bytes, highest);
    panels(
        path,
        run,
        "hottest egress queues against the ECN and trim thresholds",
        |cell, d| {
            let s = &d.telemetry.sampler;
            let title = d.name().to_string();
            let mut chart = Chart::new(&title, ("time", Quantity::Time), ("queue", Quantity::Bytes));
            chart.caption = 18;
            chart.y_scale = Some(unit);
            for i in hottest(&s.queues) {
                let label = d.telemetry.label(s.ports[i].0);
                let k = colour_of.iter().position(|l| *l == label).unwrap_or(0);
                chart.series.push(Series {
                    label,
                    color: series_color(k),
                    points: time_series(d, &s.queues[i].dense(s.times.len())),
                    ..Series::default()
                });
            }
            if let Some(ecn) = &d.variant.switch.ecn {
                chart.levels.push(Level {
                    label: "ECN Kmin".into(),
                    y: ecn.kmin.0 as f64,
                    color: RGBColor(120, 120, 120),
                });
                chart.levels.push(Level {
                    label: "ECN Kmax".into(),
                    y: ecn.kmax.0 as f64,
                    color: BLACK,
                });
            }
            if let Some(t) = d.variant.switch.trim.as_ref().and_then(|t| t.threshold) {
                chart.levels.push(Level {
                    label: "trim threshold".into(),
                    y: t.0 as f64,
                    color: RGBColor(200, 0, 0),
                });
            }
            if chart.is_empty() {
                return nothing(cell, &title, "no queue held a frame");
            }
            chart.levels = merge_equal(std::mem::take(&mut chart.levels));
            super::time::note_identical(&mut chart.series);
            chart.draw(cell)
        },
    )?;
    Ok(Outcome::Written)
}

/// Thresholds at the same value are one line, named for all of them ("ECN Kmax = trim
/// threshold"): drawn apart, the last would hide the others exactly. It takes the last's
/// colour (the one that was drawn on top).
fn merge_equal(levels: Vec<Level>) -> Vec<Level> {
    let mut out: Vec<Level> = Vec::new();
    for l in levels {
        match out.iter_mut().find(|o| o.y == l.y) {
            Some(o) => {
                o.label = format!("{} = {}", o.label, l.label);
                o.color = l.color;
            }
            None => out.push(l),
        }
    }
    out
}

/// A panel that says why it is empty.
fn nothing(cell: &super::Area, title: &str, why: &str) -> Result<()> {
    let (w, h) = cell.dim_in_pixel();
    cell.draw(&Text::new(title.to_string(), (20, 10), ("sans-serif", 18)))
        .map_err(super::e)?;
    cell.draw(&Text::new(
        why.to_string(),
        (w as i32 / 4, h as i32 / 2),
        ("sans-serif", 20),
    ))
    .map_err(super::e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_at_one_value_are_one_named_line() {
        let level = |label: &str, y: f64| Level {
            label: label.into(),
            y,
            color: BLACK,
        };
        let merged = merge_equal(vec![
            level("ECN Kmin", 16e3),
            level("ECN Kmax", 64e3),
            level("trim threshold", 64e3),
        ]);
        let labels: Vec<&str> = merged.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["ECN Kmin", "ECN Kmax = trim threshold"]);
    }
}
