//! `sim sweep` and `sim merge`: parameter sweeps on a laptop (rayon) or a cluster (shards).
//!
//! A sweep file names a base scenario and axes (any scenario key, by dotted path, with a list
//! of values or a numeric range), crossed (or zipped) and replicated over seeds. Every point
//! runs all the scenario's variants, independently and deterministically, so the points can
//! run in any order, in parallel or in shards on different machines, and give the same
//! numbers. Each point writes its own results directory; `sweep.csv` has one row per point x
//! seed x variant, and PNG plots show each metric against each axis, a line per variant with
//! the mean and a 95 % confidence band across seeds (and the other axes).

use crate::exit;
use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use models::Overrides;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A sweep file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub name: Option<String>,
    /// The base scenario, relative to the sweep file.
    pub scenario: String,
    /// Replications: seeds base, base+1, ... (base = the scenario's seed, or `seed`).
    #[serde(default = "one")]
    pub seeds: u64,
    #[serde(default)]
    pub seed: Option<u64>,
    /// `grid` (cartesian product, the default) or `zip` (axes advance together).
    #[serde(default)]
    pub mode: Mode,
    /// Metrics to plot, as summary.json paths.
    #[serde(default = "default_metrics")]
    pub metrics: Vec<String>,
    pub axis: Vec<Axis>,
}

fn one() -> u64 {
    1
}
fn default_metrics() -> Vec<String> {
    vec!["fct_ns.p99".into(), "goodput_gbps".into()]
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    #[default]
    Grid,
    Zip,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub key: String,
    #[serde(default)]
    pub values: Option<Vec<toml::Value>>,
    #[serde(default)]
    pub range: Option<Range>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub from: f64,
    pub to: f64,
    pub step: f64,
}

impl Axis {
    /// The values as `--set` strings.
    fn values(&self, i: usize) -> Result<Vec<String>> {
        let render = |v: &toml::Value| match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match (&self.values, &self.range) {
            (Some(v), None) if !v.is_empty() => Ok(v.iter().map(render).collect()),
            (None, Some(r)) if r.step > 0.0 && r.to >= r.from => {
                let n = ((r.to - r.from) / r.step + 1e-9).floor() as usize + 1;
                if n > 10_000 {
                    bail!("axis[{i}].range: {n} values is too many");
                }
                // As many decimals as `from` and `step` have, so 0.1 + 2 x 0.1 reads 0.3.
                let decimals = |x: f64| {
                    (0..=9)
                        .find(|&d| ((x * 10f64.powi(d)).round() - x * 10f64.powi(d)).abs() < 1e-6)
                        .unwrap_or(9)
                };
                let d = decimals(r.from).max(decimals(r.step)) as usize;
                Ok((0..n)
                    .map(|k| format!("{:.d$}", r.from + k as f64 * r.step))
                    .collect())
            }
            _ => bail!(
                "axis[{i}] (`{}`): give a non-empty `values` list or a `range = {{ from, to, step }}` with step > 0",
                self.key
            ),
        }
    }
}

/// One point: its index, the axis values, the seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    pub values: Vec<String>,
    pub seed: u64,
}

/// Expand the axes into points (grid or zip) times seeds, in a stable order.
pub fn points(f: &SweepFile, base_seed: u64) -> Result<Vec<Point>> {
    let values: Vec<Vec<String>> = f
        .axis
        .iter()
        .enumerate()
        .map(|(i, a)| a.values(i))
        .collect::<Result<_>>()?;
    if values.is_empty() {
        bail!("a sweep needs at least one [[axis]]");
    }
    let combos: Vec<Vec<String>> = match f.mode {
        Mode::Zip => {
            let n = values[0].len();
            if let Some((i, _)) = values.iter().enumerate().find(|(_, v)| v.len() != n) {
                bail!(
                    "zipped axes must have equal lengths: axis[0] has {n} values, axis[{i}] {}",
                    values[i].len()
                );
            }
            (0..n)
                .map(|k| values.iter().map(|v| v[k].clone()).collect())
                .collect()
        }
        Mode::Grid => values.iter().fold(vec![Vec::new()], |acc, vals| {
            acc.iter()
                .flat_map(|prefix| {
                    vals.iter()
                        .map(move |v| [prefix.clone(), vec![v.clone()]].concat())
                })
                .collect()
        }),
    };
    let mut out = Vec::new();
    for combo in combos {
        for s in 0..f.seeds.max(1) {
            out.push(Point {
                index: out.len(),
                values: combo.clone(),
                seed: base_seed + s,
            });
        }
    }
    Ok(out)
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Sweep file (TOML).
    pub file: PathBuf,
    /// Results directory [default: results/<sweep name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Parallel points [default: all cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard I of N (points whose index mod N is I), e.g. --shard 0/4.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    #[arg(long, short)]
    pub quiet: bool,
}

