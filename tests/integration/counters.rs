//! Counters as the tools name them, held against what the run must have moved: every frame
//! one end of a cable sent, the other received; a NIC's per-priority counters add up to its
//! totals; SONiC's interface, WRED/ECN and trim counters add up to the port's own.

use crate::common::*;
use models::report::VariantReport;

/// An 8-to-1 RoCEv2 incast on a leaf-spine with PFC and ECN, and the same with UET trimming.
const INCAST: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_link = { rate = "100Gbps", cable = "3m" }
fabric_link = { rate = "100Gbps", cable = "10m" }
[switch]
ecn = { kmin = "20KB", kmax = "200KB", pmax = 0.2 }
sonic_counters = true
[pfc]
priorities = [3]
[nic]
mtu = "4096B"
cc = { kind = "dcqcn" }
[[workload]]
kind = "incast"
receiver = "h0"
senders = 7
size = "500KB"
[[variant]]
name = "roce"
[[variant]]
name = "uet"
nic.transport = "uet"
nic.cc = { kind = "nscc" }
pfc.priorities = []
switch.trim = {}
"#;

/// The value SONiC's `command` prints for `column` / `counter` on `interface` of `switch`.
fn sonic(r: &VariantReport, switch: &str, port: &str, command: &str, column: &str, counter: &str) -> u64 {
    r.sonic
        .iter()
        .find(|s| {
            &*s.switch == switch
                && &*s.port == port
                && s.command == command
                && s.column == column
                && s.counter == counter
        })
        .map(|s| s.value.parse().unwrap())
        .unwrap_or_else(|| panic!("no {command} {column} {counter} on {switch} {port}"))
}

#[test]
fn what_one_end_sends_the_other_receives_and_the_breakdowns_add_up() {
    for r in run(INCAST) {
        let v = &r.summary.name;
        assert_eq!(r.summary.flows_completed, r.summary.flows_total, "{v}");
        // Every cable: rx at one end = tx at the other (no frame lost on the wire).
        for leaf in ["leaf0", "leaf1"] {
            for spine in ["spine0", "spine1"] {
                let up = counter(&r, leaf, &format!("to-{spine}"), "tx_packets");
                assert_eq!(
                    counter(&r, spine, &format!("to-{leaf}"), "rx_packets"),
                    up,
                    "{v} {leaf}->{spine}"
                );
                let down = counter(&r, spine, &format!("to-{leaf}"), "tx_bytes");
                assert_eq!(counter(&r, leaf, &format!("to-{spine}"), "rx_bytes"), down, "{v}");
            }
        }
        // A NIC: its per-priority frames and its PFC frames make its totals; each sender's
        // data is the flow's packets (500 KB in 4096 B packets, plus any resent).
        for h in 0..8 {
            let (node, port) = (format!("h{h}"), format!("to-leaf{}", h / 4));
            let sum = |dir: &str, what: &str| -> u64 {
                (0..8)
                    .map(|p| counter(&r, &node, &port, &format!("{dir}_prio{p}_{what}")))
                    .sum()
            };
            let pause_rx: u64 = (0..8)
                .map(|p| counter(&r, &node, &port, &format!("rx_prio{p}_pause")))
                .sum();
            let pause_tx: u64 = (0..8)
                .map(|p| counter(&r, &node, &port, &format!("tx_prio{p}_pause")))
                .sum();
            assert_eq!(
                sum("rx", "packets") + pause_rx,
                counter(&r, &node, &port, "rx_packets"),
                "{v} {node}"
            );
            assert_eq!(
                sum("tx", "packets") + pause_tx,
                counter(&r, &node, &port, "tx_packets"),
                "{v} {node}"
            );
            if (1..8).contains(&h) && v == "roce" {
                let data = 500_000u64.div_ceil(4096);
                let tx3 = counter(&r, &node, &port, "tx_prio3_packets");
                assert!(tx3 >= data, "{v} {node}: {tx3} < {data}");
            }
        }
        // SONiC: interface counters are the port's without PFC frames; the per-queue ECN and
        // trim counters add up to the port's.
        for (sw, port) in [("leaf0", "to-h0"), ("leaf0", "to-spine0"), ("spine1", "to-leaf0")] {
            let rx = counter(&r, sw, port, "rx_packets");
            let pfc_rx: u64 = (0..8)
                .map(|q| sonic(&r, sw, port, "show pfc counters", &format!("PFC{q}"), "Rx"))
                .sum();
            let iface = r
                .sonic
                .iter()
                .find(|s| &*s.switch == sw && &*s.port == port)
                .unwrap()
                .interface
                .to_string();
            assert_eq!(
                sonic(&r, sw, port, "show interfaces counters", &iface, "RX_OK") + pfc_rx,
                rx,
                "{v} {sw} {port}"
            );
            let tx = counter(&r, sw, port, "tx_packets");
            let pfc_tx: u64 = (0..8)
                .map(|q| sonic(&r, sw, port, "show pfc counters", &format!("PFC{q}"), "Tx"))
                .sum();
            assert_eq!(
                sonic(&r, sw, port, "show interfaces counters", &iface, "TX_OK") + pfc_tx,
                tx
            );
            let ecn: u64 = (0..8)
                .map(|q| {
                    sonic(
                        &r,
                        sw,
                        port,
                        "show queue wredcounters",
                        &format!("UC{q}"),
                        "EcnMarked/pkts",
                    )
                })
                .sum();
            assert_eq!(ecn, counter(&r, sw, port, "ecn_marked"), "{v} {sw} {port}");
            let trims: u64 = (0..8)
                .map(|q| {
                    sonic(
                        &r,
                        sw,
                        port,
                        "show queue counters --trim",
                        &format!("UC{q}"),
                        "Trim/pkts",
                    )
                })
                .sum();
            assert_eq!(trims, counter(&r, sw, port, "trimmed"), "{v} {sw} {port}");
        }
        // The incast's port marks (RoCEv2) or trims (UET): the breakdowns are not all zero.
        let busy = counter(&r, "leaf0", "to-h0", "ecn_marked") + counter(&r, "leaf0", "to-h0", "trimmed");
        assert!(busy > 0, "{v}: the incast port neither marked nor trimmed");
    }
}

