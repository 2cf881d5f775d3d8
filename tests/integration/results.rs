//! The results people look at: PNGs that decode and are not blank, stable CSV headers, a
//! report whose numbers are the summary's, and `sim compare` across runs.

use crate::common::{sim, sim_run, summary_json, tmp};
use std::path::{Path, PathBuf};

const SCENARIO: &str = r#"# an incast, two ways
name = "plots"
[topology]
kind = "star"
hosts = 9
host_link = { rate = "100Gbps", cable = "3m" }
[switch]
buffer = "1MB"
[pfc]
priorities = [3]
[[workload]]
kind = "incast"
size = "512KB"
[[variant]]
name = "pfc"
[[variant]]
name = "pfc-dcqcn"
switch.ecn = { kmin = "10KB", kmax = "100KB", pmax = 0.2 }
nic.cc = { kind = "dcqcn", preset = "connectx" }
"#;

fn run_into(name: &str, seed: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-results-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plots.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &["--seed", seed]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Decode a PNG: (width, height, RGB bytes).
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// A PNG that decodes, is 1200 x 700 pixels and is not blank (at least 1 % drawn, in more
/// than eight colours).
pub fn assert_readable(path: &Path) {
    let (w, h, rgb) = decode(path);
    assert!(w == 1200 && h == 700, "{}: {w} x {h}", path.display());
    let pixels = rgb.chunks(3).count();
    let ink = rgb.chunks(3).filter(|p| p != &[255, 255, 255]).count();
    let colours: std::collections::HashSet<&[u8]> = rgb.chunks(3).collect();
    assert!(
        ink * 100 > pixels,
        "{} is almost blank ({ink} of {pixels} pixels drawn)",
        path.display()
    );
    assert!(
        colours.len() > 8,
        "{} has only {} colours",
        path.display(),
        colours.len()
    );
}

#[test]
fn every_plot_with_something_to_show_is_written_and_readable_and_no_other() {
    let out = run_into("pngs", "1");
    for name in [
        "fct_cdf",
        "throughput",
        "queues",
        "pfc_buffers",
        "flow_rates",
        "link_utilisation",
        "pauses",
        "pause_graph",
        "ecn",
        "compare",
    ] {
        assert_readable(&out.join(format!("{name}.png")));
    }
    // One flow size, and a single switch with no uplinks: nothing to show.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for name in ["fct_by_size", "ecmp_balance"] {
        assert!(!out.join(format!("{name}.png")).exists(), "{name}.png");
        // Each left out is named with why, in both reports.
        assert!(report.contains(&format!("- `{name}.png`: ")), "{report}");
        assert!(page.contains(&format!("<li>{name}.png: ")), "report.html");
    }
    // `--plots summary` and `--plots none`.
    let file = out.parent().unwrap().join("plots.toml");
    let some = out.parent().unwrap().join("summary-only");
    assert!(sim_run(&file, &some, &["--plots", "summary"]).status.success());
    let pngs = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".png"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        pngs(&some),
        ["compare.png", "fct_cdf.png", "queues.png", "throughput.png"]
    );
    let none = out.parent().unwrap().join("no-plots");
    assert!(sim_run(&file, &none, &["--plots", "none"]).status.success());
    assert!(pngs(&none).is_empty() && none.join("report.md").exists());
}

#[test]
fn csv_headers_are_stable() {
    let out = run_into("csv", "1");
    let first = |f: &str| {
        std::fs::read_to_string(out.join(f))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        first("flows.csv"),
        "variant,flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,sender_finish_ns,sender_fct_ns,ideal_fct_ns,slowdown,entropy,path,uplinks,status"
    );
    assert_eq!(first("counters.csv"), "variant,node,port,counter,value");
    assert_eq!(first("timeseries.csv"), "variant,time_ns,series,key,value");
    assert_eq!(
        first("events.csv"),
        "variant,time_ns,node,port,prio,flow,event,reason"
    );
    let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
    assert!(
        events.contains(",xoff,") && events.contains(",xon,"),
        "the incast's pause transitions are logged"
    );
    let series = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    assert!(
        series.contains(",queue_bytes,sw0 to-h0,"),
        "the congested queue is sampled"
    );
}

