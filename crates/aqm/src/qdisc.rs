//! Queue-discipline trees: [`QdiscConfig`] (what to run) and [`Qdisc`] (the running state).
//!
//! A qdisc owns packets. The leaf is [`QueueDisc`] (FIFO + hard limit + one [`AqmConfig`]
//! algorithm), the fast path; a scheduler ([`crate::drr`], [`crate::wfq`]) holds classes, each
//! a child `QueueDisc` ([`crate::classes`]: the class model both share); a hashed flow-queueing qdisc ([`crate::fq_codel`] and its family, sharing
//! [`crate::flowq`]) holds one flow queue per hash bucket, with flat parameters like an AQM's
//! and no classes. Dispatch is static on the per-packet path: `Qdisc` is an enum with one
//! variant per kind and every call is one `match` (the FIFO arm is the code that ran before
//! schedulers existed); the hashed qdiscs' other methods go through the [`Hashed`] trait.
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

use serde::{Deserialize, Serialize};

use crate::classes::{ClassList, ClassSet};
use crate::config::{AqmConfig, RawParam};
use crate::drr::{Drr, DrrConfig};
use crate::dualpi2::{DualPi2, DualPi2Config};
use crate::error::ConfigError;
use crate::flowq::FlowQueues;
use crate::fq_codel::{FqCodel, FqCodelConfig};
use crate::fq_pie::{FqPie, FqPieConfig};
use crate::packet::Packet;
use crate::params::{ParamInfo, Params};
use crate::queue::{DropReason, Enqueue, LinkInfo, QueueDisc, QueueLimit, QueueStats};
use crate::sfq::{Sfq, SfqConfig};
use crate::sfq_codel::{SfqCodel, SfqCodelConfig};
use crate::sqm::{Sqm, SqmConfig};
use crate::time::Instant;
use crate::wfq::{Wfq, WfqConfig};

/// Names of the schedulers (besides every AQM name, which runs as a single FIFO): the
/// class-based ones ([`CLASS_BASED`]), the hashed flow-queueing qdiscs ([`HASHED`]) and
/// DualPI2 (two fixed classes `l` and `c` chosen by the ECN codepoint, flat parameters).
pub const SCHEDULERS: &[&str] = &[
    "drr",
    "wfq",
    "fq_codel",
    "fq_pie",
    "sfq",
    "sfq_codel",
    "sqm",
    "dualpi2",
];

/// The class-based schedulers: a class list ([`ClassList`]) in their config.
pub const CLASS_BASED: &[&str] = &["drr", "wfq"];

/// The hashed flow-queueing qdiscs: flat parameter lists (like an AQM's), no classes.
pub const HASHED: &[&str] = &["fq_codel", "fq_pie", "sfq", "sfq_codel", "sqm"];

