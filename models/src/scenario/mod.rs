//! The scenario file: schema, loading, overrides, variants and validation.
//!
//! Loading is two-staged (ripgrep's "low-level then high-level args"): the TOML text is parsed
//! into a tree, `--set` overrides and `--seed` are written into that tree, each variant's
//! overrides are deep-merged over the base, and only then is every tree deserialized into the
//! typed, `deny_unknown_fields` schema below and validated. Any error is reported against the
//! file, line and key it came from (or the `--set` argument), never as a panic.
//!
//! Variants share the base's topology and traffic: they may change anything else (switch,
//! NIC, transport, limits), which is how RoCEv2 and UET are put side by side.

pub mod budget;
pub mod check;
mod ctx;
pub mod error;
mod file_ports;
pub mod limits;
pub mod names;
pub mod overrides;
pub mod port_fec;
pub mod port_llr;
pub mod sonic;
pub mod tiers;
mod traffic;
pub mod variant;
mod wording;

pub use error::{FieldError, Origin, ScenarioError};
pub use limits::RunLimits;
pub use variant::{Resolved, Variant};

use crate::nic::NicConfig;
use crate::pfc::PfcConfig;
use crate::switch::SwitchConfig;
use crate::topology::{Topology, TopologyConfig};
use crate::workload::{FlowConfig, FlowSpec, WorkloadConfig};
use ctx::Ctx;
use error::line_col;
use serde::Deserialize;
use std::path::Path;
use toml::{Table, Value};

/// The file as written (after overrides and variant merging).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)] // documentation for humans; accepted so files can carry it
    description: Option<String>,
    #[serde(default = "default_seed")]
    seed: u64,
    topology: TopologyConfig,
    #[serde(default)]
    switch: SwitchConfig,
    #[serde(default)]
    nic: NicConfig,
    #[serde(default)]
    pfc: PfcConfig,
    #[serde(default)]
    run: RunLimits,
    #[serde(default)]
    workload: Vec<WorkloadConfig>,
    #[serde(default)]
    flow: Vec<FlowConfig>,
    #[serde(default)]
    fault: Vec<crate::fault::FaultConfig>,
    #[serde(default)]
    capture: Vec<crate::capture::CaptureConfig>,
    #[serde(default)]
    telemetry: TelemetryFile,
    #[serde(default)]
    check: check::CheckConfig,
    #[serde(default)]
    #[allow(dead_code)] // merged before deserialization; kept so the key is known
    variant: Vec<Table>,
}

fn default_seed() -> u64 {
    1
}

/// `[telemetry]`: what the plots follow beyond the fabric-wide series.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TelemetryFile {
    /// Flow ids (their order in flows.csv) whose rate and window or DCQCN rate are drawn in
    /// `flow_rates.png`; default: the slowest few, the fastest and every victim.
    #[serde(default)]
    flows: Vec<u32>,
}

/// A validated scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    /// FNV-1a of the file text and the overrides: identifies exactly what was run.
    pub hash: u64,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    /// Collective jobs, with the flows of each iteration.
    pub jobs: Vec<crate::workload::collective::JobSpec>,
    /// Link faults, in time order.
    pub faults: Vec<crate::fault::FaultAction>,
    /// Mirrored ports, written as pcap files.
    pub captures: Vec<crate::capture::CaptureSpec>,
    /// Flows `[telemetry] flows` names, and flows marked `victim` (flow ids).
    pub plotted_flows: Vec<u32>,
    pub victims: Vec<u32>,
    pub variants: Vec<Variant>,
}

impl Scenario {
    /// The node of switch number `switch` (switches numbered in topology order).
    fn switch_node(&self, switch: usize) -> Option<usize> {
        let kind = |(_, n): &(usize, &crate::topology::NodeSpec)| n.kind == crate::topology::NodeKind::Switch;
        Some(self.topology.nodes.iter().enumerate().filter(kind).nth(switch)?.0)
    }

    /// Switch number `switch`'s cables in cable order, each as its index and this switch's
    /// end of it (0: `a`, 1: `b`); None when there is no such switch.
    fn switch_ends(&self, switch: usize) -> Option<Vec<(usize, usize)>> {
        let node = self.switch_node(switch)?;
        let links = self.topology.links.iter().enumerate();
        Some(
            links
                .filter(|(_, l)| l.a.idx() == node || l.b.idx() == node)
                .map(|(i, l)| (i, usize::from(l.a.idx() != node)))
                .collect(),
        )
    }

