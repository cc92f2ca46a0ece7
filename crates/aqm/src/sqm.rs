//! SQM, self-tuning queue management (Ye, Cai, Lin, Li, He, Lui 2022: architecture §II-A,
//! per-queue law eq. 4): the packet-level queue discipline; docs/aqm/sqm.md. The period-level
//! tuning (Algorithms 1 and 2) is Python's (`aqmlab.online`), which writes the per-queue
//! parameters below by path.
//!
//! * **Queues.** `queues` (K, default 40, the paper's) elephant queues plus one reserved queue.
//!   Storage is the hashed qdiscs' packet pool ([`FlowQueues`]) with K + 1 buckets: bucket 0
//!   is the reserved queue, bucket `i + 1` is elephant slot `i`. The bucket is chosen by the
//!   classifier below, not by a hash.
//! * **Classifier.** Every arrival updates a Space-Saving sketch ([`SpaceSaving`], Metwally,
//!   Agrawal, El Abbadi, "Efficient computation of frequent and top-k elements in data
//!   streams", ICDT 2005) of `counters` (m) byte counters, restarted every `window`. A flow
//!   without a slot is promoted to a free slot when its guaranteed count (count − error, a
//!   lower bound of its bytes in the window) reaches `min_share` of what the link sends in a
//!   window (default 1 % of C: SQM §II-A leaves the elephant test to "existing algorithms";
//!   the threshold is ours). Slots are not taken from other elephants: when all K are used,
//!   the flow waits in the reserved queue until one frees. A
//!   slot frees when its flow sent nothing for `idle` and its queue is empty (checked when a
//!   flow asks for a slot and at each window restart). Packets a flow queued in the reserved
//!   queue before its promotion stay there, so the first packets of the elephant queue may
//!   overtake them (reordering once per promotion, at most the reserved queue's backlog).
//! * **Per-packet law** on an elephant queue, at arrival, SQM eq. 4:
//!   `p = min(1, [(q − β)/σ]+)` with `q` the queue's **instantaneous** length in packets (the
//!   arrival not counted; eq. 4 is a fluid law and does not say which). Marks (ECN-capable
//!   packets, `ecn` on) or drops. `β` defaults to the `target` delay at the queue's share:
//!   `β_i = target · C · w_i / W`,
//!   C in MTU-sized packets/s and W the weights of the slots in use plus the reserved queue's
//!   (Algorithm 2 never sets β; SQM §V-B gives every AQM a 5 ms target); `σ` defaults to
//!   `sigma` (packets).
//! * **Reserved queue.** CoDel (RFC 8289, [`CodelVars`] with `target`, `interval`), DRR weight
//!   such that it gets `reserved_share` of the link while backlogged.
//! * **Scheduling.** Deficit round robin over the backlogged queues (the bucket lists of
//!   [`FlowQueues`], one packet per `dequeue` as [`crate::drr`]), quantum
//!   [`crate::drr::quantum`]`(weight, MTU)`.
//! * **Buffer.** Shared hard limit (the link's, or `limit` packets); an accepted arrival over
//!   it drops the head of the fattest queue (the class model's victim rule, [`crate::classes`]).
//!
//! Parameter paths while running: the flat names above, and per queue `queues.N.weight`,
//! `queues.N.sigma`, `queues.N.beta` (slot N in 0..K; `beta` < 0 = automatic) or the same
//! by flow, `flows.HASH.weight` (HASH = the flow hash in decimal, the flow must hold a slot;
//! [`Sqm::slot_flow`] lists who holds what). A slot given to a new flow restarts from the
//! defaults (weight 1, `sigma`, automatic β).

use std::collections::HashMap;

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::classes::check_weight;
use crate::codel::{CodelParams, CodelRules, CodelVars, ControlLaw};
use crate::config::{AqmConfig, RawParam};
use crate::error::{ensure, ConfigError};
use crate::flowq::{hash_key, FlowQueues, Limits, List};
use crate::fq_codel::FlowQueue;
use crate::packet::Packet;
use crate::params::{aqm_config, ParamInfo, Params};
use crate::qdisc::ops::{FlowCount, QdiscOps, QdiscSpec};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// The classes SQM reports ([`crate::Qdisc::class_stats`]): the reserved queue and the
/// elephant queues together (per-queue figures are not reported: K is up to 1024).
pub const CLASS_NAMES: [&str; 2] = ["reserved", "elephants"];

/// Most elephant queues.
pub const MAX_QUEUES: u32 = 1024;