/// Applies `$e` to the config of a hashed variant bound to `$c`, or evaluates `$other`.
macro_rules! hashed_cfg {
    ($v:expr, $c:ident => $e:expr, _ => $other:expr) => {
        match $v {
            QdiscConfig::FqCodel($c) => $e,
            QdiscConfig::FqPie($c) => $e,
            QdiscConfig::Sfq($c) => $e,
            QdiscConfig::SfqCodel($c) => $e,
            QdiscConfig::Sqm($c) => $e,
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}

/// A queue-discipline tree: one FIFO with an AQM, or a scheduler with classes. `Clone`, not
/// `Copy` (class lists are vectors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Repr", try_from = "Repr")]
pub enum QdiscConfig {
    /// A single FIFO running this AQM.
    Fifo(AqmConfig),
    /// Deficit Round Robin over classes ([`crate::drr`]).
    Drr(DrrConfig),
    /// Weighted fair queueing (start-time fair queueing) over classes ([`crate::wfq`]).
    Wfq(WfqConfig),
    /// FQ-CoDel ([`crate::fq_codel`]).
    FqCodel(FqCodelConfig),
    /// FQ-PIE ([`crate::fq_pie`]).
    FqPie(FqPieConfig),
    /// Stochastic Fairness Queueing ([`crate::sfq`]).
    Sfq(SfqConfig),
    /// SFQ-CoDel, ns-2 sfqcodel ([`crate::sfq_codel`]).
    SfqCodel(SfqCodelConfig),
    /// SQM: top-K elephant queues with SQM's law + a reserved CoDel queue ([`crate::sqm`]).
    Sqm(SqmConfig),
    /// The L4S coupled dual queue ([`crate::dualpi2`]).
    DualPi2(DualPi2Config),
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum SchedRepr {
    Drr(DrrConfig),
    Wfq(WfqConfig),
    #[serde(rename = "fq_codel")]
    FqCodel(FqCodelConfig),
    #[serde(rename = "fq_pie")]
    FqPie(FqPieConfig),
    Sfq(SfqConfig),
    #[serde(rename = "sfq_codel")]
    SfqCodel(SfqCodelConfig),
    Sqm(SqmConfig),
    #[serde(rename = "dualpi2")]
    DualPi2(DualPi2Config),
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Sched(SchedRepr),
    Fifo(AqmConfig),
}

impl From<QdiscConfig> for Repr {
    fn from(c: QdiscConfig) -> Repr {
        match c {
            QdiscConfig::Fifo(a) => Repr::Fifo(a),
            QdiscConfig::Drr(d) => Repr::Sched(SchedRepr::Drr(d)),
            QdiscConfig::Wfq(w) => Repr::Sched(SchedRepr::Wfq(w)),
            QdiscConfig::FqCodel(c) => Repr::Sched(SchedRepr::FqCodel(c)),
            QdiscConfig::FqPie(c) => Repr::Sched(SchedRepr::FqPie(c)),
            QdiscConfig::Sfq(c) => Repr::Sched(SchedRepr::Sfq(c)),
            QdiscConfig::SfqCodel(c) => Repr::Sched(SchedRepr::SfqCodel(c)),
            QdiscConfig::Sqm(c) => Repr::Sched(SchedRepr::Sqm(c)),
            QdiscConfig::DualPi2(d) => Repr::Sched(SchedRepr::DualPi2(d)),
        }
    }
}

impl TryFrom<Repr> for QdiscConfig {
    type Error = ConfigError;
    fn try_from(r: Repr) -> Result<QdiscConfig, ConfigError> {
        Ok(match r {
            Repr::Fifo(a) => QdiscConfig::Fifo(a),
            Repr::Sched(SchedRepr::Drr(d)) => QdiscConfig::Drr(d),
            Repr::Sched(SchedRepr::Wfq(w)) => QdiscConfig::Wfq(w),
            Repr::Sched(SchedRepr::FqCodel(c)) => QdiscConfig::FqCodel(c),
            Repr::Sched(SchedRepr::FqPie(c)) => QdiscConfig::FqPie(c),
            Repr::Sched(SchedRepr::Sfq(c)) => QdiscConfig::Sfq(c),
            Repr::Sched(SchedRepr::SfqCodel(c)) => QdiscConfig::SfqCodel(c),
            Repr::Sched(SchedRepr::Sqm(c)) => QdiscConfig::Sqm(c),
            Repr::Sched(SchedRepr::DualPi2(d)) => QdiscConfig::DualPi2(d),
        })
    }
}

impl From<AqmConfig> for QdiscConfig {
    fn from(a: AqmConfig) -> QdiscConfig {
        QdiscConfig::Fifo(a)
    }
}

impl QdiscConfig {
    /// Every name `default_for` takes: the AQMs (as single FIFOs), then the schedulers.
    pub fn names() -> Vec<&'static str> {
        let mut v = AqmConfig::names().to_vec();
        v.extend_from_slice(SCHEDULERS);
        v
    }

    /// The AQM's or scheduler's canonical name.
    pub fn name(&self) -> &'static str {
        match self {
            QdiscConfig::Fifo(a) => a.name(),
            QdiscConfig::Drr(_) => "drr",
            QdiscConfig::Wfq(_) => "wfq",
            QdiscConfig::FqCodel(_) => FqCodelConfig::AQM,
            QdiscConfig::FqPie(_) => FqPieConfig::AQM,
            QdiscConfig::Sfq(_) => SfqConfig::AQM,
            QdiscConfig::SfqCodel(_) => SfqCodelConfig::AQM,
            QdiscConfig::Sqm(_) => SqmConfig::AQM,
            QdiscConfig::DualPi2(_) => "dualpi2",
        }
    }

    /// True for a hashed flow-queueing qdisc ([`HASHED`]).
    pub fn is_hashed(&self) -> bool {
        hashed_cfg!(self, _c => true, _ => false)
    }

    /// The single AQM, if this is a FIFO.
    pub fn as_aqm(&self) -> Option<&AqmConfig> {
        match self {
            QdiscConfig::Fifo(a) => Some(a),
            _ => None,
        }
    }

    /// The class list of a class-based scheduler (drr, wfq).
    pub fn class_list(&self) -> Option<&ClassList> {
        match self {
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => Some(c),
            _ => None,
        }
    }

    /// The class list of a class-based scheduler, to change it.
    pub fn class_list_mut(&mut self) -> Option<&mut ClassList> {
        match self {
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => Some(c),
            _ => None,
        }
    }

    /// The class-based scheduler `name` ([`CLASS_BASED`]; case-insensitive) over `classes`.
    pub fn with_classes(name: &str, classes: ClassList) -> Option<QdiscConfig> {
        let n = name.trim();
        if n.eq_ignore_ascii_case("drr") {
            Some(QdiscConfig::Drr(classes))
        } else if n.eq_ignore_ascii_case("wfq") {
            Some(QdiscConfig::Wfq(classes))
        } else {
            None
        }
    }

    /// Class names of a scheduler, in order (empty for a FIFO and a hashed qdisc).
    pub fn class_names(&self) -> Vec<&str> {
        self.class_list().map_or_else(Vec::new, ClassList::names)
    }

    /// The default config of `name` (an AQM, alias or scheduler; case-insensitive).
    pub fn default_for(name: &str) -> Result<QdiscConfig, ConfigError> {
        let lower = name.trim().to_ascii_lowercase();
        match lower.as_str() {
            "drr" | "wfq" => {
                return Ok(Self::with_classes(&lower, ClassList::default()).expect("class-based"))
            }
            "fq_codel" => return Ok(QdiscConfig::FqCodel(FqCodelConfig::default())),
            "fq_pie" => return Ok(QdiscConfig::FqPie(FqPieConfig::default())),
            "sfq" => return Ok(QdiscConfig::Sfq(SfqConfig::default())),
            "sfq_codel" => return Ok(QdiscConfig::SfqCodel(SfqCodelConfig::default())),
            "sqm" => return Ok(QdiscConfig::Sqm(SqmConfig::default())),
            "dualpi2" => return Ok(QdiscConfig::DualPi2(DualPi2Config::default())),
            _ => {}
        }
        AqmConfig::default_for(name)
            .map(QdiscConfig::Fifo)
            .map_err(|e| match e {
                ConfigError::UnknownAqm { name, known } => ConfigError::UnknownAqm {
                    name,
                    known: format!("{known}, {}", SCHEDULERS.join(", ")),
                },
                e => e,
            })
    }

    /// Parameter descriptions of `name` (for `aqmlab aqms`).
    pub fn describe(name: &str) -> Result<Vec<ParamInfo>, ConfigError> {
        Ok(Self::default_for(name)?.param_info())
    }

    /// Parameter descriptions of this config's kind (a DRR tree: the path patterns).
    pub fn param_info(&self) -> Vec<ParamInfo> {
        match self {
            QdiscConfig::Fifo(a) => a.param_info(),
            QdiscConfig::Drr(_) => crate::drr::describe(),
            QdiscConfig::Wfq(_) => crate::wfq::describe(),
            QdiscConfig::FqCodel(_) => FqCodelConfig::describe(),
            QdiscConfig::FqPie(_) => FqPieConfig::describe(),
            QdiscConfig::Sfq(_) => SfqConfig::describe(),
            QdiscConfig::SfqCodel(_) => SfqCodelConfig::describe(),
            QdiscConfig::Sqm(_) => SqmConfig::describe_all(),
            QdiscConfig::DualPi2(_) => DualPi2Config::describe(),
        }
    }

    /// Checks the whole tree.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::Fifo(a) => a.validate(),
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => c.validate(),
            QdiscConfig::DualPi2(d) => d.validate(),
            h => hashed_cfg!(h, c => c.validate(), _ => unreachable!()),
        }
    }

    /// Sets one parameter by path (boundary units) and re-validates; unchanged on error.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::Fifo(a) => a.set_param(path, value),
            QdiscConfig::Drr(_) | QdiscConfig::Wfq(_) => {
                let name = self.name();
                self.class_list_mut()
                    .expect("a class-based scheduler")
                    .set_param(name, path, value)
            }
            QdiscConfig::DualPi2(d) => d.set_param(path, value),
            h => hashed_cfg!(h, c => c.set_param(path, value), _ => unreachable!()),
        }
    }

    /// Reads one parameter by path (boundary units).
    pub fn get_param(&self, path: &str) -> Option<f64> {
        match self {
            QdiscConfig::Fifo(a) => a.get_param(path),
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => c.get_param(path),
            QdiscConfig::DualPi2(d) => d.get_param(path),
            h => hashed_cfg!(h, c => c.get_param(path), _ => unreachable!()),
        }
    }

    /// Like [`AqmConfig::from_raw`] for any name; for a scheduler the keys are paths into its
    /// default config (`classes.default.weight`). Class lists are built by the scenario
    /// schema or serde, not by name/value pairs.
    pub fn from_raw(
        name: &str,
        params: &[(&str, RawParam<'_>)],
        require_unit: bool,
    ) -> Result<QdiscConfig, ConfigError> {
        let mut cfg = Self::default_for(name)?;
        if let QdiscConfig::Fifo(_) = cfg {
            return AqmConfig::from_raw(name, params, require_unit).map(QdiscConfig::Fifo);
        }
        if cfg.is_hashed() {
            // Like an AQM: every value is set, then the whole config is checked.
            for (k, raw) in params {
                let x = cfg.raw_value(k, *raw, require_unit)?;
                hashed_cfg!(&mut cfg, c => c.set_field(k, x)?, _ => unreachable!());
            }
            cfg.validate()?;
            return Ok(cfg);
        }
        for (k, raw) in params {
            let x = cfg.raw_value(k, *raw, require_unit)?;
            cfg.set_param(k, x)?;
        }
        Ok(cfg)
    }

    /// Converts a user-written value for path `key` to its boundary `f64`
    /// ([`AqmConfig::param_value`] with the parameter's own unit).
    pub fn raw_value(
        &self,
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        if self.is_hashed() || matches!(self, QdiscConfig::DualPi2(_)) {
            // SQM's per-queue paths (queues.N.LEAF, flows.HASH.LEAF) take the unit of the
            // pattern queues.N.LEAF.
            let pattern = match (self, key.split('.').collect::<Vec<_>>().as_slice()) {
                (QdiscConfig::Sqm(_), ["queues" | "flows", _, leaf]) => format!("queues.N.{leaf}"),
                _ => key.to_string(),
            };
            return AqmConfig::value_among(
                self.name(),
                &self.param_info(),
                &pattern,
                raw,
                require_unit,
            )
            .map_err(|e| match e {
                ConfigError::UnknownParam { aqm, known, .. } => ConfigError::UnknownParam {
                    aqm,
                    key: key.into(),
                    known,
                },
                e => e,
            });
        }
        match self {
            QdiscConfig::Fifo(a) => a.raw_value(key, raw, require_unit),
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => {
                c.raw_value(self.name(), key, raw, require_unit)
            }
            _ => unreachable!("hashed qdiscs and DualPI2 are handled above"),
        }
    }

    /// Builds from a name and `(path, value)` pairs in boundary units.
    pub fn from_name(name: &str, params: &[(String, f64)]) -> Result<QdiscConfig, ConfigError> {
        if let QdiscConfig::Fifo(_) = Self::default_for(name)? {
            return AqmConfig::from_name(name, params).map(QdiscConfig::Fifo);
        }
        let mut cfg = Self::default_for(name)?;
        if cfg.is_hashed() {
            for (k, v) in params {
                hashed_cfg!(&mut cfg, c => c.set_field(k, *v)?, _ => unreachable!());
            }
            cfg.validate()?;
            return Ok(cfg);
        }
        for (k, v) in params {
            cfg.set_param(k, *v)?;
        }
        Ok(cfg)
    }
}

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

/// The methods of a hashed flow-queueing qdisc off the per-packet path (dynamic dispatch
/// through [`Qdisc::hashed`]); `enqueue`/`dequeue`/lengths are `match`ed statically.
pub trait Hashed<P> {
    /// The flow queues.
    fn queues(&self) -> &FlowQueues<P>;
    /// The flow queues, mutably (peak reset).
    fn queues_mut(&mut self) -> &mut FlowQueues<P>;
    /// Counters over all flow queues.
    fn stats(&self) -> QueueStats;
    /// The link's hard limit it was built with.
    fn limit(&self) -> QueueLimit;
    /// The link.
    fn link(&self) -> LinkInfo;
    /// Drop/mark probability in [0, 1] (0 for qdiscs without one).
    fn probability(&self) -> f64 {
        0.0
    }
    /// Next time [`Hashed::on_timer`] must run.
    fn poll_at(&self) -> Option<Instant> {
        None
    }
    /// Runs the periodic work that is due.
    fn on_timer(&mut self, _now: Instant) {}
    /// Changes one parameter while running; on error nothing changes.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError>;
    /// The current configuration.
    fn qdisc_config(&self) -> QdiscConfig;
    /// Bytes of per-flow-queue AQM state (CoDel or PIE variables), besides the flow queues.
    fn flow_state_bytes(&self) -> usize {
        0
    }
}

/// `Hashed` for a flow-queueing type with inherent methods of the same names.
macro_rules! impl_hashed {
    ($t:ident, $variant:ident $(, $extra:item)*) => {
        impl<P: Packet> Hashed<P> for $t<P> {
            fn queues(&self) -> &FlowQueues<P> {
                $t::queues(self)
            }
            fn queues_mut(&mut self) -> &mut FlowQueues<P> {
                $t::queues_mut(self)
            }
            fn stats(&self) -> QueueStats {
                $t::stats(self)
            }
            fn limit(&self) -> QueueLimit {
                $t::limit(self)
            }
            fn link(&self) -> LinkInfo {
                $t::link(self)
            }
            fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
                $t::set_param(self, key, value)
            }
            fn qdisc_config(&self) -> QdiscConfig {
                QdiscConfig::$variant(self.config())
            }
            $($extra)*
        }
    };
}

