//! A flow's transport state: [`Proto`], one variant per protocol, dispatching each
//! [`Protocol`] call statically to RoCEv2's queue pair ([`super::roce`]) or UET's packet
//! delivery context ([`super::uet`]). A third transport (UET ROD, a TCP baseline) is one new
//! folder implementing [`Protocol`], one variant here and one arm of each match below.

use super::core::FlowCore;
use super::counters::HostCounters;
use super::lb::EvSelector;
use super::protocol::{DataOutcome, Expiry, Feedback, FeedbackOutcome, Grants, Protocol, Rx, Timers};
use super::roce::RoceQp;
use super::uet::Uet;
use crate::ids::FlowId;
use crate::packet::Packet;
use sim_core::{Duration, Time};

/// The transport state of one flow.
#[derive(Debug, Clone)]
pub enum Proto {
    Roce(RoceQp),
    Uet(Box<Uet>),
}

impl Proto {
    /// RoCEv2 with an unacknowledged-bytes `window` (None: unlimited).
    pub fn roce(window: Option<u64>) -> Proto {
        Proto::Roce(RoceQp::new(window))
    }

    /// UET for a message of `packets`, spreading it over entropies as `ev` chooses, with a
    /// PRNG seed for REPS exploration.
    pub fn uet(packets: u32, ev: EvSelector, seed: u64) -> Proto {
        Proto::Uet(Box::new(Uet::new(packets, ev, seed)))
    }
}

/// `$call` on the transport inside a [`Proto`].
macro_rules! each {
    ($p:expr, $t:ident => $call:expr) => {
        match $p {
            Proto::Roce($t) => $call,
            Proto::Uet($t) => $call,
        }
    };
}

impl Protocol for Proto {
    #[inline]
    fn may_send(&self, f: &FlowCore) -> bool {
        each!(self, t => t.may_send(f))
    }
    #[inline]
    fn inflight(&self, f: &FlowCore) -> u64 {
        each!(self, t => t.inflight(f))
    }
    fn acked_bytes(&self, f: &FlowCore) -> u64 {
        each!(self, t => t.acked_bytes(f))
    }
    fn sent_bytes(&self, f: &FlowCore) -> u64 {
        each!(self, t => t.sent_bytes(f))
    }
    fn has_work(&self, f: &FlowCore) -> bool {
        each!(self, t => t.has_work(f))
    }
    fn outstanding(&self) -> bool {
        each!(self, t => t.outstanding())
    }
    #[inline]
    fn next_packet(&mut self, f: &mut FlowCore, id: FlowId, now: Time) -> Packet {
        each!(self, t => t.next_packet(f, id, now))
    }
    #[inline]
    fn on_sent(&mut self, f: &mut FlowCore, pkt: &mut Packet, ack_bytes: u64) {
        each!(self, t => t.on_sent(f, pkt, ack_bytes))
    }
    fn carries_int(&self) -> bool {
        each!(self, t => t.carries_int())
    }
    fn ev_changes(&self) -> u64 {
        each!(self, t => t.ev_changes())
    }
    fn rto_base(&self, timers: &Timers) -> Duration {
        each!(self, t => t.rto_base(timers))
    }
    fn rto(&self, base: Duration, max: Duration) -> Duration {
        each!(self, t => t.rto(base, max))
    }
    fn rto_due(&self, f: &FlowCore, rto: Duration) -> Time {
        each!(self, t => t.rto_due(f, rto))
    }
    fn on_timeout(&mut self, f: &mut FlowCore, now: Time, rto: Duration, retries: u32) -> Expiry {
        each!(self, t => t.on_timeout(f, now, rto, retries))
    }
    fn on_data(&mut self, f: &mut FlowCore, rx: &mut Rx, pkt: &Packet) -> DataOutcome {
        each!(self, t => t.on_data(f, rx, pkt))
    }
    fn on_feedback(&mut self, f: &mut FlowCore, fb: &mut Feedback, pkt: &Packet) -> FeedbackOutcome {
        each!(self, t => t.on_feedback(f, fb, pkt))
    }
    fn on_ack_timer(
        &mut self,
        f: &mut FlowCore,
        id: FlowId,
        c: &mut HostCounters,
        now: Time,
        prio: u8,
    ) -> Option<Packet> {
        each!(self, t => t.on_ack_timer(f, id, c, now, prio))
    }
    fn on_credit(&mut self, f: &mut FlowCore, pkt: &Packet, now: Time) {
        each!(self, t => t.on_credit(f, pkt, now))
    }
    fn on_rts(&mut self, pkt: &Packet) -> bool {
        each!(self, t => t.on_rts(pkt))
    }
    fn grants(&mut self) -> Option<&mut Grants> {
        each!(self, t => t.grants())
    }
    fn credit_blocked(&self, f: &FlowCore) -> bool {
        each!(self, t => t.credit_blocked(f))
    }
    fn credit_wait_ends(&self, base: Duration, since: Time) -> Option<Time> {
        each!(self, t => t.credit_wait_ends(base, since))
    }
    fn arm_credit_timer(&mut self) -> bool {
        each!(self, t => t.arm_credit_timer())
    }
    fn credit_timer_fired(&mut self) {
        each!(self, t => t.credit_timer_fired())
    }
    fn credit_request(&mut self, f: &mut FlowCore, id: FlowId, prio: u8) -> Option<Packet> {
        each!(self, t => t.credit_request(f, id, prio))
    }
    fn on_probe_timer(&mut self, f: &mut FlowCore, id: FlowId, now: Time) -> Option<(Time, Option<Packet>)> {
        each!(self, t => t.on_probe_timer(f, id, now))
    }
    fn on_probe(&mut self, f: &FlowCore, c: &mut HostCounters, pkt: &Packet, prio: u8) -> Option<Packet> {
        each!(self, t => t.on_probe(f, c, pkt, prio))
    }
}
