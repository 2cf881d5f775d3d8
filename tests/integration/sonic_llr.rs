//! `LLR_PORT` and `LLR_PROFILE` from a SONiC file on the cables
//! (models/src/scenario/port_llr.rs): a port whose entry enables LLR runs it on its end of the
//! cable under the profile it binds, an end the scenario leaves open follows it, and a cable
//! on which LLR cannot run both ways runs without it, with a finding that names the file.

use crate::common::*;

/// A star of two 100G hosts on 3 m cables whose bits err at 3e-7 after FEC (a 4,158 B frame
/// is corrupted with 1.0 %), its switch reading an `LLR_PORT` of `port` for both ports and
/// an `LLR_PROFILE` holding at most `frames` frames and acknowledging every `ctlos` bytes;
/// `llr` is the host cables' own, if any.
fn star(name: &str, port: &str, frames: u32, ctlos: u32, llr: &str) -> (String, std::path::PathBuf) {
    let dir = tmp(name);
    let file = dir.join("config_db.json");
    let json = format!(
        r#"{{"PORT": {{"Ethernet0": {{"speed": "100000"}}, "Ethernet4": {{"speed": "100000"}}}},
            "LLR_CONFIG": {{"GLOBAL": {{"mode": "static"}}}},
            "LLR_PORT": {{"Ethernet0": {{{port}}}, "Ethernet4": {{{port}}}}},
            "LLR_PROFILE": {{"llr_100000_3m_profile": {{
                "max_outstanding_frames": "{frames}", "max_outstanding_bytes": "262144",
                "max_replay_count": "3", "max_replay_timer": "5000",
                "ctlos_spacing_bytes": "{ctlos}"}}}}}}"#
    );
    std::fs::write(&file, json).unwrap();
    let toml = format!(
        r#"
        seed = 3
        [topology]
        kind = "star"
        hosts = 2
        host_link = {{ rate = "100Gbps", cable = "3m", ber = 3e-7 {llr} }}
        [nic]
        mtu = "4096B"
        [switch]
        sonic = "{}"
        [run]
        max_time = "2s"
        [[flow]]
        src = "h1"
        dst = "h0"
        size = "8MB"
        "#,
        file.display()
    );
    (toml, dir)
}

const ON: &str = r#""llr_local": "enabled", "llr_remote": "enabled", "llr_profile": "llr_100000_3m_profile""#;

#[test]
fn a_files_llr_ports_retry_on_their_cables_and_hosts_left_open_follow() {
    let (toml, _d) = star("sonic-llr-follow", ON, 4096, 2048, "");
    let r = &run(&toml)[0];
    assert!(r.flows[0].fct_ns.is_some());
    // Every corrupted frame (about 1 % of the 1,954 on each of two hops) is replayed on its
    // cable.
    assert_eq!((r.summary.retransmitted_packets, r.summary.rtos), (0, 0));
    for (node, port) in [("h1", "to-sw0"), ("sw0", "to-h0")] {
        assert!(counter(r, node, port, "llr_tx_ok") >= 1_954, "{node} {port}");
        assert!(counter(r, node, port, "llr_tx_replay") > 0, "{node} {port}");
    }
    // `show llr counters` as the box prints it: the switch's port toward h0 sends the data
    // (TX_OK, with its replays) and receives the ACKs for it, the port toward h1 the reverse.
    let llr = |iface: &str, counter: &str| -> u64 {
        let row = r
            .sonic
            .iter()
            .find(|x| x.command == "show llr counters" && x.column == iface && x.counter == counter);
        row.map_or_else(|| panic!("{iface} {counter}"), |x| x.value.parse().unwrap())
    };
    assert_eq!(llr("Ethernet0", "TX_OK"), counter(r, "sw0", "to-h0", "llr_tx_ok"));
    assert_eq!(
        llr("Ethernet0", "TX_REPLAY"),
        counter(r, "sw0", "to-h0", "llr_tx_replay")
    );
    assert_eq!(
        llr("Ethernet0", "RX_NACK"),
        counter(r, "sw0", "to-h0", "llr_rx_nack_ctl_os")
    );
    assert_eq!(llr("Ethernet4", "RX_OK"), counter(r, "sw0", "to-h1", "llr_rx_ok"));
    assert!(llr("Ethernet4", "RX_OK") >= 1_954 && llr("Ethernet4", "RX_BAD") > 0);
    assert_eq!(
        llr("Ethernet4", "TX_ACK"),
        counter(r, "sw0", "to-h1", "llr_tx_ack_ctl_os")
    );
    let notes = findings(&toml, "sonic-llr");
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert!(
        notes[0]
            .problem
            .contains("on 2 cables (LLR_PROFILE llr_100000_3m_profile)"),
        "{}",
        notes[0].problem
    );
    // The same file without its LLR entries: the corruption reaches the transport.
    let (off, _d2) = star(
        "sonic-llr-none",
        r#""llr_local": "disabled", "llr_remote": "disabled""#,
        4096,
        2048,
        "",
    );
    let r = &run(&off)[0];
    assert!(r.summary.retransmitted_packets > 0);
    assert_eq!(counter_total(r, "llr_tx_ok"), 0);
    assert!(findings(&off, "sonic-llr").is_empty() && findings(&off, "llr-mismatch").is_empty());
}

