//! The layering holds: the imports read from the source (`crate::a::b` paths, and `super::`
//! between the files of one folder) form no circle, between folders or between the files of
//! one folder, and each of `models`' folders imports only from the layers below it
//! (`docs/architecture.md` draws them). Test code is left out (a test may build a whole
//! scenario to check one model).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `models`' layers, bottom first: a module may use its own layer's leaves below it only
/// through the order given here (each entry may import the entries before it, never after).
const MODELS_LAYERS: &[&str] = &[
    "error",
    "ids",
    "drop",
    "prio",
    "input",
    "int",
    "asic",
    "packet",
    "telemetry",
    "scheduler",
    "cc",
    "pool",
    "routing",
    "fec",
    "link",
    "llr",
    "cbfc",
    "pfc",
    "topology",
    "pause",
    "fault",
    "capture",
    "workload",
    "port",
    "switch",
    "nic",
    "network",
    "pfc_watch",
    "pfc_wd",
    "sonic",
    "ideal",
    "pcap",
    "scenario",
    "sim",
    "report",
];

/// Every `.rs` file under `dir`, with the module path it defines (`nic/uet/pdc.rs` is
/// `["nic", "uet", "pdc"]`; `mod.rs` and `lib.rs`/`main.rs` are their folder).
fn files(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(dir).unwrap().with_extension("");
                let mut m: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
                if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    m.pop();
                }
                if m.last().is_some_and(|l| l == "tests") {
                    continue; // a model's tests
                }
                out.push((p, m));
            }
        }
    }
    out.sort();
    out
}

/// The source without its `#[cfg(test)]` module and without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules `src` names: `crate::a::b` as `[a, b]`, `super::x` resolved from `me`, and
/// the items of `use crate::a::{b, c}` groups.
fn imports(src: &str, me: &[String]) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|p| {
                p.trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|p| !p.is_empty() && p.chars().next().is_some_and(|c| c.is_lowercase()))
            .collect()
    };
    for (i, _) in src.match_indices("crate::") {
        let path = ident(&src[i + "crate::".len()..]);
        if !path.is_empty() {
            out.insert(path);
        }
    }
    // `super::x` from a file of a folder: the sibling `x` (a `mod.rs` is its folder).
    for (i, _) in src.match_indices("super::") {
        if i >= 2 && &src[i - 2..i] == "::" {
            continue; // `super::super::`, counted once
        }
        let mut base: Vec<String> = me.to_vec();
        let mut rest = &src[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        let mut path = base;
        path.extend(ident(rest));
        out.insert(path);
    }
    out
}

/// The longest prefix of `path` that is a module of `known`.
fn module_of(path: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| known.contains(p))
}

/// A circle in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let at = path.iter().position(|p| p == n).unwrap();
                let mut c = path[at..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut state, &mut Vec::new()))
}

/// The import graph of a crate: between top-level modules, and between the files of each
/// folder.
fn graphs(
    dir: &Path,
) -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, BTreeSet<String>>,
) {
    let files = files(dir);
    let known: BTreeSet<Vec<String>> = files.iter().map(|(_, m)| m.clone()).collect();
    let (mut top, mut inner) = (BTreeMap::new(), BTreeMap::new());
    for (path, me) in &files {
        if me.is_empty() {
            continue; // lib.rs / main.rs declares everything
        }
        let src = code(path);
        for imp in imports(&src, me) {
            let Some(target) = module_of(&imp, &known) else {
                continue;
            };
            if target.is_empty() || target == *me {
                continue;
            }
            if target[0] != me[0] {
                top.entry(me[0].clone())
                    .or_insert_with(BTreeSet::new)
                    .insert(target[0].clone());
            } else if target.len() == me.len() && target[..me.len() - 1] == me[..me.len() - 1] {
                // Two files of one folder (not a file and its folder's mod.rs).
                inner
                    .entry(me.join("/"))
                    .or_insert_with(BTreeSet::new)
                    .insert(target.join("/"));
            }
        }
    }
    (top, inner)
}

#[test]
fn the_import_graph_has_no_circle_and_models_layers_only_point_down() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in ["models/src", "src", "sim-core/src"] {
        let (top, inner) = graphs(&root.join(dir));
        assert_eq!(circle(&top), None, "{dir}: a circle between modules");
        assert_eq!(
            circle(&inner),
            None,
            "{dir}: a circle between the files of a folder"
        );
        if dir == "models/src" {
            let layer = |m: &str| {
                MODELS_LAYERS
                    .iter()
                    .position(|l| *l == m)
                    .unwrap_or_else(|| panic!("models/src/{m}: add it to MODELS_LAYERS"))
            };
            for (from, tos) in &top {
                for to in tos {
                    assert!(
                        layer(to) < layer(from),
                        "models/src/{from} imports {to}, a layer above it (MODELS_LAYERS)"
                    );
                }
            }
        }
    }
}

#[test]
fn a_circle_and_an_upward_import_are_found() {
    // The checks above can fail: a made-up graph with a circle, and the reader on text.
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["a".to_string()])),
    ]
    .into();
    assert_eq!(circle(&g).map(|c| c.len()), Some(3));
    let me = vec!["nic".to_string(), "flow".to_string()];
    let got = imports("use crate::sim::Sim;\nlet x = super::rx::Rx::new();", &me);
    assert!(got.contains(&vec!["sim".to_string()]), "{got:?}");
    assert!(
        got.contains(&vec!["nic".to_string(), "rx".to_string()]),
        "{got:?}"
    );
}
