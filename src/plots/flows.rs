//! `flow_rates.png`: flow by flow, the rate at which bytes reached the receiver, and the
//! sender's control variable beside it (DCQCN's rate limit, or NSCC's window), so a victim
//! starving behind a pause or DCQCN's rates collapsing show flow by flow. The same flows, in
//! the same colours, in every variant's row; a key on the right says why each is drawn and
//! its slowdown in each variant.

use super::chart::{Chart, Marks, Quantity, Series, draw_glyph};
use super::identical::{compact_identical, name_identical};
use super::{Area, Outcome, Run, VariantData, e, series_color};
use anyhow::Result;
use models::report::FlowRecord;
use models::telemetry::Control;
use plotters::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// Flows drawn at most.
const MOST: usize = 6;
/// Victims drawn at most (beyond those the scenario marks).
const VICTIMS: usize = 2;
/// Slowdown from which a flow on a paused path counts as slowed by the pauses.
const SLOWED: f64 = 1.5;

/// The flows `timeseries.csv` writes for a variant (its columns are fixed by this rule):
/// those `[telemetry] flows` names; otherwise every flow marked `victim`, the slowest three
/// (unfinished first) and the fastest, among the flows the run sampled.
pub fn csv_flows(run: &Run, d: &VariantData) -> Vec<u32> {
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

/// Why a flow is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// `[telemetry] flows` names it.
    Named,
    /// Marked `victim` in the scenario.
    Marked,
    /// Slowed by pauses it did not cause, in this variant (the slowest such).
    Victim(String),
    /// The slowest of its kind: the flows into one fan-in receiver, or all the others.
    Slowest(String),
    /// A flow of median slowdown among the others: what an unhindered flow does.
    Typical,
    /// The fastest of a fan-in's flows, when there is room: how evenly the fan-in shared.
    Fastest(String),
}

/// One variant's flows as the rule sees them.
pub struct Facts<'a> {
    /// The variant's name.
    pub name: &'a str,
    pub flows: &'a [FlowRecord],
    /// Egress ports (node, port) that PFC paused at some point (they received pause time).
    pub paused: HashSet<(String, String)>,
}

impl Facts<'_> {
    pub fn of<'a>(d: &'a VariantData) -> Facts<'a> {
        Facts::of_report(d.report)
    }

    pub fn of_report(report: &models::VariantReport) -> Facts<'_> {
        let paused = report
            .counters
            .iter()
            .filter(|c| {
                c.counter.starts_with("rx_prio") && c.counter.ends_with("_pause_duration") && c.value > 0
            })
            .map(|c| (c.node.to_string(), c.port.to_string()))
            .collect();
        Facts {
            name: &report.summary.name,
            flows: &report.flows,
            paused,
        }
    }

    /// The flow waited at an egress that PFC paused, its sender's NIC or a switch port on
    /// its path, other than the one into its own receiver (that pause is its own doing).
    fn on_paused_path(&self, f: &FlowRecord) -> bool {
        let into_dst =
            |port: &str| port.strip_prefix("to-").and_then(|p| p.split('#').next()) == Some(f.dst.as_str());
        self.paused.iter().any(|(n, p)| *n == f.src && !into_dst(p))
            || f.path
                .split(' ')
                .filter_map(|hop| hop.split_once(':'))
                .any(|(n, p)| !into_dst(p) && self.paused.contains(&(n.to_string(), p.to_string())))
    }
}

/// Hosts that receive many more flows than hosts typically do: at least 3, and at least
/// twice the median over every host (an incast's receiver; nobody in an all-to-all).
pub fn fan_in(flows: &[FlowRecord], hosts: usize) -> HashSet<String> {
    let mut into: BTreeMap<&str, usize> = BTreeMap::new();
    for f in flows {
        *into.entry(f.dst.as_str()).or_default() += 1;
    }
    let mut counts: Vec<usize> = into.values().copied().collect();
    counts.resize(hosts.max(counts.len()), 0);
    counts.sort_unstable();
    let median = counts.get(counts.len() / 2).copied().unwrap_or(0);
    into.into_iter()
        .filter(|&(_, n)| n >= 3 && n >= 2 * median.max(1))
        .map(|(h, _)| h.to_string())
        .collect()
}

