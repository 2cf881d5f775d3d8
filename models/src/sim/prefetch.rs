//! Cache prefetching in the event loop (no effect on results): while one event is handled,
//! the lines the next ones will touch first are loaded. A busy fabric's ports and cables are
//! far apart in memory, so each event would otherwise begin with a cache miss.

use super::{Event, Sim};

/// Whether the event loops prefetch at all: only when what events touch outgrows a core's
/// cache (its ports, cables and flows, over half of the 2 MiB L2 per core of the Xeons we
/// measure on; the frames and buffer rows come on top). Below that every line is already
/// cached and the stages only cost their work: computing the next switch's ECMP egress
/// twice per hop, among others. P128 (768 ports, 128 flows) took 0.92 of the CPU time
/// without them, I128 0.99 (medians of 8 alternating pairs); P1024 (6,144 ports) 1.17 (4).
pub(super) fn worth_it(net: &crate::network::Network, flows: usize) -> bool {
    let bytes = net.ports.len() * (size_of::<crate::port::Port>() + size_of::<crate::link::Link>())
        + flows * size_of::<crate::nic::Flow>();
    bytes > 1 << 20
}

impl Sim<'_> {
    /// Four stages, for the event loops (`Sim::advance`, and a partition's window), each
    /// an event nearer than the one before: the lines of the fourth event due now (found
    /// from its ids alone, [`Self::prefetch_lines`]), the frame slots the third one's lines
    /// point at ([`Self::prefetch`]), the routing records the second one's frame reads or
    /// its host's send scheduler ([`Self::prefetch_route`]), and what the next one's frames
    /// point at
    /// ([`Self::prefetch_state`]). None where the fabric fits in the cache ([`worth_it`]).
    ///
    /// The egress the last stage computes for a frame about to reach a switch is kept
    /// ([`crate::routing::Router::remember`]): that switch routes the frame next, and reads
    /// it instead of hashing the frame again.
    #[inline]
    pub(super) fn prefetch_ahead(&mut self) {
        if !self.prefetching {
            return;
        }
        if let Some(&n) = self.queue.due_now(3) {
            self.prefetch_lines(n);
        }
        if let Some(&n) = self.queue.due_now(2) {
            self.prefetch(n);
        }
        if let Some(&n) = self.queue.due_now(1) {
            self.prefetch_route(n);
        }
        if let Some(&n) = self.queue.due_now(0)
            && let Some(hint) = self.prefetch_state(n)
        {
            self.net.router.remember(hint);
        }
    }

    /// The last stage, for a frame about to arrive: the slot of the frame behind it on the
    /// cable (its arrival time is read when the head arrives: with 1 us cables a busy cable
    /// holds a dozen frames, each slot written a microsecond ago), and, when it reaches a
    /// host, the flow it is delivered to (416 bytes, far from the port). P8192 on one thread
    /// 0.90-0.92 of the CPU time without it (3 alternating pairs). For a switch frame about
    /// to finish leaving: the buffer accounting row its departure updates (0.97 of the CPU
    /// time on P8192, 3 pairs; prefetched a stage earlier, 1.02).
    ///
    /// Returns the egress computed for a frame about to reach a switch.
    #[inline]
    fn prefetch_state(&self, ev: Event) -> Option<crate::routing::Asked> {
        let p = match ev {
            Event::Arrive(p) => p,
            Event::TxDone(p) => {
                // The frame goes on its cable: the cable's last frame is linked to it, in a
                // slot taken from the free list.
                for slot in self.net.links[p.idx()]
                    .send_slots(&self.net.pool)
                    .into_iter()
                    .flatten()
                {
                    prefetch(slot);
                }
                let node = self.net.port_node[p.idx()];
                let pkt = self.net.ports[p.idx()].in_service()?;
                match self.net.roles[node.idx()] {
                    // A switch's frame leaving: its buffer accounting row, written when it
                    // came in and long gone from the cache since.
                    crate::network::Role::Switch(s) if pkt.charge != crate::packet::Charge::None => {
                        for line in self.switches[s.idx()].departure_hint(p, pkt) {
                            prefetch(line);
                        }
                    }
                    // A host's: the flow that sent it most often sends the next one; the
                    // NIC's ready ring names the flow it serves.
                    crate::network::Role::Host(h) => {
                        if let Some(slot) = self.nics[h.idx()].ring_hint(p.0) {
                            prefetch(slot);
                        }
                        self.prefetch_flow(pkt.flow)
                    }
                    _ => {}
                }
                return None;
            }
            _ => return None,
        };
        let link = &self.net.links[p.idx()];
        if let Some(second) = link.second(&self.net.pool) {
            prefetch(second);
        }
        let q = self.net.peer[p.idx()];
        let node = self.net.port_node[q.idx()];
        let pkt = link.head_frame(&self.net.pool)?;
        match self.net.roles[node.idx()] {
            crate::network::Role::Host(_) => {
                self.prefetch_flow(pkt.flow);
                None
            }
            crate::network::Role::Switch(s) => {
                // The egress its routing will pick (ECMP depends on the frame alone), and
                // the buffer accounting its admission reads.
                let hint = self.net.router.hint(node, pkt)?;
                if let Some(out) = hint.out
                    && let Some(port) = self.net.ports.get(out.idx())
                {
                    prefetch_port(port);
                    for line in self.switches[s.idx()].admission_hint(q, out, pkt.prio) {
                        prefetch(line);
                    }
                }
                Some(hint)
            }
        }
    }

    /// For a frame about to reach a switch: the routing records its hint reads (the
    /// destination's, one of 65,536 at k=64), so that [`Self::prefetch_state`] computes the
    /// egress an event later without waiting on them. For a host's frame about to finish
    /// leaving: the NIC's scheduler for that port (its record and the host's counters were
    /// loaded a stage earlier, the ready ring's next entry is a stage later), the chain
    /// `next_data` walks before it reaches a flow. With the frame made in the port's slot,
    /// P8192 on one thread took 0.85 of the CPU time (10 alternating pairs).
    #[inline]
    fn prefetch_route(&self, ev: Event) {
        if let Event::TxDone(p) = ev {
            // A host's frame about to finish leaving: its NIC's scheduler for the port, which
            // `next_data` reads first (through the NIC's record, loaded a stage earlier).
            if let crate::network::Role::Host(h) = self.net.roles[self.net.port_node[p.idx()].idx()]
                && let Some((base, len)) = self.nics[h.idx()].sched_lines(p.0)
            {
                for off in (0..len).step_by(64) {
                    prefetch(base.wrapping_add(off));
                }
            }
            return;
        }
        let Event::Arrive(p) = ev else {
            return;
        };
        let node = self.net.port_node[self.net.peer[p.idx()].idx()];
        if let crate::network::Role::Switch(_) = self.net.roles[node.idx()]
            && let Some(pkt) = self.net.links[p.idx()].head_frame(&self.net.pool)
        {
            for line in self.net.router.hint_lines(node, pkt) {
                prefetch(line);
            }
        }
    }

    /// A flow's state (416 bytes; up to 512 are prefetched) and its transport's out of line:
    /// found through the flow's first line, which this loads (it misses when that line does).
    #[inline]
    fn prefetch_flow(&self, f: crate::ids::FlowId) {
        let Some(flow) = self.flows.get(f.idx()) else {
            return;
        };
        let base = flow as *const crate::nic::Flow as *const u8;
        for off in (0..std::mem::size_of::<crate::nic::Flow>().min(512)).step_by(64) {
            prefetch(base.wrapping_add(off));
        }
        if let Some((t, len)) = flow.transport_lines() {
            for off in (0..len.min(512)).step_by(64) {
                prefetch(t.wrapping_add(off));
            }
        }
    }

    /// Start loading what the next event will touch first, while this one is handled: a busy
    /// fabric's ports and cables are far apart in memory, so each event otherwise begins
    /// with a cache miss. Finding the frame slots reads the port or the cable, so
    /// [`Self::prefetch_lines`] loads those an event earlier still.
    #[inline]
    pub(super) fn prefetch(&self, ev: Event) {
        match ev {
            Event::Arrive(p) => {
                let link = &self.net.links[p.idx()];
                prefetch(link);
                if let Some(head) = link.head(&self.net.pool) {
                    prefetch(head);
                }
                prefetch(&self.net.ports[self.net.peer[p.idx()].idx()]);
            }
            Event::TxDone(p) => {
                let port = &self.net.ports[p.idx()];
                prefetch_port(port);
                prefetch(&self.net.links[p.idx()]);
                if let Some(next) = port.next_hint(&self.net.pool) {
                    prefetch(next);
                }
                // A host's: its NIC's record and counters, which its next frame updates.
                if let crate::network::Role::Host(h) = self.net.roles[self.net.port_node[p.idx()].idx()] {
                    prefetch(&self.nics[h.idx()]);
                    prefetch(&self.host_counters[h.idx()]);
                }
            }
            _ => {}
        }
    }

    /// The first stage of [`Self::prefetch`]: the lines an event's ids locate without a load.
    #[inline]
    pub(super) fn prefetch_lines(&self, ev: Event) {
        match ev {
            Event::Arrive(p) => {
                prefetch(&self.net.links[p.idx()]);
                prefetch(&self.net.peer[p.idx()]);
            }
            Event::TxDone(p) => {
                prefetch_port(&self.net.ports[p.idx()]);
                prefetch(&self.net.links[p.idx()]);
            }
            _ => {}
        }
    }
}

