//! Frames on the wire: a port starts its next frame, finishes it and hands it to the cable; the
//! cable delivers it to the node at the far end (a switch, or a host); faults cut cables.

use super::{Event, Sim};
use crate::drop::DropReason;
use crate::ids::{NodeId, PortId, SwitchId};
use crate::network::Role;
use crate::packet::{Charge, Kind, Packet};
use crate::switch::{Verdict, classify};

impl Sim<'_> {
    /// Start the next transmission on an idle port: a switch's queued frame, or on a host its
    /// queued control frames and then the NIC's next data packet, made in the port's slot.
    pub(super) fn start_tx(&mut self, p: PortId) {
        if self.net.ports[p.idx()].is_busy() {
            return;
        }
        let staged = if self.llr_port(p) {
            self.llr_next_frame(p)
        } else {
            self.next_frame(p)
        };
        if !staged {
            return;
        }
        if self.mirrored[p.idx()] {
            let pkt = *self.net.ports[p.idx()].in_service().expect("a staged frame");
            self.mirror(p, true, &pkt);
        }
        let d = self.net.ports[p.idx()].begin_staged(self.now);
        self.schedule(self.now + d, Event::TxDone(p));
    }

    /// Does the cable leaving `p` run link level retry?
    #[inline]
    pub(super) fn llr_port(&self, p: PortId) -> bool {
        !self.net.llr.is_empty() && self.net.llr[p.idx()].is_some()
    }

    /// Make the frame idle port `p` sends next in its slot (`Port::stage_slot`): a switch's
    /// queued frame, or on a host its queued control frames and then the NIC's next data
    /// packet. False when there is none.
    #[inline]
    pub(super) fn next_frame(&mut self, p: PortId) -> bool {
        if self.cbfc.on() {
            self.cbfc_gate(p); // CBFC: VCs short of credit are not served
        }
        let staged = match self.net.roles[self.net.port_node[p.idx()].idx()] {
            Role::Switch(s) => self
                .switch_dequeue(s, p)
                .map(|pkt| {
                    *self.net.ports[p.idx()].stage_slot() = Some(pkt);
                })
                .is_some(),
            // A NIC whose cable is down has no carrier: it sends nothing (its transport's
            // timers still run, and give up as they would).
            Role::Host(_) if !self.net.port_up[p.idx()] => false,
            Role::Host(h) => match self.net.ports[p.idx()].dequeue(&mut self.net.pool, self.now) {
                Some(pkt) => {
                    *self.net.ports[p.idx()].stage_slot() = Some(pkt);
                    true
                }
                None => {
                    let made = self.next_data(h, p);
                    if !made {
                        self.nic_idle(h, p);
                    }
                    made
                }
            },
        };
        if staged && self.cbfc.on() {
            let pkt = *self.net.ports[p.idx()].in_service().expect("a staged frame");
            self.cbfc_sent(p, &pkt);
        }
        staged
    }

    /// The next frame of switch egress `p`, ECN-marked at dequeue if its queue says so.
    #[inline]
    fn switch_dequeue(&mut self, s: SwitchId, p: PortId) -> Option<Packet> {
        let mut pkt = self.net.ports[p.idx()].dequeue(&mut self.net.pool, self.now)?;
        let port = &mut self.net.ports[p.idx()];
        classify::int_egress(&mut self.net.int, &pkt, port, self.now);
        if self.switches[s.idx()].dequeued(self.variant.switch_of(s.idx()), port, &mut pkt) {
            self.totals.ecn_marked += 1;
        }
        Some(pkt)
    }

    pub(super) fn on_tx_done(&mut self, p: PortId) {
        let pkt = self.net.ports[p.idx()].end_tx();
        if pkt.charge != Charge::None {
            self.switch_departed(p, &pkt);
        }
        if self.llr_port(p) && !self.llr_sent(p, &pkt) {
            // a buffered frame's copy into a cut cable: its buffer was flushed already
        } else if !self.net.port_up[p.idx()] {
            self.drop(pkt, DropReason::LinkDown, p);
        } else {
            self.net.ports[p.idx()].count_tx(&pkt);
            if let Some(part) = self.part.as_deref_mut()
                && let Some(to) = part.crossing(p, self.net.peer[p.idx()])
            {
                // Into another partition: it reaches that partition's copy of the cable
                // after this window (`parallel`).
                let arrives = self.now + self.net.links[p.idx()].delay;
                part.post(to, self.now, arrives, p, pkt);
            } else if let Some(at) = self.net.links[p.idx()].send(&mut self.net.pool, self.now, pkt) {
                self.schedule(at, Event::Arrive(p));
            }
        }
        self.start_tx(p);
    }

    /// `pkt` left switch egress `out`: its cells are free; its ingress PG may now resume.
    pub(super) fn switch_departed(&mut self, out: PortId, pkt: &Packet) {
        let node = self.net.port_node[out.idx()];
        let Role::Switch(s) = self.net.roles[node.idx()] else {
            return;
        };
        let range = self.net.node_ports[node.idx()].clone();
        let ports = &self.net.ports[range.start as usize..range.end as usize];
        if self.switches[s.idx()].departed(out, pkt, ports) {
            self.xon(pkt.in_port, pkt.prio);
        }
        if self.cbfc.on() {
            self.cbfc_free(pkt.in_port, pkt);
        }
    }

    pub(super) fn on_arrive(&mut self, p: PortId) {
        let Some((pkt, next)) = self.net.links[p.idx()].arrive(&mut self.net.pool, self.now) else {
            return;
        };
        if let Some(at) = next {
            self.schedule(at, Event::Arrive(p));
        }
        self.totals.packet_hops += 1;
        let q = self.net.peer[p.idx()];
        let bad = self.net.links[p.idx()].corrupts(pkt.frame);
        let mut pkt = pkt;
        if self.llr_port(p) {
            let l = self.net.llr[p.idx()].as_mut().expect("an LLR port");
            let seq = l.wire.pop_front().unwrap_or(crate::llr::NONE);
            if pkt.kind == Kind::LlrCtl {
                // An ordered set, not a frame: no port or total counts it.
                if !bad {
                    self.mirror(q, false, &pkt);
                }
                return self.on_llr_ctl(p, q, &pkt, bad);
            }
            if seq != crate::llr::NONE {
                // Numbered: LLR decides (a corrupted one is discarded here, replayed later).
                match self.llr_receive(p, q, pkt, seq, bad) {
                    Some(accepted) => pkt = accepted,
                    None => return,
                }
            }
        }
        if bad {
            self.net.ports[q.idx()].counters.drops_link_error += 1;
            self.net.ports[q.idx()].counters.count_wire_loss(&pkt);
            if self.cbfc.on() {
                self.cbfc_free(q, &pkt); // a bad FCS: the receiver returns its credits
            }
            self.drop(pkt, DropReason::LinkError, q);
            return;
        }
        self.mirror(q, false, &pkt);
        if pkt.kind == Kind::Pause {
            self.totals.delivered_packets += 1;
            self.totals.delivered_bytes += pkt.frame as u64;
            self.on_pause_frame(q, &pkt);
            return;
        }
        if pkt.kind == Kind::LinkCredit {
            return self.on_link_credit(q, &pkt);
        }
        if self.cbfc.on() {
            self.cbfc_arrived(q, &pkt);
        }
        let node = self.net.port_node[q.idx()];
        match self.net.roles[node.idx()] {
            Role::Host(h) if pkt.dst == h => self.host_receive(q, h, pkt),
            Role::Host(_) => {
                if self.cbfc.on() {
                    self.cbfc_free(q, &pkt); // a relaying NIC takes it at line rate
                }
                self.forward_at_host(node, pkt)
            }
            Role::Switch(s) => self.switch_receive(s, node, q, pkt),
        }
    }

    /// A switchless ring: a host relays a packet that is not its own.
    fn forward_at_host(&mut self, node: NodeId, pkt: Packet) {
        let Some(out) = self.net.router.ecmp(node, pkt.flow, pkt.dst, pkt.entropy) else {
            self.drop(pkt, DropReason::NoRoute, PortId::NONE);
            return;
        };
        self.net.ports[out.idx()].enqueue(&mut self.net.pool, pkt);
        self.start_tx(out);
    }

    /// Switch `s` (node `node`) took a frame in on `in_port`: it decides; the run accounts the
    /// trim or drop, asserts PFC and starts the egress.
    fn switch_receive(&mut self, s: SwitchId, node: NodeId, in_port: PortId, mut pkt: Packet) {
        self.switches[s.idx()].classify(&mut pkt);
        if self.wd.acting() {
            // A PFC watchdog storm on the arrival port's priority: counted, perhaps dropped.
            match self.wd_ingress(in_port, pkt) {
                Some(p) => pkt = p,
                None => return,
            }
        }
        self.totals.int_bytes += classify::int_ingress(&mut self.net.int, &mut pkt);
        let range = self.net.node_ports[node.idx()].clone();
        let a = self.switches[s.idx()].receive(
            self.variant.switch_of(s.idx()),
            self.now,
            in_port,
            &mut pkt,
            &mut self.net.ports[range.start as usize..range.end as usize],
            &mut self.net.pool,
            &mut self.net.router,
        );
        if let Some((out, cut)) = a.trimmed {
            self.totals.trimmed += 1;
            self.totals.trimmed_bytes += cut as u64;
            self.log(
                out,
                &pkt,
                crate::telemetry::Trace::Trim,
                "queue over the trim threshold or full",
            );
        }
        if let Some((out, head, cut)) = a.tail_trimmed {
            self.totals.trimmed += 1;
            self.totals.trimmed_bytes += cut as u64;
            self.log(
                out,
                &head,
                crate::telemetry::Trace::Trim,
                "cut at the queue's tail to admit an arrival",
            );
        }
        match a.verdict {
            Verdict::Dropped { reason, at, adequate } => {
                // A watchdog that disabled PFC on the arrival port made the priority lossy.
                if adequate && !self.wd.is_stormed(in_port, pkt.prio) {
                    self.totals.lossless_drops_adequate += 1;
                }
                if self.cbfc.on() {
                    self.cbfc_free(in_port, &pkt);
                }
                self.drop(pkt, reason, at);
            }
            Verdict::Queued { out, xoff, marked } => {
                if marked {
                    self.totals.ecn_marked += 1;
                }
                if self.wd.acting() && self.wd_egress(out, pkt.prio) {
                    return;
                }
                if xoff && !self.wd.is_stormed(in_port, pkt.prio) {
                    self.xoff(in_port, pkt.prio);
                }
                self.paths.forwarded(in_port, out, &pkt, self.now);
                self.start_tx(out);
            }
        }
    }

    /// A fault changes the cable between two nodes.
    pub(super) fn on_fault(&mut self, i: usize) {
        use crate::fault::Action;
        let f = self.faults[i];
        let Some(p) = self.net.port_between(f.a, f.b, 0) else {
            return;
        };
        let q = self.net.peer[p.idx()];
        match f.action {
            Action::Down | Action::Up => {
                let up = f.action == Action::Up;
                self.net.port_up[p.idx()] = up;
                self.net.port_up[q.idx()] = up;
                for end in [p, q] {
                    self.net.links[end.idx()].set_up(up, self.now);
                }
                if !up {
                    for end in [p, q] {
                        let to = self.net.peer[end.idx()];
                        for pkt in self.net.links[end.idx()].cut(&mut self.net.pool) {
                            let pkt = match self.llr_port(end) {
                                true => match self.llr_cut(end, pkt) {
                                    Some(pkt) => pkt,
                                    None => continue,
                                },
                                false => pkt,
                            };
                            if pkt.kind != Kind::LlrCtl {
                                self.net.ports[to.idx()].counters.count_wire_loss(&pkt);
                            }
                            self.drop(pkt, DropReason::LinkDown, end);
                        }
                    }
                    // LLR flushes its buffers, or keeps them for `pcs_lost_timeout`.
                    for end in [p, q] {
                        if self.llr_port(end) {
                            self.llr_down(end);
                        }
                    }
                } else {
                    // The link trains again: LLR replays what it kept, and each direction's
                    // credits are re-initialised.
                    for end in [p, q] {
                        if self.llr_port(end) {
                            self.llr_up(end);
                        }
                        self.cbfc_resync(end);
                    }
                }
                self.schedule(self.now + self.variant.switch.failover, Event::Reroute);
                self.start_tx(p);
                self.start_tx(q);
            }
            Action::Rate(r) => {
                self.net.ports[p.idx()].rate = r;
                self.net.ports[q.idx()].rate = r;
            }
            Action::PfcStorm(prio, on) => self.pfc_storm(p, prio, on),
        }
    }
}
