//! RoCEv2 RC transport: what happens when something reaches a queue pair.
//!
//! Each handler acts on one [`Flow`] (both ends of its QP) and returns what the NIC must send;
//! it touches nothing else, so a QP can be driven alone in a test. The go-back-N state
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

use super::HostCounters;
use super::flow::{Flow, Proto};
use crate::cc::api::CongestionControl;
use crate::cc::dcqcn::DcqcnParams;
use crate::packet::{Kind, Packet, flags, roce_ack_frame, roce_cnp_frame};
use sim_core::{Duration, Time};

/// What the responder does with one data packet.
#[derive(Debug, Default)]
pub struct DataOutcome {
    /// A CNP for the requester (the packet was CE-marked and one was due).
    pub cnp: Option<Packet>,
    /// The ACK or NAK, if one is due.
    pub reply: Option<Packet>,
    /// New payload bytes delivered to the application.
    pub delivered: u64,
    /// The message's last byte arrived.
    pub completed: bool,
}

/// Responder: a data packet arrived. The notification point runs with the receiver's own
/// DCQCN parameters (`np`), then go-back-N decides the answer.
pub fn on_data(
    flow: &mut Flow,
    np: Option<&DcqcnParams>,
    counters: &mut HostCounters,
    now: Time,
    pkt: &Packet,
    ack_every: u32,
) -> DataOutcome {
    let (src, packets) = (flow.spec.src, flow.packets);
    // RoCEv2 ACKs carry no ECN echo (DCQCN answers marks with CNPs); for a congestion
    // control that asks (the plug-ins) the model lets the ACK echo a mark on any packet it
    // covers, as DCTCP's receiver does (RFC 8257 section 3.2).
    let echo = flow.cc.echoes_ecn();
    let mut out = DataOutcome::default();
    let Proto::Roce(q) = &mut flow.proto else {
        return out;
    };
    if pkt.has(flags::CE) {
        q.ece |= echo;
        flow.ecn_marked += 1;
        counters.np_ecn_marked_roce_packets += 1;
        if let Some(params) = np {
            if q.np.on_ce(params, now) {
                flow.cnps_sent += 1;
                counters.np_cnp_sent += 1;
                let mut p = Packet::control(Kind::Cnp, pkt.flow, src, 0, roce_cnp_frame(), params.cnp_prio);
                (p.entropy, p.dscp) = (pkt.entropy, params.cnp_dscp);
                out.cnp = Some(p);
            }
        }
    }
    let (response, accepted) = q.receive(pkt.seq, pkt.is_last(), packets, ack_every);
    if accepted {
        flow.received_bytes += pkt.payload as u64;
        out.delivered = pkt.payload as u64;
        if q.expected == packets {
            flow.finish = Some(now);
            out.completed = true;
        }
    } else if pkt.seq >= q.expected {
        flow.out_of_sequence += 1;
        counters.out_of_sequence += 1;
    } else {
        flow.duplicates += 1;
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
        if std::mem::take(&mut q.ece) {
            p.flags |= flags::CE;
        }
        p
    });
    out
}

/// Requester: an ACK or NAK arrived. Progress pushes the retransmission deadline `rto` out.
pub fn on_ack(flow: &mut Flow, counters: &mut HostCounters, now: Time, pkt: &Packet, rto: Duration) {
    let nak = pkt.kind == Kind::Nak;
    if nak {
        flow.naks_received += 1;
        counters.packet_seq_err += 1;
    }
    flow.acks_received += 1;
    let packets = flow.packets;
    let Proto::Roce(q) = &mut flow.proto else { return };
    let rewinds = nak && pkt.seq < q.next_seq;
    if q.on_ack(pkt.seq, nak) || rewinds {
        flow.rto_deadline = now + rto;
        if q.acked == packets {
            flow.sender_done = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, HostId};
    use crate::workload::{Deps, FlowSpec};
    use sim_core::BitRate;

    fn flow(size: u64) -> Flow {
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
        Flow::new(spec, 1000, 0xc001, Proto::Roce(RoceQp::new(None)))
    }

    #[test]
    fn responder_acks_in_order_data_naks_a_gap_and_completes_on_the_last() {
        let mut f = flow(3000);
        let mut c = HostCounters::default();
        let pkts: Vec<Packet> = (0..3).map(|_| f.next_packet(FlowId(0), Time(5))).collect();
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
        assert!(last.completed && f.finish == Some(Time(13)));
        assert_eq!(f.received_bytes, 3000);
    }

    #[test]
    fn a_ce_mark_sends_one_cnp_per_np_interval() {
        let params = crate::cc::dcqcn::DcqcnConfig::default()
            .resolve(BitRate::gbps(100))
            .unwrap();
        let mut f = flow(10_000);
        let mut c = HostCounters::default();
        let mut p = f.next_packet(FlowId(0), Time::ZERO);
        p.flags |= flags::CE;
        let a = on_data(&mut f, Some(&params), &mut c, Time(1_000_000), &p, 1);
        let cnp = a.cnp.expect("first mark: a CNP");
        assert_eq!(
            (cnp.kind, cnp.dst, cnp.prio),
            (Kind::Cnp, HostId(0), params.cnp_prio)
        );
        let mut q = f.next_packet(FlowId(0), Time::ZERO);
        q.flags |= flags::CE;
        let b = on_data(&mut f, Some(&params), &mut c, Time(2_000_000), &q, 1);
        assert!(b.cnp.is_none(), "within min_time_between_cnps (4 us)");
        assert_eq!((c.np_ecn_marked_roce_packets, c.np_cnp_sent), (2, 1));
    }
}
