//! The switch: an output-queued shared-buffer ASIC, store and forward.
//!
//! What a switch does with a frame, in order, all in this module and the files beside it:
//!
//! ```text
//!  arrive (whole frame, store and forward)
//!   └─▶ route: ECMP hash or adaptive choice (crate::routing::Router::choose)
//!        └─▶ trim? (trim.rs: queue over the trim threshold, or the buffer would drop it)
//!             └─▶ admit (mmu.rs: min | shared under its dynamic threshold | headroom) or drop
//!                  └─▶ ECN at enqueue (ecn.rs), queue at the egress port; ingress PG at XOFF?
//!  dequeue ─▶ ECN at dequeue (ecn.rs) ─▶ serialize (crate::port) ─▶ departed: free the cells,
//!             XON when the ingress PG may resume
//! ```
//!
//! [`Switch::receive`], [`Switch::dequeued`] and [`Switch::departed`] are the whole switch:
//! they act on the switch's own ports and buffer and say what the run must do next (queue,
//! drop with a reason, send XOFF or XON), so a switch can be tested alone. ASIC buffer
//! architectures are named profiles ([`crate::asic`]) overridable key by key ([`config`]).

pub mod buffers;
pub mod classify;
pub mod config;
pub mod ecn;
pub mod mmu;
pub mod trim;

pub use buffers::{SwitchBuffers, SwitchLayout, build_buffers};
pub use config::{DscpClasses, SwitchConfig};

use crate::drop::DropReason;
use crate::ids::{HostId, NodeId, PortId, SwitchId};
use crate::packet::Packet;
use crate::pool::PacketPool;
use crate::port::Port;
use crate::routing::Router;
use ecn::MarkAt;
use mmu::Mmu;
use rand::RngExt;
use sim_core::{SimRng, Time};

/// One switch in a run: its buffer and where its ports lead.
#[derive(Debug, Clone)]
pub struct Switch {
    pub id: SwitchId,
    pub node: NodeId,
    /// The switch's first port: local port i is `PortId(first + i)`.
    first: u32,
    pub mmu: Mmu,
    /// Per local port: its lossless headroom covers what the cable delivers after XOFF.
    headroom_adequate: Vec<bool>,
    /// Per local port: the host cabled to it (`HostId::NONE` for a switch).
    edge_host: Vec<HostId>,
    /// The class of each DSCP, when the switch classifies by DSCP (`classify.rs`).
    dscp: Option<Box<DscpClasses>>,
    /// This switch's own random stream: WRED marking and the trim-tail choice draw from it.
    rng: SimRng,
    /// One of its ingresses has entered XOFF in this run (before that, none can be in XOFF:
    /// a departure need not read its ingress port's PFC state, which on a large fabric
    /// missed the cache once per frame).
    xoff_seen: bool,
}

/// What a switch did with an arriving frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Queued at egress `out`. `xoff`: its ingress priority group crossed XOFF and is not yet
    /// pausing its peer; `marked`: ECN marked it CE on enqueue.
    Queued { out: PortId, xoff: bool, marked: bool },
    /// Dropped, counted at port `at`. `adequate`: a lossless drop on a port whose headroom
    /// covers its cable (which must never happen).
    Dropped {
        reason: DropReason,
        at: PortId,
        adequate: bool,
    },
}

/// The verdict, and, when a trim cut the frame on the way (it may be trimmed and then queued,
/// or trimmed and still dropped), the egress it was trimmed for and the bytes cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub verdict: Verdict,
    pub trimmed: Option<(PortId, u32)>,
    /// The packet cut at its queue's tail to make room for this one (`switch.trim.tail`):
    /// its egress, its headers, now queued at the trim priority, and the bytes cut.
    pub tail_trimmed: Option<(PortId, Packet, u32)>,
}

impl Switch {
    /// Switch `id` at `node`, whose ports are `first..first + edge_host.len()`, with the buffer
    /// `layout` gives it, drawing WRED and trim choices from `rng` (its own stream).
    pub fn new(
        id: SwitchId,
        node: NodeId,
        first: PortId,
        layout: &SwitchLayout,
        edge_host: Vec<HostId>,
        rng: SimRng,
    ) -> Self {
        Switch {
            id,
            node,
            first: first.0,
            mmu: layout.mmu.fresh(),
            headroom_adequate: layout.headroom_adequate.clone(),
            edge_host,
            dscp: None,
            rng,
            xoff_seen: false,
        }
    }

