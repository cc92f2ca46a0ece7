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
//! * **Classic-ECN detection and fallback** (RFC 9331 §4.3; `prague_classic_ecn_detection`,
//!   `prague_classic_ecn_fallback`, Linux's `prague_ecn_fallback = 1`): see
//!   [`super::classic_ecn`]. On by default here (RFC 9331 requires it of L4S senders; the
//!   Linux module's default is 0, off).
//! * **RTT independence** (optional, off by default: [`Prague::set_rtt_scaling`], the
//!   scenario key `rtt_scaling`):
//!   Linux's `RTT_CONTROL_RATE` (`prague_rate_scaled_ai_ack_increase`): after
//!   [`RTT_TRANSITION`] rounds out of slow start, a flow whose RTT is below the target
//!   [`RTT_TARGET`] (25 ms) grows by `(rtt/target)²` per window of unmarked ACKs, updates
//!   alpha and reduces at most once per target RTT (`prague_target_rtt_elapsed`,
//!   `prague_enter_cwr`), as if its RTT were the target.
//! * **Pacing rate** ([`Prague::prague_pacing_rate`], `prague_update_pacing_rate`): for the
//!   sender's pacing hook; this module does not pace.
//! * **CE counts**: `AckEvent::ece_acked`, which the sender fills from AccECN's CE packet
//!   counter when AccECN is negotiated ([`crate::tcp::accecn`]) and from the per-segment
//!   echo of RFC 8257 §3.2 otherwise.
//!
//! Omitted (documented in `docs/tcp.md`): TSO sizing, `RTT_CONTROL_SCALABLE` and
//! `RTT_CONTROL_ADDITIVE`, the undo of spurious loss reductions.

use super::classic_ecn::ClassicEcnDetector;
use super::reno::{reno_increase, Reno, MIN_SSTHRESH};
use super::{AckEvent, CaState, Congestion, Controller};
use crate::engine::Ns;

