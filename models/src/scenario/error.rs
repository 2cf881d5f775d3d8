//! Errors that point at the scenario file: which file, which line, which key, what was expected.

pub use crate::error::FieldError;
use std::fmt;
use toml::de::{DeTable, DeValue};

/// Where a bad value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `file:line:column` (1-based).
    File {
        file: String,
        line: usize,
        column: usize,
    },
    /// The file, line unknown (e.g. a missing key).
    FileOnly(String),
    /// A `--set` on the command line.
    CommandLine(String),
}

/// A scenario the simulator cannot run, with everything a user needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    pub origin: Origin,
    /// The key at fault, when one is known.
    pub key: Option<String>,
    pub message: String,
}

impl ScenarioError {
    /// The key itself is not in the schema (a typo in the name, not a bad value).
    pub fn is_unknown_key(&self) -> bool {
        // serde's wording for `deny_unknown_fields`, or a `--set` path that cannot be written
        // (an index past the end, a key under a value): those carry no validated key.
        self.message.starts_with("unknown key")
            || (matches!(self.origin, Origin::CommandLine(_)) && self.key.is_none())
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::File { file, line, column } => write!(f, "{file}:{line}:{column}: ")?,
            Origin::FileOnly(file) => write!(f, "{file}: ")?,
            Origin::CommandLine(arg) => write!(f, "--set {}: ", shorten(arg))?,
        }
        if let Some(k) = &self.key {
            write!(f, "`{}`: ", shorten(k))?;
        }
        f.write_str(&shorten(&self.message))
    }
}

/// Longest run of characters without a space or quote that a message shows whole.
const LONGEST_WORD: usize = 120;

/// `s` with every run of more than `LONGEST_WORD` (120) characters between spaces and quotes cut
/// to its first 60 and a count of the rest: a 10 MB value or key name is named, not printed.
pub fn shorten(s: &str) -> std::borrow::Cow<'_, str> {
    let is_break = |c: char| c.is_whitespace() || matches!(c, '"' | '`' | '\'' | ',' | '=');
    if !s.split(is_break).any(|w| w.chars().count() > LONGEST_WORD) {
        return s.into();
    }
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let n = word.chars().count();
        if n > LONGEST_WORD {
            out.extend(word.chars().take(60));
            out.push_str(&format!("\u{2026} ({} more characters)", n - 60));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in s.chars() {
        if is_break(c) {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out.into()
}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Split `a.b[2].c` into segments.
pub fn parse_path(path: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            if i > 0 {
                segs.push(Seg::Key(rest[..i].to_string()));
            }
            rest = &rest[i..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(end) = stripped.find(']') else { break };
                if let Ok(n) = stripped[..end].parse() {
                    segs.push(Seg::Index(n));
                }
                rest = &stripped[end + 1..];
            }
        } else {
            segs.push(Seg::Key(rest.to_string()));
        }
    }
    segs
}

/// 1-based line and column of a byte offset.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, column)
}

/// Byte offset of the deepest part of `path` present in the document (the key itself when
/// it exists, otherwise its nearest written ancestor) and how many segments matched.
/// None when not even the first key is.
pub fn locate(src: &str, path: &[Seg]) -> Option<(usize, usize)> {
    let doc = DeTable::parse(src).ok()?;
    let mut table: &DeTable = doc.get_ref();
    let mut best = None;
    let mut depth = 0;
    let mut value: Option<&DeValue> = None;
    for seg in path {
        let next = match (seg, value) {
            (Seg::Key(k), None) => table
                .iter()
                .find(|(key, _)| key.get_ref().as_ref() == k.as_str())
                .map(|(key, v)| (key.span().start, v)),
            (Seg::Key(k), Some(DeValue::Table(t))) => {
                table = t;
                t.iter()
                    .find(|(key, _)| key.get_ref().as_ref() == k.as_str())
                    .map(|(key, v)| (key.span().start, v))
            }
            (Seg::Index(i), Some(DeValue::Array(a))) => a.get(*i).map(|v| (v.span().start, v)),
            _ => None,
        };
        let Some((offset, v)) = next else { break };
        best = Some(offset);
        depth += 1;
        value = Some(v.get_ref());
    }
    best.map(|b| (b, depth))
}

