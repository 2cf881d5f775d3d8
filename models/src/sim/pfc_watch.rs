//! The PFC watch in a run (`crate::pfc_watch`: storms and deadlocks): where XOFFs begin and
//! the periodic look for a cyclic pause dependency, scheduled while ports are paused, which
//! stops the run when `pfc.on_deadlock` says so.

use super::{Event, Sim, StopReason};
use crate::ids::PortId;
use crate::network::Network;
use crate::pause::Held;
use crate::pfc::{OnDeadlock, PfcConfig};
use crate::pfc_watch::{Deadlock, PfcWatch, describe, pause_cycle, pause_origin};
use sim_core::{Duration, Time};

impl Sim<'_> {
    /// Ingress `port` enters XOFF on `prio`: find the pause chain's origin, start watching.
    pub(super) fn watch_xoff(&mut self, port: PortId, prio: u8) {
        let origin = pause_origin(&self.net, port, prio, self.now);
        self.net.ports[port.idx()].xoff.set_origin(prio as usize, origin);
        let now = self.now;
        let earliest = |first: &mut Option<Time>| *first = Some(first.map_or(now, |f| f.min(now)));
        // The look reads every partition's ports: the coordinator times it. In window order
        // the first XOFF handled need not be the first in time: the part's end times it.
        let first = match (self.part.as_deref_mut(), self.win.as_deref_mut()) {
            (Some(part), _) => Some(&mut part.first_xoff),
            (None, Some(w)) => Some(&mut w.first_xoff),
            (None, None) => None,
        };
        match first {
            Some(first) if !self.watch.check_pending || first.is_some() => {
                self.watch.check_pending = true;
                earliest(first);
            }
            Some(_) => {}
            None if !self.watch.check_pending => {
                self.watch.check_pending = true;
                let at = now + check_interval(&self.variant.pfc);
                self.schedule(at, Event::DeadlockCheck);
            }
            None => {}
        }
    }

    /// Egress `port` was held paused for a storm (`held`, with the origin of its pause chain).
    pub(super) fn record_storm(&mut self, port: PortId, held: Held) {
        if let Some(w) = self.win.as_deref_mut() {
            // In window order, listed in time order when the part ends.
            w.storm(port, held);
            return;
        }
        let key = self.part.as_deref().map(|part| part.key);
        self.list_storm(port, held, key.unwrap_or_default());
    }

    /// List a storm found by the event of `key` (a partition notes it, to merge the lists).
    pub(super) fn list_storm(&mut self, port: PortId, held: Held, key: (Time, u64)) {
        let listed = self.watch.storms.len();
        self.watch.record_storm(port, held);
        if let Some(part) = self.part.as_deref_mut()
            && self.watch.storms.len() > listed
        {
            // Which storms are listed depends on the order they were found in.
            part.storm_keys.push(key);
        }
    }

    /// How long a pause on egress `q` must last to be a storm: the detection time of the
    /// watchdog of `q`'s switch (`pfc.watchdog`, per switch where a tier or SONiC file sets
    /// it; the variant's for a NIC).
    pub(super) fn storm_time(&self, q: PortId) -> Duration {
        self.wd_settings(q).watchdog
    }

    /// Periodic while any egress is paused with frames waiting.
    pub(super) fn on_deadlock_check(&mut self) {
        self.watch.check_pending = false;
        let net = &self.net;
        let (again, stop) = look(&mut self.watch, &self.variant.pfc, self.now, net, |_| net);
        if stop.is_some() {
            self.stopped = stop;
        } else if again {
            self.watch.check_pending = true;
            let at = self.now + check_interval(&self.variant.pfc);
            self.schedule(at, Event::DeadlockCheck);
        }
    }

    /// A deadlock in words, with the run's port names.
    pub fn describe(&self, d: &Deadlock) -> String {
        describe(&self.net, d, self.variant.pfc.deadlock_timeout)
    }
}

/// How often the look for deadlocks runs while pauses last: a quarter of the timeout.
pub(super) fn check_interval(pfc: &PfcConfig) -> Duration {
    Duration(pfc.deadlock_timeout.0 / 4)
}

/// One look for a cyclic pause dependency at `now` on the fabric `fabric`, whose ports' state
/// `live` gives (`crate::pfc_watch::pause_cycle`), timing the cycle it finds in `watch`.
/// Returns whether to look again (a pause is in force) and, when `pfc.on_deadlock` stops the
/// run on the deadlock just confirmed, why.
pub(super) fn look<'n>(
    watch: &mut PfcWatch,
    pfc: &PfcConfig,
    now: Time,
    fabric: &Network,
    live: impl Fn(PortId) -> &'n Network + Copy,
) -> (bool, Option<StopReason>) {
    let mut any_paused = false;
    let mut found = None;
    for &prio in &pfc.priorities {
        let (cycle, paused) = pause_cycle(fabric, live, prio, now);
        any_paused |= paused;
        if let Some(c) = cycle {
            found = Some((prio, c));
            break;
        }
    }
    match found {
        None => watch.clear(),
        Some((prio, cycle)) => {
            let sent = |p: PortId| live(p).ports[p.idx()].tx_prio_packets(prio);
            if let Some(d) = watch.confirm(prio, cycle, sent, now, pfc.deadlock_timeout)
                && pfc.on_deadlock == OnDeadlock::Stop
            {
                let text = describe(live(d.cycle[0]), &d, pfc.deadlock_timeout);
                return (false, Some(StopReason::PfcDeadlock(text)));
            }
        }
    }
    // Pauses last while their XOFFs are refreshed: keep looking while any is in force.
    let xoff = |p: usize| !live(PortId(p as u32)).ports[p].xoff.mask.is_empty();
    (any_paused || (0..fabric.ports.len()).any(xoff), None)
}
