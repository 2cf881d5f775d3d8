//! Statistics and plots of a sweep: for every axis and metric, a line per variant with the
//! mean over seeds and a 95 % confidence interval from Student's t across the seeds. With
//! two axes, the other of which has at most four values (FEC on and off, a few thresholds),
//! a line per variant and value of the other axis (`sweep_stats.csv`'s variant column says
//! `roce (fec=none)`): a mean over settings that behave apart, some of whose runs fail,
//! would draw neither. Otherwise, with several axes, each seed's sample is its mean over the
//! other axes' values (the marginal effect of this axis). `sweep_stats.csv` has the numbers the plots draw; the plots clip the
//! band to what the metric can physically be (counts, times and goodput are never negative, a
//! slowdown never below 1), the CSV keeps the interval unclipped.
//!
//! Axes read as the user wrote them: quantities ("20KB", "4KiB", "1us", "100Gbps", "3m") and
//! numbers are placed by value, in the unit their magnitude calls for (on a log axis when
//! they span a decade or more) and labelled at the swept values; anything else is evenly
//! spaced categories labelled with the raw values. Failed runs are marked with a red cross at
//! their axis value and counted under the title; the means leave them out. A sweep of exactly
//! two axes also gets a heat map per metric (`heatmap.rs`). A plot with nothing to show (every
//! point failed, or the metric is empty everywhere) is not written.

use super::axes::{Axis, Keyed, Kind, Metric, Sweep, log_label, mean_ci, num, readable, ticks, unit};
use super::heatmap;
use crate::plots::{e, heading, png, variant_color as color};
use anyhow::Result;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Draw the plots and write `sweep_stats.csv`. `rows` are sweep.csv's rows under `header`.
pub fn write(
    out: &Path,
    name: &str,
    keys: &[String],
    metrics: &[String],
    header: &[String],
    rows: &[Vec<String>],
) -> Result<()> {
    let name = &*crate::console::short(name);
    let col = |c: &str| header.iter().position(|h| h == c);
    let (Some(variant), Some(status), Some(seed), Some(point)) =
        (col("variant"), col("status"), col("seed"), col("point"))
    else {
        return Ok(());
    };
    let mut variants: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| !r[variant].is_empty()) {
        if !variants.contains(&r[variant]) {
            variants.push(r[variant].clone());
        }
    }
    let axes: Vec<Axis> = keys
        .iter()
        .filter_map(|k| Some(Axis::new(k, col(k)?, rows)))
        .collect();
    let metrics: Vec<Metric> = metrics
        .iter()
        .filter_map(|m| Some(Metric::new(m, col(m)?)))
        .collect();
    let sw = Sweep {
        rows,
        variant,
        status,
        seed,
        point,
        keys: axes.iter().map(|a| (a.key.clone(), a.col)).collect(),
        variants,
    };
    let mut stats = csv::Writer::from_writer(Vec::new());
    stats.write_record([
        "axis",
        "value",
        "variant",
        "metric",
        "n",
        "mean",
        "ci95_low",
        "ci95_high",
    ])?;
    let mut skipped = Vec::new();
    let why = |m: &Metric| match rows.iter().any(|r| sw.ok(r)) {
        true => format!("no successful run has a value of {}", m.key),
        false => "every run failed".to_string(),
    };
    let all_zero = |m: &Metric| {
        rows.iter()
            .filter(|r| sw.ok(r))
            .all(|r| m.raw(r).is_none_or(|v| v == 0.0))
    };
    let zero = |m: &Metric| format!("{} is 0 in every run", m.name);
    for (ai, axis) in axes.iter().enumerate() {
        // The other axis of two, when it has few values: a line for each.
        let split = match axes.as_slice() {
            [a, b] if keys.len() == 2 => Some(if ai == 0 { b } else { a }).filter(|o| o.values.len() <= 4),
            _ => None,
        };
        for metric in &metrics {
            let series = series(&sw, axis, split, metric, &mut stats)?;
            let file = format!("sweep_{}_vs_{}.png", slug(&metric.key), slug(&axis.key));
            if series.points.iter().all(|s| s.is_empty()) {
                skipped.push(format!("{file} ({})", why(metric)));
                continue;
            }
            if all_zero(metric) {
                skipped.push(format!("{file} ({})", zero(metric)));
                continue;
            }
            let title = format!("{name}: {} vs {}", metric.name, readable(&axis.key));
            line(&out.join(file), &title, &sw, axis, metric, &series)?;
        }
    }
    // nccl-tests users plot bus bandwidth against message size: `busbw.png` when the sweep
    // varies a workload's size and measures busbw.
    let size_axis = axes
        .iter()
        .find(|a| a.key.starts_with("workload[") && a.key.ends_with("].size"));
    let busbw = metrics.iter().find(|m| m.key == "jobs.0.busbw_gbps");
    if let (Some(axis), Some(metric)) = (size_axis, busbw) {
        let series = series(&sw, axis, None, metric, &mut csv::Writer::from_writer(Vec::new()))?;
        if series.points.iter().any(|s| !s.is_empty()) {
            let title = format!("{name}: bus bandwidth by message size (nccl-tests busbw)");
            line(&out.join("busbw.png"), &title, &sw, axis, metric, &series)?;
        }
    }
    if let [a, b] = axes.as_slice()
        && keys.len() == 2
    {
        for metric in &metrics {
            let file = format!("sweep_heatmap_{}.png", slug(&metric.key));
            let title = format!("{name}: {} (mean over seeds)", metric.name);
            if rows.iter().any(|r| sw.ok(r)) && all_zero(metric) {
                skipped.push(format!("{file} ({})", zero(metric)));
            } else if !heatmap::write(&out.join(&file), &title, &sw, [a, b], metric)? {
                skipped.push(format!("{file} ({})", why(metric)));
            }
        }
    }
    if !skipped.is_empty() {
        errln!("sweep plots not written, nothing to show: {}", skipped.join("; "));
    }
    crate::files::write(&out.join("sweep_stats.csv"), &stats.into_inner()?)
}

