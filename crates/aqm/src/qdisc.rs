//! Queue-discipline trees: [`QdiscConfig`] (what to run) and [`Qdisc`] (the running state).
//!
//! A qdisc owns packets. The leaf is [`QueueDisc`] (FIFO + hard limit + one [`AqmConfig`]
//! algorithm), the fast path; a scheduler ([`crate::drr`], [`crate::wfq`]) holds classes, each
//! a child `QueueDisc` ([`crate::classes`]: the class model both share). Dispatch is static: `Qdisc` is an enum with one variant per kind and every
//! call is one `match` (the FIFO arm is the code that ran before schedulers existed).
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
//! `classes.NAME.aqm.PARAM`. Serde form: a leaf is the AQM's tagged object
//! (`{"type": "codel", ...}`, unchanged); a scheduler is tagged by its own name
//! (`{"type": "drr", "classes": [{"name": "a", "weight": 1, "aqm": {"type": "codel"}}]}`).

use serde::{Deserialize, Serialize};

use crate::classes::{ClassList, ClassSet};
use crate::config::{AqmConfig, RawParam};
use crate::drr::{Drr, DrrConfig};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::queue::{DropReason, Enqueue, LinkInfo, QueueDisc, QueueLimit, QueueStats};
use crate::time::Instant;
use crate::wfq::{Wfq, WfqConfig};

/// Names of the schedulers (besides every AQM name, which runs as a single FIFO).
pub const SCHEDULERS: &[&str] = &["drr", "wfq"];

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
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum SchedRepr {
    Drr(DrrConfig),
    Wfq(WfqConfig),
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
        }
    }

    /// The class list of a class-based scheduler (drr, wfq).
    pub fn class_list(&self) -> Option<&ClassList> {
        match self {
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => Some(c),
            QdiscConfig::Fifo(_) => None,
        }
    }

    /// The class list of a class-based scheduler, to change it.
    pub fn class_list_mut(&mut self) -> Option<&mut ClassList> {
        match self {
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => Some(c),
            QdiscConfig::Fifo(_) => None,
        }
    }

    /// The class-based scheduler `name` (drr, wfq; case-insensitive) over `classes`.
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

    /// The single AQM, if this is a FIFO.
    pub fn as_aqm(&self) -> Option<&AqmConfig> {
        match self {
            QdiscConfig::Fifo(a) => Some(a),
            _ => None,
        }
    }

    /// Class names of a scheduler, in order (empty for a FIFO).
    pub fn class_names(&self) -> Vec<&str> {
        self.class_list().map_or_else(Vec::new, ClassList::names)
    }

    /// The default config of `name` (an AQM, alias or scheduler; case-insensitive).
    pub fn default_for(name: &str) -> Result<QdiscConfig, ConfigError> {
        if let Some(s) = Self::with_classes(name, ClassList::default()) {
            return Ok(s);
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
        match Self::default_for(name)? {
            QdiscConfig::Fifo(a) => Ok(a.param_info()),
            QdiscConfig::Drr(_) => Ok(crate::drr::describe()),
            QdiscConfig::Wfq(_) => Ok(crate::wfq::describe()),
        }
    }

    /// Checks the whole tree.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::Fifo(a) => a.validate(),
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => c.validate(),
        }
    }

    /// Sets one parameter by path (boundary units) and re-validates; unchanged on error.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::Fifo(a) => a.set_param(path, value),
            QdiscConfig::Drr(_) | QdiscConfig::Wfq(_) => {
                let name = self.name();
                self.class_list_mut()
                    .expect("a scheduler has classes")
                    .set_param(name, path, value)
            }
        }
    }

    /// Reads one parameter by path (boundary units).
    pub fn get_param(&self, path: &str) -> Option<f64> {
        match self {
            QdiscConfig::Fifo(a) => a.get_param(path),
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => c.get_param(path),
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
        match self {
            QdiscConfig::Fifo(a) => a.raw_value(key, raw, require_unit),
            QdiscConfig::Drr(c) | QdiscConfig::Wfq(c) => {
                c.raw_value(self.name(), key, raw, require_unit)
            }
        }
    }

    /// Builds from a name and `(path, value)` pairs in boundary units.
    pub fn from_name(name: &str, params: &[(String, f64)]) -> Result<QdiscConfig, ConfigError> {
        if let QdiscConfig::Fifo(_) = Self::default_for(name)? {
            return AqmConfig::from_name(name, params).map(QdiscConfig::Fifo);
        }
        let mut cfg = Self::default_for(name)?;
        for (k, v) in params {
            cfg.set_param(k, *v)?;
        }
        Ok(cfg)
    }
}

