//! The UET side of a run: the PDS receiver (selective ACK, NACK of trimmed packets), the
//! sender's reaction (SACK, NACK, load-balancing feedback, NSCC), and RCCC's credit pacer.

use super::{Event, Sim};
use crate::cc::rccc::RcccConfig;
use crate::flow::Proto;
use crate::ids::{FlowId, HostId};
use crate::nic::uet::Sack;
use crate::packet::{Kind, Packet, UET_ACK_FRAME, UET_CREDIT_FRAME, UET_NACK_FRAME, flags};

/// A full MTU's payload (a trimmed packet is resent whole).
fn pkt_payload_full(mtu: u32) -> u32 {
    mtu
}

/// Per-receiver RCCC pacer: flows asking for credit, served round robin.
#[derive(Debug, Clone, Default)]
pub struct Pacer {
    active: std::collections::VecDeque<FlowId>,
    busy: bool,
}

impl Sim<'_> {
    /// Receiver: a data packet (or a trimmed header) of a UET flow arrived at `h`.
    pub(super) fn on_uet_data(&mut self, h: HostId, pkt: Packet) {
        let now = self.now;
        let (ack_bytes, prio) = (self.variant.nic.ack_bytes.0, self.variant.nic.control_prio);
        let flow = &mut self.flows[pkt.flow.idx()];
        let src = flow.spec.src;
        let packets = flow.packets;
        let flow_mtu = flow.mtu();
        let Proto::Uet(u) = &mut flow.proto else { return };
        let ce = pkt.has(flags::CE);
        let mut done = false;
        if self.variant.nic.cc.rccc().is_some() {
            // Cumulative pull target, in quanta: grant up to the highest seen. A trimmed
            // packet needs its credit again.
            u.want = u.want.max(pkt.aux as u64 * crate::cc::rccc::QUANTUM);
            if pkt.has(flags::TRIMMED) {
                u.want = u.want.max(u.granted)
                    + crate::packet::uet_data_frame(pkt_payload_full(flow_mtu)) as u64
                    + 20;
            }
        }
        let reply = if pkt.has(flags::TRIMMED) {
            flow.trimmed_received += 1;
            if u.pdc.received_psn(pkt.seq) {
                // A trimmed copy of something already here: acknowledge it instead.
                let s = u.pdc.sack_for(pkt.seq);
                let mut p = Packet::control(Kind::Ack, pkt.flow, src, s.cum, UET_ACK_FRAME, prio);
                (p.sack, p.aux) = (s.bitmap, s.base);
                Some(p)
            } else {
                self.host_counters[h.idx()].naks_sent += 1;
                let mut p = Packet::control(Kind::Nak, pkt.flow, src, pkt.seq, UET_NACK_FRAME, prio);
                p.flags = pkt.flags & flags::LAST_HOP;
                Some(p)
            }
        } else {
            if ce {
                flow.ecn_marked += 1;
            }
            if pkt.seq != u.pdc.cumulative() {
                flow.out_of_sequence += 1;
            }
            let urgent = ce || pkt.has(flags::ACK_REQ);
            let (new, sack) = u.pdc.receive(pkt.seq, pkt.payload as u32, urgent, ack_bytes);
            if new {
                flow.received_bytes += pkt.payload as u64;
                self.totals.delivered_payload += pkt.payload as u64;
                if u.pdc.all_received() {
                    flow.finish = Some(now);
                    done = true;
                }
            } else {
                flow.duplicates += 1;
            }
            let _ = packets;
            sack.map(|s| {
                self.host_counters[h.idx()].acks_sent += 1;
                let mut p = Packet::control(Kind::Ack, pkt.flow, src, s.cum, UET_ACK_FRAME, prio);
                (p.sack, p.aux) = (s.bitmap, s.base);
                p.flags = if ce { flags::CE } else { 0 };
                p
            })
        };
        let wants_credit = matches!(&self.flows[pkt.flow.idx()].proto, Proto::Uet(u) if u.want > 0);
        if let Some(mut p) = reply {
            (p.sent_at, p.entropy) = (pkt.sent_at, pkt.entropy);
            self.send_control(h, p);
        }
        if wants_credit {
            self.want_credit(h, pkt.flow);
        }
        if done {
            self.completed(pkt.flow);
        }
    }

    /// Sender: a selective ACK arrived.
    pub(super) fn on_uet_ack(&mut self, pkt: &Packet) {
        let now = self.now;
        let flow = &mut self.flows[pkt.flow.idx()];
        flow.acks_received += 1;
        let (size, mtu, packets, src) = (flow.spec.size, flow.mtu(), flow.packets, flow.spec.src);
        let Proto::Uet(u) = &mut flow.proto else { return };
        let ecn = pkt.has(flags::CE);
        let sack = Sack {
            cum: pkt.seq,
            base: pkt.aux,
            bitmap: pkt.sack,
        };
        let newly = u
            .pdc
            .on_sack(sack, |p| crate::flow::payload_of(size, mtu, packets, p));
        u.ev.on_ack(pkt.entropy, ecn);
        if let (Some(n), Some(p)) = (&mut u.cc.nscc, &self.nscc[src.idx()]) {
            n.on_ack(p, now, newly, now - pkt.sent_at, ecn, u.pdc.inflight);
        }
        if let Some(r) = &mut u.cc.rccc {
            r.on_feedback();
        }
        if newly > 0 {
            flow.rto_deadline = now + self.rto;
        }
        if u.pdc.all_acked() && flow.sender_done.is_none() {
            flow.sender_done = Some(now);
        }
        self.activate(pkt.flow);
    }

    /// Sender: a NACK for a trimmed packet: resend it at once (on the next EV).
    pub(super) fn on_uet_nack(&mut self, pkt: &Packet) {
        let now = self.now;
        let flow = &mut self.flows[pkt.flow.idx()];
        flow.naks_received += 1;
        let payload = flow.payload_of(pkt.seq) as u64;
        let src = flow.spec.src;
        let Proto::Uet(u) = &mut flow.proto else { return };
        self.host_counters[src.idx()].packet_seq_err += 1;
        let rccc = u.cc.rccc.is_some();
        if u.pdc.on_nack(pkt.seq, payload as u32) {
            if let (Some(n), Some(p)) = (&mut u.cc.nscc, &self.nscc[src.idx()]) {
                let cut = !(rccc && pkt.has(flags::LAST_HOP));
                n.on_nack(p, now, payload, cut, u.pdc.inflight);
            }
        }
        if let Some(r) = &mut u.cc.rccc {
            r.on_feedback();
        }
        self.activate(pkt.flow);
    }

    /// Sender: an RCCC credit arrived.
    pub(super) fn on_credit(&mut self, pkt: &Packet) {
        let flow = &mut self.flows[pkt.flow.idx()];
        if let Proto::Uet(u) = &mut flow.proto {
            if let Some(r) = &mut u.cc.rccc {
                r.on_credit(pkt.aux as u64);
            }
        }
        self.activate(pkt.flow);
    }

    /// Receiver `h` got an RTS: the sender of `pkt.flow` is out of credit with data left.
    pub(super) fn on_rts(&mut self, h: HostId, pkt: &Packet) {
        let Proto::Uet(u) = &mut self.flows[pkt.flow.idx()].proto else {
            return;
        };
        u.want = u
            .want
            .max(pkt.aux as u64 * crate::cc::rccc::QUANTUM)
            .max(u.granted + 1);
        self.want_credit(h, pkt.flow);
    }

    /// Receiver `h` learned that flow `f` wants credit: enlist it and start the pacer.
    fn want_credit(&mut self, h: HostId, f: FlowId) {
        let Proto::Uet(u) = &mut self.flows[f.idx()].proto else {
            return;
        };
        if !u.listed {
            u.listed = true;
            self.pacers[h.idx()].active.push_back(f);
        }
        if !self.pacers[h.idx()].busy {
            self.pacers[h.idx()].busy = true;
            self.schedule(self.now, Event::CreditTick(h));
        }
    }

    /// The pacer of receiver `h` may grant again: serve the next flow that wants credit.
    pub(super) fn on_credit_tick(&mut self, h: HostId) {
        let Some(cfg) = self.variant.nic.cc.rccc() else {
            return;
        };
        let per_pull = cfg.credit_per_pull(self.variant.nic.mtu.0 as u32);
        let node = self.net.host_node[h.idx()];
        let rate = self.net.ports[self.net.node_ports[node.idx()].start as usize].rate;
        while let Some(f) = self.pacers[h.idx()].active.pop_front() {
            let flow = &mut self.flows[f.idx()];
            let src = flow.spec.src;
            let Proto::Uet(u) = &mut flow.proto else { continue };
            let grant = per_pull.min(u.want.saturating_sub(u.granted));
            if grant == 0 || flow.finish.is_some() {
                u.listed = false;
                continue;
            }
            u.granted += grant;
            if u.granted < u.want {
                self.pacers[h.idx()].active.push_back(f);
            } else {
                u.listed = false;
            }
            let mut p = Packet::control(
                Kind::Credit,
                f,
                src,
                0,
                UET_CREDIT_FRAME,
                self.variant.nic.control_prio,
            );
            p.aux = grant as u32;
            self.send_control(h, p);
            self.schedule(self.now + RcccConfig::pace(rate, grant), Event::CreditTick(h));
            return;
        }
        self.pacers[h.idx()].busy = false;
    }
}
