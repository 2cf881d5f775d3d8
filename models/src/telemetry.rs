//! What happened over time, with bounded memory: sampled time series and an event log.
//!
//! The sampler records fabric-wide counters and the queue depth of switch egress ports every
//! `run.sample_interval`. When a series reaches `run.max_samples` it keeps every other sample
//! and doubles the interval, so a long run costs no more memory than a short one. The event
//! log, in the spirit of Spectrum's What Just Happened, keeps each drop, trim and pause
//! transition with its time, node, port, priority, flow and reason, up to `run.event_log`
//! rows, and counts what it had to leave out. There is no per-packet trace.

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

/// Fabric-wide cumulative counters at one sample.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub delivered_bytes: u64,
    pub ecn_marked: u64,
    pub cnps: u64,
    pub pfc_frames: u64,
    pub trimmed: u64,
    pub drops: u64,
}

#[derive(Debug, Clone)]
pub struct Sampler {
    pub interval: Duration,
    cap: usize,
    pub times: Vec<Time>,
    pub totals: Vec<Totals>,
    /// Sampled ports and, per port, its queue (frame bytes) at each sample.
    pub ports: Vec<PortId>,
    pub queues: Vec<Vec<u32>>,
}

impl Sampler {
    pub fn new(cfg: &TelemetryConfig, ports: Vec<PortId>) -> Self {
        let n = ports.len();
        Sampler {
            interval: cfg.sample_interval,
            cap: cfg.max_samples.max(4),
            times: Vec::new(),
            totals: Vec::new(),
            ports,
            queues: vec![Vec::new(); n],
        }
    }

    /// Record one sample; `queue(i)` is the occupancy of the i-th sampled port.
    pub fn record(&mut self, now: Time, totals: Totals, queue: impl Fn(PortId) -> u64) {
        if self.times.len() == self.cap {
            self.decimate();
        }
        self.times.push(now);
        self.totals.push(totals);
        for (q, &p) in self.queues.iter_mut().zip(&self.ports) {
            q.push(queue(p).min(u32::MAX as u64) as u32);
        }
    }

    /// Keep every other sample and double the interval.
    fn decimate(&mut self) {
        fn halve<T: Copy>(v: &mut Vec<T>) {
            let kept: Vec<T> = v.iter().step_by(2).copied().collect();
            *v = kept;
        }
        halve(&mut self.times);
        halve(&mut self.totals);
        for q in &mut self.queues {
            halve(q);
        }
        self.interval = self.interval * 2;
    }
}

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
    fn a_full_sampler_halves_and_doubles_its_interval() {
        let cfg = TelemetryConfig {
            sample_interval: Duration(10),
            max_samples: 4,
            event_log: 0,
        };
        let mut s = Sampler::new(&cfg, vec![PortId(7)]);
        for t in 0..6u64 {
            s.record(
                Time(t * 10),
                Totals {
                    delivered_bytes: t,
                    ..Default::default()
                },
                |_| t * 100,
            );
        }
        assert_eq!(s.times, vec![Time(0), Time(20), Time(40), Time(50)]);
        assert_eq!(s.queues[0], vec![0, 200, 400, 500]);
        assert_eq!(s.interval, Duration(20));
    }

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
