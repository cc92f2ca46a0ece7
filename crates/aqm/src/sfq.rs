//! SFQ — Stochastic Fairness Queueing (P. McKenney, INFOCOM 1990), as Linux's
//! `net/sched/sch_sfq.c` implements it (without its optional RED); docs/aqm/sfq.md.
//!
//! Packets are hashed ([`crate::flowq`]) into `divisor` buckets (1024). The backlogged
//! buckets form one round-robin ring served by deficit round robin with credit `quantum`
//! (Linux `allot`); there is no AQM: SFQ only schedules and chooses what to drop.
//!
//! **Enqueue** (Linux `sfq_enqueue`): a packet whose bucket is empty starts a new flow: if
//! `flows` flow queues are already backlogged it is dropped (Linux: no free slot,
//! `QDISC_DROP_MAXFLOWS`); otherwise its flow joins the ring behind the others (after the
//! ring's tail: "this might sound unfair for a new flow to wait after old ones, but we could
//! end up servicing new flows only") with `allot = quantum`. A packet whose flow already holds
//! `depth` packets is dropped (with `headdrop`, the flow's head is dropped instead and the
//! arrival queued). The packet is appended; if the qdisc then holds more than its limit,
//! `sfq_drop` drops one packet from the longest flow (most packets; ties to the flow whose
//! length changed last, the head of Linux's `dep[]` chain for that length): its tail (its head
//! with `headdrop`). When every flow holds one packet, the flow next in the round is dropped
//! and leaves the ring. If that packet is the arrival, the arrival is reported dropped;
//! otherwise the dropped packet is a victim.
//!
//! **Dequeue** (Linux `sfq_dequeue`): look at the flow next in the round; if its
//! `allot <= 0`, add `quantum` and move on (it goes to the back of the round); else send its
//! head: a flow that empties leaves the ring, otherwise `allot -= size`.
//!
//! **Perturbation** (Linux `sfq_perturbation` / `sfq_rehash`): every `perturb` seconds a new
//! hash key is drawn from the qdisc's seeded stream and every queued packet is re-hashed
//! (flows in round order, packets in order), so the flows that collided are separated.
//! Linux drops packets that no longer fit (depth, free slots) during a rehash; we keep them
//! (a flow may exceed `depth` until it drains), so that a rehash never loses packets.
//!
//! Defaults follow Linux's `sfq_init`: `divisor` 1024, `flows` 128 (lowered to `divisor` if
//! that is smaller), `depth` 127, quantum one MTU, no perturbation, tail drop. Linux's default
//! limit (127 packets) is replaced by the link's buffer (lowered to `depth x flows`). Where
//! Linux's `sfq_change` silently lowers a given `flows` above `divisor` or a given `limit` above
//! `depth x flows`, these are refused here with the key and value. Not modelled: the RED
//! option (`redflowlimit`), external classifiers.
//!
//! Activations: 0 (no control law); [`Sfq::perturbations`] counts rehashes.

use crate::algorithm::Periodic;
use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::error::{ensure, ConfigError};
use crate::flowq::{check_quantum, hash_key, quantum_of, FlowQueues, Limits, List, MAX_BUCKETS};
use crate::packet::Packet;
use crate::params::{aqm_config, Params};
use crate::qdisc::ops::{flat_qdisc_spec, QdiscOps};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Linux `SFQ_DEFAULT_FLOWS`.
pub const DEFAULT_FLOWS: u32 = 128;
/// Linux `SFQ_MAX_FLOWS` (0x10000 - 127 - 1).
pub const MAX_FLOWS: u32 = 0x10000 - 127 - 1;

