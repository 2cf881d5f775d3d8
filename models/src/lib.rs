//! # models: the fabric
//!
//! Packets, links, ports, switches, NICs and their transports, congestion control, topologies,
//! workloads and the scenario schema, and the event loop that moves packets between them. Each
//! model is one file (or one folder of small files) and cites the specification or paper it
//! follows.
//!
//! ## The packet path
//!
//! One RoCEv2 data frame through one switch, and its ACK back, file by file and in order. The
//! event loop (`sim/`) only dispatches: each step is a model's call that decides and returns
//! what the run must do.
//!
//! ```text
//!  sim/host.rs         next_data: nic/sched.rs picks a flow (priority, round robin, pacing)
//!   nic/send.rs        send: the flow's packet, made in its port's slot (nic/flow.rs ->
//!                      nic/transport.rs -> nic/roce/mod.rs next_packet), CE share, INT
//!                      headers; the congestion
//!                      control counts it (cc/sender.rs -> cc/dcqcn.rs on_sent) and sets the
//!                      pace; the retransmission timer
//!  sim/wire.rs         start_tx: the frame made in the port's slot -> port/ begin_staged
//!                      (serialize, 20 B preamble + IFG)
//!                      on_tx_done -> link.rs send (5 ns/m, frame errors) -> on_arrive;
//!                      on an `llr` cable sim/llr.rs -> llr/ numbers, buffers, replays
//!  switch/classify.rs  DSCP to class, INT record; pfc_wd.rs: a stormed port's frames
//!  switch/mod.rs       Switch::receive: routing/ (ECMP hash, or adaptive) -> trim.rs (UET)
//!                      -> mmu.rs admit | drop -> ecn.rs (WRED at enqueue) -> egress port/;
//!                      the ingress PG at XOFF -> sim/pfc.rs sends PAUSE upstream
//!  sim/wire.rs         start_tx -> Switch::dequeued (WRED at dequeue, INT stamp) -> port ->
//!                      link; on_tx_done -> Switch::departed (cells back; XON -> sim/pfc.rs)
//!                      (pfc.mode = "cbfc": sim/cbfc.rs holds VCs short of credit before
//!                      dequeue, and returns credits upstream at departure; cbfc.rs)
//!  sim/host.rs         host_receive: nic/rx.rs admits (or refuses, and asks for XOFF)
//!  sim/transport.rs    on_data -> nic/transport.rs -> nic/roce/mod.rs on_data: CE -> CNP
//!                      (DCQCN's notification point); go-back-N (roce/qp.rs) -> ACK or NAK
//!  sim/host.rs         send_control -> the same path back
//!  sim/transport.rs    on_feedback -> nic/roce/mod.rs on_feedback (cumulative ACK, go back
//!                      N on a NAK) -> the congestion control's on_ack (cc/sender.rs)
//!  sim/transport.rs    on_cnp -> cc/sender.rs -> cc/dcqcn.rs on_cnp (rate cut, rate timer)
//! ```
//!
//! UET takes the same path with `nic/uet/` (its sender: selective ACK, NACK of trimmed
//! packets, credit waits; its receiver: ACK coalescing, RCCC's pull target and credit pacer)
//! in place of `nic/roce/`, and its NSCC window (`cc/nscc.rs`) or RCCC credit (`cc/rccc.rs`) in
//! place of DCQCN's rate: the same calls, through the `Protocol` and `CongestionControl`
//! traits.
//!
//! `sim/mod.rs` holds the one event loop: for each event, the one call that handles it.
//! `network.rs` holds the arenas (every port and cable in a `Vec` behind a typed id from
//! `ids.rs`; the frames in one slab, `pool.rs`); `scenario/` loads and validates a scenario
//! into variants resolved on the fabric; `report/` is what a run produced and the invariants
//! it is checked against; `ideal.rs` the closed-form ideal completion time of each flow;
//! `cbfc.rs` is UEC's credit-based flow control (`sim/cbfc.rs` gates egresses and returns
//! credits); `pfc_watch.rs` and `pfc_wd.rs` watch PFC (storms, deadlocks, and credit cycles) and act on storms as SONiC's
//! watchdog does. `docs/architecture.md` draws the layers and says where to add a model.
//!
//! ## Not modelled
//! See docs/not-modelled.md: cut-through forwarding, CBFC, multi-priority PFC
//! frames, ROD/RUDI/UUD delivery, and the simplifications each model states.

pub mod asic;
pub mod capture;
pub mod cbfc;
pub mod cc;
pub mod drop;
pub mod error;
pub mod fault;
pub mod fec;
pub mod ideal;
pub mod ids;
pub mod input;
pub mod int;
pub mod link;
pub mod llr;
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
pub use scenario::check;
pub use scenario::{Overrides, Scenario, ScenarioError, load};
pub use sim::Sim;
