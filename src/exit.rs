//! Exit codes a script can trust, and the error that means "the input is wrong" (exit 2).
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every variant ran to completion, every invariant held |
//! | 1 | something outside the input failed (a disk full, a file that cannot be written) |
//! | 2 | bad input: the scenario, a `--set`, a flag, or an `--out` that is not ours to replace |
//! | 3 | an invariant was violated (a simulator bug: please report it) |
//! | 4 | a sweep finished with rows that are not `ok` (failed, incomplete or interrupted points, `status` in sweep.csv) |
//! | 5 | stopped by a limit (`run.max_time`, `run.max_events`, `run.max_wall`) with flows unfinished |
//! | 6 | a PFC deadlock was detected (the run stopped, or went on as `pfc.on_deadlock` said) |
//! | 7 | the run ended by itself with flows unfinished: a sender gave up after `nic.rto_retries`, a flow waits for one that never completes, no route (`incomplete` in summary.json says which, flows.csv each flow's reason) |
//! | 8 | `sim check` found a warning: a setting that will not do what it was written for (each printed with its key, what happens and the fix) |
//! | 130 | interrupted by Ctrl-C (results so far written, marked interrupted: `stopped` in summary.json, `interrupted` in sweep.json) |
//!
//! A run that leaves any flow unfinished never exits 0.

use std::fmt;

pub const BAD_INPUT: u8 = 2;
pub const INVARIANT_VIOLATED: u8 = 3;
pub const SWEEP_FAILURES: u8 = 4;
pub const LIMIT: u8 = 5;
pub const DEADLOCK: u8 = 6;
/// Flows left unfinished by a run that was not stopped.
pub const UNFINISHED: u8 = 7;
/// `sim check` found a warning.
pub const FINDINGS: u8 = 8;
/// Ctrl-C: the results so far were written, marked interrupted (128 + SIGINT).
pub const INTERRUPTED: u8 = 130;

/// An error in what the user gave (a flag, a path): printed as is, exit 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl BadInput {
    pub fn new(msg: impl Into<String>) -> BadInput {
        BadInput(msg.into())
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}
