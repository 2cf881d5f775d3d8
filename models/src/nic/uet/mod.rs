//! UET PDS RUD transport: what happens when something reaches a packet delivery context.
//!
//! Each handler acts on one [`Flow`] (both ends of its PDC) and returns what the NIC must
//! send; it touches nothing else, so a PDC can be driven alone in a test. The per-PSN state
//! is [`pdc`]; the congestion control is NSCC's window and RCCC's credit ([`crate::cc`]), the
//! receiver's credit pacer is [`pacer`].
//!
//! ```text
//!  data ─▶ receiver: trimmed? ─▶ NACK (or SACK if already here) ; else SACK when due
//!          (every ack_bytes, ECN, AR, duplicate, completion) ; RCCC pull target ─▶ pacer
//!  SACK ─▶ sender: acknowledged PSNs leave the window, EVs recycled (REPS), NSCC on_ack
//!  NACK ─▶ sender: resend that PSN next, NSCC on_nack
//!  credit / RTS ─▶ sender's credit / receiver's pull target
//!  timeout ─▶ PSNs out for an RTO presumed lost; out of credit: a new RTS
//! ```

pub mod pacer;
pub mod pdc;

pub use pacer::Pacer;
pub use pdc::{Sack, UetPdc};

use super::HostCounters;
use super::flow::{Flow, Proto, payload_of};
use crate::cc::nscc::{Nscc, NsccParams};
use crate::cc::rccc::{QUANTUM, RcccSender};
use crate::packet::{
    Kind, Packet, UET_ACK_FRAME, UET_CREDIT_FRAME, UET_NACK_FRAME, flags, on_wire, uet_data_frame,
};
use sim_core::{Duration, Time};

/// What the receiver does with one data packet (or trimmed header).
#[derive(Debug, Default)]
pub struct DataOutcome {
    /// The selective ACK or NACK, if one is due.
    pub reply: Option<Packet>,
    /// New payload bytes delivered to the application.
    pub delivered: u64,
    /// The message's last byte arrived.
    pub completed: bool,
    /// RCCC: the sender wants credit (enlist it with the receiver's pacer).
    pub wants_credit: bool,
}

/// Wire bytes of a full data packet of `flow` (a trimmed packet is resent whole).
fn full_packet(flow: &Flow) -> u64 {
    on_wire(uet_data_frame(flow.mtu()))
}

/// The flow starts: NSCC's window (`nscc`), RCCC's speculative credit (`rccc`, bytes).
pub fn on_start(flow: &mut Flow, nscc: Option<&NsccParams>, rccc: Option<u64>, now: Time) {
    let Proto::Uet(u) = &mut flow.proto else { return };
    if let Some(p) = nscc {
        u.cc.nscc = Some(Nscc::new(p, now));
    }
    if let Some(window) = rccc {
        u.cc.rccc = Some(RcccSender::new(window));
    }
}

/// The sender is about to send `pkt`: RCCC spends credit and states its pull target; the
/// packet asks for an ACK at once when the sender will soon wait for one: less window is left
/// than the receiver coalesces ACKs over (`ack_bytes`), the credit is spent, the message ends,
/// or this is a resend (uet-htsim sets AR when the window is full or credit <= 0; asking
/// earlier keeps small windows from stalling).
#[inline]
pub fn on_sent(flow: &mut Flow, pkt: &mut Packet, ack_bytes: u64) {
    let wire = full_packet(flow);
    let Proto::Uet(u) = &mut flow.proto else { return };
    if let Some(r) = &mut u.cc.rccc {
        // Credit is spent and asked for in wire bytes (uet-htsim: the sender pays each
        // packet's size; the pacer grants at 99 % of line rate).
        r.on_sent(pkt.wire_bytes());
        pkt.set_pull_target(r.target(u.pdc.backlog_packets() * wire, wire));
    }
    let low_window =
        u.cc.nscc
            .as_ref()
            .is_some_and(|n| (n.cwnd as u64).saturating_sub(u.pdc.inflight) < ack_bytes);
    let no_credit = u.cc.rccc.as_ref().is_some_and(|r| r.credit() <= 0);
    if low_window || no_credit || !u.pdc.has_work() || pkt.has(flags::RETX) {
        pkt.flags |= flags::ACK_REQ;
    }
}

/// Receiver: a data packet (or a trimmed header) arrived. `rccc`: the receiver runs RCCC.
/// Control packets go at priority `prio`.
pub fn on_data(
    flow: &mut Flow,
    rccc: bool,
    counters: &mut HostCounters,
    now: Time,
    pkt: &Packet,
    ack_bytes: u64,
    prio: u8,
) -> DataOutcome {
    let src = flow.spec.src;
    let full = full_packet(flow);
    let mut out = DataOutcome::default();
    let Proto::Uet(u) = &mut flow.proto else {
        return out;
    };
    let ce = pkt.has(flags::CE);
    if rccc {
        // Cumulative pull target, in quanta: grant up to the highest seen. A trimmed
        // packet needs its credit again.
        u.want = u.want.max(pkt.pull_target() as u64 * QUANTUM);
        if pkt.has(flags::TRIMMED) {
            u.want = u.want.max(u.granted) + full;
        }
    }
    let reply = if pkt.has(flags::TRIMMED) {
        flow.trimmed_received += 1;
        if u.pdc.received_psn(pkt.seq) {
            // A trimmed copy of something already here: acknowledge it instead.
            Some(sack_packet(u.pdc.sack_for(pkt.seq), pkt, src, prio))
        } else {
            counters.naks_sent += 1;
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
            out.delivered = pkt.payload as u64;
            if u.pdc.all_received() {
                flow.finish = Some(now);
                out.completed = true;
            }
        } else {
            flow.duplicates += 1;
        }
        sack.map(|s| {
            counters.acks_sent += 1;
            let mut p = sack_packet(s, pkt, src, prio);
            p.flags = if ce { flags::CE } else { 0 };
            p
        })
    };
    out.wants_credit = u.want > 0;
    out.reply = reply.map(|mut p| {
        (p.sent_at, p.entropy) = (pkt.sent_at, pkt.entropy);
        p
    });
    out
}

