//! `sim sweep` and `sim merge` as a user drives them: the same rows however the points are
//! scheduled (threads, shards), statistics that match the t-interval formula, and bad input
//! rejected before anything runs.

use crate::common::{sim, sim_on};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SCENARIO: &str = r#"name = "base"
seed = 7
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_link = { rate = "25Gbps", cable = "3m" }
fabric_link = { rate = "100Gbps", cable = "20m" }
[switch]
buffer = "2MB"
ecn = { kmin = "10KB", kmax = "100KB", pmax = 0.2 }
[[workload]]
kind = "permutation"
size = "128KB"
[[variant]]
name = "roce"
pfc.priorities = [3]
nic.cc = { kind = "dcqcn", preset = "connectx" }
[[variant]]
name = "uet"
nic.transport = "uet"
nic.lb = { kind = "reps" }
nic.cc = { kind = "nscc" }
switch.trim = { threshold = "64KB" }
"#;

/// A fresh directory with the base scenario and a sweep file `s.toml` holding `sweep`.
pub(crate) fn setup(name: &str, sweep: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sweeps")).unwrap();
    std::fs::write(dir.join("base.toml"), SCENARIO).unwrap();
    std::fs::write(
        dir.join("sweeps/s.toml"),
        format!("scenario = \"../base.toml\"\n{sweep}"),
    )
    .unwrap();
    dir
}

pub(crate) fn sweep(dir: &Path, out: &str, extra: &[&str]) -> Output {
    sim_on("sweep", &dir.join("sweeps/s.toml"), &dir.join(out), extra)
}

pub(crate) fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) const GRID: &str = r#"seeds = 2
metrics = ["fct_ns.p99", "goodput_gbps"]
[[axis]]
key = "switch.ecn.kmin"
values = ["5KB", "20KB"]
[[axis]]
key = "workload[0].size"
values = ["64KB", "128KB"]
"#;

#[test]
fn threads_and_shards_give_the_same_rows() {
    let dir = setup("same", GRID);
    let one = sweep(&dir, "one", &["--jobs", "1"]);
    assert!(one.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
    let two = sweep(&dir, "two", &["--jobs", "2"]);
    assert!(two.status.success());
    let csv = read(dir.join("one/sweep.csv"));
    assert_eq!(csv, read(dir.join("two/sweep.csv")));
    // 2 x 2 values x 2 seeds = 8 points, 2 variants each, plus the header.
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 8 * 2);
    assert!(lines[0].starts_with("point,seed,switch.ecn.kmin,workload[0].size,variant,status"));
    assert!(lines[1..].iter().all(|l| l.contains(",ok,")), "{csv}");
    // The seeds are the scenario's seed and the next.
    let seeds: std::collections::BTreeSet<&str> =
        lines[1..].iter().map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(seeds.into_iter().collect::<Vec<_>>(), ["7", "8"]);
    // Three shards, merged, are the whole sweep.
    for i in 0..3 {
        let o = sweep(&dir, &format!("shard{i}"), &["--shard", &format!("{i}/3")]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(read(dir.join(format!("shard{i}/sweep.csv"))).lines().count() < lines.len());
    }
    // Shards that do not make one sweep are refused: one missing, one given twice.
    let shard = |i: usize| dir.join(format!("shard{i}")).display().to_string();
    let partial = sim(&[
        "merge",
        "--out",
        dir.join("bad").to_str().unwrap(),
        &shard(0),
        &shard(2),
    ]);
    assert!(!partial.status.success() && String::from_utf8_lossy(&partial.stderr).contains("missing"));
    let twice = sim(&[
        "merge",
        "--out",
        dir.join("bad").to_str().unwrap(),
        &shard(0),
        &shard(0),
        &shard(1),
        &shard(2),
    ]);
    assert!(!twice.status.success() && String::from_utf8_lossy(&twice.stderr).contains("twice"));
    let shards: Vec<String> = (0..3)
        .map(|i| dir.join(format!("shard{i}")).display().to_string())
        .collect();
    let merged = dir.join("merged");
    let mut args = vec!["merge", "--out", merged.to_str().unwrap()];
    args.extend(shards.iter().map(String::as_str));
    let o = sim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read(merged.join("sweep.csv")), csv);
    assert_eq!(
        read(merged.join("sweep_stats.csv")),
        read(dir.join("one/sweep_stats.csv"))
    );
    for png in [
        "sweep_fct_ns_p99_vs_switch_ecn_kmin.png",
        "sweep_goodput_gbps_vs_workload_0__size.png",
    ] {
        assert!(
            std::fs::metadata(merged.join(png)).unwrap().len() > 10_000,
            "{png}"
        );
    }
    // Every point kept its own results.
    assert!(dir.join("one/points/00007/summary.json").exists());
}

