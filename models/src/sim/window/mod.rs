//! Window order: the events of a window no longer than the shortest cable, node by node.
//!
//! Two nodes affect each other only through their cables: a frame sent at `t` arrives at
//! `t + delay` or later. So in a window no longer than the shortest cable's delay, what one
//! node does cannot change what another does in the same window, and the window's events may
//! run in any order that keeps each node's own events in time order: here node after node,
//! each node's events in the order of one thread's run (time, then rank). This is the argument
//! of the parallel engine's windows (Chandy and Misra, IEEE TSE 1979), taken down to single
//! nodes on one thread: a node's ports, buffers and flows stay in the core's cache while its
//! window's events run, where time order visits every node in turn at each instant and finds
//! each one's lines gone since its last event.
//!
//! The results are those of time order, file for file (`tests/integration/window_order.rs`).
//! What reads more than one node is kept exact:
//! * a window is cut after the sample time it holds and after a look for PFC deadlocks:
//!   those read every node, and run once every node has run the part before;
//! * the event log's rows and the PFC storms found are put in the order of the events that
//!   wrote them as each part ends (`flush_window`), before their caps apply;
//! * the rule that idle timers stop once every flow has finished (`Sim::advance`): a node with
//!   a flow of its own still to finish knows it is not yet so; a node without one sets the
//!   part's remaining events aside (`hold`) until every other node has run the part, when the
//!   flows that finished in it, and the last one's place, are known;
//! * the end of the run is the latest time handled, and a time limit stops after every event
//!   up to it.
//!
//! Runs that read across nodes in other ways stay in time order ([`Windows::new`] says which).
//!
//! The queue keeps its radix heap: an event's key is its part of a window, then its node, then
//! its time in the window, and keys only grow as a run goes on (an event for another node lands
//! in a later window), which is all the heap asks.
//!
//! A run on several threads (`parallel`) runs each partition's windows in this order too:
//! its windows, as long as the shortest cut cable, are made of whole parts.

use super::{Event, Sim};
use crate::ids::PortId;
use crate::pause::Held;
use crate::telemetry::LogRow;
use sim_core::Time;
use sim_core::queue::Simultaneous;

mod run;

/// Cables shorter than this (20 m) leave windows of a few events per node: time order.
const MIN_WINDOW: u64 = 100_000;

/// Bits of a part's number within its window (at most three parts).
const PART_BITS: u32 = 2;

/// A run's windows, and what runs in window order needs to stay exact.
///
/// Keys: a window of `len` ps is cut after the sample time and the look for PFC deadlocks it
/// holds, if any, into at most three parts, numbered `4 x window + part` (a shift, where
/// `3 x window` took a division to decode); then comes the node's slot (its number; the held
/// nodes' slot after every node's; then the slot of what reads every node: samples, looks),
/// then the time since the window began, in `bits` bits.
pub(super) struct Windows {
    /// A window is `len` ps: the shortest cable's delay, or the interval between samples if
    /// shorter (at most one sample a window). Windows start at multiples of it, so the
    /// windows of a run on several threads, as long as its shortest cut cable, are whole ones.
    len: u64,
    /// Bits of a time within a window.
    bits: u32,
    /// Bits of a slot in a key.
    node_bits: u32,
    /// Where a key's part begins (`node_bits + bits`); the mask of its time in the window.
    part_shift: u32,
    low_mask: u64,
    /// The slot after every node's, where a held node's events run; the sample's is next.
    held_slot: u64,
    /// Samples fall on multiples of this (ps).
    sample_every: u64,
    /// The first window at or after the current one that holds a sample time, and that time.
    next_sampled: (u64, u64),
    /// The looks for PFC deadlocks to come, by window and time: a window is cut after each,
    /// as after a sample. A look is timed a window or more ahead (`len` is no longer than the
    /// interval between looks); events keyed before it was are moved when they come up.
    looks: Vec<(u64, u64)>,
    /// The earliest XOFF of the current part while no look was due: the next look is timed
    /// from it when the part ends (time order times it from the first XOFF).
    pub(super) first_xoff: Option<Time>,
    /// The part being run (`4 x window + part`).
    current: u64,
    /// Its window and when that begins: `window_of` finds a window without a division.
    window_now: u64,
    window_start: u64,
    /// Nodes whose events of the current part were set aside (`hold`).
    held: Vec<u32>,
    /// Per port: the node at its cable's far end (where its frames arrive).
    far: Vec<u32>,
    /// Per node: its flows still to finish whose last byte arrives there.
    own: Vec<u32>,
    /// Per flow: the node that sees it finish.
    finisher: Vec<u32>,
    /// The event being handled, and the last one that finished a flow.
    event: (Time, Event),
    last_done: (Time, Event),
    /// The latest time handled.
    latest: Time,
    /// Rows the event log got in the current part, with the event that wrote each.
    rows: Vec<((Time, Event), LogRow)>,
    /// PFC storms found in the current part, with the event that found each (the list is
    /// capped: which are listed depends on their order).
    storms: Vec<((Time, Event), PortId, Held)>,
    /// Events of a node being set aside (kept for its capacity).
    moved: Vec<(Time, Event)>,
}

