//! The importers against generated hostile files: SONiC `config_db.json` and htsim `.topo`
//! (the `.cm` matrices are in `fuzz.rs`, sweep files in `src/sweep/spec.rs`). Starting from
//! the shipped files, values, keys and lines are replaced with ones that have broken
//! importers before; each result is imported cleanly or refused naming where (a JSON path,
//! a file and line), never a panic, never a value past the schema's limits.
//!
//! Seeded and bounded like `fuzz.rs` (`PROPTEST_CASES` and `FUZZ_SEED` widen the hunt).

use crate::common::tmp;
use crate::fuzz::{runner, says_where};
use models::scenario::{self, Overrides};
use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Strings that have broken value parsers: numbers past every width, signs, units, names
/// that exist nowhere, references of both styles, port keys with bad ranges, and a long one.
const HOSTILE_STRINGS: &[&str] = &[
    "banana",
    "",
    " ",
    "0",
    "-1",
    "-9",
    "8",
    "101",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999999",
    "1e308",
    "NaN",
    "NULL",
    "[BUFFER_PROFILE|nope]",
    "[BUFFER_POOL|ingress_lossless_pool]",
    "ingress_lossless_pool",
    "3,9",
    "3,,4",
    "0m",
    "5m",
    "99999999m",
    "ecn_all",
    "ecn_none",
    "true",
    "DWRR",
    "STRICT",
    "drop",
    "shutdown",
    "100000",
    "Ethernet0|9-3",
    "Ethernet0|",
    "|3",
    "Ethernet0|3-4-5",
    "Ethernet0|255",
    "\u{0}",
    "é",
];