/// The flows `flow_rates.png` draws, in order, at most [`MOST`], among those `sampled`:
///
/// 1. the flows `[telemetry] flows` names, as the user asked;
/// 2. victims: the flows the scenario marks `victim`, then flows slowed by pauses they did not
///    cause: not sent to a fan-in receiver ([`fan_in`]: the incast's own flows cause the
///    pauses), yet waiting at an egress PFC paused (their NIC, or a switch port on their
///    path, but not the port into their own receiver) with a slowdown of at least [`SLOWED`] (or unfinished), in some variant: worst
///    first, at most [`VICTIMS`];
/// 3. the slowest flow of each kind: of each fan-in receiver's flows, then of the others
///    (unfinished counts as slowest), unless a flow already drawn is it;
/// 4. a typical flow (median slowdown of the others), to compare against;
/// 5. with room left, each fan-in receiver's fastest flow (how evenly the fan-in shared).
///
/// A flow's slowdown is its worst over the variants, so the same flows are drawn in each.
pub fn select(
    named: &[u32],
    marked: &[u32],
    variants: &[Facts],
    hosts: usize,
    sampled: impl Fn(u32) -> bool,
) -> Vec<(u32, Why)> {
    let mut out: Vec<(u32, Why)> = Vec::new();
    let add = |out: &mut Vec<(u32, Why)>, f: u32, why: Why| {
        if out.len() < MOST && sampled(f) && !out.iter().any(|p| p.0 == f) {
            out.push((f, why));
        }
    };
    for &f in named {
        add(&mut out, f, Why::Named);
    }
    for &f in marked {
        add(&mut out, f, Why::Marked);
    }
    let Some(first) = variants.first() else {
        return out;
    };
    let slow = |f: &FlowRecord| f.slowdown.unwrap_or(f64::INFINITY);
    let worst = |id: usize| {
        variants
            .iter()
            .filter_map(|v| v.flows.get(id))
            .map(slow)
            .fold(0.0, f64::max)
    };
    let hot = fan_in(first.flows, hosts);
    let mut victims: Vec<(f64, u32, &str)> = Vec::new();
    for v in variants {
        for f in v.flows.iter().filter(|f| !hot.contains(&f.dst)) {
            if slow(f) >= SLOWED && v.on_paused_path(f) {
                victims.push((slow(f), f.flow_id, v.name));
            }
        }
    }
    victims.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut found = 0;
    for (_, f, name) in victims {
        if found < VICTIMS && sampled(f) && !out.iter().any(|p| p.0 == f) {
            add(&mut out, f, Why::Victim(name.to_string()));
            found += 1;
        }
    }
    // Kinds: each fan-in receiver's flows, then the rest.
    let mut kinds: Vec<(String, Vec<u32>)> = Vec::new();
    let mut receivers: Vec<&String> = hot.iter().collect();
    receivers.sort_by(|a, b| super::chart::natural_order(a, b));
    for r in receivers {
        let ids = first
            .flows
            .iter()
            .filter(|f| &f.dst == r)
            .map(|f| f.flow_id)
            .collect();
        kinds.push((format!("into {r}"), ids));
    }
    let others: Vec<u32> = first
        .flows
        .iter()
        .filter(|f| !hot.contains(&f.dst))
        .map(|f| f.flow_id)
        .collect();
    kinds.push(("other flows".to_string(), others.clone()));
    for (kind, ids) in &kinds {
        let mut ids: Vec<u32> = ids.iter().copied().filter(|&f| sampled(f)).collect();
        ids.sort_by(|&a, &b| worst(b as usize).total_cmp(&worst(a as usize)).then(a.cmp(&b)));
        if let Some(&f) = ids.first() {
            add(&mut out, f, Why::Slowest(kind.clone()));
        }
    }
    let mut rest: Vec<u32> = others.into_iter().filter(|&f| sampled(f)).collect();
    rest.sort_by(|&a, &b| worst(a as usize).total_cmp(&worst(b as usize)).then(a.cmp(&b)));
    if let Some(&f) = rest.get(rest.len().saturating_sub(1) / 2) {
        add(&mut out, f, Why::Typical);
    }
    // Room left: each fan-in's fastest flow, beside its slowest (how unfairly it shared).
    for (kind, ids) in kinds.iter().filter(|k| k.0 != "other flows") {
        let fastest = ids
            .iter()
            .copied()
            .filter(|&f| sampled(f))
            .min_by(|&a, &b| worst(a as usize).total_cmp(&worst(b as usize)).then(a.cmp(&b)));
        if let Some(f) = fastest {
            add(&mut out, f, Why::Fastest(kind.clone()));
        }
    }
    out
}

