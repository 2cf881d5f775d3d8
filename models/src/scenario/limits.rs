//! `[run]`: the bounds on a run (simulated time, events, wall clock, memory), with defaults.

use super::{FieldError, Variant};
use crate::workload::FlowSpec;
use serde::Deserialize;
use sim_core::Duration;

/// Bounds on a run. A run stopped by one is reported as incomplete, with the reason, and its
/// results are written as usual. Every bound has a default, so no run can go on forever.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLimits {
    /// Stop at this simulated time (default [`DEFAULT_MAX_TIME`]).
    #[serde(default)]
    pub max_time: Option<Duration>,
    /// Stop after this many events (default [`DEFAULT_MAX_EVENTS`]).
    #[serde(default)]
    pub max_events: Option<u64>,
    /// Stop after this much wall-clock time (default [`DEFAULT_MAX_WALL`]). The only bound that
    /// is not reproducible: where it stops depends on the machine.
    #[serde(default)]
    pub max_wall: Option<Duration>,
    /// Memory a run may need, estimated before it starts (`models::budget`); default: half
    /// of the machine's memory or of the process's address-space limit, whichever is less.
    #[serde(default)]
    pub max_memory: Option<sim_core::Bytes>,
    /// Memory a run may spend on per-packet flow state (UET), checked before it starts.
    #[serde(default = "default_flow_state")]
    pub max_flow_state: sim_core::Bytes,
    /// Time series sampling interval (default 5 us; doubles as needed to stay in max_samples).
    #[serde(default = "default_interval")]
    pub sample_interval: Duration,
    /// Samples kept per series (default 1000).
    #[serde(default = "default_samples")]
    pub max_samples: usize,
    /// Rows kept in events.csv (default 100000); the rest are counted.
    #[serde(default = "default_log")]
    pub event_log: usize,
}

/// 4 GiB: a laptop's share; P8192's 8 GB of 1 MB flows needs 70 MB.
fn default_flow_state() -> sim_core::Bytes {
    sim_core::Bytes(4 << 30)
}

/// Simulated time a run may cover unless `run.max_time` says otherwise: ten thousand times
/// a millisecond-scale datacenter experiment.
pub const DEFAULT_MAX_TIME: Duration = Duration(10 * 1_000_000_000_000);
/// Events a run may process unless `run.max_events` says otherwise (about an hour at 3 M/s).
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;
/// Wall-clock time a run may take unless `run.max_wall` says otherwise.
pub const DEFAULT_MAX_WALL: Duration = Duration(3600 * 1_000_000_000_000);

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_time: None,
            max_events: None,
            max_wall: None,
            max_memory: None,
            max_flow_state: default_flow_state(),
            sample_interval: default_interval(),
            max_samples: default_samples(),
            event_log: default_log(),
        }
    }
}

impl RunLimits {
    /// The simulated-time bound in force.
    pub fn time(&self) -> Duration {
        self.max_time.unwrap_or(DEFAULT_MAX_TIME)
    }
    pub fn events(&self) -> u64 {
        self.max_events.unwrap_or(DEFAULT_MAX_EVENTS)
    }
    pub fn wall(&self) -> std::time::Duration {
        let d = self.max_wall.unwrap_or(DEFAULT_MAX_WALL);
        std::time::Duration::from_nanos(d.0 / 1000)
    }
    pub fn telemetry(&self) -> crate::telemetry::TelemetryConfig {
        crate::telemetry::TelemetryConfig {
            sample_interval: self.sample_interval,
            max_samples: self.max_samples,
            event_log: self.event_log,
        }
    }
}

fn default_interval() -> Duration {
    Duration::from_us(5)
}
fn default_samples() -> usize {
    1000
}
fn default_log() -> usize {
    100_000
}

/// UET keeps state per packet of every flow: refuse what would not fit in memory up front,
/// rather than abort mid-run.
pub(super) fn check_state(flows: &[FlowSpec], v: &Variant) -> Result<(), FieldError> {
    if !v.nic.uses(crate::nic::Transport::Uet) {
        return Ok(());
    }
    let mtu = v.nic.mtu.0;
    let need: u64 = flows
        .iter()
        .map(|f| crate::nic::uet::UetPdc::state_bytes(f.size.div_ceil(mtu)))
        .sum();
    let limit = v.limits.max_flow_state.0;
    if need > limit {
        return Err(FieldError::new(
            "run.max_flow_state",
            format!(
                "UET keeps about 1.1 B per packet of every flow (and a send time for each in flight): these {} flows need {} MB, over the {} MB allowed; raise run.max_flow_state if the machine has the memory, or use fewer or smaller flows, or a larger MTU",
                flows.len(),
                need / 1_000_000,
                limit / 1_000_000
            ),
        ));
    }
    Ok(())
}

/// A retransmission timeout shorter than a flow's base round trip fires on every packet:
/// refuse it. The round trip's lower bound: each host's cable both ways (every path crosses
/// both) and one full frame on the sender's cable, known before routes are built.
pub(super) fn check_rto(
    flows: &[FlowSpec],
    topo: &crate::topology::Topology,
    v: &Variant,
) -> Result<(), FieldError> {
    let (rto, key) = match (v.nic.transport, v.nic.rto) {
        (crate::nic::Transport::Roce, _) => (v.nic.rto(), "nic.local_ack_timeout"),
        (crate::nic::Transport::Uet, Some(r)) => (r, "nic.rto"),
        (crate::nic::Transport::Uet, None) => return Ok(()),
    };
    // Each node's first cable (a host's NIC cable), by index.
    let mut first: Vec<Option<usize>> = vec![None; topo.nodes.len()];
    for (i, l) in topo.links.iter().enumerate() {
        for end in [l.a, l.b] {
            first[end.idx()].get_or_insert(i);
        }
    }
    let cable = |n: crate::ids::NodeId| first[n.idx()];
    let frame = v.nic.max_frame() as u64;
    let worst = flows
        .iter()
        .map(|f| {
            let (s, d) = (topo.hosts[f.src.idx()], topo.hosts[f.dst.idx()]);
            let delay = |c: Option<usize>| c.map_or(Duration::ZERO, |i| topo.links[i].delay);
            // Two hosts on one cable cross it once each way.
            let wire = match (cable(s), cable(d)) {
                (a, b) if a == b => delay(a),
                (a, b) => delay(a) + delay(b),
            };
            (wire + wire + topo.host_rate(f.src).tx_time(frame), f)
        })
        .max_by_key(|(rtt, _)| *rtt);
    match worst {
        Some((rtt, f)) if rto < rtt => Err(FieldError::new(
            key,
            format!(
                "the retransmission timeout ({rto}) is shorter than the round trip of h{} to h{} (at least {rtt}): every packet would time out",
                f.src.0, f.dst.0
            ),
        )),
        _ => Ok(()),
    }
}
