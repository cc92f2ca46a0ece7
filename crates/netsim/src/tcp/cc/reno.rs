//! Reno window law (RFC 5681): slow start, congestion avoidance, and
//! multiplicative decrease to half the flight size. Shared by Reno and
//! NewReno ([`super::newreno`]), which differ only in loss recovery (see
//! [`crate::tcp::recovery`]).

use super::{AckEvent, Congestion, Controller, LOSS_WINDOW};
use crate::engine::Ns;

/// Slow-start increase limit per ACK, in segments: `cwnd += min(N, SMSS)`,
/// according to RFC 5681 §3.1 equation (2) (Appropriate Byte Counting with
/// L = 1 * SMSS, which RFC 5681 §7 recommends; RFC 3465's experimental
/// L = 2 * SMSS let a cumulative ACK after a timeout or a recovery grow the
/// window twice as fast and made the drop-tail dumbbell lose ~40% more
/// packets than ns-3, see `validation/ns3/RESULTS.md`).
pub const ABC_LIMIT: f64 = 1.0;

/// Minimum slow-start threshold, 2 segments, according to RFC 5681 §3.1
/// equation (4).
pub const MIN_SSTHRESH: f64 = 2.0;

/// Slow start (RFC 5681 §3.1): `cwnd += min(acked, L)` but not beyond
/// `ssthresh`. Returns the segments of `acked` left over for congestion
/// avoidance.
#[inline]
pub fn slow_start(cwnd: &mut f64, ssthresh: f64, acked: u32) -> u32 {
    let inc = (acked as f64).min(ABC_LIMIT);
    let room = (ssthresh - *cwnd).max(0.0);
    if inc <= room {
        *cwnd += inc;
        0
    } else {
        *cwnd += room;
        acked.saturating_sub(room.ceil() as u32)
    }
}

/// The Reno increase for `acked` new segments outside recovery: slow start
/// below `ssthresh`, otherwise congestion avoidance, `cwnd += acked / cwnd`
/// (RFC 5681 §3.1 equation (3), one segment per window of ACKs).
#[inline]
pub fn reno_increase(cwnd: &mut f64, ssthresh: f64, acked: u32) {
    let mut acked = acked;
    if *cwnd < ssthresh {
        acked = slow_start(cwnd, ssthresh, acked);
    }
    if acked > 0 {
        *cwnd += acked as f64 / *cwnd;
    }
}

/// Slow-start threshold after a congestion signal (loss or ECN):
/// `max(FlightSize / 2, 2)` segments, according to RFC 5681 §3.1
/// equation (4).
#[inline]
pub fn reno_ssthresh(flight: u32) -> f64 {
    (flight as f64 / 2.0).max(MIN_SSTHRESH)
}

/// The Reno window law as a [`Controller`]: `cwnd` and `ssthresh` in
/// segments. (`repr(C)` with the window first in every controller, so
/// [`super::AnyController::window`] is one load whatever the variant.)
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Reno {
    cwnd: f64,
    ssthresh: f64,
}

impl Reno {
    /// Initial window `init_cwnd` segments, infinite `ssthresh`.
    pub fn new(init_cwnd: u32) -> Self {
        Self::with_window(init_cwnd as f64, f64::INFINITY)
    }

    /// Given window and threshold (segments).
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        Reno { cwnd, ssthresh }
    }
}

impl Controller for Reno {
    #[inline]
    fn window(&self) -> f64 {
        self.cwnd
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    #[inline]
    fn on_ack(&mut self, _now: Ns, ack: &AckEvent) {
        if ack.may_raise_cwnd() {
            reno_increase(&mut self.cwnd, self.ssthresh, ack.acked);
        }
    }

    #[inline]
    fn on_congestion(&mut self, _now: Ns, kind: Congestion, flight: u32) {
        match kind {
            Congestion::Loss | Congestion::Ecn => {
                self.ssthresh = reno_ssthresh(flight);
                self.cwnd = self.ssthresh;
            }
            Congestion::Timeout { repeated } => {
                if !repeated {
                    self.ssthresh = reno_ssthresh(flight);
                }
                self.cwnd = LOSS_WINDOW;
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

    /// Reference: RFC 5681 arithmetic by hand.
    #[test]
    fn aimd_arithmetic() {
        let mut r = Reno::with_window(10.0, 100.0);
        r.on_ack(0, &open_ack(1, 0));
        assert_eq!(r.window(), 11.0);
        r.on_ack(0, &open_ack(5, 0)); // RFC 5681 eq. (2): min(N, SMSS)
        assert_eq!(r.window(), 12.0);
        let mut r = Reno::with_window(10.0, 5.0);
        r.on_ack(0, &open_ack(1, 0));
        assert!((r.window() - 10.1).abs() < 1e-12);
        assert_eq!(reno_ssthresh(20), 10.0);
        assert_eq!(reno_ssthresh(3), 2.0);
        r.on_congestion(0, Congestion::Loss, 20);
        assert_eq!((r.window(), r.ssthresh()), (10.0, 10.0));
    }
}