/// The dotted key whose value starts at byte `offset` of a TOML text that may not parse
/// (for a syntax error inside a value): the table header above it, the inline tables open
/// before it on its line, and the key just before its `=`. None when the offset is not in a
/// value.
pub fn key_at(src: &str, offset: usize) -> Option<String> {
    let offset = offset.min(src.len());
    let start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    // The header: the nearest `[table]` or `[[array]]` line above (its index for an array).
    let mut header = String::new();
    let above = &src[..start];
    if let Some(h) = above
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && !l.contains('='))
    {
        let array = h.starts_with("[[");
        let name = h
            .trim_start_matches('[')
            .split(']')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        header = if array {
            let n = above
                .lines()
                .map(str::trim)
                .filter(|l| {
                    l.starts_with("[[")
                        && l.trim_start_matches('[').split(']').next().map(str::trim) == Some(&name)
                })
                .count();
            format!("{name}[{}]", n.saturating_sub(1))
        } else {
            name
        };
    }
    // On the line: keys of the inline tables still open, and the last `key =`.
    let mut open: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let mut word = String::new();
    let mut quoted = false;
    for c in src[start..offset].chars() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '=' => {
                last = Some(word.trim().trim_matches('"').to_string());
                word.clear();
            }
            '{' => {
                open.extend(last.take());
                word.clear();
            }
            '}' => {
                open.pop();
                word.clear();
            }
            ',' => word.clear(),
            '#' => return None,
            _ => word.push(c),
        }
    }
    let last = last.filter(|k| !k.is_empty())?;
    let parts: Vec<&str> = std::iter::once(header.as_str())
        .chain(open.iter().map(String::as_str))
        .chain(std::iter::once(last.as_str()))
        .filter(|p| !p.is_empty())
        .collect();
    Some(parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_keys_and_indices() {
        assert_eq!(
            parse_path("variant[1].switch.buffer"),
            vec![
                Seg::Key("variant".into()),
                Seg::Index(1),
                Seg::Key("switch".into()),
                Seg::Key("buffer".into())
            ]
        );
    }

    #[test]
    fn keys_are_found_in_tables_arrays_and_dotted_keys() {
        let src = "seed = 1\n[topology]\nkind = \"star\"\nhost_link = { rate = \"1G\" }\n\n[[flow]]\nsrc = 0\n[[flow]]\nsrc = 1\ndst.x = 3\n";
        let at = |p: &str| locate(src, &parse_path(p)).map(|(o, _)| line_col(src, o).0);
        assert_eq!(at("seed"), Some(1));
        assert_eq!(at("topology.kind"), Some(3));
        assert_eq!(at("topology.host_link.rate"), Some(4));
        assert_eq!(at("flow[1].src"), Some(9));
        assert_eq!(at("flow[1].dst.x"), Some(10));
        assert_eq!(
            at("topology.missing"),
            Some(2),
            "falls back to the nearest ancestor"
        );
        assert_eq!(at("nothing"), None);
    }

    #[test]
    fn long_words_in_a_message_are_cut() {
        let e = ScenarioError {
            origin: Origin::CommandLine(format!("flow[0].size=\"{}\"", "9".repeat(10_000_000))),
            key: Some(format!("bogus_{}", "k".repeat(1_000_000))),
            message: format!(
                "expected a size like \"4KiB\", got \"{}\"",
                "9".repeat(10_000_000)
            ),
        };
        let shown = e.to_string();
        assert!(shown.len() < 600, "{}", shown.len());
        assert!(
            shown.contains("expected a size like \"4KiB\", got \"9999"),
            "{shown}"
        );
        assert!(shown.contains("(9999940 more characters)"), "{shown}");
        assert_eq!(shorten("a normal message"), "a normal message");
    }

    #[test]
    fn the_key_of_a_value_that_does_not_parse_is_found() {
        let src = "seed = 99999999999999999999\n[topology]\nlink = { rate = \"1G\", loss = 1e999 }\n[[flow]]\nsize = 1\n[[flow]]\nsize = 2e999\n";
        let key = |needle: &str| key_at(src, src.find(needle).unwrap());
        assert_eq!(key("9999").as_deref(), Some("seed"));
        assert_eq!(key("1e999").as_deref(), Some("topology.link.loss"));
        assert_eq!(key("2e999").as_deref(), Some("flow[1].size"));
        assert_eq!(key("[topology]"), None);
    }
}
