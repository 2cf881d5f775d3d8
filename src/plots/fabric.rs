//! Fabric views: every switch port's utilisation over time as a heat map
//! (`link_utilisation.png`, ports grouped by tier and switch), and the bytes each uplink
//! carried against its own switch's other uplinks (`ecmp_balance.png`), where ECMP's hash
//! collisions show as tall and empty bars and the traffic matrix does not.

use super::chart::{Quantity, Scale, natural_order as natural, tick};
use super::port_rows::{down_at_sampled, rows};
use super::{Outcome, Run, VariantData, png};
use anyhow::Result;
use models::topology::{NodeKind, Topology};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::HashMap;
use std::path::Path;

/// Each node's tier: hops from the nearest host (hosts 0, their switches 1, ...).
pub fn tiers(t: &Topology) -> HashMap<String, usize> {
    let n = t.nodes.len();
    let mut adj = vec![Vec::new(); n];
    for l in &t.links {
        adj[l.a.idx()].push(l.b.idx());
        adj[l.b.idx()].push(l.a.idx());
    }
    let mut tier = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for h in &t.hosts {
        tier[h.idx()] = 0;
        queue.push_back(h.idx());
    }
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if tier[w] == usize::MAX {
                tier[w] = tier[v] + 1;
                queue.push_back(w);
            }
        }
    }
    t.nodes
        .iter()
        .zip(tier)
        .map(|(s, k)| (s.name.clone(), k))
        .collect()
}

/// Utilisation 0..1 as a colour: white, yellow, orange, red, dark red.
fn heat(u: f64) -> RGBColor {
    const STOPS: [(f64, (f64, f64, f64)); 5] = [
        (0.0, (255.0, 255.0, 255.0)),
        (0.25, (255.0, 237.0, 160.0)),
        (0.5, (254.0, 178.0, 76.0)),
        (0.75, (240.0, 59.0, 32.0)),
        (1.0, (128.0, 0.0, 38.0)),
    ];
    let u = u.clamp(0.0, 1.0);
    let i = STOPS.iter().position(|s| s.0 >= u).unwrap_or(4).max(1);
    let ((a, ca), (b, cb)) = (STOPS[i - 1], STOPS[i]);
    let f = if b > a { (u - a) / (b - a) } else { 0.0 };
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2))
}

/// Pixels per labelled row at the least.
const ROW_PX: u32 = 15;
/// Paused time is drawn in this colour over the heat (utilisation never is blue).
const PAUSED: RGBColor = RGBColor(30, 90, 200);
/// A cable's down time, over the heat (utilisation never is grey).
const DOWN: RGBColor = RGBColor(90, 90, 90);

pub fn link_utilisation(path: &Path, run: &Run) -> Result<Outcome> {
    let busy = |d: &VariantData| {
        let s = &d.telemetry.sampler;
        (0..s.ports.len()).any(|i| (0..s.times.len()).any(|k| s.utilisation(i, k) > 0.0))
    };
    if !run.variants.iter().any(busy) {
        return Ok(Outcome::Skipped(
            "no switch port sent anything while sampled".into(),
        ));
    }
    let tier = tiers(&run.scenario.topology);
    // One time axis for every variant, so their panels compare.
    let end = run
        .variants
        .iter()
        .filter_map(|d| d.telemetry.sampler.times.last())
        .map(|t| t.as_ns_f64())
        .fold(1.0, f64::max);
    // Each variant's ports' down times, to its own end (within the axis).
    let down: Vec<HashMap<usize, Vec<(f64, f64)>>> = run
        .variants
        .iter()
        .map(|d| {
            let own_end = super::pauses::end_of(d).min(end);
            down_at_sampled(d, &run.scenario.faults, &run.scenario.topology, own_end)
        })
        .collect();
    let any_down = down.iter().any(|m| !m.is_empty());
    png(path, |root| {
        let (top, body) = root.split_vertically(40);
        top.titled(
            &format!(
                "{}: switch port transmit utilisation, PFC-paused time in blue{} (highest tier at the top)",
                run.title,
                if any_down { ", link down in grey" } else { "" }
            ),
            ("sans-serif", 20),
        )
        .map_err(super::e)?;
        let (maps, bar) = body.split_horizontally(super::WIDTH - 110);
        let cells = maps.split_evenly((run.variants.len(), 1));
        for ((d, down), cell) in run.variants.iter().zip(&down).zip(cells.iter()) {
            let hosts_paused = super::pauses::hosts_paused(d, run);
            draw_map(cell, d, &tier, end, hosts_paused, down)?;
        }
        color_bar(&bar, any_down)
    })?;
    Ok(Outcome::Written)
}