/// The statistics are the mean and Student-t 95 % interval of the matching rows, recomputed
/// here from sweep.csv with the textbook formula.
#[test]
fn stats_are_t_intervals_over_the_rows() {
    let dir = setup(
        "stats",
        "seeds = 3\nmetrics = [\"goodput_gbps\"]\n[[axis]]\nkey = \"switch.ecn.kmin\"\nvalues = [\"5KB\", \"40KB\"]\n",
    );
    assert!(sweep(&dir, "out", &[]).status.success());
    let mut rows = csv::Reader::from_path(dir.join("out/sweep.csv")).unwrap();
    let header = rows.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let stats = read(dir.join("out/sweep_stats.csv"));
    let mut checked = 0;
    for line in stats.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let ys: Vec<f64> = records
            .iter()
            .filter(|r| r[col("switch.ecn.kmin")] == *f[1] && r[col("variant")] == *f[2])
            .map(|r| r[col("goodput_gbps")].parse().unwrap())
            .collect();
        assert_eq!(ys.len(), 3);
        let mean = ys.iter().sum::<f64>() / 3.0;
        let s2 = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / 2.0;
        let half = 4.303 * (s2 / 3.0).sqrt(); // t(0.975, 2 df)
        let got: Vec<f64> = f[5..8].iter().map(|x| x.parse().unwrap()).collect();
        assert!((got[0] - mean).abs() < 1e-9 * mean.abs().max(1.0), "{line}");
        assert!(
            (got[1] - (mean - half)).abs() < 1e-6 && (got[2] - (mean + half)).abs() < 1e-6,
            "{line}"
        );
        checked += 1;
    }
    assert_eq!(checked, 4, "{stats}");
}

#[test]
fn a_bad_axis_is_rejected_before_anything_runs() {
    let dir = setup(
        "badkey",
        "[[axis]]\nkey = \"switch.ecn.kminn\"\nvalues = [\"5KB\"]\n",
    );
    let o = sweep(&dir, "out", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("switch.ecn.kminn") && err.contains("s.toml"),
        "{err}"
    );
    assert!(!dir.join("out").exists());
    // A path that cannot be written (no fourth workload), and `seed` as an axis.
    let dir = setup(
        "badindex",
        "[[axis]]\nkey = \"workload[3].size\"\nvalues = [\"1MB\"]\n",
    );
    assert_eq!(sweep(&dir, "out", &[]).status.code(), Some(2));
    let dir = setup("seedaxis", "[[axis]]\nkey = \"seed\"\nvalues = [1, 2]\n");
    let o = sweep(&dir, "out", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("seeds"));
    // So are a metric that is not a column and a malformed shard.
    let dir = setup(
        "badmetric",
        "metrics = [\"fct\"]\n[[axis]]\nkey = \"switch.ecn.kmin\"\nvalues = [\"5KB\"]\n",
    );
    assert_eq!(sweep(&dir, "out", &[]).status.code(), Some(2));
    let dir = setup(
        "badshard",
        "[[axis]]\nkey = \"switch.ecn.kmin\"\nvalues = [\"5KB\"]\n",
    );
    assert_eq!(sweep(&dir, "out", &["--shard", "3/3"]).status.code(), Some(2));
}

