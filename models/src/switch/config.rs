//! `[switch]`: the switch model's configuration as written, its checks, and the MMU
//! parameters it resolves to (an ASIC profile with per-key overrides).

use super::ecn::EcnConfig;
use super::mmu::MmuParams;
use super::trim;
use crate::asic::Asic;
use crate::error::FieldError;
use crate::prio::PrioMask;
use crate::routing::Routing;
use serde::Deserialize;
use sim_core::Bytes;

/// `[switch]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Buffer architecture profile.
    #[serde(default)]
    pub asic: Asic,
    /// Total buffer (overrides the profile).
    #[serde(default)]
    pub buffer: Option<Bytes>,
    /// The shared pool, as SONiC's `BUFFER_POOL.<pool>.size` and the SAI's
    /// `SAI_BUFFER_POOL_ATTR_SIZE` give it: the minimums and headroom are reserved outside it.
    /// Unset: the buffer less what is reserved.
    #[serde(default)]
    pub shared_pool: Option<Bytes>,
    /// A shared headroom pool (SONiC's `BUFFER_POOL.ingress_lossless_pool.xoff`, the SAI's
    /// `SAI_BUFFER_POOL_ATTR_XOFF_SIZE`): lossless PGs take their headroom from it, each up to
    /// its own (`pfc.headroom`), instead of reserving it. Unset: each PG reserves its own.
    #[serde(default)]
    pub headroom_pool: Option<Bytes>,
    /// Cell size (overrides the profile).
    #[serde(default)]
    pub cell: Option<Bytes>,
    /// Independent buffer slices (overrides the profile).
    #[serde(default)]
    pub slices: Option<u32>,
    /// Lossless PG dynamic threshold as SAI log2(alpha) (overrides the profile).
    #[serde(default)]
    pub pg_alpha: Option<i8>,
    /// Lossy queue dynamic threshold as SAI log2(alpha) (overrides the profile).
    #[serde(default)]
    pub queue_alpha: Option<i8>,
    /// Reserved minimum per lossless priority group.
    #[serde(default)]
    pub pg_min: Bytes,
    /// Reserved minimum per lossy egress queue.
    #[serde(default)]
    pub queue_min: Bytes,
    /// WRED-ECN marking on egress queues (off when absent).
    #[serde(default)]
    pub ecn: Option<EcnConfig>,
    /// Packet trimming (off when absent: full queues drop).
    #[serde(default)]
    pub trim: Option<trim::TrimConfig>,
    /// How a switch picks among equal-cost next hops.
    #[serde(default)]
    pub routing: Routing,
    /// Ports per switch (overrides the profile's most ports, to model a bigger chassis).
    #[serde(default)]
    pub ports: Option<u32>,
    /// Pipeline latency of a switch (store-and-forward forwarding delay), added to every
    /// frame it receives.
    #[serde(default)]
    pub latency: sim_core::Duration,
    /// Transmission selection between priorities: strict, or DWRR weights (`scheduler.rs`).
    #[serde(default)]
    pub scheduler: crate::scheduler::SchedulerConfig,
    /// Time for routing to converge after a cable fails or is repaired.
    #[serde(default = "default_failover")]
    pub failover: sim_core::Duration,
    /// Classify arriving frames by their DSCP: `{ "26" = 3, "48" = 6 }` (SONiC's
    /// DSCP_TO_TC_MAP); a DSCP not listed keeps the frame's class. Unset: by the 802.1Q
    /// priority, or with `nic.trust = "dscp"` by DSCP >> 3 (ConnectX's default dscp2prio).
    #[serde(default)]
    pub dscp_to_tc: Option<std::collections::BTreeMap<String, u8>>,
    /// A SONiC `config_db.json` whose buffer, PFC, ECN, scheduler and watchdog tables set
    /// this variant's switch settings (`crate::sonic`); keys written here win over it.
    #[serde(default)]
    pub sonic: Option<String>,
    /// Write `sonic_counters.csv`: the switches' counters as SONiC's show commands print them
    /// (default: when `sonic` is set).
    #[serde(default)]
    pub sonic_counters: Option<bool>,
}

/// 100 us: an ASIC's fast ECMP failover rather than a routing protocol's seconds.
fn default_failover() -> sim_core::Duration {
    sim_core::Duration::from_us(100)
}

impl SwitchConfig {
    /// True when the run writes `sonic_counters.csv` for these switches.
    pub fn writes_sonic_counters(&self) -> bool {
        self.sonic_counters.unwrap_or(self.sonic.is_some())
    }