/// A selective ACK of `pkt`'s flow to `src`.
fn sack_packet(s: Sack, pkt: &Packet, src: crate::ids::HostId, prio: u8) -> Packet {
    let mut p = Packet::control(Kind::Ack, pkt.flow, src, s.cum, UET_ACK_FRAME, prio);
    p.set_sack(s.base, s.bitmap);
    p
}

/// Sender: a selective ACK arrived. Progress pushes the retransmission deadline `rto` out.
pub fn on_ack(flow: &mut Flow, nscc: Option<&NsccParams>, now: Time, pkt: &Packet, rto: Duration) {
    flow.acks_received += 1;
    let (size, mtu, packets) = (flow.spec.size, flow.mtu(), flow.packets);
    let Proto::Uet(u) = &mut flow.proto else { return };
    let ecn = pkt.has(flags::CE);
    let sack = Sack {
        cum: pkt.seq,
        base: pkt.sack_base(),
        bitmap: pkt.sack_bitmap(),
    };
    let newly = u.pdc.on_sack(sack, |p| payload_of(size, mtu, packets, p));
    u.ev.on_ack(pkt.entropy, ecn);
    if let (Some(n), Some(p)) = (&mut u.cc.nscc, nscc) {
        n.on_ack(p, now, newly, now - pkt.sent_at, ecn, u.pdc.inflight);
    }
    if let Some(r) = &mut u.cc.rccc {
        r.on_feedback();
    }
    if newly > 0 {
        flow.rto_deadline = now + rto;
    }
    if u.pdc.all_acked() && flow.sender_done.is_none() {
        flow.sender_done = Some(now);
    }
}

/// Sender: a NACK for a trimmed packet: resend that PSN next (on the next EV).
pub fn on_nack(
    flow: &mut Flow,
    nscc: Option<&NsccParams>,
    counters: &mut HostCounters,
    now: Time,
    pkt: &Packet,
) {
    flow.naks_received += 1;
    let payload = flow.payload_of(pkt.seq) as u64;
    let Proto::Uet(u) = &mut flow.proto else { return };
    counters.packet_seq_err += 1;
    let rccc = u.cc.rccc.is_some();
    if u.pdc.on_nack(pkt.seq, payload as u32) {
        if let (Some(n), Some(p)) = (&mut u.cc.nscc, nscc) {
            // A trim at the last hop under RCCC is the receiver's credit at fault, not the window.
            let cut = !(rccc && pkt.has(flags::LAST_HOP));
            n.on_nack(p, now, payload, cut, u.pdc.inflight);
        }
    }
    if let Some(r) = &mut u.cc.rccc {
        r.on_feedback();
    }
}

/// Sender: an RCCC credit arrived.
pub fn on_credit(flow: &mut Flow, pkt: &Packet) {
    if let Proto::Uet(u) = &mut flow.proto {
        if let Some(r) = &mut u.cc.rccc {
            r.on_credit(pkt.credit() as u64);
        }
    }
}

/// Receiver: a request to send (the sender is out of credit with data left). True when the
/// flow wants credit (always: at least one more byte than granted).
pub fn on_rts(flow: &mut Flow, pkt: &Packet) -> bool {
    let Proto::Uet(u) = &mut flow.proto else {
        return false;
    };
    u.want = u.want.max(pkt.pull_target() as u64 * QUANTUM).max(u.granted + 1);
    true
}

/// Sender: the retransmission timer took `lost` payload bytes out of flight. NSCC shrinks the
/// window by them; a sender out of credit asks the receiver again with a request to send
/// (returned, at priority `prio`).
pub fn on_timeout(
    flow: &mut Flow,
    id: crate::ids::FlowId,
    nscc: Option<&NsccParams>,
    lost: u64,
    prio: u8,
) -> Option<Packet> {
    let (dst, wire) = (flow.spec.dst, full_packet(flow));
    let Proto::Uet(u) = &mut flow.proto else {
        return None;
    };
    if let (Some(n), Some(p)) = (&mut u.cc.nscc, nscc) {
        n.on_timeout(p, lost);
    }
    let r = u.cc.rccc.as_ref().filter(|r| r.credit() <= 0)?;
    let mut p = Packet::control(Kind::Credit, id, dst, 0, UET_CREDIT_FRAME, prio);
    p.set_pull_target(r.target(u.pdc.backlog_packets() * wire, wire));
    Some(p)
}
