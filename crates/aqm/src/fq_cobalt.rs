//! FQ-COBALT — flow queueing with COBALT per flow queue (ns-3 `FqCobaltQueueDisc`;
//! docs/aqm/fq_cobalt.md).
//!
//! FQ-CoDel's scheduler (RFC 8290 §4: hashed flow queues, a deficit round robin with byte
//! quantum `quantum` over new flows before old flows, on the shared [`crate::flowq`]) with
//! COBALT ([`crate::cobalt`]) instead of CoDel in each flow queue, as ns-3's
//! `FqCobaltQueueDisc` builds it: one `CobaltQueueDisc` per flow queue with the qdisc's
//! `Target`, `Interval`, `UseEcn`, `Pdrop` increment/decrement and `BlueThreshold`.
//!
//! **Enqueue** (ns-3 `FqCobaltQueueDisc::DoEnqueue`): stamp the time; a flow queue on no list
//! joins the tail of new_flows with `deficit = quantum`. Each flow's COBALT queue has the
//! whole qdisc's limit as its own (ns-3 gives every child the parent's `MaxSize`): an arrival
//! that would take one flow queue beyond it is dropped there and calls COBALT's
//! [`queue_full`] on that flow (BLUE's increment). Then, if the qdisc holds more than its limit,
//! ns-3's `FqCobaltDrop`: the flow with the largest byte backlog (ties to the lowest index)
//! loses head packets until `drop_batch_size` are gone or at least half of its bytes (at
//! least one packet). Unlike Linux fq_codel, the flow's `count` is not raised, and unlike
//! CAKE no `queue_full` is called. The arrival is handed back as dropped only if the batch
//! reached it; the others are victims ([`DropReason::ForcedLimit`]).
//!
//! **Dequeue** (ns-3 `FqCobaltQueueDisc::DoDequeue` over `CobaltQueueDisc::DoDequeue`):
//! the DRR picks a flow as FQ-CoDel's does; its COBALT examines heads with [`should_drop`]
//! (`bulk_flows` = 1, as ns-3 has no bulk-flow count) until one is kept; a flow found empty
//! calls [`queue_empty`] (BLUE's decrement, count decay) and leaves for old_flows or the lists,
//! as in FQ-CoDel.
//!
//! Each flow's COBALT starts as ns-3's does ([`CobaltVars::ns3`]) and keeps its state while
//! the flow is idle. The hash is aqmlab's seeded one (ns-3 hashes the 5-tuple with a
//! perturbation; which flows share a bucket differs); no set-associative hash, no
//! `CeThreshold`/`UseL4s`.
//!
//! Activations: one per [`should_drop`] run (each dequeued packet examined).

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::cobalt::{check_common, queue_empty, queue_full, should_drop, CobaltParams, CobaltVars};
use crate::error::{ensure, ConfigError};
use crate::flowq::{check_flows, hash_key, quantum_of, FlowQueues, Limits, List, QUANTUM_MAX};
use crate::packet::Packet;
use crate::params::{aqm_config, Params};
use crate::qdisc::ops::{flat_qdisc_spec, QdiscOps};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

aqm_config! {
    /// FQ-COBALT configuration (defaults from ns-3 `FqCobaltQueueDisc`).
    pub struct FqCobaltConfig as "fq_cobalt" {
        /// Number of flow queues (hash buckets), 1..65536. Default 1024 (ns-3 Flows).
        /// Fixed once the queue is built.
        pub flows: u32 = 1024, "queues";
        /// DRR quantum, bytes a flow may send per round. 0 = the link's MTU (default; ns-3
        /// takes the device's MTU). At most 1048576.
        pub quantum: u32 = 0, "bytes";
        /// Packet limit over all flow queues (also each flow's COBALT limit). 0 = the link's
        /// buffer (default). ns-3's default is 10240 packets.
        pub limit: u32 = 0, "packets";
        /// COBALT TARGET of every flow queue, seconds. Default 0.005 (ns-3 Target).
        pub target: Duration = crate::codel::TARGET, "s";
        /// COBALT INTERVAL of every flow queue, seconds, below 4.294967296. Default 0.1
        /// (ns-3 Interval).
        pub interval: Duration = crate::codel::INTERVAL, "s";
        /// Mark CE instead of dropping ECN-capable packets on CoDel's signal (BLUE always
        /// drops). Default true (ns-3 UseEcn).
        pub ecn: bool = true, "bool";
        /// BLUE's increment of p_drop, probability. Default 1/256 (ns-3 Increment).
        pub p_inc: f64 = 1.0 / 256.0, "probability";
        /// BLUE's decrement of p_drop, probability. Default 1/4096 (ns-3 Decrement).
        pub p_dec: f64 = 1.0 / 4096.0, "probability";
        /// Sojourn above which a dequeued packet raises its flow's p_drop, seconds; 0 = off
        /// (Linux). Default 0.4 (ns-3 BlueThreshold).
        pub blue_threshold: Duration = Duration::from_millis(400), "s";
        /// Most packets dropped from the fattest flow per overflow (the batch also stops once
        /// half of that flow's bytes are gone). Default 64 (ns-3 DropBatchSize).
        pub drop_batch_size: u32 = 64, "packets";
    }
}

