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

use super::{Event, Sim};
use crate::drop::DropReason;
use crate::ids::PortId;
use crate::network::Role;
use crate::packet::Packet;
use crate::pfc::WatchdogAction;
use crate::prio::PrioMask;
use sim_core::Time;
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
    /// A watchdog on `ports` ports (none when every switch's action is off).
    pub fn new(variant: &crate::scenario::Variant, ports: usize) -> Self {
        let on = variant
            .switch_configs()
            .any(|(_, p)| p.watchdog_action != WatchdogAction::Off);
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

impl Sim<'_> {
    /// The PFC settings of the switch port `q` is on (None: a host's port).
    fn wd_pfc(&self, q: PortId) -> Option<&crate::pfc::PfcConfig> {
        match self.net.roles[self.net.port_node[q.idx()].idx()] {
            Role::Switch(s) => Some(self.variant.pfc_of(s.idx())),
            Role::Host(_) => None,
        }
    }

    /// The watchdog settings of `q`'s switch (only switch ports are watched).
    fn wd_settings(&self, q: PortId) -> &crate::pfc::PfcConfig {
        self.wd_pfc(q).unwrap_or(&self.variant.pfc)
    }

    /// What the watchdog of `q`'s switch does (off on a host).
    fn wd_action(&self, q: PortId) -> WatchdogAction {
        self.wd_pfc(q).map_or(WatchdogAction::Off, |p| p.watchdog_action)
    }

    /// True when switch egress `q` is watched on `prio`.
    fn watched(&self, q: PortId, prio: u8) -> bool {
        !self.wd.stormed.is_empty()
            && self.wd_action(q) != WatchdogAction::Off
            && self.variant.pfc.mask().contains(prio)
    }

    /// A PFC frame for `pkt.prio` reached switch port `q`. Returns true when the watchdog
    /// took it (the priority is stormed with PFC disabled: the frame is counted, not obeyed).
    pub(super) fn wd_pause_frame(&mut self, q: PortId, pkt: &Packet) -> bool {
        let prio = pkt.prio;
        if !self.watched(q, prio) {
            return false;
        }
        let disabled = self.wd_action(q) != WatchdogAction::Alert;
        if disabled && self.wd.is_stormed(q, prio) {
            self.net.ports[q.idx()].pause.count_frame(prio as usize);
            self.wd.queues.entry((q, prio)).or_default().last_pfc = self.now;
            return true;
        }
        false
    }

    /// After a PFC frame was obeyed on `q`: time the pause, if it is not timed already.
    pub(super) fn wd_watch(&mut self, q: PortId, prio: u8) {
        if !self.watched(q, prio) || self.wd.is_stormed(q, prio) {
            return;
        }
        let Some(since) = self.net.ports[q.idx()].pause.paused_since(prio, self.now) else {
            return;
        };
        let w = self.wd.queues.entry((q, prio)).or_default();
        if !w.check_pending {
            w.check_pending = true;
            let at = (since + self.wd_settings(q).watchdog).max(self.now);
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
        self.wd.queues.entry((q, prio)).or_default().check_pending = false;
        if self.wd.is_stormed(q, prio) || self.stopped.is_some() {
            return;
        }
        let Some(since) = self.net.ports[q.idx()].pause.paused_since(prio, self.now) else {
            return;
        };
        if self.now - since < self.wd_settings(q).watchdog {
            self.wd_watch(q, prio);
            return;
        }
        self.storm_detected(q, prio);
    }

    fn storm_detected(&mut self, q: PortId, prio: u8) {
        let action = self.wd_action(q);
        let pfc = self.wd_settings(q);
        let (watchdog, restoration) = (self.variant.pfc.watchdog, pfc.restoration());
        let tx = self.net.ports[q.idx()].tx_prio_packets(prio);
        let w = self.wd.queues.entry((q, prio)).or_default();
        w.detected += 1;
        w.tx_at_start = tx;
        w.last = [0; 4];
        w.last_pfc = self.now;
        self.wd.stormed[q.idx()].insert(prio);
        self.log.push(crate::telemetry::LogRow {
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
        self.wd.active += 1;
        let port = &mut self.net.ports[q.idx()];
        port.pause.lift(prio, self.now, watchdog);
        // The port stops generating PFC for the priority: an XOFF in force lapses.
        if port.xoff.mask.contains(prio) {
            if let Some(start) = port.xoff.leave(self.now, prio, watchdog) {
                self.record_storm(q, prio, start);
            }
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
            self.wd_drop_at_egress(q, pkt);
        }
    }

    /// `pkt`, charged to the buffer for egress `q`, is discarded there.
    fn wd_drop_at_egress(&mut self, q: PortId, pkt: Packet) {
        self.switch_departed(q, &pkt);
        let c = &mut self.net.ports[q.idx()].counters;
        c.count_queue_drop(pkt.prio as usize, pkt.frame as u64);
        let w = self.wd.queues.entry((q, pkt.prio)).or_default();
        w.tx_drop += 1;
        w.last[1] += 1;
        self.drop(pkt, DropReason::PfcWatchdog, q);
    }

    /// A frame arrived on switch port `in_port` while some storm has PFC disabled: count it,
    /// and with `drop` discard it. Returns the frame when it goes on.
    pub(super) fn wd_ingress(&mut self, in_port: PortId, pkt: Packet) -> Option<Packet> {
        if !self.wd.is_stormed(in_port, pkt.prio) {
            return Some(pkt);
        }
        let drop = self.wd_action(in_port) == WatchdogAction::Drop;
        let w = self.wd.queues.entry((in_port, pkt.prio)).or_default();
        if drop {
            w.rx_drop += 1;
            w.last[3] += 1;
            self.net.ports[in_port.idx()]
                .counters
                .count_pg_drop(pkt.prio as usize);
            self.drop(pkt, DropReason::PfcWatchdog, in_port);
            return None;
        }
        w.rx_ok += 1;
        w.last[2] += 1;
        Some(pkt)
    }

    /// A frame was just queued at egress `out`: with `drop` and the queue stormed, it goes.
    /// Returns true when it was discarded.
    pub(super) fn wd_egress(&mut self, out: PortId, prio: u8) -> bool {
        if !self.wd.is_stormed(out, prio) || self.wd_action(out) != WatchdogAction::Drop {
            return false;
        }
        self.wd_discard_queue(out, prio);
        true
    }

    /// Restore a stormed queue once its condition has cleared.
    pub(super) fn on_wd_restore(&mut self, q: PortId, prio: u8) {
        if !self.wd.is_stormed(q, prio) {
            return;
        }
        let action = self.wd_action(q);
        let due = if action == WatchdogAction::Alert {
            let until = self.net.ports[q.idx()].pause.paused_until(prio);
            (until > self.now).then_some(until)
        } else {
            let last = self.wd.queues[&(q, prio)].last_pfc;
            let at = last + self.wd_settings(q).restoration();
            (at > self.now).then_some(at)
        };
        if let Some(at) = due {
            self.schedule(at, Event::WdRestore(q, prio));
            return;
        }
        let tx = self.net.ports[q.idx()].tx_prio_packets(prio);
        let w = self
            .wd
            .queues
            .get_mut(&(q, prio))
            .expect("stormed queues are watched");
        w.restored += 1;
        w.last[0] = tx - w.tx_at_start;
        w.tx_ok += w.last[0];
        self.wd.stormed[q.idx()].remove(prio);
        if action != WatchdogAction::Alert {
            self.wd.active -= 1;
        }
        self.log.push(crate::telemetry::LogRow {
            time: self.now,
            port: q,
            prio,
            flow: crate::ids::FlowId::NONE,
            event: crate::telemetry::Trace::PfcwdRestore,
            reason: "no PFC frame for the restoration time",
        });
    }
}