/// A bad value, or values valid alone that clash, fail their own points: the others still
/// run, the errors are in sweep.csv, and the exit code says so.
#[test]
fn failing_points_are_recorded_and_the_rest_run() {
    let dir = setup(
        "badvalue",
        "[[axis]]\nkey = \"switch.ecn.kmin\"\nvalues = [\"5KB\", \"lots\", \"9KB\"]\n",
    );
    let o = sweep(&dir, "out", &[]);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = read(dir.join("out/sweep.csv"));
    let failed: Vec<&str> = csv.lines().filter(|l| l.contains(",failed,")).collect();
    assert!(
        failed.len() == 1 && failed[0].starts_with("1,7,lots,") && failed[0].contains("switch.ecn.kmin"),
        "{csv}"
    );
    assert_eq!(csv.lines().filter(|l| l.contains(",ok,")).count(), 2 * 2);

    let dir = setup(
        "clash",
        "[[axis]]\nkey = \"switch.ecn.kmin\"\nvalues = [\"10KB\", \"60KB\"]\n[[axis]]\nkey = \"switch.ecn.kmax\"\nvalues = [\"50KB\", \"100KB\"]\n",
    );
    let o = sweep(&dir, "out", &[]);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = read(dir.join("out/sweep.csv"));
    let failed: Vec<&str> = csv.lines().filter(|l| l.contains(",failed,")).collect();
    assert_eq!(failed.len(), 1, "{csv}");
    assert!(
        failed[0].starts_with("2,7,60KB,50KB,") && failed[0].contains("kmax"),
        "{}",
        failed[0]
    );
    assert_eq!(csv.lines().filter(|l| l.contains(",ok,")).count(), 3 * 2);
}

/// The shipped Slurm script, with a stand-in `sbatch` that runs each array task and the merge
/// in turn: the merged results equal one `sim sweep`. Runs where Slurm is not installed too;
/// `sweep_slurm.rs` runs the script on a real Slurm.
#[test]
fn the_slurm_script_shards_and_merges() {
    let dir = setup("slurm", GRID);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let stub = bin.join("sbatch");
    std::fs::write(
        &stub,
        r#"#!/usr/bin/env bash
# Stand-in for sbatch: run --wrap now, once per --array index.
array=""; wrap=""
for a in "$@"; do case "$a" in --array=*) array=${a#--array=};; --wrap=*) wrap=${a#--wrap=};; esac; done
if [[ -n $array ]]; then
    for i in $(seq "${array%-*}" "${array#*-}"); do SLURM_ARRAY_TASK_ID=$i bash -c "$wrap" || true; done
else
    bash -c "$wrap" || true
fi
echo 42
"#,
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sweeps/slurm-array.sh");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new("bash")
        .arg(&script)
        .args(["sweeps/s.toml", "3"])
        .current_dir(&dir)
        .env("PATH", path)
        .env("SIM", env!("CARGO_BIN_EXE_sim"))
        .env("OUT", "cluster")
        .env("CPUS", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("cluster/shards/2/sweep.csv").exists());
    assert!(sweep(&dir, "local", &[]).status.success());
    assert_eq!(
        read(dir.join("cluster/merged/sweep.csv")),
        read(dir.join("local/sweep.csv"))
    );
}

#[test]
fn every_shipped_sweep_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sweeps");
    let mut n = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let out = std::env::temp_dir().join(format!("sim-shipped-sweep-{}-{n}", std::process::id()));
        let o = sim(&[
            "sweep",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert!(
            o.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let csv = read(out.join("sweep.csv"));
        assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
        let pngs = std::fs::read_dir(&out)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "png"))
            .count();
        assert!(pngs >= 2, "{}", path.display());
        n += 1;
    }
    assert!(n >= 1);
}
