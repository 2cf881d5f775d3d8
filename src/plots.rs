//! PNG plots of a run, drawn with plotters into an RGB buffer and encoded with `png`. Text
//! uses the embedded DejaVu Sans, so plots render on machines without system fonts.

use crate::files;
use crate::metrics::{METRICS, Row};
use anyhow::{Result, anyhow};
use models::VariantReport;
use models::telemetry::{EventLog, Sampler};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// Size of every plot, pixels.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 700;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

pub(crate) fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// One variant's run, as the plots need it.
pub struct VariantData<'a> {
    pub report: &'a VariantReport,
    pub sampler: &'a Sampler,
    pub log: &'a EventLog,
    /// Port names by port id, for labels.
    pub port_label: &'a dyn Fn(u32) -> String,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Draw into a fresh white image and write it as PNG.
pub(crate) fn png(path: &Path, draw: impl FnOnce(&Area) -> Result<()>) -> Result<()> {
    register_font();
    let mut buf = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root)?;
        root.present()
            .map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, WIDTH, HEIGHT);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.write_header()?.write_image_data(&buf)?;
    }
    files::write(path, &bytes)
}

pub(crate) fn e<T: std::fmt::Debug>(err: T) -> anyhow::Error {
    anyhow!("plotting: {err:?}")
}

/// A line chart: `series` of (label, points), `log_x`/`log_y` for log axes.
#[allow(clippy::too_many_arguments)]
fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
    log_y: bool,
) -> Result<()> {
    png(path, |root| {
        let pts = series
            .iter()
            .flat_map(|s| s.1.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in pts {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (1.0, 2.0, 1.0, 2.0);
        }
        if log_x {
            x0 = x0.max(1e-3);
        }
        if log_y {
            y0 = y0.max(1e-3);
        }
        let (mut x1, mut y1) = (
            if x1 <= x0 { x0 * 2.0 + 1.0 } else { x1 },
            if y1 <= y0 { y0 * 2.0 + 1.0 } else { y1 * 1.05 },
        );
        // Log axes get at least a decade, so they always have ticks.
        if log_x {
            (x0, x1) = (x0 / 3.0, x1 * 3.0);
        }
        let y0 = if log_y {
            y1 *= 3.0;
            y0 / 3.0
        } else {
            y0.min(0.0)
        };
        let mut b = ChartBuilder::on(root);
        b.caption(title, ("sans-serif", 26))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(90);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(x_label)
                    .y_desc(y_label)
                    .label_style(("sans-serif", 16))
                    .draw()
                    .map_err(e)?;
                for (i, (label, points)) in series.iter().enumerate() {
                    let c = color(i);
                    let pts: Vec<(f64, f64)> = points
                        .iter()
                        .copied()
                        .filter(|p| (!log_x || p.0 > 0.0) && (!log_y || p.1 > 0.0))
                        .collect();
                    if pts.len() < 50 {
                        // Few points (a few size bins): mark them, a lone point has no line.
                        chart
                            .draw_series(pts.iter().map(|&p| Circle::new(p, 5, c.filled())))
                            .map_err(e)?;
                    }
                    chart
                        .draw_series(LineSeries::new(pts, c.stroke_width(2)))
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
            }};
        }
        root.fill(&WHITE).map_err(e)?;
        match (log_x, log_y) {
            (true, true) => draw!(
                b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
                    .map_err(e)?
            ),
            (true, false) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1).map_err(e)?),
            (false, true) => draw!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale()).map_err(e)?),
            (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(e)?),
        }
        Ok(())
    })
}

/// Every plot of one run.
pub fn all(dir: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    fct_cdf(dir, title, data)?;
    fct_by_size(dir, title, data)?;
    throughput(dir, title, data)?;
    queues(dir, title, data)?;
    ecn(dir, title, data)?;
    pauses(&dir.join("pauses.png"), title, data)
}

/// The FCT slowdown CDF, a line per variant.
fn fct_cdf(dir: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    let cdf: Vec<(String, Vec<(f64, f64)>)> = data
        .iter()
        .map(|d| {
            let mut s: Vec<f64> = d.report.flows.iter().filter_map(|f| f.slowdown).collect();
            s.sort_by(f64::total_cmp);
            let n = s.len().max(1) as f64;
            (
                d.report.summary.name.clone(),
                s.iter()
                    .enumerate()
                    .map(|(i, &x)| (x, (i + 1) as f64 / n))
                    .collect(),
            )
        })
        .collect();
    lines(
        &dir.join("fct_cdf.png"),
        &format!("{title}: FCT slowdown CDF"),
        "slowdown (FCT / ideal FCT)",
        "fraction of flows",
        &cdf,
        true,
        false,
    )
}

