//! One run of one variant: the event loop, and for each event the one call that handles it.
//!
//! This module dispatches: the models decide (a switch's `Verdict`, a transport's replies,
//! the NIC's next packet, a receive buffer's admission, the PFC watchdog's storms) and it
//! puts what they return on the wire, schedules their timers and counts the totals. The
//! packet path, file by file, is in the crate docs (`models/src/lib.rs`).
//!
//! Events: `TxDone(port)` (a frame finished serializing: hand it to the link, start the next),
//! `Arrive(port)` (the head frame on port's link reached the far end), `FlowStart`, and the
//! timers: `Resume` (a PFC pause expired), `PfcRefresh` (re-send XOFF), `NicWake` (a
//! rate-limited QP may send), `Rto` (retransmission timer), `CcTimer` (DCQCN rate increase),
//! `RxDone` (the host took a frame from a NIC receive buffer), `CbfcTick` (a CBFC receiver's
//! credit-update tick), `CreditTick` (an RCCC pacer may
//! grant), `AckTimer` (a UET receiver's ACK coalescing timer), `CreditWait` (a UET sender
//! waited for credit), `Fault`, `Reroute`, `Sample` and `DeadlockCheck` (a look for cyclic pause
//! dependencies while ports are paused; `pfc_watch.rs`), `LlrTimer` (a link level retry replay
//! timer; `llr.rs`). A busy port has exactly one pending
//! `TxDone`, a busy link one `Arrive`.

mod build;
mod cbfc;
mod host;
mod llr;
mod order;
mod parallel;
pub mod parallelism;
mod pfc;
mod pfc_watch;
mod pfc_wd;
mod prefetch;
mod sample;
mod transport;
mod window;
mod wire;

use crate::drop::DropReason;
use crate::ideal;
use crate::ids::{FlowId, HostId, PortId};
use crate::network::Network;
use crate::nic::uet::Pacer;
use crate::nic::{Flow, HostCounters, Nic};
use crate::packet::{Kind, Packet};
use crate::scenario::Variant;
use crate::switch::Switch;
pub use parallel::{CutRule, DENSITY_WINDOWS, ParallelRun};
use sim_core::{EventQueue, Time};

/// Everything that can happen. 8 bytes: keeps the event queue's entries small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    TxDone(PortId),
    Arrive(PortId),
    FlowStart(FlowId),
    Resume(PortId),
    PfcRefresh(PortId),
    NicWake(PortId),
    Rto(FlowId),
    CcTimer(FlowId),
    /// The host finished taking a frame from a NIC receive buffer.
    RxDone(PortId),
    /// A receiver's RCCC pacer may grant credit again.
    CreditTick(HostId),
    /// A UET receiver's ACK coalescing timer for a flow.
    AckTimer(FlowId),
    /// A UET sender's RCCC credit wait ended.
    CreditWait(FlowId),
    /// A UET sender's probe timer (SLEEK).
    Probe(FlowId),
    /// Fault number `n` (an index into the scenario's resolved faults) happens.
    Fault(u32),
    /// Take a time-series sample.
    Sample,
    /// Routing converges on the cables that work now.
    Reroute,
    /// Look for a cyclic pause dependency (while ports are paused).
    DeadlockCheck,
    /// A flow between two GPUs of one server has crossed NVLink.
    LocalDone(FlowId),
    /// Has switch egress `port`'s pause on a priority lasted the PFC watchdog's detection time?
    WdCheck(PortId, u8),
    /// May a stormed queue be restored?
    WdRestore(PortId, u8),
    /// The link level retry replay timer of the cable leaving `port` (`crate::llr`).
    LlrTimer(PortId),
    /// A CBFC receiver's credit-update tick (`crate::cbfc`).
    CbfcTick(PortId),
}

