//! Drop-tail (FIFO): accept while the buffer has room (docs/aqm/droptail.md).
//!
//! The hard limit itself is enforced by [`crate::QueueDisc`]; this algorithm never signals
//! congestion. Activations: none (it has no control law; the counter stays 0).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::error::ConfigError;
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::Instant;

aqm_config! {
    /// Drop-tail configuration. The buffer size is the queue's [`crate::QueueLimit`].
    pub struct DropTailConfig as "droptail" {
        /// Accepted for uniformity with the other AQMs; drop-tail never marks
        /// (packets over the limit are always dropped). Default false.
        pub ecn: bool = false, "bool";
    }
}

impl DropTailConfig {
    fn check(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// Drop-tail state (none).
#[derive(Debug, Clone)]
pub struct DropTail {
    cfg: DropTailConfig,
}

impl Algorithm for DropTail {
    type Config = DropTailConfig;

    fn build(cfg: &DropTailConfig, _env: &Env) -> Self {
        DropTail { cfg: *cfg }
    }
    fn cfg(&self) -> &DropTailConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: DropTailConfig) {
        self.cfg = cfg;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(
        &mut self,
        _now: Instant,
        _pkt: &Arrival,
        _q: &QueueView,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Accept
    }
    fn activations(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::TestPacket;
    use crate::*;

    fn q(limit: QueueLimit) -> QueueDisc<TestPacket> {
        QueueDisc::new(
            &AqmConfig::DropTail(Default::default()),
            limit,
            LinkInfo::new(BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap()
    }

    /// Reference: docs/aqm/droptail.md (accept while room, else drop the arrival), FIFO order.
    #[test]
    fn packet_limit_tail_drop_and_fifo_order() {
        let mut q = q(QueueLimit::Packets(3));
        for i in 0..5u64 {
            let r = q.enqueue(Instant(i), TestPacket::new(i, 1000));
            if i < 3 {
                assert_eq!(r, Enqueue::Queued);
            } else {
                match r {
                    Enqueue::Dropped(p, DropReason::ForcedLimit) => assert_eq!(p.id, i),
                    other => panic!("expected forced drop, got {other:?}"),
                }
            }
        }
        assert_eq!(q.len_pkts(), 3);
        assert_eq!(q.len_bytes(), 3000);
        assert_eq!(q.head_sojourn(Instant(10)), Duration(10));
        let mut never = |_p: TestPacket, _r: DropReason| panic!("droptail never drops at dequeue");
        for i in 0..3u64 {
            let p = q.dequeue(Instant(20), &mut never).unwrap();
            assert_eq!(p.id, i);
            assert_eq!(p.enqueued_at, Instant(i));
        }
        assert!(q.dequeue(Instant(21), &mut never).is_none());
        let s = q.stats();
        assert_eq!(s.received, 5);
        assert_eq!(s.enqueued, 3);
        assert_eq!(s.dropped_limit, 2);
        assert_eq!(s.dropped_early, 0);
        assert_eq!(s.dequeued, 3);
        assert_eq!(s.received, s.dropped_enqueue() + s.enqueued);
    }

    /// Byte limit: a packet is stored only if the bytes after storing it stay <= the limit.
    #[test]
    fn byte_limit() {
        let mut q = q(QueueLimit::Bytes(2500));
        assert_eq!(
            q.enqueue(Instant(0), TestPacket::new(0, 1000)),
            Enqueue::Queued
        );
        assert_eq!(
            q.enqueue(Instant(0), TestPacket::new(1, 1000)),
            Enqueue::Queued
        );
        assert!(matches!(
            q.enqueue(Instant(0), TestPacket::new(2, 1000)),
            Enqueue::Dropped(_, DropReason::ForcedLimit)
        ));
        assert_eq!(
            q.enqueue(Instant(0), TestPacket::new(3, 500)),
            Enqueue::Queued
        );
        assert_eq!(q.len_bytes(), 2500);
    }

    /// `pass_through` on an empty drop-tail queue records what `enqueue` then `dequeue` record
    /// (the reference: the same arrivals the long way) and stamps the enqueue time; it refuses
    /// (hands the packet back, nothing recorded) a non-empty queue, a packet that does not fit,
    /// and any other AQM.
    #[test]
    fn pass_through_is_enqueue_then_dequeue() {
        let mut never = |_p: TestPacket, _r: DropReason| panic!("no drop expected");
        let (mut fast, mut slow) = (q(QueueLimit::Packets(2)), q(QueueLimit::Packets(2)));
        for i in 0..4u64 {
            let t = Instant(100 * i);
            let p = fast
                .pass_through(t, TestPacket::new(i, 500 + i as u32))
                .expect("empty drop-tail queue");
            assert_eq!(p.enqueued_at, t);
            assert_eq!(
                slow.enqueue(t, TestPacket::new(i, 500 + i as u32)),
                Enqueue::Queued
            );
            assert_eq!(slow.dequeue(t, &mut never).unwrap(), p);
            assert_eq!(fast.stats(), slow.stats());
        }
        // not empty: refused, nothing recorded
        fast.enqueue(Instant(500), TestPacket::new(9, 100));
        let before = fast.stats();
        let back = fast.pass_through(Instant(501), TestPacket::new(10, 100));
        assert_eq!(back, Err(TestPacket::new(10, 100)));
        assert_eq!(fast.stats(), before);
        // no room (byte limit below the packet): refused
        let mut tiny = q(QueueLimit::Bytes(400));
        assert!(tiny
            .pass_through(Instant(0), TestPacket::new(0, 500))
            .is_err());
        assert_eq!(tiny.stats().received, 0);
        // another AQM: refused
        let mut codel = QueueDisc::<TestPacket>::new(
            &AqmConfig::Codel(Default::default()),
            QueueLimit::Packets(10),
            LinkInfo::new(BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        assert!(codel
            .pass_through(Instant(0), TestPacket::new(0, 500))
            .is_err());
        assert_eq!(codel.stats().received, 0);
    }

    /// Drop-tail with its default configuration holds no law and derives its counters
    /// (`QueueDisc`'s docs); drop-tail with `ecn` set holds one and counts every field. The
    /// same random mix of arrivals, pass-throughs, dequeues and victim drops gives both the
    /// same packets and the same counters at every step, and a parameter set on the first
    /// gives it a law with its counters as they stood.
    #[test]
    fn drop_tail_without_a_law_counts_as_with_one() {
        let mk = |ecn: bool| {
            QueueDisc::<TestPacket>::new(
                &AqmConfig::DropTail(super::DropTailConfig { ecn }),
                QueueLimit::Bytes(6_000),
                LinkInfo::new(BitsPerSec::from_mbps(10)),
                1,
            )
            .unwrap()
        };
        let (mut bare, mut full) = (mk(false), mk(true));
        assert!(bare.aqm().is_none() && full.aqm().is_some());
        let mut rng = crate::rng::Rng::new(7);
        let mut never = |_p: TestPacket, _r: DropReason| panic!("drop-tail never drops at dequeue");
        for i in 0..20_000u64 {
            let t = Instant(i);
            let p = TestPacket::new(i, 40 + rng.below(1_500) as u32);
            match rng.below(8) {
                0..=3 => assert_eq!(bare.enqueue(t, p), full.enqueue(t, p)),
                4 => assert_eq!(bare.pass_through(t, p), full.pass_through(t, p)),
                5 | 6 => assert_eq!(bare.dequeue(t, &mut never), full.dequeue(t, &mut never)),
                _ => assert_eq!(bare.drop_head(t), full.drop_head(t)),
            }
            let (a, b) = (bare.stats(), full.stats());
            assert_eq!(a, b, "step {i}");
            assert_eq!(
                a.enqueued,
                a.dequeued + a.dropped_victim + bare.len_pkts() as u64
            );
        }
        let s = bare.stats();
        assert!(
            s.dropped_limit > 0 && s.dropped_victim > 0 && s.dequeued > 0,
            "{s:?}"
        );
        assert_eq!(bare.config(), AqmConfig::DropTail(Default::default()));
        assert!(bare.set_param("nonsense", 1.0).is_err());
        assert!(bare.aqm().is_none(), "a refused parameter builds no law");
        bare.set_param("ecn", 1.0).unwrap();
        assert_eq!(bare.config(), full.config());
        assert_eq!(bare.stats(), s);
    }

    #[test]
    fn zero_limit_is_rejected() {
        let r = QueueDisc::<TestPacket>::new(
            &AqmConfig::DropTail(Default::default()),
            QueueLimit::Packets(0),
            LinkInfo::new(BitsPerSec(1)),
            0,
        );
        assert!(r.is_err());
    }
}
