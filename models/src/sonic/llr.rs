//! SONiC's UE link level retry tables to each port's LLR: \[HLD\] is SONiC's "Link Layer
//! Retry" design (sonic-net/SONiC, rev 0.1, Nov 2025), §2.4.1 for the tables and §2.7 for
//! their YANG models (`sonic-llr`, `sonic-llr-port`, `sonic-llr-profile`), whose defaults
//! apply to what a profile leaves out; sonic-swss's llrorch binds them to SAI (`crate::llr`).
//!
//! | SONiC | what the port runs |
//! |---|---|
//! | `LLR_CONFIG.GLOBAL.mode` | `static`: the `LLR_PORT` entries apply; `dynamic` (LLDP negotiation, not in SONiC's phase I): none does |
//! | `LLR_PORT.<port>.llr_local` | its receiver runs LLR (accepts numbered frames, sends LLR_ACK and LLR_NACK) |
//! | `LLR_PORT.<port>.llr_remote` | its transmitter runs LLR (numbers frames, keeps them for replay) |
//! | `LLR_PORT.<port>.llr_profile` (\[HLD\]'s samples: `profile`) | the profile its end of the cable runs |
//! | `LLR_PROFILE.<name>.max_outstanding_bytes`, `max_outstanding_frames` | `llr.buffer`, `llr.frames` |
//! | `max_replay_timer`, `max_replay_count` (YANG default 1) | `llr.replay_timer`, `llr.replay_count` |
//! | `pcs_lost_timeout`, `data_age_timeout` (ns), `ctlos_spacing_bytes` | `llr.pcs_lost_timeout`, `llr.data_age_timeout`, `llr.ctlos_spacing` |
//! | `init_action`, `flush_action` | `llr.init_action`, `llr.flush_action` |
//!
//! `re_init_on_flush` is always true: llrorch sets `RE_INIT_ON_FLUSH` on every profile it
//! creates (\[HLD\] §2.1.4).

use super::{Imported, JsonError, PortLlr, err, int, reference, table, text};
use crate::llr::{FrameAction, LlrConfig, LlrSettings};
use serde_json::{Map, Value, json};
use sim_core::{BitRate, Bytes, Duration};
use std::collections::BTreeMap;

/// The fields of an `LLR_PROFILE` entry, by the name `LlrSettings::check` gives its setting.
const FIELDS: &[(&str, &str)] = &[
    ("buffer", "max_outstanding_bytes"),
    ("frames", "max_outstanding_frames"),
    ("replay_timer", "max_replay_timer"),
    ("replay_count", "max_replay_count"),
    ("pcs_lost_timeout", "pcs_lost_timeout"),
    ("data_age_timeout", "data_age_timeout"),
    ("ctlos_spacing", "ctlos_spacing_bytes"),
];

/// The replay timer run where a profile gives none or 0 (the YANG default, which the model
/// cannot run: a timer of 0 would replay without waiting for an acknowledgement): \[HLD\]'s
/// sample profiles' 5,000 ns.
const REPLAY_TIMER: Duration = crate::llr::REPLAY_TIMER;