fn draw_map(
    cell: &super::Area,
    d: &VariantData,
    tier: &HashMap<String, usize>,
    end: f64,
    hosts_paused: bool,
    down: &HashMap<usize, Vec<(f64, f64)>>,
) -> Result<()> {
    let s = &d.telemetry.sampler;
    let (_, h) = cell.dim_in_pixel();
    let rows_px = h.saturating_sub(14 + 30 + 16);
    // Pauses still in force close, and shares are taken, at this variant's own end (the axis
    // is every variant's longest run).
    let own_end = super::pauses::end_of(d).min(end);
    let groups = rows(d, tier, (rows_px / ROW_PX) as usize, own_end, down);
    let n = s.times.len();
    let ts = Scale::for_max(Quantity::Time, end);
    let cols = n.clamp(1, 240);
    let per = n.div_ceil(cols).max(1);
    let longest = groups.iter().map(|g| g.label.len()).max().unwrap_or(10) as u32;
    let mut chart = ChartBuilder::on(cell)
        .caption(
            match hosts_paused {
                true => format!(
                    "{} (host NICs were paused too: their ports are not rows here; pauses.png)",
                    d.name()
                ),
                false => d.name().to_string(),
            },
            ("sans-serif", 14),
        )
        .margin(6)
        .x_label_area_size(30)
        .y_label_area_size((longest * 7 + 12).clamp(90, 300))
        .build_cartesian_2d(0.0..end / ts.div, 0.0..groups.len().max(1) as f64)
        .map_err(super::e)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(ts.label("time"))
        .x_label_formatter(&|v| tick(*v))
        .y_labels(0)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(super::e)?;
    let mut rects = Vec::new();
    let mut bands = Vec::new();
    for (r, row) in groups.iter().enumerate() {
        let y = (groups.len() - 1 - r) as f64;
        for c in 0..n.div_ceil(per) {
            let ks: Vec<usize> = (c * per + 1..((c + 1) * per + 1).min(n)).collect();
            if ks.is_empty() {
                continue;
            }
            let u: f64 = row
                .members
                .iter()
                .map(|&i| ks.iter().map(|&k| s.utilisation(i, k)).sum::<f64>())
                .sum::<f64>()
                / (row.members.len() * ks.len()) as f64;
            let (t0, t1) = (
                s.times[ks[0] - 1].as_ns_f64() / ts.div,
                s.times[*ks.last().unwrap()].as_ns_f64() / ts.div,
            );
            rects.push(Rectangle::new([(t0, y), (t1, y + 1.0)], heat(u).filled()));
        }
        // Paused time: a band along the bottom third of the row; down time, along the top
        // third, from the cut to the repair to the instant (not to the next sample).
        let min_width = end / ts.div * 0.002;
        let spans = [(&row.paused, 0.04, PAUSED), (&row.down, 0.64, DOWN)];
        for (bars, at, color) in spans {
            for &(a, b) in bars {
                let (a, b) = (a / ts.div, b / ts.div);
                bands.push(Rectangle::new(
                    [(a, y + at), (b.max(a + min_width), y + at + 0.32)],
                    color.filled(),
                ));
            }
        }
    }
    chart.draw_series(rects).map_err(super::e)?;
    chart.draw_series(bands).map_err(super::e)?;
    // Row labels, each centred on its row; rows apart by a thin line when grouped.
    let base = cell.get_base_pixel();
    let (x0, _) = chart.backend_coord(&(0.0, 0.0));
    for (r, row) in groups.iter().enumerate() {
        let y = (groups.len() - 1 - r) as f64 + 0.5;
        let (_, py) = chart.backend_coord(&(0.0, y));
        let color = if row.paused.is_empty() { BLACK } else { PAUSED };
        let style = ("sans-serif", 12)
            .into_font()
            .color(&color)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let text = if row.marked {
            format!("\u{25b8} {}", row.label)
        } else {
            row.label.clone()
        };
        cell.draw(&Text::new(text, (x0 - base.0 - 6, py - base.1), style))
            .map_err(super::e)?;
    }
    Ok(())
}

