//! Watching PFC for the two ways it fails: storms and deadlocks.
//!
//! **Storms.** An egress queue held paused without a break for `pfc.watchdog` or longer is
//! in a storm (SONiC's PFC watchdog definition, its detection time; [`crate::pause::Held`]).
//! It is counted at the paused egress, once per unbroken pause, so the summary's
//! `pfc_storms`, the ports' `pfc_storm_detected` and a watchdog's `show pfcwd stats` count
//! the same thing. Pauses spread upstream hop by hop, so one stuck receiver shows up as
//! storms on every port behind it; each storm is reported with the port that *started* its
//! chain. A port's XOFF inherits the origin of the paused egress its frames are stuck in, or
//! is its own origin when no egress of its node was paused (its own buffer filled: a slow
//! receiver, an incast). The origin travels in the PFC frames the XOFF sends (simulator
//! metadata, no bytes on the wire), so a paused egress knows its chain from the frames it
//! obeyed, never by reading the pausing port's state across the cable, and its storm is
//! reported with the origin its last frame carried.
//!
//! **Deadlocks.** A cyclic buffer dependency (Hu et al., "Deadlocks in Datacenter Networks:
//! Why Do They Form, and How to Avoid Them", HotNets 2016; Guo et al., "RDMA over Commodity
//! Ethernet at Scale", SIGCOMM 2016, section 4.2): egress E is paused by its peer's ingress,
//! whose buffer is held by frames waiting in another paused egress E' of that switch, and so
//! on around a cycle back to E. Nothing in the cycle can move, pause refreshes keep it so,
//! and the run would go on forever. From the first XOFF on, a check every quarter of
//! `pfc.deadlock_timeout` builds that wait-for graph for each lossless priority; a cycle that
//! persists with no data frame leaving any of its ports for `pfc.deadlock_timeout` is
//! reported (its nodes, ports and priority) and, as `pfc.on_deadlock` says, stops the run or
//! lets it go on.

use crate::ids::PortId;
use crate::network::{Network, Role};
use crate::pause::Held;
use sim_core::{Duration, Time};

/// Storms listed individually in the results; the rest are counted.
pub const MAX_STORMS_LISTED: usize = 1000;

/// An egress held paused for the watchdog's detection time or longer.
#[derive(Debug, Clone)]
pub struct Storm {
    /// The paused egress port.
    pub port: PortId,
    pub prio: u8,
    pub start: Time,
    pub duration: Duration,
    /// The port whose XOFF started the chain (possibly `port` itself).
    pub origin: PortId,
}

/// A cycle of egress ports, each paused by the next.
#[derive(Debug, Clone)]
pub struct Deadlock {
    pub prio: u8,
    /// When the cycle was first seen.
    pub since: Time,
    pub detected: Time,
    /// Egress ports in dependency order: each is paused by the node the next one is on.
    pub cycle: Vec<PortId>,
}

/// What the watch found, and the cycle it is timing.
#[derive(Debug, Default)]
pub struct PfcWatch {
    pub storms: Vec<Storm>,
    pub storms_total: u64,
    pub deadlocks: Vec<Deadlock>,
    /// A check is scheduled.
    pub check_pending: bool,
    candidate: Option<Candidate>,
}

/// A cycle seen at a check, waiting to be confirmed by `deadlock_timeout` without progress.
#[derive(Debug)]
struct Candidate {
    prio: u8,
    cycle: Vec<PortId>,
    since: Time,
    /// Data frames sent by each port of the cycle when it was first seen.
    sent: Vec<u64>,
    reported: bool,
}

impl PfcWatch {
    /// Egress `port` was held paused for a storm (`held`, with the port whose XOFF started
    /// its chain).
    pub fn record_storm(&mut self, port: PortId, held: Held) {
        self.storms_total += 1;
        if self.storms.len() < MAX_STORMS_LISTED {
            self.storms.push(Storm {
                port,
                prio: held.prio,
                start: held.start,
                duration: held.end - held.start,
                origin: held.origin,
            });
        }
    }

    /// No cycle was seen at a check: nothing to time.
    pub fn clear(&mut self) {
        self.candidate = None;
    }