#[test]
fn each_end_runs_its_own_profile() {
    // The switch's ports hold one frame outstanding; the hosts run the scenario's default
    // buffer (1.2 us of the line rate and the cable's round trip). A 4,158 B frame takes
    // 333 ns and its acknowledgement returns after more than that, so the switch holds every
    // next frame back and the hosts do not.
    let (toml, _d) = star("sonic-llr-ends", ON, 1, 2048, ", llr = true");
    let r = &run(&toml)[0];
    assert!(r.flows[0].fct_ns.is_some());
    assert!(counter(r, "sw0", "to-h0", "llr_tx_held") > 1_000);
    assert_eq!(counter(r, "h1", "to-sw0", "llr_tx_held"), 0);
    assert_eq!(r.summary.retransmitted_packets, 0);
    // A receiver acknowledges as its own profile says. Frames back to back, the switch
    // acknowledges h1's once per 16 KiB (four 4,158 B frames: about 500 ACKs for 1,954
    // frames, and one at each pause in the stream), h0 (the default 2 KiB) every one of the
    // switch's. h1's buffer (about 15 KB) then fills before an ACK frees it: h1 holds frames.
    let (toml, _d2) = star("sonic-llr-acks", ON, 4096, 16_384, ", llr = true");
    let r = &run(&toml)[0];
    let frames = 1_954;
    let (switch, host) = (
        counter(r, "sw0", "to-h1", "llr_tx_ack_ctl_os"),
        counter(r, "h0", "to-sw0", "llr_tx_ack_ctl_os"),
    );
    assert!(
        switch < frames / 2 && host >= frames,
        "switch {switch}, host {host}"
    );
    assert!(counter(r, "h1", "to-sw0", "llr_tx_held") > 0);
    assert_eq!(r.summary.retransmitted_packets, 0);
}

#[test]
fn a_cable_llr_cannot_run_both_ways_on_runs_without_it_and_says_why() {
    // The scenario turns the hosts' LLR off: one end on, the other off.
    let (toml, _d) = star("sonic-llr-mismatch", ON, 4096, 2048, ", llr = false");
    let f = findings(&toml, "llr-mismatch");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].key, "LLR_PORT.*");
    assert!(f[0].file.as_deref().unwrap().ends_with("config_db.json"));
    assert!(
        f[0].problem.starts_with("2 cables run without link level retry")
            && f[0]
                .problem
                .contains("sw0 Ethernet0 llr_local enabled llr_remote enabled")
            && f[0].problem.contains("h0 llr = false (the scenario's)"),
        "{}",
        f[0].problem
    );
    let r = &run_unchecked(&toml)[0];
    assert_eq!(counter_total(r, "llr_tx_ok"), 0);
    assert!(r.summary.retransmitted_packets > 0);
    // The switch's receivers only: the hosts' frames could run LLR, the switch's could not.
    let half = r#""llr_local": "enabled", "llr_remote": "disabled", "llr_profile": "llr_100000_3m_profile""#;
    let (toml, _d2) = star("sonic-llr-one-way", half, 4096, 2048, ", llr = true");
    let f = findings(&toml, "llr-one-way");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].problem.contains("only one direction"), "{}", f[0].problem);
    assert_eq!(counter_total(&run_unchecked(&toml)[0], "llr_tx_ok"), 0);
}
