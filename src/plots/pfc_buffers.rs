//! `pfc_buffers.png`: with PFC, each variant's fullest lossless ingress priority groups, a
//! small panel each (a row per variant), against the thresholds that act on them, drawn over
//! the data and named on the line: XOFF as it moved (dynamic thresholds follow the free
//! buffer), and XOFF + the port's headroom, above which arriving frames are dropped (lossless
//! in name only). Variants without PFC are left out; with none, the plot is not written.

use super::chart::{Chart, Marks, Quantity, Scale, Series, draw_glyph};
use super::queues::{hottest, time_series};
use super::{Area, Outcome, Run, VariantData, e, png};
use anyhow::Result;
use models::topology::{NodeKind, Topology};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::HashMap;
use std::path::Path;

/// One look for the data and two for the thresholds in every row, whatever the variant's
/// colour (a red variant's data would read as the red headroom line).
const OCCUPANCY: RGBColor = RGBColor(31, 119, 180);
const XOFF: RGBColor = RGBColor(0, 0, 0);
const HEADROOM: RGBColor = RGBColor(200, 0, 0);

type Ports = HashMap<(String, String), (usize, usize)>;

/// Each switch port by (node, port name): (switch number, local port), numbered as the
/// network numbers them (per node, in the order the topology lists its links).
pub fn switch_ports(t: &Topology) -> Ports {
    let mut switch_no = vec![None; t.nodes.len()];
    let mut k = 0;
    for (i, n) in t.nodes.iter().enumerate() {
        if n.kind == NodeKind::Switch {
            switch_no[i] = Some(k);
            k += 1;
        }
    }
    let mut local = vec![0usize; t.nodes.len()];
    let mut nth: HashMap<(usize, usize), usize> = HashMap::new();
    let mut out = HashMap::new();
    for l in &t.links {
        for (n, far) in [(l.a.idx(), l.b.idx()), (l.b.idx(), l.a.idx())] {
            let k = nth.entry((n, far)).or_default();
            let name = match *k {
                0 => format!("to-{}", t.nodes[far].name),
                k => format!("to-{}#{}", t.nodes[far].name, k + 1),
            };
            *k += 1;
            if let Some(s) = switch_no[n] {
                out.insert((t.nodes[n].name.clone(), name), (s, local[n]));
            }
            local[n] += 1;
        }
    }
    out
}

/// The PGs a variant's row draws (sampled port indices, fullest first); empty without PFC.
fn fullest(d: &VariantData, most: usize) -> Vec<usize> {
    let s = &d.telemetry.sampler;
    if s.pg.is_empty() {
        return Vec::new();
    }
    let mut v = hottest(&s.pg);
    v.truncate(most);
    v
}

