//! UE link level retry (LLR) on one direction of a cable: the sender's replay buffer and
//! replay timer, the receiver's sequence check, and the LLR_ACK / LLR_NACK between them.
//!
//! The UE 1.0 specification's own text (its link layer chapter, section 5.1) is not readable
//! from here; this model follows the public descriptions of it, each cited where it is used:
//! - \[SAI\] the SAI proposal "Link Layer Retry (LLR)" by the UEC management working group
//!   (opencomputeproject/SAI, `doc/LLR/SAI-Link_Layer_Retry.md`, SAI 1.18): sequence numbers in
//!   the preamble, cumulative LLR_ACKs and LLR_NACKs in control ordered sets (CtlOS), go-back-N
//!   replay, the replay timer, `REPLAY_COUNT_MAX`, the FLUSH state, the port profile
//!   (`OUTSTANDING_FRAMES_MAX`, `OUTSTANDING_BYTES_MAX`, `CTLOS_TARGET_SPACING` 2048 B) and the
//!   `SAI_PORT_STAT_LLR_*` counters this model names its own after.
//! - \[HLD\] SONiC's "Link Layer Retry" design (sonic-net/SONiC `doc/llr/Link_Layer_Retry_Design.md`)
//!   and its `llr_profile_lookup.ini.sample`: profile values per speed and cable (200G, 5 m:
//!   61 frames, 31,184 B, replay timer 5,000 ns, 3 replays).
//! - \[TP\] SONiC's LLR test plan (`LLR_Testplan.md`): NACKs and replays go on while PFC pauses
//!   new frames; ACK and NACK counters; replays bounded by the replay count.
//! - \[LCTP\] A public "LLR & CBFC Test Plan" (a tester against a device, citing UE 1.0.1
//!   sections 5.1 and 5.2): counter values per case, which the unit tests reproduce.
//! - \[OS\] A UE link-format data model (packet taxonomy "UE+ Link Layer Formats", citing UE 1.0.1
//!   section 5.1.4, tables 5-7 and 5-8): LLR_ACK and LLR_NACK are 8 B 64b/66b control blocks
//!   carrying a 20-bit sequence number.
//! - The UE overview paper (Hoefler et al., "Ultra Ethernet's Design Principles and
//!   Architectural Innovations", arXiv 2508.08906): LLR as the link layer's answer to
//!   uncorrectable frames, below UET's end-to-end recovery.
//!
//! What the model does, per frame: a frame the sender puts on an LLR cable gets the next link
//! sequence number and a copy in the replay buffer (bounded in frames and bytes \[SAI\]; a full
//! buffer holds new frames back until an ACK frees room: inferred, `docs/link-layer.md`). The
//! receiver accepts the expected number with a good FCS and acknowledges cumulatively; a bad
//! FCS or a gap sends one LLR_NACK carrying the last good number, after which the receiver
//! discards everything until the expected number comes back \[SAI\]. The sender replays every
//! frame after the NACKed number (go-back-N [SAI, HLD]); the replay timer replays the whole
//! buffer when no ACK or NACK made progress \[SAI\]. More than `replay_count` replays in a row
//! flush the buffer: those frames are lost end to end (a copy still on the cable is the
//! receiver's to accept or lose) \[SAI\]. The sender then re-initialises: an LLR_INIT with its
//! next number, which the receiver takes and echoes (LLR_INIT_ECHO) \[SAI, TP\]; or, without
//! `re_init_on_flush`, it stays in FLUSH. In INIT and FLUSH new frames follow the profile's
//! frame action: sent unnumbered, held, or discarded \[SAI\]. The unit tests replay the cases
//! of a public LLR & CBFC test plan (LLR-05, -07, -09; `docs/link-layer.md`, \[LCTP\]).
//!
//! The hub (`sim/llr.rs`) puts the frames and ordered sets on the wire; this file decides.

mod config;
mod types;

pub use config::*;
use sim_core::{Duration, Time};
use std::collections::VecDeque;
pub use types::*;

/// No sequence number: a frame LLR does not cover (PFC, ordered sets, oversized frames).
pub const NONE: u32 = u32::MAX;

