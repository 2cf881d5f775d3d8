//! `config_db.json` to settings: what each table sets, and a warning for what the model does
//! not act on (never a silent skip).
//!
//! | SONiC | setting |
//! |---|---|
//! | `PORT_QOS_MAP.<port>.pfc_enable` | `pfc.priorities` (the union over ports) |
//! | `BUFFER_POOL.ingress_lossless_pool.size` | `switch.shared_pool` (the shared pool; the model has one) |
//! | `BUFFER_POOL.ingress_lossless_pool.xoff` | `switch.headroom_pool` (a shared headroom pool) |
//! | lossless `BUFFER_PG` profile `dynamic_th` / `static_th` | `switch.pg_alpha` / `pfc.xoff` |
//! | its `xoff` (one value, or per port speed, or per speed and `CABLE_LENGTH`) | `pfc.headroom` / `pfc.headroom_by_rate` |
//! | its `xon_offset` | `pfc.xon_offset` |
//! | its `size`, when not `xon + xoff` (Broadcom's guaranteed minimum) | `switch.pg_min` |
//! | lossy `BUFFER_QUEUE` profile `dynamic_th`, `size` | `switch.queue_alpha`, `switch.queue_min` |
//! | `QUEUE.<port>\|<q>.wred_profile` with ECN, green thresholds | `switch.ecn` (kmin, kmax, pmax) |
//! | `QUEUE.<port>\|<q>.scheduler` DWRR/WRR weights | `switch.scheduler.dwrr` |
//! | `PFC_WD.<port>.detection_time`, `action`, `restoration_time` | `pfc.watchdog`, `pfc.watchdog_action`, `pfc.watchdog_restore` |
//! | `PORT_QOS_MAP.<port>.dscp_to_tc_map` and its `DSCP_TO_TC_MAP` | `switch.dscp_to_tc` |
//! | `PORT.<port>.fec` (`rs`, `none`) | the FEC of that port's end of its cable (`crate::scenario::port_fec`) |
//!
//! Port speeds come from `PORT.<port>.speed`, else from the lossless profile's name
//! (`pg_lossless_<Mb/s>_<cable>_profile`, buffermgrd's convention).

use super::{Imported, JsonError, err, int, port_key, priority_list, reference, table, text};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use toml::Value as T;

/// Read `src` (the text of `file`) into settings.
pub fn import(src: &str) -> Result<Imported, JsonError> {
    let v: Value = serde_json::from_str(src).map_err(|e| {
        err(
            &format!("line {} column {}", e.line(), e.column()),
            format!("not valid JSON: {e}"),
        )
    })?;
    let root = v
        .as_object()
        .ok_or_else(|| err("(top level)", "expected an object of tables"))?;
    super::schema::check(root)?;
    let mut out = Imported::default();
    super::read::unread_fields(root, &mut out)?;
    ports(root, &mut out)?;
    super::llr::import(root, &mut out)?;
    let lossless = priorities(root, &mut out)?;
    maps(root, &lossless, &mut out)?;
    buffers(root, &lossless, &mut out)?;
    queues(root, &lossless, &mut out)?;
    super::pfcwd::import(root, &mut out)?;
    if root.contains_key("CABLE_LENGTH") {
        out.warn("CABLE_LENGTH: cables come from [topology]; the lengths only tell apart lossless profiles of one speed");
    }
    Ok(out)
}