aqm_config! {
    /// SQM configuration (flat parameters; per-queue ones by path, module docs).
    pub struct SqmConfig as "sqm" {
        /// Elephant queues K (1..=1024). Default 40 (the paper's K). Fixed once built.
        pub queues: u32 = 40, "queues";
        /// Space-Saving counters m (>= queues, <= 65536). Default 160 (4 K). Fixed once built.
        pub counters: u32 = 160, "counters";
        /// Sketch window: counts restart every window, seconds. Default 1.
        pub window: Duration = Duration(1_000_000_000), "s";
        /// Promotion threshold: guaranteed bytes in a window / (C x window), in (0, 1].
        /// Default 0.01 (ours: elephants are flows above 1 % of C; SQM §II-A leaves the
        /// classifier open).
        pub min_share: f64 = 0.01, "fraction";
        /// A slot frees when its flow sent nothing for this long and its queue is empty,
        /// seconds. Default 1.
        pub idle: Duration = Duration(1_000_000_000), "s";
        /// Delay target: automatic beta of each elephant queue and the reserved queue's CoDel
        /// target, seconds. Default 0.005 (the paper's 5 ms).
        pub target: Duration = crate::codel::TARGET, "s";
        /// Default slope sigma of each elephant queue's law, packets (> 0). Default 50.
        pub sigma: f64 = 50.0, "packets";
        /// The reserved queue's share of the link while backlogged, in (0, 1). Default 0.1.
        pub reserved_share: f64 = 0.1, "fraction";
        /// The reserved queue's CoDel interval, seconds. Default 0.1.
        pub interval: Duration = crate::codel::INTERVAL, "s";
        /// Packet limit over all queues. 0 = the link's buffer (default).
        pub limit: u32 = 0, "packets";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
        /// Arithmetic of the reserved queue's CoDel control law interval/sqrt(count): "linux" (default;
        /// Linux's 16-bit reciprocal square root, one Newton step per count) or "rfc"
        /// (RFC 8289's exact square root). See docs/aqm/codel.md.
        pub control_law: ControlLaw = ControlLaw::Linux, "linux|rfc";
    }
}

impl SqmConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            (1..=MAX_QUEUES).contains(&self.queues),
            "queues",
            self.queues as f64,
            "must be in 1..=1024",
        )?;
        ensure(
            self.counters >= self.queues && self.counters <= 1 << 16,
            "counters",
            self.counters as f64,
            "must be >= queues and <= 65536",
        )?;
        for (k, d) in [
            ("window", self.window),
            ("idle", self.idle),
            ("target", self.target),
            ("interval", self.interval),
        ] {
            ensure(d > Duration::ZERO, k, d.as_secs_f64(), "must be > 0")?;
        }
        ensure(
            self.min_share > 0.0 && self.min_share <= 1.0,
            "min_share",
            self.min_share,
            "must be in (0, 1]",
        )?;
        ensure(self.sigma > 0.0, "sigma", self.sigma, "must be > 0 packets")?;
        ensure(
            self.reserved_share > 0.0 && self.reserved_share < 1.0,
            "reserved_share",
            self.reserved_share,
            "must be in (0, 1)",
        )
    }

    /// Parameter descriptions: the flat ones and the per-queue path patterns.
    pub fn describe_all() -> Vec<ParamInfo> {
        let mut v = <SqmConfig as Params>::describe();
        v.push(ParamInfo {
            name: "queues.N.weight",
            unit: "weight",
            default: 1.0,
            doc: "DRR weight of elephant slot N (quantum = weight x MTU); or flows.HASH.weight \
                  for the slot of flow HASH. Reset to 1 when the slot gets a new flow.",
        });
        v.push(ParamInfo {
            name: "queues.N.sigma",
            unit: "packets",
            default: 50.0,
            doc: "Slope sigma of slot N's law p = min(1, [(q - beta)/sigma]+) (or flows.HASH.sigma).",
        });
        v.push(ParamInfo {
            name: "queues.N.beta",
            unit: "packets",
            default: -1.0,
            doc: "Offset beta of slot N's law, packets; < 0 = automatic (target x C x share) \
                  (or flows.HASH.beta).",
        });
        v
    }
}

/// The Space-Saving sketch (Metwally et al. 2005) over `u64` keys with `m` counters: a
/// monitored key's counter grows by the weight; an unmonitored key replaces the key of the
/// smallest counter, inheriting its count as its error. Guarantees: a key's count
/// overestimates its true weight by at most its error, and the error is at most N/m (N: the
/// total weight counted); every key with true weight above N/m is monitored. The smallest
/// counter is found by a scan (O(m)), lookups by a hash map reserved for m keys (no
/// allocation per update).
#[derive(Debug, Clone)]
pub struct SpaceSaving {
    keys: Vec<u64>,
    counts: Vec<u64>,
    errs: Vec<u64>,
    index: HashMap<u64, u32>,
    total: u64,
    m: usize,
}

impl SpaceSaving {
    /// An empty sketch of `m` (> 0) counters.
    pub fn new(m: usize) -> SpaceSaving {
        SpaceSaving {
            keys: Vec::with_capacity(m),
            counts: Vec::with_capacity(m),
            errs: Vec::with_capacity(m),
            index: HashMap::with_capacity(2 * m),
            total: 0,
            m: m.max(1),
        }
    }

    /// Counts `w` for `key`; returns `(count, error)` of the key after the update.
    #[inline]
    pub fn add(&mut self, key: u64, w: u64) -> (u64, u64) {
        self.total += w;
        let i = match self.index.get(&key) {
            Some(&i) => i as usize,
            None if self.keys.len() < self.m => {
                self.keys.push(key);
                self.counts.push(0);
                self.errs.push(0);
                let i = self.keys.len() - 1;
                self.index.insert(key, i as u32);
                i
            }
            None => {
                let mut i = 0;
                for (j, &c) in self.counts.iter().enumerate() {
                    if c < self.counts[i] {
                        i = j;
                    }
                }
                self.index.remove(&self.keys[i]);
                self.index.insert(key, i as u32);
                self.keys[i] = key;
                self.errs[i] = self.counts[i];
                i
            }
        };
        self.counts[i] += w;
        (self.counts[i], self.errs[i])
    }

