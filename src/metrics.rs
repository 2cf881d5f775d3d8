//! The headline numbers of a variant as `compare.png` and `report.md` show them, read back
//! from `summary.json` (so a comparison of earlier runs uses exactly what they wrote).

use anyhow::{Context, Result};
use serde_json::Value;

/// One variant's headline numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub completed: u64,
    pub total: u64,
    /// FCT and slowdown quantiles: None when no flow completed.
    pub fct_p50_us: Option<f64>,
    pub fct_p99_us: Option<f64>,
    pub fct_max_us: Option<f64>,
    pub slowdown_p50: Option<f64>,
    pub slowdown_p99: Option<f64>,
    /// None when no flow completed.
    pub goodput_gbps: Option<f64>,
    pub drops: u64,
    pub trimmed: u64,
    pub pauses: u64,
    pub retransmitted: u64,
    pub rtos: u64,
    /// Collective jobs (nccl-tests' figures).
    pub jobs: Vec<JobRow>,
    /// The configuration check's warnings: (id, where, what happens, fix).
    pub findings: Vec<[String; 4]>,
}

/// One collective job of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub name: String,
    pub op: String,
    pub algorithm: String,
    pub ranks: u64,
    pub size_bytes: u64,
    pub time_us: Option<f64>,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
}

/// One panel of `compare.png`: a label, a unit, each row's value, and whether values are
/// counts (drawn without decimals).
pub struct Panel {
    pub label: String,
    pub unit: &'static str,
    pub values: Vec<Option<f64>>,
    pub count: bool,
}

/// The panels `compare.png` draws, at most seven: a run of collectives leads with its jobs
/// (the first job's time, then busbw of up to two jobs, as nccl-tests judges them), then
/// the headline metrics of the flows.
pub fn panels(rows: &[Row]) -> Vec<Panel> {
    let mut out = Vec::new();
    let jobs: Vec<String> = rows
        .iter()
        .flat_map(|r| r.jobs.iter().map(|j| j.name.clone()))
        .fold(Vec::new(), |mut v, n| {
            if !v.contains(&n) {
                v.push(n);
            }
            v
        });
    let job = |r: &Row, name: &str| r.jobs.iter().find(|j| j.name == name).cloned();
    if let Some(first) = jobs.first() {
        out.push(Panel {
            label: format!("{first}: time"),
            unit: "us",
            values: rows
                .iter()
                .map(|r| job(r, first).and_then(|j| j.time_us))
                .collect(),
            count: false,
        });
    }
    for name in jobs.iter().take(2) {
        out.push(Panel {
            label: format!("{name}: busbw"),
            unit: "GB/s",
            values: rows
                .iter()
                .map(|r| job(r, name).and_then(|j| j.busbw_gbps.map(|b| b / 8.0)))
                .collect(),
            count: false,
        });
    }
    for (i, (label, unit)) in METRICS.iter().enumerate() {
        if out.len() == 7 {
            break;
        }
        out.push(Panel {
            label: label.to_string(),
            unit,
            values: rows.iter().map(|r| r.metric(i)).collect(),
            count: i >= 3,
        });
    }
    out
}

/// The metrics `compare.png` draws: label, unit, value.
pub const METRICS: [(&str, &str); 7] = [
    ("FCT p50", "us"),
    ("FCT p99", "us"),
    ("goodput", "Gb/s"),
    ("drops", "packets"),
    ("PFC pauses", "frames"),
    ("trims", "packets"),
    ("retransmits", "packets"),
];

impl Row {
    /// Metric `i` of [`METRICS`], None when the run has no value for it.
    pub fn metric(&self, i: usize) -> Option<f64> {
        match i {
            0 => self.fct_p50_us,
            1 => self.fct_p99_us,
            2 => self.goodput_gbps,
            3 => Some(self.drops as f64),
            4 => Some(self.pauses as f64),
            5 => Some(self.trimmed as f64),
            _ => Some(self.retransmitted as f64),
        }
    }

    /// Every flow completed: only such a variant can be the best at anything.
    pub fn complete(&self) -> bool {
        self.completed == self.total
    }
}

