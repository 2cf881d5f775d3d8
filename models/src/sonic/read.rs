//! Which tables and fields of a `config_db.json` the importer acts on, and a warning for each
//! it does not (never a silent skip).

use super::{Imported, JsonError, table};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Tables read, and the fields of each the model acts on.
const READ: &[(&str, &[&str])] = &[
    ("BUFFER_POOL", &["size", "type", "mode", "xoff"]),
    (
        "BUFFER_PROFILE",
        &[
            "pool",
            "size",
            "dynamic_th",
            "static_th",
            "xon",
            "xon_offset",
            "xoff",
        ],
    ),
    ("BUFFER_PG", &["profile"]),
    ("BUFFER_QUEUE", &["profile"]),
    (
        "PORT_QOS_MAP",
        &[
            "pfc_enable",
            "dscp_to_tc_map",
            "tc_to_pg_map",
            "tc_to_queue_map",
            "pfc_to_queue_map",
            "pfc_to_pg_map",
        ],
    ),
    ("PORT", &["speed", "fec", "lanes"]),
    ("QUEUE", &["scheduler", "wred_profile"]),
    ("SCHEDULER", &["type", "weight"]),
    (
        "WRED_PROFILE",
        &[
            "wred_green_enable",
            "green_min_threshold",
            "green_max_threshold",
            "green_drop_probability",
            "ecn",
            "wred_yellow_enable",
            "yellow_min_threshold",
            "yellow_max_threshold",
            "yellow_drop_probability",
            "wred_red_enable",
            "red_min_threshold",
            "red_max_threshold",
            "red_drop_probability",
        ],
    ),
    ("PFC_WD", &["detection_time", "action", "restoration_time"]),
    ("DSCP_TO_TC_MAP", &[]),
    ("TC_TO_PRIORITY_GROUP_MAP", &[]),
    ("TC_TO_QUEUE_MAP", &[]),
    ("MAP_PFC_PRIORITY_TO_QUEUE", &[]),
    ("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", &[]),
    ("CABLE_LENGTH", &[]),
    ("LLR_CONFIG", &["mode"]),
    ("LLR_PORT", &["llr_local", "llr_remote", "llr_profile", "profile"]),
    (
        "LLR_PROFILE",
        &[
            "max_outstanding_frames",
            "max_outstanding_bytes",
            "max_replay_count",
            "max_replay_timer",
            "pcs_lost_timeout",
            "data_age_timeout",
            "ctlos_spacing_bytes",
            "init_action",
            "flush_action",
        ],
    ),
];

/// Every table and field the model does not act on, as warnings: one per table.
pub(super) fn unread_fields(root: &Map<String, Value>, out: &mut Imported) -> Result<(), JsonError> {
    for name in root.keys() {
        let Some((_, fields)) = READ.iter().find(|(t, _)| t == name) else {
            let n = root[name].as_object().map_or(0, |o| o.len());
            out.warn(format!(
                "{name}: table not read ({n} entries; the model has nothing it configures)"
            ));
            continue;
        };
        if fields.is_empty() {
            continue;
        }
        let mut unknown = BTreeSet::new();
        for (key, o) in table(root, name)? {
            if name == "PFC_WD" && key == "GLOBAL" {
                unknown.extend(o.keys().map(|k| k.as_str()));
                continue;
            }
            unknown.extend(o.keys().map(|k| k.as_str()).filter(|k| !fields.contains(k)));
        }
        if !unknown.is_empty() {
            let list: Vec<&str> = unknown.into_iter().collect();
            out.warn(format!("{name}: fields not modelled: {}", list.join(", ")));
        }
    }
    Ok(())
}