/// The sweep's description, saved beside its results so `sim merge` can plot shards.
#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    name: String,
    keys: Vec<String>,
    metrics: Vec<String>,
    /// Points in the whole sweep (all shards), this directory's shard `[i, n]`, and a hash
    /// of the sweep and base scenario texts: `sim merge` checks that shards belong together.
    points: usize,
    shard: [usize; 2],
    hash: String,
}

/// FNV-1a, stable across builds (unlike std's hasher).
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// sweep.csv's columns after the point, seed and axis values: summary.json paths (deterministic
/// numbers only, no wall time, so a sweep's CSV is the same however it was run).
const COLUMNS: [&str; 17] = [
    "variant",
    "status",
    "flows_total",
    "flows_completed",
    "fct_ns.p50",
    "fct_ns.p99",
    "fct_ns.max",
    "slowdown.p50",
    "slowdown.p99",
    "goodput_gbps",
    "drops",
    "pfc_pause_frames",
    "ecn_marked",
    "cnps",
    "trimmed",
    "retransmitted_packets",
    "error",
];

fn shard(spec: &Option<String>) -> Result<(usize, usize)> {
    let Some(s) = spec else { return Ok((0, 1)) };
    let parsed = s
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
    match parsed {
        Some((i, n)) if n > 0 && i < n => Ok((i, n)),
        _ => bail!("--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4"),
    }
}

