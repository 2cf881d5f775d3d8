//! What runs between the windows of a run on several threads: the frames that crossed a cut
//! cable, the samples, the look for PFC deadlocks, the idle-timer rule, the limits and the
//! progress line.

use super::stats::ParallelRun;
use super::{DENSITY_WINDOWS, Done, Layout, crew};
use crate::ids::PortId;
use crate::sim::pfc_watch::{check_interval, look};
use crate::sim::{Progress, Sim, StopReason};
use sim_core::{Duration, Time};

/// What runs between windows: the samples, the limits and the progress line.
pub(super) struct Coordinator<'l> {
    pub(super) layout: &'l Layout,
    pub(super) next_sample: Option<Time>,
    /// The next look for PFC deadlocks, and whether one is due (a look skipped once every
    /// flow has finished stays due, and none follows, as on one thread).
    pub(super) next_look: Option<Time>,
    pub(super) look_due: bool,
    /// The time of the last sample taken, and how many were (events of the run).
    pub(super) now: Time,
    pub(super) events: u64,
    /// Where the windows' wall-clock time went.
    pub(super) stats: ParallelRun,
}

impl Coordinator<'_> {
    /// Run windows until the end or a limit. True when the first windows showed too little
    /// work per window to go on cut ([`MIN_EVENTS_PER_WINDOW`]): the partitions stop there.
    pub(super) fn run<'p, 'a: 'p>(
        &mut self,
        parts: &mut Vec<&'p mut Sim<'a>>,
        crew: &crew::Crew<'p, 'a>,
        lookahead: Duration,
        min_events: u64,
        progress: &mut impl FnMut(&Progress) -> bool,
    ) -> bool {
        let mut windows = 0;
        let limits = &parts[0].variant.limits;
        let max_time = Time::ZERO + limits.time();
        let max_events = limits.events();
        let max_wall = limits.wall();
        let deadline = parts[0]
            .wall_deadline
            .unwrap_or_else(|| std::time::Instant::now() + max_wall);
        let flows = parts[0].flows.len();
        let began = std::time::Instant::now();
        loop {
            exchange(parts);
            let next = parts.iter().filter_map(|s| next_time(s)).min();
            let finished: usize = parts.iter().map(|s| s.finished).sum();
            // A look for deadlocks, then a sample, run after every other event of their time
            // (`order.rs`).
            if let Some(t) = self.next_look
                && next.is_none_or(|n| t < n)
                && self.next_sample.is_none_or(|s| t <= s)
                && t <= max_time
            {
                if self.look(parts, t, finished < flows) {
                    break;
                }
                continue;
            }
            if let Some(t) = self.next_sample
                && next.is_none_or(|n| t < n)
                && t <= max_time
            {
                self.take_sample(parts, t, finished < flows);
                continue;
            }
            let Some(start) = next
                .into_iter()
                .chain(self.next_sample)
                .chain(self.next_look)
                .min()
            else {
                break;
            };
            if start > max_time {
                if finished < flows {
                    parts[0].stopped = Some(StopReason::MaxTime(max_time));
                    parts[0].now = max_time;
                }
                break;
            }
            let mut until = Time((start + lookahead).min(max_time + Duration(1)).0 - 1);
            for t in self.next_sample.into_iter().chain(self.next_look) {
                until = until.min(t);
            }
            if let Some(w) = parts[0].win.as_deref() {
                until = w.align(start, until);
            }
            for s in parts.iter_mut() {
                s.watch.check_pending = self.look_due;
            }
            let done = done_by(parts, finished == flows, Done::Ask);
            let held = crew.run_all(parts, until, done, None, &mut self.stats);
            if held.iter().any(|&h| h) {
                // Every partition has run its window but the ones holding a timer: whether
                // every flow had finished by then is known now.
                let finished: usize = parts.iter().map(|s| s.finished).sum();
                let done = done_by(parts, finished == flows, Done::Not);
                crew.run_all(parts, until, done, Some(&held), &mut self.stats);
            }
            self.stats.windows += 1;
            self.time_look(parts);
            let events: u64 = parts.iter().map(|s| s.totals.events).sum::<u64>() + self.events;
            windows += 1;
            if windows == DENSITY_WINDOWS && events < min_events.saturating_mul(DENSITY_WINDOWS) {
                settle(parts);
                self.stats.went_back = true;
                self.stats.close(began.elapsed());
                return true;
            }
            let p = Progress {
                now: until,
                events,
                flows_done: parts.iter().map(|s| s.finished).sum(),
                flows,
            };
            if events >= max_events {
                parts[0].stopped = Some(StopReason::MaxEvents(max_events));
                break;
            }
            if !progress(&p) {
                parts[0].stopped = Some(StopReason::Interrupted);
                break;
            }
            if std::time::Instant::now() > deadline {
                parts[0].stopped = Some(StopReason::MaxWall(max_wall));
                break;
            }
        }
        settle(parts);
        self.stats.close(began.elapsed());
        false
    }

    /// A sample at `t`, every event before it handled: skipped once every flow has finished
    /// (as `Sim::advance` skips it); the next one while flows are unfinished and anything is
    /// pending.
    fn take_sample(&mut self, parts: &mut [&mut Sim], t: Time, unfinished: bool) {
        self.next_sample = None;
        if !unfinished {
            return;
        }
        self.now = t;
        self.events += 1;
        super::merge::sample(parts, t, self.layout);
        if parts.iter().any(|s| s.pending()) {
            // The sampler doubles its interval when it thins its series.
            self.next_sample = Some(t + parts[0].sampler.interval);
        }
    }
}