/// What to do with an idle timer (an event that does not run once every flow has finished).
enum Idle {
    Run,
    Skip,
    /// Set the node's events of this part aside.
    Hold,
}

impl Windows {
    /// Window order for `sim`'s run, or None when it must run in time order: a cable shorter
    /// than [`MIN_WINDOW`] ps; CBFC, link level retry (their state spans both ends of a
    /// cable), faults and rerouting (the whole fabric), captures (their files are in event
    /// order), HPCC's INT stacks, a flow that starts when a flow finishing at another node
    /// does (no delay between them), `run.max_events`, or times that do not fit a key.
    pub(super) fn new(sim: &Sim) -> Option<Box<Windows>> {
        let v = sim.variant;
        let int = sim.flows.iter().any(|f| {
            let cc = v.nic.cc_for(v.nic.transport_of(f.spec.prio));
            crate::nic::Protocol::carries_int(&f.proto) && matches!(cc, crate::cc::CcConfig::Hpcc(_))
        });
        if sim.cbfc.on()
            || sim.net.llr.iter().any(Option::is_some)
            || !sim.faults.is_empty()
            || !sim.captures.is_empty()
            || v.limits.max_events.is_some()
            || int
        {
            return None;
        }
        let sample_every = sim.sampler.interval.0;
        let mut delay = sim.net.links.iter().map(|l| l.delay.0).min()?.min(sample_every);
        if !v.pfc.priorities.is_empty() {
            delay = delay.min(super::pfc_watch::check_interval(&v.pfc).0);
        }
        if delay < MIN_WINDOW {
            return None;
        }
        let (len, bits) = (delay, 64 - (delay - 1).leading_zeros());
        let nodes = sim.net.port_node.iter().map(|n| n.0 + 1).max().unwrap_or(0) as u64;
        let node_bits = 64 - (nodes + 1).leading_zeros();
        let last = Time::ZERO + v.limits.time();
        let parts = (last.0 / len + 1) << PART_BITS;
        if node_bits + bits >= 64 || parts >> (64 - node_bits - bits) != 0 {
            return None;
        }
        let host = |h: crate::ids::HostId| sim.net.host_node[h.idx()].0;
        let finisher: Vec<u32> = (0..sim.flows.len())
            .map(|f| {
                let s = &sim.flows[f].spec;
                host(if sim.is_local(f) { s.src } else { s.dst })
            })
            .collect();
        let crossing = sim.dependents.iter().enumerate().any(|(f, ds)| {
            ds.iter()
                .any(|&d| host(sim.flows[d as usize].spec.src) != finisher[f])
        });
        if crossing {
            return None;
        }
        let mut own = vec![0; nodes as usize];
        for (f, &n) in finisher.iter().enumerate() {
            if sim.flows[f].finish.is_none() {
                own[n as usize] += 1;
            }
        }
        let net = &sim.net;
        let far = net.peer.iter().map(|q| net.port_node[q.idx()].0).collect();
        let mut w = Windows {
            len,
            bits,
            node_bits,
            part_shift: node_bits + bits,
            low_mask: (1 << bits) - 1,
            held_slot: nodes,
            sample_every,
            next_sampled: (0, 0),
            looks: Vec::new(),
            first_xoff: None,
            current: 0,
            window_now: 0,
            window_start: 0,
            held: Vec::new(),
            far,
            own,
            finisher,
            event: (Time::ZERO, Event::Sample),
            last_done: (Time::ZERO, Event::Sample),
            latest: sim.now,
            rows: Vec::new(),
            storms: Vec::new(),
            moved: Vec::new(),
        };
        let b = sim.now.0 / len;
        w.next_sampled = w.sampled_from(b);
        w.set_current(w.part(sim.now.0));
        Some(Box::new(w))
    }

