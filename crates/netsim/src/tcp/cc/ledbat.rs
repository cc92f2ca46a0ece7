//! LEDBAT (RFC 6817, "Low Extra Delay Background Transport"), a less-than-best-effort
//! congestion controller, after the pseudo-code of RFC 6817 §2.4.2, in segments (MSS = 1).
//!
//! * **Delay samples.** The simulator has no one-way delay timestamps, so a delay sample is
//!   the ACK's RTT sample ([`AckEvent::rtt`], ns). Base and current delay are both taken
//!   from RTT samples, so `queuing_delay = FILTER(current) - MIN(base)` is the queueing
//!   delay added on the round trip; on a dumbbell the ACK path has no queue, so it is the
//!   forward queueing delay RFC 6817 measures with one-way delays (a deviation from the
//!   RFC, documented in `docs/tcp.md`).
//! * **Base delay** (`update_base_delay`): [`BASE_HISTORY`] = 10 minima, each over one
//!   minute of simulated time (`round_to_minute(now)`, minutes counted from time zero);
//!   `MIN(base_delays)` is the base delay.
//! * **Current delay** (`update_current_delay`, `FILTER`): the minimum of the last
//!   [`CURRENT_FILTER`] = 4 samples (RFC 6817 §3.4.2 suggests a MIN filter over a few
//!   recent samples; the RFC leaves the number open).
//! * **Window law** (on every ACK that may raise the window, see below):
//!   `off_target = (TARGET - queuing_delay) / TARGET`,
//!   `cwnd += GAIN * off_target * acked / cwnd`, then
//!   `cwnd = min(cwnd, flightsize + ALLOWED_INCREASE)` and `cwnd = max(cwnd, MIN_CWND)`,
//!   with `flightsize` the segments outstanding before this ACK. [`TARGET`] = 100 ms
//!   (the largest value RFC 6817 §2.5 allows), [`GAIN`] = 1, [`ALLOWED_INCREASE`] = 1,
//!   [`MIN_CWND`] = 2. No slow start (RFC 6817 has none): the window starts at the flow
//!   group's `init_cwnd`.
//! * **Loss and ECN** (`on data loss`, at most once per RTT: the sender's fast retransmit
//!   and its RFC 3168 once-per-window rule): `cwnd = min(cwnd, max(cwnd / 2, MIN_CWND))`;
//!   `ssthresh` is set to that window (it plays no part in LEDBAT's law; it keeps the
//!   controller invariants of [`super`]). **Timeout** (no ACK within a CTO, which is the
//!   sender's RTO here): `cwnd = 1` segment, the Reno response ([`super::reno`]).
//! * As every controller here, the window moves only on ACKs with
//!   [`AckEvent::may_raise_cwnd`] (new data, Open state); delay samples are filtered on
//!   every ACK. Loss recovery is NewReno's (or SACK's) as for the other controllers.
//!
//! Units: windows in segments, delays in integer ns. Invariants: `cwnd >= 1` (`>= MIN_CWND`
//! except after a timeout); the delay lists hold [`NO_SAMPLE`] until filled.

use super::reno::{Reno, MIN_SSTHRESH};
use super::{AckEvent, Congestion, Controller};
use crate::engine::Ns;

/// TARGET, the queueing delay LEDBAT aims at (ns): 100 ms, the largest value RFC 6817 §2.5
/// allows ("TARGET MUST be 100 milliseconds or less").
pub const TARGET: Ns = 100_000_000;
/// GAIN, the window's response to the distance from TARGET (RFC 6817 §2.5: at most 1).
pub const GAIN: f64 = 1.0;
/// ALLOWED_INCREASE, segments the window may exceed the flight size by (RFC 6817 §2.5: 1).
pub const ALLOWED_INCREASE: f64 = 1.0;
/// MIN_CWND, segments (RFC 6817 §2.5: 2).
pub const MIN_CWND: f64 = 2.0;
/// BASE_HISTORY, one-minute minima kept for the base delay (RFC 6817 §2.5: 10).
pub const BASE_HISTORY: usize = 10;
/// CURRENT_FILTER, recent samples the current delay is the minimum of.
pub const CURRENT_FILTER: usize = 4;
/// Length of a base-delay interval (ns): one minute (RFC 6817 §2.4.2 `round_to_minute`).
pub const BASE_INTERVAL: Ns = 60_000_000_000;
/// An empty slot of a delay list (the pseudo-code's +INFINITY).
pub const NO_SAMPLE: Ns = Ns::MAX;

