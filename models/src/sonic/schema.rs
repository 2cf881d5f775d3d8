//! Every value of the tables the importer knows, checked against its type in SONiC's YANG
//! models (`sonic-buildimage/src/sonic-yang-models/yang-models/sonic-buffer-pool.yang`,
//! `sonic-buffer-profile.yang`, `sonic-port.yang`, `sonic-wred-profile.yang`,
//! `sonic-scheduler.yang`, `sonic-pfcwd.yang`, `sonic-port-qos-map.yang`,
//! `sonic-cable-length.yang`, `sonic-dscp-tc-map.yang`, and the LLR design's `sonic-llr*`), before anything is imported: a
//! malformed value is refused with its JSON path even where the model does not use it (an
//! unused profile, a port field that is not modelled), as `config load` would refuse it.
//!
//! Ranges are the YANG models' where those are wider than what the import takes (the
//! importer says so for the values it uses), so a file the box loads is not refused here. A
//! reference into a table the file does not hold is not checked: a fragment may name what is
//! already on the box.

use super::{JsonError, err, table};
use serde_json::{Map, Value};

/// What a field holds.
#[derive(Clone, Copy)]
enum Ty {
    /// A whole number in the range (SONiC writes numbers as strings).
    Int(i64, i64),
    /// One of these words.
    Word(&'static [&'static str]),
    /// `"3,4"`: priorities 0..=7, possibly empty.
    Priorities,
    /// `"73,74,75,76"`: whole numbers.
    IntList,
    /// `"5m"`: a cable length in metres.
    Metres,
    /// A name of an entry of this table (`[TABLE|name]` in older files).
    Ref(&'static str),
}

const U64: Ty = Ty::Int(0, i64::MAX);
const BOOL: Ty = Ty::Word(&["true", "false"]);
const ECN: Ty = Ty::Word(&[
    "ecn_none",
    "ecn_green",
    "ecn_yellow",
    "ecn_red",
    "ecn_green_yellow",
    "ecn_green_red",
    "ecn_yellow_red",
    "ecn_all",
]);
const PERCENT: Ty = Ty::Int(0, 100);
const ENABLED: Ty = Ty::Word(&["enabled", "disabled"]);
const LLR_ACTION: Ty = Ty::Word(&["best_effort", "block", "discard"]);