/// The `PORT` table: names, speeds, lanes and aliases, in port order (the number in the
/// name, as SONiC numbers front-panel lanes).
fn ports(root: &Map<String, Value>, out: &mut Imported) -> Result<(), JsonError> {
    let mut ports = Vec::new();
    for (name, o) in table(root, "PORT")? {
        let path = format!("PORT.{name}");
        ports.push(super::SonicPort {
            name: name.to_string(),
            speed_mbps: int(o, &path, "speed", 1..=i64::MAX)?.map(|s| s as u64),
            lanes: text(o, &path, "lanes")?,
            alias: text(o, &path, "alias")?,
            fec: text(o, &path, "fec")?,
            llr: None,
        });
        if o.get("fec").and_then(Value::as_str) == Some("fc") {
            out.warn(format!(
                "{path}.fec: fc (BASE-R FEC, IEEE 802.3 clause 74) is not modelled: the port's \
                 cable runs the FEC its other end or the scenario gives"
            ));
        }
    }
    let number = |n: &str| {
        let digits: String = n.chars().rev().take_while(char::is_ascii_digit).collect();
        digits
            .chars()
            .rev()
            .collect::<String>()
            .parse::<u64>()
            .unwrap_or(u64::MAX)
    };
    ports.sort_by(|a, b| (number(&a.name), &a.name).cmp(&(number(&b.name), &b.name)));
    out.ports = ports;
    Ok(())
}

/// `pfc.priorities` from every port's `pfc_enable`.
fn priorities(root: &Map<String, Value>, out: &mut Imported) -> Result<BTreeSet<u8>, JsonError> {
    let mut all = BTreeSet::new();
    let mut sets = BTreeSet::new();
    let maps = table(root, "PORT_QOS_MAP")?;
    for (port, o) in &maps {
        let path = format!("PORT_QOS_MAP.{port}");
        let p = match text(o, &path, "pfc_enable")? {
            Some(s) => priority_list(&format!("{path}.pfc_enable"), &s)?,
            None if *port == "global" => continue,
            None => Vec::new(),
        };
        sets.insert(p.clone());
        all.extend(p);
    }
    if maps.is_empty() {
        return Ok(all);
    }
    if sets.len() > 1 {
        out.warn("PORT_QOS_MAP: ports enable PFC on different priorities; the model runs one set on every port, their union");
    }
    out.put(
        "pfc.priorities",
        T::Array(all.iter().map(|&p| T::Integer(p as i64)).collect()),
        "PORT_QOS_MAP.*.pfc_enable",
    );
    Ok(all)
}

/// The maps: the model keeps one class per priority (TC = PG = queue = PFC priority).
fn maps(root: &Map<String, Value>, lossless: &BTreeSet<u8>, out: &mut Imported) -> Result<(), JsonError> {
    for name in [
        "TC_TO_PRIORITY_GROUP_MAP",
        "TC_TO_QUEUE_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    ] {
        for (map, o) in table(root, name)? {
            for (from, to) in o {
                let path = format!("{name}.{map}.{from}");
                let to = to.as_str().ok_or_else(|| err(&path, "expected a string"))?;
                let f: u8 = from.parse().map_err(|_| err(&path, "expected a class 0..=15"))?;
                if to != from && lossless.contains(&f) {
                    out.warn(format!("{path}: maps lossless class {from} to {to}; the model keeps a priority's TC, PG and queue equal"));
                }
            }
        }
    }
    // DSCP classification: the map PORT_QOS_MAP names (its "global" entry, else the ports').
    let qos = table(root, "PORT_QOS_MAP")?;
    let mut names = BTreeSet::new();
    for (port, o) in &qos {
        if let Some(n) = text(o, &format!("PORT_QOS_MAP.{port}"), "dscp_to_tc_map")? {
            names.insert(reference(&n).to_string());
        }
    }
    if names.len() > 1 {
        out.warn("PORT_QOS_MAP: ports name different DSCP_TO_TC_MAPs; the model classifies every port by the first");
    }
    if let Some(name) = names.first() {
        let maps: BTreeMap<&str, &Map<String, Value>> = table(root, "DSCP_TO_TC_MAP")?.into_iter().collect();
        let m = maps
            .get(name.as_str())
            .ok_or_else(|| err("PORT_QOS_MAP", format!("no DSCP_TO_TC_MAP named {name:?}")))?;
        let mut t = toml::Table::new();
        for (dscp, tc) in *m {
            let path = format!("DSCP_TO_TC_MAP.{name}.{dscp}");
            let d: u8 = dscp
                .parse()
                .ok()
                .filter(|&d| d < 64)
                .ok_or_else(|| err(&path, "expected a DSCP 0..=63"))?;
            let c: u8 = tc
                .as_str()
                .and_then(|c| c.parse().ok())
                .filter(|&c| c < 8)
                .ok_or_else(|| err(&path, "expected a class \"0\"..\"7\""))?;
            t.insert(d.to_string(), T::Integer(c as i64));
        }
        out.put("switch.dscp_to_tc", T::Table(t), format!("DSCP_TO_TC_MAP.{name}"));
    }
    Ok(())
}

