//! The transports' handlers in a run: each calls the handler of `crate::nic::roce` or
//! `crate::nic::uet` with the host's parameters and counters, then sends what it returned,
//! counts what it delivered, and starts what waited for a completed flow.

use super::{Event, Sim};
use crate::cc::api::{Ack, CnpOutcome, CongestionControl};
use crate::cc::rccc::RcccConfig;
use crate::ids::{FlowId, HostId};
use crate::nic::{Sched, roce, uet};
use crate::packet::Packet;

/// Tell `flow`'s congestion control about an ACK its transport has taken; `before`: bytes
/// acknowledged before it.
fn ack_cc(
    flow: &mut crate::nic::Flow,
    before: u64,
    now: sim_core::Time,
    pkt: &Packet,
    int: &[crate::int::IntHop],
) {
    let acked = flow.acked_bytes();
    let ack = Ack {
        now,
        newly_acked: acked.saturating_sub(before),
        acked,
        sent: flow.sent_bytes(),
        inflight: flow.inflight(),
        rtt: now - pkt.sent_at,
        ecn: pkt.has(crate::packet::flags::CE),
        int,
    };
    flow.cc.on_ack(&ack);
}

impl Sim<'_> {
    /// RoCEv2 responder: ECN notification point, then go-back-N.
    pub(super) fn on_roce_data(&mut self, h: HostId, pkt: Packet) {
        let np = self.variant.resolved.dcqcn[h.idx()].as_ref();
        let flow = &mut self.flows[pkt.flow.idx()];
        let c = &mut self.host_counters[h.idx()];
        let mut out = roce::on_data(flow, np, c, self.now, &pkt, self.variant.nic.ack_every);
        if out.cnp.is_some() {
            self.totals.cnps += 1;
        }
        // The ACK echoes the INT records of the packet it answers (HPCC's receiver copies the
        // whole header, `rdma-hw.cc` `ReceiveUdp`); a packet not answered frees its stack.
        let int = pkt.int_ref();
        if int != 0 {
            match &mut out.reply {
                Some(r) => {
                    r.set_int_ref(int);
                    r.frame += self.net.int.get(int).bytes() as u16;
                }
                None => self.net.int.release(int),
            }
        }
        self.totals.delivered_payload += out.delivered;
        for p in out.cnp.into_iter().chain(out.reply) {
            self.send_control(h, p);
        }
        if out.completed {
            self.completed(pkt.flow);
        }
    }

    /// RoCEv2 requester: an ACK or NAK arrived.
    pub(super) fn on_roce_ack(&mut self, h: HostId, pkt: &Packet) {
        let flow = &mut self.flows[pkt.flow.idx()];
        let before = flow.acked_bytes();
        roce::on_ack(
            flow,
            &mut self.host_counters[h.idx()],
            self.now,
            pkt,
            self.timers.rto_roce,
        );
        let int = pkt.int_ref();
        let hops = if int != 0 {
            self.net.int.get(int).hops()
        } else {
            &[]
        };
        if pkt.kind == crate::packet::Kind::Nak {
            flow.cc.on_nack(self.now);
        }
        ack_cc(flow, before, self.now, pkt, hops);
        if int != 0 {
            self.net.int.release(int);
        }
        self.repace(pkt.flow);
        self.activate(pkt.flow);
    }

    /// A CNP arrived for one of host `h`'s QPs: its congestion control reacts (DCQCN's
    /// reaction point: a rate cut, counted as handled or ignored).
    pub(super) fn on_cnp(&mut self, h: HostId, pkt: &Packet) {
        let flow = &mut self.flows[pkt.flow.idx()];
        let c = &mut self.host_counters[h.idx()];
        match flow.cc.on_cnp(self.now) {
            Some(CnpOutcome::Handled) => {
                flow.cnp_handled += 1;
                c.rp_cnp_handled += 1;
            }
            Some(CnpOutcome::Ignored) => {
                flow.cnp_ignored += 1;
                c.rp_cnp_ignored += 1;
            }
            None => {}
        }
        self.arm_cc_timer(pkt.flow);
    }

    fn arm_cc_timer(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.idx()];
        if flow.cc_timer_pending {
            return;
        }
        if let Some(at) = flow.cc.timer_due() {
            flow.cc_timer_pending = true;
            self.schedule(at.max(self.now), Event::CcTimer(f));
        }
    }

    /// The congestion control's timer of `f` fired (DCQCN's rate increase).
    pub(super) fn on_cc_timer(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        flow.cc_timer_pending = false;
        if flow.cc.timer_due().is_some_and(|t| t <= now) {
            flow.cc.on_timer(now);
        }
        if flow.sender_done.is_none() {
            self.arm_cc_timer(f);
        }
        self.repace(f);
    }

    /// The rate of `f` went up: a flow sleeping on the old, slower pace may go earlier (a
    /// hardware rate limiter applies a new rate at once).
    fn repace(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.idx()];
        if flow.sched != Sched::Sleeping {
            return;
        }
        let line = self.net.ports[flow.port.idx()].rate;
        let rate = flow.cc.rate().map_or(line, |r| r.min(line));
        let at = (flow.last_tx + rate.tx_time(flow.last_wire)).max(self.now);
        if at < flow.next_tx {
            flow.next_tx = at;
            let port = flow.port;
            self.nics[flow.spec.src.idx()].sleep(port.0, f, at);
            self.start_tx(port);
        }
    }

    /// UET receiver: a data packet (or a trimmed header) arrived at `h`.
    pub(super) fn on_uet_data(&mut self, h: HostId, pkt: Packet) {
        let nic = &self.variant.nic;
        let (ack_bytes, prio, rccc) = (
            nic.ack_bytes.0,
            nic.control_prio,
            nic.cc_for(crate::nic::Transport::Uet).rccc().is_some(),
        );
        let flow = &mut self.flows[pkt.flow.idx()];
        let c = &mut self.host_counters[h.idx()];
        let out = uet::on_data(flow, rccc, c, self.now, &pkt, ack_bytes, prio);
        self.totals.delivered_payload += out.delivered;
        if out.arm_ack_timer {
            self.schedule(self.now + self.timers.ack, Event::AckTimer(pkt.flow));
        }
        if let Some(p) = out.reply {
            self.send_control(h, p);
        }
        if out.wants_credit {
            self.want_credit(h, pkt.flow);
        }
        if out.completed {
            self.completed(pkt.flow);
        }
    }

    /// UET sender: a selective ACK arrived.
    pub(super) fn on_uet_ack(&mut self, pkt: &Packet) {
        let t = self.timers;
        let flow = &mut self.flows[pkt.flow.idx()];
        let src = flow.spec.src;
        let rto = flow.rto(t.rto, t.rto_max);
        let before = flow.acked_bytes();
        let out = uet::on_ack(flow, self.now, pkt, rto, self.senders.maxwnd(src.idx()));
        ack_cc(flow, before, self.now, pkt, &[]);
        self.repace(pkt.flow);
        if out.lost > 0 {
            self.request_credit_now(pkt.flow);
        }
        self.activate(pkt.flow);
    }

    /// UET receiver: the ACK coalescing timer of `f` fired: acknowledge what is owed.
    pub(super) fn on_ack_timer(&mut self, f: FlowId) {
        let prio = self.variant.nic.control_prio;
        let flow = &mut self.flows[f.idx()];
        let dst = flow.spec.dst;
        let c = &mut self.host_counters[dst.idx()];
        if let Some(p) = uet::on_ack_timer(flow, f, c, self.now, prio) {
            self.send_control(dst, p);
        }
    }

    /// UET sender: a NACK for a trimmed packet: resend it at once (on the next EV).
    pub(super) fn on_uet_nack(&mut self, pkt: &Packet) {
        let flow = &mut self.flows[pkt.flow.idx()];
        let c = &mut self.host_counters[flow.spec.src.idx()];
        uet::on_nack(flow, c, self.now, pkt);
        self.activate(pkt.flow);
    }

    /// UET sender: an RCCC credit arrived.
    pub(super) fn on_credit(&mut self, pkt: &Packet) {
        uet::on_credit(&mut self.flows[pkt.flow.idx()], pkt, self.now);
        self.activate(pkt.flow);
    }

    /// UET receiver `h` got a request to send: the sender is out of credit with data left.
    pub(super) fn on_rts(&mut self, h: HostId, pkt: &Packet) {
        if uet::on_rts(&mut self.flows[pkt.flow.idx()], pkt) {
            self.want_credit(h, pkt.flow);
        }
    }

    /// Receiver `h` learned that flow `f` wants credit: enlist it and start the pacer.
    fn want_credit(&mut self, h: HostId, f: FlowId) {
        if self.pacers[h.idx()].want(f, &mut self.flows[f.idx()]) {
            self.schedule(self.now, Event::CreditTick(h));
        }
    }

    /// The pacer of receiver `h` may grant again: serve the next flow that wants credit.
    pub(super) fn on_credit_tick(&mut self, h: HostId) {
        let Some(cfg) = self.variant.nic.cc_for(crate::nic::Transport::Uet).rccc() else {
            return;
        };
        let per_pull = cfg
            .credit_per_pull(self.variant.nic.mtu.0 as u32)
            .div_ceil(crate::cc::rccc::QUANTUM);
        let node = self.net.host_node[h.idx()];
        let rate = self.net.ports[self.net.node_ports[node.idx()].start as usize].rate;
        let prio = self.variant.nic.control_prio;
        if let Some((p, grant)) = self.pacers[h.idx()].grant(&mut self.flows, per_pull, prio) {
            self.send_control(h, p);
            let bytes = grant * crate::cc::rccc::QUANTUM;
            self.schedule(self.now + RcccConfig::pace(rate, bytes), Event::CreditTick(h));
        }
    }
}