impl_hashed!(
    FqCodel,
    FqCodel,
    fn flow_state_bytes(&self) -> usize {
        FqCodel::flow_state_bytes(self)
    }
);
impl_hashed!(
    SfqCodel,
    SfqCodel,
    fn flow_state_bytes(&self) -> usize {
        SfqCodel::flow_state_bytes(self)
    }
);
impl_hashed!(
    FqPie,
    FqPie,
    fn probability(&self) -> f64 {
        FqPie::probability(self)
    },
    fn poll_at(&self) -> Option<Instant> {
        FqPie::poll_at(self)
    },
    fn on_timer(&mut self, now: Instant) {
        FqPie::on_timer(self, now)
    },
    fn flow_state_bytes(&self) -> usize {
        FqPie::flow_state_bytes(self)
    }
);
impl_hashed!(
    Sqm,
    Sqm,
    fn probability(&self) -> f64 {
        Sqm::probability(self)
    },
    fn flow_state_bytes(&self) -> usize {
        Sqm::flow_state_bytes(self)
    }
);
impl_hashed!(
    Sfq,
    Sfq,
    fn poll_at(&self) -> Option<Instant> {
        Sfq::poll_at(self)
    },
    fn on_timer(&mut self, now: Instant) {
        Sfq::on_timer(self, now)
    }
);