/// Buffers: the pool, the lossless PG profile and the lossy queue profile.
fn buffers(root: &Map<String, Value>, lossless: &BTreeSet<u8>, out: &mut Imported) -> Result<(), JsonError> {
    let pools: BTreeMap<&str, &Map<String, Value>> = table(root, "BUFFER_POOL")?.into_iter().collect();
    let profiles: BTreeMap<&str, &Map<String, Value>> = table(root, "BUFFER_PROFILE")?.into_iter().collect();
    let profile = |path: &str, o: &Map<String, Value>| -> Result<Option<String>, JsonError> {
        let Some(name) = text(o, path, "profile")? else {
            return Ok(None);
        };
        let name = reference(&name).to_string();
        if name == "NULL" {
            return Err(err(
                &format!("{path}.profile"),
                "\"NULL\" (the dynamic buffer model computes it on the box): save the running config_db.json, whose BUFFER_PG holds the computed profile",
            ));
        }
        if !profiles.contains_key(name.as_str()) {
            return Err(err(
                &format!("{path}.profile"),
                format!("no BUFFER_PROFILE named {name:?}"),
            ));
        }
        Ok(Some(name))
    };
    if let Some((name, pool)) = pools
        .iter()
        .find(|(n, _)| **n == "ingress_lossless_pool")
        .or(pools.iter().next())
    {
        let path = format!("BUFFER_POOL.{name}");
        // The pool's size is its shared part as the SAI creates it (SAI_BUFFER_POOL_ATTR_SIZE):
        // sonic-buildimage's templates size it as the buffer less the reserved minimums and
        // headroom, so they are not carved out of it again. An `xoff` is a shared headroom
        // pool (SAI_BUFFER_POOL_ATTR_XOFF_SIZE; SONiC's shared headroom pool design).
        for (field, key) in [("size", "switch.shared_pool"), ("xoff", "switch.headroom_pool")] {
            if let Some(size) = int(pool, &path, field, 0..=i64::MAX)? {
                out.put(key, T::String(format!("{size}B")), format!("{path}.{field}"));
            }
        }
        if pools.len() > 1 {
            out.warn(format!("BUFFER_POOL: the model has one shared pool per buffer slice, sized by {name}; the other pools are not separate"));
        }
    }
    // The lossless PG profile of each port: its speed (Mb/s) and fields.
    let speeds: BTreeMap<&str, i64> = table(root, "PORT")?
        .into_iter()
        .filter_map(|(p, o)| {
            text(o, "PORT", "speed")
                .ok()
                .flatten()
                .and_then(|s| s.parse().ok())
                .map(|s| (p, s))
        })
        .collect();
    // (port, index into `entries`): a key may list thousands of ports, each points at its
    // entry's (profile, path) rather than copying them.
    let mut pg: Vec<(&str, usize)> = Vec::new();
    let mut entries: Vec<(String, String)> = Vec::new();
    let mut lossy_pgs = 0;
    for (key, o) in table(root, "BUFFER_PG")? {
        let path = format!("BUFFER_PG.{key}");
        let (ports, pgs) = port_key(&path, key, 15)?;
        if pgs.iter().any(|p| lossless.contains(p)) {
            if let Some(name) = profile(&path, o)? {
                pg.extend(ports.into_iter().map(|p| (p, entries.len())));
                entries.push((name, path));
            }
        } else if pgs.iter().any(|&p| p < 8) {
            lossy_pgs += 1;
        }
    }
    if lossy_pgs > 0 {
        out.warn(format!("BUFFER_PG: {lossy_pgs} lossy ingress PG entries: their limits are not modelled (lossy traffic is limited at its egress queue)"));
    }
    let mut names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if let Some(first) = names.first() {
        let at = |n: &str| format!("BUFFER_PROFILE.{n}");
        let fields = |n: &str, f: &str, r| int(profiles[n], &at(n), f, r);
        let one = |f: &str, r: std::ops::RangeInclusive<i64>| -> Result<Option<i64>, JsonError> {
            let v = fields(first, f, r.clone())?;
            for n in &names[1..] {
                if fields(n, f, r.clone())? != v {
                    return Err(err(
                        &format!("{}.{f}", at(n)),
                        format!(
                            "differs from {}'s; the model takes one value for every lossless PG",
                            at(first)
                        ),
                    ));
                }
            }
            Ok(v)
        };
        if let Some(th) = one("dynamic_th", -8..=7)? {
            out.put(
                "switch.pg_alpha",
                T::Integer(th),
                format!("{}.dynamic_th", at(first)),
            );
        }
        if let Some(th) = one("static_th", 0..=i64::MAX)? {
            out.put(
                "pfc.xoff",
                T::String(format!("{th}B")),
                format!("{}.static_th", at(first)),
            );
        }
        if let Some(off) = one("xon_offset", 0..=i64::MAX)? {
            out.put(
                "pfc.xon_offset",
                T::String(format!("{off}B")),
                format!("{}.xon_offset", at(first)),
            );
        } else if fields(first, "xon", 0..=i64::MAX)?.is_some_and(|x| x > 0) {
            out.warn(format!(
                "{}.xon: an absolute XON level is not modelled (XON follows pfc.xon_offset below XOFF)",
                at(first)
            ));
        }
        // Headroom: one xoff, else one per port speed, else one per speed and cable.
        let cables: BTreeMap<&str, &str> = table(root, "CABLE_LENGTH")?
            .into_iter()
            .flat_map(|(_, o)| o.iter().filter_map(|(p, c)| c.as_str().map(|c| (p.as_str(), c))))
            .collect();
        let mut by_speed: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
        let mut by_cable: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
        let mut xoffs = BTreeSet::new();
        let mut unknown_speed: Option<(String, String)> = None;
        for &(port, entry) in &pg {
            let (name, path) = &entries[entry];
            let Some(xoff) = fields(name, "xoff", 0..=i64::MAX)? else {
                continue;
            };
            xoffs.insert(xoff);
            let Some(speed) = speeds.get(port).copied().or_else(|| profile_speed(name)) else {
                unknown_speed.get_or_insert((path.clone(), port.to_string()));
                continue;
            };
            by_speed.entry(format!("{speed}Mbps")).or_default().insert(xoff);
            if let Some(c) = cables.get(port) {
                by_cable
                    .entry(format!("{speed}Mbps/{c}"))
                    .or_default()
                    .insert(xoff);
            }
        }
        let single = |m: &BTreeMap<String, BTreeSet<i64>>| m.values().all(|v| v.len() == 1);
        let as_table = |m: &BTreeMap<String, BTreeSet<i64>>| -> T {
            T::Table(
                m.iter()
                    .map(|(k, v)| (k.clone(), T::String(format!("{}B", v.first().unwrap()))))
                    .collect(),
            )
        };
        match xoffs.len() {
            0 => {}
            1 => out.put(
                "pfc.headroom",
                T::String(format!("{}B", xoffs.first().unwrap())),
                format!("{}.xoff", at(first)),
            ),
            _ if unknown_speed.is_some() => {
                let (path, port) = unknown_speed.unwrap();
                return Err(err(
                    &path,
                    format!(
                        "lossless profiles differ in xoff and the speed of {port} is not known (add PORT.{port}.speed)"
                    ),
                ));
            }
            _ if single(&by_speed) => out.put(
                "pfc.headroom_by_rate",
                as_table(&by_speed),
                "BUFFER_PROFILE.*.xoff (by PORT.*.speed)",
            ),
            _ if single(&by_cable) && by_cable.values().map(|v| v.len()).sum::<usize>() > 0 => out.put(
                "pfc.headroom_by_rate",
                as_table(&by_cable),
                "BUFFER_PROFILE.*.xoff (by PORT.*.speed and CABLE_LENGTH)",
            ),
            _ => {
                return Err(err(
                    "BUFFER_PG",
                    "ports of one speed use different lossless xoff and CABLE_LENGTH does not tell them apart",
                ));
            }
        }
        let (size, xon, xoff) = (
            fields(first, "size", 0..=i64::MAX)?.unwrap_or(0),
            fields(first, "xon", 0..=i64::MAX)?.unwrap_or(0),
            fields(first, "xoff", 0..=i64::MAX)?.unwrap_or(0),
        );
        // Spectrum reserves size = xon + xoff as headroom; Broadcom's size is a guaranteed
        // minimum beside the headroom (SONiC's headroom-calculation HLD).
        if size > 0 && size < xon + xoff {
            out.put(
                "switch.pg_min",
                T::String(format!("{size}B")),
                format!("{}.size", at(first)),
            );
        }
    }
    // The lossy egress queue profile.
    let mut lossy = None;
    for (key, o) in table(root, "BUFFER_QUEUE")? {
        let path = format!("BUFFER_QUEUE.{key}");
        let (_, qs) = port_key(&path, key, 15)?;
        if qs.iter().any(|q| *q < 8 && !lossless.contains(q)) {
            if let Some(name) = profile(&path, o)? {
                lossy.get_or_insert(name);
            }
        } else {
            // A lossless queue's profile is checked to exist; the model puts no egress
            // limit on lossless queues.
            profile(&path, o)?;
        }
    }
    if let Some(name) = lossy {
        let path = format!("BUFFER_PROFILE.{name}");
        let p = profiles[name.as_str()];
        if let Some(th) = int(p, &path, "dynamic_th", -8..=7)? {
            out.put("switch.queue_alpha", T::Integer(th), format!("{path}.dynamic_th"));
        }
        if let Some(size) = int(p, &path, "size", 0..=i64::MAX)?.filter(|&s| s > 0) {
            out.put(
                "switch.queue_min",
                T::String(format!("{size}B")),
                format!("{path}.size"),
            );
        }
    }
    Ok(())
}

