//! The NIC's send scheduler: per port, a round-robin list of ready flows per priority and the
//! rate-limited flows asleep until their next transmit time.
//!
//! The NIC pulls: when its port finishes a frame it sends first any queued control frames
//! (ACKs, NAKs, CNPs, forwarded packets), then the next data packet of the next ready flow:
//! strict priority across traffic classes the peer has not paused, round robin across QPs
//! within one, as the ConnectX send arbiter serves QPs. So the NIC never holds more than one
//! frame per port: flows wait in the NIC, not in a queue of packets.

use crate::ids::FlowId;
use crate::prio::PrioMask;
use sim_core::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One port's scheduler: a round-robin list of ready flows per priority, and the
/// rate-limited flows asleep until their next transmit time.
#[derive(Debug, Clone, Default)]
struct PortSched {
    ready: [VecDeque<FlowId>; 8],
    ready_mask: PrioMask,
    sleeping: BinaryHeap<Reverse<(Time, FlowId)>>,
    /// A wake-up event is scheduled at this time.
    wake_at: Option<Time>,
}

/// Per-host send scheduler.
#[derive(Debug, Clone, Default)]
pub struct Nic {
    first_port: u32,
    ports: Vec<PortSched>,
}

impl Nic {
    pub fn new(first_port: u32, ports: usize) -> Self {
        Nic {
            first_port,
            ports: vec![PortSched::default(); ports],
        }
    }

    #[inline]
    fn sched(&mut self, port: u32) -> &mut PortSched {
        &mut self.ports[(port - self.first_port) as usize]
    }

    /// `f` (priority `prio`) may send now on `port`.
    #[inline]
    pub fn make_ready(&mut self, port: u32, prio: u8, f: FlowId) {
        let s = self.sched(port);
        s.ready[prio as usize].push_back(f);
        s.ready_mask.insert(prio);
    }

    /// Priorities with a flow ready to send on `port` (flows asleep not counted).
    #[inline]
    pub fn ready_mask(&self, port: u32) -> PrioMask {
        self.ports[(port - self.first_port) as usize].ready_mask
    }

    /// `f` may send on `port` from `at`.
    pub fn sleep(&mut self, port: u32, f: FlowId, at: Time) {
        self.sched(port).sleeping.push(Reverse((at, f)));
    }

    /// The next flow to serve on `port` at `now`, skipping priorities in `paused`: wakes the
    /// flows whose time has come (`wake(flow, time)` returns the flow's priority if that entry
    /// is current), then strict priority, round robin within a priority. The flow leaves the scheduler; the caller puts
    /// it back if it can send again.
    #[inline]
    pub fn next_ready(
        &mut self,
        port: u32,
        now: Time,
        paused: PrioMask,
        mut wake: impl FnMut(FlowId, Time) -> Option<u8>,
    ) -> Option<FlowId> {
        let s = self.sched(port);
        while let Some(&Reverse((t, f))) = s.sleeping.peek() {
            if t > now {
                break;
            }
            s.sleeping.pop();
            // A flow re-paced earlier after a rate increase leaves a stale entry behind.
            if let Some(p) = wake(f, t) {
                s.ready[p as usize].push_back(f);
                s.ready_mask.insert(p);
            }
        }
        let p = (s.ready_mask & !paused).highest()?;
        let f = s.ready[p as usize].pop_front();
        if s.ready[p as usize].is_empty() {
            s.ready_mask.remove(p);
        }
        f
    }

    /// The memory `next_ready` reads first on `port`, its scheduler (a few lines), for a
    /// prefetch hint.
    #[inline]
    pub fn sched_lines(&self, port: u32) -> Option<(*const u8, usize)> {
        let s = self.ports.get(port.wrapping_sub(self.first_port) as usize)?;
        Some((s as *const PortSched as *const u8, size_of::<PortSched>()))
    }

    /// The memory of the ready-ring entry `next_ready` most likely takes next on `port`
    /// (pauses and sleepers aside), found without reading the ring, for a prefetch hint.
    #[inline]
    pub fn ring_hint(&self, port: u32) -> Option<*const u8> {
        let s = self.ports.get(port.wrapping_sub(self.first_port) as usize)?;
        let ring = &s.ready[s.ready_mask.highest()? as usize];
        Some(ring.as_slices().0.as_ptr().cast())
    }

    /// When `port` should next be woken for a sleeping flow, if no wake-up at or before that
    /// time is already scheduled. Records the wake-up as scheduled.
    pub fn wake_needed(&mut self, port: u32) -> Option<Time> {
        let s = self.sched(port);
        let next = s.sleeping.peek().map(|Reverse((t, _))| *t)?;
        if s.wake_at.is_some_and(|w| w <= next) {
            return None;
        }
        s.wake_at = Some(next);
        Some(next)
    }

    /// The wake-up event for `port` fired.
    pub fn woken(&mut self, port: u32, now: Time) {
        let s = self.sched(port);
        if s.wake_at.is_some_and(|w| w <= now) {
            s.wake_at = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_round_robin_within_a_priority() {
        let mut nic = Nic::new(10, 2);
        nic.make_ready(10, 3, FlowId(1));
        nic.make_ready(10, 3, FlowId(2));
        nic.make_ready(10, 6, FlowId(5));
        nic.make_ready(11, 3, FlowId(3));
        let prio = |f: FlowId, _| Some(if f.0 == 5 { 6 } else { 3 });
        assert_eq!(
            nic.next_ready(10, Time(0), PrioMask::EMPTY, prio),
            Some(FlowId(5))
        );
        let a = nic.next_ready(10, Time(0), PrioMask::EMPTY, prio).unwrap();
        nic.make_ready(10, 3, a);
        assert_eq!(
            nic.next_ready(10, Time(0), PrioMask::EMPTY, prio),
            Some(FlowId(2))
        );
        assert_eq!(
            nic.next_ready(10, Time(0), PrioMask::of(3), prio),
            None,
            "priority 3 paused"
        );
        assert_eq!(
            nic.next_ready(10, Time(0), PrioMask::EMPTY, prio),
            Some(FlowId(1))
        );
        assert_eq!(
            nic.next_ready(11, Time(0), PrioMask::EMPTY, prio),
            Some(FlowId(3))
        );
    }

    #[test]
    fn sleeping_flows_wake_at_their_time() {
        let mut nic = Nic::new(0, 1);
        nic.sleep(0, FlowId(7), Time(100));
        assert_eq!(nic.next_ready(0, Time(50), PrioMask::EMPTY, |_, _| Some(3)), None);
        assert_eq!(nic.wake_needed(0), Some(Time(100)));
        assert_eq!(nic.wake_needed(0), None, "already scheduled");
        nic.woken(0, Time(100));
        assert_eq!(
            nic.next_ready(0, Time(100), PrioMask::EMPTY, |_, _| Some(3)),
            Some(FlowId(7))
        );
        nic.sleep(0, FlowId(8), Time(200));
        assert_eq!(
            nic.next_ready(0, Time(300), PrioMask::EMPTY, |_, _| None),
            None,
            "stale entries are skipped"
        );
    }
}
