//! How much of one run a conservative parallel engine could do at once (see
//! `models/src/sim/parallelism.rs`): the run is made once, sequentially, with every event
//! charged to the partition that would handle it, for several partition counts at once.
//!
//!     cargo bench --bench parallelism -- benches/p8192-uec.toml 2 8 16 64
//!
//! (without arguments: benches/p128-uec.toml at 2, 8, 16 and 64 partitions)
//! For each count: the lookahead (the least time across a cut cable), the cut cables, the
//! synchronisation windows, the events per window, how unevenly the partitions are loaded,
//! the bound on the speedup (barriers free), and the speedup projected with a barrier costing
//! 0.5 us and 2 us of one core's time (converted to events at this run's own speed).

use models::scenario::{Overrides, load};
use models::sim::Sim;
use models::sim::parallelism::{Partitioning, WindowCount};
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    // Without a scenario (as `cargo test --all-targets` runs it): the smallest bench.
    let file = args.first().map_or("benches/p128-uec.toml", |f| f.as_str());
    let counts = args.get(1..).unwrap_or_default();
    // `0`: the hosts in one partition, the switches in the other.
    let parts: Vec<usize> = match counts.iter().map(|a| a.parse()).collect() {
        Ok(p) if !counts.is_empty() => p,
        Ok(_) => vec![2, 8, 16, 64],
        Err(e) => {
            eprintln!("partition counts: {e}");
            std::process::exit(2);
        }
    };
    let scenario = match load(Path::new(file), &Overrides::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    for variant in &scenario.variants {
        let mut sim = Sim::new(&scenario, variant);
        let mut counts: Vec<WindowCount> = parts
            .iter()
            .map(|&n| match n {
                0 => WindowCount::new(Partitioning::hosts_and_fabric(&sim.net)),
                n => WindowCount::new(Partitioning::by_hosts(&sim.net, n)),
            })
            .collect();
        let t0 = Instant::now();
        sim.run_counting(&mut counts);
        let wall = t0.elapsed().as_secs_f64();
        let events = sim.totals.events as f64;
        let ns_per_event = wall * 1e9 / events.max(1.0);
        println!(
            "{} / {}: {} events, {:.1} ns each here (counting included), simulated {:.3} ms",
            scenario.name,
            variant.name,
            sim.totals.events,
            ns_per_event,
            sim.totals.end_time.0 as f64 / 1e9
        );
        println!(
            "{:>5} {:>10} {:>6} {:>9} {:>11} {:>9} {:>9} {:>7} {:>10} {:>10}",
            "parts",
            "lookahead",
            "cut",
            "windows",
            "ev/window",
            "max/mean",
            "crossing",
            "bound",
            "at 0.5us",
            "at 2us"
        );
        for c in &counts {
            let mean = c.events() as f64 / c.cut.parts as f64;
            let max = c.per_part.iter().copied().max().unwrap_or(0) as f64;
            println!(
                "{:>5} {:>10} {:>6} {:>9} {:>11.1} {:>9.2} {:>8.1}% {:>7.2} {:>10.2} {:>10.2}",
                c.cut.parts,
                c.cut
                    .lookahead
                    .map_or("-".to_string(), |l| format!("{:.0} ns", l.0 as f64 / 1e3)),
                c.cut.cut,
                c.windows,
                c.events() as f64 / c.windows.max(1) as f64,
                max / mean.max(1.0),
                100.0 * c.crossings as f64 / c.events().max(1) as f64,
                c.bound(),
                c.projected(500.0 / ns_per_event),
                c.projected(2000.0 / ns_per_event),
            );
        }
    }
}
