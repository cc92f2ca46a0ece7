//! PIP — PI series compensation plus position feedback (Zhang, Liu & Dou 2003), as the EDC
//! paper (Suzer, Kang & Basaran 2011 §1.2, §4.2) describes it; docs/aqm/pip.md.
//!
//! **Reconstructed**: the original paper was not available. The EDC paper names the structure
//! (a PI controller in series plus position, i.e. queue-length, feedback with gain `K_h`) and
//! gives `K_h` = 0.0021, τ = 0.47 s, 160 Hz, `q_ref` = 200. Our law, periodic at `w` Hz with
//! `T = 1/w`, `q(k)` the instantaneous queue (packets) at the run and `e(k) = q(k) − q_ref`:
//!
//! `x(k) = x(k−1) + k_c·[(e(k) − e(k−1)) + (T/τ)·e(k)]`   (PI in velocity form)
//! `p(k) = clamp(x(k) + k_h·q(k), 0, 1)`                    (plus position feedback)
//!
//! The reference enters only through the PI; the position term feeds the queue itself back,
//! and the integral absorbs its offset `k_h·q_ref` at equilibrium. Anti-windup: `x` is kept
//! in `[−k_h·q, 1 − k_h·q]`, so that `p` is exactly its clamp (with `k_h = 0` this is PI's
//! clamp of `p`). Initial state `x = 0`, `q(−1) = 0`.
//!
//! Activations: one per timer run of the law.

use crate::algorithm::{periodic_queue_law, Algorithm, Env, Periodic};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::time::{Duration, NANOS_PER_SEC};

aqm_config! {
    /// PIP configuration (EDC §4.2 values; reconstructed law, docs/aqm/pip.md).
    pub struct PipConfig as "pip" {
        /// Position-feedback gain K_h on the queue, 1/packet. Default 0.0021 (EDC §4.2).
        pub kh: f64 = 0.0021, "1/packets";
        /// Proportional gain k_c of the series PI, 1/packet. Default 0.0021 (= K_h: EDC §4.2
        /// gives only K_h and τ, and the PIP paper was not available; we use K_h as the PI's
        /// proportional gain too).
        pub kc: f64 = 0.0021, "1/packets";
        /// Integral time τ of the series PI, s. Default 0.47 (EDC §4.2).
        pub tau: Duration = Duration::from_millis(470), "s";
        /// Sampling frequency, Hz. Default 160 (EDC §4.2).
        pub w: f64 = 160.0, "Hz";
        /// Reference queue length, packets. Default 200 (EDC §4.2).
        pub q_ref: f64 = 200.0, "packets";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl PipConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            self.kh.is_finite() && self.kh >= 0.0,
            "kh",
            self.kh,
            "must be finite and >= 0",
        )?;
        ensure(
            self.kc.is_finite() && self.kc > 0.0,
            "kc",
            self.kc,
            "must be finite and > 0",
        )?;
        ensure(
            self.tau > Duration::ZERO,
            "tau",
            self.tau.as_secs_f64(),
            "must be > 0 s",
        )?;
        crate::algorithm::check_rate_hz("w", self.w)?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")
    }
    /// Sampling period, integer ns (rounded to nearest).
    pub fn period(&self) -> Duration {
        Duration(((NANOS_PER_SEC as f64 / self.w).round() as u64).max(1))
    }
}

/// PIP state.
#[derive(Debug, Clone)]
pub struct Pip {
    cfg: PipConfig,
    /// PI state x(k).
    x: f64,
    p: f64,
    q_old: f64,
    timer: Periodic,
    activations: u64,
}

impl Pip {
    /// One run of the law with the current queue `q` (packets); `T = 1/w`.
    pub fn update(&mut self, q: f64) {
        let c = &self.cfg;
        let t = 1.0 / c.w;
        let e = q - c.q_ref;
        let e_old = self.q_old - c.q_ref;
        let x = self.x + c.kc * ((e - e_old) + (t / c.tau.as_secs_f64()) * e);
        let pos = c.kh * q;
        self.x = x.clamp(-pos, 1.0 - pos);
        self.p = (self.x + pos).clamp(0.0, 1.0);
        self.q_old = q;
        self.activations += 1;
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// The PI state x(k).
    pub fn x(&self) -> f64 {
        self.x
    }
}

impl Algorithm for Pip {
    type Config = PipConfig;

