//! AVQ — Adaptive Virtual Queue (Kunniyur & Srikant 2001; docs/aqm/avq.md), following
//! ns-2 `vq.cc`.
//!
//! Per arrival at `t` (previous arrival at `s`), packet of size `b`:
//! 1. `VQ ← max(VQ − C̃ (t − s), 0)`;
//! 2. if `VQ + b > B̄` (virtual buffer = `buflim` × real buffer): congestion signal (mark with
//!    ECN, else drop); otherwise `VQ ← VQ + b`;
//! 3. unless the packet was dropped: `C̃ ← max(min(C̃ + alpha·gamma·C (t − s), C) − alpha·b, 0)`.
//!
//! Units follow the queue limit: with a packet limit `b = 1` packet and `C` in packets/s of
//! `mean_pkt_size` bytes; with a byte limit `b` is the packet size and `C` in bytes/s.
//!
//! Activations: one per arrival (the virtual queue and capacity are updated on each).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::{DropReason, QueueLimit};
use crate::error::{ensure, ConfigError};
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::Instant;

aqm_config! {
    /// AVQ configuration (ns-2 `vq.cc` defaults as used by SFC).
    pub struct AvqConfig as "avq" {
        /// Desired utilisation gamma. Default 0.98 (Kunniyur & Srikant 2001; ns-2 `gamma_`).
        pub gamma: f64 = 0.98, "fraction";
        /// Adaptation gain alpha. Default 0.15 (ns-2's `vq.cc` fixes it at 0.15, `alpha2`, with no
        /// Tcl option; SFC §VI).
        pub alpha: f64 = 0.15, "gain";
        /// Virtual buffer as a multiple of the real buffer. Default 1.0 (ns-2 `buflim_`).
        pub buflim: f64 = 1.0, "fraction";
        /// Initial virtual capacity as a fraction of C. Default 0.8 (ns-2 `ecnlim_`).
        pub initial_capacity: f64 = 0.8, "fraction";
        /// Packet size expressing C in packets/s under a packet limit, bytes. Default 1000
        /// (assumption of this implementation; set it to the scenario's packet size).
        pub mean_pkt_size: u32 = 1000, "bytes";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
    }
}

