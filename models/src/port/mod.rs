//! Egress port: per-priority FIFOs, PFC pause state, and the serializer.
//!
//! Eight FIFOs, one per 802.1p priority, served in strict priority (7 highest), work
//! conserving (IEEE 802.1Q clause 8.6.8.1, strict priority transmission selection), skipping
//! priorities the peer has paused (802.1Qbb). MAC control frames (PFC) go first and are never
//! paused. A frame occupies the wire for its length plus 20 B of preamble and inter-frame gap
//! (IEEE 802.3 clause 4.4.2); a busy port holds exactly one pending event, its transmission-done.

use crate::ids::PortId;
use crate::packet::Packet;
use crate::pause::{PauseState, XoffState};
use crate::pool::{Fifo, PacketPool};
pub use crate::prio::PRIORITIES;
use crate::prio::PrioMask;
use sim_core::{BitRate, Duration, Time};

mod counters;
pub use counters::{PortCounters, TxCounters};

/// One priority's FIFO, its byte count, and the priority's transmit counter.
#[derive(Debug, Default)]
struct PrioQueue {
    frames: Fifo,
    /// Frame bytes waiting.
    bytes: u64,
    /// Data frames (everything but PFC) this port sent at the priority, queued here or
    /// taken straight from a NIC's send queue (`tx_prio{p}_packets`).
    tx_packets: u64,
    /// Their frame bytes.
    tx_bytes: u64,
    /// The most frame bytes that waited here at once.
    peak: u64,
}

/// Laid out in order (`repr(C)`, cache-line aligned) so that a frame touches three lines of
/// its port: the frame in service, when it ends and the rate (line 0); the occupancy, the
/// masks of what may be served, the pause state and the transmit counters every frame
/// updates (line 1); and its priority's queue. The control FIFO and the DWRR box come next,
/// read only when line 1's flags say they hold something; then the queues (what a
/// transmission reads, [`Port::HOT_BYTES`]), the drop counters and the ingress's XOFF mask,
/// with boxes for the PFC timers and per-priority drops that only ports that paused or
/// dropped have. On large fabrics a run is bound by memory latency. The frames themselves
/// wait in the network's [`PacketPool`], so a `Port` is not `Clone` (a copy would free the
/// same slots twice).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Port {
    in_service: Option<Packet>,
    /// When the frame in service ends serializing (its whole time is in `tx.busy` already).
    tx_end: Time,
    pub rate: BitRate,
    /// Frame bytes waiting plus the frame in service.
    occupancy: u64,
    /// Priorities whose queue holds frames.
    nonempty: PrioMask,
    /// Priorities held for want of link-level credit (CBFC, `crate::cbfc`): not served, as
    /// a paused priority is not, until credit comes back.
    pub starved: PrioMask,
    /// The control FIFO holds frames.
    control_waiting: bool,
    /// Priorities are scheduled by DWRR (`dwrr` is set).
    weighted: bool,
    /// Priorities the peer has paused on this egress (its mask is read by every dequeue).
    pub pause: PauseState,
    pub tx: TxCounters,
    /// MAC control frames (PFC, LLR ordered sets), sent ahead of everything.
    control: Fifo,
    /// DWRR between priorities (a switch's `switch.scheduler`); None: strict priority.
    dwrr: Option<Box<crate::scheduler::Dwrr>>,
    queues: [PrioQueue; PRIORITIES],
    pub counters: PortCounters,
    /// Priorities this port's ingress has asked the peer to pause.
    pub xoff: XoffState,
}

// Every field a dequeue reads lies in the front the event loops prefetch (`HOT_BYTES`), and
// that front is at most eight cache lines: checked when the crate compiles. The pause mask
// and the DWRR box were past it once, and the k=64 run's `Port::dequeue` had three quarters of
// its samples on those two loads.
const _: () = {
    use std::mem::offset_of;
    let hot = Port::HOT_BYTES;
    assert!(offset_of!(Port, queues) + size_of::<[PrioQueue; PRIORITIES]>() <= hot);
    assert!(hot <= 512);
    // What every frame reads or updates at its port, but its queue, in two lines: the frame
    // in service, its end and the rate in line 0; the occupancy and the port's peak, the
    // masks and flags a dequeue reads, the pause state and the transmit counters in line 1
    // (`benches/misses.sh`: a queued frame read two lines where one holds both, 22.86 ->
    // 22.37 misses per packet-hop on the k=64 bench at k=32; the pause mask in a third,
    // 22.37 -> 21.23).
    assert!(offset_of!(Port, rate) + size_of::<BitRate>() <= 64);
    assert!(offset_of!(Port, occupancy) == 64);
    assert!(offset_of!(Port, pause) + size_of::<PauseState>() <= 128);
    assert!(offset_of!(Port, tx) + size_of::<TxCounters>() <= 128);
    // Priority 3, where RoCEv2 and UET send their data by default, in one line, not across
    // two (40-byte queues cannot all be: UET's control at 7 spans lines 6 and 7).
    let q3 = offset_of!(Port, queues) + 3 * size_of::<PrioQueue>();
    assert!(q3 / 64 == (q3 + size_of::<PrioQueue>() - 1) / 64);
};

