//! Queue-discipline trees: [`QdiscConfig`] (what to run) and [`Qdisc`] (the running state),
//! both generated from one registry (`qdisc_registry!` in this file).
//!
//! A qdisc owns packets. The leaf is [`crate::QueueDisc`] (FIFO + hard limit + one
//! [`crate::AqmConfig`] algorithm), the fast path; every other qdisc lives in its own file
//! with its configuration, its running state and two trait impls: [`QdiscSpec`] (the
//! configuration's parameters: descriptions, paths, checks) and [`QdiscOps`] (the running
//! qdisc: enqueue, dequeue, timers, counters, classes, flows, parameters). A scheduler
//! ([`crate::drr`], [`crate::wfq`]) holds classes, each a child `QueueDisc` ([`crate::classes`]:
//! the class model both share); a hashed flow-queueing qdisc ([`crate::fq_codel`] and its
//! family, sharing [`crate::flowq`]) holds one flow queue per hash bucket, with flat
//! parameters like an AQM's and no classes; [`crate::sqm`] and [`crate::dualpi2`] have flat
//! parameters and two fixed classes.
//!
//! Adding a qdisc is its file (with `pub mod` in `lib.rs`) and one line in the registry:
//! `"name" => Variant(module::State, module::Config);` in the group of its kind (`classes`,
//! `hashed` or `other`). The registry generates the [`QdiscConfig`] and [`Qdisc`] enums, their
//! serde form (tagged by `"type"` = the name), every `match` over the variants, and the name
//! lists [`SCHEDULERS`], [`CLASS_BASED`] and [`HASHED`]; a compile-time check holds the name
//! to [`QdiscSpec::NAME`]. Dispatch is static on the per-packet path: `Qdisc` is an enum and
//! every call is one `match` (the FIFO arm first, the code that ran before schedulers existed)
//! calling the variant's [`QdiscOps`] method; no `dyn`, no allocation.
//!
//! A scheduler's enqueue may drop a packet other than the arriving one (a *victim*: the head
//! of the fattest class when the shared buffer is full); victims go to the `on_drop` callback
//! of [`Qdisc::enqueue`], like dequeue-side drops. Counter invariant of every qdisc, leaf or
//! tree (`stats()` of a scheduler is the sum over its classes):
//!
//! `received = dropped_enqueue + dropped_victim + dropped_dequeue + dequeued + len_pkts`.
//!
//! Parameter paths: a single AQM keeps plain names (`target`); in a tree a path follows the
//! config's structure with classes addressed by name: `classes.NAME.weight`,
//! `classes.NAME.aqm.PARAM`; a hashed qdisc takes plain names (`target`, `flows`). Serde
//! form: a leaf is the AQM's tagged object (`{"type": "codel", ...}`, unchanged); a scheduler
//! is tagged by its own name
//! (`{"type": "drr", "classes": [{"name": "a", "weight": 1, "aqm": {"type": "codel"}}]}`,
//! `{"type": "fq_codel", "flows": 1024, "target": 5000000}`).

mod config;
mod dispatch;

use crate::config::{AqmConfig, RawParam};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::queue::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::time::Instant;

/// What the simulator reads of a hashed qdisc's flow queues: backlogged flow queues now, their
/// time integral and their peak ([`crate::flowq`], "Active flows").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowCount {
    /// Backlogged flow queues now.
    pub active: u32,
    /// Integral of `active` over time up to the `now` asked for, flow x ns.
    pub area: u128,
    /// Largest `active` since the queue was built or since [`Qdisc::reset_flow_peak`].
    pub peak: u32,
}

