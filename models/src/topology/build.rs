//! One builder per topology kind: each checks its numbers and expands into nodes and links.

use super::clos::{FatTree, LeafSpine, clos2, clos3};
use super::{LinkConfig, NodeKind, Topology, TopologyConfig, at_least, links_check, size_check};
use crate::error::FieldError;
use crate::ids::NodeId;

impl TopologyConfig {
    /// Expand into nodes and links, validating every number.
    pub fn build(&self) -> Result<Topology, FieldError> {
        self.build_in(std::path::Path::new("."))
    }

    /// Expand it; a graph's `file` is read from `dir` (the scenario's folder).
    pub fn build_in(&self, dir: &std::path::Path) -> Result<Topology, FieldError> {
        let mut t = Topology::default();
        match self {
            TopologyConfig::BackToBack { link } => back_to_back(&mut t, link)?,
            TopologyConfig::Ring { hosts, link } => ring(&mut t, *hosts, link)?,
            TopologyConfig::Star { hosts, host_link } => star(&mut t, *hosts, host_link)?,
            TopologyConfig::SwitchRing {
                switches,
                hosts_per_switch,
                host_link,
                ring_link,
            } => switch_line(&mut t, *switches, *hosts_per_switch, host_link, ring_link, true)?,
            TopologyConfig::Chain {
                switches,
                hosts_per_switch,
                host_link,
                chain_link,
            } => switch_line(&mut t, *switches, *hosts_per_switch, host_link, chain_link, false)?,
            TopologyConfig::Dumbbell {
                hosts_per_side,
                host_link,
                bottleneck_link,
            } => dumbbell(&mut t, *hosts_per_side, host_link, bottleneck_link)?,
            TopologyConfig::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                host_link,
                fabric_link,
                links_per_spine,
            } => {
                let shape = LeafSpine {
                    leaves: *leaves,
                    spines: *spines,
                    hosts_per_leaf: *hosts_per_leaf,
                    links_per_spine: *links_per_spine,
                };
                leaf_spine(&mut t, shape, host_link, fabric_link)?
            }
            TopologyConfig::FatTree {
                k,
                host_link,
                fabric_link,
            } => fat_tree(&mut t, *k, host_link, fabric_link)?,
            TopologyConfig::Rail {
                units,
                servers_per_unit,
                nics_per_host,
                spines,
                host_link,
                fabric_link,
                links_per_spine,
                nvlink,
            } => {
                let shape = super::rail::Rail {
                    units: *units,
                    servers: *servers_per_unit,
                    rails: *nics_per_host,
                    spines: *spines,
                    links_per_spine: *links_per_spine,
                    nvlink: *nvlink,
                };
                super::rail::build(&mut t, shape, host_link, fabric_link)?
            }
            TopologyConfig::Htsim { file } => super::htsim_topo::build(&mut t, file, dir)?,
            TopologyConfig::Graph {
                nodes,
                links,
                file,
                nvlink,
            } => super::graph::build(&mut t, nodes, links, file.as_deref(), *nvlink, dir)?,
        }
        Ok(t)
    }
}

/// Two hosts on one cable (a DAC between two NICs).
fn back_to_back(t: &mut Topology, link: &LinkConfig) -> Result<(), FieldError> {
    let d = t.cable_delay("topology.link", link)?;
    let h = t.add_hosts(2);
    t.connect(h[0], h[1], link, d);
    Ok(())
}

/// `n` hosts, each cabled to its two neighbours; hosts forward transit traffic.
fn ring(t: &mut Topology, n: u32, link: &LinkConfig) -> Result<(), FieldError> {
    at_least("topology.hosts", n, 3)?;
    size_check(n as u128)?;
    let d = t.cable_delay("topology.link", link)?;
    let h = t.add_hosts(n);
    let n = h.len();
    // A ring of 3 is a triangle: every pair is cabled once.
    for i in 0..n {
        t.connect(h[i], h[(i + 1) % n], link, d);
    }
    t.hosts_forward = n > 3;
    Ok(())
}

/// `n` hosts on one switch.
fn star(t: &mut Topology, n: u32, host_link: &LinkConfig) -> Result<(), FieldError> {
    at_least("topology.hosts", n, 2)?;
    size_check(n as u128 + 1)?;
    let d = t.cable_delay("topology.host_link", host_link)?;
    let h = t.add_hosts(n);
    let sw = t.add("sw0".into(), NodeKind::Switch);
    for &x in &h {
        t.connect(x, sw, host_link, d);
    }
    Ok(())
}