/// A running queue discipline: a FIFO with an AQM (the fast path) or a scheduler.
///
/// The per-packet methods are `#[inline(always)]` thin `match`es and the schedulers' entry
/// points are never inlined, so that a caller's FIFO path compiles as a direct call (or
/// inlining) of [`QueueDisc`]'s, as before trees existed.
///
/// The FIFO variant is stored inline (no box, no extra indirection per packet) although it
/// is much larger than a scheduler's (whose classes live in a `Vec`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Qdisc<P> {
    /// FIFO + hard limit + one AQM.
    Fifo(QueueDisc<P>),
    /// Deficit Round Robin.
    Drr(Drr<P>),
    /// Weighted fair queueing (start-time fair queueing).
    Wfq(Wfq<P>),
}

impl<P: Packet> From<QueueDisc<P>> for Qdisc<P> {
    fn from(q: QueueDisc<P>) -> Self {
        Qdisc::Fifo(q)
    }
}

impl<P: Packet> Qdisc<P> {
    /// Builds `cfg` with hard limit `limit` (shared by a scheduler's classes) on `link`.
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
        })
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
        }
    }

    /// Takes the next packet for the link; dequeue-side drops go to `on_drop`.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        match self {
            Qdisc::Fifo(q) => q.dequeue(now, on_drop),
            Qdisc::Drr(d) => d.dequeue(now, on_drop),
            Qdisc::Wfq(w) => w.dequeue(now, on_drop),
        }
    }

    /// The classes of a scheduler built on the shared class model (drr, wfq); None for a
    /// FIFO. (Every match in this impl names each variant, so that a new variant must say
    /// what each method means for it.)
    #[inline]
    pub fn class_set(&self) -> Option<&ClassSet<P>> {
        match self {
            Qdisc::Fifo(_) => None,
            Qdisc::Drr(d) => Some(d.classes()),
            Qdisc::Wfq(w) => Some(w.classes()),
        }
    }

    /// Next time [`Qdisc::on_timer`] must be called (earliest over the tree).
    #[inline(always)]
    pub fn poll_at(&self) -> Option<Instant> {
        match self {
            Qdisc::Fifo(q) => q.poll_at(),
            Qdisc::Drr(d) => d.classes().poll_at(),
            Qdisc::Wfq(w) => w.classes().poll_at(),
        }
    }

    /// Runs the periodic laws that are due.
    pub fn on_timer(&mut self, now: Instant) {
        match self {
            Qdisc::Fifo(q) => q.on_timer(now),
            Qdisc::Drr(d) => d.on_timer(now),
            Qdisc::Wfq(w) => w.on_timer(now),
        }
    }

    /// Packets stored.
    #[inline(always)]
    pub fn len_pkts(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.len_pkts(),
            Qdisc::Drr(d) => d.classes().len_pkts(),
            Qdisc::Wfq(w) => w.classes().len_pkts(),
        }
    }

    /// Bytes stored.
    #[inline(always)]
    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.len_bytes(),
            Qdisc::Drr(d) => d.classes().len_bytes(),
            Qdisc::Wfq(w) => w.classes().len_bytes(),
        }
    }

    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_pkts() == 0
    }

    /// Counters (a scheduler's are the sums over its classes).
    pub fn stats(&self) -> QueueStats {
        match self {
            Qdisc::Fifo(q) => *q.stats(),
            Qdisc::Drr(d) => d.classes().stats(),
            Qdisc::Wfq(w) => w.classes().stats(),
        }
    }

    /// Number of classes (0 for a FIFO).
    pub fn num_classes(&self) -> usize {
        match self {
            Qdisc::Fifo(_) => 0,
            Qdisc::Drr(_) | Qdisc::Wfq(_) => self.class_set().map_or(0, ClassSet::num_classes),
        }
    }

    /// Name of class `i`.
    pub fn class_name(&self, i: usize) -> Option<&str> {
        match self {
            Qdisc::Fifo(_) => None,
            Qdisc::Drr(_) | Qdisc::Wfq(_) => self.class_set()?.class_name(i),
        }
    }

    /// Counters of class `i`.
    pub fn class_stats(&self, i: usize) -> Option<QueueStats> {
        match self {
            Qdisc::Fifo(_) => None,
            Qdisc::Drr(_) | Qdisc::Wfq(_) => Some(*self.class_set()?.class_queue(i)?.stats()),
        }
    }

    /// Length of class `i`'s queue now: `(packets, bytes)`.
    pub fn class_len(&self, i: usize) -> Option<(usize, u64)> {
        match self {
            Qdisc::Fifo(_) => None,
            Qdisc::Drr(_) | Qdisc::Wfq(_) => {
                let q = self.class_set()?.class_queue(i)?;
                Some((q.len_pkts(), q.len_bytes()))
            }
        }
    }

    /// The class the last dequeued packet came from (0 for a FIFO).
    #[inline]
    pub fn last_class(&self) -> u8 {
        match self {
            Qdisc::Fifo(_) => 0,
            Qdisc::Drr(d) => d.classes().last_class(),
            Qdisc::Wfq(w) => w.classes().last_class(),
        }
    }

    /// The hard limit.
    pub fn limit(&self) -> QueueLimit {
        match self {
            Qdisc::Fifo(q) => q.limit(),
            Qdisc::Drr(d) => d.classes().limit(),
            Qdisc::Wfq(w) => w.classes().limit(),
        }
    }

    /// The link.
    pub fn link(&self) -> LinkInfo {
        match self {
            Qdisc::Fifo(q) => q.link(),
            Qdisc::Drr(d) => d.classes().link(),
            Qdisc::Wfq(w) => w.classes().link(),
        }
    }

    /// Drop/mark probability in [0, 1] (a scheduler: the largest of its classes').
    pub fn probability(&self) -> f64 {
        match self {
            Qdisc::Fifo(q) => q.probability(),
            Qdisc::Drr(d) => d.classes().probability(),
            Qdisc::Wfq(w) => w.classes().probability(),
        }
    }

    /// Changes one parameter by path while running; on error nothing changes.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        match self {
            Qdisc::Fifo(q) => q.set_param(path, value),
            Qdisc::Drr(d) => d.set_param(path, value),
            Qdisc::Wfq(w) => w.set_param(path, value),
        }
    }

    /// Current value of one parameter by path.
    pub fn param(&self, path: &str) -> Option<f64> {
        self.config().get_param(path)
    }

    /// The current configuration tree.
    pub fn config(&self) -> QdiscConfig {
        match self {
            Qdisc::Fifo(q) => QdiscConfig::Fifo(q.config()),
            Qdisc::Drr(d) => QdiscConfig::Drr(d.config()),
            Qdisc::Wfq(w) => QdiscConfig::Wfq(w.config()),
        }
    }

    /// Name of the running AQM or scheduler.
    pub fn aqm_name(&self) -> &'static str {
        match self {
            Qdisc::Fifo(q) => q.aqm_name(),
            Qdisc::Drr(_) => "drr",
            Qdisc::Wfq(_) => "wfq",
        }
    }
}
