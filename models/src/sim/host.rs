//! The host side of a run: flow start, the NIC scheduler, pacing, retransmission timers,
//! and the RoCEv2 requester and responder with DCQCN. UET's handlers are in `uet.rs`.

use super::{Event, Sim};
use crate::cc::dcqcn::{CnpOutcome, ReactionPoint};
use crate::cc::nscc::Nscc;
use crate::cc::rccc::RcccSender;
use crate::flow::{Proto, Sched};
use crate::ids::{FlowId, HostId, PortId};
use crate::nic::roce::Response;
use crate::packet::{Kind, Packet, flags, roce_ack_frame, roce_cnp_frame};
use sim_core::Time;

impl Sim<'_> {
    pub(super) fn on_flow_start(&mut self, f: FlowId) {
        let flow = &self.flows[f.idx()];
        let (src, dst, entropy) = (flow.spec.src, flow.spec.dst, flow.entropy);
        let node = self.net.host_node[src.idx()];
        let Some(port) = self.egress(node, f, dst, entropy) else {
            return;
        };
        let line_rate = self.net.ports[port.idx()].rate;
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        flow.port = port;
        flow.next_tx = now;
        flow.started = Some(now);
        match &mut flow.proto {
            Proto::Roce(q) => {
                if let Some(p) = &self.dcqcn[src.idx()] {
                    q.rp = Some(ReactionPoint::new(p, line_rate, now));
                }
            }
            Proto::Uet(u) => {
                if let Some(p) = &self.nscc[src.idx()] {
                    u.cc.nscc = Some(Nscc::new(p, now));
                }
                if self.variant.nic.cc.rccc().is_some() {
                    u.cc.rccc = Some(RcccSender::new(self.uet_maxwnd[src.idx()]));
                }
            }
        }
        self.activate(f);
    }

    /// Put an idle flow that can send into its port's scheduler, and start the port.
    pub(super) fn activate(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.idx()];
        if flow.sched != Sched::Idle || !flow.can_send() || flow.port == PortId(u32::MAX) {
            return;
        }
        let (port, h) = (flow.port, flow.spec.src);
        if flow.next_tx > self.now {
            flow.sched = Sched::Sleeping;
            self.nics[h.idx()].sleep(port.0, f, flow.next_tx);
        } else {
            flow.sched = Sched::Ready;
            self.nics[h.idx()].make_ready(port.0, flow.spec.prio, f);
        }
        self.kick(port);
    }

    /// The next data packet host `h` sends on `p`, if any flow may send.
    pub(super) fn next_data(&mut self, h: HostId, p: PortId) -> Option<Packet> {
        let paused = self.net.ports[p.idx()].pause.mask(self.now);
        let line_rate = self.net.ports[p.idx()].rate;
        let ack_bytes = self.variant.nic.ack_bytes.0;
        loop {
            let flows = &self.flows;
            let current = |f: FlowId, t: Time| {
                let fl = &flows[f.idx()];
                (fl.sched == Sched::Sleeping && fl.next_tx == t).then_some(fl.spec.prio)
            };
            let f = self.nics[h.idx()].next_ready(p.0, self.now, paused, current)?;
            let now = self.now;
            let flow = &mut self.flows[f.idx()];
            flow.sched = Sched::Idle;
            if !flow.can_send() {
                continue;
            }
            let mut pkt = flow.next_packet(f, now);
            let mut rate = line_rate;
            let mtu = flow.mtu() as u64;
            match &mut flow.proto {
                Proto::Roce(q) => {
                    if let (Some(rp), Some(params)) = (&mut q.rp, &self.dcqcn[h.idx()]) {
                        rp.on_sent(params, now, pkt.wire_bytes());
                        rate = rp.rate().min(line_rate);
                    }
                }
                Proto::Uet(u) => {
                    let wire = crate::packet::uet_data_frame(mtu as u32) as u64 + 20;
                    if let Some(r) = &mut u.cc.rccc {
                        // Credit is spent and asked for in wire bytes (uet-htsim: the sender
                        // pays each packet's size; the pacer grants at 99 % of line rate).
                        r.on_sent(pkt.wire_bytes());
                        pkt.aux = r.target(u.pdc.backlog_packets() * wire, wire);
                    }
                    // Ask for an ACK at once when the sender will soon wait for one: less window
                    // is left than the receiver coalesces ACKs over, the credit is spent, the
                    // message ends, or this is a resend (uet-htsim sets AR when the window is
                    // full or credit <= 0; asking earlier keeps small windows from stalling).
                    let low_window =
                        u.cc.nscc
                            .as_ref()
                            .is_some_and(|n| (n.cwnd as u64).saturating_sub(u.pdc.inflight) < ack_bytes);
                    let no_credit = u.cc.rccc.as_ref().is_some_and(|r| r.credit() <= 0);
                    if low_window || no_credit || !u.pdc.has_work() || pkt.has(flags::RETX) {
                        pkt.flags |= flags::ACK_REQ;
                    }
                }
            }
            flow.next_tx = now + rate.tx_time(pkt.wire_bytes());
            (flow.last_tx, flow.last_wire) = (now, pkt.wire_bytes());
            if flow.can_send() {
                if rate < line_rate {
                    flow.sched = Sched::Sleeping;
                    self.nics[h.idx()].sleep(p.0, f, flow.next_tx);
                } else {
                    flow.sched = Sched::Ready;
                    self.nics[h.idx()].make_ready(p.0, flow.spec.prio, f);
                }
            }
            if !flow.rto_pending {
                flow.rto_pending = true;
                flow.rto_deadline = now + self.rto;
                self.schedule(now + self.rto, Event::Rto(f));
            }
            self.host_counters[h.idx()].data_packets_sent += 1;
            self.totals.injected_packets += 1;
            self.totals.injected_bytes += pkt.frame as u64;
            return Some(pkt);
        }
    }

    pub(super) fn on_nic_wake(&mut self, p: PortId) {
        let crate::network::Role::Host(h) = self.net.roles[self.net.port_node[p.idx()].idx()] else {
            return;
        };
        self.nics[h.idx()].woken(p.0, self.now);
        self.kick(p);
    }

    /// `pkt` reached host `h` through its port `q`: straight to the transport, or through the
    /// NIC's receive buffer when the host drains slower than the link.
    pub(super) fn host_receive(&mut self, q: PortId, h: HostId, pkt: Packet) {
        let lossless = self.variant.pfc.mask() & 1 << pkt.prio != 0;
        let Some(rx) = &mut self.rx[q.idx()] else {
            return self.deliver(h, pkt);
        };
        // Lossy frames may not use the headroom kept free for the lossless ones.
        let limit = if lossless { rx.capacity } else { rx.xoff_at };
        if rx.occupancy() + pkt.frame as u64 > limit {
            self.net.ports[q.idx()].counters.rx_discards[pkt.prio as usize] += 1;
            if lossless {
                self.totals.lossless_drops_adequate += 1;
            }
            return self.drop(pkt, crate::drop::DropReason::NicRxFull, q);
        }
        rx.drain.enqueue(&mut self.net.pool, pkt);
        let xoff = lossless && rx.occupancy() >= rx.xoff_at;
        if !rx.drain.is_busy() {
            self.start_rx(q);
        }
        if xoff && self.net.ports[q.idx()].xoff.mask & 1 << pkt.prio == 0 {
            self.xoff(q, pkt.prio);
        }
    }

    fn start_rx(&mut self, q: PortId) {
        let now = self.now;
        let Some(rx) = &mut self.rx[q.idx()] else { return };
        if let Some(pkt) = rx.drain.dequeue(&mut self.net.pool, now) {
            let d = rx.drain.begin_tx(pkt);
            self.schedule(now + d, Event::RxDone(q));
        }
    }

    /// The host took the head frame of port `q`'s receive buffer.
    pub(super) fn on_rx_done(&mut self, q: PortId) {
        let Some(rx) = &mut self.rx[q.idx()] else { return };
        let pkt = rx.drain.end_tx();
        let resume = rx.occupancy() <= rx.xon_at;
        let crate::network::Role::Host(h) = self.net.roles[self.net.port_node[q.idx()].idx()] else {
            return;
        };
        self.start_rx(q);
        if resume {
            // One buffer for every priority: below XON, all of them may resume.
            for prio in 0..8u8 {
                if self.net.ports[q.idx()].xoff.mask & 1 << prio != 0 {
                    self.xon(q, prio);
                }
            }
        }
        self.deliver(h, pkt);
    }

    /// `pkt` reached its destination host's transport.
    pub(super) fn deliver(&mut self, h: HostId, pkt: Packet) {
        self.totals.delivered_packets += 1;
        self.totals.delivered_bytes += pkt.frame as u64;
        let uet = matches!(self.flows[pkt.flow.idx()].proto, Proto::Uet(_));
        match (pkt.kind, uet) {
            (Kind::Data, false) => self.on_roce_data(h, pkt),
            (Kind::Data, true) => self.on_uet_data(h, pkt),
            (Kind::Ack | Kind::Nak, false) => self.on_roce_ack(h, &pkt),
            (Kind::Ack, true) => self.on_uet_ack(&pkt),
            (Kind::Nak, true) => self.on_uet_nack(&pkt),
            (Kind::Cnp, _) => self.on_cnp(h, &pkt),
            (Kind::Credit, _) if pkt.dst == self.flows[pkt.flow.idx()].spec.dst => self.on_rts(h, &pkt),
            (Kind::Credit, _) => self.on_credit(&pkt),
            (Kind::Pause, _) => {}
        }
    }

    /// Responder: ECN notification point, then go-back-N.
    fn on_roce_data(&mut self, h: HostId, pkt: Packet) {
        let now = self.now;
        let ack_every = self.variant.nic.ack_every;
        let flow = &mut self.flows[pkt.flow.idx()];
        let (src, packets) = (flow.spec.src, flow.packets);
        let Proto::Roce(q) = &mut flow.proto else { return };
        let c = &mut self.host_counters[h.idx()];
        let mut cnp = None;
        let mut done = false;
        if pkt.has(flags::CE) {
            flow.ecn_marked += 1;
            c.np_ecn_marked_roce_packets += 1;
            // The NP runs at the receiver with the receiver's own parameters.
            if let Some(params) = &self.dcqcn[h.idx()] {
                if q.np.on_ce(params, now) {
                    flow.cnps_sent += 1;
                    self.totals.cnps += 1;
                    c.np_cnp_sent += 1;
                    let mut p =
                        Packet::control(Kind::Cnp, pkt.flow, src, 0, roce_cnp_frame(), params.cnp_prio);
                    p.entropy = pkt.entropy;
                    cnp = Some(p);
                }
            }
        }
        let (response, accepted) = q.receive(pkt.seq, pkt.is_last(), packets, ack_every);
        if accepted {
            flow.received_bytes += pkt.payload as u64;
            self.totals.delivered_payload += pkt.payload as u64;
            if q.expected == packets {
                flow.finish = Some(now);
                done = true;
            }
        } else if pkt.seq >= q.expected {
            flow.out_of_sequence += 1;
            c.out_of_sequence += 1;
        } else {
            flow.duplicates += 1;
        }
        let reply = match response {
            Response::None => None,
            Response::Ack(psn) => {
                c.acks_sent += 1;
                Some((Kind::Ack, psn))
            }
            Response::Nak(psn) => {
                c.naks_sent += 1;
                Some((Kind::Nak, psn))
            }
        };
        let reply = reply.map(|(kind, psn)| {
            let mut p = Packet::control(kind, pkt.flow, src, psn, roce_ack_frame(), pkt.prio);
            (p.sent_at, p.entropy) = (pkt.sent_at, pkt.entropy);
            p
        });
        for p in cnp.into_iter().chain(reply) {
            self.send_control(h, p);
        }
        if done {
            self.completed(pkt.flow);
        }
    }

    /// Requester: an ACK or NAK arrived.
    fn on_roce_ack(&mut self, h: HostId, pkt: &Packet) {
        let now = self.now;
        let flow = &mut self.flows[pkt.flow.idx()];
        let nak = pkt.kind == Kind::Nak;
        if nak {
            flow.naks_received += 1;
            self.host_counters[h.idx()].packet_seq_err += 1;
        }
        flow.acks_received += 1;
        let packets = flow.packets;
        let Proto::Roce(q) = &mut flow.proto else { return };
        let rewinds = nak && pkt.seq < q.next_seq;
        if q.on_ack(pkt.seq, nak) || rewinds {
            flow.rto_deadline = now + self.rto;
            if q.acked == packets {
                flow.sender_done = Some(now);
            }
        }
        self.activate(pkt.flow);
    }

    /// Reaction point: a CNP arrived for one of this host's QPs.
    fn on_cnp(&mut self, h: HostId, pkt: &Packet) {
        let now = self.now;
        let Some(params) = &self.dcqcn[h.idx()] else {
            return;
        };
        let flow = &mut self.flows[pkt.flow.idx()];
        let Proto::Roce(q) = &mut flow.proto else { return };
        let Some(rp) = &mut q.rp else { return };
        match rp.on_cnp(params, now) {
            CnpOutcome::Handled => {
                flow.cnp_handled += 1;
                self.host_counters[h.idx()].rp_cnp_handled += 1;
            }
            CnpOutcome::Ignored => {
                flow.cnp_ignored += 1;
                self.host_counters[h.idx()].rp_cnp_ignored += 1;
            }
        }
        self.arm_cc_timer(pkt.flow);
    }

    fn arm_cc_timer(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.idx()];
        if flow.cc_timer_pending {
            return;
        }
        if let Some(at) = flow.rp().and_then(|rp| rp.timer_due()) {
            flow.cc_timer_pending = true;
            self.schedule(at.max(self.now), Event::CcTimer(f));
        }
    }

    pub(super) fn on_cc_timer(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        flow.cc_timer_pending = false;
        let h = flow.spec.src;
        if let (Some(rp), Some(params)) = (flow.rp(), &self.dcqcn[h.idx()]) {
            rp.on_timer(params, now);
        }
        if flow.sender_done.is_none() {
            self.arm_cc_timer(f);
        }
        self.repace(f);
    }

    /// The rate of `f` went up: a flow sleeping on the old, slower pace may go earlier
    /// (a hardware rate limiter applies a new rate at once).
    fn repace(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        let line = self.net.ports[flow.port.idx()].rate;
        let (last_tx, last_wire, next_tx, sched) = (flow.last_tx, flow.last_wire, flow.next_tx, flow.sched);
        let Some(rp) = flow.rp() else { return };
        if sched != Sched::Sleeping {
            return;
        }
        let at = (last_tx + rp.rate().min(line).tx_time(last_wire)).max(now);
        if at < next_tx {
            flow.next_tx = at;
            self.nics[flow.spec.src.idx()].sleep(flow.port.0, f, at);
            let port = flow.port;
            self.kick(port);
        }
    }

    /// The retransmission timer of `f` fired (lazily re-armed by ACK progress).
    pub(super) fn on_rto(&mut self, f: FlowId) {
        let (now, rto) = (self.now, self.rto);
        let flow = &mut self.flows[f.idx()];
        flow.rto_pending = false;
        if flow.sender_done.is_some() || !(flow.outstanding() || flow.has_work()) {
            return;
        }
        let due = flow.rto_due(rto);
        if now < due {
            flow.rto_pending = true;
            self.schedule(due, Event::Rto(f));
            return;
        }
        let lost = flow.on_timeout(now, rto);
        let wire = crate::packet::uet_data_frame(flow.mtu()) as u64 + 20;
        let mut rts = None;
        if let Proto::Uet(u) = &mut flow.proto {
            if let (Some(n), Some(p)) = (&mut u.cc.nscc, &self.nscc[flow.spec.src.idx()]) {
                n.on_timeout(p, lost);
            }
            // Out of credit with nothing in flight: ask the receiver again (an RTS).
            if let Some(r) = &u.cc.rccc {
                if r.credit() <= 0 {
                    let mut p = Packet::control(
                        Kind::Credit,
                        f,
                        flow.spec.dst,
                        0,
                        crate::packet::UET_CREDIT_FRAME,
                        self.variant.nic.control_prio,
                    );
                    p.aux = r.target(u.pdc.backlog_packets() * wire, wire);
                    rts = Some(p);
                }
            }
        }
        self.host_counters[flow.spec.src.idx()].local_ack_timeout_err += 1;
        flow.rto_pending = true;
        flow.rto_deadline = now + rto;
        self.schedule(now + rto, Event::Rto(f));
        if let Some(p) = rts {
            let src = self.flows[f.idx()].spec.src;
            self.send_control(src, p);
        }
        self.activate(f);
    }

    /// Queue a control frame (ACK, NAK, CNP, credit) at host `h` toward its destination.
    pub(super) fn send_control(&mut self, h: HostId, pkt: Packet) {
        let node = self.net.host_node[h.idx()];
        let Some(port) = self.egress(node, pkt.flow, pkt.dst, pkt.entropy) else {
            return;
        };
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += pkt.frame as u64;
        self.net.ports[port.idx()].enqueue(&mut self.net.pool, pkt);
        self.kick(port);
    }
}
