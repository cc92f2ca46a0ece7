//! FQ-PIE — Flow Queue PIE (Linux `net/sched/sch_fq_pie.c`, Tahiliani et al. 2019;
//! docs/aqm/fq_pie.md).
//!
//! The scheduler is FQ-CoDel's (RFC 8290 §4.2): packets hashed ([`crate::flowq`]) into
//! `flows` flow queues (1024), deficit round robin with quantum one MTU over a new-flows and
//! an old-flows list, a flow found empty on new_flows passing once through old_flows. Each
//! flow queue has its own PIE state ([`Pie`], the law of [`crate::pie`]: the same
//! `calculate_drop_prob` and arrival rule, called per flow):
//!
//! * **Enqueue** (Linux `fq_pie_qdisc_enqueue`): if the qdisc holds its limit, the arrival is
//!   dropped (tail drop; FQ-PIE does not drop from the fattest flow) and its flow's
//!   de-randomisation accumulator is cleared; otherwise the flow's PIE decides on the
//!   arrival with the **flow's** backlog (RFC 8033 §4.1 `drop_early`: burst allowance, the
//!   `qdelay_old < target/2 && p < 0.2` and "at most two MTU-sized packets" exemptions,
//!   de-randomisation). A congestion signal marks CE when `ecn` is on, the packet is
//!   ECN-capable and the flow's probability is at most `ecn_prob` (10 %); otherwise the
//!   arrival is dropped.
//! * **Dequeue** (Linux `fq_pie_qdisc_dequeue`): FQ-CoDel's lists without CoDel; the sent
//!   packet updates its flow's PIE (`pie_process_dequeue`: the sojourn time, by default, as
//!   Linux's `dq_rate_estimator` is off; the queue delay is 0 once the flow is empty).
//! * **Timer** (Linux `fq_pie_timer`): every `t_update` the PIE law runs on **every** flow
//!   queue, empty ones included (their delay is 0, so their probability decays).
//!
//! Defaults from Linux's `fq_pie_init` / `pie_params_init`: flows 1024, target 15 ms,
//! t_update 15 ms, alpha 2/16 = 0.125 and beta 20/16 = 1.25 (Linux's integer alpha/beta are
//! in units of 1/16 of RFC 8033's), burst 150 ms, ECN off, `ecn_prob` 10 %, timestamps for
//! the delay. Differences: the law is pie.rs's (RFC 8033: decay x0.98 when idle, burst
//! allowance reduced by t_update per update) rather than Linux's (`prob -= prob/64`, burst
//! reduced by dequeue gaps, +2 % above 250 ms); Linux's first update is at 0.5 s and its
//! timer runs at most 2048 flows per tick, ours runs all of them at every `t_update` from
//! time 0; no byte mode, no memory limit (see fq_codel.md), our seeded hash.
//!
//! Activations: one per run of the periodic law (each run updates every flow queue).

use crate::algorithm::{Algorithm, Arrival, Env, Periodic, QueueView, Verdict};
use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::error::{ensure, ConfigError};
use crate::flowq::{check_flows, check_quantum, hash_key, quantum_of, FlowQueues, Limits, List};
use crate::packet::Packet;
use crate::params::{aqm_config, Params};
use crate::pie::{Pie, PieConfig};
use crate::qdisc::ops::{flat_qdisc_spec, QdiscOps};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

