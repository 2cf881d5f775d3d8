//! Jobs judged as jobs: nccl-tests' units and JSON, and copies inside a server kept out of
//! the network's completion statistics.

use crate::common::*;

const RING: &str = r#"
[topology]
kind = "star"
hosts = 4
host_link = { rate = "100Gbps", delay = "500ns" }
[nic]
mtu = "4096B"
[[workload]]
kind = "collective"
name = "all_reduce_perf"
op = "all-reduce"
size = "8MiB"
[[variant]]
name = "roce"
[[variant]]
name = "uet"
nic.transport = "uet"
"#;

#[test]
fn each_job_writes_nccl_tests_json_and_the_console_leads_with_it_in_gb_per_s() {
    let dir = tmp("jobs-json");
    let file = dir.join("ring.toml");
    std::fs::write(&file, RING).unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &["--plots", "none"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let console = String::from_utf8_lossy(&o.stdout);
    let (jobs_at, flows_at) = (console.find("busbw").unwrap(), console.find("FCT p50").unwrap());
    assert!(jobs_at < flows_at, "the job table comes first: {console}");
    assert!(
        console.contains("(GB/s)") && console.contains("(elements)"),
        "{console}"
    );
    let summary = summary_json(&out);
    for (i, variant) in ["roce", "uet"].into_iter().enumerate() {
        let j = &summary["variants"][i]["jobs"][0];
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("all_reduce_perf-{variant}.nccl.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(doc["version"], 3, "nccl-tests' JSON file version");
        let row = &doc["results"][0];
        let size = 8u64 << 20;
        assert_eq!(row["size"], size);
        assert_eq!(row["count"], size / 4, "float elements");
        assert_eq!(
            (row["type"].as_str(), row["redop"].as_str()),
            (Some("float"), Some("sum"))
        );
        let oop = &row["out_of_place"];
        let time_us = oop["time"].as_f64().unwrap();
        assert_close(
            time_us * 1e3,
            j["time_ns"].as_f64().unwrap(),
            0.0,
            1e-12,
            "time in us",
        );
        // nccl-tests' GB/s: bytes per nanosecond; busbw = algbw x 2(n-1)/n.
        let algbw = size as f64 / (time_us * 1e3);
        assert_close(oop["alg_bw"].as_f64().unwrap(), algbw, 0.0, 1e-9, "alg_bw GB/s");
        assert_close(
            oop["bus_bw"].as_f64().unwrap(),
            algbw * 1.5,
            0.0,
            1e-9,
            "bus_bw GB/s",
        );
        assert_close(
            j["busbw_GBps"].as_f64().unwrap(),
            j["busbw_gbps"].as_f64().unwrap() / 8.0,
            0.0,
            1e-12,
            "GB/s is Gb/s / 8",
        );
        assert_eq!(row["actual_iterations"], 1);
        assert_eq!(row["experiment_name"], "all_reduce_perf");
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.find("## Collective jobs").unwrap() < report.find("## Flows").unwrap(),
        "{report}"
    );
    assert!(report.contains("Highest busbw (all_reduce_perf)"), "{report}");
}

#[test]
fn copies_inside_a_server_are_left_out_of_the_networks_fct() {
    // Two servers of four NICs each: a ring all-reduce over all eight ranks sends most of
    // its messages between NICs of one server (NVLink).
    let toml = r#"
        [topology]
        kind = "rail"
        units = 1
        servers_per_unit = 2
        nics_per_host = 4
        spines = 1
        host_link = { rate = "100Gbps", delay = "1us" }
        fabric_link = { rate = "400Gbps", delay = "1us" }
        [[workload]]
        kind = "collective"
        op = "all-reduce"
        algorithm = "tree"
        size = "4MiB"
    "#;
    let r = run(toml).remove(0);
    let s = &r.summary;
    let local: Vec<_> = r.flows.iter().filter(|f| f.nvlink).collect();
    assert!(
        !local.is_empty() && local.len() < r.flows.len(),
        "{} local",
        local.len()
    );
    assert_eq!(s.nvlink_flows, local.len());
    assert_eq!(
        s.flows_completed,
        r.flows.len(),
        "every flow, local or not, is counted"
    );
    assert!(local.iter().all(|f| f.path == "nvlink"));
    // The FCT quantiles are the network flows' (nearest rank), the local ones' apart.
    let mut net: Vec<f64> = r
        .flows
        .iter()
        .filter(|f| !f.nvlink)
        .filter_map(|f| f.fct_ns)
        .collect();
    net.sort_by(f64::total_cmp);
    let p50 = net[(net.len() as f64 * 0.5).ceil() as usize - 1];
    assert_eq!(s.fct_ns.p50, Some(p50));
    assert_eq!(s.fct_ns.max, net.last().copied());
    let mut loc: Vec<f64> = local.iter().filter_map(|f| f.fct_ns).collect();
    loc.sort_by(f64::total_cmp);
    assert_eq!(s.nvlink_fct_ns.unwrap().max, loc.last().copied());
}