/// Why a run stopped before its events ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    MaxTime(Time),
    MaxEvents(u64),
    /// The wall-clock bound.
    MaxWall(std::time::Duration),
    /// A PFC deadlock (`pfc.on_deadlock = "stop"`), described.
    PfcDeadlock(String),
    /// The caller asked it to stop (Ctrl-C).
    Interrupted,
}

/// Totals the invariants are checked against.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub events: u64,
    /// Frames that finished crossing a link (one per hop).
    pub packet_hops: u64,
    pub injected_packets: u64,
    pub injected_bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    /// Drops by [`DropReason`] (indexed as `DropReason::ALL`).
    pub drops_by_reason: [u64; DropReason::COUNT],
    /// PFC frames sent (XOFF, refreshes and XON).
    pub pfc_frames: u64,
    /// Data frames marked CE.
    pub ecn_marked: u64,
    /// Payload bytes delivered to applications (new data only).
    pub delivered_payload: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// Data frames trimmed to their headers, and the bytes cut off them.
    pub trimmed: u64,
    pub trimmed_bytes: u64,
    /// Bytes INT added to frames inside the fabric (switches' records; the echo in ACKs is
    /// counted where the ACK is sent).
    pub int_bytes: u64,
    /// Drops in a lossless class on a port whose headroom covers its cable.
    pub lossless_drops_adequate: u64,
    /// Events popped with a time earlier than the previous one (must stay 0).
    pub causality_violations: u64,
    /// Link level retry: copies its replay buffers put back into the fabric (replays, and
    /// frames a flush gave up, handed to the drops), and frames its receivers discarded
    /// (their senders still held them), with their frame bytes.
    pub llr_copies: u64,
    pub llr_copy_bytes: u64,
    pub llr_discarded: u64,
    pub llr_discarded_bytes: u64,
    pub end_time: Time,
}

pub struct Sim<'a> {
    pub variant: &'a Variant,
    /// The scenario's collective jobs (their flows by iteration), for the results.
    pub jobs: Vec<crate::workload::collective::JobSpec>,
    pub net: Network,
    /// Every switch's buffer and decision logic, in switch order.
    pub switches: Vec<Switch>,
    pub flows: Vec<Flow>,
    /// Each host's send scheduler.
    pub nics: Vec<Nic>,
    pub host_counters: Vec<HostCounters>,
    /// NIC receive buffers by port (only host ports, only when the host drains slower;
    /// boxed, so a fabric without them spends a pointer per port).
    pub rx: Vec<Option<Box<crate::nic::rx::RxBuffer>>>,
    /// What each flow's congestion control is built from when it starts.
    senders: crate::cc::Senders,
    /// RCCC credit pacers, per receiving host.
    pacers: Vec<Pacer>,
    /// Flows waiting on each flow's completion.
    dependents: Vec<Vec<u32>>,
    /// Flows that have delivered their last byte.
    finished: usize,
    /// The scenario's faults, in time order.
    faults: Vec<crate::fault::FaultAction>,
    /// Time series, sampled.
    pub sampler: crate::telemetry::Sampler,
    /// Per-flow delivered bytes and sender rate or window.
    pub flow_sampler: crate::telemetry::FlowSampler,
    /// Drops, trims and pause transitions.
    pub log: crate::telemetry::EventLog,
    /// Each flow's path and first-switch egress shares, for flows.csv.
    pub paths: crate::telemetry::PathLog,
    /// Mirrored ports (`[[capture]]`), and which ports have one.
    pub captures: Vec<crate::capture::Capture>,
    mirrored: Vec<bool>,
    /// The timers of the transports: RoCEv2's retransmission timeout (UET's floor), UET's
    /// ceiling, its ACK coalescing and credit-wait timeouts.
    timers: crate::nic::protocol::Timers,
    queue: EventQueue<Event>,
    /// Whether the event loops prefetch ([`prefetch::worth_it`]).
    prefetching: bool,
    /// Whether a run on one thread may go over to window order (`window/`); tests turn it
    /// off to compare the two orders.
    pub window_order: bool,
    /// The windows of a run in window order; None in time order.
    win: Option<Box<window::Windows>>,
    /// Whether this run went over to window order.
    windowed: bool,
    now: Time,
    pub totals: Totals,
    pub stopped: Option<StopReason>,
    /// When `run.max_wall` stops the event loop; None: `max_wall` after the loop starts.
    wall_deadline: Option<std::time::Instant>,
    /// PFC storms and deadlocks found.
    pub watch: crate::pfc_watch::PfcWatch,
    /// Servers with several NICs: each host's server, and NVLink's rate between its GPUs.
    servers: Option<(Vec<u32>, sim_core::BitRate)>,
    /// The switches' PFC watchdog (`pfc.watchdog_action`).
    pub wd: crate::pfc_wd::PfcWd,
    /// Every port's CBFC credits (`pfc.mode = "cbfc"`; empty otherwise).
    pub cbfc: crate::cbfc::Cbfc,
    /// Each flow's ideal FCT and lower bound on the healthy fabric.
    pub bounds: Vec<ideal::FlowBounds>,
    /// The scenario's seed: the results draw their own streams from it (FEC counters).
    pub seed: u64,
    /// This run's place in a run on several threads (`parallel`); None on one thread.
    part: Option<Box<parallel::Part>>,
    /// How the run on several threads went, once it has (None: it ran on one).
    pub parallel: Option<ParallelRun>,
    /// Hands the pages of freed memory back to the system, where a run frees much of it at
    /// once (the partitions of a run gone back to one thread); set by the caller, who owns
    /// the allocator (`Sim::set_give_back`).
    give_back: Option<fn()>,
}

