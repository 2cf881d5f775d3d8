//! UE link level retry (models/src/llr/): a corrupted frame is resent on its cable, so the
//! transports above see delay instead of loss while the replay buffer covers it, and loss
//! again when it cannot (sources and inferred behaviours: docs/link-layer.md).

use crate::common::*;

fn dac(link: &str, size: &str, transport: &str) -> String {
    format!(
        "seed = 3\n[topology]\nkind = \"back-to-back\"\nlink = {link}\n[nic]\nmtu = \"4096B\"\n\
         transport = \"{transport}\"\n[run]\nmax_time = \"2s\"\n\
         [[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"{size}\"\n"
    )
}

/// A 3 m DAC at 100G whose bits err at 3e-7 after FEC: a 4,158 B frame is corrupted with
/// 1-(1-3e-7)^33,264 = 1.0 %, an 8 B ordered set with 1.9e-5.
fn lossy(extra: &str) -> String {
    format!("{{ rate = \"100Gbps\", cable = \"3m\", ber = 3e-7{extra} }}")
}

#[test]
fn llr_recovers_every_corrupted_frame_with_no_end_to_end_retransmission() {
    for transport in ["roce", "uet"] {
        let r = &run(&dac(&lossy(", llr = true"), "8MB", transport))[0];
        let s = &r.summary;
        assert!(r.flows[0].fct_ns.is_some(), "{transport}: finished");
        assert_eq!(
            (s.retransmitted_packets, s.rtos),
            (0, 0),
            "{transport}: no resend end to end"
        );
        assert_eq!(s.drops, 0, "{transport}: nothing lost");
        // Every frame corrupted on the way was one LLR's receiver saw as bad: h1 counts the
        // forward cable's, h0 the reverse's.
        for (rx, tx) in [("h1", "to-h0"), ("h0", "to-h1")] {
            let bad = counter(r, rx, tx, "llr_rx_bad");
            assert_eq!(bad, counter(r, rx, tx, "drop_link_error"), "{transport} {rx}");
        }
        let bad = counter(r, "h1", "to-h0", "llr_rx_bad");
        assert!(bad > 5, "{transport}: 1 % of about 2,000 frames corrupted: {bad}");
        // One NACK per error episode, one replay per NACK; the rest by the timer.
        let (nacks, replays, timer) = (
            counter(r, "h1", "to-h0", "llr_tx_nack_ctl_os"),
            counter(r, "h0", "to-h1", "llr_tx_replay"),
            counter(r, "h0", "to-h1", "llr_tx_replay_timer"),
        );
        assert_eq!(
            replays,
            counter(r, "h0", "to-h1", "llr_rx_nack_ctl_os") + timer,
            "{transport}"
        );
        assert!(nacks <= bad && nacks + timer >= bad.min(1), "{transport}");
        assert_eq!(counter(r, "h0", "to-h1", "llr_tx_flush"), 0);
    }
    // The same cable without LLR: the transports resend.
    for transport in ["roce", "uet"] {
        let r = &run(&dac(&lossy(""), "8MB", transport))[0];
        assert!(r.summary.retransmitted_packets > 0, "{transport} without LLR");
    }
}

#[test]
fn through_a_switch_every_hop_retries_on_its_own_cable() {
    let toml = format!(
        "seed = 5\n[topology]\nkind = \"star\"\nhosts = 3\nhost_link = {}\n[nic]\nmtu = \"4096B\"\n\
         [[flow]]\nsrc = \"h0\"\ndst = \"h2\"\nsize = \"4MB\"\n\
         [[flow]]\nsrc = \"h1\"\ndst = \"h2\"\nsize = \"4MB\"\n\
         [[variant]]\nname = \"roce\"\n[[variant]]\nname = \"uet\"\nnic.transport = \"uet\"\n",
        lossy(", llr = true")
    );
    for r in &run(&toml) {
        let s = &r.summary;
        assert_eq!(
            (s.retransmitted_packets, s.rtos, s.drops),
            (0, 0, 0),
            "{}",
            s.name
        );
        assert!(r.flows.iter().all(|f| f.fct_ns.is_some()));
        let replays: u64 = ["h0", "h1", "h2"]
            .iter()
            .map(|h| {
                counter(r, h, "to-sw0", "llr_tx_replay")
                    + counter(r, "sw0", &format!("to-{h}"), "llr_tx_replay")
            })
            .sum();
        assert!(replays > 0, "{}", s.name);
    }
}

