//! What a run on several threads spent its wall-clock time on: the windows it ran, each
//! thread's time handling its partition's events and waiting at the windows' ends for the
//! slowest, the time between windows (on one thread: the frames handed over, the samples,
//! the looks for deadlocks, the progress line), and the frames that crossed a cut cable.
//! `sim run` shows it on the run's last line and `summary.json` has it (`parallel`); these
//! are the measured inputs of the projection to more threads in benches/README.md
//! ("Parallelism, measured"). The times differ from run to run; the results do not.

use std::time::Duration;

/// How a run on several threads went (None on `Sim::parallel` for a run on one).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ParallelRun {
    /// The partitions, one thread each.
    pub threads: usize,
    /// Windows run: every thread meets the others at the end of each.
    pub windows: u64,
    /// Each partition's time handling its events, in seconds.
    pub busy_seconds: Vec<f64>,
    /// Each partition's time waiting for the others at the windows' ends, in seconds.
    pub waiting_seconds: Vec<f64>,
    /// Time between windows, on one thread while the others wait, in seconds.
    pub between_windows_seconds: f64,
    /// Frames sent into a cable whose far end is another partition's.
    pub crossed_frames: u64,
    /// The first windows held too little work to pay for their barriers: the rest of the
    /// run went on on one thread.
    pub went_back: bool,
    /// Wall time inside windows (from a window's start to its last partition's return).
    #[serde(skip)]
    in_windows: Duration,
}

impl ParallelRun {
    pub(super) fn new(threads: usize) -> Self {
        ParallelRun {
            threads,
            busy_seconds: vec![0.0; threads],
            waiting_seconds: vec![0.0; threads],
            ..ParallelRun::default()
        }
    }

    /// One round of a window: each partition's time handling events (None: it did not run
    /// in this round), and the wall time from the round's start to the last return.
    pub(super) fn round(&mut self, busy: &[Option<Duration>], wall: Duration) {
        self.in_windows += wall;
        for (i, b) in busy.iter().enumerate() {
            let b = b.unwrap_or_default();
            self.busy_seconds[i] += b.as_secs_f64();
            self.waiting_seconds[i] += wall.saturating_sub(b).as_secs_f64();
        }
    }

    /// The run's windows took `total` from the first to the last: what was not inside a
    /// window was between windows.
    pub(super) fn close(&mut self, total: Duration) {
        self.between_windows_seconds = total.saturating_sub(self.in_windows).as_secs_f64();
    }

    /// For the run's last line: "on 2 threads (34 windows, waiting 7 % of their time, 12.4 %
    /// of the frames' hops crossed between them)", given the run's frame hops.
    pub fn describe(&self, hops: u64) -> String {
        let busy: f64 = self.busy_seconds.iter().sum();
        let waiting: f64 = self.waiting_seconds.iter().sum();
        let share = |a: f64, b: f64| if b > 0.0 { 100.0 * a / b } else { 0.0 };
        format!(
            "on {} threads ({} window{}{}, waiting {:.0} % of their time, {:.1} % of the frames' hops crossed between them)",
            self.threads,
            self.windows,
            if self.windows == 1 { "" } else { "s" },
            if self.went_back {
                ", then on one: too little work a window"
            } else {
                ""
            },
            share(waiting, busy + waiting),
            share(self.crossed_frames as f64, hops as f64)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_waits_for_what_the_slowest_took_beyond_its_own() {
        let mut r = ParallelRun::new(2);
        let ms = Duration::from_millis;
        // A window: partition 0 took 3 ms, partition 1 5 ms, the window 6 ms in all.
        r.round(&[Some(ms(3)), Some(ms(5))], ms(6));
        // A held timer's second round: only partition 1 ran.
        r.round(&[None, Some(ms(1))], ms(1));
        r.windows = 1;
        r.close(ms(10));
        assert!((r.busy_seconds[0] - 0.003).abs() < 1e-12);
        assert!((r.busy_seconds[1] - 0.006).abs() < 1e-12);
        assert!((r.waiting_seconds[0] - 0.004).abs() < 1e-12);
        assert!((r.waiting_seconds[1] - 0.001).abs() < 1e-12);
        assert!((r.between_windows_seconds - 0.003).abs() < 1e-12);
        r.crossed_frames = 25;
        assert_eq!(
            r.describe(200),
            "on 2 threads (1 window, waiting 36 % of their time, 12.5 % of the frames' hops crossed between them)"
        );
    }
}
