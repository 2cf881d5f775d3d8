//! UET PDS RUD transport: what happens when something reaches a packet delivery context.
//!
//! Each handler acts on one [`Flow`] (both ends of its PDC) and returns what the NIC must
//! send; it touches nothing else, so a PDC can be driven alone in a test. The per-PSN state
//! is [`pdc`]; the sender's congestion control (NSCC's window, RCCC's credit, or another) is
//! the flow's [`crate::cc::Sender`]; the receiver's credit pacer is [`pacer`].
//!
//! ```text
//!  data ─▶ receiver: trimmed? ─▶ NACK (or SACK if already here) ; else SACK when due
//!          (every ack_bytes, ECN, AR, duplicate, completion, or the ACK timer)
//!          ; RCCC pull target ─▶ pacer
//!  SACK ─▶ sender: acknowledged PSNs leave the window, EVs recycled (REPS), RTT sampled,
//!          congestion control on_sack, PSNs passed by enough acknowledged later ones
//!          resent, congestion control on_ack
//!  NACK ─▶ sender: resend that PSN next, congestion control on_trim
//!  credit / RTS ─▶ sender's credit (a running total) / receiver's pull target
//!  timeout ─▶ PSNs out for an RTO presumed lost, the RTO doubles; too many: give up
//!  credit wait ─▶ out of credit with data left and nothing granted: a new RTS
//! ```

pub mod pacer;
pub mod pdc;
pub mod rto;

pub use pacer::Pacer;
pub use pdc::{Sack, UetPdc};

use super::HostCounters;
use super::flow::{Flow, Proto, payload_of};
use crate::cc::api::{CongestionControl, SackFeedback, Trim};
use crate::cc::rccc::QUANTUM;
use crate::ids::{FlowId, HostId};
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
    /// Data is owed an ACK and no ACK timer runs: start one.
    pub arm_ack_timer: bool,
}

/// Wire bytes of a full data packet of `flow` (a trimmed packet is resent whole).
fn full_packet(flow: &Flow) -> u64 {
    on_wire(uet_data_frame(flow.mtu()))
}

/// The sender is about to send `pkt`: RCCC spends credit and states its pull target; the
/// packet asks for an ACK at once (AR) when the sender will soon wait for one: one more full
/// packet would fill NSCC's window or not fit it, the credit is spent, the message ends, or
/// this is a resend (uet-htsim `UecSrc::sendNewPacket`: AR when `in_flight + size >= cwnd`,
/// `credit <= 0` or the backlog is empty, and on every resend).
///
/// One addition: a window under two of the receiver's coalescing units (`ack_bytes`) asks on
/// every packet. Such a window (a 25G fabric with metre cables holds a few packets) would get
/// one or two ACKs per window, and the sender would idle for part of each round trip; uet-htsim's
/// experiments have windows of tens of packets, where this never applies. Under a plug-in's
/// window (HPCC, Swift, DCTCP, which uet-htsim does not run over UET) AR comes once less than
/// `ack_bytes` of window is left: their round-trip and INT samples come from ACKs the receiver
/// did not hold back.
#[inline]
pub fn on_sent(flow: &mut Flow, pkt: &mut Packet, ack_bytes: u64) {
    let wire = full_packet(flow);
    let (inflight, mtu) = (flow.inflight(), flow.mtu() as u64);
    let Proto::Uet(u) = &mut flow.proto else { return };
    // Credit (RCCC) was spent as the packet left (`CongestionControl::on_sent`); the packet
    // states the sender's pull target.
    if let Some(target) = flow.cc.pull_target(u.pdc.backlog_packets() * wire, wire) {
        pkt.set_pull_target(target);
    }
    if flow.cc.asks_ack(inflight, mtu, ack_bytes) || !u.pdc.has_work() || pkt.has(flags::RETX) {
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
        u.want = u.want.max(pkt.pull_target() as u64);
        if pkt.has(flags::TRIMMED) {
            u.want = u.want.max(u.granted) + full.div_ceil(QUANTUM);
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
            // TRIMMED_LASTHOP, and the PDS `retx` flag when the NACKed packet was a resend.
            p.flags = pkt.flags & (flags::LAST_HOP | flags::RETX);
            Some(p)
        }
    } else {
        if ce {
            flow.ecn_marked += 1;
        }
        if pkt.seq != u.pdc.cumulative() {
            flow.out_of_sequence += 1;
        }
        u.last_data = (pkt.sent_at, now, pkt.entropy);
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
            // ECN echo, and `retx` when the packet the ACK answers was a resend (Karn).
            p.flags = pkt.flags & (flags::CE | flags::RETX);
            p
        })
    };
    out.wants_credit = u.want > 0;
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
fn sack_packet(s: Sack, pkt: &Packet, src: crate::ids::HostId, prio: u8) -> Packet {
    let mut p = Packet::control(Kind::Ack, pkt.flow, src, s.cum, UET_ACK_FRAME, prio);
    p.set_sack(s.base, s.bitmap);
    p
}