    /// A cycle on `prio` was seen at `now` (`sent`: data frames each of its ports has sent on
    /// `prio`): start timing it, or report it once nothing of it has moved for `timeout`.
    /// Returns a deadlock found now (reported once).
    pub fn confirm(
        &mut self,
        prio: u8,
        cycle: Vec<PortId>,
        sent: impl Fn(PortId) -> u64,
        now: Time,
        timeout: Duration,
    ) -> Option<Deadlock> {
        let mut key = cycle.clone();
        key.sort_unstable();
        let sent: Vec<u64> = key.iter().map(|&p| sent(p)).collect();
        let same = self
            .candidate
            .as_ref()
            .is_some_and(|c| c.prio == prio && c.cycle == key && c.sent == sent);
        if !same {
            self.candidate = Some(Candidate {
                prio,
                cycle: key,
                since: now,
                sent,
                reported: false,
            });
            return None;
        }
        let c = self.candidate.as_mut().expect("same candidate");
        if c.reported || now - c.since < timeout {
            return None;
        }
        c.reported = true;
        let d = Deadlock {
            prio,
            since: c.since,
            detected: now,
            cycle,
        };
        self.deadlocks.push(d.clone());
        Some(d)
    }
}

/// The origin of a new XOFF at `port` on `prio` at `now`: the origin of the pause holding an
/// egress of this switch where `port`'s frames wait, else `port` itself (its own congestion).
pub fn pause_origin(net: &Network, port: PortId, prio: u8, now: Time) -> PortId {
    let node = net.port_node[port.idx()];
    if !matches!(net.roles[node.idx()], Role::Switch(_)) {
        return port;
    }
    let paused = |e: &PortId| *e != port && held(net, *e, prio, now);
    let stalled = net
        .ports_of(node)
        .filter(paused)
        .find(|e| net.ports[e.idx()].holds_from(&net.pool, prio, port));
    match stalled {
        // A pause holds it: its frames said which chain it belongs to. (Held for want of
        // CBFC credit: the next port is where it stops.)
        Some(e) if net.ports[e.idx()].pause.mask(now).contains(prio) => net.ports[e.idx()].pause.origin(prio),
        Some(e) => net.peer[e.idx()],
        None => port,
    }
}

/// Egress `e` may not serve `prio` now: paused by PFC, or held for want of CBFC credit (a
/// credit loop deadlocks on a cyclic buffer dependency exactly as pauses do: the credit a
/// starved egress waits for is freed only when the next switch's starved egress moves).
fn held(net: &Network, e: PortId, prio: u8, now: Time) -> bool {
    let port = &net.ports[e.idx()];
    port.pause.mask(now).contains(prio) || port.starved.contains(prio)
}

/// The wait-for graph on `prio` at `now`: egress E (paused, frames waiting) points to each
/// paused egress E' of the switch E feeds that holds frames which came in from E. Returns a
/// cycle in dependency order, if any, and whether any egress was paused with frames.
///
/// `fabric` gives the wiring; `live(p)` the network holding port p's state and frames (the
/// fabric itself on one thread; the partition that owns p on several, the look running
/// between two windows).
pub fn pause_cycle<'n>(
    fabric: &Network,
    live: impl Fn(PortId) -> &'n Network,
    prio: u8,
    now: Time,
) -> (Option<Vec<PortId>>, bool) {
    let stuck = |e: PortId| {
        let net = live(e);
        held(net, e, prio, now) && net.ports[e.idx()].queued_bytes(prio) > 0
    };
    let nodes: Vec<PortId> = (0..fabric.ports.len() as u32)
        .map(PortId)
        .filter(|&e| stuck(e))
        .collect();
    if nodes.is_empty() {
        return (None, false);
    }
    let waits_for = |e: PortId| -> Vec<PortId> {
        let ingress = fabric.peer[e.idx()];
        let next = fabric.port_node[ingress.idx()];
        if !matches!(fabric.roles[next.idx()], Role::Switch(_)) {
            return Vec::new();
        }
        fabric
            .ports_of(next)
            .filter(|&f| f != ingress && stuck(f))
            .filter(|f| {
                let net = live(*f);
                net.ports[f.idx()].holds_from(&net.pool, prio, ingress)
            })
            .collect()
    };
    (find_cycle(&nodes, waits_for), true)
}

/// "PFC deadlock on priority 3 since 120us: sw0 to-sw1 -> sw1 to-sw2 -> sw2 to-sw0 -> (sw0),
/// ..." (`timeout`: how long nothing moved).
pub fn describe(net: &Network, d: &Deadlock, timeout: Duration) -> String {
    let hops: Vec<String> = d.cycle.iter().map(|&p| net.port_label(p)).collect();
    let back = net.port_node[d.cycle[0].idx()];
    let (what, how) = if net.ports[d.cycle[0].idx()].starved.contains(d.prio) {
        ("CBFC credit deadlock", "starved of credit by")
    } else {
        ("PFC deadlock", "paused by")
    };
    format!(
        "{what} on priority {} since {}: {} -> ({}), each egress {how} the next with no data sent for {}",
        d.prio,
        d.since,
        hops.join(" -> "),
        net.names[back.idx()],
        timeout
    )
}

