//! Hostile values at every key and near every limit: each is refused in the words a user
//! writes, naming where, or accepted with nothing wrapped around; huge counts are refused
//! before allocating, even under a 4 GiB address-space limit.

use models::scenario::{self, Origin, Overrides};
use std::path::PathBuf;
use toml::Value;

fn scenario_files() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    // A file that vanished between the listing and the read is not a scenario.
    files
        .into_iter()
        .filter_map(|p| {
            let t = std::fs::read_to_string(&p).ok()?;
            Some((p, t))
        })
        .collect()
}

/// Every leaf key path of a TOML tree (`topology.host_link.rate`, `flow[1].size`).
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Table(t) => {
            for (k, v) in t {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                leaves(v, p, out);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_table()) => {
            for (i, v) in a.iter().enumerate() {
                leaves(v, format!("{at}[{i}]"), out);
            }
        }
        _ => out.push(at),
    }
}

/// Words that are Rust's, not the scenario file's.
const RUST_WORDS: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "usize",
    "i32",
    "i64",
    "f32",
    "f64",
    "struct ",
    "enum ",
    "tagged",
    "Option",
    "Vec<",
    "sequence",
    "a map",
    "newtype",
    "tuple",
    "invalid type",
    "invalid value",
    "::",
    "variant identifier",
    "unit variant",
    "string only",
    "string or map",
];

fn rust_word(msg: &str) -> Option<&'static str> {
    RUST_WORDS.iter().copied().find(|w| {
        msg.match_indices(w).any(|(i, _)| {
            // A whole word: not inside another (e.g. "u8" in "hu8x").
            let before = msg[..i].chars().last();
            let after = msg[i + w.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric()) && !after.is_some_and(|c| c.is_alphanumeric())
        })
    })
}

#[test]
fn every_key_refuses_wrong_values_in_the_users_words_naming_the_set_argument() {
    let wrong = [
        "\"x\"",
        "-1",
        "300",
        "1.5",
        "true",
        "{}",
        "[1]",
        "[\"x\"]",
        "99999999999999",
    ];
    let mut cases = 0;
    let mut refused = 0;
    for (path, text) in scenario_files() {
        let tree: Value = Value::Table(toml::from_str(&text).unwrap());
        let mut keys = Vec::new();
        leaves(&tree, String::new(), &mut keys);
        for key in keys
            .iter()
            .filter(|k| !k.ends_with(".name") && k.as_str() != "name" && k.as_str() != "description")
        {
            for w in wrong {
                let arg = format!("{key}={w}");
                let ov = Overrides {
                    set: vec![arg.clone()],
                    ..Default::default()
                };
                cases += 1;
                let Err(e) = scenario::parse(&text, path.to_str().unwrap(), "t", &ov) else {
                    continue;
                };
                refused += 1;
                let msg = e.to_string();
                assert!(
                    rust_word(&e.message).is_none(),
                    "{}: --set {arg}: Rust's words ({:?}) in: {msg}",
                    path.display(),
                    rust_word(&e.message)
                );
                // The fault is the --set argument's (or, for a value that moves another check,
                // a place in the file).
                match &e.origin {
                    Origin::CommandLine(a) => assert_eq!(a, &arg, "{msg}"),
                    Origin::File { line, .. } => assert!(*line >= 1),
                    Origin::FileOnly(_) => assert!(e.key.is_some(), "{msg}"),
                }
            }
        }
    }
    // The count is reported by the closing notes; most wrong values are refused.
    eprintln!("{cases} wrong values, {refused} refused");
    assert!(cases > 2000 && refused * 10 > cases * 8, "{refused} of {cases}");
}