/// The LEDBAT controller.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Ledbat {
    /// Window and threshold, segments (first, see [`super::reno::Reno`]).
    reno: Reno,
    /// `base_delays`, oldest first (ns).
    base_delays: [Ns; BASE_HISTORY],
    /// `current_delays`, oldest first (ns).
    current_delays: [Ns; CURRENT_FILTER],
    /// `round_to_minute(last_rollover)`; `u64::MAX` for the pseudo-code's -INFINITY.
    last_minute: u64,
}

impl Ledbat {
    /// Given window and threshold (segments); empty delay lists.
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        Ledbat {
            reno: Reno::with_window(cwnd, ssthresh),
            base_delays: [NO_SAMPLE; BASE_HISTORY],
            current_delays: [NO_SAMPLE; CURRENT_FILTER],
            last_minute: u64::MAX,
        }
    }

    /// `update_base_delay(delay)` at `now` (ns).
    fn update_base_delay(&mut self, now: Ns, delay: Ns) {
        let minute = now / BASE_INTERVAL;
        if minute != self.last_minute {
            self.last_minute = minute;
            self.base_delays.rotate_left(1);
            self.base_delays[BASE_HISTORY - 1] = delay;
        } else {
            let tail = &mut self.base_delays[BASE_HISTORY - 1];
            *tail = (*tail).min(delay);
        }
    }

    /// `update_current_delay(delay)`.
    fn update_current_delay(&mut self, delay: Ns) {
        self.current_delays.rotate_left(1);
        self.current_delays[CURRENT_FILTER - 1] = delay;
    }

    /// `MIN(base_delays)` (ns), [`NO_SAMPLE`] before the first sample.
    pub fn base_delay(&self) -> Ns {
        self.base_delays.iter().copied().min().unwrap_or(NO_SAMPLE)
    }

    /// `FILTER(current_delays) - MIN(base_delays)` (ns); 0 before the first sample.
    pub fn queuing_delay(&self) -> Ns {
        let cur = self
            .current_delays
            .iter()
            .copied()
            .min()
            .unwrap_or(NO_SAMPLE);
        if cur == NO_SAMPLE {
            return 0;
        }
        cur.saturating_sub(self.base_delay())
    }
}

impl Controller for Ledbat {
    #[inline]
    fn window(&self) -> f64 {
        self.reno.window()
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        self.reno.ssthresh()
    }

    /// RFC 6817 §2.4.2 "on acknowledgement".
    #[inline]
    fn on_ack(&mut self, now: Ns, ack: &AckEvent) {
        if let Some(delay) = ack.rtt {
            self.update_base_delay(now, delay);
            self.update_current_delay(delay);
        }
        if !ack.may_raise_cwnd() {
            return;
        }
        let off_target = (TARGET as f64 - self.queuing_delay() as f64) / TARGET as f64;
        let (mut cwnd, ssthresh) = (self.window(), self.ssthresh());
        cwnd += GAIN * off_target * ack.acked as f64 / cwnd;
        // flightsize: outstanding before this ACK (snd_max - the previous snd_una).
        let flightsize = ack
            .snd_max
            .saturating_sub(ack.ack.saturating_sub(ack.acked));
        cwnd = cwnd.min(flightsize as f64 + ALLOWED_INCREASE);
        cwnd = cwnd.max(MIN_CWND);
        self.reno = Reno::with_window(cwnd, ssthresh);
    }

