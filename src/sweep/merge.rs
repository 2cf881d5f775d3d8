//! `sim merge`: the shards' rows into one sweep.csv and the same plots a single run makes,
//! after checking the shards belong to one sweep, each once, none missing.

use super::{Meta, finish};
use crate::results_dir::{Kind, Staging};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Results directories of the shards.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where the merged sweep goes [default: results/<sweep name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `sim merge`: the shards' rows into one sweep.csv and the same plots a single run makes.
pub fn merge(args: &MergeArgs) -> Result<ExitCode> {
    let mut meta: Option<Meta> = None;
    let mut rows = Vec::new();
    let mut shards_seen = std::collections::BTreeSet::new();
    for d in &args.dirs {
        let m: Meta = serde_json::from_str(
            &models::input::read_text(&d.join("sweep.json"), models::input::MAX_CONFIG).map_err(|e| {
                crate::exit::BadInput::new(format!("{}/sweep.json: cannot read it: {e}", d.display()))
            })?,
        )?;
        if let Some(prev) = &meta {
            if prev.hash != m.hash || prev.points != m.points || prev.shard[1] != m.shard[1] {
                bail!(
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
                );
            }
        }
        if !shards_seen.insert(m.shard[0]) {
            bail!(
                "{}: shard {}/{} is given twice",
                d.display(),
                m.shard[0],
                m.shard[1]
            );
        }
        let mut r = csv::Reader::from_path(d.join("sweep.csv"))?;
        for rec in r.records() {
            rows.push(rec?.iter().map(String::from).collect::<Vec<_>>());
        }
        meta = Some(m);
    }
    let mut meta = meta.context("nothing to merge")?;
    let missing: Vec<usize> = (0..meta.shard[1]).filter(|i| !shards_seen.contains(i)).collect();
    if !missing.is_empty() {
        bail!(
            "shards {missing:?} of {} are missing: merge all {} shard directories",
            meta.shard[1],
            meta.shard[1]
        );
    }
    meta.shard = [0, 1];
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&meta.name));
    let staging = Staging::prepare(&out, Kind::Sweep)?;
    let code = finish(staging.dir(), &out, &meta, rows)?;
    staging.commit().with_context(|| {
        format!(
            "results not written to {} (anything there is as it was)",
            out.display()
        )
    })?;
    Ok(code)
}
