//! Settings to `config_db.json`: the fragment a SONiC box would need to behave as a variant's
//! switches do (`sim export sonic`), in the tables [`super::import()`] reads, so a file
//! exported and imported again gives the same settings.
//!
//! Ports are named as SONiC names a box's front panel, `Ethernet0`, `Ethernet4`, ... in the
//! switch's cable order; a lossless profile per port speed and cable carries the headroom
//! the run gives it (`pg_lossless_<Mb/s>_<m>m_profile`, buffermgrd's naming: as the scenario
//! sets it, or computed from the cable as a run computes it); the
//! watchdog's action is the scenario's (`alert` when its watchdog is off: a box that only
//! reports storms, as the model then does); a port whose cable runs RS-FEC gets `"fec": "rs"`
//! (the code its speed and lanes take), the others no `fec` (the box keeps its default); a
//! port whose cable runs LLR gets an `LLR_PORT` entry and its profile (`super::llr`).

use crate::pfc::PfcConfig;
use crate::switch::SwitchConfig;
use serde_json::{Map, Value, json};
use sim_core::{BitRate, Duration};

/// The fragment for a switch with settings `sw` and `pfc` (its tier's, or `[switch]` and
/// `[pfc]`), these cables (rate and propagation delay, in cable order) running these FEC
/// modes and LLR profiles, and frames up to `max_frame` bytes (what a computed headroom must absorb).
pub fn export(
    sw: &SwitchConfig,
    pfc: &PfcConfig,
    cables: &[(BitRate, Duration)],
    fec: &[crate::fec::Fec],
    llr: &[Option<crate::llr::LlrConfig>],
    max_frame: u32,
) -> Result<Value, String> {
    let rates: Vec<BitRate> = cables.iter().map(|c| c.0).collect();
    let ports: Vec<String> = (0..rates.len()).map(|i| format!("Ethernet{}", 4 * i)).collect();
    let lossless: Vec<u8> = pfc.priorities.clone();
    let params = sw.mmu_params(pfc.mask(), pfc.xoff.map(|b| b.0), pfc.xon_offset.map(|b| b.0));
    let list = |p: &[u8]| p.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(",");
    let s_ = |x: u64| Value::String(x.to_string());
    let mut out = Map::new();
    let mut port_t = Map::new();
    for (i, (p, r)) in ports.iter().zip(&rates).enumerate() {
        let mut port = json!({ "speed": (r.0 / 1_000_000).to_string() });
        // A port whose cable runs RS-FEC says so; one without leaves the box's own default
        // (a box's 100G ports usually run rs: "none" written here could turn it off).
        if fec.get(i).is_some_and(|&f| f != crate::fec::Fec::None) {
            port["fec"] = "rs".into();
        }
        port_t.insert(p.clone(), port);
    }
    out.insert("PORT".into(), Value::Object(port_t));
    for (table, entries) in super::llr::export(&ports, cables, llr) {
        out.insert(table.into(), entries);
    }
    // Each port's lossless headroom, as the run lays it out (set, the profile's, or computed
    // from the cable): each profile's xoff.
    let headroom: Vec<u64> = cables
        .iter()
        .map(|&(r, d)| crate::switch::buffers::port_headroom(sw, pfc, params.cell, r, d, max_frame).0)
        .collect();
    // The pool's size is its shared part (what the import reads back as switch.shared_pool):
    // as given, else the buffer less this switch's reserved space.
    let shared = match sw.shared_pool {
        Some(b) => b.0,
        None => crate::switch::mmu::Mmu::new(&params, &headroom)?.shared_pool_bytes(),
    };
    let mode = if pfc.xoff.is_some() { "static" } else { "dynamic" };
    let mut pool = json!({ "type": "ingress", "mode": mode, "size": s_(shared) });
    if let Some(h) = sw.headroom_pool {
        pool["xoff"] = s_(h.0);
    }
    out.insert("BUFFER_POOL".into(), json!({ "ingress_lossless_pool": pool }));
    // One lossless profile per port speed and cable, with the headroom the run uses.
    let mut profiles = Map::new();
    let mut by_port: Vec<String> = Vec::new();
    if !lossless.is_empty() {
        for ((r, d), &xoff) in cables.iter().zip(&headroom) {
            let mbps = r.0 / 1_000_000;
            let metres = d.0 / (crate::link::PS_PER_MM * 1000);
            let name = format!("pg_lossless_{mbps}_{metres}m_profile");
            by_port.push(name.clone());
            let mut p = Map::new();
            p.insert("pool".into(), "ingress_lossless_pool".into());
            p.insert("xoff".into(), s_(xoff));
            p.insert("size".into(), s_(sw.pg_min.0));
            if let Some(off) = pfc.xon_offset {
                p.insert("xon_offset".into(), s_(off.0));
            }
            match pfc.xoff {
                Some(x) => p.insert("static_th".into(), s_(x.0)),
                None => p.insert(
                    "dynamic_th".into(),
                    Value::String(log2(params.pg_alpha).to_string()),
                ),
            };
            profiles.insert(name, Value::Object(p));
        }
    }
    let mut lossy = Map::new();
    lossy.insert("pool".into(), "ingress_lossless_pool".into());
    lossy.insert("size".into(), s_(sw.queue_min.0));
    lossy.insert(
        "dynamic_th".into(),
        Value::String(log2(params.queue_alpha).to_string()),
    );
    profiles.insert("egress_lossy_profile".into(), Value::Object(lossy));
    out.insert("BUFFER_PROFILE".into(), Value::Object(profiles));
    let lossy_queues: Vec<u8> = (0..8u8).filter(|q| !lossless.contains(q)).collect();
    let (mut pg, mut bq, mut qos, mut queue, mut wd) =
        (Map::new(), Map::new(), Map::new(), Map::new(), Map::new());
    let mut cable_t = Map::new();
    for (i, (p, (_, d))) in ports.iter().zip(cables).enumerate() {
        cable_t.insert(
            p.clone(),
            Value::String(format!("{}m", d.0 / (crate::link::PS_PER_MM * 1000))),
        );
        for &q in &lossless {
            pg.insert(format!("{p}|{q}"), json!({ "profile": by_port[i] }));
        }
        for &q in &lossy_queues {
            bq.insert(format!("{p}|{q}"), json!({ "profile": "egress_lossy_profile" }));
        }
        let mut q = json!({ "pfc_enable": list(&lossless) });
        if sw.dscp_to_tc.is_some() {
            q["dscp_to_tc_map"] = "SIM".into();
        }
        qos.insert(p.clone(), q);
        if !lossless.is_empty() {
            let ms = |d: sim_core::Duration| d.0.div_ceil(1_000_000_000).max(1).to_string();
            let action = match pfc.watchdog_action {
                crate::pfc::WatchdogAction::Off => "alert",
                a => a.name(),
            };
            wd.insert(
                p.clone(),
                json!({
                    "action": action,
                    "detection_time": ms(pfc.watchdog),
                    "restoration_time": ms(pfc.restoration()),
                }),
            );
        }
    }
    out.insert("CABLE_LENGTH".into(), json!({ "SIM": cable_t }));
    if let Some(m) = &sw.dscp_to_tc {
        let t: Map<String, Value> = m
            .iter()
            .map(|(d, c)| (d.clone(), Value::String(c.to_string())))
            .collect();
        out.insert("DSCP_TO_TC_MAP".into(), json!({ "SIM": t }));
    }
    out.insert("BUFFER_PG".into(), Value::Object(pg));
    out.insert("BUFFER_QUEUE".into(), Value::Object(bq));
    out.insert("PORT_QOS_MAP".into(), Value::Object(qos));
    let weights = sw.scheduler.weights().map_err(|e| e.to_string())?;
    let mut scheds = Map::new();
    if let Some(w) = weights {
        for (q, &wt) in w.iter().enumerate().filter(|(_, w)| **w > 0) {
            scheds.insert(
                format!("scheduler.{q}"),
                json!({ "type": "DWRR", "weight": wt.to_string() }),
            );
        }
    }
    if let Some(e) = &sw.ecn {
        let pct = (e.pmax * 100.0).round().clamp(1.0, 100.0) as u32;
        let wred = json!({ "SIM": {
            "wred_green_enable": "true", "ecn": "ecn_green",
            "green_min_threshold": e.kmin.0.to_string(), "green_max_threshold": e.kmax.0.to_string(),
            "green_drop_probability": pct.to_string(),
        }});
        out.insert("WRED_PROFILE".into(), wred);
    }
    for p in &ports {
        for q in 0..8u8 {
            let mut o = Map::new();
            if scheds.contains_key(&format!("scheduler.{q}")) {
                o.insert("scheduler".into(), Value::String(format!("scheduler.{q}")));
            }
            if sw.ecn.is_some() && (lossless.contains(&q) || lossless.is_empty()) {
                o.insert("wred_profile".into(), "SIM".into());
            }
            if !o.is_empty() {
                queue.insert(format!("{p}|{q}"), Value::Object(o));
            }
        }
    }
    if !scheds.is_empty() {
        out.insert("SCHEDULER".into(), Value::Object(scheds));
    }
    if !queue.is_empty() {
        out.insert("QUEUE".into(), Value::Object(queue));
    }
    if !wd.is_empty() {
        out.insert("PFC_WD".into(), Value::Object(wd));
    }
    Ok(Value::Object(out))
}

/// SAI's log2 of a dynamic threshold's alpha (an exact power of two here).
fn log2(alpha: f64) -> i64 {
    if alpha <= 0.0 {
        -8
    } else if alpha.is_infinite() {
        7
    } else {
        alpha.log2().round() as i64
    }
}