aqm_config! {
    /// SFQ configuration (Linux sch_sfq.c; defaults from sfq_init).
    pub struct SfqConfig as "sfq" {
        /// Hash buckets (Linux divisor): a power of two in 1..=65536. Default 1024. Fixed
        /// once the queue is built.
        pub divisor: u32 = 1024, "buckets";
        /// Most flow queues backlogged at once (Linux flows, its slots): a packet of a further
        /// flow is dropped. 0 = Linux's default, 128 (SFQ_DEFAULT_FLOWS) or divisor if that is
        /// smaller (default). Otherwise at most divisor (Linux silently lowers a larger value
        /// to divisor; refused here).
        pub flows: u32 = 0, "queues";
        /// Most packets per flow queue (Linux depth): an arrival to a full flow queue is
        /// dropped (with headdrop, the flow's head instead). Default 127 (SFQ_MAX_DEPTH, also
        /// Linux's upper bound; larger values are allowed here).
        pub depth: u32 = 127, "packets";
        /// Packet limit over all flows. 0 = the link's buffer (default). At most depth x
        /// flows (Linux silently lowers a larger limit to that; refused here; Linux's own
        /// default limit is 127 packets).
        pub limit: u32 = 0, "packets";
        /// DRR quantum (Linux allot per round), bytes. 0 = the link's MTU (default; Linux:
        /// psched_mtu). Otherwise 256..=1048576.
        pub quantum: u32 = 0, "bytes";
        /// Hash perturbation period, seconds: every perturb seconds a new key is drawn (from
        /// the qdisc's seed) and the queued packets are re-hashed. 0 = never (default, as
        /// Linux; `tc qdisc add ... sfq perturb 10` is a common setting); otherwise at least
        /// 1e-06 (one microsecond).
        pub perturb: Duration = Duration::ZERO, "s";
        /// On overflow drop the longest flow's head instead of its tail; a full flow queue
        /// drops its head instead of the arrival. Default false (Linux).
        pub headdrop: bool = false, "bool";
    }
}

impl SfqConfig {
    /// The number of slots: `flows`, or for 0 Linux's default `min(128, divisor)`
    /// (`sfq_init`'s SFQ_DEFAULT_FLOWS, lowered to the divisor by `sfq_change`).
    pub fn max_flows(&self) -> u32 {
        if self.flows == 0 {
            DEFAULT_FLOWS.min(self.divisor)
        } else {
            self.flows
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            (1..=MAX_BUCKETS).contains(&self.divisor) && self.divisor.is_power_of_two(),
            "divisor",
            self.divisor as f64,
            "must be a power of two in 1..=65536",
        )?;
        ensure(
            self.flows <= MAX_FLOWS,
            "flows",
            self.flows as f64,
            "must be in 0..=65408 (0 = min(128, divisor))",
        )?;
        ensure(
            self.flows <= self.divisor,
            "flows",
            self.flows as f64,
            &format!(
                "must be at most divisor ({}): a flow queue is a hash bucket",
                self.divisor
            ),
        )?;
        ensure(
            (1..=65_535).contains(&self.depth),
            "depth",
            self.depth as f64,
            "must be in 1..=65535",
        )?;
        ensure(
            self.limit != 1,
            "limit",
            1.0,
            "must be 0 (the link's buffer) or >= 2 (Linux rejects 1)",
        )?;
        let most = self.depth as u64 * self.max_flows() as u64;
        ensure(
            self.limit as u64 <= most,
            "limit",
            self.limit as f64,
            &format!(
                "must be at most depth x flows ({} x {} = {most} packets)",
                self.depth,
                self.max_flows()
            ),
        )?;
        if self.perturb > Duration::ZERO {
            crate::algorithm::check_period("perturb", self.perturb)?;
        }
        check_quantum(self.quantum)
    }
}

/// Running SFQ.
#[derive(Debug, Clone)]
pub struct Sfq<P> {
    cfg: SfqConfig,
    fq: FlowQueues<P>,
    quantum: i64,
    limits: Limits,
    /// Most backlogged flows (config `flows`, at most `divisor` and the packet limit).
    max_flows: u32,
    link_limit: QueueLimit,
    link: LinkInfo,
    stats: QueueStats,
    timer: Option<Periodic>,
    rng: Rng,
    perturbations: u64,
}

flat_qdisc_spec!(Sfq, SfqConfig);

impl<P: Packet> QdiscOps<P> for Sfq<P> {
    /// A queue running `cfg` with the link's hard limit `limit` on `link`; `seed` starts the
    /// stream of hash keys.
    fn new(
        cfg: &SfqConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let mut q = Sfq {
            cfg: *cfg,
            fq: FlowQueues::new(cfg.divisor, hash_key(seed), 0, 0),
            quantum: 0,
            limits: Limits::new(limit, 0),
            max_flows: 0,
            link_limit: limit,
            link,
            stats: QueueStats::default(),
            timer: None,
            rng: Rng::new(hash_key(seed ^ 0x5f9)),
            perturbations: 0,
        };
        q.apply(cfg);
        q.fq = FlowQueues::new(
            cfg.divisor,
            hash_key(seed),
            q.limits.pool_hint(),
            q.limits.pool_max(),
        );
        Ok(q)
    }

