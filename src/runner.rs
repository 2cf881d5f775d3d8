//! Running a scenario's variants: in parallel on `jobs` threads (`sim run --jobs`), with one
//! progress line per running variant. Each variant is its own `Sim`, built and run on the
//! thread that took it, seeded from the scenario alone, so a variant's results do not depend
//! on which thread ran it or what ran beside it; reports come back in the scenario's order,
//! so the results directory is byte-identical to a sequential run's (apart from wall times).

use crate::output::{self, Cut};
use crate::telemetry::Telemetry;
use crate::watchdog::{Phase, Watchdog};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use models::{Scenario, Sim, VariantReport};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// The cores this process may use (at least one): the default of `--jobs`.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many variants to run at once: `asked` (default: the cores this process may use),
/// no more than there are variants, and no more than the memory allows: the largest
/// estimated variants (`models::budget`) that run together must fit in the run's memory
/// limit (`run.max_memory`, or the machine's default). Returns the count and, when memory
/// lowered it, why.
pub fn jobs_for(s: &Scenario, asked: Option<usize>, limit: Option<u64>) -> (usize, Option<String>) {
    let want = asked.unwrap_or_else(cores).clamp(1, s.variants.len().max(1));
    let needs = memory_needs(s);
    let limit = memory_limit(s, limit);
    let Some(limit) = limit else {
        return (want, None);
    };
    let mut fit = 0;
    let mut sum = 0u64;
    for &need in needs.iter().take(want) {
        sum = sum.saturating_add(need);
        if sum > limit && fit > 0 {
            break;
        }
        fit += 1;
    }
    if fit == want {
        return (want, None);
    }
    let top: u64 = needs.iter().take(fit + 1).sum();
    (
        fit,
        Some(format!(
            "running {fit} variant(s) at a time, not {want}: {} at once would need about {}, over the {} memory limit (run.max_memory)",
            fit + 1,
            gib(top),
            gib(limit)
        )),
    )
}

/// Threads for each variant's run, and whether the command line asked for them (a run that
/// cannot be cut then says why).
#[derive(Debug, Clone, Copy)]
pub struct Threads {
    pub n: usize,
    pub asked: bool,
}

impl Threads {
    /// One thread, as sweeps run each point.
    pub const ONE: Threads = Threads { n: 1, asked: false };
}

/// Threads for each variant's run when `jobs` variants run at once: `asked`, else the cores
/// left to each (at least one); lowered while the variants running together, each holding
/// one copy of its state per thread (`models::sim` cuts a run into whole copies), would not
/// fit in the memory limit. Returns the count and, when memory lowered it, why.
pub fn threads_for(
    s: &Scenario,
    jobs: usize,
    asked: Option<usize>,
    limit: Option<u64>,
) -> (usize, Option<String>) {
    let jobs = jobs.clamp(1, s.variants.len().max(1));
    let want = asked.unwrap_or_else(|| (cores() / jobs).max(1));
    let needs = memory_needs(s);
    let together: u64 = needs.iter().take(jobs).sum();
    let limit = memory_limit(s, limit);
    let fit = match limit {
        Some(l) if together > 0 => ((l / together) as usize).clamp(1, want),
        _ => want,
    };
    if fit == want {
        return (want, None);
    }
    (
        fit,
        Some(format!(
            "each variant runs on {fit} thread(s), not {want}: every thread holds a copy of its run, and {want} copies would need about {}, over the {} memory limit (run.max_memory)",
            gib(together.saturating_mul(want as u64)),
            gib(limit.unwrap_or_default())
        )),
    )
}

/// Each variant's estimated memory (`models::budget`), largest first.
fn memory_needs(s: &Scenario) -> Vec<u64> {
    let mut needs: Vec<u64> = s
        .variants
        .iter()
        .map(|v| models::budget::total(&models::budget::estimate(s, v)))
        .collect();
    needs.sort_unstable_by_key(|&n| std::cmp::Reverse(n));
    needs
}

