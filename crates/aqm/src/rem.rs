//! REM — Random Exponential Marking (Athuraliya, Li, Low & Yin 2001; docs/aqm/rem.md),
//! following ns-2 `rem.cc`.
//!
//! Every `t_update`: `price ← max(0, price + gamma (alpha_q (q − q_ref) + x − c))` with `q`
//! the queue in packets, `x` the packets that arrived during the last interval (input-rate
//! EWMA weight 1, i.e. no smoothing, as in ns-2) and `c` the packets the link can send per
//! interval (`t_update · C / (8 · mean_pkt_size)`); `p = 1 − phi^(−price)`. Each arrival is
//! marked/dropped with `p` (at enqueue; ns-2 marks at dequeue when marking — the signal
//! timing differs by one queueing delay, documented deviation).
//!
//! Activations: one per price update.

use crate::algorithm::{Algorithm, Arrival, Env, Periodic, QueueView, Verdict};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

aqm_config! {
    /// REM configuration (ns-2 defaults).
    pub struct RemConfig as "rem" {
        /// Price step size gamma. Default 0.001 (ns-2 `gamma_`).
        pub gamma: f64 = 0.001, "1/packets";
        /// Base of the marking function, > 1. Default 1.001 (ns-2 `phi_`).
        pub phi: f64 = 1.001, "factor";
        /// Weight of the queue error alpha_q. Default 0.1 (ns-2, hard-coded `inw`).
        pub alpha_q: f64 = 0.1, "weight";
        /// Target queue q*, packets. Default 20 (ns-2 `pbo_`).
        pub q_ref: f64 = 20.0, "packets";
        /// Price update period, seconds. Default 0.002 (ns-2 `updtime_`).
        pub t_update: Duration = Duration::from_millis(2), "s";
        /// Packet size used to express the link rate in packets, bytes. Default 1000
        /// (assumption of this implementation; set it to the scenario's packet size).
        pub mean_pkt_size: u32 = 1000, "bytes";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl RemConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(self.gamma >= 0.0, "gamma", self.gamma, "must be >= 0")?;
        ensure(self.phi > 1.0, "phi", self.phi, "must be > 1")?;
        ensure(self.alpha_q >= 0.0, "alpha_q", self.alpha_q, "must be >= 0")?;
        ensure(self.q_ref >= 0.0, "q_ref", self.q_ref, "must be >= 0")?;
        crate::algorithm::check_period("t_update", self.t_update)?;
        ensure(
            self.mean_pkt_size > 0,
            "mean_pkt_size",
            self.mean_pkt_size as f64,
            "must be > 0",
        )
    }
}

/// REM state.
#[derive(Debug, Clone)]
pub struct Rem {
    cfg: RemConfig,
    env: Env,
    /// Link capacity in packets per update interval.
    c: f64,
    price: f64,
    p: f64,
    arrivals: u64,
    timer: Periodic,
    activations: u64,
}

impl Rem {
    /// One price update with queue `q` and `x` arrivals in the interval (packets).
    pub fn update(&mut self, q: f64, x: f64) {
        let c = &self.cfg;
        self.price = (self.price + c.gamma * (c.alpha_q * (q - c.q_ref) + x - self.c)).max(0.0);
        self.p = (1.0 - c.phi.powf(-self.price)).clamp(0.0, 1.0);
        self.activations += 1;
    }
    /// Current price.
    pub fn price(&self) -> f64 {
        self.price
    }
    /// Link capacity in packets per update interval.
    pub fn capacity_per_interval(&self) -> f64 {
        self.c
    }
    fn capacity(cfg: &RemConfig, env: &Env) -> f64 {
        env.link.rate.packets_per_sec(cfg.mean_pkt_size) * cfg.t_update.as_secs_f64()
    }
}

impl Algorithm for Rem {
    type Config = RemConfig;

