//! UET PDS RUD transport: what happens when something reaches a packet delivery context.
//!
//! Each handler acts on one flow ([`FlowCore`], both ends of its PDC) and returns what the
//! NIC must send; it touches nothing else, so a PDC can be driven alone in a test. The per-PSN state
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
//!  probe timer ─▶ no ACK for a while with data unacknowledged: a probe (NSCC, SLEEK);
//!          its ACK with little queueing: what was sent before it and not acknowledged is lost
//!  timeout ─▶ PSNs out for an RTO presumed lost, the RTO doubles; too many: give up
//!  credit wait ─▶ out of credit with data left and nothing granted: a new RTS
//! ```

pub mod pacer;
pub mod pdc;
pub mod probe;
mod receiver;
pub mod rto;
mod sender;

pub use crate::nic::protocol::{Grants, PacerFlow};
pub use pacer::Pacer;
pub use pdc::{Sack, UetPdc};

use super::core::{FlowCore, payload_of};
use super::counters::HostCounters;
use super::lb::EvSelector;
use super::protocol::{DataOutcome, Expiry, Feedback, FeedbackOutcome, Protocol, Rx, Timers};
use crate::ids::FlowId;
use crate::packet::{Kind, Packet, flags, on_wire, uet_data_frame};
use sim_core::{Duration, Time};

/// A UET flow's transport state, both ends: the PDC, its load balancing, the sender's
/// retransmission and credit-wait timers, the receiver's ACK timer and credit accounts.
#[derive(Debug, Clone)]
pub struct Uet {
    pub pdc: UetPdc,
    pub ev: EvSelector,
    /// State of a small PRNG (SplitMix64) for REPS exploration.
    pub ev_rng: u64,
    /// The sender's retransmission timeout (adaptive, backed off).
    pub timer: rto::RetxTimer,
    /// The receiver's ACK coalescing timer is scheduled.
    pub ack_timer: bool,
    /// The last data packet the receiver took: its send time, its arrival and its entropy (an
    /// ACK sent later on the timer echoes the send time shifted by the hold, as UET's ACK_CC
    /// reports the receiver's `service_time`, so the sender's round-trip sample stays true).
    pub last_data: (Time, Time, u16),
    /// RCCC: the sender's credit-wait timer is scheduled, and how often it has expired since
    /// credit last arrived (it doubles each time).
    pub credit_timer: bool,
    pub credit_waits: u32,
    /// When credit last arrived (a wait is measured from it).
    pub last_credit: Time,
    /// RCCC, the receiver side: what the sender asked for and was granted.
    pub grants: Grants,
    /// The sender's SLEEK probe timer (NSCC).
    pub probe: probe::Probe,
}

impl Uet {
    /// Take the receiver's side from `rx` (a run on several threads: its receiver's copy).
    pub fn take_receiver(&mut self, rx: &mut Uet) {
        self.pdc.take_receiver(&mut rx.pdc);
        self.ack_timer = rx.ack_timer;
        self.last_data = rx.last_data;
        self.grants = rx.grants;
    }

    /// The entropy the load balancer picks for the next packet.
    #[inline]
    pub(super) fn next_entropy(&mut self) -> u16 {
        let rng = &mut self.ev_rng;
        self.ev.choose(|| (sim_core::rng::mix64(bump(rng)) >> 48) as u16)
    }

    pub fn new(packets: u32, ev: EvSelector, seed: u64) -> Self {
        Uet {
            pdc: UetPdc::new(packets),
            ev,
            ev_rng: seed,
            timer: Default::default(),
            ack_timer: false,
            last_data: (Time::ZERO, Time::ZERO, 0),
            credit_timer: false,
            credit_waits: 0,
            last_credit: Time::ZERO,
            grants: Grants::default(),
            probe: probe::Probe::default(),
        }
    }
}

/// Wire bytes of a full data packet of `f` (a trimmed packet is resent whole).
fn full_packet(f: &FlowCore) -> u64 {
    on_wire(uet_data_frame(f.mtu()))
}

