//! # aqm — queue disciplines and Active Queue Management algorithms
//!
//! Pure logic: no I/O, no clock, no simulator types. Shared by the `netsim` simulator and
//! (later) a live dataplane. Style follows smoltcp: time is passed in, one file per
//! algorithm, constants cite the RFC/paper section they come from.
//!
//! ## Public API
//!
//! * Time and units ([`time`]): [`Instant`]`(u64 ns)`, [`Duration`]`(u64 ns)` with
//!   saturating `+`/`-` and checked variants, [`BitsPerSec`]`::tx_time(bytes) -> Duration`
//!   (rounded up), [`Bytes`].
//! * [`Packet`]: the trait a packet type implements (`size_bytes`, `flow_hash`,
//!   `ecn_capable`, `set_ce`, `enqueued_at`, `set_enqueued_at`; optional `ecn() -> `[`Ecn`]
//!   (the codepoint, derived from `ecn_capable` by default) and `class() -> u8` (default 0)).
//! * [`Rng`]: per-queue seeded Xoshiro256++ stream (`uniform() -> f64` in `[0,1)`).
//! * [`AqmConfig`]: serde enum tagged by `"type"` (`droptail`, `red`, `ared`, `pi`, `pie`,
//!   `codel`, `cobalt`, `blue`, `sred`, `rem`, `avq`, `sfc`, `pdlq`, `edc`, `pip`, `aopc`, `flc`, `paqman`), one config struct per algorithm with documented
//!   defaults and `validate()`. `AqmConfig::from_name(name, &[(key, f64)])`,
//!   `AqmConfig::names()`, `AqmConfig::describe(name) -> Result<Vec<ParamInfo>, ConfigError>`
//!   (`ParamInfo { name, unit, default: f64, doc }`), `get_param`/`set_param`. At this
//!   name/value boundary time parameters are seconds and booleans 0/1; in serde form time
//!   fields are integer nanoseconds. Every AQM has `ecn` (default false): when set, a
//!   congestion signal on an ECN-capable packet becomes a CE mark instead of a drop (never at
//!   the hard limit).
//! * [`QueueDisc<P>`]: FIFO + hard [`QueueLimit`] + [`QueueStats`] + RNG + one algorithm.
//!   - `QueueDisc::new(&cfg, limit, LinkInfo::new(rate), seed) -> Result<Self, ConfigError>`
//!   - `enqueue(now, pkt) -> Enqueue<P>` (`Queued` | `Marked` | `Dropped(pkt, DropReason)`)
//!   - `dequeue(now, &mut on_drop) -> Option<P>` (CoDel may drop several heads per call;
//!     dropped packets go to `on_drop(pkt, reason)`)
//!   - `poll_at() -> Option<Instant>` / `on_timer(now)` for periodic laws (PI, PIE, REM,
//!     Adaptive RED's max_p update)
//!   - `len_pkts()`, `len_bytes()`, `stats()`, `head_sojourn(now)`, `probability()`,
//!     `set_param(key, f64)`, `param(key)`, `config()`
//! * Queue-discipline trees ([`qdisc`]): [`Qdisc<P>`] is an enum over qdisc kinds, `Fifo`
//!   (a [`QueueDisc`], the fast path) or one variant per qdisc of the registry
//!   (`qdisc_registry!` in [`qdisc`]; each qdisc one file implementing [`QdiscSpec`] and
//!   [`QdiscOps`]), e.g. a scheduler (`Drr`, [`drr`]; `Wfq`, [`wfq`]) whose
//!   classes are `QueueDisc`s ([`classes`]: the class model they share); same interface as `QueueDisc` except `enqueue(now, pkt, &mut on_drop)`
//!   (victims: packets other than the arrival dropped to make room), `stats()` by value (sums
//!   over classes) and class accessors (`num_classes`, `class_name`, `class_stats`,
//!   `class_len`, `last_class`). [`QdiscConfig`] (`Fifo(AqmConfig)` | `Drr(DrrConfig)` |
//!   `Wfq(WfqConfig)` (both class lists a [`ClassList`]) | a hashed qdisc's flat config such as
//!   `FqCodel(FqCodelConfig)`, `Clone`) is its
//!   config; `set_param`/`get_param`/`from_raw`/`describe` take paths for trees
//!   (`classes.NAME.weight`, `classes.NAME.aqm.PARAM`) and plain names for a single AQM.
//!   Tree invariant: `received = dropped_enqueue() + dropped_victim + dropped_dequeue +
//!   dequeued + len_pkts()`.
//! * [`ConfigError`]: `UnknownAqm`, `UnknownParam`, `InvalidParam { key, value, reason }`,
//!   `InvalidText { key, text, reason }`. Units: [`units`] parses `10Mbps`, `5ms`, `1500B`.
//!
//! ## Algorithms and what their activation counter counts
//!
//! | name | module | decides at | activations |
//! |------|--------|-----------|-------------|
//! | `droptail` (`fifo`) | [`droptail`] | limit only | 0 |
//! | `red` | [`red`] | enqueue | each computation of p_a (avg in the probabilistic region) |
//! | `ared` | [`ared`] | enqueue + timer 0.5 s | RED's + each max_p adaptation |
//! | `pi` | [`pi`] | enqueue, law on timer (170 Hz) | each timer run |
//! | `pie` | [`pie`] | enqueue, law on timer (15 ms) | each timer run |
//! | `codel` | [`codel`] | dequeue | each dequeue that finds a packet |
//! | `cobalt` | [`cobalt`] | dequeue (+ overflow, idle) | each dequeued packet examined |
//! | `blue` | [`blue`] | enqueue, events | each applied change of p_m |
//! | `sred` | [`sred`] | enqueue | each arrival once the zombie list is full |
//! | `rem` | [`rem`] | enqueue, law on timer (2 ms) | each price update |
//! | `avq` | [`avq`] | enqueue | each arrival |
//! | `sfc` | [`sfc`] | enqueue | each arrival (law run per arrival) |
//! | `pdlq` | [`pdlq`] | enqueue, law on timer (2 ms) | each timer run |
//! | `edc` | [`edc`] | enqueue, law every `n_event` arrivals | each run of the law |
//! | `pip` | [`pip`] | enqueue, law on timer (160 Hz) | each timer run |
//! | `aopc` | [`aopc`] | enqueue, law on timer (160 Hz) | each timer run |
//! | `flc` | [`flc`] | enqueue, law on timer (160 Hz) | each timer run |
//! | `paqman` | [`paqman`] | enqueue, every arrival or once per RTT (table; per flow for a `multiflow` policy, [`paqman_multiflow`]) | each table look-up or network evaluation |
//!
//! Schedulers: `drr` ([`drr`], Deficit Round Robin over classes, each a FIFO with any of the
//! AQMs above) and `wfq` ([`wfq`], weighted fair queueing by start-time fair queueing over the
//! same classes); their activations are the sums of their classes'. `dualpi2` ([`dualpi2`],
//! RFC 9332's coupled L4S/classic dual queue, classes `l` and `c` chosen by the ECN codepoint).
//!
//! Hashed flow queueing (flat parameters like an AQM's, one flow queue per hash bucket, all on
//! the shared [`flowq`]): `fq_codel` ([`fq_codel`], CoDel per flow queue; activations: CoDel
//! runs that found a packet), `fq_cobalt` ([`fq_cobalt`], ns-3's FQ-COBALT: COBALT per flow
//! queue; COBALT runs), `fq_pie` ([`fq_pie`], PIE per flow queue; runs of the periodic
//! law), `sfq` ([`sfq`], no control law: 0), `sfq_codel` ([`sfq_codel`], ns-2 sfqcodel; CoDel
//! runs). `Qdisc::active_flows()` / `flow_count(now)` report the backlogged flow queues.
//!
//! ## Contract for the driver (simulator or dataplane)
//!
//! * Call `dequeue` when the link can take a packet. When a dequeue empties the queue, the
//!   queue assumes the link goes idle when that packet's transmission ends (at the link rate
//!   given in [`LinkInfo`]); RED/BLUE use this for their idle-time rules.
//! * Call `on_timer(t)` at every `t = poll_at()`; `poll_at` may change after any call, so
//!   re-read it after `enqueue`, `dequeue`, `on_timer` and `set_param`.
//! * Counter invariants: `received = dropped_enqueue() + enqueued`,
//!   `enqueued = dequeued + dropped_dequeue + dropped_victim + len_pkts()`.
//!
//! ## Example
//!
//! ```
//! use aqm::*;
//! # #[derive(Debug)] struct Pkt { size: u32, t: Instant }
//! # impl Packet for Pkt {
//! #   fn size_bytes(&self) -> u32 { self.size } fn flow_hash(&self) -> u64 { 0 }
//! #   fn ecn_capable(&self) -> bool { false } fn set_ce(&mut self) {}
//! #   fn enqueued_at(&self) -> Instant { self.t } fn set_enqueued_at(&mut self, t: Instant) { self.t = t }
//! # }
//! let cfg = AqmConfig::from_name("fifo", &[]).unwrap();
//! let mut q = QueueDisc::new(&cfg, QueueLimit::Packets(100),
//!                            LinkInfo::new(BitsPerSec::from_mbps(10)), 42).unwrap();
//! assert!(matches!(q.enqueue(Instant(0), Pkt { size: 1500, t: Instant(0) }), Enqueue::Queued));
//! let p = q.dequeue(Instant(1_000), &mut |_p, _reason| {}).unwrap();
//! assert_eq!(p.size, 1500);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod algorithm;
pub mod backlog;
pub mod classes;
pub mod config;
pub mod dscp;
pub mod error;
pub mod packet;
pub mod params;
pub mod qdisc;
pub mod queue;
pub mod rng;
pub mod time;
pub mod units;

