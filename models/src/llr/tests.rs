use super::*;
use crate::ids::{FlowId, HostId};
use crate::packet::{Kind, Packet};
use serde::Deserialize;
use sim_core::{BitRate, Bytes, Duration};

fn cfg(buffer: u64, frames: u32) -> LlrConfig {
    LlrConfig {
        buffer,
        frames,
        replay_timer: Duration::from_ns(5_000),
        replay_count: 3,
        pcs_lost_timeout: Duration::ZERO,
        data_age_timeout: Duration::ZERO,
        ctlos_spacing: ACK_SPACING,
        init_action: FrameAction::BestEffort,
        flush_action: FrameAction::BestEffort,
        re_init_on_flush: true,
    }
}

fn frame(seq: u32, bytes: u16) -> Packet {
    let mut p = Packet::control(Kind::Data, FlowId(0), HostId(1), seq, bytes as u32, 3);
    p.frame = bytes;
    p
}

/// Send `n` new frames of 1,000 B at time 0, each leaving the port.
fn send(l: &mut Llr, n: u32) {
    for i in 0..n {
        assert!(l.fits(1_000));
        l.send_new(frame(i, 1_000), Time::ZERO);
        l.sent();
    }
}

#[test]
fn the_defaults_follow_sonics_sample_profiles() {
    let on = LlrCable {
        ends: [true, true],
        settings: LlrSettings::default(),
    };
    // 200G on a 5 m cable (25 ns): 1.25 us of the line rate, [HLD]'s 31,184 B and 61 frames.
    let c = on
        .resolve("k", BitRate::gbps(200), Duration::from_ns(25))
        .unwrap()
        .unwrap();
    assert_eq!((c.buffer, c.frames), (31_250, 62));
    assert_eq!((c.replay_timer, c.replay_count), (REPLAY_TIMER, 3));
    let off = LlrCable {
        ends: [true, false],
        ..on
    };
    assert!(off.mismatched());
    assert_eq!(
        off.resolve("k", BitRate::gbps(200), Duration::ZERO).unwrap(),
        None
    );
}

#[test]
fn bad_settings_name_their_key() {
    let bad = |s: LlrSettings| {
        LlrCable {
            ends: [true, true],
            settings: s,
        }
        .resolve("topology.link", BitRate::gbps(100), Duration::ZERO)
        .unwrap_err()
        .path
    };
    let zero = LlrSettings {
        frames: Some(0),
        ..LlrSettings::default()
    };
    assert_eq!(bad(zero), "topology.link.llr.frames");
    let slow = LlrSettings {
        replay_timer: Some(Duration::from_us(100)),
        ..LlrSettings::default()
    };
    assert_eq!(bad(slow), "topology.link.llr.replay_timer");
    let never = LlrSettings {
        replay_count: Some(0),
        ..LlrSettings::default()
    };
    assert_eq!(bad(never), "topology.link.llr.replay_count");
    let tiny = LlrSettings {
        buffer: Some(Bytes(10)),
        ..LlrSettings::default()
    };
    assert_eq!(bad(tiny), "topology.link.llr.buffer");
    let chatty = LlrSettings {
        ctlos_spacing: Some(Bytes(100)),
        ..LlrSettings::default()
    };
    assert_eq!(bad(chatty), "topology.link.llr.ctlos_spacing");
    let forever = LlrSettings {
        pcs_lost_timeout: Some(Duration::from_us(5_000_000)),
        ..LlrSettings::default()
    };
    assert_eq!(bad(forever), "topology.link.llr.pcs_lost_timeout");
}

