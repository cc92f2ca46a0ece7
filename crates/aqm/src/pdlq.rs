//! PD-LQ — PD-type AQM on RED's low-pass-filtered queue with LQ gains, and its memory
//! (delay-compensating) law (Kim, Tang & Low, GLOBECOM 2003; docs/aqm/pdlq.md; gains from
//! docs/design/pd_lq.md).
//!
//! Periodic every `t_update` (KTL §III: `T_s` = 2 ms). At run k, with `b(k)` the
//! instantaneous queue (packets) at the run:
//! 1. filter (KTL §III): `b̂(k) = b̂(k−1) + T_s·P_1·(b(k−1) − b̂(k−1))`;
//! 2. state `z = [b̂ − q_ref, ḃ̂, b̈̂]` from the filter identity (KTL eq. 3):
//!    `ḃ̂ = P_1 (b(k) − b̂(k))`, `b̈̂ = P_1 (ḃ − ḃ̂)` with `ḃ = R − c`: `R` the arrivals of
//!    the last period divided by its length (packets/s, every arrival counted), `c` the
//!    capacity in packets/s (`capacity`, or with `capacity = 0` the link's rate divided by
//!    the mean size of the arrivals seen so far);
//! 3. memoryless law (KTL eq. 6): `δp = h1·z1 + h2·z2 + h3·z3`;
//!    memory law (KTL §II-A): `δp = h·x` with the predictor state
//!    `x = z + Σ_{j=0}^{M−1} W_j δp(k−1−j)`, `M = ⌈tau/T_s⌉`, where
//!    `W_j = ∫ e^{−A(σ+τ)} B dσ` over `σ ∈ [−(j+1)T_s, −j T_s] ∩ [−τ, 0]` (zero-order hold of
//!    the past `δp`, precomputed with Van Loan's block exponential; `A`, `B` the companion
//!    model of KTL eq. 5 at `capacity`, `n_flows`, `tau`);
//! 4. `p = clamp(p_offset + δp, 0, 1)`; the applied `p − p_offset` is what the memory law
//!    remembers.
//!
//! Each arrival is dropped (or marked, with `ecn`) with probability `p`; the hard limit stays
//! underneath. Initial state: `b̂ = b(−1) = 0`, `p = 0`, empty memory.
//!
//! Activations: one per run of the periodic law.