    /// One of this switch's ingresses entered XOFF.
    #[inline]
    pub fn note_xoff(&mut self) {
        self.xoff_seen = true;
    }

    #[inline]
    fn local(&self, p: PortId) -> usize {
        (p.0 - self.first) as usize
    }

    /// A frame `pkt` arrived whole on `in_port`: route it, trim it if its queue is over the
    /// trim threshold or the buffer would drop it, admit it to the buffer or drop it, mark it,
    /// and queue it. `ports` are this switch's ports, `pool` the frames' slab.
    #[allow(clippy::too_many_arguments)]
    pub fn receive(
        &mut self,
        cfg: &SwitchConfig,
        now: Time,
        in_port: PortId,
        pkt: &mut Packet,
        ports: &mut [Port],
        pool: &mut PacketPool,
        router: &mut Router,
    ) -> Arrival {
        pkt.in_port = in_port;
        let prio = pkt.prio;
        let first = self.first;
        let load = |p: &PortId| {
            let port = &ports[(p.0 - first) as usize];
            (
                port.pause.is_paused(prio as usize, now),
                port.queued_bytes(prio) + port.is_busy() as u64,
            )
        };
        let Some(out) = router.choose(self.node, self.id, pkt, now, load) else {
            let verdict = Verdict::Dropped {
                reason: DropReason::NoRoute,
                at: in_port,
                adequate: false,
            };
            return Arrival {
                verdict,
                trimmed: None,
                tail_trimmed: None,
            };
        };
        let (inl, outl) = (self.local(in_port), self.local(out));
        let (charge, trimmed, tail_trimmed) = self.admit_or_trim(cfg, inl, outl, pkt, ports, pool);
        match charge {
            Ok(c) => pkt.charge = c,
            Err(reason) => {
                let (at, adequate) = if reason == DropReason::HeadroomExceeded {
                    ports[inl].counters.drops_headroom += 1;
                    ports[inl].counters.count_pg_drop(pkt.prio as usize);
                    (in_port, self.headroom_adequate[inl])
                } else {
                    let c = &mut ports[outl].counters;
                    c.drops_lossy += 1;
                    c.count_queue_drop(pkt.prio as usize, pkt.frame as u64);
                    (out, false)
                };
                let verdict = Verdict::Dropped { reason, at, adequate };
                return Arrival {
                    verdict,
                    trimmed,
                    tail_trimmed,
                };
            }
        }
        let xoff = self.mmu.is_lossless(pkt.prio)
            && self.mmu.wants_xoff(inl, pkt.prio)
            && !ports[inl].xoff.mask.contains(pkt.prio);
        let marked = cfg
            .ecn
            .as_ref()
            .is_some_and(|e| e.mark(MarkAt::Enqueue, &mut ports[outl], pkt, &mut self.rng));
        ports[outl].enqueue(pool, *pkt);
        Arrival {
            verdict: Verdict::Queued { out, xoff, marked },
            trimmed,
            tail_trimmed,
        }
    }