/// LLR on one cable direction: the sending port's replay buffer and timer, the receiving
/// port's sequence state, and their counters. Boxed, one per LLR port ([`crate::link::Link`]
/// stays small).
#[derive(Debug)]
pub struct Llr {
    pub cfg: LlrConfig,
    /// Frames sent and not yet acknowledged, oldest first; `buf[0]` has number `base`.
    buf: VecDeque<crate::packet::Packet>,
    base: u32,
    buf_bytes: u64,
    /// Next buffered frame to replay (`buf.len()`: none).
    cursor: usize,
    /// Replays since the last progress.
    replays: u32,
    /// When the replay timer expires (None: stopped), and when its one event is due.
    deadline: Option<Time>,
    pub timer_event: Option<Time>,
    /// The cable went down at this time and the buffer is kept for `pcs_lost_timeout`.
    down: Option<Time>,
    /// When each buffered frame was first sent (kept only with a `data_age_timeout`).
    sent_at: VecDeque<Time>,
    /// A frame taken from the queue that did not fit the buffer: it goes first once it does.
    pub staged: Option<crate::packet::Packet>,
    /// The number of the frame in service ([`NONE`] if LLR does not cover it).
    pub in_service: u32,
    /// The number of each frame on the cable, in order ([`NONE`] for uncovered ones).
    pub wire: VecDeque<u32>,
    /// Receiver: the next number expected; after a NACK, discarding until it comes.
    expected: u32,
    nack_sent: bool,
    /// Receiver: bytes accepted since the last ACK, and a duplicate that wants one.
    unacked: u32,
    owe_ack: bool,
    /// The sender's state.
    state: TxState,
    /// Numbers below this that the receiver has not accepted were flushed by the sender
    /// (until the receiver's LLR_INIT): a copy still on the cable is lost if discarded.
    lost_below: u32,
    pub counters: LlrCounters,
}

impl Llr {
    pub fn new(cfg: LlrConfig) -> Llr {
        Llr {
            cfg,
            buf: VecDeque::with_capacity(cfg.frames.min(4096) as usize),
            base: 0,
            buf_bytes: 0,
            cursor: 0,
            replays: 0,
            deadline: None,
            timer_event: None,
            down: None,
            sent_at: VecDeque::new(),
            staged: None,
            in_service: NONE,
            wire: VecDeque::with_capacity(64),
            expected: 0,
            nack_sent: false,
            unacked: 0,
            owe_ack: false,
            state: TxState::Advance,
            lost_below: 0,
            counters: LlrCounters::default(),
        }
    }

    /// The next number the sender gives.
    fn next_seq(&self) -> u32 {
        self.base + self.buf.len() as u32
    }

    /// A frame of `bytes` never fits, even in an empty buffer: it goes unprotected.
    pub fn oversized(&self, bytes: u16) -> bool {
        bytes as u64 > self.cfg.buffer
    }

    /// Does a new frame of `bytes` fit now?
    pub fn fits(&self, bytes: u16) -> bool {
        self.buf.len() < self.cfg.frames as usize && self.buf_bytes + bytes as u64 <= self.cfg.buffer
    }

    /// The sender's state.
    pub fn state(&self) -> TxState {
        self.state
    }

    /// The frame action INIT or FLUSH applies now (None in ADVANCE).
    fn action(&self) -> Option<FrameAction> {
        match self.state {
            TxState::Advance => None,
            TxState::Init => Some(self.cfg.init_action),
            TxState::Flush => Some(self.cfg.flush_action),
        }
    }

    /// New frames wait where they are: INIT or FLUSH under `block` \[SAI\].
    pub fn blocked(&self) -> bool {
        self.action() == Some(FrameAction::Block)
    }

    /// What to do with a new frame of `bytes`: in ADVANCE, number it if the buffer has room
    /// (hold it if not; an oversized one goes unprotected); in INIT or FLUSH, what the
    /// profile's frame action says \[SAI: `INIT_LLR_FRAME_ACTION`, `FLUSH_LLR_FRAME_ACTION`\].
    pub fn admit(&mut self, bytes: u16) -> Admit {
        let admit = match self.action() {
            None if self.oversized(bytes) => Admit::Unprotected,
            None if self.fits(bytes) => Admit::Number,
            None | Some(FrameAction::Block) => Admit::Hold,
            Some(FrameAction::BestEffort) => Admit::Unprotected,
            Some(FrameAction::Discard) => Admit::Discard,
        };
        match admit {
            Admit::Unprotected => self.counters.tx_unprotected += 1,
            Admit::Discard => self.counters.tx_discard += 1,
            Admit::Number | Admit::Hold => {}
        }
        admit
    }

