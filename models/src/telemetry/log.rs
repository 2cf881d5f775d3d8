//! The event log, in the spirit of Spectrum's What Just Happened: each drop, trim and pause
//! transition with its time, port, priority, flow and reason, up to `run.event_log` rows,
//! counting what it had to leave out.
//!
//! Rows are held encoded, typically 6-10 bytes each (at most 25) where a [`LogRow`] takes 48: an incast that trims
//! 74,000 headers logs that many rows, which as 24-byte records took 1.8 MB of a run whose
//! whole state is a few MB. Each row is LEB128 varints (the encoding of DWARF and protobuf):
//! the time since the previous row (zigzag: a row may be logged out of order), the port and
//! the flow (plus one, so that `NONE` is 0), and the index of its (event, reason, priority)
//! among those seen so far (a run has a few dozen).

use crate::ids::{FlowId, PortId};
use sim_core::Time;

/// What happened, as `events.csv`'s `event` column names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trace {
    /// A frame dropped (the reason says why).
    Drop,
    /// A data frame trimmed to its headers.
    Trim,
    /// An ingress priority group entered XOFF (its peer is paused).
    Xoff,
    /// It drained below XON (its peer is released).
    Xon,
    /// The PFC watchdog found a storm on a queue.
    PfcwdStorm,
    /// The watchdog restored a queue.
    PfcwdRestore,
}

impl Trace {
    /// The name `events.csv` writes.
    pub fn name(self) -> &'static str {
        match self {
            Trace::Drop => "drop",
            Trace::Trim => "trim",
            Trace::Xoff => "xoff",
            Trace::Xon => "xon",
            Trace::PfcwdStorm => "pfcwd_storm",
            Trace::PfcwdRestore => "pfcwd_restore",
        }
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
    pub event: Trace,
    pub reason: &'static str,
}

/// Bytes a kept row takes in memory, at most: four varints of up to 10, 5, 5 and 5 bytes
/// (the kind's index is under 2^35: a run has a few dozen kinds).
pub const LOG_ROW_BYTES: usize = 25;

/// Bytes per chunk: the log grows a chunk at a time, never copying what it holds (a doubling
/// vector would briefly hold its old and new buffers: three times the rows' size).
const CHUNK: usize = 64 << 10;

/// What a row says besides where and when.
type Kind = (Trace, &'static str, u8);

#[derive(Debug, Clone, Default)]
pub struct EventLog {
    cap: usize,
    chunks: Vec<Vec<u8>>,
    len: usize,
    /// The distinct (event, reason, priority), in order of first use.
    kinds: Vec<Kind>,
    /// The previous row's time (deltas are taken from it) and the last row.
    last: Option<LogRow>,
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

    /// The most rows it keeps.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Rows kept.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn kind(&mut self, k: Kind) -> u64 {
        let i = match self.kinds.iter().position(|&n| n == k) {
            Some(i) => i,
            None => {
                self.kinds.push(k);
                self.kinds.len() - 1
            }
        };
        i as u64
    }

    #[inline]
    pub fn push(&mut self, row: LogRow) {
        if self.len >= self.cap {
            self.cut += 1;
            return;
        }
        let before = self.last.map_or(0, |r| r.time.0);
        let step = row.time.0.wrapping_sub(before) as i64;
        let mut buf = [0u8; LOG_ROW_BYTES];
        let mut n = 0;
        for v in [
            ((step << 1) ^ (step >> 63)) as u64,
            row.port.0.wrapping_add(1) as u64,
            row.flow.0.wrapping_add(1) as u64,
            self.kind((row.event, row.reason, row.prio)),
        ] {
            n += put(&mut buf[n..], v);
        }
        match self.chunks.last_mut() {
            Some(c) if c.len() + n <= c.capacity() => c.extend_from_slice(&buf[..n]),
            _ => {
                let mut c =
                    Vec::with_capacity(CHUNK.min((self.cap - self.len).saturating_mul(LOG_ROW_BYTES)));
                c.extend_from_slice(&buf[..n]);
                self.chunks.push(c);
            }
        }
        self.last = Some(row);
        self.len += 1;
    }

    /// The rows kept, in the order they were logged.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            log: self,
            chunk: 0,
            at: 0,
            time: 0,
        }
    }

    /// The last row kept.
    pub fn last(&self) -> Option<LogRow> {
        self.last
    }
}

/// The rows of an [`EventLog`], decoded in order.
pub struct Rows<'a> {
    log: &'a EventLog,
    chunk: usize,
    at: usize,
    /// The previous row's time.
    time: u64,
}

