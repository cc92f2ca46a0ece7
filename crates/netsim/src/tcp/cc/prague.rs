//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control; Linux `net/ipv4/tcp_prague.c`
//! of the L4STeam tree), the scalable congestion control of L4S (RFC 9331).
//!
//! Implemented, after Linux's `tcp_prague.c`:
//! * **ECT(1)** on data segments (the L4S identifier, RFC 9331; set by the sender, see
//!   [`crate::tcp::sender`]).
//! * **alpha**: EWMA of the fraction of CE-marked segments, `g = 1/16`
//!   (`PRAGUE_SHIFT_G`), updated once per round (when the cumulative ACK passes the
//!   `snd_max` of the previous update, `prague_should_update_ewma`), initial value 1, and
//!   not updated before the first CE mark was seen (`saw_ce`), as `prague_update_alpha`.
//!   Counted in segments (`delivered`, `delivered_ce`) as Linux does.
//! * **Reduction on CE** (`prague_enter_cwr`): once per round trip (the sender's CWR
//!   period), `cwnd −= cwnd·alpha/2` on the fractional window; no halving of `ssthresh`:
//!   `ssthresh` follows the reduced window (Linux's step-wise `cwnd` decrement sets
//!   `ssthresh = cwnd`), at least 2 segments (`MIN_CWND`).
//! * **Additive increase on unmarked segments** (`prague_update_cwnd`): on every ACK that
//!   is not in loss recovery, also during the CWR period (Linux's `cong_control` runs on
//!   every ACK), the window grows by `acked_not_ce / cwnd` in congestion avoidance and by
//!   slow start below `ssthresh` (with aqmlab's RFC 5681 slow start, [`super::reno`]).
//! * **Loss** (`prague_enter_loss`): `cwnd` halves (Reno-like; `ssthresh` = the halved
//!   window), no growth until the recovery ends. **Timeout**: the Reno response.
//!
//! Omitted (documented in `docs/tcp.md`): RTT independence (Linux's default
//! `RTT_CONTROL_RATE` towards a 25 ms target after 500 rounds; here `RTT_CONTROL_NONE`),
//! pacing and TSO sizing (the simulator sends window-limited bursts), classic-ECN detection
//! and fallback (`prague_ecn_fallback`, off by default in Linux too), and AccECN: the
//! receiver echoes CE per segment as DCTCP's does (RFC 8257 §3.2), which gives the same
//! per-segment CE counts.

use super::reno::{reno_increase, Reno, MIN_SSTHRESH};
use super::{AckEvent, CaState, Congestion, Controller};
use crate::engine::Ns;

/// EWMA gain g = 1/16 (Linux `PRAGUE_SHIFT_G` = 4).
pub const PRAGUE_G: f64 = 1.0 / 16.0;

/// The Prague controller.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Prague {
    /// Fractional window (Linux `frac_cwnd`) and `ssthresh`, segments (first, see
    /// [`super::reno::Reno`]); timeouts and the end of a recovery are Reno's.
    reno: Reno,
    alpha: f64,
    /// Segment number ending the current round (Linux `next_seq`).
    next_seq: u32,
    /// Segments delivered / delivered with CE in the current round.
    delivered: u32,
    delivered_ce: u32,
    /// A CE mark was seen (Linux `saw_ce`).
    saw_ce: bool,
}