/// A qdisc's configuration as the registry sees it: its name, its config type and the
/// name/value interface of that config (boundary units: seconds, bytes, 0/1). Implemented
/// by the state type for every packet type (`impl<P> QdiscSpec for Drr<P>`), so that two
/// qdiscs may share a config type (`drr` and `wfq` both take a [`crate::ClassList`]); the
/// registry calls these functions on `State<()>`.
pub trait QdiscSpec {
    /// The name (serde tag, `aqmlab aqms`, errors); equal to the registry's, checked when
    /// the crate compiles.
    const NAME: &'static str;
    /// The configuration (`{"type": NAME, ...}` in serde form, without the tag).
    type Config;
    /// Parameter descriptions (for `aqmlab aqms`; path patterns for trees).
    fn describe() -> Vec<ParamInfo>;
    /// Checks the whole configuration.
    fn validate_config(cfg: &Self::Config) -> Result<(), ConfigError>;
    /// Sets one parameter by path (boundary units) and re-validates; unchanged on error.
    fn set_config_param(cfg: &mut Self::Config, path: &str, value: f64) -> Result<(), ConfigError>;
    /// Reads one parameter by path (boundary units).
    fn get_config_param(cfg: &Self::Config, path: &str) -> Option<f64>;
    /// Sets one parameter while a configuration is built from name/value pairs, which is
    /// validated once at the end ([`QdiscConfig::from_raw`]). Default: [`Self::set_config_param`];
    /// flat parameter lists set the field alone, as an AQM's do, so that cross-field checks
    /// see the final values.
    fn set_config_field(cfg: &mut Self::Config, path: &str, value: f64) -> Result<(), ConfigError> {
        Self::set_config_param(cfg, path, value)
    }
    /// Converts a user-written value for path `key` to its boundary `f64` with the
    /// parameter's unit. Default: `key` among [`Self::describe`].
    fn raw_config_value(
        cfg: &Self::Config,
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        let _ = cfg;
        AqmConfig::value_among(Self::NAME, &Self::describe(), key, raw, require_unit)
    }
}

/// [`QdiscSpec`] for a state type whose config is a flat parameter list
/// ([`crate::params::Params`], built by `aqm_config!`): the name is the config's, and every
/// function is the config's own.
macro_rules! flat_qdisc_spec {
    ($state:ident, $cfg:ty) => {
        impl<P> $crate::qdisc::QdiscSpec for $state<P> {
            const NAME: &'static str = <$cfg as $crate::params::Params>::AQM;
            type Config = $cfg;
            fn describe() -> Vec<$crate::params::ParamInfo> {
                <$cfg as $crate::params::Params>::describe()
            }
            fn validate_config(c: &$cfg) -> Result<(), $crate::error::ConfigError> {
                $crate::params::Params::validate(c)
            }
            fn set_config_param(
                c: &mut $cfg,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                $crate::params::Params::set_param(c, path, value)
            }
            fn get_config_param(c: &$cfg, path: &str) -> Option<f64> {
                $crate::params::Params::get_param(c, path)
            }
            fn set_config_field(
                c: &mut $cfg,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                $crate::params::Params::set_field(c, path, value)
            }
        }
    };
}
pub(crate) use flat_qdisc_spec;

