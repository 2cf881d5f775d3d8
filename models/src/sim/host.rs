//! The host side of a run: flows start, the NIC's scheduler hands its port the next data
//! packet (pacing and the retransmission timer), frames reach the host through its receive
//! buffer and go to the flow's transport (`transport.rs`), control frames go back out.

use super::{Event, Sim};
use crate::ids::{FlowId, HostId, PortId};
use crate::network::Role;
use crate::nic::{Proto, Sched, roce, uet};
use crate::packet::{Kind, Packet};
use sim_core::Time;

impl Sim<'_> {
    pub(super) fn on_flow_start(&mut self, f: FlowId) {
        let flow = &self.flows[f.idx()];
        let (src, dst, entropy) = (flow.spec.src, flow.spec.dst, flow.entropy);
        let node = self.net.host_node[src.idx()];
        let Some(port) = self.net.router.ecmp(node, f, dst, entropy) else {
            return;
        };
        let line_rate = self.net.ports[port.idx()].rate;
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        flow.port = port;
        flow.next_tx = now;
        flow.started = Some(now);
        match &flow.proto {
            Proto::Roce(_) => roce::on_start(
                flow,
                self.variant.resolved.dcqcn[src.idx()].as_ref(),
                line_rate,
                now,
            ),
            Proto::Uet(_) => {
                let rccc = self.variant.nic.cc.rccc().map(|_| self.uet_maxwnd[src.idx()]);
                uet::on_start(flow, self.nscc[src.idx()].as_ref(), rccc, now);
            }
        }
        self.activate(f);
    }

    /// Put an idle flow that can send into its port's scheduler, and start the port.
    pub(super) fn activate(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.idx()];
        if flow.sched != Sched::Idle || !flow.can_send() || flow.port.is_none() {
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
        self.start_tx(port);
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
            let rate = match &flow.proto {
                Proto::Roce(_) => {
                    let dcqcn = self.variant.resolved.dcqcn[h.idx()].as_ref();
                    roce::on_sent(flow, dcqcn, now, pkt.wire_bytes(), line_rate)
                }
                Proto::Uet(_) => {
                    uet::on_sent(flow, &mut pkt, ack_bytes);
                    line_rate
                }
            };
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

    /// Port `p` of host `h` has nothing to send: wake it when its next rate-limited flow may.
    pub(super) fn nic_idle(&mut self, h: HostId, p: PortId) {
        if let Some(at) = self.nics[h.idx()].wake_needed(p.0) {
            self.schedule(at, Event::NicWake(p));
        }
    }

    pub(super) fn on_nic_wake(&mut self, p: PortId) {
        let Role::Host(h) = self.net.roles[self.net.port_node[p.idx()].idx()] else {
            return;
        };
        self.nics[h.idx()].woken(p.0, self.now);
        self.start_tx(p);
    }

    /// `pkt` reached host `h` through its port `q`: straight to the transport, or through the
    /// NIC's receive buffer when the host drains slower than the link.
    pub(super) fn host_receive(&mut self, q: PortId, h: HostId, pkt: Packet) {
        let lossless = self.variant.pfc.mask().contains(pkt.prio);
        let Some(rx) = &mut self.rx[q.idx()] else {
            return self.deliver(h, pkt);
        };
        // Lossy frames may not use the headroom kept free for the lossless ones.
        let limit = if lossless {
            rx.spec.capacity
        } else {
            rx.spec.xoff_at
        };
        if rx.occupancy() + pkt.frame as u64 > limit {
            self.net.ports[q.idx()].counters.rx_discards[pkt.prio as usize] += 1;
            if lossless {
                self.totals.lossless_drops_adequate += 1;
            }
            return self.drop(pkt, crate::drop::DropReason::NicRxFull, q);
        }
        rx.drain.enqueue(&mut self.net.pool, pkt);
        let xoff = lossless && rx.occupancy() >= rx.spec.xoff_at;
        if !rx.drain.is_busy() {
            self.start_rx(q);
        }
        if xoff && !self.net.ports[q.idx()].xoff.mask.contains(pkt.prio) {
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
        let resume = rx.occupancy() <= rx.spec.xon_at;
        let Role::Host(h) = self.net.roles[self.net.port_node[q.idx()].idx()] else {
            return;
        };
        self.start_rx(q);
        if resume {
            // One buffer for every priority: below XON, all of them may resume.
            for prio in self.net.ports[q.idx()].xoff.mask.iter() {
                self.xon(q, prio);
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
        let src = flow.spec.src;
        let prio = self.variant.nic.control_prio;
        let rts = uet::on_timeout(flow, f, self.nscc[src.idx()].as_ref(), lost, prio);
        self.host_counters[src.idx()].local_ack_timeout_err += 1;
        let flow = &mut self.flows[f.idx()];
        flow.rto_pending = true;
        flow.rto_deadline = now + rto;
        self.schedule(now + rto, Event::Rto(f));
        if let Some(p) = rts {
            self.send_control(src, p);
        }
        self.activate(f);
    }

    /// Queue a control frame (ACK, NAK, CNP, credit) at host `h` toward its destination.
    pub(super) fn send_control(&mut self, h: HostId, pkt: Packet) {
        let node = self.net.host_node[h.idx()];
        let Some(port) = self.net.router.ecmp(node, pkt.flow, pkt.dst, pkt.entropy) else {
            return;
        };
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += pkt.frame as u64;
        self.net.ports[port.idx()].enqueue(&mut self.net.pool, pkt);
        self.start_tx(port);
    }
}
