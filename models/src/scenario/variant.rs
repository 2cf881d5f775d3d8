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
    /// `[switch.tier.<name>]`: other settings for some of the switches.
    pub tiers: Vec<super::tiers::Tier>,
    /// `check.silence`: finding ids left out.
    pub silence: Vec<String>,
    /// What the configuration check found (`crate::scenario::check`), silenced ids left out.
    pub findings: Vec<crate::scenario::check::Finding>,
}

impl Variant {
    /// The settings of switch number `s` (in switch order): its tier's, or `[switch]`.
    #[inline]
    pub fn switch_of(&self, s: usize) -> &SwitchConfig {
        match self.resolved.switch_tier.get(s) {
            Some(&t) if t > 0 => &self.tiers[t as usize - 1].switch,
            _ => &self.switch,
        }
    }

    /// The switch side of PFC of switch number `s`: its tier's, or `[pfc]`.
    #[inline]
    pub fn pfc_of(&self, s: usize) -> &PfcConfig {
        match self.resolved.switch_tier.get(s) {
            Some(&t) if t > 0 => &self.tiers[t as usize - 1].pfc,
            _ => &self.pfc,
        }
    }

    /// The SONiC file switch number `s`'s settings came from: its tier's, or `[switch]`'s.
    pub fn sonic_of(&self, s: usize) -> Option<&super::sonic::SonicInfo> {
        match self.resolved.switch_tier.get(s) {
            Some(&t) if t > 0 => self.tiers[t as usize - 1].sonic.as_ref(),
            _ => self.sonic.as_ref(),
        }
    }

    /// Switch number `s`'s settings, its tier's or `[switch]` and `[pfc]`.
    pub fn switch_settings(&self, s: usize) -> (&SwitchConfig, &PfcConfig) {
        (self.switch_of(s), self.pfc_of(s))
    }

    /// Every distinct switch configuration in use: `[switch]` and each tier's.
    pub fn switch_configs(&self) -> impl Iterator<Item = (&SwitchConfig, &PfcConfig)> {
        std::iter::once((&self.switch, &self.pfc)).chain(self.tiers.iter().map(|t| (&t.switch, &t.pfc)))
    }

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
    /// Each switch's tier: 0 for `[switch]`, i + 1 for `tiers[i]` (empty without tiers).
    pub switch_tier: Vec<u8>,
}

/// Resolve `switch` (and its `tiers`), `nic` and `pfc` on `topo`, or say which key cannot
/// work there.
pub fn resolve(
    switch: &SwitchConfig,
    tiers: &[super::tiers::Tier],
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
    let switch_tier = if tiers.is_empty() {
        Vec::new()
    } else {
        super::tiers::assign(tiers, topo, pfc)?
    };
    let of = |s: usize| match switch_tier.get(s) {
        Some(&t) if t > 0 => (&tiers[t as usize - 1].switch, &tiers[t as usize - 1].pfc),
        _ => (switch, pfc),
    };
    let tier_of = |s: usize| switch_tier.get(s).copied().unwrap_or(0) as usize;
    switch.validate_fabric(topo, pfc, |s| tier_of(s) == 0)?;
    for (i, t) in tiers.iter().enumerate() {
        t.switch
            .validate_fabric(topo, &t.pfc, |s| tier_of(s) == i + 1)
            .map_err(|e| FieldError::new(super::tiers::retarget(&t.name, &e.path), e.message))?;
    }
    let max_frame = nic.max_frame();
    Ok(Resolved {
        buffers: build_buffers(topo, of, max_frame)?,
        dcqcn,
        rx: crate::nic::rx::build(topo, nic, pfc, max_frame, switch.latency)?,
        switch_tier,
    })
}
