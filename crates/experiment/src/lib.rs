//! The simulator's input and output contract, shared by the simulator (`netsim`), the live
//! emulator (`emu`) and the Python bindings:
//!
//! * [`time`]: integer nanoseconds and the one conversion from seconds;
//! * [`cc`]: the registry of congestion controllers (names, ECN, help);
//! * [`scenario`]: the scenario schema: user-facing TOML/JSON in, validated once, errors
//!   naming the key and value, out the normalized [`config::SimConfig`];
//! * [`config`]: that configuration (SI units), the engine's input;
//! * [`rng`]: per-component seeded random streams;
//! * [`service`]: how a link with a varying capacity (a Mahimahi trace, rate changes) serves
//!   packets, for the simulator and the emulator alike;
//! * [`netem`]: netem's impairments (delay, loss models, duplication, reordering, corruption,
//!   slots), the stage the simulator and the emulator both run;
//! * [`results`]: the results contract (summary, time series, per-flow rows, traces);
//! * [`pcapng`]: the pcapng writer of the simulator's and the emulator's captures;
//! * [`monitor`]: the bounded-memory statistics behind it (log-linear histograms, per-link
//!   monitor state, per-class rows and summaries of any qdisc).
//!
//! Nothing here runs a simulation: the engine is `netsim`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cc;
pub mod config;
pub mod fabric;
pub mod fct;
pub mod monitor;
pub mod netem;
pub mod pcapng;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod service;
pub mod sizes;
pub mod time;
