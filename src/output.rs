//! The results directory (`summary.json`, `flows.csv`, `counters.csv`) and the terminal table.
//! Files are written to a temporary name and renamed, so a reader never sees half a file.

use anyhow::{Context, Result};
use models::{Scenario, VariantReport};
use serde::Serialize;
use std::fs;
use std::path::Path;

#[derive(Serialize)]
struct Summary<'a> {
    scenario: &'a str,
    seed: u64,
    version: &'static str,
    scenario_hash: String,
    command_line: &'a [String],
    hosts: usize,
    peak_rss_mb: Option<f64>,
    variants: Vec<&'a models::report::VariantSummary>,
}

/// Peak resident set size of this process (Linux `VmHWM`), in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

pub fn write_results(
    dir: &Path,
    scenario: &Scenario,
    reports: &[VariantReport],
    argv: &[String],
) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let summary = Summary {
        scenario: &scenario.name,
        seed: scenario.seed,
        version: env!("CARGO_PKG_VERSION"),
        scenario_hash: format!("{:016x}", scenario.hash),
        command_line: argv,
        hosts: scenario.topology.hosts.len(),
        peak_rss_mb: peak_rss_mb(),
        variants: reports.iter().map(|r| &r.summary).collect(),
    };
    write_atomic(
        &dir.join("summary.json"),
        serde_json::to_string_pretty(&summary)?.as_bytes(),
    )?;

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
        "ideal_fct_ns",
        "slowdown",
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
                &format!("{:.3}", f.ideal_fct_ns),
                &f.slowdown.map(|s| format!("{s:.6}")).unwrap_or_default(),
                &f.status,
            ])?;
        }
    }
    write_atomic(&dir.join("flows.csv"), &flows.into_inner()?)?;

    let mut counters = csv::Writer::from_writer(Vec::new());
    counters.write_record(["variant", "node", "port", "counter", "value"])?;
    for r in reports {
        for c in &r.counters {
            counters.write_record([
                r.summary.name.as_str(),
                &c.node,
                &c.port,
                &c.counter,
                &c.value.to_string(),
            ])?;
        }
    }
    write_atomic(&dir.join("counters.csv"), &counters.into_inner()?)?;
    Ok(())
}

fn human_ns(ns: f64) -> String {
    match ns {
        _ if ns >= 1e9 => format!("{:.2}s", ns / 1e9),
        _ if ns >= 1e6 => format!("{:.2}ms", ns / 1e6),
        _ if ns >= 1e3 => format!("{:.2}us", ns / 1e3),
        _ => format!("{ns:.0}ns"),
    }
}

pub fn print_table(scenario: &Scenario, reports: &[VariantReport]) {
    println!(
        "{} (seed {}, {} hosts, {} flows)",
        scenario.name,
        scenario.seed,
        scenario.topology.hosts.len(),
        scenario.flows.len()
    );
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>12} {:>7} {:>7} {:>7} {:>7} {:>9}",
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
        "events/s"
    );
    for r in reports {
        let s = &r.summary;
        println!(
            "{:<18} {:>9} {:>9} {:>9} {:>9} {:>7.1}Gb/s {:>7} {:>7} {:>7} {:>7} {:>8.2}M{}",
            s.name,
            format!("{}/{}", s.flows_completed, s.flows_total),
            human_ns(s.fct_ns.p50),
            human_ns(s.fct_ns.p99),
            human_ns(s.fct_ns.max),
            s.goodput_gbps,
            s.drops,
            s.trimmed,
            s.pfc_pause_frames,
            s.retransmitted_packets,
            s.events_per_second / 1e6,
            s.incomplete
                .as_ref()
                .map(|r| format!("  [{r}]"))
                .unwrap_or_default()
        );
    }
}