/// One change to a config_db.json tree.
#[derive(Debug, Clone)]
enum JsonEdit {
    /// Set the n-th leaf to a hostile string.
    Leaf(usize, &'static str),
    /// Set the n-th leaf to a value of another JSON type.
    Typed(usize, u8),
    /// Rename the n-th entry (`BUFFER_PG.Ethernet0|3` to `BUFFER_PG.<hostile>`).
    Rename(usize, &'static str),
    /// Remove the n-th entry, or the n-th table.
    DropEntry(usize),
    DropTable(usize),
    /// Give the n-th entry's key many ports (`Ethernet0,...,EthernetK|3`).
    ManyPorts(usize, usize),
    /// A leaf a thousand characters long.
    Long(usize),
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    let pos = 0..10_000usize;
    prop_oneof![
        6 => (pos.clone(), prop::sample::select(HOSTILE_STRINGS)).prop_map(|(n, s)| JsonEdit::Leaf(n, s)),
        2 => (pos.clone(), 0u8..5).prop_map(|(n, t)| JsonEdit::Typed(n, t)),
        2 => (pos.clone(), prop::sample::select(HOSTILE_STRINGS)).prop_map(|(n, s)| JsonEdit::Rename(n, s)),
        1 => pos.clone().prop_map(JsonEdit::DropEntry),
        1 => pos.clone().prop_map(JsonEdit::DropTable),
        1 => (pos.clone(), 1usize..3000).prop_map(|(n, k)| JsonEdit::ManyPorts(n, k)),
        1 => pos.prop_map(JsonEdit::Long),
    ]
}

/// (table, entry, field) of every leaf, in document order.
fn leaves(v: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (t, entries) in v.as_object().into_iter().flatten() {
        for (e, fields) in entries.as_object().into_iter().flatten() {
            for (f, _) in fields.as_object().into_iter().flatten() {
                out.push((t.clone(), e.clone(), f.clone()));
            }
        }
    }
    out
}

fn entries(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (t, entries) in v.as_object().into_iter().flatten() {
        for (e, _) in entries.as_object().into_iter().flatten() {
            out.push((t.clone(), e.clone()));
        }
    }
    out
}

fn apply(v: &mut Value, e: &JsonEdit) {
    let leaf = |v: &mut Value, n: usize| -> Option<(String, String, String)> {
        let all = leaves(v);
        (!all.is_empty()).then(|| all[n % all.len()].clone())
    };
    let entry = |v: &mut Value, n: usize| -> Option<(String, String)> {
        let all = entries(v);
        (!all.is_empty()).then(|| all[n % all.len()].clone())
    };
    match *e {
        JsonEdit::Leaf(n, s) => {
            if let Some((t, e, f)) = leaf(v, n) {
                v[&t][&e][&f] = Value::String(s.to_string());
            }
        }
        JsonEdit::Typed(n, ty) => {
            if let Some((t, e, f)) = leaf(v, n) {
                v[&t][&e][&f] = match ty {
                    0 => Value::Null,
                    1 => Value::from(5),
                    2 => Value::Bool(true),
                    3 => Value::Array(vec![]),
                    _ => Value::Object(Default::default()),
                };
            }
        }
        JsonEdit::Rename(n, s) => {
            if let Some((t, e)) = entry(v, n) {
                let table = v[&t].as_object_mut().unwrap();
                let old = table.remove(&e).unwrap();
                table.insert(s.to_string(), old);
            }
        }
        JsonEdit::DropEntry(n) => {
            if let Some((t, e)) = entry(v, n) {
                v[&t].as_object_mut().unwrap().remove(&e);
            }
        }
        JsonEdit::DropTable(n) => {
            let names: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            if !names.is_empty() {
                v.as_object_mut().unwrap().remove(&names[n % names.len()]);
            }
        }
        JsonEdit::ManyPorts(n, k) => {
            if let Some((t, e)) = entry(v, n) {
                let index = e.split_once('|').map_or("3", |(_, i)| i).to_string();
                let ports: Vec<String> = (0..k).map(|i| format!("Ethernet{i}")).collect();
                let table = v[&t].as_object_mut().unwrap();
                let old = table.remove(&e).unwrap();
                table.insert(format!("{}|{index}", ports.join(",")), old);
            }
        }
        JsonEdit::Long(n) => {
            if let Some((t, e, f)) = leaf(v, n) {
                v[&t][&e][&f] = Value::String("9".repeat(1000));
            }
        }
    }
}

fn shipped(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// A two-leaf fabric whose switches take `json`'s settings.
fn scenario_on(json: &Path, rate: &str) -> String {
    format!(
        "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = {{ rate = \"{rate}\", cable = \"5m\" }}\nfabric_link = {{ rate = \"100Gbps\", cable = \"40m\" }}\n[switch]\nsonic = \"{}\"\n[[flow]]\nsrc = 0\ndst = 3\nsize = \"64KB\"\n",
        json.display()
    )
}

#[test]
fn hostile_sonic_files_are_refused_by_json_path_or_imported() {
    let dir = tmp("fuzz-sonic");
    let bases: Vec<(Value, &str)> = [
        ("scenarios/sonic/as7326-56x.json", "25Gbps"),
        ("scenarios/sonic/sn3700c.json", "100Gbps"),
    ]
    .iter()
    .map(|(f, rate)| {
        (
            serde_json::from_str(&std::fs::read_to_string(shipped(f)).unwrap()).unwrap(),
            *rate,
        )
    })
    .collect();
    let strategy = (0..bases.len(), prop::collection::vec(json_edit(), 1..4));
    let file = dir.join("config_db.json");
    runner(600)
        .run(&strategy, |(b, edits)| {
            let (base, rate) = &bases[b];
            let mut v = base.clone();
            for e in &edits {
                apply(&mut v, e);
            }
            let text = v.to_string();
            let tables: Vec<&String> = v.as_object().unwrap().keys().collect();
            match models::sonic::import(&text) {
                Ok(_) => {}
                // A JSON path that starts at one of the file's tables.
                Err(e) => {
                    let table = e.path.split('.').next().unwrap_or("");
                    prop_assert!(
                        tables.iter().any(|t| t.as_str() == table),
                        "not a JSON path of the file: {}",
                        e
                    );
                }
            }
            // Through a scenario: accepted, or refused saying where.
            std::fs::write(&file, &text).unwrap();
            match scenario::parse(&scenario_on(&file, rate), "s.toml", "s", &Overrides::default()) {
                Ok(s) => prop_assert!(s.variants[0].switch.buffer.is_none_or(|b| b.0 <= 1 << 50)),
                Err(e) => prop_assert!(says_where(&e), "a refusal that does not say where: {}", e),
            }
            Ok(())
        })
        .unwrap();
}

/// A `.topo` line: a key the format has (or one it does not) with a number that is plausible
/// or past every limit.
fn topo_line() -> impl Strategy<Value = String> {
    let key = prop::sample::select(
        &[
            "Nodes",
            "Tiers",
            "Podsize",
            "Tier",
            "Downlink_speed_Gbps",
            "Downlink_Latency_ns",
            "Radix_Down",
            "Radix_Up",
            "Oversubscribed",
            "Bundle",
            "Switch_Latency_ns",
            "Queue",
        ][..],
    );
    let num = prop_oneof![
        prop::sample::select(
            &[
                "0",
                "1",
                "2",
                "3",
                "4",
                "8",
                "16",
                "100",
                "1000",
                "100000",
                "100001",
                "16777216",
                "16777217",
                "1000000000000000000",
                "18446744073709551",
                "18446744073709551615",
                "18446744073709551616",
                "-1",
                "x",
                "",
            ][..]
        )
        .prop_map(str::to_string),
        any::<u64>().prop_map(|n| n.to_string()),
    ];
    (key, num).prop_map(|(k, n)| format!("{k} {n}"))
}

#[test]
fn hostile_htsim_topologies_are_refused_by_line_or_build_within_limits() {
    let dir = tmp("fuzz-topo");
    let base = std::fs::read_to_string(shipped("benches/htsim/fat_tree_128_1os.topo")).unwrap();
    let base: Vec<String> = base.lines().map(String::from).collect();
    // Replace, insert or delete lines of the shipped fat tree.
    let edit = (0..100usize, 0u8..3, topo_line());
    let strategy = prop::collection::vec(edit, 1..5);
    let topo = dir.join("t.topo");
    let toml = format!(
        "[topology]\nkind = \"htsim\"\nfile = \"{}\"\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n",
        topo.display()
    );
    runner(1500)
        .run(&strategy, |edits| {
            let mut lines = base.clone();
            for (at, how, line) in &edits {
                let i = at % (lines.len() + 1);
                match how {
                    0 if i < lines.len() => lines[i] = line.clone(),
                    1 if i < lines.len() => {
                        lines.remove(i);
                    }
                    _ => lines.insert(i, line.clone()),
                }
            }
            std::fs::write(&topo, lines.join("\n")).unwrap();
            match scenario::parse(&toml, "t.toml", "t", &Overrides::default()) {
                Ok(s) => {
                    for l in &s.topology.links {
                        prop_assert!(l.rate <= sim_core::BitRate::gbps(100_000), "{:?}", l.rate);
                        prop_assert!(l.delay.0 <= sim_core::Duration::LIMIT.max, "{:?}", l.delay);
                    }
                }
                // The file's own faults name `topology.file` and the line; a fabric it
                // describes may still fail a later check (its cables too long for the
                // retransmission timeout), which names that key.
                Err(e) => {
                    prop_assert!(says_where(&e), "{}", e);
                    if e.message.contains("t.topo") {
                        prop_assert!(e.key.as_deref() == Some("topology.file"), "{}", e);
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}
