//! CUBIC window law (RFC 9438), in segments and seconds.
//!
//! Slow start is standard (RFC 5681 eq. 2, i.e. ABC with L = 1), ended early by HyStart
//! when it is on ([`super::hystart`], the `linux` profile). Congestion
//! avoidance follows RFC 9438 §4.2–4.5: the cubic window
//! `W_cubic(t) = C (t - K)^3 + W_max`, the Reno-friendly estimate `W_est`
//! (§4.3), concave/convex growth toward `W_cubic(t + RTT)` clamped to
//! `[cwnd, 1.5 cwnd]` (§4.4–4.5). A congestion event applies `beta_cubic`
//! and fast convergence (§4.6–4.7). CUBIC is paired with NewReno loss
//! recovery ([`crate::tcp::recovery`]).

use super::hystart::Hystart;
use super::reno::{slow_start, MIN_SSTHRESH};
use super::{AckEvent, Congestion, Controller, LOSS_WINDOW};
use crate::engine::{ns_to_secs, Ns, NS_PER_SEC};

/// C, in segments / s^3, according to RFC 9438 §5.1.
pub const C: f64 = 0.4;
/// beta_cubic, the multiplicative decrease factor, according to RFC 9438
/// §4.6.
pub const BETA: f64 = 0.7;
/// alpha_cubic = 3 (1 - beta) / (1 + beta), the Reno-friendly additive
/// increase, according to RFC 9438 §4.3 equation (4).
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// CUBIC state, including the window it owns (first, as in
/// [`super::reno::Reno`]).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Cubic {
    /// Congestion window (segments).
    cwnd: f64,
    /// Slow-start threshold (segments).
    ssthresh: f64,
    /// W_max: window just before the last reduction (segments).
    pub w_max: f64,
    /// K: time (s) the cubic function takes to return to `w_max`.
    pub k: f64,
    /// Start of the current congestion-avoidance epoch.
    pub epoch_start: Option<Ns>,
    /// W_est, the Reno-friendly window estimate (segments).
    pub w_est: f64,
    /// Fast convergence enabled (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// HyStart (off unless the sender turns it on).
    pub hystart: Hystart,
}

impl Cubic {
    /// Initial window `init_cwnd` segments, infinite `ssthresh`.
    pub fn new(init_cwnd: u32) -> Self {
        Self::with_window(init_cwnd as f64, f64::INFINITY)
    }

    /// Given window and threshold (segments), no epoch, `W_max = 0`.
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        Cubic {
            cwnd,
            ssthresh,
            w_max: 0.0,
            k: 0.0,
            epoch_start: None,
            w_est: 0.0,
            fast_convergence: true,
            hystart: Hystart::new(false),
        }
    }

    /// W_cubic(t) according to RFC 9438 §4.2 equation (1).
    #[inline]
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// New data acknowledged outside recovery. `rtt` is the smoothed RTT.
    fn increase(&mut self, acked: u32, now: Ns, rtt: Ns) {
        let mut acked = acked;
        if self.cwnd < self.ssthresh {
            acked = slow_start(&mut self.cwnd, self.ssthresh, acked);
            if acked == 0 {
                return;
            }
        }
        let start = match self.epoch_start {
            Some(s) => s,
            None => {
                // RFC 9438 §4.2: a new epoch; K from cwnd_epoch (eq. 2).
                self.epoch_start = Some(now);
                if self.cwnd < self.w_max {
                    self.k = ((self.w_max - self.cwnd) / C).cbrt();
                } else {
                    self.k = 0.0;
                    self.w_max = self.cwnd;
                }
                self.w_est = self.cwnd;
                now
            }
        };
        let t = ns_to_secs(now - start);
        // RFC 9438 §4.3: W_est grows by alpha per window (alpha = 1 once
        // W_est has reached W_max).
        let alpha = if self.w_est >= self.w_max { 1.0 } else { ALPHA };
        self.w_est += alpha * acked as f64 / self.cwnd;
        if self.w_cubic(t) < self.w_est {
            // Reno-friendly region (§4.3).
            self.cwnd = self.w_est;
        } else {
            // Concave (§4.4) or convex (§4.5) region.
            let target = self
                .w_cubic(t + ns_to_secs(rtt))
                .clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) / self.cwnd * acked as f64;
        }
    }

    /// A congestion event (loss detected by duplicate ACKs, ECN, or timeout)
    /// with `flight` segments outstanding; returns the new `ssthresh`
    /// (RFC 9438 §4.6: `flight_size * beta_cubic`, at least 2).
    fn reduce(&mut self, flight: u32) -> f64 {
        self.epoch_start = None;
        // RFC 9438 §4.7 fast convergence.
        self.w_max = if self.fast_convergence && self.cwnd < self.w_max {
            self.cwnd * (1.0 + BETA) / 2.0
        } else {
            self.cwnd
        };
        (flight as f64 * BETA).max(MIN_SSTHRESH)
    }
}