/// The flows of `run` to draw.
fn chosen(run: &Run) -> Vec<(u32, Why)> {
    let facts: Vec<Facts> = run.variants.iter().map(Facts::of).collect();
    let sampled = |f: u32| run.variants.iter().all(|d| d.telemetry.flows.column(f).is_some());
    select(
        &run.scenario.plotted_flows,
        &run.scenario.victims,
        &facts,
        run.scenario.topology.hosts.len(),
        sampled,
    )
}

fn why_text(w: &Why) -> String {
    match w {
        Why::Named => "named in [telemetry] flows".into(),
        Why::Marked => "victim (marked in the scenario)".into(),
        Why::Victim(v) => format!("victim of PFC pauses in {}", crate::console::short(v)),
        Why::Slowest(kind) => format!("slowest, {kind}"),
        Why::Typical => "typical (median slowdown)".into(),
        Why::Fastest(kind) => format!("fastest, {kind}"),
    }
}

pub fn flow_rates(path: &Path, run: &Run) -> Result<Outcome> {
    let picks = chosen(run);
    if picks.is_empty() || run.variants.iter().all(|d| d.telemetry.flows.times.len() < 2) {
        return Ok(Outcome::Skipped("no flow was sampled over two intervals".into()));
    }
    let has_control = run
        .variants
        .iter()
        .any(|d| d.telemetry.flows.kind != Control::None);
    super::png(path, |root| {
        let (top, body) = root.split_vertically(44);
        top.titled(
            &format!("{}: per-flow dynamics (the flows the key names)", run.title),
            ("sans-serif", 22),
        )
        .map_err(e)?;
        let (grid, side) = body.split_horizontally(super::WIDTH - 260);
        key(&side, run, &picks)?;
        let cols = if has_control { 2 } else { 1 };
        // Four variants or more: two variants side by side, so panels keep their height.
        let across = if run.variants.len() >= 4 { 2 } else { 1 };
        let cells = grid.split_evenly((run.variants.len().div_ceil(across), cols * across));
        for (v, d) in run.variants.iter().enumerate() {
            let fs = &d.telemetry.flows;
            let rate_title = if across == 1 {
                format!("{}: rate delivered to the receiver (moving average)", d.name())
            } else {
                format!("{}: delivered (moving avg.)", d.name())
            };
            let mut rate = Chart::new(
                &rate_title,
                ("time", Quantity::Time),
                ("delivered", Quantity::Rate),
            );
            rate.caption = 15;
            let (ctl_name, ctl_q) = match fs.kind {
                Control::Rate => ("DCQCN rate limit", Quantity::Rate),
                Control::Window => ("congestion window", Quantity::Bytes),
                Control::None => ("", Quantity::Plain),
            };
            let ctl_title = if across == 1 {
                format!("{}: sender's {ctl_name}", d.name())
            } else {
                format!("{}: {ctl_name}", d.name())
            };
            let mut ctl = Chart::new(&ctl_title, ("time", Quantity::Time), (ctl_name, ctl_q));
            ctl.caption = 15;
            let (mut rate_ids, mut ctl_ids) = (Vec::new(), Vec::new());
            for (k, (f, _)) in picks.iter().enumerate() {
                let Some(col) = fs.column(*f) else { continue };
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
                    color,
                    points: pts,
                    marks: Marks::Line,
                    ..Series::default()
                });
                rate_ids.push(*f);
                if fs.kind != Control::None {
                    // The sender's limit only while the flow is live: before it starts the
                    // state is not yet set (it reads 0), after it ends it is frozen.
                    let live = d.report.flows.iter().find(|r| r.flow_id == *f);
                    let from = live.map_or(0.0, |r| r.start_ns);
                    let to = live.and_then(|r| r.finish_ns).unwrap_or(f64::INFINITY);
                    let pts = (0..fs.times.len())
                        .map(|i| (fs.times[i].as_ns_f64(), fs.at(col, i).1))
                        .filter(|&(t, _)| t >= from && t <= to)
                        .collect();
                    ctl.series.push(Series {
                        color,
                        points: pts,
                        marks: Marks::Line,
                        ..Series::default()
                    });
                    ctl_ids.push(*f);
                }
            }
            name_identical(&mut rate.series, &rate_ids);
            name_identical(&mut ctl.series, &ctl_ids);
            // A narrow panel (four variants or more) has no room for those names: one short
            // entry per line instead ("106 = 6").
            for (chart, ids, k) in [(&mut rate, &rate_ids, 0), (&mut ctl, &ctl_ids, 1)] {
                if !chart.legend_fits(&cells[v * cols + k.min(cols - 1)]) {
                    compact_identical(&mut chart.series, ids);
                }
            }
            // The limit's panel on the delivered panel's time axis, so the two line up.
            let times = rate.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
            ctl.x_span = Some(times.fold((f64::MAX, f64::MIN), |(a, b), t| (a.min(t), b.max(t))));
            rate.draw(&cells[v * cols])?;
            if has_control {
                if fs.kind == Control::None {
                    let cell = &cells[v * cols + 1];
                    cell.draw(&Text::new(
                        format!("{}: no rate limit or window", d.name()),
                        (20, 40),
                        ("sans-serif", 15),
                    ))
                    .map_err(e)?;
                    // RCCC paces the sender by the receiver's credits: no sender-side limit.
                    let why = match d.variant.nic.cc {
                        models::cc::CcConfig::Rccc(_) => "(RCCC: the receiver's credits pace the sender)",
                        _ => "(no congestion control)",
                    };
                    cell.draw(&Text::new(why, (20, 62), ("sans-serif", 15)))
                        .map_err(e)?;
                } else {
                    ctl.draw(&cells[v * cols + 1])?;
                }
            }
        }
        Ok(())
    })?;
    Ok(Outcome::Written)
}