impl Port {
    /// Move the frames this port holds from pool `from` to pool `to` (`PacketPool::move_to`).
    pub fn rehome(&mut self, from: &mut PacketPool, to: &mut PacketPool) {
        from.move_to(&mut self.control, to);
        for q in &mut self.queues {
            from.move_to(&mut q.frames, to);
        }
    }

    /// The front of a port that a transmission reads: the frame in service, the occupancy,
    /// the control FIFO, the pause mask and the scheduler every dequeue reads, and the
    /// priority queues (`repr(C)` keeps them first), for prefetching.
    pub const HOT_BYTES: usize = std::mem::offset_of!(Port, counters);

    pub fn new(rate: BitRate) -> Self {
        Port {
            rate,
            queues: Default::default(),
            control: Fifo::default(),
            control_waiting: false,
            weighted: false,
            nonempty: PrioMask::EMPTY,
            starved: PrioMask::EMPTY,
            occupancy: 0,
            in_service: None,
            tx_end: Time::ZERO,
            tx: TxCounters::default(),
            pause: PauseState::default(),
            xoff: XoffState::default(),
            counters: PortCounters::default(),
            dwrr: None,
        }
    }

    /// Frame bytes held by this port (waiting and in service).
    #[inline]
    pub fn occupancy(&self) -> u64 {
        self.occupancy
    }

    /// Frame bytes waiting at priority `p`.
    #[inline]
    pub fn queued_bytes(&self, p: u8) -> u64 {
        self.queues[p as usize].bytes
    }

    #[inline]
    pub fn is_busy(&self) -> bool {
        self.in_service.is_some()
    }

    /// The frame being serialized, if any.
    pub fn in_service(&self) -> Option<&Packet> {
        self.in_service.as_ref()
    }

    /// Append `p` to the FIFO of its priority.
    #[inline]
    pub fn enqueue(&mut self, pool: &mut PacketPool, p: Packet) {
        debug_assert!((p.prio as usize) < PRIORITIES);
        self.occupancy += p.frame as u64;
        self.tx.peak_queue_bytes = self.tx.peak_queue_bytes.max(self.occupancy);
        self.nonempty.insert(p.prio);
        let q = &mut self.queues[p.prio as usize];
        q.bytes += p.frame as u64;
        q.peak = q.peak.max(q.bytes);
        pool.push(&mut q.frames, Time::ZERO, p);
    }

    /// The size of the first frame waiting at priority `p`.
    #[inline]
    pub fn head_frame(&self, pool: &PacketPool, p: u8) -> Option<u32> {
        pool.front(&self.queues[p as usize].frames)
            .map(|(_, f)| f.frame as u32)
    }

    /// Priorities whose queue holds frames.
    #[inline]
    pub fn nonempty(&self) -> PrioMask {
        self.nonempty
    }

