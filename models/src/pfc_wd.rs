//! A switch's PFC watchdog, as SONiC runs it (`pfc.watchdog_action`; SONiC's PFC watchdog
//! design, sonic-swss `orchagent/pfcwdorch.cpp`, `pfcactionhandler.cpp` and the
//! `pfc_detect_*.lua` / `pfc_restore.lua` scripts).
//!
//! **Detection.** A lossless egress queue of a switch that its peer has held paused without a
//! break (every refresh arriving before the last pause ran out, no XON) for `pfc.watchdog` is
//! in a storm. SONiC polls every 100-200 ms and counts the detection time down in polls; the
//! model decides at the exact time, so a box reacts up to one poll later.
//!
//! **Mitigation**, by action:
//! - `alert`: the storm is counted, PFC is untouched; the storm ends when the pause does.
//! - `forward`: the port's PFC enable bit for the priority is cleared: received PFC frames for
//!   it are ignored (the queue transmits) and the port's ingress sends none (an XOFF in force
//!   is dropped without an XON, so the peer's pause runs out). The priority is lossy there.
//! - `drop`: `forward`, and the queue's frames are discarded, as are frames arriving on the
//!   port at that priority and frames routed to the queue (Broadcom's ingress and egress ACL
//!   drop rules; NVIDIA's zero-size buffer profile).
//!
//! **Restoration** (`forward`, `drop`): after `pfc.watchdog_restore` with no PFC frame on the
//! priority, the handler is removed and the queue is lossless again.
//!
//! The counts per queue are `show pfcwd stats`' (storms detected / restored, frames sent and
//! dropped, frames received and dropped, in total and in the last storm).

//! This file decides; the run (`sim/pfc_wd.rs`) times the checks, logs, and lifts pauses and
//! discards frames as it says.

use crate::ids::PortId;
use crate::pfc::WatchdogAction;
use crate::prio::PrioMask;
use sim_core::{Duration, Time};
use std::collections::BTreeMap;

/// One queue's watchdog state and `show pfcwd stats` counts.
#[derive(Debug, Clone, Default)]
pub struct WdQueue {
    pub detected: u64,
    pub restored: u64,
    /// Frames sent from, and dropped at, the queue during storms.
    pub tx_ok: u64,
    pub tx_drop: u64,
    /// Frames received on the port at the priority during storms, and dropped.
    pub rx_ok: u64,
    pub rx_drop: u64,
    /// The same four for the last (or current) storm.
    pub last: [u64; 4],
    /// The queue's `tx_prio_packets` when the current storm began.
    tx_at_start: u64,
    /// The last PFC frame received on the priority during a storm.
    last_pfc: Time,
    /// A detection check is scheduled.
    check_pending: bool,
}

/// Every watched queue, and which are stormed.
#[derive(Debug, Default)]
pub struct PfcWd {
    /// Per port: its stormed priorities (empty when the watchdog is off).
    stormed: Vec<PrioMask>,
    /// Queues that have seen a pause, by (port, priority).
    pub queues: BTreeMap<(PortId, u8), WdQueue>,
    /// Storms in force whose action disabled PFC (`forward`, `drop`).
    active: u32,
}

impl PfcWd {
    /// A watchdog on `ports` ports; `on`: some switch runs one (none otherwise).
    pub fn new(on: bool, ports: usize) -> Self {
        let n = if on { ports } else { 0 };
        PfcWd {
            stormed: vec![PrioMask::EMPTY; n],
            ..Default::default()
        }
    }

    /// True when `port`'s priority `prio` is in a storm.
    #[inline]
    pub fn is_stormed(&self, port: PortId, prio: u8) -> bool {
        self.stormed.get(port.idx()).is_some_and(|m| m.contains(prio))
    }

    /// True while some storm has PFC disabled: only then do arriving frames need a look.
    #[inline]
    pub fn acting(&self) -> bool {
        self.active > 0
    }

