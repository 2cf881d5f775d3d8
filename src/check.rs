//! `sim check`: the configuration check on its own, nothing simulated; and the findings as
//! every command prints them (standard error), grouped across the variants that share them.

use crate::exit;
use anyhow::Result;
use clap::Args;
use models::check::Level;
use models::{Overrides, Scenario};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// Override a scenario key before validation, e.g. --set switch.dscp_to_tc.26=3.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print warnings only, not notes.
    #[arg(long)]
    pub warnings_only: bool,
}

/// `sim check FILE`: exit 0 when nothing would misbehave, `exit::FINDINGS` when a warning
/// is found, 2 when the file does not load.
pub fn run(args: &CheckArgs) -> Result<ExitCode> {
    let ov = Overrides {
        set: args.set.clone(),
        seed: None,
        max_memory: None,
    };
    let scenario = models::load(&args.file, &ov)?;
    let (warnings, notes) = print(&scenario, !args.warnings_only);
    let variants = scenario.variants.len();
    let silenced: usize = scenario
        .variants
        .iter()
        .map(|v| v.silence.len())
        .max()
        .unwrap_or(0);
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    outln!(
        "{}: {}, {} in {}{}",
        args.file.display(),
        plural(warnings, "warning"),
        plural(notes, "note"),
        plural(variants, "variant"),
        if silenced > 0 {
            format!(" ({} silenced by check.silence)", plural(silenced, "id"))
        } else {
            String::new()
        }
    );
    Ok(ExitCode::from(if warnings > 0 { exit::FINDINGS } else { 0 }))
}

/// Print every variant's findings on standard error, each once with the variants it holds
/// for (warnings in full, notes in one line each unless `notes` is false). Returns how many
/// distinct warnings and notes there were.
pub fn print(scenario: &Scenario, notes: bool) -> (usize, usize) {
    let mut seen = by_variant(
        scenario
            .variants
            .iter()
            .flat_map(|v| v.findings.iter().map(move |f| (f, v.name.as_str()))),
    );
    seen.sort_by(|a, b| a.0.cmp(b.0));
    let all = scenario.variants.len();
    let mut counts = (0, 0);
    for (f, names) in &seen {
        let at = match &f.file {
            Some(file) => format!("{} in {file}", f.key),
            None => f.key.clone(),
        };
        let whose = if all > 1 && names.len() < all {
            format!(
                " (variant{} {})",
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            )
        } else {
            String::new()
        };
        match f.level {
            Level::Warning => {
                counts.0 += 1;
                errln!("warning[{}]: {at}{whose}", f.id);
                errln!("  {}", f.problem);
                errln!("  fix: {}", f.fix);
                errln!("  (silence: check.silence = [\"{}\"])", f.id);
            }
            Level::Note => {
                counts.1 += 1;
                if notes {
                    errln!("note[{}]: {at}{whose}: {}", f.id, f.problem);
                }
            }
        }
    }
    counts
}

/// Each distinct finding once, in first-seen order, with the variants that have it.
pub fn by_variant<'a, T: PartialEq>(
    items: impl IntoIterator<Item = (&'a T, &'a str)>,
) -> Vec<(&'a T, Vec<&'a str>)> {
    let mut out: Vec<(&T, Vec<&str>)> = Vec::new();
    for (f, name) in items {
        match out.iter_mut().find(|(g, _)| *g == f) {
            Some((_, names)) => names.push(name),
            None => out.push((f, vec![name])),
        }
    }
    out
}
