//! Text helpers the plots share: tick labels, names in natural order, a figure's heading.

use super::{Area, e};
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Names in natural order (`leaf2` before `leaf10`).
pub fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |s: &str| {
        let split = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        let (head, tail) = s.split_at(split);
        let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
        (
            head.to_string(),
            digits.parse::<u64>().unwrap_or(0),
            tail.to_string(),
        )
    };
    key(a).cmp(&key(b))
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
