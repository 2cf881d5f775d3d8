//! A port's counters: those every transmitted frame updates ([`TxCounters`], in the port's
//! hot front) and the drops, marks and trims a port may never see ([`PortCounters`], their
//! per-priority detail allocated at first use).

use crate::packet::Packet;
use crate::prio::PRIORITIES;
use sim_core::Duration;

/// Counters kept per port, named as `ethtool -S` names them where a name exists. The ones
/// every frame updates are [`TxCounters`] and the per-priority `tx_prio{p}_packets`, kept
/// at the front of the port with its queues.
#[derive(Debug, Clone, Default)]
pub struct PortCounters {
    /// Frames this port's egress queue or ingress PG dropped, by reason.
    pub drops_lossy: u64,
    pub drops_headroom: u64,
    /// Frames corrupted on the cable into this port (FCS errors).
    pub drops_link_error: u64,
    /// Data frames marked CE at this egress.
    pub ecn_marked: u64,
    /// Data frames trimmed to their headers on their way into this egress.
    pub trimmed: u64,
    /// Drops per priority, allocated at the port's first (most ports never drop).
    pub(super) per_prio: Option<Box<PrioDrops>>,
}

/// A port's drops by priority.
#[derive(Debug, Clone, Default)]
pub(super) struct PrioDrops {
    /// Frames a NIC's full receive buffer discarded (`rx_prio{p}_discards`).
    rx_discards: [u64; PRIORITIES],
    /// Frames (and their bytes) dropped on their way into this egress queue (SONiC's
    /// `show queue counters` Drop/pkts, Drop/bytes).
    queue_drops: [u64; PRIORITIES],
    queue_drop_bytes: [u64; PRIORITIES],
    /// Frames this port's ingress priority group dropped (`show priority-group drop
    /// counters`).
    pg_drops: [u64; PRIORITIES],
    /// Data frames marked CE, and trimmed, on their way into this egress queue (SONiC's
    /// `show queue wredcounters` EcnMarked/pkts, `show queue counters --trim`).
    ecn_marked: [u64; PRIORITIES],
    trimmed: [u64; PRIORITIES],
    /// Frames (and bytes) sent toward this port that the cable lost (corrupted, or cut when
    /// it went down), by priority, PFC frames in the last slot: what the sender's transmit
    /// counters hold and this port never received.
    wire_lost: [(u64, u64); PRIORITIES + 1],
}

impl PortCounters {
    fn drops(&self) -> Option<&PrioDrops> {
        self.per_prio.as_deref()
    }

    fn drops_mut(&mut self) -> &mut PrioDrops {
        self.per_prio.get_or_insert_with(Box::default)
    }

    /// Frames a NIC's full receive buffer discarded at priority `p`.
    pub fn rx_discards(&self, p: usize) -> u64 {
        self.drops().map_or(0, |d| d.rx_discards[p])
    }

    /// Frames, and their bytes, dropped on their way into this egress queue at priority `p`.
    pub fn queue_drops(&self, p: usize) -> (u64, u64) {
        self.drops()
            .map_or((0, 0), |d| (d.queue_drops[p], d.queue_drop_bytes[p]))
    }

    /// Frames this port's ingress priority group `p` dropped.
    pub fn pg_drops(&self, p: usize) -> u64 {
        self.drops().map_or(0, |d| d.pg_drops[p])
    }

    pub fn count_rx_discard(&mut self, p: usize) {
        self.drops_mut().rx_discards[p] += 1;
    }

    /// A frame of `bytes` dropped on its way into this egress queue at priority `p`.
    pub fn count_queue_drop(&mut self, p: usize, bytes: u64) {
        let d = self.drops_mut();
        d.queue_drops[p] += 1;
        d.queue_drop_bytes[p] += bytes;
    }

    pub fn count_pg_drop(&mut self, p: usize) {
        self.drops_mut().pg_drops[p] += 1;
    }

    /// A data frame of priority `p` marked CE at this egress.
    pub fn count_ecn(&mut self, p: usize) {
        self.ecn_marked += 1;
        self.drops_mut().ecn_marked[p & 7] += 1;
    }

    /// A data frame of priority `p` trimmed on its way into this egress.
    pub fn count_trim(&mut self, p: usize) {
        self.trimmed += 1;
        self.drops_mut().trimmed[p & 7] += 1;
    }

    /// A frame sent toward this port was lost on the cable (corrupted or cut).
    pub fn count_wire_loss(&mut self, pkt: &Packet) {
        let slot = if pkt.is_link_control() {
            PRIORITIES
        } else {
            pkt.prio as usize & 7
        };
        let l = &mut self.drops_mut().wire_lost[slot];
        l.0 += 1;
        l.1 += pkt.frame as u64;
    }

    /// Frames and bytes sent toward this port that the cable lost: at priority `p`, or PFC
    /// frames for `p` = 8.
    pub fn wire_lost(&self, p: usize) -> (u64, u64) {
        self.drops().map_or((0, 0), |d| d.wire_lost[p])
    }

    /// Frames of priority `p` marked CE at this egress.
    pub fn ecn_marks(&self, p: usize) -> u64 {
        self.drops().map_or(0, |d| d.ecn_marked[p])
    }

    /// Frames of priority `p` trimmed on their way into this egress.
    pub fn trims(&self, p: usize) -> u64 {
        self.drops().map_or(0, |d| d.trimmed[p])
    }
}

/// Counters every transmitted frame updates.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxCounters {
    pub packets: u64,
    /// Frame bytes (headers + payload, without preamble and IFG), as NICs count them.
    pub bytes: u64,
    /// Largest occupancy seen (waiting + in service), in frame bytes.
    pub peak_queue_bytes: u64,
    /// Time spent serializing finished frames (their bits on the wire, preamble and gap
    /// included): what utilisation is counted from.
    pub busy: Duration,
}