    /// The next frame to replay, if a replay is under way (a copy; it keeps its number).
    pub fn next_replay(&mut self) -> Option<crate::packet::Packet> {
        let p = *self.buf.get(self.cursor)?;
        self.in_service = self.base + self.cursor as u32;
        self.cursor += 1;
        Some(p)
    }

    /// A new frame starts: it takes the next number and a place in the buffer (the caller
    /// checked it [`Llr::fits`]). Starts the replay timer if it was stopped.
    pub fn send_new(&mut self, p: crate::packet::Packet, now: Time) {
        self.in_service = self.next_seq();
        self.buf_bytes += p.frame as u64;
        // The copy owns no switch buffer: the frame's cells are freed when it first leaves.
        let mut copy = p;
        copy.charge = crate::packet::Charge::None;
        self.buf.push_back(copy);
        if self.cfg.data_age_timeout > Duration::ZERO {
            self.sent_at.push_back(now);
        }
        self.cursor = self.buf.len();
        if self.deadline.is_none() {
            self.deadline = Some(now + self.cfg.replay_timer);
        }
    }

    /// The frame in service left: its number goes on the wire with it.
    pub fn sent(&mut self) -> u32 {
        let s = std::mem::replace(&mut self.in_service, NONE);
        if s != NONE {
            self.counters.tx_ok += 1;
        }
        self.wire.push_back(s);
        s
    }

    /// Free every frame up to and including `seq`; progress resets the replay count.
    fn free_through(&mut self, seq: u32, now: Time) -> bool {
        if seq == NONE || seq < self.base || seq >= self.next_seq() {
            return false; // stale, or nothing sent yet
        }
        let n = (seq - self.base + 1) as usize;
        for p in self.buf.drain(..n) {
            self.buf_bytes -= p.frame as u64;
        }
        self.sent_at.drain(..n.min(self.sent_at.len()));
        self.base = seq + 1;
        self.cursor = self.cursor.saturating_sub(n);
        self.replays = 0;
        self.deadline = (!self.buf.is_empty()).then(|| now + self.cfg.replay_timer);
        true
    }

    /// An LLR_ACK, LLR_NACK or LLR_INIT_ECHO arrived at the sender. An echo of its INIT
    /// puts it back in ADVANCE \[SAI: INIT to ADVANCE\]; after a flush, ACKs and NACKs of
    /// the frames it gave up change nothing.
    pub fn on_ctl(&mut self, c: Ctl, now: Time) -> TxAction {
        match c.kind {
            CtlKind::Nack => {
                self.counters.rx_nack_ctl_os += 1;
                self.free_through(c.seq, now);
                self.replay(now, false)
            }
            CtlKind::Ack => {
                self.counters.rx_ack_ctl_os += 1;
                TxAction {
                    wake: self.free_through(c.seq, now),
                    ..TxAction::default()
                }
            }
            CtlKind::InitEcho => {
                self.counters.rx_init_echo_ctl_os += 1;
                let echoed = self.state == TxState::Init && c.seq == self.base;
                if echoed {
                    self.state = TxState::Advance;
                    self.deadline = None;
                }
                TxAction {
                    wake: echoed,
                    ..TxAction::default()
                }
            }
            CtlKind::Init => TxAction::default(), // the receiver's (`Llr::on_init`)
        }
    }

    /// The number the sender's LLR_INIT carries: its next frame's.
    pub fn init_seq(&self) -> u32 {
        self.base
    }

    /// An LLR_INIT goes out; it goes again at each replay-timer expiry until it is echoed
    /// (SAI: "sending INIT messages"; the interval is inferred, `docs/link-layer.md`).
    fn send_init(&mut self, now: Time) -> TxAction {
        self.counters.tx_init_ctl_os += 1;
        self.deadline = Some(now + self.cfg.replay_timer);
        TxAction {
            init: true,
            ..TxAction::default()
        }
    }

