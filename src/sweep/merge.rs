//! `sim merge`: the shards' rows into one sweep.csv and the same plots a single run makes,
//! after checking the shards belong to one sweep, each once, none missing.

use super::{Meta, finish};
use crate::exit::BadInput;
use crate::results_dir::{Kind, Staging};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Results directories of the shards.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where the merged sweep goes [default: results/SWEEP-NAME].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `sim merge`: the shards' rows into one sweep.csv and the same plots a single run makes.
pub fn merge(args: &MergeArgs) -> Result<ExitCode> {
    let mut meta: Option<Meta> = None;
    let mut rows = Vec::new();
    let mut shards_seen = std::collections::BTreeSet::new();
    let bad = |path: &Path, e: &dyn std::fmt::Display| {
        BadInput::new(format!(
            "{}: {e} (merge takes the directories `sim sweep --shard` wrote)",
            path.display()
        ))
    };
    for d in &args.dirs {
        let json = d.join("sweep.json");
        let text = models::input::read_text(&json, models::input::MAX_CONFIG)
            .map_err(|e| bad(&json, &format!("cannot read it: {e}")))?;
        let m: Meta = serde_json::from_str(&text).map_err(|e| bad(&json, &e))?;
        if m.shard[1] == 0 || m.shard[0] >= m.shard[1] {
            return Err(bad(&json, &format!("shard {:?} is not I of N with I < N", m.shard)).into());
        }
        if let Some(prev) = &meta {
            if prev.hash != m.hash || prev.points != m.points || prev.shard[1] != m.shard[1] {
                bail!(BadInput::new(format!(
                    "{} is a shard of another sweep ({} over {:?}, {} points, {} shards, sweep and scenario hash {}) than the first ({} points, {} shards, hash {})",
                    d.display(),
                    m.name,
                    m.keys,
                    m.points,
                    m.shard[1],
                    m.hash,
                    prev.points,
                    prev.shard[1],
                    prev.hash
                )));
            }
        }
        if !shards_seen.insert(m.shard[0]) {
            bail!(BadInput::new(format!(
                "{}: shard {}/{} is given twice",
                d.display(),
                m.shard[0],
                m.shard[1]
            )));
        }
        let csv_path = d.join("sweep.csv");
        let text = models::input::read_text(&csv_path, models::input::MAX_DATA)
            .map_err(|e| bad(&csv_path, &format!("cannot read it: {e}")))?;
        let width = 2 + m.keys.len() + super::COLUMNS.len();
        let mut r = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(text.as_bytes());
        for rec in r.records() {
            let rec = rec.map_err(|e| bad(&csv_path, &e))?;
            if rec.len() != width {
                let line = rec.position().map_or(0, |p| p.line());
                return Err(bad(
                    &csv_path,
                    &format!(
                        "line {line}: {} columns, not the {width} of this sweep",
                        rec.len()
                    ),
                )
                .into());
            }
            rows.push(rec.iter().map(String::from).collect::<Vec<_>>());
        }
        meta = Some(m);
    }
    let mut meta = meta.context("nothing to merge")?;
    let missing: Vec<usize> = (0..meta.shard[1]).filter(|i| !shards_seen.contains(i)).collect();
    if !missing.is_empty() {
        bail!(BadInput::new(format!(
            "shards {missing:?} of {} are missing: merge all {} shard directories",
            meta.shard[1], meta.shard[1]
        )));
    }
    meta.shard = [0, 1];
    // The merge itself was not interrupted: rows of an interrupted shard say so and count
    // as not ok.
    meta.interrupted = false;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&meta.name));
    let inputs: Vec<&Path> = args.dirs.iter().map(PathBuf::as_path).collect();
    let staging = Staging::prepare(&out, Kind::Sweep, &inputs)?;
    let code = finish(staging.dir(), &out, &meta, rows)?;
    staging.commit().with_context(|| {
        format!(
            "results not written to {} (anything there is as it was)",
            out.display()
        )
    })?;
    Ok(code)
}
