//! Credit-based flow control (CBFC), Ultra Ethernet's link-level alternative to PFC for a
//! lossless traffic class (`pfc.mode = "cbfc"`, settings in `[pfc.cbfc]`).
//!
//! Per link direction and virtual channel (VC: a lossless priority), the sender holds credits
//! for the receiving port's ingress buffer allocation and never starts a frame it has no
//! credit for; the receiver returns credits as frames leave its buffer, in credit-update
//! frames on the reverse direction of the cable. Nothing is ever sent without room, so no
//! headroom is needed for the cable's round trip; instead the allocation must cover the credit
//! loop's round trip for the link to run at line rate (a bandwidth-delay product), and below
//! it a VC runs at `allocation / loop` (Kung and Morris, "Credit-Based Flow Control for ATM
//! Networks", IEEE Network 9(2), 1995: the N23 scheme, buffer = rate x round trip).
//!
//! Sources, and what each gives:
//! - Ultra Ethernet Consortium, UE Specification 1.0 (2025), link layer CBFC, and Hoefler et
//!   al., "Ultra Ethernet's Design Principles and Architectural Innovations" (arXiv
//!   2508.08906): CBFC per VC as an optional alternative to PFC for lossless classes. The
//!   specification's frame formats and default values were not readable here; every value
//!   below that they would fix is an inference, listed in docs/cbfc.md with its key.
//! - InfiniBand Architecture Specification vol. 1, 7.9.4 (link-level flow control): credits in
//!   64-byte blocks; the receiver advertises a cumulative, modular credit limit (FCCL) so that
//!   a lost flow-control packet is repaired by the next; flow-control packets are resent
//!   periodically. Our updates carry a 32-bit cumulative limit the same way.
//! - The RC-link CBFC of Broadcom's Scale-Up Ethernet as described publicly: the sender learns
//!   the receiver's total credits at start, computes the credits each frame consumes per VC,
//!   does not schedule a VC whose remaining credit is short; the receiver returns credits as
//!   frames leave its buffer and syncs them to the sender periodically.
//! - US patent application 2026/0106840 A1, "Credit-Based Flow Control for Ethernet": the
//!   receiver returns the credits of data frames lost on the link, in credit-control frames.
//!   We return a frame's credits when the receiver discards it for a bad FCS.
//!
//! This module decides; `sim/cbfc.rs` puts credit updates on the wire and gates egresses.

use crate::error::FieldError;
use crate::packet::MIN_FRAME;
use crate::prio::PrioMask;
use serde::Deserialize;
use sim_core::{Bytes, Duration, Time};

/// How the lossless priorities (`pfc.priorities`) are kept lossless (`pfc.mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowControl {
    /// IEEE 802.1Qbb PFC: XOFF/XON pause frames, with headroom.
    #[default]
    Pfc,
    /// Ultra Ethernet CBFC: credits per VC, no pause frames, no headroom.
    Cbfc,
}

/// `[pfc.cbfc]`: the credit loop of every port, switches and NICs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbfcConfig {
    /// The lossless priorities (of `pfc.priorities`) that run CBFC; the others keep PFC, so a
    /// fabric can carry RoCEv2 on a paused class beside UET on a credited one. Default: all.
    #[serde(default)]
    pub priorities: Option<Vec<u8>>,
    /// Ingress buffer each port allocates to each lossless VC: the credits it advertises.
    #[serde(default = "default_buffer")]
    pub buffer_per_vc: Bytes,
    /// Bytes one credit stands for; a frame consumes its length in credits, rounded up
    /// (InfiniBand's 64-byte flow-control block).
    #[serde(default = "default_credit")]
    pub credit: Bytes,
    /// A receiver sends a credit update as soon as this many bytes' credits were freed since
    /// its last update.
    #[serde(default = "default_threshold")]
    pub update_threshold: Bytes,
    /// Credits freed below the threshold are sent at the next tick of this period, and each
    /// tick that sent an update repeats it at the next (a lost update is repaired by a later
    /// one: limits are cumulative).
    #[serde(default = "default_interval")]
    pub update_interval: Duration,
}

