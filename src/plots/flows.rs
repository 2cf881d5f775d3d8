//! `flow_rates.png`: flow by flow, the rate at which bytes reached the receiver, and the
//! sender's control variable beside it (DCQCN's rate limit, or NSCC's window), so a victim
//! starving behind a pause or DCQCN's rates collapsing show flow by flow.
//!
//! The flows: those `[telemetry] flows` names; otherwise every flow marked `victim`, the
//! slowest three (unfinished first) and the fastest, among the flows the run sampled.

use super::chart::{Chart, Quantity, Series};
use super::{Outcome, Run, VariantData, series_color};
use anyhow::Result;
use models::telemetry::Control;
use std::path::Path;

/// The flows to draw for one variant, in order.
pub fn chosen(run: &Run, d: &VariantData) -> Vec<u32> {
    let sampled = |f: &u32| d.telemetry.flows.column(*f).is_some();
    if !run.scenario.plotted_flows.is_empty() {
        return run
            .scenario
            .plotted_flows
            .iter()
            .copied()
            .filter(sampled)
            .collect();
    }
    let mut by_speed: Vec<(f64, u32)> = d
        .report
        .flows
        .iter()
        .filter(|f| sampled(&f.flow_id))
        .map(|f| (f.slowdown.unwrap_or(f64::INFINITY), f.flow_id))
        .collect();
    by_speed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<u32> = run.scenario.victims.iter().copied().filter(sampled).collect();
    for &(_, f) in by_speed.iter().take(3).chain(by_speed.last()) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out.truncate(8);
    out
}

fn label(run: &Run, d: &VariantData, f: u32) -> String {
    let r = &d.report.flows[f as usize];
    let victim = if run.scenario.victims.contains(&f) {
        " (victim)"
    } else {
        ""
    };
    let how = match r.slowdown {
        Some(s) => format!("slowdown {s:.1}"),
        None => "unfinished".into(),
    };
    format!("flow {f} {}->{}{victim}, {how}", r.src, r.dst)
}

pub fn flow_rates(path: &Path, run: &Run) -> Result<Outcome> {
    let picks: Vec<Vec<u32>> = run.variants.iter().map(|d| chosen(run, d)).collect();
    if picks.iter().all(|p| p.is_empty()) || run.variants.iter().all(|d| d.telemetry.flows.times.len() < 2) {
        return Ok(Outcome::Skipped("no flow was sampled over two intervals".into()));
    }
    let has_control = run
        .variants
        .iter()
        .any(|d| d.telemetry.flows.kind != Control::None);
    let size = (
        super::WIDTH,
        (360 * run.variants.len() as u32).clamp(super::HEIGHT, 1800),
    );
    super::png_sized(path, size, |root| {
        let (top, body) = root.split_vertically(44);
        top.titled(&format!("{}: per-flow dynamics", run.title), ("sans-serif", 24))
            .map_err(super::e)?;
        let cols = if has_control { 2 } else { 1 };
        let cells = body.split_evenly((run.variants.len(), cols));
        for (v, d) in run.variants.iter().enumerate() {
            let fs = &d.telemetry.flows;
            let rate_title = format!("{}: rate delivered to the receiver (moving average)", d.name());
            let mut rate = Chart::new(
                &rate_title,
                ("time", Quantity::Time),
                ("delivered", Quantity::Rate),
            );
            rate.caption = 17;
            let (ctl_name, ctl_q) = match fs.kind {
                Control::Rate => ("DCQCN rate limit", Quantity::Rate),
                Control::Window => ("congestion window", Quantity::Bytes),
                Control::None => ("", Quantity::Plain),
            };
            let ctl_title = format!("{}: sender's {ctl_name}", d.name());
            let mut ctl = Chart::new(&ctl_title, ("time", Quantity::Time), (ctl_name, ctl_q));
            ctl.caption = 17;
            for (k, &f) in picks[v].iter().enumerate() {
                let Some(col) = fs.column(f) else { continue };
                let color = series_color(k);
                // The rate over a trailing window of about 1/80 of the run: a single sample
                // interval holds a packet or two, too few for a rate.
                let n = fs.times.len();
                let w = n.div_ceil(80).max(1);
                let pts: Vec<(f64, f64)> = (1..n)
                    .map(|i| {
                        let j = i.saturating_sub(w);
                        let dt = (fs.times[i] - fs.times[j]).as_secs_f64().max(1e-15);
                        let bytes = fs.at(col, i).0.saturating_sub(fs.at(col, j).0);
                        (fs.times[i].as_ns_f64(), bytes as f64 * 8.0 / dt)
                    })
                    .collect();
                rate.series.push(Series {
                    label: label(run, d, f),
                    color,
                    dashed: false,
                    points: pts,
                });
                if fs.kind != Control::None {
                    let pts = (0..fs.times.len())
                        .map(|i| (fs.times[i].as_ns_f64(), fs.at(col, i).1))
                        .collect();
                    ctl.series.push(Series {
                        label: String::new(),
                        color,
                        dashed: false,
                        points: pts,
                    });
                }
            }
            rate.draw(&cells[v * cols])?;
            if has_control {
                if fs.kind == Control::None {
                    let cell = &cells[v * cols + 1];
                    cell.draw(&plotters::prelude::Text::new(
                        format!("{}: no rate limit or window (no congestion control)", d.name()),
                        (20, 40),
                        ("sans-serif", 17),
                    ))
                    .map_err(super::e)?;
                } else {
                    ctl.draw(&cells[v * cols + 1])?;
                }
            }
        }
        Ok(())
    })?;
    Ok(Outcome::Written)
}