    /// `(count, error)` of `key`, or `None` if it is not monitored.
    pub fn get(&self, key: u64) -> Option<(u64, u64)> {
        self.index
            .get(&key)
            .map(|&i| (self.counts[i as usize], self.errs[i as usize]))
    }

    /// Total weight counted since the last restart.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Forgets every key (no allocation).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.counts.clear();
        self.errs.clear();
        self.index.clear();
        self.total = 0;
    }
}

/// SQM's law, SQM eq. 4 (clamped to 1): `min(1, [(q − β)/σ]+)`.
#[inline]
pub fn law(q: f64, beta: f64, sigma: f64) -> f64 {
    ((q - beta) / sigma).clamp(0.0, 1.0)
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The flow hash holding the slot.
    flow: Option<u64>,
    last_arrival: Instant,
    weight: f64,
    sigma: f64,
    /// Explicit beta (packets), or automatic.
    beta: Option<f64>,
}

/// Running SQM.
#[derive(Debug, Clone)]
pub struct Sqm<P> {
    cfg: SqmConfig,
    fq: FlowQueues<P>,
    slots: Vec<Slot>,
    /// DRR quantum of each bucket (0: reserved).
    quanta: Vec<i64>,
    /// Sum of the quanta of the slots in use and the reserved queue (automatic β's share).
    quanta_in_use: i64,
    sketch: SpaceSaving,
    window_end: Instant,
    codel: CodelVars,
    prm: CodelParams,
    rng: Rng,
    limits: Limits,
    link_limit: QueueLimit,
    link: LinkInfo,
    stats: QueueStats,
    reserved: QueueStats,
    in_use: u32,
    /// Integral of `in_use` over time up to `slot_area_at`, slot x ns.
    slot_area: u128,
    slot_area_at: Instant,
    slot_peak: u32,
    promotions: u64,
    demotions: u64,
    activations: u64,
    last_class: u8,
}

impl<P> QdiscSpec for Sqm<P> {
    const NAME: &'static str = <SqmConfig as Params>::AQM;
    type Config = SqmConfig;
    fn describe() -> Vec<ParamInfo> {
        SqmConfig::describe_all()
    }
    fn validate_config(c: &SqmConfig) -> Result<(), ConfigError> {
        Params::validate(c)
    }
    fn set_config_param(c: &mut SqmConfig, path: &str, value: f64) -> Result<(), ConfigError> {
        Params::set_param(c, path, value)
    }
    fn get_config_param(c: &SqmConfig, path: &str) -> Option<f64> {
        Params::get_param(c, path)
    }
    fn set_config_field(c: &mut SqmConfig, path: &str, value: f64) -> Result<(), ConfigError> {
        Params::set_field(c, path, value)
    }
    /// The per-queue paths (`queues.N.LEAF`, `flows.HASH.LEAF`) take the unit of the pattern
    /// `queues.N.LEAF`.
    fn raw_config_value(
        _c: &SqmConfig,
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        let pattern = match key.split('.').collect::<Vec<_>>().as_slice() {
            ["queues" | "flows", _, leaf] => format!("queues.N.{leaf}"),
            _ => key.to_string(),
        };
        AqmConfig::value_among(Self::NAME, &Self::describe(), &pattern, raw, require_unit).map_err(
            |e| match e {
                ConfigError::UnknownParam { aqm, known, .. } => ConfigError::UnknownParam {
                    aqm,
                    key: key.into(),
                    known,
                },
                e => e,
            },
        )
    }
}

impl<P: Packet> QdiscOps<P> for Sqm<P> {
    /// SQM running `cfg` with the link's hard limit `limit` on `link`; `seed` draws the law's
    /// random numbers.
    fn new(
        cfg: &SqmConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let limits = Limits::new(limit, cfg.limit);
        let k = cfg.queues as usize;
        let mut s = Sqm {
            cfg: *cfg,
            fq: FlowQueues::new(
                cfg.queues + 1,
                hash_key(seed),
                limits.pool_hint(),
                limits.pool_max(),
            ),
            slots: vec![Self::fresh_slot(cfg, Instant::ZERO, None); k],
            quanta: vec![0; k + 1],
            quanta_in_use: 0,
            sketch: SpaceSaving::new(cfg.counters as usize),
            window_end: Instant::ZERO + cfg.window,
            codel: CodelVars::default(),
            prm: params(cfg),
            rng: Rng::new(seed ^ 0x5e9e_0000_0000_0001),
            limits,
            link_limit: limit,
            link,
            stats: QueueStats::default(),
            reserved: QueueStats::default(),
            in_use: 0,
            slot_area: 0,
            slot_area_at: Instant::ZERO,
            slot_peak: 0,
            promotions: 0,
            demotions: 0,
            activations: 0,
            last_class: 0,
        };
        s.update_quanta();
        Ok(s)
    }

