//! Flow-size distributions: piecewise-linear CDFs, sampled by inverse transform.
//!
//! The two standard datacenter mixes, as the HPCC simulator ships them
//! (`traffic_gen/WebSearch_distribution.txt`, `FbHdp_distribution.txt`; from Alizadeh et al.,
//! DCTCP, SIGCOMM 2010, and Roy et al., "Inside the Social Network's (Datacenter) Network",
//! SIGCOMM 2015), or a user file of `size_bytes percentile` lines, percentiles 0..=100
//! increasing, the first at 0 and the last at 100.

use rand::RngExt;
use serde::Deserialize;

/// `(size in bytes, cumulative percent)` points.
const WEBSEARCH: &[(f64, f64)] = &[
    (0.0, 0.0),
    (10_000.0, 15.0),
    (20_000.0, 20.0),
    (30_000.0, 30.0),
    (50_000.0, 40.0),
    (80_000.0, 53.0),
    (200_000.0, 60.0),
    (1_000_000.0, 70.0),
    (2_000_000.0, 80.0),
    (5_000_000.0, 90.0),
    (10_000_000.0, 97.0),
    (30_000_000.0, 100.0),
];

const FB_HADOOP: &[(f64, f64)] = &[
    (0.0, 0.0),
    (100.0, 1.0),
    (200.0, 2.0),
    (300.0, 5.0),
    (350.0, 15.0),
    (400.0, 20.0),
    (500.0, 30.0),
    (600.0, 40.0),
    (700.0, 50.0),
    (1_000.0, 60.0),
    (2_000.0, 67.0),
    (7_000.0, 70.0),
    (30_000.0, 72.0),
    (50_000.0, 82.0),
    (80_000.0, 87.0),
    (120_000.0, 90.0),
    (300_000.0, 95.0),
    (1_000_000.0, 97.5),
    (2_000_000.0, 99.0),
    (10_000_000.0, 100.0),
];

/// `cdf = "websearch"`, `"fb-hadoop"`, or `{ file = "sizes.txt" }` (relative to the scenario).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CdfConfig {
    Named(String),
    File { file: String },
}

/// A piecewise-linear CDF.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeCdf {
    points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// Points must start at percentile 0, end at 100, and increase in both coordinates.
    pub fn new(points: Vec<(f64, f64)>) -> Result<SizeCdf, String> {
        if points.len() < 2 || points[0].1 != 0.0 || points[points.len() - 1].1 != 100.0 {
            return Err("a CDF needs at least two points, from percentile 0 to percentile 100".into());
        }
        if let Some(w) = points.windows(2).find(|w| w[1].0 <= w[0].0 || w[1].1 <= w[0].1) {
            return Err(format!(
                "sizes and percentiles must both increase; {:?} then {:?}",
                w[0], w[1]
            ));
        }
        if points[0].0 < 0.0 {
            return Err("sizes must not be negative".into());
        }
        Ok(SizeCdf { points })
    }

    pub fn websearch() -> SizeCdf {
        SizeCdf {
            points: WEBSEARCH.to_vec(),
        }
    }

    pub fn fb_hadoop() -> SizeCdf {
        SizeCdf {
            points: FB_HADOOP.to_vec(),
        }
    }

    /// Parse `size percentile` lines (`#` comments and blank lines allowed).
    pub fn parse(text: &str) -> Result<SizeCdf, String> {
        let mut points = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let nums: Vec<f64> = line
                .split_whitespace()
                .map(|w| w.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("line {}: expected `size percentile`, got \"{line}\"", i + 1))?;
            if nums.len() != 2 || !nums.iter().all(|x| x.is_finite()) {
                return Err(format!(
                    "line {}: expected `size percentile`, got \"{line}\"",
                    i + 1
                ));
            }
            points.push((nums[0], nums[1]));
        }
        SizeCdf::new(points)
    }

    /// The analytic mean: the integral of x dF, exact for a piecewise-linear CDF.
    pub fn mean(&self) -> f64 {
        self.points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum::<f64>()
            / 100.0
    }

    /// Inverse-transform sample: a uniform percentile, interpolated linearly.
    pub fn sample(&self, rng: &mut impl rand::Rng) -> u64 {
        let y = rng.random_range(0.0..100.0);
        let i = self
            .points
            .partition_point(|p| p.1 < y)
            .clamp(1, self.points.len() - 1);
        let ((x0, y0), (x1, y1)) = (self.points[i - 1], self.points[i]);
        (x0 + (x1 - x0) / (y1 - y0) * (y - y0)).round().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn sampled_means_match_the_analytic_means_within_one_percent() {
        for cdf in [SizeCdf::websearch(), SizeCdf::fb_hadoop()] {
            let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(3);
            let n = 2_000_000;
            let mean = (0..n).map(|_| cdf.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            let expected = cdf.mean();
            assert!(
                (mean - expected).abs() / expected < 0.01,
                "sampled {mean}, analytic {expected}"
            );
        }
    }

    #[test]
    fn analytic_mean_of_a_uniform_cdf() {
        let c = SizeCdf::new(vec![(1000.0, 0.0), (3000.0, 100.0)]).unwrap();
        assert_eq!(c.mean(), 2000.0);
    }

    #[test]
    fn files_parse_and_bad_ones_say_why() {
        let c = SizeCdf::parse("# sizes\n0 0\n1000 50\n\n2000 100\n").unwrap();
        assert_eq!(c.mean(), 1000.0);
        assert!(SizeCdf::parse("0 0\n100 50").unwrap_err().contains("100"));
        assert!(SizeCdf::parse("0 0\nabc 100").unwrap_err().contains("line 2"));
        assert!(
            SizeCdf::parse("0 0\n100 60\n50 100")
                .unwrap_err()
                .contains("increase")
        );
    }
}
