//! `sim`: the command line.
//!
//! `main -> run() -> Result<ExitCode>`: a bad scenario prints its cause and exits 2; an
//! invariant violation exits 3; anything else that goes wrong exits 1. Never a panic on input.

#[cfg(target_os = "linux")]
mod alloc;
mod captures;
mod compare;
mod files;
mod metrics;
mod output;
mod plots;
mod run;
mod sweep;
mod telemetry;

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
    /// Compare earlier runs: compare.png and report.md across their variants.
    Compare(compare::CompareArgs),
    /// Sweep scenario keys over values and seeds, in parallel or in shards.
    Sweep(sweep::SweepArgs),
    /// Merge the results of sweep shards.
    Merge(sweep::MergeArgs),
}

/// Exit codes.
pub mod exit {
    pub const BAD_INPUT: u8 = 2;
    pub const INVARIANT_VIOLATED: u8 = 3;
    pub const SWEEP_FAILURES: u8 = 4;
    /// Ctrl-C: the results so far were written, marked interrupted (128 + SIGINT).
    pub const INTERRUPTED: u8 = 130;
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Merge(args) => sweep::merge(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if let Some(se) = e.downcast_ref::<models::ScenarioError>() {
                eprintln!("error: {se}");
                return ExitCode::from(exit::BAD_INPUT);
            }
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
