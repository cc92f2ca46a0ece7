//! Classic-ECN AQM detection for a scalable (L4S) sender, and the fallback of the window
//! reduction towards a Classic one (RFC 9331 §4.3, "the L4S sender MUST ... detect when it is
//! sharing a bottleneck with Classic ECN traffic and fall back to a Classic response";
//! Linux, L4STeam tree, `net/ipv4/tcp_prague.c`: `prague_rtt_estimator`,
//! `prague_update_rtt_scaling`, `prague_classic_ecn_detection`,
//! `prague_classic_ecn_fallback`).
//!
//! The detector looks at the delay the sender's own packets meet: an L4S AQM keeps its queue
//! around 1 ms with little jitter, a Classic (single-queue) AQM such as CoDel or PIE keeps a
//! standing queue of 5-15 ms and more variation. Per RTT sample, a slow EWMA of the RTT
//! (`srtt_pace`) and of its mean deviation (`mdev_pace`) with gains `2^-s` and `2^-(s+1)`,
//! where `s = min(⌊lg W⌋ + ⌊⌊lg W⌋/2⌋ + 1, 18)` follows the window `W` (the `ssthresh` at
//! each reduction, initially 18), so that both average over several rounds whatever the
//! window. Once per round (with Prague's alpha update, hence only after the first CE mark),
//! the score `classic_ecn` (in units of alpha, 1.0 = `PRAGUE_MAX_ALPHA`) moves by
//!
//! `V·lg(mdev / V0) + D·max(lg(max(srtt − min_rtt, 1 µs) / D0), 0)`, with `V = D = 1/2`,
//! `V0 = 750 µs`, `D0 = 2 ms`
//!
//! (so jitter below 750 µs pulls it back towards L4S and only a queue deeper than 2 ms pushes
//! it towards Classic), clamped to `[0, C_STICKY]`. Above `L_STICKY` the reduction uses
//! `max(alpha, 0.625·(min(classic_ecn, CLASSIC_ECN) − L_STICKY))` in place of alpha: at full
//! Classic confidence the reduction is at least `0.3125·cwnd` (Linux's `c·~0.6`, `c >> 1 +
//! c >> 3`), close to CUBIC's 0.3 (RFC 9438 §4.6).
//!
//! Simplified from Linux: the logarithms are exact (`f64::log2`) where Linux uses an
//! integer `ilog2` dithered by a carried remainder (`rest_mdev_us`, `rest_depth_us`) whose
//! long-run mean is the same log; the minimum RTT is over the whole flow (Linux's
//! `tcp_min_rtt` is a 5-minute windowed minimum: longer than the simulations it would
//! matter in); the RTT samples are aqmlab's (the echoed timestamp, see
//! [`crate::tcp::receiver`]) rather than Linux's newest-acknowledged-segment sample; and
//! before the first sample there is no handshake RTT to start from (the first sample
//! initializes `srtt_pace`). Linux's commented-out self-limited term is not modelled.

/// `L_STICKY` (= 16·2^(20−V) / 2^20 = 8): at or below it the sender is purely L4S.
pub const L_STICKY: f64 = 8.0;
/// `CLASSIC_ECN` (`L_STICKY` + 1): the fallback is complete from here.
pub const CLASSIC_ECN: f64 = L_STICKY + 1.0;
/// `C_STICKY` (`CLASSIC_ECN` + `L_STICKY`): the score's ceiling.
pub const C_STICKY: f64 = CLASSIC_ECN + L_STICKY;
/// Reference mean deviation `V0`, µs (Linux `V0_LG`: lg 750).
pub const V0_US: f64 = 750.0;
/// Reference queue depth `D0`, µs (Linux `D0_LG`: lg 2000).
pub const D0_US: f64 = 2000.0;
/// The weights `V` and `D` of the two logs (Linux `V` = `D` = 1: 1/2).
pub const WEIGHT: f64 = 0.5;
/// Largest EWMA shift (Linux `PRAGUE_MAX_SRTT_BITS`).
pub const MAX_SRTT_SHIFT: u8 = 18;
/// Scale of the fallback alpha floor (Linux `(c >> 1) + (c >> 3)`).
pub const FALLBACK_SCALE: f64 = 0.625;