/// The run's memory limit: the least `run.max_memory` of its variants, else `machine`'s.
fn memory_limit(s: &Scenario, machine: Option<u64>) -> Option<u64> {
    s.variants
        .iter()
        .filter_map(|v| v.limits.max_memory.map(|b| b.0))
        .min()
        .or(machine)
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// The wall-clock time a run of `s` may take: the least of its variants' `run.max_wall`.
pub fn max_wall(s: &Scenario) -> std::time::Duration {
    s.variants
        .iter()
        .map(|v| v.limits.wall())
        .min()
        .unwrap_or_default()
}

/// Run every variant of `scenario` on up to `jobs` threads, with progress on a terminal
/// unless `quiet`, until `stop` is set (running variants are cut short, the rest are not
/// run) or the watchdog's soft deadline passes (likewise).
pub fn simulate(
    scenario: &Scenario,
    quiet: bool,
    jobs: usize,
    threads: Threads,
    stop: &AtomicBool,
    watchdog: Option<&Watchdog>,
) -> (Vec<VariantReport>, Vec<Telemetry>, Cut) {
    // Without a watchdog (a sweep's point), the scenario's own max_wall from now.
    let soft = watchdog.map_or_else(
        || Instant::now() + max_wall(scenario).mul_f64(crate::watchdog::SOFT),
        |w| w.soft,
    );
    let n = scenario.variants.len();
    let multi = MultiProgress::with_draw_target(if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    });
    let next = AtomicUsize::new(0);
    let setting_up = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<(VariantReport, Telemetry)>>> = Mutex::new((0..n).map(|_| None).collect());
    let cut = Mutex::new(Cut::default());
    let worker = || {
        loop {
            // Variants are taken in order, so when one finds the run stopped, every later
            // one is not run either, as in a sequential run.
            let i = next.fetch_add(1, Ordering::SeqCst);
            if i >= n {
                return;
            }
            let variant = &scenario.variants[i];
            let why = if stop.load(Ordering::Relaxed) {
                Some("interrupted (Ctrl-C)".to_string())
            } else if Instant::now() >= soft {
                Some(format!(
                    "stopped by run.max_wall ({:.1?}) before every variant ran",
                    variant.limits.wall()
                ))
            } else {
                None
            };
            if let Some(why) = why {
                next.store(n, Ordering::SeqCst);
                let mut c = cut.lock().expect("no panics while held");
                c.stopped = Some(why);
                c.variants_not_run = scenario.variants[i..].iter().map(|v| v.name.clone()).collect();
                return;
            }
            let phase = |p: Phase| {
                if let Some(w) = watchdog {
                    w.enter(p);
                }
            };
            let label = format!("[{}/{n}] {}", i + 1, variant.name);
            let bar = progress(&multi, &label, variant.limits.max_time);
            let t0 = Instant::now();
            setting_up.fetch_add(1, Ordering::SeqCst);
            phase(Phase::SettingUp);
            let mut sim = Sim::with_threads(scenario, variant, threads.n);
            sim.set_wall_deadline(soft);
            #[cfg(target_os = "linux")]
            sim.set_give_back(crate::alloc::give_back);
            if setting_up.fetch_sub(1, Ordering::SeqCst) == 1 {
                phase(Phase::Simulating);
            }
            if let Some(why) = run_one(&mut sim, scenario, threads.n, &label, &bar, stop)
                && threads.asked
                && threads.n > 1
                && !quiet
            {
                multi.suspend(|| errln!("note: {label} runs on one thread: {why}"));
            }
            let wall = t0.elapsed().as_secs_f64();
            sim.shed();
            #[cfg(target_os = "linux")]
            crate::alloc::give_back();
            let report = VariantReport::new(&sim, wall);
            // A finished variant keeps its line, with what it came to.
            let s = &report.summary;
            bar.set_style(ProgressStyle::with_template("{msg}").expect("static template"));
            bar.finish_with_message(format!(
                "{label}: {} simulated, {}/{} flows done in {wall:.2} s{}{}",
                output::human_ns(s.simulated_ns),
                s.flows_completed,
                s.flows_total,
                s.parallel
                    .as_ref()
                    .map_or(String::new(), |p| format!(" {}", p.describe(s.packet_hops))),
                s.incomplete
                    .as_deref()
                    .map_or(String::new(), |why| format!(" ({why})"))
            ));
            let telemetry = Telemetry::take(&mut sim);
            drop(sim);
            #[cfg(target_os = "linux")]
            crate::alloc::give_back();
            done.lock().expect("no panics while held")[i] = Some((report, telemetry));
        }
    };
    if jobs <= 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for j in 0..jobs.min(n) {
                std::thread::Builder::new()
                    .name(format!("variant-{j}"))
                    .spawn_scoped(s, worker)
                    .expect("spawning a variant thread");
            }
        });
    }
    if !multi.is_hidden() {
        // The finished lines stay; what follows starts below them.
        errln!("");
    }
    let mut cut = cut.into_inner().expect("threads joined");
    let (reports, telemetry): (Vec<VariantReport>, Vec<Telemetry>) = done
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .flatten()
        .unzip();
    // The run was interrupted if a variant was (its own summary says so) or one was not
    // run; a Ctrl-C that came after the last variant finished cut nothing: the results are
    // complete, and `stopped` stays null, as the exit code does.
    let interrupted = reports
        .iter()
        .any(|r| r.summary.ending == models::report::Ending::Interrupted);
    if interrupted && cut.stopped.is_none() {
        cut.stopped = Some("interrupted (Ctrl-C)".into());
    }
    (reports, telemetry, cut)
}