/// A running queue discipline: a FIFO with an AQM (the fast path), a class-based scheduler or
/// a hashed flow-queueing qdisc.
///
/// The per-packet methods are `#[inline(always)]` thin `match`es and the schedulers' entry
/// points are never inlined, so that a caller's FIFO path compiles as a direct call (or
/// inlining) of [`QueueDisc`]'s, as before trees existed.
///
/// The FIFO variant is stored inline (no box, no extra indirection per packet) although it
/// is much larger than a scheduler's (whose classes and flow queues live in `Vec`s).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Qdisc<P> {
    /// FIFO + hard limit + one AQM.
    Fifo(QueueDisc<P>),
    /// Deficit Round Robin.
    Drr(Drr<P>),
    /// Weighted fair queueing (start-time fair queueing).
    Wfq(Wfq<P>),
    /// FQ-CoDel.
    FqCodel(FqCodel<P>),
    /// FQ-PIE.
    FqPie(FqPie<P>),
    /// Stochastic Fairness Queueing.
    Sfq(Sfq<P>),
    /// SFQ-CoDel (ns-2 sfqcodel).
    SfqCodel(SfqCodel<P>),
    /// SQM.
    Sqm(Sqm<P>),
    /// DualPI2 (L4S).
    DualPi2(DualPi2<P>),
}