impl Controller for Cubic {
    #[inline]
    fn window(&self) -> f64 {
        self.cwnd
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// The window law uses the smoothed RTT as the RTT of RFC 9438 §4.4.
    #[inline]
    fn on_ack(&mut self, now: Ns, ack: &AckEvent) {
        if ack.acked > 0 && self.hystart.enabled {
            // Linux `bictcp_acked`: HyStart sees every ACK of new data; samples within a
            // second of a new epoch are discarded.
            let fresh = self.epoch_start.is_some_and(|e| now - e < NS_PER_SEC);
            let (cwnd, ssthresh) = (self.cwnd, self.ssthresh);
            let h = &mut self.hystart;
            if h.on_ack(now, ack.ack, ack.snd_max, ack.rtt, cwnd, ssthresh, fresh).is_some() {
                self.ssthresh = self.cwnd;
            }
        }
        if ack.may_raise_cwnd() {
            self.increase(ack.acked, now, ack.srtt);
        }
    }

    fn on_congestion(&mut self, _now: Ns, kind: Congestion, flight: u32) {
        match kind {
            Congestion::Loss | Congestion::Ecn => {
                self.ssthresh = self.reduce(flight);
                self.cwnd = self.ssthresh;
            }
            Congestion::Timeout { repeated } => {
                if !repeated {
                    self.ssthresh = self.reduce(flight);
                }
                self.cwnd = LOSS_WINDOW;
                // Linux `bictcp_state(TCP_CA_Loss)`: HyStart starts over.
                self.hystart.reset();
            }
        }
    }

    #[inline]
    fn on_recovery_end(&mut self, _now: Ns) {
        self.cwnd = self.ssthresh;
    }
}

#[cfg(test)]
mod tests {
    use super::super::open_ack;
    use super::*;

    /// Reference: RFC 9438 equations evaluated by hand. With W_max = 100 and
    /// cwnd_epoch = 70, K = cbrt(30 / 0.4) = 4.217 s; W_cubic(K) = W_max.
    #[test]
    fn k_and_plateau() {
        let mut c = Cubic::with_window(100.0, f64::INFINITY);
        c.on_congestion(0, Congestion::Loss, 100);
        assert!((c.ssthresh() - 70.0).abs() < 1e-9);
        assert_eq!(c.window(), c.ssthresh());
        c.on_ack(0, &open_ack(1, 100_000_000));
        assert!((c.k - (30.0f64 / 0.4).cbrt()).abs() < 1e-9);
        assert!((c.w_cubic(c.k) - 100.0).abs() < 1e-9);
        // Fast convergence: a second loss below W_max lowers W_max further.
        c.cwnd = 90.0;
        c.on_congestion(0, Congestion::Loss, 90);
        assert!((c.w_max - 90.0 * 0.85).abs() < 1e-9);
        assert!((ALPHA - 0.529_411_764_7).abs() < 1e-9);
    }

    /// Growth over a long loss-free period is eventually convex (faster than
    /// Reno's one segment per RTT).
    #[test]
    fn grows_past_w_max() {
        let mut c = Cubic::with_window(100.0, f64::INFINITY);
        c.on_congestion(0, Congestion::Loss, 100);
        let rtt = 100_000_000;
        let mut now = 0;
        for _ in 0..200 {
            // one RTT worth of ACKs
            let n = c.window() as u32;
            for _ in 0..n {
                c.on_ack(now, &open_ack(1, rtt));
            }
            now += rtt;
        }
        assert!(c.window() > 150.0, "cwnd {}", c.window());
    }
}