#[test]
fn each_replay_costs_the_frames_sent_before_the_nack_came_back() {
    // Go-back-N on one cable: the NACK for a corrupted frame comes back one cable round trip
    // (2 x 15 ns), its 8 B (0.64 ns) and whatever the reverse port was sending (a RoCEv2 ACK,
    // 86 B on the wire: 6.9 ns at most) after the frame's last bit. The sender resends every
    // frame it started before then: the bad one and the one it had started meanwhile, 2 x
    // 334.24 ns (4,158 B + 20 B at 100G), since 37.5 ns < 334.24 ns. The link time lost per
    // corrupted frame is ceil((serialization + round trip) / serialization) serializations.
    // A seed where every replay came from a NACK (none waited for the replay timer).
    let with_seed =
        |link: &str, seed: u32| dac(link, "8MB", "roce").replace("seed = 3", &format!("seed = {seed}"));
    let clean = &run(&with_seed(
        "{ rate = \"100Gbps\", cable = \"3m\", llr = true }",
        1,
    ))[0];
    let link = "{ rate = \"100Gbps\", cable = \"3m\", ber = 1e-7, llr = true }";
    let (r, seed) = (1..=8)
        .map(|seed| (run(&with_seed(link, seed)).remove(0), seed))
        .find(|(r, _)| counter(r, "h0", "to-h1", "llr_tx_replay_timer") == 0)
        .expect("a seed without timer replays");
    let nacked = counter(&r, "h0", "to-h1", "llr_rx_nack_ctl_os") as f64;
    assert!(nacked >= 3.0, "seed {seed}: {nacked} replays");
    let extra = r.flows[0].fct_ns.unwrap() - clean.flows[0].fct_ns.unwrap();
    let per = extra / nacked;
    let ser = tx_ns(4_158 + 20, 100.0);
    let back = 30.0 + 0.64 + 6.9;
    let frames = ((ser + back) / ser).ceil();
    assert_eq!(frames, 2.0);
    assert_close(
        per,
        frames * ser,
        0.0,
        0.01,
        &format!("seed {seed}: ns per replay, {nacked} replays"),
    );
    assert_eq!(r.summary.retransmitted_packets, 0);
}

#[test]
fn past_its_replay_count_llr_flushes_and_the_transport_recovers_end_to_end() {
    // A cable losing 30 % of frames: replays fail often; after one replay in a row
    // (replay_count = 1) the buffer is flushed and its frames are lost end to end.
    let link = "{ rate = \"100Gbps\", cable = \"3m\", loss = 0.3, llr = { replay_count = 1 } }";
    for transport in ["roce", "uet"] {
        let r = &run(&dac(link, "400KB", transport))[0];
        let s = &r.summary;
        let flushed = counter(r, "h0", "to-h1", "llr_tx_flushed_frames");
        assert!(counter(r, "h0", "to-h1", "llr_tx_flush") > 0, "{transport}");
        assert!(flushed > 0 && s.drops >= flushed, "{transport}");
        assert!(s.retransmitted_packets > 0, "{transport}: the transport resent");
        assert!(r.flows[0].fct_ns.is_some(), "{transport}: and finished");
        // Each flush re-initialises the link (SONiC's RE_INIT_ON_FLUSH): an LLR_INIT, again
        // until echoed, each echoed at the far end; the first echo puts the sender back.
        let flushes = counter(r, "h0", "to-h1", "llr_tx_flush");
        let inits = counter(r, "h0", "to-h1", "llr_tx_init_ctl_os");
        let got = counter(r, "h1", "to-h0", "llr_rx_init_ctl_os");
        let echoed = counter(r, "h1", "to-h0", "llr_tx_init_echo_ctl_os");
        let back = counter(r, "h0", "to-h1", "llr_rx_init_echo_ctl_os");
        assert!(inits >= flushes && got <= inits && echoed == got, "{transport}");
        assert!(
            back >= flushes && back <= echoed,
            "{transport}: {back} of {echoed}"
        );
    }
}