    /// The first window from `b` on that holds a sample time, and that time.
    fn sampled_from(&self, b: u64) -> (u64, u64) {
        let ts = (b * self.len)
            .div_ceil(self.sample_every)
            .saturating_mul(self.sample_every);
        (ts / self.len, ts)
    }

    /// The part of time `t`.
    #[inline(always)]
    fn part(&self, t: u64) -> u64 {
        self.place(t).0
    }

    /// The sample time window `b` holds, if any.
    #[inline(always)]
    fn sample_in(&self, b: u64) -> Option<u64> {
        if b < self.next_sampled.0 {
            return None;
        }
        if b == self.next_sampled.0 {
            return Some(self.next_sampled.1);
        }
        let (sb, ts) = self.sampled_from(b);
        (sb == b).then_some(ts)
    }

    /// The times window `b` is cut after, in order (none, one or two).
    fn cuts(&self, b: u64) -> ([u64; 2], usize) {
        let mut cuts = [u64::MAX; 2];
        let mut n = 0;
        for t in self
            .sample_in(b)
            .into_iter()
            .chain(self.looks.iter().filter(|l| l.0 == b).map(|l| l.1))
        {
            if !cuts[..n].contains(&t) && n < 2 {
                cuts[n] = t;
                n += 1;
            }
        }
        cuts[..n].sort_unstable();
        (cuts, n)
    }

    /// The part being run is `h`.
    fn set_current(&mut self, h: u64) {
        self.current = h;
        self.window_now = h >> PART_BITS;
        self.window_start = self.window_now * self.len;
    }

    /// The window of time `t` and the time since it began: nearly every event is due in the
    /// current window or the next (a cable's delay is at least a window), found so quickly.
    #[inline(always)]
    fn window_of(&self, t: u64) -> (u64, u64) {
        let d = t.wrapping_sub(self.window_start);
        if d < self.len {
            (self.window_now, d)
        } else if d - self.len < self.len {
            (self.window_now + 1, d - self.len)
        } else {
            let b = t / self.len;
            (b, t - b * self.len)
        }
    }

    /// The part of time `t` (`4 x window` + how many of its window's cuts come before `t`),
    /// and the time since its window began.
    #[inline(always)]
    fn place(&self, t: u64) -> (u64, u64) {
        let (b, low) = self.window_of(t);
        if self.looks.is_empty() {
            let after = self.sample_in(b).is_some_and(|ts| t > ts);
            return ((b << PART_BITS) + after as u64, low);
        }
        let (cuts, n) = self.cuts(b);
        (
            (b << PART_BITS) + cuts[..n].iter().filter(|&&c| t > c).count() as u64,
            low,
        )
    }

    /// A look for PFC deadlocks is due at `t`: its window is cut after it.
    pub(super) fn add_look(&mut self, t: Time) {
        let l = (t.0 / self.len, t.0);
        if !self.looks.contains(&l) {
            self.looks.push(l);
        }
    }

    /// The key of an event keyed before a look cut its window, in the part it belongs to
    /// now (None: it is in it).
    #[inline]
    pub(super) fn moved_by_look(&self, k: Time, t: Time) -> Option<Time> {
        if self.looks.is_empty() {
            return None;
        }
        let part = self.part(t.0);
        (part != self.window(k)).then(|| {
            let below = k.0 & ((1 << self.part_shift) - 1);
            Time((part << self.part_shift) | below)
        })
    }

