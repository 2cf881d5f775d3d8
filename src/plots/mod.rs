//! PNG plots of a run, drawn with plotters into an RGB buffer and encoded with `png` at its
//! best compression. Text uses the embedded DejaVu Sans, so plots render on machines without
//! system fonts.
//!
//! Rules every plot keeps: a plot with nothing to show is not written (the run says which
//! were left out and why); axes carry units, scaled to the data's magnitude; each variant has
//! one colour, the same in every plot of a run ([`variant_color`]); series within one panel
//! get distinct colours ([`series_color`]); axes whose data spans decades are logarithmic.
//!
//! One file per family: `fct.rs` (completion times), `time.rs` (goodput, ECN over time),
//! `queues.rs` (queues against their thresholds), `flows.rs` (per-flow dynamics;
//! `identical.rs` names its flows drawn alike), `fabric.rs` (link utilisation, ECMP balance;
//! `port_rows.rs` the utilisation's rows), `pauses.rs` (the pause timeline), `pause_graph.rs`
//! (pause propagation on the topology), `compare.rs` (variants side by side); `chart.rs`
//! holds the line chart and the unit scales they share, `legend.rs` its legends (placed where
//! the data is not), `text.rs` tick labels and headings, `pfc_buffers.rs` the lossless
//! buffers against XOFF and headroom.

mod chart;
mod compare;
mod fabric;
mod fct;
pub mod flows;
mod identical;
mod legend;
mod pause_graph;
mod pauses;
mod pfc_buffers;
mod port_rows;
mod queues;
mod text;
mod time;

pub use chart::{Quantity, Scale, e, heading};
pub use compare::compare;

use crate::files;
use crate::telemetry::Telemetry;
use anyhow::{Result, anyhow};
use models::{Scenario, VariantReport};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// Size of every plot, pixels.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 700;

/// Which plots a command writes (`--plots`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Level {
    /// No plot (the CSV and JSON results only).
    None,
    /// `compare.png`, `fct_cdf.png`, `throughput.png`, `queues.png`.
    Summary,
    /// Every plot that has something to show.
    All,
}

/// Variant colours (Tableau 10), the same variant the same colour in every plot of a run.
const VARIANT: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Series colours within one panel (ColorBrewer Dark2 then Set1): distinct from each other.
const SERIES: [RGBColor; 12] = [
    RGBColor(27, 158, 119),
    RGBColor(217, 95, 2),
    RGBColor(117, 112, 179),
    RGBColor(231, 41, 138),
    RGBColor(102, 166, 30),
    RGBColor(230, 171, 2),
    RGBColor(166, 118, 29),
    RGBColor(102, 102, 102),
    RGBColor(228, 26, 28),
    RGBColor(55, 126, 184),
    RGBColor(77, 175, 74),
    RGBColor(152, 78, 163),
];

/// The colour of variant `i` of a run.
pub fn variant_color(i: usize) -> RGBColor {
    VARIANT[i % VARIANT.len()]
}

/// The colour of series `i` within a panel.
pub fn series_color(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

/// One variant's run, as the plots need it.
pub struct VariantData<'a> {
    pub report: &'a VariantReport,
    pub telemetry: &'a Telemetry,
    pub variant: &'a models::scenario::Variant,
    /// Its index in the run (its colour).
    pub index: usize,
}

impl VariantData<'_> {
    /// The variant's name as plots show it (cut to a length a legend can hold).
    pub fn name(&self) -> std::borrow::Cow<'_, str> {
        crate::console::short(&self.report.summary.name)
    }
    pub fn color(&self) -> RGBColor {
        variant_color(self.index)
    }
}

/// A whole run, as the plots need it.
pub struct Run<'a> {
    pub title: String,
    pub scenario: &'a Scenario,
    pub variants: Vec<VariantData<'a>>,
}

/// What a plot did: written, or left out and why.
pub enum Outcome {
    Written,
    Skipped(String),
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Draw into a fresh white image of the standard size and write it as PNG.
pub(crate) fn png(path: &Path, draw: impl FnOnce(&Area) -> Result<()>) -> Result<()> {
    png_sized(path, (WIDTH, HEIGHT), draw)
}

/// Draw into a fresh white image of `size` and write it as PNG (best compression: plots are
/// large flat areas, which deflate well; adaptive filtering picks the best filter per row).
pub(crate) fn png_sized(path: &Path, size: (u32, u32), draw: impl FnOnce(&Area) -> Result<()>) -> Result<()> {
    register_font();
    let (w, h) = size;
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        draw(&root)?;
        root.present()
            .map_err(|err| anyhow!("drawing {}: {err}", path.display()))?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        enc.write_header()?.write_image_data(&buf)?;
    }
    files::write(path, &bytes)
}

/// Every plot of `run` that `level` asks for and that has something to show, drawn on up to
/// `jobs` threads (each plot is its own file, so the files are the same whatever `jobs`).
/// Returns the plots left out, each with why; a line on stderr names them (unless `quiet`).
pub fn all(dir: &Path, run: &Run, level: Level, quiet: bool, jobs: usize) -> Result<Vec<(String, String)>> {
    type Plot = fn(&Path, &Run) -> Result<Outcome>;
    let summary: [(&str, Plot); 3] = [
        ("fct_cdf.png", fct::cdf),
        ("throughput.png", time::throughput),
        ("queues.png", queues::queues),
    ];
    let rest: [(&str, Plot); 8] = [
        ("fct_by_size.png", fct::by_size),
        ("ecn.png", time::ecn),
        ("flow_rates.png", flows::flow_rates),
        ("link_utilisation.png", fabric::link_utilisation),
        ("ecmp_balance.png", fabric::ecmp_balance),
        ("pauses.png", pauses::pauses),
        ("pause_graph.png", pause_graph::pause_graph),
        ("pfc_buffers.png", pfc_buffers::pfc_buffers),
    ];
    let chosen: Vec<&(&str, Plot)> = match level {
        Level::None => return Ok(Vec::new()),
        Level::Summary => summary.iter().collect(),
        Level::All => summary.iter().chain(rest.iter()).collect(),
    };
    let draw = |&&(file, plot): &&(&str, Plot)| plot(&dir.join(file), run);
    let pool = (jobs > 1)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(jobs.min(chosen.len()))
                .build()
                .ok()
        })
        .flatten();
    let outcomes: Vec<Result<Outcome>> = match pool {
        Some(pool) => {
            use rayon::prelude::*;
            pool.install(|| chosen.par_iter().map(draw).collect())
        }
        // One at a time (asked for, or no threads to be had): stop at the first failure.
        None => {
            let mut out = Vec::new();
            for c in &chosen {
                let r = draw(c);
                let failed = r.is_err();
                out.push(r);
                if failed {
                    break;
                }
            }
            out
        }
    };
    let mut skipped = Vec::new();
    // In plot order, whatever order the threads finished in: the first failure is reported.
    for (&&(file, _), outcome) in chosen.iter().zip(outcomes) {
        if let Outcome::Skipped(why) = outcome? {
            skipped.push((file.to_string(), why));
        }
    }
    if !skipped.is_empty() && !quiet {
        // One short line; report.md and report.html say why for each.
        let names: Vec<&str> = skipped.iter().map(|(f, _)| f.trim_end_matches(".png")).collect();
        errln!(
            "{} not written, nothing to show (report.md says why): {}",
            crate::console::count(skipped.len() as u64, "plot", "plots"),
            names.join(", ")
        );
    }
    Ok(skipped)
}