aqm_config! {
    /// FQ-PIE configuration (Linux sch_fq_pie.c; defaults from fq_pie_init and
    /// pie_params_init).
    pub struct FqPieConfig as "fq_pie" {
        /// Number of flow queues (hash buckets), 1..65536. Default 1024 (Linux). Fixed once
        /// the queue is built.
        pub flows: u32 = 1024, "queues";
        /// DRR quantum, bytes. 0 = the link's MTU (default; Linux psched_mtu, see fq_codel).
        /// Otherwise 256..=1048576.
        pub quantum: u32 = 0, "bytes";
        /// Packet limit over all flow queues; an arrival beyond it is dropped. 0 = the
        /// link's buffer (default). Linux's default is 10240 packets.
        pub limit: u32 = 0, "packets";
        /// QDELAY_REF of every flow's PIE, seconds. Default 0.015 (Linux, RFC 8033 §4.2).
        pub target: Duration = Duration::from_millis(15), "s";
        /// T_UPDATE: the law runs on every flow queue this often, seconds. Default 0.015
        /// (Linux).
        pub t_update: Duration = Duration::from_millis(15), "s";
        /// alpha, 1/s. Default 0.125 (Linux alpha = 2 in units of 1/16).
        pub alpha: f64 = 0.125, "1/s";
        /// beta, 1/s. Default 1.25 (Linux beta = 20 in units of 1/16).
        pub beta: f64 = 1.25, "1/s";
        /// MAX_BURST, burst allowance of every flow, seconds. Default 0.15 (Linux
        /// pie_vars_init).
        pub max_burst: Duration = Duration::from_millis(150), "s";
        /// Mark CE instead of dropping ECN-capable packets (while the flow's probability is
        /// at most ecn_prob). Default false (Linux: "ECN capability is off by default").
        pub ecn: bool = false, "bool";
        /// Mark only while the flow's drop probability is at most this. Default 0.1 (Linux
        /// ecn_prob = 10 %).
        pub ecn_prob: f64 = 0.1, "probability";
        /// Estimate the queue delay from the dequeue rate (RFC 8033 §5.2) instead of
        /// timestamps. Default false (Linux dq_rate_estimator).
        pub dq_rate_estimator: bool = false, "bool";
    }
}

impl FqPieConfig {
    fn check(&self) -> Result<(), ConfigError> {
        check_flows("flows", self.flows)?;
        check_quantum(self.quantum)?;
        ensure(
            (0.0..=1.0).contains(&self.ecn_prob),
            "ecn_prob",
            self.ecn_prob,
            "must be in [0, 1]",
        )?;
        // The per-flow law's own checks (target, t_update, alpha, beta).
        self.pie().validate()
    }

    /// The PIE configuration of every flow queue.
    pub fn pie(&self) -> PieConfig {
        PieConfig {
            target: self.target,
            t_update: self.t_update,
            alpha: self.alpha,
            beta: self.beta,
            max_burst: self.max_burst,
            ecn_max_prob: self.ecn_prob,
            use_timestamps: !self.dq_rate_estimator,
            derandomize: true,
            ecn: self.ecn,
            ..PieConfig::default()
        }
    }
}

/// Running FQ-PIE.
#[derive(Debug, Clone)]
pub struct FqPie<P> {
    cfg: FqPieConfig,
    fq: FlowQueues<P>,
    pies: Vec<Pie>,
    timer: Periodic,
    quantum: i64,
    limits: Limits,
    link_limit: QueueLimit,
    link: LinkInfo,
    stats: QueueStats,
    rng: Rng,
    activations: u64,
}

flat_qdisc_spec!(FqPie, FqPieConfig);

impl<P: Packet> QdiscOps<P> for FqPie<P> {
    /// A queue running `cfg` with the link's hard limit `limit` on `link`; `seed` draws the
    /// hash perturbation and starts the random stream of the drop decisions.
    fn new(
        cfg: &FqPieConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let limits = Limits::new(limit, cfg.limit);
        let env = Env { limit, link };
        Ok(FqPie {
            cfg: *cfg,
            fq: FlowQueues::new(
                cfg.flows,
                hash_key(seed),
                limits.pool_hint(),
                limits.pool_max(),
            ),
            pies: vec![Pie::build(&cfg.pie(), &env); cfg.flows as usize],
            timer: Periodic::new(cfg.t_update),
            quantum: quantum_of(cfg.quantum, link),
            limits,
            link_limit: limit,
            link,
            stats: QueueStats::default(),
            rng: Rng::new(seed),
            activations: 0,
        })
    }

