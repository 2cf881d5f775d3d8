//! `sim export sonic`: a scenario's switch settings as the `config_db.json` fragment a SONiC
//! box would load (`models::sonic::export`).

use crate::exit::BadInput;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use models::Overrides;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand, Debug)]
pub enum ExportCommand {
    /// SONiC config_db.json tables: BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG, BUFFER_QUEUE,
    /// PORT_QOS_MAP, DSCP_TO_TC_MAP, WRED_PROFILE, QUEUE, SCHEDULER, PFC_WD, PORT,
    /// CABLE_LENGTH.
    Sonic(SonicArgs),
}

#[derive(Args, Debug)]
pub struct SonicArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// The variant whose settings to write [default: the first].
    #[arg(long)]
    pub variant: Option<String>,
    /// Which switch, by name (its ports and their speeds) [default: the first].
    #[arg(long)]
    pub switch: Option<String>,
    /// Override a scenario key before validation, e.g. --set switch.buffer=4MiB.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Write to this file (which must not exist yet) [default: standard output].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(cmd: &ExportCommand) -> Result<ExitCode> {
    let ExportCommand::Sonic(args) = cmd;
    let ov = Overrides {
        set: args.set.clone(),
        seed: None,
        max_memory: None,
    };
    let scenario = models::load(&args.file, &ov)?;
    let v = match &args.variant {
        None => &scenario.variants[0],
        Some(name) => scenario
            .variants
            .iter()
            .find(|v| &v.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
                BadInput::new(format!(
                    "--variant {name}: no such variant (it has: {})",
                    names.join(", ")
                ))
            })?,
    };
    let switches: Vec<&str> = scenario
        .topology
        .nodes
        .iter()
        .filter(|n| n.kind == models::topology::NodeKind::Switch)
        .map(|n| n.name.as_str())
        .collect();
    let index = match &args.switch {
        None => 0,
        Some(name) => switches.iter().position(|s| s == name).ok_or_else(|| {
            BadInput::new(format!(
                "--switch {name}: no such switch (it has: {})",
                switches.join(", ")
            ))
        })?,
    };
    if switches.is_empty() {
        return Err(BadInput::new(format!("{}: the topology has no switch", args.file.display())).into());
    }
    let cables = scenario
        .switch_cables(index)
        .ok_or_else(|| BadInput::new(format!("{}: no switch number {index}", args.file.display())))?;
    let fec = scenario.switch_cable_fec(index, v).unwrap_or_default();
    let llr = scenario.switch_cable_llr(index, v).unwrap_or_default();
    if llr.iter().flatten().any(|c| !c.re_init_on_flush) {
        errln!(
            "warning: llr re_init_on_flush = false: SONiC's llrorch sets RE_INIT_ON_FLUSH on every LLR profile it creates, so the box re-initialises after a flush where the run stays in FLUSH"
        );
    }
    let (sw, pfc) = v.switch_settings(index);
    // SONiC's config_db has no CBFC table: a priority the run keeps lossless by credits is
    // exported as the closest thing a box runs, a PFC priority with the headroom its cable
    // needs, and the user is told (my decision; leaving it out would make it lossy).
    let mut pfc = pfc.clone();
    let credited = pfc.cbfc_mask();
    if !credited.is_empty() {
        let list: Vec<String> = credited.iter().map(|p| p.to_string()).collect();
        errln!(
            "warning: pfc.mode = \"cbfc\": priority {} run(s) CBFC, which config_db.json has no table for; exported as PFC priorities (pfc_enable, lossless profiles with the headroom each cable needs)",
            list.join(", ")
        );
        pfc.mode = models::cbfc::FlowControl::Pfc;
        pfc.cbfc.priorities = None;
    }
    let json = models::sonic::export::export(sw, &pfc, &cables, &fec, &llr, v.max_frame())
        .map_err(|e| BadInput::new(format!("{}: variant {}: {e}", args.file.display(), v.name)))?;
    let text = serde_json::to_string_pretty(&json)? + "\n";
    match &args.out {
        None => std::io::stdout().write_all(text.as_bytes())?,
        Some(path) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| {
                    BadInput::new(format!(
                        "--out {}: {e} (sim does not replace a file it did not write)",
                        path.display()
                    ))
                })?;
            f.write_all(text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