    /// The queue's counts with the current storm's frames sent included (`tx_now`: the
    /// queue's `tx_prio_packets` now).
    pub fn stats(&self, port: PortId, prio: u8, tx_now: u64) -> Option<(bool, WdQueue)> {
        let mut q = self.queues.get(&(port, prio))?.clone();
        let stormed = self.is_stormed(port, prio);
        if stormed {
            let sent = tx_now - q.tx_at_start;
            q.tx_ok += sent;
            q.last[0] = sent;
        }
        Some((stormed, q))
    }
}

impl PfcWd {
    /// Take the state of the ports `mine` says are `other`'s (a run on several threads put
    /// together: each partition watched only its own ports).
    pub fn take_ports(&mut self, other: &mut PfcWd, mine: impl Fn(PortId) -> bool) {
        for (k, q) in std::mem::take(&mut other.queues) {
            if mine(k.0) {
                self.queues.insert(k, q);
            }
        }
        for (p, m) in other.stormed.iter().enumerate() {
            if mine(PortId(p as u32)) {
                self.stormed[p] = *m;
            }
        }
        self.active += other.active;
    }
}

/// What a pause check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Nothing to do (the queue is stormed already, or the run stopped).
    Nothing,
    /// Not paused long enough yet: time it again.
    Again,
    /// A storm: the pause lasted the detection time.
    Storm,
}

impl PfcWd {
    /// Does the watchdog (`action`) watch this queue: a lossless priority (`lossless`) of a
    /// switch egress whose watchdog is on?
    #[inline]
    pub fn watches(&self, action: WatchdogAction, lossless: PrioMask, prio: u8) -> bool {
        !self.stormed.is_empty() && action != WatchdogAction::Off && lossless.contains(prio)
    }

    /// A PFC frame for `prio` reached watched egress `q` at `now`: true when the watchdog
    /// takes it (the priority is stormed with PFC disabled: counted, not obeyed).
    pub fn takes_pause_frame(&mut self, q: PortId, prio: u8, action: WatchdogAction, now: Time) -> bool {
        if action != WatchdogAction::Alert && self.is_stormed(q, prio) {
            self.queues.entry((q, prio)).or_default().last_pfc = now;
            return true;
        }
        false
    }

    /// A pause (`since`) on watched egress `q` was obeyed: when to check it has lasted the
    /// `detection` time, unless it is timed already or stormed.
    pub fn time_pause(
        &mut self,
        q: PortId,
        prio: u8,
        since: Time,
        detection: Duration,
        now: Time,
    ) -> Option<Time> {
        if self.is_stormed(q, prio) {
            return None;
        }
        let w = self.queues.entry((q, prio)).or_default();
        if w.check_pending {
            return None;
        }
        w.check_pending = true;
        Some((since + detection).max(now))
    }

    /// The check of `q`'s pause fired: `since`, the pause's start if one is in force; `stopped`,
    /// the run is over.
    pub fn check(
        &mut self,
        q: PortId,
        prio: u8,
        since: Option<Time>,
        detection: Duration,
        now: Time,
        stopped: bool,
    ) -> Check {
        self.queues.entry((q, prio)).or_default().check_pending = false;
        if self.is_stormed(q, prio) || stopped {
            return Check::Nothing;
        }
        match since {
            None => Check::Nothing,
            Some(since) if now - since < detection => Check::Again,
            Some(_) => Check::Storm,
        }
    }

    /// A storm begins on `q`'s `prio` at `now` (`tx_now`: the queue's `tx_prio_packets`).
    pub fn storm(&mut self, q: PortId, prio: u8, action: WatchdogAction, tx_now: u64, now: Time) {
        let w = self.queues.entry((q, prio)).or_default();
        w.detected += 1;
        w.tx_at_start = tx_now;
        w.last = [0; 4];
        w.last_pfc = now;
        self.stormed[q.idx()].insert(prio);
        if action != WatchdogAction::Alert {
            self.active += 1;
        }
    }

    /// A frame at `prio` arrived on `in_port` while storms have PFC disabled: counted; true
    /// when `drop` discards it.
    pub fn drops_arrival(&mut self, in_port: PortId, prio: u8, action: WatchdogAction) -> bool {
        if !self.is_stormed(in_port, prio) {
            return false;
        }
        let w = self.queues.entry((in_port, prio)).or_default();
        if action == WatchdogAction::Drop {
            w.rx_drop += 1;
            w.last[3] += 1;
            return true;
        }
        w.rx_ok += 1;
        w.last[2] += 1;
        false
    }

