//! The shipped Slurm script against a real Slurm: a private single-node cluster (munged,
//! slurmctld and slurmd on this machine, their configuration, state and logs in a temporary
//! directory, on free ports) is started for the one test here and torn down after it, even
//! when it fails. A sweep is submitted as a user would, with one shard made to fail; the
//! scheduler's view is checked while the jobs wait and after they end; the shard is
//! resubmitted alone as the script says, and the merged results must then equal a local
//! `sim sweep` byte for byte.
//!
//! Without Slurm (or not as root, which slurmd needs) the test says loudly what it did not
//! check and passes, unless SIM_REQUIRE_SLURM is set, as `.ci/run` sets it: then it fails.

use crate::sweep::{GRID, read, setup, sweep};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The daemons of a private cluster; dropping it cancels its jobs and stops them.
struct Slurm {
    dir: PathBuf,
    conf: PathBuf,
    cpus: usize,
    daemons: Vec<Child>,
}

/// A program's path: in PATH, or in /usr/sbin (daemons, not in a user's PATH on Debian).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why Slurm cannot run here, if it cannot.
fn missing() -> Option<String> {
    let absent: Vec<&str> = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scontrol",
        "scancel",
        "sinfo",
    ]
    .into_iter()
    .filter(|p| program(p).is_none())
    .collect();
    if !absent.is_empty() {
        return Some(format!(
            "{} not found (Debian: apt-get install slurmd slurmctld slurm-client munge)",
            absent.join(", ")
        ));
    }
    let uid = Command::new("id").arg("-u").output().ok()?;
    (String::from_utf8_lossy(&uid.stdout).trim() != "0")
        .then(|| "not root: slurmd must run as root to start jobs".to_string())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn hostname() -> String {
    let h = Command::new("hostname")
        .arg("-s")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if !h.is_empty() {
        return h;
    }
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    h.trim().split('.').next().unwrap().to_string()
}

