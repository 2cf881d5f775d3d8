//! One run on several threads, with the results of one: a conservative parallel engine.
//!
//! The fabric is cut into partitions (`Partitioning::by_hosts`: hosts in contiguous blocks,
//! each switch with most of its neighbours). Each partition is a whole [`Sim`] built from the
//! same variant that handles only the events of its own nodes, on its own thread, with its
//! own event queue and packet pool. A frame sent into a cable whose far end is another
//! partition's is put in the sender's outbox instead of on the cable; between two windows the
//! outbox is handed to the far partition, whose thread puts its frames on its copy of the
//! cable when its next window starts. The windows are as long as the
//! lookahead, the least propagation delay of a cut cable: a frame sent in a window arrives
//! after it ends (Chandy and Misra, IEEE TSE 1979; windowed as in Nicol's YAWNS, JACM 1993;
//! Unison runs ns-3 the same way, EuroSys 2024).
//!
//! Identical results for every thread count:
//! * simultaneous events run in an order that does not depend on the cut (`order.rs`), and
//!   every random stream belongs to one switch, cable or flow (`build.rs`);
//! * a flow's sender side and its receiver side may be in two partitions: each changes only
//!   its own side of the flow in its copy, and the copies are put together at the end
//!   (`merge.rs`); frames are the only thing the two sides exchange, as on a real fabric;
//! * what reads the whole fabric runs between windows: the samples (a window ends at each
//!   sample time), the look for PFC deadlocks (it reads every partition's ports; a window
//!   ends at each look, and is never longer than the interval between looks), and the rule
//!   that idle timers stop once every flow has finished (a partition whose own flows have all
//!   finished holds its next timer until the window's end says whether the others' have);
//! * PFC frames carry the origin of their chain of pauses (`crate::pfc_watch`), so a paused
//!   port never reads the pausing port's state across the cable; the PFC watchdog's state is
//!   per port, its storms listed in the order they were found.
//!
//! The partitions other than the first run on threads started once for the run (`crew.rs`).
//!
//! A cut pays only when its windows hold enough work (`MIN_EVENTS_PER_WINDOW`). A fabric of
//! fewer than [`PROBE_BELOW_HOSTS`] hosts runs its first windows alone to find out, and stays
//! on one thread when they were sparse, without building a second copy; a larger one is cut
//! at once and goes back to one thread after its first windows when they were sparse.
//!
//! What the engine does not cut yet runs on one thread, and the run says why
//! ([`why_sequential`]): CBFC and link level retry (their state spans both ends of a cable),
//! faults, captures, INT, flows that start when a flow received in another partition
//! completes (no lookahead), a scenario-set `run.max_events`, and fabrics whose cut cables
//! are shorter than [`MIN_LOOKAHEAD`] (a window would hold a handful of events).

mod coordinator;
mod crew;
mod merge;
mod stats;

use super::parallelism::Partitioning;
use super::pfc_watch::check_interval;
use super::{Event, Progress, Sim};
use crate::ids::PortId;
use crate::packet::Packet;
use crate::scenario::Scenario;
use coordinator::Coordinator;
use sim_core::queue::Simultaneous;
use sim_core::{Duration, EventQueue, Time};
pub use stats::ParallelRun;

/// Cut cables shorter than this (about 50 m of fibre) leave too little lookahead for a
/// window to hold more work than its barrier costs: such fabrics run on one thread.
pub const MIN_LOOKAHEAD: Duration = Duration(250_000);

/// A cut run whose first [`DENSITY_WINDOWS`] windows hold fewer events than this on average
/// goes on on one thread: a window's barrier and hand-offs cost about as much as a few
/// thousand events (an incast, whose senders mostly wait, holds a hundred).
pub const MIN_EVENTS_PER_WINDOW: u64 = 10_000;
pub const DENSITY_WINDOWS: u64 = 16;

