//! RED and gentle RED (Floyd & Jacobson 1993; Floyd 2000 "gentle"; docs/aqm/red.md),
//! following ns-2 `red.cc` in packet mode.
//!
//! Per arrival, on the queue length `q` (packets, before the arrival):
//! 1. EWMA `avg ← (1 − w_q)·avg + w_q·q`; after an idle period of length `t_idle` first
//!    `avg ← (1 − w_q)^m·avg` with `m = ⌊t_idle · C / (8·mean_pkt_size)⌋`, the packets the
//!    link could have sent (ns-2 `estimator`, `v_ptc`). The queue tells RED when the link
//!    went idle (end of the last transmission after the queue emptied).
//! 2. `p_b = max_p (avg − min_th)/(max_th − min_th)` on `[min_th, max_th)`; gentle:
//!    `p_b = max_p + (1 − max_p)(avg − max_th)/max_th` on `[max_th, 2·max_th)`.
//!    Beyond `max_th` (classic) or `2·max_th` (gentle) every arrival is dropped
//!    (`DTYPE_FORCED` in ns-2: a drop even with ECN).
//! 3. Uniform spacing with `count` = arrivals since the last drop/mark: ns-2 `wait`
//!    (default): `p_a = 0` if `count·p_b < 1`, `p_b/(2 − count·p_b)` if `< 2`, else 1;
//!    original (`wait = false`): `p_a = p_b/(1 − count·p_b)` (1 when `count·p_b >= 1`).
//! 4. As in ns-2, nothing is dropped while the queue holds at most one packet, and the first
//!    arrival after `avg` crosses `min_th` only starts the count (`edv_.old`).
//!
//! Activations: one per computation of `p_a` (ns-2 `drop_early`), i.e. per arrival with
//! `min_th <= avg < max_th` (or `< 2·max_th` gentle) after the first such arrival; this is
//! the count of probabilistic decisions taken (docs/aqm/red.md).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::DropReason;
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::Instant;

aqm_config! {
    /// RED configuration (packet mode).
    pub struct RedConfig as "red" {
        /// Minimum threshold of the average queue, packets. Default 5 (Floyd & Jacobson
        /// 1993; ns-2 `thresh_`).
        pub min_th: f64 = 5.0, "packets";
        /// Maximum threshold of the average queue, packets. Default 15 (ns-2 `maxthresh_`).
        pub max_th: f64 = 15.0, "packets";
        /// EWMA weight of the average queue. Default 0.002 (Floyd & Jacobson 1993 §11).
        pub w_q: f64 = 0.002, "weight";
        /// Drop probability at max_th. Default 0.1 (ns-2 `linterm_` = 10).
        pub max_p: f64 = 0.1, "probability";
        /// Gentle RED: ramp p_b from max_p to 1 between max_th and 2·max_th. Default true
        /// (Floyd 2000; ns-2 `gentle_` default since 2001).
        pub gentle: bool = true, "bool";
        /// ns-2 `wait_` count spacing (p_a = 0 until count·p_b >= 1). Default true (ns-2);
        /// false uses the original p_a = p_b/(1 − count·p_b) (Floyd & Jacobson 1993 §7).
        pub wait: bool = true, "bool";
        /// Mean packet size for the idle-time correction, bytes. Default 500
        /// (ns-2 `mean_pktsize_`).
        pub mean_pkt_size: u32 = 500, "bytes";
        /// Mark CE instead of dropping ECN-capable packets (early drops only; forced drops
        /// above max_th / 2·max_th stay drops, as in ns-2). Default false.
        pub ecn: bool = false, "bool";
    }
}

impl RedConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(self.min_th >= 0.0, "min_th", self.min_th, "must be >= 0")?;
        ensure(
            self.max_th > self.min_th,
            "max_th",
            self.max_th,
            "must be > min_th",
        )?;
        ensure(
            self.w_q > 0.0 && self.w_q <= 1.0,
            "w_q",
            self.w_q,
            "must be in (0, 1]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.max_p),
            "max_p",
            self.max_p,
            "must be in [0, 1]",
        )?;
        ensure(
            self.mean_pkt_size > 0,
            "mean_pkt_size",
            self.mean_pkt_size as f64,
            "must be > 0",
        )
    }
}

