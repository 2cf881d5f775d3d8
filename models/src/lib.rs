//! # models: the fabric
//!
//! Packets, links, ports, switches, NICs, flows, topologies, workloads and the scenario schema,
//! and the event loop that moves packets between them. Each model is one file and cites the
//! specification or paper it follows.
//!
//! ## The packet path
//!
//! ```text
//!  NIC (flow.rs: packetize, sequence; nic.rs: round-robin pull)
//!   └─▶ egress Port (port.rs: per-priority FIFOs, strict priority, serialization + 20 B IFG)
//!        └─▶ Link (link.rs: propagation, 5 ns/m)
//!             └─▶ switch: route (routing.rs: all shortest paths, ECMP 5-tuple hash, per-switch salt)
//!                  └─▶ admit (switch.rs: per-port drop-tail buffer) ─▶ egress Port ─▶ ...
//!                       └─▶ NIC rx (flow.rs: in-order accept, cumulative ACK) ─▶ ACK back to the sender
//! ```
//!
//! `sim.rs` holds the one event loop; `network.rs` the arenas (every component in a `Vec`
//! behind a typed id from `ids.rs`); `report.rs` what a run produced and the invariants it
//! is checked against; `ideal.rs` the closed-form ideal completion time of each flow.
//!
//! ## Not modelled (yet)
//! Shared-buffer MMU, PFC, ECN, congestion control and loss recovery (a dropped packet leaves
//! its flow unfinished, reported with the reason); switch pipeline latency; cut-through
//! forwarding; link errors.

pub mod capture;
pub mod cc;
pub mod drop;
pub mod error;
pub mod fault;
pub mod ideal;
pub mod ids;
pub mod link;
pub mod network;
pub mod nic;
pub mod packet;
pub mod pcap;
pub mod pfc;
pub mod pool;
pub mod port;
pub mod prio;
pub mod report;
pub mod routing;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod telemetry;
pub mod topology;
pub mod workload;

pub use report::VariantReport;
pub use scenario::{Overrides, Scenario, ScenarioError, load};
pub use sim::Sim;
