//! PI controller (Hollot, Misra, Towsley & Gong, INFOCOM 2001; docs/aqm/pi.md),
//! following ns-2 `pi.cc` in packet mode.
//!
//! Periodic at `w` Hz: `p(k) = p(k−1) + a (q(k) − q_ref) − b (q(k−1) − q_ref)`, clamped to
//! [0, 1], `q` the instantaneous queue in packets at the sampling instant. Each arrival is
//! dropped (or marked) with probability `p`; the hard limit stays underneath.
//!
//! Activations: one per sampling-period run of the law.

use crate::algorithm::{periodic_queue_law, Algorithm, Env, Periodic};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::time::{Duration, NANOS_PER_SEC};

aqm_config! {
    /// PI configuration (ns-2 `pi.cc` defaults).
    pub struct PiConfig as "pi" {
        /// Gain on the current error, 1/packet. Default 1.822e-5 (Hollot et al. 2001 §V; ns-2 `a_`).
        pub a: f64 = 1.822e-5, "1/packets";
        /// Gain on the previous error, 1/packet. Default 1.816e-5 (Hollot et al. 2001 §V; ns-2 `b_`).
        pub b: f64 = 1.816e-5, "1/packets";
        /// Sampling frequency, Hz. Default 170 (ns-2 `w_`; the paper uses 160).
        pub w: f64 = 170.0, "Hz";
        /// Reference queue length, packets. Default 50 (ns-2 `qref_`; the paper uses 200).
        pub q_ref: f64 = 50.0, "packets";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl PiConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(self.a.is_finite(), "a", self.a, "must be finite")?;
        ensure(self.b.is_finite(), "b", self.b, "must be finite")?;
        crate::algorithm::check_rate_hz("w", self.w)?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")
    }
    /// Sampling period, integer ns (rounded to nearest).
    pub fn period(&self) -> Duration {
        Duration(((NANOS_PER_SEC as f64 / self.w).round() as u64).max(1))
    }
}

/// PI state.
#[derive(Debug, Clone)]
pub struct Pi {
    cfg: PiConfig,
    p: f64,
    q_old: f64,
    timer: Periodic,
    activations: u64,
}

impl Pi {
    /// One run of the law with the current queue `q` (packets).
    pub fn update(&mut self, q: f64) {
        let c = &self.cfg;
        self.p = (self.p + c.a * (q - c.q_ref) - c.b * (self.q_old - c.q_ref)).clamp(0.0, 1.0);
        self.q_old = q;
        self.activations += 1;
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
}

impl Algorithm for Pi {
    type Config = PiConfig;

    fn build(cfg: &PiConfig, _env: &Env) -> Self {
        Pi {
            cfg: *cfg,
            p: 0.0,
            q_old: 0.0,
            timer: Periodic::new(cfg.period()),
            activations: 0,
        }
    }
    periodic_queue_law!(PiConfig);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{env, view};
    use crate::time::Instant;
    use crate::QueueLimit;

    fn pi(cfg: PiConfig) -> Pi {
        Pi::build(&cfg, &env(QueueLimit::Packets(1000), 10))
    }

    /// Hollot et al. 2001 discrete law with ns-2 defaults (a = 1.822e-5, b = 1.816e-5,
    /// q_ref = 50, q(0) = 0) over samples 60, 70, 40, 50, hand-computed:
    /// p1 = 1.822e-5·10 + 1.816e-5·50 = 1.0902e-3; p2 = p1 + 1.822e-5·20 − 1.816e-5·10 = 1.2730e-3;
    /// p3 = p2 − 1.822e-5·10 − 1.816e-5·20 = 7.276e-4; p4 = p3 + 1.816e-5·10 = 9.092e-4.
    /// Tolerance 1e-15 absolute.
    #[test]
    fn update_equation_hand_computed() {
        let mut p = pi(PiConfig::default());
        for (q, expected) in [
            (60.0, 1.0902e-3),
            (70.0, 1.2730e-3),
            (40.0, 7.276e-4),
            (50.0, 9.092e-4),
        ] {
            p.update(q);
            assert!((p.p() - expected).abs() < 1e-15, "q {q}: {}", p.p());
        }
        assert_eq!(p.activations(), 4);
    }

    /// p is clamped to [0, 1].
    #[test]
    fn clamp() {
        let mut p = pi(PiConfig {
            a: 0.1,
            b: 0.0,
            ..Default::default()
        });
        p.update(100.0); // 0.1·50 = 5 -> 1
        assert_eq!(p.p(), 1.0);
        p.update(0.0); // 1 − 5 -> 0
        assert_eq!(p.p(), 0.0);
    }

    /// Sampling every 1/170 s = 5 882 353 ns (rounded); the queue length at the timer is used;
    /// q_ref can be changed while running.
    #[test]
    fn timer_and_runtime_q_ref() {
        let mut p = pi(PiConfig::default());
        assert_eq!(p.poll_at(), Some(Instant(5_882_353)));
        p.on_timer(Instant(5_882_353), &view(60, 60_000));
        assert!((p.p() - 1.0902e-3).abs() < 1e-15);
        assert_eq!(p.poll_at(), Some(Instant(11_764_706)));
        let mut c = *p.cfg();
        c.q_ref = 60.0;
        p.reconfigure(c);
        p.on_timer(Instant(11_764_706), &view(60, 60_000));
        // + a·0 − b·(60 − 60) = unchanged.
        assert!((p.p() - 1.0902e-3).abs() < 1e-15);
    }
}
