//! A variant: one configuration of the switches, NICs, PFC and run limits on the scenario's
//! shared topology and traffic, validated, with everything that follows from it on this fabric
//! resolved once, when the scenario loads ([`Resolved`]): the simulation consumes it as is.

use crate::cc::dcqcn::DcqcnParams;
use crate::error::FieldError;
use crate::ids::HostId;
use crate::nic::rx::RxSpec;
use crate::nic::{CcConfig, NicConfig};
use crate::pfc::PfcConfig;
use crate::scenario::RunLimits;
use crate::switch::{SwitchBuffers, SwitchConfig, build_buffers};
use crate::topology::Topology;

/// One configuration to run on the scenario's topology and traffic.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub switch: SwitchConfig,
    pub nic: NicConfig,
    pub pfc: PfcConfig,
    pub limits: RunLimits,
    /// What the configuration resolves to on the scenario's fabric.
    pub resolved: Resolved,
    /// The SONiC file its switch settings came from, and what it set.
    pub sonic: Option<super::sonic::SonicInfo>,
}

impl Variant {
    /// Largest frame a NIC sends (a full-MTU data packet).
    pub fn max_frame(&self) -> u32 {
        self.nic.max_frame()
    }
}

/// A variant's configuration resolved on the fabric: per switch, per host, per host port.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Each switch's buffer (MMU with every port's PFC headroom), in switch order.
    pub buffers: SwitchBuffers,
    /// Each host's DCQCN parameters at its line rate (None without DCQCN).
    pub dcqcn: Vec<Option<DcqcnParams>>,
    /// Each host's receive buffers, one per port (none when hosts drain at line rate).
    pub rx: Vec<Vec<RxSpec>>,
}

/// Resolve `switch`, `nic` and `pfc` on `topo`, or say which key cannot work there.
pub fn resolve(
    switch: &SwitchConfig,
    nic: &NicConfig,
    pfc: &PfcConfig,
    topo: &Topology,
) -> Result<Resolved, FieldError> {
    if let Some(m) = nic.model {
        m.check_rates(topo)?;
    }
    let hosts = (0..topo.hosts.len() as u32).map(HostId);
    let dcqcn = match nic.cc_for(crate::nic::Transport::Roce) {
        CcConfig::Dcqcn(c) => hosts
            .map(|h| {
                c.resolve_with(nic.dcqcn_preset(), topo.host_rate(h))
                    .map(Some)
                    .map_err(|(k, m)| FieldError::new(format!("nic.cc.{k}"), m))
            })
            .collect::<Result<_, _>>()?,
        _ => vec![None; topo.hosts.len()],
    };
    switch.validate_fabric(topo, pfc)?;
    let max_frame = nic.max_frame();
    Ok(Resolved {
        buffers: build_buffers(topo, switch, pfc, max_frame)?,
        dcqcn,
        rx: crate::nic::rx::build(topo, nic, pfc, max_frame, switch.latency)?,
    })
}
