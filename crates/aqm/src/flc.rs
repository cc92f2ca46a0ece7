//! FLC — fuzzy logic controller for AQM (Ren, Ren & Shan, Computer Communications 2002), as
//! the EDC paper (Suzer, Kang & Basaran 2011 §1.2, §4.2) describes it; docs/aqm/flc.md.
//!
//! **Reconstructed**: the original paper was not available. EDC §4.2 gives the input gains
//! `K_e`, `K_δe` (of the queue error and its change), 160 Hz and `q_ref` = 200; the fuzzy sets,
//! the rule base, the defuzzification and the incremental output below are a standard PI-type
//! fuzzy controller of our choosing (docs/aqm/flc.md). Periodic at `w` Hz, with
//! `e(k) = q(k) − q_ref` (packets) and `Δe(k) = e(k) − e(k−1)`:
//!
//! 1. scale and saturate: `x = clamp(k_e·e, −1, 1)`, `y = clamp(k_de·Δe, −1, 1)`;
//! 2. seven triangular sets NB..PB centred at `i/3`, `i = −3..3`, half-width 1/3, on both
//!    inputs and the output;
//! 3. PI-type rule base (Mac Vicar-Whelan): `(e is i) and (Δe is j) ⇒ (u is clamp(i + j, −3, 3))`,
//!    firing strength `min(μ_i(x), μ_j(y))`;
//! 4. defuzzify by the height method (weighted mean of the fired output centres), `u ∈ [−1, 1]`;
//! 5. incremental output `p(k) = clamp(p(k−1) + k_u·u, 0, 1)`.
//!
//! Initial state `p = 0`, `e(−1) = 0`. `q_ref` is used as given, also when the buffer cannot
//! hold it (then, as for PI, the law only ever lowers `p`; no silent substitute).
//! Activations: one per timer run of the law.

use crate::algorithm::{periodic_queue_law, Algorithm, Env, Periodic};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::time::{Duration, NANOS_PER_SEC};

