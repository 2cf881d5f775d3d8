//! What a variant's run recorded over time (sampled series, the event log, captures), taken
//! out of the finished simulation with readable port names, for the result writers.

/// What a variant's run recorded over time, with readable port names.
pub struct Telemetry {
    pub sampler: models::telemetry::Sampler,
    /// Per-flow delivered bytes and sender rate or window.
    pub flows: models::telemetry::FlowSampler,
    pub log: models::telemetry::EventLog,
    /// `node port` for every port the sampler or the log mentions.
    pub labels: std::collections::HashMap<u32, (String, String)>,
    /// Mirrored ports' frames, and how to spell them out.
    pub captures: Vec<models::capture::Capture>,
    pub frames: models::pcap::FrameContext,
}

impl Telemetry {
    pub fn take(sim: &mut models::Sim) -> Telemetry {
        let cfg = models::telemetry::TelemetryConfig {
            sample_interval: sim_core::Duration(1),
            max_samples: 4,
            event_log: 0,
        };
        let sampler = std::mem::replace(
            &mut sim.sampler,
            models::telemetry::Sampler::new(&cfg, Vec::new(), false),
        );
        let flows = std::mem::replace(
            &mut sim.flow_sampler,
            models::telemetry::FlowSampler::new(0, &[], 4, models::telemetry::Control::None),
        );
        let log = std::mem::take(&mut sim.log);
        let net = &sim.net;
        let label = |p: u32| {
            if p == models::ids::PortId::NONE.0 {
                ("-".to_string(), "-".to_string())
            } else {
                let id = models::ids::PortId(p);
                (
                    net.names[net.port_node[id.idx()].idx()].clone(),
                    net.port_name(id),
                )
            }
        };
        // Each port once: a trimming run's log has hundreds of thousands of rows on a few
        // ports, so they are marked, not collected (I128: 73,690 rows). The last mark is
        // `PortId::NONE`'s.
        let n = net.ports.len();
        let mut seen = vec![false; n + 1];
        for p in sampler.ports.iter().copied().chain(log.rows().map(|r| r.port)) {
            seen[p.idx().min(n)] = true;
        }
        let id = |i: usize| {
            if i == n {
                models::ids::PortId::NONE.0
            } else {
                i as u32
            }
        };
        let labels = (0..=n)
            .filter(|&i| seen[i])
            .map(|i| (id(i), label(id(i))))
            .collect();
        let frames = models::pcap::FrameContext {
            transport: sim.variant.nic.transport,
            per_flow: match sim.variant.nic.mixed() {
                true => sim
                    .flows
                    .iter()
                    .map(|f| sim.variant.nic.transport_of(f.spec.prio))
                    .collect(),
                false => Vec::new(),
            },
            // Tag frames whenever priorities matter (PFC, or classes other than 0 in use),
            // unless the NICs mark the class in DSCP only (`nic.trust = "dscp"`).
            vlan: sim.variant.nic.trust == models::nic::Trust::Pcp
                && (!sim.variant.pfc.priorities.is_empty()
                    || sim.variant.nic.control_prio != 0
                    || sim.flows.iter().any(|f| f.spec.prio != 0)),
            endpoints: sim.flows.iter().map(|f| (f.spec.src, f.spec.dst)).collect(),
        };
        let captures = std::mem::take(&mut sim.captures);
        Telemetry {
            sampler,
            flows,
            log,
            labels,
            captures,
            frames,
        }
    }

    pub fn label(&self, p: u32) -> String {
        self.labels
            .get(&p)
            .map(|(n, q)| format!("{n} {q}"))
            .unwrap_or_default()
    }
}
