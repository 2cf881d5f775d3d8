//! Fabric-wide counters and per-port series, sampled every `run.sample_interval`: each
//! sampled switch port's egress queue, its transmit utilisation over the interval, and (with
//! PFC) its ingress priority groups' occupancy beside their XOFF threshold at that moment, so
//! plots can draw queues against the thresholds that act on them.

use super::TelemetryConfig;
use crate::ids::PortId;
use sim_core::{Duration, Time};

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

/// What one port shows at a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSample {
    /// Egress queue, frame bytes.
    pub queue: u64,
    /// Time the port has spent serializing so far (cumulative): its bits on the wire,
    /// preamble and gap included.
    pub busy: Duration,
    /// Bytes held by the port's lossless ingress priority groups (0 without PFC).
    pub pg: u64,
    /// The XOFF threshold of those groups now (dynamic thresholds move with the free buffer).
    pub xoff: u64,
    /// The buffer the threshold is computed from (switch and slice): ports that share one
    /// share their XOFF series. None for a port of a host.
    pub xoff_group: Option<u32>,
}

impl Default for PortSample {
    fn default() -> Self {
        PortSample {
            queue: 0,
            busy: Duration::ZERO,
            pg: 0,
            xoff: 0,
            xoff_group: None,
        }
    }
}

/// Samples whose room the series reserve at the first sample (see [`Sampler::reserve`]).
pub(super) const RESERVED_ROWS: usize = 4096;

/// Utilisation is stored in 1/65535ths of the line rate.
const FULL: f64 = 65535.0;

/// `x` in [0, 1] as 1/65535ths, rounded half away from zero as `f64::round` does, but
/// without its library call (x86-64 has no rounding instruction before SSE4.1), which took
/// 1 % of a 128-host incast: a truncating conversion and an exact remainder.
#[inline]
fn to_full(x: f64) -> u16 {
    round_u16(x * FULL)
}

/// `v` in [0, 65535] rounded half away from zero.
#[inline]
fn round_u16(v: f64) -> u16 {
    let whole = v as u16;
    whole + (v - whole as f64 >= 0.5) as u16
}

/// A series that is mostly zero (a queue, an ingress priority group): only its non-zero
/// samples, as (sample index, value). Most of a fabric's queues are empty most of the time:
/// a 128-host incast held 4,417 non-zero queue samples out of 302,000.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sparse(Vec<(u32, u32)>);

impl Sparse {
    /// Sample `k` (the next one) is `v`.
    fn push(&mut self, k: usize, v: u32) {
        if v > 0 {
            self.0.push((k as u32, v));
        }
    }

    /// The value at sample `k`.
    pub fn get(&self, k: usize) -> u32 {
        self.0
            .binary_search_by_key(&(k as u32), |&(i, _)| i)
            .map_or(0, |j| self.0[j].1)
    }

    /// A reader of the samples in order ([`Walk::at`]), with no search per sample: a writer
    /// of every sample of every port asks for each one once, in order.
    pub fn walk(&self) -> Walk<'_> {
        Walk {
            kept: &self.0,
            next: 0,
        }
    }

    /// The largest value (0 when always zero).
    pub fn peak(&self) -> u32 {
        self.0.iter().map(|&(_, v)| v).max().unwrap_or(0)
    }

    /// Every one of `n` samples.
    pub fn dense(&self, n: usize) -> Vec<u32> {
        let mut out = vec![0; n];
        for &(k, v) in self.0.iter().filter(|&&(k, _)| (k as usize) < n) {
            out[k as usize] = v;
        }
        out
    }

    /// Keep the even samples, renumbered (see [`Sampler`]'s decimation).
    fn halve(&mut self) {
        self.0.retain(|&(k, _)| k % 2 == 0);
        for e in &mut self.0 {
            e.0 /= 2;
        }
    }
}

/// A [`Sparse`] series read sample by sample ([`Sparse::walk`]).
pub struct Walk<'a> {
    kept: &'a [(u32, u32)],
    /// The first kept sample not passed yet.
    next: usize,
}

