//! BLUE (Feng, Kandlur, Saha & Shin 2002; docs/aqm/blue.md).
//!
//! One marking probability `p_m` applied to every arrival. Event-driven updates:
//! * on buffer overflow (an arrival dropped at the hard limit), or an arrival that sees more
//!   than `queue_threshold` packets when that threshold is non-zero: `p_m += increment`,
//!   if at least `freeze_time` has passed since the last change;
//! * when the link goes idle (the queue emptied and its last packet left): `p_m -= decrement`,
//!   under the same freeze-time rule.
//!
//! Activations: one per applied change of `p_m`.

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

aqm_config! {
    /// BLUE configuration (Feng's ns code defaults, see docs/aqm/blue.md).
    pub struct BlueConfig as "blue" {
        /// delta_1, increment of p_m on overflow. Default 0.0025 (Feng et al. ns code).
        pub increment: f64 = 0.0025, "probability";
        /// delta_2, decrement of p_m on link idle. Default 0.00025 (Feng et al. ns code).
        pub decrement: f64 = 0.00025, "probability";
        /// Minimum time between two changes of p_m, seconds. Default 0.1 (Feng et al. ns code).
        pub freeze_time: Duration = Duration::from_millis(100), "s";
        /// Queue length L above which an arrival also counts as overflow, packets; 0 = only
        /// real overflow (default).
        pub queue_threshold: u32 = 0, "packets";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl BlueConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            (0.0..=1.0).contains(&self.increment),
            "increment",
            self.increment,
            "must be in [0, 1]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.decrement),
            "decrement",
            self.decrement,
            "must be in [0, 1]",
        )
    }
}

/// BLUE state.
#[derive(Debug, Clone)]
pub struct Blue {
    cfg: BlueConfig,
    p_m: f64,
    last_update: Option<Instant>,
    activations: u64,
}

impl Blue {
    /// Current marking probability.
    pub fn p_m(&self) -> f64 {
        self.p_m
    }
    fn may_update(&self, now: Instant) -> bool {
        match self.last_update {
            None => true,
            Some(t) => now >= t + self.cfg.freeze_time,
        }
    }
    /// Overflow event at `now` (increase, freeze-time permitting).
    pub fn overflow(&mut self, now: Instant) {
        if self.may_update(now) {
            self.p_m = (self.p_m + self.cfg.increment).min(1.0);
            self.last_update = Some(now);
            self.activations += 1;
        }
    }
    /// Link-idle event at `now` (decrease, freeze-time permitting).
    pub fn idle(&mut self, now: Instant) {
        if self.may_update(now) {
            self.p_m = (self.p_m - self.cfg.decrement).max(0.0);
            self.last_update = Some(now);
            self.activations += 1;
        }
    }
}

impl Algorithm for Blue {
    type Config = BlueConfig;

    fn build(cfg: &BlueConfig, _env: &Env) -> Self {
        Blue {
            cfg: *cfg,
            p_m: 0.0,
            last_update: None,
            activations: 0,
        }
    }
    fn cfg(&self) -> &BlueConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: BlueConfig) {
        self.cfg = cfg;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    fn enqueue(&mut self, now: Instant, _pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
        if self.cfg.queue_threshold > 0 && q.len_pkts > self.cfg.queue_threshold {
            self.overflow(now);
        }
        Verdict::early_with_probability(self.p_m, rng)
    }
    fn on_overflow(&mut self, now: Instant) {
        self.overflow(now);
    }
    fn on_empty(&mut self, idle_from: Instant) {
        self.idle(idle_from);
    }
    fn activations(&self) -> u64 {
        self.activations
    }
    fn probability(&self) -> f64 {
        self.p_m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TestPacket;
    use crate::{AqmConfig, BitsPerSec, DropReason, Enqueue, LinkInfo, QueueDisc, QueueLimit};

    fn blue(cfg: BlueConfig) -> Blue {
        Blue::build(&cfg, &crate::testutil::env(QueueLimit::Packets(10), 10))
    }

    /// Feng et al. 2002: +delta_1 on overflow, −delta_2 on idle, at most one change per
    /// freeze_time (0.1 s). Hand-computed sequence; tolerance 1e-15.
    #[test]
    fn update_law_with_freeze_time() {
        let mut b = blue(BlueConfig::default());
        b.overflow(crate::testutil::ms(0));
        assert!((b.p_m() - 0.0025).abs() < 1e-15);
        b.overflow(crate::testutil::ms(50)); // frozen
        assert!((b.p_m() - 0.0025).abs() < 1e-15);
        b.overflow(crate::testutil::ms(100));
        assert!((b.p_m() - 0.005).abs() < 1e-15);
        b.idle(crate::testutil::ms(150)); // frozen
        assert!((b.p_m() - 0.005).abs() < 1e-15);
        b.idle(crate::testutil::ms(200));
        assert!((b.p_m() - 0.00475).abs() < 1e-15);
        assert_eq!(b.activations(), 3);
    }

    #[test]
    fn clamped_to_unit_interval() {
        let mut b = blue(BlueConfig {
            increment: 0.6,
            decrement: 0.7,
            freeze_time: Duration::ZERO,
            ..Default::default()
        });
        b.overflow(Instant(1));
        b.overflow(Instant(2));
        assert_eq!(b.p_m(), 1.0);
        b.idle(Instant(3));
        b.idle(Instant(4));
        assert_eq!(b.p_m(), 0.0);
    }

    /// Through the wrapper: a hard-limit drop raises p_m; emptying the queue lowers it.
    #[test]
    fn events_from_the_wrapper() {
        let mut q = QueueDisc::<TestPacket>::new(
            &AqmConfig::Blue(BlueConfig::default()),
            QueueLimit::Packets(2),
            LinkInfo::new(BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        q.enqueue(Instant(0), TestPacket::new(0, 1500));
        q.enqueue(Instant(0), TestPacket::new(1, 1500));
        let r = q.enqueue(Instant(0), TestPacket::new(2, 1500));
        assert!(matches!(r, Enqueue::Dropped(_, DropReason::ForcedLimit)));
        assert!((q.probability() - 0.0025).abs() < 1e-15);
        q.dequeue(Instant(200_000_000), &mut |_, _| {});
        q.dequeue(Instant(200_000_000), &mut |_, _| {});
        assert!((q.probability() - 0.00225).abs() < 1e-15);
    }
}
