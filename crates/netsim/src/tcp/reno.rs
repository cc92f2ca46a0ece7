//! Reno window law (RFC 5681): slow start, congestion avoidance, and
//! multiplicative decrease to half the flight size. Shared by Reno and
//! NewReno, which differ only in loss recovery (see [`super::newreno`]).

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

/// The Reno window law.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl Reno {
    /// New data acknowledged outside recovery: slow start below `ssthresh`,
    /// otherwise congestion avoidance, `cwnd += acked / cwnd` (RFC 5681 §3.1
    /// equation (3), one segment per window of ACKs).
    #[inline]
    pub fn on_ack(&mut self, cwnd: &mut f64, ssthresh: f64, acked: u32) {
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
    pub fn ssthresh(&self, flight: u32) -> f64 {
        (flight as f64 / 2.0).max(MIN_SSTHRESH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: RFC 5681 arithmetic by hand.
    #[test]
    fn aimd_arithmetic() {
        let mut r = Reno;
        let mut cwnd = 10.0;
        r.on_ack(&mut cwnd, 100.0, 1);
        assert_eq!(cwnd, 11.0);
        r.on_ack(&mut cwnd, 100.0, 5); // RFC 5681 eq. (2): min(N, SMSS)
        assert_eq!(cwnd, 12.0);
        let mut cwnd = 10.0;
        r.on_ack(&mut cwnd, 5.0, 1);
        assert!((cwnd - 10.1).abs() < 1e-12);
        assert_eq!(r.ssthresh(20), 10.0);
        assert_eq!(r.ssthresh(3), 2.0);
    }
}
