//! The NIC sends a flow's next data packet: the packet as it leaves (a traffic generator's CE
//! mark, the INT headers a source adds, what the transport adds), what the congestion control
//! counts, the pace of the next one, and the retransmission timer. The run puts the packet on
//! the wire and the flow back in its port's scheduler as this says.

use super::config::ce_marked;
use super::core::Sched;
use super::flow::Flow;
use super::protocol::{Protocol, Timers};
use crate::cc::api::CongestionControl;
use crate::ids::FlowId;
use crate::int::IntPool;
use crate::packet::{Packet, flags};
use sim_core::{BitRate, Time};

/// What the NIC knows as it sends.
#[derive(Debug)]
pub struct SendCtx<'a> {
    pub now: Time,
    /// The port's rate: the pace of a flow its congestion control does not slow.
    pub line_rate: BitRate,
    /// `nic.ce_share`: mark this share of data packets CE, as a traffic generator does.
    pub ce_share: Option<f64>,
    /// UET: the receiver's ACK coalescing (a packet asks for an ACK near its window's end).
    pub ack_bytes: u64,
    pub timers: &'a Timers,
    /// Where a packet that carries INT keeps its stack.
    pub int: &'a mut IntPool,
}

/// Where the flow goes in its port's scheduler after a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing it may send now (its window or credit is full, or all is sent).
    Wait,
    /// It may send again at once (its pace is the line rate).
    Ready,
    /// Its congestion control paces it below the line rate: it may send again then.
    Sleep(Time),
}

/// A packet sent (made in the slot [`send`] was given), where its flow goes next, and when
/// its retransmission timer fires if this packet armed it.
#[derive(Debug)]
pub struct Sent {
    /// Its frame's length.
    pub frame: u16,
    /// The NIC marked it CE (`nic.ce_share`).
    pub ce_marked: bool,
    pub next: Next,
    pub rto: Option<Time>,
}