/// `sim sweep`.
pub fn run(args: &SweepArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| models::ScenarioError {
        origin: models::scenario::Origin::FileOnly(args.file.display().to_string()),
        key: None,
        message: format!("cannot read the sweep: {e}"),
    })?;
    let sweep: SweepFile = toml::from_str(&text).map_err(|e| models::ScenarioError {
        origin: models::scenario::Origin::FileOnly(args.file.display().to_string()),
        key: None,
        message: format!("not a valid sweep file: {}", e.message()),
    })?;
    let dir = args.file.parent().unwrap_or(Path::new("."));
    let scenario_path = dir.join(&sweep.scenario);
    let base = models::load(&scenario_path, &Overrides::default())?;
    let points = points(&sweep, sweep.seed.unwrap_or(base.seed)).map_err(|e| bad_input(&args.file, e))?;
    let plottable = &COLUMNS[2..COLUMNS.len() - 1];
    if let Some(m) = sweep.metrics.iter().find(|m| !plottable.contains(&m.as_str())) {
        return Err(bad_input(
            &args.file,
            anyhow::anyhow!(
                "metrics: `{m}` is not a sweep column; expected one of {}",
                plottable.join(", ")
            ),
        ));
    }
    // Every axis key is checked up front, with each of its values on the base scenario: a
    // misspelt key fails before any point runs. A bad value only fails its own points, which
    // are recorded with their error in sweep.csv while the rest of the sweep goes on.
    if let Some(a) = sweep.axis.iter().find(|a| a.key == "seed") {
        return Err(bad_input(
            &args.file,
            anyhow::anyhow!(
                "axis `{}`: replications are set by `seeds` (and `seed`, the first), not by an axis",
                a.key
            ),
        ));
    }
    for (i, a) in sweep.axis.iter().enumerate() {
        for v in a.values(i).map_err(|e| bad_input(&args.file, e))? {
            let set = vec![format!("{}={v}", a.key)];
            if let Err(e) = models::load(&scenario_path, &Overrides { set, seed: None }) {
                if e.is_unknown_key() {
                    return Err(bad_input(
                        &args.file,
                        anyhow::anyhow!("axis[{i}] key `{}` is not a scenario key: {e}", a.key),
                    ));
                }
            }
        }
    }
    let name = sweep.name.clone().unwrap_or_else(|| {
        args.file
            .file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().into_owned())
    });
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&name));
    let (me, of) = shard(&args.shard).map_err(|e| bad_input(&args.file, e))?;
    // An earlier sweep's directory is replaced whole (its points must not mix with these).
    crate::output::check_out(&out)?;
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("removing the earlier {}", out.display()))?;
    }
    std::fs::create_dir_all(out.join("points")).with_context(|| format!("creating {}", out.display()))?;
    let mine: Vec<&Point> = points.iter().filter(|p| p.index % of == me).collect();

    let multi = MultiProgress::with_draw_target(if args.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    });
    let overall = multi.add(ProgressBar::new(mine.len() as u64));
    overall.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} points, ETA {eta}")
            .expect("static template"),
    );
    overall.set_message(name.clone());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()?;
    let rows: Vec<Vec<Vec<String>>> = pool.install(|| {
        mine.par_iter()
            .map(|p| {
                let spinner = multi.add(ProgressBar::new_spinner());
                spinner.set_message(format!("point {} {:?} seed {}", p.index, p.values, p.seed));
                spinner.enable_steady_tick(std::time::Duration::from_millis(200));
                let rows = run_point(&sweep, &scenario_path, p, &out);
                spinner.finish_and_clear();
                overall.inc(1);
                rows
            })
            .collect()
    });
    overall.finish_and_clear();
    let rows: Vec<Vec<String>> = rows.into_iter().flatten().collect();
    let meta = Meta {
        name: name.clone(),
        keys: sweep.axis.iter().map(|a| a.key.clone()).collect(),
        metrics: sweep.metrics.clone(),
        points: points.len(),
        shard: [me, of],
        hash: format!(
            "{:016x}",
            fnv(
                fnv(0xcbf2_9ce4_8422_2325, text.as_bytes()),
                &base.hash.to_le_bytes()
            )
        ),
    };
    finish(&out, &meta, rows)
}

fn bad_input(file: &Path, e: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(models::ScenarioError {
        origin: models::scenario::Origin::FileOnly(file.display().to_string()),
        key: None,
        message: format!("{e:#}"),
    })
}

/// Run one point; its rows for sweep.csv (a `failed` row with the error if it failed).
fn run_point(sweep: &SweepFile, scenario: &Path, p: &Point, out: &Path) -> Vec<Vec<String>> {
    let set: Vec<String> = sweep
        .axis
        .iter()
        .zip(&p.values)
        .map(|(a, v)| format!("{}={v}", a.key))
        .collect();
    let head = |variant: &str, status: &str| {
        let mut r = vec![p.index.to_string(), p.seed.to_string()];
        r.extend(p.values.iter().cloned());
        r.push(variant.into());
        r.push(status.into());
        r
    };
    let run = || -> Result<Vec<Vec<String>>> {
        let sc = models::load(
            scenario,
            &Overrides {
                set,
                seed: Some(p.seed),
            },
        )?;
        let (reports, telemetry) =
            crate::run::simulate(&sc, true, &std::sync::atomic::AtomicBool::new(false));
        let dir = out.join("points").join(format!("{:05}", p.index));
        crate::output::write_results(&dir, &sc, &reports, &telemetry, &[])?;
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json"))?)?;
        let mut rows = Vec::new();
        for v in summary["variants"].as_array().context("no variants")? {
            let ok = v["invariants"]
                .as_array()
                .is_some_and(|i| i.iter().all(|x| x["ok"] == true));
            let mut r = head(
                v["name"].as_str().unwrap_or("?"),
                if ok { "ok" } else { "failed" },
            );
            for c in &COLUMNS[2..COLUMNS.len() - 1] {
                let ptr = format!("/{}", c.replace('.', "/"));
                r.push(v.pointer(&ptr).map(|x| x.to_string()).unwrap_or_default());
            }
            r.push(if ok {
                String::new()
            } else {
                "invariant violated (see the point's summary.json)".into()
            });
            rows.push(r);
        }
        Ok(rows)
    };
    // A panic is a simulator bug, but it costs one point, not the sweep.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(anyhow::anyhow!(
            "the simulator panicked (a bug; please report it): {msg}"
        ))
    });
    result.unwrap_or_else(|e| {
        let mut r = head("", "failed");
        r.extend(std::iter::repeat_n(String::new(), COLUMNS.len() - 3));
        r.push(format!("{e:#}").replace('\n', " "));
        vec![r]
    })
}

