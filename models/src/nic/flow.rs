//! A flow: one message from one host to another, and the state of both ends: what every
//! transport shares ([`FlowCore`]) and the protocol's own ([`Proto`]): a
//! RoCEv2 RC queue pair (`roce`, go-back-N) or a UET packet delivery context
//! (`uet`, selective repeat with per-packet entropy). A [`Flow`] reads as its core.

use super::core::FlowCore;
use super::protocol::{Grants, PacerFlow, Protocol};
use super::transport::Proto;
use crate::cc::api::CongestionControl;
use crate::ids::{FlowId, HostId};
use crate::packet::Packet;
use crate::workload::FlowSpec;
use sim_core::Time;

/// A flow: its shared state and its transport's. It reads as its [`FlowCore`].
#[derive(Debug)]
pub struct Flow {
    pub core: FlowCore,
    pub proto: Proto,
}

impl std::ops::Deref for Flow {
    type Target = FlowCore;
    fn deref(&self) -> &FlowCore {
        &self.core
    }
}

impl std::ops::DerefMut for Flow {
    fn deref_mut(&mut self) -> &mut FlowCore {
        &mut self.core
    }
}

impl Flow {
    /// The transport state kept out of line (UET's), and its size: a prefetch hint.
    #[inline]
    pub fn transport_lines(&self) -> Option<(*const u8, usize)> {
        match &self.proto {
            Proto::Uet(u) => Some((
                &**u as *const super::uet::Uet as *const u8,
                std::mem::size_of::<super::uet::Uet>(),
            )),
            Proto::Roce(_) => None,
        }
    }

    /// Free the per-packet state of the sides this copy does not run (`UetPdc::shed`):
    /// the copy of a partition that holds neither or only one of the flow's ends.
    pub fn shed(&mut self, sender: bool, receiver: bool) {
        if let Proto::Uet(u) = &mut self.proto {
            u.pdc.shed(sender, receiver);
        }
    }

    /// Take the receiver's side of the flow from `rx`, the copy its receiver's partition
    /// kept (a run on several threads): each side changes only its own fields.
    pub fn take_receiver(&mut self, rx: &mut Flow) {
        self.core.take_receiver(&rx.core);
        match (&mut self.proto, &mut rx.proto) {
            (Proto::Roce(a), Proto::Roce(b)) => a.take_receiver(b),
            (Proto::Uet(a), Proto::Uet(b)) => a.take_receiver(b),
            _ => unreachable!("one flow, one transport"),
        }
    }

    pub fn new(spec: FlowSpec, mtu: u32, entropy: u16, proto: Proto) -> Self {
        Flow {
            core: FlowCore::new(spec, mtu, entropy),
            proto,
        }
    }

    /// Its shared state and its transport's, apart (to call the transport on the core).
    #[inline]
    pub fn split(&mut self) -> (&mut FlowCore, &mut Proto) {
        (&mut self.core, &mut self.proto)
    }

    /// True when the sender may send a packet now (rate limiting aside): not given up, the
    /// transport's window open, and the congestion control's window or credit.
    #[inline]
    pub fn can_send(&self) -> bool {
        !self.gave_up && self.proto.may_send(&self.core) && self.cc.allows(self.inflight(), self.mtu() as u64)
    }

    /// Payload bytes sent and not yet acknowledged.
    #[inline]
    pub fn inflight(&self) -> u64 {
        self.proto.inflight(&self.core)
    }

    /// Payload bytes acknowledged (UET: in whole packets acknowledged).
    pub fn acked_bytes(&self) -> u64 {
        self.proto.acked_bytes(&self.core)
    }

    /// Payload bytes sent at least once.
    pub fn sent_bytes(&self) -> u64 {
        self.proto.sent_bytes(&self.core)
    }

    /// Build the next data packet. The caller checked `can_send`.
    #[inline]
    pub fn next_packet(&mut self, id: FlowId, now: Time) -> Packet {
        self.proto.next_packet(&mut self.core, id, now)
    }

    /// Path (entropy) changes between consecutive packets (UET spraying).
    pub fn ev_changes(&self) -> u64 {
        self.proto.ev_changes()
    }

    /// Data waiting to be sent (new or to resend).
    pub fn has_work(&self) -> bool {
        self.proto.has_work(&self.core)
    }

    /// True while data is unacknowledged.
    pub fn outstanding(&self) -> bool {
        self.proto.outstanding()
    }

    /// The retransmission timeout in force (see [`Protocol::rto`]).
    pub fn rto(&self, base: sim_core::Duration, max: sim_core::Duration) -> sim_core::Duration {
        self.proto.rto(base, max)
    }

    /// When the retransmission timer should next fire.
    pub fn rto_due(&self, rto: sim_core::Duration) -> Time {
        self.proto.rto_due(&self.core, rto)
    }
}

/// The receiver's credit pacer reaches a flow's grants, its sender and whether it is done.
impl PacerFlow for Flow {
    fn grants(&mut self) -> Option<&mut Grants> {
        self.proto.grants()
    }
    fn sender(&self) -> HostId {
        self.spec.src
    }
    fn done(&self) -> bool {
        self.finish.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostId;

    #[test]
    fn message_is_cut_into_mtu_packets_with_a_short_last() {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size: 2500,
            start: Time::ZERO,
            prio: 3,
            deps: crate::workload::Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        let mut f = Flow::new(spec, 1000, 7, Proto::roce(None));
        assert_eq!(f.packets, 3);
        let p: Vec<Packet> = (0..3).map(|_| f.next_packet(FlowId(0), Time::ZERO)).collect();
        assert_eq!(
            p.iter().map(|p| p.payload).collect::<Vec<_>>(),
            vec![1000, 1000, 500]
        );
        assert_eq!(p[0].frame as u32, 1000 + 62);
        assert!(p[2].is_last() && !p[1].is_last());
        assert!(!f.can_send());
    }
}