/// A fabric of fewer hosts than this runs its first windows alone before it is cut, and is
/// cut only when they were dense: then it is built again and cut at time zero (the first
/// windows' events, at most [`DENSITY_WINDOWS`] x [`MIN_EVENTS_PER_WINDOW`], are handled
/// twice; building it again costs a few milliseconds at this size). A sparse one never builds
/// a second copy. A larger fabric is cut at once, and goes back to one thread after its
/// first windows if they were sparse: building it twice would cost more than the windows.
pub const PROBE_BELOW_HOSTS: usize = 512;

/// When a run is cut: [`Sim::run_threads`] uses [`CutRule::default`]; tests cut short
/// cables and sparse runs too, to check that the results stay those of one thread.
#[derive(Debug, Clone, Copy)]
pub struct CutRule {
    /// Cut cables no shorter than this (`MIN_LOOKAHEAD`).
    pub min_lookahead: Duration,
    /// Go on on one thread below this many events per window (`MIN_EVENTS_PER_WINDOW`).
    pub min_events: u64,
    /// Run the first windows alone in fabrics of fewer hosts (`PROBE_BELOW_HOSTS`).
    pub probe_below_hosts: usize,
}

impl Default for CutRule {
    fn default() -> Self {
        CutRule {
            min_lookahead: MIN_LOOKAHEAD,
            min_events: MIN_EVENTS_PER_WINDOW,
            probe_below_hosts: PROBE_BELOW_HOSTS,
        }
    }
}

/// An event's place in the run's order: its time and its rank (`order.rs`).
pub(super) type Key = (Time, u64);

/// Which partition holds what: each port, each node, each flow's sender and receiver.
pub(super) struct Layout {
    owner: std::sync::Arc<Vec<u32>>,
    of_node: Vec<u32>,
    sender: Vec<u32>,
    finisher: Vec<u32>,
}

/// What a partition knows besides its own state.
pub(super) struct Part {
    /// Each port's partition.
    owner: std::sync::Arc<Vec<u32>>,
    /// One bit per port: its cable leads into another partition. Read by every frame sent
    /// (48 KB at k = 64, where `owner` is 1.5 MB and missed the cache on a third of the
    /// sends' samples).
    cut: Vec<u64>,
    /// Frames sent into cut cables this window, by the partition at the far end: when, from
    /// which port. Each keeps its capacity from window to window.
    outbox: Vec<Vec<(Time, PortId, Packet)>>,
    /// The earliest arrival of each outbox's frames (a frame arrives its cable's delay after
    /// it was sent, whatever is on the cable before it).
    outbox_first: Vec<Time>,
    /// Frames the other partitions sent this way, by sender, handed over between windows
    /// (`coordinator::exchange`) and put on their cables by this partition's own thread when
    /// its next window starts ([`Sim::take_inbox`]): the writes to its pool, cables and event
    /// queue stay in its own core's cache, and no thread waits while they are made.
    inbox: Vec<Vec<(Time, PortId, Packet)>>,
    /// The earliest arrival of the inbox's frames.
    inbox_first: Option<Time>,
    /// The event being handled.
    pub key: Key,
    /// The key of the event that logged each row pushed to the event log.
    pub log_keys: Vec<Key>,
    /// The key of the event that listed each PFC storm.
    pub storm_keys: Vec<Key>,
    /// An XOFF began while no look for deadlocks was due: the coordinator times the next.
    pub first_xoff: Option<Time>,
    /// Frames sent into a cut cable.
    crossed: u64,
    /// The flows whose last byte arrives in this partition, and the key of the last that did.
    mine: usize,
    pub last_done: Key,
    /// An idle timer held back until the other partitions say whether every flow has finished
    /// (its key: in window order, its place).
    pub(in crate::sim) held: Option<(Time, Event)>,
}

impl Part {
    /// The partition a frame sent from port `p` to port `peer` crosses to, if another.
    #[inline]
    pub(super) fn crossing(&self, p: PortId, peer: PortId) -> Option<u32> {
        if self.cut[p.idx() / 64] >> (p.idx() % 64) & 1 == 0 {
            return None;
        }
        Some(self.owner[peer.idx()])
    }