/// The report's table rows: variant -> cells.
fn report_rows(out: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(out.join("report.md"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| variant"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_report_numbers_are_the_summary_numbers() {
    let out = run_into("report", "1");
    let summary = summary_json(&out);
    let rows = report_rows(&out);
    let variants = summary["variants"].as_array().unwrap();
    assert_eq!(rows.len(), variants.len());
    for (row, v) in rows.iter().zip(variants) {
        assert_eq!(row[0], v["name"].as_str().unwrap());
        assert_eq!(row[1], format!("{}/{}", v["flows_completed"], v["flows_total"]));
        let num = |i: usize| row[i].parse::<f64>().unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * b.abs().max(1.0);
        assert!(
            close(num(2), v["fct_ns"]["p50"].as_f64().unwrap() / 1e3),
            "FCT p50"
        );
        assert!(
            close(num(3), v["fct_ns"]["p99"].as_f64().unwrap() / 1e3),
            "FCT p99"
        );
        assert!(close(num(7), v["goodput_gbps"].as_f64().unwrap()), "goodput");
        assert_eq!(num(8) as u64, v["drops"].as_u64().unwrap());
        assert_eq!(num(10) as u64, v["pfc_pause_frames"].as_u64().unwrap());
        assert_eq!(num(11) as u64, v["retransmitted_packets"].as_u64().unwrap());
    }
}

#[test]
fn compare_puts_two_runs_side_by_side() {
    let (a, b) = (run_into("cmp-a", "1"), run_into("cmp-b", "2"));
    let out = a.parent().unwrap().join("compared");
    let o = sim(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(decode(&out.join("compare.png")).0, 1200);
    let rows = report_rows(&out);
    assert_eq!(rows.len(), 4, "two variants from each run");
    // Both folders are called `out`: each run is named by the path given, so no two rows
    // share a name.
    let names: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    let a_pfc = format!("{}/pfc", a.display());
    assert!(names.contains(a_pfc.as_str()), "{names:?}");
    // What made each run (here the seeds differ) is listed under "Runs".
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let runs = &md[md.find("## Runs").expect("a Runs section")..];
    assert!(runs.contains("--seed 1") && runs.contains("--seed 2"), "{runs}");
}

/// A rerun replaces the earlier results whole, and a directory holding anything sim did not
/// write there (a user's file dropped into results, or a folder of other files) is never
/// replaced or written into.
#[test]
fn reruns_replace_results_and_foreign_directories_are_refused() {
    let out = run_into("replace", "1");
    let file = out.parent().unwrap().join("plots.toml");
    let rerun = |dir: &Path| sim_run(&file, dir, &[]);
    let o = rerun(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("summary.json").exists());
    // The marker names the command that wrote the directory.
    let marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(".sim-results")).unwrap()).unwrap();
    let argv: Vec<&str> = marker["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv[1..3], ["run", file.to_str().unwrap()], "{argv:?}");
    std::fs::write(out.join("my-notes.txt"), b"mine").unwrap();
    let o = rerun(&out);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("my-notes.txt"));
    assert_eq!(std::fs::read(out.join("my-notes.txt")).unwrap(), b"mine");
    let foreign = out.parent().unwrap().join("someone-elses");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("thesis.tex"), b"keep me").unwrap();
    std::fs::write(foreign.join("summary.json"), b"{}").unwrap();
    let o = rerun(&foreign);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&foreign.display().to_string()));
    // A folder of someone else's files, without results in it: the refusal names one.
    let other = out.parent().unwrap().join("papers");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("thesis.tex"), b"keep me").unwrap();
    let o = rerun(&other);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`thesis.tex`"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(other.join("thesis.tex")).unwrap(), b"keep me");
    assert_eq!(std::fs::read(foreign.join("thesis.tex")).unwrap(), b"keep me");
    assert_eq!(std::fs::read(foreign.join("summary.json")).unwrap(), b"{}");
}

/// A scenario written and run, exiting with `code`; its results.
fn run_text(name: &str, toml: &str, code: i32) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-results-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, toml).unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

#[test]
fn a_run_whose_flows_all_completed_is_complete_whatever_timers_were_pending() {
    // RoCEv2's retransmission timer (67 ms by default) is armed past run.max_time when the
    // flow finishes; the run ends with the flow, not at the limit.
    let out = run_text(
        "honest",
        r#"
        [topology]
        kind = "back-to-back"
        link = { rate = "100Gbps", cable = "3m" }
        [run]
        max_time = "1ms"
        [[flow]]
        src = 0
        dst = 1
        size = "100KB"
        "#,
        0,
    );
    let v = &summary_json(&out)["variants"][0];
    assert_eq!(v["flows_completed"], 1);
    assert!(v["incomplete"].is_null(), "{}", v["incomplete"]);
    let simulated = v["simulated_ns"].as_f64().unwrap();
    let finish = v["fct_ns"]["max"].as_f64().unwrap();
    assert!(
        simulated >= finish && simulated < 2.0 * finish,
        "{simulated} ns for a flow done at {finish} ns"
    );
}