/// What the sender learned from a selective ACK.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Payload bytes newly acknowledged.
    pub acked: u64,
    /// Packets presumed lost from the SACK (queued for a resend).
    pub lost: u64,
}

/// Sender: a selective ACK arrived. Progress pushes the retransmission deadline `rto` out and
/// ends the timer's backoff; a packet sent once gives a round-trip sample. A PSN that at
/// least K later acknowledged PSNs have passed is presumed lost, with K about one and a half
/// windows, at least 5 (uet-htsim SLEEK: max(min(1.5 cwnd, maxwnd), 5 MSS)); `maxwnd` is the
/// window's ceiling (1.5 BDP).
pub fn on_ack(flow: &mut Flow, now: Time, pkt: &Packet, rto: Duration, maxwnd: u64) -> AckOutcome {
    flow.acks_received += 1;
    let (size, mtu, packets) = (flow.spec.size, flow.mtu(), flow.packets);
    let Proto::Uet(u) = &mut flow.proto else {
        return AckOutcome::default();
    };
    let ecn = pkt.has(flags::CE);
    let sack = Sack {
        cum: pkt.seq,
        base: pkt.sack_base(),
        bitmap: pkt.sack_bitmap(),
    };
    let payload = |p| payload_of(size, mtu, packets, p);
    let newly = u.pdc.on_sack(sack, payload);
    u.ev.on_ack(pkt.entropy, ecn);
    if !pkt.has(flags::RETX) {
        u.timer.sample(now - pkt.sent_at);
    }
    flow.cc.on_sack(&SackFeedback {
        now,
        newly_acked: newly,
        rtt: now - pkt.sent_at,
        ecn,
        inflight: u.pdc.inflight,
    });
    let window = flow.cc.loss_window().unwrap_or(maxwnd as f64);
    let k = ((1.5 * window).min(maxwnd as f64) / mtu as f64).ceil().max(5.0) as u32;
    let before = u.pdc.lost_packets();
    u.pdc.sack_losses(k, payload);
    let lost = (u.pdc.lost_packets() - before) as u64;
    flow.sack_losses += lost;
    if newly > 0 {
        flow.rto_deadline = now + rto;
        u.timer.progress();
    }
    if u.pdc.all_acked() && flow.sender_done.is_none() {
        flow.sender_done = Some(now);
    }
    AckOutcome { acked: newly, lost }
}

/// Sender: a NACK for a trimmed packet: resend that PSN next (on the next EV).
pub fn on_nack(flow: &mut Flow, counters: &mut HostCounters, now: Time, pkt: &Packet) {
    flow.naks_received += 1;
    let payload = flow.payload_of(pkt.seq) as u64;
    let Proto::Uet(u) = &mut flow.proto else { return };
    counters.packet_seq_err += 1;
    let requeued = u.pdc.on_nack(pkt.seq, payload as u32);
    flow.cc.on_trim(&Trim {
        now,
        bytes: payload,
        last_hop: pkt.has(flags::LAST_HOP),
        requeued,
        inflight: u.pdc.inflight,
    });
}

