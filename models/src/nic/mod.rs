//! The host NIC: its configuration, send scheduler, receive buffer, and the two transports.
//!
//! ```text
//!  core.rs       what every flow has: packetization, pacing, its congestion control,
//!                statistics (FlowCore)
//!  protocol.rs   the transport interface (Protocol) both ends are driven through
//!  transport.rs  Proto: a flow's transport state, dispatching to RoCEv2 or UET
//!  flow.rs       one message: its FlowCore and its Proto
//!  sched.rs      the send scheduler the port pulls from (strict priority, round robin, pacing)
//!  roce/         RoCEv2 RC: go-back-N QP (qp.rs) and its Protocol: data (DCQCN's NP), ACK/NAK,
//!                timeout
//!  uet/          UET PDS RUD: the PDC (pdc.rs), its Protocol: the sender (sender.rs: SACK,
//!                NACK, timeout, credit waits), the receiver (receiver.rs: data, ACK timer,
//!                RTS) and its RCCC credit pacer (pacer.rs)
//!  lb.rs     which entropy (path) each packet carries: ECMP, oblivious spraying, REPS
//!  rx.rs     the receive buffer of a host that drains slower than its link, with PFC
//!  model.rs  named adapters (`nic.model`): fastest port, DCQCN preset, receive buffer
//! ```
//!
//! Messages are cut into MTU-sized packets (RoCEv2: the path MTU counts payload only, 4096 B
//! on ConnectX by default) and sent at line rate, or at the QP's DCQCN rate, or as NSCC's
//! window and RCCC's credit allow. A transport's handlers act on the flow's
//! [`core::FlowCore`] and its own state and return what to send; the simulation
//! (`crate::sim`) puts it on the wire.

pub mod config;
pub mod core;
pub mod counters;
pub mod flow;
pub mod lb;
pub mod model;
pub mod protocol;
pub mod roce;
pub mod rx;
pub mod sched;
pub mod send;
pub mod transport;
pub mod uet;

pub use crate::cc::CcConfig;
pub use config::{ClassConfig, NicConfig, Transport, Trust, ce_marked};
pub use core::{FlowCore, Sched};
pub use counters::HostCounters;
pub use flow::Flow;
pub use protocol::Protocol;
pub use sched::Nic;
pub use transport::Proto;
