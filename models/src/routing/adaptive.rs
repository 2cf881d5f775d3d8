//! How a switch picks among equal-cost next hops: ECMP, or adaptive routing to the
//! least-loaded eligible egress, per packet or per flowlet.
//!
//! Adaptive routing compares the egresses' queued bytes at the packet's priority (ports paused
//! for it last, ties broken by the flow's hash), as Broadcom's DLB and NVIDIA's adaptive
//! routing do with their local port-quality metrics. With a flowlet gap a flow keeps its port
//! until it pauses for longer than the gap (Kandula et al., "Dynamic load balancing without
//! packet reordering", CCR 2007): the switch remembers, per hashed flowlet slot, the port and
//! when it last saw the flow, as ASIC flowlet tables do.

use crate::ids::PortId;
use serde::Deserialize;
use sim_core::{Duration, Time};

/// `[switch.routing]`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Routing {
    /// Hash of the flow and its entropy (ECMP, RFC 2992).
    #[default]
    #[serde(deserialize_with = "crate::error::no_keys")]
    Ecmp,
    /// Adaptive routing: the least-loaded eligible egress, per packet, or per flowlet when
    /// `flowlet_gap` is set.
    Adaptive {
        #[serde(default)]
        flowlet_gap: Option<Duration>,
    },
}

/// Entries in a switch's flowlet table (as ASIC flowlet tables, indexed by a flow hash).
pub const FLOWLET_SLOTS: usize = 4096;

/// One switch's flowlet table: per slot, the port a flowlet took and when it was last seen.
#[derive(Debug, Clone)]
pub struct Flowlets {
    slots: Vec<(PortId, Time)>,
}

impl Default for Flowlets {
    fn default() -> Self {
        Flowlets {
            slots: vec![(PortId::NONE, Time::ZERO); FLOWLET_SLOTS],
        }
    }
}

impl Flowlets {
    /// The port of the flowlet hashed to `hash`, if it is still going (seen less than `gap`
    /// ago) and its port is still a next hop; the flowlet is seen now.
    #[inline]
    pub fn current(&mut self, hash: u64, now: Time, gap: Duration, hops: &[PortId]) -> Option<PortId> {
        let slot = &mut self.slots[(hash % FLOWLET_SLOTS as u64) as usize];
        let (port, last) = *slot;
        if !port.is_none() && now < last + gap && hops.contains(&port) {
            slot.1 = now;
            return Some(port);
        }
        None
    }

    /// A new flowlet of `hash` starts on `port` now.
    #[inline]
    pub fn start(&mut self, hash: u64, now: Time, port: PortId) {
        self.slots[(hash % FLOWLET_SLOTS as u64) as usize] = (port, now);
    }
}

/// The least-loaded of `hops`, scanning from `start` (so equal loads go by the flow's hash).
/// `load(p)` is (paused for this priority, queued bytes): paused ports lose to any other.
#[inline]
pub fn least_loaded(hops: &[PortId], start: usize, load: impl Fn(&PortId) -> (bool, u64)) -> Option<PortId> {
    (0..hops.len())
        .map(|i| hops[(start + i) % hops.len()])
        .min_by_key(|p| load(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_loaded_prefers_unpaused_then_shortest_then_the_hash_order() {
        let hops = [PortId(1), PortId(2), PortId(3)];
        let load = |p: &PortId| match p.0 {
            1 => (true, 0),
            2 => (false, 500),
            _ => (false, 500),
        };
        assert_eq!(
            least_loaded(&hops, 0, load),
            Some(PortId(2)),
            "paused port 1 loses"
        );
        assert_eq!(
            least_loaded(&hops, 2, load),
            Some(PortId(3)),
            "a tie goes to the first scanned"
        );
    }

    #[test]
    fn a_flowlet_keeps_its_port_until_the_gap_passes() {
        let mut f = Flowlets::default();
        let hops = [PortId(4), PortId(5)];
        let gap = Duration::from_us(1);
        assert_eq!(f.current(7, Time(0), gap, &hops), None);
        f.start(7, Time(0), PortId(5));
        assert_eq!(f.current(7, Time(900_000), gap, &hops), Some(PortId(5)));
        assert_eq!(
            f.current(7, Time(1_800_000), gap, &hops),
            Some(PortId(5)),
            "seen at 0.9 us"
        );
        assert_eq!(
            f.current(7, Time(3_000_000), gap, &hops),
            None,
            "idle for more than the gap"
        );
        assert_eq!(f.current(7, Time(3_100_000), gap, &[PortId(4)]), None);
    }
}
