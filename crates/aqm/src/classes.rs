//! Named classes, the model shared by the class-based schedulers ([`crate::drr`] and
//! [`crate::wfq`]): the class-list configuration ([`ClassList`]: name, weight and AQM of
//! each class), its validation and parameter paths (`classes.NAME.weight`,
//! `classes.NAME.aqm.PARAM`), and the running set of child queues ([`ClassSet`]: one FIFO with
//! its AQM per class, the shared buffer and its victim rule, timers, counters). A scheduler
//! adds only its own per-class state and its choice of the next class to serve.
//!
//! Classification: [`Packet::class`] is the class index (its position in
//! [`ClassList::classes`]); an index the scheduler does not have goes to the first class
//! ("unclassified traffic goes to the first class").
//!
//! Buffer: the link's hard limit is shared by all classes (each child has the same limit, so
//! one class may use the whole buffer when the others are idle). When an accepted arrival
//! makes the total exceed the limit, the head of the fattest class (most packets, or most
//! bytes for a byte limit; ties to the lower index) is dropped as a *victim* (reason
//! [`DropReason::ForcedLimit`], counted in that class's `dropped_victim`): Shreedhar and
//! Varghese's remedy against buffer stealing (DRR paper, Section 3), used by both schedulers.

use serde::{Deserialize, Serialize};

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::config::{AqmConfig, RawParam};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::queue::QueueDisc;
use crate::time::Instant;

/// Most classes a scheduler takes (the class index on a packet is a `u8`).
pub const MAX_CLASSES: usize = 255;

fn one() -> f64 {
    1.0
}
fn droptail() -> AqmConfig {
    AqmConfig::DropTail(Default::default())
}

/// One class of a [`ClassList`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    /// Class name (unique, non-empty, no `.`): flows choose it with `class = "NAME"`,
    /// results report it under `classes.NAME`, parameter paths address it.
    pub name: String,
    /// Weight (> 0, default 1): the class's share of the link relative to the others'.
    #[serde(default = "one")]
    pub weight: f64,
    /// The class's AQM (a FIFO with this algorithm; default drop-tail).
    #[serde(default = "droptail")]
    pub aqm: AqmConfig,
}

/// The configuration of a class-based scheduler: its class list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassList {
    /// The classes, in order (the first one also takes unclassified traffic).
    pub classes: Vec<ClassConfig>,
}

impl Default for ClassList {
    /// One class `default` of weight 1 with drop-tail (a FIFO).
    fn default() -> Self {
        ClassList {
            classes: vec![ClassConfig {
                name: "default".into(),
                weight: 1.0,
                aqm: droptail(),
            }],
        }
    }
}

/// The keys a scheduler's parameter paths take.
const PATHS: &str = "classes.NAME.weight, classes.NAME.aqm.PARAM";

fn unknown_path(sched: &str, path: &str, known: String) -> ConfigError {
    ConfigError::UnknownParam {
        aqm: sched.into(),
        key: path.to_string(),
        known,
    }
}

/// `classes: a, b` (for error messages).
fn known_classes<'a>(names: impl Iterator<Item = &'a str>) -> String {
    format!("classes: {}", names.collect::<Vec<_>>().join(", "))
}

/// Finds `classes.NAME.REST` among `names`: the class index and `REST`.
fn find_class<'p, 'a>(
    sched: &str,
    path: &'p str,
    names: impl Iterator<Item = &'a str> + Clone,
) -> Result<(usize, &'p str), ConfigError> {
    let (name, rest) =
        split_class_path(path).ok_or_else(|| unknown_path(sched, path, PATHS.into()))?;
    names
        .clone()
        .position(|n| n == name)
        .map(|i| (i, rest))
        .ok_or_else(|| unknown_path(sched, path, known_classes(names)))
}

