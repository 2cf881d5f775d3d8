//! RoCEv2 RC transport: what happens when something reaches a queue pair.
//!
//! Each handler acts on one flow ([`FlowCore`], both ends of its QP) and returns what the NIC
//! must send; it touches nothing else, so a QP can be driven alone in a test. The go-back-N state
//! machine is [`qp`] (IBA 1.4 sections 9.7.5-9.7.6); the responder runs DCQCN's notification
//! point ([`crate::cc::dcqcn`]); the requester's congestion control, DCQCN's reaction point or
//! another, is the flow's [`crate::cc::Sender`].
//!
//! ```text
//!  data ─▶ responder: CE? ─▶ CNP (NP pacing) ; expected PSN? ─▶ ACK (coalesced) | NAK | drop
//!  ACK/NAK ─▶ requester: cumulative ACK, go back N on a NAK, retransmission timer re-armed
//!  CNP ─▶ the requester's congestion control (DCQCN: alpha, a rate cut at most once per
//!         monitor period, then its rate timer's increases)
//! ```

pub mod qp;

pub use qp::{Response, RoceQp};

use super::core::{FlowCore, payload_of};
use super::protocol::{DataOutcome, Expiry, Feedback, FeedbackOutcome, Protocol, Rx, Timers};
use crate::cc::api::CongestionControl;
use crate::ids::FlowId;
use crate::packet::{Kind, Packet, flags, roce_ack_frame, roce_cnp_frame, roce_data_frame};
use sim_core::{Duration, Time};

impl Protocol for RoceQp {
    #[inline]
    fn may_send(&self, f: &FlowCore) -> bool {
        self.can_send(f.packets, f.mtu())
    }

    #[inline]
    fn inflight(&self, f: &FlowCore) -> u64 {
        f.bytes_before(self.next_seq) - f.bytes_before(self.acked)
    }

    fn acked_bytes(&self, f: &FlowCore) -> u64 {
        f.bytes_before(self.acked)
    }

    fn sent_bytes(&self, f: &FlowCore) -> u64 {
        f.bytes_before(self.max_sent)
    }

    fn has_work(&self, f: &FlowCore) -> bool {
        self.next_seq < f.packets
    }

    fn outstanding(&self) -> bool {
        RoceQp::outstanding(self)
    }

    /// The next PSN (go-back-N resends from the last ACK), on the QP's one entropy.
    #[inline]
    fn next_packet(&mut self, f: &mut FlowCore, id: FlowId, now: Time) -> Packet {
        let (seq, retx) = self.take_psn();
        let frame = roce_data_frame(payload_of(f.spec.size, f.mtu(), f.packets, seq));
        f.data_packet(id, (seq, retx), f.entropy, frame, flags::ECT, now)
    }

    fn carries_int(&self) -> bool {
        true
    }

    fn rto_base(&self, t: &Timers) -> Duration {
        t.rto_roce
    }

    /// The verbs `local_ack_timeout`: fixed.
    fn rto(&self, base: Duration, _max: Duration) -> Duration {
        base
    }

    /// `rto` after the last progress.
    fn rto_due(&self, f: &FlowCore, _rto: Duration) -> Time {
        f.rto_deadline
    }

    /// Go back to the last ACK and resend from there. RoCEv2 QPs retry without giving up
    /// here (`retry_cnt` is not modelled).
    fn on_timeout(&mut self, _f: &mut FlowCore, _now: Time, _rto: Duration, _retries: u32) -> Expiry {
        self.rewind();
        Expiry::Resend { lost: 0 }
    }

    /// Responder: a data packet arrived. The notification point runs with the receiver's own
    /// DCQCN parameters (`rx.np`), then go-back-N decides the answer.
    fn on_data(&mut self, f: &mut FlowCore, rx: &mut Rx, pkt: &Packet) -> DataOutcome {
        let (src, packets, now) = (f.spec.src, f.packets, rx.now);
        // RoCEv2 ACKs carry no ECN echo (DCQCN answers marks with CNPs); for a congestion
        // control that asks (the plug-ins) the model lets the ACK echo a mark on any packet it
        // covers, as DCTCP's receiver does (RFC 8257 section 3.2).
        let echo = f.cc.echoes_ecn();
        let counters = &mut *rx.counters;
        let mut out = DataOutcome::default();
        if pkt.has(flags::CE) {
            self.ece |= echo;
            f.ecn_marked += 1;
            counters.np_ecn_marked_roce_packets += 1;
            if let Some(params) = rx.np {
                if self.np.on_ce(params, now) {
                    f.cnps_sent += 1;
                    counters.np_cnp_sent += 1;
                    let mut p =
                        Packet::control(Kind::Cnp, pkt.flow, src, 0, roce_cnp_frame(), params.cnp_prio);
                    (p.entropy, p.dscp) = (pkt.entropy, params.cnp_dscp);
                    out.cnp = Some(p);
                }
            }
        }
        let (response, accepted) = self.receive(pkt.seq, pkt.is_last(), packets, rx.ack_every);
        if accepted {
            f.received_bytes += pkt.payload as u64;
            out.delivered = pkt.payload as u64;
            if self.expected == packets {
                f.finish = Some(now);
                out.completed = true;
            }
        } else if pkt.seq >= self.expected {
            f.out_of_sequence += 1;
            counters.out_of_sequence += 1;
        } else {
            f.duplicates += 1;
        }
        let reply = match response {
            Response::None => None,
            Response::Ack(psn) => {
                counters.acks_sent += 1;
                Some((Kind::Ack, psn))
            }
            Response::Nak(psn) => {
                counters.naks_sent += 1;
                Some((Kind::Nak, psn))
            }
        };
        out.reply = reply.map(|(kind, psn)| {
            let mut p = Packet::control(kind, pkt.flow, src, psn, roce_ack_frame(), pkt.prio);
            (p.sent_at, p.entropy) = (pkt.sent_at, pkt.entropy);
            if std::mem::take(&mut self.ece) {
                p.flags |= flags::CE;
            }
            p
        });
        out
    }