/// Switches `sw0..` each cabled to the next, each with its own hosts: a ring when `closed`
/// (the last cabled back to the first), a chain otherwise.
fn switch_line(
    t: &mut Topology,
    switches: u32,
    hosts_per_switch: u32,
    host_link: &LinkConfig,
    line_link: &LinkConfig,
    closed: bool,
) -> Result<(), FieldError> {
    at_least("topology.switches", switches, if closed { 3 } else { 2 })?;
    at_least("topology.hosts_per_switch", hosts_per_switch, 1)?;
    size_check(switches as u128 * (hosts_per_switch as u128 + 1))?;
    let hd = t.cable_delay("topology.host_link", host_link)?;
    let key = if closed {
        "topology.ring_link"
    } else {
        "topology.chain_link"
    };
    let ld = t.cable_delay(key, line_link)?;
    let sws: Vec<NodeId> = (0..switches)
        .map(|i| t.add_edge_switch(format!("sw{i}"), hosts_per_switch, host_link, hd))
        .collect();
    let cables = if closed { sws.len() } else { sws.len() - 1 };
    for i in 0..cables {
        t.connect(sws[i], sws[(i + 1) % sws.len()], line_link, ld);
    }
    Ok(())
}

/// Two switches joined by one bottleneck cable, `n` hosts on each side.
fn dumbbell(
    t: &mut Topology,
    n: u32,
    host_link: &LinkConfig,
    bottleneck: &LinkConfig,
) -> Result<(), FieldError> {
    at_least("topology.hosts_per_side", n, 1)?;
    size_check(2 * n as u128 + 2)?;
    let hd = t.cable_delay("topology.host_link", host_link)?;
    let bd = t.cable_delay("topology.bottleneck_link", bottleneck)?;
    let left = t.add_hosts(n);
    let right = t.add_hosts(n);
    let (sl, sr) = (
        t.add("left".into(), NodeKind::Switch),
        t.add("right".into(), NodeKind::Switch),
    );
    for h in left {
        t.connect(h, sl, host_link, hd);
    }
    for h in right {
        t.connect(h, sr, host_link, hd);
    }
    t.connect(sl, sr, bottleneck, bd);
    Ok(())
}

/// Parallel cables one leaf-spine pair may have (real fabrics use 1 to 8).
const MAX_PARALLEL: u32 = 64;

/// Two tiers: every leaf cabled to every spine (`links_per_spine` parallel cables).
fn leaf_spine(
    t: &mut Topology,
    s: LeafSpine,
    host_link: &LinkConfig,
    fabric: &LinkConfig,
) -> Result<(), FieldError> {
    at_least("topology.leaves", s.leaves, 1)?;
    at_least("topology.spines", s.spines, if s.leaves > 1 { 1 } else { 0 })?;
    at_least("topology.hosts_per_leaf", s.hosts_per_leaf, 1)?;
    at_least("topology.links_per_spine", s.links_per_spine, 1)?;
    if s.links_per_spine > MAX_PARALLEL {
        return Err(FieldError::new(
            "topology.links_per_spine",
            format!(
                "at most {MAX_PARALLEL} parallel cables between a leaf and a spine, got {}",
                s.links_per_spine
            ),
        ));
    }
    if s.leaves as u64 * s.hosts_per_leaf as u64 <= 1 {
        return Err(FieldError::new(
            "topology.hosts_per_leaf",
            "a fabric needs at least two hosts",
        ));
    }
    size_check(s.leaves as u128 * (s.hosts_per_leaf as u128 + 1) + s.spines as u128)?;
    links_check(
        "topology.links_per_spine",
        s.leaves as u128 * (s.hosts_per_leaf as u128 + s.spines as u128 * s.links_per_spine as u128),
    )?;
    let hd = t.cable_delay("topology.host_link", host_link)?;
    let fd = t.cable_delay("topology.fabric_link", fabric)?;
    clos2(t, &s, (host_link, hd), (fabric, fd));
    Ok(())
}

/// The k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
/// aggregation switches, (k/2)^2 cores, k^3/4 hosts.
fn fat_tree(t: &mut Topology, k: u32, host_link: &LinkConfig, fabric: &LinkConfig) -> Result<(), FieldError> {
    if k < 2 || k % 2 != 0 {
        return Err(FieldError::new(
            "topology.k",
            format!("must be an even number >= 2, got {k}"),
        ));
    }
    let half = k / 2;
    size_check(k as u128 * k as u128 * k as u128 / 4 + 5 * k as u128 * k as u128 / 4)?;
    let hd = t.cable_delay("topology.host_link", host_link)?;
    let fd = t.cable_delay("topology.fabric_link", fabric)?;
    let shape = FatTree {
        pods: k,
        edges: half,
        hosts: half,
        aggs: half,
        group: half,
        edge_bundle: 1,
        core_bundle: 1,
    };
    clos3(t, &shape, (host_link, hd), (fabric, fd), (fabric, fd));
    Ok(())
}