impl ClassList {
    /// Parameter descriptions (for `aqmlab aqms`); `weight_doc` says what a weight means for
    /// the scheduler. `NAME` stands for a class name and `PARAM` for a parameter of the
    /// class's AQM.
    pub fn describe(weight_doc: &'static str) -> Vec<ParamInfo> {
        vec![
            ParamInfo {
                name: "classes",
                unit: "list",
                default: 1.0,
                doc:
                    "Class list [{name, weight, aqm}] (default: one class 'default'). Flows choose \
                      a class with class = \"NAME\"; unclassified traffic goes to the first class.",
            },
            ParamInfo {
                name: "classes.NAME.weight",
                unit: "weight",
                default: 1.0,
                doc: weight_doc,
            },
            ParamInfo {
                name: "classes.NAME.aqm.PARAM",
                unit: "aqm",
                default: 0.0,
                doc: "Parameter PARAM of class NAME's AQM (aqm = {type = \"codel\", ...}; \
                      default drop-tail).",
            },
        ]
    }

    /// Position of class `name`.
    pub fn class_index(&self, name: &str) -> Option<usize> {
        self.classes.iter().position(|c| c.name == name)
    }

    /// Class names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.classes.iter().map(|c| c.name.as_str()).collect()
    }

    /// Checks the class list and every class's AQM.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.classes.is_empty() || self.classes.len() > MAX_CLASSES {
            return Err(ConfigError::invalid(
                "classes",
                self.classes.len() as f64,
                format!("give 1 to {MAX_CLASSES} classes"),
            ));
        }
        for (i, c) in self.classes.iter().enumerate() {
            if c.name.is_empty() || c.name.contains('.') || c.name.trim() != c.name {
                return Err(ConfigError::InvalidText {
                    key: format!("classes[{i}].name"),
                    text: c.name.clone(),
                    reason: "must be a non-empty name without '.' or surrounding spaces".into(),
                });
            }
            if self.classes[..i].iter().any(|o| o.name == c.name) {
                return Err(ConfigError::InvalidText {
                    key: format!("classes[{i}].name"),
                    text: c.name.clone(),
                    reason: "duplicate class name".into(),
                });
            }
            check_weight(&format!("classes.{}.weight", c.name), c.weight)?;
            c.aqm
                .validate()
                .map_err(|e| e.prefixed(&format!("classes.{}.aqm.", c.name)))?;
        }
        Ok(())
    }

    fn path<'p>(&self, sched: &str, path: &'p str) -> Result<(usize, &'p str), ConfigError> {
        find_class(sched, path, self.classes.iter().map(|c| c.name.as_str()))
    }

    /// Sets `classes.NAME.weight` or `classes.NAME.aqm.PARAM` (boundary units) and
    /// re-validates; unchanged on error. `sched` names the scheduler in errors.
    pub fn set_param(&mut self, sched: &str, path: &str, value: f64) -> Result<(), ConfigError> {
        let mut next = self.clone();
        let (i, rest) = next.path(sched, path)?;
        let c = &mut next.classes[i];
        if rest == "weight" {
            c.weight = value;
        } else if let Some(k) = rest.strip_prefix("aqm.") {
            let prefix = &path[..path.len() - k.len()];
            c.aqm.set_param(k, value).map_err(|e| e.prefixed(prefix))?;
        } else {
            return Err(unknown_path(sched, path, PATHS.into()));
        }
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// Reads `classes.NAME.weight` or `classes.NAME.aqm.PARAM` (boundary units).
    pub fn get_param(&self, path: &str) -> Option<f64> {
        let (i, rest) = self.path("", path).ok()?;
        let c = &self.classes[i];
        if rest == "weight" {
            Some(c.weight)
        } else {
            c.aqm.get_param(rest.strip_prefix("aqm.")?)
        }
    }

    /// Converts a user-written value for path `key` to its boundary `f64` (the class AQM's
    /// parameter unit, or a plain number for a weight).
    pub fn raw_value(
        &self,
        sched: &str,
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        let (i, rest) = self.path(sched, key)?;
        let Some(leaf) = rest.strip_prefix("aqm.") else {
            if rest != "weight" {
                return Err(unknown_path(sched, key, PATHS.into()));
            }
            let info = ParamInfo {
                name: "weight",
                unit: "weight",
                default: 1.0,
                doc: "",
            };
            return AqmConfig::param_value(&info, raw, false)
                .map_err(|e| e.prefixed(&key[..key.len() - rest.len()]));
        };
        let prefix = &key[..key.len() - leaf.len()];
        self.classes[i]
            .aqm
            .raw_value(leaf, raw, require_unit)
            .map_err(|e| e.prefixed(prefix))
    }
}