/// The detector's state: 17 bytes of per-flow state (four `f32` and the shift).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassicEcnDetector {
    /// `srtt_pace` (µs), 0 before the first sample.
    srtt_us: f32,
    /// `mdev_pace` (µs).
    mdev_us: f32,
    /// Smallest RTT sample (µs), infinite before the first.
    min_rtt_us: f32,
    /// `classic_ecn`, in units of alpha.
    score: f32,
    /// `g_srtt_shift` (the mean deviation's is one more).
    shift: u8,
}

impl Default for ClassicEcnDetector {
    fn default() -> Self {
        ClassicEcnDetector {
            srtt_us: 0.0,
            mdev_us: 1.0,
            min_rtt_us: f32::INFINITY,
            score: 0.0,
            shift: MAX_SRTT_SHIFT,
        }
    }
}

impl ClassicEcnDetector {
    /// One RTT sample, ns (`prague_pkts_acked` → `prague_rtt_estimator`).
    #[inline]
    pub fn on_rtt(&mut self, rtt_ns: u64) {
        let m = rtt_ns as f32 / 1000.0;
        self.min_rtt_us = self.min_rtt_us.min(m);
        if self.srtt_us == 0.0 {
            self.srtt_us = m.max(1e-3);
            self.mdev_us = 1.0;
            return;
        }
        let g = (-(self.shift as f32)).exp2();
        let err = m - self.srtt_us;
        self.srtt_us = (self.srtt_us + err * g).max(1e-3);
        self.mdev_us += (err.abs() - self.mdev_us) * g * 0.5;
    }

    /// A window reduction with the threshold `ssthresh` (segments) in force before it
    /// (`prague_ssthresh` → `prague_update_rtt_scaling`): the EWMA gains follow the window.
    #[inline]
    pub fn on_reduction(&mut self, ssthresh: f64) {
        let w = if ssthresh.is_finite() {
            ssthresh.max(1.0) as u64
        } else {
            0x7fff_ffff // TCP_INFINITE_SSTHRESH
        };
        let lg = 63 - w.leading_zeros() as u8;
        self.shift = (lg + lg / 2 + 1).min(MAX_SRTT_SHIFT);
    }

    /// Once per round, with the alpha update (`prague_classic_ecn_detection`).
    #[inline]
    pub fn on_round(&mut self) {
        if self.srtt_us == 0.0 || !self.min_rtt_us.is_finite() {
            return;
        }
        let mut s = self.score as f64;
        s += WEIGHT * ((self.mdev_us as f64).max(1.0).log2() - V0_US.log2());
        let (srtt, min) = (self.srtt_us as f64, self.min_rtt_us as f64);
        if srtt > min {
            let depth = WEIGHT * (srtt - min).max(1.0).log2();
            let d0 = WEIGHT * D0_US.log2();
            if depth > d0 {
                s += depth - d0;
            }
        }
        self.score = s.clamp(0.0, C_STICKY) as f32;
    }

    /// The score `classic_ecn` (units of alpha).
    pub fn score(&self) -> f64 {
        self.score as f64
    }

    /// Classic ECN detected (`classic_ecn > L_STICKY`).
    pub fn is_classic(&self) -> bool {
        self.score() > L_STICKY
    }

    /// The alpha a reduction uses (`prague_classic_ecn_fallback`): `alpha` itself unless
    /// Classic ECN is detected, then at least `0.625·(min(score, CLASSIC_ECN) − L_STICKY)`.
    #[inline]
    pub fn fallback_alpha(&self, alpha: f64) -> f64 {
        if !self.is_classic() {
            return alpha;
        }
        let c = self.score().min(CLASSIC_ECN) - L_STICKY;
        alpha.max(FALLBACK_SCALE * c)
    }

