//! `run.max_wall` for the whole command: the event loop stops at [`SOFT`] of it (so the
//! results can still be written), and if set-up or writing is still going at the limit
//! itself, this thread ends the process with exit code 5, leaving any earlier results at
//! `--out` as they were (the staging directory is removed first).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Share of `run.max_wall` the simulation may use; the rest is kept for writing results.
pub const SOFT: f64 = 0.9;

/// What the command is doing, for the message at the limit.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    SettingUp = 0,
    Simulating = 1,
    Writing = 2,
    /// Renaming the results into place: the watchdog waits for it (it takes milliseconds).
    Committing = 3,
}

impl Phase {
    fn text(v: u8) -> &'static str {
        match v {
            0 => "setting up the fabric (routing tables, flows)",
            1 => "simulating",
            2 => "writing the results",
            _ => "putting the results in place",
        }
    }
}

/// A running watchdog; disarmed when dropped.
pub struct Watchdog {
    phase: Arc<AtomicU8>,
    disarmed: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// When the event loop should stop.
    pub soft: Instant,
}

impl Watchdog {
    /// Arm for a command started at `started` with `limit` of wall-clock time (`key` names the
    /// setting in messages); `staging` is removed if the limit strikes.
    pub fn arm(started: Instant, limit: Duration, staging: PathBuf, out: PathBuf) -> Watchdog {
        let phase = Arc::new(AtomicU8::new(Phase::SettingUp as u8));
        let disarmed = Arc::new(AtomicBool::new(false));
        let hard = started + limit;
        let soft = started + limit.mul_f64(SOFT);
        let (p, d) = (phase.clone(), disarmed.clone());
        let thread = std::thread::Builder::new()
            .name("max_wall".into())
            .spawn(move || {
                loop {
                    let now = Instant::now();
                    if d.load(Ordering::SeqCst) {
                        return;
                    }
                    if now >= hard && p.load(Ordering::SeqCst) != Phase::Committing as u8 {
                        break;
                    }
                    std::thread::park_timeout(hard.saturating_duration_since(now).max(Duration::from_millis(10)));
                }
                errln!(
                    "\nerror: run.max_wall ({:.1?}) reached while {}; stopped without writing results (anything at {} is as it was)",
                    limit,
                    Phase::text(p.load(Ordering::SeqCst)),
                    out.display()
                );
                let _ = std::fs::remove_dir_all(&staging);
                std::process::exit(crate::exit::LIMIT as i32);
            })
            .ok();
        Watchdog {
            phase,
            disarmed,
            thread,
            soft,
        }
    }

    pub fn enter(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::SeqCst);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.disarmed.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