#[test]
fn a_bad_frame_is_nacked_once_and_everything_after_it_replayed() {
    let mut l = Llr::new(cfg(100_000, 100));
    send(&mut l, 5);
    // Receiver: 0 and 1 good, 2 corrupted, 3 and 4 discarded as out of sequence.
    assert_eq!(l.receive(0, false, 1_100, false), (Rx::Accept, None));
    assert_eq!(
        l.receive(1, false, 1_100, false),
        (
            Rx::Accept,
            Some(Ctl {
                kind: CtlKind::Ack,
                seq: 1
            })
        ),
        "2,200 B since the last ACK: past the 2,048 B spacing"
    );
    assert_eq!(
        l.receive(2, true, 1_000, false),
        (
            Rx::Discard,
            Some(Ctl {
                kind: CtlKind::Nack,
                seq: 1
            })
        )
    );
    assert_eq!(
        l.receive(3, false, 1_000, false),
        (Rx::Discard, None),
        "silence after a NACK"
    );
    assert_eq!(l.receive(4, false, 1_000, true), (Rx::Discard, None));
    // Sender: the ACK frees 0..=1; the NACK replays 2, 3, 4 in order.
    assert!(
        l.on_ctl(
            Ctl {
                kind: CtlKind::Ack,
                seq: 1
            },
            Time::ZERO
        )
        .wake
    );
    let a = l.on_ctl(
        Ctl {
            kind: CtlKind::Nack,
            seq: 1,
        },
        Time::ZERO,
    );
    assert!(a.wake && !a.flush);
    let replayed: Vec<u32> = std::iter::from_fn(|| {
        let p = l.next_replay()?;
        Some(p.seq + 100 * l.sent())
    })
    .collect();
    assert_eq!(replayed, vec![202, 303, 404], "frame seq + 100 x link number");
    for s in 2..5 {
        assert_eq!(l.receive(s, false, 1_000, s == 4).0, Rx::Accept);
    }
    let c = l.counters;
    assert_eq!(
        (c.rx_bad, c.rx_missing_seq, c.rx_replay, c.tx_replay),
        (1, 2, 1, 1)
    );
    assert_eq!((c.tx_nack_ctl_os, c.rx_nack_ctl_os, c.tx_ok), (1, 1, 8));
}

#[test]
fn a_full_buffer_holds_new_frames_until_an_ack_frees_room() {
    let mut l = Llr::new(cfg(2_500, 100));
    send(&mut l, 2);
    assert!(!l.fits(1_000), "2,000 B + 1,000 B > 2,500 B");
    assert!(l.oversized(3_000) && !l.oversized(2_500));
    l.on_ctl(
        Ctl {
            kind: CtlKind::Ack,
            seq: 0,
        },
        Time::ZERO,
    );
    assert!(l.fits(1_000));
    assert_eq!(l.outstanding(), (1, 1_000));
    let mut two = Llr::new(cfg(100_000, 2));
    send(&mut two, 2);
    assert!(!two.fits(64), "the frame limit binds too");
}

#[test]
fn the_timer_replays_the_buffer_and_gives_up_past_the_replay_count() {
    let mut l = Llr::new(cfg(100_000, 100));
    send(&mut l, 3);
    assert_eq!(l.arm(), Some(Time(5_000_000)));
    assert_eq!(l.arm(), None, "one event at a time");
    // Early event (the deadline moved): look again later.
    let (a, next) = l.on_timer(Time(1));
    assert_eq!((a, next), (TxAction::default(), Some(Time(5_000_000))));
    let mut now = Time(5_000_000);
    for n in 1..=3 {
        let (a, next) = l.on_timer(now);
        assert!(a.wake && !a.flush, "replay {n}");
        now = next.unwrap();
    }
    let (a, _) = l.on_timer(now);
    assert!(a.flush, "a fourth replay in a row is past replay_count = 3");
    // The receiver had accepted frame 0, and 1 and 2 never arrived: the flush loses them.
    assert_eq!(l.receive(0, false, 1_000, false).0, Rx::Accept);
    l.wire.clear();
    let (lost, a) = l.flush(now);
    let lost: Vec<u32> = lost.iter().map(|p| p.seq).collect();
    assert_eq!(lost, vec![1, 2]);
    assert_eq!(
        (
            l.counters.tx_flush,
            l.counters.tx_flushed,
            l.counters.tx_replay_timer
        ),
        (1, 2, 3)
    );
    // Re-initialised (SONiC's default): an LLR_INIT numbered 3 goes out, new frames go
    // unnumbered (best effort) until the receiver echoes it, then numbering goes on at 3.
    assert!(a.init && l.state() == TxState::Init && l.init_seq() == 3);
    assert_eq!(l.admit(1_000), Admit::Unprotected);
    let echo = l.on_init(3);
    assert_eq!(echo.kind, CtlKind::InitEcho);
    assert!(l.on_ctl(echo, now).wake && l.state() == TxState::Advance);
    send(&mut l, 1);
    assert_eq!(l.receive(3, false, 1_000, true).0, Rx::Accept);
    let c = l.counters;
    assert_eq!(
        (
            c.tx_init_ctl_os,
            c.rx_init_ctl_os,
            c.tx_init_echo_ctl_os,
            c.rx_init_echo_ctl_os
        ),
        (1, 1, 1, 1)
    );
}