    /// The queue's key of an event at `at` for `node` (None: the sample).
    #[inline(always)]
    fn key(&self, at: Time, node: Option<u32>) -> Time {
        let (h, low) = self.place(at.0);
        let slot = match node {
            Some(n) if h == self.current && !self.held.is_empty() && self.held.contains(&n) => self.held_slot,
            Some(n) => n as u64,
            None => self.held_slot + 1,
        };
        Time((h << self.part_shift) | (slot << self.bits) | low)
    }

    /// The time of an event of key `k`.
    #[inline(always)]
    pub(super) fn time(&self, k: Time) -> Time {
        let b = k.0 >> (self.part_shift + PART_BITS);
        Time(b * self.len + (k.0 & self.low_mask))
    }

    /// The part of key `k`.
    #[inline(always)]
    pub(super) fn window(&self, k: Time) -> u64 {
        k.0 >> self.part_shift
    }

    /// The event about to be handled.
    #[inline(always)]
    pub(super) fn handling(&mut self, t: Time, ev: Event) {
        self.event = (t, ev);
        self.latest = self.latest.max(t);
    }

    /// The node slot of key `k`.
    #[inline]
    fn slot(&self, k: Time) -> u64 {
        (k.0 >> self.bits) & ((1 << self.node_bits) - 1)
    }

    /// For an event of key `k` at a node: whether a flow that finishes at that node has not
    /// yet (then not every flow has). None in the held nodes' slot, where every node has run
    /// the part and what has finished by its end is known.
    #[inline]
    pub(super) fn node_unfinished(&self, k: Time) -> Option<bool> {
        let slot = self.slot(k);
        (slot < self.held_slot).then(|| self.own[slot as usize] > 0)
    }

    /// Whether the idle timer `ev` of key `k` at `t` runs, given whether every flow has
    /// finished by now in the order handled (a run on one thread).
    #[inline]
    fn idle(&self, k: Time, t: Time, ev: Event, all_done: bool) -> Idle {
        match self.node_unfinished(k) {
            Some(true) => Idle::Run,
            // Every flow finished by the end of this part: did the last before `ev`?
            _ if all_done => {
                let last = (self.last_done.0, self.last_done.1.rank());
                if (t, ev.rank()) > last {
                    Idle::Skip
                } else {
                    Idle::Run
                }
            }
            Some(false) => Idle::Hold,
            // The held nodes finish no flow: some flow is still to finish.
            None => Idle::Run,
        }
    }

    /// The first and last times of part `h`.
    fn span(&self, h: u64) -> (u64, u64) {
        let (b, j) = (h >> PART_BITS, (h & ((1 << PART_BITS) - 1)) as usize);
        let (cuts, n) = self.cuts(b);
        let start = if j == 0 {
            b * self.len
        } else {
            cuts[j.min(n) - 1] + 1
        };
        let end = if j < n { cuts[j] } else { (b + 1) * self.len - 1 };
        (start, end)
    }

    /// The start of the part of key `k`: no event of it is earlier.
    pub(super) fn floor(&self, k: Time) -> Time {
        Time(self.span(self.window(k)).0)
    }

    /// The end of a window of a run on several threads that starts at `start` and may go on
    /// to `until`: the end of the last part within it, or of `start`'s own (a limit's
    /// events past it are then skipped, [`Windows::past`]).
    pub(super) fn align(&self, start: Time, until: Time) -> Time {
        let (from, end) = self.span(self.part(until.0));
        let last = if end <= until.0 {
            end
        } else {
            from.saturating_sub(1)
        };
        Time(last.max(self.span(self.part(start.0)).1))
    }

    /// The largest key of an event at or before `until`, the end of a part.
    pub(super) fn bound(&self, until: Time) -> Time {
        Time(((self.part(until.0) + 1) << self.part_shift) - 1)
    }

    /// Flow `f` finished at the event being handled.
    #[inline]
    pub(super) fn finished(&mut self, f: usize) {
        self.own[self.finisher[f] as usize] -= 1;
        self.last_done = self.event;
    }

    /// Keep a PFC storm until its part ends.
    #[inline]
    pub(super) fn storm(&mut self, port: PortId, held: Held) {
        self.storms.push((self.event, port, held));
    }

    /// Keep a row of the event log until its part ends.
    #[inline]
    pub(super) fn log(&mut self, row: LogRow) {
        self.rows.push((self.event, row));
    }
}