/// Events between two calls of a run's progress callback (and readings of the wall clock).
pub const PROGRESS_EVENTS: u64 = 1 << 14;

/// Where a run is, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub now: Time,
    pub events: u64,
    pub flows_done: usize,
    pub flows: usize,
}

/// The event loop's observer when nothing observes (a function, not a closure: every caller
/// passing it with the same progress shares one compiled loop).
fn unobserved(_: &Sim, _: Time, _: Event) {}

impl Sim<'_> {
    /// Stop the event loop at this wall-clock instant (a command's whole `run.max_wall`
    /// covers set-up and writing too, so the command sets where its loop must stop).
    pub fn set_wall_deadline(&mut self, at: std::time::Instant) {
        self.wall_deadline = Some(at);
    }

    /// Call `f` where the run has just freed much of its memory, for an allocator that keeps
    /// freed pages for reuse to give them back to the system then.
    pub fn set_give_back(&mut self, f: fn()) {
        self.give_back = Some(f);
    }

    /// Run until no events remain or a limit is reached.
    pub fn run(&mut self) {
        self.run_with_progress(|_| true);
    }

    /// Run, calling `progress` every [`PROGRESS_EVENTS`] events (a few hundred times a second:
    /// the caller decides how often to redraw). `progress` returns false to stop the run there
    /// (it is then marked interrupted).
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(&Progress) -> bool) {
        // As the parallel engine's first windows run alone (`parallel::probe_dense`): one
        // compiled loop for both (a second made the compiler call `handle` and the prefetch
        // in the partitions' loop, where it inlines them: R1024 +3 % instructions).
        self.enter_windows();
        self.advance(None, &mut progress, unobserved);
        self.leave_windows();
        self.finish();
    }

    /// End the run where the event loop stopped.
    fn finish(&mut self) {
        self.totals.end_time = self.now;
        self.close_pauses();
    }

    /// Run to the end, showing `observe` each event before it is handled (a measurement's
    /// hook: `parallelism.rs`).
    pub fn run_observed(&mut self, observe: impl FnMut(&Self, Time, Event)) {
        self.advance(None, |_| true, observe);
        self.totals.end_time = self.now;
        self.close_pauses();
    }

    /// Run the events up to and including `until`, then stop, the run still open: a caller
    /// can look at the state there and go on with `run`.
    pub fn run_until(&mut self, until: Time) {
        self.advance(Some(until), |_| true, |_, _, _| {});
    }

    /// The event loop. Once every flow has finished only the packets still moving matter:
    /// idle timers (retransmission, rate increase, samples, refreshes) neither run nor stretch
    /// the run, and a run with nothing left to deliver is never stopped by a limit.
    fn advance(
        &mut self,
        until: Option<Time>,
        mut progress: impl FnMut(&Progress) -> bool,
        mut observe: impl FnMut(&Self, Time, Event),
    ) {
        let limits = &self.variant.limits;
        let max_time = Time::ZERO + limits.time();
        let max_events = limits.events();
        let max_wall = limits.wall();
        let deadline = self
            .wall_deadline
            .unwrap_or_else(|| std::time::Instant::now() + max_wall);
        loop {
            // Without a horizon, pop directly: peeking first would scan the radix heap's
            // lowest bucket twice for every new time.
            let next = match until {
                None => self.queue.pop(),
                Some(u) => match self.queue.peek_time() {
                    Some(t) if t <= u => self.queue.pop(),
                    _ => None,
                },
            };
            let Some((k, ev)) = next else {
                break;
            };
            // In window order the queue's key is the event's place, not its time.
            let t = match self.win {
                None => k,
                Some(_) => match self.windowed_time(k, ev, max_time) {
                    Some(t) => t,
                    None => continue,
                },
            };
            self.prefetch_ahead();
            let done = self.finished == self.flows.len();
            if !parallel::runs_when_done(ev)
                && (done || self.win.is_some())
                && (self.win.is_none() || !self.runs_idle(k, t, ev, done))
            {
                continue;
            }
            if t > max_time {
                if !done {
                    self.stopped = Some(StopReason::MaxTime(max_time));
                    self.now = max_time;
                }
                break;
            }
            if self.totals.events >= max_events {
                self.stopped = Some(StopReason::MaxEvents(max_events));
                break;
            }
            match self.win.as_deref_mut() {
                None if t < self.now => self.totals.causality_violations += 1,
                None => {}
                Some(w) => w.handling(t, ev),
            }
            self.now = t;
            self.totals.events += 1;
            observe(self, t, ev);
            self.handle(ev);
            if self.stopped.is_some() {
                break;
            }
            if self.totals.events % PROGRESS_EVENTS == 0 {
                let p = Progress {
                    now: self.now,
                    events: self.totals.events,
                    flows_done: self.finished,
                    flows: self.flows.len(),
                };
                if !progress(&p) {
                    self.stopped = Some(StopReason::Interrupted);
                    break;
                }
                if std::time::Instant::now() > deadline {
                    self.stopped = Some(StopReason::MaxWall(max_wall));
                    break;
                }
            }
        }
    }

    /// The one call that handles each event.
    #[inline]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxDone(p) => self.on_tx_done(p),
            Event::Arrive(p) => self.on_arrive(p),
            Event::FlowStart(f) => self.on_flow_start(f),
            Event::Resume(p) => self.start_tx(p),
            Event::PfcRefresh(p) => self.on_pfc_refresh(p),
            Event::NicWake(p) => self.on_nic_wake(p),
            Event::Rto(f) => self.on_rto(f),
            Event::CcTimer(f) => self.on_cc_timer(f),
            Event::RxDone(p) => self.on_rx_done(p),
            Event::CreditTick(h) => self.on_credit_tick(h),
            Event::AckTimer(f) => self.on_ack_timer(f),
            Event::CreditWait(f) => self.on_credit_wait(f),
            Event::Probe(f) => self.on_probe_timer(f),
            Event::Fault(i) => self.on_fault(i as usize),
            Event::Reroute => self.net.reroute(),
            Event::Sample => self.on_sample(),
            Event::DeadlockCheck => self.on_deadlock_check(),
            Event::LocalDone(f) => self.on_local_done(f),
            Event::WdCheck(p, prio) => self.on_wd_check(p, prio),
            Event::WdRestore(p, prio) => self.on_wd_restore(p, prio),
            Event::LlrTimer(p) => self.on_llr_timer(p),
            Event::CbfcTick(p) => self.on_cbfc_tick(p),
        }
    }

    /// End of run: close every pause interval still open, for the counters and storms.
    fn close_pauses(&mut self) {
        self.cbfc.finish(self.now);
        for p in 0..self.net.ports.len() {
            let q = PortId(p as u32);
            let (watchdog, peer_watchdog) = (self.storm_time(q), self.storm_time(self.net.peer[p]));
            let now = self.now;
            let port = &mut self.net.ports[p];
            port.xoff.finish(now, peer_watchdog);
            for held in port.pause.finish(now, watchdog) {
                self.record_storm(q, held);
            }
        }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Whether the run went over to window order (`window/`).
    pub fn ran_in_windows(&self) -> bool {
        self.windowed
    }

    /// Out of line, as one function: the key and the queue's push are inlined into it, and
    /// its callers are many (a copy inlined in each crate that instantiates the event loop
    /// would be renamed by the linker's merge, `schedule.NNNN`, a name that moves from build
    /// to build and so falls out of `link/symbol-order.txt`).
    #[inline(never)]
    fn schedule(&mut self, at: Time, ev: Event) {
        if let Event::DeadlockCheck = ev
            && let Some(w) = self.win.as_deref_mut()
        {
            w.add_look(at);
        }
        let k = self.key(at, ev);
        if self.win.is_some() && k < self.queue.now() {
            self.totals.causality_violations += 1;
        }
        self.queue.push(k, ev);
    }

    /// Flow `f` has delivered its last byte: start the flows that waited for it.
    fn completed(&mut self, f: FlowId) {
        self.finished += 1;
        if let Some(part) = self.part.as_deref_mut() {
            part.last_done = part.key;
        }
        if let Some(w) = self.win.as_deref_mut() {
            w.finished(f.idx());
        }
        let now = self.now;
        for i in 0..self.dependents[f.idx()].len() {
            let d = self.dependents[f.idx()][i] as usize;
            let flow = &mut self.flows[d];
            if flow.waiting > 0 {
                flow.waiting -= 1;
                if flow.waiting == 0 {
                    let at = flow.spec.start.max(now + flow.spec.after);
                    self.schedule(at, Event::FlowStart(FlowId(d as u32)));
                }
            }
        }
    }

    /// Copy a frame `p` sent (`tx`) or received to the captures mirroring `p`.
    #[inline]
    fn mirror(&mut self, p: PortId, tx: bool, pkt: &Packet) {
        if self.mirrored[p.idx()] {
            let now = self.now;
            let int = self.carries_int(pkt).then(|| self.net.int.get(pkt.int_ref()));
            for c in self.captures.iter_mut().filter(|c| c.port == p) {
                c.observe(now, tx, pkt, int);
            }
        }
    }

    /// Log an event at port `at` (`PortId::NONE` when none).
    #[inline]
    fn log(&mut self, at: PortId, pkt: &Packet, event: crate::telemetry::Trace, reason: &'static str) {
        let flow = if pkt.is_link_control() {
            FlowId::NONE
        } else {
            pkt.flow
        };
        self.log_row(crate::telemetry::LogRow {
            time: self.now,
            port: at,
            prio: pkt.prio,
            flow,
            event,
            reason,
        });
    }

    /// Log `row` (a partition notes which event logged it, to merge the logs in order).
    #[inline]
    fn log_row(&mut self, row: crate::telemetry::LogRow) {
        if let Some(w) = self.win.as_deref_mut() {
            w.log(row);
            return;
        }
        self.log.push(row);
        if let Some(part) = self.part.as_deref_mut() {
            part.log_keys.push(part.key);
        }
    }

    /// Account a packet leaving the fabric unseen, lost at port `at`.
    fn drop(&mut self, pkt: Packet, reason: DropReason, at: PortId) {
        self.log(at, &pkt, crate::telemetry::Trace::Drop, reason.name());
        self.totals.dropped_packets += 1;
        self.totals.dropped_bytes += pkt.frame as u64;
        self.totals.drops_by_reason[reason as usize] += 1;
        if pkt.kind == Kind::Data {
            self.flows[pkt.flow.idx()].dropped_packets += 1;
        }
        self.release_int(&pkt);
    }

    /// A packet's INT stack goes back to the pool (data, and RoCEv2 ACK/NAKs).
    fn release_int(&mut self, pkt: &Packet) {
        if self.carries_int(pkt) {
            self.net.int.release(pkt.int_ref());
        }
    }

    /// `pkt` refers to an INT stack (data packets, and RoCEv2 ACK/NAKs, whose SACK field
    /// holds it).
    fn carries_int(&self, pkt: &Packet) -> bool {
        let roce_ack = || {
            matches!(pkt.kind, Kind::Ack | Kind::Nak)
                && crate::nic::Protocol::carries_int(&self.flows[pkt.flow.idx()].proto)
        };
        pkt.int_ref() != 0 && (pkt.kind == Kind::Data || roce_ack())
    }

    /// Packets inside the fabric that carry an INT stack.
    pub fn int_in_flight(&self) -> usize {
        if self.net.llr.is_empty() {
            return self.in_fabric().filter(|p| self.carries_int(p)).count();
        }
        // Link level retry: a frame's copy may be on the wire and in its sender's buffer at
        // once, or only in the buffer (discarded, awaiting its replay): count stacks once.
        let buffered = self.net.llr.iter().flatten().flat_map(|l| l.unaccepted());
        let refs: std::collections::HashSet<_> = self
            .in_fabric()
            .chain(buffered)
            .filter(|p| self.carries_int(p))
            .map(|p| p.int_ref())
            .collect();
        refs.len()
    }

    /// After the run, before the report: give back the packet slab when no frame is left in
    /// it, and the pending events, neither of which the report reads. Its rows then reuse
    /// that memory instead of adding to the run's peak (at 65,536 hosts the slab grew to
    /// 537 MB and the event queue to about 150 MB).
    pub fn shed(&mut self) {
        if self.net.pool.is_empty() {
            self.net.pool = crate::pool::PacketPool::default();
        }
        self.queue = EventQueue::new();
    }

    /// LLR ordered sets queued or on the wire (in the packet pool, but not packets).
    pub fn llr_ctl_in_fabric(&self) -> u64 {
        self.in_fabric().filter(|p| p.kind == Kind::LlrCtl).count() as u64
    }

    /// Frames LLR ports hold until their replay buffer has room (outside the packet pool).
    pub fn llr_staged(&self) -> u64 {
        self.net
            .llr
            .iter()
            .flatten()
            .filter(|l| l.staged.is_some())
            .count() as u64
    }

    /// Packets and frame bytes still inside the fabric (queued, serializing, on a wire).
    pub fn in_flight(&self) -> (u64, u64) {
        self.in_fabric()
            .filter(|p| p.kind != Kind::LlrCtl)
            .fold((0, 0), |(n, b), p| (n + 1, b + p.frame as u64))
    }

    /// Every frame inside the fabric: in port queues and service, NIC receive buffers, on
    /// cables.
    fn in_fabric(&self) -> impl Iterator<Item = &Packet> {
        let pool = &self.net.pool;
        let rx = self.rx.iter().flatten().flat_map(|b| b.drain.held(pool));
        let held = self.net.ports.iter().flat_map(|p| p.held(pool)).chain(rx);
        let flying = self.net.links.iter().flat_map(|l| l.in_flight(pool));
        let staged = self.net.llr.iter().flatten().filter_map(|l| l.staged.as_ref());
        held.chain(flying).chain(staged)
    }
}
