//! The PFC watch in a run (`crate::pfc_watch`: storms and deadlocks): where XOFFs begin and
//! the periodic look for a cyclic pause dependency, scheduled while ports are paused, which
//! stops the run when `pfc.on_deadlock` says so.

use super::{Event, Sim, StopReason};
use crate::ids::PortId;
use crate::pause::Held;
use crate::pfc::OnDeadlock;
use crate::pfc_watch::{Deadlock, pause_cycle, pause_origin};
use sim_core::Duration;

impl Sim<'_> {
    /// Ingress `port` enters XOFF on `prio`: find the pause chain's origin, start watching.
    pub(super) fn watch_xoff(&mut self, port: PortId, prio: u8) {
        let origin = pause_origin(&self.net, port, prio, self.now);
        self.net.ports[port.idx()].xoff.set_origin(prio as usize, origin);
        if !self.watch.check_pending {
            self.watch.check_pending = true;
            let at = self.now + self.check_interval();
            self.schedule(at, Event::DeadlockCheck);
        }
    }

    /// Egress `port` was held paused for a storm (`held`, with the origin of its pause chain).
    pub(super) fn record_storm(&mut self, port: PortId, held: Held) {
        self.watch.record_storm(port, held);
    }

    /// How long a pause on egress `q` must last to be a storm: the detection time of the
    /// watchdog of `q`'s switch (`pfc.watchdog`, per switch where a tier or SONiC file sets
    /// it; the variant's for a NIC).
    pub(super) fn storm_time(&self, q: PortId) -> Duration {
        self.wd_settings(q).watchdog
    }

    fn check_interval(&self) -> Duration {
        Duration(self.variant.pfc.deadlock_timeout.0 / 4)
    }

    /// Periodic while any egress is paused with frames waiting.
    pub(super) fn on_deadlock_check(&mut self) {
        self.watch.check_pending = false;
        let mut any_paused = false;
        let mut found = None;
        for &prio in &self.variant.pfc.priorities {
            let (cycle, paused) = pause_cycle(&self.net, prio, self.now);
            any_paused |= paused;
            if let Some(c) = cycle {
                found = Some((prio, c));
                break;
            }
        }
        match found {
            None => self.watch.clear(),
            Some((prio, cycle)) => {
                let ports = &self.net.ports;
                let sent = |p: PortId| ports[p.idx()].tx_prio_packets(prio);
                let timeout = self.variant.pfc.deadlock_timeout;
                if let Some(d) = self.watch.confirm(prio, cycle, sent, self.now, timeout)
                    && self.variant.pfc.on_deadlock == OnDeadlock::Stop
                {
                    self.stopped = Some(StopReason::PfcDeadlock(self.describe(&d)));
                }
            }
        }
        // Pauses last while their XOFFs are refreshed: keep looking while any is in force.
        any_paused |= self.net.ports.iter().any(|p| !p.xoff.mask.is_empty());
        if any_paused && self.stopped.is_none() {
            self.watch.check_pending = true;
            let at = self.now + self.check_interval();
            self.schedule(at, Event::DeadlockCheck);
        }
    }

    /// A deadlock in words, with the run's port names.
    pub fn describe(&self, d: &Deadlock) -> String {
        crate::pfc_watch::describe(&self.net, d, self.variant.pfc.deadlock_timeout)
    }
}