/// Rows of a `summary.json`, variant names prefixed with `prefix` when given.
pub fn rows(summary: &Value, prefix: Option<&str>) -> Result<Vec<Row>> {
    let variants = summary["variants"]
        .as_array()
        .context("summary.json has no `variants` array")?;
    let opt = |v: &Value, k: &str| v.pointer(k).and_then(Value::as_f64);
    let u = |v: &Value, k: &str| v.pointer(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(variants
        .iter()
        .map(|v| Row {
            name: match prefix {
                Some(p) => format!("{p}/{}", v["name"].as_str().unwrap_or("?")),
                None => v["name"].as_str().unwrap_or("?").to_string(),
            },
            completed: u(v, "/flows_completed"),
            total: u(v, "/flows_total"),
            fct_p50_us: opt(v, "/fct_ns/p50").map(|x| x / 1e3),
            fct_p99_us: opt(v, "/fct_ns/p99").map(|x| x / 1e3),
            fct_max_us: opt(v, "/fct_ns/max").map(|x| x / 1e3),
            slowdown_p50: opt(v, "/slowdown/p50"),
            slowdown_p99: opt(v, "/slowdown/p99"),
            goodput_gbps: opt(v, "/goodput_gbps"),
            drops: u(v, "/drops"),
            trimmed: u(v, "/trimmed"),
            pauses: u(v, "/pfc_pause_frames"),
            retransmitted: u(v, "/retransmitted_packets"),
            rtos: u(v, "/rtos"),
            jobs: v["jobs"]
                .as_array()
                .map(|js| {
                    js.iter()
                        .map(|j| JobRow {
                            name: j["name"].as_str().unwrap_or("?").to_string(),
                            op: j["op"].as_str().unwrap_or("?").to_string(),
                            algorithm: j["algorithm"].as_str().unwrap_or("?").to_string(),
                            ranks: u(j, "/ranks"),
                            size_bytes: u(j, "/size_bytes"),
                            time_us: opt(j, "/time_ns").map(|x| x / 1e3),
                            algbw_gbps: opt(j, "/algbw_gbps"),
                            busbw_gbps: opt(j, "/busbw_gbps"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            findings: v["config_findings"]
                .as_array()
                .map(|fs| {
                    let text = |f: &Value, k: &str| f[k].as_str().unwrap_or("").to_string();
                    fs.iter()
                        .filter(|f| f["level"] == "warning")
                        .map(|f| {
                            let at = match f["file"].as_str() {
                                Some(file) => format!("{} in {file}", text(f, "key")),
                                None => text(f, "key"),
                            };
                            [text(f, "id"), at, text(f, "problem"), text(f, "fix")]
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect())
}

/// A table: its header and its rows of cells, as text (report.md and report.html draw it).
pub struct Table {
    pub header: &'static [&'static str],
    pub rows: Vec<Vec<String>>,
}

fn cell(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.digits$}"))
}

/// The jobs of every variant, as nccl-tests reports them (None: no variant ran collectives).
pub fn job_table(rows: &[Row]) -> Option<Table> {
    let header = &[
        "job",
        "variant",
        "op",
        "algorithm",
        "ranks",
        "size (B)",
        "time (us)",
        "algbw (GB/s)",
        "busbw (GB/s)",
    ];
    let cells = rows.iter().flat_map(|r| {
        r.jobs.iter().map(move |j| {
            vec![
                j.name.clone(),
                r.name.clone(),
                j.op.clone(),
                j.algorithm.clone(),
                j.ranks.to_string(),
                j.size_bytes.to_string(),
                cell(j.time_us, 2),
                cell(j.algbw_gbps.map(|g| g / 8.0), 2),
                cell(j.busbw_gbps.map(|g| g / 8.0), 2),
            ]
        })
    });
    let rows: Vec<Vec<String>> = cells.collect();
    (!rows.is_empty()).then_some(Table { header, rows })
}

/// A row per variant: its flows' completion, FCT and slowdown quantiles and counts.
pub fn flow_table(rows: &[Row]) -> Table {
    let header = &[
        "variant",
        "flows completed",
        "FCT p50 (us)",
        "FCT p99 (us)",
        "FCT max (us)",
        "slowdown p50",
        "slowdown p99",
        "goodput (Gb/s)",
        "drops",
        "trims",
        "PFC pauses",
        "retransmits",
        "timeouts",
    ];
    let rows = rows
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                format!("{}/{}", r.completed, r.total),
                cell(r.fct_p50_us, 3),
                cell(r.fct_p99_us, 3),
                cell(r.fct_max_us, 3),
                cell(r.slowdown_p50, 4),
                cell(r.slowdown_p99, 4),
                cell(r.goodput_gbps, 3),
                r.drops.to_string(),
                r.trimmed.to_string(),
                r.pauses.to_string(),
                r.retransmitted.to_string(),
                r.rtos.to_string(),
            ]
        })
        .collect();
    Table { header, rows }
}