/// Sender: an RCCC credit arrived, carrying the receiver's running total of grants.
pub fn on_credit(flow: &mut Flow, pkt: &Packet, now: Time) {
    if let Proto::Uet(u) = &mut flow.proto {
        if flow.cc.on_credit(pkt.credit() as u64) > 0 {
            u.credit_waits = 0;
            u.last_credit = now;
        }
    }
}

/// RCCC: how long a sender waits for credit before asking again: `base`, doubled per request
/// already unanswered, from the later of `since` and the last credit.
pub fn credit_wait_ends(flow: &Flow, base: Duration, since: Time) -> Option<Time> {
    let Proto::Uet(u) = &flow.proto else {
        return None;
    };
    let wait = Duration(base.0.saturating_mul(1 << u.credit_waits.min(40)));
    Some(since.max(u.last_credit) + wait)
}

/// Receiver: a request to send: the sender is out of credit with data left. The receiver
/// takes its pull target, and answers even when it believes the target met (the sender may
/// have lost a grant): one quantum more, whose credit packet carries the running total.
pub fn on_rts(flow: &mut Flow, pkt: &Packet) -> bool {
    let Proto::Uet(u) = &mut flow.proto else {
        return false;
    };
    u.want = u.want.max(pkt.pull_target() as u64);
    if u.want <= u.granted {
        u.want = u.granted + 1;
    }
    true
}

/// RCCC: is the sender waiting for credit (out of it, with data to send)?
pub fn credit_blocked(flow: &Flow) -> bool {
    match &flow.proto {
        Proto::Uet(u) => !flow.gave_up && u.pdc.has_work() && flow.cc.credit().is_some_and(|c| c <= 0),
        Proto::Roce(_) => false,
    }
}

/// RCCC: the sender's credit wait ended with no credit: a request to send `id`'s receiver,
/// at priority `prio`, carrying the pull target. The next wait is twice as long.
pub fn on_credit_wait(flow: &mut Flow, id: FlowId, prio: u8) -> Option<Packet> {
    if !credit_blocked(flow) {
        return None;
    }
    let (dst, wire) = (flow.spec.dst, full_packet(flow));
    let Proto::Uet(u) = &mut flow.proto else {
        return None;
    };
    let target = flow.cc.pull_target(u.pdc.backlog_packets() * wire, wire)?;
    let mut p = Packet::control(Kind::Credit, id, dst, 0, UET_CREDIT_FRAME, prio);
    p.set_pull_target(target);
    u.credit_waits += 1;
    flow.credit_requests += 1;
    Some(p)
}