/// FCT p50 and p99 by flow size (power-of-two bins).
fn fct_by_size(dir: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    let mut by_size = Vec::new();
    for d in data {
        let mut bins: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
        for f in &d.report.flows {
            if let Some(fct) = f.fct_ns {
                bins.entry(64 - f.size_bytes.leading_zeros())
                    .or_default()
                    .push(fct / 1e3);
            }
        }
        let (mut p50, mut p99) = (Vec::new(), Vec::new());
        for (bit, mut v) in bins {
            v.sort_by(f64::total_cmp);
            let size = (1u64 << bit.saturating_sub(1)) as f64 * 1.5;
            if let (Some(a), Some(b)) = (
                models::report::percentile(&v, 0.5),
                models::report::percentile(&v, 0.99),
            ) {
                p50.push((size, a));
                p99.push((size, b));
            }
        }
        by_size.push((format!("{} p50", d.report.summary.name), p50));
        by_size.push((format!("{} p99", d.report.summary.name), p99));
    }
    lines(
        &dir.join("fct_by_size.png"),
        &format!("{title}: FCT by flow size"),
        "flow size (bytes)",
        "FCT (us)",
        &by_size,
        true,
        true,
    )?;
    Ok(())
}

/// Goodput over time.
fn throughput(dir: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    let tput: Vec<(String, Vec<(f64, f64)>)> = data
        .iter()
        .map(|d| {
            let s = d.sampler;
            let pts = s.times.windows(2).zip(s.totals.windows(2)).map(|(t, v)| {
                let dt = (t[1] - t[0]).as_secs_f64();
                (
                    t[1].as_ns_f64() / 1e3,
                    (v[1].delivered_bytes - v[0].delivered_bytes) as f64 * 8.0 / dt.max(1e-12) / 1e9,
                )
            });
            (d.report.summary.name.clone(), pts.collect())
        })
        .collect();
    lines(
        &dir.join("throughput.png"),
        &format!("{title}: goodput over time"),
        "time (us)",
        "goodput, all hosts (Gb/s)",
        &tput,
        false,
        false,
    )
}

/// Queue depth of each variant's three hottest sampled ports.
fn queues(dir: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    let mut queues = Vec::new();
    for d in data {
        let s = d.sampler;
        let mut hot: Vec<usize> = (0..s.ports.len()).collect();
        hot.sort_by_key(|&i| std::cmp::Reverse(s.queues[i].iter().max().copied().unwrap_or(0)));
        for &i in hot
            .iter()
            .take(3)
            .filter(|&&i| s.queues[i].iter().any(|&q| q > 0))
        {
            let pts = s
                .times
                .iter()
                .zip(&s.queues[i])
                .map(|(t, &q)| (t.as_ns_f64() / 1e3, q as f64 / 1e3))
                .collect();
            queues.push((
                format!("{}: {}", d.report.summary.name, (d.port_label)(s.ports[i].0)),
                pts,
            ));
        }
    }
    lines(
        &dir.join("queues.png"),
        &format!("{title}: hottest switch queues"),
        "time (us)",
        "queue (KB)",
        &queues,
        false,
        false,
    )
}

/// ECN marks and CNPs, cumulative.
fn ecn(dir: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    let mut ecn = Vec::new();
    for d in data {
        let s = d.sampler;
        let t = |i: usize| s.times[i].as_ns_f64() / 1e3;
        ecn.push((
            format!("{} ECN marks", d.report.summary.name),
            (0..s.times.len())
                .map(|i| (t(i), s.totals[i].ecn_marked as f64))
                .collect(),
        ));
        ecn.push((
            format!("{} CNPs", d.report.summary.name),
            (0..s.times.len())
                .map(|i| (t(i), s.totals[i].cnps as f64))
                .collect(),
        ));
    }
    lines(
        &dir.join("ecn.png"),
        &format!("{title}: ECN marks and CNPs"),
        "time (us)",
        "count (cumulative)",
        &ecn,
        false,
        false,
    )
}

