//! CBFC on the wire (`crate::cbfc` decides): an egress's VCs held for want of credit, credits
//! consumed as frames start, returned as frames leave the receiving port's buffer in credit
//! updates sent ahead of data on the reverse direction of the cable, and a receiver's periodic
//! tick that flushes and repeats its updates.

use super::{Event, Sim};
use crate::ids::PortId;
use crate::llr::NONE;
use crate::network::Role;
use crate::packet::{Kind, Packet};
use sim_core::Duration;

/// A frame that takes credit: anything but link-level control (PFC, credit updates, LLR's
/// ordered sets), which never enters a receiving port's buffer.
#[inline]
fn credited(pkt: &Packet) -> bool {
    !pkt.is_link_control() && pkt.kind != Kind::LlrCtl
}

impl Sim<'_> {
    /// Before egress `p` picks its next frame: hold the VCs whose credit is short of their
    /// next frame (a switch's head frame; on a NIC, whose next packet is not built yet, the
    /// largest frame it sends).
    pub(super) fn cbfc_gate(&mut self, p: PortId) {
        let (net, nics, now) = (&self.net, &self.nics, self.now);
        let port = &net.ports[p.idx()];
        let waiting = port.nonempty();
        let held = match net.roles[net.port_node[p.idx()].idx()] {
            Role::Host(h) => {
                let ready = waiting | nics[h.idx()].ready_mask(p.0);
                let max = self.variant.max_frame();
                self.cbfc.gate(p.idx(), now, |prio| (max, ready.contains(prio)))
            }
            Role::Switch(_) => self.cbfc.gate(p.idx(), now, |prio| {
                let head = port.head_frame(&net.pool, prio);
                (head.unwrap_or(0), head.is_some())
            }),
        };
        self.net.ports[p.idx()].starved = held;
        if !held.is_empty() && !self.watch.check_pending {
            // A credit cycle deadlocks as a pause cycle does: look for one (`crate::pfc_watch`).
            self.watch.check_pending = true;
            let at = self.now + Duration(self.variant.pfc.deadlock_timeout.0 / 4);
            self.schedule(at, Event::DeadlockCheck);
        }
    }

    /// Egress `p` started `pkt`: a frame of a VC consumes its credits.
    #[inline]
    pub(super) fn cbfc_sent(&mut self, p: PortId, pkt: &Packet) {
        if credited(pkt) && self.cbfc.is_vc(pkt.prio) {
            self.cbfc.consume(p.idx(), pkt.prio, pkt.frame as u32);
        }
    }

    /// `pkt` entered ingress `q`'s buffer.
    #[inline]
    pub(super) fn cbfc_arrived(&mut self, q: PortId, pkt: &Packet) {
        if credited(pkt) && self.cbfc.is_vc(pkt.prio) {
            self.cbfc.arrived(q.idx(), pkt.prio, pkt.frame as u32);
        }
    }

    /// `pkt` left ingress `q`'s buffer (forwarded, delivered or discarded): its credits go
    /// back to the sender, at once when enough have been freed, else at the next tick.
    pub(super) fn cbfc_free(&mut self, q: PortId, pkt: &Packet) {
        if !credited(pkt) || !self.cbfc.is_vc(pkt.prio) {
            return;
        }
        if let Some(limit) = self.cbfc.freed(q.idx(), pkt.prio, pkt.frame as u32) {
            self.send_link_credit(q, pkt.prio, limit);
        }
        if !self.cbfc.tick_pending[q.idx()] {
            self.cbfc.tick_pending[q.idx()] = true;
            let at = self.now + self.cbfc.cfg.update_interval;
            self.schedule(at, Event::CbfcTick(q));
        }
    }

    /// Put a credit update for VC `prio` on `q`'s wire (toward the sender), ahead of data.
    fn send_link_credit(&mut self, q: PortId, prio: u8, limit: u32) {
        let frame = Packet::link_credit(prio, limit);
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += frame.frame as u64;
        self.net.ports[q.idx()].enqueue_control(&mut self.net.pool, frame);
        self.start_tx(q);
    }

    /// Ingress `q`'s tick: flush the credits freed below the threshold, repeat the last
    /// tick's updates (a lost one is repaired), and tick again while credits move.
    pub(super) fn on_cbfc_tick(&mut self, q: PortId) {
        self.cbfc.tick_pending[q.idx()] = false;
        let mut sends = [(0u8, 0u32); 8];
        let mut n = 0;
        let again = self.cbfc.tick(q.idx(), |p, l| {
            sends[n] = (p, l);
            n += 1;
        });
        for &(p, l) in &sends[..n] {
            self.send_link_credit(q, p, l);
        }
        if again {
            self.cbfc.tick_pending[q.idx()] = true;
            let at = self.now + self.cbfc.cfg.update_interval;
            self.schedule(at, Event::CbfcTick(q));
        }
    }

    /// Re-initialise the credits of the link direction out of egress `sender` (its cable came
    /// back up, or link level retry flushed its replay buffer): the receiving port gives back
    /// the credits of the frames lost on the link and advertises its limit (`Cbfc::resync`).
    pub(super) fn cbfc_resync(&mut self, sender: PortId) {
        if !self.cbfc.on() {
            return;
        }
        let receiver = self.net.peer[sender.idx()];
        // The frames that took credit and will still reach the receiver's buffer.
        let mut coming = [0u64; 8];
        let (net, cbfc) = (&self.net, &self.cbfc);
        let mut count = |pkt: &Packet| {
            if credited(pkt) && cbfc.is_vc(pkt.prio) {
                coming[pkt.prio as usize & 7] += cbfc.cfg.cost(pkt.frame as u32);
            }
        };
        let on_cable = net.links[sender.idx()].in_flight(&net.pool);
        let leaving = net.ports[sender.idx()].in_service();
        match net.llr.get(sender.idx()).and_then(|l| l.as_ref()) {
            None => on_cable.chain(leaving).for_each(count),
            Some(l) => {
                // Unnumbered frames on their way arrive; of the numbered ones, only a flushed
                // frame's first copy the receiver has not accepted may (accepted, or lost
                // there: its credits come back either way); the rest are duplicates. A frame
                // held for room in the replay buffer took its credit and is still to be sent.
                let first = |i: usize, s: u32| !l.wire.iter().take(i).any(|&w| w == s);
                let coming = on_cable
                    .zip(l.wire.iter().enumerate())
                    .filter(|&(_, (i, &s))| s == NONE || (l.in_doubt(s) && first(i, s)));
                coming.map(|(pkt, _)| pkt).for_each(&mut count);
                let s = l.in_service;
                leaving
                    .filter(|_| s == NONE || (l.in_doubt(s) && !l.wire.contains(&s)))
                    .into_iter()
                    .for_each(&mut count);
                l.staged.iter().for_each(&mut count);
                // A buffer kept while the cable was down replays what the receiver never
                // accepted, with the credits it took the first time.
                l.unaccepted().for_each(count);
            }
        }
        let sends = self
            .cbfc
            .resync(sender.idx(), receiver.idx(), |p| coming[p as usize & 7]);
        for (p, limit) in sends {
            self.send_link_credit(receiver, p, limit);
        }
    }

    /// A credit update reached egress `q`: its VC may go on.
    pub(super) fn on_link_credit(&mut self, q: PortId, pkt: &Packet) {
        self.totals.delivered_packets += 1;
        self.totals.delivered_bytes += pkt.frame as u64;
        if !self.cbfc.is_vc(pkt.prio) {
            return;
        }
        self.cbfc.on_update(q.idx(), pkt.prio, pkt.seq);
        self.cbfc_gate(q);
        self.start_tx(q);
    }
}