/// The key: each flow's colour, endpoints, why it is drawn, and its slowdown per variant.
fn key(side: &Area, run: &Run, picks: &[(u32, Why)]) -> Result<()> {
    let mut y = 24;
    let big = ("sans-serif", 15).into_font();
    let small = ("sans-serif", 13).into_font();
    side.draw(&Text::new(
        "slowdown (FCT / ideal) per variant",
        (6, 2),
        small.clone(),
    ))
    .map_err(e)?;
    for (k, (f, why)) in picks.iter().enumerate() {
        let c = series_color(k);
        draw_glyph(side, (6, y + 9), c, false, Marks::Line, 4)?;
        let r = run.variants.first().and_then(|d| d.report.flows.get(*f as usize));
        let ends = r.map(|r| format!("{}->{}", r.src, r.dst)).unwrap_or_default();
        side.draw(&Text::new(format!("flow {f} {ends}"), (34, y), big.clone()))
            .map_err(e)?;
        y += 19;
        side.draw(&Text::new(
            why_text(why),
            (34, y),
            small.clone().color(&RGBColor(90, 90, 90)),
        ))
        .map_err(e)?;
        y += 17;
        for d in &run.variants {
            let s = d
                .report
                .flows
                .get(*f as usize)
                .map(|r| r.slowdown.map_or("unfinished".to_string(), |s| format!("{s:.1}")))
                .unwrap_or_default();
            side.draw(&Text::new(format!("{}: {s}", d.name()), (44, y), small.clone()))
                .map_err(e)?;
            y += 16;
        }
        y += 8;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: u32, src: &str, dst: &str, slowdown: f64, path: &str) -> FlowRecord {
        FlowRecord {
            flow_id: id,
            src: src.into(),
            dst: dst.into(),
            size_bytes: 1_000_000,
            start_ns: 0.0,
            finish_ns: Some(1.0),
            fct_ns: Some(1.0),
            sender_finish_ns: None,
            sender_fct_ns: None,
            ideal_fct_ns: 1.0,
            slowdown: Some(slowdown),
            nvlink: false,
            entropy: 0,
            path: path.into(),
            uplinks: String::new(),
            status: models::report::FlowStatus::Completed,
        }
    }

    /// leaf-spine.toml's flagship effect: permutation flow 10 (h10 -> h41, not into the
    /// incast's h47) waits behind the pauses, 2.08 ms against an ideal 0.33 ms, and is drawn
    /// first; the incast's slowest flow is drawn too.
    #[test]
    fn leaf_spines_head_of_line_victim_is_drawn_first() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/leaf-spine.toml");
        let s = models::load(&path, &Default::default()).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (reports, telemetry, _) =
            crate::runner::simulate(&s, true, 2, crate::runner::Threads::ONE, &stop, None);
        let facts: Vec<Facts> = reports.iter().map(Facts::of_report).collect();
        let sampled = |f: u32| telemetry.iter().all(|t| t.flows.column(f).is_some());
        let picks = select(
            &s.plotted_flows,
            &s.victims,
            &facts,
            s.topology.hosts.len(),
            sampled,
        );
        assert_eq!(picks[0], (10, Why::Victim("roce".into())), "{picks:?}");
        let f10 = &reports[0].flows[10];
        assert!(f10.dst == "h41" && f10.fct_ns.unwrap() > 2.0e6, "{f10:?}");
        assert!(
            picks.iter().any(|p| p.1 == Why::Slowest("into h47".into())),
            "{picks:?}"
        );
        assert!(picks.len() <= MOST);
    }

    #[test]
    fn named_flows_come_first_and_unsampled_ones_never() {
        let flows: Vec<FlowRecord> = (0..6)
            .map(|i| {
                flow(
                    i,
                    &format!("h{i}"),
                    &format!("h{}", (i + 1) % 6),
                    1.0 + i as f64,
                    "",
                )
            })
            .collect();
        let facts = [Facts {
            name: "a",
            flows: &flows,
            paused: HashSet::new(),
        }];
        let picks = select(&[3, 1], &[], &facts, 6, |f| f != 1);
        // No pauses, no fan-in: the slowest of the others; the typical one (median of 0, 2,
        // 3, 4, 5) is flow 3, drawn already; flow 1 is not sampled.
        assert_eq!(
            picks,
            vec![(3, Why::Named), (5, Why::Slowest("other flows".into()))]
        );
    }

    #[test]
    fn an_incast_receiver_is_a_fan_in_and_an_all_to_all_has_none() {
        let incast: Vec<FlowRecord> = (0..8).map(|i| flow(i, &format!("h{i}"), "h9", 2.0, "")).collect();
        assert_eq!(fan_in(&incast, 10), HashSet::from(["h9".to_string()]));
        let mut all = Vec::new();
        for s in 0..4 {
            for d in (0..4).filter(|&d| d != s) {
                all.push(flow(
                    all.len() as u32,
                    &format!("h{s}"),
                    &format!("h{d}"),
                    1.0,
                    "",
                ));
            }
        }
        assert!(fan_in(&all, 4).is_empty());
    }
}