    /// Requester: an ACK or NAK arrived. Progress pushes the retransmission deadline out
    /// (`local_ack_timeout`); a NAK goes back N and tells the congestion control.
    fn on_feedback(&mut self, f: &mut FlowCore, fb: &mut Feedback, pkt: &Packet) -> FeedbackOutcome {
        let now = fb.now;
        let nak = pkt.kind == Kind::Nak;
        if nak {
            f.naks_received += 1;
            fb.counters.packet_seq_err += 1;
        }
        f.acks_received += 1;
        let rewinds = nak && pkt.seq < self.next_seq;
        if self.on_ack(pkt.seq, nak) || rewinds {
            f.rto_deadline = now + fb.timers.rto_roce;
            if self.acked == f.packets {
                f.sender_done = Some(now);
            }
        }
        if nak {
            f.cc.on_nack(now);
        }
        FeedbackOutcome {
            acked: true,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::dcqcn::DcqcnParams;
    use crate::ids::HostId;
    use crate::nic::HostCounters;
    use crate::workload::{Deps, FlowSpec};
    use sim_core::BitRate;

    /// The responder's handler, as the run calls it.
    fn on_data(
        (f, q): &mut (FlowCore, RoceQp),
        np: Option<&DcqcnParams>,
        c: &mut HostCounters,
        now: Time,
        pkt: &Packet,
        ack_every: u32,
    ) -> DataOutcome {
        let mut rx = Rx {
            now,
            counters: c,
            np,
            ack_every,
            ack_bytes: 0,
            control_prio: 7,
            rccc: false,
        };
        q.on_data(f, &mut rx, pkt)
    }

    fn flow(size: u64) -> (FlowCore, RoceQp) {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size,
            start: Time::ZERO,
            prio: 3,
            deps: Deps::None,
            after: sim_core::Duration::ZERO,
            qp: None,
        };
        (FlowCore::new(spec, 1000, 0xc001), RoceQp::new(None))
    }

    #[test]
    fn responder_acks_in_order_data_naks_a_gap_and_completes_on_the_last() {
        let mut f = flow(3000);
        let mut c = HostCounters::default();
        let pkts: Vec<Packet> = (0..3)
            .map(|_| f.1.next_packet(&mut f.0, FlowId(0), Time(5)))
            .collect();
        let first = on_data(&mut f, None, &mut c, Time(10), &pkts[0], 1);
        let ack = first.reply.expect("ack every packet");
        assert_eq!(
            (ack.kind, ack.seq, ack.dst, first.delivered),
            (Kind::Ack, 1, HostId(0), 1000)
        );
        assert_eq!(ack.sent_at, Time(5), "the ACK echoes the data's send time");
        let gap = on_data(&mut f, None, &mut c, Time(11), &pkts[2], 1);
        assert_eq!(gap.reply.map(|p| (p.kind, p.seq)), Some((Kind::Nak, 1)));
        assert_eq!((gap.delivered, c.out_of_sequence, c.naks_sent), (0, 1, 1));
        on_data(&mut f, None, &mut c, Time(12), &pkts[1], 1);
        let last = on_data(&mut f, None, &mut c, Time(13), &pkts[2], 1);
        assert!(last.completed && f.0.finish == Some(Time(13)));
        assert_eq!(f.0.received_bytes, 3000);
    }

    #[test]
    fn a_ce_mark_sends_one_cnp_per_np_interval() {
        let params = crate::cc::dcqcn::DcqcnConfig::default()
            .resolve(BitRate::gbps(100))
            .unwrap();
        let mut f = flow(10_000);
        let mut c = HostCounters::default();
        let mut p = f.1.next_packet(&mut f.0, FlowId(0), Time::ZERO);
        p.flags |= flags::CE;
        let a = on_data(&mut f, Some(&params), &mut c, Time(1_000_000), &p, 1);
        let cnp = a.cnp.expect("first mark: a CNP");
        assert_eq!(
            (cnp.kind, cnp.dst, cnp.prio),
            (Kind::Cnp, HostId(0), params.cnp_prio)
        );
        let mut q = f.1.next_packet(&mut f.0, FlowId(0), Time::ZERO);
        q.flags |= flags::CE;
        let b = on_data(&mut f, Some(&params), &mut c, Time(2_000_000), &q, 1);
        assert!(b.cnp.is_none(), "within min_time_between_cnps (4 us)");
        assert_eq!((c.np_ecn_marked_roce_packets, c.np_cnp_sent), (2, 1));
    }
}
