//! `kind = "htsim"`: a uet-htsim `.topo` file (the custom fat-tree description its
//! `FatTreeTopologyCfg` reads): `Nodes`, `Tiers` (2 or 3), `Podsize`, then per `Tier t`
//! (0 ToR, 1 aggregation or spine, 2 core) `Downlink_speed_Gbps`, `Downlink_Latency_ns`,
//! `Radix_Down`, `Radix_Up`, `Oversubscribed`, `Bundle` (parallel cables down from the tier),
//! `Switch_Latency_ns`.
//!
//! Two tiers are a leaf-spine: `Radix_Down` hosts per ToR, each ToR cabled `Bundle` times to
//! each of `Radix_Up / Bundle` spines. Three are a fat tree of `Nodes / Podsize` pods: each
//! ToR cabled to each of its pod's `Radix_Up / Bundle` aggregation switches, aggregation
//! switch a of every pod to its own group of cores. The fabric is laid out as the
//! `leaf-spine` and `fat-tree` kinds lay theirs (names leaf/spine, edge/agg/core), so a file
//! describing the same shape runs exactly as that kind. Link speeds and latencies are per
//! tier (the cables below it); switch latencies other than 0 are refused, as the model's
//! pipeline latency is `switch.latency`.

use super::clos::{FatTree, LeafSpine, clos2, clos3};
use super::{LinkConfig, Topology};
use crate::error::FieldError;
use sim_core::{BitRate, Duration};
use std::path::Path;

/// Largest count a `.topo` may give (`Nodes`, `Radix_*`, `Podsize`, `Bundle`,
/// `Oversubscribed`): far above any switch radix or fabric, and small enough that the
/// products the checks below form stay exact in 64 bits.
const MAX_COUNT: u64 = 1 << 24;

#[derive(Debug, Default, Clone, Copy)]
struct Tier {
    speed: Option<BitRate>,
    latency: Option<Duration>,
    down: u64,
    up: u64,
    bundle: u64,
    oversub: Option<u64>,
}