#[test]
fn a_flushed_frame_still_on_the_cable_is_delivered_or_lost_by_the_receiver() {
    // Frames 0..3 on the cable when the sender flushes (no ACK yet): the receiver accepts 0,
    // 1 arrives corrupted and 2 after it. 1 is lost there (its sender gave it up and no copy
    // follows), and so is 2 (discarded behind the NACK); none was lost at the flush.
    let mut l = Llr::new(cfg(100_000, 100));
    send(&mut l, 3);
    let (lost, _) = l.flush(Time::ZERO);
    assert!(lost.is_empty(), "every one still has a copy on the cable");
    let mut arrive = |seq: u32, bad: bool| {
        l.wire.pop_front();
        l.receive(seq, bad, 1_000, false).0
    };
    assert_eq!(arrive(0, false), Rx::Accept);
    assert_eq!(arrive(1, true), Rx::Lost);
    assert_eq!(arrive(2, false), Rx::Lost);
    // After the INIT, numbers below 3 are old copies: duplicates, not losses.
    l.on_init(3);
    assert!(!l.in_doubt(2));
}

#[test]
fn a_duplicate_gets_an_ack_so_a_timer_replay_of_acked_frames_ends() {
    let mut l = Llr::new(cfg(100_000, 100));
    send(&mut l, 1);
    assert_eq!(
        l.receive(0, false, 1_000, true),
        (
            Rx::Accept,
            Some(Ctl {
                kind: CtlKind::Ack,
                seq: 0
            })
        )
    );
    // That ACK was lost; the timer replays frame 0.
    assert_eq!(
        l.receive(0, false, 1_000, true),
        (
            Rx::Discard,
            Some(Ctl {
                kind: CtlKind::Ack,
                seq: 0
            })
        )
    );
}

#[test]
fn the_cable_setting_reads_as_a_bool_a_pair_or_a_table() {
    #[derive(Deserialize)]
    struct C {
        llr: LlrCable,
    }
    let read = |s: &str| toml::from_str::<C>(s).map(|c| c.llr);
    assert_eq!(read("llr = true").unwrap().ends, [true, true]);
    assert_eq!(read("llr = [true, false]").unwrap().ends, [true, false]);
    let t = read("llr = { buffer = \"64KB\", replay_count = 5 }").unwrap();
    assert_eq!(
        (t.ends, t.settings.buffer, t.settings.replay_count),
        ([true, true], Some(Bytes(64_000)), Some(5))
    );
    let e = read("llr = { bufer = \"64KB\" }").unwrap_err().to_string();
    assert!(e.contains("bufer"), "{e}");
}

