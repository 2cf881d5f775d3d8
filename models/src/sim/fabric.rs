//! The fabric side of a run: ports, links, switch forwarding and buffering, ECN, PFC.

use super::FLOWLET_SLOTS;
use super::{Event, Sim};
use crate::drop::DropReason;
use crate::ecn::MarkAt;
use crate::ids::{FlowId, HostId, NodeId, PortId, SwitchId};
use crate::network::Role;
use crate::packet::{Charge, Kind, PFC_FRAME, Packet, flags};
use crate::routing::pick;
use crate::switch::Routing;
use crate::switch::trim::trimmable;
use rand::RngExt;

impl Sim<'_> {
    /// The port a packet of `flow` to `dst` leaves `node` by: ECMP over the equal-cost set.
    #[inline]
    pub(super) fn egress(&self, node: NodeId, flow: FlowId, dst: HostId, entropy: u16) -> Option<PortId> {
        let hops = self.net.routes.next_hops(node, dst);
        match hops.len() {
            0 if !self.net.routes.has_table(node) => Some(PortId(self.net.node_ports[node.idx()].start)),
            0 => None,
            1 => Some(hops[0]),
            n => Some(hops[pick(self.hashers[node.idx()].hash(flow, dst, entropy), n)]),
        }
    }

    /// The egress a switch picks for `pkt`: ECMP, or adaptive routing to the least-loaded
    /// eligible port (per packet, or per flowlet).
    #[inline]
    fn route(&mut self, node: NodeId, sw: SwitchId, pkt: &Packet) -> Option<PortId> {
        let Routing::Adaptive { flowlet_gap } = self.variant.switch.routing else {
            return self.egress(node, pkt.flow, pkt.dst, pkt.entropy);
        };
        let hops = self.net.routes.next_hops(node, pkt.dst);
        if hops.len() <= 1 || pkt.kind == Kind::Pause {
            return hops.first().copied();
        }
        let hash = self.hashers[node.idx()].hash(pkt.flow, pkt.dst, pkt.entropy);
        let slot = (hash % FLOWLET_SLOTS as u64) as usize;
        if let Some(gap) = flowlet_gap {
            let (port, last) = self.flowlets[sw.idx()][slot];
            if port != u32::MAX && self.now < last + gap && hops.contains(&PortId(port)) {
                self.flowlets[sw.idx()][slot].1 = self.now;
                return Some(PortId(port));
            }
        }
        // Least queued bytes at the packet's priority; paused ports last; ties by hash.
        let load = |p: &PortId| {
            let port = &self.net.ports[p.idx()];
            (
                port.pause.is_paused(pkt.prio as usize, self.now),
                port.queued_bytes(pkt.prio) + port.is_busy() as u64,
            )
        };
        let start = pick(hash, hops.len());
        let best = (0..hops.len())
            .map(|i| hops[(start + i) % hops.len()])
            .min_by_key(load)?;
        if flowlet_gap.is_some() {
            self.flowlets[sw.idx()][slot] = (best.0, self.now);
        }
        Some(best)
    }

    /// Start the next transmission on an idle port: control frames, then queued frames by
    /// unpaused strict priority, then (on a host) the NIC's next data packet.
    pub(super) fn kick(&mut self, p: PortId) {
        if self.net.ports[p.idx()].is_busy() {
            return;
        }
        let node = self.net.port_node[p.idx()];
        let role = self.net.roles[node.idx()];
        let pkt = match self.net.ports[p.idx()].dequeue(&mut self.net.pool, self.now) {
            Some(mut pkt) => {
                if matches!(role, Role::Switch(_)) {
                    self.mark_ecn(p, &mut pkt, MarkAt::Dequeue);
                }
                pkt
            }
            None => match role {
                Role::Host(h) => match self.next_data(h, p) {
                    Some(pkt) => pkt,
                    None => {
                        if let Some(at) = self.nics[h.idx()].wake_needed(p.0) {
                            self.schedule(at, Event::NicWake(p));
                        }
                        return;
                    }
                },
                Role::Switch(_) => return,
            },
        };
        self.mirror(p, true, &pkt);
        let d = self.net.ports[p.idx()].begin_tx(pkt);
        self.schedule(self.now + d, Event::TxDone(p));
    }

    /// WRED-ECN at `p`'s egress queue for the packet's priority (switches only).
    #[inline]
    fn mark_ecn(&mut self, p: PortId, pkt: &mut Packet, at: MarkAt) {
        let Some(ecn) = &self.variant.switch.ecn else {
            return;
        };
        if ecn.mark_at != at
            || pkt.kind != Kind::Data
            || !pkt.has(flags::ECT)
            || pkt.has(flags::CE | flags::TRIMMED)
        {
            return;
        }
        let depth = self.net.ports[p.idx()].queued_bytes(pkt.prio);
        let prob = ecn.probability(depth);
        if prob > 0.0 && (prob >= 1.0 || self.wred_rng.random_bool(prob)) {
            pkt.flags |= flags::CE;
            self.net.ports[p.idx()].counters.ecn_marked += 1;
            self.totals.ecn_marked += 1;
        }
    }

    pub(super) fn on_tx_done(&mut self, p: PortId) {
        let pkt = self.net.ports[p.idx()].end_tx();
        if pkt.charge != Charge::None {
            self.release(p, &pkt);
        }
        if !self.net.port_up[p.idx()] {
            self.drop(pkt, DropReason::LinkDown, p);
        } else {
            self.net.ports[p.idx()].count_tx(&pkt);
            if let Some(at) = self.net.links[p.idx()].send(&mut self.net.pool, self.now, pkt) {
                self.schedule(at, Event::Arrive(p));
            }
        }
        self.kick(p);
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
                if !up {
                    for end in [p, q] {
                        for pkt in self.net.links[end.idx()].cut(&mut self.net.pool) {
                            self.drop(pkt, DropReason::LinkDown, end);
                        }
                    }
                }
                self.schedule(self.now + self.variant.switch.failover, Event::Reroute);
                self.kick(p);
                self.kick(q);
            }
            Action::Rate(r) => {
                self.net.ports[p.idx()].rate = r;
                self.net.ports[q.idx()].rate = r;
            }
        }
    }

    pub(super) fn on_arrive(&mut self, p: PortId) {
        let Some((mut pkt, next)) = self.net.links[p.idx()].arrive(&mut self.net.pool, self.now) else {
            return;
        };
        if let Some(at) = next {
            self.schedule(at, Event::Arrive(p));
        }
        self.totals.packet_hops += 1;
        let q = self.net.peer[p.idx()];
        let loss = self.net.links[p.idx()].loss_of(pkt.frame);
        if loss > 0.0 && self.loss_rng.random_bool(loss) {
            self.net.ports[q.idx()].counters.drops_link_error += 1;
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
        let node = self.net.port_node[q.idx()];
        match self.net.roles[node.idx()] {
            Role::Host(h) if pkt.dst == h => self.host_receive(q, h, pkt),
            Role::Host(_) => self.forward_at_host(node, pkt),
            Role::Switch(_) => {
                pkt.in_port = q.0;
                self.switch_receive(node, q, pkt);
            }
        }
    }

    /// A switchless ring: a host relays a packet that is not its own.
    fn forward_at_host(&mut self, node: NodeId, pkt: Packet) {
        let Some(out) = self.egress(node, pkt.flow, pkt.dst, pkt.entropy) else {
            self.drop(pkt, DropReason::NoRoute, PortId(u32::MAX));
            return;
        };
        self.net.ports[out.idx()].enqueue(&mut self.net.pool, pkt);
        self.kick(out);
    }

    /// Route, admit to the shared buffer (or trim, or drop with a reason), enqueue, assert PFC.
    fn switch_receive(&mut self, node: NodeId, in_port: PortId, mut pkt: Packet) {
        let Role::Switch(s) = self.net.roles[node.idx()] else {
            unreachable!()
        };
        let Some(out) = self.route(node, s, &pkt) else {
            self.drop(pkt, DropReason::NoRoute, in_port);
            return;
        };
        let base = self.net.node_ports[node.idx()].start;
        let (inl, outl) = ((in_port.0 - base) as usize, (out.0 - base) as usize);
        let trim = self.variant.switch.trim.as_ref().filter(|_| trimmable(&pkt));
        let mut admitted = None;
        if let Some(t) = trim {
            if !t.over_threshold(self.net.ports[out.idx()].queued_bytes(pkt.prio)) {
                admitted = self.buffers.mmus[s.idx()]
                    .admit(inl, outl, pkt.prio, pkt.frame)
                    .ok();
            }
            if admitted.is_none() {
                // Cut to the headers and try again at the trim priority.
                let last_hop = matches!(self.net.roles[self.net.port_node[self.net.peer[out.idx()].idx()].idx()], Role::Host(h) if h == pkt.dst);
                let before = pkt.frame;
                t.trim(&mut pkt, last_hop);
                self.net.ports[out.idx()].counters.trimmed += 1;
                self.totals.trimmed += 1;
                self.totals.trimmed_bytes += before.saturating_sub(pkt.frame) as u64;
                self.log(out, &pkt, "trim", "queue over the trim threshold or full");
            }
        }
        let charge = match admitted {
            Some(c) => Ok(c),
            None => self.buffers.mmus[s.idx()].admit(inl, outl, pkt.prio, pkt.frame),
        };
        match charge {
            Ok(charge) => pkt.charge = charge,
            Err(reason) => {
                match reason {
                    DropReason::HeadroomExceeded => {
                        self.net.ports[in_port.idx()].counters.drops_headroom += 1;
                        if self.buffers.headroom_adequate[s.idx()][inl] {
                            self.totals.lossless_drops_adequate += 1;
                        }
                    }
                    _ => self.net.ports[out.idx()].counters.drops_lossy += 1,
                }
                let at = if reason == DropReason::HeadroomExceeded {
                    in_port
                } else {
                    out
                };
                self.drop(pkt, reason, at);
                return;
            }
        }
        let mmu = &self.buffers.mmus[s.idx()];
        let lossless = mmu.is_lossless(pkt.prio);
        let wants_xoff = lossless && mmu.wants_xoff(inl, pkt.prio);
        self.mark_ecn(out, &mut pkt, MarkAt::Enqueue);
        let prio = pkt.prio;
        self.net.ports[out.idx()].enqueue(&mut self.net.pool, pkt);
        if wants_xoff && self.net.ports[in_port.idx()].xoff.mask & 1 << prio == 0 {
            self.xoff(in_port, prio);
        }
        self.kick(out);
    }

    /// `pkt` left switch egress `out`: free its cells; its ingress PG may now resume.
    fn release(&mut self, out: PortId, pkt: &Packet) {
        let node = self.net.port_node[out.idx()];
        let Role::Switch(s) = self.net.roles[node.idx()] else {
            return;
        };
        let base = self.net.node_ports[node.idx()].start;
        let inl = (pkt.in_port - base) as usize;
        let mmu = &mut self.buffers.mmus[s.idx()];
        mmu.release(inl, (out.0 - base) as usize, pkt.prio, pkt.frame, pkt.charge);
        let in_port = PortId(pkt.in_port);
        if self.net.ports[in_port.idx()].xoff.mask & 1 << pkt.prio != 0 && mmu.allows_xon(inl, pkt.prio) {
            self.xon(in_port, pkt.prio);
        }
    }

    /// Enter XOFF on ingress `port` for `prio`: pause the peer and keep refreshing.
    pub(super) fn xoff(&mut self, port: PortId, prio: u8) {
        self.log.push(crate::telemetry::LogRow {
            time: self.now,
            port,
            prio,
            flow: u32::MAX,
            event: "xoff",
            reason: "ingress buffer over its XOFF threshold",
        });
        self.net.ports[port.idx()].xoff.enter(self.now, prio);
        self.watch_xoff(port, prio);
        self.send_pfc(port, prio, self.variant.pfc.quanta);
        let p = &mut self.net.ports[port.idx()];
        if !p.xoff.refresh_pending {
            p.xoff.refresh_pending = true;
            let at = self.now + self.variant.pfc.refresh_interval(p.rate);
            self.schedule(at, Event::PfcRefresh(port));
        }
    }

    pub(super) fn xon(&mut self, port: PortId, prio: u8) {
        self.log.push(crate::telemetry::LogRow {
            time: self.now,
            port,
            prio,
            flow: u32::MAX,
            event: "xon",
            reason: "ingress buffer drained below XON",
        });
        let storm = self.net.ports[port.idx()]
            .xoff
            .leave(self.now, prio, self.variant.pfc.watchdog);
        if let Some(start) = storm {
            self.record_storm(port, prio, start);
        }
        self.send_pfc(port, prio, 0);
    }

    /// Put a PFC frame for `prio` on `port`'s wire, ahead of all queued data.
    fn send_pfc(&mut self, port: PortId, prio: u8, quanta: u16) {
        let frame = Packet::control(
            Kind::Pause,
            FlowId(u32::MAX),
            HostId(0),
            quanta as u32,
            PFC_FRAME,
            prio,
        );
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += frame.frame as u64;
        self.totals.pfc_frames += 1;
        let p = &mut self.net.ports[port.idx()];
        p.xoff.frames[prio as usize] += 1;
        p.enqueue_control(&mut self.net.pool, frame);
        self.kick(port);
    }

    /// Refresh every XOFF still needed on `port`; resume the others.
    pub(super) fn on_pfc_refresh(&mut self, port: PortId) {
        self.net.ports[port.idx()].xoff.refresh_pending = false;
        let node = self.net.port_node[port.idx()];
        let inl = (port.0 - self.net.node_ports[node.idx()].start) as usize;
        for prio in 0..8u8 {
            if self.net.ports[port.idx()].xoff.mask & 1 << prio == 0 {
                continue;
            }
            // A switch asks its MMU; a NIC its receive buffer.
            let may_resume = match (self.net.roles[node.idx()], &self.rx[port.idx()]) {
                (Role::Switch(s), _) => self.buffers.mmus[s.idx()].allows_xon(inl, prio),
                (Role::Host(_), Some(rx)) => rx.occupancy() <= rx.xon_at,
                (Role::Host(_), None) => true,
            };
            if may_resume {
                self.xon(port, prio);
            } else {
                self.send_pfc(port, prio, self.variant.pfc.quanta);
            }
        }
        let p = &mut self.net.ports[port.idx()];
        if p.xoff.mask != 0 {
            p.xoff.refresh_pending = true;
            let at = self.now + self.variant.pfc.refresh_interval(p.rate);
            self.schedule(at, Event::PfcRefresh(port));
        }
    }

    /// A PFC frame reached port `q`: hold (or release) that priority on q's egress.
    fn on_pause_frame(&mut self, q: PortId, pkt: &Packet) {
        let pfc = &self.variant.pfc;
        let port = &mut self.net.ports[q.idx()];
        let response = pfc.response_time(port.rate);
        let end = port.pause.on_frame(
            self.now,
            pkt.prio,
            pkt.seq as u16,
            port.rate,
            response,
            pfc.watchdog,
        );
        if pkt.seq == 0 {
            self.kick(q);
        } else {
            self.schedule(end, Event::Resume(q));
        }
    }
}
