//! `sim run`: load, run every variant, print the table, write the results directory.

use crate::exit::{self, BadInput};
use crate::output::{self, Cut};
use crate::results_dir::{Kind, Staging};
use crate::watchdog::{Phase, Watchdog};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use models::{Overrides, Sim, VariantReport};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// Results directory [default: results/<scenario name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override a scenario key before validation, e.g. --set switch.buffer=4MiB.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run only this variant (repeat for several) [default: all of them].
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Which plots to write: none, summary (compare, FCT CDF, goodput, queues) or all.
    #[arg(long, value_enum, default_value = "all")]
    pub plots: crate::plots::Level,
    /// No progress display.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: &RunArgs, started: Instant) -> Result<ExitCode> {
    // Ctrl-C stops the run at its next progress tick and still writes its results (marked
    // interrupted); installed first, so an early Ctrl-C is caught too; a second Ctrl-C quits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: writing the results so far (Ctrl-C again quits at once)");
    });
    let ov = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        max_memory: crate::machine::machine_limit(),
    };
    let mut scenario = models::load(&args.file, &ov)?;
    let mut said = std::collections::BTreeSet::new();
    for v in &scenario.variants {
        let tiers = v
            .tiers
            .iter()
            .filter_map(|t| Some((format!("switch.tier.{}.sonic", t.name), t.sonic.as_ref()?)));
        let files = v
            .sonic
            .iter()
            .map(|s| ("switch.sonic".to_string(), s))
            .chain(tiers);
        for (key, s) in files {
            for w in &s.imported.warnings {
                if said.insert((s.file.clone(), w.clone())) {
                    eprintln!("warning: {key} {}: {w}", s.file);
                }
            }
        }
    }
    if !args.variants.is_empty() {
        let names: Vec<String> = scenario.variants.iter().map(|v| v.name.clone()).collect();
        if let Some(bad) = args.variants.iter().find(|v| !names.contains(v)) {
            return Err(BadInput::new(format!(
                "--variant {bad}: {} has no such variant (it has: {})",
                args.file.display(),
                names.join(", ")
            ))
            .into());
        }
        scenario.variants.retain(|v| args.variants.contains(&v.name));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&scenario.name));
    // Before any work: an --out that cannot take the results fails now, not after the run.
    let staging = Staging::prepare(&out, Kind::Run)?;
    let wall = scenario
        .variants
        .iter()
        .map(|v| v.limits.wall())
        .min()
        .unwrap_or_default();
    let watchdog = Watchdog::arm(
        started,
        wall,
        staging.dir().to_path_buf(),
        staging.out().to_path_buf(),
    );
    let (reports, telemetry, cut) = simulate(&scenario, args.quiet, &stop, Some(&watchdog));
    output::print_table(&scenario, &reports);
    watchdog.enter(Phase::Writing);
    let argv: Vec<String> = std::env::args().collect();
    let opts = output::Options {
        argv: &argv,
        cut: &cut,
        plots: args.plots,
        quiet: args.quiet,
    };
    output::write_results(staging.dir(), &scenario, &reports, &telemetry, &opts)
        .and_then(|()| {
            watchdog.enter(Phase::Committing);
            staging.commit()
        })
        .with_context(|| {
            format!(
                "results not written to {} (anything there is as it was)",
                out.display()
            )
        })?;
    drop(watchdog);
    println!("results: {}", out.display());
    for n in &cut.variants_not_run {
        eprintln!(
            "{}: variant {n} not run",
            cut.stopped.as_deref().unwrap_or("stopped")
        );
    }
    Ok(ExitCode::from(exit_code(
        &reports,
        &cut,
        stop.load(Ordering::SeqCst),
    )))
}

/// The exit code of a run: the worst of what happened, in the order of `exit.rs`'s table
/// from the bottom (a violated invariant outranks a deadlock, which outranks a limit).
fn exit_code(reports: &[VariantReport], cut: &Cut, interrupted: bool) -> u8 {
    let mut code = 0;
    for r in reports {
        let s = &r.summary;
        for i in s.invariants.iter().filter(|i| !i.ok) {
            eprintln!("invariant violated: {}: {}: {}", s.name, i.name, i.detail);
            code = exit::INVARIANT_VIOLATED;
        }
    }
    if code != 0 {
        return code;
    }
    if interrupted {
        return exit::INTERRUPTED;
    }
    if reports.iter().any(|r| !r.summary.pfc_deadlocks.is_empty()) {
        return exit::DEADLOCK;
    }
    if cut.stopped.is_some() || reports.iter().any(|r| r.summary.incomplete.is_some()) {
        return exit::LIMIT;
    }
    0
}

