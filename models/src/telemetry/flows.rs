//! Per-flow dynamics, sampled with the fabric series: each sampled flow's bytes delivered and
//! its sender's control variable (DCQCN's current rate, or NSCC's window), so a plot can
//! show a victim flow starving or DCQCN's rates collapsing, flow by flow.
//!
//! Memory is bounded: at most [`MAX_FLOWS`] flows are sampled (evenly spread over the
//! scenario's flows, plus every flow it names), in a budget of [`BUDGET`] bytes that sets how
//! many samples each keeps; when full, every other sample goes, as for the fabric series.

use sim_core::Time;

/// Flows sampled at most (the rest are not traced).
pub const MAX_FLOWS: usize = 4096;
/// Bytes the flow series may take in all.
pub const BUDGET: usize = 32 << 20;

/// What a flow's control series holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// No rate or window to show (RoCEv2 without congestion control).
    None,
    /// The sender's congestion window, bytes (UET NSCC).
    Window,
    /// The sender's rate limit, bit/s (DCQCN).
    Rate,
}

#[derive(Debug, Clone)]
pub struct FlowSampler {
    cap: usize,
    /// The sampled flows (indices into the scenario's flows), in order.
    pub flows: Vec<u32>,
    pub times: Vec<Time>,
    /// Row-major: sample `k`, sampled flow `j` at `k * flows.len() + j`: bytes delivered to
    /// the receiver so far.
    delivered: Delivered,
    /// Same layout: the control variable (see `kind`).
    control: Vec<f32>,
    pub kind: Control,
}

impl FlowSampler {
    /// Sample `named` (flow indices the scenario asks for) and an even spread of all `total`
    /// flows, up to `max_samples` samples each within the budget.
    pub fn new(total: usize, named: &[u32], max_samples: usize, kind: Control) -> FlowSampler {
        let stride = total.div_ceil(MAX_FLOWS).max(1);
        let mut flows: Vec<u32> = (0..total as u32).step_by(stride).collect();
        flows.extend(named.iter().copied().filter(|&f| (f as usize) < total));
        flows.sort_unstable();
        flows.dedup();
        let per_sample = flows.len().max(1) * (8 + 4);
        let cap = (BUDGET / per_sample).min(max_samples).max(4);
        FlowSampler {
            cap,
            flows,
            times: Vec::new(),
            delivered: Delivered::Narrow(Vec::new()),
            control: Vec::new(),
            kind,
        }
    }

    /// Record one sample; `flow(i)` is flow `i`'s (bytes delivered, control value).
    pub fn record(&mut self, now: Time, flow: impl Fn(usize) -> (u64, f64)) {
        if self.flows.is_empty() {
            return;
        }
        if self.times.len() == self.cap {
            self.decimate();
        }
        if self.times.is_empty() {
            // The capacity at once, as the sampler's series reserve theirs.
            let rows = self.cap.min(super::sampler::RESERVED_ROWS);
            let n = rows.saturating_mul(self.flows.len());
            let _ = self.times.try_reserve_exact(rows);
            if let Delivered::Narrow(v) = &mut self.delivered {
                let _ = v.try_reserve_exact(n);
            }
            let _ = self.control.try_reserve_exact(n);
        }
        self.times.push(now);
        for &f in &self.flows {
            let (d, c) = flow(f as usize);
            self.delivered.push(d);
            self.control.push(c as f32);
        }
    }

    /// Position of flow `f` among the sampled ones.
    pub fn column(&self, f: u32) -> Option<usize> {
        self.flows.binary_search(&f).ok()
    }

    /// Flow at `column`: bytes delivered and the control value at sample `k`.
    pub fn at(&self, column: usize, k: usize) -> (u64, f64) {
        let i = k * self.flows.len() + column;
        (self.delivered.get(i), self.control[i] as f64)
    }

    fn decimate(&mut self) {
        let n = self.flows.len();
        let rows = self.times.len();
        let mut w = 0;
        for k in (0..rows).step_by(2) {
            self.times[w] = self.times[k];
            for j in 0..n {
                self.delivered.copy(k * n + j, w * n + j);
                self.control[w * n + j] = self.control[k * n + j];
            }
            w += 1;
        }
        self.times.truncate(w);
        self.delivered.truncate(w * n);
        self.control.truncate(w * n);
    }
}

/// Cumulative byte counts, in 32 bits while every one fits (flows under 4 GiB, which is
/// most): 8 bytes a sample and flow instead of 12 with the control value. The first count
/// that does not fit widens the whole series to 64 bits.
#[derive(Debug, Clone)]
enum Delivered {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Delivered {
    fn push(&mut self, v: u64) {
        match self {
            Delivered::Narrow(n) => match u32::try_from(v) {
                Ok(x) => n.push(x),
                Err(_) => {
                    let mut w = Vec::with_capacity(n.capacity());
                    w.extend(n.iter().map(|&x| x as u64));
                    w.push(v);
                    *self = Delivered::Wide(w);
                }
            },
            Delivered::Wide(w) => w.push(v),
        }
    }

    fn get(&self, i: usize) -> u64 {
        match self {
            Delivered::Narrow(n) => n[i] as u64,
            Delivered::Wide(w) => w[i],
        }
    }

    /// Entry `from` copied to `to`.
    fn copy(&mut self, from: usize, to: usize) {
        match self {
            Delivered::Narrow(n) => n[to] = n[from],
            Delivered::Wide(w) => w[to] = w[from],
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            Delivered::Narrow(n) => n.truncate(len),
            Delivered::Wide(w) => w.truncate(len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_flows_are_spread_and_named_ones_kept_within_the_budget() {
        let s = FlowSampler::new(100_000, &[99_999, 7], 1000, Control::Rate);
        assert!(s.flows.len() <= MAX_FLOWS + 2);
        assert!(s.column(99_999).is_some() && s.column(7).is_some() && s.column(0).is_some());
        assert!(s.cap * s.flows.len() * 12 <= BUDGET);
    }

    #[test]
    fn a_full_flow_sampler_keeps_every_other_sample() {
        let mut s = FlowSampler::new(2, &[], 4, Control::Window);
        for t in 0..6u64 {
            s.record(Time(t), |f| (t * 10 + f as u64, f as f64));
        }
        assert_eq!(s.times, vec![Time(0), Time(2), Time(4), Time(5)]);
        assert_eq!(s.at(1, 2), (41, 1.0));
    }

    #[test]
    fn a_count_past_four_gib_widens_the_series_and_keeps_every_value() {
        // Flow 1 passes 2^32 bytes at the third sample; flow 0 stays small.
        let big = |t: u64| (1u64 << 32) - 2 + t;
        let mut s = FlowSampler::new(2, &[], 8, Control::Window);
        for t in 0..5u64 {
            s.record(Time(t), |f| if f == 0 { (t, 0.0) } else { (big(t), 2.0) });
        }
        assert!(matches!(s.delivered, Delivered::Wide(_)));
        for k in 0..5 {
            assert_eq!((s.at(0, k).0, s.at(1, k).0), (k as u64, big(k as u64)));
        }
        // Halving a wide series keeps the even samples as a narrow one does.
        for t in 5..9u64 {
            s.record(Time(t), |f| if f == 0 { (t, 0.0) } else { (big(t), 2.0) });
        }
        assert_eq!(s.times, vec![Time(0), Time(2), Time(4), Time(6), Time(8)]);
        assert_eq!((s.at(1, 3).0, s.at(1, 4).0, s.at(0, 4).0), (big(6), big(8), 8));
    }
}
