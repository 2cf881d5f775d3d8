//! Packet captures as an engineer opens them: the pcaps a small congested fabric writes are
//! dissected by the real Wireshark dissectors (tshark), and checked against the protocol rules
//! and the configured sizes. Without tshark these tests say loudly what they did not check
//! and pass (the same captures are checked without Wireshark in `capture_plain.rs`), unless
//! SIM_REQUIRE_TSHARK is set, as `.ci/run` sets it: then a missing tshark fails them.

use crate::common::sim_run;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) const ROCE: &str = r#"name = "cap"
[topology]
kind = "star"
hosts = 5
host_link = { rate = "100Gbps", cable = "3m" }
[switch]
buffer = "1MB"
ecn = { kmin = "10KB", kmax = "100KB", pmax = 0.2 }
[pfc]
priorities = [3]
[nic]
mtu = "4096B"
cc = { kind = "dcqcn", preset = "connectx" }
[[workload]]
kind = "incast"
receiver = "h0"
size = "512KB"
[[capture]]
name = "port"
node = "sw0"
peer = "h0"
direction = "tx"
[[capture]]
name = "sender"
node = "h1"
"#;

pub(crate) const UET: &str = r#"name = "cap"
[topology]
kind = "star"
hosts = 9
host_link = { rate = "100Gbps", cable = "3m" }
[switch]
buffer = "1MB"
trim = { threshold = "40KB" }
[nic]
mtu = "4096B"
transport = "uet"
lb = { kind = "reps" }
cc = { kind = "nscc" }
[[workload]]
kind = "incast"
receiver = "h0"
size = "256KB"
[[capture]]
name = "port"
node = "sw0"
peer = "h0"
[[variant]]
name = "nscc"
[[variant]]
name = "rccc"
nic.cc = { kind = "rccc" }
"#;

fn tshark_present() -> bool {
    if Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    assert!(
        std::env::var_os("SIM_REQUIRE_TSHARK").is_none(),
        "tshark is not installed and SIM_REQUIRE_TSHARK is set (as .ci/run sets it): the capture dissection tests need Wireshark's tshark"
    );
    // Straight to stderr, not through eprintln!, which the test harness hides for a test
    // that passes: the warning must reach the terminal.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "WARNING: tshark not found: Wireshark's dissection of the captures was NOT checked (the checks without Wireshark in capture_plain.rs ran; install tshark to run these too)"
    );
    false
}

pub(crate) fn run(name: &str, scenario: &str, extra: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-capture-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.toml"), scenario).unwrap();
    let out = dir.join("out");
    let s = dir.join("s.toml");
    let o = sim_run(&s, &out, extra);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// tshark's fields, one Vec per frame.
fn fields(pcap: &Path, filter: &str, names: &[&str], lua: bool) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    if lua {
        cmd.arg("-X").arg(format!(
            "lua_script:{}",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("contrib/wireshark/uet_pds.lua")
                .display()
        ));
    }
    cmd.arg("-r")
        .arg(pcap)
        .args(["-T", "fields", "-E", "separator=|"]);
    if !filter.is_empty() {
        cmd.args(["-Y", filter]);
    }
    for n in names {
        cmd.args(["-e", n]);
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(String::from).collect())
        .collect()
}

fn assert_clean(pcap: &Path, lua: bool) {
    let bad = fields(
        pcap,
        "_ws.malformed || _ws.expert.severity == error",
        &["frame.number", "_ws.col.Info"],
        lua,
    );
    assert!(bad.is_empty(), "{}: malformed frames {bad:?}", pcap.display());
}