    /// Go back to the oldest unacknowledged frame [SAI: go-back-N]; past `replay_count`
    /// replays in a row, flush.
    fn replay(&mut self, now: Time, timer: bool) -> TxAction {
        if self.buf.is_empty() {
            return TxAction::default();
        }
        self.replays += 1;
        if self.replays > self.cfg.replay_count {
            return TxAction {
                wake: true,
                flush: true,
                init: false,
            };
        }
        self.counters.tx_replay += 1;
        self.counters.tx_replay_timer += timer as u64;
        self.cursor = 0;
        self.deadline = Some(now + self.cfg.replay_timer);
        TxAction {
            wake: true,
            ..TxAction::default()
        }
    }

    /// The replay timer's event at `now`: expire, or say when to look again. With the cable
    /// down it is the PCS-lost (or data age) deadline, and its expiry flushes; with the cable
    /// up, an expiry that finds the oldest frame past its data age flushes too \[SAI: FLUSH on
    /// `REPLAY_COUNT_MAX`, `PCS_LOST_TIMEOUT` or `DATA_AGE_TIMEOUT`\].
    pub fn on_timer(&mut self, now: Time) -> (TxAction, Option<Time>) {
        self.timer_event = None;
        match self.deadline {
            Some(d) if d <= now && self.state == TxState::Init => (self.send_init(now), self.arm()),
            Some(d) if d <= now && (self.down.is_some() || self.aged_at().is_some_and(|a| a <= now)) => {
                self.deadline = None;
                let flush = TxAction {
                    flush: true,
                    ..TxAction::default()
                };
                (flush, None)
            }
            Some(d) if d <= now => (self.replay(now, true), self.arm()),
            Some(_) => (TxAction::default(), self.arm()),
            None => (TxAction::default(), None),
        }
    }

    /// The time the timer's one event must be scheduled for, if none is pending.
    pub fn arm(&mut self) -> Option<Time> {
        match (self.deadline, self.timer_event) {
            (Some(d), None) => {
                self.timer_event = Some(d);
                Some(d)
            }
            _ => None,
        }
    }

    /// When the oldest buffered frame passes its data age (None: no limit, or none buffered).
    fn aged_at(&self) -> Option<Time> {
        let age = self.cfg.data_age_timeout;
        (age > Duration::ZERO)
            .then(|| self.sent_at.front().map(|&t| t + age))
            .flatten()
    }

    /// The cable went down at `now` with `pcs_lost_timeout` set: the buffer waits for the
    /// cable until that timeout (or the oldest frame's data age, if sooner) and the replay
    /// timer stops. Returns when the timer's event must be scheduled, if it needs one.
    pub fn cable_down(&mut self, now: Time) -> Option<Time> {
        self.down = Some(now);
        if self.state != TxState::Advance {
            return None; // nothing buffered: INIT goes on (and on), FLUSH stays
        }
        let lost = now + self.cfg.pcs_lost_timeout;
        self.deadline = Some(self.aged_at().map_or(lost, |a| a.min(lost)));
        self.arm()
    }

    /// The cable came back before the buffer was flushed: replay it from its oldest frame
    /// (the frames the cut took never reached the receiver, which still expects them).
    pub fn cable_up(&mut self, now: Time) -> TxAction {
        let was_down = self.down.take().is_some();
        if self.state == TxState::Init {
            return self.send_init(now); // a carrier again: INIT at once
        }
        if !was_down {
            return TxAction::default();
        }
        self.deadline = None;
        self.replay(now, false)
    }

    /// FLUSH \[SAI\]: give up on the buffer. Frames the receiver accepted are only freed; one
    /// whose copy is still on the cable (or leaving) is decided by the receiver, which accepts
    /// it or finds it lost ([`Rx::Lost`]); the rest are returned, lost end to end. Then the
    /// sender re-initialises (INIT, sending an LLR_INIT: `TxAction::init`) with
    /// `re_init_on_flush`, or stays in FLUSH. The receiver is untouched until the INIT.
    pub fn flush(&mut self, now: Time) -> (Vec<crate::packet::Packet>, TxAction) {
        let next = self.next_seq();
        let mut lost = Vec::new();
        for (seq, p) in (self.base..).zip(self.buf.drain(..)) {
            if seq >= self.expected && seq != self.in_service && !self.wire.contains(&seq) {
                lost.push(p);
            }
        }
        self.counters.tx_flush += 1;
        self.counters.tx_flushed += next.saturating_sub(self.expected.max(self.base)) as u64;
        self.lost_below = next;
        (self.base, self.cursor, self.replays, self.buf_bytes) = (next, 0, 0, 0);
        (self.deadline, self.down) = (None, None);
        self.sent_at.clear();
        let act = if self.cfg.re_init_on_flush {
            self.state = TxState::Init;
            self.send_init(now)
        } else {
            self.state = TxState::Flush;
            TxAction::default()
        };
        (lost, act)
    }