/// RED's drop curve `p_b(avg)` (step 2 above; ns-2 `calculate_p_new`). Returns 1 in the
/// forced region.
#[inline]
pub fn p_b(avg: f64, min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> f64 {
    let p = if avg < min_th {
        0.0
    } else if avg < max_th {
        max_p * (avg - min_th) / (max_th - min_th)
    } else if gentle && avg < 2.0 * max_th {
        max_p + (1.0 - max_p) * (avg - max_th) / max_th
    } else {
        1.0
    };
    p.clamp(0.0, 1.0)
}

/// Count-based spacing (step 3 above; ns-2 `modify_p`): the probability applied to the
/// `count`-th arrival since the last drop.
#[inline]
pub fn p_a(p_b: f64, count: u64, wait: bool) -> f64 {
    let cp = count as f64 * p_b;
    let p = if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    };
    p.clamp(0.0, 1.0)
}

/// RED state. Also the engine of Adaptive RED ([`crate::ared`]), which changes `max_p`.
#[derive(Debug, Clone)]
pub struct Red {
    cfg: RedConfig,
    /// Current max_p (Adaptive RED changes it; equals `cfg.max_p` for plain RED).
    max_p: f64,
    /// Link packet service rate for the idle correction, packets per ns.
    ptc_per_ns: f64,
    avg: f64,
    /// Arrivals since the last early drop/mark (ns-2 `edv_.count`).
    count: u64,
    /// ns-2 `edv_.old`: avg was already above min_th at the previous arrival.
    old: bool,
    /// Time the link went idle, if it is idle.
    idle_since: Option<Instant>,
    /// Last probability applied (p_a), for monitoring.
    last_p: f64,
    activations: u64,
}

impl Red {
    /// Average queue length (packets).
    pub fn avg(&self) -> f64 {
        self.avg
    }
    /// Current max_p.
    pub fn max_p(&self) -> f64 {
        self.max_p
    }
    /// Set the current max_p (Adaptive RED's law).
    pub fn set_max_p(&mut self, p: f64) {
        self.max_p = p.clamp(0.0, 1.0);
    }
    /// Arrivals since the last drop.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Step 1: the average after an arrival that sees `q` packets at `now`.
    pub fn update_avg(&mut self, now: Instant, q: u32) {
        let w = self.cfg.w_q;
        if let Some(t0) = self.idle_since.take() {
            // ns-2 estimator(): m idle "packets" decay the average.
            let m = ((now - t0).0 as f64 * self.ptc_per_ns).floor();
            if m > 0.0 {
                self.avg *= (1.0 - w).powf(m);
            }
        }
        self.avg = (1.0 - w) * self.avg + w * q as f64;
    }

    /// Force the average (test fixtures).
    #[cfg(test)]
    pub(crate) fn set_avg(&mut self, avg: f64) {
        self.avg = avg;
    }

    fn set_link(&mut self, env: &Env) {
        // Packets per second C / (8 · mean size), per ns.
        self.ptc_per_ns = env.link.rate.packets_per_sec(self.cfg.mean_pkt_size)
            / crate::time::NANOS_PER_SEC as f64;
    }
}

impl Algorithm for Red {
    type Config = RedConfig;