impl Iterator for Rows<'_> {
    type Item = LogRow;

    fn next(&mut self) -> Option<LogRow> {
        let chunks = &self.log.chunks;
        while self.at == chunks.get(self.chunk)?.len() {
            (self.chunk, self.at) = (self.chunk + 1, 0);
        }
        let c = &chunks[self.chunk];
        let mut next = || take(c, &mut self.at);
        let z = next();
        let step = (z >> 1) as i64 ^ -((z & 1) as i64);
        let port = PortId((next() as u32).wrapping_sub(1));
        let flow = FlowId((next() as u32).wrapping_sub(1));
        let (event, reason, prio) = self.log.kinds[next() as usize];
        self.time = self.time.wrapping_add(step as u64);
        Some(LogRow {
            time: Time(self.time),
            port,
            prio,
            flow,
            event,
            reason,
        })
    }
}

/// `v` as a LEB128 varint at the start of `out`; the bytes written.
#[inline]
fn put(out: &mut [u8], mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        out[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    n + 1
}

/// The varint at `bytes[*at..]`, moving `at` past it.
fn take(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(time: u64, port: u32, flow: u32, prio: u8, event: Trace) -> LogRow {
        LogRow {
            time: Time(time),
            port: PortId(port),
            prio,
            flow: FlowId(flow),
            event,
            reason: "x",
        }
    }

    #[test]
    fn a_full_log_counts_what_it_cut() {
        let mut l = EventLog::new(2);
        let r = row(1, 0, 0, 3, Trace::Drop);
        for _ in 0..5 {
            l.push(r);
        }
        assert_eq!((l.len(), l.cut), (2, 3));
        assert_eq!(l.rows().collect::<Vec<_>>(), vec![r, r]);
    }

    #[test]
    fn rows_come_back_as_logged_whatever_their_values() {
        // Extremes of every field, times going back as well as forward, and enough rows to
        // fill several chunks.
        let mut want = vec![
            row(u64::MAX, u32::MAX, u32::MAX, 255, Trace::Drop),
            row(0, 0, 0, 0, Trace::Xoff),
            row(u64::MAX / 2 + 7, PortId::NONE.0, FlowId::NONE.0, 7, Trace::Drop),
            row(3, 1 << 31, 127, 128, Trace::Xon),
        ];
        for i in 0..30_000u64 {
            let t = i * 1_234_567 % 999_999_937;
            want.push(row(
                t,
                (i * 7) as u32,
                (i % 300) as u32,
                (i % 8) as u8,
                Trace::Trim,
            ));
        }
        let mut l = EventLog::new(usize::MAX);
        for &r in &want {
            l.push(r);
        }
        // A row that did not fit the end of a chunk began the next one.
        assert!(l.chunks.len() > 1, "{} chunks", l.chunks.len());
        let full = &l.chunks[..l.chunks.len() - 1];
        assert!(
            full.iter()
                .all(|c| c.len() <= CHUNK && c.len() + LOG_ROW_BYTES > CHUNK)
        );
        assert!(
            full.iter().any(|c| c.len() < CHUNK),
            "no row fell across a chunk's end"
        );
        assert_eq!(l.len(), want.len());
        assert_eq!(l.rows().collect::<Vec<_>>(), want);
        assert_eq!(l.last(), want.last().copied());
    }

    #[test]
    fn the_largest_rows_fit_chunks_sized_to_what_the_cap_leaves() {
        // A time step of 2^63 takes ten bytes zigzagged, ids just under NONE five each.
        let big = |t| row(t, u32::MAX - 1, u32::MAX - 1, 255, Trace::Drop);
        let want = [big(1 << 63), big(0), big(1 << 63)];
        let mut l = EventLog::new(3);
        for &r in &want {
            l.push(r);
        }
        assert_eq!(l.chunks[0].capacity(), 3 * LOG_ROW_BYTES);
        assert_eq!(l.chunks[0].len(), 3 * 21, "10 + 5 + 5 + 1 bytes a row");
        assert_eq!(l.rows().collect::<Vec<_>>(), want);
    }

    #[test]
    fn varints_take_the_bytes_leb128_gives_them() {
        let mut b = [0u8; 10];
        // 624485 is LEB128's worked example: E5 8E 26.
        assert_eq!(put(&mut b, 624_485), 3);
        assert_eq!(&b[..3], &[0xE5, 0x8E, 0x26]);
        assert_eq!(
            (put(&mut b, 127), put(&mut b, 128), put(&mut b, u64::MAX)),
            (1, 2, 10)
        );
        let mut at = 0;
        assert_eq!((take(&b, &mut at), at), (u64::MAX, 10));
    }
}