    /// Admit `pkt` for local egress `outl`, trimming it first when trimming is on and it is
    /// trimmable and either its queue is over the threshold or the buffer refuses it whole;
    /// over the threshold, a share `switch.trim.tail` of the time (drawn from its stream) the
    /// packet at the queue's tail is cut instead and `pkt` admitted whole if the buffer takes
    /// it. Returns the buffer's answer, the bytes cut from `pkt` if it was trimmed, and the
    /// tail's headers and bytes cut if the tail was.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn admit_or_trim(
        &mut self,
        cfg: &SwitchConfig,
        inl: usize,
        outl: usize,
        pkt: &mut Packet,
        ports: &mut [Port],
        pool: &mut PacketPool,
    ) -> (
        Result<crate::packet::Charge, DropReason>,
        Option<(PortId, u32)>,
        Option<(PortId, Packet, u32)>,
    ) {
        let Some(t) = cfg.trim.as_ref().filter(|_| trim::trimmable(pkt)) else {
            return (self.mmu.admit(inl, outl, pkt.prio, pkt.frame), None, None);
        };
        let mut tail = None;
        if !t.over_threshold(ports[outl].queued_bytes(pkt.prio)) {
            if let Ok(c) = self.mmu.admit(inl, outl, pkt.prio, pkt.frame) {
                return (Ok(c), None, None);
            }
        } else if t.tail > 0.0 && (t.tail >= 1.0 || self.rng.random_bool(t.tail)) {
            tail = self.trim_tail(t, outl, pkt.prio, ports, pool);
            if tail.is_some() {
                if let Ok(c) = self.mmu.admit(inl, outl, pkt.prio, pkt.frame) {
                    return (Ok(c), None, tail);
                }
            }
        }
        // Cut to the headers and try again at the trim priority.
        let (before, queue) = (pkt.frame, pkt.prio);
        t.trim(pkt, self.edge_host[outl] == pkt.dst);
        ports[outl].counters.count_trim(queue as usize);
        let cut = before.saturating_sub(pkt.frame) as u32;
        let out = PortId(self.first + outl as u32);
        (
            self.mmu.admit(inl, outl, pkt.prio, pkt.frame),
            Some((out, cut)),
            tail,
        )
    }

    /// Cut the packet at the tail of egress `outl`'s queue `prio` to its headers and queue
    /// them at the trim priority, when it is trimmable, lossy and the buffer takes the
    /// headers. Returns them and the bytes cut.
    fn trim_tail(
        &mut self,
        t: &trim::TrimConfig,
        outl: usize,
        prio: u8,
        ports: &mut [Port],
        pool: &mut PacketPool,
    ) -> Option<(PortId, Packet, u32)> {
        let last = *ports[outl].tail(pool, prio)?;
        if !trim::trimmable(&last) || self.mmu.is_lossless(prio) {
            return None;
        }
        let mut h = last;
        t.trim(&mut h, self.edge_host[outl] == last.dst);
        let inl = self.local(last.in_port);
        h.charge = self.mmu.admit(inl, outl, h.prio, h.frame).ok()?;
        ports[outl].pop_tail(pool, prio);
        self.mmu.release(inl, outl, last.prio, last.frame, last.charge);
        ports[outl].counters.count_trim(prio as usize);
        ports[outl].enqueue(pool, h);
        let out = PortId(self.first + outl as u32);
        Some((out, h, last.frame.saturating_sub(h.frame) as u32))
    }

    /// `pkt` was taken from `port`'s queue to be sent: WRED-ECN at dequeue. True when marked.
    #[inline]
    pub fn dequeued(&mut self, cfg: &SwitchConfig, port: &mut Port, pkt: &mut Packet) -> bool {
        cfg.ecn
            .as_ref()
            .is_some_and(|e| e.mark(MarkAt::Dequeue, port, pkt, &mut self.rng))
    }

    /// `pkt` finished leaving egress `out`: its cells go back to the buffer. True when its
    /// ingress priority group, in XOFF, may now resume (send XON). `ports` are this switch's.
    #[inline]
    pub fn departed(&mut self, out: PortId, pkt: &Packet, ports: &[Port]) -> bool {
        let inl = self.local(pkt.in_port);
        self.mmu
            .release(inl, self.local(out), pkt.prio, pkt.frame, pkt.charge);
        self.xoff_seen && ports[inl].xoff.mask.contains(pkt.prio) && self.mmu.allows_xon(inl, pkt.prio)
    }

    /// What [`Switch::departed`] will update for `pkt` leaving `out` (prefetch hints).
    #[inline]
    pub fn departure_hint(&self, out: PortId, pkt: &Packet) -> [*const u8; 2] {
        self.admission_hint(pkt.in_port, out, pkt.prio)
    }

    /// What [`Switch::receive`]'s admission will read for a frame of `prio` from `in_port` to
    /// `out` (prefetch hints): the same rows its departure updates.
    #[inline]
    pub fn admission_hint(&self, in_port: PortId, out: PortId, prio: u8) -> [*const u8; 2] {
        self.mmu.release_hint(self.local(in_port), self.local(out), prio)
    }

    /// Lossless ingress PG bytes of `port` and their XOFF threshold now (telemetry).
    pub fn pg_sample(&self, port: PortId) -> (u64, u64, u32) {
        self.mmu.pg_bytes_and_xoff(self.local(port))
    }

    /// Local index of `port` on this switch (SONiC names it `Ethernet{4 x index}`).
    pub fn local_index(&self, port: PortId) -> usize {
        self.local(port)
    }

    /// May ingress `port`, in XOFF on `prio`, resume (at a pause refresh)?
    #[inline]
    pub fn may_resume(&self, port: PortId, prio: u8) -> bool {
        self.mmu.allows_xon(self.local(port), prio)
    }
}

#[cfg(test)]
pub(crate) mod tests;