#[test]
fn a_frame_past_its_data_age_or_a_cable_down_past_pcs_lost_flushes_the_buffer() {
    // [SAI]: FLUSH when data stays in the replay buffer longer than DATA_AGE_TIMEOUT, or the
    // PCS status stays false longer than PCS_LOST_TIMEOUT. Replay timer 5 us, 10 replays
    // allowed (so the count never flushes here), data age 12 us: expiries at 5 and 10 us
    // replay; the one at 15 us finds the frames 15 us old and flushes.
    let us = |n: u64| Time::ZERO + Duration::from_us(n);
    let aged = LlrConfig {
        replay_count: 10,
        data_age_timeout: Duration::from_us(12),
        ..cfg(100_000, 100)
    };
    let mut l = Llr::new(aged);
    send(&mut l, 3);
    for t in [5, 10] {
        let (a, _) = l.on_timer(us(t));
        assert!(a.wake && !a.flush, "a replay at {t} us");
    }
    let (a, next) = l.on_timer(us(15));
    assert!(a.flush && next.is_none());
    l.wire.clear(); // none of them arrived
    assert_eq!(
        l.flush(us(15)).0.len(),
        3,
        "nothing was accepted: all three are lost"
    );
    // Down at 1 us with a 50 us PCS-lost timeout: the timer waits for the cable, not the
    // replay timer (nothing at 6 us), and flushes at 51 us unless the cable is back...
    let lost = LlrConfig {
        pcs_lost_timeout: Duration::from_us(50),
        ..cfg(100_000, 100)
    };
    let mut l = Llr::new(lost);
    send(&mut l, 3);
    assert_eq!(l.cable_down(us(1)), Some(us(51)));
    let (a, next) = l.on_timer(us(6));
    assert!(!a.wake && !a.flush && next == Some(us(51)));
    let (a, _) = l.on_timer(us(51));
    assert!(a.flush);
    // ... and when it is back at 11 us, the buffer is replayed from its oldest frame.
    let mut l = Llr::new(lost);
    send(&mut l, 3);
    l.cable_down(us(1));
    let a = l.cable_up(us(11));
    assert!(a.wake && !a.flush);
    assert_eq!(l.next_replay().map(|p| p.seq), Some(0));
    assert_eq!(l.counters.tx_replay, 1);
}

#[test]
fn the_receiver_acks_once_per_ctlos_spacing_bytes_accepted() {
    // SAI's CTLOS_TARGET_SPACING: 4,158 B frames against the default 2,048 B are each ACKed;
    // against 16,384 B every fourth is (4 x 4,158 = 16,632 B), and the burst's end is too.
    for (spacing, acks) in [(ACK_SPACING, 12), (16_384, 3)] {
        let mut l = Llr::new(LlrConfig {
            ctlos_spacing: spacing,
            ..cfg(1_000_000, 100)
        });
        let sent: Vec<Option<Ctl>> = (0..12).map(|i| l.receive(i, false, 4_158, i == 11).1).collect();
        assert_eq!(sent.iter().flatten().count(), acks, "{spacing} B");
        assert_eq!(sent[11].map(|c| c.seq), Some(11));
    }
}

#[test]
fn in_init_new_frames_follow_init_action() {
    use FrameAction::*;
    for (action, admit) in [
        (BestEffort, Admit::Unprotected),
        (Block, Admit::Hold),
        (Discard, Admit::Discard),
    ] {
        let mut l = Llr::new(LlrConfig {
            init_action: action,
            ..cfg(100_000, 100)
        });
        send(&mut l, 1);
        l.wire.clear();
        assert!(l.flush(Time::ZERO).1.init);
        assert_eq!(l.blocked(), action == Block, "{action:?}");
        assert_eq!(l.admit(64), admit, "{action:?}");
        assert_eq!(l.counters.tx_discard, (action == Discard) as u64);
    }
}

/// The tester-driven cases of the public "LLR & CBFC Test Plan" (citing UE 1.0.1 section 5.1
/// and the SAI LLR proposal), run against this model: a port offers `n` new 64 B frames at
/// once to a receiver whose ACKs and NACKs come back only with `acks` (the plan's "pause ACK
/// Tx" on the tester); LLR_INIT and its echo always do. The replay timer runs until nothing
/// is left to do.
fn offer(l: &mut Llr, n: u32, acks: bool) {
    let mut now = Time::ZERO;
    let mut left = n;
    let mut staged: Option<Packet> = None;
    loop {
        // Everything LLR lets go now, each frame reaching the receiver whole.
        loop {
            let seq = if l.next_replay().is_some() {
                l.sent()
            } else if l.blocked() {
                break;
            } else {
                let next = staged.take().or_else(|| {
                    (left > 0).then(|| {
                        left -= 1;
                        frame(0, 64)
                    })
                });
                let Some(p) = next else {
                    break;
                };
                match l.admit(64) {
                    Admit::Number => {
                        l.send_new(p, now);
                        l.sent()
                    }
                    Admit::Unprotected => l.sent(),
                    Admit::Hold => {
                        staged = Some(p);
                        break;
                    }
                    Admit::Discard => continue,
                }
            };
            l.wire.pop_front();
            if seq != NONE {
                let (_, ctl) = l.receive(seq, false, 64, true);
                if let (true, Some(c)) = (acks, ctl) {
                    l.on_ctl(c, now);
                }
            }
        }
        let Some(at) = l.arm().or(l.timer_event) else {
            return;
        };
        now = at;
        let (a, _) = l.on_timer(now);
        let init = if a.flush { l.flush(now).1.init } else { a.init };
        if init {
            let echo = l.on_init(l.init_seq());
            l.on_ctl(echo, now);
        }
    }
}

