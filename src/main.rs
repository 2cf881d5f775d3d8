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
mod html;
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
#[command(name = "sim", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  sim run scenarios/leaf-spine.toml        RoCEv2 with PFC and DCQCN against UEC on a leaf-spine
  sim run scenarios/dac-2node.toml --set topology.link.rate=25gbps
                                           two NICs on a DAC, at 25 Gb/s instead
  sim check my-leaf.toml                   what in a scenario will not do what it says
  sim compare results/a results/b          two earlier runs side by side
  sim sweep scenarios/sweeps/ecn-kmin.toml  a parameter grid, every core busy
  sim export sonic scenarios/sonic-sn3700c.toml
                                           a variant's switch as SONiC's config_db.json

Scenarios: scenarios/*.toml, each opening with what it shows (the question each answers: the
README's table; every one: docs/scenario-reference.md). Results go to results/<scenario name>/ (what each file
holds: docs/results.md). `sim <command> --help` for a command's options.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every variant of a scenario and write results.
    #[command(after_help = RUN_EXAMPLES)]
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

const RUN_EXAMPLES: &str = "\
Examples:
  sim run scenarios/leaf-spine.toml
  sim run scenarios/pfc-incast.toml --variant pfc-dcqcn --plots summary --out /tmp/incast
  sim run scenarios/leaf-spine.toml --set switch.buffer=4MiB --set 'variant[0].pfc.priorities=[3]'

Writes summary.json, flows.csv, counters.csv, timeseries.csv, events.csv, report.md and
the plots to --out (docs/results.md). Exit 0: every flow finished and every invariant held;
2: bad input; 5: stopped by a limit; 6: a PFC deadlock; 7: flows left unfinished; 8 is
`sim check`'s (docs/running.md lists them all).";

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