    /// The cables of switch number `switch` (in topology order), as (rate, propagation
    /// delay) in cable order; None when there is no such switch.
    pub fn switch_cables(&self, switch: usize) -> Option<Vec<(sim_core::BitRate, sim_core::Duration)>> {
        let links = &self.topology.links;
        let ends = self.switch_ends(switch)?;
        Some(
            ends.iter()
                .map(|&(i, _)| (links[i].rate, links[i].delay))
                .collect(),
        )
    }

    /// The FEC each cable of switch number `switch` runs at its end in variant `v`, in cable
    /// order: the scenario's, or what the switches' SONiC files set (`port_fec`); on a cable
    /// whose ends differ, the mode of this switch's end.
    pub fn switch_cable_fec(&self, switch: usize, v: &Variant) -> Option<Vec<crate::fec::Fec>> {
        let ends = self.switch_ends(switch)?;
        let files = port_fec::cables(&self.topology, v); // in cable order
        Some(
            ends.into_iter()
                .map(|(i, end)| {
                    let scenario = self.topology.links[i].errors.fec.fec;
                    let Ok(k) = files.binary_search_by_key(&i, |c| c.link) else {
                        return scenario;
                    };
                    let end = files[k].ends[end].as_ref();
                    files[k].result.or(end.map(|e| e.fec)).unwrap_or(scenario)
                })
                .collect(),
        )
    }

    /// The LLR profile each cable of switch number `switch` runs at its end in variant `v`, in
    /// cable order (None: the cable runs without LLR), as a run lays the cables out: the
    /// scenario's, or what the switches' SONiC files set (`port_llr::apply`).
    pub fn switch_cable_llr(&self, switch: usize, v: &Variant) -> Option<Vec<Option<crate::llr::LlrConfig>>> {
        let ends = self.switch_ends(switch)?;
        let own = port_llr::apply(&self.topology, v);
        let links = &own.as_ref().unwrap_or(&self.topology).links;
        Some(
            ends.into_iter()
                .map(|(i, end)| links[i].llr.as_ref().map(|c| c[end]))
                .collect(),
        )
    }

