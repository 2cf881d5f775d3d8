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
        (Rx::Accept, Some(Ctl { nack: false, seq: 1 })),
        "2,200 B since the last ACK: past the 2,048 B spacing"
    );
    assert_eq!(
        l.receive(2, true, 1_000, false),
        (Rx::Discard, Some(Ctl { nack: true, seq: 1 }))
    );
    assert_eq!(
        l.receive(3, false, 1_000, false),
        (Rx::Discard, None),
        "silence after a NACK"
    );
    assert_eq!(l.receive(4, false, 1_000, true), (Rx::Discard, None));
    // Sender: the ACK frees 0..=1; the NACK replays 2, 3, 4 in order.
    assert!(l.on_ctl(Ctl { nack: false, seq: 1 }, Time::ZERO).wake);
    let a = l.on_ctl(Ctl { nack: true, seq: 1 }, Time::ZERO);
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
    l.on_ctl(Ctl { nack: false, seq: 0 }, Time::ZERO);
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
    // The receiver had accepted frame 0: the flush loses 1 and 2.
    assert_eq!(l.receive(0, false, 1_000, false).0, Rx::Accept);
    let lost: Vec<u32> = l.flush().map(|p| p.seq).collect();
    assert_eq!(lost, vec![1, 2]);
    assert_eq!(
        (
            l.counters.tx_flush,
            l.counters.tx_flushed,
            l.counters.tx_replay_timer
        ),
        (1, 2, 3)
    );
    // Both ends start over at 3: an old copy still on the wire is a duplicate.
    assert_eq!(l.receive(1, false, 1_000, true).0, Rx::Discard);
    send(&mut l, 1);
    assert_eq!(l.receive(3, false, 1_000, true).0, Rx::Accept);
}

#[test]
fn a_duplicate_gets_an_ack_so_a_timer_replay_of_acked_frames_ends() {
    let mut l = Llr::new(cfg(100_000, 100));
    send(&mut l, 1);
    assert_eq!(
        l.receive(0, false, 1_000, true),
        (Rx::Accept, Some(Ctl { nack: false, seq: 0 }))
    );
    // That ACK was lost; the timer replays frame 0.
    assert_eq!(
        l.receive(0, false, 1_000, true),
        (Rx::Discard, Some(Ctl { nack: false, seq: 0 }))
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
    assert_eq!(l.flush().count(), 3, "nothing was accepted: all three are lost");
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