#[test]
fn no_completion_means_no_percentile_and_no_best() {
    // Stopped before any flow finished: its FCT quantiles are null, not 0, and report.md names
    // no variant with unfinished flows the best.
    let out = run_text(
        "empty",
        r#"
        [topology]
        kind = "star"
        hosts = 3
        host_link = { rate = "100Gbps", cable = "3m" }
        [run]
        max_time = "2us"
        [[workload]]
        kind = "incast"
        size = "1MB"
        [[variant]]
        name = "a"
        [[variant]]
        name = "b"
        nic.mtu = "1024B"
        "#,
        5, // stopped by run.max_time with flows unfinished
    );
    for v in summary_json(&out)["variants"].as_array().unwrap() {
        assert_eq!(v["flows_completed"], 0);
        for k in ["p50", "p99", "max"] {
            assert!(
                v["fct_ns"][k].is_null() && v["sender_fct_ns"][k].is_null(),
                "{k}: {}",
                v["fct_ns"]
            );
        }
        assert!(v["slowdown"]["p50"].is_null());
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| a | 0/2 | - | - | -"), "{report}");
    assert!(!report.contains("**a**") && !report.contains("**b**"), "{report}");
    assert!(
        report.contains("Unfinished flows (not compared): a, b."),
        "{report}"
    );
}

/// `sim run --jobs 2` runs the variants (and draws the plots) side by side and writes what
/// `--jobs 1` writes: the same files, byte for byte, apart from the wall-clock figures and the
/// command line.
#[test]
fn parallel_variants_write_what_a_sequential_run_writes() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/leaf-spine.toml");
    let dir = tmp("parallel-variants");
    let (one, two) = (dir.join("one"), dir.join("two"));
    for (out, jobs) in [(&one, "1"), (&two, "2")] {
        let o = sim_run(&file, out, &["--jobs", jobs]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let timing = [
        "wall_seconds",
        "events_per_second",
        "packet_hops_per_second",
        "simulated_per_wall",
        "peak_rss_mb",
        "command_line",
        "parallel",
    ];
    fn strip(v: &mut serde_json::Value, keys: &[&str]) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| !keys.contains(&k.as_str()));
                m.values_mut().for_each(|x| strip(x, keys));
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| strip(x, keys)),
            _ => {}
        }
    }
    let (mut a, mut b) = (summary_json(&one), summary_json(&two));
    assert!(a["variants"].as_array().unwrap().len() >= 2);
    strip(&mut a, &timing);
    strip(&mut b, &timing);
    assert_eq!(a, b);
    // Every other file (CSV, report, each plot), except the marker naming the command.
    let files = |d: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f != "summary.json" && !f.starts_with('.'))
            .collect();
        v.sort();
        v
    };
    let names = files(&one);
    assert_eq!(names, files(&two));
    for f in [
        "flows.csv",
        "counters.csv",
        "events.csv",
        "timeseries.csv",
        "fct_cdf.png",
        "pauses.png",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} not written: {names:?}");
    }
    for f in &names {
        assert!(
            std::fs::read(one.join(f)).unwrap() == std::fs::read(two.join(f)).unwrap(),
            "{f} differs between --jobs 1 and --jobs 2"
        );
    }
    // Bad values are refused as input errors.
    for bad in ["0", "x", "-1"] {
        let o = sim_run(&file, &dir.join("bad"), &["--jobs", bad]);
        assert_eq!(o.status.code(), Some(2), "--jobs {bad}");
    }
}

#[test]
fn a_saturated_port_reads_full_utilisation_whatever_the_sample_interval() {
    // One 2 MB flow through a switch at 10 Gb/s, sampled every microsecond: a 4,158 B frame
    // takes 3.3 us to serialize, so whole frames counted per sample read 0 or over 1 (capped),
    // 0.79 on average. Counting the time on the wire, the switch's egress to h1 reads 1 in
    // every sample between its first frame and its last.
    let s = crate::common::scenario(
        r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "10Gbps", cable = "3m" }
        [nic]
        mtu = "4096B"
        [[flow]]
        src = 0
        dst = 1
        size = "2MB"
        [run]
        sample_interval = "1us"
        "#,
    );
    let mut sim = models::sim::Sim::new(&s, &s.variants[0]);
    sim.run();
    let sw = &sim.sampler;
    let i = sw
        .ports
        .iter()
        .position(|&p| sim.net.port_label(p).contains("h1"))
        .expect("the switch's port to h1 is sampled");
    let k_all: Vec<f64> = (1..sw.times.len()).map(|k| sw.utilisation(i, k)).collect();
    // Past the first frames to 100 samples before the end (a long run keeps every other
    // sample, each over a doubled interval).
    let steady = &k_all[20..k_all.len() - 100];
    assert!(steady.len() > 500, "{} steady samples", steady.len());
    for (k, u) in steady.iter().enumerate() {
        assert!((u - 1.0).abs() < 1e-4, "sample {k}: utilisation {u}");
    }
}
