//! SRED — Stabilized RED (Ott, Lakshman & Wong 1999; docs/aqm/sred.md).
//!
//! A zombie list of `m` recently seen flow hashes. Per arrival: once the list is full, pick a
//! uniformly random zombie; `hit = 1` if it is the arriving flow, else `hit = 0` and with
//! probability `p_o` the zombie is overwritten by the arriving flow (while the list is filling
//! the flow is appended and no comparison is made). Hit frequency
//! `P ← (1 − alpha) P + alpha·hit` (≈ 1/number of active flows).
//! `p_sred(q) = p_max` if `q >= B/3`, `p_max/4` if `B/6 <= q < B/3`, else 0, with `B` the
//! buffer (packets for a packet limit, bytes for a byte limit) and `q` in the same unit.
//! Simple SRED: `p_zap = p_sred · min(1, 1/(256 P)^2)`; full SRED (`full = true`) multiplies
//! by `1 + hit/P`. Drop/mark with `p_zap` (clamped to [0, 1]).
//!
//! Activations: one per arrival once the zombie list is full (each computes `p_zap`).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::QueueLimit;
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::Instant;

aqm_config! {
    /// SRED configuration (defaults as used by SFC, docs/aqm/sred.md).
    pub struct SredConfig as "sred" {
        /// Zombie list size M. Default 1000 (Ott et al. 1999).
        pub m: u32 = 1000, "entries";
        /// Probability of overwriting a zombie on a miss. Default 0.25 (Ott et al. 1999).
        pub p_o: f64 = 0.25, "probability";
        /// Hit-frequency EWMA weight. Default 0.001 = 1/M (SFC; the SRED paper may use p_o/M).
        pub alpha: f64 = 0.001, "weight";
        /// Maximum drop probability. Default 0.15 (Ott et al. 1999).
        pub p_max: f64 = 0.15, "probability";
        /// Full SRED (multiply by 1 + hit/P). Default false (simple SRED).
        pub full: bool = false, "bool";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl SredConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            self.m > 0 && self.m <= 1 << 24,
            "m",
            self.m as f64,
            "must be in [1, 16777216]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.p_o),
            "p_o",
            self.p_o,
            "must be in [0, 1]",
        )?;
        ensure(
            self.alpha > 0.0 && self.alpha <= 1.0,
            "alpha",
            self.alpha,
            "must be in (0, 1]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.p_max),
            "p_max",
            self.p_max,
            "must be in [0, 1]",
        )
    }
}

/// `p_sred(q)` for buffer `b` (same unit as `q`).
#[inline]
pub fn p_sred(q: f64, b: f64, p_max: f64) -> f64 {
    if q >= b / 3.0 {
        p_max
    } else if q >= b / 6.0 {
        p_max / 4.0
    } else {
        0.0
    }
}

/// `p_zap` from `p_sred`, the hit frequency `p_hit` and this arrival's `hit`.
#[inline]
pub fn p_zap(p_sred: f64, p_hit: f64, hit: bool, full: bool) -> f64 {
    let flows = if p_hit > 0.0 {
        (1.0 / (256.0 * p_hit).powi(2)).min(1.0)
    } else {
        1.0
    };
    let mut p = p_sred * flows;
    if full && hit && p_hit > 0.0 {
        p *= 1.0 + 1.0 / p_hit;
    }
    p.clamp(0.0, 1.0)
}

/// SRED state. The zombie list is allocated once at construction.
#[derive(Debug, Clone)]
pub struct Sred {
    cfg: SredConfig,
    env: Env,
    zombies: Vec<u64>,
    p_hit: f64,
    last_p: f64,
    activations: u64,
}

impl Sred {
    /// Hit-frequency estimate P.
    pub fn p_hit(&self) -> f64 {
        self.p_hit
    }
    /// Zombies stored.
    pub fn zombies(&self) -> &[u64] {
        &self.zombies
    }
    /// Zombie-list step for `flow`; returns `Some(hit)` once the list is full.
    pub fn observe(&mut self, flow: u64, rng: &mut Rng) -> Option<bool> {
        let m = self.cfg.m as usize;
        if self.zombies.len() < m {
            self.zombies.push(flow);
            return None;
        }
        let i = rng.below(m as u64) as usize;
        let hit = self.zombies[i] == flow;
        if !hit && rng.uniform() < self.cfg.p_o {
            self.zombies[i] = flow;
        }
        let a = self.cfg.alpha;
        self.p_hit = (1.0 - a) * self.p_hit + a * if hit { 1.0 } else { 0.0 };
        Some(hit)
    }
}

impl Algorithm for Sred {
    type Config = SredConfig;

