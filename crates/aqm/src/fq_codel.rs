//! FQ-CoDel — Flow Queue CoDel (RFC 8290; Linux `net/sched/sch_fq_codel.c`;
//! docs/aqm/fq_codel.md).
//!
//! Packets are hashed ([`crate::flowq`]) into `flows` flow queues (1024); each has its own
//! CoDel state ([`CodelVars`], run by the same [`CodelVars::dequeue`] as the `codel` AQM, as
//! Linux's `fq_codel_dequeue` calls `codel_dequeue` per flow). A deficit round robin with
//! byte quantum `quantum` serves two lists, new flows before old flows (RFC 8290 §4.2).
//!
//! **Enqueue** (Linux `fq_codel_enqueue`): stamp the time, append to the flow queue; a flow
//! queue on no list joins the tail of new_flows with `deficit = quantum`. Then, if the qdisc
//! holds more than its limit (packets, or bytes for a byte-limited link), `fq_codel_drop`:
//! find the flow with the largest byte backlog (ties to the lowest index) and drop packets
//! from its head until `drop_batch_size` (64) packets are gone or at least half of its
//! backlog (`len >= backlog / 2`, checked after each drop); that flow's CoDel `count` grows
//! by the number dropped ("tell codel to increase its signal strength"). The arrival is
//! handed back as dropped only if the batch reached it (it is its flow's tail); the other
//! packets are victims ([`DropReason::ForcedLimit`], counted in `dropped_victim`). Linux
//! drops one batch; we repeat batches while still over the limit (only a byte limit with a
//! large arrival can need a second one).
//!
//! **Dequeue** (Linux `fq_codel_dequeue`): take the first flow of new_flows, else of
//! old_flows; if its `deficit <= 0`, add `quantum` and move it to the tail of old_flows, and
//! start again; else run CoDel on it. If CoDel returns nothing (the flow is empty), a flow
//! from new_flows moves to the tail of old_flows when old_flows is non-empty (so that a flow
//! cannot stay "new" by emptying, RFC 8290 §4.2), otherwise the flow leaves the lists;
//! start again. Else `deficit -= size` and the packet is sent.
//!
//! **CoDel per flow**: RFC 8289 rules ([`CodelRules::Rfc8289`], which are Linux's), with
//! Linux's choice for the "small queue" test: no drop while the **whole qdisc's** backlog
//! after the dequeue is at most one MTU (`codel_should_drop` is passed `sch->qstats.backlog`).
//! `ce_threshold` (Linux): a delivered ECT packet whose sojourn exceeds it is CE-marked.
//!
//! Differences from Linux, all below a microsecond or outside the model: time is integer ns
//! (Linux CoDel counts 1024-ns units, so its 5 ms target is 4 999 168 ns) and the control law
//! uses an exact square root (see [`crate::codel`]); the first-above-time test is `now >=`
//! (RFC 8289) where Linux has a strict `>`; no `memory_limit` (Linux counts `skb->truesize`,
//! which aqmlab's packets do not have; a byte-limited link plays that part); no external
//! classifier; the hash is our seeded one ([`crate::flowq`]).
//!
//! Activations: one per CoDel run on a flow queue that found a packet (summed over flows).

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::codel::{ce_threshold, CodelParams, CodelQueue, CodelRules, CodelVars, ControlLaw};
use crate::error::{ensure, ConfigError};
use crate::flowq::{
    check_flows, hash_key, quantum_at_least_min, FlowQueues, Limits, List, QUANTUM_MAX,
};
use crate::packet::Packet;
use crate::params::{aqm_config, Params};
use crate::qdisc::ops::{flat_qdisc_spec, QdiscOps};
use crate::time::{Duration, Instant};

