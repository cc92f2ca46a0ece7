//! SFC — state-feedback control AQM (Gao & Hou, INFOCOM 2003; docs/aqm/sfc.md), the
//! per-packet algorithm of the paper's Fig. 5.
//!
//! On every arrival, with `q` the instantaneous queue in packets before the arrival:
//! 1. update the arrival-rate estimate `R` (below);
//! 2. `p = p_offset + k1·(q − q_ref) + (k2/C)·(R − C)`, clamped to [0, 1]
//!    (SFC Fig. 5 line 7 with `a = k2/C`; `p_offset` is 0 in the paper);
//! 3. congestion signal (CE mark with `ecn` on an ECN-capable packet, else drop) with
//!    probability `p`. Fig. 5's tail drop at `q >= Q_lim` is the queue's hard limit.
//!
//! `(R − C)/C` is a ratio: with `capacity = 0` (default) `C` is the outgoing link's rate and
//! `R` is measured in bytes/s, so no packet size is assumed; with `capacity > 0` it is `C` in
//! packets/s and `R` is counted in packets/s (the paper's units).
//!
//! Rate estimator (the paper leaves `R_estimate()` open; docs/aqm/sfc.md, decision 1):
//! windows of at least `rate_window` that start and end at arrivals. The arrival that opens a
//! window is not counted; every later arrival adds its packet/bytes; the first arrival at or
//! after `start + rate_window` closes it with the sample `count / (t_close − t_start)` and
//! opens the next one. Samples are averaged by an EWMA `R ← (1 − rate_weight)·R +
//! rate_weight·sample` (the first sample initialises `R`). Constant-rate arrivals therefore
//! give the exact rate. Until the first window closes the rate term is 0. Every arrival counts
//! (also those this AQM or the hard limit then drops): `R` is the offered load.
//!
//! Activations: one per arrival (each run of the law).
//!
//! `law_period` (experiment only, 0 by default): the law then runs only at the first arrival
//! at or after each multiple of `law_period` (the first at `law_period`), with the queue that
//! arrival sees, and `p` is held in between (0 before the first run); every arrival still feeds
//! the rate estimator and is signalled with the held `p`. This is how the ns-2 cross-check's
//! Tcl marker applies the law (once per 10-ms rate window, validation/ns2/README.md); it exists
//! to measure what that difference does (validation/ns2/RESULTS.md), not as part of Fig. 5.
//! Activations are then one per run of the law.

use crate::algorithm::{Algorithm, Arrival, Env, Periodic, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::{Duration, Instant, NANOS_PER_SEC};

aqm_config! {
    /// SFC configuration (Gao & Hou 2003, Examples 1-2 and Fig. 5).
    pub struct SfcConfig as "sfc" {
        /// Gain on the queue error q − q_ref, 1/packet. Default 0.0005 (SFC Example 2).
        pub k1: f64 = 0.0005, "1/packets";
        /// Gain on the window deviation, applied as (k2/C)·(R − C). Default 0.2 (SFC Example 1).
        pub k2: f64 = 0.2, "dimensionless";
        /// Target queue q_0, packets. Default 50 (SFC §VII's target queue).
        pub q_ref: f64 = 50.0, "packets";
        /// Capacity C_0, packets/s; 0 (default) uses the outgoing link's rate and measures R in
        /// bytes/s (the rate term is the ratio (R − C)/C either way).
        pub capacity: f64 = 0.0, "packets/s";
        /// Minimum length of one rate-measurement window, s. Default 10 ms (our choice;
        /// docs/aqm/sfc.md, decision 1).
        pub rate_window: Duration = Duration::from_millis(10), "s";
        /// EWMA weight of each window's rate sample. Default 0.5 (our choice; docs/aqm/sfc.md,
        /// decision 1).
        pub rate_weight: f64 = 0.5, "weight";
        /// Operating-point offset added to p. Default 0 (SFC Fig. 5 has none, so the queue
        /// settles above q_ref; docs/aqm/sfc.md, decision 3).
        pub p_offset: f64 = 0.0, "probability";
        /// Experiment only: run the law once per `law_period` (at the first arrival at or after
        /// each multiple) and hold p in between, as the ns-2 cross-check's Tcl marker does
        /// (validation/ns2/README.md). Default 0: at every arrival (SFC Fig. 5).
        pub law_period: Duration = Duration::ZERO, "s";
        /// Mark CE instead of dropping ECN-capable packets. Default false (the paper's
        /// simulations use ECN: set it to reproduce them).
        pub ecn: bool = false, "bool";
    }
}

impl SfcConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(self.k1 >= 0.0, "k1", self.k1, "must be >= 0")?;
        ensure(self.k2 >= 0.0, "k2", self.k2, "must be >= 0")?;
        ensure(
            self.k1 > 0.0 || self.k2 > 0.0,
            "k1",
            self.k1,
            "k1 and k2 cannot both be 0 (the law would never act)",
        )?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")?;
        ensure(
            self.capacity >= 0.0,
            "capacity",
            self.capacity,
            "must be >= 0 (0: the link's rate)",
        )?;
        ensure(
            self.rate_window > Duration::ZERO,
            "rate_window",
            self.rate_window.as_secs_f64(),
            "must be > 0",
        )?;
        ensure(
            self.rate_weight > 0.0 && self.rate_weight <= 1.0,
            "rate_weight",
            self.rate_weight,
            "must be in (0, 1]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.p_offset),
            "p_offset",
            self.p_offset,
            "must be in [0, 1]",
        )
    }
}

