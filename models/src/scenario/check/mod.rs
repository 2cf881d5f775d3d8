//! The configuration check: what in a variant's settings will not do what the user meant,
//! found before anything runs (`sim check FILE`, and before every `sim run`).
//!
//! Each [`Finding`] names the key that causes it (or the SONiC JSON path it was imported
//! from, with its file), says what will happen in the run and how to fix it, and has an id
//! the scenario can silence (`check.silence = ["<id>"]`). Warnings are settings that will
//! not do what they were written for (RoCEv2 in a lossy class behind PFC, headroom short of
//! its cable); notes are what the model does not act on (a SONiC table it does not read).
//!
//! The checks, one file per subject:
//! - `qos.rs`: the class RoCEv2 data lands in at the switches against the PFC priorities;
//!   PFC priorities nothing uses; DCQCN without ECN marking.
//! - `buffers.rs`: headroom against what each cable delivers after XOFF; ECN thresholds
//!   against the queue at which PFC pauses (lossless) or the queue limit (lossy).
//! - `cables.rs`: cables whose ends run different FEC modes (they never come up).
//! - `load.rs`: what an open-loop workload offers each edge switch's cables to the rest of
//!   the fabric, and each host's cable, against what they carry.
//! - `ports.rs`: a SONiC file's `PORT` table against the simulated switches' cables; the
//!   tables and fields the import does not act on, one note per table.

mod buffers;
mod cables;
mod cbfc;
mod load;
mod ports;
mod qos;

use crate::pfc::PfcConfig;
use crate::scenario::sonic::SonicInfo;
use crate::switch::SwitchConfig;
use serde::{Deserialize, Serialize};

/// How much a finding matters to the run's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A setting that will not do what it was written for (`sim check` exits non-zero).
    Warning,
    /// What the model does not act on: the run is still what the settings say.
    Note,
}

/// One thing the check found in a variant's settings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    pub level: Level,
    /// Stable id, the word `check.silence` takes.
    pub id: &'static str,
    /// The scenario key (`switch.dscp_to_tc.26`), or the SONiC JSON path
    /// (`DSCP_TO_TC_MAP.AZURE.26`) when the value came from a SONiC file.
    pub key: String,
    /// The SONiC file `key` is a path in (None: a scenario key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What will happen in the run.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

/// Every finding's id, with what it is about (`check.silence` refuses other words).
pub const IDS: &[(&str, &str)] = &[
    (
        "roce-lossy-class",
        "RoCEv2 data classified into a class without PFC while PFC is on",
    ),
    (
        "pfc-idle-priority",
        "a PFC priority no traffic uses, reserving headroom for nothing",
    ),
    ("dcqcn-without-ecn", "DCQCN or DCTCP with no switch marking ECN"),
    (
        "headroom-short",
        "PFC headroom below what the cable delivers after XOFF",
    ),
    (
        "ecn-after-pfc",
        "an ECN threshold above the queue at which PFC pauses one sender",
    ),
    (
        "ecn-above-queue-limit",
        "an ECN threshold above the most a lossy queue can hold",
    ),
    (
        "ber-without-fec",
        "bit errors before FEC on a 25G-or-faster cable with the FEC off",
    ),
    (
        "fec-mismatch",
        "a cable whose ends run different FEC modes (it never comes up)",
    ),
    (
        "load-over-capacity",
        "an open-loop workload offering some cables more than they carry",
    ),
    (
        "sonic-ports",
        "a SONiC PORT table that does not match the simulated switch's cables",
    ),
    (
        "sonic-not-modelled",
        "SONiC tables and fields the import does not act on",
    ),
    (
        "cbfc-below-bdp",
        "a CBFC allocation per VC short of a cable's credit loop (the cable runs below line rate)",
    ),
];

/// `[check]`: which findings not to report.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// Finding ids to leave out of the output (`sim check` lists them).
    #[serde(default)]
    pub silence: Vec<String>,
}

