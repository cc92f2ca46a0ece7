//! EDC — event-driven PI controller (Suzer, Kang & Basaran 2011; docs/aqm/edc.md).
//!
//! The PI law of EDC eq. 10, `C(z) = α(z − β)/(z − 1)` with `α = K_P(K_I + 1)`,
//! `β = 1/(K_I + 1)`, runs in the packet-arrival domain: every `n_event` arrivals, with
//! `e(k) = q(k) − q_ref` and `q(k)` the instantaneous queue (packets) seen by the arrival that
//! completes the count (before it is added),
//!
//! `p(k) = p(k−1) + K_P(K_I + 1)·e(k) − K_P·e(k−1)
//!       = p(k−1) + K_P·[e(k) − e(k−1)] + K_P·K_I·e(k)`, clamped to [0, 1].
//!
//! The arrival that triggers a run is decided with the new `p`; every arrival is dropped (or
//! marked, with `ecn`) with the current `p`. There is no timer: the law runs more often under
//! heavier load. Every arrival counts towards `n_event`, also those then dropped: EDC §3.1
//! invokes the controller when "the number of arriving packets" reaches the threshold without
//! saying whether dropped ones count; we count the offered load (docs/aqm/edc.md). Initial
//! state `p = 0`, `q(−1) = 0`
//! (so `e(−1) = −q_ref`, as in PI). The previous sample is stored as a queue length, so a
//! change of `q_ref` while running acts like PI's: `e(k−1)` is recomputed with the new
//! `q_ref`.
//!
//! Activations: one per run of the law (every `n_event` arrivals), so the paper's activation
//! frequency is `activations / time`.

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::Instant;

aqm_config! {
    /// EDC configuration (EDC §4.2).
    pub struct EdcConfig as "edc" {
        /// Proportional gain K_P, probability per packet of queue error. Default 0.03
        /// (EDC §4.2, root locus).
        pub kp: f64 = 0.03, "1/packets";
        /// Integral gain K_I (EDC eq. 10: α = K_P(K_I + 1)). Default 0.01 (EDC §4.2).
        pub ki: f64 = 0.01, "dimensionless";
        /// Reference queue, packets. Default 200 (EDC §4.2).
        pub q_ref: f64 = 200.0, "packets";
        /// Event threshold n: packet arrivals per run of the law. Default 30 (EDC §4.2).
        pub n_event: u32 = 30, "packets";
        /// Mark CE instead of dropping ECN-capable packets. Default false (EDC drops).
        pub ecn: bool = false, "bool";
    }
}

impl EdcConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(self.kp > 0.0, "kp", self.kp, "must be > 0")?;
        ensure(self.ki >= 0.0, "ki", self.ki, "must be >= 0")?;
        // Cross-field: the integral gain per run, K_P·K_I, must be positive, or the law is
        // P-only and cannot hold q_ref.
        ensure(
            self.kp * self.ki > 0.0,
            "ki",
            self.ki,
            "K_P·K_I must be > 0 (the integral action holds q_ref)",
        )?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")?;
        ensure(
            self.n_event >= 1,
            "n_event",
            self.n_event as f64,
            "must be >= 1",
        )
    }
}

/// EDC state.
#[derive(Debug, Clone)]
pub struct Edc {
    cfg: EdcConfig,
    p: f64,
    /// Queue at the previous run (packets).
    q_old: f64,
    /// Arrivals since the last run.
    count: u32,
    activations: u64,
}

impl Edc {
    /// One run of the law (EDC eq. 10) with the queue `q` (packets).
    pub fn update(&mut self, q: f64) {
        let c = &self.cfg;
        let e = q - c.q_ref;
        let e_old = self.q_old - c.q_ref;
        self.p = (self.p + c.kp * (e - e_old) + c.kp * c.ki * e).clamp(0.0, 1.0);
        self.q_old = q;
        self.activations += 1;
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// Arrivals since the last run.
    pub fn count(&self) -> u32 {
        self.count
    }
}

impl Algorithm for Edc {
    type Config = EdcConfig;