/// Poll `ready` every 200 ms until it holds or `limit` passes.
fn wait_for(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

impl Slurm {
    /// The cluster up with its node idle, or None (and a printed reason) where Slurm cannot
    /// run and SIM_REQUIRE_SLURM is not set.
    fn start() -> Option<Slurm> {
        if let Some(why) = missing() {
            assert!(
                std::env::var_os("SIM_REQUIRE_SLURM").is_none(),
                "{why}, and SIM_REQUIRE_SLURM is set (as .ci/run sets it): the real-Slurm sweep test must run"
            );
            // Straight to stderr: the harness hides eprintln! of a test that passes.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "WARNING: {why}: the Slurm script was NOT run on a real Slurm (only with the stand-in sbatch in sweep.rs)"
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!("sim-slurm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        // munged wants a key only its owner can read.
        let mut key = [0u8; 1024];
        {
            use std::io::Read;
            let mut random = std::fs::File::open("/dev/urandom").unwrap();
            random.read_exact(&mut key).unwrap();
        }
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o400)
                .open(dir.join("munge.key"))
                .unwrap();
            f.write_all(&key).unwrap();
        }
        let d = dir.display();
        let host = hostname();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let conf = dir.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=simtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
",
                ctld = free_port(),
                slurmd = free_port(),
            ),
        )
        .unwrap();
        let mut slurm = Slurm {
            dir: dir.clone(),
            conf,
            cpus,
            daemons: Vec::new(),
        };
        let socket = format!("--socket={d}/munge.sock");
        slurm.spawn(
            "munged",
            &[
                "-F",
                "--force",
                &socket,
                &format!("--key-file={d}/munge.key"),
                &format!("--log-file={d}/log/munged.log"),
                &format!("--pid-file={d}/munged.pid"),
                &format!("--seed-file={d}/munged.seed"),
            ],
        );
        assert!(
            wait_for(Duration::from_secs(10), || dir.join("munge.sock").exists()),
            "munged did not start: {}",
            slurm.logs()
        );
        slurm.spawn("slurmctld", &["-D"]);
        slurm.spawn("slurmd", &["-D"]);
        let up = wait_for(Duration::from_secs(30), || {
            slurm.cmd("sinfo", &["-h", "-o", "%T"]).trim() == "idle"
        });
        assert!(up, "the node did not come up idle: {}", slurm.logs());
        Some(slurm)
    }

    fn spawn(&mut self, daemon: &str, args: &[&str]) {
        let log = |s: &str| std::fs::File::create(self.dir.join(format!("log/{daemon}.{s}"))).unwrap();
        let child = Command::new(program(daemon).unwrap())
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(log("out"))
            .stderr(log("err"))
            .spawn()
            .unwrap_or_else(|e| panic!("{daemon}: {e}"));
        self.daemons.push(child);
    }

    /// `program` pointed at this cluster, with none of the caller's Slurm settings (an
    /// `SBATCH_PARTITION`, the script's `OUT` or `TASKS`) in its environment.
    fn client(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        for (key, _) in std::env::vars_os() {
            let k = key.to_string_lossy();
            if k.starts_with("SLURM_")
                || k.starts_with("SBATCH_")
                || ["OUT", "CPUS", "SIM", "TASKS"].contains(&&*k)
            {
                c.env_remove(&key);
            }
        }
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// A client command against this cluster: its standard output.
    fn cmd(&self, program: &str, args: &[&str]) -> String {
        let o = self
            .client(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The daemons' logs' last lines, for a failure message.
    fn logs(&self) -> String {
        let mut s = String::new();
        for name in ["munged.err", "slurmctld.err", "slurmd.err"] {
            let text = std::fs::read_to_string(self.dir.join("log").join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            s += &format!(
                "\n--- {name}\n{}",
                lines[lines.len().saturating_sub(15)..].join("\n")
            );
        }
        s
    }

    /// `squeue`: one line per job (an array's pending tasks in one), fields split on '|'.
    fn queue(&self) -> Vec<Vec<String>> {
        self.cmd("squeue", &["-h", "-o", "%F|%i|%j|%T|%r"])
            .lines()
            .map(|l| l.split('|').map(str::to_string).collect())
            .collect()
    }

    /// `scontrol show job ID` (every task of an array): per job its `JobState` and `ExitCode`.
    fn jobs(&self, id: &str) -> Vec<(String, String, String)> {
        let text = self.cmd("scontrol", &["-o", "show", "job", id]);
        let field = |line: &str, key: &str| {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(key))
                .unwrap_or("")
                .to_string()
        };
        let mut jobs: Vec<(String, String, String)> = text
            .lines()
            .map(|l| {
                (
                    field(l, "ArrayTaskId="),
                    field(l, "JobState="),
                    field(l, "ExitCode="),
                )
            })
            .collect();
        jobs.sort();
        jobs
    }

    /// The script, started as a user starts it from `dir` with `env`; stdout and stderr go to
    /// `dir/<log>.out` and `.err`.
    fn submit(&self, dir: &Path, log: &str, env: &[(&str, &str)], args: &[&str]) -> Script {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sweeps/slurm-array.sh");
        let file = |ext: &str| std::fs::File::create(dir.join(format!("{log}.{ext}"))).unwrap();
        // Its own process group, so that a failed test stops sbatch --wait with it.
        use std::os::unix::process::CommandExt;
        let child = self
            .client("bash")
            .arg(script)
            .args(args)
            .current_dir(dir)
            .env("SIM", env!("CARGO_BIN_EXE_sim"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(file("out"))
            .stderr(file("err"))
            .process_group(0)
            .spawn()
            .unwrap();
        Script(Some(child))
    }
}

/// The script running; dropping it before it ends kills it and what it started.
struct Script(Option<Child>);

impl Script {
    /// Wait for it to end (killing it after `limit`): its exit code.
    fn finish(mut self, limit: Duration, what: &str) -> Option<i32> {
        let start = Instant::now();
        while start.elapsed() < limit {
            let child = self.0.as_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                self.0 = None;
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("{what} did not end within {limit:?}");
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).output();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // Cancel what is left, let the jobs' processes end, then stop the daemons.
        let ids: Vec<String> = self.queue().into_iter().map(|j| j[0].clone()).collect();
        if !ids.is_empty() {
            let _ = self.client("scancel").args(&ids).output();
            wait_for(Duration::from_secs(10), || self.queue().is_empty());
        }
        for child in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").arg(child.id().to_string()).output();
            if !wait_for(Duration::from_secs(5), || {
                child.try_wait().ok().flatten().is_some()
            }) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        if std::thread::panicking() {
            eprintln!(
                "the private Slurm's configuration and logs: {}",
                self.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[test]
fn the_slurm_script_on_a_real_slurm_merges_what_a_local_sweep_writes() {
    let Some(slurm) = Slurm::start() else { return };
    let dir = setup("real-slurm", GRID);
    let local = sweep(&dir, "local", &["--jobs", "1"]);
    assert!(
        local.status.success(),
        "{}",
        String::from_utf8_lossy(&local.stderr)
    );
    let text = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();

    // More CPUs per task than the node has: Slurm would queue the tasks for ever (reason
    // PartitionConfig); the script refuses before submitting anything.
    let too_many = (slurm.cpus + 1).to_string();
    let env = [("OUT", "cluster"), ("CPUS", too_many.as_str())];
    let code = slurm
        .submit(&dir, "cpus", &env, &["sweeps/s.toml", "3"])
        .finish(Duration::from_secs(30), "the submission asking too many CPUs");
    assert_eq!(code, Some(2), "{}", text("cpus.err"));
    assert!(
        text("cpus.err").contains("no node has more than"),
        "{}",
        text("cpus.err")
    );
    assert!(slurm.queue().is_empty(), "{:?}", slurm.queue());

    // Shard 1 of 3 cannot write its directory (a file is in the way): its task fails.
    std::fs::create_dir_all(dir.join("cluster/shards")).unwrap();
    std::fs::write(dir.join("cluster/shards/1"), "in the way").unwrap();
    let env = [("OUT", "cluster"), ("CPUS", "1"), ("SBATCH_ARGS", "--hold")];
    let first = slurm.submit(&dir, "first", &env, &["--wait", "sweeps/s.toml", "3"]);

    // While held: the array's three tasks and the merge wait; released, the merge waits on
    // the array.
    let mut queue = Vec::new();
    let held = wait_for(Duration::from_secs(30), || {
        queue = slurm.queue();
        queue.len() == 2
    });
    assert!(held, "{queue:?} {}{}", text("first.err"), slurm.logs());
    let array = queue.iter().find(|j| j[2] == "sweep-s").unwrap().clone();
    let merge = queue.iter().find(|j| j[2] == "sweep-s-merge").unwrap().clone();
    assert_eq!(array[1], format!("{}_[0-2]", array[0]), "{queue:?}");
    assert!(array[3] == "PENDING" && array[4] == "JobHeldUser", "{queue:?}");
    assert!(merge[3] == "PENDING" && merge[4] == "JobHeldUser", "{queue:?}");
    slurm.cmd("scontrol", &["release", &merge[0]]);
    let waits = wait_for(Duration::from_secs(10), || {
        queue = slurm.queue();
        queue.iter().any(|j| j[0] == merge[0] && j[4] == "Dependency")
    });
    assert!(waits, "{queue:?}");
    slurm.cmd("scontrol", &["release", &array[0]]);

    // afterany: the merge ran although task 1 failed, and --wait exits with its exit code,
    // 2, naming the shard it lacks.
    let code = first.finish(Duration::from_secs(90), "the first submission");
    assert_eq!(code, Some(2), "{}{}", text("first.out"), text("first.err"));
    let (a, m) = (&array[0], &merge[0]);
    let tasks = slurm.jobs(a);
    let state = |t: &str, s: &str, e: &str| (t.to_string(), s.to_string(), e.to_string());
    assert_eq!(
        tasks,
        [
            state("0", "COMPLETED", "0:0"),
            state("1", "FAILED", "2:0"),
            state("2", "COMPLETED", "0:0")
        ]
    );
    assert_eq!(slurm.jobs(m), [state("", "FAILED", "2:0")]);
    // Each task's log is named by array job and index (%A_%a), the merge's by its job id.
    assert!(text(&format!("cluster/logs/{a}_0.out")).contains("cluster/shards/0/sweep.csv"));
    let failed = text(&format!("cluster/logs/{a}_1.out"));
    assert!(failed.contains("exists and is not a directory"), "{failed}");
    let merge_log = text(&format!("cluster/logs/merge_{m}.out"));
    assert!(merge_log.contains("cluster/shards/1/sweep.json"), "{merge_log}");
    assert!(!dir.join("cluster/merged/sweep.csv").exists());

    // A merge cancelled before it ran is not a merge: sbatch --wait itself exits 0 then, the
    // script reads the job's state and exits 1.
    let env = [
        ("OUT", "cluster"),
        ("CPUS", "1"),
        ("TASKS", "1"),
        ("SBATCH_ARGS", "--hold"),
    ];
    let cancelled = slurm.submit(&dir, "cancelled", &env, &["--wait", "sweeps/s.toml", "3"]);
    let queued = wait_for(Duration::from_secs(30), || slurm.queue().len() == 2);
    assert!(queued, "{:?} {}", slurm.queue(), text("cancelled.err"));
    let ids: Vec<String> = slurm.queue().into_iter().map(|j| j[0].clone()).collect();
    slurm.cmd("scancel", &ids.iter().map(String::as_str).collect::<Vec<_>>());
    let code = cancelled.finish(Duration::from_secs(60), "the cancelled submission");
    assert_eq!(code, Some(1), "{}", text("cancelled.err"));
    assert!(
        text("cancelled.err").contains("ended CANCELLED"),
        "{}",
        text("cancelled.err")
    );

    // The shard resubmitted alone with TASKS, as the script says: the merge is then whole.
    std::fs::remove_file(dir.join("cluster/shards/1")).unwrap();
    let again = slurm.submit(
        &dir,
        "again",
        &[("OUT", "cluster"), ("CPUS", "1"), ("TASKS", "1")],
        &["--wait", "sweeps/s.toml", "3"],
    );
    let code = again.finish(Duration::from_secs(90), "the resubmission");
    assert_eq!(code, Some(0), "{}{}", text("again.out"), text("again.err"));
    assert!(
        text("again.out").contains("tasks 1 of 3 shards"),
        "{}",
        text("again.out")
    );
    for file in ["sweep.csv", "sweep_stats.csv"] {
        assert_eq!(
            read(dir.join("cluster/merged").join(file)),
            read(dir.join("local").join(file)),
            "{file}"
        );
    }
    assert!(slurm.queue().is_empty(), "{:?}", slurm.queue());
}
