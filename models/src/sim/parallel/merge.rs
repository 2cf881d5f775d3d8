//! Putting the partitions of a run on several threads together: for a sample between two
//! windows, and at the end, into the first partition, which then holds what a run on one
//! thread would (every output is written from it).
//!
//! Each node's state (its ports, its NIC or switch, the cables arriving at it) comes from the
//! partition the node belongs to; each flow from its sender's partition, with its receiver's
//! side from its receiver's (`Flow::take_receiver`); counters and logs kept in several places
//! are added up or merged in the order of the events that wrote them.

use super::{Key, Layout};
use crate::pfc_watch::MAX_STORMS_LISTED;
use crate::sim::{Sim, Totals};
use crate::telemetry::EventLog;
use sim_core::Time;

/// The sample at `t` from every partition's state, recorded in the first's telemetry.
pub(super) fn sample(parts: &mut [&mut Sim], t: Time, l: &Layout) {
    let mut totals = crate::telemetry::Totals::default();
    for s in parts.iter() {
        let o = s.sample_totals();
        totals.delivered_bytes += o.delivered_bytes;
        totals.ecn_marked += o.ecn_marked;
        totals.cnps += o.cnps;
        totals.pfc_frames += o.pfc_frames;
        totals.trimmed += o.trimmed;
        totals.drops += o.drops;
    }
    let (head, rest) = parts.split_first_mut().expect("parts");
    let with_pg = head.sampler.with_pg();
    let (net, switches) = (&head.net, &head.switches);
    head.sampler.record(t, totals, |p| match l.owner[p.idx()] {
        0 => super::super::sample::port_sample(net, switches, t, p, with_pg),
        i => {
            let s = &rest[i as usize - 1];
            super::super::sample::port_sample(&s.net, &s.switches, t, p, with_pg)
        }
    });
    let flows = &head.flows;
    let copy = |i: u32, f: usize| match i {
        0 => &flows[f],
        i => &rest[i as usize - 1].flows[f],
    };
    head.flow_sampler.record(t, |f| {
        (
            copy(l.finisher[f], f).received_bytes,
            copy(l.sender[f], f).control_value(),
        )
    });
}

/// Move every partition's own state into the first.
pub(super) fn merge(parts: &mut [&mut Sim], l: &Layout) {
    merge_log(parts);
    merge_storms(parts);
    let (head, rest) = parts.split_first_mut().expect("parts");
    for f in 0..head.flows.len() {
        let dropped =
            rest.iter().map(|s| s.flows[f].dropped_packets).sum::<u32>() + head.flows[f].dropped_packets;
        let (s, r) = (l.sender[f] as usize, l.finisher[f] as usize);
        if s != 0 {
            std::mem::swap(&mut head.flows[f], &mut rest[s - 1].flows[f]);
        }
        if r != s {
            // The receiver's copy: the first partition's went to the sender's on the swap.
            let rx = &mut rest[if r == 0 { s } else { r } - 1].flows[f];
            head.flows[f].take_receiver(rx);
        }
        head.flows[f].dropped_packets = dropped;
    }
    let net = &mut head.net;
    for p in 0..net.ports.len() {
        if let i @ 1.. = l.owner[p] {
            let other = &mut rest[i as usize - 1];
            std::mem::swap(&mut net.ports[p], &mut other.net.ports[p]);
            net.ports[p].rehome(&mut other.net.pool, &mut net.pool);
            std::mem::swap(&mut head.rx[p], &mut other.rx[p]);
            if let Some(rx) = head.rx[p].as_deref_mut() {
                rx.drain.rehome(&mut other.net.pool, &mut net.pool);
            }
        }
        // A cable's frames are with the partition of its far end.
        if let i @ 1.. = l.owner[net.peer[p].idx()] {
            let other = &mut rest[i as usize - 1];
            std::mem::swap(&mut net.links[p], &mut other.net.links[p]);
            net.links[p].rehome(&mut other.net.pool, &mut net.pool);
        }
    }
    for (s, &node) in net.switch_node.iter().enumerate() {
        if let i @ 1.. = l.of_node[node.idx()] {
            std::mem::swap(&mut head.switches[s], &mut rest[i as usize - 1].switches[s]);
        }
    }
    for (h, &node) in net.host_node.iter().enumerate() {
        if let i @ 1.. = l.of_node[node.idx()] {
            let other = &mut rest[i as usize - 1];
            std::mem::swap(&mut head.nics[h], &mut other.nics[h]);
            std::mem::swap(&mut head.host_counters[h], &mut other.host_counters[h]);
            std::mem::swap(&mut head.pacers[h], &mut other.pacers[h]);
        }
    }
    for (i, other) in rest.iter_mut().enumerate() {
        let mine = |p: crate::ids::PortId| l.owner[p.idx()] as usize == i + 1;
        head.wd.take_ports(&mut other.wd, mine);
        head.totals.absorb(&other.totals);
        head.finished += other.finished;
        head.now = head.now.max(other.now);
        head.paths.absorb(std::mem::take(&mut other.paths));
    }
}