fn default_buffer() -> Bytes {
    Bytes(64 * 1024)
}
fn default_credit() -> Bytes {
    Bytes(64)
}
fn default_threshold() -> Bytes {
    Bytes(8 * 1024)
}
fn default_interval() -> Duration {
    Duration::from_us(1)
}

impl Default for CbfcConfig {
    fn default() -> Self {
        CbfcConfig {
            priorities: None,
            buffer_per_vc: default_buffer(),
            credit: default_credit(),
            update_threshold: default_threshold(),
            update_interval: default_interval(),
        }
    }
}

/// A credit update on the wire: a minimum-size MAC control frame, as PFC's (the UE frame
/// format was not available; its cost is modelled as 64 B + preamble and gap).
pub const UPDATE_FRAME: u32 = MIN_FRAME;

impl CbfcConfig {
    /// `max_frame`: the largest frame a port sends; a VC must hold one.
    pub fn validate(&self, max_frame: u32) -> Result<(), FieldError> {
        if self.credit.0 == 0 || self.credit.0 > 65_536 {
            return Err(FieldError::new("pfc.cbfc.credit", "must be between 1B and 64KiB"));
        }
        if self.buffer_per_vc.0 < self.cost(max_frame) * self.credit.0 {
            return Err(FieldError::new(
                "pfc.cbfc.buffer_per_vc",
                format!(
                    "{} B cannot hold the largest frame ({max_frame} B, {} credits of {} B): the VC could never send",
                    self.buffer_per_vc.0,
                    self.cost(max_frame),
                    self.credit.0
                ),
            ));
        }
        if self.update_threshold.0 == 0 || self.update_threshold > self.buffer_per_vc {
            return Err(FieldError::new(
                "pfc.cbfc.update_threshold",
                "must be greater than zero and at most buffer_per_vc",
            ));
        }
        if self.update_interval == Duration::ZERO {
            return Err(FieldError::new(
                "pfc.cbfc.update_interval",
                "must be greater than zero",
            ));
        }
        Ok(())
    }

    /// Credits a frame of `frame` bytes consumes.
    #[inline]
    pub fn cost(&self, frame: u32) -> u64 {
        (frame as u64).div_ceil(self.credit.0.max(1))
    }

    /// Credits each port advertises per VC.
    pub fn allocation(&self) -> u64 {
        self.buffer_per_vc.0 / self.credit.0.max(1)
    }
}

/// One VC of one port: its egress (the sender's credit) and its ingress (the receiver's
/// buffer and the credit it returns).
#[derive(Debug, Clone, Copy, Default)]
pub struct Vc {
    /// Sender: the cumulative credit limit the peer advertised.
    pub limit: u64,
    /// Sender: cumulative credits consumed (frames started).
    pub consumed: u64,
    /// Sender: credit updates received.
    pub updates_rx: u64,
    /// Sender: time a frame waited at this VC for want of credit, and how many such stalls.
    pub starved: Duration,
    pub stalls: u64,
    starved_since: Option<Time>,
    /// Receiver: cumulative credits freed (frames that left this ingress's buffer).
    pub freed: u64,
    /// Receiver: credits held now (arrived, not yet freed), and the most held at once.
    pub held: u64,
    pub peak_held: u64,
    /// Receiver: the freed count last advertised, and at the last tick.
    advertised: u64,
    at_tick: u64,
    /// Receiver: the last tick sent an update; the next repeats it.
    repeat: bool,
    /// Receiver: credit updates sent.
    pub updates_tx: u64,
    /// Receiver: credits of frames lost on the link, given back when the link's credit state
    /// was re-initialised ([`Cbfc::resync`]).
    pub recovered: u64,
}

/// Every port's CBFC state (empty when CBFC is off).
#[derive(Debug, Clone, Default)]
pub struct Cbfc {
    pub cfg: CbfcConfig,
    /// VC slot of each priority (`u8::MAX`: not a VC).
    slot: [u8; 8],
    pub mask: PrioMask,
    vcs: Vec<Vc>,
    /// A tick is scheduled for the port.
    pub tick_pending: Vec<bool>,
    alloc: u64,
}