impl CheckConfig {
    pub fn validate(&self) -> Result<(), crate::error::FieldError> {
        for (i, s) in self.silence.iter().enumerate() {
            if !IDS.iter().any(|(id, _)| id == s) {
                let ids: Vec<&str> = IDS.iter().map(|(id, _)| *id).collect();
                return Err(crate::error::FieldError::new(
                    format!("check.silence[{i}]"),
                    format!("no finding is called {s:?}; the ids are: {}", ids.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// The settings one group of switches runs with: `[switch]` and `[pfc]`, or a tier's, with
/// the SONiC file they came from; and how to name their keys.
pub(crate) struct Scope<'a> {
    pub switch: &'a SwitchConfig,
    pub pfc: &'a PfcConfig,
    pub sonic: Option<&'a SonicInfo>,
    /// `[switch.tier.<name>]`'s name (None: `[switch]`).
    pub tier: Option<&'a str>,
    /// The switch numbers (in topology order) that take these settings.
    pub switches: Vec<usize>,
}

impl Scope<'_> {
    /// Where the user set `key` (`switch.x` or `pfc.x`, with `sub` under it): the SONiC
    /// file's JSON path when the value came from there, else the scenario key (the tier's
    /// table for a tier).
    pub fn locate(&self, key: &str, sub: Option<&str>) -> (String, Option<String>) {
        let join = |k: &str| sub.map_or(k.to_string(), |s| format!("{k}.{s}"));
        if let Some(info) = self.sonic
            && !info.overridden.iter().any(|o| o == key)
            && let Some(json) = info.imported.source_of(key)
        {
            // A path with a wildcard names the fields already; the ECN keys have SONiC names.
            let path = match (key, sub) {
                _ if json.contains('*') => json.to_string(),
                ("switch.ecn", Some("kmin")) => format!("{json}.green_min_threshold"),
                ("switch.ecn", Some("kmax")) => format!("{json}.green_max_threshold"),
                _ => join(json),
            };
            return (path, Some(info.file.clone()));
        }
        let k = match self.tier {
            Some(t) => match key.split_once('.') {
                Some(("switch", rest)) => format!("switch.tier.{t}.{rest}"),
                Some(("pfc", rest)) if rest != "priorities" => format!("switch.tier.{t}.pfc.{rest}"),
                _ => key.to_string(),
            },
            None => key.to_string(),
        };
        (join(&k), None)
    }

    /// A finding at `key` (see [`Scope::locate`]).
    pub fn finding(
        &self,
        level: Level,
        id: &'static str,
        (key, sub): (&str, Option<&str>),
        problem: String,
        fix: String,
    ) -> Finding {
        let (key, file) = self.locate(key, sub);
        Finding {
            level,
            id,
            key,
            file,
            problem,
            fix,
        }
    }

    /// "switches leaf0, leaf1" or "the switches", for messages.
    pub fn who(&self, topo: &crate::topology::Topology) -> String {
        match self.tier {
            Some(t) => format!("the {t} switches ({})", names(topo, &self.switches)),
            None if self.switches.len() == 1 => format!("switch {}", names(topo, &self.switches)),
            None => format!("switches {}", names(topo, &self.switches)),
        }
    }
}

/// Up to `n` of `items` joined by `sep`, then how many more (`a; b; c and 4 more`).
fn listed<S: AsRef<str>>(items: &[S], n: usize, sep: &str) -> String {
    let shown: Vec<&str> = items.iter().take(n).map(AsRef::as_ref).collect();
    match items.len() - shown.len() {
        0 => shown.join(sep),
        more => format!("{} and {more} more", shown.join(sep)),
    }
}

/// Up to three switch names, then how many more.
fn names(topo: &crate::topology::Topology, switches: &[usize]) -> String {
    let all: Vec<&str> = topo
        .nodes
        .iter()
        .filter(|n| n.kind == crate::topology::NodeKind::Switch)
        .map(|n| n.name.as_str())
        .collect();
    let mut s: Vec<&str> = switches
        .iter()
        .filter_map(|&i| all.get(i).copied())
        .take(3)
        .collect();
    let more = switches.len().saturating_sub(3);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    if s.is_empty() {
        s.push("(none)");
    }
    format!("{}{more}", s.join(", "))
}

/// The groups of switches of a variant with their settings: `[switch]`'s (if any switch
/// keeps them), then each tier's that has switches.
fn scopes<'a>(v: &'a crate::scenario::Variant, switches: usize) -> Vec<Scope<'a>> {
    let mut out = Vec::new();
    let tier_of = |s: usize| v.resolved.switch_tier.get(s).copied().unwrap_or(0) as usize;
    for t in 0..=v.tiers.len() {
        let members: Vec<usize> = (0..switches).filter(|&s| tier_of(s) == t).collect();
        if members.is_empty() {
            continue;
        }
        out.push(match t {
            0 => Scope {
                switch: &v.switch,
                pfc: &v.pfc,
                sonic: v.sonic.as_ref(),
                tier: None,
                switches: members,
            },
            t => {
                let tier = &v.tiers[t - 1];
                Scope {
                    switch: &tier.switch,
                    pfc: &tier.pfc,
                    sonic: tier.sonic.as_ref(),
                    tier: Some(&tier.name),
                    switches: members,
                }
            }
        });
    }
    out
}

/// The fabric's switches and their cables, laid out once for every check: switch number s
/// is node `switch_node[s]`; its cables, in port order, are `topo.links[cables[s][i]]`.
pub(crate) struct Fabric {
    pub switch_node: Vec<usize>,
    pub cables: Vec<Vec<u32>>,
}

impl Fabric {
    pub(crate) fn of(topo: &crate::topology::Topology) -> Fabric {
        let switch_node: Vec<usize> = topo
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind == crate::topology::NodeKind::Switch)
            .map(|(i, _)| i)
            .collect();
        let mut number = vec![usize::MAX; topo.nodes.len()];
        for (s, &n) in switch_node.iter().enumerate() {
            number[n] = s;
        }
        let mut cables = vec![Vec::new(); switch_node.len()];
        for (i, l) in topo.links.iter().enumerate() {
            for end in [l.a.idx(), l.b.idx()] {
                if let Some(c) = cables.get_mut(number[end]) {
                    c.push(i as u32);
                }
            }
        }
        Fabric { switch_node, cables }
    }
}

/// Everything the check finds in variant `v` of a scenario with `topo` and `flows`, in a
/// stable order, silenced ids left out.
pub fn variant(
    topo: &crate::topology::Topology,
    flows: &[crate::workload::FlowSpec],
    offered: &[crate::workload::Offered],
    v: &crate::scenario::Variant,
    silence: &[String],
) -> Vec<Finding> {
    let fabric = Fabric::of(topo);
    let scopes = scopes(v, fabric.switch_node.len());
    let mut out = Vec::new();
    let used = qos::data_priorities(topo, flows);
    for s in &scopes {
        qos::check(topo, &used, v, s, &mut out);
        buffers::check(topo, &fabric, &used, v, s, &mut out);
        ports::check(topo, &fabric, s, &mut out);
    }
    qos::check_ecn_marking(v, &scopes, &mut out);
    load::check(topo, offered, &mut out);
    cables::check(topo, &mut out);
    ports::check_fec(topo, v, &mut out);
    cables::check_llr(topo, v, &mut out);
    cbfc::check(topo, v, &mut out);
    out.retain(|f| !silence.iter().any(|s| s == f.id));
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests;
