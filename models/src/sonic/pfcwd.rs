//! `PFC_WD` to settings: the watchdog's detection time (`pfc.watchdog`), action
//! (`pfc.watchdog_action`; SONiC's default when a port's entry names none is `drop`, as
//! `show pfcwd config` prints it) and restoration time (`pfc.watchdog_restore`), in ms.

use super::{Imported, JsonError, err, int, table, text};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use toml::Value as T;

/// The PFC watchdog: detection time, action (SONiC's default is `drop`) and restoration time.
pub(super) fn import(root: &Map<String, Value>, out: &mut Imported) -> Result<(), JsonError> {
    let (mut times, mut restores, mut actions) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (port, o) in table(root, "PFC_WD")? {
        if port == "GLOBAL" {
            continue;
        }
        let path = format!("PFC_WD.{port}");
        if let Some(ms) = int(o, &path, "detection_time", 1..=60_000)? {
            times.insert(ms);
        }
        if let Some(ms) = int(o, &path, "restoration_time", 1..=600_000)? {
            restores.insert(ms);
        }
        let action = text(o, &path, "action")?.unwrap_or_else(|| "drop".to_string());
        if !matches!(action.as_str(), "drop" | "forward" | "alert") {
            return Err(err(
                &format!("{path}.action"),
                format!("expected drop, forward or alert, got {action:?}"),
            ));
        }
        actions.insert(action);
    }
    if let Some(ms) = times.first() {
        out.put(
            "pfc.watchdog",
            T::String(format!("{ms}ms")),
            "PFC_WD.*.detection_time",
        );
        if times.len() > 1 {
            out.warn("PFC_WD: ports detect after different times; the model takes the shortest");
        }
    }
    if let Some(ms) = restores.first() {
        out.put(
            "pfc.watchdog_restore",
            T::String(format!("{ms}ms")),
            "PFC_WD.*.restoration_time",
        );
        if restores.len() > 1 {
            out.warn("PFC_WD: ports restore after different times; the model takes the shortest");
        }
    }
    if let Some(a) = actions.first() {
        out.put("pfc.watchdog_action", T::String(a.clone()), "PFC_WD.*.action");
        if actions.len() > 1 {
            out.warn(format!(
                "PFC_WD: ports act differently ({}); the model takes {a} on every port",
                actions.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(())
}
