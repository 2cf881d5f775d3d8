//! The results directory (`summary.json`, `flows.csv`, `counters.csv`) and the terminal table.
//! Each file is written to a temporary name and renamed (`files.rs`), so a reader never sees half
//! a file.

use anyhow::{Context, Result};
use models::{Scenario, VariantReport};
use serde::Serialize;
use std::fs;
use std::path::Path;

use crate::cells::{self, Cell};
use crate::files;
use crate::telemetry::Telemetry;

#[derive(Serialize)]
struct Summary<'a> {
    scenario: &'a str,
    seed: u64,
    version: &'static str,
    scenario_hash: String,
    command_line: &'a [String],
    hosts: usize,
    peak_rss_mb: Option<f64>,
    /// Why the run ended before every variant ran (Ctrl-C, run.max_wall); null when it did not.
    stopped: Option<&'a str>,
    variants_not_run: &'a [String],
    variants: Vec<&'a models::report::VariantSummary>,
}

/// Peak resident set size of this process (Linux `VmHWM`), in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// What a run leaves unfinished beyond its variants' own reports: a Ctrl-C, or a wall-clock
/// limit, before every variant ran.
#[derive(Serialize, Default)]
pub struct Cut {
    /// Why the run ended early (`interrupted (Ctrl-C)`, `stopped by run.max_wall`), if it did.
    pub stopped: Option<String>,
    /// Variants of the scenario not run at all.
    pub variants_not_run: Vec<String>,
}

/// How a command writes its results.
pub struct Options<'a> {
    pub argv: &'a [String],
    pub cut: &'a Cut,
    pub plots: crate::plots::Level,
    /// No notes on stderr (plots left out).
    pub quiet: bool,
    /// Threads that may draw plots at once.
    pub jobs: usize,
}

/// Write every result file into `dir` (the command's private staging directory).
pub fn write_results(
    dir: &Path,
    scenario: &Scenario,
    reports: &[VariantReport],
    telemetry: &[Telemetry],
    opts: &Options,
) -> Result<()> {
    let (argv, cut) = (opts.argv, opts.cut);
    let summary = Summary {
        scenario: &scenario.name,
        seed: scenario.seed,
        version: env!("CARGO_PKG_VERSION"),
        scenario_hash: format!("{:016x}", scenario.hash),
        command_line: argv,
        hosts: scenario.topology.hosts.len(),
        peak_rss_mb: peak_rss_mb(),
        stopped: cut.stopped.as_deref(),
        variants_not_run: &cut.variants_not_run,
        variants: reports.iter().map(|r| &r.summary).collect(),
    };
    let summary_json = serde_json::to_value(&summary)?;
    files::write(
        &dir.join("summary.json"),
        serde_json::to_string_pretty(&summary_json)?.as_bytes(),
    )?;
    let title = format!(
        "{} (seed {})",
        crate::console::short(&scenario.name),
        scenario.seed
    );
    let run = crate::plots::Run {
        title: title.clone(),
        scenario,
        variants: reports
            .iter()
            .zip(telemetry)
            .enumerate()
            .map(|(index, (report, telemetry))| crate::plots::VariantData {
                report,
                telemetry,
                variant: scenario
                    .variants
                    .iter()
                    .find(|v| v.name == report.summary.name)
                    .expect("every report is of one of the scenario's variants"),
                index,
            })
            .collect(),
    };
    crate::timeseries::write(dir, &run)?;
    write_events(dir, reports, telemetry)?;
    crate::captures::write(dir, reports, telemetry)?;
    crate::jobs::write(dir, reports, argv)?;
    let skipped = crate::plots::all(dir, &run, opts.plots, opts.quiet, opts.jobs)?;
    let rows = crate::metrics::rows(&summary_json, None)?;
    let png = opts.plots != crate::plots::Level::None;
    crate::compare::write(dir, &title, &rows, png, None, &[], &skipped)?;

    let mut flows = csv::Writer::from_writer(Vec::new());
    flows.write_record([
        "variant",
        "flow_id",
        "src",
        "dst",
        "size_bytes",
        "start_ns",
        "finish_ns",
        "fct_ns",
        "sender_finish_ns",
        "sender_fct_ns",
        "ideal_fct_ns",
        "slowdown",
        "entropy",
        "path",
        "uplinks",
        "status",
    ])?;
    let opt = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_default();
    for r in reports {
        for f in &r.flows {
            flows.write_record([
                r.summary.name.as_str(),
                &f.flow_id.to_string(),
                &f.src,
                &f.dst,
                &f.size_bytes.to_string(),
                &format!("{:.3}", f.start_ns),
                &opt(f.finish_ns),
                &opt(f.fct_ns),
                &opt(f.sender_finish_ns),
                &opt(f.sender_fct_ns),
                &format!("{:.3}", f.ideal_fct_ns),
                &f.slowdown.map(|s| format!("{s:.6}")).unwrap_or_default(),
                &f.entropy.to_string(),
                &f.path,
                &f.uplinks,
                &f.status.to_string(),
            ])?;
        }
    }
    files::write(&dir.join("flows.csv"), &flows.into_inner()?)?;

    write_counters(dir, reports)?;
    write_sonic(dir, reports)?;
    // Last: it embeds the plots and links every other file.
    crate::html::write(dir, &title, &rows, None, &[], &skipped)
}

