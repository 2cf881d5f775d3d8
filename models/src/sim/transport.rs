//! What reaches a host's transport in a run: each arrival goes to the flow's transport
//! ([`crate::nic::Protocol`]: RoCEv2 or UET alike) with the host's parameters and counters,
//! then this sends what it returned, tells the congestion control, counts what was
//! delivered, and starts what waited for a completed flow.

use super::{Event, Sim};
use crate::cc::api::{Ack, CnpOutcome, CongestionControl};
use crate::cc::rccc::RcccConfig;
use crate::ids::{FlowId, HostId};
use crate::nic::protocol::{Feedback, Rx};
use crate::nic::{Protocol, Sched};
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
    /// A data packet (or a trimmed header) reached its receiver `h`: the transport answers
    /// (an ACK, a NAK or NACK, a CNP), and asks for an ACK timer or credit.
    pub(super) fn on_data(&mut self, h: HostId, pkt: Packet) {
        let nic = &self.variant.nic;
        let mut rx = Rx {
            now: self.now,
            counters: &mut self.host_counters[h.idx()],
            np: self.variant.resolved.dcqcn[h.idx()].as_ref(),
            ack_every: nic.ack_every,
            ack_bytes: nic.ack_bytes.0,
            control_prio: nic.control_prio,
            rccc: nic.cc_for(crate::nic::Transport::Uet).rccc().is_some(),
        };
        let (core, proto) = self.flows[pkt.flow.idx()].split();
        let mut out = proto.on_data(core, &mut rx, &pkt);
        let echo_int = proto.carries_int();
        if out.cnp.is_some() {
            self.totals.cnps += 1;
        }
        // The ACK echoes the INT records of the packet it answers (HPCC's receiver copies the
        // whole header, `rdma-hw.cc` `ReceiveUdp`); a packet not answered frees its stack.
        let int = if echo_int { pkt.int_ref() } else { 0 };
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
        if out.arm_ack_timer {
            self.schedule(self.now + self.timers.ack, Event::AckTimer(pkt.flow));
        }
        for p in out.cnp.into_iter().chain(out.reply) {
            self.send_control(h, p);
        }
        if out.wants_credit {
            self.want_credit(h, pkt.flow);
        }
        if out.completed {
            self.completed(pkt.flow);
        }
    }

    /// An ACK, NAK or NACK reached its sender `h`: the transport takes it, then the
    /// congestion control hears of an acknowledgement (with the INT records it echoes).
    pub(super) fn on_feedback(&mut self, h: HostId, pkt: &Packet) {
        let now = self.now;
        let mut fb = Feedback {
            now,
            counters: &mut self.host_counters[h.idx()],
            timers: &self.timers,
            maxwnd: self.senders.maxwnd(h.idx()),
        };
        let flow = &mut self.flows[pkt.flow.idx()];
        let before = flow.acked_bytes();
        let (core, proto) = flow.split();
        let out = proto.on_feedback(core, &mut fb, pkt);
        if out.acked {
            let int = if flow.proto.carries_int() {
                pkt.int_ref()
            } else {
                0
            };
            let hops = if int != 0 {
                self.net.int.get(int).hops()
            } else {
                &[]
            };
            ack_cc(flow, before, now, pkt, hops);
            if int != 0 {
                self.net.int.release(int);
            }
            self.repace(pkt.flow);
        }
        if out.lost > 0 {
            self.request_credit_now(pkt.flow);
        }
        if let Some(t) = out.probe_timer {
            self.schedule(t, Event::Probe(pkt.flow));
        }
        self.activate(pkt.flow);
    }

    /// A probe reached its receiver `h`: the transport answers at once.
    pub(super) fn on_probe(&mut self, h: HostId, pkt: &Packet) {
        let prio = self.variant.nic.control_prio;
        let (core, proto) = self.flows[pkt.flow.idx()].split();
        if let Some(p) = proto.on_probe(core, &mut self.host_counters[h.idx()], pkt, prio) {
            self.send_control(h, p);
        }
    }

    /// Flow `f`'s probe timer ran: a probe goes if one is due, and the timer runs again.
    pub(super) fn on_probe_timer(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        let src = flow.spec.src;
        let (core, proto) = flow.split();
        let Some((next, probe)) = proto.on_probe_timer(core, f, now) else {
            return;
        };
        if let Some(p) = probe {
            self.send_control(src, p);
        }
        self.schedule(next, Event::Probe(f));
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

    /// UET receiver: the ACK coalescing timer of `f` fired: acknowledge what is owed.
    pub(super) fn on_ack_timer(&mut self, f: FlowId) {
        let prio = self.variant.nic.control_prio;
        let flow = &mut self.flows[f.idx()];
        let dst = flow.spec.dst;
        let c = &mut self.host_counters[dst.idx()];
        let (core, proto) = flow.split();
        if let Some(p) = proto.on_ack_timer(core, f, c, self.now, prio) {
            self.send_control(dst, p);
        }
    }

    /// UET sender: an RCCC credit arrived.
    pub(super) fn on_credit(&mut self, pkt: &Packet) {
        let (core, proto) = self.flows[pkt.flow.idx()].split();
        proto.on_credit(core, pkt, self.now);
        self.activate(pkt.flow);
    }

    /// UET receiver `h` got a request to send: the sender is out of credit with data left.
    pub(super) fn on_rts(&mut self, h: HostId, pkt: &Packet) {
        if self.flows[pkt.flow.idx()].proto.on_rts(pkt) {
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
