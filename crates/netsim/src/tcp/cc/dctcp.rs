//! DCTCP (RFC 8257, "Data Center TCP (DCTCP): TCP Congestion Control for Data Centers") as a
//! congestion controller, with Linux `net/ipv4/tcp_dctcp.c` where the RFC leaves a choice.
//!
//! * **Marked fraction** (RFC 8257 §3.3): the controller counts the payload bytes newly
//!   acknowledged (`BytesAcked`) and those acknowledged by ACKs carrying ECE
//!   (`BytesMarked`); when the cumulative ACK reaches `WindowEnd` (one window of data, about
//!   one RTT) it updates `alpha = (1 − g)·alpha + g·M`, `M = BytesMarked / BytesAcked`,
//!   `g = 1/16`, sets `WindowEnd = SND.NXT` (`snd_max` here) and resets the counters. It
//!   does so before the sender reacts to the ECE of the same ACK (Linux's `in_ack_event`
//!   hook runs before `tcp_fastretrans_alert`), through [`Controller::in_ack_event`].
//! * **Initial alpha** 1 (Linux `dctcp_alpha_on_init` = `DCTCP_MAX_ALPHA`): the first
//!   reduction halves the window, as a conventional TCP would.
//! * **Window cut** (RFC 8257 §3.4): on ECE, at most once per window of data (the sender's
//!   RFC 3168 once-per-window rule and CWR period), `cwnd = cwnd·(1 − alpha/2)`; as in Linux
//!   `dctcp_ssthresh` the new `ssthresh` is that value (at least 2 segments) and `cwnd`
//!   equals it (aqmlab sets it at once, see [`crate::tcp::sender`]).
//! * **Growth**: the Reno window law ([`super::reno`]), RFC 8257 §3.4 ("as in RFC 5681").
//! * **Loss and timeout** (RFC 8257 §3.5: "react to loss in the same way as a conventional
//!   TCP"): the Reno responses.
//! * **Receiver** (RFC 8257 §3.2): ECE echoes the CE state of the last data segment, with
//!   an immediate ACK when that state changes (see [`crate::tcp::receiver`]).
//! * Data is sent ECT(0) (Linux's DCTCP; RFC 8257 needs ECN, not a codepoint).

use super::reno::{Reno, MIN_SSTHRESH};
use super::{AckEvent, Congestion, Controller};
use crate::engine::Ns;

/// EWMA gain g = 1/16 (RFC 8257 §4.2, Linux `dctcp_shift_g` = 4).
pub const DCTCP_G: f64 = 1.0 / 16.0;

/// The DCTCP controller.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Dctcp {
    /// Window and threshold (first, see [`super::reno::Reno`]).
    reno: Reno,
    /// `DCTCP.Alpha`, the estimated fraction of marked bytes.
    alpha: f64,
    /// `DCTCP.WindowEnd` (segment number).
    window_end: u32,
    /// `DCTCP.BytesAcked` of the current observation window.
    bytes_acked: u64,
    /// `DCTCP.BytesMarked` of the current observation window.
    bytes_marked: u64,
}

impl Dctcp {
    /// Given window and threshold (segments); alpha = 1.
    pub fn with_window(cwnd: f64, ssthresh: f64) -> Self {
        Dctcp {
            reno: Reno::with_window(cwnd, ssthresh),
            alpha: 1.0,
            window_end: 0,
            bytes_acked: 0,
            bytes_marked: 0,
        }
    }

    /// The current alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl Controller for Dctcp {
    #[inline]
    fn window(&self) -> f64 {
        self.reno.window()
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        self.reno.ssthresh()
    }

    /// RFC 8257 §3.3, steps 1-8.
    #[inline]
    fn in_ack_event(&mut self, snd_una: u32, snd_max: u32, acked_bytes: u64, ece_bytes: u64) {
        self.bytes_acked += acked_bytes;
        self.bytes_marked += ece_bytes;
        if snd_una < self.window_end {
            return;
        }
        let m = if self.bytes_acked > 0 {
            self.bytes_marked as f64 / self.bytes_acked as f64
        } else {
            0.0
        };
        self.alpha = self.alpha * (1.0 - DCTCP_G) + DCTCP_G * m;
        self.window_end = snd_max;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }

    #[inline]
    fn on_ack(&mut self, now: Ns, ack: &AckEvent) {
        self.reno.on_ack(now, ack)
    }

    #[inline]
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32) {
        match kind {
            Congestion::Ecn => {
                let w = (self.reno.window() * (1.0 - self.alpha / 2.0)).max(MIN_SSTHRESH);
                self.reno = Reno::with_window(w, w);
            }
            Congestion::Loss | Congestion::Timeout { .. } => {
                self.reno.on_congestion(now, kind, flight)
            }
        }
    }

    #[inline]
    fn on_recovery_end(&mut self, now: Ns) {
        self.reno.on_recovery_end(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8257 §3.3 by hand (1000-byte segments). Window 1: ACKs of 10 segments, 3 of them
    /// with ECE, the last one reaching WindowEnd = 10: alpha = (15/16)·1 + (1/16)·0.3 =
    /// 0.95625. Window 2 (end 20): no marks: alpha = 0.95625·15/16 = 0.896484375. A cut then
    /// gives cwnd = 20·(1 − 0.896484375/2) = 11.03515625 = ssthresh.
    #[test]
    fn alpha_ewma_and_cut_by_hand() {
        let mut c = Dctcp::with_window(20.0, 100.0);
        c.window_end = 10;
        for i in 1..=10u32 {
            c.in_ack_event(i, 10, 1000, if i <= 3 { 1000 } else { 0 });
            if i < 10 {
                assert_eq!(c.alpha(), 1.0, "no update inside the window");
            }
        }
        assert!((c.alpha() - 0.95625).abs() < 1e-12, "{}", c.alpha());
        // The next window ends at 20 (snd_max when window 1 ended was 10 here: use 20).
        c.window_end = 20;
        for i in 11..=20u32 {
            c.in_ack_event(i, 30, 1000, 0);
        }
        assert!((c.alpha() - 0.896484375).abs() < 1e-12);
        c.on_congestion(0, Congestion::Ecn, 5);
        assert_eq!(c.window(), 20.0 * (1.0 - 0.896484375 / 2.0));
        assert_eq!(c.window(), c.ssthresh());
        // Loss: Reno, FlightSize / 2.
        c.on_congestion(0, Congestion::Loss, 10);
        assert_eq!((c.window(), c.ssthresh()), (5.0, 5.0));
    }
}
