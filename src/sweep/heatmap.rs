//! The heat map of a two-axis sweep: per metric, one panel per variant with the mean over
//! seeds at each pair of values (the first axis across, the second up), each cell labelled
//! with its value; cells whose runs all failed are hatched and say so, cells where some
//! failed say how many. One colour bar, in the metric's unit, serves every panel, so the
//! variants compare at a glance.

use super::axes::{Axis, Keyed, Kind, Metric, Sweep, log_label, num, ticks, unit};
use crate::plots::heading;
use crate::plots::{Area, Scale, e, png_sized, variant_color};
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// One cell of a variant's panel: the mean (base units) of its runs that succeeded, and how
/// many of its runs failed.
struct Cell {
    mean: Option<f64>,
    failed: usize,
    runs: usize,
}

/// Where a value (base units) falls on the colour scale: linear from `lo` to `hi`, or
/// logarithmic when the values span two decades.
#[derive(Clone, Copy)]
struct Colours {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Colours {
    fn t(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.lo) / self.lo).ln() / (self.hi / self.lo).ln()
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        t.clamp(0.0, 1.0)
    }
}

/// Panel size, pixels, and the colour bar's width.
const PANEL: (u32, u32) = (560, 540);
const BAR: u32 = 150;

/// Draw the heat map of `metric` over the two `axes`; false (and nothing written) when no
/// cell has a value.
pub(super) fn write(path: &Path, title: &str, sw: &Sweep, axes: [&Axis; 2], metric: &Metric) -> Result<bool> {
    let [a, b] = axes;
    let (nx, ny) = (a.values.len(), b.values.len());
    let panels: Vec<Vec<Cell>> = sw
        .variants
        .iter()
        .map(|v| {
            let mut cells = Vec::with_capacity(nx * ny);
            for j in 0..ny {
                for i in 0..nx {
                    let here = |r: &[String]| r[a.col] == a.values[i] && r[b.col] == b.values[j];
                    let ys: Vec<f64> = sw
                        .rows
                        .iter()
                        .filter(|r| here(r) && sw.ok(r) && r[sw.variant] == *v)
                        .filter_map(|r| metric.raw(r))
                        .collect();
                    let (failed, runs) = sw.runs(here, Some(v));
                    let mean =
                        (!ys.is_empty()).then(|| ys.iter().sum::<f64>() / ys.len() as f64 * metric.to_base);
                    cells.push(Cell { mean, failed, runs });
                }
            }
            cells
        })
        .collect();
    let means = || panels.iter().flatten().filter_map(|c| c.mean);
    if means().next().is_none() {
        return Ok(false);
    }
    let (lo, hi) = means().fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
    let s = unit(metric.kind, lo.abs().max(hi.abs()));
    // A constant metric still gets a bar: one unit of it above the value.
    let hi = if hi > lo {
        hi
    } else {
        lo + (lo.abs() * 0.1).max(s.div)
    };
    let colours = Colours {
        lo,
        hi,
        log: lo > 0.0 && hi / lo >= 100.0,
    };
    let mut notes: Vec<String> = sw.failures().into_iter().collect();
    if panels.iter().flatten().any(|c| c.failed > 0) {
        notes.push(
            "hatched: every run of the cell failed; k/n failed: k of its n runs failed (not in the mean)"
                .into(),
        );
    }
    let n = panels.len();
    let cols = n.clamp(1, 3);
    let rows = n.div_ceil(cols).max(1);
    let head = 52 + 20 * notes.len() as u32;
    let size = (cols as u32 * PANEL.0 + BAR, head + rows as u32 * PANEL.1);
    png_sized(path, size, |root| {
        let (top, body) = root.split_vertically(head);
        heading(&top, title, &notes)?;
        let (maps, bar) = body.split_horizontally(cols as u32 * PANEL.0);
        let areas = maps.split_evenly((rows, cols));
        for (vi, (cells, area)) in panels.iter().zip(areas.iter()).enumerate() {
            let name = sw.variants[vi].as_str();
            panel(area, (name, variant_color(vi)), axes, cells, colours, &s)?;
        }
        let whole = metric.kind == Kind::Count && s.div == 1.0;
        let label = s.label(&metric.name);
        let label = if colours.log { log_label(&label) } else { label };
        color_bar(&bar, colours, &s, &label, whole)
    })?;
    Ok(true)
}

