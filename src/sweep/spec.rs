//! The sweep file: its base scenario, axes (values or numeric ranges), mode (grid or zip) and
//! seeds, expanded into points in a stable order.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// A sweep file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub name: Option<String>,
    /// The base scenario, relative to the sweep file.
    pub scenario: String,
    /// Replications: seeds base, base+1, ... (base = the scenario's seed, or `seed`).
    #[serde(default = "one")]
    pub seeds: u64,
    #[serde(default)]
    pub seed: Option<u64>,
    /// `grid` (cartesian product, the default) or `zip` (axes advance together).
    #[serde(default)]
    pub mode: Mode,
    /// Metrics to plot, as summary.json paths.
    #[serde(default = "default_metrics")]
    pub metrics: Vec<String>,
    pub axis: Vec<Axis>,
}

fn one() -> u64 {
    1
}
fn default_metrics() -> Vec<String> {
    vec!["fct_ns.p99".into(), "goodput_gbps".into()]
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    #[default]
    Grid,
    Zip,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub key: String,
    #[serde(default)]
    pub values: Option<Vec<toml::Value>>,
    #[serde(default)]
    pub range: Option<Range>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub from: f64,
    pub to: f64,
    pub step: f64,
}

impl Axis {
    /// The values as `--set` strings.
    pub fn values(&self, i: usize) -> Result<Vec<String>> {
        let render = |v: &toml::Value| match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match (&self.values, &self.range) {
            (Some(v), None) if !v.is_empty() => Ok(v.iter().map(render).collect()),
            (None, Some(r)) if r.step > 0.0 && r.to >= r.from => {
                // Counted in floating point and checked before it becomes an integer: a range
                // to 1e300 or inf is refused, not wrapped to 0 values.
                let count = ((r.to - r.from) / r.step + 1e-9).floor() + 1.0;
                if !r.from.is_finite() || !r.to.is_finite() || !count.is_finite() || count > MAX_VALUES as f64
                {
                    bail!(
                        "axis[{i}].range: from {} to {} in steps of {} is {count:.3e} values; an axis may have at most {MAX_VALUES}",
                        r.from,
                        r.to,
                        r.step
                    );
                }
                let n = count as usize;
                // As many decimals as `from` and `step` have, so 0.1 + 2 x 0.1 reads 0.3.
                let decimals = |x: f64| {
                    (0..=9)
                        .find(|&d| ((x * 10f64.powi(d)).round() - x * 10f64.powi(d)).abs() < 1e-6)
                        .unwrap_or(9)
                };
                let d = decimals(r.from).max(decimals(r.step)) as usize;
                Ok((0..n)
                    .map(|k| format!("{:.d$}", r.from + k as f64 * r.step))
                    .collect())
            }
            _ => bail!(
                "axis[{i}] (`{}`): give a non-empty `values` list or a `range = {{ from, to, step }}` with step > 0",
                self.key
            ),
        }
    }
}

/// Values one axis may have.
pub const MAX_VALUES: usize = 10_000;

/// One point: its index, the axis values, the seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    pub values: Vec<String>,
    pub seed: u64,
}

/// Points a sweep may have (each is a whole run with its own results directory).
pub const MAX_POINTS: usize = 100_000;