aqm_config! {
    /// FQ-CoDel configuration (RFC 8290; defaults from Linux `fq_codel_init`).
    pub struct FqCodelConfig as "fq_codel" {
        /// Number of flow queues (hash buckets), 1..65536. Default 1024 (Linux
        /// fq_codel_init; RFC 8290 §5.1). Fixed once the queue is built.
        pub flows: u32 = 1024, "queues";
        /// DRR quantum, bytes a flow may send per round. 0 = the link's MTU (default:
        /// 1500 B, one full-size IP packet; Linux uses psched_mtu = 1514 B, the same packet
        /// with its 14-byte Ethernet header, which aqmlab's IP-sized packets do not count).
        /// At most 1048576 (Linux FQ_CODEL_QUANTUM_MAX); a value below 256 is raised to 256,
        /// as Linux's fq_codel_change does (max(256U, quantum)).
        pub quantum: u32 = 0, "bytes";
        /// Packet limit over all flow queues. 0 = the link's buffer (default). Linux's
        /// default is 10240 packets.
        pub limit: u32 = 0, "packets";
        /// CoDel TARGET of every flow queue, seconds. Default 0.005 (RFC 8290 §5.2).
        pub target: Duration = crate::codel::TARGET, "s";
        /// CoDel INTERVAL of every flow queue, seconds. Default 0.1 (RFC 8290 §5.2).
        pub interval: Duration = crate::codel::INTERVAL, "s";
        /// Mark CE instead of dropping ECN-capable packets. Default true (Linux: "ECN
        /// capability is on by default").
        pub ecn: bool = true, "bool";
        /// CE-mark every delivered ECT packet whose sojourn exceeds this, seconds (Linux
        /// ce_threshold, for DCTCP-style senders). 0 = off (default).
        pub ce_threshold: Duration = Duration::ZERO, "s";
        /// Most packets dropped from the fattest flow per overflow (Linux drop_batch_size;
        /// the batch also stops once half of that flow's bytes are gone). Default 64.
        pub drop_batch_size: u32 = 64, "packets";
        /// Arithmetic of CoDel's control law interval/sqrt(count): "linux" (default;
        /// Linux's 16-bit reciprocal square root, one Newton step per count) or "rfc"
        /// (RFC 8289's exact square root). See docs/aqm/codel.md.
        pub control_law: ControlLaw = ControlLaw::Linux, "linux|rfc";
    }
}

impl FqCodelConfig {
    fn check(&self) -> Result<(), ConfigError> {
        check_flows("flows", self.flows)?;
        ensure(
            self.quantum <= QUANTUM_MAX,
            "quantum",
            self.quantum as f64,
            "must be at most 1048576 bytes (Linux FQ_CODEL_QUANTUM_MAX; 0 = the link's MTU)",
        )?;
        ensure(
            self.target > Duration::ZERO,
            "target",
            self.target.as_secs_f64(),
            "must be > 0",
        )?;
        ensure(
            self.interval > Duration::ZERO,
            "interval",
            self.interval.as_secs_f64(),
            "must be > 0",
        )?;
        ensure(
            self.drop_batch_size >= 1,
            "drop_batch_size",
            self.drop_batch_size as f64,
            "must be >= 1",
        )
    }
}

/// One flow queue seen by CoDel: pops from the bucket, Linux's small-queue test on the whole
/// qdisc's backlog.
pub(crate) struct FlowQueue<'a, P> {
    pub fq: &'a mut FlowQueues<P>,
    pub b: usize,
    pub now: Instant,
    pub max_packet: u64,
}

impl<P: Packet> CodelQueue<P> for FlowQueue<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<P> {
        self.fq.pop_head(self.now, self.b)
    }
    #[inline]
    fn too_small(&self) -> bool {
        self.fq.len_bytes() <= self.max_packet
    }
}

/// Running FQ-CoDel.
#[derive(Debug, Clone)]
pub struct FqCodel<P> {
    cfg: FqCodelConfig,
    fq: FlowQueues<P>,
    vars: Vec<CodelVars>,
    prm: CodelParams,
    quantum: i64,
    /// CoDel's MAXPACKET: the link's MTU (Linux `cparams.mtu = psched_mtu`).
    max_packet: u64,
    limits: Limits,
    link_limit: QueueLimit,
    link: LinkInfo,
    stats: QueueStats,
    activations: u64,
    new_flow_count: u64,
    drop_overlimit: u64,
}

flat_qdisc_spec!(FqCodel, FqCodelConfig);