impl<P: Packet> From<QueueDisc<P>> for Qdisc<P> {
    fn from(q: QueueDisc<P>) -> Self {
        Qdisc::Fifo(q)
    }
}

impl<P: Packet> Qdisc<P> {
    /// Builds `cfg` with hard limit `limit` (shared by a scheduler's classes and flow queues)
    /// on `link`.
    pub fn new(
        cfg: &QdiscConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        Ok(match cfg {
            QdiscConfig::Fifo(a) => Qdisc::Fifo(QueueDisc::new(a, limit, link, seed)?),
            QdiscConfig::Drr(d) => Qdisc::Drr(Drr::new(d, limit, link, seed)?),
            QdiscConfig::Wfq(w) => Qdisc::Wfq(Wfq::new(w, limit, link, seed)?),
            QdiscConfig::FqCodel(c) => Qdisc::FqCodel(FqCodel::new(c, limit, link, seed)?),
            QdiscConfig::FqPie(c) => Qdisc::FqPie(FqPie::new(c, limit, link, seed)?),
            QdiscConfig::Sfq(c) => Qdisc::Sfq(Sfq::new(c, limit, link, seed)?),
            QdiscConfig::SfqCodel(c) => Qdisc::SfqCodel(SfqCodel::new(c, limit, link, seed)?),
            QdiscConfig::Sqm(c) => Qdisc::Sqm(Sqm::new(c, limit, link, seed)?),
            QdiscConfig::DualPi2(d) => Qdisc::DualPi2(DualPi2::new(d, limit, link, seed)?),
        })
    }

    /// The classes of a scheduler built on the shared class model (drr, wfq).
    #[inline]
    pub fn class_set(&self) -> Option<&ClassSet<P>> {
        match self {
            Qdisc::Drr(d) => Some(d.classes()),
            Qdisc::Wfq(w) => Some(w.classes()),
            _ => None,
        }
    }

