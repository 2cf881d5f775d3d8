//! What happened over time, with bounded memory: sampled time series and an event log.
//!
//! The sampler records fabric-wide counters and the queue depth of switch egress ports every
//! `run.sample_interval`. When a series reaches `run.max_samples` it keeps every other sample
//! and doubles the interval, so a long run costs no more memory than a short one. The event
//! log, in the spirit of Spectrum's What Just Happened, keeps each drop, trim and pause
//! transition with its time, node, port, priority, flow and reason, up to `run.event_log`
//! rows, and counts what it had to leave out. There is no per-packet trace.

mod flows;
mod log;
mod paths;
mod sampler;

pub use flows::{Control, FlowSampler};
pub use log::{EventLog, LOG_ROW_BYTES, LogRow, Trace};
pub use paths::PathLog;
pub use sampler::{PortSample, Sampler, Sparse, Totals, Walk};

use sim_core::Duration;

/// `[run]` telemetry settings (see `RunLimits`).
#[derive(Debug, Clone, Copy)]
pub struct TelemetryConfig {
    pub sample_interval: Duration,
    pub max_samples: usize,
    pub event_log: usize,
}

/// At most this many switch ports have their queues sampled (the first ones, in port order).
pub const MAX_SAMPLED_PORTS: usize = 4096;