/// Read `LLR_CONFIG`, `LLR_PORT` and `LLR_PROFILE` into `out.ports` (read after `PORT`).
pub(super) fn import(root: &Map<String, Value>, out: &mut Imported) -> Result<(), JsonError> {
    let entries = table(root, "LLR_PORT")?;
    let profiles = profiles(root, out)?;
    let mode = match table(root, "LLR_CONFIG")?.iter().find(|(k, _)| *k == "GLOBAL") {
        Some((_, o)) => text(o, "LLR_CONFIG.GLOBAL", "mode")?,
        None => None,
    };
    if entries.is_empty() {
        return Ok(());
    }
    match mode.as_deref() {
        Some("dynamic") => {
            out.warn(
                "LLR_CONFIG.GLOBAL.mode: dynamic (LLDP negotiation, which SONiC's phase I does not \
                 have): the LLR_PORT entries do not apply, and the file turns LLR on nowhere",
            );
            return Ok(());
        }
        Some(_) => {}
        None => out.warn(
            "LLR_CONFIG.GLOBAL.mode: missing (sonic-llr's YANG makes it mandatory); the LLR_PORT \
             entries are read as static mode reads them",
        ),
    }
    for (name, o) in entries {
        let path = format!("LLR_PORT.{name}");
        let on = |field: &str| -> Result<bool, JsonError> {
            Ok(match text(o, &path, field)?.as_deref() {
                Some("enabled") => true,
                Some("disabled") | None => false, // the YANG default: disabled
                Some(v) => {
                    return Err(err(
                        &format!("{path}.{field}"),
                        format!("expected enabled or disabled, got {v:?}"),
                    ));
                }
            })
        };
        let (local, remote) = (on("llr_local")?, on("llr_remote")?);
        let bound = match text(o, &path, "llr_profile")? {
            Some(p) => Some(("llr_profile", p)),
            None => text(o, &path, "profile")?.map(|p| ("profile", p)),
        };
        let profile = match &bound {
            None => {
                if local || remote {
                    out.warn(format!(
                        "{path}: LLR enabled with no llr_profile bound: the port's LLR stays down \
                         (HLD's oper_state down) and its cable runs without it"
                    ));
                }
                None
            }
            Some((field, p)) => {
                let p = reference(p);
                match profiles.get(p) {
                    Some(Some(s)) => Some((p.to_string(), *s)),
                    // Refused by llrorch (a warning already says why): the bind fails.
                    Some(None) => None,
                    None => {
                        out.warn(format!(
                            "{path}.{field}: no LLR_PROFILE {p:?} in the file (it may be on the \
                             box): the port runs the YANG defaults, with the buffer the model \
                             sizes for its cable"
                        ));
                        Some((p.to_string(), defaults()))
                    }
                }
            }
        };
        let Some(port) = out.ports.iter_mut().find(|p| p.name == name) else {
            out.warn(format!("{path}: no port {name} in PORT: not applied"));
            continue;
        };
        port.llr = Some(PortLlr {
            local,
            remote,
            profile,
        });
    }
    Ok(())
}

/// What a profile leaves out: the YANG defaults, but the replay timer (see [`REPLAY_TIMER`]);
/// re-initialisation on a flush, as llrorch sets it.
fn defaults() -> LlrSettings {
    LlrSettings {
        replay_count: Some(1),
        replay_timer: Some(REPLAY_TIMER),
        pcs_lost_timeout: Some(Duration::ZERO),
        data_age_timeout: Some(Duration::ZERO),
        ctlos_spacing: Some(Bytes(2_048)),
        init_action: Some(FrameAction::BestEffort),
        flush_action: Some(FrameAction::BestEffort),
        re_init_on_flush: Some(true),
        ..LlrSettings::default()
    }
}