/// The PFC pause timeline: one row per (variant, port, priority) that sent XOFF, a bar from
/// each XOFF to its XON.
fn pauses(path: &Path, title: &str, data: &[VariantData]) -> Result<()> {
    let mut rows: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut end = 1.0f64;
    for d in data {
        let mut open: std::collections::BTreeMap<(u32, u8), f64> = Default::default();
        let mut bars: std::collections::BTreeMap<(u32, u8), Vec<(f64, f64)>> = Default::default();
        for r in &d.log.rows {
            let t = r.time.as_ns_f64() / 1e3;
            end = end.max(t);
            match r.event {
                "xoff" => {
                    open.entry((r.port.0, r.prio)).or_insert(t);
                }
                "xon" => {
                    if let Some(s) = open.remove(&(r.port.0, r.prio)) {
                        bars.entry((r.port.0, r.prio)).or_default().push((s, t));
                    }
                }
                _ => {}
            }
        }
        let last = d
            .sampler
            .times
            .last()
            .map_or(end, |t| t.as_ns_f64() / 1e3)
            .max(end);
        end = end.max(last);
        for ((p, prio), s) in open {
            bars.entry((p, prio)).or_default().push((s, last));
        }
        for ((p, prio), b) in bars.into_iter().take(24) {
            rows.push((
                format!("{}: {} prio {prio}", d.report.summary.name, (d.port_label)(p)),
                b,
            ));
        }
    }
    png(path, |root| {
        root.fill(&WHITE).map_err(e)?;
        let n = rows.len().max(1);
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{title}: PFC pauses sent (XOFF to XON)"),
                ("sans-serif", 26),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(330)
            .build_cartesian_2d(0.0..end, 0.0..n as f64)
            .map_err(e)?;
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        chart
            .configure_mesh()
            .x_desc("time (us)")
            .y_labels(n.min(40))
            .y_label_formatter(&|y| labels.get(*y as usize).cloned().unwrap_or_default())
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(e)?;
        if rows.is_empty() {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no PFC pause was sent",
                    (end * 0.4, 0.5),
                    ("sans-serif", 24),
                )))
                .map_err(e)?;
        }
        for (i, (_, bars)) in rows.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(bars.iter().map(|&(s, t)| {
                    Rectangle::new(
                        [(s, i as f64 + 0.15), (t.max(s + end * 0.002), i as f64 + 0.85)],
                        c.filled(),
                    )
                }))
                .map_err(e)?;
        }
        Ok(())
    })
}

/// `compare.png`: one bar chart per metric, a bar per variant.
pub fn compare(path: &Path, title: &str, rows: &[Row]) -> Result<()> {
    png(path, |root| {
        root.fill(&WHITE).map_err(e)?;
        let (top, body) = root.split_vertically(50);
        top.titled(title, ("sans-serif", 26)).map_err(e)?;
        let cells = body.split_evenly((2, 4));
        for (m, cell) in cells.iter().enumerate().take(METRICS.len()) {
            let (label, unit) = METRICS[m];
            let max = rows
                .iter()
                .filter_map(|r| r.metric(m))
                .fold(0.0, f64::max)
                .max(1.0)
                * 1.2;
            let mut chart = ChartBuilder::on(cell)
                .caption(format!("{label} ({unit})"), ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(20)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..rows.len() as f64, 0.0..max)
                .map_err(e)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .label_style(("sans-serif", 12))
                .draw()
                .map_err(e)?;
            for (i, r) in rows.iter().enumerate() {
                let Some(v) = r.metric(m) else {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "n/a".to_string(),
                            (i as f64 + 0.2, max * 0.02),
                            ("sans-serif", 12),
                        )))
                        .map_err(e)?;
                    continue;
                };
                let c = color(i);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, v)],
                        c.filled(),
                    )))
                    .map_err(e)?;
                let text = if m >= 3 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        (i as f64 + 0.2, v + max * 0.02),
                        ("sans-serif", 12),
                    )))
                    .map_err(e)?;
            }
        }
        // The legend: variant colours.
        if let Some(cell) = cells.get(7) {
            for (i, r) in rows.iter().enumerate() {
                let y = 20 + i as i32 * 24;
                cell.draw(&Rectangle::new([(10, y), (30, y + 16)], color(i).filled()))
                    .map_err(e)?;
                cell.draw(&Text::new(r.name.clone(), (38, y), ("sans-serif", 15)))
                    .map_err(e)?;
            }
        }
        Ok(())
    })
}