fn color_bar(area: &super::Area, with_down: bool) -> Result<()> {
    let (_, h) = area.dim_in_pixel();
    let (top, bottom) = (60i32, h as i32 - 60);
    for y in top..bottom {
        let u = 1.0 - (y - top) as f64 / (bottom - top) as f64;
        area.draw(&Rectangle::new([(20, y), (45, y + 1)], heat(u).filled()))
            .map_err(super::e)?;
    }
    for (u, text) in [(1.0, "100 %"), (0.5, "50 %"), (0.0, "0 %")] {
        let y = bottom - ((bottom - top) as f64 * u) as i32;
        area.draw(&Text::new(text, (50, y - 7), ("sans-serif", 14)))
            .map_err(super::e)?;
    }
    area.draw(&Text::new("utilisation", (5, top - 30), ("sans-serif", 14)))
        .map_err(super::e)?;
    let y = bottom + 22;
    area.draw(&Rectangle::new([(20, y), (45, y + 10)], PAUSED.filled()))
        .map_err(super::e)?;
    area.draw(&Text::new("paused", (50, y - 2), ("sans-serif", 14)))
        .map_err(super::e)?;
    if with_down {
        let y = y + 18;
        area.draw(&Rectangle::new([(20, y), (45, y + 10)], DOWN.filled()))
            .map_err(super::e)?;
        area.draw(&Text::new("down", (50, y - 2), ("sans-serif", 14)))
            .map_err(super::e)?;
    }
    Ok(())
}

/// Bytes each uplink (a switch's port toward a switch of the next tier) sent, per variant.
pub fn ecmp_balance(path: &Path, run: &Run) -> Result<Outcome> {
    let tier = tiers(&run.scenario.topology);
    let switch = |n: &str| {
        run.scenario
            .topology
            .nodes
            .iter()
            .any(|s| s.name == n && s.kind == NodeKind::Switch)
    };
    let uplinks = |d: &VariantData| -> Vec<(String, String, u64)> {
        let mut v: Vec<(String, String, u64)> = d
            .report
            .counters
            .iter()
            .filter(|c| c.counter == "tx_bytes")
            .filter_map(|c| {
                let peer = c.port.strip_prefix("to-")?.split('#').next()?;
                let (a, b) = (tier.get(c.node)?, tier.get(peer)?);
                (*b == a + 1 && *a >= 1 && switch(peer))
                    .then(|| (c.node.to_string(), c.port.to_string(), c.value))
            })
            .collect();
        v.sort_by(|a, b| natural(&a.0, &b.0).then(natural(&a.1, &b.1)));
        v
    };
    let all: Vec<Vec<(String, String, u64)>> = run.variants.iter().map(uplinks).collect();
    if all.iter().all(|u| u.len() < 2) {
        return Ok(Outcome::Skipped("the fabric has no parallel uplinks".into()));
    }
    if all.iter().all(|u| u.iter().all(|x| x.2 == 0)) {
        return Ok(Outcome::Skipped("no uplink carried traffic".into()));
    }
    png(path, |root| {
        let (top, body) = root.split_vertically(44);
        top.titled(
            &format!(
                "{}: each uplink's bytes against its own switch's other uplinks (ECMP balance)",
                run.title
            ),
            ("sans-serif", 22),
        )
        .map_err(super::e)?;
        let cells = body.split_evenly((run.variants.len(), 1));
        for ((d, ups), cell) in run.variants.iter().zip(&all).zip(cells.iter()) {
            draw_balance(cell, d, ups)?;
        }
        Ok(())
    })?;
    Ok(Outcome::Written)
}