#[test]
fn roce_captures_dissect_as_infiniband_with_ecn_cnps_and_pfc() {
    if !tshark_present() {
        return;
    }
    let out = run("roce", ROCE, &[]);
    let port = out.join("port-cap.pcap");
    let sender = out.join("sender-cap.pcap");
    assert_clean(&port, false);
    assert_clean(&sender, false);

    // Data toward the receiver: RC RDMA WRITE opcodes, PSNs 0, 1, 2, ... per QP (lossless:
    // no retransmission), and 512 KB / 4096 B = 125 packets per sender. (The single variant
    // takes the scenario's name, so files are `<capture>-cap.pcap`.)
    let data = fields(
        &port,
        "infiniband",
        &[
            "infiniband.bth.opcode",
            "infiniband.bth.destqp",
            "infiniband.bth.psn",
            "ip.dsfield.ecn",
            "vlan.priority",
            "frame.time_epoch",
        ],
        false,
    );
    let mut psns: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for f in &data {
        assert!(["6", "7", "8", "10"].contains(&f[0].as_str()), "opcode {f:?}");
        assert_eq!(f[4], "3", "PCP of {f:?}");
        psns.entry(f[1].clone()).or_default().push(f[2].parse().unwrap());
    }
    assert_eq!(psns.len(), 4, "one QP per sender");
    for (qp, p) in &psns {
        assert_eq!(*p, (0..512_000 / 4096).collect::<Vec<u32>>(), "QP {qp}");
    }
    // Congestion: the first frames leave unmarked, CE (ECN 3) appears once the queue builds,
    // and every data frame is ECN-capable.
    assert_eq!(data[0][3], "2");
    let first_ce = data
        .iter()
        .position(|f| f[3] == "3")
        .expect("CE marks after congestion");
    assert!(first_ce > 4, "CE at frame {first_ce}");
    assert!(data.iter().all(|f| f[3] == "2" || f[3] == "3"));
    // Back-to-back frames on the saturated port start one frame's serialization apart:
    // (4096 B payload + 62 B RoCEv2 headers + 20 B preamble and gap) x 8 / 100 Gb/s (the
    // capture shows an 802.1Q tag the model does not charge).
    let t: Vec<f64> = data.iter().map(|f| f[5].parse::<f64>().unwrap()).collect();
    let mut gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]) * 1e9).collect();
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    let expected = (4096.0 + 62.0 + 20.0) * 8.0 / 100.0;
    assert!(
        (median - expected).abs() <= 1.0,
        "median gap {median} ns, expected {expected}"
    );

    // At a sender's NIC: CNPs from the receiver (opcode 0x81, DSCP 48, priority 6), and PFC
    // frames for priority 3 only, XOFF with the configured quanta or XON with zero.
    let cnps = fields(
        &sender,
        "infiniband.bth.opcode == 0x81",
        &["ip.dsfield.dscp", "vlan.priority", "infiniband.bth.destqp"],
        false,
    );
    assert!(!cnps.is_empty(), "no CNPs at the sender");
    assert!(cnps.iter().all(|c| c[0] == "48" && c[1] == "6"), "{cnps:?}");
    let pfc = fields(
        &sender,
        "macc.opcode == 0x0101",
        &[
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c3",
            "macc.cbfc.pause_time.c0",
        ],
        false,
    );
    assert!(!pfc.is_empty(), "no PFC frames at the sender");
    for p in &pfc {
        assert_eq!(p[0], "0x0008", "{p:?}");
        assert!(p[1] == "65535" || p[1] == "0", "{p:?}");
        assert_eq!(p[2], "0");
    }
    assert!(
        pfc.iter().any(|p| p[1] == "65535") && pfc.iter().any(|p| p[1] == "0"),
        "XOFF and XON"
    );
    // ACKs come back with the AETH "ACK" syndrome, to the requester QP (one below the responder).
    let acks = fields(
        &sender,
        "infiniband.bth.opcode == 17",
        &["infiniband.aeth.syndrome", "infiniband.bth.destqp"],
        false,
    );
    assert!(!acks.is_empty());
    assert!(
        acks.iter().all(|a| a[0] == "0x1f" || a[0] == "31"),
        "{:?}",
        &acks[..1]
    );
}

#[test]
fn uet_captures_show_trims_nacks_and_credits() {
    if !tshark_present() {
        return;
    }
    let out = run("uet", UET, &[]);
    for v in ["nscc", "rccc"] {
        let pcap = out.join(format!("port-{v}.pcap"));
        assert_clean(&pcap, true);
        let f = fields(
            &pcap,
            "uet_pds",
            &[
                "uet_pds.type",
                "frame.len",
                "udp.dstport",
                "uet_pds.nack_code",
                "ip.dsfield.ecn",
                "uet_pds.retrans",
            ],
            true,
        );
        assert!(f.iter().all(|x| x[2] == "4793"));
        let data: Vec<&Vec<String>> = f.iter().filter(|x| x[0] == "2").collect();
        // Full packets: 4096 B + 102 B of headers - 4 B FCS + a 4 B 802.1Q tag (UET puts data
        // and control in different classes); a message's last one carries 256 KB mod 4096 B;
        // trimmed ones keep the 102 B of headers and tag.
        let sizes = [4096 + 102, 256_000 % 4096 + 102, 102].map(|n: u32| n.to_string());
        assert!(
            data.iter().all(|x| sizes.contains(&x[1])),
            "{:?}",
            data.iter()
                .map(|x| &x[1])
                .collect::<std::collections::BTreeSet<_>>()
        );
        if v == "nscc" {
            assert!(
                data.iter().any(|x| x[1] == "102"),
                "an 8-to-1 incast over a 40 KB trim threshold trims"
            );
            assert!(
                f.iter()
                    .any(|x| x[0] == "10" && (x[3] == "0x01" || x[3] == "0x02")),
                "NACKs of trimmed packets"
            );
            // The port sees each trimmed header go to h0 and h0's NACK come back: a NACK says
            // `retx` exactly when the packet it NACKs was a resend (UE PDS NACK flag 0x10).
            let set = |x: &str| x == "1" || x == "True";
            let trimmed_resends = data.iter().filter(|x| x[1] == "102" && set(&x[5])).count();
            let nacked_resends = f.iter().filter(|x| x[0] == "10" && set(&x[5])).count();
            assert!(trimmed_resends > 0, "resends are trimmed too in this incast");
            assert_eq!(nacked_resends, trimmed_resends);
        } else {
            assert!(f.iter().any(|x| x[0] == "11"), "RCCC credits");
        }
        assert!(f.iter().any(|x| x[0] == "8"), "ACK_CC");
    }
}