    fn build(cfg: &PipConfig, _env: &Env) -> Self {
        Pip {
            cfg: *cfg,
            x: 0.0,
            p: 0.0,
            q_old: 0.0,
            timer: Periodic::new(cfg.period()),
            activations: 0,
        }
    }
    periodic_queue_law!(PipConfig);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::testutil::{env, view};
    use crate::time::Instant;
    use crate::QueueLimit;

    fn pip(cfg: PipConfig) -> Pip {
        Pip::build(&cfg, &env(QueueLimit::Packets(800), 10))
    }

    /// Defaults (k_c = k_h = 0.0021, τ = 0.47 s, T = 1/160 s, q_ref = 200), hand-computed with
    /// T/τ = 0.00625/0.47 = 0.0132978723...:
    /// q = 210: e = 10, e_old = −200: x = 0.0021·(210 + 0.132978723) = 0.4412792553;
    ///   bounds [−0.441, 0.559] keep it; p = x + 0.441 = 0.8822792553.
    /// q = 190: e = −10: x += 0.0021·(−20 − 0.132978723) → 0.3989999999 (= 0.4412792553 −
    ///   0.0422792553); p = 0.399 + 0.399 = 0.798.
    /// q = 0: e = −200: raw x = 0.399 + 0.0021·(−190 − 2.659574) = −0.0055829787, bounds
    ///   [0, 1] → x = 0, p = 0 (anti-windup).
    /// Tolerance 1e-12.
    #[test]
    fn law_hand_computed() {
        let mut p = pip(PipConfig::default());
        p.update(210.0);
        assert!((p.x() - 0.441_279_255_319_148_9).abs() < 1e-12, "{}", p.x());
        assert!((p.p() - 0.882_279_255_319_148_9).abs() < 1e-12, "{}", p.p());
        p.update(190.0);
        assert!((p.x() - 0.399).abs() < 1e-12, "{}", p.x());
        assert!((p.p() - 0.798).abs() < 1e-12, "{}", p.p());
        p.update(0.0);
        assert_eq!(p.x(), 0.0);
        assert_eq!(p.p(), 0.0);
        assert_eq!(p.activations(), 3);
    }

    /// With k_h = 0 the law is a PI in velocity form: p = k_c·(Δe + (T/τ)e), clamped at 1.
    #[test]
    fn without_position_feedback_is_pi() {
        let mut p = pip(PipConfig {
            kh: 0.0,
            kc: 1e-3,
            ..Default::default()
        });
        p.update(250.0); // e = 50, e_old = −200: 1e-3·(250 + 50·0.0132978723) = 0.2506648936
        assert!((p.p() - 0.250_664_893_617_021_3).abs() < 1e-12, "{}", p.p());
        p.update(1000.0); // +1e-3·(750 + 800·0.0132978723) > 1 → clamp at 1
        assert_eq!(p.p(), 1.0);
    }

    /// 160 Hz timer: 6 250 000 ns; the queue at the timer is used.
    #[test]
    fn timer() {
        let mut p = pip(PipConfig::default());
        assert_eq!(p.poll_at(), Some(Instant(6_250_000)));
        p.on_timer(Instant(6_250_000), &view(210, 210_000));
        assert!((p.p() - 0.882_279_255_319_148_9).abs() < 1e-12);
        assert_eq!(p.poll_at(), Some(Instant(12_500_000)));
        p.on_timer(Instant(12_000_000), &view(0, 0)); // early: nothing
        assert_eq!(p.activations(), 1);
    }

    #[test]
    fn validation() {
        assert!(PipConfig::default().validate().is_ok());
        assert!(PipConfig {
            kc: 0.0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(PipConfig {
            tau: Duration::ZERO,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(PipConfig {
            kh: -1.0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(PipConfig {
            w: -1.0,
            ..Default::default()
        }
        .validate()
        .is_err());
    }
}