/// One variant's grid of cells, coloured on `colours` and labelled in `s`.
fn panel(
    area: &Area,
    (name, color): (&str, RGBColor),
    [a, b]: [&Axis; 2],
    cells: &[Cell],
    colours: Colours,
    s: &Scale,
) -> Result<()> {
    let (nx, ny) = (a.values.len(), b.values.len());
    let keys = |n: usize| (0..n).map(|i| i as f64).collect::<Vec<_>>();
    let mut chart = ChartBuilder::on(area)
        .caption(name, ("sans-serif", 20).into_font().color(&color))
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(
            Keyed(-0.5..nx as f64 - 0.5, keys(nx)),
            Keyed(-0.5..ny as f64 - 0.5, keys(ny)),
        )
        .map_err(e)?;
    let label = |axis: &Axis, v: f64| {
        axis.ticks
            .get(v.round().max(0.0) as usize)
            .cloned()
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(a.label.as_str())
        .y_desc(b.label.as_str())
        .x_label_formatter(&|x| label(a, *x))
        .y_label_formatter(&|y| label(b, *y))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(e)?;
    let (pw, ph) = chart.plotting_area().dim_in_pixel();
    let (cw, ch) = (pw as f64 / nx as f64, ph as f64 / ny as f64);
    let size = (cw / 5.5).min(ch / 3.0).clamp(10.0, 20.0);
    let labelled = cw >= 34.0 && ch >= 18.0;
    let centre = |px: f64, fill: &RGBColor| {
        let luma = 0.299 * fill.0 as f64 + 0.587 * fill.1 as f64 + 0.114 * fill.2 as f64;
        let dark = luma < 140.0;
        let ink = if dark { WHITE } else { BLACK };
        ("sans-serif", px)
            .into_font()
            .color(&ink)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    for (k, cell) in cells.iter().enumerate() {
        let (x, y) = ((k % nx) as f64, (k / nx) as f64);
        let rect = [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)];
        let (fill, text) = match cell.mean {
            Some(v) => (viridis(colours.t(v)), num(v / s.div)),
            None if cell.failed > 0 => (RGBColor(236, 236, 236), "failed".to_string()),
            None => (WHITE, "no run".to_string()),
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(rect, fill.filled())))
            .map_err(e)?;
        if cell.mean.is_none() && cell.failed > 0 {
            // Hatching: lines x - y = c across the cell.
            let hatch = (-4..=4).map(|k| {
                let c = k as f64 * 0.22;
                let (p, q) = (
                    (c.max(0.0), (-c).max(0.0)),
                    ((1.0 + c).min(1.0), (1.0 - c).min(1.0)),
                );
                let at = |(u, w): (f64, f64)| (x - 0.5 + u, y - 0.5 + w);
                PathElement::new(vec![at(p), at(q)], RGBColor(150, 150, 150).stroke_width(2))
            });
            chart.draw_series(hatch).map_err(e)?;
        }
        if labelled {
            let partial = cell.mean.is_some() && cell.failed > 0;
            let shift = if partial { -(size * 0.6) as i32 } else { 0 };
            let style = if cell.mean.is_none() && cell.failed > 0 {
                let red = ("sans-serif", size).into_font().color(&RGBColor(180, 0, 0));
                red.pos(Pos::new(HPos::Center, VPos::Center))
            } else {
                centre(size, &fill)
            };
            let el = EmptyElement::at((x, y)) + Text::new(text, (0, shift), style);
            chart.draw_series(std::iter::once(el)).map_err(e)?;
            if partial {
                let note = format!("{}/{} failed", cell.failed, cell.runs);
                let small = centre(size * 0.75, &fill);
                let el = EmptyElement::at((x, y)) + Text::new(note, (0, (size * 0.7) as i32), small);
                chart.draw_series(std::iter::once(el)).map_err(e)?;
            }
        }
        chart
            .draw_series(std::iter::once(Rectangle::new(rect, WHITE.stroke_width(2))))
            .map_err(e)?;
    }
    Ok(())
}

/// The colour scale on its own strip: a gradient from `c.lo` (bottom) to `c.hi`, ticks at
/// round values in `s`'s unit (whole numbers if `whole`), and `label` up its side.
fn color_bar(area: &Area, c: Colours, s: &Scale, label: &str, whole: bool) -> Result<()> {
    let (_, h) = area.dim_in_pixel();
    // Roughly the panels' plotting area (caption and margins above, axis labels below).
    let (top, bottom) = (44i32, h as i32 - 70);
    let (x0, x1) = (12i32, 38i32);
    let span = (bottom - top) as f64;
    for py in top..bottom {
        let t = 1.0 - (py - top) as f64 / span;
        area.draw(&Rectangle::new([(x0, py), (x1, py + 1)], viridis(t).filled()))
            .map_err(e)?;
    }
    area.draw(&Rectangle::new(
        [(x0, top), (x1, bottom)],
        BLACK.mix(0.6).stroke_width(1),
    ))
    .map_err(e)?;
    let left = ("sans-serif", 15)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for v in ticks(c.lo / s.div, c.hi / s.div, c.log, whole) {
        let py = bottom - (c.t(v * s.div) * span).round() as i32;
        area.draw(&PathElement::new(
            vec![(x1, py), (x1 + 5, py)],
            BLACK.stroke_width(1),
        ))
        .map_err(e)?;
        area.draw(&Text::new(num(v), (x1 + 8, py), left.clone()))
            .map_err(e)?;
    }
    let up = ("sans-serif", 17)
        .into_font()
        .transform(FontTransform::Rotate270)
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(label, (BAR as i32 - 22, (top + bottom) / 2), up))
        .map_err(e)?;
    Ok(())
}

/// Viridis (matplotlib's perceptually uniform map, readable in grey and by the colour-blind)
/// at `t` in [0, 1], from its published stops.
fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let x = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let (i, f) = (
        (x.floor() as usize).min(STOPS.len() - 2),
        x - x.floor().min((STOPS.len() - 2) as f64),
    );
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}
