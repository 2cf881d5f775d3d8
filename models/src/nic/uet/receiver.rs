//! UET's receiver: data packets and trimmed headers in, selective ACKs and NACKs out
//! (coalesced every `ack_bytes`, or on ECN, an ACK request, a duplicate, completion, or the ACK
//! timer), and RCCC's pull target noted for the credit pacer.

use super::Uet;
use super::pdc::Sack;
use crate::cc::rccc::QUANTUM;
use crate::ids::{FlowId, HostId};
use crate::nic::HostCounters;
use crate::nic::core::FlowCore;
use crate::nic::protocol::{DataOutcome, Rx};
use crate::packet::{Kind, Packet, UET_ACK_FRAME, UET_NACK_FRAME, flags};
use sim_core::Time;

/// A data packet (or a trimmed header) arrived. Control packets go at `rx.control_prio`.
pub(super) fn on_data(u: &mut Uet, f: &mut FlowCore, rx: &mut Rx, pkt: &Packet) -> DataOutcome {
    let (src, prio, now) = (f.spec.src, rx.control_prio, rx.now);
    let full = super::full_packet(f);
    let counters = &mut *rx.counters;
    let mut out = DataOutcome::default();
    let ce = pkt.has(flags::CE);
    if rx.rccc {
        // Cumulative pull target, in quanta: grant up to the highest seen. A trimmed
        // packet needs its credit again.
        let g = &mut u.grants;
        g.want = g.want.max(pkt.pull_target() as u64);
        if pkt.has(flags::TRIMMED) {
            g.want = g.want.max(g.granted) + full.div_ceil(QUANTUM);
        }
    }
    let reply = if pkt.has(flags::TRIMMED) {
        f.trimmed_received += 1;
        if u.pdc.received_psn(pkt.seq) {
            // A trimmed copy of something already here: acknowledge it instead.
            Some(sack_packet(u.pdc.sack_for(pkt.seq), pkt, src, prio))
        } else {
            counters.naks_sent += 1;
            let mut p = Packet::control(Kind::Nak, pkt.flow, src, pkt.seq, UET_NACK_FRAME, prio);
            // TRIMMED_LASTHOP, and the PDS `retx` flag when the NACKed packet was a resend.
            p.flags = pkt.flags & (flags::LAST_HOP | flags::RETX);
            Some(p)
        }
    } else {
        if ce {
            f.ecn_marked += 1;
        }
        if pkt.seq != u.pdc.cumulative() {
            f.out_of_sequence += 1;
        }
        u.last_data = (pkt.sent_at, now, pkt.entropy);
        let urgent = ce || pkt.has(flags::ACK_REQ);
        let (new, sack) = u.pdc.receive(pkt.seq, pkt.payload as u32, urgent, rx.ack_bytes);
        if new {
            f.received_bytes += pkt.payload as u64;
            out.delivered = pkt.payload as u64;
            if u.pdc.all_received() {
                f.finish = Some(now);
                out.completed = true;
            }
        } else {
            f.duplicates += 1;
        }
        sack.map(|s| {
            counters.acks_sent += 1;
            let mut p = sack_packet(s, pkt, src, prio);
            // ECN echo, and `retx` when the packet the ACK answers was a resend (Karn).
            p.flags = pkt.flags & (flags::CE | flags::RETX);
            p
        })
    };
    out.wants_credit = u.grants.want > 0;
    if u.pdc.owes_ack() && !u.ack_timer {
        u.ack_timer = true;
        out.arm_ack_timer = true;
    }
    out.reply = reply.map(|mut p| {
        (p.sent_at, p.entropy) = (pkt.sent_at, pkt.entropy);
        p
    });
    out
}

/// A selective ACK of `pkt`'s flow to `src`.
fn sack_packet(s: Sack, pkt: &Packet, src: HostId, prio: u8) -> Packet {
    let mut p = Packet::control(Kind::Ack, pkt.flow, src, s.cum, UET_ACK_FRAME, prio);
    p.set_sack(s.base, s.bitmap);
    p
}

/// The ACK coalescing timer fired: the selective ACK owed, if any, to the sender at `prio`.
/// It echoes the last data packet's send time shifted by the hold (UET's ACK_CC service time).
pub(super) fn on_ack_timer(
    u: &mut Uet,
    f: &FlowCore,
    id: FlowId,
    counters: &mut HostCounters,
    now: Time,
    prio: u8,
) -> Option<Packet> {
    let src: HostId = f.spec.src;
    u.ack_timer = false;
    let s = u.pdc.flush_ack()?;
    counters.acks_sent += 1;
    let mut p = Packet::control(Kind::Ack, id, src, s.cum, UET_ACK_FRAME, prio);
    p.set_sack(s.base, s.bitmap);
    let (sent, arrived, entropy) = u.last_data;
    (p.sent_at, p.entropy) = (sent + (now - arrived), entropy);
    Some(p)
}

/// A probe from the sender: the selective ACK of what has arrived, at once, flagged as its
/// answer and echoing its send time and entropy (UE 1.0 PDS: an ACK with `p` set).
pub(super) fn on_probe(
    u: &mut Uet,
    f: &FlowCore,
    counters: &mut HostCounters,
    pkt: &Packet,
    prio: u8,
) -> Packet {
    counters.acks_sent += 1;
    let mut p = sack_packet(u.pdc.ack_now(), pkt, f.spec.src, prio);
    p.flags = flags::PROBE_ACK;
    (p.sent_at, p.entropy) = (pkt.sent_at, pkt.entropy);
    p
}

/// A request to send: the sender is out of credit with data left. The receiver takes its
/// pull target, and answers even when it believes the target met (the sender may have lost a
/// grant): one quantum more, whose credit packet carries the running total.
pub(super) fn on_rts(u: &mut Uet, pkt: &Packet) -> bool {
    let g = &mut u.grants;
    g.want = g.want.max(pkt.pull_target() as u64);
    if g.want <= g.granted {
        g.want = g.granted + 1;
    }
    true
}