    fn build(cfg: &EdcConfig, _env: &Env) -> Self {
        Edc {
            cfg: *cfg,
            p: 0.0,
            q_old: 0.0,
            count: 0,
            activations: 0,
        }
    }
    fn cfg(&self) -> &EdcConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: EdcConfig) {
        self.cfg = cfg;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(&mut self, _now: Instant, _pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
        self.count += 1;
        if self.count >= self.cfg.n_event {
            self.count = 0;
            self.update(q.len_pkts as f64);
        }
        Verdict::early_with_probability(self.p, rng)
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

    fn edc(cfg: EdcConfig) -> Edc {
        Edc::build(&cfg, &env(QueueLimit::Packets(800), 10))
    }

    /// EDC eq. 10 with the paper's K_P = 0.03, K_I = 0.01, q_ref = 200 from q(−1) = 0
    /// (e(−1) = −200), hand-computed (K_P·K_I = 3e-4):
    /// q = 205: e = 5,   p = 0 + 0.03·205 + 3e-4·5 = 6.1515 -> clamp 1;
    /// q = 190: e = −10, p = 1 + 0.03·(−15) − 0.003 = 0.547;
    /// q = 195: e = −5,  p = 0.547 + 0.15 − 0.0015 = 0.6955;
    /// q = 180: e = −20, p = 0.6955 − 0.45 − 0.006 = 0.2395;
    /// q = 180: e = −20, p = 0.2395 − 0.006 = 0.2335.
    /// Tolerance 1e-12 absolute.
    #[test]
    fn law_hand_computed() {
        let mut e = edc(EdcConfig::default());
        for (q, expected) in [
            (205.0, 1.0),
            (190.0, 0.547),
            (195.0, 0.6955),
            (180.0, 0.2395),
            (180.0, 0.2335),
        ] {
            e.update(q);
            assert!((e.p() - expected).abs() < 1e-12, "q {q}: {}", e.p());
        }
        assert_eq!(e.activations(), 5);
        // Below zero it clamps at 0.
        e.update(0.0); // 0.2335 − 5.4 − 0.06 < 0
        assert_eq!(e.p(), 0.0);
    }

    /// The law runs on every n_event-th arrival only, with the queue that arrival sees; the
    /// other arrivals use the held p. n_event = 3, q_ref = 10, kp = 0.01, ki = 0.5:
    /// arrivals 1, 2 see p = 0; arrival 3 (q = 20) runs: p = 0.01·(10 − (−10)) + 0.005·10
    /// = 0.25; arrivals 4, 5 keep 0.25 whatever the queue; arrival 6 (q = 10): e = 0,
    /// p = 0.25 + 0.01·(0 − 10) = 0.15.
    #[test]
    fn runs_every_n_event_arrivals() {
        let mut e = edc(EdcConfig {
            kp: 0.01,
            ki: 0.5,
            q_ref: 10.0,
            n_event: 3,
            ..Default::default()
        });
        let mut rng = Rng::new(3);
        let a = arrival(1000, 0, false);
        let qs = [20u32, 20, 20, 50, 0, 10];
        let ps = [0.0, 0.0, 0.25, 0.25, 0.25, 0.15];
        let acts = [0u64, 0, 1, 1, 1, 2];
        for i in 0..6 {
            e.enqueue(Instant::ZERO, &a, &view(qs[i], 0), &mut rng);
            assert!(
                (e.p() - ps[i]).abs() < 1e-12,
                "arrival {}: {}",
                i + 1,
                e.p()
            );
            assert_eq!(e.activations(), acts[i]);
        }
        // Activations over many arrivals: one per n_event.
        for _ in 0..3000 {
            e.enqueue(Instant::ZERO, &a, &view(10, 0), &mut rng);
        }
        assert_eq!(e.activations(), 2 + 1000);
    }

    /// Range and cross-field checks.
    #[test]
    fn validation() {
        for (k, v) in [
            ("kp", 0.0),
            ("ki", -0.1),
            ("ki", 0.0),
            ("n_event", 0.0),
            ("n_event", 2.5),
        ] {
            let mut c = EdcConfig::default();
            assert!(c.set_param(k, v).is_err(), "{k} = {v}");
            assert_eq!(c, EdcConfig::default());
        }
    }
}
