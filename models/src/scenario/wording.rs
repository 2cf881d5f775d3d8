//! serde's messages in the words of the scenario file: what a user writes ("an integer from
//! 0 to 7", `a table with kind = "star" | "ring" | ...`), not the Rust type that holds it
//! ("u8", "internally tagged enum TopologyConfig").
//!
//! The kinds of each tagged table are asked of the type itself (by deserializing a kind no
//! type has and reading the list serde answers with), so this list cannot drift from the
//! schema.

use serde::de::DeserializeOwned;
use toml::{Table, Value};

/// The TOML parser's `msg` about the value `token` (the text where it failed), in the
/// file's words: a number out of range says which range, not which Rust type overflowed.
pub fn toml_syntax(msg: &str, token: &str) -> String {
    let whole = msg.contains("u64 value was too large")
        || (msg.starts_with("invalid type: integer") && msg.contains("i128"));
    if whole {
        return format!(
            "{token} is out of range: TOML integers run from -2^63 to 2^63 - 1 (9223372036854775807)"
        );
    }
    if msg.contains("floating-point number overflowed") {
        return format!("{token} is out of range: the largest number is about 1.8e308");
    }
    format!("not valid TOML: {msg}")
}

/// Rewrite serde's `msg` about the value at `key` (a dotted path).
pub fn in_user_words(msg: &str, key: &str) -> String {
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        if let Some((got, exp)) = rest.rsplit_once(", expected ") {
            return format!("expected {}, got {}", expectation(exp, key), unexpected(got));
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid value: ") {
        if let Some((got, exp)) = rest.rsplit_once(", expected ") {
            return format!("expected {}, got {}", expectation(exp, key), unexpected(got));
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((n, exp)) = rest.split_once(", expected ") {
            return format!("expected {}, got {n} values", expectation(exp, key));
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((got, exp)) = rest.split_once("`, expected ") {
            return format!("\"{got}\" is not one of {}", alternatives(exp));
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((field, exp)) = rest.split_once("`, expected ") {
            return format!("unknown key `{field}`; the keys here are {}", alternatives(exp));
        }
        if let Some((field, _)) = rest.split_once("`, there are no fields") {
            return format!("unknown key `{field}`; this table takes no other keys");
        }
    }
    if let Some(field) = msg
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        return format!("`{field}` is required here and was not given");
    }
    if let Some(name) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        return format!("expected {}", untagged(name));
    }
    msg.to_string()
}

/// `"a", "b" or "c"` from serde's "one of `a`, `b`, `c`" / "`a` or `b`" / "`a`".
fn alternatives(exp: &str) -> String {
    let names: Vec<&str> = exp
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .collect();
    match names.as_slice() {
        [] => exp.to_string(),
        [one] => format!("\"{one}\""),
        _ => names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

/// What serde expected, as a user would write it.
fn expectation(exp: &str, key: &str) -> String {
    let last = key
        .rsplit('.')
        .next()
        .unwrap_or(key)
        .split('[')
        .next()
        .unwrap_or_default();
    let is_prio = matches!(
        last,
        "prio" | "priority" | "priorities" | "control_prio" | "cnp_prio"
    );
    match exp {
        "u8" if is_prio => "a priority, an integer from 0 to 7".into(),
        "u8" => "an integer from 0 to 255".into(),
        "u16" => "an integer from 0 to 65535".into(),
        "u32" => "an integer from 0 to 4294967295".into(),
        "u64" | "usize" => "a whole number (0 or more)".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a string" | "a borrowed string" => "a string in quotes".into(),
        "a character" | "a char" => "a single character in quotes".into(),
        "a sequence" if is_prio => "a list of priorities, e.g. [3]".into(),
        "a sequence" => "a list, e.g. [1, 2]".into(),
        "a map" => "a table, e.g. { key = value }".into(),
        "option" => "a value".into(),
        // A key that takes a name or a table (`preset`, a collective's `op`), one that takes
        // a name only, and the `kind` of a tagged table.
        "string or map" => "a name in quotes, or a table".into(),
        "string only" => "a name in quotes".into(),
        "variant identifier" => "a name in quotes".into(),
        _ => {
            if let Some(name) = exp.strip_prefix("internally tagged enum ") {
                return tagged(name);
            }
            if let Some(name) = exp.strip_prefix("struct ") {
                return table(name);
            }
            if let Some(n) = exp
                .strip_prefix("an array of length ")
                .or_else(|| exp.strip_prefix("a tuple of size "))
            {
                return format!("a list of {n} values");
            }
            exp.to_string()
        }
    }
}

/// serde's description of the value it got, as TOML would show it.
fn unexpected(got: &str) -> String {
    let inner = |s: &str| s.trim_matches('`').to_string();
    if let Some(v) = got.strip_prefix("integer ") {
        return inner(v);
    }
    if let Some(v) = got.strip_prefix("floating point ") {
        return inner(v);
    }
    if let Some(v) = got.strip_prefix("boolean ") {
        return inner(v);
    }
    if let Some(v) = got.strip_prefix("string ") {
        return v.to_string();
    }
    match got {
        "map" => "a table".into(),
        "sequence" => "a list".into(),
        "unit value" => "nothing".into(),
        "unit variant" | "newtype variant" | "tuple variant" | "struct variant" => {
            "another kind of value".into()
        }
        _ => got.to_string(),
    }
}

/// A struct's table, with an example where one helps.
fn table(name: &str) -> String {
    match name {
        "LinkConfig" => "a table such as { rate = \"100Gbps\", cable = \"3m\" }".into(),
        "EcnConfig" => "a table such as { kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }".into(),
        "TrimConfig" => "a table such as { threshold = \"200KB\" }".into(),
        "LbConfig" => "a table such as { kind = \"reps\" }".into(),
        _ => "a table of keys".into(),
    }
}

/// A tagged table: `a table with kind = "a" | "b"`.
fn tagged(name: &str) -> String {
    use crate::{nic, routing, topology, workload};
    let kinds = match name {
        "TopologyConfig" => kinds::<topology::TopologyConfig>(),
        "WorkloadConfig" => kinds::<workload::WorkloadConfig>(),
        "CcConfig" => kinds::<nic::CcConfig>(),
        "Routing" => kinds::<routing::adaptive::Routing>(),
        _ => None,
    };
    match kinds {
        Some(k) => format!("a table with kind = {k}"),
        None => "a table with a `kind`".into(),
    }
}

/// The kinds a tagged enum takes, asked of the type.
fn kinds<T: DeserializeOwned>() -> Option<String> {
    let mut t = Table::new();
    t.insert("kind".into(), Value::String("\u{1}".into()));
    let e = T::deserialize(Value::Table(t)).err()?.to_string();
    let (_, exp) = e.split_once("`, expected ")?;
    Some(alternatives(exp.lines().next().unwrap_or(exp)))
}

fn untagged(name: &str) -> String {
    match name {
        "CdfConfig" => "a size distribution: \"websearch\", \"fb-hadoop\" or { file = \"sizes.csv\" }".into(),
        _ => "one of the forms this key takes (see docs/scenario-reference.md)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_types_become_what_a_user_writes() {
        assert_eq!(
            in_user_words("invalid value: integer `300`, expected u8", "flow[0].prio"),
            "expected a priority, an integer from 0 to 7, got 300"
        );
        assert_eq!(
            in_user_words("invalid type: string \"x\", expected u32", "topology.hosts"),
            "expected an integer from 0 to 4294967295, got \"x\""
        );
        let t = in_user_words(
            "invalid type: string \"star\", expected internally tagged enum TopologyConfig",
            "topology",
        );
        assert!(t.starts_with("expected a table with kind = "), "{t}");
        assert!(t.contains("\"star\" |") && t.contains("\"fat-tree\""), "{t}");
        assert_eq!(
            in_user_words("unknown variant `x`, expected one of `a`, `b`", "k"),
            "\"x\" is not one of \"a\" | \"b\""
        );
        assert_eq!(
            in_user_words("invalid type: map, expected a sequence", "pfc.priorities"),
            "expected a list of priorities, e.g. [3], got a table"
        );
    }
}