    /// A frame was queued at egress `out`: true when `drop` discards that stormed queue.
    pub fn drops_queue(&self, out: PortId, prio: u8, action: WatchdogAction) -> bool {
        self.is_stormed(out, prio) && action == WatchdogAction::Drop
    }

    /// A frame of queue `q`, `prio` was discarded at egress.
    pub fn count_queue_drop(&mut self, q: PortId, prio: u8) {
        let w = self.queues.entry((q, prio)).or_default();
        w.tx_drop += 1;
        w.last[1] += 1;
    }

    /// When stormed queue `q`, `prio` may be restored, if not now: an `alert` storm ends with
    /// the pause (`paused_until`); the others `restoration` after the last PFC frame. None
    /// when the queue is not stormed, or now.
    pub fn restore_due(
        &self,
        q: PortId,
        prio: u8,
        action: WatchdogAction,
        paused_until: Time,
        restoration: Duration,
        now: Time,
    ) -> Option<Option<Time>> {
        if !self.is_stormed(q, prio) {
            return None;
        }
        let at = if action == WatchdogAction::Alert {
            paused_until
        } else {
            self.queues[&(q, prio)].last_pfc + restoration
        };
        Some((at > now).then_some(at))
    }

    /// Restore stormed queue `q`, `prio` (`tx_now`: its `tx_prio_packets`).
    pub fn restore(&mut self, q: PortId, prio: u8, action: WatchdogAction, tx_now: u64) {
        let w = self
            .queues
            .get_mut(&(q, prio))
            .expect("stormed queues are watched");
        w.restored += 1;
        w.last[0] = tx_now - w.tx_at_start;
        w.tx_ok += w.last[0];
        self.stormed[q.idx()].remove(prio);
        if action != WatchdogAction::Alert {
            self.active -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_held_for_the_detection_time_is_a_storm_and_drop_discards_until_restored() {
        let (q, prio, us) = (PortId(2), 3u8, |n: u64| Time(n * 1_000_000));
        let lossless = PrioMask::of(3);
        let mut wd = PfcWd::new(true, 4);
        let drop = WatchdogAction::Drop;
        assert!(wd.watches(drop, lossless, 3) && !wd.watches(drop, lossless, 1));
        assert!(!wd.watches(WatchdogAction::Off, lossless, 3));
        let det = Duration::from_us(200);
        // Paused at 10 us: checked at 210 us, not before, and only once.
        assert_eq!(wd.time_pause(q, prio, us(10), det, us(10)), Some(us(210)));
        assert_eq!(wd.time_pause(q, prio, us(10), det, us(50)), None, "timed already");
        assert_eq!(wd.check(q, prio, Some(us(10)), det, us(150), false), Check::Again);
        assert_eq!(wd.check(q, prio, Some(us(10)), det, us(210), false), Check::Storm);
        wd.storm(q, prio, drop, 40, us(210));
        assert!(wd.is_stormed(q, prio) && wd.acting());
        assert!(
            wd.takes_pause_frame(q, prio, drop, us(220)),
            "PFC disabled: not obeyed"
        );
        assert!(wd.drops_arrival(q, prio, drop) && wd.drops_queue(q, prio, drop));
        // Restored 200 us (the restoration time) after the last PFC frame, 220 us.
        let rest = Duration::from_us(200);
        assert_eq!(
            wd.restore_due(q, prio, drop, us(0), rest, us(300)),
            Some(Some(us(420)))
        );
        assert_eq!(wd.restore_due(q, prio, drop, us(0), rest, us(420)), Some(None));
        wd.restore(q, prio, drop, 45);
        assert!(!wd.is_stormed(q, prio) && !wd.acting());
        let (stormed, stats) = wd.stats(q, prio, 45).unwrap();
        assert_eq!(
            (
                stormed,
                stats.detected,
                stats.restored,
                stats.rx_drop,
                stats.tx_ok
            ),
            (false, 1, 1, 1, 5)
        );
    }
}