    /// The class of each DSCP at a switch's ingress (None: frames keep their 802.1Q class;
    /// a DSCP mapped to None keeps it too), given whether the NICs send untagged
    /// (`nic.trust = "dscp"`).
    pub fn dscp_classes(&self, untagged: bool) -> Result<Option<DscpClasses>, FieldError> {
        let mut m: DscpClasses = std::array::from_fn(|d| Some((d >> 3) as u8));
        match &self.dscp_to_tc {
            None if !untagged => return Ok(None),
            None => {}
            Some(map) => {
                let mut keep: DscpClasses = [None; 64];
                for (k, &tc) in map {
                    let key = format!("switch.dscp_to_tc.{k}");
                    let d: usize = k
                        .parse()
                        .ok()
                        .filter(|&d| d < 64)
                        .ok_or_else(|| FieldError::new(&key, format!("a DSCP 0..=63, got {k:?}")))?;
                    if tc > 7 {
                        return Err(FieldError::new(&key, format!("a class 0..=7, got {tc}")));
                    }
                    keep[d] = Some(tc);
                }
                for d in 0..64 {
                    if keep[d].is_some() {
                        m[d] = keep[d];
                    } else if !untagged {
                        m[d] = None; // unlisted: keep the tag's class
                    }
                }
            }
        }
        Ok(Some(m))
    }
}

/// The class a switch gives each DSCP, or None where the frame keeps its own.
pub type DscpClasses = [Option<u8>; 64];

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            asic: Asic::default(),
            buffer: None,
            shared_pool: None,
            headroom_pool: None,
            cell: None,
            slices: None,
            pg_alpha: None,
            queue_alpha: None,
            pg_min: Bytes(0),
            queue_min: Bytes(0),
            ecn: None,
            trim: None,
            routing: Routing::default(),
            ports: None,
            latency: sim_core::Duration::ZERO,
            scheduler: Default::default(),
            failover: default_failover(),
            dscp_to_tc: None,
            sonic: None,
            sonic_counters: None,
        }
    }
}

fn alpha(log2: i8) -> f64 {
    // SAI: values <= -8 mean 0, >= 7 mean infinity (mlnx_sai_buffer.c bounds).
    match log2 {
        ..=-8 => 0.0,
        7.. => f64::INFINITY,
        k => 2f64.powi(k as i32),
    }
}

/// Buffer slices a switch may have.
pub const MAX_SLICES: u32 = 64;
/// Ports a switch may have (a chassis of many line cards is still under this).
pub const MAX_PORTS: u32 = 65_536;

