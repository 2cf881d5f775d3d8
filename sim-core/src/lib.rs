//! # sim-core: the engine under `sim`
//!
//! This crate knows nothing of networks. It provides the four things every discrete-event
//! simulation needs and that must be exactly right for results to be trusted:
//!
//! * [`time`]: simulated time as integer **picoseconds** ([`Time`], [`Duration`]). One bit at
//!   800 Gb/s lasts 1.25 ps, so nanosecond rounding would accumulate visible error over
//!   thousands of packets; `u64` picoseconds cover 213 days of simulated time.
//! * [`units`]: quantities with units ([`Bytes`], [`BitRate`], [`Length`]) parsed from the
//!   strings users write (`"100Gbps"`, `"32MiB"`, `"3m"`), with errors that say what was expected.
//! * [`queue`]: the pending-event set, ordered by `(time, rank, insertion sequence)`: events
//!   at the same picosecond run in the order of a rank the simulator gives each (what the event
//!   is and whose), then in the order they were scheduled, which makes runs reproducible and
//!   the order of simultaneous events independent of when each was scheduled. The structure (a radix heap) was chosen by measurement; see
//!   `benches/event_queue.rs` and the README's performance section.
//! * [`rng`]: seeded random streams, each derived from `(scenario seed, stream kind, index)`:
//!   the same seed gives identical results, and a stream's draws cannot shift another's. The
//!   simulator gives each workload generator, each switch (its ECMP salt, its WRED and trim
//!   draws), each flow and each lossy cable its own stream (see `models::sim`'s build).
//!
//! Nothing here is global: a simulation owns its queue and its streams.

mod parse;
pub mod queue;
pub mod rng;
pub mod time;
pub mod units;

pub use parse::{Limit, UnitError};
pub use queue::EventQueue;
pub use rng::{RngStreams, SimRng};
pub use time::{Duration, Time};
pub use units::{BitRate, Bytes, Length};
