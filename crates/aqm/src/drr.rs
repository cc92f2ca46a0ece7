//! Deficit Round Robin (M. Shreedhar and G. Varghese, "Efficient Fair Queueing Using Deficit
//! Round-Robin", IEEE/ACM Transactions on Networking 4(3), 1996).
//!
//! A scheduler over named classes, each a child FIFO with any AQM ([`QueueDisc`]). Class `i`
//! has a quantum `Q_i = weight_i x MTU` bytes and a deficit counter `DC_i`. The active list
//! holds the backlogged classes in round-robin order. Per the paper's pseudo-code (Fig. 2,
//! one packet per `dequeue` as in Linux's `sch_drr`): a class that becomes backlogged joins
//! the tail with `DC = Q`; `dequeue` looks at the head class: if its head packet fits in
//! `DC`, it is sent and `DC -= size` (a class that empties leaves the list and its `DC` is
//! reset to 0), else `DC += Q` and the class moves to the tail. A backlogged class therefore
//! sends `Q_i` bytes per round on average, and long-run throughput shares are proportional to
//! the weights.
//!
//! Classification: [`Packet::class`] is the class index (its position in
//! [`DrrConfig::classes`]); an index the scheduler does not have goes to the first class
//! ("unclassified traffic goes to the first class").
//!
//! Buffer: the link's hard limit is shared by all classes (each child has the same limit, so
//! one class may use the whole buffer when the others are idle). When an accepted arrival
//! makes the total exceed the limit, the head of the fattest class (most packets, or most
//! bytes for a byte limit; ties to the lower index) is dropped as a *victim* (reason
//! [`DropReason::ForcedLimit`], counted in that class's `dropped_victim`), the paper's
//! remedy against buffer stealing (Section 3).
//!
//! Child AQMs decide on their own class's queue. A dequeue-side child AQM (CoDel) may drop
//! heads inside one class dequeue; the deficit is then charged with the size of the packet
//! actually sent and may go below zero (the class earns it back in later rounds).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::config::AqmConfig;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::queue::{DropReason, Enqueue, LinkInfo, QueueDisc, QueueLimit, QueueStats};
use crate::time::Instant;

/// Most classes a scheduler takes (the class index on a packet is a `u8`).
pub const MAX_CLASSES: usize = 255;

fn one() -> f64 {
    1.0
}
fn droptail() -> AqmConfig {
    AqmConfig::DropTail(Default::default())
}

/// One class of a [`DrrConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrrClass {
    /// Class name (unique, non-empty, no `.`): flows choose it with `class = "NAME"`,
    /// results report it under `classes.NAME`, parameter paths address it.
    pub name: String,
    /// Weight: the class's quantum is `weight x MTU` bytes per round (> 0, default 1).
    #[serde(default = "one")]
    pub weight: f64,
    /// The class's AQM (a FIFO with this algorithm; default drop-tail).
    #[serde(default = "droptail")]
    pub aqm: AqmConfig,
}

/// Deficit Round Robin's configuration: the class list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrrConfig {
    /// The classes, in order (the first one also takes unclassified traffic).
    pub classes: Vec<DrrClass>,
}

impl Default for DrrConfig {
    /// One class `default` of weight 1 with drop-tail (a FIFO).
    fn default() -> Self {
        DrrConfig {
            classes: vec![DrrClass {
                name: "default".into(),
                weight: 1.0,
                aqm: droptail(),
            }],
        }
    }
}