/// Mirroring is observation only: the same scenario with and without captures gives the same
/// numbers.
#[test]
fn capturing_does_not_change_results() {
    let without = ROCE.split("[[capture]]").next().unwrap();
    let a = run("with", ROCE, &[]);
    let b = run("without", without, &[]);
    let strip = |p: PathBuf| {
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        for var in v["variants"].as_array_mut().unwrap() {
            for k in [
                "wall_seconds",
                "events_per_second",
                "packet_hops_per_second",
                "simulated_per_wall",
            ] {
                var.as_object_mut().unwrap().remove(k);
            }
        }
        v["variants"].clone()
    };
    assert_eq!(strip(a.join("summary.json")), strip(b.join("summary.json")));
    assert_eq!(
        std::fs::read_to_string(a.join("flows.csv")).unwrap(),
        std::fs::read_to_string(b.join("flows.csv")).unwrap()
    );
}

#[test]
fn bad_capture_points_name_their_key() {
    let dir = std::env::temp_dir().join(format!("sim-capture-{}-bad", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = ROCE.split("[[capture]]").next().unwrap();
    for (capture, key, says) in [
        ("node = \"sw0\"", "capture[0].peer", "switch"),
        ("node = \"sw9\"", "capture[0].node", "no node named"),
        (
            "node = \"sw0\"\npeer = \"h0\"\ncable = 1",
            "capture[0].cable",
            "0-based",
        ),
        (
            "node = \"h1\"\nkinds = [\"data\", \"pfc\"]",
            "capture[0].kinds",
            "unknown kind",
        ),
        (
            "node = \"h1\"\nstart = \"5us\"\nstop = \"1us\"",
            "capture[0].stop",
            "after",
        ),
    ] {
        let file = dir.join("bad.toml");
        std::fs::write(&file, format!("{base}[[capture]]\n{capture}\n")).unwrap();
        let o = sim_run(&file, &dir.join("o"), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{capture}: {err}");
        assert!(
            err.contains(key) && err.contains(says) && err.contains("bad.toml"),
            "{capture}: {err}"
        );
    }
}

/// A host in a ring has two ports: a capture on it must name the neighbour.
#[test]
fn a_multi_port_host_capture_names_its_peer() {
    let ring = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/three-node.toml");
    let out = std::env::temp_dir().join(format!("sim-capture-{}-ring", std::process::id()));
    let o = sim_run(&ring, &out, &["--set", "capture=[{node=\"h0\"}]"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("capture[0].peer") && err.contains("h1") && err.contains("h2"),
        "{err}"
    );
}

#[test]
fn llr_ordered_sets_dissect_with_the_bundled_lua_and_match_the_counters() {
    // h1's NIC on a cable with link level retry and bit errors: it NACKs the frames the cable
    // corrupted and ACKs the rest (models/src/pcap/link.rs frames each ordered set on its own).
    let scenario = "seed = 3\n[topology]\nkind = \"back-to-back\"\n\
        link = { rate = \"100Gbps\", cable = \"3m\", ber = 3e-7, llr = true }\n\
        [nic]\nmtu = \"4096B\"\n[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"2MB\"\n\
        [[capture]]\nname = \"h1-nic\"\nnode = \"h1\"\ndirection = \"tx\"\nkinds = [\"llr\"]\n";
    let out = run("llr", scenario, &[]);
    let counters = std::fs::read_to_string(out.join("counters.csv")).unwrap();
    let counter = |name: &str| -> usize {
        let row = counters
            .lines()
            .find(|l| l.contains(",h1,to-h0,") && l.contains(&format!(",{name},")))
            .unwrap_or_else(|| panic!("no {name}"));
        row.rsplit(',').next().unwrap().parse().unwrap()
    };
    let (acks, nacks) = (counter("llr_tx_ack_ctl_os"), counter("llr_tx_nack_ctl_os"));
    assert!(nacks > 0 && acks > 400, "{acks} ACKs, {nacks} NACKs");
    if !tshark_present() {
        return;
    }
    let pcap = out.join("h1-nic-s.pcap"); // `<capture>-<variant>`: the scenario is s.toml
    assert_clean(&pcap, true);
    let rows = fields(&pcap, "ue_llr", &["ue_llr.type", "ue_llr.seq", "eth.type"], true);
    assert_eq!(
        rows.len(),
        acks + nacks,
        "one frame per ordered set, and nothing else"
    );
    let of = |t: &str| rows.iter().filter(|r| r[0] == t).count();
    assert_eq!((of("0x01"), of("0x02")), (acks, nacks));
    assert!(rows.iter().all(|r| r[2] == "0x88b5"));
    // ACKs are cumulative: their sequence numbers never go back.
    let seqs: Vec<u32> = rows
        .iter()
        .filter(|r| r[0] == "0x01")
        .map(|r| r[1].parse().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "{seqs:?}");
}
