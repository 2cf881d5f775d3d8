//! NIC models (`nic.model`): the defaults a real adapter brings that do not depend on the link
//! rate, and the fastest port it has, so a scenario cannot cable a NIC faster than it runs.
//!
//! | model          | fastest port | DCQCN defaults | receive buffer |
//! |----------------|--------------|----------------|----------------|
//! | `connectx-6dx` | 200 Gb/s     | `connectx`     | 256 KiB (est.) |
//! | `connectx-7`   | 400 Gb/s     | `connectx`     | 256 KiB (est.) |
//!
//! Sources:
//! - ConnectX-6 Dx Ethernet rates 10/25/40/50/100/200 GbE: NVIDIA "Ubuntu 22.04 Driver
//!   Documentation, General Support" (docs.nvidia.com/networking/display/ubuntu2204/general+support).
//! - ConnectX-7: a single 400 GbE port or two 200 GbE ports: NVIDIA ConnectX-7 OCP 3.0 user
//!   manual, "Supported Interfaces" (docs.nvidia.com/networking/display/connectx7vpiocp3).
//! - DCQCN: NVIDIA DOCA SDK 3.4.0 "DCQCN CC Parameters" gives one default column for
//!   "ConnectX-4 and later"; we found no document with other defaults for ConnectX-6 Dx or 7
//!   (and MLNX_EN 5.4 says ConnectX-7 "has the same feature set as the ConnectX-6"). Both use
//!   the `connectx` preset of `crate::cc::dcqcn`. A model does not switch DCQCN on: the
//!   scenario still says `cc = { kind = "dcqcn" }`, and the model supplies its preset.
//! - Receive buffer: 262,016 B on the port in Mellanox's "HowTo Tune Receive Buffers on
//!   Mellanox Adapter Cards" (an earlier generation, probably ConnectX-5); per-generation
//!   sizes for ConnectX-6 Dx and 7 we did not find, so both keep the 256 KiB estimate.

use crate::cc::dcqcn::DcqcnPreset;
use crate::error::FieldError;
use crate::topology::{NodeKind, Topology};
use serde::Deserialize;
use sim_core::{BitRate, Bytes};

/// A NIC model a scenario may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum NicModel {
    /// NVIDIA ConnectX-6 Dx: up to 200 GbE (2 x 100G or 1 x 200G), PCIe Gen4.
    #[serde(rename = "connectx-6dx")]
    Connectx6Dx,
    /// NVIDIA ConnectX-7: up to 400 GbE (1 x 400G or 2 x 200G), PCIe Gen5.
    #[serde(rename = "connectx-7")]
    Connectx7,
}

/// What a model sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NicProfile {
    /// The name in NVIDIA's spelling, for messages.
    pub name: &'static str,
    /// The fastest port the NIC has.
    pub max_rate: BitRate,
    /// DCQCN firmware defaults, used when `cc = { kind = "dcqcn" }` names no preset.
    pub dcqcn: DcqcnPreset,
    /// Receive buffer per port (the default of `nic.rx_buffer`).
    pub rx_buffer: Bytes,
}

/// 256 KiB: the order of a ConnectX port's receive buffer (our estimate, see the module).
pub const CONNECTX_RX_BUFFER: Bytes = Bytes(256 * 1024);

impl NicModel {
    pub fn profile(self) -> NicProfile {
        match self {
            NicModel::Connectx6Dx => NicProfile {
                name: "ConnectX-6 Dx",
                max_rate: BitRate::gbps(200),
                dcqcn: DcqcnPreset::Connectx,
                rx_buffer: CONNECTX_RX_BUFFER,
            },
            NicModel::Connectx7 => NicProfile {
                name: "ConnectX-7",
                max_rate: BitRate::gbps(400),
                dcqcn: DcqcnPreset::Connectx,
                rx_buffer: CONNECTX_RX_BUFFER,
            },
        }
    }

    /// Every host cable must run at a rate this NIC supports; the error names `nic.model`.
    pub fn check_rates(self, topo: &Topology) -> Result<(), FieldError> {
        let p = self.profile();
        let is_host = |n: crate::ids::NodeId| topo.nodes[n.idx()].kind == NodeKind::Host;
        let too_fast = topo.links.iter().find_map(|l| {
            let host = [l.a, l.b].into_iter().find(|&n| is_host(n))?;
            (l.rate > p.max_rate).then_some((host, l.rate))
        });
        match too_fast {
            Some((host, rate)) => Err(FieldError::new(
                "nic.model",
                format!(
                    "host {} has a {rate} cable, faster than the {} of a {} port; use a slower host link or a faster NIC model",
                    topo.node_name(host),
                    p.max_rate,
                    p.name
                ),
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyConfig;

    fn b2b(rate: &str) -> Topology {
        let t: TopologyConfig = toml::from_str(&format!(
            "kind = \"back-to-back\"\nlink = {{ rate = \"{rate}\", cable = \"1m\" }}"
        ))
        .unwrap();
        t.build().unwrap()
    }

    #[test]
    fn a_nic_takes_links_up_to_its_fastest_port() {
        assert!(NicModel::Connectx6Dx.check_rates(&b2b("200Gbps")).is_ok());
        assert!(NicModel::Connectx7.check_rates(&b2b("400Gbps")).is_ok());
        let e = NicModel::Connectx6Dx.check_rates(&b2b("400Gbps")).unwrap_err();
        assert_eq!(e.path, "nic.model");
        assert!(
            e.message.contains("400Gbps") && e.message.contains("200Gbps"),
            "{}",
            e.message
        );
        assert!(NicModel::Connectx7.check_rates(&b2b("800Gbps")).is_err());
    }

    #[test]
    fn both_generations_share_the_firmware_defaults() {
        // DOCA "DCQCN CC Parameters": one default column for ConnectX-4 and later.
        for m in [NicModel::Connectx6Dx, NicModel::Connectx7] {
            assert_eq!(m.profile().dcqcn, DcqcnPreset::Connectx);
            assert_eq!(m.profile().rx_buffer, Bytes(262_144));
        }
    }
}