/// Build the fabric `file` (relative to `dir`) describes.
pub fn build(t: &mut Topology, file: &str, dir: &Path) -> Result<(), FieldError> {
    let path = dir.join(file);
    let text = crate::input::read_text(&path, crate::input::MAX_TOPOLOGY)
        .map_err(|e| FieldError::new("topology.file", format!("cannot read {}: {e}", path.display())))?;
    let err =
        |line: usize, m: String| FieldError::new("topology.file", format!("{}:{line}: {m}", path.display()));
    let (mut nodes, mut tiers_n, mut podsize) = (None, None, None);
    let mut tiers: Vec<Tier> = Vec::new();
    let mut current: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let words: Vec<&str> = raw.split('#').next().unwrap_or("").split_whitespace().collect();
        let [key, value] = words.as_slice() else {
            if words.is_empty() {
                continue;
            }
            return Err(err(line, "expected `Key value`".into()));
        };
        let n: u64 = value
            .parse()
            .map_err(|_| err(line, format!("{key}: expected a whole number, got {value}")))?;
        // Speeds and latencies go through the scenario schema's own parsers, so they meet
        // the same limits (100 Tb/s, 10^6 s) with the same checked arithmetic.
        let speed =
            || BitRate::parse(&format!("{n}Gbps")).map_err(|e| err(line, format!("{key} {value}: {e}")));
        let latency =
            || Duration::parse(&format!("{n}ns")).map_err(|e| err(line, format!("{key} {value}: {e}")));
        let count = || {
            if n > MAX_COUNT {
                return Err(err(line, format!("{key} {value}: at most {MAX_COUNT}")));
            }
            Ok(n)
        };
        let tier = |current: Option<usize>| {
            current.ok_or_else(|| err(line, format!("{key} outside a `Tier N` section")))
        };
        match *key {
            "Nodes" => nodes = Some(count()?),
            "Tiers" => tiers_n = Some(count()?),
            "Podsize" => podsize = Some(count()?),
            "Tier" => {
                if n as usize != tiers.len() || n > 2 {
                    return Err(err(
                        line,
                        format!("expected Tier {} next (tiers 0 to 2, in order)", tiers.len()),
                    ));
                }
                tiers.push(Tier {
                    bundle: 1,
                    ..Default::default()
                });
                current = Some(n as usize);
            }
            "Downlink_speed_Gbps" => tiers[tier(current)?].speed = (n > 0).then(speed).transpose()?,
            "Downlink_Latency_ns" => tiers[tier(current)?].latency = (n > 0).then(latency).transpose()?,
            "Radix_Down" => tiers[tier(current)?].down = count()?,
            "Radix_Up" => tiers[tier(current)?].up = count()?,
            "Bundle" => tiers[tier(current)?].bundle = count()?,
            "Oversubscribed" => tiers[tier(current)?].oversub = Some(count()?),
            "Switch_Latency_ns" => {
                tier(current)?;
                if n != 0 {
                    return Err(err(
                        line,
                        "a switch latency per tier is not modelled: set switch.latency (one for the fabric)"
                            .into(),
                    ));
                }
            }
            _ => return Err(err(line, format!("unknown key {key}"))),
        }
    }
    let whole = |what: &str, v: Option<u64>| {
        v.filter(|&v| v > 0)
            .ok_or_else(|| FieldError::new("topology.file", format!("{}: missing `{what}`", path.display())))
    };
    let (nodes, levels) = (whole("Nodes", nodes)?, whole("Tiers", tiers_n)?);
    if !(2..=3).contains(&levels) || tiers.len() as u64 != levels {
        return Err(FieldError::new(
            "topology.file",
            format!(
                "{}: `Tiers {levels}` with {} `Tier` sections: 2 or 3 tiers are read",
                path.display(),
                tiers.len()
            ),
        ));
    }
    let shape = |m: String| FieldError::new("topology.file", format!("{}: {m}", path.display()));
    for (i, x) in tiers.iter().enumerate() {
        if x.speed.is_none()
            || x.latency.is_none()
            || x.down == 0
            || x.bundle == 0
            || (i + 1 < tiers.len() && x.up == 0)
        {
            return Err(shape(format!(
                "Tier {i} needs Downlink_speed_Gbps, Downlink_Latency_ns, Radix_Down{} and a Bundle above 0",
                if i + 1 < tiers.len() { ", Radix_Up" } else { "" }
            )));
        }
        if let Some(o) = x.oversub.filter(|&o| i + 1 < tiers.len() && o * x.up != x.down) {
            return Err(shape(format!(
                "Tier {i}: Oversubscribed {o} is not Radix_Down {} / Radix_Up {}",
                x.down, x.up
            )));
        }
    }
    let link = |x: &Tier| LinkConfig {
        rate: x.speed.unwrap_or(BitRate::gbps(1)),
        delay: x.latency,
        cable: None,
        loss: 0.0,
        ber: 0.0,
        fec: None,
        pre_fec_ber: 0.0,
        fec_latency: None,
        llr: None,
    };
    let (t0, t1) = (tiers[0], tiers[1]);
    let hpt = t0.down;
    if nodes % hpt != 0 {
        return Err(shape(format!(
            "Nodes {nodes} is not a whole number of ToRs of Radix_Down {hpt}"
        )));
    }
    super::size_check(nodes as u128 + nodes as u128 / hpt as u128 * 2)?;
    let (l0, l1) = (link(&t0), link(&t1));
    let (d0, d1) = (l0.delay("topology.file")?, l1.delay("topology.file")?);
    if t0.up % t1.bundle != 0 {
        return Err(shape(format!(
            "Tier 0 Radix_Up {} is not a multiple of Tier 1 Bundle {}",
            t0.up, t1.bundle
        )));
    }
    let above = (t0.up / t1.bundle) as u32;
    if levels == 2 {
        // Every ToR to every spine, Bundle times.
        let tors = nodes / hpt;
        if t1.down != tors * t1.bundle {
            return Err(shape(format!(
                "Tier 1 Radix_Down {} is not {tors} ToRs x Bundle {}: not a two-tier Clos with every ToR on every spine",
                t1.down, t1.bundle
            )));
        }
        let shape = LeafSpine {
            leaves: tors as u32,
            spines: above,
            hosts_per_leaf: hpt as u32,
            links_per_spine: t1.bundle as u32,
        };
        clos2(t, &shape, (&l0, d0), (&l1, d1));
        return Ok(());
    }
    let t2 = tiers[2];
    let pod = whole("Podsize", podsize)?;
    if nodes % pod != 0 || pod % hpt != 0 {
        return Err(shape(format!(
            "Podsize {pod} must divide Nodes {nodes} and be a multiple of Radix_Down {hpt}"
        )));
    }
    let (pods, tors_per_pod) = (nodes / pod, pod / hpt);
    if t1.down != tors_per_pod * t1.bundle {
        return Err(shape(format!(
            "Tier 1 Radix_Down {} is not {tors_per_pod} ToRs a pod x Bundle {}",
            t1.down, t1.bundle
        )));
    }
    if t1.up % t2.bundle != 0 || t2.down != pods * t2.bundle {
        return Err(shape(format!(
            "Tier 2 Radix_Down {} is not {pods} pods x Bundle {} (or Tier 1 Radix_Up {} not a multiple of it)",
            t2.down, t2.bundle, t1.up
        )));
    }
    let group = (t1.up / t2.bundle) as u32;
    let l2 = link(&t2);
    let d2 = l2.delay("topology.file")?;
    let shape = FatTree {
        pods: pods as u32,
        edges: tors_per_pod as u32,
        hosts: hpt as u32,
        aggs: above,
        group,
        edge_bundle: t1.bundle as u32,
        core_bundle: t2.bundle as u32,
    };
    clos3(t, &shape, (&l0, d0), (&l1, d1), (&l2, d2));
    Ok(())
}