/// `points` cut where they rise above `cap` (off the top of the panel): the runs below it.
fn below(points: &[(f64, f64)], cap: f64) -> Vec<Vec<(f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for &p in points {
        if p.1 <= cap {
            runs.last_mut().unwrap().push(p);
        } else if !runs.last().unwrap().is_empty() {
            runs.push(Vec::new());
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

pub fn pfc_buffers(path: &Path, run: &Run) -> Result<Outcome> {
    let with: Vec<&VariantData> = run
        .variants
        .iter()
        .filter(|d| !fullest(d, 1).is_empty())
        .collect();
    if with.is_empty() {
        return Ok(Outcome::Skipped(
            "no variant runs PFC, or no lossless ingress buffer filled".into(),
        ));
    }
    let ports = switch_ports(&run.scenario.topology);
    let most = match with.len() {
        1 | 2 => 4,
        3 => 3,
        _ => 2,
    };
    let picks: Vec<Vec<usize>> = with.iter().map(|d| fullest(d, most)).collect();
    let cols = picks.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let panels: Vec<Vec<(String, Vec<Series>)>> = with
        .iter()
        .zip(&picks)
        .map(|(d, pick)| {
            let uniform = rooms(d, pick, &ports).len() == 1;
            pick.iter().map(|&i| panel(d, i, &ports, !uniform)).collect()
        })
        .collect();
    let unit = figure_unit(panels.iter().flatten().map(|p| p.1.as_slice()));
    png(path, |root| {
        let (top, body) = root.split_vertically(70);
        top.titled(
            &format!(
                "{}: fullest lossless ingress buffers (priority groups) against XOFF and headroom",
                run.title
            ),
            ("sans-serif", 22),
        )
        .map_err(e)?;
        key(&top, &with)?;
        // One panel a variant and three variants or more: two variants side by side.
        let across = if cols == 1 && with.len() >= 3 { 2 } else { 1 };
        let rows = body.split_evenly((with.len().div_ceil(across), across));
        for (((d, pick), panels), row) in with.iter().zip(&picks).zip(panels).zip(rows.iter()) {
            let (head, row) = row.split_vertically(22);
            let bytes = |v: f64| Scale::for_max(Quantity::Bytes, v).text(v);
            let room = match rooms(d, pick, &ports).as_slice() {
                [one] => format!("headroom {} per priority group", bytes(*one)),
                _ => "headroom by port (in each panel's title)".to_string(),
            };
            let far: Vec<usize> = pick.iter().copied().filter(|&i| far_below(d, i)).collect();
            let lowest = far
                .iter()
                .flat_map(|&i| d.telemetry.sampler.xoff(i).iter().copied())
                .min()
                .unwrap_or(0) as f64;
            let room = if far.is_empty() {
                room
            } else {
                format!("{room}; XOFF {}+, off the scale", bytes(lowest))
            };
            head.draw(&Text::new(
                format!("{}: {room}", d.name()),
                (16, 4),
                ("sans-serif", 16).into_font().color(&d.color()),
            ))
            .map_err(e)?;
            let cells = row.split_evenly((1, cols));
            for ((title, series), cell) in panels.into_iter().zip(cells.iter()) {
                let mut chart = Chart::new(&title, ("time", Quantity::Time), ("occupancy", Quantity::Bytes));
                chart.caption = 14;
                chart.series = series;
                chart.y_scale = Some(unit);
                chart.draw(cell)?;
            }
        }
        Ok(())
    })?;
    Ok(Outcome::Written)
}

/// The line styles, once for every panel, under the title.
fn key(top: &Area, with: &[&VariantData]) -> Result<()> {
    let y = 56;
    let font = ("sans-serif", 15).into_font();
    let offset = with[0]
        .variant
        .resolved
        .buffers
        .first()
        .map_or(0, |b| b.mmu.xon_offset_bytes()) as f64;
    let xon = Scale::for_max(Quantity::Bytes, offset).text(offset);
    let items = [
        (OCCUPANCY, false, 3, "priority-group occupancy".to_string()),
        (
            XOFF,
            true,
            2,
            if offset > 0.0 {
                format!("XOFF, moving with the free buffer (XON {xon} below)")
            } else {
                "XOFF, moving with the free buffer (XON at XOFF)".to_string()
            },
        ),
        (
            HEADROOM,
            true,
            2,
            "XOFF + headroom: frames above it are dropped".to_string(),
        ),
    ];
    let mut x = 30;
    for (color, dashed, width, text) in items {
        draw_glyph(top, (x, y), color, dashed, Marks::Line, width)?;
        let style = font
            .clone()
            .into_text_style(top)
            .pos(Pos::new(HPos::Left, VPos::Center));
        top.draw(&Text::new(text.clone(), (x + 28, y), style))
            .map_err(e)?;
        x += 28 + font.box_size(&text).map_or(200, |b| b.0 as i32) + 30;
    }
    Ok(())
}

/// The lowest XOFF of sampled port `i` when its PG never came within a third of it (its
/// panel then leaves the thresholds off the scale).
fn far_below(d: &VariantData, i: usize) -> bool {
    let s = &d.telemetry.sampler;
    let (pg, xoff) = (&s.pg[i], s.xoff(i));
    let lowest = (0..xoff.len())
        .filter(|&k| pg.get(k) > 0)
        .map(|k| xoff[k])
        .min()
        .unwrap_or(0);
    lowest as f64 > 3.0 * pg.peak() as f64
}

/// The headroom of sampled port `i`'s lossless priority groups, bytes.
fn headroom(d: &VariantData, i: usize, ports: &Ports) -> f64 {
    let s = &d.telemetry.sampler;
    d.telemetry
        .labels
        .get(&s.ports[i].0)
        .and_then(|l| ports.get(l))
        .and_then(|&(sw, port)| {
            d.variant
                .resolved
                .buffers
                .get(sw)
                .map(|b| b.mmu.headroom_of(port))
        })
        .unwrap_or(0) as f64
}

/// The distinct headrooms of the PGs `pick` (sampled port indices), smallest first.
fn rooms(d: &VariantData, pick: &[usize], ports: &Ports) -> Vec<f64> {
    let mut room: Vec<f64> = pick.iter().map(|&i| headroom(d, i, ports)).collect();
    room.sort_by(f64::total_cmp);
    room.dedup();
    room
}

/// The unit of every panel's y axis: the one the figure's largest value calls for, so the
/// panels read alike (not MB in one and KB beside it).
fn figure_unit<'a>(panels: impl Iterator<Item = &'a [Series]>) -> Scale {
    let max = panels
        .flatten()
        .flat_map(|s| s.points.iter().map(|p| p.1.abs()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    Scale::for_max(Quantity::Bytes, max)
}

/// A sampled value as steps: each sample held until the next (the sampler saw nothing in
/// between), not a slope from one sample to the next.
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (k, &p) in points.iter().enumerate() {
        match k.checked_sub(1).map(|j| points[j].1) {
            Some(before) if before != p.1 => out.push((p.0, before)),
            _ => {}
        }
        out.push(p);
    }
    out
}

/// Sampled port `i`'s panel: its title and series (occupancy, then the thresholds in runs
/// below the panel's top).
fn panel(d: &VariantData, i: usize, ports: &Ports, with_headroom: bool) -> (String, Vec<Series>) {
    let s = &d.telemetry.sampler;
    let n = s.times.len();
    let occupancy = time_series(d, &s.pg[i].dense(n));
    let xoff = time_series(d, s.xoff(i));
    let label = d.telemetry.labels.get(&s.ports[i].0).cloned().unwrap_or_default();
    let headroom = headroom(d, i, ports);
    let peak = s.pg[i].peak() as f64;
    // The thresholds while the PG held anything: a dynamic XOFF shoots up whenever the
    // buffer empties, and would squash the data if drawn to the top.
    let mut near: Vec<f64> = occupancy
        .iter()
        .zip(&xoff)
        .filter(|(o, _)| o.1 > 0.0)
        .map(|(_, x)| x.1 + headroom)
        .collect();
    near.sort_by(f64::total_cmp);
    let typical = near.get(near.len() / 4).copied().unwrap_or(0.0);
    let bytes = |v: f64| Scale::for_max(Quantity::Bytes, v).text(v);
    // Thresholds far above the data (a deep buffer never near XOFF): the data fills the
    // panel and the row's heading says where XOFF stayed.
    let cap = if far_below(d, i) {
        peak * 1.3
    } else {
        peak.max(typical) * 1.2
    };
    let title = if with_headroom {
        format!(
            "{} {}: peak {}, headroom {}",
            label.0,
            label.1,
            bytes(peak),
            bytes(headroom)
        )
    } else {
        format!("{} {} ingress, peak {}", label.0, label.1, bytes(peak))
    };
    let mut series = vec![Series {
        color: OCCUPANCY,
        points: occupancy,
        marks: Marks::Line,
        ..Series::default()
    }];
    // Sampled thresholds, drawn as steps.
    let xoff = steps(&xoff);
    let lines = [
        ("XOFF", XOFF, xoff.clone(), true),
        (
            "XOFF + headroom",
            HEADROOM,
            xoff.iter().map(|&(t, x)| (t, x + headroom)).collect(),
            false,
        ),
    ];
    for (name, color, points, under) in lines {
        let runs = below(&points, cap);
        // Named at the end of its longest run below the top (where it is read).
        let last = (0..runs.len()).max_by_key(|&k| runs[k].len()).unwrap_or(0);
        for (k, r) in runs.into_iter().enumerate() {
            series.push(Series {
                color,
                dashed: true,
                points: r,
                marks: Marks::Line,
                width: 2,
                end_label: (k == last).then(|| name.to_string()),
                end_label_below: under,
                ..Series::default()
            });
        }
    }
    (title, series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_off_the_top_are_cut_not_flattened() {
        let p = [(0.0, 5.0), (1.0, 50.0), (2.0, 6.0), (3.0, 7.0), (4.0, 90.0)];
        assert_eq!(
            below(&p, 10.0),
            vec![vec![(0.0, 5.0)], vec![(2.0, 6.0), (3.0, 7.0)]]
        );
    }

    #[test]
    fn a_sampled_threshold_is_drawn_as_steps() {
        // Held at each sample's value until the next sample: no slope between samples.
        let p = [(0.0, 5.0), (1.0, 8.0), (2.0, 8.0), (3.0, 6.0)];
        assert_eq!(
            steps(&p),
            vec![
                (0.0, 5.0),
                (1.0, 5.0),
                (1.0, 8.0),
                (2.0, 8.0),
                (3.0, 8.0),
                (3.0, 6.0)
            ]
        );
    }

    #[test]
    fn every_panel_of_a_figure_gets_one_unit() {
        // 344 KB in one panel, 3.3 MB in the next: both in MB.
        let panel = |peak: f64| {
            vec![Series {
                points: vec![(0.0, 0.0), (1.0, peak)],
                ..Series::default()
            }]
        };
        let (small, big) = (panel(344e3), panel(3.3e6));
        let unit = figure_unit([small.as_slice(), big.as_slice()].into_iter());
        assert_eq!(unit.unit, "MB");
        assert_eq!(figure_unit([small.as_slice()].into_iter()).unit, "KB");
    }
}
