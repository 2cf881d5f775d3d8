//! Host NIC: packetization, the send scheduler, and the receive path that answers with ACKs.
//!
//! Messages are cut into MTU-sized packets (RoCEv2: the path MTU counts payload only, 4096 B
//! on ConnectX by default; NVIDIA "RDMA over Converged Ethernet" MTU notes) and sent at line
//! rate. The NIC pulls: when its port finishes a frame it sends first any queued control
//! frames (ACKs, forwarded packets), then the next data packet of the next ready flow, round
//! robin across flows, as the ConnectX send-queue arbiter serves QPs. So the NIC never holds
//! more than one frame per port: flows wait in the NIC, not in a queue of packets.

use crate::ids::FlowId;
use crate::scenario::FieldError;
use serde::Deserialize;
use sim_core::Bytes;
use std::collections::VecDeque;

/// `[nic]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Payload bytes per packet (the RoCE path MTU).
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// The receiver acknowledges every `ack_every` packets, and always the last one.
    #[serde(default = "one")]
    pub ack_every: u32,
}

fn default_mtu() -> Bytes {
    Bytes(4096)
}
fn one() -> u32 {
    1
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: default_mtu(),
            ack_every: 1,
        }
    }
}

impl NicConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(64..=9000).contains(&self.mtu.0) {
            return Err(FieldError::new(
                "nic.mtu",
                format!("must be between 64B and 9000B, got {}", self.mtu),
            ));
        }
        if self.ack_every == 0 {
            return Err(FieldError::new("nic.ack_every", "must be at least 1"));
        }
        Ok(())
    }
}

/// Per-host send scheduler: one round-robin list of ready flows per port.
#[derive(Debug, Clone, Default)]
pub struct Nic {
    first_port: u32,
    ready: Vec<VecDeque<FlowId>>,
}

impl Nic {
    pub fn new(first_port: u32, ports: usize) -> Self {
        Nic {
            first_port,
            ready: vec![VecDeque::new(); ports],
        }
    }

    /// `f` has packets to send on port `port`.
    pub fn make_ready(&mut self, port: u32, f: FlowId) {
        self.ready[(port - self.first_port) as usize].push_back(f);
    }

    /// The next flow to serve on `port`, removed from the list (the caller re-adds it if it
    /// still has packets, which puts it at the back: round robin).
    #[inline]
    pub fn next_ready(&mut self, port: u32) -> Option<FlowId> {
        self.ready[(port - self.first_port) as usize].pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_are_served_round_robin_per_port() {
        let mut nic = Nic::new(10, 2);
        nic.make_ready(10, FlowId(1));
        nic.make_ready(10, FlowId(2));
        nic.make_ready(11, FlowId(3));
        let a = nic.next_ready(10).unwrap();
        nic.make_ready(10, a);
        assert_eq!(nic.next_ready(10), Some(FlowId(2)));
        assert_eq!(nic.next_ready(10), Some(FlowId(1)));
        assert_eq!(nic.next_ready(11), Some(FlowId(3)));
        assert_eq!(nic.next_ready(10), None);
    }

    #[test]
    fn mtu_is_bounded() {
        let c = NicConfig {
            mtu: Bytes(10_000),
            ack_every: 1,
        };
        assert_eq!(c.validate().unwrap_err().path, "nic.mtu");
    }
}
