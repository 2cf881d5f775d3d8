//! `pauses.png`: the PFC pause timeline, a bar from each XOFF a port sent to its XON, one
//! labelled row per (port, priority), or per switch (or run of switches) when a variant has
//! too many ports for rows to be read; nothing is left out silently (a full event log is
//! said under the plot).

use super::chart::{Quantity, Scale, tick};
use super::{Outcome, Run, VariantData, png};
use anyhow::Result;
use models::telemetry::Trace;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Pixels a row needs to be read.
const ROW_PX: usize = 17;

/// A switch's paused ports: how many, and their pauses together.
type Merged = (usize, Vec<(f64, f64)>);

struct Row {
    label: String,
    bars: Vec<(f64, f64)>,
    variant: usize,
}

/// XOFF-to-XON intervals per (port, priority) from the event log; an XOFF with no XON yet
/// lasts to `end`.
pub(super) fn intervals(d: &VariantData, end: f64) -> BTreeMap<(u32, u8), Vec<(f64, f64)>> {
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

/// Each sampled port's PFC pause intervals (ns), from the XOFFs and XONs its peer sent it:
/// an XOFF from `a`'s port `to-b#k` pauses `b`'s port `to-a#k`.
pub(super) fn paused_at_sampled(d: &VariantData, end: f64) -> HashMap<usize, Vec<(f64, f64)>> {
    let s = &d.telemetry.sampler;
    let index: HashMap<(String, String), usize> = (0..s.ports.len())
        .filter_map(|i| d.telemetry.labels.get(&s.ports[i].0).map(|l| (l.clone(), i)))
        .collect();
    let ignored = watchdog_ignored(d, end);
    let mut out: HashMap<usize, Vec<(f64, f64)>> = HashMap::new();
    for ((p, _), bars) in intervals(d, end) {
        let Some((node, port)) = d.telemetry.labels.get(&p) else {
            continue;
        };
        let Some(rest) = port.strip_prefix("to-") else {
            continue;
        };
        let (peer, nth) = match rest.split_once('#') {
            Some((peer, k)) => (peer, format!("#{k}")),
            None => (rest, String::new()),
        };
        if let Some(&i) = index.get(&(peer.to_string(), format!("to-{node}{nth}"))) {
            let cuts = ignored.get(&s.ports[i].0).map_or(&[][..], Vec::as_slice);
            out.entry(i).or_default().extend(minus(bars, cuts));
        }
    }
    out
}

/// Per switch egress, the times a PFC watchdog (`forward`, `drop`) disabled PFC on it: its
/// peer's pauses then were not obeyed, and the port is not paused.
fn watchdog_ignored(d: &VariantData, end: f64) -> HashMap<u32, Vec<(f64, f64)>> {
    let mut open: HashMap<u32, f64> = HashMap::new();
    let mut out: HashMap<u32, Vec<(f64, f64)>> = HashMap::new();
    for r in d.telemetry.log.rows() {
        let t = r.time.as_ns_f64();
        match r.event {
            Trace::PfcwdStorm if r.reason != "alert" => {
                open.entry(r.port.0).or_insert(t);
            }
            Trace::PfcwdRestore => {
                if let Some(from) = open.remove(&r.port.0) {
                    out.entry(r.port.0).or_default().push((from, t));
                }
            }
            _ => {}
        }
    }
    for (p, from) in open {
        out.entry(p).or_default().push((from, end));
    }
    out
}

/// `bars` less the times in `cuts`.
fn minus(bars: Vec<(f64, f64)>, cuts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = bars;
    for &(c0, c1) in cuts {
        out = out
            .into_iter()
            .flat_map(|(a, b)| {
                let left = (a < c0).then_some((a, b.min(c0)));
                let right = (b > c1).then_some((a.max(c1), b));
                left.into_iter().chain(right)
            })
            .filter(|(a, b)| b > a)
            .collect();
    }
    out
}

/// True when a host NIC was paused: its egress is not sampled, so no row shows it.
pub(super) fn hosts_paused(d: &VariantData, run: &Run) -> bool {
    let hosts: std::collections::HashSet<&str> = run
        .scenario
        .topology
        .nodes
        .iter()
        .filter(|n| n.kind != models::topology::NodeKind::Switch)
        .map(|n| n.name.as_str())
        .collect();
    intervals(d, f64::MAX).keys().any(|(p, _)| {
        d.telemetry
            .labels
            .get(p)
            .and_then(|(_, port)| port.strip_prefix("to-"))
            .is_some_and(|peer| hosts.contains(peer.split('#').next().unwrap_or(peer)))
    })
}

pub(super) fn end_of(d: &VariantData) -> f64 {
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
    let mut notes = Vec::new();
    let mut per_variant = Vec::new();
    for (v, d) in run.variants.iter().enumerate() {
        let bars = intervals(d, end_of(d));
        if d.telemetry.log.cut > 0 {
            notes.push(format!(
                "{}: the event log was full, later pauses not shown (raise run.event_log)",
                d.name()
            ));
        }
        if !bars.is_empty() {
            per_variant.push((v, d, bars));
        }
    }
    // Rows that fit the plot, shared by the variants that paused.
    let fit = (super::HEIGHT as usize).saturating_sub(110 + 24 * notes.len()) / ROW_PX;
    let share = (fit / per_variant.len().max(1)).max(1);
    let mut rows: Vec<Row> = Vec::new();
    for (v, d, bars) in per_variant {
        if bars.len() <= share {
            // Each row says how much of its variant's run it spent in XOFF: pauses every few
            // microseconds draw as one solid bar, whether they fill the run or half of it.
            let own = end_of(d);
            for ((p, prio), b) in bars {
                let held: f64 = b.iter().map(|x| x.1 - x.0).sum();
                rows.push(Row {
                    label: format!(
                        "{}: {} prio {prio}, {:.0} % of the run",
                        d.name(),
                        d.telemetry.label(p),
                        100.0 * held / own
                    ),
                    bars: b,
                    variant: v,
                });
            }
            continue;
        }
        // Too many ports to read one by one: a row per switch, its ports' pauses merged, or
        // per run of switches when even those are too many.
        let mut by_node: BTreeMap<String, Merged> = BTreeMap::new();
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
        let mut nodes: Vec<(String, Merged)> = by_node.into_iter().collect();
        nodes.sort_by(|a, b| super::chart::natural_order(&a.0, &b.0));
        let per = nodes.len().div_ceil(share).max(1);
        for c in nodes.chunks(per) {
            let ports: usize = c.iter().map(|n| n.1.0).sum();
            let names = if c.len() == 1 {
                c[0].0.clone()
            } else {
                format!("{}..{}", c[0].0, c[c.len() - 1].0)
            };
            rows.push(Row {
                label: format!(
                    "{}: {names} ({})",
                    d.name(),
                    crate::console::count(ports as u64, "port", "ports")
                ),
                bars: c.iter().flat_map(|n| n.1.1.iter().copied()).collect(),
                variant: v,
            });
        }
    }
    if rows.is_empty() {
        return Ok(Outcome::Skipped("no PFC pause was sent".into()));
    }
    let ts = Scale::for_max(Quantity::Time, end);
    png(path, |root| {
        let n = rows.len();
        let font = ("sans-serif", 13).into_font();
        let longest = rows
            .iter()
            .map(|r| font.box_size(&r.label).map_or(8 * r.label.len() as u32, |b| b.0))
            .max()
            .unwrap_or(100);
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
            .y_label_area_size((longest + 16).clamp(120, 560))
            .build_cartesian_2d(0.0..end / ts.div, 0.0..n as f64)
            .map_err(super::e)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(ts.label("time"))
            .x_label_formatter(&|v| tick(*v))
            .y_labels(0)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(super::e)?;
        let min_width = end / ts.div * 0.002;
        let (x0, _) = chart.backend_coord(&(0.0, 0.0));
        let base = root.get_base_pixel();
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let c = run.variants[r.variant].color();
            chart
                .draw_series(r.bars.iter().map(|&(s, t)| {
                    let (s, t) = (s / ts.div, t / ts.div);
                    Rectangle::new(
                        [(s, y + 0.1), ((t).max(s + min_width), y + 0.9)],
                        c.mix(0.85).filled(),
                    )
                }))
                .map_err(super::e)?;
            // The row's label, centred on it.
            let (_, py) = chart.backend_coord(&(0.0, y + 0.5));
            let style = font
                .clone()
                .into_text_style(root)
                .pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(r.label.clone(), (x0 - base.0 - 6, py - base.1), style))
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

#[cfg(test)]
mod tests {
    use super::minus;

    #[test]
    fn a_cut_removes_its_span_from_every_bar_it_overlaps() {
        let bars = vec![(0.0, 10.0), (20.0, 30.0), (40.0, 50.0)];
        // One cut inside a bar splits it; one over a bar's end trims it; one past all is moot.
        let got = minus(bars, &[(2.0, 4.0), (25.0, 45.0), (60.0, 70.0)]);
        assert_eq!(got, vec![(0.0, 2.0), (4.0, 10.0), (20.0, 25.0), (45.0, 50.0)]);
        assert_eq!(minus(vec![(1.0, 2.0)], &[(0.0, 5.0)]), vec![]);
    }
}
