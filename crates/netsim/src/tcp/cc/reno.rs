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

/// Linux `tcp_slow_start` on a whole-number window: every acknowledged segment is added, up to
/// `ssthresh` (no per-ACK limit); returns the segments left over for congestion avoidance.
#[inline]
pub fn linux_slow_start(cwnd: &mut f64, ssthresh: f64, acked: u32) -> u32 {
    let grown = (*cwnd + acked as f64).min(ssthresh);
    let left = acked - (grown - *cwnd) as u32;
    *cwnd = grown;
    left
}

/// Linux `tcp_cong_avoid_ai(tp, w, acked)`: `cnt` (`snd_cwnd_cnt`) counts acknowledged
/// segments and the window grows by one per `w` of them, credit left from a larger `w` first.
#[inline]
pub fn linux_cong_avoid_ai(cwnd: &mut f64, cnt: &mut u32, w: u32, acked: u32) {
    let w = w.max(1);
    if *cnt >= w {
        *cnt = 0;
        *cwnd += 1.0;
    }
    *cnt += acked;
    if *cnt >= w {
        let delta = *cnt / w;
        *cnt -= delta * w;
        *cwnd += delta as f64;
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
    /// Linux's arithmetic ([`Reno::linux`]): `snd_cwnd_cnt`, the acknowledged segments not
    /// yet turned into window.
    cnt: u32,
    /// Linux's whole-number window arithmetic instead of RFC 5681's fractional one.
    linux: bool,
}

impl Reno {
    /// Initial window `init_cwnd` segments, infinite `ssthresh`.
    pub fn new(init_cwnd: u32) -> Self {
        Self::with_window(init_cwnd as f64, f64::INFINITY)
    }

    /// Given window and threshold (segments).
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        Reno {
            cwnd,
            ssthresh,
            cnt: 0,
            linux: false,
        }
    }

    /// The same controller with Linux's window arithmetic (the `linux` profile) or RFC
    /// 5681's: a whole-number window; slow start adds every acknowledged segment up to
    /// `ssthresh` (`tcp_slow_start`, no per-ACK limit); congestion avoidance counts
    /// acknowledged segments and adds one segment per window of them, applying credit left
    /// from a larger window first (`tcp_cong_avoid_ai`); a congestion signal sets `ssthresh
    /// = max(cwnd / 2, 2)` on the window, integer division (`tcp_reno_ssthresh`), and clears
    /// the counter (`tcp_init_cwnd_reduction`); a timeout leaves a window of 1
    /// (`tcp_enter_loss`).
    pub fn linux(mut self, on: bool) -> Self {
        self.linux = on;
        self.cwnd = if on { self.cwnd.floor() } else { self.cwnd };
        self
    }

    /// Linux `tcp_reno_cong_avoid` for `acked` segments (Linux first returns unless
    /// `tcp_is_cwnd_limited`; the simulator does not check that, so a flow held back by the
    /// receive window still grows its window).
    fn linux_increase(&mut self, acked: u32) {
        let mut acked = acked;
        if self.cwnd < self.ssthresh {
            acked = linux_slow_start(&mut self.cwnd, self.ssthresh, acked);
            if acked == 0 {
                return;
            }
        }
        let w = self.cwnd as u32;
        linux_cong_avoid_ai(&mut self.cwnd, &mut self.cnt, w, acked);
    }

    /// Linux `tcp_reno_ssthresh`: half the whole-number window, at least 2.
    fn linux_ssthresh(&self) -> f64 {
        ((self.cwnd as u32) >> 1).max(2) as f64
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
        if !ack.may_raise_cwnd() {
            return;
        }
        if self.linux {
            self.linux_increase(ack.delivered);
        } else {
            reno_increase(&mut self.cwnd, self.ssthresh, ack.acked);
        }
    }

    #[inline]
    fn on_congestion(&mut self, _now: Ns, kind: Congestion, flight: u32) {
        if self.linux {
            let ssthresh = self.linux_ssthresh();
            self.cnt = 0;
            match kind {
                Congestion::Loss | Congestion::Ecn => {
                    self.ssthresh = ssthresh;
                    self.cwnd = ssthresh;
                }
                Congestion::Timeout { repeated } => {
                    if !repeated {
                        self.ssthresh = ssthresh;
                    }
                    self.cwnd = LOSS_WINDOW;
                }
            }
            return;
        }
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

    /// Linux's arithmetic by hand (tcp_slow_start, tcp_cong_avoid_ai, tcp_reno_ssthresh):
    /// slow start takes a delayed ACK's two segments at once; at cwnd 4 four acknowledged
    /// segments add one; credit from a larger window is applied first; ssthresh halves the
    /// whole-number window (5 -> 2) and clears the counter; a timeout leaves 1.
    #[test]
    fn linux_arithmetic() {
        let mut r = Reno::with_window(2.0, 4.0).linux(true);
        r.on_ack(0, &open_ack(2, 0));
        assert_eq!(r.window(), 4.0, "slow start by both segments, up to ssthresh");
        r.on_ack(0, &open_ack(3, 0));
        assert_eq!((r.window(), r.cnt), (4.0, 3));
        r.on_ack(0, &open_ack(2, 0));
        assert_eq!((r.window(), r.cnt), (5.0, 1), "4 of the 5 counted make one segment");
        // Slow start past ssthresh: the rest goes to the counter.
        let mut r = Reno::with_window(3.0, 4.0).linux(true);
        r.on_ack(0, &open_ack(3, 0));
        assert_eq!((r.window(), r.cnt), (4.0, 2));
        // Credit accumulated at a larger window: one segment first, then counting anew.
        let mut r = Reno::with_window(3.0, 2.0).linux(true);
        r.cnt = 5;
        r.on_ack(0, &open_ack(1, 0));
        assert_eq!((r.window(), r.cnt), (4.0, 1));
        let mut r = Reno::with_window(5.0, 2.0).linux(true);
        r.cnt = 3;
        r.on_congestion(0, Congestion::Ecn, 5);
        assert_eq!((r.window(), r.ssthresh(), r.cnt), (2.0, 2.0, 0));
        let mut r = Reno::with_window(9.7, 2.0).linux(true);
        assert_eq!(r.window(), 9.0, "a whole-number window");
        r.on_congestion(0, Congestion::Loss, 3);
        assert_eq!(r.ssthresh(), 4.0, "the window, not FlightSize");
        r.on_congestion(0, Congestion::Timeout { repeated: false }, 4);
        assert_eq!((r.window(), r.ssthresh()), (1.0, 2.0));
    }
}