    /// Offers a packet (module docs); victims of the shared buffer go to `on_drop`.
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let size = pkt.size_bytes();
        let b = self.classify(now, pkt.flow_hash(), size);
        let res = b == 0;
        self.stats.received += 1;
        self.stats.received_bytes += size as u64;
        if res {
            self.reserved.received += 1;
            self.reserved.received_bytes += size as u64;
        }
        if size as u64 > self.limits.bytes {
            self.stats.dropped_limit += 1;
            if res {
                self.reserved.dropped_limit += 1;
            }
            return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
        }
        let mut marked = false;
        if !res {
            self.activations += 1;
            self.stats.activations = self.activations;
            let s = self.slots[b - 1];
            let beta = self.beta(b - 1).expect("slot");
            let p = law(self.fq.pkts(b) as f64, beta, s.sigma);
            if p > 0.0 && self.rng.bernoulli(p) {
                if self.cfg.ecn && pkt.ecn_capable() {
                    marked = true;
                } else {
                    self.stats.dropped_early += 1;
                    return Enqueue::Dropped(pkt, DropReason::Early);
                }
            }
        }
        pkt.set_enqueued_at(now);
        if marked {
            pkt.set_ce();
            self.stats.marked += 1;
        }
        self.fq.push(now, b, pkt);
        if self.fq.list_of(b) == List::None {
            self.fq.push_back(List::Old, b);
            self.fq.set_deficit(b, self.quanta[b]);
        }
        self.stats.enqueued += 1;
        if res {
            self.reserved.enqueued += 1;
        }
        // Shared buffer: drop the head of the fattest queue while over the limit.
        while self
            .limits
            .exceeded(self.fq.len_pkts(), self.fq.len_bytes())
        {
            let v = if self.limits.bytes == u64::MAX {
                self.fq.fattest_by_packets_latest()
            } else {
                self.fq.fattest_by_bytes()
            };
            let Some(v) = v else { break };
            let Some(p) = self.fq.pop_head(now, v) else {
                break;
            };
            self.stats.dropped_victim += 1;
            if v == 0 {
                self.reserved.dropped_victim += 1;
            }
            on_drop(p, DropReason::ForcedLimit);
        }
        if marked {
            Enqueue::Marked
        } else {
            Enqueue::Queued
        }
    }

    /// The next packet by DRR over the backlogged queues; the reserved queue's CoDel drops go
    /// to `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        loop {
            let b = self.fq.front(List::Old)?;
            if self.fq.pkts(b) == 0 {
                // Emptied by victim drops.
                self.fq.pop_front(List::Old);
                self.fq.set_deficit(b, 0);
                continue;
            }
            let head = self.fq.head(b).map_or(0, |p| p.size_bytes()) as i64;
            if head > self.fq.deficit(b) {
                self.fq.set_deficit(b, self.fq.deficit(b) + self.quanta[b]);
                self.fq.move_front_to_old(List::Old);
                continue;
            }
            let got = if b == 0 {
                let (d0, m0) = (self.stats.dropped_dequeue, self.stats.marked);
                let mut q = FlowQueue {
                    fq: &mut self.fq,
                    b: 0,
                    now,
                    max_packet: self.link.mtu as u64,
                };
                let mut act = 0;
                let p =
                    self.codel
                        .dequeue(now, &self.prm, &mut q, &mut self.stats, on_drop, &mut act);
                self.reserved.dropped_dequeue += self.stats.dropped_dequeue - d0;
                self.reserved.marked += self.stats.marked - m0;
                self.reserved.activations += act;
                self.activations += act;
                self.stats.activations = self.activations;
                p
            } else {
                self.fq.pop_head(now, b)
            };
            let Some(p) = got else {
                self.fq.pop_front(List::Old);
                self.fq.set_deficit(b, 0);
                continue;
            };
            let size = p.size_bytes();
            self.fq.set_deficit(b, self.fq.deficit(b) - size as i64);
            if self.fq.pkts(b) == 0 {
                self.fq.pop_front(List::Old);
                self.fq.set_deficit(b, 0);
            }
            self.stats.dequeued += 1;
            self.stats.dequeued_bytes += size as u64;
            if b == 0 {
                self.reserved.dequeued += 1;
                self.reserved.dequeued_bytes += size as u64;
            }
            self.last_class = u8::from(b != 0);
            return Some(p);
        }
    }

    /// Counters of class `i` ([`CLASS_NAMES`]: 0 the reserved queue, 1 the elephant queues).
    fn class_stats(&self, i: usize) -> Option<QueueStats> {
        match i {
            0 => Some(self.reserved),
            1 => {
                let (a, r) = (self.stats, self.reserved);
                Some(QueueStats {
                    received: a.received - r.received,
                    enqueued: a.enqueued - r.enqueued,
                    dropped_limit: a.dropped_limit - r.dropped_limit,
                    dropped_early: a.dropped_early - r.dropped_early,
                    dropped_dequeue: a.dropped_dequeue - r.dropped_dequeue,
                    dropped_victim: a.dropped_victim - r.dropped_victim,
                    marked: a.marked - r.marked,
                    dequeued: a.dequeued - r.dequeued,
                    activations: a.activations - r.activations,
                    received_bytes: a.received_bytes - r.received_bytes,
                    dequeued_bytes: a.dequeued_bytes - r.dequeued_bytes,
                })
            }
            _ => None,
        }
    }

    /// Length of class `i` now, `(packets, bytes)`.
    fn class_len(&self, i: usize) -> Option<(usize, u64)> {
        let r = (self.fq.pkts(0) as usize, self.fq.bytes(0));
        match i {
            0 => Some(r),
            1 => Some((self.fq.len_pkts() - r.0, self.fq.len_bytes() - r.1)),
            _ => None,
        }
    }

    /// The class of the last packet dequeued (0 reserved, 1 elephants).
    fn last_class(&self) -> u8 {
        self.last_class
    }

    /// The largest law probability over the slots in use now.
    fn probability(&self) -> f64 {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].flow.is_some())
            .map(|i| {
                law(
                    self.fq.pkts(i + 1) as f64,
                    self.beta(i).unwrap_or(0.0),
                    self.slots[i].sigma,
                )
            })
            .fold(0.0, f64::max)
    }

    /// Reads a flat parameter or a per-queue path.
    fn param(&self, path: &str) -> Option<f64> {
        match self.slot_path(path).ok()? {
            Some((i, "weight")) => Some(self.slots[i].weight),
            Some((i, "sigma")) => Some(self.slots[i].sigma),
            Some((i, "beta")) => self.beta(i),
            Some(_) => None,
            None => self.cfg.get_param(path),
        }
    }

    /// Changes a flat parameter (`queues` and `counters` are fixed) or a per-queue path while
    /// running; on error nothing changes.
    fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        if let Some((i, leaf)) = self.slot_path(path)? {
            let s = &mut self.slots[i];
            match leaf {
                "weight" => {
                    check_weight(path, value)?;
                    s.weight = value;
                    self.update_quanta();
                }
                "sigma" => {
                    ensure(
                        value.is_finite() && value > 0.0,
                        path,
                        value,
                        "must be > 0 packets",
                    )?;
                    s.sigma = value;
                }
                "beta" => {
                    ensure(
                        value.is_finite(),
                        path,
                        value,
                        "must be a number of packets (< 0: automatic)",
                    )?;
                    s.beta = (value >= 0.0).then_some(value);
                }
                _ => {
                    return Err(ConfigError::UnknownParam {
                        aqm: "sqm".into(),
                        key: path.into(),
                        known: "queues.N.weight, queues.N.sigma, queues.N.beta, flows.HASH.*"
                            .into(),
                    })
                }
            }
            return Ok(());
        }
        let mut next = self.cfg;
        next.set_param(path, value)?;
        for (k, a, b) in [
            ("queues", next.queues, self.cfg.queues),
            ("counters", next.counters, self.cfg.counters),
        ] {
            if a != b {
                return Err(ConfigError::invalid(
                    k,
                    value,
                    "is fixed once the queue is built",
                ));
            }
        }
        self.cfg = next;
        self.prm = params(&next);
        self.limits = Limits::new(self.link_limit, next.limit);
        self.fq.set_pool_max(self.limits.pool_max());
        self.update_quanta();
        Ok(())
    }

    /// The current flat configuration (per-queue values: [`Sqm::param`]).
    fn config(&self) -> SqmConfig {
        self.cfg
    }

    crate::flowq::flow_queue_ops!();

    /// The packet pool, bucket records and per-queue state.
    fn memory_bytes(&self) -> usize {
        self.fq.memory_bytes() + self.flow_state_bytes()
    }
    fn num_classes(&self) -> usize {
        CLASS_NAMES.len()
    }
    fn class_name(&self, i: usize) -> Option<&str> {
        CLASS_NAMES.get(i).copied()
    }
    /// The elephant slots in use (SQM's flow count: flows holding a queue).
    #[inline]
    fn active_flows(&self) -> Option<u32> {
        Some(self.slots_in_use())
    }
    fn flow_count(&self, now: Instant) -> Option<FlowCount> {
        Some(FlowCount {
            active: self.slots_in_use(),
            area: self.slot_area(now),
            peak: self.slot_peak(),
        })
    }
    fn reset_flow_peak(&mut self) {
        self.reset_slot_peak();
    }
}

