//! The line chart every time and size plot uses, and the unit scales of its axes: values are
//! given in base units (ns, bytes, bit/s, counts) and drawn in the unit their magnitude
//! calls for ("40 MB", not "40000.0 KB"), on a log axis when they span decades.

use super::Area;
use super::legend::{Corner, Entry, Unit, draw_legend, freest_corner, legend_size};
pub use super::legend::{Marks, draw_glyph};
pub use super::text::{heading, natural_order, tick};
use anyhow::{Result, anyhow};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub fn e<T: std::fmt::Debug>(err: T) -> anyhow::Error {
    anyhow!("plotting: {err:?}")
}

/// What an axis measures, in its base unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Nanoseconds.
    Time,
    /// Bytes.
    Bytes,
    /// Bits per second.
    Rate,
    /// Millimetres (cables).
    Length,
    /// Counts.
    Count,
    /// A plain number (a slowdown, a fraction).
    Plain,
}

/// A unit for an axis: values are divided by `div` and labelled `unit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub div: f64,
    pub unit: &'static str,
}

impl Scale {
    /// The unit that draws values up to `max` (base units) with at most four digits.
    pub fn for_max(q: Quantity, max: f64) -> Scale {
        let s = |div, unit| Scale { div, unit };
        let m = max.abs();
        match q {
            Quantity::Time if m < 1e3 => s(1.0, "ns"),
            Quantity::Time if m < 1e6 => s(1e3, "us"),
            Quantity::Time if m < 1e9 => s(1e6, "ms"),
            Quantity::Time => s(1e9, "s"),
            Quantity::Bytes if m < 1e3 => s(1.0, "B"),
            Quantity::Bytes if m < 1e6 => s(1e3, "KB"),
            Quantity::Bytes if m < 1e9 => s(1e6, "MB"),
            Quantity::Bytes => s(1e9, "GB"),
            Quantity::Rate if m < 1e9 => s(1e6, "Mb/s"),
            Quantity::Rate if m < 1e12 => s(1e9, "Gb/s"),
            Quantity::Rate => s(1e12, "Tb/s"),
            Quantity::Length if m < 1e3 => s(1.0, "mm"),
            Quantity::Length if m < 1e6 => s(1e3, "m"),
            Quantity::Length => s(1e6, "km"),
            Quantity::Count if m < 1e4 => s(1.0, ""),
            Quantity::Count if m < 1e7 => s(1e3, "thousands"),
            Quantity::Count => s(1e6, "millions"),
            Quantity::Plain => s(1.0, ""),
        }
    }

    /// `name (unit)`, or `name` for a unitless axis.
    pub fn label(&self, name: &str) -> String {
        if self.unit.is_empty() {
            name.to_string()
        } else {
            format!("{name} ({})", self.unit)
        }
    }

    /// A value (base units) as `12.5 MB`.
    pub fn text(&self, v: f64) -> String {
        let x = v / self.div;
        let digits = if x.abs() >= 100.0 || x == x.round() {
            0
        } else if x.abs() >= 1.0 {
            1
        } else {
            2
        };
        format!("{x:.digits$} {}", self.unit).trim_end().to_string()
    }
}

/// One line of a chart; points in base units.
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
    pub marks: Marks,
    /// Line width, pixels (0: 2, or 1 for a dense series).
    pub width: u32,
    /// A name written on the line at its right end (a threshold read without the legend).
    pub end_label: Option<String>,
    /// The end label under the line rather than over it (two thresholds close together).
    pub end_label_below: bool,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            label: String::new(),
            color: BLACK,
            dashed: false,
            points: Vec::new(),
            marks: Marks::Auto,
            width: 0,
            end_label: None,
            end_label_below: false,
        }
    }
}

/// A horizontal reference line (a threshold), in the y axis' base unit: drawn over the data,
/// dashed, named at its right end and in the legend with its value.
pub struct Level {
    pub label: String,
    pub y: f64,
    pub color: RGBColor,
}

