//! netsim: a deterministic discrete-event packet simulator for AQM studies.
//!
//! * [`engine`]: integer-ns time, events in a radix heap keyed by
//!   `(time, scheduling time, insertion sequence)`, merged with [`pipes`].
//! * [`link`]: egress queue ([`aqm::QueueDisc`]), transmitter (at most one pending
//!   event per link), Bernoulli loss.
//! * [`pipes`]: packets in flight, one time-ordered ring per distinct link delay.
//! * [`routing`]: static shortest paths in an O(1) next-hop table.
//! * [`topology`]: explicit, dumbbell and parking-lot builders.
//! * [`tcp`]: Reno, NewReno, CUBIC with ECN and delayed ACKs; [`udp`]: CBR
//!   and on/off; [`traffic`]: flows and short-flow arrivals.
//! * [`monitor`], [`results`]: bounded-memory statistics and results.
//! * [`trace`]: per-packet event traces of chosen links in fixed-size batches.
//! * [`config`]: the JSON [`SimConfig`] (documented in `SCHEMA.md`).
//! * [`sim`]: [`Simulation`], the public entry point.
//!
//! ## Public API (for the bindings)
//!
//! * [`Simulation::new`]`(SimConfig) -> Result<Simulation, ConfigError>`,
//!   [`Simulation::from_json`]`(&str)`; [`SimConfig::from_json`],
//!   [`SimConfig::validate`], [`SimConfig::to_json`].
//! * Stepping: [`Simulation::run_until`]`(aqm::Instant)`,
//!   [`Simulation::run`]`()` (to `duration`), [`Simulation::now`],
//!   [`Simulation::events`].
//! * Inspection: [`Simulation::link_names`], [`Simulation::monitored_links`],
//!   [`Simulation::node_names`], [`Simulation::link_queue`]`(name) -> (pkts,
//!   bytes)`, [`Simulation::link_status`]`(name) -> LinkStatus` (AQM name,
//!   probability, `aqm::QueueStats`, link counters),
//!   [`Simulation::aqm_config`], [`Simulation::num_flows`],
//!   [`Simulation::flow_status`]`(id) -> FlowStatus` (cwnd, ssthresh, srtt,
//!   bytes acked/delivered, retransmits, timeouts, ...).
//! * Control between steps: [`Simulation::set_aqm_param`]`(link, key, f64)`,
//!   [`Simulation::set_aqm`]`(link, aqm::AqmConfig)`,
//!   [`Simulation::set_link_loss`]`(link, p)`. Errors: [`SimError`].
//! * Results: [`Simulation::results`]` -> SimResults { summary, timeseries,
//!   cwnd }`, [`Simulation::summary`]; conservation:
//!   [`Simulation::conservation`], [`Simulation::check_conservation`].
//!
//! ```
//! use netsim::{SimConfig, Simulation};
//! let cfg = SimConfig::from_json(r#"{
//!     "seed": 1, "duration": 2.0, "warmup": 0.5,
//!     "topology": {"type": "dumbbell", "bottleneck_rate": 1e7, "rtt": 0.05,
//!                  "buffer_pkts": 100},
//!     "flows": [{"kind": "tcp", "count": 2, "cc": "newreno"}]
//! }"#).unwrap();
//! let mut sim = Simulation::new(cfg).unwrap();
//! sim.run();
//! let s = sim.summary();
//! assert!(s.links["R1->R2"].utilization > 0.5);
//! sim.check_conservation().unwrap();
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod engine;
pub mod fastdiv;
mod flow_report;
pub mod link;
pub mod node;
pub mod packet;
pub mod pipes;
pub mod queue;
pub mod routing;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod trace;
pub mod traffic;
pub mod udp;

pub use experiment::config::{ConfigError, SimConfig};
pub use experiment::results::{SimResults, Summary};
pub use sim::{Conservation, ConservationError, FlowStatus, LinkStatus, SimError, Simulation};
