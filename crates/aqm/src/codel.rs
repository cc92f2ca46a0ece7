//! CoDel — Controlled Delay (RFC 8289; docs/aqm/codel.md).
//!
//! Dequeue-side: the sojourn time of each departing packet is compared with `target`; once
//! it has stayed above `target` for `interval`, CoDel enters the dropping state and drops
//! (or ECN-marks) heads at times spaced by `interval / sqrt(count)` (the control law,
//! RFC 8289 §5.5 `control_law`). The code follows the RFC's pseudo-code (§5.3–§5.5,
//! `dodequeue` and `dequeue`) with integer-nanosecond time; `interval / sqrt(count)` is
//! computed with an exact `f64` square root and truncated to whole ns (Linux uses a Newton
//! inverse-sqrt in Q0.32 instead; the difference is below one part in 10^6 for count < 10^6).
//!
//! ECN (RFC 8289 §5.5 / Linux `codel_dequeue`): with `ecn` set, an ECN-capable packet due for
//! dropping is marked CE and delivered; in the dropping loop the next drop time is then
//! scheduled and the call returns that packet.
//!
//! Activations: one per `dequeue` call that finds a packet (the control logic runs on every
//! dequeue, RFC 8289 §5.5).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::packet::Packet;
use crate::params::aqm_config;
use crate::queue::{Backlog, DropReason, QueueStats};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// TARGET, according to RFC 8289 §4.4: 5 ms.
pub const TARGET: Duration = Duration::from_millis(5);
/// INTERVAL, according to RFC 8289 §4.3: 100 ms.
pub const INTERVAL: Duration = Duration::from_millis(100);
/// Re-entry window in intervals: count decay applies if the last dropping state ended less
/// than 16 intervals ago (RFC 8289 §5.5, "this is the Linux version").
pub const REENTRY_INTERVALS: u64 = 16;