impl FqCobaltConfig {
    fn check(&self) -> Result<(), ConfigError> {
        check_flows("flows", self.flows)?;
        ensure(
            self.quantum <= QUANTUM_MAX,
            "quantum",
            self.quantum as f64,
            "must be at most 1048576 bytes (0 = the link's MTU)",
        )?;
        check_common(
            self.target,
            self.interval,
            self.p_inc,
            self.p_dec,
            Duration::ZERO,
        )?;
        ensure(
            self.drop_batch_size >= 1,
            "drop_batch_size",
            self.drop_batch_size as f64,
            "must be >= 1",
        )
    }

    /// The COBALT parameters every flow queue shares.
    pub fn params(&self) -> CobaltParams {
        crate::cobalt::CobaltConfig {
            target: self.target,
            interval: self.interval,
            ecn: self.ecn,
            p_inc: self.p_inc,
            p_dec: self.p_dec,
            blue_threshold: self.blue_threshold,
            mtu_time: Duration::ZERO,
        }
        .params()
    }
}

/// Running FQ-COBALT.
#[derive(Debug, Clone)]
pub struct FqCobalt<P> {
    cfg: FqCobaltConfig,
    fq: FlowQueues<P>,
    vars: Vec<CobaltVars>,
    prm: CobaltParams,
    quantum: i64,
    limits: Limits,
    link_limit: QueueLimit,
    link: LinkInfo,
    stats: QueueStats,
    rng: Rng,
    activations: u64,
}

flat_qdisc_spec!(FqCobalt, FqCobaltConfig);

impl<P: Packet> QdiscOps<P> for FqCobalt<P> {
    /// A queue running `cfg` with the link's hard limit `limit` on `link`; `seed` draws the
    /// hash perturbation and BLUE's random stream.
    fn new(
        cfg: &FqCobaltConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let limits = Limits::new(limit, cfg.limit);
        Ok(FqCobalt {
            cfg: *cfg,
            fq: FlowQueues::new(
                cfg.flows,
                hash_key(seed),
                limits.pool_hint(),
                limits.pool_max(),
            ),
            vars: vec![CobaltVars::ns3(); cfg.flows as usize],
            prm: cfg.params(),
            quantum: quantum_of(cfg.quantum, link),
            limits,
            link_limit: limit,
            link,
            stats: QueueStats::default(),
            rng: Rng::new(seed),
            activations: 0,
        })
    }

