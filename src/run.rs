//! `sim run`: load, run every variant, print the table, write the results directory.

use crate::exit;
use crate::output;
use anyhow::Result;
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
    /// No progress display.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: &RunArgs) -> Result<ExitCode> {
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
    };
    let mut scenario = models::load(&args.file, &ov)?;
    if !args.variants.is_empty() {
        let names: Vec<String> = scenario.variants.iter().map(|v| v.name.clone()).collect();
        if let Some(bad) = args.variants.iter().find(|v| !names.contains(v)) {
            eprintln!(
                "error: --variant {bad}: {} has no such variant (it has: {})",
                args.file.display(),
                names.join(", ")
            );
            return Ok(ExitCode::from(crate::exit::BAD_INPUT));
        }
        scenario.variants.retain(|v| args.variants.contains(&v.name));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&scenario.name));
    output::check_out(&out)?;
    let (reports, telemetry) = simulate(&scenario, args.quiet, &stop);
    output::print_table(&scenario, &reports);
    output::write_results(
        &out,
        &scenario,
        &reports,
        &telemetry,
        &std::env::args().collect::<Vec<_>>(),
    )?;
    println!("results: {}", out.display());
    if stop.load(Ordering::SeqCst) {
        let skipped: Vec<&str> = scenario.variants[reports.len()..]
            .iter()
            .map(|v| v.name.as_str())
            .collect();
        if !skipped.is_empty() {
            eprintln!("interrupted: variants not run: {}", skipped.join(", "));
        }
        return Ok(ExitCode::from(exit::INTERRUPTED));
    }
    let broken: Vec<String> = reports
        .iter()
        .flat_map(|r| {
            r.summary
                .invariants
                .iter()
                .filter(|i| !i.ok)
                .map(move |i| format!("{}: {}: {}", r.summary.name, i.name, i.detail))
        })
        .collect();
    if !broken.is_empty() {
        for b in &broken {
            eprintln!("invariant violated: {b}");
        }
        return Ok(ExitCode::from(exit::INVARIANT_VIOLATED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Run every variant of `scenario`, with progress on a terminal unless `quiet`, until `stop`
/// is set (the variant running then is cut short, the rest are not run).
pub fn simulate(
    scenario: &models::Scenario,
    quiet: bool,
    stop: &AtomicBool,
) -> (Vec<VariantReport>, Vec<crate::telemetry::Telemetry>) {
    let mut reports = Vec::new();
    let mut telemetry = Vec::new();
    for variant in &scenario.variants {
        let bar = progress(quiet, &variant.name, variant.limits.max_time);
        let t0 = Instant::now();
        let mut sim = Sim::new(scenario, variant);
        sim.run_with_progress(|now| {
            bar.set_message(format!("{}: simulated {now}", variant.name));
            bar.set_position(now.0 / 1_000_000);
            bar.tick();
            !stop.load(Ordering::Relaxed)
        });
        let wall = t0.elapsed().as_secs_f64();
        bar.finish_and_clear();
        reports.push(VariantReport::new(&sim, wall));
        telemetry.push(crate::telemetry::Telemetry::take(&mut sim));
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    (reports, telemetry)
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
        Some(_) => ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} us simulated [{elapsed}]"),
        None => ProgressStyle::with_template("{spinner} {msg} [{elapsed}]"),
    };
    bar.set_style(style.expect("static template"));
    bar.set_message(name.to_string());
    bar
}
