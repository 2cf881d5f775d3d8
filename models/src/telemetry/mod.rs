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
pub use sampler::{PortSample, Sampler, Sparse, Totals};

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

/// A row as the log holds it: the event and reason as indexes into the log's names, 24 bytes
/// where a [`LogRow`] takes 48. An incast that trims 100,000 headers logs that many rows.
#[derive(Debug, Clone, Copy)]
struct Packed {
    time: Time,
    port: PortId,
    flow: FlowId,
    prio: u8,
    event: u8,
    reason: u8,
}

/// Bytes a kept row takes in memory.
pub const LOG_ROW_BYTES: usize = size_of::<Packed>();

/// Rows per chunk: the log grows a chunk at a time, never copying what it holds (a doubling
/// vector would briefly hold its old and new buffers: three times the rows' size).
const CHUNK: usize = 4096;

#[derive(Debug, Clone, Default)]
pub struct EventLog {
    cap: usize,
    chunks: Vec<Vec<Packed>>,
    len: usize,
    /// The distinct event and reason names, in order of first use (a few dozen at most).
    names: Vec<&'static str>,
    /// Events not kept because the log was full.
    pub cut: u64,
}

impl EventLog {
    pub fn new(cap: usize) -> Self {
        EventLog {
            cap,
            ..Default::default()
        }
    }

    /// Rows kept.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn code(&mut self, name: &'static str) -> u8 {
        match self.names.iter().position(|&n| n == name) {
            Some(i) => i as u8,
            None => {
                assert!(self.names.len() < u8::MAX as usize, "more than 255 event names");
                self.names.push(name);
                (self.names.len() - 1) as u8
            }
        }
    }

    #[inline]
    pub fn push(&mut self, row: LogRow) {
        if self.len >= self.cap {
            self.cut += 1;
            return;
        }
        let packed = Packed {
            time: row.time,
            port: row.port,
            flow: row.flow,
            prio: row.prio,
            event: self.code(row.event),
            reason: self.code(row.reason),
        };
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(packed),
            _ => {
                let mut c = Vec::with_capacity(CHUNK.min(self.cap - self.len));
                c.push(packed);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    fn unpack(&self, p: &Packed) -> LogRow {
        LogRow {
            time: p.time,
            port: p.port,
            prio: p.prio,
            flow: p.flow,
            event: self.names[p.event as usize],
            reason: self.names[p.reason as usize],
        }
    }

    /// The rows kept, in the order they were logged.
    pub fn rows(&self) -> impl Iterator<Item = LogRow> + '_ {
        self.chunks.iter().flatten().map(|p| self.unpack(p))
    }

    /// The last row kept.
    pub fn last(&self) -> Option<LogRow> {
        self.chunks.last()?.last().map(|p| self.unpack(p))
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
        assert_eq!((l.len(), l.cut), (2, 3));
        assert_eq!(l.rows().collect::<Vec<_>>(), vec![row, row]);
    }
}
