//! NewReno (RFC 6582) as a congestion controller.
//!
//! NewReno uses the Reno window law ([`super::reno`]) unchanged and differs
//! from Reno only in what a *partial* acknowledgement does during fast
//! recovery: Reno (RFC 5681 §3.2 step 6) leaves recovery on the first ACK of
//! new data, so a second loss in the same window usually costs a timeout;
//! NewReno (RFC 6582 §3.2 step 3) stays in recovery until the ACK covers
//! `recover` (the highest sequence outstanding when recovery began),
//! retransmitting the next hole on each partial ACK. That is loss recovery,
//! not window law: it lives in [`crate::tcp::recovery`], which pairs this
//! controller (and CUBIC) with NewReno recovery. CUBIC uses the NewReno
//! recovery too.

use super::reno::Reno;
use super::{AckEvent, Congestion, Controller};
use crate::engine::Ns;

/// The NewReno controller: the Reno window law.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
pub struct NewReno(Reno);

impl NewReno {
    /// Initial window `init_cwnd` segments, infinite `ssthresh`.
    pub fn new(init_cwnd: u32) -> Self {
        NewReno(Reno::new(init_cwnd))
    }

    /// Given window and threshold (segments).
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        NewReno(Reno::with_window(cwnd, ssthresh))
    }

    /// Linux's window arithmetic or RFC 5681's ([`Reno::linux`]).
    pub fn linux(self, on: bool) -> Self {
        NewReno(self.0.linux(on))
    }
}

impl Controller for NewReno {
    #[inline]
    fn window(&self) -> f64 {
        self.0.window()
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        self.0.ssthresh()
    }

    #[inline]
    fn on_ack(&mut self, now: Ns, ack: &AckEvent) {
        self.0.on_ack(now, ack)
    }

    #[inline]
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32) {
        self.0.on_congestion(now, kind, flight)
    }

    #[inline]
    fn on_recovery_end(&mut self, now: Ns) {
        self.0.on_recovery_end(now)
    }
}
