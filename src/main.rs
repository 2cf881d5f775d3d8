//! `sim`: the command line.
//!
//! `main -> run() -> Result<ExitCode>`: a bad scenario or flag prints its cause and exits 2;
//! the other exit codes are in `exit.rs`. Never a panic on input.

#[macro_use]
mod console;
#[cfg(target_os = "linux")]
mod alloc;
mod captures;
mod cells;
mod check;
mod compare;
mod exit;
mod export;
mod files;
mod jobs;
mod machine;
mod metrics;
mod output;
mod plots;
mod results_dir;
mod run;
mod runner;
mod sweep;
mod telemetry;
mod timeseries;
mod watchdog;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Packet-level simulator of AI datacenter fabrics: RoCEv2 and Ultra Ethernet side by side.
#[derive(Parser, Debug)]
#[command(name = "sim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every variant of a scenario and write results.
    Run(run::RunArgs),
    /// Check a scenario's configuration (the class RoCEv2 lands in, headroom, ECN against
    /// PFC, a SONiC file against the fabric) without simulating anything.
    Check(check::CheckArgs),
    /// Compare earlier runs: compare.png and report.md across their variants.
    Compare(compare::CompareArgs),
    /// Sweep scenario keys over values and seeds, in parallel or in shards.
    Sweep(sweep::SweepArgs),
    /// Merge the results of sweep shards.
    Merge(sweep::MergeArgs),
    /// Write a scenario's settings in another tool's format.
    #[command(subcommand)]
    Export(export::ExportCommand),
}

fn main() -> ExitCode {
    let started = std::time::Instant::now();
    ignore_file_size_signal();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(&args, started),
        Command::Check(args) => check::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Merge(args) => sweep::merge(&args),
        Command::Export(cmd) => export::run(&cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // A 10 MB value or name in the input is named, not printed whole.
            let shown = |s: String| models::scenario::error::shorten(&s).into_owned();
            if let Some(se) = e.downcast_ref::<models::ScenarioError>() {
                errln!("error: {se}");
                return ExitCode::from(exit::BAD_INPUT);
            }
            if e.downcast_ref::<exit::BadInput>().is_some() {
                errln!("error: {}", shown(format!("{e:#}")));
                return ExitCode::from(exit::BAD_INPUT);
            }
            errln!("error: {}", shown(format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// A file-size limit (`ulimit -f`) makes a write fail with an error naming the file, rather
/// than kill the process with SIGXFSZ.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" before any thread starts; no handler
    // code runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
