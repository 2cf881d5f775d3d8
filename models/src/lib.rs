//! # models: the fabric
//!
//! Packets, links, ports, switches, NICs and their transports, congestion control, topologies,
//! workloads and the scenario schema, and the event loop that moves packets between them. Each
//! model is one file (or one folder of small files) and cites the specification or paper it
//! follows.
//!
//! ## The packet path
//!
//! One RoCEv2 data frame through one switch, and its ACK back, file by file and in order:
//!
//! ```text
//!  sim/host.rs     next_data: the NIC's scheduler (nic/sched.rs) picks a flow, nic/flow.rs
//!                  builds the packet, nic/roce/mod.rs on_sent paces it (DCQCN, cc/dcqcn.rs)
//!  sim/wire.rs     start_tx ─▶ port.rs begin_tx (serialize, 20 B preamble + IFG)
//!                  on_tx_done ─▶ link.rs send (propagate, 5 ns/m) ─▶ on_arrive
//!  switch/mod.rs   Switch::receive: routing/ (ECMP hash, or adaptive) ─▶ trim.rs (UET only)
//!                  ─▶ mmu.rs admit (min | shared under alpha x free | headroom) or drop
//!                  ─▶ ecn.rs (WRED at enqueue) ─▶ queued at the egress port.rs;
//!                  the ingress PG at XOFF ─▶ sim/pfc.rs sends PAUSE upstream
//!  sim/wire.rs     start_tx ─▶ Switch::dequeued (WRED at dequeue) ─▶ port ─▶ link ─▶
//!                  on_tx_done ─▶ Switch::departed (cells back; XON ─▶ sim/pfc.rs)
//!  sim/host.rs     host_receive (nic/rx.rs buffer and its PFC) ─▶ deliver
//!  nic/roce/mod.rs on_data: CE ─▶ CNP; go-back-N (nic/roce/qp.rs) ─▶ ACK or NAK
//!  sim/host.rs     send_control ─▶ the same path back ─▶ nic/roce/mod.rs on_ack / on_cnp
//! ```
//!
//! UET takes the same path with `nic/uet/` (selective ACK, NACK of trimmed packets, RCCC
//! credits) in place of `nic/roce/`, and its NSCC window (cc/nscc.rs) or credit (cc/rccc.rs)
//! in place of DCQCN's rate.
//!
//! `sim/mod.rs` holds the one event loop: for each event, the one call that handles it.
//! `network.rs` holds the arenas (every port and cable in a `Vec` behind a typed id from
//! `ids.rs`; the frames in one slab, `pool.rs`); `scenario/` loads and validates a scenario
//! into variants resolved on the fabric; `report/` is what a run produced and the invariants
//! it is checked against; `ideal.rs` the closed-form ideal completion time of each flow.
//!
//! ## Not modelled
//! See the README's "Not modelled" list: cut-through forwarding, FEC, multi-priority PFC
//! frames, ROD/RUDI/UUD delivery, and the simplifications each model states.

pub mod asic;
pub mod capture;
pub mod cc;
pub mod drop;
pub mod error;
pub mod fault;
pub mod ideal;
pub mod ids;
pub mod input;
pub mod int;
pub mod link;
pub mod network;
pub mod nic;
pub mod packet;
pub mod pause;
pub mod pcap;
pub mod pfc;
pub mod pfc_watch;
pub mod pfc_wd;
pub mod pool;
pub mod port;
pub mod prio;
pub mod report;
pub mod routing;
pub mod scenario;
pub mod scheduler;
pub mod sim;
pub mod sonic;
pub mod switch;
pub mod telemetry;
pub mod topology;
pub mod workload;

pub use report::VariantReport;
pub use scenario::budget;
pub use scenario::{Overrides, Scenario, ScenarioError, load};
pub use sim::Sim;