    /// Frame `pkt`, sent from port `p` at `at`, reaches partition `to` at `arrives`.
    #[inline]
    pub(super) fn post(&mut self, to: u32, at: Time, arrives: Time, p: PortId, pkt: Packet) {
        self.outbox[to as usize].push((at, p, pkt));
        self.crossed += 1;
        let first = &mut self.outbox_first[to as usize];
        *first = (*first).min(arrives);
    }
}

/// Whether the idle timers still run in a window (`Sim::advance`: they stop once every flow
/// has finished).
#[derive(Debug, Clone, Copy)]
enum Done {
    /// No flow of another partition can finish in the window unseen: decide locally, holding
    /// a timer when this partition's own flows have all finished.
    Ask,
    /// Some flow is still unfinished at the window's end.
    Not,
    /// Every flow had finished once the event of this key had run.
    At(Key),
}

/// Why `sim` cannot be cut into `threads` partitions (None: it can).
pub fn why_sequential(
    sim: &Sim,
    scenario: &Scenario,
    threads: usize,
    min_lookahead: Duration,
) -> Option<String> {
    let v = sim.variant;
    let reason = if threads < 2 {
        "one thread"
    } else if sim.net.host_node.len() < threads {
        "fewer hosts than threads"
    } else if !v.pfc.priorities.is_empty() && check_interval(&v.pfc) == Duration::ZERO {
        "pfc.deadlock_timeout is too short to time the look for deadlocks"
    } else if sim.cbfc.on() || sim.net.llr.iter().any(Option::is_some) {
        "CBFC or link level retry is on"
    } else if !scenario.faults.is_empty() {
        "the scenario has faults"
    } else if !sim.captures.is_empty() {
        "the scenario captures frames"
    } else if v.limits.max_events.is_some() {
        "run.max_events is set"
    } else if sim.flows.iter().any(|f| {
        let cc = v.nic.cc_for(v.nic.transport_of(f.spec.prio));
        crate::nic::Protocol::carries_int(&f.proto) && matches!(cc, crate::cc::CcConfig::Hpcc(_))
    }) {
        "HPCC's flows carry INT (stacks in the sending partition's pool)"
    } else {
        let cut = Partitioning::by_hosts(&sim.net, threads);
        let owner = port_owner(sim, &cut);
        match lookahead(sim, &owner) {
            None => "nothing to cut",
            Some(l) if l < min_lookahead || l == Duration::ZERO => {
                return Some(format!(
                    "the shortest cut cable is {} ns (under {} ns)",
                    l.0 / 1000,
                    min_lookahead.0 / 1000
                ));
            }
            Some(_) if crossing_dependency(sim, &cut) => {
                "a flow starts when a flow received in another partition finishes"
            }
            Some(_) => return None,
        }
    };
    Some(reason.to_string())
}

fn port_owner(sim: &Sim, cut: &Partitioning) -> Vec<u32> {
    sim.net.port_node.iter().map(|n| cut.of_node[n.idx()]).collect()
}

/// The least propagation delay of a cable whose ends are in two partitions.
fn lookahead(sim: &Sim, owner: &[u32]) -> Option<Duration> {
    (0..sim.net.ports.len())
        .filter(|&p| owner[p] != owner[sim.net.peer[p].idx()])
        .map(|p| sim.net.links[p].delay)
        .min()
}

/// A window's length: the least propagation delay of a cut cable, and no longer than the
/// interval between looks for deadlocks (a look is timed from an XOFF and must fall after its
/// window).
fn window(sim: &Sim, owner: &[u32]) -> Duration {
    let la = lookahead(sim, owner).expect("checked by why_sequential");
    if sim.variant.pfc.priorities.is_empty() {
        la
    } else {
        la.min(check_interval(&sim.variant.pfc))
    }
}

/// The partition that sees flow `f` finish: its receiver's (its sender's inside a server).
fn finisher(sim: &Sim, cut: &Partitioning, f: usize) -> u32 {
    let s = &sim.flows[f].spec;
    let h = if sim.is_local(f) { s.src } else { s.dst };
    cut.of_node[sim.net.host_node[h.idx()].idx()]
}