impl Cbfc {
    /// CBFC on priorities `mask` at `ports` ports, each VC starting with its peer's full
    /// allocation.
    pub fn new(cfg: &CbfcConfig, mask: PrioMask, ports: usize) -> Cbfc {
        let mut slot = [u8::MAX; 8];
        for (i, p) in mask.iter().enumerate() {
            slot[p as usize] = i as u8;
        }
        let alloc = cfg.allocation();
        let vc = Vc {
            limit: alloc,
            ..Vc::default()
        };
        Cbfc {
            cfg: cfg.clone(),
            slot,
            mask,
            vcs: vec![vc; ports * mask.iter().count()],
            tick_pending: vec![false; ports],
            alloc,
        }
    }

    /// Whether CBFC runs at all.
    #[inline]
    pub fn on(&self) -> bool {
        !self.vcs.is_empty()
    }

    /// Whether priority `p` is a VC.
    #[inline]
    pub fn is_vc(&self, p: u8) -> bool {
        self.on() && self.slot[p as usize & 7] != u8::MAX
    }

    fn n(&self) -> usize {
        self.mask.iter().count()
    }

    /// Port `port`'s VC for priority `p` (which must be a VC).
    pub fn vc(&self, port: usize, p: u8) -> &Vc {
        &self.vcs[port * self.n() + self.slot[p as usize] as usize]
    }

    fn vc_mut(&mut self, port: usize, p: u8) -> &mut Vc {
        let n = self.n();
        &mut self.vcs[port * n + self.slot[p as usize] as usize]
    }

    /// Credits the sender at `port` may still use on `p`.
    pub fn available(&self, port: usize, p: u8) -> u64 {
        let v = self.vc(port, p);
        v.limit.saturating_sub(v.consumed)
    }

    /// The VCs egress `port` may not serve now: those whose credit is short of what the next
    /// frame needs (`need(p)`: its bytes, and whether a frame waits). A VC with a frame
    /// waiting and no credit for it is starved from now until credit arrives (counted).
    pub fn gate(&mut self, port: usize, now: Time, need: impl Fn(u8) -> (u32, bool)) -> PrioMask {
        let mut held = PrioMask::EMPTY;
        for p in self.mask.iter() {
            let (bytes, waiting) = need(p);
            let short = self.available(port, p) < self.cfg.cost(bytes);
            let v = self.vc_mut(port, p);
            if short {
                held.insert(p);
                if waiting && v.starved_since.is_none() {
                    v.starved_since = Some(now);
                    v.stalls += 1;
                }
            } else if let Some(s) = v.starved_since.take() {
                v.starved += now.saturating_since(s);
            }
        }
        held
    }

    /// Egress `port` starts a frame of `frame` bytes on VC `p`.
    #[inline]
    pub fn consume(&mut self, port: usize, p: u8, frame: u32) {
        let c = self.cfg.cost(frame);
        let v = self.vc_mut(port, p);
        v.consumed += c;
        debug_assert!(v.consumed <= v.limit, "a frame sent without credit");
    }

    /// A frame of `frame` bytes on VC `p` entered ingress `port`'s buffer.
    #[inline]
    pub fn arrived(&mut self, port: usize, p: u8, frame: u32) {
        let c = self.cfg.cost(frame);
        let v = self.vc_mut(port, p);
        v.held += c;
        v.peak_held = v.peak_held.max(v.held);
    }

    /// A frame of `frame` bytes on VC `p` left ingress `port`'s buffer (or was discarded):
    /// its credits are free. Returns the limit to advertise now, if the freed credits since
    /// the last update reached the threshold.
    pub fn freed(&mut self, port: usize, p: u8, frame: u32) -> Option<u32> {
        let c = self.cfg.cost(frame);
        let threshold = self.cfg.cost(self.cfg.update_threshold.0 as u32);
        let alloc = self.alloc;
        let v = self.vc_mut(port, p);
        v.held = v.held.saturating_sub(c);
        v.freed += c;
        (v.freed - v.advertised >= threshold).then(|| Self::advertise(v, alloc))
    }

