//! The order of simultaneous events: what a partitioned run must reproduce.

use super::Event;

/// The order of events due at the same picosecond (sim-core's [`Simultaneous`]): by what
/// they are, then by the entity they belong to, never by when they were scheduled. So the
/// order cannot depend on how the fabric is cut into partitions, and an event may be
/// scheduled as early as its time is known without moving a result.
///
/// Kinds, first to last: faults and routing change the fabric first; a frame that finishes
/// leaving a port frees its buffer before a frame arriving at the same instant is admitted
/// (as a shared-buffer switch releases cells at departure); timers next; a sample and a look
/// for deadlocks see everything that happened at that instant.
///
/// [`Simultaneous`]: sim_core::queue::Simultaneous
impl sim_core::queue::Simultaneous for Event {
    /// The rank holds the kind and the whole payload.
    const RANK_IS_IDENTITY: bool = true;

    #[inline]
    fn rank(&self) -> u64 {
        let (kind, entity): (u64, u64) = match *self {
            Event::Fault(i) => (0, i as u64),
            Event::Reroute => (1, 0),
            Event::TxDone(p) => (2, p.0 as u64),
            Event::Arrive(p) => (3, p.0 as u64),
            Event::Resume(p) => (4, p.0 as u64),
            Event::PfcRefresh(p) => (5, p.0 as u64),
            Event::LlrTimer(p) => (6, p.0 as u64),
            Event::CbfcTick(p) => (7, p.0 as u64),
            Event::WdCheck(p, prio) => (8, (p.0 as u64) << 8 | prio as u64),
            Event::WdRestore(p, prio) => (9, (p.0 as u64) << 8 | prio as u64),
            Event::RxDone(p) => (10, p.0 as u64),
            Event::NicWake(p) => (11, p.0 as u64),
            Event::CreditTick(h) => (12, h.0 as u64),
            Event::FlowStart(f) => (13, f.0 as u64),
            Event::LocalDone(f) => (14, f.0 as u64),
            Event::AckTimer(f) => (15, f.0 as u64),
            Event::CreditWait(f) => (16, f.0 as u64),
            Event::Probe(f) => (17, f.0 as u64),
            Event::Rto(f) => (18, f.0 as u64),
            Event::CcTimer(f) => (19, f.0 as u64),
            Event::DeadlockCheck => (20, 0),
            Event::Sample => (21, 0),
        };
        kind << 40 | entity
    }
}
