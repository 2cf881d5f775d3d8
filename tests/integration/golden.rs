//! Regression pins for performance work: the summaries of fixed-seed scenarios, stored in
//! tests/golden/. They are not validation (the closed-form tests are); they make sure an
//! optimisation changes no result. A deliberate model change re-pins them:
//!
//!     SIM_BLESS=1 cargo test --release --test integration golden
//!
//! and the commit says why the numbers moved.

use crate::common::{sim_run, summary_json};
use std::path::Path;

const PINNED: [&str; 5] = [
    "scenarios/leaf-spine.toml",
    "scenarios/cc-compare.toml",
    "scenarios/pfc-incast.toml",
    "scenarios/uec-incast.toml",
    "benches/fat-tree-k8.toml",
];

/// Everything in a variant's summary except wall-clock figures.
fn pinned_fields(summary: &serde_json::Value) -> serde_json::Value {
    let mut vs = summary["variants"].clone();
    for v in vs.as_array_mut().unwrap() {
        for k in [
            "wall_seconds",
            "events_per_second",
            "packet_hops_per_second",
            "simulated_per_wall",
            // How the run on several threads went: wall-clock times, and it depends on
            // the machine's cores.
            "parallel",
        ] {
            v.as_object_mut().unwrap().remove(k);
        }
    }
    vs
}

#[test]
fn fixed_seed_summaries_do_not_move() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("SIM_BLESS").is_some();
    for s in PINNED {
        let out = std::env::temp_dir().join(format!(
            "sim-golden-{}-{}",
            std::process::id(),
            s.replace('/', "-")
        ));
        let o = sim_run(&root.join(s), &out, &[]);
        assert!(o.status.success(), "{s}: {}", String::from_utf8_lossy(&o.stderr));
        let summary = summary_json(&out);
        let got = pinned_fields(&summary);
        let file = root
            .join("tests/golden")
            .join(Path::new(s).with_extension("json").file_name().unwrap());
        if bless {
            std::fs::write(&file, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
            continue;
        }
        let want: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e} (SIM_BLESS=1 creates it)", file.display())),
        )
        .unwrap();
        assert!(
            got == want,
            "{s}: the results moved; if that is intended, re-pin with SIM_BLESS=1 and say why in the commit.\ngot:  {}\nwant: {}",
            got,
            want
        );
    }
}