    /// Offers a packet (module docs); victims of the drop batch go to `on_drop`.
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
        // The flow's own COBALT queue is full (its limit is the qdisc's): queue_full.
        if self
            .limits
            .exceeded(self.fq.pkts(b) as usize + 1, self.fq.bytes(b) + size as u64)
        {
            queue_full(&mut self.vars[b], &self.prm, now);
            self.stats.dropped_limit += 1;
            return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
        }
        pkt.set_enqueued_at(now);
        self.fq.push(now, b, pkt);
        if self.fq.list_of(b) == List::None {
            self.fq.push_back(List::New, b);
            self.fq.set_deficit(b, self.quantum);
        }
        if !self
            .limits
            .exceeded(self.fq.len_pkts(), self.fq.len_bytes())
        {
            self.stats.enqueued += 1;
            return Enqueue::Queued;
        }
        let mut arrival = None;
        while self
            .limits
            .exceeded(self.fq.len_pkts(), self.fq.len_bytes())
        {
            let Some(fat) = self.fq.fattest_by_bytes() else {
                break;
            };
            // ns-3 FqCobaltDrop: drop half of the fat flow's backlog, at most a batch.
            let stats = &mut self.stats;
            let (_, a) = self
                .fq
                .drop_half_of(now, fat, b, self.cfg.drop_batch_size, &mut |p| {
                    stats.dropped_victim += 1;
                    on_drop(p, DropReason::ForcedLimit);
                });
            arrival = arrival.or(a);
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

    /// The next packet (module docs); COBALT's drops go to `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        loop {
            let (list, b) = self.fq.next_with_credit(self.quantum)?;
            let d = self.fq.deficit(b);
            let mut got = None;
            while let Some(mut p) = self.fq.pop_head(now, b) {
                self.activations += 1;
                let v = &mut self.vars[b];
                if should_drop(v, &self.prm, now, &mut p, 1, &mut self.rng) {
                    self.stats.dropped_dequeue += 1;
                    on_drop(p, DropReason::CodelDequeue);
                } else {
                    if v.ecn_marked {
                        self.stats.marked += 1;
                    }
                    got = Some(p);
                    break;
                }
            }
            self.stats.activations = self.activations;
            match got {
                None => {
                    // ns-3 CobaltQueueDisc::DoDequeue on an empty queue.
                    queue_empty(&mut self.vars[b], &self.prm, now);
                    self.fq.retire_empty_front(list);
                }
                Some(p) => {
                    let size = p.size_bytes();
                    self.fq.set_deficit(b, d - size as i64);
                    self.stats.dequeued += 1;
                    self.stats.dequeued_bytes += size as u64;
                    return Some(p);
                }
            }
        }
    }

    /// The current configuration.
    fn config(&self) -> FqCobaltConfig {
        self.cfg
    }

    /// Changes one parameter while running; flow states and queued packets are kept. `flows`
    /// cannot change.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
        let mut next = self.cfg;
        next.set_param(key, value)?;
        if next.flows != self.cfg.flows {
            return Err(ConfigError::invalid(
                "flows",
                value,
                "is fixed once the queue is built",
            ));
        }
        self.cfg = next;
        self.prm = next.params();
        self.quantum = quantum_of(next.quantum, self.link);
        self.limits = Limits::new(self.link_limit, next.limit);
        self.fq.set_pool_max(self.limits.pool_max());
        Ok(())
    }

    crate::flowq::flow_queue_ops!(flows);

    /// The packet pool, bucket records and per-flow state.
    fn memory_bytes(&self) -> usize {
        self.fq.memory_bytes() + self.vars.capacity() * std::mem::size_of::<CobaltVars>()
    }
}