    /// Flows whose dynamics are sampled whatever else is: the named and the victims.
    pub fn traced_flows(&self) -> Vec<u32> {
        let mut v = [self.plotted_flows.as_slice(), self.victims.as_slice()].concat();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Keys a variant may not override: variants run on identical topology and traffic.
const SHARED_KEYS: &[&str] = &[
    "topology",
    "workload",
    "flow",
    "fault",
    "capture",
    "telemetry",
    "seed",
    "variant",
    "description",
];

/// Command-line adjustments applied before validation.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `key.path=value` strings, as given to `--set`.
    pub set: Vec<String>,
    /// `--seed`, the full u64 range (a TOML integer stops at 2^63 - 1).
    pub seed: Option<u64>,
    /// The `run.max_memory` that applies when the scenario sets none (the command's share of
    /// the machine), with what it is, for messages. None: only an explicit one applies.
    pub max_memory: Option<(u64, String)>,
}

/// Read and validate a scenario file.
pub fn load(path: &Path, ov: &Overrides) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let src = crate::input::read_text(path, crate::input::MAX_CONFIG).map_err(|e| ScenarioError {
        origin: match e.line {
            Some(line) => Origin::File {
                file: file.clone(),
                line,
                column: 1,
            },
            None => Origin::FileOnly(file.clone()),
        },
        key: None,
        message: format!("cannot read the scenario: {}", e.message),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    parse(&src, &file, &stem, ov)
}

/// Validate scenario text. `file` names it in errors; `default_name` is used when it has no `name`.
pub fn parse(src: &str, file: &str, default_name: &str, ov: &Overrides) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx {
        src,
        file,
        set: &ov.set,
    };
    let mut root: Table = toml::from_str(src).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let (line, column) = line_col(src, offset);
        let token: String = src[offset.min(src.len())..]
            .chars()
            .take_while(|c| !matches!(c, ',' | '}' | ']' | '\n' | '#') && !c.is_whitespace())
            .take(40)
            .collect();
        ScenarioError {
            origin: Origin::File {
                file: file.into(),
                line,
                column,
            },
            key: error::key_at(src, offset),
            message: wording::toml_syntax(e.message(), &token),
        }
    })?;
    for arg in &ov.set {
        let cl = |message: String| ScenarioError {
            origin: Origin::CommandLine(arg.clone()),
            key: None,
            message,
        };
        let (segs, value) = overrides::parse_assignment(arg).map_err(cl)?;
        overrides::set(&mut root, &segs, value).map_err(cl)?;
    }
    let variant_tables = take_variants(&mut root, &ctx)?;
    let dir = Path::new(file).parent().unwrap_or(Path::new("."));
    let mut raw = root.clone();
    let base_tiers = tiers::take(&mut raw, dir).map_err(|e| ctx.field(e, None))?;
    let (base_table, base_sonic) = sonic::with_sonic(&raw, dir).map_err(|e| ctx.field(e, None))?;
    let mut base: ScenarioFile = ctx
        .deserialize(Value::Table(base_table), None)
        .map_err(|e| sonic::attribute(e, base_sonic.as_ref(), dir))?;
    if let Some(seed) = ov.seed {
        base.seed = seed;
    }
    let topology = base.topology.build_in(dir).map_err(|e| ctx.field(e, None))?;
    let memory = match (base.run.max_memory, &ov.max_memory) {
        (Some(b), _) => Some((b.0, "run.max_memory")),
        (None, Some((b, why))) => Some((*b, why.as_str())),
        (None, None) => None,
    };
    let (flows, jobs) = traffic::traffic(&base, &topology, dir, memory).map_err(|e| ctx.field(e, None))?;
    let name = base.name.clone().unwrap_or_else(|| default_name.to_string());
    // Its results directory's name by default: checked now, not after the run (its length
    // only where it is used as one, `sim run` without --out).
    names::file_name(&name, usize::MAX).map_err(|m| ctx.field(FieldError::new("name", m), None))?;
    let mut variants = Vec::new();
    if variant_tables.is_empty() {
        let mut v = ctx
            .variant(&name, &base, base_tiers, &topology, None)
            .map_err(|e| sonic::attribute(e, base_sonic.as_ref(), dir))?;
        v.sonic = base_sonic;
        variants.push(v);
    }
    for (i, (vname, over)) in variant_tables.iter().enumerate() {
        let mut merged = root.clone();
        overrides::merge(&mut merged, over);
        let tiers = tiers::take(&mut merged, dir).map_err(|e| ctx.field(e, Some(i)))?;
        let (merged, info) = sonic::with_sonic(&merged, dir).map_err(|e| ctx.field(e, Some(i)))?;
        let file: ScenarioFile = ctx
            .deserialize(Value::Table(merged), Some(i))
            .map_err(|e| sonic::attribute(e, info.as_ref(), dir))?;
        let mut v = ctx
            .variant(vname, &file, tiers, &topology, Some(i))
            .map_err(|e| sonic::attribute(e, info.as_ref(), dir))?;
        v.sonic = info;
        variants.push(v);
    }
    let largest = flows.iter().map(|f| f.size).max().unwrap_or(0);
    for (i, v) in variants.iter().enumerate() {
        let index = (!variant_tables.is_empty()).then_some(i);
        limits::check_state(&flows, v).map_err(|e| ctx.field(e, index))?;
        limits::check_rto(&flows, &topology, v).map_err(|e| ctx.field(e, index))?;
        if largest.div_ceil(v.nic.mtu.0) > u32::MAX as u64 {
            let key = if variant_tables.is_empty() {
                "nic.mtu".to_string()
            } else {
                format!("variant[{i}].nic.mtu")
            };
            let e = FieldError::new(
                key,
                format!("a {largest} B flow at this MTU needs more than 2^32 packets (PSNs)"),
            );
            return Err(ctx.field(e, None));
        }
    }
    let mut hash = fnv(0xcbf2_9ce4_8422_2325, src.as_bytes());
    for s in &ov.set {
        hash = fnv(hash, s.as_bytes());
    }
    if let Some(seed) = ov.seed {
        hash = fnv(hash, &seed.to_le_bytes());
    }
    let faults = crate::fault::resolve(&base.fault, &topology).map_err(|e| ctx.field(e, None))?;
    let captures = crate::capture::resolve(&base.capture, &topology).map_err(|e| ctx.field(e, None))?;
    // Each capture writes `<capture>-<variant>.pcap`.
    for (i, c) in captures.iter().enumerate() {
        for v in &variants {
            let file = format!("{}-{}.pcap", c.name, v.name);
            if let Err(m) = names::file_name(&file, names::MAX_FILE_NAME) {
                let e = FieldError::new(format!("capture[{i}].name"), format!("its file {m}"));
                return Err(ctx.field(e, None));
            }
        }
    }
    // Each collective job writes `<job>-<variant>.nccl.json`.
    for j in &jobs {
        for v in &variants {
            let file = format!("{}-{}.nccl.json", j.name, v.name);
            if let Err(m) = names::file_name(&file, names::MAX_FILE_NAME) {
                let e = FieldError::new("workload", format!("collective {:?}: its file {m}", j.name));
                return Err(ctx.field(e, None));
            }
        }
    }
    if let Some((i, f)) = base
        .telemetry
        .flows
        .iter()
        .enumerate()
        .find(|(_, f)| **f as usize >= flows.len())
    {
        let e = FieldError::new(
            format!("telemetry.flows[{i}]"),
            format!(
                "flow {f} does not exist: the scenario has flows 0..{}",
                flows.len() - 1
            ),
        );
        return Err(ctx.field(e, None));
    }
    let victims = base
        .flow
        .iter()
        .enumerate()
        .filter(|(_, f)| f.victim)
        .map(|(i, _)| i as u32)
        .collect();
    let scenario = Scenario {
        name,
        seed: base.seed,
        hash,
        topology,
        flows,
        jobs,
        faults,
        captures,
        plotted_flows: base.telemetry.flows.clone(),
        victims,
        variants,
    };
    for (i, v) in scenario.variants.iter().enumerate() {
        let index = (!variant_tables.is_empty()).then_some(i);
        check_memory(&scenario, v, ov).map_err(|e| ctx.field(e, index))?;
    }
    let mut scenario = scenario;
    let offered = crate::workload::offered(&base.workload, &scenario.topology);
    for i in 0..scenario.variants.len() {
        let v = &scenario.variants[i];
        let found = check::variant(&scenario.topology, &scenario.flows, &offered, v, &v.silence);
        scenario.variants[i].findings = found;
    }
    Ok(scenario)
}