/// Fields of each table, with their types; fields not listed are not checked.
const FIELDS: &[(&str, &[(&str, Ty)])] = &[
    (
        "BUFFER_POOL",
        &[
            ("size", U64),
            ("xoff", U64),
            ("type", Ty::Word(&["ingress", "egress", "both"])),
            ("mode", Ty::Word(&["static", "dynamic"])),
        ],
    ),
    (
        "BUFFER_PROFILE",
        &[
            ("pool", Ty::Ref("BUFFER_POOL")),
            ("size", U64),
            ("xon", U64),
            ("xoff", U64),
            ("xon_offset", U64),
            ("dynamic_th", Ty::Int(-8, 7)),
            ("static_th", U64),
            ("packet_discard_action", Ty::Word(&["drop", "trim"])),
        ],
    ),
    ("BUFFER_PG", &[("profile", Ty::Ref("BUFFER_PROFILE"))]),
    ("BUFFER_QUEUE", &[("profile", Ty::Ref("BUFFER_PROFILE"))]),
    (
        "PORT",
        &[
            ("speed", Ty::Int(1, 1_600_000)),
            ("mtu", Ty::Int(68, 9216)),
            ("lanes", Ty::IntList),
            ("index", U64),
            ("admin_status", Ty::Word(&["up", "down"])),
            ("fec", Ty::Word(&["rs", "fc", "none", "auto"])),
            ("autoneg", Ty::Word(&["on", "off"])),
        ],
    ),
    (
        "PORT_QOS_MAP",
        &[
            ("pfc_enable", Ty::Priorities),
            ("pfcwd_sw_enable", Ty::Priorities),
            ("dscp_to_tc_map", Ty::Ref("DSCP_TO_TC_MAP")),
            ("tc_to_pg_map", Ty::Ref("TC_TO_PRIORITY_GROUP_MAP")),
            ("tc_to_queue_map", Ty::Ref("TC_TO_QUEUE_MAP")),
            ("pfc_to_queue_map", Ty::Ref("MAP_PFC_PRIORITY_TO_QUEUE")),
            ("pfc_to_pg_map", Ty::Ref("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP")),
        ],
    ),
    (
        "QUEUE",
        &[
            ("scheduler", Ty::Ref("SCHEDULER")),
            ("wred_profile", Ty::Ref("WRED_PROFILE")),
        ],
    ),
    (
        "SCHEDULER",
        &[
            ("type", Ty::Word(&["DWRR", "WRR", "STRICT"])),
            ("weight", Ty::Int(1, 100)),
        ],
    ),
    (
        "WRED_PROFILE",
        &[
            ("wred_green_enable", BOOL),
            ("wred_yellow_enable", BOOL),
            ("wred_red_enable", BOOL),
            ("ecn", ECN),
            ("green_min_threshold", U64),
            ("green_max_threshold", U64),
            ("yellow_min_threshold", U64),
            ("yellow_max_threshold", U64),
            ("red_min_threshold", U64),
            ("red_max_threshold", U64),
            ("green_drop_probability", PERCENT),
            ("yellow_drop_probability", PERCENT),
            ("red_drop_probability", PERCENT),
        ],
    ),
    (
        "PFC_WD",
        &[
            ("detection_time", Ty::Int(1, 60_000)),
            ("restoration_time", Ty::Int(1, 600_000)),
            ("action", Ty::Word(&["drop", "forward", "alert"])),
            ("POLL_INTERVAL", Ty::Int(1, 60_000)),
        ],
    ),
    // SONiC's LLR design, §2.4.1 and its YANG models (`crate::sonic` cites it).
    ("LLR_CONFIG", &[("mode", Ty::Word(&["static", "dynamic"]))]),
    (
        "LLR_PORT",
        &[
            ("llr_local", ENABLED),
            ("llr_remote", ENABLED),
            ("llr_profile", Ty::Ref("LLR_PROFILE")),
            ("profile", Ty::Ref("LLR_PROFILE")),
        ],
    ),
    (
        "LLR_PROFILE",
        &[
            ("max_outstanding_frames", Ty::Int(0, 524_288)),
            ("max_outstanding_bytes", Ty::Int(0, 4_294_967_295)),
            ("max_replay_count", Ty::Int(1, 255)),
            ("max_replay_timer", Ty::Int(0, 65_535)),
            ("pcs_lost_timeout", Ty::Int(0, 4_290_000_000)),
            ("data_age_timeout", Ty::Int(0, 4_290_000_000)),
            ("ctlos_spacing_bytes", Ty::Int(400, 16_384)),
            ("init_action", LLR_ACTION),
            ("flush_action", LLR_ACTION),
        ],
    ),
    // Tables the model does not read, whose values a switch's file commonly holds: checked
    // all the same (`sonic-device_metadata.yang`, `sonic-flex_counter.yang`,
    // `sonic-vlan.yang`, `sonic-portchannel.yang`).
    (
        "DEVICE_METADATA",
        &[
            ("bgp_asn", Ty::Int(1, 4_294_967_295)),
            ("buffer_model", Ty::Word(&["traditional", "dynamic"])),
            ("default_pfcwd_status", Ty::Word(&["enable", "disable"])),
        ],
    ),
    (
        "FLEX_COUNTER_TABLE",
        &[
            ("FLEX_COUNTER_STATUS", Ty::Word(&["enable", "disable"])),
            ("POLL_INTERVAL", Ty::Int(1, 4_294_967_295)),
        ],
    ),
    (
        "VLAN",
        &[("vlanid", Ty::Int(1, 4094)), ("mtu", Ty::Int(68, 9216))],
    ),
    (
        "PORTCHANNEL",
        &[
            ("mtu", Ty::Int(68, 9216)),
            ("min_links", Ty::Int(0, 1024)),
            ("admin_status", Ty::Word(&["up", "down"])),
        ],
    ),
];

/// Check every value of every table the importer knows (and the class maps' entries).
pub(super) fn check(root: &Map<String, Value>) -> Result<(), JsonError> {
    // Every table, read or not, is an object of entries, each an object of fields.
    for name in root.keys() {
        table(root, name)?;
    }
    for (name, fields) in FIELDS {
        for (entry, o) in table(root, name)? {
            if matches!(*name, "BUFFER_PG" | "BUFFER_QUEUE" | "QUEUE") {
                super::port_key(&format!("{name}.{entry}"), entry, 15)?;
            }
            for (field, ty) in *fields {
                if let Some(v) = o.get(*field) {
                    value(root, &format!("{name}.{entry}.{field}"), v, *ty)?;
                }
            }
        }
    }
    // Cable lengths: `CABLE_LENGTH.<name>.<port>` = "5m".
    for (entry, o) in table(root, "CABLE_LENGTH")? {
        for (port, v) in o {
            value(root, &format!("CABLE_LENGTH.{entry}.{port}"), v, Ty::Metres)?;
        }
    }
    // Maps from a class (or DSCP) to a class: both sides whole numbers.
    for (name, from_max) in [
        ("DSCP_TO_TC_MAP", 63),
        ("TC_TO_PRIORITY_GROUP_MAP", 15),
        ("TC_TO_QUEUE_MAP", 15),
        ("MAP_PFC_PRIORITY_TO_QUEUE", 7),
        ("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", 7),
    ] {
        for (map, o) in table(root, name)? {
            for (from, to) in o {
                let path = format!("{name}.{map}.{from}");
                if from.parse::<u8>().ok().filter(|&f| f <= from_max).is_none() {
                    return Err(err(&path, format!("expected a key 0..={from_max}, got {from:?}")));
                }
                value(root, &path, to, Ty::Int(0, 15))?;
            }
        }
    }
    Ok(())
}

