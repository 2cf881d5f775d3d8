//! The line chart every time and size plot uses, and the unit scales of its axes: values are
//! given in base units (ns, bytes, bit/s, counts) and drawn in the unit their magnitude
//! calls for ("40 MB", not "40000.0 KB"), on a log axis when they span decades.

use super::Area;
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
}

/// A horizontal reference line (a threshold), in the y axis' base unit.
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
}

/// Where a chart's legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    UpperLeft,
    UpperRight,
    LowerRight,
}

impl Corner {
    fn position(self) -> SeriesLabelPosition {
        match self {
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
            Corner::LowerRight => SeriesLabelPosition::LowerRight,
        }
    }
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
            legend: Corner::UpperRight,
        }
    }

    /// True when no series has a point.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
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
        let ys = if log_y {
            base
        } else {
            Scale::for_max(self.y.1, y0.abs().max(y1.abs()))
        };
        let (xq, yq) = (self.x.1, self.y.1);
        let x_tick = move |v: &f64| {
            if log_x {
                Scale::for_max(xq, *v).text(*v)
            } else {
                tick(*v)
            }
        };
        let y_tick = move |v: &f64| {
            if log_y {
                Scale::for_max(yq, *v).text(*v)
            } else {
                tick(*v)
            }
        };
        let (mut x0, mut x1) = (x0 / xs.div, x1 / xs.div);
        let (mut y0, mut y1) = (y0 / ys.div, y1 / ys.div);
        if log_x {
            x0 = (x0.max(f64::MIN_POSITIVE)) / 1.5;
            x1 *= 1.5;
        } else if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if log_y {
            y0 = (positive_y / ys.div).min(y1) / 2.0;
            y1 *= 2.0;
        } else {
            y0 = y0.min(0.0);
            y1 = if y1 <= y0 { y0 + 1.0 } else { y1 * 1.08 };
        }
        let mut b = ChartBuilder::on(area);
        b.caption(self.title, ("sans-serif", self.caption))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(80);
        let (xl, yl) = (xs.label(self.x.0), ys.label(self.y.0));
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(xl.as_str())
                    .y_desc(yl.as_str())
                    .x_labels(8)
                    .y_labels(8)
                    .x_label_formatter(&x_tick)
                    .y_label_formatter(&y_tick)
                    .label_style(("sans-serif", 15))
                    .draw()
                    .map_err(e)?;
                let ok = |p: &(f64, f64)| (!log_x || p.0 > 0.0) && (!log_y || p.1 > 0.0);
                for l in &self.levels {
                    let c = l.color;
                    let y = l.y / ys.div;
                    chart
                        .draw_series(DashedLineSeries::new(
                            vec![(x0, y), (x1, y)],
                            8,
                            5,
                            c.stroke_width(2),
                        ))
                        .map_err(e)?
                        .label(format!(
                            "{} ({})",
                            l.label,
                            Scale::for_max(self.y.1, l.y).text(l.y)
                        ))
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
                }
                for s in &self.series {
                    let c = s.color;
                    let pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .filter(|p| p.0.is_finite() && p.1.is_finite())
                        .map(|p| (p.0 / xs.div, p.1 / ys.div))
                        .filter(ok)
                        .collect();
                    if pts.len() < 40 {
                        chart
                            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
                            .map_err(e)?;
                    }
                    // Wide lines join with mitres, which spike at the sharp turns of a dense,
                    // jagged series: dense series are drawn one pixel wide.
                    let width = if pts.len() > 150 { 1 } else { 2 };
                    let drawn = if s.dashed {
                        chart
                            .draw_series(DashedLineSeries::new(pts, 10, 6, c.stroke_width(width)))
                            .map_err(e)?
                    } else {
                        chart
                            .draw_series(LineSeries::new(pts, c.stroke_width(width)))
                            .map_err(e)?
                    };
                    if !s.label.is_empty() {
                        drawn.label(s.label.as_str()).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
                        });
                    }
                }
                if self.series.iter().any(|s| !s.label.is_empty()) || !self.levels.is_empty() {
                    chart
                        .configure_series_labels()
                        .position(self.legend.position())
                        .background_style(WHITE.mix(0.85))
                        .border_style(BLACK.mix(0.5))
                        .label_font(("sans-serif", 14))
                        .draw()
                        .map_err(e)?;
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

/// A tick label: no trailing ".0", few digits.
pub fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.1e}")
    }
}

/// The title, and under it in red what failed (if anything did).
pub fn heading(area: &Area, title: &str, notes: &[String]) -> Result<()> {
    let w = area.dim_in_pixel().0 as i32;
    let centre = |size: u32| {
        ("sans-serif", size)
            .into_font()
            .into_text_style(area)
            .pos(Pos::new(HPos::Center, VPos::Top))
    };
    area.draw(&Text::new(title, (w / 2, 10), centre(26))).map_err(e)?;
    for (i, n) in notes.iter().enumerate() {
        let red = RGBColor(200, 0, 0);
        let style = centre(16).color(&red);
        area.draw(&Text::new(n.as_str(), (w / 2, 44 + 20 * i as i32), style))
            .map_err(e)?;
    }
    Ok(())
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
}
