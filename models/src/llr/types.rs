//! What LLR's sender and receiver say to each other and to the hub: the counters, the ordered
//! sets, the sender's state and what it decides for a frame (sources as in the parent module).

use crate::packet::{Packet, flags};

/// Counters of one cable direction, named as SAI's `SAI_PORT_STAT_LLR_*` \[SAI\]: the `tx_`
/// ones belong to the sending port, the `rx_` ones to the receiving port (an ACK or NACK is
/// sent by the receiver: `tx_ack_ctl_os` is counted at the receiving port).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LlrCounters {
    /// LLR frames put on the wire with a good FCS (replays included).
    pub tx_ok: u64,
    /// Replays the sender started (by a NACK or the replay timer).
    pub tx_replay: u64,
    /// Of them, started by the replay timer (not an SAI counter).
    pub tx_replay_timer: u64,
    /// Times the sender flushed its buffer after `replay_count` replays (SAI reports the
    /// FLUSH state as a port error status, not a counter).
    pub tx_flush: u64,
    /// Frames a flush gave up on: lost end to end unless a copy already on the cable still
    /// gets through (not an SAI counter).
    pub tx_flushed: u64,
    /// Frames held back because the replay buffer was full (not an SAI counter).
    pub tx_held: u64,
    /// Frames sent without a sequence number: too large for an empty replay buffer, or sent
    /// best effort in INIT or FLUSH (not an SAI counter).
    pub tx_unprotected: u64,
    /// Frames discarded in INIT or FLUSH under the `discard` action (SAI's `LLR_TX_DISCARD`).
    pub tx_discard: u64,
    pub tx_init_ctl_os: u64,
    pub rx_init_echo_ctl_os: u64,
    pub rx_init_ctl_os: u64,
    pub tx_init_echo_ctl_os: u64,
    pub rx_ok: u64,
    /// Frames received with a bad FCS.
    pub rx_bad: u64,
    pub rx_expected_seq_good: u64,
    pub rx_expected_seq_bad: u64,
    /// Frames whose number showed a missing frame before them.
    pub rx_missing_seq: u64,
    /// Frames received again (numbers already accepted).
    pub rx_duplicate_seq: u64,
    /// Replays the receiver saw start (the expected frame back after a NACK).
    pub rx_replay: u64,
    pub tx_ack_ctl_os: u64,
    pub tx_nack_ctl_os: u64,
    pub rx_ack_ctl_os: u64,
    pub rx_nack_ctl_os: u64,
    /// ACKs and NACKs for this sender lost to bit errors on the way (not an SAI counter).
    pub ctl_os_lost: u64,
}

/// What the receiver does with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rx {
    /// Pass it up, as the cable delivered it.
    Accept,
    /// Drop it here: the sender still holds a copy.
    Discard,
    /// Drop it here: its sender flushed it, so it is lost end to end.
    Lost,
}

/// The LLR control ordered sets \[SAI, OS\]: the receiver's cumulative ACK and its NACK, the
/// sender's LLR_INIT and the receiver's LLR_INIT_ECHO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtlKind {
    Ack,
    Nack,
    Init,
    InitEcho,
}

/// An ordered set and the sequence number it carries: the last good frame (ACK, NACK), or
/// the number the sender starts over at (INIT and its echo).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctl {
    pub kind: CtlKind,
    pub seq: u32,
}

impl Ctl {
    /// The ordered set as the frame the hub puts on the wire.
    pub fn packet(self) -> Packet {
        let f = match self.kind {
            CtlKind::Ack => 0,
            CtlKind::Nack => flags::LLR_NACK,
            CtlKind::Init => flags::LLR_INIT,
            CtlKind::InitEcho => flags::LLR_INIT_ECHO,
        };
        Packet::llr_ctl(f, self.seq)
    }

    /// The ordered set an [`crate::packet::Kind::LlrCtl`] frame carries.
    pub fn of(p: &Packet) -> Ctl {
        let kind = if p.has(flags::LLR_NACK) {
            CtlKind::Nack
        } else if p.has(flags::LLR_INIT) {
            CtlKind::Init
        } else if p.has(flags::LLR_INIT_ECHO) {
            CtlKind::InitEcho
        } else {
            CtlKind::Ack
        };
        Ctl { kind, seq: p.seq }
    }
}

/// The sender's state, as SAI's `SAI_PORT_LLR_TX_STATUS_*` names it (REPLAY is ADVANCE with
/// a replay under way) \[SAI\].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxState {
    /// Numbering and buffering frames.
    Advance,
    /// An LLR_INIT sent, its echo awaited: new frames follow `init_action`.
    Init,
    /// Flushed and not re-initialised (`re_init_on_flush = false`): new frames follow
    /// `flush_action` until management acts (never, in a run).
    Flush,
}

/// What the sender does with a new frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Number it and keep a copy.
    Number,
    /// Send it without a number (LLR does not cover it).
    Unprotected,
    /// Keep it back: the replay buffer is full (or INIT or FLUSH blocks: [`super::Llr::blocked`]).
    Hold,
    /// Drop it (INIT or FLUSH under `discard`).
    Discard,
}

/// What the sender must do after an ordered set or a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxAction {
    /// Room freed, a replay started or the link back in ADVANCE: try to transmit.
    pub wake: bool,
    /// Replays in a row passed `replay_count` (or a timeout passed): flush.
    pub flush: bool,
    /// Send an LLR_INIT carrying [`super::Llr::init_seq`].
    pub init: bool,
}