/// EWMA gain g = 1/16 (Linux `PRAGUE_SHIFT_G` = 4).
pub const PRAGUE_G: f64 = 1.0 / 16.0;
/// RTT-scaling target, 25 ms (Linux `prague_rtt_target`).
pub const RTT_TARGET: Ns = 25_000_000;
/// Rounds out of slow start before RTT scaling applies (Linux `DEFAULT_RTT_TRANSITION`).
pub const RTT_TRANSITION: u32 = 500;
/// RTTs above this are not scaled (Linux `MAX_SCALED_RTT`, 100 ms).
pub const MAX_SCALED_RTT: Ns = 100_000_000;
/// Largest GSO burst, as a negative power of two of a second (Linux `prague_burst_shift`
/// = 12, about 0.25 ms at the pacing rate).
pub const BURST_SHIFT: u32 = 12;

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
    /// Classic-ECN fallback enabled (Linux `prague_ecn_fallback == 1`).
    ecn_fallback: bool,
    /// RTT independence (`RTT_CONTROL_RATE`) enabled (Linux `rtt_indep`).
    rtt_scaling: bool,
    /// Rounds since the last slow-start exit (Linux `round`).
    round: u32,
    /// Time of the last alpha update and of the last reduction (Linux `alpha_stamp`,
    /// `cwr_stamp`), for RTT scaling.
    alpha_stamp: Ns,
    cwr_stamp: Ns,
    /// Classic-ECN AQM detection.
    cecn: ClassicEcnDetector,
    /// Paces itself at [`Prague::prague_pacing_rate`] (the `linux` profile).
    self_paced: bool,
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
            ecn_fallback: true,
            rtt_scaling: false,
            round: 0,
            alpha_stamp: 0,
            cwr_stamp: 0,
            cecn: ClassicEcnDetector::default(),
            self_paced: false,
        }
    }

    /// Paces the flow at [`Prague::prague_pacing_rate`], as Linux's `tcp_prague` does (on
    /// under the `linux` profile; off: paced only with the group's `pacing`, at Linux's
    /// generic rate).
    pub fn set_self_paced(&mut self, on: bool) {
        self.self_paced = on;
    }

    /// The current alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Enables or disables the classic-ECN fallback (on by default).
    pub fn set_ecn_fallback(&mut self, on: bool) {
        self.ecn_fallback = on;
    }

    /// Enables or disables RTT independence (`RTT_CONTROL_RATE`; off by default).
    pub fn set_rtt_scaling(&mut self, on: bool) {
        self.rtt_scaling = on;
    }

    /// The classic-ECN detector.
    pub fn classic_ecn(&self) -> &ClassicEcnDetector {
        &self.cecn
    }

    /// Pacing rate, bytes per second, as `prague_update_pacing_rate` computes it: the
    /// window (fractional, `frac_cwnd`) of `mtu`-byte packets per smoothed RTT `srtt`
    /// (ns), doubled while `cwnd < ssthresh/2` (slow start sends two segments per ACK);
    /// `None` before the first RTT sample (`srtt` = 0). Linux also caps it at
    /// `sk_max_pacing_rate` (unlimited by default). The sender's pacing hook
    /// ([`super::Controller::pacing_rate`], payload bytes/s: the MSS as `mtu`) when
    /// [`Prague::set_self_paced`].
    pub fn prague_pacing_rate(&self, srtt: Ns, mtu: u32) -> Option<u64> {
        if srtt == 0 {
            return None;
        }
        let mut rate = mtu as f64 * self.window() * 1e9 / srtt as f64;
        // Linux's integers: snd_cwnd (frac_cwnd rounded up) < snd_ssthresh / 2; an
        // infinite threshold saturates (TCP_INFINITE_SSTHRESH).
        if (self.window().ceil() as u64) < (self.ssthresh().floor() as u64) / 2 {
            rate *= 2.0;
        }
        Some(rate.round() as u64)
    }

    /// Largest burst, segments, at the pacing rate (Linux `max_tso_burst`: the segments of
    /// `2^-BURST_SHIFT` s at the pacing rate, at least 1).
    pub fn max_burst(&self, srtt: Ns, mtu: u32) -> u32 {
        match self.prague_pacing_rate(srtt, mtu) {
            Some(r) => ((r / mtu.max(1) as u64) >> BURST_SHIFT).clamp(1, u32::MAX as u64) as u32,
            None => 1,
        }
    }

    /// RTT independence is in force (`prague_is_rtt_indep`): enabled, out of slow start,
    /// past the transition.
    fn rtt_indep(&self) -> bool {
        self.rtt_scaling && self.window() >= self.ssthresh() && self.round >= RTT_TRANSITION
    }

    /// The per-window growth for unmarked ACKs (`prague_ai_ack_increase`, with
    /// `prague_rate_scaled_ai_ack_increase`): 1, or `(rtt/target)²` when RTT scaling is in
    /// force and `0 < rtt < target` (RTTs above [`MAX_SCALED_RTT`] are not scaled).
    pub fn ai_ack_increase(&self, srtt: Ns) -> f64 {
        if !self.rtt_scaling
            || self.round < RTT_TRANSITION
            || srtt == 0
            || srtt > MAX_SCALED_RTT
            || srtt >= RTT_TARGET
        {
            return 1.0;
        }
        let r = srtt as f64 / RTT_TARGET as f64;
        r * r
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
    fn on_ack(&mut self, now: Ns, ack: &AckEvent) {
        if let Some(r) = ack.ca_rtt {
            self.cecn.on_rtt(r);
        }
        if ack.ece_acked > 0 {
            self.saw_ce = true;
        }
        let acked = ack.acked - ack.ece_acked.min(ack.acked);
        if acked > 0 && ack.state != CaState::Recovery {
            // Slow start below ssthresh, else acked / cwnd (the Reno law, on unmarked
            // segments only and whatever the CWR state), scaled by the RTT-independence
            // factor (1 unless enabled).
            let (mut w, t) = (self.window(), self.ssthresh());
            if w < t {
                reno_increase(&mut w, t, acked);
            } else {
                w += self.ai_ack_increase(ack.srtt) * acked as f64 / w;
            }
            self.reno = Reno::with_window(w, t);
        }
        self.delivered += ack.acked;
        self.delivered_ce += ack.ece_acked;
        // prague_should_update_ewma: a round ended and, with RTT independence in force,
        // a target RTT passed since the last update.
        let update = ack.ack >= self.next_seq
            && (!self.rtt_indep() || now.saturating_sub(self.alpha_stamp) >= RTT_TARGET);
        if update {
            if self.saw_ce {
                if self.ecn_fallback {
                    self.cecn.on_round();
                }
                self.alpha_stamp = now;
                let f = if self.delivered_ce > 0 {
                    self.delivered_ce as f64 / self.delivered.max(1) as f64
                } else {
                    0.0
                };
                self.alpha = (self.alpha * (1.0 - PRAGUE_G) + PRAGUE_G * f).min(1.0);
            }
            // prague_new_round.
            self.next_seq = ack.snd_max;
            self.delivered = 0;
            self.delivered_ce = 0;
            if self.window() >= self.ssthresh() {
                self.round = self.round.saturating_add(1);
            }
        }
    }

    #[inline]
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32) {
        let w = self.window();
        if matches!(kind, Congestion::Ecn | Congestion::Loss) {
            // prague_ssthresh -> prague_update_rtt_scaling, with the threshold in force.
            self.cecn.on_reduction(self.ssthresh());
        }
        let cut = match kind {
            Congestion::Ecn => {
                // prague_enter_cwr: with RTT independence, at most once per target RTT.
                if self.rtt_indep() && now.saturating_sub(self.cwr_stamp) < RTT_TARGET {
                    return;
                }
                self.cwr_stamp = now;
                let alpha = if self.ecn_fallback {
                    self.cecn.fallback_alpha(self.alpha)
                } else {
                    self.alpha
                };
                w - w * alpha / 2.0
            }
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

    /// [`Prague::prague_pacing_rate`] when self-paced (`None` before an RTT sample).
    #[inline]
    fn pacing_rate(&self, srtt: Ns, mss: u32) -> Option<u64> {
        if self.self_paced {
            self.prague_pacing_rate(srtt, mss)
        } else {
            None
        }
    }

    #[inline]
    fn paces(&self) -> bool {
        self.self_paced
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

    /// `prague_update_pacing_rate` by hand: 1500-byte packets, cwnd 20, srtt 20 ms:
    /// 1500·20/0.02 = 1.5 MB/s; in slow start below ssthresh/2 (cwnd 10, ssthresh 40)
    /// doubled: 2·1500·10/0.02; no rate before an RTT sample. Burst: 1.5e6/1500 = 1000
    /// packets/s, >> 12 = 0, so 1; at 1.5 GB/s (cwnd 20 000), 10^6 >> 12 = 244.
    #[test]
    fn pacing_rate_by_hand() {
        let c = Prague::with_window(20.0, 20.0);
        assert_eq!(c.prague_pacing_rate(20_000_000, 1500), Some(1_500_000));
        assert_eq!(c.prague_pacing_rate(0, 1500), None);
        assert_eq!(c.max_burst(20_000_000, 1500), 1);
        let ss = Prague::with_window(10.0, 21.0);
        assert_eq!(ss.prague_pacing_rate(20_000_000, 1500), Some(750_000));
        let ss = Prague::with_window(10.0, 22.0);
        assert_eq!(ss.prague_pacing_rate(20_000_000, 1500), Some(1_500_000));
        let ss = Prague::with_window(10.0, f64::INFINITY);
        assert_eq!(ss.prague_pacing_rate(20_000_000, 1500), Some(1_500_000));
        let ss = Prague::with_window(9.5, 22.0);
        assert_eq!(ss.prague_pacing_rate(20_000_000, 1500), Some(1_425_000));
        let big = Prague::with_window(20_000.0, 20_000.0);
        assert_eq!(big.max_burst(20_000_000, 1500), 244);
    }

    /// `prague_rate_scaled_ai_ack_increase` by hand: off by default (1); enabled, 1 until
    /// 500 rounds out of slow start; then (5 ms / 25 ms)² = 0.04 per window, 1 at or above
    /// the target and above 100 ms. With it in force, a 10-segment window grows by 0.04/10
    /// per unmarked ACK, and a second CE reduction within 25 ms of the first is skipped.
    #[test]
    fn rtt_scaling_by_hand() {
        let mut c = Prague::with_window(10.0, 10.0);
        assert_eq!(c.ai_ack_increase(5_000_000), 1.0);
        c.set_rtt_scaling(true);
        assert_eq!(c.ai_ack_increase(5_000_000), 1.0);
        c.round = RTT_TRANSITION;
        assert!((c.ai_ack_increase(5_000_000) - 0.04).abs() < 1e-12);
        assert_eq!(c.ai_ack_increase(RTT_TARGET), 1.0);
        assert_eq!(c.ai_ack_increase(200_000_000), 1.0);
        c.next_seq = 100;
        let ev = AckEvent {
            ack: 1,
            snd_max: 30,
            srtt: 5_000_000,
            ..open_ack(1, 5_000_000)
        };
        c.on_ack(0, &ev);
        assert!((c.window() - (10.0 + 0.04 / 10.0)).abs() < 1e-12);
        c.alpha = 0.5;
        c.on_congestion(RTT_TARGET, Congestion::Ecn, 0);
        let w = c.window();
        assert!((w - 10.004 * 0.75).abs() < 1e-9);
        c.on_congestion(RTT_TARGET + 1_000_000, Congestion::Ecn, 0);
        assert_eq!(c.window(), w, "within one target RTT: no reduction");
        c.on_congestion(2 * RTT_TARGET, Congestion::Ecn, 0);
        assert!(c.window() < w);
    }

    /// The fallback in the reduction: once the detector says Classic (score 9), a CE
    /// reduction with alpha 0.1 uses 0.625 (cwnd 20 -> 20·(1 − 0.3125)); with the fallback
    /// disabled, 0.1 (20·0.95). RTT samples reach the detector through `on_ack`.
    #[test]
    fn classic_ecn_fallback_in_reduction() {
        let mut c = Prague::with_window(20.0, 20.0);
        c.alpha = 0.1;
        c.saw_ce = true;
        // After a reduction at ssthresh 20 the EWMA shift is 4 + 2 + 1 = 7.
        c.cecn.on_reduction(20.0);
        // A 20 ms path, then 8 ms of queue with 1.5 ms of jitter, 40 rounds.
        c.on_ack(
            0,
            &AckEvent {
                ca_rtt: Some(20_000_000),
                ..open_ack(0, 0)
            },
        );
        for i in 0..4000u32 {
            let rtt = if i % 2 == 0 { 26_500_000 } else { 29_500_000 };
            let ev = AckEvent {
                ack: i + 1,
                snd_max: i + 100,
                ca_rtt: Some(rtt),
                ..open_ack(0, 0)
            };
            c.next_seq = if i % 100 == 99 { i + 1 } else { u32::MAX };
            c.on_ack(0, &ev);
        }
        assert!(c.classic_ecn().is_classic(), "{:?}", c.classic_ecn());
        let mut off = c;
        off.set_ecn_fallback(false);
        c.on_congestion(0, Congestion::Ecn, 0);
        assert!((c.window() - 20.0 * (1.0 - 0.3125)).abs() < 1e-9, "{}", c.window());
        off.on_congestion(0, Congestion::Ecn, 0);
        assert!((off.window() - 20.0 * (1.0 - c.alpha / 2.0)).abs() < 1e-9);
    }
}