impl Coordinator<'_> {
    /// After a window: the first XOFF of any partition, while no look for deadlocks was due,
    /// times the next (`Sim::watch_xoff` on one thread). It falls after the window: windows
    /// are no longer than the interval between looks.
    fn time_look(&mut self, parts: &mut [&mut Sim]) {
        if self.look_due {
            return;
        }
        let first = parts
            .iter_mut()
            .filter_map(|s| s.part.as_deref_mut().expect("a partition").first_xoff.take())
            .min();
        if let Some(t) = first {
            self.look_due = true;
            self.set_look(parts, t + check_interval(&parts[0].variant.pfc));
        }
    }

    /// The look for deadlocks at `t` on every partition's ports, every event before it
    /// handled (`Sim::on_deadlock_check`): skipped once every flow has finished. True when
    /// it stopped the run.
    fn look(&mut self, parts: &mut [&mut Sim], t: Time, unfinished: bool) -> bool {
        self.next_look = None;
        if !unfinished {
            return false;
        }
        self.now = t;
        self.events += 1;
        let mut watch = std::mem::take(&mut parts[0].watch);
        let owner = &self.layout.owner;
        let nets: Vec<&crate::network::Network> = parts.iter().map(|s| &s.net).collect();
        let live = |p: PortId| nets[owner[p.idx()] as usize];
        let (again, stop) = look(&mut watch, &parts[0].variant.pfc, t, nets[0], live);
        parts[0].watch = watch;
        if stop.is_some() {
            parts[0].stopped = stop;
            return true;
        }
        self.look_due = again;
        if again {
            self.set_look(parts, t + check_interval(&parts[0].variant.pfc));
        }
        false
    }

    /// The next look for deadlocks is at `t`: in window order, every partition's windows are
    /// cut after it, so that a window ends there.
    fn set_look(&mut self, parts: &mut [&mut Sim], t: Time) {
        self.next_look = Some(t);
        for s in parts.iter_mut() {
            if let Some(w) = s.win.as_deref_mut() {
                w.add_look(t);
            }
        }
    }
}

/// [`Done::At`] the last completion of any partition when every flow has `finished`, else
/// `otherwise`.
fn done_by(parts: &[&mut Sim], finished: bool, otherwise: Done) -> Done {
    let last = parts
        .iter()
        .map(|s| s.part.as_deref().expect("a partition").last_done)
        .max();
    match last {
        Some(k) if finished => Done::At(k),
        _ => otherwise,
    }
}

/// The time of partition `s`'s next event, the frames handed to it included.
fn next_time(s: &Sim) -> Option<Time> {
    let part = s.part.as_deref().expect("a partition");
    let queued = part.held.map(|(t, _)| t).or_else(|| s.queue.peek_time());
    // In window order a key is a place: its half-window's start comes no later than it.
    let queued = match s.win.as_deref() {
        Some(w) => queued.map(|k| w.floor(k)),
        None => queued,
    };
    queued.into_iter().chain(part.inbox_first).min()
}

/// Hand every outbox's frames to the partition at the far end of their cables, which puts
/// them there when its next window starts (`Sim::take_inbox`): vectors change hands, no
/// frame is copied here. An inbox still holding frames (a partition that has not run since)
/// takes the new ones after them. The outboxes get back the inboxes' emptied vectors, with
/// their capacity.
fn exchange(parts: &mut [&mut Sim]) {
    for from in 0..parts.len() {
        for to in 0..parts.len() {
            let part = parts[from].part.as_deref_mut().expect("a partition");
            if part.outbox[to].is_empty() {
                continue;
            }
            let mut frames = std::mem::take(&mut part.outbox[to]);
            let first = std::mem::replace(&mut part.outbox_first[to], Time(u64::MAX));
            let inbox = parts[to].part.as_deref_mut().expect("a partition");
            let held = &mut inbox.inbox[from];
            if held.is_empty() {
                std::mem::swap(held, &mut frames);
            } else {
                held.append(&mut frames);
            }
            inbox.inbox_first = Some(inbox.inbox_first.map_or(first, |t| t.min(first)));
            parts[from].part.as_deref_mut().expect("a partition").outbox[to] = frames;
        }
    }
}

/// [`exchange`], and every frame put on its cable now (before the partitions are put
/// together, or go on as one).
fn settle(parts: &mut [&mut Sim]) {
    exchange(parts);
    for s in parts.iter_mut() {
        s.take_inbox();
    }
}