/// Send flow `id`'s next data packet (the caller checked `can_send`), made in `slot` (its
/// port's, `Port::stage_slot`) where it stays: what the NIC, the congestion control and the
/// transport add to it is written there.
pub fn send(flow: &mut Flow, id: FlowId, cx: &mut SendCtx, slot: &mut Option<Packet>) -> Sent {
    let now = cx.now;
    let pkt = slot.insert(flow.next_packet(id, now));
    // A traffic generator's CE marks (`nic.ce_share`), on first sends and resends alike.
    let marked = cx.ce_share.is_some_and(|share| ce_marked(pkt.seq, share));
    if marked {
        pkt.flags |= flags::CE;
    }
    if flow.cc.wants_int() && flow.proto.carries_int() {
        // The source NIC adds the INT headers; switches add their records.
        pkt.set_int_ref(cx.int.alloc());
        pkt.frame += crate::int::HEADER_BYTES as u16;
    }
    // The congestion control counts the packet (DCQCN's bytes, RCCC's credit); the transport
    // adds what it carries (UET: its pull target, a request for an ACK).
    flow.cc.on_sent(now, pkt.wire_bytes());
    let (core, proto) = flow.split();
    proto.on_sent(core, pkt, cx.ack_bytes);
    let rate = flow.cc.rate().map_or(cx.line_rate, |r| r.min(cx.line_rate));
    flow.next_tx = now + rate.tx_time(pkt.wire_bytes());
    (flow.last_tx, flow.last_wire) = (now, pkt.wire_bytes());
    let next = match flow.can_send() {
        false => Next::Wait,
        true if rate < cx.line_rate => {
            flow.sched = Sched::Sleeping;
            Next::Sleep(flow.next_tx)
        }
        true => {
            flow.sched = Sched::Ready;
            Next::Ready
        }
    };
    let rto = (!flow.rto_pending).then(|| {
        let rto = flow.rto(flow.proto.rto_base(cx.timers), cx.timers.rto_max);
        flow.rto_pending = true;
        flow.rto_deadline = now + rto;
        now + rto
    });
    Sent {
        frame: pkt.frame,
        ce_marked: marked,
        next,
        rto,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Sender;
    use crate::cc::dcqcn::{Dcqcn, DcqcnConfig};
    use crate::ids::HostId;
    use crate::nic::Proto;
    use crate::workload::{Deps, FlowSpec};
    use sim_core::Duration;

    fn roce(size: u64) -> Flow {
        let spec = FlowSpec {
            src: HostId(0),
            dst: HostId(1),
            size,
            start: Time::ZERO,
            prio: 3,
            deps: Deps::None,
            after: Duration::ZERO,
            qp: None,
        };
        Flow::new(spec, 1000, 0xc001, Proto::roce(None))
    }

    fn timers() -> Timers {
        Timers {
            rto_roce: Duration::from_us(100),
            rto: Duration::from_us(50),
            rto_max: Duration::from_us(1000),
            rto_retries: 5,
            ack: Duration::from_us(1),
            credit: Duration::from_us(50),
        }
    }

    #[test]
    fn at_line_rate_a_flow_stays_ready_and_its_first_packet_arms_the_timer() {
        let (t, mut int) = (timers(), IntPool::default());
        let mut cx = SendCtx {
            now: Time(1_000),
            line_rate: BitRate::gbps(100),
            ce_share: Some(0.5),
            ack_bytes: 16_384,
            timers: &t,
            int: &mut int,
        };
        let mut f = roce(3000);
        let mut slot = None;
        let a = send(&mut f, FlowId(0), &mut cx, &mut slot);
        let a_pkt = slot.take().expect("a frame made");
        assert_eq!(a.next, Next::Ready);
        assert_eq!(
            a.rto,
            Some(Time(1_000) + Duration::from_us(100)),
            "RoCEv2's own timeout"
        );
        assert!(!a_pkt.has(flags::CE), "packet 0 of a half share: unmarked");
        assert_eq!(a.frame, a_pkt.frame);
        let b = send(&mut f, FlowId(0), &mut cx, &mut slot);
        let b_pkt = slot.take().expect("a frame made");
        assert_eq!(b.rto, None, "the timer runs already");
        assert!(b_pkt.has(flags::CE), "packet 1 of a half share: marked");
        assert_eq!(
            f.next_tx,
            Time(1_000) + BitRate::gbps(100).tx_time(b_pkt.wire_bytes())
        );
        let c = send(&mut f, FlowId(0), &mut cx, &mut None);
        assert_eq!(c.next, Next::Wait, "all three packets sent");
    }

    #[test]
    fn a_flow_paced_below_the_line_rate_sleeps_until_its_next_packet_may_go() {
        let (t, mut int) = (timers(), IntPool::default());
        let mut cx = SendCtx {
            now: Time(1_000_000),
            line_rate: BitRate::gbps(100),
            ce_share: None,
            ack_bytes: 16_384,
            timers: &t,
            int: &mut int,
        };
        let p = std::sync::Arc::new(DcqcnConfig::default().resolve(BitRate::gbps(100)).unwrap());
        let mut f = roce(10_000);
        let mut dcqcn = Dcqcn::new(p, BitRate::gbps(100), Time::ZERO);
        dcqcn.on_cnp(Time(1_000_000));
        let rate = dcqcn.rate().unwrap();
        assert!(rate < BitRate::gbps(100), "a CNP cut the rate");
        f.cc = Sender::Dcqcn(Box::new(dcqcn));
        let mut slot = None;
        let s = send(&mut f, FlowId(0), &mut cx, &mut slot);
        let pkt = slot.expect("a frame made");
        assert_eq!(
            s.next,
            Next::Sleep(Time(1_000_000) + rate.tx_time(pkt.wire_bytes()))
        );
        assert_eq!(f.sched, Sched::Sleeping);
    }
}