/// Every cache line of a port's hot front ([`Port::HOT_BYTES`]).
#[inline(always)]
fn prefetch_port(port: &crate::port::Port) {
    let base = port as *const crate::port::Port as *const u8;
    for off in (0..crate::port::Port::HOT_BYTES).step_by(64) {
        prefetch(base.wrapping_add(off));
    }
}

/// Hint the CPU to bring the cache line at `x` in (no effect on results).
#[inline(always)]
fn prefetch<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the address, and changes
    // no memory.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(x as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[cfg(test)]
mod tests {
    use crate::network::Network;
    use crate::routing::Routing;
    use crate::topology::{LinkConfig, TopologyConfig};
    use sim_core::{BitRate, Duration};

    fn fat_tree(k: u32) -> Network {
        let link = LinkConfig::plain(BitRate::gbps(100), Duration::from_us(1));
        let t = TopologyConfig::FatTree {
            k,
            host_link: link.clone(),
            fabric_link: link,
        }
        .build()
        .unwrap();
        Network::build(&t, Routing::Ecmp, &sim_core::RngStreams::new(1))
    }

    #[test]
    fn only_fabrics_that_outgrow_the_cache_prefetch() {
        // P128's fabric and flows (about 0.5 MiB) stay in a core's cache; P1024's (4 MiB) do not.
        assert!(!super::worth_it(&fat_tree(8), 128));
        assert!(super::worth_it(&fat_tree(16), 1024));
    }
}