impl<P: Packet> Sqm<P> {
    fn fresh_slot(cfg: &SqmConfig, now: Instant, flow: Option<u64>) -> Slot {
        Slot {
            flow,
            last_arrival: now,
            weight: 1.0,
            sigma: cfg.sigma,
            beta: None,
        }
    }
    /// Elephant quanta from the weights; the reserved quantum gives it `reserved_share` of
    /// the slots in use (at least one MTU).
    fn update_quanta(&mut self) {
        let mtu = self.link.mtu.max(1);
        let mut sum = 0i64;
        for (i, s) in self.slots.iter().enumerate() {
            let q = crate::drr::quantum(s.weight, mtu);
            self.quanta[i + 1] = q;
            if s.flow.is_some() {
                sum += q;
            }
        }
        let r = self.cfg.reserved_share;
        self.quanta[0] = ((sum as f64 * r / (1.0 - r)).round() as i64).max(mtu as i64);
        self.quanta_in_use = sum + self.quanta[0];
    }
    /// Link capacity in MTU-sized packets per second.
    fn capacity_pps(&self) -> f64 {
        self.link.rate.as_f64() / (8.0 * self.link.mtu.max(1) as f64)
    }
    /// Beta of slot `i` in packets (explicit, or the target delay at the slot's share).
    pub fn beta(&self, i: usize) -> Option<f64> {
        let s = self.slots.get(i)?;
        Some(s.beta.unwrap_or_else(|| {
            let share = self.quanta[i + 1] as f64 / self.quanta_in_use.max(1) as f64;
            self.cfg.target.as_secs_f64() * self.capacity_pps() * share.min(1.0)
        }))
    }
    /// Frees the slots whose flow was idle for `idle` with an empty queue.
    fn sweep(&mut self, now: Instant) {
        let mut changed = false;
        for i in 0..self.slots.len() {
            let s = &mut self.slots[i];
            if s.flow.is_some() && now - s.last_arrival >= self.cfg.idle && self.fq.pkts(i + 1) == 0
            {
                *s = Self::fresh_slot(&self.cfg, now, None);
                self.slot_area += self.in_use as u128 * (now - self.slot_area_at).0 as u128;
                self.slot_area_at = now;
                self.in_use -= 1;
                self.demotions += 1;
                changed = true;
            }
        }
        if changed {
            self.update_quanta();
        }
    }
    /// The bucket of an arrival of `flow` with `size` bytes (classifier, module docs).
    #[inline]
    fn classify(&mut self, now: Instant, flow: u64, size: u32) -> usize {
        if now >= self.window_end {
            self.sketch.clear();
            let w = self.cfg.window.0.max(1);
            let n = (now.0 - self.window_end.0) / w + 1;
            self.window_end = Instant(self.window_end.0 + n * w);
            self.sweep(now);
        }
        let (count, err) = self.sketch.add(flow, size as u64);
        if let Some(i) = self.slots.iter().position(|s| s.flow == Some(flow)) {
            self.slots[i].last_arrival = now;
            return i + 1;
        }
        let threshold =
            self.cfg.min_share * self.link.rate.as_f64() * self.cfg.window.as_secs_f64() / 8.0;
        if ((count - err) as f64) < threshold {
            return 0;
        }
        if self.in_use as usize == self.slots.len() {
            self.sweep(now);
        }
        let Some(i) = self.slots.iter().position(|s| s.flow.is_none()) else {
            return 0;
        };
        self.slots[i] = Self::fresh_slot(&self.cfg, now, Some(flow));
        self.slot_area += self.in_use as u128 * (now - self.slot_area_at).0 as u128;
        self.slot_area_at = now;
        self.in_use += 1;
        self.slot_peak = self.slot_peak.max(self.in_use);
        self.promotions += 1;
        self.update_quanta();
        i + 1
    }
    /// Counters of the reserved queue alone (`activations`: its CoDel runs).
    pub fn reserved_stats(&self) -> QueueStats {
        self.reserved
    }
    /// Packets in the reserved queue now.
    pub fn reserved_len(&self) -> u32 {
        self.fq.pkts(0)
    }
    /// Elephant slots holding a flow now.
    pub fn slots_in_use(&self) -> u32 {
        self.in_use
    }
    /// Integral of [`Sqm::slots_in_use`] over time up to `now` (slot x ns).
    pub fn slot_area(&self, now: Instant) -> u128 {
        self.slot_area + self.in_use as u128 * now.0.saturating_sub(self.slot_area_at.0) as u128
    }
    /// Most slots in use at once since the queue was built or [`Sqm::reset_slot_peak`].
    pub fn slot_peak(&self) -> u32 {
        self.slot_peak
    }
    /// Restarts the peak from the current count.
    pub fn reset_slot_peak(&mut self) {
        self.slot_peak = self.in_use;
    }
    /// Flows promoted to a slot and slots freed so far.
    pub fn promotions(&self) -> (u64, u64) {
        (self.promotions, self.demotions)
    }
    /// The flow (hash) holding slot `i`.
    pub fn slot_flow(&self, i: usize) -> Option<u64> {
        self.slots.get(i)?.flow
    }
    /// The slot of flow `hash`, if it holds one.
    pub fn slot_of(&self, hash: u64) -> Option<usize> {
        self.slots.iter().position(|s| s.flow == Some(hash))
    }
    /// Packets in slot `i`'s queue now.
    pub fn slot_len(&self, i: usize) -> Option<u32> {
        (i < self.slots.len()).then(|| self.fq.pkts(i + 1))
    }
    /// The sketch.
    pub fn sketch(&self) -> &SpaceSaving {
        &self.sketch
    }
    /// The queues (bucket 0 reserved, bucket i + 1 slot i).
    pub fn queues(&self) -> &FlowQueues<P> {
        &self.fq
    }
    /// Bytes of per-queue state besides the packet pool.
    pub fn flow_state_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.quanta.capacity() * 8
            + self.sketch.keys.capacity() * 24
            + self.sketch.index.capacity() * 16
    }
    /// The current flat configuration (per-queue values: [`Sqm::param`]).
    pub fn config(&self) -> SqmConfig {
        self.cfg
    }
    /// The slot addressed by `queues.N.REST` or `flows.HASH.REST`, and `REST`.
    fn slot_path<'p>(&self, path: &'p str) -> Result<Option<(usize, &'p str)>, ConfigError> {
        let bad = |reason: String| ConfigError::InvalidText {
            key: path.to_string(),
            text: path.to_string(),
            reason,
        };
        if let Some(rest) = path.strip_prefix("queues.") {
            let Some((n, leaf)) = rest.split_once('.') else {
                return Err(bad("give queues.N.weight|sigma|beta".into()));
            };
            let i: usize = n
                .parse()
                .ok()
                .filter(|&i| i < self.slots.len())
                .ok_or_else(|| bad(format!("slot must be in 0..{}", self.slots.len())))?;
            return Ok(Some((i, leaf)));
        }
        if let Some(rest) = path.strip_prefix("flows.") {
            let Some((h, leaf)) = rest.split_once('.') else {
                return Err(bad("give flows.HASH.weight|sigma|beta".into()));
            };
            let h: u64 = h
                .parse()
                .map_err(|_| bad("HASH must be a flow hash in decimal".into()))?;
            let i = self
                .slot_of(h)
                .ok_or_else(|| bad(format!("flow {h} holds no elephant queue")))?;
            return Ok(Some((i, leaf)));
        }
        Ok(None)
    }
}