fn bump(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    *state
}

impl Protocol for Uet {
    #[inline]
    fn may_send(&self, _f: &FlowCore) -> bool {
        self.pdc.has_work()
    }

    #[inline]
    fn inflight(&self, _f: &FlowCore) -> u64 {
        self.pdc.inflight
    }

    /// In whole packets acknowledged.
    fn acked_bytes(&self, f: &FlowCore) -> u64 {
        f.bytes_before(self.pdc.progress().0)
    }

    fn sent_bytes(&self, f: &FlowCore) -> u64 {
        f.bytes_before(self.pdc.progress().1)
    }

    fn has_work(&self, _f: &FlowCore) -> bool {
        self.pdc.has_work()
    }

    fn outstanding(&self) -> bool {
        self.pdc.outstanding()
    }

    /// The next PSN (a resend first), on the entropy the load balancer picks for it.
    #[inline]
    fn next_packet(&mut self, f: &mut FlowCore, id: FlowId, now: Time) -> Packet {
        let (size, mtu, packets) = (f.spec.size, f.mtu(), f.packets);
        let (seq, retx) = self
            .pdc
            .take_psn(now, |p| payload_of(size, mtu, packets, p))
            .expect("can_send checked");
        let entropy = self.next_entropy();
        self.pdc.sent_on(seq, entropy);
        let frame = uet_data_frame(payload_of(size, mtu, packets, seq));
        f.data_packet(
            id,
            (seq, retx),
            entropy,
            frame,
            flags::ECT | flags::TRIMMABLE,
            now,
        )
    }

    #[inline]
    fn on_sent(&mut self, f: &mut FlowCore, pkt: &mut Packet, ack_bytes: u64) {
        sender::on_sent(self, f, pkt, ack_bytes);
    }

    fn ev_changes(&self) -> u64 {
        self.ev.changes
    }

    fn rto_base(&self, t: &Timers) -> Duration {
        t.rto
    }

    fn rto(&self, base: Duration, max: Duration) -> Duration {
        self.timer.rto(base, max)
    }

    /// `rto` after the oldest packet still in flight was sent.
    fn rto_due(&self, f: &FlowCore, rto: Duration) -> Time {
        self.pdc.oldest_in_flight().map_or(f.rto_deadline, |t| t + rto)
    }

    fn on_timeout(&mut self, f: &mut FlowCore, now: Time, rto: Duration, retries: u32) -> Expiry {
        sender::on_timeout(self, f, now, rto, retries)
    }

    fn on_data(&mut self, f: &mut FlowCore, rx: &mut Rx, pkt: &Packet) -> DataOutcome {
        receiver::on_data(self, f, rx, pkt)
    }

    /// A selective ACK, or a NACK of a trimmed packet.
    fn on_feedback(&mut self, f: &mut FlowCore, fb: &mut Feedback, pkt: &Packet) -> FeedbackOutcome {
        match pkt.kind {
            Kind::Nak => sender::on_nack(self, f, fb, pkt),
            _ => sender::on_ack(self, f, fb, pkt),
        }
    }

    fn on_ack_timer(
        &mut self,
        f: &mut FlowCore,
        id: FlowId,
        c: &mut HostCounters,
        now: Time,
        prio: u8,
    ) -> Option<Packet> {
        receiver::on_ack_timer(self, f, id, c, now, prio)
    }

    fn on_credit(&mut self, f: &mut FlowCore, pkt: &Packet, now: Time) {
        sender::on_credit(self, f, pkt, now);
    }

    fn on_rts(&mut self, pkt: &Packet) -> bool {
        receiver::on_rts(self, pkt)
    }

    fn grants(&mut self) -> Option<&mut Grants> {
        Some(&mut self.grants)
    }

    fn credit_blocked(&self, f: &FlowCore) -> bool {
        sender::credit_blocked(self, f)
    }

