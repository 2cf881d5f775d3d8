//! `pause_graph.png`: how PFC pauses propagated, on the topology. Nodes by tier (hosts at the
//! bottom; a ring of switches as a circle); each cable coloured and thickened by how long it
//! was paused; an arrow from the port that sent XOFF to the node it paused (the pause flows
//! against the traffic, hop by hop back to the senders); the port that started the first
//! storm ringed, and any deadlock cycle drawn in dark red.

use super::fabric::tiers;
use super::{Outcome, Run, VariantData, png};
use anyhow::Result;
use models::topology::NodeKind;
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Nodes drawn at most (switches first, then hosts on paused cables).
const MAX_NODES: usize = 160;

/// Pause time (us) each node sent toward each neighbour: `(from, to) -> us`.
type Paused = BTreeMap<(String, String), f64>;

/// The pause time of every cable of `d` that was paused.
fn paused(d: &VariantData) -> Paused {
    let mut m = BTreeMap::new();
    for c in d.report.counters.iter() {
        let (counter, port) = (c.counter, c.port);
        if !(counter.starts_with("tx_prio") && counter.ends_with("_pause_duration")) || c.value == 0 {
            continue;
        }
        let Some(peer) = port.strip_prefix("to-").and_then(|p| p.split('#').next()) else {
            continue;
        };
        *m.entry((c.node.to_string(), peer.to_string())).or_insert(0.0) += c.value as f64;
    }
    m
}

/// `node port` into (node, peer).
fn port_peer(s: &str) -> Option<(String, String)> {
    let (node, port) = s.split_once(' ')?;
    let peer = port.strip_prefix("to-")?.split('#').next()?;
    Some((node.to_string(), peer.to_string()))
}

