//! Deficit Round Robin (M. Shreedhar and G. Varghese, "Efficient Fair Queueing Using Deficit
//! Round-Robin", IEEE/ACM Transactions on Networking 4(3), 1996).
//!
//! A scheduler over named classes, each a child FIFO with any AQM ([`crate::QueueDisc`]). Class `i`
//! has a quantum `Q_i = weight_i x MTU` bytes and a deficit counter `DC_i`. The active list
//! holds the backlogged classes in round-robin order. Per the paper's pseudo-code (Fig. 2,
//! one packet per `dequeue` as in Linux's `sch_drr`): a class that becomes backlogged joins
//! the tail with `DC = Q`; `dequeue` looks at the head class: if its head packet fits in
//! `DC`, it is sent and `DC -= size` (a class that empties leaves the list and its `DC` is
//! reset to 0), else `DC += Q` and the class moves to the tail. A backlogged class therefore
//! sends `Q_i` bytes per round on average, and long-run throughput shares are proportional to
//! the weights.
//!
//! Classes, classification, the shared buffer and its victim rule are those of every
//! class-based scheduler ([`crate::classes`]): unclassified traffic goes to the first class;
//! when the shared buffer overflows, the head of the fattest class is dropped.
//!
//! Child AQMs decide on their own class's queue. A dequeue-side child AQM (CoDel) may drop
//! heads inside one class dequeue; the deficit is then charged with the size of the packet
//! actually sent and may go below zero (the class earns it back in later rounds).

use std::collections::VecDeque;

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::classes::{class_list_spec, class_set_ops, ClassConfig, ClassList, ClassSet};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::qdisc::ops::{QdiscOps, QdiscSpec};
use crate::time::Instant;

/// One class of a [`DrrConfig`] (the class model shared with [`crate::wfq`]).
pub type DrrClass = ClassConfig;

/// Deficit Round Robin's configuration: the class list ([`ClassList`], shared with
/// [`crate::wfq`]); a class's quantum is `weight x MTU` bytes.
pub type DrrConfig = ClassList;

/// Parameter descriptions of `drr` (for `aqmlab aqms`).
pub fn describe() -> Vec<ParamInfo> {
    ClassList::describe(
        "Weight of class NAME: its quantum is weight x MTU bytes per round \
         (Shreedhar-Varghese 1996); backlogged classes share the link in \
         proportion to their weights.",
    )
}

/// The quantum of a class of weight `weight` on a link of MTU `mtu`, bytes (at least 1).
pub fn quantum(weight: f64, mtu: u32) -> i64 {
    ((weight * mtu as f64).round() as i64).max(1)
}

#[derive(Debug, Clone, Copy)]
struct Round {
    quantum: i64,
    deficit: i64,
    active: bool,
}

/// Running state of a DRR scheduler.
#[derive(Debug, Clone)]
pub struct Drr<P> {
    set: ClassSet<P>,
    /// Quantum, deficit and activity of each class.
    rounds: Vec<Round>,
    /// Backlogged classes in round-robin order (indices into the classes).
    active: VecDeque<u8>,
}

impl<P> QdiscSpec for Drr<P> {
    const NAME: &'static str = "drr";
    type Config = DrrConfig;
    fn describe() -> Vec<ParamInfo> {
        describe()
    }
    class_list_spec!();
}

impl<P: Packet> QdiscOps<P> for Drr<P> {
    /// A scheduler with `cfg`'s classes ([`ClassSet::new`]).
    fn new(
        cfg: &DrrConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        let set = ClassSet::new(cfg, limit, link, seed)?;
        let rounds = cfg
            .classes
            .iter()
            .map(|c| Round {
                quantum: quantum(c.weight, link.mtu),
                deficit: 0,
                active: false,
            })
            .collect();
        Ok(Drr {
            active: VecDeque::with_capacity(cfg.classes.len()),
            set,
            rounds,
        })
    }

    /// Offers a packet to its class. Victims dropped to make room go to `on_drop`.
    /// (This and the other per-packet entry points are never inlined: the scheduler's code
    /// stays out of the FIFO fast path of [`crate::Qdisc`].)
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let i = self.set.classify(&pkt);
        let r = self.set.offer(now, i, pkt);
        if matches!(r, Enqueue::Dropped(..)) {
            return r;
        }
        let c = &mut self.rounds[i];
        if !c.active {
            c.active = true;
            c.deficit = c.quantum;
            self.active.push_back(i as u8);
        }
        self.set.drop_victims(now, on_drop);
        r
    }

    /// The next packet by DRR (module docs); child dequeue-side drops go to `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        while let Some(&i) = self.active.front() {
            let i = i as usize;
            let c = &mut self.rounds[i];
            let Some(head) = self.set.head_size(i) else {
                // Emptied by victim drops since it was last served.
                c.deficit = 0;
                c.active = false;
                self.active.pop_front();
                continue;
            };
            if head as i64 > c.deficit {
                c.deficit += c.quantum;
                self.active.rotate_left(1);
                continue;
            }
            let got = self.set.take(now, i, on_drop);
            if let Some(p) = &got {
                c.deficit -= p.size_bytes() as i64;
            }
            if self.set.class_is_empty(i) {
                c.deficit = 0;
                c.active = false;
                self.active.pop_front();
            }
            if got.is_some() {
                return got;
            }
        }
        None
    }

    /// Changes one parameter by path (`classes.NAME.weight`, `classes.NAME.aqm.PARAM`) while
    /// running; deficits and AQM states are kept. On error nothing changes.
    fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        if let Some(i) = self.set.set_param(Self::NAME, path, value)? {
            self.rounds[i].quantum = quantum(value, self.set.link().mtu);
        }
        Ok(())
    }

    class_set_ops!();
}

impl<P: Packet> Drr<P> {
    /// The classes: queues, counters, lengths, names, timers ([`ClassSet`]).
    #[inline]
    pub fn classes(&self) -> &ClassSet<P> {
        &self.set
    }

    /// Deficit counter of class `i`, bytes (tests and inspection).
    pub fn deficit(&self, i: usize) -> Option<i64> {
        self.rounds.get(i).map(|c| c.deficit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AqmConfig;
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
                    aqm: AqmConfig::DropTail(Default::default()),
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
        assert_eq!((q.classes().len_pkts(), q.classes().len_bytes()), (0, 0));
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
                while q.classes().class_queue(c as usize).unwrap().len_pkts() < 5 {
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
        assert_eq!(q.classes().len_pkts(), 4);
        assert_eq!(
            q.classes().class_queue(0).unwrap().stats().dropped_victim,
            1
        );
        // Unknown class indices go to the first class.
        q.enqueue(Instant::ZERO, pkt(20, 7, 1000), &mut |_, _| {});
        assert_eq!(q.classes().class_queue(0).unwrap().stats().received, 5);
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