    /// RFC 6817 §2.4.2 "on data loss" (also ECN); a timeout is "no ACKs within a CTO".
    #[inline]
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32) {
        match kind {
            Congestion::Loss | Congestion::Ecn => {
                let w = self.window();
                let w = w.min((w / 2.0).max(MIN_CWND)).max(MIN_SSTHRESH);
                self.reno = Reno::with_window(w, w);
            }
            Congestion::Timeout { .. } => self.reno.on_congestion(now, kind, flight),
        }
    }

    #[inline]
    fn on_recovery_end(&mut self, now: Ns) {
        self.reno.on_recovery_end(now)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{open_ack, CaState, LOSS_WINDOW};
    use super::*;

    const MS: Ns = 1_000_000;

    /// An Open-state ACK of `acked` segments, cumulative ACK `ack`, `snd_max`, with an RTT
    /// sample `rtt_ms`.
    fn ack(ack: u32, snd_max: u32, acked: u32, rtt_ms: Ns) -> AckEvent {
        AckEvent {
            ack,
            snd_max,
            rtt: Some(rtt_ms * MS),
            ..open_ack(acked, 0)
        }
    }

    /// RFC 6817 §2.4.2's pseudo-code by hand (MSS = 1 segment, TARGET = 100 ms).
    #[test]
    fn pseudo_code_by_hand() {
        let mut c = Ledbat::with_window(10.0, f64::INFINITY);
        // First sample 50 ms: base = current = 50, queuing_delay 0, off_target 1:
        // cwnd = 10 + 1 * 1 * 1 / 10 = 10.1; flightsize = 20 - 0 = 20, no cap.
        c.on_ack(0, &ack(1, 20, 1, 50));
        assert_eq!(c.base_delay(), 50 * MS);
        assert_eq!(c.queuing_delay(), 0);
        assert!((c.window() - 10.1).abs() < 1e-12);
        // 130 ms: current = min(50, 130) = 50 (filter of 4), still off_target 1:
        // cwnd = 10.1 + 1 / 10.1.
        c.on_ack(MS, &ack(2, 20, 1, 130));
        let w = 10.1 + 1.0 / 10.1;
        assert!((c.window() - w).abs() < 1e-12);
        // Three more samples of 130 ms push 50 out of the filter: queuing_delay = 80 ms,
        // off_target = (100 - 80) / 100 = 0.2; each ACK adds 0.2 / cwnd.
        let mut w = w;
        for i in 0..3u32 {
            c.on_ack(2 * MS, &ack(3 + i, 20, 1, 130));
            let q = if i < 2 { 0.0 } else { 80.0 };
            w += (100.0 - q) / 100.0 / w;
            assert!((c.window() - w).abs() < 1e-12, "{i}");
        }
        assert_eq!(c.queuing_delay(), 80 * MS);
        // 250 ms: current = 130, queuing 80 -> the 4th filter slot; now four samples of
        // 250 ms: queuing_delay = 200 ms, off_target = -1: cwnd -= 2 / cwnd (acked = 2).
        for _ in 0..4 {
            c.on_ack(
                3 * MS,
                &AckEvent {
                    rtt: Some(250 * MS),
                    ..ack(5, 20, 0, 0)
                },
            );
        }
        assert_eq!(c.queuing_delay(), 200 * MS);
        assert_eq!(c.window(), w); // no new data: no window change
        c.on_ack(4 * MS, &ack(7, 20, 2, 250));
        w -= 2.0 / w;
        assert!((c.window() - w).abs() < 1e-12);
        // ALLOWED_INCREASE: flightsize = snd_max - previous una = 9 - 7 = 2, cap 3.
        let mut d = Ledbat::with_window(10.0, f64::INFINITY);
        d.on_ack(0, &ack(8, 9, 1, 50));
        assert_eq!(d.window(), 3.0);
        // MIN_CWND: a large negative off_target cannot go below 2.
        let mut e = Ledbat::with_window(2.5, f64::INFINITY);
        e.on_ack(0, &ack(1, 10, 1, 50));
        for _ in 0..4 {
            e.on_ack(MS, &ack(1, 10, 0, 1050)); // queuing 1 s: off_target = -9
        }
        e.on_ack(MS, &ack(2, 10, 1, 1050));
        assert_eq!(e.window(), MIN_CWND);
    }

    /// Base history: one minimum per minute, ten minutes kept; an old minimum ages out.
    #[test]
    fn base_history_rolls_over_per_minute() {
        let mut c = Ledbat::with_window(10.0, f64::INFINITY);
        c.on_ack(0, &ack(0, 0, 0, 40));
        c.on_ack(30_000 * MS, &ack(0, 0, 0, 30)); // same minute: tail = min(40, 30)
        assert_eq!(c.base_delays[BASE_HISTORY - 1], 30 * MS);
        for m in 1..BASE_HISTORY as u64 {
            c.on_ack(m * BASE_INTERVAL, &ack(0, 0, 0, 60));
        }
        assert_eq!(c.base_delay(), 30 * MS);
        // Minute 10: the minute-0 minimum (30 ms) leaves the history.
        c.on_ack(10 * BASE_INTERVAL, &ack(0, 0, 0, 60));
        assert_eq!(c.base_delay(), 60 * MS);
    }

    /// Loss halves (at least MIN_CWND), ssthresh = cwnd, no growth in recovery; timeout 1.
    #[test]
    fn loss_and_timeout() {
        let mut c = Ledbat::with_window(30.0, f64::INFINITY);
        c.on_congestion(0, Congestion::Loss, 30);
        assert_eq!((c.window(), c.ssthresh()), (15.0, 15.0));
        c.on_ack(
            0,
            &AckEvent {
                state: CaState::Recovery,
                ..ack(5, 40, 1, 50)
            },
        );
        assert_eq!(c.window(), 15.0);
        c.on_recovery_end(0);
        assert_eq!(c.window(), 15.0);
        let mut d = Ledbat::with_window(3.0, f64::INFINITY);
        d.on_congestion(0, Congestion::Ecn, 3);
        assert_eq!((d.window(), d.ssthresh()), (2.0, 2.0));
        d.on_congestion(0, Congestion::Timeout { repeated: false }, 2);
        assert_eq!(d.window(), LOSS_WINDOW);
    }
}