/// `counters.csv`: `variant,node,port,counter,value`, streamed. A k=64 fat tree has 5.1 M rows
/// (250 MB) naming a few hundred thousand nodes, ports and counters, so each name is quoted
/// for CSV once and each row is copied together from them.
fn write_counters(dir: &Path, reports: &[VariantReport]) -> Result<()> {
    let path = dir.join("counters.csv");
    let mut out = files::create(&path)?;
    let mut rows = || -> std::io::Result<()> {
        cells::row(&mut out, &[b"variant", b"node", b"port", b"counter", b"value"])?;
        for r in reports {
            let variant = cells::text(&r.summary.name);
            let names: Vec<Vec<u8>> = r.counters.names().iter().map(|n| cells::text(n)).collect();
            for (node, port, counter, value) in r.counters.numbered() {
                let value = Cell::int(value);
                cells::row(
                    &mut out,
                    &[
                        &variant,
                        &names[node],
                        &names[port],
                        &names[counter],
                        value.as_bytes(),
                    ],
                )?;
            }
        }
        std::io::Write::flush(&mut out)
    };
    rows().with_context(|| format!("writing {}", path.display()))
}

/// `sonic_counters.csv`, when a variant asks for it (`switch.sonic_counters`, or a
/// `switch.sonic` file): `variant,switch,interface,port,command,column,counter,value`.
fn write_sonic(dir: &Path, reports: &[VariantReport]) -> Result<()> {
    if reports.iter().all(|r| r.sonic.is_empty()) {
        return Ok(());
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "variant",
        "switch",
        "interface",
        "port",
        "command",
        "column",
        "counter",
        "value",
    ])?;
    for r in reports {
        for c in &r.sonic {
            w.write_record([
                r.summary.name.as_str(),
                &c.switch,
                &c.interface,
                &c.port,
                c.command,
                &c.column,
                c.counter,
                &c.value,
            ])?;
        }
    }
    files::write(&dir.join("sonic_counters.csv"), &w.into_inner()?)?;
    Ok(())
}

/// `events.csv`: `variant,time_ns,node,port,prio,flow,event,reason`, and a last row per
/// variant counting the events the log had no room for.
fn write_events(dir: &Path, reports: &[VariantReport], telemetry: &[Telemetry]) -> Result<()> {
    // Streamed: a trimming run logs hundreds of thousands of events.
    let path = dir.join("events.csv");
    let mut out = files::create(&path)?;
    event_rows(&mut out, reports, telemetry)
        .and_then(|()| std::io::Write::flush(&mut out))
        .with_context(|| format!("writing {}", path.display()))
}

/// The rows, each written from its fields quoted once: a node and port's label for each port
/// (`-` for none), and the text of each reason (a run logs a few dozen kinds of rows).
fn event_rows(
    out: &mut impl std::io::Write,
    reports: &[VariantReport],
    telemetry: &[Telemetry],
) -> std::io::Result<()> {
    cells::row(
        out,
        &[
            b"variant", b"time_ns", b"node", b"port", b"prio", b"flow", b"event", b"reason",
        ],
    )?;
    for (r, t) in reports.iter().zip(telemetry) {
        let name = cells::text(&r.summary.name);
        let labels: std::collections::HashMap<u32, [Vec<u8>; 2]> = t
            .labels
            .iter()
            .map(|(&p, (n, q))| (p, [cells::text(n), cells::text(q)]))
            .collect();
        let none = [b"-".to_vec(), b"-".to_vec()];
        let mut reasons: Vec<(&str, Vec<u8>)> = Vec::new();
        for e in t.log.rows() {
            let [node, port] = labels.get(&e.port.0).unwrap_or(&none);
            let at = match reasons.iter().position(|r| std::ptr::eq(r.0, e.reason)) {
                Some(at) => at,
                None => {
                    reasons.push((e.reason, cells::text(e.reason)));
                    reasons.len() - 1
                }
            };
            let flow = (!e.flow.is_none()).then(|| Cell::int(e.flow.0.into()));
            cells::row(
                out,
                &[
                    &name,
                    Cell::ns(e.time).as_bytes(),
                    node,
                    port,
                    Cell::int(e.prio.into()).as_bytes(),
                    flow.as_ref().map_or(&b""[..], Cell::as_bytes),
                    // Event names are lower-case words: nothing to quote.
                    e.event.name().as_bytes(),
                    &reasons[at].1,
                ],
            )?;
        }
        if t.log.cut > 0 {
            let why = format!("{} more events not logged (raise run.event_log)", t.log.cut);
            cells::row(
                out,
                &[&name, b"", b"", b"", b"", b"", b"log_full", &cells::text(&why)],
            )?;
        }
    }
    Ok(())
}

