//! Statistics and plots of a sweep: for every axis and metric, a line per variant with the mean
//! over seeds and a 95 % confidence interval from Student's t across the seeds. With several
//! axes, each seed's sample is its mean over the other axes' values (the marginal effect of
//! this axis). `sweep_stats.csv` has the numbers the plots draw.

use crate::plots::{color, e, png};
use anyhow::Result;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

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

/// Axis value -> variant -> seed -> the metric at each combination of the other axes.
type Groups = BTreeMap<String, BTreeMap<usize, BTreeMap<String, Vec<f64>>>>;

/// Draw the plots and write `sweep_stats.csv`. `rows` are sweep.csv's rows under `header`.
pub fn write(
    out: &Path,
    name: &str,
    keys: &[String],
    metrics: &[String],
    header: &[String],
    rows: &[Vec<String>],
) -> Result<()> {
    let col = |c: &str| header.iter().position(|h| h == c);
    let (Some(variant), Some(status), Some(seed)) = (col("variant"), col("status"), col("seed")) else {
        return Ok(());
    };
    let mut variants: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r[status] == "ok") {
        if !variants.contains(&r[variant]) {
            variants.push(r[variant].clone());
        }
    }
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
    for key in keys {
        let Some(k) = col(key) else { continue };
        // Axis values in first-seen order (the sweep file's order).
        let mut order: Vec<String> = Vec::new();
        for r in rows {
            if !order.contains(&r[k]) {
                order.push(r[k].clone());
            }
        }
        let numeric = order.iter().all(|v| v.parse::<f64>().is_ok());
        let x_of = |v: &str| {
            if numeric {
                v.parse().unwrap_or(0.0)
            } else {
                order.iter().position(|o| o == v).unwrap_or(0) as f64
            }
        };
        for metric in metrics {
            let Some(m) = col(metric) else { continue };
            let cols = Cols {
                key: k,
                metric: m,
                variant,
                status,
                seed,
            };
            let series = series(rows, cols, &variants, &order, &x_of, &mut stats, (key, metric))?;
            let file = format!("sweep_{}_vs_{}.png", slug(metric), slug(key));
            let labels = (!numeric).then_some(order.as_slice());
            plot(
                &out.join(file),
                &format!("{name}: {metric} vs {key}"),
                key,
                metric,
                &variants,
                &series,
                labels,
            )?;
        }
    }
    crate::files::write(&out.join("sweep_stats.csv"), &stats.into_inner()?)
}

/// Where sweep.csv keeps an axis, a metric, and a row's variant, status and seed.
#[derive(Clone, Copy)]
struct Cols {
    key: usize,
    metric: usize,
    variant: usize,
    status: usize,
    seed: usize,
}

/// Per variant, the (axis value, mean, 95 % half-width) points of one metric against one
/// axis, each also written to `sweep_stats.csv` under `names` (axis key, metric).
fn series(
    rows: &[Vec<String>],
    c: Cols,
    variants: &[String],
    order: &[String],
    x_of: &dyn Fn(&str) -> f64,
    stats: &mut csv::Writer<Vec<u8>>,
    names: (&str, &str),
) -> Result<Vec<Vec<(f64, f64, f64)>>> {
    let mut groups: Groups = BTreeMap::new();
    for r in rows.iter().filter(|r| r[c.status] == "ok") {
        let Ok(y) = r[c.metric].parse::<f64>() else {
            continue;
        };
        let vi = variants.iter().position(|v| *v == r[c.variant]).unwrap_or(0);
        groups
            .entry(r[c.key].clone())
            .or_default()
            .entry(vi)
            .or_default()
            .entry(r[c.seed].clone())
            .or_default()
            .push(y);
    }
    let mut series: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); variants.len()];
    for value in order {
        for (vi, by_seed) in groups.get(value).into_iter().flatten() {
            // One sample per seed: its mean over the other axes' values. The interval is
            // across seeds (replications), not across the other parameters.
            let ys: Vec<f64> = by_seed
                .values()
                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
                .collect();
            let (mean, half) = mean_ci(&ys);
            series[*vi].push((x_of(value), mean, half));
            let (lo, hi) = if half.is_nan() {
                (String::new(), String::new())
            } else {
                ((mean - half).to_string(), (mean + half).to_string())
            };
            stats.write_record([
                names.0,
                value,
                &variants[*vi],
                names.1,
                &ys.len().to_string(),
                &mean.to_string(),
                &lo,
                &hi,
            ])?;
        }
    }
    for s in &mut series {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(series)
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Mean lines with shaded 95 % bands; categorical axes label their positions.
fn plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    variants: &[String],
    series: &[Vec<(f64, f64, f64)>],
    labels: Option<&[String]>,
) -> Result<()> {
    png(path, |root| {
        root.fill(&WHITE).map_err(e)?;
        let all = series.iter().flatten();
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
        for &(x, m, h) in all {
            let h = if h.is_nan() { 0.0 } else { h };
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(m - h), y1.max(m + h));
        }
        if x0 > x1 {
            (x0, x1, y1) = (0.0, 1.0, 1.0);
        }
        let pad = if x1 > x0 { (x1 - x0) * 0.05 } else { 0.5 };
        let y1 = if y1 > y0 { y1 * 1.1 } else { y0 + 1.0 };
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 26))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(100)
            .build_cartesian_2d(x0 - pad..x1 + pad, y0..y1)
            .map_err(e)?;
        let fmt = |x: &f64| match labels {
            Some(l) if (x - x.round()).abs() < 1e-6 && x.round() >= 0.0 => {
                l.get(x.round() as usize).cloned().unwrap_or_default()
            }
            Some(_) => String::new(),
            None => format!("{x}"),
        };
        let y_fmt = |y: &f64| {
            if y.abs() >= 100.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.3}")
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_label)
            .y_desc(y_label)
            .label_style(("sans-serif", 16))
            .x_label_formatter(&fmt)
            .y_label_formatter(&y_fmt);
        if let Some(l) = labels {
            mesh.x_labels(l.len() * 2 + 1);
        }
        mesh.draw().map_err(e)?;
        for (i, (label, pts)) in variants.iter().zip(series).enumerate() {
            let c = color(i);
            let band: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| !p.2.is_nan())
                .map(|p| (p.0, p.1 - p.2))
                .chain(
                    pts.iter()
                        .rev()
                        .filter(|p| !p.2.is_nan())
                        .map(|p| (p.0, p.1 + p.2)),
                )
                .collect();
            if band.len() >= 4 {
                chart
                    .draw_series(std::iter::once(Polygon::new(band, c.mix(0.2).filled())))
                    .map_err(e)?;
            }
            // Error bars too, so a single point's interval shows.
            chart
                .draw_series(
                    pts.iter()
                        .filter(|p| !p.2.is_nan())
                        .map(|&(x, m, h)| PathElement::new(vec![(x, m - h), (x, m + h)], c.stroke_width(2))),
                )
                .map_err(e)?;
            chart
                .draw_series(pts.iter().map(|&(x, m, _)| Circle::new((x, m), 5, c.filled())))
                .map_err(e)?;
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(x, m, _)| (x, m)),
                    c.stroke_width(2),
                ))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .draw()
            .map_err(e)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
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
}