#[test]
fn values_at_and_past_each_limit_are_refused_by_key_or_taken_exactly() {
    let base = "[topology]\nkind = \"back-to-back\"\nlink = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n";
    let parse = |set: &[&str]| {
        let ov = Overrides {
            set: set.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        scenario::parse(base, "edge.toml", "edge", &ov)
    };
    // At the limit: taken exactly (a 40,000 km cable is 200 ms at 5 ns/m).
    // (With a retransmission timeout above its 400 ms round trip: 4.096 us x 2^17 = 537 ms.)
    let s = parse(&["topology.link.cable=\"40000km\"", "nic.local_ack_timeout=17"]).unwrap();
    assert_eq!(
        s.topology.links[0].delay,
        sim_core::Duration(40_000 * 1000 * 5_000)
    );
    let s = parse(&["flow[0].start=\"1000000s\""]).unwrap();
    assert_eq!(s.flows[0].start, sim_core::Time(1_000_000 * 1_000_000_000_000));
    // Past it, or past 64 bits: refused, naming the key.
    for (set, key) in [
        ("topology.link.cable=\"40001km\"", "topology.link.cable"),
        (
            "topology.link.cable=\"3700000000000000km\"",
            "topology.link.cable",
        ),
        ("topology.link.delay=\"1000001s\"", "topology.link.delay"),
        ("topology.link.rate=\"101Tbps\"", "topology.link.rate"),
        ("flow[0].size=\"1025TiB\"", "flow[0].size"),
        ("flow[0].size=18446744073709551615", "flow[0].size"),
        ("flow[0].start=\"99999999999999999999s\"", "flow[0].start"),
        ("run.max_time=\"5000000s\"", "run.max_time"),
    ] {
        let e = parse(&[set]).expect_err(set);
        assert_eq!(e.key.as_deref(), Some(key), "{set}: {e}");
        assert!(rust_word(&e.message).is_none(), "{e}");
    }
    // Products of values that are each fine: incast rounds and flaps that would end past the
    // time limit, instead of wrapping back to t = 0.
    let incast = "[topology]\nkind = \"star\"\nhosts = 3\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\n[[workload]]\nkind = \"incast\"\nsize = \"1KB\"\nperiod = \"1000s\"\nrepeat = 2000\n";
    let e = scenario::parse(incast, "i.toml", "i", &Overrides::default()).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].repeat"), "{e}");
    let flap = format!(
        "{base}[[fault]]\nlink = [\"h0\", \"h1\"]\nkind = \"flap\"\nat = \"1us\"\nperiod = \"999999s\"\ncount = 3\n"
    );
    let e = scenario::parse(&flap, "f.toml", "f", &Overrides::default()).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("fault[0].count"), "{e}");
    // Physically impossible: a timeout shorter than the round trip, a PFC refresh shorter
    // than a PFC frame on the wire (84 B at 100 Gb/s is 6.72 ns).
    let e = parse(&["topology.link.cable=\"2km\"", "nic.local_ack_timeout=1"]).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("nic.local_ack_timeout"), "{e}");
    let e = parse(&["pfc.priorities=[3]", "pfc.refresh=\"6ns\""]).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("pfc.refresh"), "{e}");
    parse(&["pfc.priorities=[3]", "pfc.refresh=\"7ns\""]).unwrap();
}

