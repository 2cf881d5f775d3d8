//! The buffers of every switch of a fabric, laid out for a variant: each switch's MMU with the
//! PFC headroom of each of its ports, computed from the cable (or fixed by the profile or the
//! scenario), and whether that headroom covers what the cable can deliver after XOFF.

use super::config::SwitchConfig;
use super::mmu;
use crate::error::FieldError;

/// One switch's buffer as a run starts.
#[derive(Debug, Clone)]
pub struct SwitchLayout {
    pub mmu: mmu::Mmu,
    /// Per local port: the lossless headroom covers what the cable can deliver after XOFF
    /// (always true when headroom is computed).
    pub headroom_adequate: Vec<bool>,
}

/// The buffers of every switch in a topology, in switch order, laid out for a variant.
pub type SwitchBuffers = Vec<SwitchLayout>;

/// A switch port's lossless headroom (0 without a lossless priority): as the scenario sets it
/// for the port's rate and cable, else the ASIC profile's fixed one, else what the cable needs;
/// and what the cable needs (`PfcConfig::headroom_needed`), for a port of `rate` on a cable
/// of `cable` delay carrying frames up to `max_frame`, in cells of `cell` bytes.
pub fn port_headroom(
    sw: &SwitchConfig,
    pfc: &crate::pfc::PfcConfig,
    cell: u32,
    rate: sim_core::BitRate,
    cable: sim_core::Duration,
    max_frame: u32,
) -> (u64, u64) {
    // Frames spend the pipeline latency inside this switch before it can count them (and a
    // pause to a switch peer as long inside it): the cable looks that much longer.
    let delay = cable + sw.latency;
    let needed =
        crate::pfc::PfcConfig::headroom_needed(rate, delay, max_frame, pfc.response_time(rate), cell);
    // CBFC never sends without room: nothing arrives after a decision to stop. Only the
    // priorities PFC keeps lossless need headroom.
    if pfc.is_cbfc() && pfc.pause_mask().is_empty() {
        return (0, 0);
    }
    let h = if pfc.mask().is_empty() {
        0
    } else {
        pfc.headroom_for(rate, cable)
            .or(sw.profile_headroom())
            .unwrap_or(needed)
    };
    (h, needed)
}

/// Lay out every switch's MMU, switch number s with the settings `of(s)` gives. Ports are
/// numbered per node in the order the topology lists its links, as
/// [`crate::network::Network::build`] numbers them.
pub fn build_buffers<'a>(
    t: &crate::topology::Topology,
    of: impl Fn(usize) -> (&'a SwitchConfig, &'a crate::pfc::PfcConfig),
    max_frame: u32,
) -> Result<SwitchBuffers, FieldError> {
    use crate::topology::NodeKind;
    let mut per_node: Vec<Vec<(sim_core::BitRate, sim_core::Duration)>> = vec![Vec::new(); t.nodes.len()];
    for l in &t.links {
        per_node[l.a.idx()].push((l.rate, l.delay));
        per_node[l.b.idx()].push((l.rate, l.delay));
    }
    let mut out = SwitchBuffers::new();
    for (n, spec) in t.nodes.iter().enumerate() {
        if spec.kind != NodeKind::Switch {
            continue;
        }
        let (sw, pfc) = of(out.len());
        let lossless = pfc.mask();
        let mut params = sw.mmu_params(lossless, pfc.xoff.map(|b| b.0), pfc.xon_offset.map(|b| b.0));
        params.credit_flow = pfc.cbfc_mask();
        let (mut headroom, mut adequate) = (Vec::new(), Vec::new());
        for &(rate, cable) in &per_node[n] {
            let (h, needed) = port_headroom(sw, pfc, params.cell, rate, cable, max_frame);
            headroom.push(h);
            adequate.push(h >= needed);
        }
        let mmu = mmu::Mmu::new(&params, &headroom).map_err(|e| {
            let key = if sw.shared_pool.is_some() {
                "switch.shared_pool"
            } else if pfc.headroom.is_some() || !pfc.headroom_by_rate.is_empty() {
                "pfc.headroom"
            } else {
                "switch.buffer"
            };
            FieldError::new(key, format!("switch {}: {e}", spec.name))
        })?;
        out.push(SwitchLayout {
            mmu,
            headroom_adequate: adequate,
        });
    }
    Ok(out)
}
