//! Integration tests: closed-form validation of the models through whole runs, and the
//! command line as a user drives it. Expected values are computed here from the configured
//! sizes, never copied from the simulator's output.

mod capture;
mod capture_plain;
mod cbfc;
mod cc;
mod check;
mod claims;
mod cli;
mod closed_form;
mod collectives;
mod common;
mod counters;
mod crash;
mod dcqcn_fluid;
mod dcqcn_load;
mod docs;
mod faults;
mod fec;
mod fuzz;
mod fuzz_importers;
mod golden;
mod hardware;
mod hostile;
mod hostile_cli;
mod jobs;
mod layers;
mod llr;
mod mixed;
mod parallel;
mod paths;
mod pfc;
mod pfc_watchdog;
mod plots;
mod queueing;
mod reliability;
mod report_html;
pub mod results;
mod roce;
mod sonic;
mod sonic_fec;
mod sonic_llr;
mod sweep;
#[cfg(unix)]
mod sweep_slurm;
mod tiers;
mod topologies;
mod uet;
mod uet_recovery;
mod window_order;
mod workloads;
