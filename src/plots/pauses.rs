//! `pauses.png`: the PFC pause timeline, a bar from each XOFF a port sent to its XON, one
//! labelled row per (port, priority), or per switch when a variant has too many ports for
//! rows to be read; nothing is left out silently (a full event log is said in the title).

use super::chart::{Quantity, Scale, tick};
use super::{Outcome, Run, VariantData, png_sized};
use anyhow::Result;
use models::telemetry::Trace;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Rows per variant before ports are grouped by switch.
const MAX_ROWS: usize = 32;

struct Row {
    label: String,
    bars: Vec<(f64, f64)>,
    variant: usize,
}

/// XOFF-to-XON intervals per (port, priority) from the event log; an XOFF with no XON yet
/// lasts to `end`.
fn intervals(d: &VariantData, end: f64) -> BTreeMap<(u32, u8), Vec<(f64, f64)>> {
    let mut open: BTreeMap<(u32, u8), f64> = BTreeMap::new();
    let mut bars: BTreeMap<(u32, u8), Vec<(f64, f64)>> = BTreeMap::new();
    for r in d.telemetry.log.rows() {
        let t = r.time.as_ns_f64();
        match r.event {
            Trace::Xoff => {
                open.entry((r.port.0, r.prio)).or_insert(t);
            }
            Trace::Xon => {
                if let Some(s) = open.remove(&(r.port.0, r.prio)) {
                    bars.entry((r.port.0, r.prio)).or_default().push((s, t));
                }
            }
            _ => {}
        }
    }
    for (k, s) in open {
        bars.entry(k).or_default().push((s, end));
    }
    bars
}

fn end_of(d: &VariantData) -> f64 {
    let last_sample = d.telemetry.sampler.times.last().map_or(0.0, |t| t.as_ns_f64());
    let last_log = d.telemetry.log.last().map_or(0.0, |r| r.time.as_ns_f64());
    d.report
        .summary
        .simulated_ns
        .max(last_sample)
        .max(last_log)
        .max(1.0)
}

pub fn pauses(path: &Path, run: &Run) -> Result<Outcome> {
    let end = run.variants.iter().map(end_of).fold(1.0, f64::max);
    let mut rows: Vec<Row> = Vec::new();
    let mut notes = Vec::new();
    for (v, d) in run.variants.iter().enumerate() {
        let bars = intervals(d, end_of(d));
        if d.telemetry.log.cut > 0 {
            notes.push(format!(
                "{}: the event log was full, later pauses not shown (raise run.event_log)",
                d.name()
            ));
        }
        if bars.len() <= MAX_ROWS {
            for ((p, prio), b) in bars {
                rows.push(Row {
                    label: format!("{}: {} prio {prio}", d.name(), d.telemetry.label(p)),
                    bars: b,
                    variant: v,
                });
            }
            continue;
        }
        // Too many ports to read one by one: one row per switch, its ports' pauses merged.
        let mut by_node: BTreeMap<String, (usize, Vec<(f64, f64)>)> = BTreeMap::new();
        for ((p, _), b) in bars {
            let node = d
                .telemetry
                .labels
                .get(&p)
                .map(|l| l.0.clone())
                .unwrap_or_default();
            let e = by_node.entry(node).or_default();
            e.0 += 1;
            e.1.extend(b);
        }
        for (node, (ports, b)) in by_node {
            rows.push(Row {
                label: format!("{}: {node} ({ports} ports)", d.name()),
                bars: b,
                variant: v,
            });
        }
    }
    if rows.is_empty() {
        return Ok(Outcome::Skipped("no PFC pause was sent".into()));
    }
    let ts = Scale::for_max(Quantity::Time, end);
    let height = (80 + 26 * rows.len() as u32 + 24 * notes.len() as u32).clamp(360, 4000);
    png_sized(path, (super::WIDTH, height), |root| {
        let n = rows.len();
        let longest = rows.iter().map(|r| r.label.len()).max().unwrap_or(10);
        let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "{}: PFC pauses sent, XOFF to XON (a row per port and priority)",
                    run.title
                ),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(44 + 24 * notes.len() as u32)
            .y_label_area_size((longest as u32 * 8).clamp(160, 520))
            // An integer range in plotters includes its end: 0..n - 1 is n segments.
            .build_cartesian_2d(0.0..end / ts.div, (0..n - 1).into_segmented())
            .map_err(super::e)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(ts.label("time"))
            .x_label_formatter(&|v| tick(*v))
            .y_labels(n)
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(i) => {
                    labels.get(n.saturating_sub(*i + 1)).cloned().unwrap_or_default()
                }
                _ => String::new(),
            })
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(super::e)?;
        let min_width = end / ts.div * 0.002;
        for (i, r) in rows.iter().enumerate() {
            let y = n - 1 - i;
            let c = run.variants[r.variant].color();
            chart
                .draw_series(r.bars.iter().map(|&(s, t)| {
                    let (s, t) = (s / ts.div, t / ts.div);
                    Rectangle::new(
                        [
                            (s, SegmentValue::Exact(y)),
                            ((t).max(s + min_width), SegmentValue::Exact(y + 1)),
                        ],
                        c.mix(0.85).filled(),
                    )
                }))
                .map_err(super::e)?;
        }
        let (_, h) = root.dim_in_pixel();
        for (k, note) in notes.iter().enumerate() {
            root.draw(&Text::new(
                note.clone(),
                (20, h as i32 - 20 - 24 * k as i32),
                ("sans-serif", 14),
            ))
            .map_err(super::e)?;
        }
        Ok(())
    })?;
    Ok(Outcome::Written)
}