    fn advertise(v: &mut Vc, alloc: u64) -> u32 {
        v.advertised = v.freed;
        v.updates_tx += 1;
        (alloc + v.freed) as u32
    }

    /// The periodic tick of ingress `port`: the limits to advertise now (credits freed since
    /// the last tick, or a repeat of the last tick's update). Returns whether to tick again.
    pub fn tick(&mut self, port: usize, mut send: impl FnMut(u8, u32)) -> bool {
        let alloc = self.alloc;
        let mut again = false;
        for p in self.mask.iter() {
            let v = self.vc_mut(port, p);
            let moved = v.freed != v.at_tick;
            if moved || v.repeat || v.freed != v.advertised {
                v.at_tick = v.freed;
                v.repeat = moved;
                again |= moved;
                send(p, Self::advertise(v, alloc));
            }
        }
        again
    }

    /// A credit update for VC `p` reached egress `port`: the new cumulative limit (modulo
    /// 2^32, as InfiniBand's FCCL is modular). An older or repeated one changes nothing.
    pub fn on_update(&mut self, port: usize, p: u8, limit: u32) {
        let v = self.vc_mut(port, p);
        v.updates_rx += 1;
        let ahead = limit.wrapping_sub(v.limit as u32) as i32;
        if ahead > 0 {
            v.limit += ahead as u64;
        }
    }

    /// Re-initialise the credit state of the link direction from egress `sender` to ingress
    /// `receiver` (the cable came back up, or link level retry flushed its replay buffer):
    /// every credit the sender consumed that is neither held in the receiver's buffer, nor
    /// freed already, nor on the cable (`on_cable(p)`: the credits of the frames still on it)
    /// was lost with its frame and is given back, and the receiver advertises its limit at
    /// once. InfiniBand's link-level flow control does the same at link initialisation and on
    /// every flow-control packet (vol. 1, 7.9.4: the receiver's count of blocks received, ABR,
    /// is set to the sender's count of blocks sent, FCTBS); the UE specification's CBFC
    /// re-initialisation was not readable here (docs/cbfc.md). Returns the limits to send.
    pub fn resync(&mut self, sender: usize, receiver: usize, on_cable: impl Fn(u8) -> u64) -> Vec<(u8, u32)> {
        let alloc = self.alloc;
        let mut sends = Vec::new();
        for p in self.mask.iter() {
            let consumed = self.vc(sender, p).consumed;
            let v = self.vc_mut(receiver, p);
            let lost = consumed.saturating_sub(v.freed + v.held + on_cable(p));
            v.freed += lost;
            v.recovered += lost;
            sends.push((p, Self::advertise(v, alloc)));
        }
        sends
    }

    /// Close the starved intervals still open at the end of the run.
    pub fn finish(&mut self, now: Time) {
        for v in &mut self.vcs {
            if let Some(s) = v.starved_since.take() {
                v.starved += now.saturating_since(s);
            }
        }
    }

    /// Whether egress `port` is starved on `p` now (a frame waits without credit).
    pub fn is_starved(&self, port: usize, p: u8) -> bool {
        self.is_vc(p) && self.vc(port, p).starved_since.is_some()
    }

    /// Totals over every port and VC.
    pub fn totals(&self) -> CbfcTotals {
        let mut t = CbfcTotals::default();
        for v in &self.vcs {
            t.credits_consumed += v.consumed;
            t.credits_granted += v.freed;
            t.update_frames_tx += v.updates_tx;
            t.update_frames_rx += v.updates_rx;
            t.stalls += v.stalls;
            t.starved_ns += v.starved.0 as f64 / 1e3;
            t.peak_held_bytes = t.peak_held_bytes.max(v.peak_held * self.cfg.credit.0);
            t.credits_recovered += v.recovered;
        }
        t
    }
}