/// The [`crate::qdisc::ops::QdiscSpec`] items every class-based scheduler shares (its config is a
/// [`ClassList`], its name is `Self::NAME` in path errors); expands inside the scheduler's
/// `impl QdiscSpec`, which adds `NAME`, `Config` and `describe`.
macro_rules! class_list_spec {
    () => {
        fn validate_config(c: &ClassList) -> Result<(), ConfigError> {
            c.validate()
        }
        fn set_config_param(c: &mut ClassList, path: &str, value: f64) -> Result<(), ConfigError> {
            c.set_param(Self::NAME, path, value)
        }
        fn get_config_param(c: &ClassList, path: &str) -> Option<f64> {
            c.get_param(path)
        }
        fn raw_config_value(
            c: &ClassList,
            key: &str,
            raw: $crate::config::RawParam<'_>,
            require_unit: bool,
        ) -> Result<f64, ConfigError> {
            c.raw_value(Self::NAME, key, raw, require_unit)
        }
    };
}
pub(crate) use class_list_spec;

/// The [`crate::qdisc::ops::QdiscOps`] items of a class-based scheduler that are its [`ClassSet`]'s
/// (the field `set`): timers, lengths, counters, classes, limit, link, memory, probability and
/// configuration; expands inside the scheduler's `impl QdiscOps`, which adds `new`,
/// `enqueue`, `dequeue` and `set_param`.
macro_rules! class_set_ops {
    () => {
        #[inline]
        fn poll_at(&self) -> Option<Instant> {
            self.set.poll_at()
        }
        fn on_timer(&mut self, now: Instant) {
            self.set.on_timer(now);
        }
        #[inline]
        fn len_pkts(&self) -> usize {
            self.set.len_pkts()
        }
        #[inline]
        fn len_bytes(&self) -> u64 {
            self.set.len_bytes()
        }
        fn stats(&self) -> QueueStats {
            self.set.stats()
        }
        fn limit(&self) -> QueueLimit {
            self.set.limit()
        }
        fn link(&self) -> LinkInfo {
            self.set.link()
        }
        fn set_link_rate(&mut self, rate: crate::time::BitsPerSec) {
            self.set.set_link_rate(rate)
        }
        fn memory_bytes(&self) -> usize {
            self.set.memory_bytes()
        }
        fn probability(&self) -> f64 {
            self.set.probability()
        }
        fn num_classes(&self) -> usize {
            self.set.num_classes()
        }
        fn class_name(&self, i: usize) -> Option<&str> {
            self.set.class_name(i)
        }
        fn class_stats(&self, i: usize) -> Option<QueueStats> {
            Some(self.set.class_queue(i)?.stats())
        }
        fn class_len(&self, i: usize) -> Option<(usize, u64)> {
            let q = self.set.class_queue(i)?;
            Some((q.len_pkts(), q.len_bytes()))
        }
        #[inline]
        fn last_class(&self) -> u8 {
            self.set.last_class()
        }
        fn config(&self) -> ClassList {
            self.set.config()
        }
    };
}
pub(crate) use class_set_ops;

/// Checks a class weight: finite, in (0, 1e6].
pub fn check_weight(key: &str, w: f64) -> Result<(), ConfigError> {
    if w.is_finite() && w > 0.0 && w <= 1e6 {
        Ok(())
    } else {
        Err(ConfigError::invalid(key, w, "must be a weight in (0, 1e6]"))
    }
}

/// A parameter path inside a class: `classes.NAME.REST`.
pub(crate) fn split_class_path(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("classes.")?;
    rest.split_once('.')
}

