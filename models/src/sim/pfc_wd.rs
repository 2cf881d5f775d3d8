//! The PFC watchdog in a run (`crate::pfc_wd` decides): its checks are timed, its storms
//! logged, the pause it lifts and the frames it discards put into effect here.

use super::{Event, Sim};
use crate::drop::DropReason;
use crate::ids::PortId;
use crate::network::Role;
use crate::packet::Packet;
use crate::pfc::WatchdogAction;
use crate::pfc_wd::Check;

impl Sim<'_> {
    /// The PFC settings of the switch port `q` is on (None: a host's port).
    fn wd_pfc(&self, q: PortId) -> Option<&crate::pfc::PfcConfig> {
        match self.net.roles[self.net.port_node[q.idx()].idx()] {
            Role::Switch(s) => Some(self.variant.pfc_of(s.idx())),
            Role::Host(_) => None,
        }
    }

    /// The watchdog settings of `q`'s switch (only switch ports are watched).
    pub(super) fn wd_settings(&self, q: PortId) -> &crate::pfc::PfcConfig {
        self.wd_pfc(q).unwrap_or(&self.variant.pfc)
    }

    /// What the watchdog of `q`'s switch does (off on a host).
    fn wd_action(&self, q: PortId) -> WatchdogAction {
        self.wd_pfc(q).map_or(WatchdogAction::Off, |p| p.watchdog_action)
    }

    /// True when switch egress `q` is watched on `prio`.
    fn watched(&self, q: PortId, prio: u8) -> bool {
        self.wd
            .watches(self.wd_action(q), self.variant.pfc.pause_mask(), prio)
    }

    /// A PFC frame for `pkt.prio` reached switch port `q`. Returns true when the watchdog
    /// took it (the priority is stormed with PFC disabled: the frame is counted, not obeyed).
    pub(super) fn wd_pause_frame(&mut self, q: PortId, pkt: &Packet) -> bool {
        let prio = pkt.prio;
        if !self.watched(q, prio) {
            return false;
        }
        let taken = self.wd.takes_pause_frame(q, prio, self.wd_action(q), self.now);
        if taken {
            self.net.ports[q.idx()].pause.count_frame(prio as usize);
        }
        taken
    }

    /// After a PFC frame was obeyed on `q`: time the pause, if it is not timed already.
    pub(super) fn wd_watch(&mut self, q: PortId, prio: u8) {
        if !self.watched(q, prio) || self.wd.is_stormed(q, prio) {
            return;
        }
        let Some(since) = self.net.ports[q.idx()].pause.paused_since(prio, self.now) else {
            return;
        };
        let detection = self.wd_settings(q).watchdog;
        if let Some(at) = self.wd.time_pause(q, prio, since, detection, self.now) {
            self.schedule(at, Event::WdCheck(q, prio));
        }
    }

    /// An XON reached `q`: an `alert` storm on it ends with the pause.
    pub(super) fn wd_xon(&mut self, q: PortId, prio: u8) {
        if self.wd_action(q) == WatchdogAction::Alert && self.wd.is_stormed(q, prio) {
            self.on_wd_restore(q, prio);
        }
    }

    /// Has the pause on `q` lasted the detection time?
    pub(super) fn on_wd_check(&mut self, q: PortId, prio: u8) {
        let since = self.net.ports[q.idx()].pause.paused_since(prio, self.now);
        let detection = self.wd_settings(q).watchdog;
        let stopped = self.stopped.is_some();
        match self.wd.check(q, prio, since, detection, self.now, stopped) {
            Check::Nothing => {}
            Check::Again => self.wd_watch(q, prio),
            Check::Storm => self.storm_detected(q, prio),
        }
    }

    fn storm_detected(&mut self, q: PortId, prio: u8) {
        let action = self.wd_action(q);
        let pfc = self.wd_settings(q);
        let restoration = pfc.restoration();
        let tx = self.net.ports[q.idx()].tx_prio_packets(prio);
        self.wd.storm(q, prio, action, tx, self.now);
        self.log_row(crate::telemetry::LogRow {
            time: self.now,
            port: q,
            prio,
            flow: crate::ids::FlowId::NONE,
            event: crate::telemetry::Trace::PfcwdStorm,
            reason: action.name(),
        });
        if action == WatchdogAction::Alert {
            let at = self.net.ports[q.idx()].pause.paused_until(prio).max(self.now);
            self.schedule(at, Event::WdRestore(q, prio));
            return;
        }
        let (watchdog, peer_watchdog) = (self.storm_time(q), self.storm_time(self.net.peer[q.idx()]));
        let port = &mut self.net.ports[q.idx()];
        let held = port.pause.lift(prio, self.now, watchdog);
        // The port stops generating PFC for the priority: an XOFF in force lapses.
        if port.xoff.mask.contains(prio) {
            port.xoff.leave(self.now, prio, peer_watchdog);
        }
        if let Some(held) = held {
            self.record_storm(q, held);
        }
        if action == WatchdogAction::Drop {
            self.wd_discard_queue(q, prio);
        }
        self.schedule(self.now + restoration, Event::WdRestore(q, prio));
        self.start_tx(q);
    }

    /// Discard every frame waiting in queue `prio` of switch egress `q`.
    fn wd_discard_queue(&mut self, q: PortId, prio: u8) {
        let frames = self.net.ports[q.idx()].drain_prio(&mut self.net.pool, prio);
        for pkt in frames {
            self.switch_departed(q, &pkt);
            let c = &mut self.net.ports[q.idx()].counters;
            c.count_queue_drop(pkt.prio as usize, pkt.frame as u64);
            self.wd.count_queue_drop(q, pkt.prio);
            self.drop(pkt, DropReason::PfcWatchdog, q);
        }
    }

    /// A frame arrived on switch port `in_port` while some storm has PFC disabled: count it,
    /// and with `drop` discard it. Returns the frame when it goes on.
    pub(super) fn wd_ingress(&mut self, in_port: PortId, pkt: Packet) -> Option<Packet> {
        if !self.wd.drops_arrival(in_port, pkt.prio, self.wd_action(in_port)) {
            return Some(pkt);
        }
        self.net.ports[in_port.idx()]
            .counters
            .count_pg_drop(pkt.prio as usize);
        self.drop(pkt, DropReason::PfcWatchdog, in_port);
        None
    }

    /// A frame was just queued at egress `out`: with `drop` and the queue stormed, it goes.
    /// Returns true when it was discarded.
    pub(super) fn wd_egress(&mut self, out: PortId, prio: u8) -> bool {
        if !self.wd.drops_queue(out, prio, self.wd_action(out)) {
            return false;
        }
        self.wd_discard_queue(out, prio);
        true
    }

    /// Restore a stormed queue once its condition has cleared.
    pub(super) fn on_wd_restore(&mut self, q: PortId, prio: u8) {
        let action = self.wd_action(q);
        let until = self.net.ports[q.idx()].pause.paused_until(prio);
        let restoration = self.wd_settings(q).restoration();
        match self.wd.restore_due(q, prio, action, until, restoration, self.now) {
            None => return,
            Some(Some(at)) => {
                self.schedule(at, Event::WdRestore(q, prio));
                return;
            }
            Some(None) => {}
        }
        let tx = self.net.ports[q.idx()].tx_prio_packets(prio);
        self.wd.restore(q, prio, action, tx);
        self.log_row(crate::telemetry::LogRow {
            time: self.now,
            port: q,
            prio,
            flow: crate::ids::FlowId::NONE,
            event: crate::telemetry::Trace::PfcwdRestore,
            reason: "no PFC frame for the restoration time",
        });
    }
}
