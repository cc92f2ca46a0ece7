//! AOPC — adaptive optimized proportional controller (Wang, Rong & Liu, Computer
//! Communications 2008), as the EDC paper (Suzer, Kang & Basaran 2011 §1.2, §4.2) describes it;
//! docs/aqm/aopc.md.
//!
//! **Reconstructed**: the original paper was not available. The EDC paper (§1.2) says AOPC
//! measures the latest packet-loss ratio and uses it, with the queue length, to set the drop
//! probability; §4.2 runs it at 160 Hz with `q_ref` = 200. Our law, periodic at `w` Hz, is a
//! proportional controller around the measured loss ratio whose gain we derive from the
//! Hollot et al. (2001) plant, as the name's "optimized proportional" suggests:
//!
//! 1. loss ratio: `A ← (1−β)A + β·a_k`, `D ← (1−β)D + β·d_k`, `p̂ = D/A` (0 while `A = 0`),
//!    `a_k` the arrivals and `d_k` the congestion signals (this AQM's drops/marks plus drops at
//!    the hard limit) of the period just ended, `β = T/loss_tau`, `T = 1/w`;
//! 2. gain of the "optimised second-order" closed loop on the Hollot plant without delay,
//!    with `N/(RC) = sqrt(p̂/2)`: `K = (1 + 2p̃)·sqrt(p̃/2)/(R·C)`, `p̃ = max(p̂, p_min)`,
//!    `R = rtt + q_ref/C` the equilibrium round-trip time and `C` the capacity (packets/s);
//! 3. `p = clamp(p̂ + K·(q − q_ref), 0, 1)`, `q` the instantaneous queue (packets).
//!
//! At equilibrium `p = p̂` forces `q = q_ref`: the loss-ratio average acts as the integral.
//! Activations: one per timer run of the law.