/// A run's CBFC totals (summary.json `cbfc`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CbfcTotals {
    /// Credits senders consumed, and receivers returned (freed), over every port and VC.
    pub credits_consumed: u64,
    pub credits_granted: u64,
    /// Credit-update frames sent and received (the difference: lost on cables).
    pub update_frames_tx: u64,
    pub update_frames_rx: u64,
    /// Times a VC with a frame waiting ran out of credit, and their total duration.
    pub stalls: u64,
    pub starved_ns: f64,
    /// The most bytes' credits any ingress VC held at once.
    pub peak_held_bytes: u64,
    /// Credits of frames lost on links, given back when a link's credit state was
    /// re-initialised (a cable back up, a link level retry flush).
    pub credits_recovered: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cbfc(buffer: u64, threshold: u64) -> Cbfc {
        let cfg = CbfcConfig {
            priorities: None,
            buffer_per_vc: Bytes(buffer),
            credit: Bytes(64),
            update_threshold: Bytes(threshold),
            update_interval: Duration::from_us(1),
        };
        Cbfc::new(&cfg, [3u8].into_iter().collect(), 2)
    }

    #[test]
    fn a_sender_stops_when_its_credit_is_short_of_the_next_frame_and_resumes_on_an_update() {
        // 8 KiB = 128 credits; a 4158 B frame takes 65 credits: one fits, a second does not.
        let mut c = cbfc(8192, 4096);
        let need = |_: u8| (4158u32, true);
        assert!(c.gate(0, Time(0), need).is_empty());
        c.consume(0, 3, 4158);
        assert_eq!(c.available(0, 3), 128 - 65);
        assert!(c.gate(0, Time(10), need).contains(3), "63 credits < 65");
        // The receiver (port 1) frees the frame: 65 credits >= the 64-credit threshold.
        c.arrived(1, 3, 4158);
        let limit = c.freed(1, 3, 4158).expect("threshold reached");
        assert_eq!(limit, 128 + 65);
        c.on_update(0, 3, limit);
        assert!(c.gate(0, Time(110), need).is_empty());
        assert_eq!((c.vc(0, 3).stalls, c.vc(0, 3).starved), (1, Duration(100)));
    }

    #[test]
    fn a_lost_update_is_repaired_by_the_next_and_stale_ones_change_nothing() {
        let mut c = cbfc(8192, 64);
        c.on_update(0, 3, 200);
        c.on_update(0, 3, 150);
        assert_eq!(c.vc(0, 3).limit, 200, "an older limit is ignored");
        // Limits wrap modulo 2^32.
        c.vcs[0].limit = u32::MAX as u64 - 1;
        c.on_update(0, 3, 5);
        assert_eq!(c.vc(0, 3).limit, u32::MAX as u64 + 6);
    }

    #[test]
    fn ticks_flush_what_the_threshold_left_and_repeat_once() {
        let mut c = cbfc(8192, 8192);
        c.arrived(1, 3, 100);
        assert_eq!(c.freed(1, 3, 100), None, "2 credits < 128");
        let mut sent = Vec::new();
        assert!(c.tick(1, |p, l| sent.push((p, l))));
        assert!(!c.tick(1, |p, l| sent.push((p, l))), "the repeat");
        assert!(!c.tick(1, |p, l| sent.push((p, l))), "then silence");
        assert_eq!(sent, vec![(3, 130), (3, 130)]);
        assert_eq!(c.vc(1, 3).updates_tx, 2);
    }

    #[test]
    fn validation_names_the_key() {
        let mut cfg = CbfcConfig {
            buffer_per_vc: Bytes(4096),
            ..CbfcConfig::default()
        };
        assert_eq!(cfg.validate(4158).unwrap_err().path, "pfc.cbfc.buffer_per_vc");
        cfg.buffer_per_vc = Bytes(65536);
        cfg.update_interval = Duration::ZERO;
        assert_eq!(cfg.validate(4158).unwrap_err().path, "pfc.cbfc.update_interval");
    }
}