/// A cycle in the graph on `nodes` with edges `next(n)`, by depth-first search with colours
/// (Cormen et al., Introduction to Algorithms, 22.3: a back edge closes a cycle). Iterative,
/// so long chains cannot overflow the stack; deterministic: nodes in the given order.
pub fn find_cycle<F: Fn(PortId) -> Vec<PortId>>(nodes: &[PortId], next: F) -> Option<Vec<PortId>> {
    use std::collections::HashMap;
    // 1: on the current path, 2: finished.
    let mut colour: HashMap<PortId, u8> = HashMap::new();
    for &start in nodes {
        if colour.contains_key(&start) {
            continue;
        }
        let mut path: Vec<PortId> = vec![start];
        let mut stack: Vec<Vec<PortId>> = vec![next(start)];
        colour.insert(start, 1);
        while let Some(edges) = stack.last_mut() {
            match edges.pop() {
                Some(m) => match colour.get(&m) {
                    Some(1) => {
                        let at = path.iter().position(|&p| p == m).expect("on path");
                        return Some(path[at..].to_vec());
                    }
                    Some(_) => {}
                    None => {
                        colour.insert(m, 1);
                        path.push(m);
                        stack.push(next(m));
                    }
                },
                None => {
                    stack.pop();
                    let done = path.pop().expect("path follows the stack");
                    colour.insert(done, 2);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(u32, u32)]) -> impl Fn(PortId) -> Vec<PortId> + '_ {
        move |n| edges.iter().filter(|e| e.0 == n.0).map(|e| PortId(e.1)).collect()
    }

    #[test]
    fn finds_a_cycle_in_dependency_order() {
        let nodes: Vec<PortId> = (0..6).map(PortId).collect();
        // 0 -> 1 -> 2 -> 3 -> 1, with 4 -> 5 a dead end.
        let c = find_cycle(&nodes, graph(&[(0, 1), (1, 2), (2, 3), (3, 1), (4, 5)])).unwrap();
        assert_eq!(c, vec![PortId(1), PortId(2), PortId(3)]);
    }

    #[test]
    fn a_dag_has_no_cycle() {
        let nodes: Vec<PortId> = (0..5).map(PortId).collect();
        let edges = [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)];
        assert_eq!(find_cycle(&nodes, graph(&edges)), None);
    }

    #[test]
    fn a_long_chain_closing_on_itself_does_not_overflow() {
        let n = 200_000u32;
        let nodes: Vec<PortId> = (0..n).map(PortId).collect();
        let next = move |p: PortId| vec![PortId((p.0 + 1) % n)];
        assert_eq!(find_cycle(&nodes, next).map(|c| c.len()), Some(n as usize));
    }

    #[test]
    fn a_cycle_is_reported_once_after_the_timeout_without_progress_and_timed_anew_on_progress() {
        let mut w = PfcWatch::default();
        let cycle = vec![PortId(3), PortId(1), PortId(2)];
        let us = |n: u64| Time(n * 1_000_000);
        let timeout = Duration::from_us(200);
        let still = |_: PortId| 7;
        assert!(
            w.confirm(3, cycle.clone(), still, us(100), timeout).is_none(),
            "first seen"
        );
        assert!(
            w.confirm(3, cycle.clone(), still, us(250), timeout).is_none(),
            "150 us stuck"
        );
        // A frame left one of its ports: the cycle is timed from now.
        let moved = |p: PortId| if p == PortId(2) { 8 } else { 7 };
        assert!(w.confirm(3, cycle.clone(), moved, us(260), timeout).is_none());
        assert!(
            w.confirm(3, cycle.clone(), moved, us(400), timeout).is_none(),
            "140 us since"
        );
        let d = w
            .confirm(3, cycle.clone(), moved, us(460), timeout)
            .expect("200 us stuck");
        assert_eq!((d.prio, d.since, d.detected), (3, us(260), us(460)));
        assert_eq!(d.cycle, cycle, "in dependency order, as found");
        assert!(
            w.confirm(3, cycle, moved, us(900), timeout).is_none(),
            "reported once"
        );
        assert_eq!(w.deadlocks.len(), 1);
    }
}