/// Mb/s in a `pg_lossless_<speed>_<cable>_profile` name.
fn profile_speed(name: &str) -> Option<i64> {
    name.strip_prefix("pg_lossless_")?.split('_').next()?.parse().ok()
}

/// WRED-ECN and the scheduler, from the queues' bindings.
fn queues(root: &Map<String, Value>, lossless: &BTreeSet<u8>, out: &mut Imported) -> Result<(), JsonError> {
    let wred: BTreeMap<&str, &Map<String, Value>> = table(root, "WRED_PROFILE")?.into_iter().collect();
    let scheds: BTreeMap<&str, &Map<String, Value>> = table(root, "SCHEDULER")?.into_iter().collect();
    let mut ecn: Option<(String, &Map<String, Value>)> = None;
    let mut weights: BTreeMap<u8, i64> = BTreeMap::new();
    for (key, o) in table(root, "QUEUE")? {
        let path = format!("QUEUE.{key}");
        let (_, qs) = port_key(&path, key, 15)?;
        if let Some(w) = text(o, &path, "wred_profile")? {
            let name = reference(&w).to_string();
            let p = *wred.get(name.as_str()).ok_or_else(|| {
                err(
                    &format!("{path}.wred_profile"),
                    format!("no WRED_PROFILE named {name:?}"),
                )
            })?;
            let marks = text(p, &name, "ecn")?.is_some_and(|e| e != "ecn_none");
            if !marks {
                out.warn(format!(
                    "WRED_PROFILE.{name}: WRED dropping (ecn_none) is not modelled; only ECN marking"
                ));
            } else if qs.iter().any(|q| lossless.contains(q)) || ecn.is_none() {
                if ecn.as_ref().is_some_and(|(n, _)| *n != name) {
                    out.warn(format!("{path}.wred_profile: queues use different WRED profiles; the model marks every queue by {}", ecn.as_ref().unwrap().0));
                } else {
                    ecn = Some((name, p));
                }
            }
        }
        if let Some(s) = text(o, &path, "scheduler")? {
            let name = reference(&s).to_string();
            let p = *scheds.get(name.as_str()).ok_or_else(|| {
                err(
                    &format!("{path}.scheduler"),
                    format!("no SCHEDULER named {name:?}"),
                )
            })?;
            let at = format!("SCHEDULER.{name}");
            let kind = text(p, &at, "type")?.unwrap_or_else(|| "WRR".into());
            match kind.as_str() {
                "DWRR" | "WRR" => {
                    let w = int(p, &at, "weight", 1..=100)?.unwrap_or(1);
                    for &q in qs.iter().filter(|&&q| q < 8) {
                        if weights.insert(q, w).is_some_and(|old| old != w) {
                            out.warn(format!("{path}: ports weigh queue {q} differently; the model takes one weight per queue"));
                        }
                    }
                }
                "STRICT" => {}
                other => {
                    return Err(err(
                        &format!("{at}.type"),
                        format!("expected DWRR, WRR or STRICT, got {other:?}"),
                    ));
                }
            }
        }
    }
    if let Some((name, p)) = ecn {
        let at = format!("WRED_PROFILE.{name}");
        if text(p, &at, "wred_green_enable")?.as_deref() != Some("true") {
            out.warn(format!("{at}: green WRED is not enabled; ECN marking left off"));
        } else {
            let min = int(p, &at, "green_min_threshold", 0..=i64::MAX)?
                .ok_or_else(|| err(&at, "green_min_threshold is missing"))?;
            let max = int(p, &at, "green_max_threshold", 0..=i64::MAX)?
                .ok_or_else(|| err(&at, "green_max_threshold is missing"))?;
            let prob = int(p, &at, "green_drop_probability", 0..=100)?.unwrap_or(100);
            if min > max {
                return Err(err(
                    &format!("{at}.green_min_threshold"),
                    format!("{min} exceeds green_max_threshold {max}"),
                ));
            }
            if prob == 0 {
                return Err(err(
                    &format!("{at}.green_drop_probability"),
                    "0 % marks nothing: the model needs (0, 100]",
                ));
            }
            let mut t = toml::Table::new();
            t.insert("kmin".into(), T::String(format!("{min}B")));
            t.insert("kmax".into(), T::String(format!("{max}B")));
            t.insert("pmax".into(), T::Float(prob as f64 / 100.0));
            out.put("switch.ecn", T::Table(t), at.clone());
            if p.keys().any(|k| k.starts_with("yellow") || k.starts_with("red")) {
                out.warn(format!(
                    "{at}: yellow and red thresholds are not modelled (no policer colours packets)"
                ));
            }
        }
    }
    if !weights.is_empty() {
        let t: toml::Table = weights
            .iter()
            .map(|(q, w)| (q.to_string(), T::Integer(*w)))
            .collect();
        out.put("switch.scheduler.dwrr", T::Table(t), "SCHEDULER.*.weight");
    }
    Ok(())
}