    /// Offers a packet (module docs). Nothing else is ever dropped at an arrival.
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: P,
        _on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let size = pkt.size_bytes();
        self.stats.received += 1;
        self.stats.received_bytes += size as u64;
        let b = self.fq.bucket_of(pkt.flow_hash());
        if self
            .limits
            .exceeded(self.fq.len_pkts() + 1, self.fq.len_bytes() + size as u64)
        {
            self.pies[b].reset_accu_prob();
            self.stats.dropped_limit += 1;
            return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
        }
        let arrival = Arrival {
            size,
            flow_hash: pkt.flow_hash(),
            ecn_capable: pkt.ecn_capable(),
        };
        let view = self.view(b, now);
        let mark = match self.pies[b].enqueue(now, &arrival, &view, &mut self.rng) {
            Verdict::Accept => false,
            Verdict::Signal(_) if self.cfg.ecn && arrival.ecn_capable => true,
            Verdict::Signal(r) | Verdict::Drop(r) => {
                self.pies[b].reset_accu_prob();
                self.stats.dropped_early += 1;
                return Enqueue::Dropped(pkt, r);
            }
        };
        if mark {
            pkt.set_ce();
            self.stats.marked += 1;
        }
        pkt.set_enqueued_at(now);
        self.fq.push(now, b, pkt);
        if self.fq.list_of(b) == List::None {
            self.fq.push_back(List::New, b);
            self.fq.set_deficit(b, self.quantum);
        }
        self.stats.enqueued += 1;
        if mark {
            Enqueue::Marked
        } else {
            Enqueue::Queued
        }
    }

    /// The next packet (module docs).
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, _on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        loop {
            let (list, b) = self.fq.next_with_credit(self.quantum)?;
            let d = self.fq.deficit(b);
            let Some(p) = self.fq.pop_head(now, b) else {
                self.fq.retire_empty_front(list);
                continue;
            };
            let size = p.size_bytes();
            self.fq.set_deficit(b, d - size as i64);
            let view = self.view(b, now);
            self.pies[b].on_dequeued(now, size, now - p.enqueued_at(), &view);
            self.stats.dequeued += 1;
            self.stats.dequeued_bytes += size as u64;
            return Some(p);
        }
    }

    /// Next run of the law.
    fn poll_at(&self) -> Option<Instant> {
        Some(self.timer.next())
    }

    /// Runs the PIE law on every flow queue if due (Linux `fq_pie_timer`).
    fn on_timer(&mut self, now: Instant) {
        if !self.timer.fire(now) {
            return;
        }
        for b in 0..self.pies.len() {
            let view = self.view(b, now);
            let pie = &mut self.pies[b];
            let qdelay = pie.current_qdelay(&view);
            pie.calculate_drop_prob(qdelay);
        }
        self.activations += 1;
        self.stats.activations = self.activations;
    }

    /// The largest drop probability over the flow queues.
    fn probability(&self) -> f64 {
        self.pies.iter().map(|p| p.drop_prob()).fold(0.0, f64::max)
    }

    /// The current configuration.
    fn config(&self) -> FqPieConfig {
        self.cfg
    }

    /// Changes one parameter while running (`flows` is fixed); every flow's PIE keeps its
    /// state.
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
        let pie = next.pie();
        for p in &mut self.pies {
            p.reconfigure(pie);
        }
        self.timer.set_period(next.t_update);
        self.quantum = quantum_of(next.quantum, self.link);
        self.limits = Limits::new(self.link_limit, next.limit);
        self.fq.set_pool_max(self.limits.pool_max());
        self.cfg = next;
        Ok(())
    }

    crate::flowq::flow_queue_ops!(flows);

    /// The packet pool, bucket records and per-flow state.
    fn memory_bytes(&self) -> usize {
        self.fq.memory_bytes() + self.flow_state_bytes()
    }
}

impl<P: Packet> FqPie<P> {
    /// Flow queue `b` as its PIE sees it.
    #[inline]
    fn view(&self, b: usize, now: Instant) -> QueueView {
        QueueView {
            len_pkts: self.fq.pkts(b),
            len_bytes: self.fq.bytes(b),
            head_sojourn: self
                .fq
                .head(b)
                .map_or(Duration::ZERO, |p| now - p.enqueued_at()),
        }
    }
    /// PIE state of flow queue `b`.
    pub fn pie(&self, b: usize) -> Option<&Pie> {
        self.pies.get(b)
    }
    /// The flow queues (inspection and tests).
    pub fn queues(&self) -> &FlowQueues<P> {
        &self.fq
    }
    /// Bytes of the per-flow-queue state.
    pub fn flow_state_bytes(&self) -> usize {
        self.pies.capacity() * std::mem::size_of::<Pie>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ms, no_drop, TestPacket};
    use crate::time::BitsPerSec;

    fn fqp(cfg: FqPieConfig, limit: u32) -> FqPie<TestPacket> {
        let link = LinkInfo::new(BitsPerSec::from_mbps(10));
        FqPie::new(&cfg, QueueLimit::Packets(limit), link, 9).unwrap()
    }