    /// The SQM qdisc, if this is one (its slots: [`Sqm::slot_flow`]).
    #[inline]
    pub fn sqm(&self) -> Option<&Sqm<P>> {
        match self {
            Qdisc::Sqm(q) => Some(q),
            _ => None,
        }
    }

    /// The hashed flow-queueing qdisc, if this is one.
    #[inline]
    pub fn hashed(&self) -> Option<&dyn Hashed<P>> {
        match self {
            Qdisc::FqCodel(q) => Some(q),
            Qdisc::FqPie(q) => Some(q),
            Qdisc::Sfq(q) => Some(q),
            Qdisc::SfqCodel(q) => Some(q),
            Qdisc::Sqm(q) => Some(q),
            _ => None,
        }
    }

    /// The hashed flow-queueing qdisc, mutably.
    #[inline]
    pub fn hashed_mut(&mut self) -> Option<&mut dyn Hashed<P>> {
        match self {
            Qdisc::FqCodel(q) => Some(q),
            Qdisc::FqPie(q) => Some(q),
            Qdisc::Sfq(q) => Some(q),
            Qdisc::SfqCodel(q) => Some(q),
            Qdisc::Sqm(q) => Some(q),
            _ => None,
        }
    }

    /// Offers a packet: `Queued`, `Marked` or `Dropped(pkt, reason)` for the arrival; other
    /// packets dropped to make room (victims) go to `on_drop`.
    #[inline(always)]
    pub fn enqueue(
        &mut self,
        now: Instant,
        pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        match self {
            Qdisc::Fifo(q) => q.enqueue(now, pkt),
            Qdisc::Drr(d) => d.enqueue(now, pkt, on_drop),
            Qdisc::Wfq(w) => w.enqueue(now, pkt, on_drop),
            Qdisc::FqCodel(q) => q.enqueue(now, pkt, on_drop),
            Qdisc::FqPie(q) => q.enqueue(now, pkt, on_drop),
            Qdisc::Sfq(q) => q.enqueue(now, pkt, on_drop),
            Qdisc::SfqCodel(q) => q.enqueue(now, pkt, on_drop),
            Qdisc::Sqm(q) => q.enqueue(now, pkt, on_drop),
            Qdisc::DualPi2(d) => d.enqueue(now, pkt, on_drop),
        }
    }

    /// [`QueueDisc::pass_through`] for a drop-tail FIFO; `Err(pkt)` for every other qdisc.
    #[inline(always)]
    pub fn pass_through(&mut self, now: Instant, pkt: P) -> Result<P, P> {
        match self {
            Qdisc::Fifo(q) => q.pass_through(now, pkt),
            _ => Err(pkt),
        }
    }