#[test]
fn indices_and_seeds_are_taken_whole_or_refused() {
    let base = "[topology]\nkind = \"back-to-back\"\nlink = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n";
    for bad in [
        "flow[-1].size=1",
        "flow[a].size=1",
        "flow[0.size=1",
        "flow[9].size=1",
    ] {
        let ov = Overrides {
            set: vec![bad.into()],
            ..Default::default()
        };
        let e = scenario::parse(base, "t.toml", "t", &ov).expect_err(bad);
        assert!(
            matches!(e.origin, Origin::CommandLine(ref a) if a == bad),
            "{bad}: {e}"
        );
    }
    let ov = Overrides {
        seed: Some(u64::MAX),
        ..Default::default()
    };
    assert_eq!(scenario::parse(base, "t.toml", "t", &ov).unwrap().seed, u64::MAX);
    // Duplicate keys and bytes that are not UTF-8 are refused with their line.
    let e = scenario::parse(
        &format!("{base}size = \"2MB\"\n"),
        "t.toml",
        "t",
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(matches!(e.origin, Origin::File { line: 8, .. }), "{e}");
    let dir = crate::common::tmp("utf8");
    let f = dir.join("bad.toml");
    std::fs::write(&f, [base.as_bytes(), b"# caf\xe9\n"].concat()).unwrap();
    let e = models::load(&f, &Overrides::default()).unwrap_err();
    assert!(matches!(e.origin, Origin::File { line: 8, .. }), "{e}");
}

#[test]
fn a_wrong_sweep_count_is_refused() {
    let dir = crate::common::tmp("sweep-counts");
    std::fs::write(
        dir.join("base.toml"),
        "[topology]\nkind = \"back-to-back\"\nlink = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n",
    )
    .unwrap();
    for (extra, says) in [
        ("seeds = 0", "at least 1"),
        ("seeds = 9000000000000000000", "points"),
        ("seed = 18446744073709551615\nseeds = 2", "largest seed"),
    ] {
        std::fs::write(
            dir.join("s.toml"),
            format!("scenario = \"base.toml\"\n{extra}\n[[axis]]\nkey = \"nic.mtu\"\nvalues = [\"1024B\", \"4096B\"]\n"),
        )
        .unwrap();
        let o = crate::common::sim_on("sweep", &dir.join("s.toml"), &dir.join("out"), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains(says), "{extra}: {err}");
    }
}

/// Scenarios whose counts would need far more than 4 GiB: under `prlimit --as=4GiB` each is
/// refused (exit 2, naming its key) before anything large is allocated; none aborts.
#[cfg(target_os = "linux")]
#[test]
fn huge_counts_are_refused_before_allocating_under_a_4_gib_address_space() {
    let dir = crate::common::tmp("huge");
    let star = "[topology]\nkind = \"star\"\nhosts = 4\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\n[[workload]]\nkind = \"incast\"\nsize = \"1KB\"\n";
    let cases: Vec<(String, &str)> = vec![
        ("[topology]\nkind = \"ring\"\nhosts = 60000\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n".into(), "topology"),
        ("[topology]\nkind = \"star\"\nhosts = 1000000\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n".into(), "switch"),
        ("[topology]\nkind = \"leaf-spine\"\nleaves = 2000\nspines = 2000\nhosts_per_leaf = 1\nlinks_per_spine = 64\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\nfabric_link = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n".into(), "topology"),
        ("[topology]\nkind = \"fat-tree\"\nk = 4294967294\nhost_link = { rate = \"100Gbps\", cable = \"3m\" }\nfabric_link = { rate = \"100Gbps\", cable = \"3m\" }\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n".into(), "topology"),
        (format!("{star}[run]\nmax_samples = 1000000000000\n"), "run.max_samples"),
        (format!("{star}[run]\nevent_log = 1000000000000\n"), "run.event_log"),
        (format!("{star}[[capture]]\nnode = \"h1\"\nmax_packets = 1000000000000\n"), "capture"),
        (format!("{star}[switch]\nslices = 4000000000\n"), "switch.slices"),
        (star.replace("size = \"1KB\"", "size = \"1KB\"\nperiod = \"1us\"\nrepeat = 4000000000"), "repeat"),
        (format!("{star}[[fault]]\nlink = [\"h0\", \"sw0\"]\nkind = \"flap\"\nat = \"1us\"\nperiod = \"1us\"\ncount = 4000000000\n"), "fault[0].count"),
    ];
    for (i, (text, key)) in cases.iter().enumerate() {
        let f = dir.join(format!("c{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let o = std::process::Command::new("prlimit")
            .arg("--as=4294967296")
            .arg(env!("CARGO_BIN_EXE_sim"))
            .args(["run", f.to_str().unwrap(), "-q", "--out"])
            .arg(dir.join(format!("out{i}")))
            .output()
            .expect("prlimit (util-linux) runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "case {i}: {err}");
        assert!(err.contains(key), "case {i} names {key}: {err}");
    }
}