use crate::algorithm::{Algorithm, Arrival, Env, Periodic, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Largest predictor memory, in sampling periods (`tau / t_update`).
pub const MAX_MEMORY: f64 = 100_000.0;

aqm_config! {
    /// PD-LQ configuration. Default gains: the paper's λ = −3.75 design for experiment A
    /// (c = 4000 packets/s, N = 100, τ = 0.2 s, b* = 200, P_1 = 1; docs/design/pd_lq.md).
    pub struct PdlqConfig as "pdlq" {
        /// Gain on the filtered queue error b̂ − q_ref, 1/packet. Default 5.657e-4 (KTL
        /// λ = −3.75 design, τ = 0.2 s, memoryless; docs/design/pd_lq.md).
        pub h1: f64 = 5.657e-4, "1/packets";
        /// Gain on the filtered queue's rate ḃ̂, s/packet. Default 3.626e-4 (same design).
        pub h2: f64 = 3.626e-4, "s/packets";
        /// Gain on the filtered queue's acceleration b̈̂, s²/packet. Default 4.894e-5 (same
        /// design).
        pub h3: f64 = 4.894e-5, "s^2/packets";
        /// Filter pole P_1, 1/s; per-period EWMA weight t_update·p1. Default 1 (KTL eq. 3 and
        /// §III leave it open; ours: weight 0.002 per 2 ms, RED's classic w_q, and the
        /// λ = −3.75 design stays LQ-admissible, which needs P_1 below about 4 s⁻¹ here;
        /// docs/design/pd_lq.md).
        pub p1: f64 = 1.0, "1/s";
        /// Target queue b*, packets. Default 200 (KTL §III).
        pub q_ref: f64 = 200.0, "packets";
        /// Operating-point probability p* added to δp. Default 1/33 = 0.0303: the
        /// equilibrium of KTL eq. 1, p* = 2N²/(2N² + c²τ²), at KTL §III's N = 100, c = 4000,
        /// τ = 0.2. KTL's law (6) is on deviations δp = p − p* and does not say how p* enters
        /// its ns code; we add it, since without it the law settles where h1·(b̂ − b*) = p*,
        /// 54 packets above b*, not near the reported 205.
        pub p_offset: f64 = 1.0 / 33.0, "probability";
        /// Sampling (update) period T_s, s. Default 2 ms (KTL §III).
        pub t_update: Duration = Duration::from_millis(2), "s";
        /// Capacity c in packets/s for ḃ = R − c and the memory law's model; 0 (default) means
        /// the link's rate divided by the mean arrival size (memoryless law only).
        pub capacity: f64 = 0.0, "packets/s";
        /// Use the memory (delay-compensating) law; the gains then act on the predictor state.
        /// Default false.
        pub memory: bool = false, "bool";
        /// Number of flows N of the memory law's model. Default 100 (KTL §III).
        pub n_flows: f64 = 100.0, "flows";
        /// Equilibrium round-trip time τ = d + b*/c of the memory law's model and its
        /// prediction horizon, s. Default 0.2 (KTL §III experiment A).
        pub tau: Duration = Duration::from_millis(200), "s";
        /// Mark CE instead of dropping ECN-capable packets. Default false (the paper marks:
        /// set it to reproduce its experiments).
        pub ecn: bool = false, "bool";
    }
}

impl PdlqConfig {
    fn check(&self) -> Result<(), ConfigError> {
        for (k, v) in [("h1", self.h1), ("h2", self.h2), ("h3", self.h3)] {
            ensure(v.is_finite(), k, v, "must be finite")?;
        }
        ensure(self.p1 > 0.0, "p1", self.p1, "must be > 0")?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")?;
        ensure(
            (0.0..=1.0).contains(&self.p_offset),
            "p_offset",
            self.p_offset,
            "must be in [0, 1]",
        )?;
        let ts = self.t_update.as_secs_f64();
        crate::algorithm::check_period("t_update", self.t_update)?;
        // Cross-field: the filter's per-period weight T_s·P_1 must be an EWMA weight.
        ensure(
            ts * self.p1 <= 1.0,
            "p1",
            self.p1,
            "t_update·p1 (the filter's weight per period) must be <= 1",
        )?;
        ensure(
            self.capacity >= 0.0,
            "capacity",
            self.capacity,
            "must be >= 0 (0: the link's rate)",
        )?;
        ensure(self.n_flows > 0.0, "n_flows", self.n_flows, "must be > 0")?;
        let tau = self.tau.as_secs_f64();
        ensure(tau > 0.0, "tau", tau, "must be > 0")?;
        if self.memory {
            ensure(
                self.capacity > 0.0,
                "capacity",
                self.capacity,
                "the memory law needs the model's capacity (packets/s > 0)",
            )?;
            ensure(
                tau / ts <= MAX_MEMORY,
                "tau",
                tau,
                "tau/t_update (the memory length) must be <= 100000",
            )?;
        }
        Ok(())
    }

    /// The companion model `(A, B)` of KTL eq. 5 at `capacity`, `n_flows`, `tau` (only the
    /// last row of `A` and `B`'s last entry are non-trivial): returns `(Â3, Â1, Â2, P1·B1)`.
    pub fn companion(&self) -> (f64, f64, f64, f64) {
        let (c, n, tau, p1) = (self.capacity, self.n_flows, self.tau.as_secs_f64(), self.p1);
        let den = 2.0 * n * n + c * c * tau * tau;
        let a1 = -2.0 * c * n / (tau * den);
        let a2 = -(2.0 * c * n * tau + den) / (tau * den);
        let b1 = -den / (2.0 * tau * tau * n);
        (a1 * p1, a1 + a2 * p1, a2 - p1, p1 * b1)
    }

    /// Predictor weights `W_j` (module doc), `⌈tau/t_update⌉` of them.
    pub fn predictor_weights(&self) -> Vec<[f64; 3]> {
        let (a3, a1, a2, pb) = self.companion();
        // Van Loan: expm([[−A, B], [0, 0]] u)[0..3, 3] = ∫_0^u e^{−Av} B dv.
        let mut m = [[0.0; 4]; 4];
        m[0][1] = -1.0;
        m[1][2] = -1.0;
        m[2][0] = -a3;
        m[2][1] = -a1;
        m[2][2] = -a2;
        m[2][3] = pb;
        let integral = |u: f64| {
            let e = expm4(&m, u);
            [e[0][3], e[1][3], e[2][3]]
        };
        let tau = self.tau.as_secs_f64();
        let ts = self.t_update.as_secs_f64();
        let n = (tau / ts - 1e-9).ceil().max(1.0) as usize;
        let edges: Vec<[f64; 3]> = (0..=n)
            .map(|j| integral((tau - j as f64 * ts).max(0.0)))
            .collect();
        (0..n)
            .map(|j| {
                [
                    edges[j][0] - edges[j + 1][0],
                    edges[j][1] - edges[j + 1][1],
                    edges[j][2] - edges[j + 1][2],
                ]
            })
            .collect()
    }
}

/// `e^{M u}` of a 4×4 matrix: scaling and squaring with a degree-18 Taylor polynomial (the
/// scaled norm is kept below 0.5, so the truncation error is below 1e-20 relative).
fn expm4(m: &[[f64; 4]; 4], u: f64) -> [[f64; 4]; 4] {
    let norm = m
        .iter()
        .map(|r| r.iter().map(|x| (x * u).abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let mut s = 0u32;
    while norm / 2f64.powi(s as i32) > 0.5 {
        s += 1;
    }
    let scale = u / 2f64.powi(s as i32);
    let mut a = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            a[i][j] = m[i][j] * scale;
        }
    }
    let mul = |x: &[[f64; 4]; 4], y: &[[f64; 4]; 4]| {
        let mut r = [[0.0; 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                r[i][j] = (0..4).map(|k| x[i][k] * y[k][j]).sum();
            }
        }
        r
    };
    let mut result = [[0.0; 4]; 4];
    let mut term = [[0.0; 4]; 4];
    for i in 0..4 {
        result[i][i] = 1.0;
        term[i][i] = 1.0;
    }
    for k in 1..=18 {
        term = mul(&term, &a);
        for row in term.iter_mut() {
            for x in row.iter_mut() {
                *x /= k as f64;
            }
        }
        for i in 0..4 {
            for j in 0..4 {
                result[i][j] += term[i][j];
            }
        }
    }
    for _ in 0..s {
        result = mul(&result, &result);
    }
    result
}

/// PD-LQ state.
#[derive(Debug, Clone)]
pub struct Pdlq {
    cfg: PdlqConfig,
    link_bytes_per_sec: f64,
    timer: Periodic,
    /// Filtered queue b̂ (packets).
    bhat: f64,
    /// Queue at the previous run.
    b_prev: f64,
    /// Arrivals since the previous run.
    period_pkts: u64,
    /// All arrivals and their bytes (mean packet size for `capacity = 0`).
    total_pkts: u64,
    total_bytes: u64,
    /// Predictor weights W_j (memory law; empty otherwise).
    weights: Vec<[f64; 3]>,
    /// Past applied δp, ring buffer of `weights.len()`; `head` is δp(k−1).
    past: Vec<f64>,
    head: usize,
    /// The last state z (monitoring, tests).
    z: [f64; 3],
    p: f64,
    activations: u64,
}

impl Pdlq {
    fn rebuild_memory(&mut self) {
        if self.cfg.memory {
            self.weights = self.cfg.predictor_weights();
            self.past = vec![0.0; self.weights.len()];
        } else {
            self.weights = Vec::new();
            self.past = Vec::new();
        }
        self.head = 0;
    }

    /// Capacity in packets/s used for ḃ (None before any arrival when derived from the link).
    fn capacity_pkts(&self) -> Option<f64> {
        if self.cfg.capacity > 0.0 {
            Some(self.cfg.capacity)
        } else if self.total_pkts > 0 {
            Some(self.link_bytes_per_sec * self.total_pkts as f64 / self.total_bytes as f64)
        } else {
            None
        }
    }

    /// One run of the law (steps 1-4 of the module doc) with the queue `b` (packets), `r`
    /// the arrival rate over the last period (packets/s) and `c` the capacity (packets/s).
    pub fn update(&mut self, b: f64, r: f64, c: f64) {
        let cfg = &self.cfg;
        let ts = cfg.t_update.as_secs_f64();
        self.bhat += ts * cfg.p1 * (self.b_prev - self.bhat);
        let z2 = cfg.p1 * (b - self.bhat);
        let z3 = cfg.p1 * ((r - c) - z2);
        let mut x = [self.bhat - cfg.q_ref, z2, z3];
        self.z = x;
        let m = self.weights.len();
        for j in 0..m {
            let dp = self.past[(self.head + j) % m];
            let w = &self.weights[j];
            x[0] += w[0] * dp;
            x[1] += w[1] * dp;
            x[2] += w[2] * dp;
        }
        let dp = cfg.h1 * x[0] + cfg.h2 * x[1] + cfg.h3 * x[2];
        self.p = (cfg.p_offset + dp).clamp(0.0, 1.0);
        if m > 0 {
            self.head = (self.head + m - 1) % m;
            self.past[self.head] = self.p - cfg.p_offset;
        }
        self.b_prev = b;
        self.activations += 1;
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// Filtered queue b̂.
    pub fn bhat(&self) -> f64 {
        self.bhat
    }
    /// The state z = [b̂ − q_ref, ḃ̂, b̈̂] of the last run.
    pub fn state(&self) -> [f64; 3] {
        self.z
    }
    /// Predictor weights (empty for the memoryless law).
    pub fn weights(&self) -> &[[f64; 3]] {
        &self.weights
    }
}

impl Algorithm for Pdlq {
    type Config = PdlqConfig;

    fn build(cfg: &PdlqConfig, env: &Env) -> Self {
        let mut s = Pdlq {
            cfg: *cfg,
            link_bytes_per_sec: env.link.rate.as_f64() / 8.0,
            timer: Periodic::new(cfg.t_update),
            bhat: 0.0,
            b_prev: 0.0,
            period_pkts: 0,
            total_pkts: 0,
            total_bytes: 0,
            weights: Vec::new(),
            past: Vec::new(),
            head: 0,
            z: [0.0; 3],
            p: 0.0,
            activations: 0,
        };
        s.rebuild_memory();
        s
    }
    fn cfg(&self) -> &PdlqConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        self.link_bytes_per_sec = env.link.rate.as_f64() / 8.0;
    }
    fn reconfigure(&mut self, cfg: PdlqConfig) {
        self.timer.set_period(cfg.t_update);
        let old = self.cfg;
        self.cfg = cfg;
        let model_changed = old.memory != cfg.memory
            || old.capacity != cfg.capacity
            || old.n_flows != cfg.n_flows
            || old.tau != cfg.tau
            || old.p1 != cfg.p1
            || old.t_update != cfg.t_update;
        if model_changed {
            self.rebuild_memory();
        }
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(&mut self, _now: Instant, pkt: &Arrival, _q: &QueueView, rng: &mut Rng) -> Verdict {
        self.period_pkts += 1;
        self.total_pkts += 1;
        self.total_bytes += pkt.size as u64;
        Verdict::early_with_probability(self.p, rng)
    }
    fn poll_at(&self) -> Option<Instant> {
        Some(self.timer.next())
    }
    fn on_timer(&mut self, now: Instant, q: &QueueView) {
        if self.timer.fire(now) {
            let ts = self.cfg.t_update.as_secs_f64();
            let r = self.period_pkts as f64 / ts;
            self.period_pkts = 0;
            // No arrival yet with a link-derived capacity: ḃ = 0.
            let c = self.capacity_pkts().unwrap_or(r);
            self.update(q.len_pkts as f64, r, c);
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

    fn pdlq(cfg: PdlqConfig) -> Pdlq {
        Pdlq::build(&cfg, &env(QueueLimit::Packets(800), 32))
    }

    /// The memoryless law (KTL eqs. 3, 6 and §III's filter) on a state fixture, hand-computed
    /// with the defaults (h = 5.657e-4, 3.626e-4, 4.894e-5; P_1 = 1; T_s = 2 ms; q_ref 200;
    /// p_offset 1/33): b̂ = 190, b(k−1) = 240, then a run with b(k) = 250, R = 4500,
    /// c = 4000:
    /// b̂ ← 190 + 0.002·(240 − 190) = 190.1; z = [−9.9, 250 − 190.1 = 59.9, 500 − 59.9 = 440.1];
    /// δp = −5.60043e-3 + 2.1719740e-2 + 2.1538494e-2 = 3.7657804e-2 (5.657e-4·9.9 =
    /// 5.60043e-3, 3.626e-4·59.9 = 2.1719740e-2, 4.894e-5·440.1 = 2.15384940e-2);
    /// p = 1/33 + 0.037657804 = 0.067961834.
    /// Tolerance 1e-12 absolute.
    #[test]
    fn memoryless_law_hand_computed() {
        let mut s = pdlq(PdlqConfig::default());
        s.bhat = 190.0;
        s.b_prev = 240.0;
        s.update(250.0, 4500.0, 4000.0);
        assert!((s.bhat() - 190.1).abs() < 1e-12);
        let z = s.state();
        assert!((z[0] + 9.9).abs() < 1e-12 && (z[1] - 59.9).abs() < 1e-12);
        assert!((z[2] - 440.1).abs() < 1e-12);
        let expected = 1.0 / 33.0 + 0.037_657_804;
        assert!((s.p() - expected).abs() < 1e-12, "{}", s.p());
        // A second run: R = c, b unchanged. b̂ = 190.1 + 0.002·(250 − 190.1) = 190.2198;
        // z = [−9.7802, 59.7802, −59.7802]; δp = −5.53266e-3 + 2.16763e-2 − 2.92564e-3.
        s.update(250.0, 4000.0, 4000.0);
        let e = 1.0 / 33.0 + (-5.657e-4 * 9.7802 + 3.626e-4 * 59.7802 - 4.894e-5 * 59.7802);
        assert!((s.p() - e).abs() < 1e-12, "{}", s.p());
        assert_eq!(s.activations(), 2);
    }

    /// Clamp to [0, 1] and the RED-like comparator (h2 = h3 = 0): p = p_offset + h1 (b̂ − q_ref).
    #[test]
    fn clamp_and_red_like() {
        let mut s = pdlq(PdlqConfig {
            h2: 0.0,
            h3: 0.0,
            p_offset: 0.03,
            ..Default::default()
        });
        s.bhat = 300.0;
        s.b_prev = 300.0;
        s.update(0.0, 0.0, 4000.0);
        assert!((s.p() - (0.03 + 5.657e-4 * 100.0)).abs() < 1e-12);
        s.bhat = 0.0;
        s.b_prev = 0.0;
        s.update(0.0, 0.0, 4000.0);
        assert_eq!(s.p(), 0.0);
        let mut s = pdlq(PdlqConfig::default());
        s.bhat = 5000.0;
        s.b_prev = 5000.0;
        s.update(5000.0, 4000.0, 4000.0);
        assert_eq!(s.p(), 1.0);
    }

    /// The timer runs every 2 ms; R is the arrivals of the period over its length and, with
    /// capacity = 0, c is the link's rate over the mean arrival size: 32 Mb/s = 4e6 B/s with
    /// 1000-byte packets = 4000 packets/s. 10 arrivals in 2 ms are R = 5000 packets/s, so
    /// ḃ = 1000; with b = b(k−1) = b̂ = 0: z = [−200, 0, 1000].
    #[test]
    fn timer_rate_and_link_capacity() {
        let mut s = pdlq(PdlqConfig::default());
        assert_eq!(s.poll_at(), Some(Instant(2_000_000)));
        let mut rng = Rng::new(1);
        for _ in 0..10 {
            s.enqueue(
                Instant(1_000_000),
                &arrival(1000, 0, false),
                &view(0, 0),
                &mut rng,
            );
        }
        s.on_timer(Instant(2_000_000), &view(0, 0));
        assert_eq!(s.state(), [-200.0, 0.0, 1000.0]);
        assert_eq!(s.activations(), 1);
        assert_eq!(s.poll_at(), Some(Instant(4_000_000)));
        // Early call: nothing runs.
        s.on_timer(Instant(3_000_000), &view(0, 0));
        assert_eq!(s.activations(), 1);
        // No arrivals in the next period: R = 0, ḃ = −4000.
        s.on_timer(Instant(4_000_000), &view(0, 0));
        assert!((s.state()[2] + 4000.0).abs() < 1e-9);
    }

    /// Predictor weights against values from the design side
    /// (`aqmlab.design.pd_lq.predictor_weights` on the companion model at c = 4000, N = 100,
    /// τ = 0.4 s, P_1 = 1, T_s = 2 ms: 200 weights)
    /// (indices 0, 1, 99, 199; the model: Â3 = −0.7751938, Â1 = −3.58527132,
    /// Â2 = −3.81007752, P_1·B_1 = −80625). Relative tolerance 1e-8: the design side uses
    /// scipy's expm of the same Van Loan block matrix, and each weight is a difference of two
    /// integrals about 100 times larger than it (cancellation; observed 1.1e-9).
    #[test]
    fn predictor_weights_match_the_design_side() {
        let cfg = PdlqConfig {
            memory: true,
            capacity: 4000.0,
            n_flows: 100.0,
            tau: Duration::from_millis(400),
            ..Default::default()
        };
        let (a3, a1, a2, pb) = cfg.companion();
        for (g, e) in [(a3, -0.7751938), (a1, -3.58527132), (a2, -3.81007752)] {
            assert!((g - e).abs() < 1e-7, "{g} vs {e}");
        }
        assert!((pb + 80625.0).abs() < 1e-9);
        let w = cfg.predictor_weights();
        assert_eq!(w.len(), 200);
        for (j, expected) in EXPECTED_W {
            for i in 0..3 {
                let (g, e) = (w[j][i], expected[i]);
                assert!((g - e).abs() <= 1e-8 * e.abs(), "W[{j}][{i}] = {g} vs {e}");
            }
        }
    }

    /// Reference values printed by the design side (see the test above).
    const EXPECTED_W: [(usize, [f64; 3]); 4] = [
        (
            0,
            [-21.6694868197535, 137.9943043784442, -611.2929767912428],
        ),
        (
            1,
            [-21.394718332091088, 136.7754140583329, -607.6006469719578],
        ),
        (
            99,
            [-4.222629719404807, 47.55852752781675, -327.5180700036217],
        ),
        (
            199,
            [
                -0.00010770502689848023,
                0.1616601715160903,
                -161.86555167525916,
            ],
        ),
    ];

    /// The memory law applies its gain to z plus the weighted past δp: with one past δp of
    /// 0.01 in the ring (and zeros elsewhere) the state seen by the gain is z + W_0·0.01.
    #[test]
    fn memory_law_uses_the_predictor() {
        let cfg = PdlqConfig {
            memory: true,
            capacity: 4000.0,
            tau: Duration::from_millis(10),
            h1: 6.093e-4,
            h2: 5.672e-4,
            h3: 1.308e-4,
            ..Default::default()
        };
        let mut s = pdlq(cfg);
        assert_eq!(s.weights().len(), 5);
        let w0 = s.weights()[0];
        let w1 = s.weights()[1];
        s.bhat = 200.0;
        s.b_prev = 200.0;
        s.update(200.0, 4000.0, 4000.0);
        // z = 0, memory empty: p = p_offset; the applied δp = 0 is remembered.
        assert!((s.p() - 1.0 / 33.0).abs() < 1e-15);
        s.past[s.head] = 0.01; // δp(k−1) = 0.01
        s.update(200.0, 4000.0, 4000.0);
        let x = [w0[0] * 0.01, w0[1] * 0.01, w0[2] * 0.01];
        let e = 1.0 / 33.0 + 6.093e-4 * x[0] + 5.672e-4 * x[1] + 1.308e-4 * x[2];
        assert!((s.p() - e).abs() < 1e-15, "{} vs {e}", s.p());
        // One period later the 0.01 has moved to W_1.
        let dp1 = s.p() - 1.0 / 33.0;
        s.update(200.0, 4000.0, 4000.0);
        let x = [
            w0[0] * dp1 + w1[0] * 0.01,
            w0[1] * dp1 + w1[1] * 0.01,
            w0[2] * dp1 + w1[2] * 0.01,
        ];
        let e = 1.0 / 33.0 + 6.093e-4 * x[0] + 5.672e-4 * x[1] + 1.308e-4 * x[2];
        assert!((s.p() - e).abs() < 1e-15, "{} vs {e}", s.p());
    }

    /// Range and cross-field checks.
    #[test]
    fn validation() {
        for (k, v) in [
            ("p1", 0.0),
            ("p1", 600.0),
            ("t_update", 0.0),
            ("p_offset", -0.1),
        ] {
            let mut c = PdlqConfig::default();
            assert!(c.set_param(k, v).is_err(), "{k} = {v}");
        }
        // The memory law needs an explicit capacity.
        let mut c = PdlqConfig::default();
        let e = c.set_param("memory", 1.0).unwrap_err();
        assert_eq!(e.key(), Some("capacity"));
        c.set_param("capacity", 4000.0).unwrap();
        c.set_param("memory", 1.0).unwrap();
        assert!(c.set_param("tau", 1000.0).is_err());
    }
}