/// The event loop of one variant on up to `threads` threads, its progress line redrawn on
/// the wall clock five times a second, whatever the event rate. Returns why it ran on one
/// thread when it did.
fn run_one<'a>(
    sim: &mut Sim<'a>,
    scenario: &'a Scenario,
    threads: usize,
    name: &str,
    bar: &ProgressBar,
    stop: &AtomicBool,
) -> Option<String> {
    let (mut drawn, mut drawn_events) = (Instant::now(), 0u64);
    sim.run_threads(scenario, threads, |p| {
        let now = Instant::now();
        let since = now.duration_since(drawn).as_secs_f64();
        if since >= 0.2 {
            let rate = (p.events - drawn_events) as f64 / since;
            bar.set_message(format!(
                "{name}: {} simulated, {}/{} flows done, {:.1} M events/s",
                output::human_ns(p.now.as_ns_f64()),
                p.flows_done,
                p.flows,
                rate / 1e6
            ));
            bar.set_position(p.now.0 / 1_000_000);
            (drawn, drawn_events) = (now, p.events);
        }
        !stop.load(Ordering::Relaxed)
    })
}

/// One variant's progress line (`label`: its position and name): a bar up to `run.max_time`
/// when the scenario sets one, with the time left until it would be reached at the pace so
/// far (the run ends sooner when its flows finish), a spinner otherwise.
fn progress(multi: &MultiProgress, name: &str, max_time: Option<sim_core::Duration>) -> ProgressBar {
    let bar = multi.add(match max_time {
        Some(d) => ProgressBar::new(d.0 / 1_000_000),
        None => ProgressBar::no_length(),
    });
    let style = match max_time {
        Some(_) => ProgressStyle::with_template(
            "{msg} [{bar:30}] of {len} us (run.max_time), ends within about {left} [{elapsed}]",
        )
        .map(|s| s.with_key("left", time_left)),
        None => ProgressStyle::with_template("{spinner} {msg} [{elapsed}]"),
    };
    bar.set_style(style.expect("static template"));
    bar.set_message(format!("{name}: setting up"));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// The wall time until simulated time reaches the bar's end at the pace so far ("?" before
/// any simulated time has passed).
fn time_left(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let (pos, len) = (state.pos(), state.len().unwrap_or(0));
    let _ = if pos == 0 {
        write!(w, "?")
    } else {
        let secs = state.elapsed().as_secs_f64() * len.saturating_sub(pos) as f64 / pos as f64;
        write!(
            w,
            "{}",
            indicatif::HumanDuration(std::time::Duration::from_secs_f64(secs.min(1e9)))
        )
    };
}
