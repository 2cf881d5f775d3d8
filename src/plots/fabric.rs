//! Fabric views: every switch port's utilisation over time as a heat map
//! (`link_utilisation.png`, ports grouped by tier and switch), and the bytes each uplink
//! carried against its own switch's other uplinks (`ecmp_balance.png`), where ECMP's hash
//! collisions show as tall and empty bars and the traffic matrix does not.

use super::chart::{Quantity, Scale, tick};
use super::{Outcome, Run, VariantData, png, png_sized};
use anyhow::Result;
use models::topology::{NodeKind, Topology};
use plotters::prelude::*;
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

/// Rows of the heat map: groups of sampled ports (indices), each with a label, ordered by
/// tier (highest first), then switch, then port; merged to at most `max` rows.
fn rows(d: &VariantData, tier: &HashMap<String, usize>, max: usize) -> Vec<(String, Vec<usize>)> {
    let s = &d.telemetry.sampler;
    let mut ports: Vec<(usize, String, String, usize)> = (0..s.ports.len())
        .map(|i| {
            let (node, port) = d.telemetry.labels.get(&s.ports[i].0).cloned().unwrap_or_default();
            let t = tier.get(&node).copied().unwrap_or(0);
            (t, node, port, i)
        })
        .collect();
    ports.sort_by(|a, b| b.0.cmp(&a.0).then(natural(&a.1, &b.1)).then(natural(&a.2, &b.2)));
    let per = ports.len().div_ceil(max.max(1)).max(1);
    ports
        .chunks(per)
        .map(|c| {
            let label = if per == 1 {
                format!("{} {}", c[0].1, c[0].2)
            } else if c[0].1 == c[c.len() - 1].1 {
                c[0].1.clone()
            } else {
                format!("{}..{}", c[0].1, c[c.len() - 1].1)
            };
            (label, c.iter().map(|p| p.3).collect())
        })
        .collect()
}

/// Names in natural order (`leaf2` before `leaf10`).
pub fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    natural(a, b)
}

fn natural(a: &str, b: &str) -> std::cmp::Ordering {
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
    let height = (460 * run.variants.len() as u32).clamp(super::HEIGHT, 2000);
    png_sized(path, (super::WIDTH, height), |root| {
        let (top, body) = root.split_vertically(44);
        top.titled(
            &format!(
                "{}: switch port transmit utilisation (highest tier at the top)",
                run.title
            ),
            ("sans-serif", 22),
        )
        .map_err(super::e)?;
        let (maps, bar) = body.split_horizontally(super::WIDTH - 110);
        let cells = maps.split_evenly((run.variants.len(), 1));
        // One time axis for every variant, so their panels compare.
        let end = run
            .variants
            .iter()
            .filter_map(|d| d.telemetry.sampler.times.last())
            .map(|t| t.as_ns_f64())
            .fold(1.0, f64::max);
        for (d, cell) in run.variants.iter().zip(cells.iter()) {
            draw_map(cell, d, &tier, end)?;
        }
        color_bar(&bar)
    })?;
    Ok(Outcome::Written)
}

fn draw_map(cell: &super::Area, d: &VariantData, tier: &HashMap<String, usize>, end: f64) -> Result<()> {
    let s = &d.telemetry.sampler;
    let (_, h) = cell.dim_in_pixel();
    let groups = rows(d, tier, (h as usize / 4).clamp(8, 300));
    let n = s.times.len();
    let ts = Scale::for_max(Quantity::Time, end);
    let cols = n.clamp(1, 240);
    let per = n.div_ceil(cols).max(1);
    let labels: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    let mut chart = ChartBuilder::on(cell)
        .caption(d.name(), ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(170)
        .build_cartesian_2d(0.0..end / ts.div, 0.0..groups.len() as f64)
        .map_err(super::e)?;
    let step = groups.len().div_ceil(24).max(1);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(ts.label("time"))
        .x_label_formatter(&|v| tick(*v))
        .y_labels(groups.len().min(25))
        .y_label_formatter(&|y| {
            let i = y.floor() as usize;
            if i % step == 0 {
                labels
                    .get(groups.len().saturating_sub(i + 1))
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(super::e)?;
    let mut rects = Vec::new();
    for (r, (_, members)) in groups.iter().enumerate() {
        let y = (groups.len() - 1 - r) as f64;
        for c in 0..n.div_ceil(per) {
            let ks: Vec<usize> = (c * per + 1..((c + 1) * per + 1).min(n)).collect();
            if ks.is_empty() {
                continue;
            }
            let u: f64 = members
                .iter()
                .map(|&i| ks.iter().map(|&k| s.utilisation(i, k)).sum::<f64>())
                .sum::<f64>()
                / (members.len() * ks.len()) as f64;
            let (t0, t1) = (
                s.times[ks[0] - 1].as_ns_f64() / ts.div,
                s.times[*ks.last().unwrap()].as_ns_f64() / ts.div,
            );
            rects.push(Rectangle::new([(t0, y), (t1, y + 1.0)], heat(u).filled()));
        }
    }
    chart.draw_series(rects).map_err(super::e)?;
    Ok(())
}

fn color_bar(area: &super::Area) -> Result<()> {
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
            .filter(|c| &*c.counter == "tx_bytes")
            .filter_map(|c| {
                let peer = c.port.strip_prefix("to-")?.split('#').next()?;
                let (a, b) = (tier.get(&*c.node)?, tier.get(peer)?);
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
    let mut bars: Vec<(String, f64)> = Vec::new();
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
                .map(|u| (format!("{} {}", u.0, u.1), u.2 as f64 / mean)),
        );
    }
    let max = bars.iter().map(|b| b.1).fold(1.0, f64::max);
    let min = bars.iter().map(|b| b.1).fold(f64::INFINITY, f64::min);
    // Many uplinks: sorted, so the spread reads as a profile.
    let sorted = bars.len() > 96;
    if sorted {
        bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    }
    let caption = format!(
        "{}: {} uplinks of {switches} switches{}; dashed: an even split. Busiest / its switch's mean = {:.2}{}, least = {:.2}",
        d.name(),
        bars.len(),
        if sorted { " (sorted)" } else { "" },
        max,
        worst.map(|(_, s)| format!(" ({s})")).unwrap_or_default(),
        if min.is_finite() { min } else { 0.0 }
    );
    let mut chart = ChartBuilder::on(cell)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(if sorted { 20 } else { 90 })
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..bars.len().max(1) as f64 - 0.5, 0.0..max * 1.15)
        .map_err(super::e)?;
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let step = names.len().div_ceil(32).max(1);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc("sent / switch's uplink mean")
        .y_label_formatter(&|v| tick(*v))
        .x_labels(if sorted { 0 } else { names.len().min(40) + 2 })
        .x_label_formatter(&|x| {
            let i = x.round() as usize;
            if (x - x.round()).abs() < 1e-6 && i % step == 0 {
                names.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_style(("sans-serif", 11).into_font().transform(FontTransform::Rotate90))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(super::e)?;
    let c = d.color();
    chart
        .draw_series(
            bars.iter()
                .enumerate()
                .map(|(i, b)| Rectangle::new([(i as f64 - 0.4, 0.0), (i as f64 + 0.4, b.1)], c.filled())),
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