impl DrrConfig {
    /// Parameter descriptions (for `aqmlab aqms`); `NAME` stands for a class name and
    /// `PARAM` for a parameter of the class's AQM.
    pub fn describe() -> Vec<ParamInfo> {
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
                doc: "Weight of class NAME: its quantum is weight x MTU bytes per round \
                      (Shreedhar-Varghese 1996); backlogged classes share the link in \
                      proportion to their weights.",
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
}

fn check_weight(key: &str, w: f64) -> Result<(), ConfigError> {
    if w.is_finite() && w > 0.0 && w <= 1e6 {
        Ok(())
    } else {
        Err(ConfigError::invalid(key, w, "must be a weight in (0, 1e6]"))
    }
}

/// The quantum of a class of weight `weight` on a link of MTU `mtu`, bytes (at least 1).
pub fn quantum(weight: f64, mtu: u32) -> i64 {
    ((weight * mtu as f64).round() as i64).max(1)
}

/// SplitMix64 finaliser (the seed of class `i`'s random stream).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A parameter path inside a class: `classes.NAME.REST`.
pub(crate) fn split_class_path(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("classes.")?;
    rest.split_once('.')
}

#[derive(Debug, Clone)]
struct Class<P> {
    q: QueueDisc<P>,
    name: String,
    weight: f64,
    quantum: i64,
    deficit: i64,
    active: bool,
}

/// Running state of a DRR scheduler.
#[derive(Debug, Clone)]
pub struct Drr<P> {
    classes: Vec<Class<P>>,
    /// Backlogged classes in round-robin order (indices into `classes`).
    active: VecDeque<u8>,
    limit: QueueLimit,
    link: LinkInfo,
    len_pkts: usize,
    len_bytes: u64,
    last_class: u8,
}

impl<P: Packet> Drr<P> {
    /// A scheduler with `cfg`'s classes; each child gets the hard limit `limit` (shared, see
    /// the module docs) and its own random stream derived from `seed`.
    pub fn new(
        cfg: &DrrConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let mut classes = Vec::with_capacity(cfg.classes.len());
        for (i, c) in cfg.classes.iter().enumerate() {
            let s = mix(seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            classes.push(Class {
                q: QueueDisc::new(&c.aqm, limit, link, s)
                    .map_err(|e| e.prefixed(&format!("classes.{}.aqm.", c.name)))?,
                name: c.name.clone(),
                weight: c.weight,
                quantum: quantum(c.weight, link.mtu),
                deficit: 0,
                active: false,
            });
        }
        Ok(Drr {
            active: VecDeque::with_capacity(classes.len()),
            classes,
            limit,
            link,
            len_pkts: 0,
            len_bytes: 0,
            last_class: 0,
        })
    }

    #[inline]
    fn classify(&self, p: &P) -> usize {
        let c = p.class() as usize;
        if c < self.classes.len() {
            c
        } else {
            0
        }
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

    /// Offers a packet to its class. Victims dropped to make room go to `on_drop`.
    /// (This and the other per-packet entry points are never inlined: the scheduler's code
    /// stays out of the FIFO fast path of [`crate::Qdisc`].)
    #[inline(never)]
    pub fn enqueue(
        &mut self,
        now: Instant,
        pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let i = self.classify(&pkt);
        let size = pkt.size_bytes() as u64;
        let c = &mut self.classes[i];
        let r = c.q.enqueue(now, pkt);
        if matches!(r, Enqueue::Dropped(..)) {
            return r;
        }
        self.len_pkts += 1;
        self.len_bytes += size;
        if !c.active {
            c.active = true;
            c.deficit = c.quantum;
            self.active.push_back(i as u8);
        }
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
        r
    }

    /// The next packet by DRR (module docs); child dequeue-side drops go to `on_drop`.
    #[inline(never)]
    pub fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        while let Some(&i) = self.active.front() {
            let c = &mut self.classes[i as usize];
            let Some(head) = c.q.peek() else {
                // Emptied by victim drops since it was last served.
                c.deficit = 0;
                c.active = false;
                self.active.pop_front();
                continue;
            };
            if head.size_bytes() as i64 > c.deficit {
                c.deficit += c.quantum;
                self.active.rotate_left(1);
                continue;
            }
            let (p0, b0) = (c.q.len_pkts(), c.q.len_bytes());
            let got = c.q.dequeue(now, on_drop);
            self.len_pkts -= p0 - c.q.len_pkts();
            self.len_bytes -= b0 - c.q.len_bytes();
            if let Some(p) = &got {
                c.deficit -= p.size_bytes() as i64;
            }
            if c.q.is_empty() {
                c.deficit = 0;
                c.active = false;
                self.active.pop_front();
            }
            if got.is_some() {
                self.last_class = i;
                return got;
            }
        }
        None
    }

    /// Earliest timer of any class's AQM.
    #[inline(never)]
    pub fn poll_at(&self) -> Option<Instant> {
        self.classes.iter().filter_map(|c| c.q.poll_at()).min()
    }

    /// Runs every class AQM's periodic law that is due.
    #[inline(never)]
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
    /// The class of the packet last returned by `dequeue`.
    #[inline]
    pub fn last_class(&self) -> u8 {
        self.last_class
    }
    /// Totals: the sums of the classes' counters.
    pub fn stats(&self) -> QueueStats {
        let mut s = QueueStats::default();
        for c in &self.classes {
            s.add(c.q.stats());
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
    /// Class `i`'s queue (its counters, length, AQM).
    pub fn class_queue(&self, i: usize) -> Option<&QueueDisc<P>> {
        self.classes.get(i).map(|c| &c.q)
    }
    /// Deficit counter of class `i`, bytes (tests and inspection).
    pub fn deficit(&self, i: usize) -> Option<i64> {
        self.classes.get(i).map(|c| c.deficit)
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
    /// Bytes of packet storage held by the classes' FIFOs.
    pub fn memory_bytes(&self) -> usize {
        self.classes.iter().map(|c| c.q.memory_bytes()).sum()
    }
    /// The link.
    pub fn link(&self) -> LinkInfo {
        self.link
    }
    /// The current configuration (class AQMs as running).
    pub fn config(&self) -> DrrConfig {
        DrrConfig {
            classes: self
                .classes
                .iter()
                .map(|c| DrrClass {
                    name: c.name.clone(),
                    weight: c.weight,
                    aqm: c.q.config(),
                })
                .collect(),
        }
    }

    fn class_by_name<'p>(&self, path: &'p str) -> Result<(usize, &'p str), ConfigError> {
        let unknown = |known: String| ConfigError::UnknownParam {
            aqm: "drr".into(),
            key: path.to_string(),
            known,
        };
        let Some((name, rest)) = split_class_path(path) else {
            return Err(unknown(
                "classes.NAME.weight, classes.NAME.aqm.PARAM".into(),
            ));
        };
        match self.classes.iter().position(|c| c.name == name) {
            Some(i) => Ok((i, rest)),
            None => Err(unknown(format!(
                "classes: {}",
                self.classes
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Changes one parameter by path (`classes.NAME.weight`, `classes.NAME.aqm.PARAM`) while
    /// running; deficits and AQM states are kept. On error nothing changes.
    pub fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        let (i, rest) = self.class_by_name(path)?;
        let c = &mut self.classes[i];
        if rest == "weight" {
            check_weight(path, value)?;
            c.weight = value;
            c.quantum = quantum(value, self.link.mtu);
            Ok(())
        } else if let Some(k) = rest.strip_prefix("aqm.") {
            let prefix = &path[..path.len() - k.len()];
            c.q.set_param(k, value).map_err(|e| e.prefixed(prefix))
        } else {
            Err(ConfigError::UnknownParam {
                aqm: "drr".into(),
                key: path.to_string(),
                known: "classes.NAME.weight, classes.NAME.aqm.PARAM".into(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TestPacket;
    use crate::time::BitsPerSec;

    fn cfg(weights: &[f64]) -> DrrConfig {
        DrrConfig {
            classes: weights
                .iter()
                .enumerate()
                .map(|(i, &w)| DrrClass {
                    name: format!("c{i}"),
                    weight: w,
                    aqm: droptail(),
                })
                .collect(),
        }
    }

    fn drr(weights: &[f64], mtu: u32) -> Drr<TestPacket> {
        let link = LinkInfo {
            rate: BitsPerSec::from_mbps(10),
            mtu,
        };
        Drr::new(&cfg(weights), QueueLimit::Packets(1000), link, 1).unwrap()
    }

    fn pkt(id: u64, class: u8, size: u32) -> TestPacket {
        TestPacket::new(id, size).class(class)
    }

    /// Shreedhar-Varghese's pseudo-code (Fig. 2) by hand. Quanta 500 (a) and 1000 (b) bytes
    /// (MTU 500, weights 1 and 2); class a holds packets of 200, 400, 300, 300 bytes, class b
    /// 600, 600, 600 bytes, all backlogged before the first dequeue.
    /// Round 1: a: DC 500 -> send 200 (DC 300), 400 > 300, next; b: DC 1000 -> 600 (400), next.
    /// Round 2: a: DC 800 -> 400 (400), 300 (100), next; b: DC 1400 -> 600 (800), 600 (200),
    /// empty (DC 0). Round 3: a: DC 600 -> 300, empty (DC 0).
    /// Send order: a0 b0 a1 a2 b1 b2 a3. Here a class's quantum is added when its turn ends
    /// (Linux `sch_drr`) rather than when the next begins, so the deficits observed after each
    /// dequeue are the paper's plus the quantum of the class whose turn just ended.
    #[test]
    fn deficit_rounds_by_hand() {
        let mut q = drr(&[1.0, 2.0], 500);
        for (id, &s) in [200u32, 400, 300, 300].iter().enumerate() {
            assert!(matches!(
                q.enqueue(Instant::ZERO, pkt(id as u64, 0, s), &mut |_, _| panic!()),
                Enqueue::Queued
            ));
        }
        for (id, &s) in [600u32, 600, 600].iter().enumerate() {
            q.enqueue(
                Instant::ZERO,
                pkt(10 + id as u64, 1, s),
                &mut |_, _| panic!(),
            );
        }
        let mut order = Vec::new();
        let mut deficits = Vec::new();
        while let Some(p) = q.dequeue(Instant(1), &mut |_, _| panic!()) {
            order.push(p.id);
            deficits.push((q.deficit(0).unwrap(), q.deficit(1).unwrap()));
        }
        assert_eq!(order, vec![0, 10, 1, 2, 11, 12, 3]);
        assert_eq!(
            deficits,
            vec![
                (300, 1000),
                (800, 400),
                (400, 1400),
                (100, 1400),
                (600, 800),
                (600, 0),
                (0, 0)
            ]
        );
        assert_eq!((q.len_pkts(), q.len_bytes()), (0, 0));
    }

    /// Backlogged classes of weights 1:2:3 (quanta 1500, 3000, 4500 B) with 1000-byte packets
    /// send 3, 6 and 9 packets every two rounds: bytes exactly 1:2:3 after 300 x 18 dequeues.
    #[test]
    fn shares_follow_weights() {
        let mut q = drr(&[1.0, 2.0, 3.0], 1500);
        let mut id = 0;
        let mut sent = [0u64; 3];
        for _ in 0..5400 {
            for c in 0..3u8 {
                while q.class_queue(c as usize).unwrap().len_pkts() < 5 {
                    q.enqueue(Instant::ZERO, pkt(id, c, 1000), &mut |_, _| {});
                    id += 1;
                }
            }
            let p = q.dequeue(Instant(1), &mut |_, _| {}).unwrap();
            sent[p.class as usize] += p.size as u64;
        }
        assert_eq!(sent, [900_000, 1_800_000, 2_700_000]);
    }

    /// A full shared buffer drops the head of the fattest class, not the arrival.
    #[test]
    fn overflow_drops_fattest_head() {
        let link = LinkInfo::new(BitsPerSec::from_mbps(10));
        let mut q =
            Drr::<TestPacket>::new(&cfg(&[1.0, 1.0]), QueueLimit::Packets(4), link, 1).unwrap();
        for id in 0..4 {
            q.enqueue(Instant::ZERO, pkt(id, 0, 1000), &mut |_, _| panic!());
        }
        let mut victims = Vec::new();
        let r = q.enqueue(Instant::ZERO, pkt(9, 1, 1000), &mut |p, _| {
            victims.push(p.id)
        });
        assert!(matches!(r, Enqueue::Queued));
        assert_eq!(victims, vec![0]);
        assert_eq!(q.len_pkts(), 4);
        assert_eq!(q.class_queue(0).unwrap().stats().dropped_victim, 1);
        // Unknown class indices go to the first class.
        q.enqueue(Instant::ZERO, pkt(20, 7, 1000), &mut |_, _| {});
        assert_eq!(q.class_queue(0).unwrap().stats().received, 5);
    }

    #[test]
    fn set_param_paths() {
        let mut q = drr(&[1.0, 2.0], 1500);
        q.set_param("classes.c1.weight", 4.0).unwrap();
        assert_eq!(q.config().classes[1].weight, 4.0);
        let e = q.set_param("classes.c1.weight", 0.0).unwrap_err();
        assert_eq!(e.key(), Some("classes.c1.weight"));
        let e = q.set_param("classes.zz.weight", 1.0).unwrap_err();
        assert!(e.to_string().contains("c0, c1"), "{e}");
        let e = q.set_param("classes.c0.aqm.bogus", 1.0).unwrap_err();
        assert_eq!(e.key(), Some("classes.c0.aqm.bogus"));
        q.set_param("classes.c0.aqm.ecn", 1.0).unwrap();
        assert_eq!(q.config().classes[0].aqm.get_param("ecn"), Some(1.0));
    }
}