/// Refuse a variant whose estimated memory (`crate::budget`) is over `run.max_memory` (or
/// the command's default), naming the key that sizes the largest part.
fn check_memory(s: &Scenario, v: &Variant, ov: &Overrides) -> Result<(), FieldError> {
    let (limit, source) = match (v.limits.max_memory, &ov.max_memory) {
        (Some(b), _) => (b.0, "run.max_memory".to_string()),
        (None, Some((b, why))) => (*b, format!("{why}, the default run.max_memory")),
        (None, None) => return Ok(()),
    };
    let needs = budget::estimate(s, v);
    let need = budget::total(&needs);
    if need <= limit {
        return Ok(());
    }
    let big = &needs[0];
    let gib = |b: u64| format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64);
    Err(FieldError::new(
        big.key.clone(),
        format!(
            "this run needs about {} of memory, over the {} allowed ({source}); the largest part is {}: {}. Make it smaller, or raise run.max_memory if the machine has the memory",
            gib(need),
            gib(limit),
            big.what,
            gib(big.bytes)
        ),
    ))
}

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Remove `[[variant]]` from the tree and check each: a unique `name`, no shared keys.
fn take_variants(root: &mut Table, ctx: &Ctx) -> Result<Vec<(String, Table)>, ScenarioError> {
    let Some(v) = root.remove("variant") else {
        return Ok(Vec::new());
    };
    let Value::Array(list) = v else {
        return Err(ctx.field(
            FieldError::new("variant", "expected an array of tables: [[variant]]"),
            None,
        ));
    };
    let mut out: Vec<(String, Table)> = Vec::new();
    for (i, item) in list.into_iter().enumerate() {
        let Value::Table(mut t) = item else {
            return Err(ctx.field(FieldError::new(format!("variant[{i}]"), "expected a table"), None));
        };
        let name = match t.remove("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            _ => {
                return Err(ctx.field(
                    FieldError::new(
                        format!("variant[{i}].name"),
                        "every variant needs a `name` string",
                    ),
                    None,
                ));
            }
        };
        // A variant's name is part of its capture files' names (their length is checked
        // with the captures').
        if let Err(m) = names::file_name(&name, usize::MAX) {
            return Err(ctx.field(FieldError::new(format!("variant[{i}].name"), m), None));
        }
        if out.iter().any(|(n, _)| *n == name) {
            return Err(ctx.field(
                FieldError::new(
                    format!("variant[{i}].name"),
                    format!("duplicate variant name \"{name}\""),
                ),
                None,
            ));
        }
        if let Some(k) = t
            .keys()
            .find(|k| SHARED_KEYS.contains(&k.as_str()) || *k == "name")
        {
            return Err(ctx.field(
                FieldError::new(
                    format!("variant[{i}].{k}"),
                    "variants share the base topology and traffic; set this in the base scenario",
                ),
                None,
            ));
        }
        out.push((name, t));
    }
    Ok(out)
}