impl Walk<'_> {
    /// The value at sample `k`, for `k` not below the one asked for before.
    pub fn at(&mut self, k: usize) -> u32 {
        while self.kept.get(self.next).is_some_and(|&(i, _)| (i as usize) < k) {
            self.next += 1;
        }
        match self.kept.get(self.next) {
            Some(&(i, v)) if i as usize == k => v,
            _ => 0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Sampler {
    pub interval: Duration,
    cap: usize,
    pub times: Vec<Time>,
    pub totals: Vec<Totals>,
    /// Sampled ports and, per port, its queue (frame bytes) at each sample.
    pub ports: Vec<PortId>,
    pub queues: Vec<Sparse>,
    /// Transmit utilisation over the interval ending at each sample (see
    /// [`Sampler::utilisation`]), row-major: sample `k`, port `i` at `k * ports.len() + i`.
    util: Vec<u16>,
    /// Per port: lossless ingress PG bytes and their XOFF threshold at each sample (empty
    /// without PFC).
    pub pg: Vec<Sparse>,
    /// One XOFF series per buffer slice (the threshold is the slice's, the same for every
    /// port on it), and each port's slice series: 5120 ports of a k=16 fat tree share 320.
    xoff: Vec<Vec<u32>>,
    xoff_of: Vec<u32>,
    /// Each port's transmitted bytes and the time at the previous sample.
    last_busy: Vec<u64>,
    last_time: Time,
    with_pg: bool,
}

impl Sampler {
    /// `with_pg`: also sample the ingress priority groups (the variant runs PFC).
    pub fn new(cfg: &TelemetryConfig, ports: Vec<PortId>, with_pg: bool) -> Self {
        let n = ports.len();
        let cap = cfg.max_samples.max(4);
        let per_port = |on: bool| {
            if on {
                vec![Sparse::default(); n]
            } else {
                Vec::new()
            }
        };
        Sampler {
            interval: cfg.sample_interval,
            cap,
            times: Vec::new(),
            totals: Vec::new(),
            ports,
            queues: vec![Sparse::default(); n],
            util: Vec::new(),
            pg: per_port(with_pg),
            xoff: Vec::new(),
            xoff_of: Vec::new(),
            last_busy: vec![0; n],
            last_time: Time::ZERO,
            with_pg,
        }
    }

    /// Record one sample; `port(p)` is what sampled port `p` shows now.
    pub fn record(&mut self, now: Time, totals: Totals, port: impl Fn(PortId) -> PortSample) {
        if self.times.len() == self.cap {
            self.decimate();
        }
        let span = now.saturating_since(self.last_time);
        let first = self.times.is_empty() && self.xoff_of.is_empty();
        if first {
            self.reserve();
        }
        let mut groups: std::collections::HashMap<Option<u32>, u32> = std::collections::HashMap::new();
        for (i, &p) in self.ports.iter().enumerate() {
            let s = port(p);
            let k = self.times.len();
            self.queues[i].push(k, s.queue.min(u32::MAX as u64) as u32);
            // The share of the span the port spent serializing: the bits it put on the wire
            // within the interval, a frame that straddles a sample split between the two.
            let busy = s.busy.0.saturating_sub(self.last_busy[i]);
            self.last_busy[i] = s.busy.0;
            let util = if span.0 > 0 {
                busy as f64 / span.0 as f64
            } else {
                0.0
            };
            self.util.push(to_full(util.min(1.0)));
            if self.with_pg {
                self.pg[i].push(k, s.pg.min(u32::MAX as u64) as u32);
                if first {
                    // The first sample decides which ports share a slice's series.
                    let next = groups.len() as u32;
                    let g = *groups.entry(s.xoff_group).or_insert(next);
                    if g as usize == self.xoff.len() {
                        self.xoff.push(Vec::with_capacity(self.cap.min(RESERVED_ROWS)));
                    }
                    self.xoff_of.push(g);
                }
                let g = self.xoff_of[i] as usize;
                if self.xoff[g].len() < self.times.len() + 1 {
                    self.xoff[g].push(s.xoff.min(u32::MAX as u64) as u32);
                }
            }
        }
        self.last_time = now;
        self.times.push(now);
        self.totals.push(totals);
    }

    /// The dense series' capacity, once, at the first sample (pages not yet written are not
    /// resident): grown by doubling, they left as much memory freed as they held. At most
    /// [`RESERVED_ROWS`] samples, and only as the allocator allows: a larger
    /// `run.max_samples` grows as before.
    fn reserve(&mut self) {
        let rows = self.cap.min(RESERVED_ROWS);
        let _ = self.times.try_reserve_exact(rows);
        let _ = self.totals.try_reserve_exact(rows);
        let _ = self.util.try_reserve_exact(rows.saturating_mul(self.ports.len()));
    }

    /// Whether ports' ingress priority groups are sampled (the variant runs PFC).
    pub fn with_pg(&self) -> bool {
        self.with_pg
    }

    /// Port `i`'s XOFF threshold at each sample (empty without PFC).
    pub fn xoff(&self, i: usize) -> &[u32] {
        self.xoff_of.get(i).map_or(&[], |&g| &self.xoff[g as usize])
    }

    /// Fraction of port `i`'s line rate it sent over the interval ending at sample `k`.
    pub fn utilisation(&self, i: usize, k: usize) -> f64 {
        debug_assert!(i < self.ports.len(), "port {i} of {}", self.ports.len());
        let at = k * self.ports.len() + i;
        self.util.get(at).map_or(0.0, |&u| u as f64 / FULL)
    }

    /// Keep every other sample and double the interval. Instantaneous series keep the kept
    /// samples' values; utilisation averages the two intervals a kept sample now covers.
    fn decimate(&mut self) {
        // In place, keeping each series' reserved capacity.
        fn halve<T: Copy>(v: &mut Vec<T>) {
            let n = v.len().div_ceil(2);
            for i in 0..n {
                v[i] = v[2 * i];
            }
            v.truncate(n);
        }
        halve(&mut self.times);
        halve(&mut self.totals);
        for q in self.queues.iter_mut().chain(&mut self.pg) {
            q.halve();
        }
        for x in &mut self.xoff {
            halve(x);
        }
        // Utilisation is a rate over the interval ending at each sample: a kept sample now
        // ends a doubled interval, the mean of its own and the one before it.
        // In place: row `j` is written after rows `2j - 1` and `2j` are read, and no earlier
        // write reached them.
        let (n, u) = (self.ports.len(), &mut self.util);
        let kept = (u.len() / n.max(1)).div_ceil(2);
        for j in 0..kept {
            let k = 2 * j;
            let before = k.saturating_sub(1);
            for i in 0..n {
                u[j * n + i] = ((u[before * n + i] as u32 + u[k * n + i] as u32) / 2) as u16;
            }
        }
        u.truncate(kept * n);
        self.interval = self.interval * 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_reads_what_a_search_finds() {
        // Kept samples with gaps, runs and a last one; read at every sample and past the end.
        let mut q = Sparse::default();
        let values = [0, 5, 0, 0, 7, 8, 0, 1, 0, 0, 0, 3];
        for (k, &v) in values.iter().enumerate() {
            q.push(k, v);
        }
        let mut w = q.walk();
        for k in 0..values.len() + 3 {
            assert_eq!(w.at(k), q.get(k), "sample {k}");
            assert_eq!(w.at(k), values.get(k).copied().unwrap_or(0), "sample {k}");
        }
        // Every other sample, as the writer skips none but may start anywhere.
        let mut w = q.walk();
        for k in (1..values.len()).step_by(2) {
            assert_eq!(w.at(k), values[k], "sample {k}");
        }
    }

    #[test]
    fn a_full_sampler_halves_and_doubles_its_interval() {
        let cfg = TelemetryConfig {
            sample_interval: Duration(10),
            max_samples: 4,
            event_log: 0,
        };
        let mut s = Sampler::new(&cfg, vec![PortId(7)], false);
        for t in 0..6u64 {
            s.record(
                Time(t * 10),
                Totals {
                    delivered_bytes: t,
                    ..Default::default()
                },
                |_| PortSample {
                    queue: t * 100,
                    ..Default::default()
                },
            );
        }
        assert_eq!(s.times, vec![Time(0), Time(20), Time(40), Time(50)]);
        assert_eq!(s.queues[0].dense(s.times.len()), vec![0, 200, 400, 500]);
        assert_eq!((s.queues[0].get(0), s.queues[0].get(3)), (0, 500));
        assert_eq!(s.interval, Duration(20));
    }

    #[test]
    fn the_fraction_rounds_as_f64_round_does() {
        // Every halfway point, and the doubles either side of it: a version that rounded
        // half down, or half to even, fails at the halfway points themselves.
        for k in 0..65535u32 {
            let t = k as f64 + 0.5;
            for v in [t.next_down(), t, t.next_up(), k as f64] {
                assert_eq!(round_u16(v), v.round() as u16, "at {v}");
            }
        }
        assert_eq!(round_u16(65535.0), 65535);
        assert_eq!((to_full(0.0), to_full(0.5), to_full(1.0)), (0, 32768, 65535));
    }

    #[test]
    fn utilisation_is_the_share_of_each_interval_the_port_spent_serializing() {
        let cfg = TelemetryConfig {
            sample_interval: Duration(1_000_000),
            max_samples: 100,
            event_log: 0,
        };
        let mut s = Sampler::new(&cfg, vec![PortId(0)], false);
        // Busy half of the first microsecond, all of the second.
        for (k, busy) in [0u64, 500_000, 1_500_000].into_iter().enumerate() {
            s.record(Time(k as u64 * 1_000_000), Totals::default(), |_| PortSample {
                busy: Duration(busy),
                ..Default::default()
            });
        }
        assert!((s.utilisation(0, 1) - 0.5).abs() < 1e-4);
        assert!((s.utilisation(0, 2) - 1.0).abs() < 1e-4);
    }

    #[test]
    fn a_halved_utilisation_is_each_port_s_bytes_over_the_doubled_interval() {
        let cfg = TelemetryConfig {
            sample_interval: Duration(1_000_000),
            max_samples: 4,
            event_log: 0,
        };
        let mut s = Sampler::new(&cfg, vec![PortId(0), PortId(1)], false);
        // Port 0 is busy half of every microsecond; port 1 all of the odd ones and none of
        // the even ones.
        let busy = |p: PortId, k: u64| match p.0 {
            0 => 500_000 * k,
            _ => 1_000_000 * k.div_ceil(2),
        };
        for k in 0..5u64 {
            s.record(Time(k * 1_000_000), Totals::default(), |p| PortSample {
                busy: Duration(busy(p, k)),
                ..Default::default()
            });
        }
        // The fifth sample halved the first four: kept 0 and 2, then 4.
        assert_eq!(s.times, vec![Time(0), Time(2_000_000), Time(4_000_000)]);
        let u = |i, k| s.utilisation(i, k);
        // Sample 2 now ends the two microseconds from 0: port 0 was busy one of them, port 1
        // one as well; sample 4 ends an even interval.
        assert!((u(0, 1) - 0.5).abs() < 1e-4 && (u(1, 1) - 0.5).abs() < 1e-4);
        assert!(
            (u(0, 2) - 0.5).abs() < 1e-4 && u(1, 2) == 0.0,
            "{} {}",
            u(0, 2),
            u(1, 2)
        );
        assert_eq!(u(1, 3), 0.0);
    }

    #[test]
    fn an_odd_capacity_halves_every_series_alike_with_or_without_ports() {
        let cfg = TelemetryConfig {
            sample_interval: Duration(10),
            max_samples: 5,
            event_log: 0,
        };
        // No ports: only times and totals; then two ports with PFC, whose ingress PGs and
        // their slice's XOFF threshold halve with the rest.
        let mut none = Sampler::new(&cfg, Vec::new(), false);
        let mut pfc = Sampler::new(&cfg, vec![PortId(1), PortId(2)], true);
        for t in 0..6u64 {
            let totals = Totals {
                pfc_frames: t,
                ..Default::default()
            };
            none.record(Time(t * 10), totals, |_| unreachable!("no ports"));
            pfc.record(Time(t * 10), totals, |p| PortSample {
                queue: t,
                pg: 100 * t + p.0 as u64,
                xoff: 1_000 + t,
                xoff_group: Some(0),
                ..Default::default()
            });
        }
        // Five samples halve to 0, 20 and 40 (the odd last one kept); then 50.
        let kept = vec![Time(0), Time(20), Time(40), Time(50)];
        assert_eq!((&none.times, &pfc.times), (&kept, &kept));
        let frames: Vec<u64> = none.totals.iter().map(|t| t.pfc_frames).collect();
        assert_eq!(frames, vec![0, 2, 4, 5]);
        assert_eq!(pfc.pg[1].dense(4), vec![2, 202, 402, 502]);
        assert_eq!(
            (pfc.xoff(0), pfc.xoff(1)),
            (
                &[1_000, 1_002, 1_004, 1_005][..],
                &[1_000, 1_002, 1_004, 1_005][..]
            )
        );
        assert_eq!(pfc.queues[0].dense(4), vec![0, 2, 4, 5]);
        assert_eq!(pfc.utilisation(1, 3), 0.0);
    }
}
