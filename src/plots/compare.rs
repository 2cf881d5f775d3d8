//! `compare.png`: the variants side by side, one bar chart per headline metric, a bar per
//! variant in its run colour (`sim run` and `sim compare` both draw it).

use super::{e, png, variant_color};
use crate::metrics::{Row, panels};
use anyhow::Result;
use plotters::prelude::*;
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
            let max = top * 1.2;
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
            for (i, v) in p.values.iter().enumerate() {
                let Some(v) = *v else {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "n/a".to_string(),
                            (i as f64 + 0.2, max * 0.02),
                            ("sans-serif", 12),
                        )))
                        .map_err(e)?;
                    continue;
                };
                let c = variant_color(i);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, v)],
                        c.filled(),
                    )))
                    .map_err(e)?;
                let text = if p.count {
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
                cell.draw(&Rectangle::new(
                    [(10, y), (30, y + 16)],
                    variant_color(i).filled(),
                ))
                .map_err(e)?;
                cell.draw(&Text::new(
                    crate::console::short(&r.name).into_owned(),
                    (38, y),
                    ("sans-serif", 15),
                ))
                .map_err(e)?;
            }
        }
        Ok(())
    })
}
