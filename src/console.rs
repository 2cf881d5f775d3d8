//! Printing that a closed pipe cannot break. `sim run ... | head -1` closes standard output
//! after one line: `println!` would panic (exit 101 with a backtrace) and leave the results
//! unwritten. Here a line that cannot be written is dropped and the command goes on, writes
//! its results and exits as it would have (ripgrep stops quietly on a closed pipe too).
//! Standard error gets the same treatment (`2>&-`).

use std::fmt;
use std::io::Write;

/// A line on standard output; nothing if it is closed.
macro_rules! outln {
    () => { $crate::console::out(format_args!("")) };
    ($($arg:tt)*) => { $crate::console::out(format_args!($($arg)*)) };
}

/// A line on standard error; nothing if it is closed.
macro_rules! errln {
    () => { $crate::console::err(format_args!("")) };
    ($($arg:tt)*) => { $crate::console::err(format_args!($($arg)*)) };
}

pub fn out(args: fmt::Arguments) {
    let _ = writeln!(std::io::stdout().lock(), "{args}");
}

pub fn err(args: fmt::Arguments) {
    let _ = writeln!(std::io::stderr().lock(), "{args}");
}

/// Most characters of a user's name (a scenario, a variant) shown in a table or a plot.
const SHOWN: usize = 48;

/// `name` as a table or a plot shows it: whole up to 48 characters, else its first 47 and
/// an ellipsis (a 65,536-character name must not widen a table past what `format!` can pad,
/// nor a plot past its canvas). Files keep the whole name.
pub fn short(name: &str) -> std::borrow::Cow<'_, str> {
    match name.char_indices().nth(SHOWN) {
        None => name.into(),
        Some(_) => {
            let cut = name.char_indices().nth(SHOWN - 1).map_or(name.len(), |(i, _)| i);
            format!("{}\u{2026}", &name[..cut]).into()
        }
    }
}

/// `n` and its noun, singular for one: "1 PFC storm", "3 PFC storms".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Rows (the first the header) with each column as wide as its widest cell: the first
/// left-aligned, numbers right-aligned.
pub fn aligned(rows: &[Vec<String>]) -> Vec<String> {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (cell, w))| {
                    if c == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_names_are_cut_on_a_character_boundary() {
        assert_eq!(super::short("roce"), "roce");
        let long = "é".repeat(70_000);
        let s = super::short(&long);
        assert_eq!(s.chars().count(), 48);
        assert!(s.ends_with('\u{2026}'));
        let exact = "a".repeat(48);
        assert_eq!(super::short(&exact), exact.as_str());
    }
}