fn value(root: &Map<String, Value>, path: &str, v: &Value, ty: Ty) -> Result<(), JsonError> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(err(path, format!("expected a string, got {}", kind(v)))),
    };
    let refuse = |expected: &str| Err(err(path, format!("expected {expected}, got {}", shown(&s))));
    match ty {
        Ty::Int(lo, hi) => match s.trim().parse::<i64>() {
            Err(_) => refuse("a whole number"),
            Ok(n) if !(lo..=hi).contains(&n) => Err(err(path, format!("must be {lo} to {hi}, got {n}"))),
            Ok(_) => Ok(()),
        },
        Ty::Word(words) if !words.contains(&s.as_str()) => refuse(&format!("one of {}", words.join(", "))),
        Ty::Priorities
            if !(s.trim().is_empty()
                || s.split(',').all(|p| p.trim().parse::<u8>().is_ok_and(|p| p < 8))) =>
        {
            refuse("priorities 0..=7 like \"3,4\"")
        }
        Ty::IntList if !s.split(',').all(|p| p.trim().parse::<u32>().is_ok()) => {
            refuse("whole numbers like \"73,74,75,76\"")
        }
        Ty::Metres
            if !s
                .strip_suffix('m')
                .is_some_and(|n| !n.is_empty() && n.len() <= 6 && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            refuse("a length in metres like \"5m\"")
        }
        Ty::Ref(target) => {
            // A fragment may name entries of a table it does not hold (they are on the box);
            // a table it holds must have the entry.
            let name = super::reference(&s);
            let exists = root
                .get(target)
                .and_then(Value::as_object)
                .is_none_or(|t| t.contains_key(name));
            if exists {
                Ok(())
            } else {
                Err(err(path, format!("no {target} named {}", shown(name))))
            }
        }
        _ => Ok(()),
    }
}

/// A value in a message: quoted, and cut to 60 characters.
fn shown(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{:?}...", &s[..i]),
        None => format!("{s:?}"),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::String(_) | Value::Number(_) => "a value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_json(j: &str) -> Result<(), JsonError> {
        let v: Value = serde_json::from_str(j).unwrap();
        check(v.as_object().unwrap())
    }

    #[test]
    fn a_bad_value_in_an_unused_profile_is_refused_by_its_path() {
        let e = check_json(
            r#"{"BUFFER_POOL": {"p": {"size": "100"}},
                "BUFFER_PROFILE": {"unused": {"pool": "p", "size": "banana"}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "BUFFER_PROFILE.unused.size");
        assert!(e.message.contains("banana"), "{e}");
    }

    #[test]
    fn fields_the_model_ignores_are_checked_too() {
        let e = check_json(r#"{"PORT": {"Ethernet0": {"speed": "100000", "mtu": "9100x"}}}"#).unwrap_err();
        assert_eq!(e.path, "PORT.Ethernet0.mtu");
        let e = check_json(r#"{"CABLE_LENGTH": {"AZURE": {"Ethernet0": "abc"}}}"#).unwrap_err();
        assert_eq!(e.path, "CABLE_LENGTH.AZURE.Ethernet0");
        let e = check_json(r#"{"BUFFER_POOL": {"p": {}}, "BUFFER_PROFILE": {"x": {"pool": "nowhere"}}}"#)
            .unwrap_err();
        assert!(e.message.contains("no BUFFER_POOL named \"nowhere\""), "{e}");
        let e = check_json(r#"{"DSCP_TO_TC_MAP": {"UNUSED": {"64": "1"}}}"#).unwrap_err();
        assert_eq!(e.path, "DSCP_TO_TC_MAP.UNUSED.64");
        let e = check_json(r#"{"WRED_PROFILE": {"w": {"ecn": "ecn_maybe"}}}"#).unwrap_err();
        assert!(e.message.contains("one of ecn_none"), "{e}");
        // Tables the model does not read.
        let e = check_json(r#"{"VLAN": {"Vlan1000": {"vlanid": "5000"}}}"#).unwrap_err();
        assert_eq!(e.path, "VLAN.Vlan1000.vlanid");
        let e = check_json(r#"{"DEVICE_METADATA": 5}"#).unwrap_err();
        assert_eq!(e.path, "DEVICE_METADATA");
        let e = check_json(r#"{"SYSLOG_SERVER": {"10.0.0.1": "x"}}"#).unwrap_err();
        assert_eq!(e.path, "SYSLOG_SERVER.10.0.0.1");
    }

    #[test]
    fn the_shipped_files_pass() {
        for f in ["as7326-56x.json", "sn3700c.json"] {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../scenarios/sonic")
                .join(f);
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            check(v.as_object().unwrap()).unwrap();
        }
    }
}
