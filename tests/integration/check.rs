//! `sim check` as a user runs it: a clean file exits 0, a misconfigured one exits 8 with
//! each finding's key, effect and fix on stderr, a bad one exits 2, and nothing is
//! simulated or written; `sim run` prints the same findings and records them in
//! summary.json and report.md. And the shipped scenarios: no warning but the one a
//! scenario is about.

use crate::common::{sim, sim_run, summary_json, tmp};
use std::path::Path;

const LOSSY_ROCE: &str = r#"
[topology]
kind = "star"
hosts = 4
host_link = { rate = "25Gbps", cable = "3m" }
[switch]
dscp_to_tc = { "26" = 1, "48" = 6 }
[pfc]
priorities = [3]
[[workload]]
kind = "incast"
size = "200KB"
"#;

#[test]
fn check_exits_8_on_a_warning_0_when_clean_2_on_bad_input_and_simulates_nothing() {
    let dir = tmp("check-cli");
    let file = dir.join("lossy.toml");
    std::fs::write(&file, LOSSY_ROCE).unwrap();
    let o = sim(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(8), "{err}");
    assert!(
        err.contains("warning[roce-lossy-class]: switch.dscp_to_tc.26"),
        "{err}"
    );
    assert!(err.contains("fix: ") && err.contains("check.silence"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 warning"));
    assert!(!dir.join("results").exists() && !Path::new("results/lossy").exists());
    // The fix, given on the command line: clean.
    let o = sim(&["check", file.to_str().unwrap(), "--set", "switch.dscp_to_tc.26=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Silenced: clean too, and said.
    let o = sim(&[
        "check",
        file.to_str().unwrap(),
        "--set",
        "check.silence=[\"roce-lossy-class\"]",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("silenced"));
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[topology]\nkind = \"star\"\nhosts = 0\n").unwrap();
    assert_eq!(sim(&["check", bad.to_str().unwrap()]).status.code(), Some(2));
}

#[test]
fn a_run_prints_its_findings_and_records_them_in_summary_and_report() {
    let dir = tmp("check-run");
    let file = dir.join("lossy.toml");
    std::fs::write(&file, LOSSY_ROCE).unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &["--plots", "none"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "findings do not fail a run: {err}");
    assert!(err.contains("warning[roce-lossy-class]"), "{err}");
    let j = summary_json(&out);
    let f = &j["variants"][0]["config_findings"][0];
    assert_eq!(
        (f["id"].as_str(), f["key"].as_str()),
        (Some("roce-lossy-class"), Some("switch.dscp_to_tc.26"))
    );
    assert_eq!(f["level"], "warning");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("## Configuration warnings") && report.contains("roce-lossy-class"),
        "{report}"
    );
}

#[test]
fn the_shipped_scenarios_carry_no_warning_but_the_one_they_are_about() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut checked = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let s = models::load(&p, &models::Overrides::default()).unwrap();
        checked += 1;
        for v in &s.variants {
            for f in v
                .findings
                .iter()
                .filter(|f| f.level == models::check::Level::Warning)
            {
                // campus-crs504's first variant is the short-headroom case it shows; ber-dac
                // is a cable with bit errors and the FEC off; fec-mismatch's second variant
                // is the port left at the wrong FEC.
                let meant = (p.ends_with("campus-crs504.toml")
                    && v.name == "campus-headroom"
                    && f.id == "headroom-short")
                    || (p.ends_with("ber-dac.toml") && f.id == "ber-without-fec")
                    || (p.ends_with("fec-mismatch.toml")
                        && v.name == "spine1-at-none"
                        && f.id == "fec-mismatch");
                assert!(meant, "{}: variant {}: {f:#?}", p.display(), v.name);
            }
        }
    }
    assert!(checked >= 25, "{checked} scenarios");
}
