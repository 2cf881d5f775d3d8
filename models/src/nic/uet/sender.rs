//! UET's sender: what a packet carries as it leaves (the pull target, an ACK request), what
//! selective ACKs and NACKs of trimmed packets do, the retransmission timeout, and RCCC's
//! credit waits.

use super::Uet;
use super::pdc::Sack;
use super::probe::{Clock, Probe, Tick};
use crate::cc::api::{CongestionControl, SackFeedback, Trim};
use crate::ids::FlowId;
use crate::nic::core::{FlowCore, payload_of};
use crate::nic::protocol::{Expiry, Feedback, FeedbackOutcome};
use crate::packet::{Kind, Packet, UET_CREDIT_FRAME, UET_PROBE_FRAME, flags};
use sim_core::{Duration, Time};

/// The packet is about to go (its congestion control has counted it: RCCC spent credit). It
/// states the sender's pull target, and asks for an ACK at once (AR) when the sender will soon
/// wait for one: its congestion control says so (`CongestionControl::asks_ack`: NSCC's window
/// about to fill or not fit, RCCC's credit spent, a plug-in's window nearly full), the
/// message ends, or this is a resend (uet-htsim `UecSrc::sendNewPacket`: AR when
/// `in_flight + size >= cwnd`, `credit <= 0` or the backlog is empty, and on every resend).
///
/// One addition: NSCC's window under two of the receiver's coalescing units (`ack_bytes`)
/// asks on every packet. Such a window (a 25G fabric with metre cables holds a few packets)
/// would get one or two ACKs per window, and the sender would idle for part of each round
/// trip; uet-htsim's experiments have windows of tens of packets, where this never applies.
/// Under a plug-in's window (HPCC, Swift, DCTCP, which uet-htsim does not run over UET) AR
/// comes once less than `ack_bytes` of window is left: their round-trip and INT samples come
/// from ACKs the receiver did not hold back.
#[inline]
pub(super) fn on_sent(u: &mut Uet, f: &mut FlowCore, pkt: &mut Packet, ack_bytes: u64) {
    let wire = super::full_packet(f);
    let (inflight, mtu) = (u.pdc.inflight, f.mtu() as u64);
    if let Some(target) = f.cc.pull_target(u.pdc.backlog_packets() * wire, wire) {
        pkt.set_pull_target(target);
    }
    if f.cc.asks_ack(inflight, mtu, ack_bytes) || !u.pdc.has_work() || pkt.has(flags::RETX) {
        pkt.flags |= flags::ACK_REQ;
    }
}

/// A selective ACK arrived. Progress pushes the retransmission deadline out and ends the
/// timer's backoff; a packet sent once gives a round-trip sample. A PSN that at least K later
/// acknowledged PSNs have passed is presumed lost, with K about one and a half windows, at
/// least 5 (uet-htsim SLEEK: max(min(1.5 cwnd, maxwnd), 5 MSS)); `maxwnd` is the window's
/// ceiling (1.5 BDP).
pub(super) fn on_ack(u: &mut Uet, f: &mut FlowCore, fb: &mut Feedback, pkt: &Packet) -> FeedbackOutcome {
    let (now, maxwnd) = (fb.now, fb.maxwnd);
    let rto = u.timer.rto(fb.timers.rto, fb.timers.rto_max);
    f.acks_received += 1;
    let (size, mtu, packets) = (f.spec.size, f.mtu(), f.packets);
    let ecn = pkt.has(flags::CE);
    let sack = Sack {
        cum: pkt.seq,
        base: pkt.sack_base(),
        bitmap: pkt.sack_bitmap(),
    };
    let payload = |p| payload_of(size, mtu, packets, p);
    let newly = u.pdc.on_sack(sack, payload);
    let probe_ack = pkt.has(flags::PROBE_ACK);
    if !probe_ack {
        u.ev.on_ack(pkt.entropy, ecn);
    }
    if !pkt.has(flags::RETX) && !probe_ack {
        u.timer.sample(now - pkt.sent_at);
    }
    f.cc.on_sack(&SackFeedback {
        now,
        newly_acked: newly,
        rtt: now - pkt.sent_at,
        ecn,
        inflight: u.pdc.inflight,
        probe: probe_ack,
    });
    let window = f.cc.loss_window().unwrap_or(maxwnd as f64);
    let k = ((1.5 * window).min(maxwnd as f64) / mtu as f64).ceil().max(5.0) as u32;
    let before = u.pdc.lost_packets();
    u.pdc.sack_losses(k, payload);
    let by_sack = u.pdc.lost_packets() - before;
    let clock = probe_clock(u, f);
    if clock.is_some_and(|c| probe_ack && Probe::shows_loss(now, pkt.sent_at, c)) {
        u.pdc.lost_before(pkt.sent_at, pkt.entropy, payload);
    }
    let lost = (u.pdc.lost_packets() - before) as u64;
    f.sack_losses += by_sack as u64;
    f.probe_losses += lost - by_sack as u64;
    if newly > 0 {
        f.rto_deadline = now + rto;
        u.timer.progress();
    }
    if u.pdc.all_acked() && f.sender_done.is_none() {
        f.sender_done = Some(now);
    }
    let probe_timer = clock.and_then(|c| u.probe.on_ack(now, !u.pdc.all_acked(), u.pdc.has_work(), c));
    FeedbackOutcome {
        acked: true,
        lost,
        probe_timer,
    }
}

