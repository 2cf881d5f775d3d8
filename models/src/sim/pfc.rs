//! PFC on the wire: an ingress (switch PG or NIC receive buffer) entering XOFF pauses its peer
//! and keeps refreshing the pause; XON releases it; a PFC frame arriving holds or releases a
//! priority on the receiving egress (`crate::pfc` for the state and the timing).

use super::{Event, Sim};
use crate::ids::PortId;
use crate::network::Role;
use crate::packet::Packet;

impl Sim<'_> {
    /// Enter XOFF on ingress `port` for `prio`: pause the peer and keep refreshing.
    pub(super) fn xoff(&mut self, port: PortId, prio: u8) {
        self.log_row(crate::telemetry::LogRow {
            time: self.now,
            port,
            prio,
            flow: crate::ids::FlowId::NONE,
            event: crate::telemetry::Trace::Xoff,
            reason: if self.net.ports[port.idx()].xoff.forced.contains(prio) {
                "a pfc-storm fault"
            } else {
                "ingress buffer over its XOFF threshold"
            },
        });
        self.net.ports[port.idx()].xoff.enter(self.now, prio);
        if let Role::Switch(s) = self.net.roles[self.net.port_node[port.idx()].idx()] {
            self.switches[s.idx()].note_xoff();
        }
        self.watch_xoff(port, prio);
        self.send_pfc(port, prio, self.variant.pfc.quanta);
        let p = &mut self.net.ports[port.idx()];
        if !p.xoff.refresh_pending {
            p.xoff.refresh_pending = true;
            let at = self.now + self.variant.pfc.refresh_interval(p.rate);
            self.schedule(at, Event::PfcRefresh(port));
        }
    }

    pub(super) fn xon(&mut self, port: PortId, prio: u8) {
        if self.net.ports[port.idx()].xoff.forced.contains(prio) {
            return; // a storm holds it
        }
        self.log_row(crate::telemetry::LogRow {
            time: self.now,
            port,
            prio,
            flow: crate::ids::FlowId::NONE,
            event: crate::telemetry::Trace::Xon,
            reason: "ingress buffer drained below XON",
        });
        let watchdog = self.storm_time(self.net.peer[port.idx()]);
        self.net.ports[port.idx()].xoff.leave(self.now, prio, watchdog);
        self.send_pfc(port, prio, 0);
    }

    /// A `pfc-storm` fault: `port` pauses its peer on `prio` whatever its buffer holds
    /// (`on`), or goes back to pausing only when its buffer asks (XON at the next refresh).
    pub(super) fn pfc_storm(&mut self, port: PortId, prio: u8, on: bool) {
        let x = &mut self.net.ports[port.idx()].xoff;
        if on {
            x.forced.insert(prio);
            if !x.mask.contains(prio) {
                self.xoff(port, prio);
            }
        } else if x.forced.contains(prio) {
            x.forced.remove(prio);
            if x.mask.contains(prio) && self.may_resume(port, prio) {
                self.xon(port, prio);
            }
        }
    }

    /// May ingress `port`, in XOFF on `prio`, resume? A switch asks its buffer, a NIC its
    /// receive buffer; a storm holds it.
    fn may_resume(&self, port: PortId, prio: u8) -> bool {
        if self.net.ports[port.idx()].xoff.forced.contains(prio) {
            return false;
        }
        let node = self.net.port_node[port.idx()];
        match (self.net.roles[node.idx()], &self.rx[port.idx()]) {
            (Role::Switch(s), _) => self.switches[s.idx()].may_resume(port, prio),
            (Role::Host(_), Some(rx)) => rx.occupancy() <= rx.spec.xon_at,
            (Role::Host(_), None) => true,
        }
    }

    /// Put a PFC frame for `prio` on `port`'s wire, ahead of all queued data.
    fn send_pfc(&mut self, port: PortId, prio: u8, quanta: u16) {
        let origin = self.net.ports[port.idx()].xoff.origin(prio as usize);
        let frame = Packet::pause(prio, quanta, origin);
        self.totals.injected_packets += 1;
        self.totals.injected_bytes += frame.frame as u64;
        self.totals.pfc_frames += 1;
        let p = &mut self.net.ports[port.idx()];
        p.xoff.count_frame(prio as usize);
        p.enqueue_control(&mut self.net.pool, frame);
        self.start_tx(port);
    }

    /// Refresh every XOFF still needed on `port`; resume the others.
    pub(super) fn on_pfc_refresh(&mut self, port: PortId) {
        self.net.ports[port.idx()].xoff.refresh_pending = false;
        for prio in self.net.ports[port.idx()].xoff.mask.iter() {
            if self.may_resume(port, prio) {
                self.xon(port, prio);
            } else {
                self.send_pfc(port, prio, self.variant.pfc.quanta);
            }
        }
        let p = &mut self.net.ports[port.idx()];
        if !p.xoff.mask.is_empty() {
            p.xoff.refresh_pending = true;
            let at = self.now + self.variant.pfc.refresh_interval(p.rate);
            self.schedule(at, Event::PfcRefresh(port));
        }
    }

    /// A PFC frame reached port `q`: hold (or release) that priority on q's egress.
    pub(super) fn on_pause_frame(&mut self, q: PortId, pkt: &Packet) {
        if self.wd_pause_frame(q, pkt) {
            return;
        }
        let watchdog = self.storm_time(q);
        let port = &mut self.net.ports[q.idx()];
        let response = self.variant.pfc.response_time(port.rate);
        let quanta = pkt.quanta();
        let (end, storm) = port
            .pause
            .on_frame(self.now, pkt.prio, quanta, port.rate, response, watchdog);
        if quanta > 0 {
            // After the frame closed the pause before it, whose storm keeps its own origin.
            port.pause.set_origin(pkt.prio, pkt.pause_origin());
        }
        if let Some(held) = storm {
            self.record_storm(q, held);
        }
        if quanta == 0 {
            self.wd_xon(q, pkt.prio);
            self.start_tx(q);
        } else {
            self.schedule(end, Event::Resume(q));
            self.wd_watch(q, pkt.prio);
        }
    }
}