/// Axis value -> line -> seed -> the metric at each combination of the other axes.
type Groups = BTreeMap<String, BTreeMap<usize, BTreeMap<String, Vec<f64>>>>;

/// The lines of one plot: their names (a variant, or a variant at one value of the split
/// axis) and points.
pub(super) struct Lines {
    pub names: Vec<String>,
    pub points: Vec<Vec<Pt>>,
}

/// One point of a line: axis position, mean, 95 % half-width (NaN for one seed); sweep.csv's
/// units.
type Pt = (f64, f64, f64);

/// Per variant, the points of one metric against one axis, each also written to
/// `sweep_stats.csv`.
fn series(
    sw: &Sweep,
    axis: &Axis,
    split: Option<&Axis>,
    metric: &Metric,
    stats: &mut csv::Writer<Vec<u8>>,
) -> Result<Lines> {
    let per = split.map_or(1, |s| s.seen.len());
    let names: Vec<String> = sw
        .variants
        .iter()
        .flat_map(|v| match split {
            Some(s) => {
                let short = s.key.rsplit('.').next().unwrap_or(&s.key);
                s.seen.iter().map(|x| format!("{v} ({short}={x})")).collect()
            }
            None => vec![v.clone()],
        })
        .collect();
    let mut groups: Groups = BTreeMap::new();
    for r in sw.rows.iter().filter(|r| sw.ok(r)) {
        let Some(y) = metric.raw(r) else { continue };
        let vi = sw.variants.iter().position(|v| *v == r[sw.variant]).unwrap_or(0);
        let si = split.map_or(0, |s| s.seen.iter().position(|x| *x == r[s.col]).unwrap_or(0));
        groups
            .entry(r[axis.col].clone())
            .or_default()
            .entry(vi * per + si)
            .or_default()
            .entry(r[sw.seed].clone())
            .or_default()
            .push(y);
    }
    let mut series: Vec<Vec<Pt>> = vec![Vec::new(); names.len()];
    for value in &axis.seen {
        let x = axis.index(value).map_or(0.0, |i| axis.pos[i]);
        for (vi, by_seed) in groups.get(value).into_iter().flatten() {
            // One sample per seed: its mean over the other axes' values. The interval is
            // across seeds (replications), not across the other parameters.
            let ys: Vec<f64> = by_seed
                .values()
                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
                .collect();
            let (mean, half) = mean_ci(&ys);
            series[*vi].push((x, mean, half));
            let (lo, hi) = if half.is_nan() {
                (String::new(), String::new())
            } else {
                ((mean - half).to_string(), (mean + half).to_string())
            };
            let n = ys.len().to_string();
            let m = mean.to_string();
            stats.write_record([&axis.key, value, &names[*vi], &metric.key, &n, &m, &lo, &hi])?;
        }
    }
    for s in &mut series {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(Lines {
        names,
        points: series,
    })
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Mean lines with shaded 95 % bands clipped to the metric's floor, error bars, and a red
/// cross on the axis at each value where runs failed.
fn line(path: &Path, title: &str, sw: &Sweep, axis: &Axis, metric: &Metric, lines: &Lines) -> Result<()> {
    let series = &lines.points;
    let fails: Vec<(f64, usize, usize)> = (0..axis.values.len())
        .filter_map(|i| {
            let (failed, runs) = sw.runs(|r| r[axis.col] == axis.values[i], None);
            (failed > 0).then_some((axis.pos[i], failed, runs))
        })
        .collect();
    let mut notes: Vec<String> = sw.failures().into_iter().collect();
    if !fails.is_empty() {
        notes.push("\u{2715} k/n: k of the n runs at that value failed; the means leave them out".into());
    }
    // Values in the unit the means call for (a wide band may reach a larger one), the
    // band's low end clipped to the floor; a log axis when the means span two decades.
    let to = metric.to_base;
    let ys = unit(
        metric.kind,
        series
            .iter()
            .flatten()
            .fold(0.0f64, |m, p| m.max((p.1 * to).abs())),
    );
    let (k, floor) = (to / ys.div, metric.floor / ys.div);
    let band = |&(_, m, h): &Pt| {
        let h = if h.is_nan() { 0.0 } else { h };
        (((m - h) * k).max(floor), (m + h) * k)
    };
    let span =
        |v: &mut dyn Iterator<Item = f64>| v.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (m0, m1) = span(&mut series.iter().flatten().map(|p| p.1 * k));
    let log = m0 > 0.0 && m1 / m0 >= 100.0;
    let (lo, hi) = span(&mut series.iter().flatten().flat_map(|p| {
        let b = band(p);
        [b.0, b.1, p.1 * k]
    }));
    let whole = metric.kind == Kind::Count && ys.div == 1.0;
    let (y0, mut y1) = if log {
        let pos = series
            .iter()
            .flatten()
            .map(band)
            .map(|b| b.0)
            .filter(|v| *v > 0.0);
        (pos.fold(m0, f64::min) / 1.3, hi * 1.1)
    } else {
        let y0 = if floor.is_finite() {
            floor.min(lo)
        } else {
            lo.min(0.0)
        };
        (y0, hi.max(y0 + if whole { 5.0 } else { 1e-9 }))
    };
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    // Plot positions: the value, or its logarithm (the band clipped to the bottom).
    let fy = move |v: f64| if log { v.max(y0).ln() } else { v };
    let drawn: Vec<usize> = (0..series.len()).filter(|&i| !series[i].is_empty()).collect();
    let head = 52 + 20 * notes.len() as u32;
    // Room above the data for the legend (upper right), about 22 px an entry of ~540.
    let entries = drawn.len() + usize::from(!fails.is_empty());
    let f = ((entries * 22 + 30) as f64 / (crate::plots::HEIGHT - head - 100) as f64).min(0.5);
    let (p0, p1) = (fy(y0), fy(y0) + (fy(y1) - fy(y0)) * 1.03 / (1.0 - f));
    let top = if log { p1.exp() } else { p1 };
    let y_keys: Vec<f64> = ticks(y0, top, log, whole).into_iter().map(fy).collect();
    let y_text = |p: f64| num(if log { p.exp() } else { p });
    let (x0, x1) = (axis.pos[0], axis.pos[axis.pos.len() - 1]);
    let pad = if axis.categorical || x1 <= x0 {
        0.5
    } else {
        (x1 - x0) * 0.06
    };
    png(path, |root| {
        let (top, body) = root.split_vertically(head);
        heading(&top, title, &notes)?;
        let mut chart = ChartBuilder::on(&body)
            .margin(20)
            .margin_top(8)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(
                Keyed(x0 - pad..x1 + pad, axis.key_points()),
                Keyed(p0..p1, y_keys),
            )
            .map_err(e)?;
        let y_label = if log {
            log_label(&ys.label(&metric.name))
        } else {
            ys.label(&metric.name)
        };
        chart
            .configure_mesh()
            .x_desc(axis.line_label())
            .y_desc(y_label.as_str())
            .x_label_formatter(&|x| axis.tick_at(*x))
            .y_label_formatter(&|y| y_text(*y))
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 18))
            .draw()
            .map_err(e)?;
        let y = |v: f64| fy(v);
        let ci = |pts: &[Pt]| -> Vec<(f64, (f64, f64))> {
            pts.iter()
                .filter(|p| !p.2.is_nan())
                .map(|p| (p.0, band(p)))
                .collect()
        };
        // Bands first, under every line.
        for &i in &drawn {
            let ci = ci(&series[i]);
            if ci.len() >= 2 {
                let poly = ci
                    .iter()
                    .map(|(x, b)| (*x, y(b.0)))
                    .chain(ci.iter().rev().map(|(x, b)| (*x, y(b.1))));
                let fill = color(i).mix(0.16).filled();
                chart
                    .draw_series(std::iter::once(Polygon::new(poly.collect::<Vec<_>>(), fill)))
                    .map_err(e)?;
            }
        }
        for (rank, &i) in drawn.iter().enumerate() {
            let (c, pts) = (color(i), &series[i]);
            // Error bars with caps, so a single point's interval shows.
            let cap = |x: f64, v: f64| {
                EmptyElement::at((x, y(v))) + PathElement::new(vec![(-6, 0), (6, 0)], c.stroke_width(2))
            };
            for (x, b) in ci(pts) {
                let bar = PathElement::new(vec![(x, y(b.0)), (x, y(b.1))], c.stroke_width(1));
                chart.draw_series([bar]).map_err(e)?;
                chart.draw_series([cap(x, b.0), cap(x, b.1)]).map_err(e)?;
            }
            // Earlier variants wider, so a line another one covers still shows at its edges.
            let wide = (drawn.len() - 1 - rank).min(2) as u32;
            let mean = |p: &Pt| (p.0, y(p.1 * k));
            let dot = 5 + 2 * wide;
            chart
                .draw_series(pts.iter().map(|p| Circle::new(mean(p), dot, c.filled())))
                .map_err(e)?;
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(mean),
                    c.stroke_width(2 + 2 * wide),
                ))
                .map_err(e)?
                .label(lines.names[i].as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        }
        if !fails.is_empty() {
            let at = p0 + (p1 - p0) * 0.04;
            let red = RED.stroke_width(3);
            let marks = fails.iter().map(|&(x, k, n)| {
                EmptyElement::at((x, at))
                    + Cross::new((0, 0), 7, red)
                    + Text::new(
                        format!("{k}/{n}"),
                        (11, -9),
                        ("sans-serif", 15).into_font().color(&RED),
                    )
            });
            chart
                .draw_series(marks)
                .map_err(e)?
                .label("failed point")
                .legend(move |(x, y)| Cross::new((x + 10, y), 6, red));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.6))
            .label_font(("sans-serif", 16))
            .draw()
            .map_err(e)?;
        Ok(())
    })
}