    /// `srtt_pace` and `mdev_pace` (µs) and the minimum RTT (µs).
    pub fn rtt_stats(&self) -> (f64, f64, f64) {
        (
            self.srtt_us as f64,
            self.mdev_us as f64,
            self.min_rtt_us as f64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand from `prague_rtt_estimator` / `prague_update_rtt_scaling`: first sample
    /// 20 ms initializes; the shift for ssthresh 40 is ⌊lg 40⌋ = 5, 5 + 2 + 1 = 8; a sample
    /// of 20.256 ms then moves srtt by 256 µs / 2^8 = 1 µs and mdev by (256 − 1)/2^9.
    #[test]
    fn estimator_by_hand() {
        let mut d = ClassicEcnDetector::default();
        d.on_reduction(f64::INFINITY);
        assert_eq!(d.shift, 18, "infinite ssthresh: 30 + 15 + 1 capped at 18");
        d.on_rtt(20_000_000);
        assert_eq!(d.rtt_stats(), (20_000.0, 1.0, 20_000.0));
        d.on_reduction(40.0);
        assert_eq!(d.shift, 8);
        d.on_reduction(2.0);
        assert_eq!(d.shift, 2, "lg 2 = 1: 1 + 0 + 1");
        d.on_reduction(40.0);
        d.on_rtt(20_256_000);
        let (s, m, min) = d.rtt_stats();
        assert!((s - 20_001.0).abs() < 1e-3, "{s}");
        assert!((m - (1.0 + 255.0 / 512.0)).abs() < 1e-4, "{m}");
        assert_eq!(min, 20_000.0);
    }

    /// The score per round, by hand: mdev 1500 µs (lg ratio 1) and depth 8 ms (lg 4 ratio 2)
    /// add 0.5 + 1.0 = 1.5 per round; 6 rounds reach 9 (> L_STICKY = 8: classic), where the
    /// alpha floor is 0.625·1; the score stops at C_STICKY = 17. Jitter 375 µs (lg ratio −1)
    /// and no queue (srtt = min) subtract 0.5 per round, down to 0.
    #[test]
    fn score_and_fallback_by_hand() {
        let mut d = ClassicEcnDetector {
            srtt_us: 28_000.0,
            mdev_us: 1500.0,
            min_rtt_us: 20_000.0,
            ..Default::default()
        };
        for i in 1..=5 {
            d.on_round();
            assert!((d.score() - 1.5 * i as f64).abs() < 1e-5);
        }
        assert!(!d.is_classic());
        assert_eq!(d.fallback_alpha(0.1), 0.1);
        d.on_round();
        assert!((d.score() - 9.0).abs() < 1e-5);
        assert!(d.is_classic());
        assert!((d.fallback_alpha(0.1) - 0.625).abs() < 1e-5);
        assert_eq!(d.fallback_alpha(0.9), 0.9);
        for _ in 0..10 {
            d.on_round();
        }
        assert_eq!(d.score(), C_STICKY);
        // Halfway between L_STICKY and CLASSIC_ECN: floor 0.3125.
        d.score = 8.5;
        assert!((d.fallback_alpha(0.0) - 0.3125).abs() < 1e-6);
        let mut l = ClassicEcnDetector {
            srtt_us: 20_000.0,
            mdev_us: 375.0,
            min_rtt_us: 20_000.0,
            score: 1.0,
            ..Default::default()
        };
        l.on_round();
        assert!((l.score() - 0.5).abs() < 1e-6);
        l.on_round();
        l.on_round();
        assert_eq!(l.score(), 0.0);
        // A 1.5 ms queue (below D0) adds nothing.
        let mut q = ClassicEcnDetector {
            srtt_us: 21_500.0,
            mdev_us: 750.0,
            min_rtt_us: 20_000.0,
            ..Default::default()
        };
        q.on_round();
        assert_eq!(q.score(), 0.0);
        // No samples: no update.
        let mut n = ClassicEcnDetector::default();
        n.on_round();
        assert_eq!(n.score(), 0.0);
    }
}