/// Write sweep.csv, sweep.json and the plots; the exit code says whether any point failed.
fn finish(out: &Path, meta: &Meta, mut rows: Vec<Vec<String>>) -> Result<ExitCode> {
    rows.sort_by_key(|r| {
        (
            r[0].parse::<usize>().unwrap_or(usize::MAX),
            r[2 + meta.keys.len()].clone(),
        )
    });
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["point".to_string(), "seed".to_string()];
    header.extend(meta.keys.iter().cloned());
    header.extend(COLUMNS.iter().map(|c| c.to_string()));
    w.write_record(&header)?;
    for r in &rows {
        w.write_record(r)?;
    }
    crate::files::write_atomic(&out.join("sweep.csv"), &w.into_inner()?)?;
    crate::files::write_atomic(
        &out.join("sweep.json"),
        serde_json::to_string_pretty(meta)?.as_bytes(),
    )?;
    crate::sweep_plots::write(out, &meta.name, &meta.keys, &meta.metrics, &header, &rows)?;
    let failed = rows.iter().filter(|r| r[3 + meta.keys.len()] == "failed").count();
    println!(
        "sweep: {} rows in {}",
        rows.len(),
        out.join("sweep.csv").display()
    );
    if failed > 0 {
        eprintln!("{failed} rows failed; see the `error` column of sweep.csv");
        return Ok(ExitCode::from(exit::SWEEP_FAILURES));
    }
    Ok(ExitCode::SUCCESS)
}

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
            &std::fs::read_to_string(d.join("sweep.json"))
                .with_context(|| format!("reading {}/sweep.json", d.display()))?,
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
    std::fs::create_dir_all(&out)?;
    finish(&out, &meta, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(mode: Mode, seeds: u64) -> SweepFile {
        let axis = |k: &str, v: &[&str]| Axis {
            key: k.into(),
            values: Some(v.iter().map(|s| toml::Value::String(s.to_string())).collect()),
            range: None,
        };
        SweepFile {
            name: None,
            scenario: "x.toml".into(),
            seeds,
            seed: None,
            mode,
            metrics: default_metrics(),
            axis: vec![axis("a", &["1", "2"]), axis("b", &["x", "y"])],
        }
    }

    #[test]
    fn grids_cross_and_zips_pair_times_seeds() {
        let g = points(&file(Mode::Grid, 2), 10).unwrap();
        assert_eq!(g.len(), 8);
        assert_eq!(
            (g[0].values.clone(), g[0].seed, g[1].seed),
            (vec!["1".to_string(), "x".to_string()], 10, 11)
        );
        assert_eq!(points(&file(Mode::Zip, 1), 1).unwrap().len(), 2);
    }

    #[test]
    fn ranges_expand() {
        let a = Axis {
            key: "k".into(),
            values: None,
            range: Some(Range {
                from: 0.3,
                to: 0.7,
                step: 0.2,
            }),
        };
        assert_eq!(a.values(0).unwrap(), vec!["0.3", "0.5", "0.7"]);
        // No binary-fraction noise: 0.1 + 2 x 0.1 is written 0.3.
        let b = Axis {
            key: "k".into(),
            values: None,
            range: Some(Range {
                from: 0.1,
                to: 0.3,
                step: 0.1,
            }),
        };
        assert_eq!(b.values(0).unwrap(), vec!["0.1", "0.2", "0.3"]);
    }
}