    /// Per-flow laws: a flow with a standing 30 ms queue builds up probability, a flow whose
    /// packets leave at once keeps p = 0 (and an idle flow's law decays). The update is
    /// RFC 8033's on the flow's own delay: first update with qdelay 30 ms, qdelay_old 0,
    /// p = 0 -> delta = (0.125 x 0.015 + 1.25 x 0.030) / 2048.
    #[test]
    fn each_flow_has_its_own_law() {
        let mut q = fqp(FqPieConfig::default(), 10_000);
        let (fa, fb) = (1u64, 2u64);
        let (a, b) = (q.queues().bucket_of(fa), q.queues().bucket_of(fb));
        assert_ne!(a, b);
        for i in 0..100 {
            q.enqueue(
                Instant::ZERO,
                TestPacket::new(i, 1000).flow(fa),
                &mut no_drop(),
            );
        }
        // Flow A's first two packets leave after 30 ms in the queue (its quantum is then
        // spent), B's packet after 0.
        q.dequeue(ms(30), &mut no_drop());
        q.dequeue(ms(30), &mut no_drop());
        q.enqueue(ms(30), TestPacket::new(500, 100).flow(fb), &mut no_drop());
        let p = q.dequeue(ms(30), &mut no_drop()).unwrap();
        assert_eq!(
            p.id, 500,
            "B is a new flow: served before A, which moved to old_flows"
        );
        q.on_timer(ms(30));
        let expect = (0.125 * 0.015 + 1.25 * 0.030) / 2048.0;
        assert!((q.pie(a).unwrap().drop_prob() - expect).abs() < 1e-12);
        assert_eq!(q.pie(b).unwrap().drop_prob(), 0.0);
        assert!((q.probability() - expect).abs() < 1e-12);
        assert_eq!(q.stats().activations, 1);
    }

    /// At the limit the arrival is dropped (no drop from the fattest flow), and a congestion
    /// signal on an ECN-capable arrival is a mark when ecn is on.
    #[test]
    fn limit_drops_arrival_and_ecn_marks() {
        let mut q = fqp(FqPieConfig::default(), 3);
        for i in 0..3 {
            q.enqueue(
                Instant::ZERO,
                TestPacket::new(i, 100).flow(1),
                &mut no_drop(),
            );
        }
        match q.enqueue(
            Instant::ZERO,
            TestPacket::new(3, 100).flow(2),
            &mut no_drop(),
        ) {
            Enqueue::Dropped(p, DropReason::ForcedLimit) => assert_eq!(p.id, 3),
            other => panic!("{other:?}"),
        }
        assert_eq!(q.stats().dropped_victim, 0);

        // A flow at a 500 ms standing delay for a few seconds: its probability rises and,
        // with ECN on, its ECN-capable arrivals are marked while p <= 10 %.
        let mut q = fqp(
            FqPieConfig {
                ecn: true,
                ..Default::default()
            },
            100_000,
        );
        let mut id = 0;
        let (mut marked, mut dropped) = (0, 0);
        for k in 0..400u64 {
            let now = ms(k * 10);
            q.on_timer(now);
            for _ in 0..12 {
                match q.enqueue(now, TestPacket::new(id, 1000).flow(1).ect(), &mut no_drop()) {
                    Enqueue::Marked => marked += 1,
                    Enqueue::Dropped(..) => dropped += 1,
                    Enqueue::Queued => {}
                }
                id += 1;
            }
            for _ in 0..10 {
                q.dequeue(now, &mut no_drop());
            }
        }
        assert!(marked > 0, "marked {marked}");
        assert_eq!(q.stats().marked, marked);
        // Drops only once p > ecn_prob.
        if dropped > 0 {
            assert!(q.probability() > 0.1);
        }
    }

    #[test]
    fn defaults_follow_linux() {
        let d = FqPieConfig::default();
        assert_eq!(d.flows, 1024);
        assert_eq!(d.target, Duration::from_millis(15));
        assert_eq!(d.t_update, Duration::from_millis(15));
        assert_eq!((d.alpha, d.beta), (2.0 / 16.0, 20.0 / 16.0));
        assert_eq!((d.ecn, d.ecn_prob), (false, 0.1));
        assert!(d.pie().use_timestamps);
        let mut q = fqp(d, 100);
        assert!(q.set_param("flows", 8.0).is_err());
        q.set_param("target", 0.005).unwrap();
        assert_eq!(
            q.pie(0).unwrap().current_qdelay(&QueueView {
                len_pkts: 0,
                len_bytes: 0,
                head_sojourn: Duration::ZERO
            }),
            Duration::ZERO
        );
        assert!(q.set_param("alpha", -1.0).is_err());
    }
}
