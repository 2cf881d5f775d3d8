//! The host side of a run: flows start, the NIC's scheduler hands its port the next data
//! packet (pacing and the retransmission timer), frames reach the host through its receive
//! buffer and go to the flow's transport (`transport.rs`), control frames go back out.

use super::{Event, Sim};
use crate::cc::api::CongestionControl;
use crate::ids::{FlowId, HostId, PortId};
use crate::network::Role;
use crate::nic::protocol::Expiry;
use crate::nic::rx::Admit;
use crate::nic::send::{Next, SendCtx, send};
use crate::nic::{Protocol, Sched};
use crate::packet::{Kind, Packet};
use sim_core::{Duration, Time};

impl Sim<'_> {
    pub(super) fn on_flow_start(&mut self, f: FlowId) {
        if let Some(d) = self.local_time(f) {
            // GPU to GPU inside a server: NVLink, not the NICs.
            self.flows[f.idx()].started = Some(self.now);
            self.schedule(self.now + d, Event::LocalDone(f));
            return;
        }
        let flow = &self.flows[f.idx()];
        let (src, dst, entropy) = (flow.spec.src, flow.spec.dst, flow.entropy);
        let node = self.net.host_node[src.idx()];
        let Some(port) = self.net.router.ecmp(node, f, dst, entropy) else {
            return;
        };
        let line_rate = self.net.ports[port.idx()].rate;
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        let start = crate::cc::sender::Start {
            flow: f.idx(),
            host: src.idx(),
            line_rate,
            mtu: flow.mtu(),
            size: flow.spec.size,
            now,
        };
        let config = self
            .variant
            .nic
            .cc_for(self.variant.nic.transport_of(flow.spec.prio));
        flow.cc = self.senders.build(config, &start);
        flow.port = port;
        flow.next_tx = now;
        flow.started = Some(now);
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

    /// Make the next data packet host `h` sends on `p` in the port's slot, if any flow may
    /// send.
    pub(super) fn next_data(&mut self, h: HostId, p: PortId) -> bool {
        let port = &self.net.ports[p.idx()];
        let paused = port.pause.mask(self.now) | port.starved;
        let line_rate = self.net.ports[p.idx()].rate;
        let ack_bytes = self.variant.nic.ack_bytes.0;
        loop {
            let flows = &self.flows;
            let current = |f: FlowId, t: Time| {
                let fl = &flows[f.idx()];
                (fl.sched == Sched::Sleeping && fl.next_tx == t).then_some(fl.spec.prio)
            };
            let Some(f) = self.nics[h.idx()].next_ready(p.0, self.now, paused, current) else {
                return false;
            };
            let now = self.now;
            let flow = &mut self.flows[f.idx()];
            flow.sched = Sched::Idle;
            if !flow.can_send() {
                continue;
            }
            let prio = flow.spec.prio;
            let mut cx = SendCtx {
                now,
                line_rate,
                ce_share: self.variant.nic.ce_share,
                ack_bytes,
                timers: &self.timers,
                int: &mut self.net.int,
            };
            let slot = self.net.ports[p.idx()].stage_slot();
            let sent = send(flow, f, &mut cx, slot);
            match sent.next {
                Next::Ready => self.nics[h.idx()].make_ready(p.0, prio, f),
                Next::Sleep(at) => self.nics[h.idx()].sleep(p.0, f, at),
                Next::Wait => {}
            }
            if let Some(at) = sent.rto {
                self.schedule(at, Event::Rto(f));
            }
            self.totals.ecn_marked += u64::from(sent.ce_marked);
            self.arm_credit_wait(f);
            self.host_counters[h.idx()].data_packets_sent += 1;
            self.totals.injected_packets += 1;
            self.totals.injected_bytes += sent.frame as u64;
            return true;
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
        let (prio, lossless) = (pkt.prio, self.variant.pfc.mask().contains(pkt.prio));
        if self.rx[q.idx()].is_none() {
            if self.cbfc.on() {
                self.cbfc_free(q, &pkt); // the NIC takes it at line rate
            }
            return self.deliver(h, pkt);
        }
        let Some(rx) = &mut self.rx[q.idx()] else {
            return self.deliver(h, pkt);
        };
        match rx.admit(&mut self.net.pool, pkt, lossless) {
            Admit::Refused(pkt) => {
                if self.cbfc.on() {
                    self.cbfc_free(q, &pkt);
                }
                self.net.ports[q.idx()].counters.count_rx_discard(prio as usize);
                if lossless {
                    self.totals.lossless_drops_adequate += 1;
                }
                self.drop(pkt, crate::drop::DropReason::NicRxFull, q);
            }
            Admit::Queued { xoff } => {
                if !rx.drain.is_busy() {
                    self.start_rx(q);
                }
                if xoff && !self.cbfc.is_vc(prio) && !self.net.ports[q.idx()].xoff.mask.contains(prio) {
                    self.xoff(q, prio);
                }
            }
        }
    }

    fn start_rx(&mut self, q: PortId) {
        let now = self.now;
        let Some(rx) = &mut self.rx[q.idx()] else { return };
        if let Some(pkt) = rx.drain.dequeue(&mut self.net.pool, now) {
            let d = rx.drain.begin_tx(pkt, now);
            self.schedule(now + d, Event::RxDone(q));
        }
    }

    /// The host took the head frame of port `q`'s receive buffer.
    pub(super) fn on_rx_done(&mut self, q: PortId) {
        let Some(rx) = &mut self.rx[q.idx()] else { return };
        let pkt = rx.drain.end_tx();
        // Only PFC's priorities pause (a CBFC one never does).
        let resume = rx.may_resume();
        let Role::Host(h) = self.net.roles[self.net.port_node[q.idx()].idx()] else {
            return;
        };
        self.start_rx(q);
        if self.cbfc.on() {
            self.cbfc_free(q, &pkt);
        }
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
        match pkt.kind {
            Kind::Data => self.on_data(h, pkt),
            Kind::Ack | Kind::Nak => self.on_feedback(h, &pkt),
            Kind::Cnp => self.on_cnp(h, &pkt),
            Kind::Credit if pkt.dst == self.flows[pkt.flow.idx()].spec.dst => self.on_rts(h, &pkt),
            Kind::Credit => self.on_credit(&pkt),
            Kind::Probe => self.on_probe(h, &pkt),
            Kind::Pause | Kind::LinkCredit | Kind::LlrCtl => {}
        }
    }

    /// The retransmission timer of `f` fired (lazily re-armed by ACK progress). It acts only
    /// when it has data to resend: RoCEv2 goes back to the last ACK, UET resends what has been
    /// out for an RTO; the flow counts the timeout when that resend leaves. A UET flow with nothing in flight (waiting for credit) leaves
    /// that to its credit wait; one that times out too often without progress gives up.
    pub(super) fn on_rto(&mut self, f: FlowId) {
        let now = self.now;
        let t = self.timers;
        let flow = &mut self.flows[f.idx()];
        flow.rto_pending = false;
        if flow.sender_done.is_some() || flow.gave_up || !(flow.outstanding() || flow.has_work()) {
            return;
        }
        // Each transport's own timeout: RoCEv2's `local_ack_timeout` (a QP retries at that
        // timeout, IBA 9.7.6.1.3), UET's adaptive one.
        let rto = flow.rto(flow.proto.rto_base(&t), t.rto_max);
        let due = flow.rto_due(rto);
        if now < due {
            flow.rto_pending = true;
            self.schedule(due, Event::Rto(f));
            return;
        }
        let src = flow.spec.src;
        let (core, proto) = flow.split();
        let lost = match proto.on_timeout(core, now, rto, t.rto_retries) {
            Expiry::Idle => return,
            Expiry::GaveUp => {
                self.host_counters[src.idx()].local_ack_timeout_err += 1;
                return;
            }
            Expiry::Resend { lost } => lost,
        };
        flow.cc.on_timeout(now, lost);
        // Counted in `timeouts` when a resend leaves (`FlowCore::data_packet`).
        flow.timed_out = true;
        self.host_counters[src.idx()].local_ack_timeout_err += 1;
        let rto = flow.rto(flow.proto.rto_base(&t), t.rto_max);
        flow.rto_pending = true;
        flow.rto_deadline = now + rto;
        self.schedule(now + rto, Event::Rto(f));
        self.request_credit_now(f);
        self.activate(f);
    }

    /// RCCC: a sender that finds itself out of credit with data to send starts waiting.
    pub(super) fn arm_credit_wait(&mut self, f: FlowId) {
        let (now, base) = (self.now, self.timers.credit);
        let flow = &mut self.flows[f.idx()];
        if !flow.proto.credit_blocked(&flow.core) {
            return;
        }
        let Some(end) = flow.proto.credit_wait_ends(base, now) else {
            return;
        };
        if !flow.proto.arm_credit_timer() {
            return;
        }
        self.schedule(end.min(now + self.timers.rto_max), Event::CreditWait(f));
    }

    /// RCCC: data was found lost while the sender has no credit to resend it: ask the
    /// receiver now rather than after a credit wait.
    pub(super) fn request_credit_now(&mut self, f: FlowId) {
        let prio = self.variant.nic.control_prio;
        let flow = &mut self.flows[f.idx()];
        let src = flow.spec.src;
        let (core, proto) = flow.split();
        if let Some(p) = proto.credit_request(core, f, prio) {
            self.send_control(src, p);
        }
        self.arm_credit_wait(f);
    }

    /// RCCC: flow `f`'s credit wait ended. Still out of credit and nothing granted for the
    /// whole wait, it asks the receiver again; credit that came meanwhile restarts the wait.
    pub(super) fn on_credit_wait(&mut self, f: FlowId) {
        let (now, base) = (self.now, self.timers.credit);
        let flow = &mut self.flows[f.idx()];
        let waited = flow
            .proto
            .credit_wait_ends(base, Time::ZERO)
            .is_some_and(|end| end <= now);
        flow.proto.credit_timer_fired();
        if waited {
            self.request_credit_now(f);
        } else {
            self.arm_credit_wait(f);
        }
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

impl Sim<'_> {
    /// True when flow `f` runs between two GPUs of one server (NVLink, not the fabric).
    pub fn is_local(&self, f: usize) -> bool {
        let Some((server, _)) = self.servers.as_ref() else {
            return false;
        };
        let s = &self.flows[f].spec;
        server[s.src.idx()] == server[s.dst.idx()]
    }

    /// NVLink's time for flow `f` when it runs between two GPUs of one server, else None.
    pub(super) fn local_time(&self, f: FlowId) -> Option<Duration> {
        let (server, nvlink) = self.servers.as_ref()?;
        let s = &self.flows[f.idx()].spec;
        (server[s.src.idx()] == server[s.dst.idx()]).then(|| nvlink.tx_time(s.size))
    }

    /// A flow inside one server is done: it took NVLink, not the fabric.
    pub(super) fn on_local_done(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        flow.received_bytes = flow.spec.size;
        flow.finish = Some(now);
        flow.sender_done = Some(now);
        self.completed(f);
    }
}