fn params(cfg: &SqmConfig) -> CodelParams {
    CodelParams {
        target: cfg.target,
        interval: cfg.interval,
        ecn: cfg.ecn,
        ce_threshold: None,
        law: cfg.control_law,
        rules: CodelRules::Rfc8289,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ms, no_drop, TestPacket};
    use crate::time::BitsPerSec;

    fn sqm(cfg: SqmConfig, limit: u32) -> Sqm<TestPacket> {
        // 12 Mb/s: C = 1000 packets/s of 1500 B.
        let link = LinkInfo::new(BitsPerSec::from_mbps(12));
        Sqm::new(&cfg, QueueLimit::Packets(limit), link, 3).unwrap()
    }

    /// SQM eq. 4 by hand: β = 10, σ = 20: q = 5 -> 0; q = 10 -> 0; q = 15 -> 0.25;
    /// q = 30 -> 1; q = 45 -> 1 (clamped).
    #[test]
    fn law_by_hand() {
        assert_eq!(law(5.0, 10.0, 20.0), 0.0);
        assert_eq!(law(10.0, 10.0, 20.0), 0.0);
        assert_eq!(law(15.0, 10.0, 20.0), 0.25);
        assert_eq!(law(30.0, 10.0, 20.0), 1.0);
        assert_eq!(law(45.0, 10.0, 20.0), 1.0);
    }

    /// Space-Saving with m = 4 on a skewed stream: every count overestimates by at most its
    /// error <= N/m, and the heavy keys (weight > N/m) are monitored.
    #[test]
    fn space_saving_bounds() {
        let mut s = SpaceSaving::new(4);
        let mut truth = HashMap::new();
        let mut rng = Rng::new(7);
        for _ in 0..10_000 {
            let r = rng.uniform();
            // Keys 0, 1 heavy (40 % and 25 %), 100 light keys share the rest.
            let k = if r < 0.4 {
                0
            } else if r < 0.65 {
                1
            } else {
                2 + rng.below(100)
            };
            s.add(k, 1);
            *truth.entry(k).or_insert(0u64) += 1;
        }
        let n = s.total();
        assert_eq!(n, 10_000);
        for (k, &t) in &truth {
            if let Some((c, e)) = s.get(*k) {
                assert!(c >= t && c - t <= e && e <= n / 4, "{k}: {c} {e} {t}");
            } else {
                assert!(t <= n / 4, "{k} with {t} must be monitored");
            }
        }
        assert!(s.get(0).is_some() && s.get(1).is_some());
        // Exact before the sketch is full.
        let mut s = SpaceSaving::new(4);
        s.add(9, 5);
        assert_eq!(s.add(9, 2), (7, 0));
        s.add(1, 1);
        s.add(2, 1);
        s.add(3, 3);
        // Full: key 4 replaces the smallest (key 1, count 1): count 1 + 10, error 1.
        assert_eq!(s.add(4, 10), (11, 1));
        assert_eq!(s.get(1), None);
        s.clear();
        assert_eq!((s.total(), s.get(9)), (0, None));
    }

    /// Promotion at the threshold (1 % of 1000 packets/s x 1 s = 15000 B = 10 packets),
    /// a mouse stays in the reserved queue, slots beyond K wait, idle slots free.
    #[test]
    fn promotion_and_demotion() {
        let cfg = SqmConfig {
            queues: 2,
            counters: 8,
            idle: Duration(1_500_000_000),
            ..Default::default()
        };
        let mut q = sqm(cfg, 1000);
        let mut id = 0;
        let mut put = |q: &mut Sqm<TestPacket>, t: Instant, f: u64| {
            id += 1;
            q.enqueue(t, TestPacket::new(id, 1500).flow(f), &mut |_, _| {});
        };
        for _ in 0..9 {
            put(&mut q, ms(1), 100);
        }
        assert_eq!((q.slots_in_use(), q.reserved_len()), (0, 9));
        put(&mut q, ms(1), 100);
        assert_eq!(q.slot_of(100), Some(0));
        assert_eq!(q.reserved_len(), 9);
        put(&mut q, ms(2), 7); // a mouse
        for _ in 0..10 {
            put(&mut q, ms(2), 200);
            put(&mut q, ms(2), 300);
        }
        assert_eq!(q.slot_of(200), Some(1));
        assert_eq!(q.slot_of(300), None, "K = 2 slots are taken");
        assert_eq!(q.slot_of(7), None);
        assert_eq!(q.slot_flow(1), Some(200));
        // Drain everything; flow 100 sends at 0.9 s. At 1.7 s (first arrival of the second
        // window: sweep) flow 200 has been idle for more than `idle` = 1.5 s: its slot frees
        // for 300; flow 100 (idle 0.8 s) keeps its slot.
        while q.dequeue(ms(3), &mut |_, _| {}).is_some() {}
        put(&mut q, ms(900), 100);
        for _ in 0..10 {
            put(&mut q, ms(1700), 300);
        }
        assert_eq!(q.slot_of(200), None);
        assert_eq!(q.slot_of(300), Some(1));
        assert_eq!(q.slot_of(100), Some(0), "flow 100 was active");
        assert_eq!(q.promotions(), (3, 1));
        // Slots in use: 1 from 1 ms, 2 from 2 ms, 1 from 1.7 s (sweep), 2 again at 1.7 s.
        assert_eq!((q.slots_in_use(), q.slot_peak()), (2, 2));
        let ns = |x: u64| x as u128 * 1_000_000;
        assert_eq!(q.slot_area(ms(2700)), ns(1) + 2 * ns(1698) + 2 * ns(1000));
    }

    /// The law on an elephant queue: β = 2, σ = 4 set by path; with q = 4 queued the next
    /// arrival is dropped with probability 0.5, with q = 6 always; ECN marks instead.
    #[test]
    fn law_on_a_queue_and_paths() {
        for ecn in [false, true] {
            let cfg = SqmConfig {
                queues: 1,
                counters: 4,
                min_share: 1e-9,
                ecn,
                ..Default::default()
            };
            let mut q = sqm(cfg, 1000);
            q.enqueue(
                ms(0),
                TestPacket::new(0, 1500).flow(5).ect(),
                &mut no_drop(),
            );
            assert_eq!(q.slot_of(5), Some(0));
            q.set_param("flows.5.beta", 2.0).unwrap();
            q.set_param("queues.0.sigma", 4.0).unwrap();
            assert_eq!(q.param("queues.0.beta"), Some(2.0));
            assert_eq!(q.param("flows.5.sigma"), Some(4.0));
            // Fill to 6 packets (q <= β + σ... arrivals at q = 1, 2 are safe).
            for i in 1..3 {
                q.enqueue(
                    ms(0),
                    TestPacket::new(i, 1500).flow(5).ect(),
                    &mut no_drop(),
                );
            }
            let mut drops = 0;
            let n = 2000;
            for i in 0..n {
                // Keep q at exactly 4.
                while q.len_pkts() < 4 {
                    q.enqueue(ms(0), TestPacket::new(9, 1500).flow(5), &mut |_, _| {});
                }
                while q.len_pkts() > 4 {
                    q.dequeue(ms(0), &mut |_, _| {});
                }
                let r = q.enqueue(
                    ms(0),
                    TestPacket::new(i, 1500).flow(5).ect(),
                    &mut no_drop(),
                );
                match r {
                    Enqueue::Dropped(..) => drops += 1,
                    Enqueue::Marked => drops += 1,
                    Enqueue::Queued => {}
                }
                if ecn {
                    assert!(!matches!(r, Enqueue::Dropped(..)));
                }
            }
            let frac = drops as f64 / n as f64;
            assert!((frac - 0.5).abs() < 0.05, "{frac}");
            while q.len_pkts() < 6 {
                q.enqueue(ms(0), TestPacket::new(9, 1500).flow(5), &mut |_, _| {});
            }
            let r = q.enqueue(ms(0), TestPacket::new(1, 1500).flow(5), &mut no_drop());
            assert!(matches!(r, Enqueue::Dropped(_, DropReason::Early)));
            // Automatic β: 5 ms x 1000 packets/s x share (slot weight 1 of 1 + reserved).
            q.set_param("queues.0.beta", -1.0).unwrap();
            let b = q.param("queues.0.beta").unwrap();
            assert!((b - 5.0 * 1500.0 / (1500.0 + 1500.0)).abs() < 1e-9, "{b}");
            let e = q.set_param("queues.3.weight", 2.0).unwrap_err();
            assert!(e.to_string().contains("queues.3.weight"), "{e}");
            let e = q.set_param("flows.6.weight", 2.0).unwrap_err();
            assert!(e.to_string().contains("holds no elephant queue"), "{e}");
            let e = q.set_param("queues.0.sigma", 0.0).unwrap_err();
            assert_eq!(e.key(), Some("queues.0.sigma"));
            assert!(q.set_param("queues", 3.0).is_err());
        }
    }

    /// DRR shares follow the weights: slots of weights 1 and 3, both backlogged, 1500 B
    /// packets: out of 400 dequeues 100 and 300.
    #[test]
    fn weights_set_shares() {
        let cfg = SqmConfig {
            queues: 2,
            counters: 4,
            min_share: 1e-9,
            sigma: 1e9,
            ..Default::default()
        };
        let mut q = sqm(cfg, 10_000);
        q.enqueue(ms(0), TestPacket::new(0, 1500).flow(1), &mut no_drop());
        q.enqueue(ms(0), TestPacket::new(0, 1500).flow(2), &mut no_drop());
        q.set_param("flows.2.weight", 3.0).unwrap();
        q.set_param("queues.0.beta", 1e9).unwrap();
        q.set_param("queues.1.beta", 1e9).unwrap();
        for i in 0..500 {
            q.enqueue(ms(0), TestPacket::new(i, 1500).flow(1), &mut no_drop());
            q.enqueue(ms(0), TestPacket::new(i, 1500).flow(2), &mut no_drop());
        }
        let mut sent = [0; 2];
        for _ in 0..400 {
            let p = q.dequeue(ms(0), &mut no_drop()).unwrap();
            sent[(p.flow - 1) as usize] += 1;
        }
        // Slot 1's first deficit was given at weight 1 (before the new weight): one packet
        // less in its first round, then 3 per round.
        assert_eq!(sent, [101, 299]);
        assert_eq!(q.stats().dequeued, 400);
    }
}
