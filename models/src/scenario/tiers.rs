//! `[switch.tier.<name>]`: settings for some of the fabric's switches, over `[switch]`.
//!
//! A tier names switches by their name (`spine1`) or by the name's stem, every switch called
//! `<name>` followed by an index (`leaf` for leaf0, leaf1, ...; `edge` for edge0-1; `core`).
//! Its table takes any `[switch]` key but the fabric-wide ones (`routing`, `failover`,
//! `latency`), and a `pfc` table with the switch side of PFC (`xoff`, `xon_offset`,
//! `headroom`, `headroom_by_rate`, `watchdog`, `watchdog_action`, `watchdog_restore`). Its own
//! `sonic` file replaces `[switch]`'s for those switches (a SONiC `config_db.json` per box
//! or per tier). What a tier does not set comes from `[switch]` and `[pfc]`; keys written in
//! the scenario win over the tier's file, as over `[switch]`'s. A switch named exactly by a
//! tier takes that tier over one that names it by stem.

use super::sonic::{SonicInfo, with_sonic};
use crate::error::FieldError;
use crate::pfc::PfcConfig;
use crate::switch::SwitchConfig;
use crate::topology::{NodeKind, Topology};
use std::path::Path;
use toml::{Table, Value};

/// The settings of one tier, resolved.
#[derive(Debug, Clone)]
pub struct Tier {
    /// The name or stem it selects switches by.
    pub name: String,
    pub switch: SwitchConfig,
    pub pfc: PfcConfig,
    pub sonic: Option<SonicInfo>,
}

/// Keys that hold for the whole fabric (one router, one failover, link delays set once).
const FABRIC_WIDE: &[&str] = &["routing", "failover", "latency", "tier"];
/// The switch side of PFC, which a tier may set.
const SWITCH_PFC: &[&str] = &[
    "xoff",
    "xon_offset",
    "headroom",
    "headroom_by_rate",
    "watchdog",
    "watchdog_action",
    "watchdog_restore",
];

/// Take `switch.tier` out of `t` (a scenario or variant table, before its SONiC file is
/// read) and resolve each tier on what is left.
pub fn take(t: &mut Table, dir: &Path) -> Result<Vec<Tier>, FieldError> {
    let Some(Value::Table(switch)) = t.get_mut("switch") else {
        return Ok(Vec::new());
    };
    let Some(tiers) = switch.remove("tier") else {
        return Ok(Vec::new());
    };
    let Value::Table(tiers) = tiers else {
        return Err(FieldError::new(
            "switch.tier",
            "expected tables: [switch.tier.<name>]",
        ));
    };
    // The fabric's own keys first, so that a fault in them is named where it is.
    let part = |k: &str| t.get(k).cloned().unwrap_or(Value::Table(Table::new()));
    typed::<SwitchConfig>(part("switch"), "switch")?.validate()?;
    typed::<PfcConfig>(part("pfc"), "pfc")?.validate()?;
    tiers
        .iter()
        .map(|(name, v)| {
            let key = format!("switch.tier.{name}");
            let Value::Table(over) = v else {
                return Err(FieldError::new(key, "expected a table of [switch] keys"));
            };
            tier(t, name, over, dir)
        })
        .collect()
}

/// One tier: `[switch]` and `[pfc]` of `t` with `over` on top, and its SONiC file beneath.
fn tier(t: &Table, name: &str, over: &Table, dir: &Path) -> Result<Tier, FieldError> {
    let key = |k: &str| format!("switch.tier.{name}.{k}");
    let mut switch_over = over.clone();
    let pfc_over = match switch_over.remove("pfc") {
        None => Table::new(),
        Some(Value::Table(p)) => p,
        Some(_) => return Err(FieldError::new(key("pfc"), "expected a table of [pfc] keys")),
    };
    if let Some(k) = switch_over.keys().find(|k| FABRIC_WIDE.contains(&k.as_str())) {
        return Err(FieldError::new(
            key(k),
            format!("`{k}` holds for the whole fabric: set it in [switch]"),
        ));
    }
    if let Some(k) = pfc_over.keys().find(|k| !SWITCH_PFC.contains(&k.as_str())) {
        return Err(FieldError::new(
            key(&format!("pfc.{k}")),
            format!(
                "a tier sets the switch side of PFC only ({}); `{k}` holds for the whole fabric: set it in [pfc]",
                SWITCH_PFC.join(", ")
            ),
        ));
    }
    let mut scoped = t.clone();
    let table = |t: &mut Table, k: &str| -> Table {
        match t.remove(k) {
            Some(Value::Table(x)) => x,
            _ => Table::new(),
        }
    };
    let mut switch = table(&mut scoped, "switch");
    if switch_over.contains_key("sonic") {
        switch.remove("sonic");
    }
    super::overrides::merge(&mut switch, &switch_over);
    let mut pfc = table(&mut scoped, "pfc");
    super::overrides::merge(&mut pfc, &pfc_over);
    let mut only = Table::new();
    only.insert("switch".into(), Value::Table(switch));
    only.insert("pfc".into(), Value::Table(pfc));
    let (merged, sonic) = with_sonic(&only, dir).map_err(|e| FieldError::new(key("sonic"), e.message))?;
    let part = |k: &str| merged.get(k).cloned().unwrap_or(Value::Table(Table::new()));
    let switch: SwitchConfig = typed(part("switch"), &format!("switch.tier.{name}"))?;
    let pfc: PfcConfig = typed(part("pfc"), &key("pfc"))?;
    switch
        .validate()
        .map_err(|e| FieldError::new(retarget(name, &e.path), e.message))?;
    pfc.validate()
        .map_err(|e| FieldError::new(retarget(name, &e.path), e.message))?;
    Ok(Tier {
        name: name.to_string(),
        switch,
        pfc,
        sonic,
    })
}