impl AvqConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            self.gamma > 0.0 && self.gamma <= 1.0,
            "gamma",
            self.gamma,
            "must be in (0, 1]",
        )?;
        ensure(self.alpha >= 0.0, "alpha", self.alpha, "must be >= 0")?;
        ensure(self.buflim > 0.0, "buflim", self.buflim, "must be > 0")?;
        ensure(
            (0.0..=1.0).contains(&self.initial_capacity),
            "initial_capacity",
            self.initial_capacity,
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

/// AVQ state.
#[derive(Debug, Clone)]
pub struct Avq {
    cfg: AvqConfig,
    env: Env,
    byte_mode: bool,
    /// Link capacity C in units/s.
    c: f64,
    /// Virtual buffer B̄ in units.
    vbuf: f64,
    /// Virtual capacity C̃ in units/s.
    ctilde: f64,
    /// Virtual queue in units.
    vq: f64,
    last_arrival: Option<Instant>,
    /// 1 if the last arrival was signalled, else 0 (monitoring only).
    last_signal: f64,
    activations: u64,
}

impl Avq {
    /// Virtual queue (units).
    pub fn virtual_queue(&self) -> f64 {
        self.vq
    }
    /// Virtual capacity (units/s).
    pub fn virtual_capacity(&self) -> f64 {
        self.ctilde
    }
    fn derive(&mut self) {
        let mtu = self.env.link.mtu;
        self.byte_mode = matches!(self.env.limit, QueueLimit::Bytes(_));
        if self.byte_mode {
            self.c = self.env.link.rate.as_f64() / 8.0;
            self.vbuf = self.cfg.buflim * self.env.limit.as_bytes(mtu) as f64;
        } else {
            self.c = self.env.link.rate.packets_per_sec(self.cfg.mean_pkt_size);
            self.vbuf = self.cfg.buflim * self.env.limit.as_packets(mtu) as f64;
        }
    }

    /// The per-arrival law (steps 1–3) at time `now` for a packet of `b` units; returns true
    /// if the virtual queue overflows (signal). `dropped` tells whether a signal will be a
    /// drop (then step 3 is skipped).
    pub fn arrival(&mut self, now: Instant, b: f64, signal_is_drop: bool) -> bool {
        let dt = match self.last_arrival {
            Some(s) => (now - s).as_secs_f64(),
            None => 0.0,
        };
        self.last_arrival = Some(now);
        self.activations += 1;
        self.vq = (self.vq - self.ctilde * dt).max(0.0);
        let overflow = self.vq + b > self.vbuf;
        if !overflow {
            self.vq += b;
        }
        if !(overflow && signal_is_drop) {
            let a = self.cfg.alpha;
            self.ctilde =
                ((self.ctilde + a * self.cfg.gamma * self.c * dt).min(self.c) - a * b).max(0.0);
        }
        overflow
    }
}

impl Algorithm for Avq {
    type Config = AvqConfig;

    fn build(cfg: &AvqConfig, env: &Env) -> Self {
        let mut a = Avq {
            cfg: *cfg,
            env: *env,
            byte_mode: false,
            c: 0.0,
            vbuf: 0.0,
            ctilde: 0.0,
            vq: 0.0,
            last_arrival: None,
            last_signal: 0.0,
            activations: 0,
        };
        a.derive();
        a.ctilde = cfg.initial_capacity * a.c;
        a
    }
    fn cfg(&self) -> &AvqConfig {
        &self.cfg
    }
    fn link_changed(&mut self, env: &Env) {
        self.env = *env;
        self.derive();
    }
    fn reconfigure(&mut self, cfg: AvqConfig) {
        self.cfg = cfg;
        self.derive();
        self.ctilde = self.ctilde.min(self.c);
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    fn enqueue(&mut self, now: Instant, pkt: &Arrival, _q: &QueueView, _rng: &mut Rng) -> Verdict {
        let b = if self.byte_mode { pkt.size as f64 } else { 1.0 };
        let signal_is_drop = !(self.cfg.ecn && pkt.ecn_capable);
        if self.arrival(now, b, signal_is_drop) {
            self.last_signal = 1.0;
            Verdict::Signal(DropReason::AqmForced)
        } else {
            self.last_signal = 0.0;
            Verdict::Accept
        }
    }
    fn activations(&self) -> u64 {
        self.activations
    }
    fn probability(&self) -> f64 {
        self.last_signal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{arrival, env, view};

    /// ns-2 vq.cc law on hand-computed inputs: packet limit 100, 8 Mb/s, 1000-byte packets:
    /// C = 1000 pkt/s, B̄ = 100, C̃(0) = 800. Tolerance 1e-9.
    #[test]
    fn update_law_hand_computed() {
        let mut a = Avq::build(&AvqConfig::default(), &env(QueueLimit::Packets(100), 8));
        assert!((a.virtual_capacity() - 800.0).abs() < 1e-12);
        // t = 0 (first arrival, dt = 0): VQ = 1, C̃ = 800 − 0.15.
        assert!(!a.arrival(Instant::ZERO, 1.0, true));
        assert!((a.virtual_queue() - 1.0).abs() < 1e-12);
        assert!((a.virtual_capacity() - 799.85).abs() < 1e-9);
        // t = 10 ms: VQ drains to 0 then +1; C̃ = 799.85 + 0.15·0.98·1000·0.01 − 0.15 = 801.17.
        assert!(!a.arrival(Instant(10_000_000), 1.0, true));
        assert!((a.virtual_queue() - 1.0).abs() < 1e-12);
        assert!((a.virtual_capacity() - 801.17).abs() < 1e-9);
        // t = 20 ms: drain, then a burst of 100 arrivals at the same instant fills B̄ = 100.
        for _ in 0..100 {
            assert!(!a.arrival(Instant(20_000_000), 1.0, true));
        }
        // C̃ = 801.17 + 1.47 − 100·0.15 = 787.64.
        assert!((a.virtual_capacity() - 787.64).abs() < 1e-9);
        assert!((a.virtual_queue() - 100.0).abs() < 1e-12);
        // The 101st overflows: signalled; as a drop, C̃ is not adapted.
        assert!(a.arrival(Instant(20_000_000), 1.0, true));
        assert!((a.virtual_capacity() - 787.64).abs() < 1e-9);
        // As a mark (not dropped), C̃ is adapted: −0.15.
        assert!(a.arrival(Instant(20_000_000), 1.0, false));
        assert!((a.virtual_capacity() - 787.49).abs() < 1e-9);
        // C̃ never exceeds C: after a long quiet period it saturates at C − alpha·b.
        a.arrival(Instant(100_000_000_000), 1.0, true);
        assert!((a.virtual_capacity() - (1000.0 - 0.15)).abs() < 1e-9);
    }

    /// Verdicts through the algorithm interface; byte mode uses packet sizes.
    #[test]
    fn verdicts_and_byte_mode() {
        let mut rng = Rng::new(1);
        let mut a = Avq::build(&AvqConfig::default(), &env(QueueLimit::Bytes(3000), 8));
        let v = view(0, 0);
        assert_eq!(
            a.enqueue(Instant::ZERO, &arrival(1500, 0, false), &v, &mut rng),
            Verdict::Accept
        );
        assert_eq!(
            a.enqueue(Instant::ZERO, &arrival(1500, 0, false), &v, &mut rng),
            Verdict::Accept
        );
        assert_eq!(
            a.enqueue(Instant::ZERO, &arrival(1, 0, false), &v, &mut rng),
            Verdict::Signal(DropReason::AqmForced)
        );
        assert!((a.virtual_queue() - 3000.0).abs() < 1e-12);
    }
}