pub fn pause_graph(path: &Path, run: &Run) -> Result<Outcome> {
    let with: Vec<(&VariantData, Paused)> = run
        .variants
        .iter()
        .map(|d| (d, paused(d)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if with.is_empty() {
        return Ok(Outcome::Skipped("no PFC pause was sent".into()));
    }
    png(path, |root| {
        let (top, body) = root.split_vertically(44);
        top.titled(
            &format!(
                "{}: PFC pause propagation (arrow: from the port that paused to the node it paused)",
                run.title
            ),
            ("sans-serif", 20),
        )
        .map_err(super::e)?;
        let cells = body.split_evenly((with.len(), 1));
        // One scale for every variant, so a panel's red means the same as its neighbour's.
        let max = with
            .iter()
            .flat_map(|(_, p)| p.values().copied())
            .fold(1.0, f64::max);
        for ((d, p), cell) in with.iter().zip(cells.iter()) {
            draw(cell, run, d, p, max)?;
        }
        Ok(())
    })?;
    Ok(Outcome::Written)
}

fn draw(cell: &super::Area, run: &Run, d: &VariantData, paused: &Paused, max: f64) -> Result<()> {
    let t = &run.scenario.topology;
    let tier = tiers(t);
    // The nodes to draw: every switch, and hosts on a paused cable (all hosts if few).
    let touched: BTreeSet<&str> = paused
        .keys()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    let few = t.nodes.len() <= 48;
    let mut nodes: Vec<&str> = t
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Switch || few || touched.contains(n.name.as_str()))
        .map(|n| n.name.as_str())
        .collect();
    let cut = nodes.len().saturating_sub(MAX_NODES);
    if cut > 0 {
        // A large fabric: keep the nodes on paused cables and their neighbours' tiers.
        nodes.retain(|n| touched.contains(n));
        nodes.truncate(MAX_NODES);
    }
    let (w, h) = cell.dim_in_pixel();
    let pos = layout(run, &nodes, &tier, (w as f64, h as f64));
    let most = paused.values().copied().fold(0.0, f64::max);
    // The deadlock cycles' and storm origins' cables.
    let cycle: BTreeSet<(String, String)> = d
        .report
        .summary
        .pfc_deadlocks
        .iter()
        .flat_map(|dl| dl.cycle.iter().filter_map(|p| port_peer(p)))
        .collect();
    let origins: BTreeSet<String> = d
        .report
        .summary
        .pfc_storm_list
        .iter()
        .filter_map(|s| s.started_by.split_once(' ').map(|(n, _)| n.to_string()))
        .collect();
    cell.draw(&Text::new(
        format!(
            "{}: {} paused, the most for {:.0} us in all (redder and thicker: paused longer in all, one scale for every variant){}{}",
            d.name(),
            crate::console::count(paused.len() as u64, "cable direction", "cable directions"),
            most,
            if cycle.is_empty() {
                ""
            } else {
                "; deadlock cycle in dark red"
            },
            if cut > 0 {
                format!(
                    "; {} not drawn",
                    crate::console::count(cut as u64, "unpaused node", "unpaused nodes")
                )
            } else {
                String::new()
            }
        ),
        (12, 8),
        ("sans-serif", 16),
    ))
    .map_err(super::e)?;
    // Cables: light grey, paused ones by how long.
    let mut drawn = BTreeSet::new();
    for l in &t.links {
        let (a, b) = (t.node_name(l.a), t.node_name(l.b));
        let (Some(&pa), Some(&pb)) = (pos.get(a), pos.get(b)) else {
            continue;
        };
        if !drawn.insert((a.min(b), a.max(b))) {
            continue;
        }
        cell.draw(&PathElement::new(
            vec![pa, pb],
            RGBColor(210, 210, 210).stroke_width(1),
        ))
        .map_err(super::e)?;
    }
    for ((from, to), us) in paused {
        let (Some(&pa), Some(&pb)) = (pos.get(from.as_str()), pos.get(to.as_str())) else {
            continue;
        };
        let in_cycle =
            cycle.contains(&(to.clone(), from.clone())) || cycle.contains(&(from.clone(), to.clone()));
        let f = us / max;
        let color = if in_cycle {
            RGBColor(120, 0, 0)
        } else {
            RGBColor(255, (200.0 * (1.0 - f)) as u8, (120.0 * (1.0 - f)) as u8)
        };
        let width = if in_cycle { 5 } else { 1 + (f * 5.0).round() as u32 };
        arrow(cell, pa, pb, color, width)?;
    }
    for n in &nodes {
        let Some(&p) = pos.get(*n) else { continue };
        let host = tier.get(*n).copied() == Some(0);
        let r = if host { 5 } else { 9 };
        let fill = if host {
            RGBColor(90, 90, 90)
        } else {
            RGBColor(31, 119, 180)
        };
        cell.draw(&Circle::new(p, r, fill.filled())).map_err(super::e)?;
        if origins.contains(*n) {
            cell.draw(&Circle::new(p, r + 6, RGBColor(255, 127, 14).stroke_width(3)))
                .map_err(super::e)?;
            cell.draw(&Text::new(
                "storm origin",
                (p.0 + 14, p.1 + 8),
                ("sans-serif", 13).into_font().color(&RGBColor(200, 90, 0)),
            ))
            .map_err(super::e)?;
        }
    }
    // Names where they fit: left to right along each row, a name only clear of the last.
    let font = ("sans-serif", 12).into_font();
    let mut by_x: Vec<(&str, (i32, i32))> = nodes
        .iter()
        .filter(|n| tier.get(**n).copied() != Some(0) || nodes.len() <= 40)
        .filter_map(|n| pos.get(*n).map(|&p| (*n, p)))
        .collect();
    by_x.sort_by_key(|&(_, p)| (p.1, p.0));
    let mut row_end: HashMap<i32, i32> = HashMap::new();
    for (n, p) in by_x {
        let w = font.box_size(n).map_or(8 * n.len() as i32, |b| b.0 as i32);
        let x = p.0 - w / 2;
        let end = row_end.entry(p.1).or_insert(i32::MIN);
        if x > *end + 4 {
            cell.draw(&Text::new(n.to_string(), (x, p.1 - 22), font.clone()))
                .map_err(super::e)?;
            *end = x + w;
        }
    }
    Ok(())
}

/// An arrow from `a` toward `b`, offset to the right of the line (the two directions of a
/// cable apart), its head short of `b`'s circle.
fn arrow(cell: &super::Area, a: (i32, i32), b: (i32, i32), c: RGBColor, width: u32) -> Result<()> {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let (ux, uy) = (dx / len, dy / len);
    let (ox, oy) = (-uy * 4.0, ux * 4.0);
    let start = (a.0 as f64 + ux * 12.0 + ox, a.1 as f64 + uy * 12.0 + oy);
    let end = (b.0 as f64 - ux * 14.0 + ox, b.1 as f64 - uy * 14.0 + oy);
    let p = |x: (f64, f64)| (x.0.round() as i32, x.1.round() as i32);
    cell.draw(&PathElement::new(vec![p(start), p(end)], c.stroke_width(width)))
        .map_err(super::e)?;
    let head = 10.0;
    let left = (
        end.0 - ux * head - uy * head * 0.5,
        end.1 - uy * head + ux * head * 0.5,
    );
    let right = (
        end.0 - ux * head + uy * head * 0.5,
        end.1 - uy * head - ux * head * 0.5,
    );
    cell.draw(&Polygon::new(vec![p(end), p(left), p(right)], c.filled()))
        .map_err(super::e)?;
    Ok(())
}

/// Pixel positions: tiers as rows (highest at the top), nodes in natural order; switches all
/// of one tier joined to each other (a ring) go round a circle, their hosts outside.
fn layout(
    run: &Run,
    nodes: &[&str],
    tier: &HashMap<String, usize>,
    (w, h): (f64, f64),
) -> HashMap<String, (i32, i32)> {
    let t = &run.scenario.topology;
    let switch_tiers: BTreeSet<usize> = nodes
        .iter()
        .filter(|n| tier.get(**n).is_some_and(|&k| k > 0))
        .map(|n| tier[*n])
        .collect();
    let switch_links = t
        .links
        .iter()
        .filter(|l| {
            t.nodes[l.a.idx()].kind == NodeKind::Switch && t.nodes[l.b.idx()].kind == NodeKind::Switch
        })
        .count();
    let switches = t.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count();
    let mut pos = HashMap::new();
    let flat = switch_tiers.len() == 1 && switch_links > 0;
    if flat && switch_links >= switches && switches >= 3 {
        // A ring of switches: a circle, each host just outside its switch.
        let sws: Vec<&str> = nodes
            .iter()
            .copied()
            .filter(|n| tier.get(*n) != Some(&0))
            .collect();
        let (cx, cy, r) = (w / 2.0, h / 2.0 + 14.0, (h / 2.0 - 70.0).min(w / 3.0));
        for (i, n) in sws.iter().enumerate() {
            let a = std::f64::consts::TAU * i as f64 / sws.len() as f64 - std::f64::consts::FRAC_PI_2;
            pos.insert(
                n.to_string(),
                ((cx + r * a.cos()) as i32, (cy + r * a.sin()) as i32),
            );
        }
        let mut around: HashMap<&str, usize> = HashMap::new();
        for l in &t.links {
            let (a, b) = (t.node_name(l.a), t.node_name(l.b));
            let (sw, host) = match (tier.get(a), tier.get(b)) {
                (Some(0), _) => (b, a),
                (_, Some(0)) => (a, b),
                _ => continue,
            };
            let (Some(&(sx, sy)), true) = (pos.get(sw), nodes.contains(&host)) else {
                continue;
            };
            let k = around.entry(sw).or_default();
            let a = ((sy as f64 - cy).atan2(sx as f64 - cx)) + (*k as f64 - 1.0) * 0.18;
            *k += 1;
            pos.insert(
                host.to_string(),
                (
                    (cx + (r + 45.0) * a.cos()) as i32,
                    (cy + (r + 45.0) * a.sin()) as i32,
                ),
            );
        }
        return pos;
    }
    if flat {
        // A chain of switches (a dumbbell, a parking lot): a row, each switch's hosts below it.
        let mut sws: Vec<&str> = nodes
            .iter()
            .copied()
            .filter(|n| tier.get(*n) != Some(&0))
            .collect();
        sws.sort_by(|a, b| super::chart::natural_order(a, b));
        let slot = (w - 80.0) / sws.len() as f64;
        for (i, n) in sws.iter().enumerate() {
            pos.insert(
                n.to_string(),
                ((40.0 + slot * (i as f64 + 0.5)) as i32, (h * 0.3) as i32),
            );
        }
        let mut under: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for l in &t.links {
            let (a, b) = (t.node_name(l.a), t.node_name(l.b));
            match (tier.get(a), tier.get(b)) {
                (Some(0), _) if nodes.contains(&a) => under.entry(b.to_string()).or_default().push(a),
                (_, Some(0)) if nodes.contains(&b) => under.entry(a.to_string()).or_default().push(b),
                _ => {}
            }
        }
        for (sw, hosts) in under {
            let Some(&(sx, _)) = pos.get(&sw) else { continue };
            for (k, host) in hosts.iter().enumerate() {
                let x = sx as f64 + slot * 0.8 * ((k as f64 + 0.5) / hosts.len() as f64 - 0.5);
                pos.insert(host.to_string(), (x as i32, (h * 0.8) as i32));
            }
        }
        return pos;
    }
    let top = switch_tiers.iter().max().copied().unwrap_or(1);
    let mut by_tier: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for n in nodes {
        by_tier
            .entry(tier.get(*n).copied().unwrap_or(0))
            .or_default()
            .push(n);
    }
    for (k, mut ns) in by_tier {
        ns.sort_by(|a, b| super::chart::natural_order(a, b));
        // Hosts alone (cabled to each other): one row across the middle.
        let y = if switch_tiers.is_empty() {
            h / 2.0
        } else {
            50.0 + (h - 90.0) * (top - k.min(top)) as f64 / top.max(1) as f64
        };
        for (i, n) in ns.iter().enumerate() {
            let x = 40.0 + (w - 80.0) * (i as f64 + 0.5) / ns.len() as f64;
            pos.insert(n.to_string(), (x as i32, y as i32));
        }
    }
    pos
}