impl<P: Packet> FqCobalt<P> {
    /// The flow queues (inspection and tests).
    pub fn queues(&self) -> &FlowQueues<P> {
        &self.fq
    }
    /// COBALT state of flow queue `b`.
    pub fn cobalt_vars(&self, b: usize) -> Option<&CobaltVars> {
        self.vars.get(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cobalt::{P_DEC, P_INC};
    use crate::testutil::{distinct_bucket_flows, ms, no_drop, TestPacket};
    use crate::time::BitsPerSec;

    fn fq(cfg: FqCobaltConfig, limit: u32) -> FqCobalt<TestPacket> {
        let link = LinkInfo::new(BitsPerSec::from_mbps(10));
        FqCobalt::new(&cfg, QueueLimit::Packets(limit), link, 7).unwrap()
    }

    /// One flow holding the whole limit: its COBALT queue is full, the arrival is dropped and
    /// BLUE's p_drop rises by p_inc (10 ms > target since time 0). Serving it empty at 20 ms
    /// and finding it empty at 30 ms (> target after 10 ms) lowers p_drop by p_dec.
    #[test]
    fn a_full_flow_queue_drives_blue() {
        let mut q = fq(FqCobaltConfig::default(), 3);
        let f = distinct_bucket_flows(q.queues(), 1)[0];
        let b = q.queues().bucket_of(f);
        for i in 0..3 {
            let r = q.enqueue(
                ms(10),
                TestPacket::at(i, 1000, ms(10)).flow(f),
                &mut no_drop(),
            );
            assert_eq!(r, Enqueue::Queued);
        }
        let r = q.enqueue(
            ms(10),
            TestPacket::at(3, 1000, ms(10)).flow(f),
            &mut no_drop(),
        );
        assert!(matches!(r, Enqueue::Dropped(p, DropReason::ForcedLimit) if p.id == 3));
        assert_eq!(q.cobalt_vars(b).unwrap().p_drop, P_INC);
        // p_drop 1/256 may drop a packet at dequeue; count what leaves.
        let mut out = 0;
        let mut dropped = 0;
        while q.dequeue(ms(20), &mut |_p, _r| dropped += 1).is_some() {
            out += 1;
        }
        assert_eq!(out + dropped, 3);
        // The dequeue at 20 ms found the flow empty: 20 - 10 > 5 ms, p_dec applied.
        assert_eq!(q.cobalt_vars(b).unwrap().p_drop, P_INC - P_DEC);
        let s = q.stats();
        assert_eq!(s.received, s.dropped_limit + s.dequeued + s.dropped_dequeue);
    }

    /// Flow isolation: flow A keeps a standing queue (sojourn 20 ms), flow B's packets arrive
    /// just before they are served. COBALT drops only A's packets, from 100 ms after A went
    /// over target on (ns-3's start: drop_next = now + 99 999 999 ns).
    #[test]
    fn cobalt_per_flow_queue() {
        let mut q = fq(
            FqCobaltConfig {
                ecn: false,
                ..Default::default()
            },
            10_000,
        );
        let f = distinct_bucket_flows(q.queues(), 2);
        let (a, b) = (f[0], f[1]);
        let mut dropped_flows = vec![];
        let mut id = 0;
        for t in 0..400u64 {
            // A: one arrival per ms, served one per 2 ms (each flow gets half the link): A's
            // queue and sojourn grow; B: one arrival per 2 ms, served at once.
            id += 1;
            q.enqueue(
                ms(t),
                TestPacket::at(id, 1000, ms(t)).flow(a),
                &mut no_drop(),
            );
            if t % 2 == 0 {
                id += 1;
                q.enqueue(
                    ms(t),
                    TestPacket::at(id, 1000, ms(t)).flow(b),
                    &mut no_drop(),
                );
            }
            q.dequeue(ms(t), &mut |p: TestPacket, _r| dropped_flows.push(p.flow));
        }
        assert!(!dropped_flows.is_empty());
        assert!(dropped_flows.iter().all(|&x| x == a));
        let ba = q.queues().bucket_of(a);
        assert!(q.cobalt_vars(ba).unwrap().count >= 2);
    }

    /// ns-3 FqCobaltDrop: over the limit, the fattest flow (A, 4 x 1000 B) loses head
    /// packets until half its bytes are gone (2 packets); its count is not raised.
    #[test]
    fn overflow_drops_half_of_the_fattest() {
        let mut q = fq(FqCobaltConfig::default(), 5);
        let f = distinct_bucket_flows(q.queues(), 2);
        for i in 0..4 {
            q.enqueue(
                ms(0),
                TestPacket::at(i, 1000, ms(0)).flow(f[0]),
                &mut no_drop(),
            );
        }
        q.enqueue(
            ms(0),
            TestPacket::at(4, 1000, ms(0)).flow(f[1]),
            &mut no_drop(),
        );
        let mut victims = vec![];
        let r = q.enqueue(
            ms(0),
            TestPacket::at(5, 1000, ms(0)).flow(f[1]),
            &mut |p, _r| victims.push(p.id),
        );
        assert_eq!(r, Enqueue::Queued);
        assert_eq!(victims, vec![0, 1]);
        assert_eq!(q.len_pkts(), 4);
        let ba = q.queues().bucket_of(f[0]);
        assert_eq!(q.cobalt_vars(ba).unwrap().count, 0);
    }

    #[test]
    fn bad_config_is_refused() {
        for (k, v) in [
            ("flows", 0.0),
            ("interval", 5.0),
            ("p_inc", 2.0),
            ("drop_batch_size", 0.0),
        ] {
            let mut c = FqCobaltConfig::default();
            let err = c.set_param(k, v).unwrap_err();
            assert!(err.to_string().contains(k), "{k}: {err}");
        }
    }
}