    /// Frames buffered that the receiver has not accepted: where the fabric's packets live
    /// between a discard and their replay (invariants).
    pub fn unaccepted(&self) -> impl Iterator<Item = &crate::packet::Packet> {
        let accepted = self.expected.saturating_sub(self.base) as usize;
        self.buf.iter().skip(accepted)
    }

    /// A numbered frame on the cable that its sender flushed and the receiver may still
    /// accept (its credits are still to come, as an unnumbered frame's are).
    pub fn in_doubt(&self, seq: u32) -> bool {
        seq != NONE && seq >= self.expected && seq < self.lost_below
    }

    /// Receiver: an LLR_INIT numbered `seq` arrived: expect that number next, forget any NACK
    /// and echo it \[SAI: INIT, INIT_ECHO; RX to SEND_ACKS\].
    pub fn on_init(&mut self, seq: u32) -> Ctl {
        self.counters.rx_init_ctl_os += 1;
        self.counters.tx_init_echo_ctl_os += 1;
        (self.expected, self.nack_sent, self.lost_below) = (seq, false, 0);
        (self.unacked, self.owe_ack) = (0, false);
        Ctl {
            kind: CtlKind::InitEcho,
            seq,
        }
    }

    /// Receiver: a frame numbered `seq` arrived, `bad` when its FCS failed; `last` when no
    /// other frame follows it on the cable (the ACK need not wait for more). Returns what to
    /// do with it and the ordered set to send back, if any [SAI: go-back-N receiver].
    pub fn receive(&mut self, seq: u32, bad: bool, bytes: u16, last: bool) -> (Rx, Option<Ctl>) {
        let c = &mut self.counters;
        if bad {
            c.rx_bad += 1;
        } else {
            c.rx_ok += 1;
        }
        if seq == self.expected {
            if bad {
                c.rx_expected_seq_bad += 1;
                return (self.discard(seq), self.nack());
            }
            c.rx_expected_seq_good += 1;
            if self.nack_sent {
                c.rx_replay += 1;
                self.nack_sent = false;
            }
            self.expected += 1;
            self.unacked += bytes as u32;
            return (Rx::Accept, self.ack(last));
        }
        if seq < self.expected {
            c.rx_duplicate_seq += 1;
            self.owe_ack = true;
            return (Rx::Discard, if self.nack_sent { None } else { self.ack(last) });
        }
        c.rx_missing_seq += 1;
        (self.discard(seq), self.nack())
    }

    /// A frame not yet accepted is discarded: its sender replays it, unless it flushed it and
    /// no other copy follows on the cable.
    fn discard(&self, seq: u32) -> Rx {
        if self.in_doubt(seq) && !self.wire.contains(&seq) {
            Rx::Lost
        } else {
            Rx::Discard
        }
    }

    /// One NACK per error; then silence until the expected frame is back \[SAI\].
    fn nack(&mut self) -> Option<Ctl> {
        if self.nack_sent {
            return None;
        }
        self.nack_sent = true;
        (self.unacked, self.owe_ack) = (0, false);
        self.counters.tx_nack_ctl_os += 1;
        Some(Ctl {
            kind: CtlKind::Nack,
            seq: self.expected.wrapping_sub(1),
        })
    }

    /// A cumulative ACK once `ctlos_spacing` bytes were accepted, or at the end of a burst.
    fn ack(&mut self, last: bool) -> Option<Ctl> {
        if self.unacked < self.cfg.ctlos_spacing && !(last && (self.unacked > 0 || self.owe_ack)) {
            return None;
        }
        (self.unacked, self.owe_ack) = (0, false);
        self.counters.tx_ack_ctl_os += 1;
        Some(Ctl {
            kind: CtlKind::Ack,
            seq: self.expected.wrapping_sub(1),
        })
    }

    /// Frames waiting in the buffer (sent, unacknowledged) and their bytes.
    pub fn outstanding(&self) -> (usize, u64) {
        (self.buf.len(), self.buf_bytes)
    }
}

#[cfg(test)]
mod tests;