/// Every partition's pending events into the first's queue (a run going on on one thread).
pub(super) fn queues(parts: &mut [&mut Sim]) {
    let (head, rest) = parts.split_first_mut().expect("parts");
    for s in std::iter::once(&mut **head).chain(rest.iter_mut().map(|s| &mut **s)) {
        let part = s.part.as_deref_mut().expect("a partition");
        if let Some((t, ev)) = part.held.take() {
            s.queue.push(t, ev);
        }
    }
    for other in rest.iter_mut() {
        while let Some((t, ev)) = other.queue.pop() {
            head.queue.push(t, ev);
        }
    }
}

/// The partitions' event logs as one, in the order of the events that wrote their rows
/// (simultaneous events of two partitions differ in rank: a rank names its node).
fn merge_log(parts: &mut [&mut Sim]) {
    let cap = parts[0].log.cap();
    let mut rows = Vec::new();
    let mut cut = 0;
    for (i, s) in parts.iter().enumerate() {
        let keys: &[Key] = &s.part.as_deref().expect("a partition").log_keys;
        rows.extend(
            s.log
                .rows()
                .zip(keys)
                .enumerate()
                .map(|(n, (row, &k))| (k, i, n, row)),
        );
        cut += s.log.cut;
    }
    rows.sort_unstable_by_key(|&(k, i, n, _)| (k, i, n));
    let mut log = EventLog::new(cap);
    for (.., row) in rows {
        log.push(row);
    }
    log.cut += cut;
    parts[0].log = log;
}

/// The partitions' PFC storms as one list, in the order they were found: the list is capped
/// (`MAX_STORMS_LISTED`), so which are listed depends on that order.
fn merge_storms(parts: &mut [&mut Sim]) {
    let mut storms = Vec::new();
    let mut total = 0;
    for (i, s) in parts.iter_mut().enumerate() {
        let keys: &[Key] = &s.part.as_deref().expect("a partition").storm_keys;
        let listed = std::mem::take(&mut s.watch.storms);
        storms.extend(
            listed
                .into_iter()
                .zip(keys)
                .enumerate()
                .map(|(n, (st, &k))| (k, i, n, st)),
        );
        total += s.watch.storms_total;
    }
    storms.sort_unstable_by_key(|&(k, i, n, _)| (k, i, n));
    storms.truncate(MAX_STORMS_LISTED);
    let watch = &mut parts[0].watch;
    watch.storms = storms.into_iter().map(|(.., st)| st).collect();
    watch.storms_total = total;
}

impl Totals {
    /// Add another partition's totals (the end is the later of the two).
    fn absorb(&mut self, o: &Totals) {
        self.events += o.events;
        self.packet_hops += o.packet_hops;
        self.injected_packets += o.injected_packets;
        self.injected_bytes += o.injected_bytes;
        self.delivered_packets += o.delivered_packets;
        self.delivered_bytes += o.delivered_bytes;
        self.dropped_packets += o.dropped_packets;
        self.dropped_bytes += o.dropped_bytes;
        for (a, b) in self.drops_by_reason.iter_mut().zip(o.drops_by_reason) {
            *a += b;
        }
        self.pfc_frames += o.pfc_frames;
        self.ecn_marked += o.ecn_marked;
        self.delivered_payload += o.delivered_payload;
        self.cnps += o.cnps;
        self.trimmed += o.trimmed;
        self.trimmed_bytes += o.trimmed_bytes;
        self.int_bytes += o.int_bytes;
        self.lossless_drops_adequate += o.lossless_drops_adequate;
        self.causality_violations += o.causality_violations;
        self.llr_copies += o.llr_copies;
        self.llr_copy_bytes += o.llr_copy_bytes;
        self.llr_discarded += o.llr_discarded;
        self.llr_discarded_bytes += o.llr_discarded_bytes;
        self.end_time = self.end_time.max(o.end_time);
    }
}
