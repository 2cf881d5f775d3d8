//! Time-series samples: the run's totals, every sampled port and every flow at each sample
//! time (`crate::telemetry`); a run on several threads takes them between windows from each
//! partition's state (`parallel/merge.rs`).

use super::{Event, Sim};
use crate::ids::PortId;
use crate::network::{Network, Role};
use crate::switch::Switch;
use sim_core::Time;

impl Sim<'_> {
    /// Record a time-series sample; keep sampling while anything else is pending.
    pub(super) fn on_sample(&mut self) {
        let with_pg = self.sampler.with_pg();
        let totals = self.sample_totals();
        let (net, switches, now) = (&self.net, &self.switches, self.now);
        self.sampler
            .record(now, totals, |p| port_sample(net, switches, now, p, with_pg));
        let flows = &self.flows;
        self.flow_sampler
            .record(now, |f| (flows[f].received_bytes, flows[f].control_value()));
        // Sample while flows are unfinished (not while only idle timers remain).
        if self.finished < self.flows.len() && !self.queue.is_empty() {
            let at = self.now + self.sampler.interval;
            self.schedule(at, Event::Sample);
        }
    }

    /// The run's totals as a sample shows them.
    pub(super) fn sample_totals(&self) -> crate::telemetry::Totals {
        let t = &self.totals;
        crate::telemetry::Totals {
            delivered_bytes: t.delivered_payload,
            ecn_marked: t.ecn_marked,
            cnps: t.cnps,
            pfc_frames: t.pfc_frames,
            trimmed: t.trimmed,
            drops: t.dropped_packets,
        }
    }
}

/// What port `p` shows at a sample at `now` (`with_pg`: its switch's priority-group use too).
pub(super) fn port_sample(
    net: &Network,
    switches: &[Switch],
    now: Time,
    p: PortId,
    with_pg: bool,
) -> crate::telemetry::PortSample {
    let port = &net.ports[p.idx()];
    let (pg, xoff, xoff_group) = match net.roles[net.port_node[p.idx()].idx()] {
        Role::Switch(s) if with_pg => {
            let (pg, xoff, slice) = switches[s.idx()].pg_sample(p);
            (pg, xoff, Some(s.0 << 8 | slice))
        }
        _ => (0, 0, None),
    };
    crate::telemetry::PortSample {
        queue: port.occupancy(),
        busy: port.busy(now),
        pg,
        xoff,
        xoff_group,
    }
}