    fn build(cfg: &SredConfig, env: &Env) -> Self {
        Sred {
            cfg: *cfg,
            env: *env,
            zombies: Vec::with_capacity(cfg.m as usize),
            p_hit: 0.0,
            last_p: 0.0,
            activations: 0,
        }
    }
    fn cfg(&self) -> &SredConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: SredConfig) {
        if cfg.m != self.cfg.m {
            // A new list size restarts the zombie list (allocation only here).
            self.zombies = Vec::with_capacity(cfg.m as usize);
        }
        self.cfg = cfg;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    fn enqueue(&mut self, _now: Instant, pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
        let Some(hit) = self.observe(pkt.flow_hash, rng) else {
            return Verdict::Accept;
        };
        self.activations += 1;
        let (qv, b) = match self.env.limit {
            QueueLimit::Packets(n) => (q.len_pkts as f64, n as f64),
            QueueLimit::Bytes(n) => (q.len_bytes as f64, n as f64),
        };
        let ps = p_sred(qv, b, self.cfg.p_max);
        let p = p_zap(ps, self.p_hit, hit, self.cfg.full);
        self.last_p = p;
        Verdict::early_with_probability(p, rng)
    }
    fn activations(&self) -> u64 {
        self.activations
    }
    fn probability(&self) -> f64 {
        self.last_p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{arrival, env, view};

    /// Ott et al. 1999 p_sred with B = 120: 0 below 20, p_max/4 on [20, 40), p_max from 40.
    #[test]
    fn p_sred_thresholds() {
        assert_eq!(p_sred(19.0, 120.0, 0.15), 0.0);
        assert_eq!(p_sred(20.0, 120.0, 0.15), 0.0375);
        assert_eq!(p_sred(39.0, 120.0, 0.15), 0.0375);
        assert_eq!(p_sred(40.0, 120.0, 0.15), 0.15);
    }

    /// Simple and full SRED p_zap, hand-computed. Tolerance 1e-15.
    #[test]
    fn p_zap_hand_computed() {
        // P = 0.01: 1/(2.56)^2 = 0.152587890625.
        assert!((p_zap(0.15, 0.01, false, false) - 0.15 * 0.152_587_890_625).abs() < 1e-15);
        // P = 0.001: 1/(0.256)^2 > 1 -> 1.
        assert_eq!(p_zap(0.15, 0.001, false, false), 0.15);
        // Full SRED, hit, P = 0.5: 0.15 · 1/128^2 · (1 + 2).
        assert!((p_zap(0.15, 0.5, true, true) - 0.15 / 16384.0 * 3.0).abs() < 1e-15);
        // Full SRED without a hit: as simple.
        assert_eq!(
            p_zap(0.15, 0.5, false, true),
            p_zap(0.15, 0.5, false, false)
        );
        // Clamped at 1.
        assert_eq!(p_zap(0.15, 0.01, true, true), 1.0);
    }

    /// Zombie list: fills first, then P follows the hit EWMA (alpha = 0.5: 0.5, 0.75, …);
    /// with p_o = 1 a miss overwrites the zombie.
    #[test]
    fn zombie_list_and_hit_frequency() {
        let cfg = SredConfig {
            m: 4,
            alpha: 0.5,
            p_o: 1.0,
            ..Default::default()
        };
        let mut s = Sred::build(&cfg, &env(QueueLimit::Packets(120), 10));
        let mut rng = Rng::new(1);
        for _ in 0..4 {
            assert_eq!(s.observe(7, &mut rng), None);
        }
        assert_eq!(s.observe(7, &mut rng), Some(true));
        assert_eq!(s.p_hit(), 0.5);
        assert_eq!(s.observe(7, &mut rng), Some(true));
        assert_eq!(s.p_hit(), 0.75);
        assert_eq!(s.observe(9, &mut rng), Some(false));
        assert_eq!(s.p_hit(), 0.375);
        assert_eq!(s.zombies().iter().filter(|&&z| z == 9).count(), 1);
    }

    /// P estimates 1/N for N equally active flows (Ott et al. 1999 §3): N = 10 random flows,
    /// 200 000 arrivals -> P within 0.1 ± 0.02 (EWMA over ~1000 arrivals: sd ≈ 0.007).
    #[test]
    fn hit_frequency_estimates_flow_count() {
        let mut s = Sred::build(&SredConfig::default(), &env(QueueLimit::Packets(120), 10));
        let mut rng = Rng::new(42);
        let mut flows = Rng::new(43);
        for _ in 0..200_000 {
            s.enqueue(
                Instant::ZERO,
                &arrival(1000, flows.below(10), false),
                &view(0, 0),
                &mut rng,
            );
        }
        assert!((s.p_hit() - 0.1).abs() < 0.02, "P = {}", s.p_hit());
    }
}