/// Frames in a pcap file (classic format: a 24 B header, then 16 B per record and its bytes).
fn pcap_frames(path: &std::path::Path) -> u64 {
    let b = std::fs::read(path).unwrap();
    let (mut at, mut n) = (24usize, 0);
    while at + 16 <= b.len() {
        let caplen = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + caplen;
        n += 1;
    }
    n
}

#[test]
fn rx_packets_are_the_frames_that_arrived_whole_as_a_capture_sees_them() {
    // A lossy 100G cable (2 % of frames corrupted each way) and a run stopped while frames
    // are still on it: rx_packets at the switch must be what its port mirror saw arrive.
    let dir = tmp("counters-rx");
    let toml = r#"
        [topology]
        kind = "star"
        hosts = 2
        host_link = { rate = "100Gbps", cable = "100m", loss = 0.02 }
        [run]
        max_time = "60us"
        [[flow]]
        src = "h0"
        dst = "h1"
        size = "2MB"
        [[capture]]
        name = "in"
        node = "sw0"
        peer = "h0"
        direction = "rx"
    "#;
    let file = dir.join("lossy.toml");
    std::fs::write(&file, toml).unwrap();
    let out = dir.join("out");
    let o = sim_run(&file, &out, &["--plots", "none"]);
    assert_eq!(
        o.status.code(),
        Some(5),
        "stopped by run.max_time: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut counters = std::collections::HashMap::new();
    let mut rd = csv::Reader::from_path(out.join("counters.csv")).unwrap();
    for row in rd.records() {
        let row = row.unwrap();
        counters.insert(
            (row[1].to_string(), row[2].to_string(), row[3].to_string()),
            row[4].parse::<u64>().unwrap(),
        );
    }
    let c = |node: &str, port: &str, name: &str| {
        counters[&(node.to_string(), port.to_string(), name.to_string())]
    };
    let seen = pcap_frames(&out.join(format!("in-{}.pcap", "lossy")));
    assert_eq!(
        c("sw0", "to-h0", "rx_packets"),
        seen,
        "rx_packets against the mirror"
    );
    let errors = c("sw0", "to-h0", "drop_link_error");
    assert!(errors > 0, "the cable corrupted frames");
    // Sent, less corrupted, less still on the 100 m cable (500 ns: a few frames at 100G).
    let sent = c("h0", "to-sw0", "tx_packets");
    assert!(
        sent > seen + errors,
        "frames were in flight at the stop: {sent} {seen} {errors}"
    );
    assert!(sent - seen - errors < 10, "{sent} {seen} {errors}");
}

#[test]
fn shedding_the_packet_slab_and_the_pending_events_changes_no_report() {
    // `sim run` sheds both before it reports (Sim::shed): a report made after must be the one
    // made before, for a run that finished and for one stopped with frames in flight.
    let stopped = INCAST.replace("[pfc]", "[run]\nmax_time = \"20us\"\n[pfc]");
    for toml in [INCAST, stopped.as_str()] {
        let s = scenario(toml);
        for v in &s.variants {
            let mut sim = models::Sim::new(&s, v);
            sim.run();
            let seen = |r: &VariantReport| {
                let summary = serde_json::to_value(&r.summary).unwrap();
                let counters: Vec<String> = r.counters.iter().map(|c| format!("{c:?}")).collect();
                (
                    summary,
                    format!("{:?}", r.flows),
                    counters,
                    format!("{:?}", r.sonic),
                )
            };
            let before = seen(&VariantReport::new(&sim, 0.0));
            let in_flight = sim.in_flight();
            // The stopped run keeps frames in the slab; the finished one leaves none.
            assert_eq!(in_flight.0 > 0, toml != INCAST, "{}: {in_flight:?}", v.name);
            sim.shed();
            assert_eq!(before, seen(&VariantReport::new(&sim, 0.0)), "{}", v.name);
            assert_eq!(sim.in_flight(), in_flight);
        }
    }
}
