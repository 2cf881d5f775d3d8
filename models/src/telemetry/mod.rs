//! What happened over time, with bounded memory: sampled time series and an event log.
//!
//! The sampler records fabric-wide counters and the queue depth of switch egress ports every
//! `run.sample_interval`. When a series reaches `run.max_samples` it keeps every other sample
//! and doubles the interval, so a long run costs no more memory than a short one. The event
//! log, in the spirit of Spectrum's What Just Happened, keeps each drop, trim and pause
//! transition with its time, node, port, priority, flow and reason, up to `run.event_log`
//! rows, and counts what it had to leave out. There is no per-packet trace.

mod flows;
mod sampler;

pub use flows::{Control, FlowSampler};
pub use sampler::{PortSample, Sampler, Totals};

use crate::ids::{FlowId, PortId};
use sim_core::{Duration, Time};

/// `[run]` telemetry settings (see `RunLimits`).
#[derive(Debug, Clone, Copy)]
pub struct TelemetryConfig {
    pub sample_interval: Duration,
    pub max_samples: usize,
    pub event_log: usize,
}

/// At most this many switch ports have their queues sampled (the first ones, in port order).
pub const MAX_SAMPLED_PORTS: usize = 4096;

/// One row of `events.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRow {
    pub time: Time,
    /// The port it happened at (`PortId::NONE`: no port, e.g. no route at a host).
    pub port: PortId,
    pub prio: u8,
    /// The flow (`FlowId::NONE`: none, e.g. a PFC transition).
    pub flow: FlowId,
    pub event: &'static str,
    pub reason: &'static str,
}

#[derive(Debug, Clone, Default)]
pub struct EventLog {
    cap: usize,
    pub rows: Vec<LogRow>,
    /// Events not kept because the log was full.
    pub cut: u64,
}

impl EventLog {
    pub fn new(cap: usize) -> Self {
        EventLog {
            cap,
            rows: Vec::new(),
            cut: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, row: LogRow) {
        if self.rows.len() < self.cap {
            self.rows.push(row);
        } else {
            self.cut += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_counts_what_it_cut() {
        let mut l = EventLog::new(2);
        let row = LogRow {
            time: Time(1),
            port: PortId(0),
            prio: 3,
            flow: FlowId(0),
            event: "drop",
            reason: "x",
        };
        for _ in 0..5 {
            l.push(row);
        }
        assert_eq!((l.rows.len(), l.cut), (2, 3));
    }
}