/// Expand the axes into points (grid or zip) times seeds, in a stable order.
pub fn points(f: &SweepFile, base_seed: u64) -> Result<Vec<Point>> {
    let values: Vec<Vec<String>> = f
        .axis
        .iter()
        .enumerate()
        .map(|(i, a)| a.values(i))
        .collect::<Result<_>>()?;
    if values.is_empty() {
        bail!("a sweep needs at least one [[axis]]");
    }
    if f.seeds == 0 {
        bail!("seeds: must be at least 1 (the number of replications of each point)");
    }
    if base_seed.checked_add(f.seeds - 1).is_none() {
        bail!(
            "seeds: {} seeds from {base_seed} run past the largest seed, 2^64 - 1",
            f.seeds
        );
    }
    let combos_count: u128 = match f.mode {
        Mode::Zip => values[0].len() as u128,
        Mode::Grid => values.iter().map(|v| v.len() as u128).product(),
    };
    let total = combos_count.saturating_mul(f.seeds as u128);
    if total > MAX_POINTS as u128 {
        bail!(
            "the sweep has {total} points ({combos_count} value combinations x {} seeds), more than the {MAX_POINTS} a sweep may have",
            f.seeds
        );
    }
    let combos: Vec<Vec<String>> = match f.mode {
        Mode::Zip => {
            let n = values[0].len();
            if let Some((i, _)) = values.iter().enumerate().find(|(_, v)| v.len() != n) {
                bail!(
                    "zipped axes must have equal lengths: axis[0] has {n} values, axis[{i}] {}",
                    values[i].len()
                );
            }
            (0..n)
                .map(|k| values.iter().map(|v| v[k].clone()).collect())
                .collect()
        }
        Mode::Grid => values.iter().fold(vec![Vec::new()], |acc, vals| {
            acc.iter()
                .flat_map(|prefix| {
                    vals.iter()
                        .map(move |v| [prefix.clone(), vec![v.clone()]].concat())
                })
                .collect()
        }),
    };
    let mut out = Vec::new();
    for combo in combos {
        for s in 0..f.seeds {
            out.push(Point {
                index: out.len(),
                values: combo.clone(),
                seed: base_seed + s,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(mode: Mode, seeds: u64) -> SweepFile {
        let axis = |k: &str, v: &[&str]| Axis {
            key: k.into(),
            values: Some(v.iter().map(|s| toml::Value::String(s.to_string())).collect()),
            range: None,
        };
        SweepFile {
            name: None,
            scenario: "x.toml".into(),
            seeds,
            seed: None,
            mode,
            metrics: default_metrics(),
            axis: vec![axis("a", &["1", "2"]), axis("b", &["x", "y"])],
        }
    }

    #[test]
    fn grids_cross_and_zips_pair_times_seeds() {
        let g = points(&file(Mode::Grid, 2), 10).unwrap();
        assert_eq!(g.len(), 8);
        assert_eq!(
            (g[0].values.clone(), g[0].seed, g[1].seed),
            (vec!["1".to_string(), "x".to_string()], 10, 11)
        );
        assert_eq!(points(&file(Mode::Zip, 1), 1).unwrap().len(), 2);
    }

    #[test]
    fn ranges_expand() {
        let a = Axis {
            key: "k".into(),
            values: None,
            range: Some(Range {
                from: 0.3,
                to: 0.7,
                step: 0.2,
            }),
        };
        assert_eq!(a.values(0).unwrap(), vec!["0.3", "0.5", "0.7"]);
        // No binary-fraction noise: 0.1 + 2 x 0.1 is written 0.3.
        let b = Axis {
            key: "k".into(),
            values: None,
            range: Some(Range {
                from: 0.1,
                to: 0.3,
                step: 0.1,
            }),
        };
        assert_eq!(b.values(0).unwrap(), vec!["0.1", "0.2", "0.3"]);
    }

    #[test]
    fn ranges_too_long_to_count_are_refused_not_wrapped() {
        let axis = |from: f64, to: f64, step: f64| Axis {
            key: "k".into(),
            values: None,
            range: Some(Range { from, to, step }),
        };
        for (from, to, step) in [
            (0.0, 1e300, 1.0),
            (0.0, f64::INFINITY, 1.0),
            (f64::NEG_INFINITY, 0.0, 1.0),
            (0.0, 1.0, 1e-300),
            (0.0, 20_000.0, 1.0),
            (0.0, f64::NAN, 1.0),
            (0.0, 1.0, f64::NAN),
        ] {
            let e = axis(from, to, step).values(0);
            assert!(e.is_err(), "{from} {to} {step}: {e:?}");
        }
        assert_eq!(axis(0.0, 9_999.0, 1.0).values(0).unwrap().len(), 10_000);
    }

    /// Sweep files with hostile numbers, generated (seeded, so CI runs the same cases; set
    /// PROPTEST_CASES for more): each is refused with a message that names what is wrong,
    /// or expands into at most MAX_POINTS points of one value per axis. Never a panic.
    #[test]
    fn hostile_sweep_files_are_refused_or_expand_within_bounds() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let number = prop::sample::select(
            &[
                "0",
                "1",
                "-1",
                "3",
                "0.5",
                "1e-300",
                "1e300",
                "inf",
                "-inf",
                "nan",
                "10000",
                "10001",
                "18446744073709551615",
                "9223372036854775807",
                "\"x\"",
                "[]",
            ][..],
        );
        let axis = prop_oneof![
            (number.clone(), number.clone(), number.clone()).prop_map(|(f, t, s)| format!(
                "[[axis]]\nkey = \"k\"\nrange = {{ from = {f}, to = {t}, step = {s} }}\n"
            )),
            (0usize..4).prop_map(|n| {
                let vals: Vec<String> = (0..n).map(|i| format!("\"{i}KB\"")).collect();
                format!("[[axis]]\nkey = \"k\"\nvalues = [{}]\n", vals.join(", "))
            }),
            Just("[[axis]]\nkey = \"k\"\n".to_string()),
        ];
        let file = (
            number.clone(),
            number,
            prop::sample::select(&["grid", "zip", "spiral"][..]),
            prop::collection::vec(axis, 0..4),
        )
            .prop_map(|(seeds, seed, mode, axes)| {
                format!(
                    "scenario = \"x.toml\"\nseeds = {seeds}\nseed = {seed}\nmode = \"{mode}\"\n{}",
                    axes.concat()
                )
            });
        let config = Config {
            cases: std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(2000),
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
        runner
            .run(&(file, any::<u64>()), |(text, base)| {
                let Ok(f) = toml::from_str::<SweepFile>(&text) else {
                    return Ok(());
                };
                match points(&f, f.seed.unwrap_or(base)) {
                    Ok(ps) => {
                        prop_assert!(!ps.is_empty() && ps.len() <= MAX_POINTS);
                        prop_assert!(ps.iter().all(|p| p.values.len() == f.axis.len()));
                    }
                    Err(e) => {
                        let m = e.to_string();
                        prop_assert!(
                            m.contains("axis") || m.contains("seeds") || m.contains("points"),
                            "names nothing: {}",
                            m
                        );
                    }
                }
                Ok(())
            })
            .unwrap();
    }
}