/// What times the flow's probes: None when its congestion control does not probe.
fn probe_clock(u: &Uet, f: &FlowCore) -> Option<Clock> {
    let (base, target) = f.cc.probe_clock()?;
    Some(Clock {
        base,
        target,
        srtt: u.timer.srtt(),
    })
}

/// The probe timer ran: a probe to the receiver when no ACK came for its time (SLEEK).
pub(super) fn on_probe_timer(
    u: &mut Uet,
    f: &mut FlowCore,
    id: FlowId,
    now: Time,
) -> Option<(Time, Option<Packet>)> {
    let clock = probe_clock(u, f)?;
    if f.sender_done.is_some() || f.gave_up {
        u.probe.due = None;
    }
    match u.probe.on_timer(now, clock) {
        Tick::Stop => None,
        Tick::Later(t) => Some((t, None)),
        Tick::Fire(next) => {
            f.probes += 1;
            // A data packet of headers only (uet-htsim `DATA_PROBE`, in the data class): it
            // queues behind the flow's data, so its round trip shows whether the network
            // still holds what was sent before it. It follows the oldest packet in flight
            // (uet-htsim: the load balancer's next entropy; on another path than the data's a
            // fast answer proves nothing about the data: sprayed flows sharing spines with
            // another class then resent data that was only queued).
            let ev = u.pdc.oldest_path().unwrap_or_else(|| u.next_entropy());
            let mut p = Packet::control(
                Kind::Probe,
                id,
                f.spec.dst,
                f.probes as u32,
                UET_PROBE_FRAME,
                f.spec.prio,
            );
            (p.sent_at, p.flags, p.entropy) = (now, flags::ECT, ev);
            Some((next, Some(p)))
        }
    }
}

/// A NACK for a trimmed packet: resend that PSN next (on the next EV), and tell the
/// congestion control.
pub(super) fn on_nack(u: &mut Uet, f: &mut FlowCore, fb: &mut Feedback, pkt: &Packet) -> FeedbackOutcome {
    f.naks_received += 1;
    let payload = f.payload_of(pkt.seq) as u64;
    fb.counters.packet_seq_err += 1;
    let requeued = u.pdc.on_nack(pkt.seq, payload as u32);
    f.cc.on_trim(&Trim {
        now: fb.now,
        bytes: payload,
        last_hop: pkt.has(flags::LAST_HOP),
        requeued,
        inflight: u.pdc.inflight,
    });
    FeedbackOutcome::default()
}

/// The retransmission timer expired: what has been out for `rto` or longer is presumed lost
/// and resent, and the timeout backs off; too many in a row without progress (`retries`), and
/// the sender gives up.
pub(super) fn on_timeout(u: &mut Uet, f: &mut FlowCore, now: Time, rto: Duration, retries: u32) -> Expiry {
    let (size, mtu, packets) = (f.spec.size, f.mtu(), f.packets);
    let lost = u.pdc.on_timeout(now, rto, |p| payload_of(size, mtu, packets, p));
    if lost == 0 {
        return Expiry::Idle;
    }
    u.timer.expired();
    if u.timer.retries > retries {
        f.gave_up = true;
        return Expiry::GaveUp;
    }
    Expiry::Resend { lost }
}

/// An RCCC credit arrived, carrying the receiver's running total of grants.
pub(super) fn on_credit(u: &mut Uet, f: &mut FlowCore, pkt: &Packet, now: Time) {
    if f.cc.on_credit(pkt.credit() as u64) > 0 {
        u.credit_waits = 0;
        u.last_credit = now;
    }
}

/// RCCC: how long a sender waits for credit before asking again: `base`, doubled per request
/// already unanswered, from the later of `since` and the last credit.
pub(super) fn credit_wait_ends(u: &Uet, base: Duration, since: Time) -> Time {
    let wait = Duration(base.0.saturating_mul(1 << u.credit_waits.min(40)));
    since.max(u.last_credit) + wait
}

/// RCCC: is the sender waiting for credit (out of it, with data to send)?
pub(super) fn credit_blocked(u: &Uet, f: &FlowCore) -> bool {
    !f.gave_up && u.pdc.has_work() && f.cc.credit().is_some_and(|c| c <= 0)
}

/// RCCC: the sender's credit wait ended with no credit: a request to send `id`'s receiver,
/// at priority `prio`, carrying the pull target. The next wait is twice as long.
pub(super) fn credit_request(u: &mut Uet, f: &mut FlowCore, id: FlowId, prio: u8) -> Option<Packet> {
    if !credit_blocked(u, f) {
        return None;
    }
    let (dst, wire) = (f.spec.dst, super::full_packet(f));
    let target = f.cc.pull_target(u.pdc.backlog_packets() * wire, wire)?;
    let mut p = Packet::control(Kind::Credit, id, dst, 0, UET_CREDIT_FRAME, prio);
    p.set_pull_target(target);
    u.credit_waits += 1;
    f.credit_requests += 1;
    Some(p)
}