/// SFC's arrival-rate estimator (module doc): EWMA over windows of at least `window` that
/// start and end at arrivals. Rates in packets/s and bytes/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateEstimator {
    start: Option<Instant>,
    pkts: u64,
    bytes: u64,
    pkt_rate: f64,
    byte_rate: f64,
    valid: bool,
}

impl Default for RateEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RateEstimator {
    /// No window open, no estimate yet.
    pub const fn new() -> Self {
        RateEstimator {
            start: None,
            pkts: 0,
            bytes: 0,
            pkt_rate: 0.0,
            byte_rate: 0.0,
            valid: false,
        }
    }
    /// Record an arrival of `size` bytes at `now`; returns true if it closed a window.
    #[inline]
    pub fn arrival(&mut self, now: Instant, size: u32, window: Duration, weight: f64) -> bool {
        let Some(t0) = self.start else {
            self.start = Some(now);
            return false;
        };
        self.pkts += 1;
        self.bytes += size as u64;
        let dt = now - t0;
        if dt < window || dt == Duration::ZERO {
            return false;
        }
        let secs = dt.0 as f64 / NANOS_PER_SEC as f64;
        let (sp, sb) = (self.pkts as f64 / secs, self.bytes as f64 / secs);
        if self.valid {
            self.pkt_rate += weight * (sp - self.pkt_rate);
            self.byte_rate += weight * (sb - self.byte_rate);
        } else {
            self.pkt_rate = sp;
            self.byte_rate = sb;
            self.valid = true;
        }
        self.start = Some(now);
        self.pkts = 0;
        self.bytes = 0;
        true
    }
    /// Estimated packets/s, if a window has closed.
    pub fn packets_per_sec(&self) -> Option<f64> {
        self.valid.then_some(self.pkt_rate)
    }
    /// Estimated bytes/s, if a window has closed.
    pub fn bytes_per_sec(&self) -> Option<f64> {
        self.valid.then_some(self.byte_rate)
    }
}

/// SFC state.
#[derive(Debug, Clone)]
pub struct Sfc {
    cfg: SfcConfig,
    /// Link rate in bytes/s (for `capacity = 0`).
    link_bytes_per_sec: f64,
    rate: RateEstimator,
    /// The law's schedule when `law_period > 0` (unused otherwise).
    law_timer: Periodic,
    p: f64,
    activations: u64,
}

impl Sfc {
    /// The relative rate mismatch (R − C)/C, 0 before the first estimate.
    pub fn rate_mismatch(&self) -> f64 {
        if self.cfg.capacity > 0.0 {
            self.rate
                .packets_per_sec()
                .map_or(0.0, |r| (r - self.cfg.capacity) / self.cfg.capacity)
        } else if self.link_bytes_per_sec > 0.0 {
            self.rate.bytes_per_sec().map_or(0.0, |r| {
                (r - self.link_bytes_per_sec) / self.link_bytes_per_sec
            })
        } else {
            0.0
        }
    }
    /// One run of the law (step 2 of the module doc) with queue `q` packets.
    pub fn update(&mut self, q: f64) -> f64 {
        let c = &self.cfg;
        self.p = (c.p_offset + c.k1 * (q - c.q_ref) + c.k2 * self.rate_mismatch()).clamp(0.0, 1.0);
        self.activations += 1;
        self.p
    }
    /// The rate estimator.
    pub fn estimator(&self) -> &RateEstimator {
        &self.rate
    }
    /// Current probability.
    pub fn p(&self) -> f64 {
        self.p
    }
}

