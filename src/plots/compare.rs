//! `compare.png`: the variants side by side, one bar chart per headline metric, a bar per
//! variant in its run colour (`sim run` and `sim compare` both draw it).

use super::{e, png, variant_color};
use crate::metrics::{Row, panels};
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// `compare.png`: one bar chart per metric, a bar per variant.
pub fn compare(path: &Path, title: &str, rows: &[Row]) -> Result<()> {
    png(path, |root| {
        root.fill(&WHITE).map_err(e)?;
        let (top, body) = root.split_vertically(50);
        top.titled(title, ("sans-serif", 26)).map_err(e)?;
        let cells = body.split_evenly((2, 4));
        for (p, cell) in panels(rows).iter().zip(cells.iter()) {
            let (label, unit) = (&p.label, p.unit);
            let top = p.values.iter().flatten().fold(0.0, |a: f64, &b| a.max(b));
            if top == 0.0 {
                // Nothing to compare: say so instead of drawing an empty axis.
                cell.draw(&Text::new(
                    format!("{label}: 0 in every variant"),
                    (20, 40),
                    ("sans-serif", 17),
                ))
                .map_err(e)?;
                continue;
            }
            // Room over the tallest bar for its value, upright if need be.
            let max = top * if rows.len() > 5 { 1.45 } else { 1.2 };
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
                .y_label_formatter(&|v| super::chart::tick(*v))
                .label_style(("sans-serif", 12))
                .draw()
                .map_err(e)?;
            // A value over each bar, centred on it, as short as its precision allows;
            // turned upright when bars are too narrow for it to fit across.
            let slot = {
                let (a, _) = chart.backend_coord(&(0.0, 0.0));
                let (b, _) = chart.backend_coord(&(1.0, 0.0));
                (b - a).max(1)
            };
            for (i, v) in p.values.iter().enumerate() {
                let x = i as f64 + 0.5;
                let Some(v) = *v else {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "n/a".to_string(),
                            (x, max * 0.02),
                            ("sans-serif", 12)
                                .into_font()
                                .color(&BLACK)
                                .pos(Pos::new(HPos::Center, VPos::Bottom)),
                        )))
                        .map_err(e)?;
                    continue;
                };
                let c = variant_color(i);
                // A variant that left flows unfinished is drawn hollow: its FCTs are of the
                // flows that got through and its goodput is partial (report.md ranks it never).
                let style = match rows.get(i).is_none_or(Row::complete) {
                    true => c.filled(),
                    false => c.stroke_width(3),
                };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, v)],
                        style,
                    )))
                    .map_err(e)?;
                let text = value_text(v, p.count, top);
                let font = ("sans-serif", 13).into_font();
                let wide = font.box_size(&text).map_or(0, |b| b.0 as i32) + 4 > slot;
                let (px, py) = chart.backend_coord(&(x, v));
                let base = cell.get_base_pixel();
                let at = (px - base.0, py - base.1 - 3);
                let style = if wide {
                    font.transform(FontTransform::Rotate270)
                        .into_text_style(cell)
                        .pos(Pos::new(HPos::Left, VPos::Center))
                } else {
                    font.into_text_style(cell)
                        .pos(Pos::new(HPos::Center, VPos::Bottom))
                };
                cell.draw(&Text::new(text, at, style)).map_err(e)?;
            }
        }
        // The legend: variant colours.
        if let Some(cell) = cells.get(7) {
            let mut y = 20;
            for (i, r) in rows.iter().enumerate() {
                let style = match r.complete() {
                    true => variant_color(i).filled(),
                    false => variant_color(i).stroke_width(2),
                };
                cell.draw(&Rectangle::new([(10, y), (30, y + 16)], style))
                    .map_err(e)?;
                let name = crate::console::short(&r.name).into_owned();
                cell.draw(&Text::new(name, (38, y), ("sans-serif", 15)))
                    .map_err(e)?;
                if !r.complete() {
                    // Under the name: why its bar is hollow.
                    let why = format!(
                        "hollow: {} of {} flows unfinished",
                        r.total - r.completed,
                        r.total
                    );
                    cell.draw(&Text::new(why, (38, y + 18), ("sans-serif", 13)))
                        .map_err(e)?;
                    y += 18;
                }
                y += 24;
            }
        }
        Ok(())
    })
}

/// A bar's value in at most five characters: counts whole, others with a decimal under 100,
/// in thousands or millions when the panel's largest value (`top`) is ("2.4k" beside
/// "10.5k", not "2407").
pub fn value_text(v: f64, count: bool, top: f64) -> String {
    let a = top.abs().max(v.abs());
    if v == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if count || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::value_text;

    #[test]
    fn bar_values_are_short() {
        assert_eq!(value_text(10482.1, false, 10482.1), "10.5k");
        assert_eq!(value_text(2406.9, false, 10482.1), "2.4k");
        assert_eq!(value_text(356.6, false, 356.6), "357");
        assert_eq!(value_text(12.34, false, 356.5), "12.3");
        assert_eq!(value_text(2627.0, true, 2627.0), "2627");
        assert_eq!(value_text(0.0, true, 25346.0), "0");
        assert_eq!(value_text(2_410_000.0, true, 2_410_000.0), "2.41M");
    }
}
