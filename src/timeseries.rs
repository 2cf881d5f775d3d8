//! `timeseries.csv`: `variant,time_ns,series,key,value`, long format, one row per value.
//!
//! Fabric-wide (key `fabric`), cumulative: `delivered_bytes`, `ecn_marked`, `cnps`,
//! `pfc_frames`, `trimmed`, `drops`. Per sampled switch port (key `node port`, rows only
//! where non-zero): `queue_bytes` (egress), `tx_utilisation` (fraction of the line rate sent
//! over the interval ending there), and with PFC `pg_bytes` (lossless ingress priority groups)
//! with `xoff_bytes` (their XOFF threshold then). Per plotted flow (key `flow N`, the flows of
//! `flow_rates.png`): `flow_delivered_bytes` and the sender's `flow_rate_limit_bps` (DCQCN) or
//! `flow_window_bytes` (NSCC).

use crate::cells::{self, Cell};
use crate::files;
use crate::plots::Run;
use anyhow::{Context, Result};
use models::telemetry::Control;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

pub fn write(dir: &Path, run: &Run) -> Result<()> {
    // Streamed: at P1024 the file is some 50 MB, which need not sit in memory.
    let path = dir.join("timeseries.csv");
    let mut w = files::create(&path)?;
    rows(&mut w, run)
        .and_then(|()| w.flush())
        .with_context(|| format!("writing {}", path.display()))
}

/// Every row of the file, header first.
fn rows(w: &mut impl Write, run: &Run) -> std::io::Result<()> {
    cells::row(w, &[b"variant", b"time_ns", b"series", b"key", b"value"])?;
    let mut control_value = String::new();
    for d in &run.variants {
        let name = &cells::text(&d.report.summary.name)[..];
        let s = &d.telemetry.sampler;
        // Port names once, not once per sample; numbers formatted on the stack.
        let keys: Vec<Vec<u8>> = s
            .ports
            .iter()
            .map(|p| cells::text(&d.telemetry.label(p.0)))
            .collect();
        // Each port's queue and ingress series read in order, without a search per sample.
        let mut queues: Vec<_> = s.queues.iter().map(|q| q.walk()).collect();
        let mut pgs: Vec<_> = s.pg.iter().map(|q| q.walk()).collect();
        for (k, &time) in s.times.iter().enumerate() {
            let ns = Cell::ns(time);
            let ns = ns.as_bytes();
            let v = &s.totals[k];
            for (series, value) in [
                ("delivered_bytes", v.delivered_bytes),
                ("ecn_marked", v.ecn_marked),
                ("cnps", v.cnps),
                ("pfc_frames", v.pfc_frames),
                ("trimmed", v.trimmed),
                ("drops", v.drops),
            ] {
                let value = Cell::int(value);
                cells::row(w, &[name, ns, series.as_bytes(), b"fabric", value.as_bytes()])?;
            }
            for (i, key) in keys.iter().enumerate() {
                let key = &key[..];
                let q = queues[i].at(k);
                if q > 0 {
                    let q = Cell::int(q.into());
                    cells::row(w, &[name, ns, b"queue_bytes", key, q.as_bytes()])?;
                }
                let u = s.utilisation(i, k);
                if u > 0.0 {
                    let u = Cell::fraction(u);
                    cells::row(w, &[name, ns, b"tx_utilisation", key, u.as_bytes()])?;
                }
                if let (Some(pg), xoff) = (pgs.get_mut(i), s.xoff(i)) {
                    let pg = pg.at(k);
                    if pg > 0 {
                        let (pg, xoff) = (Cell::int(pg.into()), Cell::int(xoff[k].into()));
                        cells::row(w, &[name, ns, b"pg_bytes", key, pg.as_bytes()])?;
                        cells::row(w, &[name, ns, b"xoff_bytes", key, xoff.as_bytes()])?;
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
        for f in crate::plots::flows::csv_flows(run, d) {
            let Some(col) = fs.column(f) else { continue };
            let key = cells::text(&format!("flow {f}"));
            let key = &key[..];
            for (k, &time) in fs.times.iter().enumerate() {
                let ns = Cell::ns(time);
                let (delivered, c) = fs.at(col, k);
                let delivered = Cell::int(delivered);
                cells::row(
                    w,
                    &[
                        name,
                        ns.as_bytes(),
                        b"flow_delivered_bytes",
                        key,
                        delivered.as_bytes(),
                    ],
                )?;
                if let Some(series) = control {
                    control_value.clear();
                    let _ = write!(control_value, "{c:.0}");
                    let c = control_value.as_bytes();
                    cells::row(w, &[name, ns.as_bytes(), series.as_bytes(), key, c])?;
                }
            }
        }
    }
    Ok(())
}