impl Algorithm for Sfc {
    type Config = SfcConfig;

    fn build(cfg: &SfcConfig, env: &Env) -> Self {
        Sfc {
            cfg: *cfg,
            link_bytes_per_sec: env.link.rate.as_f64() / 8.0,
            rate: RateEstimator::new(),
            law_timer: Periodic::new(cfg.law_period),
            p: 0.0,
            activations: 0,
        }
    }
    fn cfg(&self) -> &SfcConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        self.link_bytes_per_sec = env.link.rate.as_f64() / 8.0;
    }
    fn reconfigure(&mut self, cfg: SfcConfig) {
        self.law_timer.set_period(cfg.law_period);
        self.cfg = cfg;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(&mut self, now: Instant, pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
        self.rate
            .arrival(now, pkt.size, self.cfg.rate_window, self.cfg.rate_weight);
        let p = if self.cfg.law_period == Duration::ZERO || self.law_timer.fire(now) {
            self.update(q.len_pkts as f64)
        } else {
            self.p
        };
        Verdict::early_with_probability(p, rng)
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
    use crate::testutil::{arrival, env, view};
    use crate::QueueLimit;

    fn sfc(cfg: SfcConfig) -> Sfc {
        Sfc::build(&cfg, &env(QueueLimit::Packets(100), 10))
    }

    /// Constant-rate arrivals: 1250 packets/s of 1000 B (one every 800 us; the paper's
    /// 10 Mb/s example) and 3 333 packets/s of 600 B (one every 300 us, a period that does
    /// not divide the window). Windows start and end at arrivals, so each sample is exact up
    /// to float rounding; the requirement is 1 % and the check 1e-9 relative, after 1 s.
    #[test]
    fn rate_estimate_constant_arrivals() {
        for (gap_ns, size) in [(800_000u64, 1000u32), (300_000, 600)] {
            let mut e = RateEstimator::new();
            let mut closed = 0;
            for i in 0..(NANOS_PER_SEC / gap_ns) {
                closed +=
                    e.arrival(Instant(i * gap_ns), size, Duration::from_millis(10), 0.5) as u32;
            }
            let pps = NANOS_PER_SEC as f64 / gap_ns as f64;
            let got = e.packets_per_sec().unwrap();
            assert!((got - pps).abs() < 1e-9 * pps, "{got} vs {pps}");
            let bps = e.bytes_per_sec().unwrap();
            assert!((bps - pps * size as f64).abs() < 1e-9 * bps);
            assert!(closed >= 90, "{closed} windows");
        }
    }

    /// A rate step from 1000 to 2000 packets/s: each window halves the error (weight 0.5);
    /// after 10 windows (100 ms) the estimate is within 0.1 % of the new rate.
    #[test]
    fn rate_estimate_tracks_a_step() {
        let mut e = RateEstimator::new();
        let mut t = 0u64;
        for _ in 0..1000 {
            e.arrival(Instant(t), 1000, Duration::from_millis(10), 0.5);
            t += 1_000_000;
        }
        assert!((e.packets_per_sec().unwrap() - 1000.0).abs() < 1e-6);
        for _ in 0..200 {
            e.arrival(Instant(t), 1000, Duration::from_millis(10), 0.5);
            t += 500_000;
        }
        let r = e.packets_per_sec().unwrap();
        assert!((r - 2000.0).abs() < 2.0, "{r}");
        // Before any window closes there is no estimate.
        let mut e = RateEstimator::new();
        e.arrival(Instant(0), 1000, Duration::from_millis(10), 0.5);
        e.arrival(Instant(5_000_000), 1000, Duration::from_millis(10), 0.5);
        assert_eq!(e.packets_per_sec(), None);
    }

    /// SFC Fig. 5 line 7 with the paper's gains (k1 = 0.0005, k2 = 0.2, q_0 = 50) and
    /// C = 1250 packets/s, on a fixed state R = 1500 packets/s (estimator fixture):
    /// q = 250: p = 0.0005·200 + 0.2·(250/1250) = 0.1 + 0.04 = 0.14;
    /// q = 10:  p = −0.02 + 0.04 = 0.02; q = 0: −0.025 + 0.04 = 0.015.
    /// With R = 1000: q = 60 -> 0.005 − 0.04 < 0 -> 0. With p_offset 0.01 and q = 60:
    /// 0.01 + 0.005 − 0.04 -> 0 (clamp), q = 200 -> 0.01 + 0.075 − 0.04 = 0.045.
    /// Tolerance 1e-12 absolute.
    #[test]
    fn law_hand_computed() {
        let mut s = sfc(SfcConfig {
            capacity: 1250.0,
            ..Default::default()
        });
        s.rate.pkt_rate = 1500.0;
        s.rate.valid = true;
        for (q, expected) in [(250.0, 0.14), (10.0, 0.02), (0.0, 0.015)] {
            assert!((s.update(q) - expected).abs() < 1e-12, "q {q}: {}", s.p());
        }
        s.rate.pkt_rate = 1000.0;
        assert_eq!(s.update(60.0), 0.0);
        s.cfg.p_offset = 0.01;
        assert_eq!(s.update(60.0), 0.0);
        assert!((s.update(200.0) - 0.045).abs() < 1e-12);
        assert_eq!(s.activations(), 6);
        // Clamp at 1.
        assert_eq!(s.update(5000.0), 1.0);
    }

    /// capacity = 0: the mismatch is measured in bytes against the link (10 Mb/s =
    /// 1.25e6 B/s). 600-byte packets every 400 us are 1.5e6 B/s: (1.5 − 1.25)/1.25 = 0.2,
    /// so at q = q_ref p = 0.2·0.2 = 0.04 (no packet size assumed). Before the first
    /// window closes only the queue term acts.
    #[test]
    fn rate_term_against_the_link_in_bytes() {
        let mut s = sfc(SfcConfig::default());
        let q = view(50, 30_000);
        let a = arrival(600, 0, false);
        let mut rng = Rng::new(1);
        s.enqueue(Instant(0), &a, &q, &mut rng);
        assert_eq!(s.p(), 0.0);
        for i in 1..100u64 {
            s.enqueue(Instant(i * 400_000), &a, &q, &mut rng);
        }
        assert!(
            (s.rate_mismatch() - 0.2).abs() < 1e-9,
            "{}",
            s.rate_mismatch()
        );
        assert!((s.p() - 0.04).abs() < 1e-9);
        assert_eq!(s.activations(), 100);
    }

    /// `law_period` = 10 ms (experiment only): arrivals every 1 ms, the i-th seeing a queue
    /// of 60 + i packets, k2 = 0 so p = k1·(q − q_ref) = 0.0005·(10 + i). The law runs at the
    /// arrivals at 10, 20, 30 ms only: p = 0 before the first run, 0.010 from 10 ms (still at
    /// 19 ms), 0.015 from 20 ms (still at 25 ms), 0.020 at 30 ms; 3 activations. With the
    /// default (0) p follows every arrival (31 activations). Tolerance 1e-12 absolute.
    #[test]
    fn law_period_holds_p_between_runs() {
        let base = SfcConfig {
            k2: 0.0,
            capacity: 1250.0,
            ..Default::default()
        };
        let a = arrival(1000, 0, false);
        let cases = [
            (
                10u64,
                [
                    (5u64, 0.0),
                    (10, 0.010),
                    (19, 0.010),
                    (25, 0.015),
                    (30, 0.020),
                ],
                3,
            ),
            (
                0,
                [
                    (5, 0.0075),
                    (10, 0.010),
                    (19, 0.0145),
                    (25, 0.0175),
                    (30, 0.020),
                ],
                31,
            ),
        ];
        for (period_ms, expect, runs) in cases {
            let mut s = sfc(SfcConfig {
                law_period: Duration::from_millis(period_ms),
                ..base
            });
            let mut rng = Rng::new(1);
            for i in 0..=30u64 {
                let q = view(60 + i as u32, 0);
                s.enqueue(Instant(i * 1_000_000), &a, &q, &mut rng);
                if let Some(&(_, p)) = expect.iter().find(|(t, _)| *t == i) {
                    assert!(
                        (s.p() - p).abs() < 1e-12,
                        "{period_ms} ms, t {i}: {}",
                        s.p()
                    );
                }
            }
            assert_eq!(s.activations(), runs, "period {period_ms} ms");
        }
    }

    /// Cross-field and range checks.
    #[test]
    fn validation() {
        let bad = [
            ("k1", -1.0),
            ("rate_weight", 0.0),
            ("rate_window", 0.0),
            ("p_offset", 1.5),
            ("capacity", -1.0),
        ];
        for (k, v) in bad {
            let mut c = SfcConfig::default();
            use crate::params::Params;
            assert!(c.set_param(k, v).is_err(), "{k} = {v}");
        }
        let c = SfcConfig {
            k1: 0.0,
            k2: 0.0,
            ..Default::default()
        };
        use crate::params::Params;
        assert_eq!(c.validate().unwrap_err().key(), Some("k1"));
    }
}