    fn credit_wait_ends(&self, base: Duration, since: Time) -> Option<Time> {
        Some(sender::credit_wait_ends(self, base, since))
    }

    fn arm_credit_timer(&mut self) -> bool {
        !std::mem::replace(&mut self.credit_timer, true)
    }

    fn credit_timer_fired(&mut self) {
        self.credit_timer = false;
    }

    fn credit_request(&mut self, f: &mut FlowCore, id: FlowId, prio: u8) -> Option<Packet> {
        sender::credit_request(self, f, id, prio)
    }

    fn on_probe_timer(&mut self, f: &mut FlowCore, id: FlowId, now: Time) -> Option<(Time, Option<Packet>)> {
        sender::on_probe_timer(self, f, id, now)
    }

    fn on_probe(&mut self, f: &FlowCore, c: &mut HostCounters, pkt: &Packet, prio: u8) -> Option<Packet> {
        Some(receiver::on_probe(self, f, c, pkt, prio))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::api::CongestionControl;
    use crate::ids::HostId;
    use crate::nic::lb::{EvSelector, LbConfig};
    use crate::workload::{Deps, FlowSpec};

    fn flow(packets: u64) -> (FlowCore, Uet) {
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
        (FlowCore::new(spec, 4096, 0xc000), Uet::new(packets as u32, ev, 1))
    }

    fn rx(c: &mut HostCounters, now: Time) -> Rx<'_> {
        Rx {
            now,
            counters: c,
            np: None,
            ack_every: 1,
            ack_bytes: 16_384,
            control_prio: 7,
            rccc: false,
        }
    }

    #[test]
    fn data_below_the_ack_threshold_starts_the_ack_timer_whose_ack_echoes_the_hold() {
        let (mut f, mut u) = flow(10);
        let mut c = HostCounters::default();
        let mut p = u.next_packet(&mut f, FlowId(0), Time(1_000));
        p.flags &= !flags::ACK_REQ;
        let out = u.on_data(&mut f, &mut rx(&mut c, Time(5_000)), &p);
        assert!(
            out.reply.is_none() && out.arm_ack_timer,
            "one packet: 4 KiB < 16 KiB"
        );
        let ack = u
            .on_ack_timer(&mut f, FlowId(0), &mut c, Time(9_000), 7)
            .expect("owed");
        assert_eq!((ack.kind, ack.seq, ack.dst), (Kind::Ack, 1, HostId(0)));
        // Sent at 1 ns, arrived at 5 ns, acknowledged at 9 ns: the echo moves by the 4 ns
        // hold, so the sender measures the 4 ns of the path, not 8.
        assert_eq!(ack.sent_at, Time(5_000));
        assert!(
            u.on_ack_timer(&mut f, FlowId(0), &mut c, Time(10_000), 7)
                .is_none()
        );
    }

    #[test]
    fn a_request_to_send_is_answered_when_the_receiver_thinks_it_has_granted_everything() {
        let (_, mut u) = flow(10);
        (u.grants.want, u.grants.granted) = (64, 64);
        let mut rts = Packet::control(Kind::Credit, FlowId(0), HostId(1), 0, 64, 7);
        rts.set_pull_target(10);
        assert!(u.on_rts(&rts));
        assert_eq!(
            u.grants.want, 65,
            "one quantum more, so a credit packet carries the total"
        );
    }

    /// Which of a window's packets ask for an ACK, sending into an empty window of `cwnd`
    /// bytes until it is full (4 KiB packets, 16 KiB coalescing).
    fn asking(cwnd: f64) -> Vec<u32> {
        let (mut f, mut u) = flow(100);
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
        while u.may_send(&f) && f.cc.allows(u.inflight(&f), 4096) {
            let mut pkt = u.next_packet(&mut f, FlowId(0), Time::ZERO);
            f.cc.on_sent(Time::ZERO, pkt.wire_bytes());
            u.on_sent(&mut f, &mut pkt, 16_384);
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