/// SplitMix64 finaliser (the seed of class `i`'s random stream).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Debug, Clone)]
struct Child<P> {
    q: QueueDisc<P>,
    name: String,
    weight: f64,
}

/// The running classes of a scheduler: one child [`QueueDisc`] per class, the shared buffer
/// and the totals. The scheduler keeps its own per-class state (deficits, tags) alongside
/// and decides which class to serve; everything else about classes is here.
#[derive(Debug, Clone)]
pub struct ClassSet<P> {
    classes: Vec<Child<P>>,
    limit: QueueLimit,
    link: LinkInfo,
    len_pkts: usize,
    len_bytes: u64,
    last_class: u8,
}

impl<P: Packet> ClassSet<P> {
    /// `cfg`'s classes; each child gets the hard limit `limit` (shared, see the module docs)
    /// and its own random stream derived from `seed`.
    pub fn new(
        cfg: &ClassList,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let mut classes = Vec::with_capacity(cfg.classes.len());
        for (i, c) in cfg.classes.iter().enumerate() {
            let s = mix(seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            classes.push(Child {
                q: QueueDisc::new(&c.aqm, limit, link, s)
                    .map_err(|e| e.prefixed(&format!("classes.{}.aqm.", c.name)))?,
                name: c.name.clone(),
                weight: c.weight,
            });
        }
        Ok(ClassSet {
            classes,
            limit,
            link,
            len_pkts: 0,
            len_bytes: 0,
            last_class: 0,
        })
    }

    /// The class of `p`: its index, or the first class for an index this set lacks.
    #[inline]
    pub fn classify(&self, p: &P) -> usize {
        let c = p.class() as usize;
        if c < self.classes.len() {
            c
        } else {
            0
        }
    }

    /// Offers `pkt` to class `i`'s queue (its AQM decides) and counts it if accepted.
    #[inline]
    pub fn offer(&mut self, now: Instant, i: usize, pkt: P) -> Enqueue<P> {
        let size = pkt.size_bytes() as u64;
        let r = self.classes[i].q.enqueue(now, pkt);
        if !matches!(r, Enqueue::Dropped(..)) {
            self.len_pkts += 1;
            self.len_bytes += size;
        }
        r
    }

    #[inline]
    fn over_limit(&self) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.len_pkts as u64 > n as u64,
            QueueLimit::Bytes(b) => self.len_bytes > b,
        }
    }

    fn fattest(&self) -> usize {
        let mut best = 0;
        let mut most = 0u64;
        for (i, c) in self.classes.iter().enumerate() {
            let v = match self.limit {
                QueueLimit::Packets(_) => c.q.len_pkts() as u64,
                QueueLimit::Bytes(_) => c.q.len_bytes(),
            };
            if v > most {
                most = v;
                best = i;
            }
        }
        best
    }

    /// While the shared buffer is over its limit, drops the head of the fattest class (a
    /// victim, to `on_drop`).
    #[inline]
    pub fn drop_victims(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) {
        while self.over_limit() {
            let v = self.fattest();
            match self.classes[v].q.drop_head(now) {
                Some(p) => {
                    self.len_pkts -= 1;
                    self.len_bytes -= p.size_bytes() as u64;
                    on_drop(p, DropReason::ForcedLimit);
                }
                None => break,
            }
        }
    }

    /// Size of the head packet of class `i` (None if the class is empty).
    #[inline]
    pub fn head_size(&self, i: usize) -> Option<u32> {
        self.classes[i].q.peek().map(|p| p.size_bytes())
    }

    /// True if class `i` holds no packet.
    #[inline]
    pub fn class_is_empty(&self, i: usize) -> bool {
        self.classes[i].q.is_empty()
    }

    /// Dequeues from class `i` (its AQM may drop heads first, to `on_drop`); records `i` as
    /// the last class served when a packet comes out.
    #[inline]
    pub fn take(
        &mut self,
        now: Instant,
        i: usize,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Option<P> {
        let q = &mut self.classes[i].q;
        let (p0, b0) = (q.len_pkts(), q.len_bytes());
        let got = q.dequeue(now, on_drop);
        self.len_pkts -= p0 - q.len_pkts();
        self.len_bytes -= b0 - q.len_bytes();
        if got.is_some() {
            self.last_class = i as u8;
        }
        got
    }

    /// Earliest timer of any class's AQM.
    pub fn poll_at(&self) -> Option<Instant> {
        self.classes.iter().filter_map(|c| c.q.poll_at()).min()
    }

    /// Runs every class AQM's periodic law that is due.
    pub fn on_timer(&mut self, now: Instant) {
        for c in &mut self.classes {
            if c.q.poll_at().is_some_and(|t| t <= now) {
                c.q.on_timer(now);
            }
        }
    }

    /// Packets stored over all classes.
    #[inline]
    pub fn len_pkts(&self) -> usize {
        self.len_pkts
    }
    /// Bytes stored over all classes.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }
    /// The class of the packet last returned by [`ClassSet::take`].
    #[inline]
    pub fn last_class(&self) -> u8 {
        self.last_class
    }
    /// Totals: the sums of the classes' counters.
    pub fn stats(&self) -> QueueStats {
        let mut s = QueueStats::default();
        for c in &self.classes {
            s.add(&c.q.stats());
        }
        s
    }
    /// Number of classes.
    pub fn num_classes(&self) -> usize {
        self.classes.len()
    }
    /// Name of class `i`.
    pub fn class_name(&self, i: usize) -> Option<&str> {
        self.classes.get(i).map(|c| c.name.as_str())
    }
    /// Weight of class `i`.
    pub fn weight(&self, i: usize) -> Option<f64> {
        self.classes.get(i).map(|c| c.weight)
    }
    /// Class `i`'s queue (its counters, length, AQM).
    pub fn class_queue(&self, i: usize) -> Option<&QueueDisc<P>> {
        self.classes.get(i).map(|c| &c.q)
    }
    /// Bytes of packet storage held by the classes' FIFOs.
    pub fn memory_bytes(&self) -> usize {
        self.classes.iter().map(|c| c.q.memory_bytes()).sum()
    }
    /// The largest drop/mark probability of the classes' AQMs.
    pub fn probability(&self) -> f64 {
        self.classes
            .iter()
            .map(|c| c.q.probability())
            .fold(0.0, f64::max)
    }
    /// The hard limit.
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
    /// The link.
    pub fn link(&self) -> LinkInfo {
        self.link
    }
    /// The link's rate changed: every class's queue is told ([`QueueDisc::set_link_rate`]).
    pub fn set_link_rate(&mut self, rate: crate::time::BitsPerSec) {
        if rate.0 == 0 {
            return;
        }
        self.link.rate = rate;
        for c in &mut self.classes {
            c.q.set_link_rate(rate);
        }
    }
    /// The current class list (class AQMs as running).
    pub fn config(&self) -> ClassList {
        ClassList {
            classes: self
                .classes
                .iter()
                .map(|c| ClassConfig {
                    name: c.name.clone(),
                    weight: c.weight,
                    aqm: c.q.config(),
                })
                .collect(),
        }
    }

    /// Changes `classes.NAME.weight` or `classes.NAME.aqm.PARAM` while running (the AQM
    /// states are kept); on error nothing changes. Returns `Some(i)` when the weight of class
    /// `i` changed (the scheduler then updates what it derives from weights).
    pub fn set_param(
        &mut self,
        sched: &str,
        path: &str,
        value: f64,
    ) -> Result<Option<usize>, ConfigError> {
        let (i, rest) = find_class(sched, path, self.classes.iter().map(|c| c.name.as_str()))?;
        let c = &mut self.classes[i];
        if rest == "weight" {
            check_weight(path, value)?;
            c.weight = value;
            Ok(Some(i))
        } else if let Some(k) = rest.strip_prefix("aqm.") {
            let prefix = &path[..path.len() - k.len()];
            c.q.set_param(k, value).map_err(|e| e.prefixed(prefix))?;
            Ok(None)
        } else {
            Err(unknown_path(sched, path, PATHS.into()))
        }
    }
}