aqm_config! {
    /// FLC configuration (EDC §4.2 values; reconstructed law, docs/aqm/flc.md).
    pub struct FlcConfig as "flc" {
        /// Scaling gain K_e of the queue error, 1/packet. Default 0.05 (EDC §4.2).
        pub ke: f64 = 0.05, "1/packets";
        /// Scaling gain K_δe of the error's change per period, 1/packet. Default 0.01 (EDC §4.2).
        pub kde: f64 = 0.01, "1/packets";
        /// Output gain K_u: probability change per period at u = 1. Default 0.005 (not given
        /// by EDC §4.2; ours: at most 0.8 per second at 160 Hz).
        pub ku: f64 = 0.005, "probability";
        /// Sampling frequency, Hz. Default 160 (EDC §4.2).
        pub w: f64 = 160.0, "Hz";
        /// Reference queue length, packets. Default 200 (EDC §4.2).
        pub q_ref: f64 = 200.0, "packets";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl FlcConfig {
    fn check(&self) -> Result<(), ConfigError> {
        for (k, v) in [("ke", self.ke), ("kde", self.kde), ("ku", self.ku)] {
            ensure(v.is_finite() && v > 0.0, k, v, "must be finite and > 0")?;
        }
        ensure(self.ku <= 1.0, "ku", self.ku, "must be <= 1")?;
        crate::algorithm::check_rate_hz("w", self.w)?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")
    }
    /// Sampling period, integer ns (rounded to nearest).
    pub fn period(&self) -> Duration {
        Duration(((NANOS_PER_SEC as f64 / self.w).round() as u64).max(1))
    }
}

/// Membership of `x` (in [−1, 1]) in the triangular set centred at `i/3`, half-width 1/3.
fn membership(x: f64, i: i32) -> f64 {
    (1.0 - 3.0 * (x - i as f64 / 3.0).abs()).max(0.0)
}

/// The fuzzy inference: scaled, saturated inputs `x`, `y` in [−1, 1] to `u` in [−1, 1].
pub fn infer(x: f64, y: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for i in -3..=3 {
        let mi = membership(x, i);
        if mi == 0.0 {
            continue;
        }
        for j in -3..=3 {
            let w = mi.min(membership(y, j));
            if w > 0.0 {
                num += w * (i + j).clamp(-3, 3) as f64 / 3.0;
                den += w;
            }
        }
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// FLC state.
#[derive(Debug, Clone)]
pub struct Flc {
    cfg: FlcConfig,
    p: f64,
    e_old: f64,
    u: f64,
    timer: Periodic,
    activations: u64,
}

impl Flc {
    /// One run of the law with the current queue `q` (packets).
    pub fn update(&mut self, q: f64) {
        let c = &self.cfg;
        let e = q - c.q_ref;
        let x = (c.ke * e).clamp(-1.0, 1.0);
        let y = (c.kde * (e - self.e_old)).clamp(-1.0, 1.0);
        self.u = infer(x, y);
        self.p = (self.p + c.ku * self.u).clamp(0.0, 1.0);
        self.e_old = e;
        self.activations += 1;
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// The last defuzzified output u.
    pub fn u(&self) -> f64 {
        self.u
    }
}

impl Algorithm for Flc {
    type Config = FlcConfig;

    fn build(cfg: &FlcConfig, _env: &Env) -> Self {
        Flc {
            cfg: *cfg,
            p: 0.0,
            e_old: 0.0,
            u: 0.0,
            timer: Periodic::new(cfg.period()),
            activations: 0,
        }
    }
    periodic_queue_law!(FlcConfig);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::testutil::{env, view};
    use crate::time::Instant;
    use crate::QueueLimit;

    fn flc(cfg: FlcConfig) -> Flc {
        Flc::build(&cfg, &env(QueueLimit::Packets(800), 10))
    }

    /// Inference by hand: x = 0.5 is PS (i = 1) and PM (i = 2) with 0.5 each; y = 0.1 is ZE
    /// (0.7) and PS (0.3). Rules: (1,0)→1 with 0.5, (1,1)→2 with 0.3, (2,0)→2 with 0.5,
    /// (2,1)→3 with 0.3: u = (0.5/3 + 0.3·2/3 + 0.5·2/3 + 0.3·1)/1.6 = 1.0/1.6 = 0.625.
    /// Symmetry u(−x, −y) = −u(x, y); saturation: u(1, 1) = 1; u(0, 0) = 0.
    #[test]
    fn inference_hand_computed() {
        assert!(
            (infer(0.5, 0.1) - 0.625).abs() < 1e-12,
            "{}",
            infer(0.5, 0.1)
        );
        assert!((infer(-0.5, -0.1) + 0.625).abs() < 1e-12);
        assert!((infer(1.0, 1.0) - 1.0).abs() < 1e-12);
        assert_eq!(infer(0.0, 0.0), 0.0);
    }

    /// Defaults (k_e 0.05, k_de 0.01, k_u 0.005, q_ref 200, e(−1) = 0):
    /// q = 210: e = 10, Δe = 10 → x = 0.5, y = 0.1 → u = 0.625, p = 0.003125.
    /// q = 210 again: Δe = 0 → x = 0.5 (PS 0.5, PM 0.5), y = 0 (ZE 1): u = (0.5/3 + 0.5·2/3)/1
    ///   = 0.5, p = 0.003125 + 0.0025 = 0.005625.
    /// q = 0: e = −200 → x = −1, Δe = −210 → y = −1: u = −1, p = max(0.005625 − 0.005, 0)
    ///   = 0.000625. Tolerance 1e-12.
    #[test]
    fn law_hand_computed() {
        let mut f = flc(FlcConfig::default());
        f.update(210.0);
        assert!((f.p() - 0.003125).abs() < 1e-12, "{}", f.p());
        f.update(210.0);
        assert!((f.u() - 0.5).abs() < 1e-12, "{}", f.u());
        assert!((f.p() - 0.005625).abs() < 1e-12, "{}", f.p());
        f.update(0.0);
        assert!((f.u() + 1.0).abs() < 1e-12);
        assert!((f.p() - 0.000625).abs() < 1e-12, "{}", f.p());
        f.update(0.0);
        assert_eq!(f.p(), 0.0);
        assert_eq!(f.activations(), 4);
    }

    /// 160 Hz timer; the queue at the timer is used.
    #[test]
    fn timer() {
        let mut f = flc(FlcConfig::default());
        assert_eq!(f.poll_at(), Some(Instant(6_250_000)));
        f.on_timer(Instant(6_250_000), &view(210, 210_000));
        assert!((f.p() - 0.003125).abs() < 1e-12);
        assert_eq!(f.poll_at(), Some(Instant(12_500_000)));
    }

    #[test]
    fn validation() {
        assert!(FlcConfig::default().validate().is_ok());
        assert!(FlcConfig {
            ku: 0.0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(FlcConfig {
            ke: f64::NAN,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(FlcConfig {
            w: 0.0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(FlcConfig {
            ku: 2.0,
            ..Default::default()
        }
        .validate()
        .is_err());
    }
}
