//! `sim sweep`: check the sweep against its scenario, run the points in parallel (rayon) or a
//! shard of them, write each point's results and the sweep's rows.

use super::spec::{Point, SweepFile, points};
use super::{COLUMNS, Meta, finish, fnv};
use crate::results_dir::{Kind, Staging};
use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use models::Overrides;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Sweep file (TOML).
    pub file: PathBuf,
    /// Results directory [default: results/SWEEP-NAME].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Parallel points [default: all cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard I of N (points whose index mod N is I), e.g. --shard 0/4.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Plots of each point: none, summary (compare, FCT CDF, goodput, queues) or all. The
    /// sweep's own plots are always written.
    #[arg(long, value_enum, default_value = "summary")]
    pub plots: crate::plots::Level,
    #[arg(long, short)]
    pub quiet: bool,
}

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

/// A sweep file read and checked against its base scenario.
struct Checked {
    sweep: SweepFile,
    /// The sweep file's text (part of the hash `sim merge` checks shards by).
    text: String,
    scenario: PathBuf,
    base: models::Scenario,
    points: Vec<Point>,
    name: String,
}

/// Read the sweep file and check it before anything runs: every metric is a sweep column,
/// no axis is the seed, and every axis key, with each of its values, is a key of the base
/// scenario (a misspelt key fails here; a bad value only fails its own points, which are
/// recorded with their error in sweep.csv while the rest of the sweep goes on).
fn check(file: &Path) -> Result<Checked> {
    let read_error = |message: String| models::ScenarioError {
        origin: models::scenario::Origin::FileOnly(file.display().to_string()),
        key: None,
        message,
    };
    let text = models::input::read_text(file, models::input::MAX_CONFIG)
        .map_err(|e| read_error(format!("cannot read the sweep: {e}")))?;
    let sweep: SweepFile = toml::from_str(&text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let (line, column) = models::scenario::error::line_col(&text, offset);
        models::ScenarioError {
            origin: models::scenario::Origin::File {
                file: file.display().to_string(),
                line,
                column,
            },
            key: models::scenario::error::key_at(&text, offset),
            message: format!("not a valid sweep file: {}", e.message()),
        }
    })?;
    if let Some(name) = &sweep.name {
        models::scenario::names::file_name(name, usize::MAX).map_err(|m| {
            anyhow::Error::new(models::ScenarioError {
                origin: models::scenario::Origin::FileOnly(file.display().to_string()),
                key: Some("name".into()),
                message: m,
            })
        })?;
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    let scenario = dir.join(&sweep.scenario);
    let base = models::load(&scenario, &Overrides::default())?;
    let points = points(&sweep, sweep.seed.unwrap_or(base.seed)).map_err(|e| bad_input(file, e))?;
    let plottable = &COLUMNS[2..COLUMNS.len() - 1];
    if let Some(m) = sweep.metrics.iter().find(|m| !plottable.contains(&m.as_str())) {
        return Err(bad_input(
            file,
            anyhow::anyhow!(
                "metrics: `{m}` is not a sweep column; expected one of {}",
                plottable.join(", ")
            ),
        ));
    }
    if let Some(a) = sweep.axis.iter().find(|a| a.key == "seed") {
        return Err(bad_input(
            file,
            anyhow::anyhow!(
                "axis `{}`: replications are set by `seeds` (and `seed`, the first), not by an axis",
                a.key
            ),
        ));
    }
    for (i, a) in sweep.axis.iter().enumerate() {
        for v in a.values(i).map_err(|e| bad_input(file, e))? {
            let set = vec![format!("{}={v}", a.key)];
            if let Err(e) = models::load(
                &scenario,
                &Overrides {
                    set,
                    ..Default::default()
                },
            ) {
                if e.is_unknown_key() {
                    return Err(bad_input(
                        file,
                        anyhow::anyhow!("axis[{i}] key `{}` is not a scenario key: {e}", a.key),
                    ));
                }
            }
        }
    }
    let name = sweep.name.clone().unwrap_or_else(|| {
        file.file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().into_owned())
    });
    Ok(Checked {
        sweep,
        text,
        scenario,
        base,
        points,
        name,
    })
}

/// `sim sweep`.
pub fn run(args: &SweepArgs) -> Result<ExitCode> {
    // Ctrl-C: points not started are not run, running ones stop at their next progress tick;
    // what ran is written and marked (sweep.json `interrupted`), exit 130. A second Ctrl-C
    // quits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(crate::exit::INTERRUPTED));
        }
        errln!("\ninterrupted: writing the points done so far (Ctrl-C again quits at once)");
    });
    let c = check(&args.file)?;
    let out = match &args.out {
        Some(o) => o.clone(),
        None => crate::results_dir::default_out(&args.file, &c.name)?,
    };
    let (me, of) = shard(&args.shard).map_err(|e| bad_input(&args.file, e))?;
    // An earlier sweep's directory is replaced whole (its points must not mix with these),
    // and only if sim wrote it; checked before any point runs.
    let staging = Staging::prepare(&out, Kind::Sweep, &[&args.file, &c.scenario])?;
    let dir = staging.dir().to_path_buf();
    std::fs::create_dir(dir.join("points")).with_context(|| format!("creating {}/points", dir.display()))?;
    let mine: Vec<&Point> = c.points.iter().filter(|p| p.index % of == me).collect();
    let rows = run_points(&c, &mine, &dir, args, &stop)?;
    let interrupted = stop.load(Ordering::SeqCst);
    let meta = Meta {
        name: c.name.clone(),
        keys: c.sweep.axis.iter().map(|a| a.key.clone()).collect(),
        metrics: c.sweep.metrics.clone(),
        points: c.points.len(),
        shard: [me, of],
        hash: format!(
            "{:016x}",
            fnv(
                fnv(0xcbf2_9ce4_8422_2325, c.text.as_bytes()),
                &c.base.hash.to_le_bytes()
            )
        ),
        interrupted,
    };
    let code = finish(&dir, &out, &meta, rows)?;
    staging.commit().with_context(|| {
        format!(
            "results not written to {} (anything there is as it was)",
            out.display()
        )
    })?;
    Ok(code)
}