impl<P: Packet> QdiscOps<P> for FqCodel<P> {
    /// A queue running `cfg` with the link's hard limit `limit` on `link`; `seed` draws the
    /// hash perturbation.
    fn new(
        cfg: &FqCodelConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let limits = Limits::new(limit, cfg.limit);
        Ok(FqCodel {
            cfg: *cfg,
            fq: FlowQueues::new(
                cfg.flows,
                hash_key(seed),
                limits.pool_hint(),
                limits.pool_max(),
            ),
            vars: vec![CodelVars::default(); cfg.flows as usize],
            prm: params(cfg),
            quantum: quantum_at_least_min(cfg.quantum, link),
            max_packet: link.mtu as u64,
            limits,
            link_limit: limit,
            link,
            stats: QueueStats::default(),
            activations: 0,
            new_flow_count: 0,
            drop_overlimit: 0,
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
        pkt.set_enqueued_at(now);
        self.fq.push(now, b, pkt);
        if self.fq.list_of(b) == List::None {
            self.fq.push_back(List::New, b);
            self.fq.set_deficit(b, self.quantum);
            self.new_flow_count += 1;
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
            // Linux fq_codel_drop: drop half of the fat flow's backlog, at most a batch.
            let stats = &mut self.stats;
            let (i, a) = self
                .fq
                .drop_half_of(now, fat, b, self.cfg.drop_batch_size, &mut |p| {
                    stats.dropped_victim += 1;
                    on_drop(p, DropReason::ForcedLimit);
                });
            arrival = arrival.or(a);
            let v = &mut self.vars[fat];
            v.count = v.count.saturating_add(i);
            self.drop_overlimit += i as u64;
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

    /// The next packet (module docs); CoDel's drops go to `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        loop {
            let (list, b) = self.fq.next_with_credit(self.quantum)?;
            let d = self.fq.deficit(b);
            let mut q = FlowQueue {
                fq: &mut self.fq,
                b,
                now,
                max_packet: self.max_packet,
            };
            let got = self.vars[b].dequeue(
                now,
                &self.prm,
                &mut q,
                &mut self.stats,
                on_drop,
                &mut self.activations,
            );
            self.stats.activations = self.activations;
            match got {
                None => self.fq.retire_empty_front(list),
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
    fn config(&self) -> FqCodelConfig {
        self.cfg
    }

    /// Changes one parameter while running; flow states and queued packets are kept. A lower
    /// `limit` takes effect at the next arrival. `flows` cannot change (as in Linux).
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
        let mut next = self.cfg;
        next.set_param(key, value)?;
        if next.flows != self.cfg.flows {
            return Err(ConfigError::invalid(
                "flows",
                value,
                "is fixed once the queue is built (as in Linux)",
            ));
        }
        self.cfg = next;
        self.prm = params(&next);
        self.quantum = quantum_at_least_min(next.quantum, self.link);
        self.limits = Limits::new(self.link_limit, next.limit);
        self.fq.set_pool_max(self.limits.pool_max());
        Ok(())
    }

    crate::flowq::flow_queue_ops!(flows);

    /// The packet pool, bucket records and per-flow state.
    fn memory_bytes(&self) -> usize {
        self.fq.memory_bytes() + self.flow_state_bytes()
    }
}

impl<P: Packet> FqCodel<P> {
    /// The flow queues (inspection and tests).
    pub fn queues(&self) -> &FlowQueues<P> {
        &self.fq
    }
    /// CoDel state of flow queue `b`.
    pub fn codel_vars(&self, b: usize) -> Option<&CodelVars> {
        self.vars.get(b)
    }
    /// Flow queues that became new (joined new_flows), Linux `new_flow_count`.
    pub fn new_flow_count(&self) -> u64 {
        self.new_flow_count
    }
    /// Packets dropped by overflow batches (the arrival included), Linux `drop_overlimit`.
    pub fn drop_overlimit(&self) -> u64 {
        self.drop_overlimit
    }
    /// Bytes of the per-flow-queue state.
    pub fn flow_state_bytes(&self) -> usize {
        self.vars.capacity() * std::mem::size_of::<CodelVars>()
    }
}

fn params(cfg: &FqCodelConfig) -> CodelParams {
    CodelParams {
        target: cfg.target,
        interval: cfg.interval,
        ecn: cfg.ecn,
        ce_threshold: ce_threshold(cfg.ce_threshold),
        law: cfg.control_law,
        rules: CodelRules::Rfc8289,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{distinct_bucket_flows, ms, no_drop, TestPacket};
    use crate::time::BitsPerSec;

    fn link(mtu: u32) -> LinkInfo {
        LinkInfo {
            rate: BitsPerSec::from_mbps(10),
            mtu,
        }
    }

    fn fq(cfg: FqCodelConfig, limit: u32) -> FqCodel<TestPacket> {
        FqCodel::new(&cfg, QueueLimit::Packets(limit), link(1500), 7).unwrap()
    }

    /// RFC 8290 §4.2 / Linux fq_codel_dequeue by hand, quantum 1500 B, flows A and B with
    /// 1000-byte packets, all at time 0 (sojourn < target, so CoDel never drops):
    /// A0 A1 A2 arrive (A joins new_flows, deficit 1500), then B0 B1 (B joins new_flows after A).
    /// deq 1: A new, deficit 1500 > 0 -> A0, deficit 500.
    /// deq 2: A new, 500 > 0 -> A1, deficit -500.
    /// deq 3: A deficit -500 <= 0 -> +1500 = 1000, A moves to old; B new, 1500 -> B0, 500.
    /// deq 4: B 500 -> B1, -500.  deq 5: B -> 1000, moves to old; new empty; old [A, B]:
    /// A 1000 -> A2, 0.  deq 6: A 0 -> 1500, to old tail [B, A]; B 1000: empty -> CoDel returns
    /// nothing, B is on old -> removed; A 1500: empty -> removed; None.
    #[test]
    fn new_old_lists_and_deficits_by_hand() {
        let mut q = fq(
            FqCodelConfig {
                quantum: 1500,
                ..Default::default()
            },
            100,
        );
        let f = distinct_bucket_flows(q.queues(), 2);
        let (a, b) = (q.queues().bucket_of(f[0]), q.queues().bucket_of(f[1]));
        let t0 = Instant::ZERO;
        for i in 0..3 {
            q.enqueue(t0, TestPacket::new(i, 1000).flow(f[0]), &mut no_drop());
        }
        for i in 10..12 {
            q.enqueue(t0, TestPacket::new(i, 1000).flow(f[1]), &mut no_drop());
        }
        assert_eq!(q.queues().list_order(List::New), vec![a, b]);
        let t = ms(1);
        let mut trace = Vec::new();
        while let Some(p) = q.dequeue(t, &mut no_drop()) {
            trace.push((
                p.id,
                q.queues().deficit(a),
                q.queues().deficit(b),
                q.queues().list_order(List::New),
                q.queues().list_order(List::Old),
            ));
        }
        assert_eq!(
            trace,
            vec![
                (0, 500, 1500, vec![a, b], vec![]),
                (1, -500, 1500, vec![a, b], vec![]),
                (10, 1000, 500, vec![b], vec![a]),
                (11, 1000, -500, vec![b], vec![a]),
                (2, 0, 1000, vec![], vec![a, b]),
            ]
        );
        // The last call emptied both lists: A got +1500 and moved behind B, then both were
        // found empty and removed (they were on old_flows).
        assert!(q.queues().list_is_empty(List::Old) && q.queues().list_is_empty(List::New));
        assert_eq!(q.queues().deficit(a), 1500);
        assert_eq!(q.new_flow_count(), 2);
    }

    /// A new flow found empty while old_flows is non-empty goes to the tail of old_flows
    /// (RFC 8290 §4.2), so it is not new again when its next packet arrives right away.
    #[test]
    fn emptied_new_flow_passes_through_old_flows() {
        let mut q = fq(FqCodelConfig::default(), 100);
        let f = distinct_bucket_flows(q.queues(), 2);
        let (a, b) = (q.queues().bucket_of(f[0]), q.queues().bucket_of(f[1]));
        let t0 = Instant::ZERO;
        // A becomes old: 3 packets of 1000 B with quantum 1500.
        for i in 0..3 {
            q.enqueue(t0, TestPacket::new(i, 1000).flow(f[0]), &mut no_drop());
        }
        q.dequeue(t0, &mut no_drop()); // A0
        q.dequeue(t0, &mut no_drop()); // A1, deficit -500
        q.enqueue(t0, TestPacket::new(10, 100).flow(f[1]), &mut no_drop()); // B new
                                                                            // A: -500 -> 1000, moves to old; B new -> B0.
        assert_eq!(q.dequeue(t0, &mut no_drop()).unwrap().id, 10);
        assert_eq!(q.queues().list_order(List::New), vec![b]);
        // B is empty: it moves to the tail of old_flows, then A sends.
        assert_eq!(q.dequeue(t0, &mut no_drop()).unwrap().id, 2);
        assert_eq!(q.queues().list_order(List::Old), vec![a, b]);
        assert!(q.queues().list_is_empty(List::New));
        // B's next packet does not make it new: it is still on old_flows.
        q.enqueue(t0, TestPacket::new(11, 100).flow(f[1]), &mut no_drop());
        assert!(q.queues().list_is_empty(List::New));
        assert_eq!(q.new_flow_count(), 2);
    }

    /// Linux fq_codel_drop by hand: limit 10 packets. Flow A holds 8 packets of 1000 B,
    /// flow B 2 of 1500 B; the 11th arrival (B, 1500 B) overflows. Backlogs: A 8000 B,
    /// B 4500 B -> A is the fattest; threshold = 8000 >> 1 = 4000: drop A's head until at
    /// least 4000 B are gone: 4 packets (A0..A3). A's CoDel count grows by 4.
    /// With drop_batch_size 3 the batch stops at 3 packets instead.
    #[test]
    fn drop_batch_from_fattest_flow_by_hand() {
        for (batch, expect) in [(64u32, vec![0u64, 1, 2, 3]), (3, vec![0, 1, 2])] {
            let mut q = fq(
                FqCodelConfig {
                    drop_batch_size: batch,
                    ..Default::default()
                },
                10,
            );
            let f = distinct_bucket_flows(q.queues(), 2);
            let a = q.queues().bucket_of(f[0]);
            let t0 = Instant::ZERO;
            for i in 0..8 {
                q.enqueue(t0, TestPacket::new(i, 1000).flow(f[0]), &mut no_drop());
            }
            for i in 10..12 {
                q.enqueue(t0, TestPacket::new(i, 1500).flow(f[1]), &mut no_drop());
            }
            let mut victims = Vec::new();
            let r = q.enqueue(t0, TestPacket::new(12, 1500).flow(f[1]), &mut |p, r| {
                assert_eq!(r, DropReason::ForcedLimit);
                victims.push(p.id)
            });
            assert!(matches!(r, Enqueue::Queued));
            assert_eq!(victims, expect);
            assert_eq!(q.codel_vars(a).unwrap().count, expect.len() as u32);
            assert_eq!(q.queues().pkts(a), 8 - expect.len() as u32);
            assert_eq!(q.stats().dropped_victim, expect.len() as u64);
            assert_eq!(q.len_pkts(), 11 - expect.len());
        }
    }

    /// When the arrival's own flow is the fattest and the batch empties it, the arrival itself
    /// is the one handed back as dropped (Linux returns NET_XMIT_CN).
    #[test]
    fn batch_reaching_the_arrival_drops_it() {
        let mut q = fq(FqCodelConfig::default(), 2);
        let f = distinct_bucket_flows(q.queues(), 3);
        let t0 = Instant::ZERO;
        q.enqueue(t0, TestPacket::new(0, 100).flow(f[0]), &mut no_drop());
        q.enqueue(t0, TestPacket::new(1, 100).flow(f[1]), &mut no_drop());
        // Flow 2's single 1500-byte arrival is the fattest flow: threshold 750, one drop.
        let r = q.enqueue(t0, TestPacket::new(2, 1500).flow(f[2]), &mut no_drop());
        match r {
            Enqueue::Dropped(p, DropReason::ForcedLimit) => assert_eq!(p.id, 2),
            other => panic!("{other:?}"),
        }
        let s = q.stats();
        assert_eq!((s.dropped_limit, s.dropped_victim, s.enqueued), (1, 0, 2));
    }

    /// Linux ce_threshold: with ce_threshold 1 ms, an ECT packet with sojourn 2 ms is marked,
    /// one with 0.5 ms is not, and a Not-ECT packet never is (ecn off, so CoDel itself
    /// would only drop, and its sojourns stay far from 100 ms of dropping).
    #[test]
    fn ce_threshold_marks_ect_packets_above_it() {
        let mut q = fq(
            FqCodelConfig {
                ecn: false,
                ce_threshold: Duration::from_millis(1),
                ..Default::default()
            },
            100,
        );
        let t0 = Instant::ZERO;
        q.enqueue(t0, TestPacket::new(0, 1000).flow(1).ect(), &mut no_drop());
        q.enqueue(t0, TestPacket::new(1, 1000).flow(1), &mut no_drop());
        q.enqueue(
            ms(2),
            TestPacket::new(2, 1000).flow(1).ect(),
            &mut no_drop(),
        );
        let a = q.dequeue(ms(2), &mut no_drop()).unwrap();
        let b = q.dequeue(ms(2), &mut no_drop()).unwrap();
        let c = q.dequeue(Instant(2_500_000), &mut no_drop()).unwrap();
        assert_eq!((a.id, a.ce), (0, true));
        assert_eq!((b.id, b.ce), (1, false));
        assert_eq!((c.id, c.ce), (2, false));
        assert_eq!(q.stats().marked, 1);
        // Exactly at the threshold: not marked (Linux codel_time_after is strict).
        q.enqueue(
            ms(3),
            TestPacket::new(3, 1000).flow(1).ect(),
            &mut no_drop(),
        );
        assert!(!q.dequeue(ms(4), &mut no_drop()).unwrap().ce);
    }

    /// One flow: FQ-CoDel is CoDel on that flow (RFC 8290 §1.3); the same drop sequence as the
    /// `codel` AQM on a FIFO for a backlog above target, when the whole backlog is that flow.
    #[test]
    fn single_flow_matches_codel() {
        use crate::{AqmConfig, QueueDisc};
        let mut fqc = fq(
            FqCodelConfig {
                ecn: false,
                ..Default::default()
            },
            10_000,
        );
        let mut codel = QueueDisc::<TestPacket>::new(
            &AqmConfig::from_name("codel", &[]).unwrap(),
            QueueLimit::Packets(10_000),
            link(1500),
            1,
        )
        .unwrap();
        for i in 0..3000 {
            fqc.enqueue(
                Instant::ZERO,
                TestPacket::new(i, 1000).flow(5),
                &mut no_drop(),
            );
            codel.enqueue(Instant::ZERO, TestPacket::new(i, 1000).flow(5));
        }
        let (mut da, mut db) = (Vec::new(), Vec::new());
        for k in 0..2000u64 {
            let t = ms(10 + k);
            let a = fqc.dequeue(t, &mut |p, _| da.push(p.id)).map(|p| p.id);
            let b = codel.dequeue(t, &mut |p, _| db.push(p.id)).map(|p| p.id);
            assert_eq!(a, b, "tick {k}");
        }
        assert!(da.len() > 30);
        assert_eq!(da, db);
    }

    /// Linux fq_codel_change: `q->quantum = max(256U, quantum)`; above FQ_CODEL_QUANTUM_MAX
    /// (1 << 20) it refuses ("Invalid quantum").
    #[test]
    fn quantum_below_256_is_raised_as_linux_does() {
        for (given, used) in [
            (1u32, 256i64),
            (100, 256),
            (255, 256),
            (256, 256),
            (300, 300),
        ] {
            let q = fq(
                FqCodelConfig {
                    quantum: given,
                    ..Default::default()
                },
                100,
            );
            assert_eq!(q.quantum, used, "quantum {given}");
            assert_eq!(
                q.config().quantum,
                given,
                "the configuration keeps what was given"
            );
        }
        assert_eq!(
            fq(FqCodelConfig::default(), 100).quantum,
            1500,
            "0 = the link's MTU"
        );
        let mut q = fq(FqCodelConfig::default(), 100);
        q.set_param("quantum", 10.0).unwrap();
        assert_eq!(q.quantum, 256);
        let e = FqCodelConfig {
            quantum: (1 << 20) + 1,
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key(), Some("quantum"));
    }

    #[test]
    fn config_checks_and_fixed_flows() {
        let e = FqCodelConfig {
            flows: 0,
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key(), Some("flows"));
        let mut q = fq(FqCodelConfig::default(), 100);
        q.set_param("target", 0.002).unwrap();
        assert_eq!(q.config().target, Duration::from_millis(2));
        assert!(q.set_param("flows", 512.0).is_err());
        q.set_param("flows", 1024.0).unwrap();
        assert!(q.set_param("drop_batch_size", 0.0).is_err());
        // Defaults (Linux fq_codel_init).
        let d = FqCodelConfig::default();
        assert_eq!(
            (d.flows, d.drop_batch_size, d.ecn, d.ce_threshold),
            (1024, 64, true, Duration::ZERO)
        );
        assert_eq!(quantum_at_least_min(0, link(1500)), 1500);
    }
}
