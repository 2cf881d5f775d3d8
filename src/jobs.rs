//! Collective jobs as nccl-tests reports them, so a simulated run reads line by line against
//! a real `all_reduce_perf`: the console table in its layout (size, count, type, redop, root,
//! time in us, algbw and busbw in GB/s) and, per job and variant, the JSON its `-J` option
//! writes (NVIDIA/nccl-tests `src/util.cu`, JSON file version 3: `results` rows of `size`,
//! `count`, `type`, `redop`, `root`, `out_of_place` {`time`, `alg_bw`, `bus_bw`, `nwrong`},
//! `in_place`, `actual_iterations`, `experiment_name`; then `average_bus_bandwidth`).

use crate::files;
use anyhow::Result;
use models::VariantReport;
use models::report::jobs::JobRecord;
use serde_json::json;
use std::path::Path;

/// nccl-tests' number format (`getFloatStr`): two decimals if the value fits `width`
/// characters, else one, else none.
fn nccl_float(v: f64, width: usize) -> String {
    for digits in [2, 1, 0] {
        let s = format!("{v:.digits$}");
        if s.len() <= width {
            return s;
        }
    }
    format!("{v:.1e}")
}

/// The console's job table (first, when a run has collectives): one row per job and
/// variant, nccl-tests' columns and units.
pub fn print(reports: &[VariantReport]) {
    let header = [
        "job",
        "variant",
        "op",
        "ranks",
        "size",
        "count",
        "type",
        "redop",
        "root",
        "time",
        "algbw",
        "busbw",
        "iterations",
    ];
    let units = [
        "",
        "",
        "",
        "",
        "(B)",
        "(elements)",
        "",
        "",
        "",
        "(us)",
        "(GB/s)",
        "(GB/s)",
        "",
    ];
    let mut table = vec![
        header.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
        units.iter().map(|h| h.to_string()).collect(),
    ];
    let cell = |v: Option<f64>, w: usize| v.map_or("-".into(), |v| nccl_float(v, w));
    for r in reports {
        for j in &r.summary.jobs {
            table.push(vec![
                crate::console::short(&j.name).into_owned(),
                crate::console::short(&r.summary.name).into_owned(),
                j.op.to_string(),
                j.ranks.to_string(),
                j.size_bytes.to_string(),
                j.count.to_string(),
                j.dtype.to_string(),
                j.redop.to_string(),
                j.root.to_string(),
                cell(j.time_ns.map(|t| t / 1e3), 7),
                cell(j.algbw_gbytes, 6),
                cell(j.busbw_gbytes, 6),
                format!("{}/{}", j.iterations_completed, j.iteration_ns.len()),
            ]);
        }
    }
    if table.len() > 2 {
        for l in crate::console::aligned(&table) {
            outln!("{l}");
        }
        outln!();
    }
}

/// The file of job `job` of variant `variant`: `<job>-<variant>.nccl.json`.
pub fn file_name(job: &str, variant: &str) -> String {
    format!("{job}-{variant}.nccl.json")
}

/// One job of one variant as nccl-tests' `-J` writes a run of one size.
fn document(j: &JobRecord, variant: &str, argv: &[String]) -> serde_json::Value {
    let time_us = j.time_ns.map(|t| t / 1e3);
    let body = time_us.map(|t| {
        json!({
            "time": t,
            "alg_bw": j.algbw_gbytes,
            "bus_bw": j.busbw_gbytes,
            "nwrong": null,
        })
    });
    json!({
        "version": 3,
        "args": argv,
        "simulator": {
            "name": "sim",
            "version": env!("CARGO_PKG_VERSION"),
            "variant": variant,
            "op": j.op,
            "algorithm": j.algorithm,
            "ranks": j.ranks,
            "iteration_us": j.iteration_ns.iter().map(|t| t.map(|t| t / 1e3)).collect::<Vec<_>>(),
        },
        "config": {
            "ngpus": 1,
            "minimum_bytes": j.size_bytes,
            "maximum_bytes": j.size_bytes,
            "iterations": j.iteration_ns.len(),
        },
        "results": [{
            "size": j.size_bytes,
            "count": j.count,
            "type": j.dtype,
            "redop": j.redop,
            "root": format!("{:6}", j.root),
            "out_of_place": body,
            "in_place": null,
            "actual_iterations": j.iterations_completed,
            "experiment_name": j.name,
        }],
        "out_of_bounds": { "count": 0, "okay": true },
        "average_bus_bandwidth": { "bandwidth": j.busbw_gbytes.unwrap_or(0.0), "okay": "unchecked" },
    })
}

/// Every job of every variant, as nccl-tests' JSON, into `dir`.
pub fn write(dir: &Path, reports: &[VariantReport], argv: &[String]) -> Result<()> {
    for r in reports {
        for j in &r.summary.jobs {
            let doc = document(j, &r.summary.name, argv);
            files::write(
                &dir.join(file_name(&j.name, &r.summary.name)),
                serde_json::to_string_pretty(&doc)?.as_bytes(),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::nccl_float;

    #[test]
    fn numbers_take_nccl_tests_widths() {
        assert_eq!(nccl_float(21680.04, 7), "21680.0");
        assert_eq!(nccl_float(3.0955, 6), "3.10");
        assert_eq!(nccl_float(123456.7, 6), "123457");
        assert_eq!(nccl_float(364.56, 6), "364.56");
    }
}
