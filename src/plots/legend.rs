//! Chart legends: where one goes (the corner the data leaves free), its size, and drawing
//! it and its series' samples.

use super::Area;
use super::e;
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// How a series' points are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Marks {
    /// A line, with a dot on each point when there are few (under 40).
    #[default]
    Auto,
    /// A line only (a step function: its corners are not data points).
    Line,
    /// Dots only: too few points for a line between them to mean anything.
    Dots,
    /// Rings only (dots' companion series: a p99 beside a p50).
    Rings,
}

impl Marks {
    pub fn dots_only(self) -> bool {
        matches!(self, Marks::Dots | Marks::Rings)
    }
}

/// Where a chart's legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    /// The corner of the plotting area the data leaves free; when none is, the y axis is
    /// raised until the upper corners are (the legend never hides data).
    Auto,
    UpperLeft,
    UpperRight,
    LowerLeft,
    LowerRight,
}

/// Legend font size, pixels.
pub(super) const LEGEND_FONT: u32 = 14;

/// The legend's size in pixels for `labels` (plotters' layout: 1.25 line height, a 30 pixel
/// glyph column, 10 pixel margins).
pub(super) fn legend_size(labels: &[String]) -> (f64, f64) {
    let font = ("sans-serif", LEGEND_FONT).into_font();
    let w = labels
        .iter()
        .map(|l| font.box_size(l).map_or(l.len() as f64 * 8.0, |b| b.0 as f64))
        .fold(0.0, f64::max);
    let h = labels.len() as f64 * LEGEND_FONT as f64 * 1.25;
    (w + 30.0 + 20.0, h + 20.0)
}

/// Points of a chart in plotting-area fractions (0..1 each way), lines sampled between them.
pub(super) type Unit = Vec<(f64, f64)>;

/// Of the four corners, the one whose `size` box (fractions of the plotting area, with a
/// 5 pixel inset) holds the fewest of `pts`, and how many; upper corners first on a tie.
pub(super) fn freest_corner(pts: &Unit, size: (f64, f64)) -> (Corner, usize) {
    let (fw, fh) = size;
    let inside = |c: Corner, &(u, v): &(f64, f64)| {
        let left = u <= fw;
        let right = u >= 1.0 - fw;
        let top = v >= 1.0 - fh;
        let bottom = v <= fh;
        match c {
            Corner::UpperRight | Corner::Auto => right && top,
            Corner::UpperLeft => left && top,
            Corner::LowerRight => right && bottom,
            Corner::LowerLeft => left && bottom,
        }
    };
    [
        Corner::UpperRight,
        Corner::UpperLeft,
        Corner::LowerRight,
        Corner::LowerLeft,
    ]
    .into_iter()
    .map(|c| (c, pts.iter().filter(|p| inside(c, p)).count()))
    .min_by_key(|&(_, n)| n)
    .unwrap_or((Corner::UpperRight, 0))
}

/// Draw a legend's sample of a series on `area` at `at` (the left end of its 21 pixels): a
/// line (two dashes for a dashed one), a dot or a ring.
pub fn draw_glyph(
    area: &Area,
    at: (i32, i32),
    color: RGBColor,
    dashed: bool,
    marks: Marks,
    width: u32,
) -> Result<()> {
    let (x, y) = at;
    let line = color.stroke_width(width);
    match marks {
        Marks::Dots => area.draw(&Circle::new((x + 10, y), 6, color.filled())),
        Marks::Rings => area.draw(&Circle::new((x + 10, y), 7, color.stroke_width(2))),
        _ if dashed => area
            .draw(&PathElement::new(vec![(x, y), (x + 8, y)], line))
            .and_then(|_| area.draw(&PathElement::new(vec![(x + 13, y), (x + 21, y)], line))),
        _ => area.draw(&PathElement::new(vec![(x, y), (x + 21, y)], line)),
    }
    .map_err(e)
}

/// One legend line: its text and its series' look.
pub(super) struct Entry {
    pub text: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub marks: Marks,
    pub width: u32,
}

/// Draw the legend in `corner` of the plotting area `plot` (pixels of `area`).
pub(super) fn draw_legend(
    area: &Area,
    plot: (i32, i32, i32, i32),
    corner: Corner,
    entries: &[Entry],
) -> Result<()> {
    let labels: Vec<String> = entries.iter().map(|en| en.text.clone()).collect();
    let (w, h) = legend_size(&labels);
    let (w, h) = (w as i32, h as i32);
    let (l, t, r, b) = plot;
    let x = match corner {
        Corner::UpperLeft | Corner::LowerLeft => l + 5,
        _ => r - w - 5,
    };
    let y = match corner {
        Corner::LowerLeft | Corner::LowerRight => b - h - 5,
        _ => t + 5,
    };
    area.draw(&Rectangle::new([(x, y), (x + w, y + h)], WHITE.mix(0.9).filled()))
        .map_err(e)?;
    area.draw(&Rectangle::new([(x, y), (x + w, y + h)], BLACK.mix(0.5)))
        .map_err(e)?;
    let line = (LEGEND_FONT as f64 * 1.25) as i32;
    let font = ("sans-serif", LEGEND_FONT).into_font();
    for (i, en) in entries.iter().enumerate() {
        let cy = y + 10 + i as i32 * line + line / 2;
        draw_glyph(area, (x + 8, cy), en.color, en.dashed, en.marks, en.width)?;
        let style = font
            .clone()
            .into_text_style(area)
            .pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(en.text.clone(), (x + 40, cy), style))
            .map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_goes_to_the_corner_the_data_leaves_free() {
        // Data along the top right and bottom left: the upper left is free.
        let pts: Unit = (0..=20)
            .map(|i| (0.5 + i as f64 / 40.0, 0.9))
            .chain((0..=20).map(|i| (i as f64 / 40.0, 0.05)))
            .collect();
        assert_eq!(freest_corner(&pts, (0.3, 0.2)), (Corner::UpperLeft, 0));
    }
}
