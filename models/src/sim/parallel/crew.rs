//! The threads of a run on several: one per partition but the first, started once and kept
//! for the whole run. A window hands each its partition and takes it back when the window
//! is done, so the coordinator holds every partition between windows (a thread started per
//! window cost tens of microseconds, more than a sparse window's work).

use super::Done;
use super::stats::ParallelRun;
use crate::sim::Sim;
use sim_core::Time;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

/// A window for one partition: run it up to `until`.
struct Job<'p, 'a> {
    index: usize,
    sim: &'p mut Sim<'a>,
    until: Time,
    done: Done,
}

/// A partition back from its window, whether it stopped to hold a timer, and its time
/// handling events.
type Report<'p, 'a> = (usize, &'p mut Sim<'a>, bool, Duration);

/// The threads, each waiting for its next window.
pub(super) struct Crew<'p, 'a> {
    jobs: Vec<Sender<Job<'p, 'a>>>,
    back: Receiver<Report<'p, 'a>>,
}

impl<'p, 'a: 'p> Crew<'p, 'a> {
    /// Start `n` threads in `scope`; they end when the crew is dropped.
    pub(super) fn start<'s>(scope: &'s std::thread::Scope<'s, '_>, n: usize) -> Self
    where
        'p: 's,
    {
        let (report, back) = channel::<Report<'p, 'a>>();
        let jobs = (0..n)
            .map(|_| {
                let (tx, rx) = channel::<Job<'p, 'a>>();
                let report = report.clone();
                scope.spawn(move || {
                    for job in rx {
                        let t0 = Instant::now();
                        let held = job.sim.run_window(job.until, job.done);
                        if report.send((job.index, job.sim, held, t0.elapsed())).is_err() {
                            break;
                        }
                    }
                });
                tx
            })
            .collect();
        Crew { jobs, back }
    }

    /// Run every partition's window (only the ones `only` marks, when given), the first on
    /// this thread and each other on its own, timing each in `stats`. Returns which stopped
    /// to hold a timer.
    pub(super) fn run_all(
        &self,
        parts: &mut Vec<&'p mut Sim<'a>>,
        until: Time,
        done: Done,
        only: Option<&[bool]>,
        stats: &mut ParallelRun,
    ) -> Vec<bool> {
        let start = Instant::now();
        let runs = |i: usize| only.is_none_or(|o| o[i]);
        let mut held = vec![false; parts.len()];
        let mut busy = vec![None; parts.len()];
        let mut slots: Vec<Option<&'p mut Sim<'a>>> = parts.drain(..).map(Some).collect();
        let mut out = 0;
        for (i, slot) in slots.iter_mut().enumerate().skip(1).filter(|(i, _)| runs(*i)) {
            let sim = slot.take().expect("a partition");
            let job = Job {
                index: i,
                sim,
                until,
                done,
            };
            self.jobs[i - 1]
                .send(job)
                .expect("a partition's thread is waiting");
            out += 1;
        }
        if runs(0) {
            held[0] = slots[0]
                .as_deref_mut()
                .expect("the first partition")
                .run_window(until, done);
            busy[0] = Some(start.elapsed());
        }
        for _ in 0..out {
            let (i, sim, h, b) = self.back.recv().expect("a partition's thread does not panic");
            slots[i] = Some(sim);
            held[i] = h;
            busy[i] = Some(b);
        }
        stats.round(&busy, start.elapsed());
        parts.extend(slots.into_iter().map(|s| s.expect("every partition is back")));
        held
    }
}
