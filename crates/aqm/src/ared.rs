//! Adaptive RED (Floyd, Gummadi & Shenker 2001; docs/aqm/ared.md): gentle RED
//! ([`crate::red::Red`], reused as is) whose `max_p` is adapted every `interval`
//! (ns-2 `red.cc` `updateMaxP`):
//! * `avg > min_th + 0.6 (max_th − min_th)` and `max_p < top`:
//!   `max_p ← max_p + min(alpha, max_p/4)` (additive increase);
//! * `avg < min_th + 0.4 (max_th − min_th)` and `max_p > bottom`: `max_p ← beta·max_p`.
//!
//! Auto-configuration (paper §4, when `min_th`/`max_th`/`w_q` are 0):
//! `C` = link rate in packets/s of `mean_pkt_size` bytes;
//! `min_th = max(5, target·C/2)`, `max_th = 3·min_th`, `w_q = 1 − exp(−1/C)`.
//!
//! Activations: RED's probability computations plus one per run of the max_p adaptation.

use crate::algorithm::{Algorithm, Arrival, Env, Periodic, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::red::{Red, RedConfig};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Upper band of the target range: min_th + 0.6 (max_th − min_th) (FGS 2001 Fig. 5).
pub const TARGET_HIGH: f64 = 0.6;
/// Lower band of the target range: min_th + 0.4 (max_th − min_th) (FGS 2001 Fig. 5).
pub const TARGET_LOW: f64 = 0.4;

aqm_config! {
    /// Adaptive RED configuration (Floyd, Gummadi & Shenker 2001).
    pub struct AredConfig as "ared" {
        /// Minimum threshold, packets; 0 = auto `max(5, target·C/2)` (FGS 2001 §4). Default 0.
        pub min_th: f64 = 0.0, "packets";
        /// Maximum threshold, packets; 0 = auto `3·min_th` (FGS 2001 §4). Default 0.
        pub max_th: f64 = 0.0, "packets";
        /// EWMA weight; 0 = auto `1 − exp(−1/C)` (FGS 2001 §4). Default 0.
        pub w_q: f64 = 0.0, "weight";
        /// Initial max_p. Default 0.1 (ns-2 `linterm_` = 10).
        pub max_p: f64 = 0.1, "probability";
        /// Target queueing delay for the auto-configuration, seconds. Default 0.005
        /// (FGS 2001 §4).
        pub target: Duration = Duration::from_millis(5), "s";
        /// Adaptation period, seconds. Default 0.5 (FGS 2001 Fig. 5; ns-2 `interval_`).
        pub interval: Duration = Duration::from_millis(500), "s";
        /// Cap of the additive increase of max_p. Default 0.01 (FGS 2001 Fig. 5).
        pub alpha: f64 = 0.01, "probability";
        /// Multiplicative decrease factor of max_p. Default 0.9 (FGS 2001 Fig. 5).
        pub beta: f64 = 0.9, "factor";
        /// Upper bound of max_p. Default 0.5 (FGS 2001 Fig. 5).
        pub top: f64 = 0.5, "probability";
        /// Lower bound of max_p. Default 0.01 (FGS 2001 Fig. 5).
        pub bottom: f64 = 0.01, "probability";
        /// Count spacing as ns-2 `wait_`. Default true (see RED).
        pub wait: bool = true, "bool";
        /// Mean packet size for C (auto-config) and the idle correction, bytes.
        /// Default 500 (ns-2 `mean_pktsize_`).
        pub mean_pkt_size: u32 = 500, "bytes";
        /// Mark CE instead of dropping ECN-capable packets (early drops only). Default false.
        pub ecn: bool = false, "bool";
    }
}

impl AredConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            self.min_th >= 0.0,
            "min_th",
            self.min_th,
            "must be >= 0 (0 = auto)",
        )?;
        ensure(
            self.max_th == 0.0 || self.max_th > self.min_th,
            "max_th",
            self.max_th,
            "must be > min_th (or 0 = auto)",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.w_q),
            "w_q",
            self.w_q,
            "must be in [0, 1] (0 = auto)",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.max_p),
            "max_p",
            self.max_p,
            "must be in [0, 1]",
        )?;
        ensure(
            self.target > Duration::ZERO,
            "target",
            self.target.as_secs_f64(),
            "must be > 0",
        )?;
        crate::algorithm::check_period("interval", self.interval)?;
        ensure(self.alpha >= 0.0, "alpha", self.alpha, "must be >= 0")?;
        ensure(
            self.beta > 0.0 && self.beta <= 1.0,
            "beta",
            self.beta,
            "must be in (0, 1]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.top),
            "top",
            self.top,
            "must be in [0, 1]",
        )?;
        ensure(
            self.bottom >= 0.0 && self.bottom <= self.top,
            "bottom",
            self.bottom,
            "must be in [0, top]",
        )?;
        ensure(
            self.mean_pkt_size > 0,
            "mean_pkt_size",
            self.mean_pkt_size as f64,
            "must be > 0",
        )
    }

    /// The RED parameters this config resolves to on `env` (auto values filled in).
    pub fn resolve(&self, env: &Env) -> RedConfig {
        let c = env.link.rate.packets_per_sec(self.mean_pkt_size);
        let min_th = if self.min_th > 0.0 {
            self.min_th
        } else {
            (self.target.as_secs_f64() * c / 2.0).max(5.0)
        };
        let max_th = if self.max_th > 0.0 {
            self.max_th
        } else {
            3.0 * min_th
        };
        let w_q = if self.w_q > 0.0 {
            self.w_q
        } else if c > 0.0 {
            1.0 - (-1.0 / c).exp()
        } else {
            0.002
        };
        RedConfig {
            min_th,
            max_th,
            w_q,
            max_p: self.max_p,
            gentle: true,
            wait: self.wait,
            mean_pkt_size: self.mean_pkt_size,
            ecn: self.ecn,
        }
    }
}