/// A running qdisc other than the FIFO leaf, as [`Qdisc`] drives it. The per-packet methods
/// (`enqueue`, `dequeue`) of a scheduler are `#[inline(never)]` in its impl, so that the
/// scheduler's code stays out of a caller's FIFO path; the optional parts (timers, classes,
/// flow queues) have defaults meaning "none".
pub trait QdiscOps<P: Packet>: QdiscSpec + Sized {
    /// Builds `cfg` with hard limit `limit` (shared by all its queues) on `link`; `seed`
    /// starts its random streams and hash keys.
    fn new(
        cfg: &Self::Config,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError>;
    /// Offers a packet: `Queued`, `Marked` or `Dropped(pkt, reason)` for the arrival; other
    /// packets dropped to make room (victims) go to `on_drop`.
    fn enqueue(
        &mut self,
        now: Instant,
        pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P>;
    /// Takes the next packet for the link; dequeue-side drops go to `on_drop`.
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P>;
    /// Next time [`QdiscOps::on_timer`] must run (none: no periodic law).
    #[inline]
    fn poll_at(&self) -> Option<Instant> {
        None
    }
    /// Runs the periodic laws that are due.
    #[inline]
    fn on_timer(&mut self, _now: Instant) {}
    /// Packets stored.
    fn len_pkts(&self) -> usize;
    /// Bytes stored.
    fn len_bytes(&self) -> u64;
    /// Counters over all its queues.
    fn stats(&self) -> QueueStats;
    /// The link's hard limit it was built with.
    fn limit(&self) -> QueueLimit;
    /// The link.
    fn link(&self) -> LinkInfo;
    /// Bytes of state held for packets and flows (not counted: fixed-size fields).
    fn memory_bytes(&self) -> usize;
    /// Drop/mark probability in [0, 1] (0 for qdiscs without one).
    #[inline]
    fn probability(&self) -> f64 {
        0.0
    }
    /// Number of classes reported (0: none).
    #[inline]
    fn num_classes(&self) -> usize {
        0
    }
    /// Name of class `i`.
    #[inline]
    fn class_name(&self, _i: usize) -> Option<&str> {
        None
    }
    /// Counters of class `i`.
    #[inline]
    fn class_stats(&self, _i: usize) -> Option<QueueStats> {
        None
    }
    /// Length of class `i`'s queue now: `(packets, bytes)`.
    #[inline]
    fn class_len(&self, _i: usize) -> Option<(usize, u64)> {
        None
    }
    /// The class the last dequeued packet came from (0 without classes).
    #[inline]
    fn last_class(&self) -> u8 {
        0
    }
    /// Backlogged flow queues (`None` without flow queues).
    #[inline]
    fn active_flows(&self) -> Option<u32> {
        None
    }
    /// The active-flow count, its integral up to `now` and its peak.
    #[inline]
    fn flow_count(&self, _now: Instant) -> Option<FlowCount> {
        None
    }
    /// Restarts the peak of [`QdiscOps::flow_count`] from the current count.
    #[inline]
    fn reset_flow_peak(&mut self) {}
    /// The packet pool's size, for a qdisc with one.
    #[inline]
    fn pool_slots(&self) -> Option<usize> {
        None
    }
    /// Changes one parameter by path while running; on error nothing changes.
    fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError>;
    /// Current value of one parameter by path (default: read from [`QdiscOps::config`]).
    fn param(&self, path: &str) -> Option<f64> {
        Self::get_config_param(&self.config(), path)
    }
    /// The current configuration.
    fn config(&self) -> Self::Config;
}

/// `a == b` in a constant (the registry's compile-time name check).
pub(crate) const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The registry: every qdisc besides the FIFO leaf, one line each, `"name" =>
/// Variant(module::State, module::Config);`, grouped by kind. Generates the name lists, the
/// [`QdiscConfig`] enum with its serde form and name/value interface (`config.rs`) and the
/// [`Qdisc`] enum with its dispatch (`dispatch.rs`).
macro_rules! qdisc_registry {
    (
        classes { $( $cn:literal => $cv:ident($cm:ident :: $cs:ident, $ctm:ident :: $ct:ident); )* }
        hashed { $( $hn:literal => $hv:ident($hm:ident :: $hs:ident, $htm:ident :: $ht:ident); )* }
        other { $( $on:literal => $ov:ident($om:ident :: $os:ident, $otm:ident :: $ot:ident); )* }
    ) => {
        /// Names of the schedulers (besides every AQM name, which runs as a single FIFO): the
        /// class-based ones ([`CLASS_BASED`]), the hashed flow-queueing qdiscs ([`HASHED`])
        /// and the others (DualPI2: two fixed classes `l` and `c` chosen by the ECN
        /// codepoint, flat parameters).
        pub const SCHEDULERS: &[&str] = &[$($cn,)* $($hn,)* $($on,)*];

        /// The class-based schedulers: a class list ([`crate::ClassList`]) in their config.
        pub const CLASS_BASED: &[&str] = &[$($cn),*];

        /// The hashed flow-queueing qdiscs: flat parameter lists (like an AQM's), no classes.
        pub const HASHED: &[&str] = &[$($hn),*];

        $(
            const _: () = assert!(
                same_name($cn, <crate::$cm::$cs<()> as QdiscSpec>::NAME),
                concat!("registry name ", $cn, " is not its QdiscSpec::NAME")
            );
        )*
        $(
            const _: () = assert!(
                same_name($hn, <crate::$hm::$hs<()> as QdiscSpec>::NAME),
                concat!("registry name ", $hn, " is not its QdiscSpec::NAME")
            );
        )*
        $(
            const _: () = assert!(
                same_name($on, <crate::$om::$os<()> as QdiscSpec>::NAME),
                concat!("registry name ", $on, " is not its QdiscSpec::NAME")
            );
        )*

        config::qdisc_configs! {
            all {
                $( $cn => $cv($cm::$cs, $ctm::$ct); )*
                $( $hn => $hv($hm::$hs, $htm::$ht); )*
                $( $on => $ov($om::$os, $otm::$ot); )*
            }
            classes { $( $cv ),* }
            hashed { $( $hv ),* }
        }

        dispatch::qdisc_states! {
            $( $cv($cm::$cs); )* $( $hv($hm::$hs); )* $( $ov($om::$os); )*
        }
    };
}

qdisc_registry! {
    classes {
        "drr" => Drr(drr::Drr, drr::DrrConfig);
        "wfq" => Wfq(wfq::Wfq, wfq::WfqConfig);
    }
    hashed {
        "fq_codel" => FqCodel(fq_codel::FqCodel, fq_codel::FqCodelConfig);
        "fq_pie" => FqPie(fq_pie::FqPie, fq_pie::FqPieConfig);
        "sfq" => Sfq(sfq::Sfq, sfq::SfqConfig);
        "sfq_codel" => SfqCodel(sfq_codel::SfqCodel, sfq_codel::SfqCodelConfig);
        "sqm" => Sqm(sqm::Sqm, sqm::SqmConfig);
    }
    other {
        "dualpi2" => DualPi2(dualpi2::DualPi2, dualpi2::DualPi2Config);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::ClassList;
    use crate::testutil::{no_drop, TestPacket};
    use crate::time::BitsPerSec;

    /// Every registered qdisc: its name gives its default config, its serde tag and the name
    /// its running state reports; the kind lists agree with the config's accessors; packets
    /// go through it with the counters balanced.
    #[test]
    fn registry_is_consistent() {
        // The registry's order: the class-based ones, the hashed ones, the others; no name
        // twice and none an AQM's.
        assert_eq!(SCHEDULERS[..CLASS_BASED.len()], *CLASS_BASED);
        assert_eq!(SCHEDULERS[CLASS_BASED.len()..][..HASHED.len()], *HASHED);
        for (i, name) in SCHEDULERS.iter().enumerate() {
            assert!(!SCHEDULERS[..i].contains(name), "{name} twice");
            assert!(
                crate::AqmConfig::default_for(name).is_err(),
                "{name} is an AQM"
            );
        }
        let link = LinkInfo::new(BitsPerSec::from_mbps(10));
        for &name in SCHEDULERS {
            let cfg = QdiscConfig::default_for(name).unwrap();
            assert_eq!(cfg.name(), name);
            assert_eq!(
                QdiscConfig::default_for(&name.to_ascii_uppercase()).unwrap(),
                cfg
            );
            assert!(QdiscConfig::names().contains(&name));
            assert!(cfg.as_aqm().is_none());
            assert_eq!(cfg.is_hashed(), HASHED.contains(&name), "{name}");
            assert_eq!(
                cfg.class_list().is_some(),
                CLASS_BASED.contains(&name),
                "{name}"
            );
            let with = QdiscConfig::with_classes(name, ClassList::default());
            assert_eq!(with.is_some(), CLASS_BASED.contains(&name), "{name}");
            assert_eq!(cfg.param_info(), QdiscConfig::describe(name).unwrap());
            cfg.validate().unwrap();
            assert_eq!(QdiscConfig::from_raw(name, &[], true).unwrap(), cfg);

            let json = serde_json::to_value(&cfg).unwrap();
            assert_eq!(json["type"], name);
            assert_eq!(serde_json::from_value::<QdiscConfig>(json).unwrap(), cfg);
            if !CLASS_BASED.contains(&name) {
                // Flat parameters take their defaults.
                let tag = format!(r#"{{"type": "{name}"}}"#);
                assert_eq!(serde_json::from_str::<QdiscConfig>(&tag).unwrap(), cfg);
            }

            let mut q = Qdisc::<TestPacket>::new(&cfg, QueueLimit::Packets(100), link, 1).unwrap();
            assert_eq!(q.aqm_name(), name);
            assert_eq!(q.config(), cfg);
            assert_eq!(q.limit(), QueueLimit::Packets(100));
            assert_eq!(q.pool_slots().is_some(), HASHED.contains(&name), "{name}");
            assert_eq!(
                q.flow_count(Instant::ZERO).is_some(),
                HASHED.contains(&name)
            );
            for i in 0..4 {
                let p = TestPacket::new(i, 1000).flow(i % 2);
                q.enqueue(Instant(i * 1000), p, &mut no_drop());
            }
            assert_eq!(q.len_pkts(), 4, "{name}");
            assert_eq!(q.len_bytes(), 4000, "{name}");
            assert_eq!(q.active_flows().is_some(), HASHED.contains(&name), "{name}");
            let mut got = 0;
            while q.dequeue(Instant(10_000), &mut no_drop()).is_some() {
                got += 1;
            }
            let s = q.stats();
            assert_eq!((got, s.received, s.dequeued), (4, 4, 4), "{name}");
            assert!(q.is_empty());
            assert_eq!(q.num_classes() > 0, q.class_name(0).is_some(), "{name}");
        }
        // An AQM runs as a FIFO and keeps its own serde form.
        let fifo = QdiscConfig::default_for("codel").unwrap();
        assert!(fifo.as_aqm().is_some() && !fifo.is_hashed() && fifo.class_list().is_none());
        assert_eq!(
            serde_json::to_value(&fifo).unwrap(),
            serde_json::to_value(fifo.as_aqm().unwrap()).unwrap()
        );
        let e = QdiscConfig::default_for("nope").unwrap_err().to_string();
        assert!(e.contains(&SCHEDULERS.join(", ")), "{e}");
    }
}