use crate::algorithm::{Algorithm, Arrival, Env, Periodic, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::{Duration, Instant, NANOS_PER_SEC};

aqm_config! {
    /// AOPC configuration (EDC §4.2 values; reconstructed law, docs/aqm/aopc.md).
    pub struct AopcConfig as "aopc" {
        /// Reference queue length, packets. Default 200 (EDC §4.2).
        pub q_ref: f64 = 200.0, "packets";
        /// Sampling frequency, Hz. Default 160 (EDC §4.2).
        pub w: f64 = 160.0, "Hz";
        /// Propagation round-trip time of the gain's model, s; R = rtt + q_ref/C. Default
        /// 0.14 s: EDC §4 gives no propagation delays; `aqmlab repro edc` uses 20 ms access +
        /// 50 ms bottleneck, each way.
        pub rtt: Duration = Duration::from_millis(140), "s";
        /// Capacity C, packets/s; 0 (default) means the link's rate divided by the mean
        /// arrival size.
        pub capacity: f64 = 0.0, "packets/s";
        /// Time constant of the loss-ratio average, s. Default 0.5 (ours; not in the sources).
        pub loss_tau: Duration = Duration::from_millis(500), "s";
        /// Floor of the loss ratio in the gain (so the law starts from p̂ = 0). Default 0.001
        /// (ours).
        pub p_min: f64 = 0.001, "probability";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl AopcConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")?;
        crate::algorithm::check_rate_hz("w", self.w)?;
        ensure(
            self.rtt > Duration::ZERO,
            "rtt",
            self.rtt.as_secs_f64(),
            "must be > 0 s",
        )?;
        ensure(
            self.capacity.is_finite() && self.capacity >= 0.0,
            "capacity",
            self.capacity,
            "must be >= 0 (0: the link's rate)",
        )?;
        // Cross-field: the average's per-period weight T/loss_tau must not exceed 1.
        ensure(
            self.loss_tau.as_secs_f64() * self.w >= 1.0,
            "loss_tau",
            self.loss_tau.as_secs_f64(),
            "must be >= one sampling period 1/w",
        )?;
        ensure(
            self.p_min > 0.0 && self.p_min <= 1.0,
            "p_min",
            self.p_min,
            "must be in (0, 1]",
        )
    }
    /// Sampling period, integer ns (rounded to nearest).
    pub fn period(&self) -> Duration {
        Duration(((NANOS_PER_SEC as f64 / self.w).round() as u64).max(1))
    }
}

/// AOPC state.
#[derive(Debug, Clone)]
pub struct Aopc {
    cfg: AopcConfig,
    link_bytes_per_sec: f64,
    timer: Periodic,
    /// Averaged arrivals and signals per period.
    avg_arrivals: f64,
    avg_losses: f64,
    /// Counts of the current period.
    period_arrivals: u64,
    period_losses: u64,
    /// All arrivals and their bytes (mean packet size for `capacity = 0`).
    total_pkts: u64,
    total_bytes: u64,
    loss_ratio: f64,
    gain: f64,
    p: f64,
    activations: u64,
}

impl Aopc {
    /// Capacity in packets/s (configured, or link rate / mean arrival size; 0 if unknown).
    fn capacity(&self) -> f64 {
        if self.cfg.capacity > 0.0 {
            self.cfg.capacity
        } else if self.total_pkts > 0 {
            self.link_bytes_per_sec * self.total_pkts as f64 / self.total_bytes as f64
        } else {
            0.0
        }
    }
    /// One run of the law with the queue `q` (packets) and the period's `arrivals` and
    /// congestion signals `losses`.
    pub fn update(&mut self, q: f64, arrivals: u64, losses: u64) {
        let c = &self.cfg;
        let beta = 1.0 / (c.w * c.loss_tau.as_secs_f64());
        self.avg_arrivals += beta * (arrivals as f64 - self.avg_arrivals);
        self.avg_losses += beta * (losses as f64 - self.avg_losses);
        self.loss_ratio = if self.avg_arrivals > 0.0 {
            (self.avg_losses / self.avg_arrivals).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let cap = self.capacity();
        self.gain = if cap > 0.0 {
            let pt = self.loss_ratio.max(c.p_min);
            let r = c.rtt.as_secs_f64() + c.q_ref / cap;
            (1.0 + 2.0 * pt) * (pt / 2.0).sqrt() / (r * cap)
        } else {
            0.0
        };
        self.p = (self.loss_ratio + self.gain * (q - c.q_ref)).clamp(0.0, 1.0);
        self.activations += 1;
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// The measured loss ratio p̂.
    pub fn loss_ratio(&self) -> f64 {
        self.loss_ratio
    }
    /// The last gain K, 1/packet.
    pub fn gain(&self) -> f64 {
        self.gain
    }
}

impl Algorithm for Aopc {
    type Config = AopcConfig;

    fn build(cfg: &AopcConfig, env: &Env) -> Self {
        Aopc {
            cfg: *cfg,
            link_bytes_per_sec: env.link.rate.as_f64() / 8.0,
            timer: Periodic::new(cfg.period()),
            avg_arrivals: 0.0,
            avg_losses: 0.0,
            period_arrivals: 0,
            period_losses: 0,
            total_pkts: 0,
            total_bytes: 0,
            loss_ratio: 0.0,
            gain: 0.0,
            p: 0.0,
            activations: 0,
        }
    }
    fn cfg(&self) -> &AopcConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        self.link_bytes_per_sec = env.link.rate.as_f64() / 8.0;
    }
    fn reconfigure(&mut self, cfg: AopcConfig) {
        self.timer.set_period(cfg.period());
        self.cfg = cfg;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(&mut self, _now: Instant, pkt: &Arrival, _q: &QueueView, rng: &mut Rng) -> Verdict {
        self.period_arrivals += 1;
        self.total_pkts += 1;
        self.total_bytes += pkt.size as u64;
        let v = Verdict::early_with_probability(self.p, rng);
        if v != Verdict::Accept {
            self.period_losses += 1;
        }
        v
    }
    fn on_overflow(&mut self, _now: Instant) {
        self.period_losses += 1;
    }
    fn poll_at(&self) -> Option<Instant> {
        Some(self.timer.next())
    }
    fn on_timer(&mut self, now: Instant, q: &QueueView) {
        if self.timer.fire(now) {
            let (a, d) = (self.period_arrivals, self.period_losses);
            self.period_arrivals = 0;
            self.period_losses = 0;
            self.update(q.len_pkts as f64, a, d);
        }
    }
    fn activations(&self) -> u64 {
        self.activations
    }
    fn probability(&self) -> f64 {
        self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::testutil::{arrival, env, view};
    use crate::QueueLimit;

    fn aopc(cfg: AopcConfig) -> Aopc {
        Aopc::build(&cfg, &env(QueueLimit::Packets(800), 8))
    }

    fn cfg() -> AopcConfig {
        AopcConfig {
            capacity: 1000.0,
            rtt: Duration::from_millis(100),
            ..Default::default()
        }
    }

    /// C = 1000 packets/s, rtt 0.1 s, q_ref 200 ⇒ R = 0.3 s; β = (1/160)/0.5 = 0.0125.
    /// Run 1: 10 arrivals, 2 signals: p̂ = 0.2, K = 1.4·sqrt(0.1)/300 = 1.4757295747e-3,
    ///   q = 250: p = 0.2 + 50K = 0.27378647874.
    /// Run 2: 10 arrivals, 0 signals: A = 0.0125·10·(2 − 0.0125), D = 0.0125·2·0.9875,
    ///   p̂ = 1.975/19.875 = 0.099371069182, K = (1 + 2p̂)·sqrt(p̂/2)/300 = 8.906754887e-4,
    ///   q = 150: p = p̂ − 50K = 0.054837294747.
    /// Run 3 from a fresh state, no arrivals yet: p̂ = 0, K uses p_min = 0.001:
    ///   1.002·sqrt(0.0005)/300, q = 250: p = 50K = 3.7342335224e-3.
    /// Tolerance 1e-12.
    #[test]
    fn law_hand_computed() {
        let mut a = aopc(cfg());
        a.update(250.0, 10, 2);
        assert!((a.loss_ratio() - 0.2).abs() < 1e-12);
        assert!((a.gain() - 1.475_729_574_745_243_4e-3).abs() < 1e-12);
        assert!((a.p() - 0.273_786_478_737_262_2).abs() < 1e-12, "{}", a.p());
        a.update(150.0, 10, 0);
        assert!((a.loss_ratio() - 0.099_371_069_182_389_94).abs() < 1e-12);
        assert!(
            (a.p() - 0.054_837_294_746_615_17).abs() < 1e-12,
            "{}",
            a.p()
        );
        let mut b = aopc(cfg());
        b.update(250.0, 0, 0);
        assert!(
            (b.p() - 3.734_233_522_424_649e-3).abs() < 1e-12,
            "{}",
            b.p()
        );
        b.update(0.0, 0, 0);
        assert_eq!(b.p(), 0.0);
        assert_eq!(b.activations(), 2);
    }

    /// The timer runs at 160 Hz with the period's counts; overflow drops count as losses;
    /// capacity 0 takes the link rate (8 Mb/s of 1000-byte packets = 1000 packets/s).
    #[test]
    fn timer_counts_and_link_capacity() {
        let mut a = aopc(AopcConfig {
            rtt: Duration::from_millis(100),
            ..Default::default()
        });
        assert_eq!(a.poll_at(), Some(Instant(6_250_000)));
        let mut rng = Rng::new(1);
        for _ in 0..10 {
            assert_eq!(
                a.enqueue(Instant(1), &arrival(1000, 1, false), &view(0, 0), &mut rng),
                Verdict::Accept
            );
        }
        a.on_overflow(Instant(2));
        a.on_overflow(Instant(3));
        a.on_timer(Instant(6_250_000), &view(250, 250_000));
        // the same numbers as run 1 of law_hand_computed
        assert!((a.p() - 0.273_786_478_737_262_2).abs() < 1e-12, "{}", a.p());
        assert_eq!(a.activations(), 1);
    }

    #[test]
    fn validation() {
        assert!(AopcConfig::default().validate().is_ok());
        assert!(AopcConfig {
            loss_tau: Duration::from_millis(1),
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(AopcConfig {
            p_min: 0.0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(AopcConfig {
            rtt: Duration::ZERO,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(AopcConfig {
            capacity: -1.0,
            ..Default::default()
        }
        .validate()
        .is_err());
    }
}