/// A line chart.
pub struct Chart<'a> {
    pub title: &'a str,
    pub x: (&'a str, Quantity),
    pub y: (&'a str, Quantity),
    pub series: Vec<Series>,
    pub levels: Vec<Level>,
    /// Log axes: Some(choice), or None to decide from the data (three decades or more).
    pub log_x: Option<bool>,
    pub log_y: Option<bool>,
    pub caption: u32,
    /// Legend position.
    pub legend: Corner,
    /// Room either side of a linear x axis' data (a step at the last value stays visible).
    pub pad_x: bool,
    /// The x axis' span when it must match another chart's, else the data's.
    pub x_span: Option<(f64, f64)>,
    /// The y axis' unit when it must match other panels' (one unit per figure), else the
    /// one the data's magnitude calls for (a linear axis only).
    pub y_scale: Option<Scale>,
}

const MARGIN: u32 = 14;
const X_LABELS: u32 = 44;
const Y_LABELS: u32 = 80;

/// Tick text for a linear axis whose ticks are about `step` apart: as many decimals as the
/// step needs (so no two ticks read the same), trailing zeros dropped.
pub fn tick_at(v: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step < 1.0 {
        ((-step.log10()).ceil() as usize + 1).min(6)
    } else {
        0
    };
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// Tick text on a log axis: its own unit, three significant digits at most.
fn log_tick(q: Quantity, v: f64) -> String {
    let s = Scale::for_max(q, v);
    let x = v / s.div;
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    let mut t = format!("{x:.digits$}");
    if t.contains('.') {
        t = t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{t} {}", s.unit).trim_end().to_string()
}

impl<'a> Chart<'a> {
    pub fn new(title: &'a str, x: (&'a str, Quantity), y: (&'a str, Quantity)) -> Chart<'a> {
        Chart {
            title,
            x,
            y,
            series: Vec::new(),
            levels: Vec::new(),
            log_x: Some(false),
            log_y: Some(false),
            caption: 24,
            legend: Corner::Auto,
            pad_x: false,
            x_span: None,
            y_scale: None,
        }
    }

    /// True when the legend fits across the plotting area on `area` (a narrow panel's may not).
    pub fn legend_fits(&self, area: &Area) -> bool {
        let room = area.dim_in_pixel().0.saturating_sub(2 * MARGIN + Y_LABELS) as f64;
        legend_size(&self.legend_labels()).0 + 10.0 <= room
    }

    /// True when no series has a point.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The legend's lines: thresholds, then labelled series.
    fn legend_labels(&self) -> Vec<String> {
        self.levels
            .iter()
            .map(|l| self.level_text(l))
            .chain(
                self.series
                    .iter()
                    .filter(|s| !s.label.is_empty())
                    .map(|s| s.label.clone()),
            )
            .collect()
    }

    fn level_text(&self, l: &Level) -> String {
        format!("{} ({})", l.label, Scale::for_max(self.y.1, l.y).text(l.y))
    }

    pub fn draw(&self, area: &Area) -> Result<()> {
        let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter(finite))
            .copied()
            .collect();
        let span = |v: &mut dyn Iterator<Item = f64>| {
            v.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
        };
        let (mut x0, mut x1) = span(&mut pts.iter().map(|p| p.0));
        let (mut y0, mut y1) = span(&mut pts.iter().map(|p| p.1).chain(self.levels.iter().map(|l| l.y)));
        if let Some(span) = self.x_span {
            (x0, x1) = span;
        }
        if x0 > x1 {
            (x0, x1) = (0.0, 1.0);
        }
        if y0 > y1 {
            (y0, y1) = (0.0, 1.0);
        }
        let decades = |lo: f64, hi: f64| lo > 0.0 && hi / lo >= 1000.0;
        let log_x = self.log_x.unwrap_or_else(|| decades(x0, x1));
        let positive_y = pts
            .iter()
            .filter(|p| p.1 > 0.0)
            .map(|p| p.1)
            .fold(f64::MAX, f64::min);
        let log_y = self.log_y.unwrap_or_else(|| decades(positive_y.min(y1), y1));
        // A log axis spans decades: each tick carries its own unit ("100 B", "10 KB", "1 MB").
        let base = Scale { div: 1.0, unit: "" };
        let xs = if log_x {
            base
        } else {
            Scale::for_max(self.x.1, x0.abs().max(x1.abs()))
        };
        let ys = match self.y_scale {
            _ if log_y => base,
            Some(s) => s,
            None => Scale::for_max(self.y.1, y0.abs().max(y1.abs())),
        };
        let (mut x0, mut x1) = (x0 / xs.div, x1 / xs.div);
        let (mut y0, mut y1) = (y0 / ys.div, y1 / ys.div);
        if log_x {
            x0 = (x0.max(f64::MIN_POSITIVE)) / 1.5;
            x1 *= 1.5;
        } else if x1 <= x0 {
            x1 = x0 + 1.0;
        } else if self.pad_x {
            let pad = (x1 - x0) * 0.05;
            (x0, x1) = (x0 - pad, x1 + pad);
        }
        if log_y {
            y0 = (positive_y / ys.div).min(y1) / 2.0;
            y1 *= 2.0;
        } else {
            y0 = y0.min(0.0);
            y1 = if y1 <= y0 { y0 + 1.0 } else { y1 * 1.08 };
        }
        // Plotting-area fractions of a point, on the axes as they stand.
        let frac = |v: f64, lo: f64, hi: f64, log: bool| {
            if log {
                (v.max(f64::MIN_POSITIVE).ln() - lo.ln()) / (hi.ln() - lo.ln())
            } else {
                (v - lo) / (hi - lo)
            }
        };
        // The legend goes where the data is not.
        let labels = self.legend_labels();
        let mut corner = self.legend;
        let mut outside = None;
        if corner == Corner::Auto && !labels.is_empty() {
            let (w, h) = area.dim_in_pixel();
            let pw = (w.saturating_sub(2 * MARGIN + Y_LABELS)).max(1) as f64;
            let ph = (h.saturating_sub(2 * MARGIN + X_LABELS + self.caption + 10)).max(1) as f64;
            let (lw, lh) = legend_size(&labels);
            let size = ((lw + 10.0) / pw, (lh + 10.0) / ph);
            let unit = |y0: f64, y1: f64| -> Unit {
                let mut out = Vec::new();
                let to = |p: &(f64, f64)| {
                    (
                        frac(p.0 / xs.div, x0, x1, log_x),
                        frac(p.1 / ys.div, y0, y1, log_y),
                    )
                };
                for s in &self.series {
                    let v: Vec<(f64, f64)> = s.points.iter().filter(finite).map(to).collect();
                    out.extend(v.iter().copied());
                    if !s.marks.dots_only() {
                        for w in v.windows(2) {
                            out.extend((1..8).map(|k| {
                                let f = k as f64 / 8.0;
                                (w[0].0 + (w[1].0 - w[0].0) * f, w[0].1 + (w[1].1 - w[0].1) * f)
                            }));
                        }
                    }
                }
                for l in &self.levels {
                    let v = frac(l.y / ys.div, y0, y1, log_y);
                    out.extend((0..=40).map(|k| (k as f64 / 40.0, v)));
                }
                out
            };
            let (best, n) = freest_corner(&unit(y0, y1), size);
            corner = best;
            if n > 0 && size.1 >= 0.45 {
                // Too tall to make room for inside: beside the plot.
                outside = Some(lw as u32 + 12);
            } else if n > 0 {
                // No free corner: raise the top of the y axis so the data (and thresholds)
                // stay under the legend's box.
                let room = 1.0 - size.1;
                if log_y {
                    y1 = y0 * (y1 / y0).powf(1.0 / room);
                } else {
                    y1 = y0 + (y1 - y0) / room;
                }
                corner = freest_corner(&unit(y0, y1), size).0;
                if !matches!(corner, Corner::UpperLeft | Corner::UpperRight) {
                    corner = Corner::UpperRight;
                }
            }
        }
        let (xq, yq) = (self.x.1, self.y.1);
        let (x_step, y_step) = ((x1 - x0) / 8.0, (y1 - y0) / 8.0);
        let x_tick = move |v: &f64| {
            if log_x {
                log_tick(xq, *v)
            } else {
                tick_at(*v, x_step)
            }
        };
        let y_tick = move |v: &f64| {
            if log_y {
                log_tick(yq, *v)
            } else {
                tick_at(*v, y_step)
            }
        };
        let split = outside.map(|w| area.split_horizontally(area.dim_in_pixel().0.saturating_sub(w)));
        let main = split.as_ref().map_or(area, |s| &s.0);
        // Fewer ticks on a small panel, so their labels do not run into each other.
        let (mw, mh) = main.dim_in_pixel();
        let x_ticks = (mw.saturating_sub(Y_LABELS) as usize / 75).clamp(3, 8);
        let y_ticks = (mh.saturating_sub(X_LABELS + self.caption) as usize / 30).clamp(3, 8);
        let mut b = ChartBuilder::on(main);
        b.caption(self.title, ("sans-serif", self.caption))
            .margin(MARGIN)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(Y_LABELS);
        let (xl, yl) = (xs.label(self.x.0), ys.label(self.y.0));
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(xl.as_str())
                    .y_desc(yl.as_str())
                    .x_labels(x_ticks)
                    .y_labels(y_ticks)
                    .x_label_formatter(&x_tick)
                    .y_label_formatter(&y_tick)
                    .label_style(("sans-serif", 15))
                    .light_line_style(RGBColor(235, 235, 235))
                    .draw()
                    .map_err(e)?;
                let ok = |p: &(f64, f64)| (!log_x || p.0 > 0.0) && (!log_y || p.1 > 0.0);
                let mut ends = Vec::new();
                let (mut entries, mut levels) = (Vec::new(), Vec::new());
                for s in &self.series {
                    let c = s.color;
                    let pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .filter(|p| p.0.is_finite() && p.1.is_finite())
                        .map(|p| (p.0 / xs.div, p.1 / ys.div))
                        .filter(ok)
                        .collect();
                    if let (Some(text), Some(&last)) = (&s.end_label, pts.last()) {
                        ends.push((text.clone(), last, c, s.end_label_below));
                    }
                    let dots = match s.marks {
                        Marks::Auto => pts.len() < 40,
                        Marks::Line => false,
                        Marks::Dots | Marks::Rings => true,
                    };
                    if dots {
                        let (r, style) = match s.marks {
                            Marks::Dots => (6, c.filled()),
                            Marks::Rings => (8, c.stroke_width(2)),
                            _ => (4, c.filled()),
                        };
                        chart
                            .draw_series(pts.iter().map(|&p| Circle::new(p, r, style)))
                            .map_err(e)?;
                    }
                    // Wide lines join with mitres, which spike at the sharp turns of a dense,
                    // jagged series: dense series are drawn one pixel wide.
                    let width = match s.width {
                        0 if pts.len() > 150 => 1,
                        0 => 2,
                        w => w,
                    };
                    match (s.marks, s.dashed) {
                        (Marks::Dots | Marks::Rings, _) => {}
                        (_, true) => {
                            chart
                                .draw_series(DashedLineSeries::new(pts, 10, 6, c.stroke_width(width)))
                                .map_err(e)?;
                        }
                        (_, false) => {
                            chart
                                .draw_series(LineSeries::new(pts, c.stroke_width(width)))
                                .map_err(e)?;
                        }
                    }
                    if !s.label.is_empty() {
                        entries.push(Entry {
                            text: s.label.clone(),
                            color: c,
                            dashed: s.dashed,
                            marks: s.marks,
                            width: 3,
                        });
                    }
                }
                // Thresholds over the data, so the data never hides them.
                for l in &self.levels {
                    let c = l.color;
                    let y = l.y / ys.div;
                    chart
                        .draw_series(DashedLineSeries::new(
                            vec![(x0, y), (x1, y)],
                            12,
                            6,
                            c.stroke_width(2),
                        ))
                        .map_err(e)?;
                    levels.push(Entry {
                        text: self.level_text(l),
                        color: c,
                        dashed: true,
                        marks: Marks::Line,
                        width: 2,
                    });
                    if labels.is_empty() {
                        ends.push((l.label.clone(), (x1, y), c, false));
                    }
                }
                for (text, (x, y), c, under) in ends {
                    let (px, py) = chart.backend_coord(&(x, y));
                    let v = if under { VPos::Top } else { VPos::Bottom };
                    let style = ("sans-serif", 13)
                        .into_font()
                        .color(&c)
                        .pos(Pos::new(HPos::Right, v));
                    let base = main.get_base_pixel();
                    let dy = if under { 4 } else { -3 };
                    main.draw(&Text::new(text, (px - base.0 - 4, py - base.1 + dy), style))
                        .map_err(e)?;
                }
                if !labels.is_empty() {
                    levels.extend(entries);
                    let (xr, yr) = chart.plotting_area().get_pixel_range();
                    let base = main.get_base_pixel();
                    let plot = (
                        xr.start - base.0,
                        yr.start - base.1,
                        xr.end - base.0,
                        yr.end - base.1,
                    );
                    match &split {
                        Some((_, side)) => {
                            let w = side.dim_in_pixel().0 as i32;
                            draw_legend(side, (-5, plot.1, w, plot.3), Corner::UpperLeft, &levels)?
                        }
                        None => draw_legend(main, plot, corner, &levels)?,
                    }
                }
            }};
        }
        match (log_x, log_y) {
            (true, true) => body!(
                b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
                    .map_err(e)?
            ),
            (true, false) => body!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1).map_err(e)?),
            (false, true) => body!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale()).map_err(e)?),
            (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(e)?),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_magnitude() {
        assert_eq!(Scale::for_max(Quantity::Bytes, 40_000_000.0).unit, "MB");
        assert_eq!(Scale::for_max(Quantity::Bytes, 900.0).unit, "B");
        assert_eq!(Scale::for_max(Quantity::Time, 650_000.0).unit, "us");
        assert_eq!(Scale::for_max(Quantity::Rate, 10e12).unit, "Tb/s");
        assert_eq!(
            Scale::for_max(Quantity::Bytes, 1_600_000.0).text(1_600_000.0),
            "1.6 MB"
        );
        assert_eq!(tick(1000000.0), "1000000");
        assert_eq!(tick(2.5), "2.5");
    }

    #[test]
    fn ticks_are_distinct_at_any_step() {
        let step = 0.01;
        let ticks: Vec<String> = (0..8).map(|i| tick_at(1.0 + i as f64 * step, step)).collect();
        let unique: std::collections::BTreeSet<&String> = ticks.iter().collect();
        assert_eq!(unique.len(), ticks.len(), "{ticks:?}");
        assert_eq!(tick_at(0.5, 0.25), "0.5");
        assert_eq!(tick_at(200.0, 50.0), "200");
        assert_eq!(log_tick(Quantity::Bytes, 1_250_000.0), "1.25 MB");
    }
}