/// Run every variant of `scenario`, with progress on a terminal unless `quiet`, until `stop`
/// is set (the variant running then is cut short, the rest are not run) or the watchdog's
/// soft deadline passes (likewise).
pub fn simulate(
    scenario: &models::Scenario,
    quiet: bool,
    stop: &AtomicBool,
    watchdog: Option<&Watchdog>,
) -> (Vec<VariantReport>, Vec<crate::telemetry::Telemetry>, Cut) {
    // Without a watchdog (a sweep's point), the scenario's own max_wall from now.
    let wall = scenario
        .variants
        .iter()
        .map(|v| v.limits.wall())
        .min()
        .unwrap_or_default();
    let soft = watchdog.map_or_else(
        || Instant::now() + wall.mul_f64(crate::watchdog::SOFT),
        |w| w.soft,
    );
    let enter = |p: Phase| {
        if let Some(w) = watchdog {
            w.enter(p);
        }
    };
    let mut reports = Vec::new();
    let mut telemetry = Vec::new();
    let mut cut = Cut::default();
    for (i, variant) in scenario.variants.iter().enumerate() {
        let why = if stop.load(Ordering::Relaxed) {
            Some("interrupted (Ctrl-C)".to_string())
        } else if Instant::now() >= soft {
            Some(format!(
                "stopped by run.max_wall ({:.1?}) before every variant ran",
                variant.limits.wall()
            ))
        } else {
            None
        };
        if let Some(why) = why {
            cut.stopped = Some(why);
            cut.variants_not_run = scenario.variants[i..].iter().map(|v| v.name.clone()).collect();
            break;
        }
        let bar = progress(quiet, &variant.name, variant.limits.max_time);
        let t0 = Instant::now();
        enter(Phase::SettingUp);
        let mut sim = Sim::new(scenario, variant);
        sim.set_wall_deadline(soft);
        enter(Phase::Simulating);
        // Redrawn on the wall clock, five times a second, whatever the event rate.
        let (mut drawn, mut drawn_events) = (Instant::now(), 0u64);
        sim.run_with_progress(|p| {
            let now = Instant::now();
            let since = now.duration_since(drawn).as_secs_f64();
            if since >= 0.2 {
                let rate = (p.events - drawn_events) as f64 / since;
                bar.set_message(format!(
                    "{}: {} simulated, {}/{} flows done, {:.1} M events/s",
                    variant.name,
                    output::human_ns(p.now.as_ns_f64()),
                    p.flows_done,
                    p.flows,
                    rate / 1e6
                ));
                bar.set_position(p.now.0 / 1_000_000);
                (drawn, drawn_events) = (now, p.events);
            }
            !stop.load(Ordering::Relaxed)
        });
        let wall = t0.elapsed().as_secs_f64();
        bar.finish_and_clear();
        reports.push(VariantReport::new(&sim, wall));
        telemetry.push(crate::telemetry::Telemetry::take(&mut sim));
    }
    if stop.load(Ordering::Relaxed) && cut.stopped.is_none() {
        cut.stopped = Some("interrupted (Ctrl-C)".into());
    }
    (reports, telemetry, cut)
}

/// Progress on simulated time, drawn only on a terminal (and not with --quiet): a bar up to
/// `run.max_time` when the scenario sets one, a spinner otherwise.
fn progress(quiet: bool, name: &str, max_time: Option<sim_core::Duration>) -> ProgressBar {
    let target = if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(max_time.map(|d| d.0 / 1_000_000), target);
    let style = match max_time {
        Some(_) => ProgressStyle::with_template("{msg} [{bar:30}] of {len} us [{elapsed}]"),
        None => ProgressStyle::with_template("{spinner} {msg} [{elapsed}]"),
    };
    bar.set_style(style.expect("static template"));
    bar.set_message(format!("{name}: setting up"));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