aqm_config! {
    /// CoDel configuration (RFC 8289).
    pub struct CodelConfig as "codel" {
        /// Acceptable standing queue delay (TARGET), seconds. Default 0.005 (RFC 8289 §4.4).
        pub target: Duration = TARGET, "s";
        /// Sliding window for the minimum sojourn time (INTERVAL), seconds.
        /// Default 0.1 (RFC 8289 §4.3).
        pub interval: Duration = INTERVAL, "s";
        /// MAXPACKET in bytes: no drop while the bytes left in the queue are <= this
        /// (RFC 8289 §5.4 `dodequeue`). 0 = the link's MTU (default).
        pub max_packet: u32 = 0, "bytes";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl CodelConfig {
    fn check(&self) -> Result<(), ConfigError> {
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
        )
    }
}

/// CoDel state (RFC 8289 §5.2 state variables).
#[derive(Debug, Clone)]
pub struct Codel {
    cfg: CodelConfig,
    /// MAXPACKET actually used (config or link MTU).
    max_packet: u64,
    /// The link's MTU (default MAXPACKET).
    link_mtu: u32,
    /// Time when the sojourn time went (and stayed) above target, plus INTERVAL;
    /// `None` is the RFC's `first_above_time_ = 0`.
    first_above_time: Option<Instant>,
    /// Time of the next drop while in the dropping state.
    drop_next: Instant,
    /// Drops (or marks) since entering the dropping state.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    /// In the dropping state.
    dropping: bool,
    activations: u64,
}

impl Codel {
    /// RFC 8289 §5.5 `control_law`: `t + interval / sqrt(count)`.
    #[inline]
    pub fn control_law(t: Instant, interval: Duration, count: u32) -> Instant {
        let step = interval.0 as f64 / (count.max(1) as f64).sqrt();
        t + Duration(step as u64)
    }

    /// RFC 8289 §5.4 `dodequeue`: pop the head and decide whether dropping is allowed.
    #[inline]
    fn dodequeue<P: Packet>(
        &mut self,
        now: Instant,
        backlog: &mut Backlog<P>,
    ) -> (Option<P>, bool) {
        let Some(p) = backlog.pop() else {
            // Queue is empty: we can't be above TARGET.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - p.enqueued_at();
        let mut ok_to_drop = false;
        if sojourn < self.cfg.target || backlog.bytes() <= self.max_packet {
            // Went below: stay below for at least INTERVAL.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above from below; if still above at first_above_time, drop.
                None => self.first_above_time = Some(now + self.cfg.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    /// Drop `p`, or mark and return it when ECN applies.
    #[inline]
    fn signal<P: Packet, F: FnMut(P, DropReason)>(
        &self,
        mut p: P,
        stats: &mut QueueStats,
        on_drop: &mut F,
    ) -> Option<P> {
        if self.cfg.ecn && p.ecn_capable() {
            p.set_ce();
            stats.marked += 1;
            Some(p)
        } else {
            stats.dropped_dequeue += 1;
            on_drop(p, DropReason::CodelDequeue);
            None
        }
    }

    /// True while in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    /// Current drop count.
    pub fn count(&self) -> u32 {
        self.count
    }
    /// Scheduled time of the next drop (meaningful while dropping).
    pub fn drop_next(&self) -> Instant {
        self.drop_next
    }
}

impl Algorithm for Codel {
    type Config = CodelConfig;

    fn build(cfg: &CodelConfig, env: &Env) -> Self {
        let mut c = Codel {
            cfg: *cfg,
            max_packet: 0,
            link_mtu: env.link.mtu,
            first_above_time: None,
            drop_next: Instant::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            activations: 0,
        };
        c.update_max_packet();
        c
    }
    fn cfg(&self) -> &CodelConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: CodelConfig) {
        self.cfg = cfg;
        self.update_max_packet();
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
        // CoDel only timestamps on enqueue (done by the wrapper), RFC 8289 §5.2.
        Verdict::Accept
    }

    /// RFC 8289 §5.5 `dequeue`.
    fn dequeue<P: Packet, F: FnMut(P, DropReason)>(
        &mut self,
        now: Instant,
        backlog: &mut Backlog<P>,
        stats: &mut QueueStats,
        on_drop: &mut F,
    ) -> Option<P> {
        let (mut p, mut ok_to_drop) = self.dodequeue(now, backlog);
        if p.is_none() {
            self.dropping = false;
            return None;
        }
        self.activations += 1;
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below TARGET: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop: drop the current packet and dequeue the next; a large
            // backlog may need several drops now, hence the loop.
            while self.dropping && now >= self.drop_next {
                let head = p.take().expect("dropping implies a packet");
                self.count = self.count.saturating_add(1);
                if let Some(marked) = self.signal(head, stats, on_drop) {
                    self.drop_next =
                        Self::control_law(self.drop_next, self.cfg.interval, self.count);
                    return Some(marked);
                }
                (p, ok_to_drop) = self.dodequeue(now, backlog);
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next =
                        Self::control_law(self.drop_next, self.cfg.interval, self.count);
                }
            }
        } else if ok_to_drop {
            // Sojourn above TARGET for INTERVAL: enter the dropping state.
            let head = p.take().expect("ok_to_drop implies a packet");
            p = match self.signal(head, stats, on_drop) {
                Some(marked) => Some(marked),
                None => self.dodequeue(now, backlog).0,
            };
            self.dropping = true;
            // Count decay on re-entry (RFC 8289 §5.5): resume near the last drop rate if the
            // previous dropping state ended recently.
            let delta = self.count.saturating_sub(self.lastcount);
            let since = now.signed_diff(self.drop_next);
            let window = self.cfg.interval.0.saturating_mul(REENTRY_INTERVALS);
            self.count = if delta > 1 && since < window.min(i64::MAX as u64) as i64 {
                delta
            } else {
                1
            };
            self.drop_next = Self::control_law(now, self.cfg.interval, self.count);
            self.lastcount = self.count;
        }
        p
    }

    fn activations(&self) -> u64 {
        self.activations
    }
}

impl Codel {
    fn update_max_packet(&mut self) {
        self.max_packet = if self.cfg.max_packet == 0 {
            self.link_mtu as u64
        } else {
            self.cfg.max_packet as u64
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AnyAqm;
    use crate::testutil::{env, ms, TestPacket};
    use crate::{AqmConfig, LinkInfo, QueueDisc, QueueLimit};

    const I: u64 = 100_000_000; // INTERVAL in ns

    fn codel_queue() -> QueueDisc<TestPacket> {
        QueueDisc::new(
            &AqmConfig::Codel(CodelConfig::default()),
            QueueLimit::Packets(10_000),
            LinkInfo::new(crate::BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap()
    }
    fn state(q: &QueueDisc<TestPacket>) -> &Codel {
        match q.aqm() {
            AnyAqm::Codel(c) => c,
            _ => unreachable!(),
        }
    }
    /// Dequeue once at `t`; returns (delivered?, number of drops).
    fn tick(q: &mut QueueDisc<TestPacket>, t: Instant) -> (bool, u32) {
        let mut drops = 0;
        let got = q.dequeue(t, &mut |_p, r| {
            assert_eq!(r, DropReason::CodelDequeue);
            drops += 1
        });
        (got.is_some(), drops)
    }
    /// Reference drop schedule from RFC 8289 §5.5 independent of the implementation:
    /// D_1 = entry time, D_2 = D_1 + I/sqrt(1), D_{k+1} = D_k + I/sqrt(k) (integer ns,
    /// truncated as the RFC's integer `time_t` arithmetic does).
    fn reference_schedule(entry: u64, n: usize, first_count: u64) -> Vec<u64> {
        let mut d = vec![entry];
        let mut next = entry + (I as f64 / (first_count as f64).sqrt()) as u64;
        let mut count = first_count;
        while d.len() < n {
            d.push(next);
            count += 1;
            next += (I as f64 / (count as f64).sqrt()) as u64;
        }
        d
    }

    /// RFC 8289 §5.4–5.5: a queue whose sojourn stays above TARGET. Ticks every 1 ms from
    /// 10 ms; first_above_time = 10 ms + INTERVAL, so the first drop is at 110 ms, then drop k
    /// happens at the first tick >= D_k of the reference schedule. Tolerance: exact (the drop
    /// must fall on that very tick).
    #[test]
    fn drop_times_follow_rfc_spacing() {
        let mut q = codel_queue();
        for i in 0..5000 {
            q.enqueue(Instant::ZERO, TestPacket::new(i, 1000));
        }
        let mut drop_ticks = Vec::new();
        for k in 0..1990u64 {
            let t = ms(10 + k);
            let (delivered, drops) = tick(&mut q, t);
            assert!(delivered, "a packet is delivered on every tick");
            for _ in 0..drops {
                drop_ticks.push(t.0);
            }
        }
        let reference = reference_schedule(ms(110).0, drop_ticks.len(), 1);
        assert!(drop_ticks.len() > 30, "got {} drops", drop_ticks.len());
        for (k, (&got, &d)) in drop_ticks.iter().zip(&reference).enumerate() {
            let expected_tick = d.div_ceil(1_000_000) * 1_000_000;
            assert_eq!(got, expected_tick, "drop #{} (D = {d} ns)", k + 1);
        }
        // And no extra drop: the next reference time lies beyond the last tick.
        let next = reference_schedule(ms(110).0, drop_ticks.len() + 1, 1);
        assert!(*next.last().unwrap() > ms(1999).0);
        assert_eq!(state(&q).count() as usize, drop_ticks.len());
        let s = q.stats();
        assert_eq!(s.dropped_dequeue as usize, drop_ticks.len());
        assert_eq!(
            s.enqueued,
            s.dequeued + s.dropped_dequeue + q.len_pkts() as u64
        );
    }

    /// Phase 1 as above until 1 s, drain the queue (leaves the dropping state), refill and
    /// re-enter. RFC 8289 §5.5: re-entry within 16 intervals resumes with
    /// count = count − lastcount (lastcount = 1 here); after longer, count = 1.
    #[test]
    fn reentry_count_decay() {
        for (gap_ms, expect_decay) in [(10u64, true), (2_000, false)] {
            let mut q = codel_queue();
            for i in 0..3000 {
                q.enqueue(Instant::ZERO, TestPacket::new(i, 1000));
            }
            for k in 0..990u64 {
                tick(&mut q, ms(10 + k));
            }
            let n = state(&q).count();
            assert!(n > 5);
            // Drain at 1 s: the last dequeues leave <= MTU behind, so dropping stops.
            while q.len_pkts() > 0 {
                tick(&mut q, ms(1000));
            }
            assert!(!state(&q).dropping());
            assert_eq!(state(&q).count(), n, "count is kept while not dropping");
            let t2 = 1000 + gap_ms;
            for i in 0..3000 {
                q.enqueue(ms(t2), TestPacket::new(10_000 + i, 1000));
            }
            // Re-entry at t2 + 10 ms + INTERVAL.
            let mut entry = None;
            for k in 0..200u64 {
                let t = ms(t2 + 10 + k);
                let (_, drops) = tick(&mut q, t);
                if drops > 0 {
                    entry = Some(t);
                    break;
                }
            }
            let entry = entry.expect("re-entered dropping");
            assert_eq!(entry, ms(t2 + 110));
            let expected = if expect_decay { n - 1 } else { 1 };
            assert_eq!(state(&q).count(), expected, "gap {gap_ms} ms");
            assert_eq!(
                state(&q).drop_next(),
                entry + Duration((I as f64 / (expected as f64).sqrt()) as u64)
            );
        }
    }

    /// RFC 8289 §5.5: in the dropping state, a dequeue whose packet has sojourn < TARGET
    /// leaves the dropping state without dropping (state fixture).
    #[test]
    fn leaves_dropping_state_when_sojourn_below_target() {
        let mut c = Codel::build(&CodelConfig::default(), &env(QueueLimit::Packets(100), 10));
        let mut b = Backlog::with_capacity(16);
        let now = ms(1000);
        for i in 0..4 {
            // Head sojourn 1 ms < TARGET.
            b.push(TestPacket::at(i, 1500, ms(999)));
        }
        c.dropping = true;
        c.count = 5;
        c.drop_next = ms(900); // a drop would be due
        c.first_above_time = Some(ms(800));
        let mut stats = QueueStats::default();
        let p = c.dequeue(now, &mut b, &mut stats, &mut |_p, _r| {
            panic!("no drop expected")
        });
        assert_eq!(p.unwrap().id, 0);
        assert!(!c.dropping);
        assert_eq!(c.first_above_time, None);
        assert_eq!(stats.dropped_dequeue, 0);
    }

    /// RFC 8289 §5.4: no drop while the bytes left after the dequeue are <= MAXPACKET (MTU),
    /// even with a huge sojourn. Control: with one more packet queued, drops do happen.
    #[test]
    fn no_drop_when_backlog_at_most_one_mtu() {
        for (keep, expect_drops) in [(2usize, false), (3, true)] {
            let mut c = Codel::build(&CodelConfig::default(), &env(QueueLimit::Packets(100), 10));
            let mut b = Backlog::with_capacity(16);
            let mut stats = QueueStats::default();
            let mut id = 0;
            let mut drops = 0;
            for k in 0..1000u64 {
                while b.len() < keep {
                    b.push(TestPacket::at(id, 1500, Instant::ZERO));
                    id += 1;
                }
                c.dequeue(ms(1000 + k), &mut b, &mut stats, &mut |_p, _r| drops += 1);
            }
            assert_eq!(drops > 0, expect_drops, "keep {keep}: {drops} drops");
        }
    }

    /// With ECN, the packet due for dropping is marked CE and delivered instead.
    #[test]
    fn ecn_marks_instead_of_dropping() {
        let cfg = CodelConfig {
            ecn: true,
            ..Default::default()
        };
        let mut q = QueueDisc::<TestPacket>::new(
            &AqmConfig::Codel(cfg),
            QueueLimit::Packets(10_000),
            LinkInfo::new(crate::BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        for i in 0..2000 {
            q.enqueue(Instant::ZERO, TestPacket::new(i, 1000).ect());
        }
        let mut ce = 0;
        for k in 0..1000u64 {
            let p = q
                .dequeue(ms(10 + k), &mut |_p, _r| panic!("ECN-capable: no drop"))
                .unwrap();
            ce += p.ce as u64;
        }
        assert!(ce > 10);
        assert_eq!(q.stats().marked, ce);
        assert_eq!(q.stats().dropped_dequeue, 0);
    }

    #[test]
    fn control_law_values() {
        // interval / sqrt(count): 100 ms, 70.710678 ms, 57.735026 ms (truncated to ns).
        let i = Duration::from_millis(100);
        assert_eq!(Codel::control_law(Instant(0), i, 1), Instant(100_000_000));
        assert_eq!(Codel::control_law(Instant(0), i, 2), Instant(70_710_678));
        assert_eq!(Codel::control_law(Instant(0), i, 3), Instant(57_735_026));
    }
}
