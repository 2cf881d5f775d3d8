//! `--set key.path=value` overrides and variant merging, applied to the parsed TOML tree
//! before any validation, so an override is checked exactly like a value written in the file.

use super::error::{Seg, parse_path};
use toml::{Table, Value};

/// Parse `key.path=value`. The value is read as a TOML value (`3`, `true`, `"x"`,
/// `{ rate = "1G" }`); anything that is not valid TOML is taken as a bare string, so
/// `--set switch.buffer=4MiB` works without quotes.
pub fn parse_assignment(arg: &str) -> Result<(Vec<Seg>, Value), String> {
    let (key, raw) = arg
        .split_once('=')
        .ok_or_else(|| "expected KEY=VALUE, e.g. topology.k=8".to_string())?;
    let key = key.trim();
    check_indices(key)?;
    let segs = parse_path(key);
    if segs.is_empty() || !matches!(segs[0], Seg::Key(_)) {
        return Err(format!(
            "\"{key}\" is not a key path (expected e.g. switch.buffer)"
        ));
    }
    let raw = raw.trim();
    let value = toml::from_str::<Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_string()));
    Ok((segs, value))
}

/// Every `[...]` in `key` holds an index (0, 1, ...) and is closed.
fn check_indices(key: &str) -> Result<(), String> {
    let mut rest = key;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            return Err(format!("\"{key}\": a `[` without its `]`"));
        };
        let inside = &after[..close];
        if inside.parse::<usize>().is_err() {
            return Err(format!(
                "\"{key}\": `[{inside}]` is not an index; entries are numbered from 0, e.g. flow[0].size"
            ));
        }
        rest = &after[close + 1..];
    }
    if rest.contains(']') {
        return Err(format!("\"{key}\": a `]` without its `[`"));
    }
    Ok(())
}

/// Write `value` at `path` in `root`, creating tables on the way.
pub fn set(root: &mut Table, path: &[Seg], value: Value) -> Result<(), String> {
    let (first, rest) = path.split_first().ok_or("empty key")?;
    let Seg::Key(k) = first else {
        return Err("a key path starts with a name".into());
    };
    if rest.is_empty() {
        root.insert(k.clone(), value);
        return Ok(());
    }
    let slot = root.entry(k.clone()).or_insert_with(|| match rest[0] {
        Seg::Index(_) => Value::Array(Vec::new()),
        Seg::Key(_) => Value::Table(Table::new()),
    });
    set_in(slot, k, rest, value)
}

fn set_in(slot: &mut Value, at: &str, path: &[Seg], value: Value) -> Result<(), String> {
    match (&path[0], slot) {
        (Seg::Key(_), Value::Table(t)) => set(t, path, value),
        (Seg::Index(i), Value::Array(a)) => {
            let len = a.len();
            let elem = a
                .get_mut(*i)
                .ok_or_else(|| format!("`{at}` has {len} entries; index {i} does not exist"))?;
            if path.len() == 1 {
                *elem = value;
                Ok(())
            } else {
                set_in(elem, &format!("{at}[{i}]"), &path[1..], value)
            }
        }
        (Seg::Key(k), _) => Err(format!("`{at}` is not a table, so it has no key `{k}`")),
        (Seg::Index(i), _) => Err(format!("`{at}` is not an array, so it has no entry [{i}]")),
    }
}

/// Deep-merge `over` into `base`: tables merge key by key, anything else replaces.
pub fn merge(base: &mut Table, over: &Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_words_become_strings_and_toml_values_stay_typed() {
        let (p, v) = parse_assignment("switch.buffer=4MiB").unwrap();
        assert_eq!(p, parse_path("switch.buffer"));
        assert_eq!(v, Value::String("4MiB".into()));
        assert_eq!(parse_assignment("topology.k=8").unwrap().1, Value::Integer(8));
        assert!(parse_assignment("novalue").is_err());
        for bad in [
            "flow[-1].size=1",
            "flow[a].size=1",
            "flow[0.size=1",
            "flow]0[.size=1",
        ] {
            assert!(parse_assignment(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_creates_tables_and_indexes_arrays() {
        let mut t: Table = toml::from_str("[[flow]]\nsrc = 0\n").unwrap();
        set(&mut t, &parse_path("flow[0].src"), Value::Integer(5)).unwrap();
        set(&mut t, &parse_path("nic.mtu"), Value::String("1KiB".into())).unwrap();
        assert_eq!(t["flow"][0]["src"].as_integer(), Some(5));
        assert_eq!(t["nic"]["mtu"].as_str(), Some("1KiB"));
        assert!(
            set(&mut t, &parse_path("flow[3].src"), Value::Integer(1))
                .unwrap_err()
                .contains("index 3")
        );
        assert!(
            set(&mut t, &parse_path("nic.mtu.x"), Value::Integer(1))
                .unwrap_err()
                .contains("not a table")
        );
    }

    #[test]
    fn merge_is_deep() {
        let mut a: Table = toml::from_str("[s]\nx = 1\ny = 2\n").unwrap();
        let b: Table = toml::from_str("[s]\ny = 3\n").unwrap();
        merge(&mut a, &b);
        assert_eq!(
            (a["s"]["x"].as_integer(), a["s"]["y"].as_integer()),
            (Some(1), Some(3))
        );
    }
}
