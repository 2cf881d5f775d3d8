//! Link level retry on the wire (`crate::llr` decides): an LLR port picks its next frame
//! (ordered sets and PFC first, then a replay, then new frames while the replay buffer has
//! room), numbers what it sends, and the far end accepts, discards, acknowledges or NACKs.
//!
//! Accounting: a frame LLR discards at the receiver was not lost, its sender still holds it,
//! so it is counted in `Totals::llr_discarded` (not a drop), and each copy the replay buffer
//! puts back into the fabric in `Totals::llr_copies`: sent + copies = delivered + dropped +
//! discarded + in flight. A flush gives its frames up as drops (one copy each, dropped).

use super::{Event, Sim};
use crate::drop::DropReason;
use crate::ids::PortId;
use crate::llr::{Admit, Ctl, CtlKind, NONE, Rx};
use crate::packet::{Kind, Packet};

impl Sim<'_> {
    /// The next frame of LLR port `p`: control first (PFC frames and ordered sets are never
    /// held \[TP\]), then a replay (which PFC does not pause \[TP\]), then a frame held for room,
    /// then a new frame, if the replay buffer has room for it (in INIT or FLUSH, as the frame
    /// action says: sent unnumbered, held, or discarded).
    pub(super) fn llr_next_frame(&mut self, p: PortId) -> bool {
        match self.llr_pick(p) {
            Some(pkt) => {
                *self.net.ports[p.idx()].stage_slot() = Some(pkt);
                true
            }
            None => false,
        }
    }

    /// The frame [`Self::llr_next_frame`] makes the port's next.
    fn llr_pick(&mut self, p: PortId) -> Option<Packet> {
        if let Some(pkt) = self.net.ports[p.idx()].dequeue_control(&mut self.net.pool) {
            return Some(pkt);
        }
        if !self.net.port_up[p.idx()] {
            // No carrier, no LLR: what a switch still sends is lost with the cable.
            return self.next_frame(p).then(|| self.net.ports[p.idx()].unstage());
        }
        let now = self.now;
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        if let Some(pkt) = l.next_replay() {
            self.totals.llr_copies += 1;
            self.totals.llr_copy_bytes += pkt.frame as u64;
            return Some(pkt);
        }
        if l.blocked() {
            return None;
        }
        loop {
            let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
            let (pkt, fresh) = match l.staged.take() {
                Some(s) => (s, false),
                None => {
                    if !self.next_frame(p) {
                        return None;
                    }
                    (self.net.ports[p.idx()].unstage(), true)
                }
            };
            let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
            match l.admit(pkt.frame) {
                Admit::Number => {
                    l.send_new(pkt, now);
                    self.llr_arm(p);
                    return Some(pkt);
                }
                Admit::Unprotected => return Some(pkt),
                Admit::Hold => {
                    l.counters.tx_held += fresh as u64;
                    l.staged = Some(pkt);
                    return None;
                }
                Admit::Discard => self.llr_discard(p, pkt),
            }
        }
    }

    /// A frame LLR port `p` discards in INIT or FLUSH \[SAI: `LLR_TX_DISCARD`\]: its switch
    /// cells are freed, and its CBFC credits come back as a frame lost on the wire's do
    /// (the receiver frees them); a drop for a link error (what took the link there).
    fn llr_discard(&mut self, p: PortId, pkt: Packet) {
        if pkt.charge != crate::packet::Charge::None {
            self.switch_departed(p, &pkt);
        }
        if self.cbfc.on() {
            self.cbfc_free(self.net.peer[p.idx()], &pkt);
        }
        self.drop(pkt, DropReason::LinkError, p);
    }

    /// Schedule the replay timer's one event of port `p`, if it needs one.
    fn llr_arm(&mut self, p: PortId) {
        if let Some(at) = self.net.llr[p.idx()].as_mut().and_then(|l| l.arm()) {
            self.schedule(at, Event::LlrTimer(p));
        }
    }

    /// The frame in service on LLR port `p` left: its link number goes on the wire with it.
    /// Returns false for a copy of a buffered frame that a down cable swallows (the buffer
    /// was flushed when the cable went down: that copy is not a second loss).
    pub(super) fn llr_sent(&mut self, p: PortId, pkt: &Packet) -> bool {
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        if !self.net.port_up[p.idx()] {
            if pkt.kind == Kind::LlrCtl {
                return false; // not a frame: nothing to count
            }
            if std::mem::replace(&mut l.in_service, NONE) == NONE {
                return true;
            }
            self.totals.llr_discarded += 1;
            self.totals.llr_discarded_bytes += pkt.frame as u64;
            return false;
        }
        l.sent();
        true
    }

    /// A frame numbered `seq` reached the end of LLR cable `p` (at port `q`), corrupted when
    /// `bad`: the receiver accepts it (returned, for the usual path), or discards it and its
    /// sender replays it. Either may send an ACK or NACK back on `q`'s wire.
    pub(super) fn llr_receive(
        &mut self,
        p: PortId,
        q: PortId,
        pkt: Packet,
        seq: u32,
        bad: bool,
    ) -> Option<Packet> {
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        // No numbered frame behind it, on the cable or being serialized onto it (ordered sets
        // and PFC frames do not count): frames back to back are acknowledged every
        // `ctlos_spacing` bytes, an idle cable's last at once.
        let last = l.in_service == NONE && l.wire.iter().all(|&s| s == NONE);
        let (rx, ctl) = l.receive(seq, bad, pkt.frame, last);
        if let Some(c) = ctl {
            self.send_llr_ctl(q, c);
        }
        if rx == Rx::Accept {
            return Some(pkt);
        }
        if bad {
            let c = &mut self.net.ports[q.idx()].counters;
            c.drops_link_error += 1;
            c.count_wire_loss(&pkt);
        }
        if rx == Rx::Lost {
            // Its sender flushed it: lost end to end, and its credits come back.
            if self.cbfc.on() {
                self.cbfc_free(q, &pkt);
            }
            self.drop(pkt, DropReason::LinkError, q);
            return None;
        }
        self.totals.llr_discarded += 1;
        self.totals.llr_discarded_bytes += pkt.frame as u64;
        None
    }

    /// Put an LLR ordered set on `q`'s wire, ahead of its queued frames (an ordered set
    /// the PCS inserts; here between frames, not inside one: `docs/link-layer.md`).
    fn send_llr_ctl(&mut self, q: PortId, c: Ctl) {
        // Not a packet of the totals (it is no frame): only its 8 B of line time count.
        let frame = c.packet();
        self.net.ports[q.idx()].enqueue_control(&mut self.net.pool, frame);
        self.start_tx(q);
    }

    /// An ordered set crossed cable `p` to port `q`: an LLR_INIT for `p`'s receiver, which
    /// echoes it; anything else for the frames `q` sent on its own cable.
    pub(super) fn on_llr_ctl(&mut self, p: PortId, q: PortId, pkt: &Packet, bad: bool) {
        let c = Ctl::of(pkt);
        let at = if c.kind == CtlKind::Init { p } else { q };
        let Some(l) = self.net.llr.get_mut(at.idx()).and_then(|l| l.as_mut()) else {
            return;
        };
        if bad {
            // Lost to bit errors: the next ACK covers a lost ACK, the replay timer a NACK (or
            // an INIT, or its echo).
            l.counters.ctl_os_lost += 1;
            return;
        }
        if c.kind == CtlKind::Init {
            let echo = l.on_init(c.seq);
            return self.send_llr_ctl(q, echo);
        }
        let a = l.on_ctl(c, self.now);
        self.llr_act(q, a);
    }

    /// The replay timer of port `p`'s cable.
    pub(super) fn on_llr_timer(&mut self, p: PortId) {
        let Some(l) = self.net.llr[p.idx()].as_mut() else {
            return;
        };
        let (a, next) = l.on_timer(self.now);
        if let Some(at) = next {
            self.schedule(at, Event::LlrTimer(p));
        }
        self.llr_act(p, a);
    }

    fn llr_act(&mut self, p: PortId, a: crate::llr::TxAction) {
        if a.flush {
            if self.net.port_up[p.idx()] {
                self.llr_flush(p, DropReason::LinkError);
                // The credits of the frames it lost come back.
                self.cbfc_resync(p);
            } else {
                // The cable stayed down too long; its credits come back when it is up.
                self.llr_flush(p, DropReason::LinkDown);
            }
        }
        if a.init {
            self.llr_init(p);
        }
        self.llr_arm(p);
        if a.wake {
            self.start_tx(p);
        }
    }

    /// LLR port `p`'s sender puts an LLR_INIT on its own cable (lost if the cable is down).
    fn llr_init(&mut self, p: PortId) {
        let l = self.net.llr[p.idx()].as_ref().expect("an LLR port");
        let c = Ctl {
            kind: CtlKind::Init,
            seq: l.init_seq(),
        };
        self.send_llr_ctl(p, c);
    }

    /// LLR port `p`'s cable went down: its sender flushes at once, or keeps its buffer until
    /// `pcs_lost_timeout` (or a frame's data age) and flushes then unless the cable is back
    /// \[SAI: FLUSH when the PCS status stays false longer than `PCS_LOST_TIMEOUT`\].
    pub(super) fn llr_down(&mut self, p: PortId) {
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        if l.cfg.pcs_lost_timeout == sim_core::Duration::ZERO {
            return self.llr_flush(p, DropReason::LinkDown);
        }
        if let Some(at) = l.cable_down(self.now) {
            self.schedule(at, Event::LlrTimer(p));
        }
    }

    /// LLR port `p`'s cable is back up: a kept buffer is replayed (past `replay_count`
    /// replays in a row, flushed). The caller re-initialises CBFC's credits next.
    pub(super) fn llr_up(&mut self, p: PortId) {
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        let a = l.cable_up(self.now);
        if a.flush {
            self.llr_flush(p, DropReason::LinkDown);
        } else if a.init {
            self.llr_init(p);
        }
        self.llr_arm(p);
    }

    /// Port `p`'s sender gives up its buffer: the frames its receiver never accepted and no
    /// copy on the cable may still bring are lost end to end (each a copy handed back, then
    /// dropped for `reason`). It re-initialises next, or stays in FLUSH.
    pub(super) fn llr_flush(&mut self, p: PortId, reason: DropReason) {
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        let (lost, a) = l.flush(self.now);
        for pkt in lost {
            self.totals.llr_copies += 1;
            self.totals.llr_copy_bytes += pkt.frame as u64;
            self.drop(pkt, reason, p);
        }
        if a.init {
            self.llr_init(p);
        }
        self.llr_arm(p);
    }

    /// LLR port `p`'s cable was cut: what was on it is discarded (the buffer flush, next,
    /// decides what is lost), the rest as before.
    pub(super) fn llr_cut(&mut self, p: PortId, pkt: Packet) -> Option<Packet> {
        let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
        if pkt.kind == Kind::LlrCtl {
            l.wire.pop_front();
            return None; // an ordered set just vanishes
        }
        if l.wire.pop_front().unwrap_or(NONE) == NONE {
            return Some(pkt);
        }
        self.totals.llr_discarded += 1;
        self.totals.llr_discarded_bytes += pkt.frame as u64;
        None
    }
}