fn crossing_dependency(sim: &Sim, cut: &Partitioning) -> bool {
    sim.dependents.iter().enumerate().any(|(f, ds)| {
        ds.iter().any(|&d| {
            let src = sim.flows[d as usize].spec.src;
            cut.of_node[sim.net.host_node[src.idx()].idx()] != finisher(sim, cut, f)
        })
    })
}

impl<'a> Sim<'a> {
    /// Run on `threads` threads when the run can be cut (`parallel::why_sequential`), else on this
    /// one; `progress` as [`Sim::run_with_progress`] (called between windows). Returns why
    /// the run stayed on one thread, if it did.
    pub fn run_threads(
        &mut self,
        scenario: &'a Scenario,
        threads: usize,
        progress: impl FnMut(&Progress) -> bool,
    ) -> Option<String> {
        self.run_threads_cut_at(scenario, threads, CutRule::default(), progress)
    }

    /// [`Sim::run_threads`] by `rule`.
    pub fn run_threads_cut_at(
        &mut self,
        scenario: &'a Scenario,
        threads: usize,
        rule: CutRule,
        mut progress: impl FnMut(&Progress) -> bool,
    ) -> Option<String> {
        let min_events = rule.min_events;
        if let Some(why) = why_sequential(self, scenario, threads, rule.min_lookahead) {
            self.run_with_progress(progress);
            return Some(why);
        }
        let cut = Partitioning::by_hosts(&self.net, threads);
        let owner = std::sync::Arc::new(port_owner(self, &cut));
        let la = window(self, &owner);
        let sparse_why = || {
            format!(
                "under {min_events} events per window of {} ns in its first {DENSITY_WINDOWS} windows",
                la.0 / 1000
            )
        };
        if self.net.host_node.len() < rule.probe_below_hosts {
            if !self.probe_dense(la, min_events, &mut progress) {
                if self.stopped.is_some() {
                    // A limit or the user stopped it among the first windows.
                    self.finish();
                } else {
                    self.run_with_progress(progress);
                }
                return Some(sparse_why());
            }
            // Dense: built again, to be cut from time zero (what the first windows did is
            // discarded; the paths the set-up searched are kept).
            let (variant, deadline, give_back) = (self.variant, self.wall_deadline, self.give_back);
            let paths = self.paths();
            *self = Sim::with_paths(scenario, variant, paths);
            (self.wall_deadline, self.give_back) = (deadline, give_back);
        }
        let flows = 0..self.flows.len();
        let layout = Layout {
            sender: flows
                .clone()
                .map(|f| cut.of_node[self.net.host_node[self.flows[f].spec.src.idx()].idx()])
                .collect(),
            finisher: flows.map(|f| finisher(self, &cut, f)).collect(),
            owner,
            of_node: cut.of_node.clone(),
        };
        // The other copies are built at once, each on a thread of its own, with what this one
        // derived from the flows' paths, and each is cut as soon as it is built (the runner's
        // `--threads` allows a whole copy per thread).
        let variant = self.variant;
        let paths = self.paths();
        let mut others: Vec<Sim<'a>> = std::thread::scope(|scope| {
            let (layout, cut, paths) = (&layout, &cut, &paths);
            let built: Vec<_> = (1..threads)
                .map(|i| {
                    scope.spawn(move || {
                        let mut s = Sim::with_paths(scenario, variant, paths.clone());
                        s.partition(i as u32, layout, cut);
                        s
                    })
                })
                .collect();
            self.partition(0, layout, cut);
            built
                .into_iter()
                .map(|b| b.join().expect("building a copy of the run does not panic"))
                .collect()
        });
        drop(paths);
        let mut parts: Vec<&mut Sim<'a>> = std::iter::once(&mut *self).chain(others.iter_mut()).collect();
        let mut coord = Coordinator {
            next_sample: Some(Time::ZERO),
            next_look: None,
            look_due: false,
            now: Time::ZERO,
            events: 0,
            layout: &layout,
            stats: ParallelRun::new(threads),
        };
        let sparse = std::thread::scope(|scope| {
            let crew = crew::Crew::start(scope, threads - 1);
            coord.run(&mut parts, &crew, la, min_events, &mut progress)
        });
        let (now, events, sample) = (coord.now, coord.events, coord.next_sample);
        let (look, look_due) = (coord.next_look, coord.look_due);
        let mut stats = coord.stats;
        for s in parts.iter_mut() {
            s.leave_windows();
            stats.crossed_frames += s.part.as_deref().map_or(0, |p| p.crossed);
        }
        merge::merge(&mut parts, &layout);
        if sparse {
            merge::queues(&mut parts);
        }
        // The other partitions hold nothing the run still needs: their memory goes back now,
        // not after the rest of a run gone back to one thread.
        drop(parts);
        drop(others);
        if let Some(give_back) = self.give_back {
            give_back();
        }
        let head = self;
        head.parallel = Some(stats);
        head.now = head.now.max(now);
        head.totals.events += events;
        if sparse {
            // Too little work per window to pay for its barrier: the rest on this thread,
            // from where the partitions stopped (nothing a thread does moves a result).
            head.part = None;
            if let Some(t) = sample {
                head.schedule(t, Event::Sample);
            }
            head.watch.check_pending = look_due;
            if let Some(t) = look {
                head.schedule(t, Event::DeadlockCheck);
            }
            head.run_with_progress(progress);
            return Some(sparse_why());
        }
        head.finish();
        None
    }

    /// Run alone through the first [`DENSITY_WINDOWS`] windows of `la` a cut run would have
    /// (each begins at the first event after the last): true as soon as they have held
    /// `min_events` per window on average, false when they did not or the run stopped (a
    /// limit or the user stopping it among them ends the run, however many events it had).
    fn probe_dense<P: FnMut(&Progress) -> bool>(
        &mut self,
        la: Duration,
        min_events: u64,
        progress: &mut P,
    ) -> bool {
        let want = min_events.saturating_mul(DENSITY_WINDOWS);
        for _ in 0..DENSITY_WINDOWS {
            if self.stopped.is_some() {
                return false;
            }
            if self.totals.events >= want {
                return true;
            }
            let Some(start) = self.queue.peek_time() else {
                return false;
            };
            self.advance(Some(Time(start.0 + la.0 - 1)), &mut *progress, super::unobserved);
        }
        self.totals.events >= want && self.stopped.is_none()
    }

    /// Become partition `me`: keep only the first events of its own nodes (the samples are
    /// the coordinator's), free the per-packet state of flows it does not send or receive and
    /// the buffer accounting of switches it does not run.
    fn partition(&mut self, me: u32, layout: &Layout, cut: &Partitioning) {
        let mut queue = EventQueue::new();
        while let Some((t, ev)) = self.queue.pop() {
            if self.site(ev).is_some_and(|n| cut.of_node[n.idx()] == me) {
                queue.push(t, ev);
            }
        }
        self.queue = queue;
        // Another partition's switches are never admitted to here: their buffer accounting
        // goes (83 MB of a 65,536-host fabric's, in all).
        for (s, &node) in self.net.switch_node.iter().enumerate() {
            if cut.of_node[node.idx()] != me {
                self.switches[s].mmu.forget();
            }
        }
        for (f, flow) in self.flows.iter_mut().enumerate() {
            let (sends, receives) = (layout.sender[f] == me, layout.finisher[f] == me);
            if !(sends && receives) {
                flow.shed(sends, receives);
            }
        }
        self.part = Some(Box::new(Part {
            owner: layout.owner.clone(),
            cut: {
                let mut cut = vec![0u64; self.net.ports.len().div_ceil(64)];
                for (p, peer) in self.net.peer.iter().enumerate() {
                    if layout.owner[peer.idx()] != me {
                        cut[p / 64] |= 1 << (p % 64);
                    }
                }
                cut
            },
            outbox: (0..cut.parts).map(|_| Vec::new()).collect(),
            outbox_first: vec![Time(u64::MAX); cut.parts],
            inbox: (0..cut.parts).map(|_| Vec::new()).collect(),
            inbox_first: None,
            key: (Time::ZERO, 0),
            log_keys: Vec::new(),
            storm_keys: Vec::new(),
            first_xoff: None,
            crossed: 0,
            mine: layout.finisher.iter().filter(|&&p| p == me).count(),
            last_done: (Time::ZERO, 0),
            held: None,
        }));
        self.enter_windows();
    }

    /// Handle this partition's events up to and including `until`. True when it stopped early
    /// to hold an idle timer ([`Done::Ask`]).
    fn run_window(&mut self, until: Time, done: Done) -> bool {
        self.take_inbox();
        // In window order (`window/`) the queue's keys are places: the window ends with the
        // half-window `until` ends (the coordinator aligns it, `Windows::align`).
        let bound = self.win.as_deref().map_or(until, |w| w.bound(until));
        let max_time = Time::ZERO + self.variant.limits.time();
        loop {
            let part = self.part.as_deref_mut().expect("a partition");
            let (k, ev) = match part.held.take() {
                Some(h) => h,
                None => match self.queue.peek_time() {
                    Some(k) if k <= bound => self.queue.pop().expect("peeked"),
                    _ => return false,
                },
            };
            let t = match self.win {
                None => k,
                Some(_) => match self.windowed_time(k, ev, max_time) {
                    Some(t) => t,
                    None => continue,
                },
            };
            let part = self.part.as_deref_mut().expect("a partition");
            let rank = ev.rank();
            if !runs_when_done(ev) {
                let skip = match done {
                    Done::Not => false,
                    Done::At(key) => (t, rank) > key,
                    Done::Ask => match self.win.as_deref().and_then(|w| w.node_unfinished(k)) {
                        // A flow finishing at this node has not yet.
                        Some(true) => false,
                        // The node's events of this half-window wait for every other node's.
                        Some(false) => {
                            self.hold(k, ev);
                            continue;
                        }
                        None if self.finished < part.mine => false,
                        None => {
                            part.held = Some((k, ev));
                            return true;
                        }
                    },
                };
                if skip {
                    continue;
                }
            }
            part.key = (t, rank);
            // As the one-thread loop does (`Sim::advance`): without it each event of a
            // partition began with the cache misses the prefetch hides.
            self.prefetch_ahead();
            match self.win.as_deref_mut() {
                None if t < self.now => self.totals.causality_violations += 1,
                None => {}
                Some(w) => w.handling(t, ev),
            }
            self.now = t;
            self.totals.events += 1;
            self.handle(ev);
        }
    }

    /// Put the frames other partitions sent this way on their cables: each sender's in the
    /// order they were sent (a cable's frames all come from one), senders in partition
    /// order. Their vectors keep their capacity for the next window's frames.
    fn take_inbox(&mut self) {
        let part = self.part.as_deref_mut().expect("a partition");
        if part.inbox_first.take().is_none() {
            return;
        }
        let mut inbox = std::mem::take(&mut part.inbox);
        for frames in &mut inbox {
            for (sent, p, pkt) in frames.drain(..) {
                if let Some(at) = self.net.links[p.idx()].send(&mut self.net.pool, sent, pkt) {
                    self.schedule(at, Event::Arrive(p));
                }
            }
        }
        self.part.as_deref_mut().expect("a partition").inbox = inbox;
    }

    fn pending(&self) -> bool {
        let part = self.part.as_deref().expect("a partition");
        !self.queue.is_empty() || part.held.is_some() || part.inbox_first.is_some()
    }
}

/// Events that run after every flow has finished (the frames still moving); the others are
/// idle timers, which stop then (`Sim::advance`).
#[inline]
pub(super) fn runs_when_done(ev: Event) -> bool {
    matches!(
        ev,
        Event::TxDone(_) | Event::Arrive(_) | Event::Resume(_) | Event::RxDone(_) | Event::LlrTimer(_)
    )
}
