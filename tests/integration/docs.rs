//! The documentation against the binary: every key the scenario schema accepts is documented.
//!
//! The schema is not listed by hand here: it is asked. Each table of every shipped scenario
//! and bench gets an unknown key, and the error names the keys that table takes; each of
//! those keys that is itself a table is asked in turn (with the unknown key inside it). So a
//! key added to the schema and not to `docs/` fails this test.

use models::scenario::{self, Overrides};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use toml::{Table, Value};

const PROBE: &str = "zzz_probe";

/// The keys the error for an unknown key lists, if the error is that one.
fn keys_listed(err: &str) -> Option<Vec<String>> {
    let (_, list) = err.split_once("the keys here are ")?;
    let list = list.lines().next().unwrap_or("");
    Some(
        list.split(" | ")
            .map(|k| k.trim().trim_matches('"').to_string())
            .filter(|k| !k.is_empty())
            .collect(),
    )
}

/// `root` with the table at `path` (keys, or array indices as numbers) given `f`.
fn with_table(root: &Table, path: &[String], f: impl FnOnce(&mut Table)) -> Option<Table> {
    let mut root = root.clone();
    let mut t: &mut Table = &mut root;
    for seg in path {
        let v = t.get_mut(seg.split('#').next().unwrap())?;
        t = match (v, seg.split_once('#')) {
            (Value::Array(a), Some((_, i))) => a.get_mut(i.parse::<usize>().ok()?)?.as_table_mut()?,
            (Value::Table(x), None) => x,
            _ => return None,
        };
    }
    f(t);
    Some(root)
}

/// Every table path in `t` (arrays of tables as `key#i`).
fn table_paths(t: &Table, at: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    for (k, v) in t {
        match v {
            Value::Table(x) => {
                let mut p = at.clone();
                p.push(k.clone());
                table_paths(x, p, out);
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    if let Value::Table(x) = x {
                        let mut p = at.clone();
                        p.push(format!("{k}#{i}"));
                        table_paths(x, p, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The keys the table at `path` of `root` takes, as the parser says (None: not a table it
/// reads on its own, or another error came first).
fn probe(root: &Table, path: &[String], file: &Path) -> Option<Vec<String>> {
    let probed = with_table(root, path, |t| {
        t.insert(PROBE.into(), Value::Integer(1));
    })?;
    let text = toml::to_string(&probed).ok()?;
    let dir = file.parent().unwrap();
    // Relative files (SONiC JSON, .cm, .topo) resolve against the scenario's own directory.
    let copy = dir.join(format!(".probe-{}.toml", std::process::id()));
    std::fs::write(&copy, &text).ok()?;
    let r = scenario::load(&copy, &Overrides::default());
    let _ = std::fs::remove_file(&copy);
    keys_listed(&r.err()?.to_string())
}

#[test]
fn every_schema_key_is_documented() {
    let root_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = ["scenarios", "benches"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root_dir.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    // Table path (array indices dropped) -> the keys it takes.
    let mut schema: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let Ok(root) = text.parse::<Table>() else { continue };
        let mut paths = Vec::new();
        table_paths(&root, Vec::new(), &mut paths);
        let mut queue = paths;
        let mut seen = BTreeSet::new();
        while let Some(path) = queue.pop() {
            let name = path
                .iter()
                .map(|s| s.split('#').next().unwrap())
                .collect::<Vec<_>>()
                .join(".");
            if !seen.insert(path.clone()) {
                continue;
            }
            let Some(keys) = probe(&root, &path, file) else {
                continue;
            };
            // A key this file does not set may be a table too: ask it with an empty one.
            for k in &keys {
                let present = with_table(&root, &path, |_| {}).is_some_and(|r| {
                    let mut p = path.clone();
                    p.push(k.clone());
                    with_table(&r, &p, |_| {}).is_some()
                });
                if present {
                    continue;
                }
                let Some(with_empty) = with_table(&root, &path, |t| {
                    t.entry(k.clone()).or_insert_with(|| Value::Table(Table::new()));
                }) else {
                    continue;
                };
                let mut p = path.clone();
                p.push(k.clone());
                if let Some(sub) = probe(&with_empty, &p, file) {
                    let sub_name = if name.is_empty() {
                        k.clone()
                    } else {
                        format!("{name}.{k}")
                    };
                    schema.entry(sub_name).or_default().extend(sub);
                }
            }
            schema.entry(name).or_default().extend(keys);
        }
    }
    let total: usize = schema.values().map(BTreeSet::len).sum();
    // 54 tables and 455 keys when written: a probe that stopped reading errors finds few.
    assert!(total >= 300, "the probe found {total} keys: {schema:?}");
    assert!(
        schema.len() >= 8,
        "the probe found the schema's tables: {schema:?}"
    );
    for must in ["switch", "nic", "pfc", "topology", "run"] {
        assert!(schema.contains_key(must), "{must} probed: {:?}", schema.keys());
    }
    let docs: String = std::fs::read_dir(root_dir.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let documented = |key: &str| {
        // As a key is written in the docs: `key`, `table.key`, or `key =` in an example.
        docs.match_indices(key).any(|(i, _)| {
            let before = docs[..i].chars().next_back().unwrap_or(' ');
            let after = &docs[i + key.len()..];
            let word_before = before.is_alphanumeric() || before == '_';
            let word_after = after
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            !word_before
                && !word_after
                && (matches!(before, '`' | '.' | '{' | ' ' | '\n' | ',')
                    && (after.starts_with('`') || after.trim_start().starts_with('=')))
        })
    };
    let missing: Vec<String> = schema
        .iter()
        .flat_map(|(t, keys)| {
            keys.iter().filter(|k| !documented(k)).map(move |k| {
                if t.is_empty() {
                    k.clone()
                } else {
                    format!("{t}.{k}")
                }
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "keys the schema takes that docs/ never names: {missing:?}"
    );
}

/// Every finding the configuration check can raise has its row in docs/check.md: its id as
/// the check's sources write it (`id: "..."`, or a `"word-word",` line of an id table).
#[test]
fn every_finding_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/check.md")).unwrap();
    let dir = root.join("models/src/scenario/check");
    let mut ids = Vec::new();
    for f in std::fs::read_dir(&dir).unwrap() {
        let src = std::fs::read_to_string(f.unwrap().path()).unwrap();
        for line in src.lines().map(str::trim) {
            let quoted = line
                .strip_prefix("id: \"")
                .and_then(|r| r.strip_suffix("\","))
                .or_else(|| line.strip_prefix('"').and_then(|r| r.strip_suffix("\",")));
            if let Some(id) = quoted.filter(|id| {
                id.contains('-')
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            }) {
                ids.push(id.to_string());
            }
        }
    }
    assert!(ids.len() > 20, "the sources' ids: {ids:?}");
    let missing: Vec<&String> = ids
        .iter()
        .filter(|id| !doc.contains(&format!("| `{id}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "findings without a row in docs/check.md: {missing:?}"
    );
}
