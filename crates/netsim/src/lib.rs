//! netsim: a deterministic discrete-event packet simulator for AQM studies: the engine. Its
//! input and output (the scenario schema and the configuration it produces, the results and
//! monitor types, the random streams, the congestion controllers' registry) are the
//! `experiment` crate's.
//!
//! * [`engine`]: integer-ns time, events in a radix heap keyed by
//!   `(time, scheduling time, insertion sequence)`, merged with [`pipes`].
//! * [`link`]: egress queue ([`aqm::QueueDisc`]), transmitter (at most one pending
//!   event per link), Bernoulli loss.
//! * [`pipes`]: packets in flight, one time-ordered ring per distinct link delay.
//! * [`routing`]: static shortest paths in an O(1) next-hop table; [`ecmp`]: its equal-cost
//!   groups on the fabrics and the seeded per-flow (or per-packet) choice among them.
//! * [`topology`]: explicit, dumbbell and parking-lot builders, and the checks that need the
//!   built network (names, routability).
//! * [`tcp`]: the TCP endpoints and congestion controllers; [`udp`]: CBR and on/off;
//!   [`traffic`]: flows and short-flow arrivals; `flow_pool`: finished short flows' slots
//!   reused once no packet of them is left in the network, their ids never.
//! * [`trace`]: per-packet event traces of chosen links in fixed-size batches.
//! * [`sim`]: [`Simulation`], the public entry point (split by concern: build, run loop,
//!   tracing, inspection, control, reporting).
//!
//! ## Public API (for the bindings)
//!
//! * [`Simulation::new`]`(SimConfig) -> Result<Simulation, ConfigError>` (the configuration
//!   of a scenario: `experiment::scenario::Scenario::from_json(json)?.config`),
//!   [`Simulation::from_json`]`(&str)` (a scenario document, the user's keys).
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
//! use experiment::scenario::Scenario;
//! use netsim::Simulation;
//! let sc = Scenario::from_json(r#"{
//!     "seed": 1, "duration": 2.0, "warmup": 0.5,
//!     "dumbbell": {"rate": "10Mbps", "rtt": "50ms", "buffer": 100},
//!     "flows": [{"count": 2, "cc": "newreno"}]
//! }"#).unwrap();
//! let mut sim = Simulation::new(sc.config).unwrap();
//! sim.run();
//! let s = sim.summary();
//! assert!(s.links["R1->R2"].utilization > 0.5);
//! sim.check_conservation().unwrap();
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ecmp;
pub mod engine;
mod fabric;
pub mod fastdiv;
mod flow_pool;
mod flow_report;
pub mod link;
mod name_index;
pub mod names;
pub mod netem;
pub mod packet;
pub mod pcap;
pub mod ping;
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
pub use sim::{
    Conservation, ConservationError, FlowStatus, LinkStatus, PoolStats, SimError, Simulation,
};