/// Every `LLR_PROFILE` entry: its settings, or None for one llrorch does not create (a
/// mandatory field missing, with a warning). A value the model cannot run is an error.
fn profiles(
    root: &Map<String, Value>,
    out: &mut Imported,
) -> Result<BTreeMap<String, Option<LlrSettings>>, JsonError> {
    let mut all = BTreeMap::new();
    for (name, o) in table(root, "LLR_PROFILE")? {
        let path = format!("LLR_PROFILE.{name}");
        let u32_ = |field| int(o, &path, field, 0..=u32::MAX as i64);
        let ns = |field| -> Result<Option<Duration>, JsonError> {
            Ok(u32_(field)?.map(|n| Duration::from_ns(n as u64)))
        };
        let mut s = defaults();
        s.buffer = u32_("max_outstanding_bytes")?.map(|b| Bytes(b as u64));
        s.frames = u32_("max_outstanding_frames")?.map(|f| f as u32);
        let missing: Vec<&str> = [
            ("max_outstanding_frames", s.frames.is_none()),
            ("max_outstanding_bytes", s.buffer.is_none()),
        ]
        .into_iter()
        .filter_map(|(f, m)| m.then_some(f))
        .collect();
        if !missing.is_empty() {
            out.warn(format!(
                "{path}: {} missing (mandatory on create): llrorch does not create the profile, \
                 and a port that binds it runs without LLR",
                missing.join(" and ")
            ));
            all.insert(name.to_string(), None);
            continue;
        }
        match ns("max_replay_timer")? {
            Some(t) if t > Duration::ZERO => s.replay_timer = Some(t),
            t => out.warn(format!(
                "{path}.max_replay_timer: {} (the YANG default): the model needs a timer to \
                 replay an unacknowledged tail, and runs {} ns, the HLD's sample profiles' value",
                if t.is_some() { "0" } else { "not given, 0" },
                REPLAY_TIMER.as_ns_f64()
            )),
        }
        if let Some(c) = u32_("max_replay_count")? {
            s.replay_count = Some(c as u32);
        }
        s.pcs_lost_timeout = ns("pcs_lost_timeout")?.or(s.pcs_lost_timeout);
        s.data_age_timeout = ns("data_age_timeout")?.or(s.data_age_timeout);
        if let Some(b) = u32_("ctlos_spacing_bytes")? {
            s.ctlos_spacing = Some(Bytes(b as u64));
        }
        for (field, slot) in [
            ("init_action", &mut s.init_action),
            ("flush_action", &mut s.flush_action),
        ] {
            let Some(v) = text(o, &path, field)? else {
                continue;
            };
            let Some(&a) = FrameAction::ALL.iter().find(|a| a.name() == v) else {
                return Err(err(
                    &format!("{path}.{field}"),
                    format!("expected best_effort, block or discard, got {v:?}"),
                ));
            };
            *slot = Some(a);
        }
        if let Err((setting, m)) = s.check() {
            let field = FIELDS.iter().find(|f| f.0 == setting).map_or(setting, |f| f.1);
            return Err(err(&format!("{path}.{field}"), m));
        }
        all.insert(name.to_string(), Some(s));
    }
    Ok(all)
}

/// The LLR tables for ports `ports` whose cables run these profiles (None: without LLR), as
/// `(table, entries)`; nothing when no cable runs LLR. Each profile is named as llrmgrd names
/// the ones it generates, `llr_<Mb/s>_<m>m_profile` (\[HLD\] §2.1.3), with a suffix where two
/// of one speed and cable differ. Every field is written, so the file does not depend on
/// the YANG defaults.
pub fn export(
    ports: &[String],
    cables: &[(BitRate, Duration)],
    llr: &[Option<LlrConfig>],
) -> Vec<(&'static str, Value)> {
    if llr.iter().all(Option::is_none) {
        return Vec::new();
    }
    let (mut port_t, mut profile_t) = (Map::new(), Map::new());
    for ((port, (rate, delay)), c) in ports.iter().zip(cables).zip(llr) {
        let Some(c) = c else { continue };
        let ns = |d: Duration| (d.0 / 1_000).to_string();
        let profile = json!({
            "max_outstanding_frames": c.frames.to_string(),
            "max_outstanding_bytes": c.buffer.min(u32::MAX as u64).to_string(),
            "max_replay_count": c.replay_count.to_string(),
            "max_replay_timer": ns(c.replay_timer),
            "pcs_lost_timeout": ns(c.pcs_lost_timeout),
            "data_age_timeout": ns(c.data_age_timeout),
            "ctlos_spacing_bytes": c.ctlos_spacing.to_string(),
            "init_action": c.init_action.name(),
            "flush_action": c.flush_action.name(),
        });
        let base = format!(
            "llr_{}_{}m_profile",
            rate.0 / 1_000_000,
            delay.0 / (crate::link::PS_PER_MM * 1000)
        );
        let name = (1..)
            .map(|n| {
                if n == 1 {
                    base.clone()
                } else {
                    format!("{base}_{n}")
                }
            })
            .find(|n| profile_t.get(n).is_none_or(|p| *p == profile))
            .expect("an unused name");
        profile_t.insert(name.clone(), profile);
        port_t.insert(
            port.clone(),
            json!({ "llr_local": "enabled", "llr_remote": "enabled", "llr_profile": name }),
        );
    }
    vec![
        ("LLR_CONFIG", json!({ "GLOBAL": { "mode": "static" } })),
        ("LLR_PORT", Value::Object(port_t)),
        ("LLR_PROFILE", Value::Object(profile_t)),
    ]
}