    fn build(cfg: &RemConfig, env: &Env) -> Self {
        Rem {
            cfg: *cfg,
            env: *env,
            c: Self::capacity(cfg, env),
            price: 0.0,
            p: 0.0,
            arrivals: 0,
            timer: Periodic::new(cfg.t_update),
            activations: 0,
        }
    }
    fn cfg(&self) -> &RemConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        self.env = *env;
        self.c = Self::capacity(&self.cfg, env);
    }
    fn reconfigure(&mut self, cfg: RemConfig) {
        self.timer.set_period(cfg.t_update);
        self.cfg = cfg;
        self.c = Self::capacity(&cfg, &self.env);
        self.p = (1.0 - cfg.phi.powf(-self.price)).clamp(0.0, 1.0);
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(&mut self, _now: Instant, _pkt: &Arrival, _q: &QueueView, rng: &mut Rng) -> Verdict {
        self.arrivals += 1;
        Verdict::early_with_probability(self.p, rng)
    }
    fn poll_at(&self) -> Option<Instant> {
        Some(self.timer.next())
    }
    fn on_timer(&mut self, now: Instant, q: &QueueView) {
        if self.timer.fire(now) {
            let x = self.arrivals as f64;
            self.arrivals = 0;
            self.update(q.len_pkts as f64, x);
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
    use crate::testutil::{arrival, env, view};
    use crate::QueueLimit;

    /// ns-2 REM law on hand-computed inputs. 10 Mb/s, 1000-byte packets: C = 1250 pkt/s,
    /// c = 2.5 packets per 2 ms. q = 30, x = 5: price = 0.001·(0.1·10 + 5 − 2.5) = 0.0035,
    /// p = 1 − 1.001^(−0.0035) = 1 − exp(−0.0035·ln 1.001) ≈ 3.4982e-6.
    /// Then q = 0, x = 0: 0.0035 + 0.001·(−2 − 2.5) < 0 -> price 0, p = 0. Tolerance 1e-15.
    #[test]
    fn price_update_hand_computed() {
        let mut r = Rem::build(&RemConfig::default(), &env(QueueLimit::Packets(100), 10));
        assert!((r.capacity_per_interval() - 2.5).abs() < 1e-12);
        r.update(30.0, 5.0);
        assert!((r.price() - 0.0035).abs() < 1e-15);
        let expected = 1.0 - (-0.0035f64 * 1.001f64.ln()).exp();
        assert!((r.probability() - expected).abs() < 1e-15);
        assert!((r.probability() - 3.4982e-6).abs() < 1e-9);
        r.update(0.0, 0.0);
        assert_eq!(r.price(), 0.0);
        assert_eq!(r.probability(), 0.0);
    }

    /// A rate change reaches the capacity term (`QueueDisc::set_link_rate`): 10 Mb/s gives
    /// 2.5 packets per 2 ms (above), 5 Mb/s 1.25; a rate of 0 (an outage) keeps 1.25. The price
    /// then follows the new capacity: q = 30, x = 5 gives 0.001·(1 + 5 − 1.25) = 0.00475.
    #[test]
    fn a_rate_change_reaches_the_capacity_term() {
        let mut q = crate::QueueDisc::<crate::testutil::TestPacket>::new(
            &crate::AqmConfig::Rem(RemConfig::default()),
            QueueLimit::Packets(100),
            crate::LinkInfo::new(crate::BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        let c = |q: &crate::QueueDisc<crate::testutil::TestPacket>| match q.aqm().expect("rem") {
            crate::config::AnyAqm::Rem(r) => r.capacity_per_interval(),
            _ => unreachable!(),
        };
        assert!((c(&q) - 2.5).abs() < 1e-12);
        q.set_link_rate(crate::BitsPerSec::from_mbps(5));
        assert!((c(&q) - 1.25).abs() < 1e-12);
        assert_eq!(q.link().rate, crate::BitsPerSec::from_mbps(5));
        q.set_link_rate(crate::BitsPerSec(0));
        assert!((c(&q) - 1.25).abs() < 1e-12);
        let mut r = Rem::build(&RemConfig::default(), &env(QueueLimit::Packets(100), 10));
        r.link_changed(&env(QueueLimit::Packets(100), 5));
        r.update(30.0, 5.0);
        assert!((r.price() - 0.00475).abs() < 1e-15);
    }

    /// Arrivals are counted per interval and reset by the timer.
    #[test]
    fn arrivals_measured_per_interval() {
        let mut r = Rem::build(&RemConfig::default(), &env(QueueLimit::Packets(100), 10));
        let mut rng = Rng::new(1);
        for _ in 0..7 {
            r.enqueue(
                Instant::ZERO,
                &arrival(1000, 0, false),
                &view(0, 0),
                &mut rng,
            );
        }
        assert_eq!(r.poll_at(), Some(Instant(2_000_000)));
        r.on_timer(Instant(2_000_000), &view(20, 20_000));
        // price = 0.001·(0 + 7 − 2.5) = 0.0045.
        assert!((r.price() - 0.0045).abs() < 1e-15);
        r.on_timer(Instant(4_000_000), &view(20, 20_000));
        // No arrivals: 0.0045 + 0.001·(−2.5) = 0.002.
        assert!((r.price() - 0.002).abs() < 1e-15);
        assert_eq!(r.activations(), 2);
    }
}