    /// Takes the next packet for the link; dequeue-side drops go to `on_drop`.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        match self {
            Qdisc::Fifo(q) => q.dequeue(now, on_drop),
            Qdisc::Drr(d) => d.dequeue(now, on_drop),
            Qdisc::Wfq(w) => w.dequeue(now, on_drop),
            Qdisc::FqCodel(q) => q.dequeue(now, on_drop),
            Qdisc::FqPie(q) => q.dequeue(now, on_drop),
            Qdisc::Sfq(q) => q.dequeue(now, on_drop),
            Qdisc::SfqCodel(q) => q.dequeue(now, on_drop),
            Qdisc::Sqm(q) => q.dequeue(now, on_drop),
            Qdisc::DualPi2(d) => d.dequeue(now, on_drop),
        }
    }

    /// Next time [`Qdisc::on_timer`] must be called (earliest over the tree).
    #[inline(always)]
    pub fn poll_at(&self) -> Option<Instant> {
        match self {
            Qdisc::Fifo(q) => q.poll_at(),
            Qdisc::Drr(d) => d.classes().poll_at(),
            Qdisc::Wfq(w) => w.classes().poll_at(),
            Qdisc::FqPie(q) => q.poll_at(),
            Qdisc::Sfq(q) => q.poll_at(),
            Qdisc::FqCodel(_) | Qdisc::SfqCodel(_) | Qdisc::Sqm(_) => None,
            Qdisc::DualPi2(d) => d.poll_at(),
        }
    }

    /// Runs the periodic laws that are due.
    pub fn on_timer(&mut self, now: Instant) {
        match self {
            Qdisc::Fifo(q) => q.on_timer(now),
            Qdisc::Drr(d) => d.on_timer(now),
            Qdisc::Wfq(w) => w.on_timer(now),
            Qdisc::DualPi2(d) => d.on_timer(now),
            _ => {
                if let Some(h) = self.hashed_mut() {
                    h.on_timer(now)
                }
            }
        }
    }

    /// Packets stored.
    #[inline(always)]
    pub fn len_pkts(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.len_pkts(),
            Qdisc::Drr(d) => d.classes().len_pkts(),
            Qdisc::Wfq(w) => w.classes().len_pkts(),
            Qdisc::FqCodel(q) => q.len_pkts(),
            Qdisc::FqPie(q) => q.len_pkts(),
            Qdisc::Sfq(q) => q.len_pkts(),
            Qdisc::SfqCodel(q) => q.len_pkts(),
            Qdisc::Sqm(q) => q.len_pkts(),
            Qdisc::DualPi2(d) => d.len_pkts(),
        }
    }

    /// Bytes stored.
    #[inline(always)]
    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.len_bytes(),
            Qdisc::Drr(d) => d.classes().len_bytes(),
            Qdisc::Wfq(w) => w.classes().len_bytes(),
            Qdisc::FqCodel(q) => q.len_bytes(),
            Qdisc::FqPie(q) => q.len_bytes(),
            Qdisc::Sfq(q) => q.len_bytes(),
            Qdisc::SfqCodel(q) => q.len_bytes(),
            Qdisc::Sqm(q) => q.len_bytes(),
            Qdisc::DualPi2(d) => d.len_bytes(),
        }
    }

    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_pkts() == 0
    }

    /// Counters (a scheduler's are the sums over its classes or flow queues).
    pub fn stats(&self) -> QueueStats {
        match self {
            Qdisc::Fifo(q) => *q.stats(),
            Qdisc::Drr(d) => d.classes().stats(),
            Qdisc::Wfq(w) => w.classes().stats(),
            Qdisc::DualPi2(d) => d.stats(),
            _ => self.hashed().map(|h| h.stats()).unwrap_or_default(),
        }
    }

    /// Number of classes (0 for a FIFO and for a hashed qdisc; DualPI2: 2, `l` and `c`; SQM:
    /// 2, `reserved` and `elephants` (all elephant queues together)).
    pub fn num_classes(&self) -> usize {
        match self {
            Qdisc::DualPi2(_) => crate::dualpi2::CLASS_NAMES.len(),
            Qdisc::Sqm(_) => crate::sqm::CLASS_NAMES.len(),
            _ => self.class_set().map_or(0, ClassSet::num_classes),
        }
    }

    /// Name of class `i`.
    pub fn class_name(&self, i: usize) -> Option<&str> {
        match self {
            Qdisc::DualPi2(_) => crate::dualpi2::CLASS_NAMES.get(i).copied(),
            Qdisc::Sqm(_) => crate::sqm::CLASS_NAMES.get(i).copied(),
            _ => self.class_set()?.class_name(i),
        }
    }

    /// Counters of class `i`.
    pub fn class_stats(&self, i: usize) -> Option<QueueStats> {
        match self {
            Qdisc::DualPi2(d) => d.class_stats(i),
            Qdisc::Sqm(q) => q.class_stats(i),
            _ => Some(*self.class_set()?.class_queue(i)?.stats()),
        }
    }

    /// Length of class `i`'s queue now: `(packets, bytes)`.
    pub fn class_len(&self, i: usize) -> Option<(usize, u64)> {
        match self {
            Qdisc::DualPi2(d) => d.class_len(i),
            Qdisc::Sqm(q) => q.class_len(i),
            _ => {
                let q = self.class_set()?.class_queue(i)?;
                Some((q.len_pkts(), q.len_bytes()))
            }
        }
    }

    /// The class the last dequeued packet came from (0 without classes).
    #[inline]
    pub fn last_class(&self) -> u8 {
        match self {
            Qdisc::DualPi2(d) => d.last_class(),
            Qdisc::Sqm(q) => q.last_class(),
            _ => self.class_set().map_or(0, ClassSet::last_class),
        }
    }

    /// Backlogged flow queues of a hashed qdisc; for SQM the elephant slots in use (`None` for
    /// other qdiscs).
    #[inline]
    pub fn active_flows(&self) -> Option<u32> {
        if let Qdisc::Sqm(q) = self {
            return Some(q.slots_in_use());
        }
        self.hashed().map(|h| h.queues().active())
    }

    /// A hashed qdisc's active-flow count, its integral up to `now` and its peak (`None` for
    /// other qdiscs).
    pub fn flow_count(&self, now: Instant) -> Option<FlowCount> {
        if let Qdisc::Sqm(q) = self {
            return Some(FlowCount {
                active: q.slots_in_use(),
                area: q.slot_area(now),
                peak: q.slot_peak(),
            });
        }
        self.hashed().map(|h| {
            let q = h.queues();
            FlowCount {
                active: q.active(),
                area: q.active_area(now),
                peak: q.peak(),
            }
        })
    }

    /// Restarts the peak of [`Qdisc::flow_count`] from the current count (end of warm-up).
    pub fn reset_flow_peak(&mut self) {
        if let Qdisc::Sqm(q) = self {
            q.reset_slot_peak();
            return;
        }
        if let Some(h) = self.hashed_mut() {
            h.queues_mut().reset_peak();
        }
    }

    /// Bytes of state the qdisc holds for packets and flows: a FIFO's storage, a DRR tree's
    /// class FIFOs, a hashed qdisc's packet pool, bucket records and per-flow AQM state. (Not
    /// counted: fixed-size fields.) For a hashed qdisc it is bounded by the buffer and `flows`
    /// (docs/aqm/fq_codel.md, "Memory").
    pub fn memory_bytes(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.memory_bytes(),
            Qdisc::Drr(d) => d.classes().memory_bytes(),
            Qdisc::Wfq(w) => w.classes().memory_bytes(),
            Qdisc::DualPi2(d) => d.memory_bytes(),
            _ => {
                let h = self.hashed().expect("hashed");
                h.queues().memory_bytes() + h.flow_state_bytes()
            }
        }
    }

    /// A hashed qdisc's pool size: the largest number of packets it ever held at once (plus
    /// the arrival linked before an overflow drop); `None` for other qdiscs.
    pub fn pool_slots(&self) -> Option<usize> {
        self.hashed().map(|h| h.queues().pool_slots())
    }

    /// The hard limit.
    pub fn limit(&self) -> QueueLimit {
        match self {
            Qdisc::Fifo(q) => q.limit(),
            Qdisc::Drr(d) => d.classes().limit(),
            Qdisc::Wfq(w) => w.classes().limit(),
            Qdisc::DualPi2(d) => d.limit(),
            _ => self.hashed().expect("hashed").limit(),
        }
    }

    /// The link.
    pub fn link(&self) -> LinkInfo {
        match self {
            Qdisc::Fifo(q) => q.link(),
            Qdisc::Drr(d) => d.classes().link(),
            Qdisc::Wfq(w) => w.classes().link(),
            Qdisc::DualPi2(d) => d.link(),
            _ => self.hashed().expect("hashed").link(),
        }
    }

    /// Drop/mark probability in [0, 1] (a scheduler: the largest of its classes' or flows').
    pub fn probability(&self) -> f64 {
        match self {
            Qdisc::Fifo(q) => q.probability(),
            Qdisc::Drr(d) => d.classes().probability(),
            Qdisc::Wfq(w) => w.classes().probability(),
            Qdisc::DualPi2(d) => d.probability(),
            _ => self.hashed().map_or(0.0, |h| h.probability()),
        }
    }

    /// Changes one parameter by path while running; on error nothing changes.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        match self {
            Qdisc::Fifo(q) => q.set_param(path, value),
            Qdisc::Drr(d) => d.set_param(path, value),
            Qdisc::Wfq(w) => w.set_param(path, value),
            Qdisc::DualPi2(d) => d.set_param(path, value),
            _ => self.hashed_mut().expect("hashed").set_param(path, value),
        }
    }

    /// Current value of one parameter by path.
    pub fn param(&self, path: &str) -> Option<f64> {
        if let Qdisc::Sqm(q) = self {
            return q.param(path);
        }
        self.config().get_param(path)
    }

    /// The current configuration tree.
    pub fn config(&self) -> QdiscConfig {
        match self {
            Qdisc::Fifo(q) => QdiscConfig::Fifo(q.config()),
            Qdisc::Drr(d) => QdiscConfig::Drr(d.config()),
            Qdisc::Wfq(w) => QdiscConfig::Wfq(w.config()),
            Qdisc::DualPi2(d) => QdiscConfig::DualPi2(d.config()),
            _ => self.hashed().expect("hashed").qdisc_config(),
        }
    }

    /// Name of the running AQM or scheduler.
    pub fn aqm_name(&self) -> &'static str {
        match self {
            Qdisc::Fifo(q) => q.aqm_name(),
            Qdisc::Drr(_) => "drr",
            Qdisc::Wfq(_) => "wfq",
            Qdisc::FqCodel(_) => FqCodelConfig::AQM,
            Qdisc::FqPie(_) => FqPieConfig::AQM,
            Qdisc::Sfq(_) => SfqConfig::AQM,
            Qdisc::SfqCodel(_) => SfqCodelConfig::AQM,
            Qdisc::Sqm(_) => SqmConfig::AQM,
            Qdisc::DualPi2(_) => "dualpi2",
        }
    }
}
