//! `kind = "rail"`: a rail-optimised fabric of multi-NIC servers, as NVIDIA's DGX SuperPOD
//! reference architectures cable them ("NVIDIA DGX SuperPOD ... Reference Architecture
//! Featuring NVIDIA DGX H100 Systems", RA-11333-001, "Compute Fabric", Table 4; the B200 and
//! B300 editions keep the design): a scalable unit (SU) of servers with one NIC per GPU, and
//! one leaf per rail per SU, NIC r of every server of the unit cabled to the unit's rail-r
//! leaf. Traffic between equal rails of one SU is one leaf hop; between rails, or between
//! SUs, it crosses the spines above every leaf (`links_per_spine` cables each; the SuperPOD
//! is 1:1, fewer spines oversubscribe).
//!
//! Each NIC port is a host of the model (its own cable, queues, counters, captures), host
//! `h{(server x nics_per_host) + nic}`, so hosts run server by server and NIC by NIC, the
//! order of NCCL's ranks (one per GPU, each GPU's nearest NIC). Traffic between NICs of one
//! server is GPU-to-GPU over NVLink (`nvlink`, each way), not on the fabric.

use super::{LinkConfig, NodeKind, Topology};
use crate::error::FieldError;
use crate::ids::NodeId;
use sim_core::BitRate;

/// The shape, as written.
pub struct Rail {
    pub units: u32,
    pub servers: u32,
    pub rails: u32,
    pub spines: u32,
    pub links_per_spine: u32,
    pub nvlink: Option<BitRate>,
}

/// NVLink 4 on an H100: 900 GB/s both ways, 450 GB/s (3.6 Tb/s) each way per GPU (NVIDIA H100
/// datasheet).
pub const H100_NVLINK: BitRate = BitRate(3_600_000_000_000);

pub fn build(
    t: &mut Topology,
    r: Rail,
    host_link: &LinkConfig,
    fabric: &LinkConfig,
) -> Result<(), FieldError> {
    super::at_least("topology.units", r.units, 1)?;
    super::at_least("topology.servers_per_unit", r.servers, 1)?;
    super::at_least("topology.nics_per_host", r.rails, 1)?;
    super::at_least("topology.links_per_spine", r.links_per_spine, 1)?;
    if r.units > 1 || r.rails > 1 {
        super::at_least("topology.spines", r.spines, 1)?;
    }
    if r.nvlink.is_some_and(|b| b.0 == 0) {
        return Err(FieldError::new("topology.nvlink", "must be greater than zero"));
    }
    let servers = r.units as u128 * r.servers as u128;
    let hosts = servers * r.rails as u128;
    if hosts < 2 {
        return Err(FieldError::new(
            "topology.servers_per_unit",
            "a fabric needs at least two NICs",
        ));
    }
    let leaves = r.units as u128 * r.rails as u128;
    super::size_check(hosts + leaves + r.spines as u128)?;
    super::links_check(
        "topology.links_per_spine",
        hosts + leaves * r.spines as u128 * r.links_per_spine as u128,
    )?;
    let hd = t.cable_delay("topology.host_link", host_link)?;
    let fd = t.cable_delay("topology.fabric_link", fabric)?;
    let nics: Vec<NodeId> = t.add_hosts(hosts as u32);
    for (i, s) in t.server.iter_mut().enumerate() {
        *s = i as u32 / r.rails;
    }
    let mut leaf_ids = Vec::new();
    for u in 0..r.units {
        for rail in 0..r.rails {
            let leaf = t.add(format!("leaf{u}-{rail}"), NodeKind::Switch);
            for s in 0..r.servers {
                let server = (u * r.servers + s) as usize;
                t.connect(
                    nics[server * r.rails as usize + rail as usize],
                    leaf,
                    host_link,
                    hd,
                );
            }
            leaf_ids.push(leaf);
        }
    }
    for k in 0..r.spines {
        let spine = t.add(format!("spine{k}"), NodeKind::Switch);
        for &leaf in &leaf_ids {
            for _ in 0..r.links_per_spine {
                t.connect(leaf, spine, fabric, fd);
            }
        }
    }
    t.nvlink = Some(r.nvlink.unwrap_or(H100_NVLINK));
    Ok(())
}