impl Prague {
    /// Given window and threshold (segments); alpha = 1.
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        Prague {
            reno: Reno::with_window(cwnd, ssthresh),
            alpha: 1.0,
            next_seq: 0,
            delivered: 0,
            delivered_ce: 0,
            saw_ce: false,
        }
    }

    /// The current alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl Controller for Prague {
    #[inline]
    fn window(&self) -> f64 {
        self.reno.window()
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        self.reno.ssthresh()
    }

    /// `prague_cong_control`: `prague_update_cwnd`, then `prague_update_alpha` at the end
    /// of a round.
    #[inline]
    fn on_ack(&mut self, _now: Ns, ack: &AckEvent) {
        if ack.ece_acked > 0 {
            self.saw_ce = true;
        }
        let acked = ack.acked - ack.ece_acked.min(ack.acked);
        if acked > 0 && ack.state != CaState::Recovery {
            // Slow start below ssthresh, else acked / cwnd (the Reno law, on unmarked
            // segments only and whatever the CWR state).
            let (mut w, t) = (self.window(), self.ssthresh());
            reno_increase(&mut w, t, acked);
            self.reno = Reno::with_window(w, t);
        }
        self.delivered += ack.acked;
        self.delivered_ce += ack.ece_acked;
        if ack.ack >= self.next_seq {
            if self.saw_ce {
                let f = if self.delivered_ce > 0 {
                    self.delivered_ce as f64 / self.delivered.max(1) as f64
                } else {
                    0.0
                };
                self.alpha = (self.alpha * (1.0 - PRAGUE_G) + PRAGUE_G * f).min(1.0);
            }
            self.next_seq = ack.snd_max;
            self.delivered = 0;
            self.delivered_ce = 0;
        }
    }

    #[inline]
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32) {
        let w = self.window();
        let cut = match kind {
            Congestion::Ecn => w - w * self.alpha / 2.0,
            Congestion::Loss => w / 2.0,
            Congestion::Timeout { .. } => return self.reno.on_congestion(now, kind, flight),
        };
        let w = cut.max(MIN_SSTHRESH);
        self.reno = Reno::with_window(w, w);
    }

    #[inline]
    fn on_recovery_end(&mut self, now: Ns) {
        self.reno.on_recovery_end(now)
    }
}

#[cfg(test)]
mod tests {
    use super::super::open_ack;
    use super::*;

    /// Linux `prague_update_alpha` / `prague_enter_cwr` / `prague_update_cwnd` in floats, by
    /// hand. cwnd 20 in congestion avoidance (ssthresh 20). Round 1 (ends at 10): 10 ACKs of
    /// one segment, 4 with CE: alpha = 15/16 + 0.4/16 = 0.9625; the 6 unmarked ones grow
    /// cwnd by about 6/20, also in CWR. A cut then removes cwnd·alpha/2 and sets ssthresh to
    /// the result.
    #[test]
    fn alpha_increase_and_cut_by_hand() {
        let mut c = Prague::with_window(20.0, 20.0);
        c.next_seq = 10;
        let mut w = 20.0;
        for i in 1..=10u32 {
            let ce = i <= 4;
            let ev = AckEvent {
                ack: i,
                snd_max: 30,
                ece: ce,
                ece_acked: ce as u32,
                state: if i % 2 == 0 {
                    CaState::Cwr
                } else {
                    CaState::Open
                },
                ..open_ack(1, 0)
            };
            c.on_ack(0, &ev);
            if !ce {
                w += 1.0 / w;
            }
            assert_eq!(c.window(), w);
        }
        assert!((c.alpha() - 0.9625).abs() < 1e-12);
        assert_eq!(c.next_seq, 30);
        c.on_congestion(0, Congestion::Ecn, 0);
        let cut = w - w * 0.9625 / 2.0;
        assert_eq!((c.window(), c.ssthresh()), (cut, cut));
        // No alpha update before a CE was ever seen (slow start: 10 -> 11).
        let mut d = Prague::with_window(10.0, 20.0);
        d.on_ack(
            0,
            &AckEvent {
                ack: 1,
                snd_max: 5,
                ..open_ack(1, 0)
            },
        );
        assert_eq!(d.alpha(), 1.0);
        // Loss halves the window; no growth in recovery.
        d.on_congestion(0, Congestion::Loss, 3);
        assert_eq!((d.window(), d.ssthresh()), (5.5, 5.5));
        d.on_ack(
            0,
            &AckEvent {
                state: CaState::Recovery,
                ..open_ack(1, 0)
            },
        );
        assert_eq!(d.window(), 5.5);
    }
}