    /// Offers a packet (module docs); a packet dropped to make room goes to `on_drop`.
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let size = pkt.size_bytes();
        self.stats.received += 1;
        self.stats.received_bytes += size as u64;
        let b = self.fq.bucket_of(pkt.flow_hash());
        let n = self.fq.pkts(b);
        if n == 0 && self.fq.active() >= self.max_flows {
            self.stats.dropped_limit += 1;
            return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
        }
        if n >= self.cfg.depth {
            if !self.cfg.headdrop {
                self.stats.dropped_limit += 1;
                return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
            }
            let head = self.fq.pop_head(now, b).expect("a full flow has a head");
            self.stats.dropped_victim += 1;
            on_drop(head, DropReason::ForcedLimit);
        }
        pkt.set_enqueued_at(now);
        self.fq.push(now, b, pkt);
        if self.fq.list_of(b) == List::None {
            // A new flow: behind the others in the round, with a full allotment.
            self.fq.set_deficit(b, self.quantum);
            self.fq.push_back(List::Old, b);
        }
        let mut arrival = None;
        while self
            .limits
            .exceeded(self.fq.len_pkts(), self.fq.len_bytes())
        {
            let Some((p, is_arrival)) = self.drop_one(now, b) else {
                break;
            };
            if is_arrival {
                arrival = Some(p);
            } else {
                self.stats.dropped_victim += 1;
                on_drop(p, DropReason::ForcedLimit);
            }
        }
        match arrival {
            Some(p) => {
                self.stats.dropped_limit += 1;
                Enqueue::Dropped(p, DropReason::ForcedLimit)
            }
            None => {
                self.stats.enqueued += 1;
                Enqueue::Queued
            }
        }
    }

    /// The next packet by deficit round robin (module docs).
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, _on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        loop {
            let a = self.fq.front(List::Old)?;
            let allot = self.fq.deficit(a);
            if allot <= 0 {
                self.fq.set_deficit(a, allot + self.quantum);
                self.fq.move_front_to_old(List::Old);
                continue;
            }
            let Some(p) = self.fq.pop_head(now, a) else {
                // Emptied by drops since it was last served.
                self.fq.pop_front(List::Old);
                continue;
            };
            let size = p.size_bytes();
            if self.fq.pkts(a) == 0 {
                self.fq.pop_front(List::Old);
            } else {
                self.fq.set_deficit(a, allot - size as i64);
            }
            self.stats.dequeued += 1;
            self.stats.dequeued_bytes += size as u64;
            return Some(p);
        }
    }

    /// Next perturbation, if `perturb` is set.
    fn poll_at(&self) -> Option<Instant> {
        self.timer.map(|t| t.next())
    }

    /// Perturbs the hash if due (new key, every queued packet re-hashed).
    fn on_timer(&mut self, now: Instant) {
        if let Some(t) = &mut self.timer {
            if t.fire(now) {
                let key = self.rng.next_u64();
                self.fq.rehash(now, key, self.quantum);
                self.perturbations += 1;
            }
        }
    }

    /// The current configuration.
    fn config(&self) -> SfqConfig {
        self.cfg
    }

    /// Changes one parameter while running (`divisor` is fixed); queued packets are kept.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
        let mut next = self.cfg;
        next.set_param(key, value)?;
        if next.divisor != self.cfg.divisor {
            return Err(ConfigError::invalid(
                "divisor",
                value,
                "is fixed once the queue is built",
            ));
        }
        self.apply(&next);
        Ok(())
    }

    crate::flowq::flow_queue_ops!(flows);

    /// The packet pool and bucket records (SFQ keeps no per-flow AQM state).
    fn memory_bytes(&self) -> usize {
        self.fq.memory_bytes()
    }
}

