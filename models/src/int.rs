//! In-band network telemetry: switches stamp per-hop metadata into data packets, the receiver
//! echoes it in the ACK, and the sender's congestion control reads it (HPCC).
//!
//! The encoding is INT-MD over UDP, P4.org INT Dataplane Specification v2.1 (2020): after
//! the UDP header a 4 B shim (type 1 = INT-MD, NPT 1: the original UDP destination port,
//! 4791, is kept in the shim and the packet's becomes the INT port) and the 12 B INT-MD
//! header, then one record per switch, newest first. Each record holds what HPCC reads
//! (Li et al., SIGCOMM 2019, section 3.2; the HPCC ns-3 simulator stamps the same four at
//! dequeue, `switch-node.cc` `SwitchNotifyDequeue`): instruction bit 3 (queue ID and egress
//! queue occupancy, 4 B), bit 5 (egress timestamp, 8 B), and two domain-specific words, the
//! egress port's transmitted-bytes counter and its line rate (4 B each): Hop ML = 5 words.
//! A source NIC adds the headers (16 B); each switch adds its 20 B when it takes the packet
//! in, so buffers and serialization count them, and fills in the values as the packet
//! leaves, as the specification's egress-time fields require. At [`MAX_HOPS`] the stack is
//! full and further switches add nothing (the specification's Remaining Hop Count, E bit).
//!
//! The records live in an [`IntPool`] the packet refers to by index, so a packet stays 48
//! bytes; a stack returns to the pool when its ACK has been read, or when its packet is lost.

use sim_core::{BitRate, Time};

/// Shim (4 B) + INT-MD metadata header (12 B).
pub const HEADER_BYTES: u32 = 16;
/// One switch's record: 5 words.
pub const HOP_BYTES: u32 = 20;
/// Records a stack holds (the source's Remaining Hop Count).
pub const MAX_HOPS: usize = 8;
/// The UDP destination port of a packet carrying INT. INT v2.1 has no assigned port
/// (`INT_TBD`); 5000 is what public INT dissectors register on.
pub const UDP_PORT: u16 = 5000;

/// One switch's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntHop {
    /// Egress timestamp.
    pub ts: Time,
    /// Frame bytes the egress port had transmitted before this packet.
    pub tx_bytes: u64,
    /// Frame bytes queued at the egress port, behind this packet.
    pub qlen: u64,
    /// The egress port's line rate.
    pub rate: BitRate,
}

impl Default for IntHop {
    fn default() -> Self {
        IntHop {
            ts: Time::ZERO,
            tx_bytes: 0,
            qlen: 0,
            rate: BitRate(0),
        }
    }
}

/// One packet's records.
#[derive(Debug, Clone, Copy, Default)]
pub struct IntStack {
    hops: [IntHop; MAX_HOPS],
    n: u8,
}

impl IntStack {
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }

    /// Header bytes this stack adds to a frame.
    pub fn bytes(&self) -> u32 {
        HEADER_BYTES + HOP_BYTES * self.n as u32
    }
}

/// Every stack of a run, recycled through a free list (no allocation per packet once the pool
/// has grown to the most packets in flight with INT at once).
#[derive(Debug, Default)]
pub struct IntPool {
    stacks: Vec<IntStack>,
    free: Vec<u32>,
}

/// A packet's reference to its stack: index + 1 (0 = none).
pub type IntRef = u32;

impl IntPool {
    /// A new empty stack.
    pub fn alloc(&mut self) -> IntRef {
        let i = match self.free.pop() {
            Some(i) => {
                self.stacks[i as usize] = IntStack::default();
                i
            }
            None => {
                self.stacks.push(IntStack::default());
                self.stacks.len() as u32 - 1
            }
        };
        i + 1
    }

    pub fn release(&mut self, r: IntRef) {
        if r != 0 {
            debug_assert!(!self.free.contains(&(r - 1)));
            self.free.push(r - 1);
        }
    }

    pub fn get(&self, r: IntRef) -> &IntStack {
        &self.stacks[r as usize - 1]
    }

    /// A switch takes the packet in: room for its record. Returns the bytes the frame grows
    /// by (0 when the stack is full).
    pub fn push(&mut self, r: IntRef) -> u32 {
        let s = &mut self.stacks[r as usize - 1];
        if (s.n as usize) < MAX_HOPS {
            s.n += 1;
            HOP_BYTES
        } else {
            0
        }
    }

    /// The packet leaves the switch that pushed the last record: fill it in.
    pub fn stamp(&mut self, r: IntRef, hop: IntHop) {
        let s = &mut self.stacks[r as usize - 1];
        if s.n > 0 {
            s.hops[s.n as usize - 1] = hop;
        }
    }

    /// Whether any packet of the run carried INT.
    pub fn used(&self) -> bool {
        !self.stacks.is_empty()
    }

    /// Stacks referred to by packets still somewhere (allocated, not released).
    pub fn live(&self) -> usize {
        self.stacks.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_grow_per_hop_up_to_the_limit_and_are_reused() {
        let mut pool = IntPool::default();
        let a = pool.alloc();
        assert_eq!(pool.get(a).bytes(), 16);
        for i in 0..MAX_HOPS {
            assert_eq!(pool.push(a), 20);
            pool.stamp(
                a,
                IntHop {
                    qlen: i as u64,
                    ..Default::default()
                },
            );
        }
        assert_eq!(pool.push(a), 0, "full: the E bit, nothing added");
        assert_eq!(pool.get(a).bytes(), 16 + 20 * MAX_HOPS as u32);
        assert_eq!(pool.get(a).hops()[3].qlen, 3);
        pool.release(a);
        assert_eq!(pool.live(), 0);
        let b = pool.alloc();
        assert_eq!((b, pool.get(b).hops().len()), (a, 0), "the freed stack, emptied");
    }
}