impl SwitchConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        self.scheduler.weights()?;
        self.dscp_classes(false)?;
        let p = self.asic.profile();
        if self.buffer.is_some_and(|b| b.0 < 4096) {
            return Err(FieldError::new("switch.buffer", "must be at least 4KiB"));
        }
        if let Some(c) = self.cell {
            if c.0 == 0 || c.0 > 16_384 {
                return Err(FieldError::new(
                    "switch.cell",
                    format!("must be between 1B and 16KiB, got {c}"),
                ));
            }
        }
        if let Some(n) = self.slices.filter(|&n| n == 0 || n > MAX_SLICES) {
            return Err(FieldError::new(
                "switch.slices",
                format!("must be between 1 and {MAX_SLICES} (real ASICs have 1 to 8), got {n}"),
            ));
        }
        let buffer = self.buffer.map_or(p.buffer, |b| b.0);
        for (key, pool) in [
            ("switch.shared_pool", self.shared_pool),
            ("switch.headroom_pool", self.headroom_pool),
        ] {
            match pool {
                Some(b) if b.0 < 4096 => return Err(FieldError::new(key, "must be at least 4KiB")),
                Some(b) if b.0 > buffer => {
                    return Err(FieldError::new(
                        key,
                        format!(
                            "{b} is more than the switch's {buffer} B buffer (switch.buffer, or its ASIC's)"
                        ),
                    ));
                }
                _ => {}
            }
        }
        // Each of a port's 8 priority groups (ingress) and 8 queues (egress) reserves its
        // minimum: 8 of either alone must fit in the buffer.
        for (key, min) in [
            ("switch.pg_min", self.pg_min),
            ("switch.queue_min", self.queue_min),
        ] {
            if min.0 * 8 > buffer {
                return Err(FieldError::new(
                    key,
                    format!("8 x {min} reserved (one per priority) is more than the {buffer} B buffer"),
                ));
            }
        }
        if let Some(t) = &self.trim {
            t.validate()?;
            if let Some(th) = t.threshold.filter(|th| th.0 > buffer) {
                return Err(FieldError::new(
                    "switch.trim.threshold",
                    format!("{th} is above the buffer ({buffer} B): a queue never gets that long"),
                ));
            }
        }
        if let Some(n) = self.ports.filter(|&n| n == 0 || n > MAX_PORTS) {
            return Err(FieldError::new(
                "switch.ports",
                format!("must be between 1 and {MAX_PORTS}, got {n}"),
            ));
        }
        if let Some(e) = &self.ecn {
            e.validate("switch.ecn")?;
            if e.kmin.0 > buffer {
                return Err(FieldError::new(
                    "switch.ecn.kmin",
                    format!("kmin {} is above the buffer ({buffer} B)", e.kmin),
                ));
            }
        }
        Ok(())
    }

    /// Checks that need the fabric: no switch has more cables than the ASIC has ports, and a
    /// static PFC XOFF threshold fits the buffer.
    /// Checks on the fabric's switches that take these settings: switch number s when
    /// `mine(s)` (a tier's switches, or those `[switch]` keeps).
    pub fn validate_fabric(
        &self,
        topo: &crate::topology::Topology,
        pfc: &crate::pfc::PfcConfig,
        mine: impl Fn(usize) -> bool,
    ) -> Result<(), FieldError> {
        let buffer = self.buffer.map_or(self.asic.profile().buffer, |b| b.0);
        if let Some(x) = pfc.xoff.filter(|x| !pfc.priorities.is_empty() && x.0 > buffer) {
            return Err(FieldError::new(
                "pfc.xoff",
                format!("{x} is above the switch buffer ({buffer} B): no XOFF would ever be sent"),
            ));
        }
        let most = self.ports.unwrap_or(self.asic.profile().ports);
        let mut cables = vec![0u32; topo.nodes.len()];
        for l in &topo.links {
            cables[l.a.idx()] += 1;
            cables[l.b.idx()] += 1;
        }
        let crowded = topo
            .nodes
            .iter()
            .zip(&cables)
            .filter(|(n, _)| n.kind == crate::topology::NodeKind::Switch)
            .enumerate()
            .find(|(s, (_, c))| mine(*s) && **c > most)
            .map(|(_, x)| x);
        if let Some((n, c)) = crowded {
            let key = if self.ports.is_some() {
                "switch.ports"
            } else {
                "switch.asic"
            };
            return Err(FieldError::new(
                key,
                format!(
                    "switch {} has {c} cables, more than the {most} ports of this switch; pick a larger ASIC, set switch.ports for a bigger chassis, or use fewer hosts per switch",
                    n.name
                ),
            ));
        }
        Ok(())
    }

    /// MMU parameters with the profile's defaults filled in.
    /// `xon_offset` overrides the profile's XON hysteresis.
    pub fn mmu_params(&self, lossless: PrioMask, xoff: Option<u64>, xon_offset: Option<u64>) -> MmuParams {
        let p = self.asic.profile();
        MmuParams {
            buffer: self.buffer.map_or(p.buffer, |b| b.0),
            cell: self.cell.map_or(p.cell, |c| c.0 as u32),
            slices: self.slices.unwrap_or(p.slices),
            pg_alpha: alpha(self.pg_alpha.unwrap_or(p.pg_alpha_log2)),
            queue_alpha: alpha(self.queue_alpha.unwrap_or(p.queue_alpha_log2)),
            pg_min: self.pg_min.0,
            queue_min: self.queue_min.0,
            lossless,
            xoff,
            xon_offset: xon_offset.unwrap_or(p.xon_offset),
            shared_pool: self.shared_pool.map(|b| b.0),
            headroom_pool: self.headroom_pool.map(|b| b.0),
            credit_flow: crate::prio::PrioMask::EMPTY,
        }
    }

    /// Headroom per lossless PG fixed by the profile, if it fixes one.
    pub fn profile_headroom(&self) -> Option<u64> {
        self.asic.profile().headroom
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prio::PrioMask;

    #[test]
    fn sai_alpha_encoding() {
        assert_eq!(alpha(-3), 0.125);
        assert_eq!(alpha(0), 1.0);
        assert_eq!(alpha(3), 8.0);
        assert_eq!(alpha(-8), 0.0);
        assert!(alpha(7).is_infinite());
    }

    #[test]
    fn profiles_are_overridable() {
        let c = SwitchConfig {
            asic: Asic::Spectrum2,
            buffer: Some(Bytes(1_000_000)),
            ..Default::default()
        };
        let m = c.mmu_params(PrioMask::EMPTY, None, None);
        assert_eq!((m.buffer, m.cell), (1_000_000, 144));
        let t = SwitchConfig {
            asic: Asic::Tomahawk,
            ..Default::default()
        }
        .mmu_params(PrioMask::EMPTY, None, None);
        assert_eq!((t.buffer, t.slices), (16_000_000, 4));
    }
}