/// Receiver: the ACK coalescing timer of `flow` fired: the selective ACK owed, if any, to
/// `src` at priority `prio`.
pub fn on_ack_timer(
    flow: &mut Flow,
    id: FlowId,
    counters: &mut HostCounters,
    now: Time,
    prio: u8,
) -> Option<Packet> {
    let src: HostId = flow.spec.src;
    let Proto::Uet(u) = &mut flow.proto else {
        return None;
    };
    u.ack_timer = false;
    let s = u.pdc.flush_ack()?;
    counters.acks_sent += 1;
    let mut p = Packet::control(Kind::Ack, id, src, s.cum, UET_ACK_FRAME, prio);
    p.set_sack(s.base, s.bitmap);
    let (sent, arrived, entropy) = u.last_data;
    (p.sent_at, p.entropy) = (sent + (now - arrived), entropy);
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::lb::{EvSelector, LbConfig};
    use crate::workload::{Deps, FlowSpec};

    fn flow(packets: u64) -> Flow {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: packets * 4096,
            start: Time::ZERO,
            prio: 3,
            deps: Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        let ev = EvSelector::new(&LbConfig::default(), 0xc000);
        let uet = crate::nic::flow::Uet::new(packets as u32, ev, 1);
        Flow::new(spec, 4096, 0xc000, Proto::Uet(Box::new(uet)))
    }

    #[test]
    fn data_below_the_ack_threshold_starts_the_ack_timer_whose_ack_echoes_the_hold() {
        let mut f = flow(10);
        let mut c = HostCounters::default();
        let mut p = f.next_packet(FlowId(0), Time(1_000));
        p.flags &= !flags::ACK_REQ;
        let out = on_data(&mut f, false, &mut c, Time(5_000), &p, 16_384, 7);
        assert!(
            out.reply.is_none() && out.arm_ack_timer,
            "one packet: 4 KiB < 16 KiB"
        );
        let ack = on_ack_timer(&mut f, FlowId(0), &mut c, Time(9_000), 7).expect("owed");
        assert_eq!((ack.kind, ack.seq, ack.dst), (Kind::Ack, 1, HostId(0)));
        // Sent at 1 ns, arrived at 5 ns, acknowledged at 9 ns: the echo moves by the 4 ns
        // hold, so the sender measures the 4 ns of the path, not 8.
        assert_eq!(ack.sent_at, Time(5_000));
        assert!(on_ack_timer(&mut f, FlowId(0), &mut c, Time(10_000), 7).is_none());
    }

    #[test]
    fn a_request_to_send_is_answered_when_the_receiver_thinks_it_has_granted_everything() {
        let mut f = flow(10);
        let Proto::Uet(u) = &mut f.proto else {
            unreachable!()
        };
        (u.want, u.granted) = (64, 64);
        let mut rts = Packet::control(Kind::Credit, FlowId(0), HostId(1), 0, 64, 7);
        rts.set_pull_target(10);
        assert!(on_rts(&mut f, &rts));
        let Proto::Uet(u) = &f.proto else { unreachable!() };
        assert_eq!(
            u.want, 65,
            "one quantum more, so a credit packet carries the total"
        );
    }

    /// Which of a window's packets ask for an ACK, sending into an empty window of `cwnd`
    /// bytes until it is full (4 KiB packets, 16 KiB coalescing).
    fn asking(cwnd: f64) -> Vec<u32> {
        let mut f = flow(100);
        let p = crate::cc::nscc::NsccParams::new(
            &crate::cc::nscc::NsccConfig::default(),
            sim_core::BitRate::gbps(100),
            Duration::from_us(12),
            4096,
            true,
        );
        let mut n =
            crate::cc::nscc::NsccSender::new(std::sync::Arc::new(p), Time::ZERO, Duration::from_us(12));
        n.nscc_mut().cwnd = cwnd;
        f.cc = crate::cc::Sender::Nscc(Box::new(n));
        let mut asked = Vec::new();
        while f.can_send() {
            let mut pkt = f.next_packet(FlowId(0), Time::ZERO);
            f.cc.on_sent(Time::ZERO, pkt.wire_bytes());
            on_sent(&mut f, &mut pkt, 16_384);
            if pkt.has(flags::ACK_REQ) {
                asked.push(pkt.seq);
            }
        }
        asked
    }

    #[test]
    fn a_window_asks_for_an_ack_as_it_fills_and_on_every_packet_when_small() {
        // 40 KiB: ten packets fit (10 x 4096 <= 40960). uet-htsim's test is in_flight + size
        // >= cwnd, so the ninth asks too: one more exactly fills the window.
        assert_eq!(asking(40_960.0), vec![8, 9]);
        // 50,000 B: twelve fit (49,152), and the twelfth leaves less than a packet.
        assert_eq!(asking(50_000.0), vec![11]);
        // Under two coalescing units (32 KiB) every packet asks: 7 fit in 30,000 B.
        assert_eq!(asking(30_000.0), (0..7).collect::<Vec<u32>>());
    }
}
