//! `timeseries.csv`: `variant,time_ns,series,key,value`, long format, one row per value.
//!
//! Fabric-wide (key `fabric`), cumulative: `delivered_bytes`, `ecn_marked`, `cnps`,
//! `pfc_frames`, `trimmed`, `drops`. Per sampled switch port (key `node port`, rows only
//! where non-zero): `queue_bytes` (egress), `tx_utilisation` (fraction of the line rate sent
//! over the interval ending there), and with PFC `pg_bytes` (lossless ingress priority groups)
//! with `xoff_bytes` (their XOFF threshold then). Per plotted flow (key `flow N`, the flows of
//! `flow_rates.png`): `flow_delivered_bytes` and the sender's `flow_rate_limit_bps` (DCQCN) or
//! `flow_window_bytes` (NSCC).

use crate::files;
use crate::plots::Run;
use anyhow::{Context, Result};
use models::telemetry::Control;
use std::path::Path;

pub fn write(dir: &Path, run: &Run) -> Result<()> {
    // Streamed: at P1024 the file is some 50 MB, which need not sit in memory.
    let path = dir.join("timeseries.csv");
    let mut w = csv::Writer::from_writer(files::create(&path)?);
    w.write_record(["variant", "time_ns", "series", "key", "value"])?;
    for d in &run.variants {
        let name = d.name();
        let s = &d.telemetry.sampler;
        // Port names once, not once per sample.
        let keys: Vec<String> = s.ports.iter().map(|p| d.telemetry.label(p.0)).collect();
        for (k, time) in s.times.iter().enumerate() {
            let ns = format!("{:.3}", time.as_ns_f64());
            let v = &s.totals[k];
            for (series, value) in [
                ("delivered_bytes", v.delivered_bytes),
                ("ecn_marked", v.ecn_marked),
                ("cnps", v.cnps),
                ("pfc_frames", v.pfc_frames),
                ("trimmed", v.trimmed),
                ("drops", v.drops),
            ] {
                w.write_record([name, &ns, series, "fabric", &value.to_string()])?;
            }
            for (i, key) in keys.iter().enumerate() {
                let q = s.queues[i].get(k);
                if q > 0 {
                    w.write_record([name, &ns, "queue_bytes", key, &q.to_string()])?;
                }
                let u = s.utilisation(i, k);
                if u > 0.0 {
                    w.write_record([name, &ns, "tx_utilisation", key, &fraction(u)])?;
                }
                if let (Some(pg), xoff) = (s.pg.get(i), s.xoff(i)) {
                    let pg = pg.get(k);
                    if pg > 0 {
                        w.write_record([name, &ns, "pg_bytes", key, &pg.to_string()])?;
                        w.write_record([name, &ns, "xoff_bytes", key, &xoff[k].to_string()])?;
                    }
                }
            }
        }
        let fs = &d.telemetry.flows;
        let control = match fs.kind {
            Control::Rate => Some("flow_rate_limit_bps"),
            Control::Window => Some("flow_window_bytes"),
            Control::None => None,
        };
        for f in crate::plots::flows::chosen(run, d) {
            let Some(col) = fs.column(f) else { continue };
            let key = format!("flow {f}");
            for (k, time) in fs.times.iter().enumerate() {
                let ns = format!("{:.3}", time.as_ns_f64());
                let (delivered, c) = fs.at(col, k);
                w.write_record([name, &ns, "flow_delivered_bytes", &key, &delivered.to_string()])?;
                if let Some(series) = control {
                    w.write_record([name, &ns, series, &key, &format!("{c:.0}")])?;
                }
            }
        }
    }
    use std::io::Write as _;
    w.into_inner()
        .map_err(|e| anyhow::anyhow!("writing {}: {}", path.display(), e.error()))?
        .flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// A fraction in 0..=1 with four decimals, by integer arithmetic (float formatting of
/// millions of rows is most of the file's cost).
fn fraction(u: f64) -> String {
    let t = (u.clamp(0.0, 1.0) * 10_000.0).round() as u32;
    format!("{}.{:04}", t / 10_000, t % 10_000)
}