#[test]
fn llr_05_the_timer_replays_every_frame_replay_count_times_then_flushes() {
    // LLR-05: REPLAY_COUNT_MAX = 3, RE_INIT_ON_FLUSH = false, ACK Tx paused, 1,000 frames of
    // 64 B: LLR_TX_OK = LLR_RX_OK = 4,000, LLR_TX_REPLAY = 3, TX status FLUSH.
    let mut l = Llr::new(LlrConfig {
        re_init_on_flush: false,
        ..cfg(1_000_000, 1_000)
    });
    offer(&mut l, 1_000, false);
    let c = l.counters;
    assert_eq!((c.tx_ok, c.rx_ok, c.tx_replay), (4_000, 4_000, 3));
    assert_eq!(l.state(), TxState::Flush);
}

#[test]
fn llr_07_outstanding_frames_max_bounds_each_replay() {
    // LLR-07: OUTSTANDING_FRAMES_MAX = 10 (bytes above 10 frames), REPLAY_COUNT_MAX = 3, FLUSH
    // action BLOCK or DISCARD, RE_INIT_ON_FLUSH = false, ACK Tx paused, 1,000 frames: the
    // DUT's LLR_TX_REPLAY = 3, the tester's LLR_RX_OK = 40 and LLR_RX_DUPLICATE_SEQ = 30.
    for action in [FrameAction::Block, FrameAction::Discard] {
        let mut l = Llr::new(LlrConfig {
            flush_action: action,
            re_init_on_flush: false,
            ..cfg(100_000, 10)
        });
        offer(&mut l, 1_000, false);
        let c = l.counters;
        assert_eq!(
            (c.tx_replay, c.rx_ok, c.rx_duplicate_seq),
            (3, 40, 30),
            "{action:?}"
        );
        // SAI's LLR_TX_DISCARD: the 990 frames FLUSH met under DISCARD (BLOCK holds them).
        let discarded = if action == FrameAction::Discard { 990 } else { 0 };
        assert_eq!(c.tx_discard, discarded);
    }
}

#[test]
fn llr_09_re_init_on_flush_leaves_flush_by_itself() {
    // LLR-09: FLUSH action DISCARD, RE_INIT_ON_FLUSH = true, REPLAY_COUNT_MAX = 3, ACK Tx
    // paused, 100 frames: the tester's LLR_RX_OK = 400, LLR_RX_EXPECTED_SEQ_GOOD = 100,
    // LLR_RX_DUPLICATE_SEQ = 300, LLR_RX_INIT_CTL_OS > 0, LLR_TX_INIT_ECHO_CTL_OS > 0. ACKs
    // back, 100 more frames: 100 more received good at the expected number.
    let mut l = Llr::new(LlrConfig {
        flush_action: FrameAction::Discard,
        ..cfg(100_000, 1_000)
    });
    offer(&mut l, 100, false);
    let c = l.counters;
    assert_eq!(
        (c.rx_ok, c.rx_expected_seq_good, c.rx_duplicate_seq),
        (400, 100, 300)
    );
    assert!(c.rx_init_ctl_os > 0 && c.tx_init_echo_ctl_os > 0);
    assert_eq!(l.state(), TxState::Advance);
    offer(&mut l, 100, true);
    let d = l.counters;
    let good = d.rx_expected_seq_good - c.rx_expected_seq_good;
    assert_eq!((d.rx_ok - c.rx_ok, good, d.tx_discard), (100, 100, 0));
}