    fn build(cfg: &RedConfig, env: &Env) -> Self {
        let mut r = Red {
            cfg: *cfg,
            max_p: cfg.max_p,
            ptc_per_ns: 0.0,
            avg: 0.0,
            count: 0,
            old: false,
            idle_since: None,
            last_p: 0.0,
            activations: 0,
        };
        r.set_link(env);
        r
    }
    fn cfg(&self) -> &RedConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        self.set_link(env);
    }
    fn reconfigure(&mut self, cfg: RedConfig) {
        let rate_pps = self.ptc_per_ns * self.cfg.mean_pkt_size as f64;
        if cfg.max_p != self.cfg.max_p {
            self.max_p = cfg.max_p;
        }
        self.cfg = cfg;
        self.ptc_per_ns = rate_pps / cfg.mean_pkt_size as f64;
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }

    /// ns-2 `REDQueue::enque` decision part.
    fn enqueue(&mut self, now: Instant, _pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
        self.update_avg(now, q.len_pkts);
        self.count += 1;
        let c = &self.cfg;
        let forced_from = if c.gentle { 2.0 * c.max_th } else { c.max_th };
        if self.avg >= c.min_th && q.len_pkts > 1 {
            if self.avg >= forced_from {
                self.last_p = 1.0;
                self.count = 0;
                return Verdict::Drop(DropReason::AqmForced);
            }
            if !self.old {
                // avg just crossed min_th: start counting (ns-2 edv_.old).
                self.count = 1;
                self.old = true;
                return Verdict::Accept;
            }
            self.activations += 1;
            let pb = p_b(self.avg, c.min_th, c.max_th, self.max_p, c.gentle);
            let pa = p_a(pb, self.count, c.wait);
            self.last_p = pa;
            if rng.uniform() < pa {
                self.count = 0;
                return Verdict::Signal(DropReason::Early);
            }
        } else {
            self.last_p = 0.0;
            self.old = false;
        }
        Verdict::Accept
    }

    fn on_empty(&mut self, idle_from: Instant) {
        self.idle_since = Some(idle_from);
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
    use crate::QueueLimit;

    fn red(cfg: RedConfig) -> Red {
        Red::build(&cfg, &env(QueueLimit::Packets(1000), 10))
    }

    /// Floyd & Jacobson 1993 §4 / Floyd 2000 (gentle) drop curve with min_th 5, max_th 15,
    /// max_p 0.1 at chosen averages (hand-computed). Tolerance 1e-12.
    #[test]
    fn drop_curve_including_gentle_region() {
        let cases = [
            (4.0, true, 0.0),
            (5.0, true, 0.0),
            (10.0, true, 0.05),
            (14.0, true, 0.09),
            (15.0, true, 0.1),
            (22.5, true, 0.1 + 0.9 * 7.5 / 15.0),
            (29.0, true, 0.1 + 0.9 * 14.0 / 15.0),
            (30.0, true, 1.0),
            (40.0, true, 1.0),
            (10.0, false, 0.05),
            (15.0, false, 1.0),
        ];
        for (avg, gentle, expected) in cases {
            let got = p_b(avg, 5.0, 15.0, 0.1, gentle);
            assert!(
                (got - expected).abs() < 1e-12,
                "avg {avg} gentle {gentle}: {got}"
            );
        }
    }

    /// ns-2 `modify_p` (wait) and Floyd & Jacobson §7 (original) on hand-computed inputs.
    #[test]
    fn count_spacing_formulas() {
        assert_eq!(p_a(0.02, 10, true), 0.0); // count·p_b = 0.2 < 1
        assert!((p_a(0.02, 60, true) - 0.02 / 0.8).abs() < 1e-15); // 1.2 -> p_b/(2 − 1.2)
        assert_eq!(p_a(0.02, 100, true), 1.0); // >= 2
        assert!((p_a(0.02, 10, false) - 0.02 / 0.8).abs() < 1e-15); // p_b/(1 − 0.2)
        assert_eq!(p_a(0.02, 50, false), 1.0); // count·p_b = 1
    }

    /// EWMA against its closed form for a constant queue q: avg_n = q (1 − (1 − w)^n).
    /// Tolerance 1e-9 relative.
    #[test]
    fn ewma_update() {
        let mut r = red(RedConfig::default());
        for _ in 0..700 {
            r.update_avg(Instant::ZERO, 10);
        }
        let expected = 10.0 * (1.0 - 0.998f64.powi(700));
        assert!((r.avg() - expected).abs() < 1e-9 * expected, "{}", r.avg());
    }

    /// ns-2 `estimator` idle correction: link 10 Mb/s, mean_pkt_size 500 B -> 2500 pkt/s;
    /// idle 10 ms -> m = 25; avg = (1 − w)^25 · avg, then the arrival's EWMA with q = 0.
    /// Tolerance 1e-12 relative.
    #[test]
    fn idle_time_correction() {
        let mut r = red(RedConfig::default());
        r.set_avg(10.0);
        r.on_empty(Instant(1_000_000_000));
        r.update_avg(Instant(1_010_000_000), 0);
        let expected = 10.0 * 0.998f64.powi(26);
        assert!((r.avg() - expected).abs() < 1e-12 * expected, "{}", r.avg());
        // Without an idle period only one EWMA step applies.
        r.set_avg(10.0);
        r.update_avg(Instant(1_020_000_000), 0);
        assert!((r.avg() - 9.98).abs() < 1e-12);
    }

    /// Count spacing measured over many arrivals at a constant average (avg = q = 10, so
    /// p_b = 0.05). ns-2 wait: gaps between drops are uniform on {20, …, 39}
    /// (hazard p_b/(2 − c·p_b) = 1/(40 − c)); original: uniform on {1, …, 19}
    /// (hazard p_b/(1 − c·p_b) = 1/(20 − c)). Every gap must lie in its range (deterministic
    /// bound) and the mean gap within 4 standard errors (sd of uniform: sqrt((n²−1)/12)).
    #[test]
    fn count_spacing_empirical() {
        for (wait, lo, hi) in [(true, 20u64, 39u64), (false, 1, 19)] {
            let cfg = RedConfig {
                wait,
                ..Default::default()
            };
            let mut r = red(cfg);
            r.set_avg(10.0);
            r.old = true;
            let mut rng = Rng::new(2024);
            let q = view(10, 10_000);
            let a = arrival(1000, 0, false);
            let mut gaps = Vec::new();
            let mut since = 0u64;
            for _ in 0..300_000 {
                since += 1;
                if r.enqueue(Instant::ZERO, &a, &q, &mut rng) != Verdict::Accept {
                    gaps.push(since);
                    since = 0;
                }
                assert!((r.avg() - 10.0).abs() < 1e-9);
            }
            assert!(gaps.iter().all(|g| (lo..=hi).contains(g)), "wait {wait}");
            let n = (hi - lo + 1) as f64;
            let mean_expected = (lo + hi) as f64 / 2.0;
            let sd = ((n * n - 1.0) / 12.0).sqrt() / (gaps.len() as f64).sqrt();
            let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
            assert!(
                (mean - mean_expected).abs() < 4.0 * sd,
                "wait {wait}: mean gap {mean} vs {mean_expected} ± {}",
                4.0 * sd
            );
        }
    }

    /// Forced region: gentle drops everything from 2·max_th, classic from max_th; forced
    /// drops are drops even with ECN (ns-2 DTYPE_FORCED).
    #[test]
    fn forced_region_and_first_crossing() {
        let mut rng = Rng::new(1);
        let a = arrival(1000, 0, true);
        let mut r = red(RedConfig::default());
        r.set_avg(31.0);
        r.old = true;
        assert_eq!(
            r.enqueue(Instant::ZERO, &a, &view(31, 31_000), &mut rng),
            Verdict::Drop(DropReason::AqmForced)
        );
        let mut r = red(RedConfig {
            gentle: false,
            ..Default::default()
        });
        r.set_avg(16.0);
        assert_eq!(
            r.enqueue(Instant::ZERO, &a, &view(16, 16_000), &mut rng),
            Verdict::Drop(DropReason::AqmForced)
        );
        // First arrival above min_th only starts the count (ns-2 edv_.old).
        let mut r = red(RedConfig::default());
        r.set_avg(10.0);
        assert_eq!(
            r.enqueue(Instant::ZERO, &a, &view(10, 10_000), &mut rng),
            Verdict::Accept
        );
        assert_eq!(r.count(), 1);
        assert_eq!(r.activations(), 0);
    }
}
