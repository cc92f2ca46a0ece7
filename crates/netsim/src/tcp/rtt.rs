//! RTT estimation and the retransmission timeout: RFC 6298 smoothing with
//! Linux's use of the minimum RTO.
//!
//! Units: nanoseconds ([`Ns`]); `srtt` and `rttvar` are kept as `f64`
//! nanoseconds so the smoothing is exact to the last bit of the old code.
//! Invariants: before the first sample `srtt == rttvar == 0` and the RTO is
//! [`INITIAL_RTO`] (RFC 6298 §2.1); afterwards `rto() <= MAX_RTO` and
//! `rto() >= srtt + min_rto` unless capped; [`RttEstimator::backoff`]
//! doubles the RTO (capped) until the next sample recomputes it.
//!
//! Which ACKs yield samples (Karn's rule, RFC 6298 §3; the echoed send time
//! of RFC 7323 §4.3) is the sender's business ([`super::sender`]).

use crate::engine::{Ns, NS_PER_SEC};

/// Initial RTO, 1 s, according to RFC 6298 §2.1.
pub const INITIAL_RTO: Ns = NS_PER_SEC;
/// Upper bound of the RTO, 60 s, according to RFC 6298 §2.5.
pub const MAX_RTO: Ns = 60 * NS_PER_SEC;
/// Clock granularity G, 1 ms (Linux jiffy at HZ=1000), in RFC 6298 §2.
pub const CLOCK_G: f64 = 1e6;
/// K, according to RFC 6298 §2.
pub const RTO_K: f64 = 4.0;
/// alpha (RTT smoothing gain), according to RFC 6298 §2.3.
pub const RTO_ALPHA: f64 = 1.0 / 8.0;
/// beta (RTT variation gain), according to RFC 6298 §2.3.
pub const RTO_BETA: f64 = 1.0 / 4.0;
/// Default minimum RTO, 200 ms (Linux `TCP_RTO_MIN`; RFC 6298 §2.4 would say
/// 1 s). As in Linux it bounds the variance term: RTO = SRTT +
/// max(4 RTTVAR, min_rto) (see [`RttEstimator::sample`]).
pub const DEFAULT_MIN_RTO: Ns = 200_000_000;

/// RFC 6298 estimator of one sender.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    /// SRTT (ns).
    srtt: f64,
    /// RTTVAR (ns).
    rttvar: f64,
    /// A sample has been taken.
    has_rtt: bool,
    /// Current RTO (ns), including the backoff.
    rto: Ns,
    /// Minimum RTO (ns): the floor of the variance term.
    min_rto: Ns,
}

impl RttEstimator {
    /// An estimator without samples (RTO = [`INITIAL_RTO`]) and minimum RTO
    /// `min_rto` (ns).
    pub fn new(min_rto: Ns) -> Self {
        RttEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto: INITIAL_RTO,
            min_rto,
        }
    }

    /// RTT measurement `r` (ns), RFC 6298 §2.2–2.4 (also clears the Karn
    /// backoff, since the RTO is recomputed from the new estimate).
    #[inline]
    pub fn sample(&mut self, r: f64) {
        if self.has_rtt {
            self.rttvar = (1.0 - RTO_BETA) * self.rttvar + RTO_BETA * (self.srtt - r).abs();
            self.srtt = (1.0 - RTO_ALPHA) * self.srtt + RTO_ALPHA * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        }
        // RFC 6298 §2.3 computes SRTT + max(G, K * RTTVAR) and §2.4 then
        // applies the minimum to the whole RTO. Linux (`tcp_set_rto`) instead
        // floors the variance term: RTO = SRTT + max(K * RTTVAR, min_rto).
        // We follow Linux: with a 200 ms minimum applied RFC-style, an RTO
        // barely above the base RTT fires spuriously whenever queueing delay
        // grows by more than a few tens of ms within an RTT (observed as
        // self-sustaining go-back-N oscillations under AQM).
        let var = (RTO_K * self.rttvar).max(CLOCK_G).max(self.min_rto as f64);
        self.rto = ((self.srtt + var) as Ns).min(MAX_RTO);
    }

    /// The timer expired: RFC 6298 §5.5, back off (double the RTO, at most
    /// [`MAX_RTO`]).
    #[inline]
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(MAX_RTO);
    }

    /// Smoothed RTT (ns), `None` before the first sample.
    #[inline]
    pub fn srtt(&self) -> Option<Ns> {
        self.has_rtt.then_some(self.srtt as Ns)
    }

    /// Smoothed RTT (ns) truncated to an integer, 0 before the first sample
    /// (what the congestion controllers are given).
    #[inline]
    pub fn srtt_ns(&self) -> Ns {
        self.srtt as Ns
    }

    /// RTTVAR (ns), 0 before the first sample.
    #[inline]
    pub fn rttvar(&self) -> f64 {
        self.rttvar
    }

    /// Current RTO (ns).
    #[inline]
    pub fn rto(&self) -> Ns {
        self.rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: RFC 6298 §2.2 and §2.3 arithmetic: first sample R gives
    /// SRTT = R, RTTVAR = R/2, RTO = R + 4 R / 2 = 3R; the second sample R'
    /// gives RTTVAR = 3/4 R/2 + 1/4 |R - R'|, SRTT = 7/8 R + 1/8 R'.
    #[test]
    fn smoothing_and_backoff() {
        let mut e = RttEstimator::new(DEFAULT_MIN_RTO);
        assert_eq!((e.srtt(), e.rto()), (None, INITIAL_RTO));
        e.sample(100e6);
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (Some(100_000_000), 50e6, 300_000_000)
        );
        e.sample(200e6);
        assert_eq!(e.rttvar(), 0.75 * 50e6 + 0.25 * 100e6);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 250_000_000);
        e.backoff();
        assert_eq!(e.rto(), 2 * (112_500_000 + 250_000_000));
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), MAX_RTO);
    }
}