/// Each uplink's bytes over the mean of its own switch's uplinks: a switch that sends more
/// than another is the traffic matrix; uplinks of one switch that differ are the hash (or the
/// load balancer). Switches whose uplinks carried nothing are left out.
fn draw_balance(cell: &super::Area, d: &VariantData, ups: &[(String, String, u64)]) -> Result<()> {
    // (switch, port, sent / its switch's mean)
    let mut bars: Vec<(String, String, f64)> = Vec::new();
    let mut worst: Option<(f64, &str)> = None;
    let mut switches = 0;
    for group in ups.chunk_by(|a, b| a.0 == b.0) {
        let mean = group.iter().map(|u| u.2 as f64).sum::<f64>() / group.len() as f64;
        if mean <= 0.0 {
            continue;
        }
        switches += 1;
        let top = group.iter().map(|u| u.2).max().unwrap_or(0) as f64 / mean;
        if worst.is_none_or(|(w, _)| top > w) {
            worst = Some((top, &group[0].0));
        }
        bars.extend(
            group
                .iter()
                .map(|u| (u.0.clone(), u.1.clone(), u.2 as f64 / mean)),
        );
    }
    let max = bars.iter().map(|b| b.2).fold(1.0, f64::max);
    let min = bars.iter().map(|b| b.2).fold(f64::INFINITY, f64::min);
    // Many uplinks: sorted, so the spread reads as a profile.
    let sorted = bars.len() > 96;
    if sorted {
        bars.sort_by(|a, b| b.2.total_cmp(&a.2));
    }
    let caption = format!(
        "{}: {} of {}{}; dashed: an even split. Busiest / its switch's mean = {:.2}{}, least = {:.2}",
        d.name(),
        crate::console::count(bars.len() as u64, "uplink", "uplinks"),
        crate::console::count(switches, "switch", "switches"),
        if sorted { " (sorted)" } else { "" },
        max,
        worst.map(|(_, s)| format!(" ({s})")).unwrap_or_default(),
        if min.is_finite() { min } else { 0.0 }
    );
    // Each bar named upright under it when the panel is tall enough and the bars wide
    // enough; else each switch named under its run of bars.
    let (w, h) = cell.dim_in_pixel();
    let upright = !sorted && h >= 300 && (w as usize).saturating_sub(90) / bars.len().max(1) >= 13;
    let mut chart = ChartBuilder::on(cell)
        .caption(caption, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(match (sorted, upright) {
            (true, _) => 12,
            (false, true) => 105,
            (false, false) => 24,
        })
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..bars.len().max(1) as f64 - 0.5, 0.0..max * 1.15)
        .map_err(super::e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc("sent / switch's uplink mean")
        .y_label_formatter(&|v| tick(*v))
        .x_labels(0)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(super::e)?;
    let base = cell.get_base_pixel();
    let at = |x: f64| {
        let (px, py) = chart.backend_coord(&(x, 0.0));
        (px - base.0, py - base.1 + 4)
    };
    if upright {
        let style = ("sans-serif", 11)
            .into_font()
            .transform(FontTransform::Rotate90)
            .into_text_style(cell)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, b) in bars.iter().enumerate() {
            cell.draw(&Text::new(
                format!("{} {}", b.0, b.1),
                at(i as f64),
                style.clone(),
            ))
            .map_err(super::e)?;
        }
    } else if !sorted {
        let style = ("sans-serif", 12)
            .into_font()
            .into_text_style(cell)
            .pos(Pos::new(HPos::Center, VPos::Top));
        let mut start = 0;
        for run in bars.chunk_by(|a, b| a.0 == b.0) {
            let mid = start as f64 + (run.len() as f64 - 1.0) / 2.0;
            cell.draw(&Text::new(run[0].0.clone(), at(mid), style.clone()))
                .map_err(super::e)?;
            start += run.len();
        }
    }
    let c = d.color();
    chart
        .draw_series(
            bars.iter()
                .enumerate()
                .map(|(i, b)| Rectangle::new([(i as f64 - 0.4, 0.0), (i as f64 + 0.4, b.2)], c.filled())),
        )
        .map_err(super::e)?;
    chart
        .draw_series(DashedLineSeries::new(
            vec![(-0.5, 1.0), (bars.len() as f64 - 0.5, 1.0)],
            8,
            5,
            BLACK.stroke_width(2),
        ))
        .map_err(super::e)?;
    Ok(())
}