/// `v` as a `T`, or an error naming the key under `prefix` that is wrong, in the user's words.
fn typed<T: serde::de::DeserializeOwned>(v: Value, prefix: &str) -> Result<T, FieldError> {
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let msg = e.inner().message().to_string();
        let mut key = match e.path().to_string().as_str() {
            "" | "." => prefix.to_string(),
            p => format!("{prefix}.{p}"),
        };
        let named = |m: &str, start: &str| {
            m.strip_prefix(start)
                .and_then(|m| m.split('`').next())
                .map(str::to_string)
        };
        if let Some(f) = named(&msg, "unknown field `").or_else(|| named(&msg, "missing field `")) {
            if !key.ends_with(&format!(".{f}")) {
                key = format!("{key}.{f}");
            }
        }
        let words = super::wording::in_user_words(&msg, &key);
        FieldError::new(key, words)
    })
}

/// `switch.buffer` -> `switch.tier.spine.buffer`; `pfc.xoff` -> `switch.tier.spine.pfc.xoff`.
pub(super) fn retarget(name: &str, path: &str) -> String {
    match path.strip_prefix("switch.") {
        Some(rest) => format!("switch.tier.{name}.{rest}"),
        None => format!("switch.tier.{name}.{path}"),
    }
}

/// True when switch `switch` is `name`, or `name` followed by an index (`leaf` selects
/// leaf0 and leaf12; `edge1` selects edge1-0, the pod's edge switches, but not edge10-0).
fn selects(name: &str, switch: &str) -> bool {
    let index = |s: &str| s.chars().all(|c| c.is_ascii_digit() || c == '-');
    match switch.strip_prefix(name) {
        Some("") => true,
        Some(rest) if name.ends_with(|c: char| c.is_ascii_digit()) => rest.starts_with('-') && index(rest),
        Some(rest) => rest.starts_with(|c: char| c.is_ascii_digit()) && index(rest),
        None => false,
    }
}

/// `tiers` with one per graph switch that names its ASIC (`asic` on a `kind = "graph"` node):
/// that switch's profile over `[switch]` and over any tier that selects it.
pub fn with_node_asics(
    mut tiers: Vec<Tier>,
    switch: &SwitchConfig,
    pfc: &PfcConfig,
    topo: &Topology,
) -> Vec<Tier> {
    for n in topo.nodes.iter().filter(|n| n.kind == NodeKind::Switch) {
        let Some(asic) = n.asic else { continue };
        if let Some(t) = tiers.iter_mut().find(|t| t.name == n.name) {
            t.switch.asic = asic;
            continue;
        }
        let under = tiers.iter().find(|t| selects(&t.name, &n.name));
        let (sw, pf, sonic) = match under {
            Some(t) => (t.switch.clone(), t.pfc.clone(), t.sonic.clone()),
            None => (switch.clone(), pfc.clone(), None),
        };
        tiers.push(Tier {
            name: n.name.clone(),
            switch: SwitchConfig { asic, ..sw },
            pfc: pf,
            sonic,
        });
    }
    tiers
}

/// Each switch's tier, in switch order: 0 for `[switch]`, i + 1 for `tiers[i]`. Checks that
/// each tier selects a switch and agrees with the fabric's lossless priorities.
pub fn assign(tiers: &[Tier], topo: &Topology, fabric_pfc: &PfcConfig) -> Result<Vec<u8>, FieldError> {
    if tiers.len() >= u8::MAX as usize {
        return Err(FieldError::new("switch.tier", "at most 254 tiers"));
    }
    let switches: Vec<&str> = topo
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Switch)
        .map(|n| n.name.as_str())
        .collect();
    for t in tiers {
        if !switches.iter().any(|s| selects(&t.name, s)) {
            let some: Vec<&str> = switches.iter().take(4).copied().collect();
            return Err(FieldError::new(
                format!("switch.tier.{}", t.name),
                format!(
                    "names no switch (a switch's name, or a stem before its index; the switches are {}{})",
                    some.join(", "),
                    if switches.len() > 4 { ", ..." } else { "" }
                ),
            ));
        }
        if t.pfc.priorities != fabric_pfc.priorities {
            let key = if t.sonic.is_some() {
                format!("switch.tier.{}.sonic", t.name)
            } else {
                format!("switch.tier.{}.pfc", t.name)
            };
            return Err(FieldError::new(
                key,
                format!(
                    "its lossless priorities {:?} differ from the fabric's {:?} ([pfc] priorities, which the NICs use): every switch must agree",
                    t.pfc.priorities, fabric_pfc.priorities
                ),
            ));
        }
    }
    Ok(switches
        .iter()
        .map(|s| {
            let exact = tiers.iter().position(|t| t.name == *s);
            let stem = || tiers.iter().position(|t| selects(&t.name, s));
            exact.or_else(stem).map_or(0, |i| i as u8 + 1)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::selects;

    #[test]
    fn a_tier_selects_by_name_or_stem() {
        assert!(selects("leaf", "leaf0") && selects("leaf", "leaf12") && selects("edge", "edge1-0"));
        assert!(selects("spine1", "spine1") && !selects("spine1", "spine10"));
        assert!(selects("edge1", "edge1-0") && !selects("edge1", "edge10-0"));
        assert!(!selects("leaf", "leafy0") && !selects("sw", "switch0") && !selects("leaf0", "leaf"));
    }
}