impl<P: Packet> Sfq<P> {
    /// Derived constants of `cfg` (Linux `sfq_change`'s clamps).
    fn apply(&mut self, cfg: &SfqConfig) {
        let mut limits = Limits::new(self.link_limit, cfg.limit);
        let max_flows = cfg.max_flows();
        limits.pkts = limits.pkts.min(cfg.depth as u64 * max_flows as u64);
        self.max_flows = max_flows
            .min(limits.pkts.min(u32::MAX as u64) as u32)
            .max(1);
        self.limits = limits;
        self.fq.set_pool_max(limits.pool_max());
        self.quantum = quantum_of(cfg.quantum, self.link);
        self.timer = match (self.timer, cfg.perturb > Duration::ZERO) {
            (Some(mut t), true) => {
                t.set_period(cfg.perturb);
                Some(t)
            }
            (None, true) => Some(Periodic::new(cfg.perturb)),
            (_, false) => None,
        };
        self.cfg = *cfg;
    }
    /// Drops one packet to make room (Linux `sfq_drop`); returns it and whether it is the
    /// arrival (the tail of bucket `arrival_b`).
    fn drop_one(&mut self, now: Instant, arrival_b: usize) -> Option<(P, bool)> {
        let x = self.fq.fattest_by_packets_latest()?;
        if self.fq.pkts(x) > 1 {
            let p = if self.cfg.headdrop {
                self.fq.pop_head(now, x)?
            } else {
                self.fq.pop_tail(now, x)?
            };
            return Some((p, x == arrival_b && !self.cfg.headdrop));
        }
        // Every flow holds one packet: drop the flow next in the round.
        let x = self.fq.pop_front(List::Old)?;
        let p = self.fq.pop_head(now, x)?;
        Some((p, x == arrival_b))
    }
    /// Hash perturbations so far.
    pub fn perturbations(&self) -> u64 {
        self.perturbations
    }
    /// The flow queues (inspection and tests).
    pub fn queues(&self) -> &FlowQueues<P> {
        &self.fq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{distinct_bucket_flows, ms, no_drop, TestPacket};
    use crate::time::BitsPerSec;

    fn sfq(cfg: SfqConfig, limit: u32) -> Sfq<TestPacket> {
        let link = LinkInfo {
            rate: BitsPerSec::from_mbps(10),
            mtu: 1500,
        };
        Sfq::new(&cfg, QueueLimit::Packets(limit), link, 3).unwrap()
    }

    /// Linux sfq_dequeue by hand, quantum 1500 B. Flow A: 1000, 1000, 1000 B; flow B: 600 B
    /// x 4. Ring [A, B] (A first: it arrived first), allots 1500.
    /// A 1500 -> A0 (500), A 500 -> A1 (-500), A -500: +1500 = 1000, next;
    /// B 1500 -> B0 (900), B1 (300), B2 (-300), B -300: +1500 = 1200, next;
    /// A 1000 -> A2, A empty: leaves the ring; B 1200 -> B3, empty.
    #[test]
    fn round_robin_with_allotments_by_hand() {
        let mut q = sfq(
            SfqConfig {
                quantum: 1500,
                ..Default::default()
            },
            100,
        );
        let f = distinct_bucket_flows(q.queues(), 2);
        for i in 0..3 {
            q.enqueue(
                Instant::ZERO,
                TestPacket::new(i, 1000).flow(f[0]),
                &mut no_drop(),
            );
        }
        for i in 10..14 {
            q.enqueue(
                Instant::ZERO,
                TestPacket::new(i, 600).flow(f[1]),
                &mut no_drop(),
            );
        }
        let mut order = Vec::new();
        while let Some(p) = q.dequeue(ms(1), &mut no_drop()) {
            order.push(p.id);
        }
        assert_eq!(order, vec![0, 1, 10, 11, 12, 2, 13]);
        assert!(q.queues().list_is_empty(List::Old));
    }

    /// sfq_drop by hand: limit 6. A holds 3 packets, B 2, then B's third packet makes 6 and
    /// C's first makes 7 > 6: the longest flows are A and B (3 each); B changed last, so B's
    /// tail (its newest packet) is dropped. Next, a 4th A packet: A is longest -> its own
    /// tail, the arrival, is dropped. With headdrop, A's head goes instead.
    #[test]
    fn overflow_drops_from_longest_flow_by_hand() {
        for headdrop in [false, true] {
            let mut q = sfq(
                SfqConfig {
                    headdrop,
                    ..Default::default()
                },
                6,
            );
            let f = distinct_bucket_flows(q.queues(), 3);
            let t = Instant::ZERO;
            for i in 0..3 {
                q.enqueue(t, TestPacket::new(i, 100).flow(f[0]), &mut no_drop());
            }
            for i in 10..13 {
                q.enqueue(t, TestPacket::new(i, 100).flow(f[1]), &mut no_drop());
            }
            let mut v = Vec::new();
            let r = q.enqueue(t, TestPacket::new(20, 100).flow(f[2]), &mut |p, _| {
                v.push(p.id)
            });
            assert!(matches!(r, Enqueue::Queued));
            assert_eq!(v, vec![if headdrop { 10 } else { 12 }]);
            let mut v = Vec::new();
            let r = q.enqueue(t, TestPacket::new(3, 100).flow(f[0]), &mut |p, _| {
                v.push(p.id)
            });
            if headdrop {
                assert!(matches!(r, Enqueue::Queued));
                assert_eq!(v, vec![0]);
            } else {
                assert!(matches!(r, Enqueue::Dropped(p, _) if p.id == 3));
                assert!(v.is_empty());
            }
            let s = q.stats();
            assert_eq!(s.received, s.dropped_enqueue() + s.enqueued);
            assert_eq!(q.len_pkts(), 6);
        }
    }

    /// Depth and flow-count limits (Linux maxdepth, maxflows).
    #[test]
    fn depth_and_flow_limits() {
        let mut q = sfq(
            SfqConfig {
                depth: 2,
                flows: 2,
                ..Default::default()
            },
            100,
        );
        let f = distinct_bucket_flows(q.queues(), 3);
        let t = Instant::ZERO;
        q.enqueue(t, TestPacket::new(0, 100).flow(f[0]), &mut no_drop());
        q.enqueue(t, TestPacket::new(1, 100).flow(f[0]), &mut no_drop());
        assert!(matches!(
            q.enqueue(t, TestPacket::new(2, 100).flow(f[0]), &mut no_drop()),
            Enqueue::Dropped(..)
        ));
        q.enqueue(t, TestPacket::new(3, 100).flow(f[1]), &mut no_drop());
        // A third flow: no free slot.
        assert!(matches!(
            q.enqueue(t, TestPacket::new(4, 100).flow(f[2]), &mut no_drop()),
            Enqueue::Dropped(..)
        ));
        // limit = min(100, depth x flows) = 4.
        assert_eq!(q.limits.pkts, 4);
    }

    /// Where Linux's sfq_change silently lowers `flows` to the divisor and `limit` to
    /// depth x flows, aqmlab refuses with the key and value; `flows = 0` is Linux's default
    /// (128, at most the divisor); `perturb` below 1 µs is refused (a timer firing more than
    /// once per simulated microsecond).
    #[test]
    fn flows_limit_and_perturb_checks() {
        let check = |cfg: SfqConfig| cfg.validate().map_err(|e| e.to_string());
        let e = check(SfqConfig {
            divisor: 64,
            flows: 128,
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            e.contains("'flows' = 128") && e.contains("divisor (64)"),
            "{e}"
        );
        assert_eq!(
            SfqConfig {
                divisor: 16,
                ..Default::default()
            }
            .max_flows(),
            16
        );
        assert_eq!(SfqConfig::default().max_flows(), 128);
        let e = check(SfqConfig {
            depth: 10,
            flows: 4,
            limit: 41,
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            e.contains("'limit' = 41") && e.contains("40 packets"),
            "{e}"
        );
        check(SfqConfig {
            depth: 10,
            flows: 4,
            limit: 40,
            ..Default::default()
        })
        .unwrap();
        let e = check(SfqConfig {
            perturb: Duration(1),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains("'perturb' = 0.000000001"), "{e}");
        check(SfqConfig {
            perturb: Duration(1_000),
            ..Default::default()
        })
        .unwrap();
    }

    /// Perturbation: deterministic for a seed (the same key sequence and rehash), different
    /// for another seed; queued packets are all kept and keep their per-flow order.
    #[test]
    fn perturbation_is_seeded_and_keeps_packets() {
        let run = |seed: u64| {
            let link = LinkInfo::new(BitsPerSec::from_mbps(10));
            let cfg = SfqConfig {
                perturb: Duration::from_millis(100),
                divisor: 16,
                ..Default::default()
            };
            let mut q =
                Sfq::<TestPacket>::new(&cfg, QueueLimit::Packets(1000), link, seed).unwrap();
            let mut buckets = Vec::new();
            let mut out = Vec::new();
            let mut id = 0;
            for k in 0..50u64 {
                let now = ms(k * 10);
                if let Some(t) = q.poll_at() {
                    if t <= now {
                        q.on_timer(now);
                    }
                }
                for f in 0..8u64 {
                    q.enqueue(now, TestPacket::new(id, 500).flow(f), &mut no_drop());
                    id += 1;
                }
                for _ in 0..6 {
                    out.push(q.dequeue(now, &mut no_drop()).unwrap());
                }
                buckets.push(q.queues().bucket_of(0));
            }
            while let Some(p) = q.dequeue(ms(600), &mut no_drop()) {
                out.push(p);
            }
            (buckets, out, q.perturbations())
        };
        let (b1, o1, n1) = run(1);
        let (b2, o2, _) = run(1);
        let (b3, _, _) = run(2);
        assert_eq!((&b1, &o1), (&b2, &o2));
        assert_ne!(b1, b3);
        // A perturbation every 100 ms over 490 ms, and flow 0 changed bucket at some of them.
        assert_eq!(n1, 4);
        assert!(b1.windows(2).any(|w| w[0] != w[1]));
        assert_eq!(o1.len(), 400);
        for f in 0..8u64 {
            let ids: Vec<u64> = o1.iter().filter(|p| p.flow == f).map(|p| p.id).collect();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "flow {f} reordered");
        }
    }
}