pub mod aopc;
pub mod ared;
pub mod avq;
pub mod blue;
pub mod cake;
pub mod cobalt;
pub mod codel;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod edc;
pub mod flc;
pub mod flowq;
pub mod fq_cobalt;
pub mod fq_codel;
pub mod fq_pie;
pub mod paqman;
pub mod paqman_multiflow;
pub mod pdlq;
pub mod pi;
pub mod pie;
pub mod pip;
pub mod red;
pub mod rem;
pub mod sfc;
pub mod sfq;
pub mod sfq_codel;
pub mod sqm;
pub mod sred;
pub mod wfq;

#[cfg(test)]
mod tests_wrapper;
#[cfg(test)]
mod testutil;

pub use classes::{ClassConfig, ClassList};
pub use cobalt::CobaltConfig;
pub use config::{AqmConfig, RawParam};
pub use drr::{DrrClass, DrrConfig};
pub use dualpi2::{DualPi2Config, DualPi2LConfig};
pub use error::ConfigError;
pub use fq_cobalt::FqCobaltConfig;
pub use fq_codel::FqCodelConfig;
pub use fq_pie::FqPieConfig;
pub use packet::{Ecn, Packet, TcpAck};
pub use params::{ParamInfo, Params};
pub use qdisc::{FlowCount, Qdisc, QdiscConfig, QdiscOps, QdiscSpec};
pub use queue::{DropReason, Enqueue, LinkInfo, QueueDisc, QueueLimit, QueueStats, DEFAULT_MTU};
pub use rng::Rng;
pub use sfq::SfqConfig;
pub use sfq_codel::SfqCodelConfig;
pub use sqm::SqmConfig;
pub use time::{BitsPerSec, Bytes, Duration, Instant};
pub use wfq::WfqConfig;
