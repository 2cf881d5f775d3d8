//! Capture points as pcap files (`<capture>-<variant>.pcap`), nanosecond timestamps from
//! simulated time, frames spelt out by `models::pcap`. Written through a buffer to a temporary
//! name and renamed, like every result file.

use crate::telemetry::Telemetry;
use anyhow::{Context, Result};
use models::VariantReport;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

pub fn write(dir: &Path, reports: &[VariantReport], telemetry: &[Telemetry]) -> Result<()> {
    let mut frame = Vec::with_capacity(10_000);
    for (r, t) in reports.iter().zip(telemetry) {
        for c in &t.captures {
            let path = dir.join(format!("{}-{}.pcap", c.spec.name, r.summary.name));
            let tmp = path.with_extension("pcap.tmp");
            let mut w =
                BufWriter::new(File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?);
            w.write_all(&models::pcap::file_header(c.spec.snaplen))?;
            for rec in &c.records {
                models::pcap::encode(&t.frames, &rec.pkt, c.int_of(rec), rec.sender, &mut frame);
                let ns = rec.at.0 / 1000;
                w.write_all(&models::pcap::record_header(ns, frame.len(), c.spec.snaplen))?;
                w.write_all(&frame[..frame.len().min(c.spec.snaplen as usize)])?;
            }
            w.into_inner().map_err(|e| e.into_error())?.sync_all().ok();
            std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
            if c.cut > 0 {
                errln!(
                    "capture {}: kept the first {} frames; {} more matched (raise max_packets)",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    c.records.len(),
                    c.cut
                );
            }
        }
    }
    Ok(())
}
