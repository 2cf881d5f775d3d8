//! The wiring of two- and three-tier Clos fabrics, shared by the `leaf-spine` and `fat-tree`
//! kinds and by htsim's `.topo` files, so a file describing the same shape lays its fabric
//! out exactly as the kind does. Shapes are checked by the callers.

use super::{LinkConfig, NodeKind, Topology};
use crate::ids::NodeId;

/// The counts of a leaf-spine.
pub(super) struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub links_per_spine: u32,
}

/// A cable type and its delay.
pub(super) type Cable<'a> = (&'a LinkConfig, sim_core::Duration);

/// The two-tier wiring (the shape checked by the caller): each leaf after its hosts, then
/// each spine cabled to every leaf `links_per_spine` times. `leaf-spine` and htsim's
/// two-tier files lay their fabrics out so.
pub(super) fn clos2(t: &mut Topology, s: &LeafSpine, host: Cable, fabric: Cable) {
    let leaf_ids: Vec<NodeId> = (0..s.leaves)
        .map(|l| t.add_edge_switch(format!("leaf{l}"), s.hosts_per_leaf, host.0, host.1))
        .collect();
    for sp in 0..s.spines {
        let spine = t.add(format!("spine{sp}"), NodeKind::Switch);
        for &leaf in &leaf_ids {
            for _ in 0..s.links_per_spine {
                t.connect(leaf, spine, fabric.0, fabric.1);
            }
        }
    }
}

/// The counts of a three-tier fat tree: `pods` of `edges` edge switches with `hosts` each and
/// `aggs` aggregation switches, each edge cabled `edge_bundle` times to each aggregation
/// switch of its pod, aggregation switch a of every pod cabled `core_bundle` times to each of
/// its own `group` cores (cores a x group .. (a + 1) x group).
pub(super) struct FatTree {
    pub pods: u32,
    pub edges: u32,
    pub hosts: u32,
    pub aggs: u32,
    pub group: u32,
    pub edge_bundle: u32,
    pub core_bundle: u32,
}

/// The three-tier wiring (the shape checked by the caller): the cores, then pod by pod its
/// edges after their hosts and its aggregation switches. `fat-tree` and htsim's three-tier
/// files lay their fabrics out so.
pub(super) fn clos3(t: &mut Topology, f: &FatTree, host: Cable, up: Cable, core: Cable) {
    let cores: Vec<NodeId> = (0..f.aggs * f.group)
        .map(|c| t.add(format!("core{c}"), NodeKind::Switch))
        .collect();
    for p in 0..f.pods {
        let edges: Vec<NodeId> = (0..f.edges)
            .map(|e| t.add_edge_switch(format!("edge{p}-{e}"), f.hosts, host.0, host.1))
            .collect();
        for a in 0..f.aggs {
            let agg = t.add(format!("agg{p}-{a}"), NodeKind::Switch);
            for &edge in &edges {
                for _ in 0..f.edge_bundle {
                    t.connect(edge, agg, up.0, up.1);
                }
            }
            for c in 0..f.group {
                for _ in 0..f.core_bundle {
                    t.connect(agg, cores[(a * f.group + c) as usize], core.0, core.1);
                }
            }
        }
    }
}
