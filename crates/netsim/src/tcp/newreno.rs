//! NewReno loss recovery (RFC 6582).
//!
//! NewReno uses the Reno window law ([`super::reno::Reno`]) and differs from
//! Reno only in what a *partial* acknowledgement does during fast recovery:
//! Reno (RFC 5681 §3.2 step 6) leaves recovery on the first ACK of new data,
//! so a second loss in the same window usually costs a timeout; NewReno
//! (RFC 6582 §3.2 step 3) stays in recovery until the ACK covers `recover`
//! (the highest sequence outstanding when recovery began), retransmitting
//! the next hole on each partial ACK. CUBIC uses the NewReno recovery too.

/// What a new ACK that arrives during fast recovery means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryAck {
    /// The ACK covers `recover`: leave recovery, deflate the window to
    /// `ssthresh` (RFC 6582 §3.2 step 3, "full acknowledgment", option 2).
    Full,
    /// NewReno partial ACK: retransmit the first unacknowledged segment,
    /// deflate the window by the amount acknowledged and add back one
    /// segment, re-arm the retransmission timer (RFC 6582 §3.2 step 3,
    /// "partial acknowledgment").
    Partial,
    /// Reno: any new ACK ends recovery (RFC 5681 §3.2 step 6).
    RenoExit,
}

/// Classifies a new cumulative ACK `ack` received in fast recovery with
/// recovery point `recover` (one past the highest segment sent when recovery
/// began).
#[inline]
pub fn classify(ack: u32, recover: u32, newreno: bool) -> RecoveryAck {
    if ack >= recover {
        RecoveryAck::Full
    } else if newreno {
        RecoveryAck::Partial
    } else {
        RecoveryAck::RenoExit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(classify(10, 10, true), RecoveryAck::Full);
        assert_eq!(classify(9, 10, true), RecoveryAck::Partial);
        assert_eq!(classify(9, 10, false), RecoveryAck::RenoExit);
    }
}
