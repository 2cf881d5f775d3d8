//! `sim run`: load, run every variant, print the table, write the results directory.

use crate::exit::{self, BadInput};
use crate::output::{self, Cut};
use crate::results_dir::{Kind, Staging};
use crate::watchdog::{Phase, Watchdog};
use anyhow::{Context, Result};
use clap::Args;
use models::report::Ending;
use models::{Overrides, VariantReport};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// Results directory [default: results/SCENARIO-NAME].
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
    /// Variants to run, then plots to draw, at once [default: the cores this process may use;
    /// variants: as many as the memory limit allows].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Threads for each variant's run: its fabric cut into as many partitions, with the
    /// results of one thread; runs that cannot be cut use one (and say why when asked for
    /// more) [default: the cores left to each variant running at once, memory permitting].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
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
        errln!("\ninterrupted: writing the results so far (Ctrl-C again quits at once)");
    });
    let ov = Overrides {
        set: args.set.clone(),
        seed: args.seed,
        max_memory: crate::machine::machine_limit(),
    };
    let mut scenario = models::load(&args.file, &ov)?;
    crate::check::print(&scenario, true);
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
    let out = match &args.out {
        Some(o) => o.clone(),
        None => crate::results_dir::default_out(&args.file, &scenario.name)?,
    };
    // Before any work: an --out that cannot take the results fails now, not after the run.
    let inputs = input_files(&args.file, &scenario);
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let staging = Staging::prepare(&out, Kind::Run, &inputs)?;
    let watchdog = Watchdog::arm(
        started,
        crate::runner::max_wall(&scenario),
        staging.dir().to_path_buf(),
        staging.out().to_path_buf(),
    );
    let (jobs, lowered) = crate::runner::jobs_for(
        &scenario,
        args.jobs.map(usize::from),
        ov.max_memory.as_ref().map(|m| m.0),
    );
    if let Some(why) = lowered {
        errln!("note: {why}");
    }
    let (threads, lowered) = crate::runner::threads_for(
        &scenario,
        jobs,
        args.threads.map(usize::from),
        ov.max_memory.as_ref().map(|m| m.0),
    );
    if let Some(why) = lowered {
        errln!("note: {why}");
    }
    let threads = crate::runner::Threads {
        n: threads,
        asked: args.threads.is_some(),
    };
    let (reports, telemetry, cut) =
        crate::runner::simulate(&scenario, args.quiet, jobs, threads, &stop, Some(&watchdog));
    output::print_table(&scenario, &reports);
    watchdog.enter(Phase::Writing);
    let argv: Vec<String> = std::env::args().collect();
    let opts = output::Options {
        argv: &argv,
        cut: &cut,
        plots: args.plots,
        quiet: args.quiet,
        // Plots are small: as many at once as asked for (or cores), whatever memory lowered
        // the variants to.
        jobs: args.jobs.map_or_else(crate::runner::cores, usize::from),
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
    outln!("results: {}", out.display());
    for n in &cut.variants_not_run {
        errln!(
            "{}: variant {n} not run",
            cut.stopped.as_deref().unwrap_or("stopped")
        );
    }
    if stop.load(Ordering::SeqCst) && cut.stopped.is_none() {
        errln!("the Ctrl-C came after the last variant finished: the results are complete");
    }
    Ok(ExitCode::from(exit_code(&reports, &cut)))
}

/// The files a run reads: the scenario and the SONiC files its variants import (an --out
/// that is or holds one is refused).
fn input_files(file: &Path, scenario: &models::Scenario) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut files = vec![file.to_path_buf()];
    for v in &scenario.variants {
        let tiers = v.tiers.iter().filter_map(|t| t.sonic.as_ref());
        files.extend(v.sonic.iter().chain(tiers).map(|s| dir.join(&s.file)));
    }
    files.sort();
    files.dedup();
    files
}

/// The exit code of a run: the worst of what happened, in the order of `exit.rs`'s table
/// from the bottom (a violated invariant outranks an interruption, which outranks a
/// deadlock, a limit, and flows left unfinished).
fn exit_code(reports: &[VariantReport], cut: &Cut) -> u8 {
    let mut code = 0;
    for r in reports {
        let s = &r.summary;
        for i in s.invariants.iter().filter(|i| !i.ok) {
            errln!("invariant violated: {}: {}: {}", s.name, i.name, i.detail);
            code = exit::INVARIANT_VIOLATED;
        }
    }
    if code != 0 {
        return code;
    }
    let any = |e: Ending| reports.iter().any(|r| r.summary.ending == e);
    if any(Ending::Interrupted) || cut.stopped.as_deref().is_some_and(|s| s.contains("Ctrl-C")) {
        return exit::INTERRUPTED;
    }
    if any(Ending::Deadlock) || reports.iter().any(|r| !r.summary.pfc_deadlocks.is_empty()) {
        return exit::DEADLOCK;
    }
    if cut.stopped.is_some() || any(Ending::Limit) {
        return exit::LIMIT;
    }
    if any(Ending::Unfinished) {
        return exit::UNFINISHED;
    }
    0
}