/// A rate in Gb/s as a person reads it: `97.6 Gb/s`, `10.24 Tb/s`.
fn human_gbps(g: f64) -> String {
    if g >= 1000.0 {
        format!("{:.2} Tb/s", g / 1000.0)
    } else {
        format!("{g:.1} Gb/s")
    }
}

pub fn human_ns(ns: impl Into<Option<f64>>) -> String {
    let Some(ns) = ns.into() else {
        return "-".into();
    };
    match ns {
        _ if ns >= 1e9 => format!("{:.2}s", ns / 1e9),
        _ if ns >= 1e6 => format!("{:.2}ms", ns / 1e6),
        _ if ns >= 1e3 => format!("{:.2}us", ns / 1e3),
        _ => format!("{ns:.0}ns"),
    }
}

pub fn print_table(scenario: &Scenario, reports: &[VariantReport]) {
    let (hosts, flows) = (scenario.topology.hosts.len(), scenario.flows.len());
    let s = |n: usize| if n == 1 { "" } else { "s" };
    outln!(
        "{} (seed {}, {hosts} host{}, {flows} flow{})",
        crate::console::short(&scenario.name),
        scenario.seed,
        s(hosts),
        s(flows)
    );
    // A run of collectives is judged by its jobs first (nccl-tests' figures).
    crate::jobs::print(reports);
    let header = [
        "variant",
        "completed",
        "FCT p50",
        "FCT p99",
        "FCT max",
        "goodput",
        "drops",
        "trims",
        "pauses",
        "retx",
        "events/s",
    ];
    let rows: Vec<Vec<String>> = reports
        .iter()
        .map(|r| {
            let s = &r.summary;
            vec![
                crate::console::short(&s.name).into_owned(),
                format!("{}/{}", s.flows_completed, s.flows_total),
                human_ns(s.fct_ns.p50),
                human_ns(s.fct_ns.p99),
                human_ns(s.fct_ns.max),
                s.goodput_gbps.map_or("-".into(), human_gbps),
                s.drops.to_string(),
                s.trimmed.to_string(),
                s.pfc_pause_frames.to_string(),
                s.retransmitted_packets.to_string(),
                format!("{:.2}M", s.events_per_second / 1e6),
            ]
        })
        .collect();
    let mut table = vec![header.iter().map(|h| h.to_string()).collect()];
    table.extend(rows.iter().cloned());
    let lines = crate::console::aligned(&table);
    outln!("{}", lines[0]);
    for (l, report) in lines[1..].iter().zip(reports) {
        let why = report
            .summary
            .incomplete
            .as_ref()
            .map(|w| format!("  [{w}]"))
            .unwrap_or_default();
        outln!("{l}{why}");
    }
    if let Some(n) = reports
        .iter()
        .map(|r| r.summary.nvlink_flows)
        .max()
        .filter(|&n| n > 0)
    {
        outln!(
            "{n} of the {} flows are copies between GPUs of one server (NVLink): left out of the FCT and goodput columns (summary.json nvlink_fct_ns)",
            scenario.flows.len()
        );
    }
    // What a user must not miss, beyond the table: deadlocks a run went on past, and storms.
    for r in reports {
        let s = &r.summary;
        for d in &s.pfc_deadlocks {
            if !s.incomplete.as_deref().is_some_and(|why| why.contains(&d.text)) {
                outln!(
                    "{}: {} (detected at {})",
                    crate::console::short(&s.name),
                    d.text,
                    human_ns(d.detected_ns)
                );
            }
        }
        if let Some(first) = s.pfc_storm_list.first() {
            outln!(
                "{}: {} (a queue held paused for pfc.watchdog or longer), the first on {} at {} for {}, started by {}",
                crate::console::short(&s.name),
                crate::console::count(s.pfc_storms, "PFC storm", "PFC storms"),
                first.port,
                human_ns(first.start_ns),
                human_ns(first.duration_ns),
                first.started_by
            );
        }
    }
}