/// The loss test's cable, with `re_init_on_flush = false` and this flush action.
fn stays_in_flush(action: &str) -> String {
    let link = format!(
        "{{ rate = \"100Gbps\", cable = \"3m\", loss = 0.3, llr = {{ replay_count = 1, \
         re_init_on_flush = false, flush_action = \"{action}\" }} }}"
    );
    dac(&link, "400KB", "uet").replace("max_time = \"2s\"", "max_time = \"20ms\"")
}

#[test]
fn without_re_init_a_flushed_link_stays_in_flush_under_its_flush_action() {
    // SAI: FLUSH until management acts when RE_INIT_ON_FLUSH is false. Best effort: the link
    // goes on without LLR (frames unnumbered, losses recovered end to end); discard: every
    // later frame is dropped at the sender (LLR_TX_DISCARD); block: nothing leaves, and the
    // flow says why it did not finish. Each is a configuration finding.
    let r = &run(&stays_in_flush("best_effort"))[0];
    assert_eq!(counter(r, "h0", "to-h1", "llr_tx_flush"), 1, "once, for good");
    assert_eq!(counter(r, "h0", "to-h1", "llr_tx_init_ctl_os"), 0);
    assert!(counter(r, "h0", "to-h1", "llr_tx_unprotected") > 0);
    assert!(r.flows[0].fct_ns.is_some(), "recovered end to end");
    let r = &run(&stays_in_flush("discard"))[0];
    let discarded = counter(r, "h0", "to-h1", "llr_tx_discard");
    assert!(discarded > 0 && r.summary.drops >= discarded);
    assert!(r.flows[0].fct_ns.is_none());
    let r = &run(&stays_in_flush("block"))[0];
    assert_eq!(counter(r, "h0", "to-h1", "llr_tx_discard"), 0);
    let status = r.flows[0].status.to_string();
    assert!(status.contains("stays in FLUSH"), "{status}");
    let f = tmp("llr-stays-in-flush").join("s.toml");
    std::fs::write(&f, stays_in_flush("block")).unwrap();
    let o = sim(&["check", f.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("llr-stays-in-flush") && out.contains("for good"),
        "{out}"
    );
}

#[test]
fn a_frame_larger_than_the_buffer_goes_unprotected_and_is_lost_end_to_end() {
    // 4,158 B frames, a 1 KB buffer: data is never covered; the 66 B ACKs still are.
    let link = lossy(", llr = { buffer = \"1KB\" }");
    let r = &run(&dac(&link, "2MB", "uet"))[0];
    assert!(counter(r, "h0", "to-h1", "llr_tx_unprotected") > 400);
    assert!(
        r.summary.retransmitted_packets > 0,
        "lost data is resent end to end"
    );
    assert_eq!(counter(r, "h0", "to-h1", "llr_tx_replay"), 0);
}

#[test]
fn a_small_buffer_holds_frames_back_instead_of_losing_them() {
    // 100 m of cable (500 ns each way): 8 KB holds one 4,158 B frame, so the sender waits for
    // each ACK (back-pressure): a frame per serialization (334.2 ns) + round trip (1,000 ns)
    // + the ACK's 8 B (0.64 ns) + what the reverse port was sending (6.9 ns at most), losing
    // nothing. The default buffer (1.2 us of line rate plus the round trip) keeps the line full.
    let cable = |llr: &str| format!("{{ rate = \"100Gbps\", cable = \"100m\", llr = {llr} }}");
    let full = &run(&dac(&cable("true"), "2MB", "roce"))[0];
    let r = &run(&dac(&cable("{ buffer = \"8KB\" }"), "2MB", "roce"))[0];
    let frames = 2_000_000f64 / 4096.0;
    assert!(counter(r, "h0", "to-h1", "llr_tx_held") as f64 > 0.9 * frames);
    assert_eq!((r.summary.retransmitted_packets, r.summary.drops), (0, 0));
    assert_eq!(counter(full, "h0", "to-h1", "llr_tx_held"), 0);
    let per = r.flows[0].fct_ns.unwrap() / frames.ceil();
    let (lo, hi) = (334.2 + 1_000.0 + 0.64, 334.2 + 1_000.0 + 0.64 + 6.9);
    assert!((lo * 0.99..hi * 1.02).contains(&per), "{per:.1} ns per frame");
    let line = full.flows[0].fct_ns.unwrap() / frames.ceil();
    assert!(line < 340.0, "{line:.1} ns per frame with the default buffer");
}

#[test]
fn llr_off_leaves_a_cable_as_it_was() {
    let plain = &run(&dac(&lossy(""), "1MB", "roce"))[0];
    let off = &run(&dac(&lossy(", llr = false"), "1MB", "roce"))[0];
    assert_eq!(plain.flows[0].fct_ns, off.flows[0].fct_ns);
    assert_eq!(
        plain.summary.retransmitted_packets,
        off.summary.retransmitted_packets
    );
}

#[test]
fn bad_llr_settings_exit_2_naming_the_key_and_one_sided_llr_is_a_finding() {
    let dir = tmp("llr-bad");
    std::fs::create_dir_all(&dir).unwrap();
    for (setting, key) in [
        ("{ frames = 0 }", "topology.link.llr.frames"),
        ("{ replay_timer = \"1ms\" }", "topology.link.llr.replay_timer"),
        ("{ replay_count = 300 }", "topology.link.llr.replay_count"),
        ("{ bufer = \"1KB\" }", "bufer"),
        ("{ flush_action = \"drop\" }", "flush_action"),
        ("3", "topology.link.llr"),
    ] {
        let f = dir.join("bad.toml");
        let link = format!("{{ rate = \"100Gbps\", cable = \"3m\", llr = {setting} }}");
        std::fs::write(&f, dac(&link, "1MB", "roce")).unwrap();
        let o = sim_run(&f, &dir.join("out"), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{setting}: {err}");
        assert!(err.contains(key), "{setting}: {err}");
    }
    let f = dir.join("one-sided.toml");
    let link = "{ rate = \"100Gbps\", cable = \"3m\", llr = [true, false] }";
    std::fs::write(&f, dac(link, "1MB", "roce")).unwrap();
    let o = sim(&["check", f.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("llr-mismatch") && out.contains("topology.link.llr"),
        "{out}"
    );
}

#[test]
fn under_pfc_replays_and_ordered_sets_go_while_new_frames_wait_and_nothing_is_lost() {
    // An incast that PFC pauses, on cables that corrupt 1 % of 4 KiB frames: the lossless
    // class stays lossless (no drop at all), and LLR repairs every corrupted frame with no
    // end-to-end resend. PFC frames and LLR's ordered sets go first on every port; a replay
    // is not held by a pause [TP]; new frames of the paused class wait (sim/llr.rs).
    let toml = format!(
        "seed = 2\n[topology]\nkind = \"star\"\nhosts = 8\nhost_link = {}\n\
         [switch]\nasic = \"trident3\"\nbuffer = \"1MB\"\n[pfc]\npriorities = [3]\n\
         [[workload]]\nkind = \"incast\"\nreceiver = \"h0\"\nsize = \"1MB\"\n",
        lossy(", llr = true")
    );
    let r = &run(&toml)[0];
    let s = &r.summary;
    assert!(s.pfc_pause_frames > 0, "PFC paused the senders");
    assert_eq!((s.drops, s.retransmitted_packets, s.rtos), (0, 0, 0));
    let replays: u64 = (1..8)
        .map(|h| counter(r, &format!("h{h}"), "to-sw0", "llr_tx_replay"))
        .sum();
    assert!(replays > 0, "LLR replayed on the paused senders' cables");
    assert!(r.flows.iter().all(|f| f.fct_ns.is_some()));
}

#[test]
fn a_cut_cable_flushes_its_buffers_once_and_loses_only_what_the_cut_took() {
    // link-failure.toml's spine uplink cut at 150 us, with LLR and bit errors on every cable:
    // the cut flushes both directions' buffers (their frames lost as link_down, as what was
    // on the cable), and every corrupted frame elsewhere is repaired.
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/link-failure.toml");
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace("cable = \"3m\" }", "cable = \"3m\", ber = 3e-7, llr = true }")
        .replace("cable = \"30m\" }", "cable = \"30m\", ber = 3e-7, llr = true }");
    assert!(text.matches("llr = true").count() == 2);
    for r in &run(&text) {
        let s = &r.summary;
        assert_eq!(s.drops_by_reason["link_error"], 0, "{}", s.name);
        assert!(s.drops_by_reason["link_down"] > 0, "{}", s.name);
        for (node, port) in [("leaf0", "to-spine1"), ("spine1", "to-leaf0")] {
            assert_eq!(counter(r, node, port, "llr_tx_flush"), 1, "{} {node}", s.name);
        }
        assert!(r.flows.iter().all(|f| f.fct_ns.is_some()), "{}", s.name);
    }
}

/// A 3 m DAC at 100G with LLR keeping its buffers `pcs_lost` across a cut from 20 us to
/// `until`, under one 2 MB flow (and CBFC on its class when `cbfc`).
fn cut(pcs_lost: &str, until: &str, cbfc: bool) -> String {
    let link =
        format!("{{ rate = \"100Gbps\", cable = \"3m\", llr = {{ pcs_lost_timeout = \"{pcs_lost}\" }} }}");
    let mut toml = dac(&link, "2MB", "uet");
    toml +=
        &format!("[[fault]]\nlink = [\"h0\", \"h1\"]\nkind = \"down\"\nat = \"20us\"\nuntil = \"{until}\"\n");
    if cbfc {
        toml = toml.replace("[run]", "[pfc]\npriorities = [3]\nmode = \"cbfc\"\n[run]");
    }
    toml
}

#[test]
fn a_cable_back_within_pcs_lost_timeout_is_replayed_and_the_transport_sees_no_loss() {
    // SONiC's LLR profile sample for 400G on 3 m keeps the buffer 50 us (pcs_lost_timeout);
    // SAI flushes when the PCS stays down longer. Down for 10 us: both directions' buffers
    // are kept and replayed when the cable is back, so nothing is lost end to end (no data
    // drop, no retransmission) and no buffer is flushed; with CBFC the replayed frames take their
    // credits once. Down for 100 us: the sender flushes at 70 us, what it held is lost, and
    // the transport recovers it end to end.
    for cbfc in [false, true] {
        let r = &run(&cut("50us", "30us", cbfc))[0];
        let s = &r.summary;
        assert_eq!(s.flows_completed, 1);
        // Nothing lost but credit updates the cut took (unnumbered; a later one repairs them).
        let updates_lost = s
            .cbfc
            .as_ref()
            .map_or(0, |c| c.update_frames_tx - c.update_frames_rx);
        assert_eq!(
            (s.drops, s.retransmitted_packets),
            (updates_lost, 0),
            "cbfc {cbfc}: {:?}",
            s.drops_by_reason
        );
        assert_eq!(counter(r, "h0", "to-h1", "llr_tx_flush"), 0);
        assert!(
            counter(r, "h0", "to-h1", "llr_tx_replay") >= 1,
            "the kept buffer is replayed"
        );
        // ... as the cable comes back, before any new frame could show the receiver a gap.
        assert_eq!(counter(r, "h0", "to-h1", "llr_rx_nack_ctl_os"), 0);
        if let Some(c) = &s.cbfc {
            assert_eq!(c.credits_granted, c.credits_consumed, "{c:?}");
        }
        let r = &run(&cut("50us", "120us", cbfc))[0];
        let s = &r.summary;
        assert_eq!(s.flows_completed, 1);
        assert_eq!(counter(r, "h0", "to-h1", "llr_tx_flush"), 1, "cbfc {cbfc}");
        assert!(s.drops_by_reason["link_down"] > 0 && s.retransmitted_packets > 0);
        if let Some(c) = &s.cbfc {
            assert_eq!(c.credits_granted, c.credits_consumed, "{c:?}");
        }
    }
    // Without pcs_lost_timeout (SAI's default 0) the cut flushes at once, as before.
    let r = &run(&cut("0ns", "30us", false))[0];
    assert_eq!(counter(r, "h0", "to-h1", "llr_tx_flush"), 1);
    assert!(r.summary.retransmitted_packets > 0);
}