    /// The last frame waiting at priority `p`.
    pub fn tail<'a>(&self, pool: &'a PacketPool, p: u8) -> Option<&'a Packet> {
        pool.back(&self.queues[p as usize].frames)
    }

    /// Take the last frame waiting at priority `p` (a trim of the queue's tail).
    pub fn pop_tail(&mut self, pool: &mut PacketPool, p: u8) -> Option<Packet> {
        let q = &mut self.queues[p as usize];
        let (_, pkt) = pool.pop_back(&mut q.frames)?;
        q.bytes -= pkt.frame as u64;
        if q.frames.is_empty() {
            self.nonempty.remove(p);
        }
        self.occupancy -= pkt.frame as u64;
        Some(pkt)
    }

    /// Schedule the priorities by these DWRR weights (0: strict, served first).
    pub fn set_dwrr(&mut self, weights: [u32; PRIORITIES]) {
        self.dwrr = Some(Box::new(crate::scheduler::Dwrr::new(weights)));
        self.weighted = true;
    }

    /// Queue a MAC control frame (PFC) ahead of all data.
    pub fn enqueue_control(&mut self, pool: &mut PacketPool, p: Packet) {
        self.occupancy += p.frame as u64;
        self.control_waiting = true;
        pool.push(&mut self.control, Time::ZERO, p);
    }

    /// Take the next control frame (PFC, LLR ordered sets), if one waits.
    #[inline]
    pub fn dequeue_control(&mut self, pool: &mut PacketPool) -> Option<Packet> {
        if !self.control_waiting {
            return None;
        }
        let (_, p) = pool.pop(&mut self.control)?;
        self.control_waiting = !self.control.is_empty();
        self.occupancy -= p.frame as u64;
        Some(p)
    }

    /// Take the next frame: control first, then strict priority among unpaused priorities.
    #[inline]
    pub fn dequeue(&mut self, pool: &mut PacketPool, now: Time) -> Option<Packet> {
        if let Some(p) = self.dequeue_control(pool) {
            return Some(p);
        }
        if self.nonempty.is_empty() {
            return None;
        }
        let ready = self.nonempty & !self.pause.mask(now) & !self.starved;
        let dwrr = if self.weighted {
            self.dwrr.as_deref_mut()
        } else {
            None
        };
        let prio = match dwrr {
            None => ready.highest()?,
            Some(d) => {
                let (queues, pool) = (&self.queues, &*pool);
                d.pick(ready, |p| {
                    pool.front(&queues[p as usize].frames)
                        .map_or(0, |(_, f)| f.frame as u64)
                })?
            }
        };
        let q = &mut self.queues[prio as usize];
        let (_, p) = pool.pop(&mut q.frames).expect("non-empty bit set");
        q.bytes -= p.frame as u64;
        if q.frames.is_empty() {
            self.nonempty.remove(prio);
        }
        self.occupancy -= p.frame as u64;
        Some(p)
    }

    /// The memory of the frame `dequeue` will most likely take next (control first, then the
    /// highest non-empty priority, ignoring pauses and DWRR), for a prefetch hint.
    #[inline]
    pub fn next_hint(&self, pool: &PacketPool) -> Option<*const u8> {
        if self.control_waiting {
            return pool.front_slot(&self.control);
        }
        let prio = self.nonempty.highest()?;
        pool.front_slot(&self.queues[prio as usize].frames)
    }

    /// Start serializing `p` at `now`; returns how long it occupies the wire. The port must
    /// be idle.
    #[inline]
    pub fn begin_tx(&mut self, p: Packet, now: Time) -> Duration {
        debug_assert!(self.in_service.is_none(), "port already transmitting");
        self.in_service = Some(p);
        self.begin_staged(now)
    }

    /// Where an idle port's next frame is made (`Sim::next_frame`), not copied once written
    /// (a copy waits for every older store to reach the cache); then begun
    /// ([`Port::begin_staged`]) or taken back ([`Port::unstage`]).
    #[inline]
    pub fn stage_slot(&mut self) -> &mut Option<Packet> {
        debug_assert!(self.in_service.is_none(), "port already transmitting");
        &mut self.in_service
    }

    /// The frame made in the port's slot, taken back (a link-level retry port decides
    /// whether it goes).
    pub fn unstage(&mut self) -> Packet {
        self.in_service.take().expect("a staged frame")
    }

    /// Start serializing the frame made in the port's slot at `now`; returns how long it
    /// occupies the wire.
    #[inline]
    pub fn begin_staged(&mut self, now: Time) -> Duration {
        let p = self.in_service.as_ref().expect("a staged frame");
        let (frame, wire) = (p.frame as u64, p.wire_bytes());
        self.occupancy += frame;
        self.tx.peak_queue_bytes = self.tx.peak_queue_bytes.max(self.occupancy);
        let d = self.rate.tx_time(wire);
        // Counted busy now, whole: `busy` takes off what is still to go.
        self.tx.busy += d;
        self.tx_end = now + d;
        d
    }

    /// The frame in service has left: return it for the link (which counts it as sent
    /// if the cable works).
    #[inline]
    pub fn end_tx(&mut self) -> Packet {
        let p = self.in_service.take().expect("tx-done on an idle port");
        self.occupancy -= p.frame as u64;
        p
    }

    /// Time this port has spent serializing up to `now`: finished frames and the part of the
    /// one in service already on the wire.
    pub fn busy(&self, now: Time) -> Duration {
        match self.in_service {
            Some(_) => Duration(self.tx.busy.0 - self.tx_end.saturating_since(now).0),
            None => self.tx.busy,
        }
    }

    /// A frame went onto the wire (an LLR ordered set is not a frame: not counted).
    #[inline]
    pub fn count_tx(&mut self, p: &Packet) {
        if p.kind == crate::packet::Kind::LlrCtl {
            return;
        }
        self.tx.packets += 1;
        self.tx.bytes += p.frame as u64;
        if !p.is_link_control() {
            let q = &mut self.queues[p.prio as usize & 7];
            q.tx_packets += 1;
            q.tx_bytes += p.frame as u64;
        }
    }

    /// Data frames sent at priority `p` (`tx_prio{p}_packets`).
    pub fn tx_prio_packets(&self, p: u8) -> u64 {
        self.queues[p as usize].tx_packets
    }

    /// Frame bytes of the data frames sent at priority `p`.
    pub fn tx_prio_bytes(&self, p: u8) -> u64 {
        self.queues[p as usize].tx_bytes
    }

    /// The most frame bytes that waited at priority `p` at once.
    pub fn peak_prio_bytes(&self, p: u8) -> u64 {
        self.queues[p as usize].peak
    }

    /// Take every frame waiting at priority `p` out of the queue (a PFC watchdog drains a
    /// stormed queue). The frame in service, if any, finishes.
    pub fn drain_prio(&mut self, pool: &mut PacketPool, p: u8) -> Vec<Packet> {
        let q = &mut self.queues[p as usize];
        let mut out = Vec::new();
        while let Some((_, f)) = pool.pop(&mut q.frames) {
            out.push(f);
        }
        self.occupancy -= q.bytes;
        q.bytes = 0;
        self.nonempty.remove(p);
        out
    }

    /// True when a frame of priority `prio` that entered its switch through `in_port` is
    /// waiting here (deadlock detection: this egress holds that ingress's buffer).
    pub fn holds_from(&self, pool: &PacketPool, prio: u8, in_port: PortId) -> bool {
        pool.iter(&self.queues[prio as usize].frames)
            .any(|(_, p)| p.in_port == in_port)
    }

    /// Every packet held: waiting and in service.
    pub fn held<'a>(&'a self, pool: &'a PacketPool) -> impl Iterator<Item = &'a Packet> {
        std::iter::once(&self.control)
            .chain(self.queues.iter().map(|q| &q.frames))
            .flat_map(|q| pool.iter(q).map(|(_, p)| p))
            .chain(self.in_service.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::*;
    use crate::packet::{Kind, Packet};

    fn pkt(seq: u32, prio: u8, frame: u16) -> Packet {
        let mut p = Packet::control(Kind::Data, FlowId(0), HostId(1), seq, frame as u32, prio);
        p.frame = frame;
        p
    }

    #[test]
    fn a_port_that_never_paused_or_dropped_carries_only_its_hot_front_and_masks() {
        // The PFC timers and the per-priority drops are allocated at first use: without
        // them a port is its hot front (the queues) plus under 200 bytes, where it was
        // 1,408 bytes in all. Finishing the run and reading the counters allocate nothing.
        let extra = size_of::<Port>() - Port::HOT_BYTES;
        assert!(extra < 200, "{} bytes past the hot front", extra);
        let mut port = Port::new(BitRate::gbps(100));
        assert_eq!(port.pause.finish(Time(1_000), Duration(10)), vec![]);
        port.xoff.finish(Time(1_000), Duration(10));
        assert!(port.pause.t_is_none() && port.xoff.t_is_none() && port.counters.per_prio.is_none());
        assert_eq!((port.pause.frames(3), port.xoff.frames(3)), (0, 0));
        port.counters.count_queue_drop(3, 1_500);
        assert_eq!(port.counters.queue_drops(3), (1, 1_500));
        assert_eq!(
            (port.counters.queue_drops(2), port.counters.pg_drops(3)),
            ((0, 0), 0)
        );
    }

    #[test]
    fn strict_priority_then_fifo() {
        let mut port = Port::new(BitRate::gbps(100));
        let mut pool = PacketPool::default();
        port.enqueue(&mut pool, pkt(1, 0, 100));
        port.enqueue(&mut pool, pkt(2, 3, 100));
        port.enqueue(&mut pool, pkt(3, 0, 100));
        port.enqueue(&mut pool, pkt(4, 3, 100));
        let order: Vec<u32> = std::iter::from_fn(|| port.dequeue(&mut pool, Time::ZERO))
            .map(|p| p.seq)
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(port.occupancy(), 0);
    }

    /// A 100 Gb/s port whose peer paused priority 3 at time 0 for `quanta`.
    fn paused_on_3(quanta: u16) -> (Port, PacketPool) {
        let mut port = Port::new(BitRate::gbps(100));
        let rate = port.rate;
        port.pause
            .on_frame(Time::ZERO, 3, quanta, rate, Duration::ZERO, Duration::from_us(1));
        (port, PacketPool::default())
    }

    #[test]
    fn paused_priority_waits_while_others_and_control_frames_go() {
        let (mut port, mut pool) = paused_on_3(100);
        port.enqueue(&mut pool, pkt(1, 3, 100));
        port.enqueue(&mut pool, pkt(2, 0, 100));
        port.enqueue_control(&mut pool, pkt(9, 0, 64));
        assert_eq!(port.dequeue(&mut pool, Time(1)).map(|p| p.seq), Some(9));
        assert_eq!(port.dequeue(&mut pool, Time(1)).map(|p| p.seq), Some(2));
        assert_eq!(port.dequeue(&mut pool, Time(1)), None, "priority 3 is paused");
        // 100 quanta at 100 Gb/s = 512 ns.
        assert_eq!(port.dequeue(&mut pool, Time(512_000)).map(|p| p.seq), Some(1));
    }

    #[test]
    fn serialization_includes_preamble_and_ifg() {
        let mut port = Port::new(BitRate::gbps(100));
        // 4158 B frame + 20 B = 4178 B = 33424 bits = 334.24 ns at 100 Gb/s.
        let d = port.begin_tx(pkt(0, 0, 4158), Time::ZERO);
        assert_eq!(d, Duration(334_240));
        assert!(port.is_busy());
        assert_eq!(port.occupancy(), 4158);
        let p = port.end_tx();
        port.count_tx(&p);
        assert_eq!((p.seq, port.tx.packets, port.tx.bytes), (0, 1, 4158));
        assert_eq!(port.occupancy(), 0);
    }

    #[test]
    fn a_frame_made_in_the_slot_serializes_as_one_handed_over_or_is_taken_back() {
        let mut port = Port::new(BitRate::gbps(100));
        *port.stage_slot() = Some(pkt(7, 0, 4158));
        assert_eq!(port.unstage().seq, 7, "taken back whole");
        assert!(
            !port.is_busy() && port.occupancy() == 0,
            "and the port is idle again"
        );
        port.stage_slot().insert(pkt(8, 0, 1000)).frame = 4158;
        // The same 4178 B on the wire as the frame handed to begin_tx above: 334.24 ns.
        assert_eq!(port.begin_staged(Time(5)), Duration(334_240));
        assert_eq!(
            (port.occupancy(), port.busy(Time(334_245))),
            (4158, Duration(334_240))
        );
        // Part way through, the part already on the wire; before it began, nothing.
        assert_eq!(port.busy(Time(100_005)), Duration(100_000));
        assert_eq!(port.busy(Time(5)), Duration::ZERO);
        assert_eq!(port.end_tx().seq, 8);
    }

    #[test]
    fn serialization_at_200g_and_400g_is_wire_bytes_over_the_rate() {
        // (frame + 20 B) x 8 / rate, in ps: a 4158 B frame (4096 B RoCEv2 payload) and a
        // 1086 B one (1024 B payload).
        for (gbps, frame) in [(200u64, 4158u64), (400, 4158), (200, 1086), (400, 1086)] {
            let mut port = Port::new(BitRate::gbps(gbps));
            let ps = (frame + 20) * 8 * 1000 / gbps;
            assert_eq!((frame + 20) * 8 * 1000 % gbps, 0, "exact at these rates");
            assert_eq!(
                port.begin_tx(pkt(0, 0, frame as u16), Time::ZERO),
                Duration(ps),
                "{gbps}G {frame}B"
            );
        }
    }

    #[test]
    fn held_counts_control_queued_and_in_service_frames_once() {
        let (mut port, mut pool) = paused_on_3(0xffff);
        port.enqueue(&mut pool, pkt(1, 3, 1000));
        port.enqueue(&mut pool, pkt(2, 0, 500));
        port.enqueue_control(&mut pool, pkt(9, 0, 64));
        let first = port.dequeue(&mut pool, Time(1)).unwrap();
        port.begin_tx(first, Time::ZERO);
        let mut seqs: Vec<u32> = port.held(&pool).map(|p| p.seq).collect();
        seqs.sort();
        assert_eq!(seqs, vec![1, 2, 9], "9 in service, 1 paused, 2 waiting");
        assert_eq!(pool.len(), 2, "the frame in service has left the pool");
        assert_eq!(port.occupancy(), 1000 + 500 + 64);
    }
}
