//! Queue-discipline trees: [`QdiscConfig`] (what to run) and [`Qdisc`] (the running state).
//!
//! A qdisc owns packets. The leaf is [`QueueDisc`] (FIFO + hard limit + one [`AqmConfig`]
//! algorithm), the fast path; a scheduler ([`crate::drr`]) holds classes, each a child
//! `QueueDisc`. Dispatch is static: `Qdisc` is an enum with one variant per kind and every
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

use crate::config::{AqmConfig, RawParam};
use crate::drr::{split_class_path, Drr, DrrConfig};
use crate::dualpi2::{DualPi2, DualPi2Config};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::queue::{DropReason, Enqueue, LinkInfo, QueueDisc, QueueLimit, QueueStats};
use crate::time::Instant;

/// Names of the schedulers (besides every AQM name, which runs as a single FIFO).
pub const SCHEDULERS: &[&str] = &["drr", "dualpi2"];

/// A queue-discipline tree: one FIFO with an AQM, or a scheduler with classes. `Clone`, not
/// `Copy` (class lists are vectors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Repr", try_from = "Repr")]
pub enum QdiscConfig {
    /// A single FIFO running this AQM.
    Fifo(AqmConfig),
    /// Deficit Round Robin over classes ([`crate::drr`]).
    Drr(DrrConfig),
    /// The L4S coupled dual queue ([`crate::dualpi2`]).
    DualPi2(DualPi2Config),
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum SchedRepr {
    Drr(DrrConfig),
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
            QdiscConfig::DualPi2(_) => "dualpi2",
        }
    }

    /// The single AQM, if this is a FIFO.
    pub fn as_aqm(&self) -> Option<&AqmConfig> {
        match self {
            QdiscConfig::Fifo(a) => Some(a),
            _ => None,
        }
    }

    /// Class names flows may choose with `class = "NAME"`, in order (empty for a FIFO, and
    /// for DualPI2, which classifies by the ECN codepoint: its classes `l` and `c` appear in
    /// results only).
    pub fn class_names(&self) -> Vec<&str> {
        match self {
            QdiscConfig::Fifo(_) | QdiscConfig::DualPi2(_) => Vec::new(),
            QdiscConfig::Drr(d) => d.classes.iter().map(|c| c.name.as_str()).collect(),
        }
    }

    /// The default config of `name` (an AQM, alias or scheduler; case-insensitive).
    pub fn default_for(name: &str) -> Result<QdiscConfig, ConfigError> {
        if name.trim().eq_ignore_ascii_case("drr") {
            return Ok(QdiscConfig::Drr(DrrConfig::default()));
        }
        if name.trim().eq_ignore_ascii_case("dualpi2") {
            return Ok(QdiscConfig::DualPi2(DualPi2Config::default()));
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
            QdiscConfig::Drr(_) => Ok(DrrConfig::describe()),
            QdiscConfig::DualPi2(_) => Ok(DualPi2Config::describe()),
        }
    }

    /// Checks the whole tree.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::Fifo(a) => a.validate(),
            QdiscConfig::Drr(d) => d.validate(),
            QdiscConfig::DualPi2(d) => d.validate(),
        }
    }

    /// Sets one parameter by path (boundary units) and re-validates; unchanged on error.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::Fifo(a) => a.set_param(path, value),
            QdiscConfig::DualPi2(d) => d.set_param(path, value),
            QdiscConfig::Drr(d) => {
                let mut next = d.clone();
                let (i, rest) = drr_path(&next, path)?;
                let c = &mut next.classes[i];
                if rest == "weight" {
                    c.weight = value;
                } else if let Some(k) = rest.strip_prefix("aqm.") {
                    let prefix = &path[..path.len() - k.len()];
                    c.aqm.set_param(k, value).map_err(|e| e.prefixed(prefix))?;
                } else {
                    return Err(unknown_drr(path));
                }
                next.validate()?;
                *d = next;
                Ok(())
            }
        }
    }

    /// Reads one parameter by path (boundary units).
    pub fn get_param(&self, path: &str) -> Option<f64> {
        match self {
            QdiscConfig::Fifo(a) => a.get_param(path),
            QdiscConfig::DualPi2(d) => d.get_param(path),
            QdiscConfig::Drr(d) => {
                let (i, rest) = drr_path(d, path).ok()?;
                let c = &d.classes[i];
                if rest == "weight" {
                    Some(c.weight)
                } else {
                    c.aqm.get_param(rest.strip_prefix("aqm.")?)
                }
            }
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
        let (cfg, leaf, prefix) = match self {
            QdiscConfig::Fifo(a) => (a, key, ""),
            QdiscConfig::DualPi2(_) => {
                let infos = DualPi2Config::describe();
                let Some(info) = infos.iter().find(|i| i.name == key) else {
                    return Err(ConfigError::UnknownParam {
                        aqm: "dualpi2".into(),
                        key: key.into(),
                        known: infos.iter().map(|i| i.name).collect::<Vec<_>>().join(", "),
                    });
                };
                return AqmConfig::param_value(info, raw, require_unit);
            }
            QdiscConfig::Drr(d) => {
                let (i, rest) = drr_path(d, key)?;
                match rest.strip_prefix("aqm.") {
                    Some(k) => (&d.classes[i].aqm, k, &key[..key.len() - k.len()]),
                    None if rest == "weight" => {
                        let info = ParamInfo {
                            name: "weight",
                            unit: "weight",
                            default: 1.0,
                            doc: "",
                        };
                        return AqmConfig::param_value(&info, raw, false)
                            .map_err(|e| e.prefixed(&key[..key.len() - rest.len()]));
                    }
                    None => return Err(unknown_drr(key)),
                }
            }
        };
        let infos = cfg.param_info();
        let Some(info) = infos.iter().find(|i| i.name == leaf) else {
            return Err(ConfigError::UnknownParam {
                aqm: cfg.name().into(),
                key: key.into(),
                known: infos.iter().map(|i| i.name).collect::<Vec<_>>().join(", "),
            });
        };
        AqmConfig::param_value(info, raw, require_unit).map_err(|e| e.prefixed(prefix))
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

fn unknown_drr(path: &str) -> ConfigError {
    ConfigError::UnknownParam {
        aqm: "drr".into(),
        key: path.to_string(),
        known: "classes.NAME.weight, classes.NAME.aqm.PARAM".into(),
    }
}

fn drr_path<'p>(d: &DrrConfig, path: &'p str) -> Result<(usize, &'p str), ConfigError> {
    let (name, rest) = split_class_path(path).ok_or_else(|| unknown_drr(path))?;
    let i = d
        .class_index(name)
        .ok_or_else(|| ConfigError::UnknownParam {
            aqm: "drr".into(),
            key: path.to_string(),
            known: format!(
                "classes: {}",
                d.classes
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })?;
    Ok((i, rest))
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
    /// DualPI2 (L4S).
    DualPi2(DualPi2<P>),
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
            QdiscConfig::DualPi2(d) => Qdisc::DualPi2(DualPi2::new(d, limit, link, seed)?),
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
            Qdisc::DualPi2(d) => d.enqueue(now, pkt, on_drop),
        }
    }

    /// Takes the next packet for the link; dequeue-side drops go to `on_drop`.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        match self {
            Qdisc::Fifo(q) => q.dequeue(now, on_drop),
            Qdisc::Drr(d) => d.dequeue(now, on_drop),
            Qdisc::DualPi2(d) => d.dequeue(now, on_drop),
        }
    }

    /// Next time [`Qdisc::on_timer`] must be called (earliest over the tree).
    #[inline(always)]
    pub fn poll_at(&self) -> Option<Instant> {
        match self {
            Qdisc::Fifo(q) => q.poll_at(),
            Qdisc::Drr(d) => d.poll_at(),
            Qdisc::DualPi2(d) => d.poll_at(),
        }
    }

    /// Runs the periodic laws that are due.
    pub fn on_timer(&mut self, now: Instant) {
        match self {
            Qdisc::Fifo(q) => q.on_timer(now),
            Qdisc::Drr(d) => d.on_timer(now),
            Qdisc::DualPi2(d) => d.on_timer(now),
        }
    }

    /// Packets stored.
    #[inline(always)]
    pub fn len_pkts(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.len_pkts(),
            Qdisc::Drr(d) => d.len_pkts(),
            Qdisc::DualPi2(d) => d.len_pkts(),
        }
    }

    /// Bytes stored.
    #[inline(always)]
    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.len_bytes(),
            Qdisc::Drr(d) => d.len_bytes(),
            Qdisc::DualPi2(d) => d.len_bytes(),
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
            Qdisc::Drr(d) => d.stats(),
            Qdisc::DualPi2(d) => d.stats(),
        }
    }

    /// Number of classes (0 for a FIFO).
    pub fn num_classes(&self) -> usize {
        match self {
            Qdisc::Fifo(_) => 0,
            Qdisc::Drr(d) => d.num_classes(),
            Qdisc::DualPi2(_) => crate::dualpi2::CLASS_NAMES.len(),
        }
    }

    /// Name of class `i`.
    pub fn class_name(&self, i: usize) -> Option<&str> {
        match self {
            Qdisc::Fifo(_) => None,
            Qdisc::Drr(d) => d.class_name(i),
            Qdisc::DualPi2(_) => crate::dualpi2::CLASS_NAMES.get(i).copied(),
        }
    }

    /// Counters of class `i`.
    pub fn class_stats(&self, i: usize) -> Option<QueueStats> {
        match self {
            Qdisc::Fifo(_) => None,
            Qdisc::Drr(d) => d.class_queue(i).map(|q| *q.stats()),
            Qdisc::DualPi2(d) => d.class_stats(i),
        }
    }

    /// The class the last dequeued packet came from (0 for a FIFO).
    #[inline]
    pub fn last_class(&self) -> u8 {
        match self {
            Qdisc::Fifo(_) => 0,
            Qdisc::Drr(d) => d.last_class(),
            Qdisc::DualPi2(d) => d.last_class(),
        }
    }

    /// The hard limit.
    pub fn limit(&self) -> QueueLimit {
        match self {
            Qdisc::Fifo(q) => q.limit(),
            Qdisc::Drr(d) => d.limit(),
            Qdisc::DualPi2(d) => d.limit(),
        }
    }

    /// The link.
    pub fn link(&self) -> LinkInfo {
        match self {
            Qdisc::Fifo(q) => q.link(),
            Qdisc::Drr(d) => d.link(),
            Qdisc::DualPi2(d) => d.link(),
        }
    }

    /// Drop/mark probability in [0, 1] (a scheduler: the largest of its classes').
    pub fn probability(&self) -> f64 {
        match self {
            Qdisc::Fifo(q) => q.probability(),
            Qdisc::Drr(d) => d.probability(),
            Qdisc::DualPi2(d) => d.probability(),
        }
    }

    /// Changes one parameter by path while running; on error nothing changes.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        match self {
            Qdisc::Fifo(q) => q.set_param(path, value),
            Qdisc::Drr(d) => d.set_param(path, value),
            Qdisc::DualPi2(d) => d.set_param(path, value),
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
            Qdisc::DualPi2(d) => QdiscConfig::DualPi2(d.config()),
        }
    }

    /// Name of the running AQM or scheduler.
    pub fn aqm_name(&self) -> &'static str {
        match self {
            Qdisc::Fifo(q) => q.aqm_name(),
            Qdisc::Drr(_) => "drr",
            Qdisc::DualPi2(_) => "dualpi2",
        }
    }
}