/// Adaptive RED state: a RED engine plus the max_p adaptation timer.
#[derive(Debug, Clone)]
pub struct Ared {
    cfg: AredConfig,
    env: Env,
    red: Red,
    timer: Periodic,
    updates: u64,
}

impl Ared {
    /// The RED engine.
    pub fn red(&self) -> &Red {
        &self.red
    }

    /// One run of the max_p adaptation (FGS 2001 Fig. 5) on the current average.
    pub fn update_max_p(&mut self) {
        let rc = self.red.cfg();
        let span = rc.max_th - rc.min_th;
        let avg = self.red.avg();
        let max_p = self.red.max_p();
        if avg > rc.min_th + TARGET_HIGH * span && max_p < self.cfg.top {
            let inc = self.cfg.alpha.min(max_p / 4.0);
            self.red.set_max_p((max_p + inc).min(self.cfg.top));
        } else if avg < rc.min_th + TARGET_LOW * span && max_p > self.cfg.bottom {
            self.red
                .set_max_p((max_p * self.cfg.beta).max(self.cfg.bottom));
        }
        self.updates += 1;
    }
}

impl Algorithm for Ared {
    type Config = AredConfig;

    fn build(cfg: &AredConfig, env: &Env) -> Self {
        Ared {
            cfg: *cfg,
            env: *env,
            red: Red::build(&cfg.resolve(env), env),
            timer: Periodic::new(cfg.interval),
            updates: 0,
        }
    }
    fn cfg(&self) -> &AredConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        // the idle rule and the automatic thresholds follow the rate; the adapted max_p stays
        self.env = *env;
        let current = self.red.max_p();
        self.red.reconfigure(self.cfg.resolve(env));
        self.red.set_max_p(current);
        self.red.link_changed(env);
    }
    fn reconfigure(&mut self, cfg: AredConfig) {
        let max_p_changed = cfg.max_p != self.cfg.max_p;
        self.timer.set_period(cfg.interval);
        self.cfg = cfg;
        let current = self.red.max_p();
        self.red.reconfigure(cfg.resolve(&self.env));
        // Keep the adapted max_p unless the user set a new one.
        if !max_p_changed {
            self.red.set_max_p(current);
        }
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(&mut self, now: Instant, pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
        self.red.enqueue(now, pkt, q, rng)
    }
    fn on_empty(&mut self, idle_from: Instant) {
        self.red.on_empty(idle_from);
    }
    fn poll_at(&self) -> Option<Instant> {
        Some(self.timer.next())
    }
    fn on_timer(&mut self, now: Instant, _q: &QueueView) {
        if self.timer.fire(now) {
            self.update_max_p();
        }
    }
    fn activations(&self) -> u64 {
        self.red.activations() + self.updates
    }
    fn probability(&self) -> f64 {
        self.red.probability()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::env;
    use crate::QueueLimit;

    /// FGS 2001 §4 auto-configuration at 10 Mb/s with 500-byte packets: C = 2500 pkt/s,
    /// min_th = max(5, 0.005·2500/2) = 6.25, max_th = 18.75, w_q = 1 − exp(−1/2500).
    #[test]
    fn auto_configuration() {
        let rc = AredConfig::default().resolve(&env(QueueLimit::Packets(100), 10));
        assert!((rc.min_th - 6.25).abs() < 1e-12);
        assert!((rc.max_th - 18.75).abs() < 1e-12);
        assert!((rc.w_q - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        assert!(rc.gentle);
        // Slow link: the floor of 5 packets applies (1 Mb/s -> 250 pkt/s -> 0.625).
        let rc = AredConfig::default().resolve(&env(QueueLimit::Packets(100), 1));
        assert_eq!(rc.min_th, 5.0);
        assert_eq!(rc.max_th, 15.0);
    }

    /// FGS 2001 Fig. 5 max_p adaptation on hand-computed inputs (min_th 10, max_th 30:
    /// target band [18, 22]).
    #[test]
    fn max_p_adaptation() {
        let cfg = AredConfig {
            min_th: 10.0,
            max_th: 30.0,
            ..Default::default()
        };
        let e = env(QueueLimit::Packets(100), 10);
        let mut a = Ared::build(&cfg, &e);
        // avg above 22: +min(0.01, 0.1/4) = +0.01.
        a.red.set_avg(25.0);
        a.update_max_p();
        assert!((a.red().max_p() - 0.11).abs() < 1e-15);
        // Small max_p: increase is max_p/4: 0.02 -> 0.025.
        a.red.set_max_p(0.02);
        a.update_max_p();
        assert!((a.red().max_p() - 0.025).abs() < 1e-15);
        // In the band: unchanged.
        a.red.set_avg(20.0);
        a.update_max_p();
        assert!((a.red().max_p() - 0.025).abs() < 1e-15);
        // Below 18: ×0.9.
        a.red.set_avg(12.0);
        a.update_max_p();
        assert!((a.red().max_p() - 0.0225).abs() < 1e-15);
        // Bounded by bottom (0.01) and top (0.5).
        a.red.set_max_p(0.0105);
        a.update_max_p();
        assert!((a.red().max_p() - 0.01).abs() < 1e-15);
        a.update_max_p();
        assert!((a.red().max_p() - 0.01).abs() < 1e-15);
        a.red.set_avg(29.0);
        a.red.set_max_p(0.495);
        a.update_max_p();
        assert!((a.red().max_p() - 0.5).abs() < 1e-15);
        a.update_max_p();
        assert!((a.red().max_p() - 0.5).abs() < 1e-15);
        assert_eq!(a.activations(), 8);
    }

    /// The adaptation runs every 0.5 s through poll_at / on_timer.
    #[test]
    fn timer_every_interval() {
        let mut a = Ared::build(&AredConfig::default(), &env(QueueLimit::Packets(100), 10));
        let v = crate::testutil::view(0, 0);
        assert_eq!(a.poll_at(), Some(Instant(500_000_000)));
        a.on_timer(Instant(500_000_000), &v);
        assert_eq!(a.poll_at(), Some(Instant(1_000_000_000)));
        assert_eq!(a.activations(), 1);
    }
}