/// Run `mine` on `args.jobs` threads with a progress display; their sweep.csv rows.
fn run_points(
    c: &Checked,
    mine: &[&Point],
    out: &Path,
    args: &SweepArgs,
    stop: &AtomicBool,
) -> Result<Vec<Vec<String>>> {
    let multi = MultiProgress::with_draw_target(if args.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    });
    let overall = multi.add(ProgressBar::new(mine.len() as u64));
    // The ETA from finished points (indicatif's own estimate says 0 s before the first).
    overall.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} points, {prefix} [{elapsed}]")
            .expect("static template"),
    );
    overall.set_message(c.name.clone());
    overall.set_prefix("ETA after the first point");
    overall.enable_steady_tick(std::time::Duration::from_millis(500));
    let started = std::time::Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()?;
    // Points run side by side: each may have its share of the machine's memory.
    let jobs = pool.current_num_threads().max(1) as u64;
    let memory = crate::machine::machine_limit()
        .map(|(b, why)| (b / jobs, format!("{why}, shared by {jobs} parallel points")));
    let rows: Vec<Vec<Vec<String>>> = pool.install(|| {
        mine.par_iter()
            .map(|p| {
                if stop.load(Ordering::SeqCst) {
                    return vec![not_run(p)];
                }
                let spinner = multi.add(ProgressBar::new_spinner());
                spinner.set_message(format!("point {} {:?} seed {}", p.index, p.values, p.seed));
                spinner.enable_steady_tick(std::time::Duration::from_millis(200));
                let rows = run_point(&c.sweep, &c.scenario, p, out, memory.clone(), args.plots, stop);
                spinner.finish_and_clear();
                overall.inc(1);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                let left = mine.len() - n;
                let eta = started.elapsed().as_secs_f64() / n as f64 * left as f64;
                overall.set_prefix(format!(
                    "ETA {}",
                    indicatif::HumanDuration(std::time::Duration::from_secs_f64(eta))
                ));
                rows
            })
            .collect()
    });
    overall.finish_and_clear();
    Ok(rows.into_iter().flatten().collect())
}

fn bad_input(file: &Path, e: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(models::ScenarioError {
        origin: models::scenario::Origin::FileOnly(file.display().to_string()),
        key: None,
        message: format!("{e:#}"),
    })
}

/// The row of a point Ctrl-C kept from running.
fn not_run(p: &Point) -> Vec<String> {
    let mut r = vec![p.index.to_string(), p.seed.to_string()];
    r.extend(p.values.iter().cloned());
    r.push(String::new());
    r.push("interrupted".into());
    r.extend(std::iter::repeat_n(String::new(), COLUMNS.len() - 3));
    r.push("not run: interrupted (Ctrl-C)".into());
    r
}

/// A variant's status in sweep.csv: `ok`; `failed` (an invariant violated); `incomplete`
/// (flows unfinished: a limit, a sender that gave up, a dependency never met);
/// `interrupted` (Ctrl-C).
fn status(v: &serde_json::Value) -> (&'static str, String) {
    let ok = v["invariants"]
        .as_array()
        .is_some_and(|i| i.iter().all(|x| x["ok"] == true));
    if !ok {
        return (
            "failed",
            "invariant violated (see the point's summary.json)".into(),
        );
    }
    match v["incomplete"].as_str() {
        Some(why) if why.contains("Ctrl-C") => ("interrupted", why.to_string()),
        Some(why) => ("incomplete", why.to_string()),
        None => ("ok", String::new()),
    }
}

/// Run one point; its rows for sweep.csv (a `failed` row with the error if it failed).
/// `memory`: the point's share of the machine (the default `run.max_memory`).
fn run_point(
    sweep: &SweepFile,
    scenario: &Path,
    p: &Point,
    out: &Path,
    memory: Option<(u64, String)>,
    plots: crate::plots::Level,
    stop: &AtomicBool,
) -> Vec<Vec<String>> {
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
                max_memory: memory,
            },
        )?;
        let (reports, telemetry, cut) =
            crate::runner::simulate(&sc, true, 1, crate::runner::Threads::ONE, stop, None);
        let dir = out.join("points").join(format!("{:05}", p.index));
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let opts = crate::output::Options {
            argv: &[],
            cut: &cut,
            plots,
            quiet: true,
            // The points already run side by side.
            jobs: 1,
        };
        crate::output::write_results(&dir, &sc, &reports, &telemetry, &opts)?;
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json"))?)?;
        let mut rows = Vec::new();
        for v in summary["variants"].as_array().context("no variants")? {
            let (status, why) = status(v);
            let mut r = head(v["name"].as_str().unwrap_or("?"), status);
            for c in &COLUMNS[2..COLUMNS.len() - 1] {
                let ptr = format!("/{}", c.replace('.', "/"));
                r.push(
                    v.pointer(&ptr)
                        .filter(|x| !x.is_null())
                        .map(|x| x.to_string())
                        .unwrap_or_default(),
                );
            }
            r.push(why);
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
