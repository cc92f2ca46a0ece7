//! The receiver's advertised window under Linux's receive-buffer autotuning, as the sender
//! sees it (the `linux` profile, without a fixed `rwnd`).
//!
//! **The buffer** (Linux 6.18; `tcp_rcv_space_adjust` and `tcp_rcvbuf_grow`,
//! net/ipv4/tcp_input.c). Once per receiver RTT estimate Linux measures the bytes the
//! application read in that RTT (`copied`). When they exceed the last measure
//! (`rcvq_space.space`, `old`), the receive buffer grows to hold `rcvwin = 2 copied` ("DRS is
//! always one RTT late") plus, while the reads grow as in slow start,
//! `2 rcvwin (copied - old) / old` ("allow the sender to double its rate"; commit
//! aa251c84636c, "tcp: fix too slow tcp_rcvbuf_grow() action"), and the window clamp follows.
//! Each segment queued out of order grows the buffer too, to `2 space` plus the out-of-order
//! span (commit 63ad7dfedfae, "tcp: adjust rcvbuf in presence of reorders"). The buffer never
//! shrinks. It starts at `tcp_rmem[1]` = 128 KiB, half of it window at the default
//! `len / truesize` ratio of 50 % (`TCP_DEFAULT_SCALING_RATIO`): 64 KiB. The first measure is
//! `TCP_INIT_CWND` segments (`tcp_init_buffer_space`). The cap is `tcp_rmem[2]` = 32 MiB of
//! buffer, 16 MiB of window.
//!
//! **The window** (`__tcp_select_window`, `tcp_grow_window`). The advertised window is the
//! free space (the clamp less what the out-of-order queue holds) or `rcv_ssthresh`, whichever
//! is smaller. `rcv_ssthresh` is the receive-side slow start: it starts at the initial window
//! and grows by two segments per full segment received, in order or not, up to the free space.
//! The window counts from the cumulative ACK (`rcv_nxt`), and Linux never moves its right edge
//! left (`tcp_select_window`). So behind a hole the right edge stops about where free space and
//! the out-of-order span meet: half the clamp, or `2 space` when that is more. That bound is
//! what this model is for. Without it, a flow whose retransmission of the first hole keeps
//! being dropped can go on sending new data, SACKed one RTT later, for as long as the run
//! lasts.
//!
//! **The measure's period** is the receiver's own RTT estimate (`tcp_rcv_rtt_update`, Linux
//! 6.16 and later: commit b879dcb1aeec, "tcp: always seek for minimal rtt in
//! tcp_rcv_rtt_update()"). With timestamps, a sample below the estimate replaces it at once
//! and a larger one moves it by 1/8; without them, only a smaller sample counts. The samples
//! are whole milliseconds (the timestamp clock, `tcp_rtt_tsopt_us`), and a zero one is
//! skipped ("tcp: remove zero TCP TS samples for autotuning"). So the period follows the
//! shortest round trips, not the smoothed RTT.
//!
//! What the simulator does instead:
//! * The measure runs at the sender, on cumulative ACKs (the receiver's reads, half an RTT
//!   later), and the receiver's RTT samples are the sender's (each from the ACK of new data:
//!   the same path, data one way and ACK the other, as the receiver's timestamp echo).
//! * The window is worked out at the sender from each ACK (what the receiver advertised on
//!   it): the segments it newly delivered, cumulatively or by SACK, grow `rcv_ssthresh`, and
//!   the highest SACKed segment gives the out-of-order span.
//! * The application reads at once (`inq` = 0); the `len / truesize` ratio stays 50 %; memory
//!   pressure (`tcp_clamp_window`, `tcp_prune_queue`) is not modelled.

use crate::engine::Ns;
use std::num::NonZeroU32;

/// `tcp_rmem[1]` (bytes): the initial receive buffer.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]` (bytes): the largest receive buffer autotuning sets (Linux 6.x default).
pub const RMEM_MAX: u64 = 33_554_432;
/// `TCP_INIT_CWND`: the first `rcvq_space.space` (segments).
pub const INIT_SPACE: u32 = 10;

/// The receive window of one connection (segments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvBuf {
    /// `window_clamp` (segments): the buffer's window, never smaller than before.
    win: u32,
    /// Largest window (segments): half of `tcp_rmem[2]`.
    max: NonZeroU32,
    /// `rcvq_space.space`: the largest per-RTT read so far (segments).
    space: u32,
    /// `rcvq_space.seq`: `rcv_nxt` at the start of the measure.
    seq: u32,
    /// `rcvq_space.time`: start of the measure (µs, wrapping: only differences are read).
    time: u32,
    /// `rcv_rtt_est.rtt_us`: the receiver's RTT estimate (µs; 0 before the first sample).
    rtt: u32,
    /// `rcv_ssthresh` (segments): the receive-side slow start.
    ssthresh: u32,
    /// The right edge of the advertised window (`rcv_wup + rcv_wnd`, segment number).
    edge: u32,
}

impl RcvBuf {
    /// The window of a new connection with `mss`-byte segments.
    pub fn new(mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        let win = (RMEM_DEFAULT / 2 / mss).max(1) as u32;
        RcvBuf {
            win,
            max: NonZeroU32::new((RMEM_MAX / 2 / mss) as u32).unwrap_or(NonZeroU32::MIN),
            space: INIT_SPACE,
            seq: 0,
            time: 0,
            rtt: 0,
            ssthresh: win,
            edge: win,
        }
    }

    /// The advertised window seen from `una` (segments): up to the right edge.
    #[inline]
    pub fn window(&self, una: u32) -> u32 {
        self.edge.saturating_sub(una)
    }

    /// The window the receiver advertises on an ACK for `rcv_nxt` that newly delivered
    /// `newly` segments (cumulatively or by SACK), with `high` one past the highest segment
    /// received (module docs: `tcp_rcvbuf_grow` from `tcp_data_queue_ofo`,
    /// `tcp_grow_window`, `__tcp_select_window`, `tcp_select_window`).
    #[inline]
    pub fn on_delivered(&mut self, rcv_nxt: u32, high: u32, newly: u32) {
        let span = high.saturating_sub(rcv_nxt);
        if span > 0 {
            let ofo = self.space.saturating_mul(2).saturating_add(span);
            self.win = self.win.max(ofo.min(self.max.get()));
        }
        let free = self.win.saturating_sub(span);
        // `tcp_grow_window`: two segments per segment received while there is room.
        if self.ssthresh < free {
            self.ssthresh = self
                .ssthresh
                .saturating_add(newly.saturating_mul(2))
                .min(free);
        }
        let adv = free.min(self.ssthresh);
        self.edge = self.edge.max(rcv_nxt.saturating_add(adv));
    }

    /// `tcp_rcv_rtt_update` with an RTT sample `sample` (ns), `ts`: the connection uses
    /// timestamps (module docs).
    #[inline]
    pub fn on_rtt(&mut self, sample: Ns, ts: bool) {
        let m = (sample / 1_000_000).min(u32::MAX as Ns / 1000) as u32 * 1000;
        if m == 0 {
            return;
        }
        if self.rtt == 0 || m < self.rtt {
            self.rtt = m;
        } else if ts {
            self.rtt = self.rtt - self.rtt / 8 + m / 8;
        }
    }

    /// The receiver's RTT estimate (ns), `None` before a sample (tests).
    #[cfg(test)]
    fn rtt(&self) -> Option<Ns> {
        (self.rtt != 0).then_some(self.rtt as Ns * 1000)
    }

    /// `tcp_rcv_space_adjust` when the cumulative ACK reaches `rcv_nxt` at `now` (no measure
    /// before an RTT estimate, as Linux's `rcv_rtt_est.rtt_us == 0`).
    #[inline]
    pub fn on_ack(&mut self, now: Ns, rcv_nxt: u32) {
        let now_us = (now / 1000) as u32;
        if self.rtt == 0 || now_us.wrapping_sub(self.time) < self.rtt {
            return;
        }
        let copied = rcv_nxt.wrapping_sub(self.seq);
        if copied > self.space {
            let (old, new) = (self.space.max(1) as u64, copied as u64);
            let rcvwin = 2 * new;
            let rcvwin = rcvwin + 2 * (rcvwin * (new - old) / old);
            self.space = copied;
            self.win = self.win.max(rcvwin.min(self.max.get() as u64) as u32);
        }
        self.seq = rcv_nxt;
        self.time = now_us;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    /// By hand from Linux's constants: 64 KiB of 1460-byte segments is 44 segments; a read of
    /// 100 segments in one RTT after the first measure of 10 raises the window to
    /// `200 + 2 x (200 x 90 / 10)` = 3800 (`tcp_rcvbuf_grow`), a read of 110 after that to
    /// `220 + 2 x (220 x 10 / 100)` = 264, below it, so it stays, a smaller read leaves it
    /// there, and reads inside one RTT are one measure.
    #[test]
    fn grows_with_the_largest_read_per_rtt_and_never_shrinks() {
        let mut b = RcvBuf::new(1460);
        assert_eq!(b.win, 44);
        assert_eq!(RcvBuf::new(1460).max.get(), 11_491);
        b.on_ack(5 * MS, 5);
        assert_eq!((b.win, b.seq), (44, 0), "no RTT estimate: no measure");
        b.on_rtt(20 * MS, true);
        b.on_ack(20 * MS, 10);
        assert_eq!((b.win, b.space, b.seq), (44, 10, 10), "10 is not above 10");
        b.on_ack(30 * MS, 60);
        assert_eq!(b.seq, 10, "within one RTT of the last measure");
        b.on_ack(40 * MS, 110);
        assert_eq!((b.win, b.space, b.seq), (3800, 100, 110));
        b.on_ack(60 * MS, 220);
        assert_eq!((b.win, b.space), (3800, 110));
        b.on_ack(80 * MS, 240);
        assert_eq!((b.win, b.space), (3800, 110));
        // At most half of tcp_rmem[2].
        b.on_ack(100 * MS, 240 + 20_000);
        assert_eq!(b.win, 11_491);
    }

    /// `tcp_rcv_rtt_update` as Linux 6.16 has it, by hand (estimate in ms): a first sample of
    /// 40 ms latches; 20 latches at once (smaller); 36 moves it by 1/8 to 22; 100 to 31.75;
    /// a sample under 1 ms is skipped (whole milliseconds: 0.9 ms is 0); 20.9 counts as 20 and
    /// latches. Without timestamps only smaller samples count.
    #[test]
    fn rtt_estimate_latches_the_minimum_and_rises_by_an_eighth() {
        let mut b = RcvBuf::new(1460);
        assert_eq!(b.rtt(), None);
        let mut ms = |x: f64| {
            b.on_rtt((x * MS as f64) as Ns, true);
            b.rtt().map(|r| r as f64 / MS as f64)
        };
        assert_eq!(ms(40.0), Some(40.0));
        assert_eq!(ms(20.0), Some(20.0));
        assert_eq!(ms(36.0), Some(22.0));
        assert_eq!(ms(100.0), Some(31.75));
        assert_eq!(ms(0.9), Some(31.75));
        assert_eq!(ms(20.9), Some(20.0));
        let mut c = RcvBuf::new(1460);
        c.on_rtt(30 * MS, false);
        c.on_rtt(50 * MS, false);
        assert_eq!(c.rtt(), Some(30 * MS));
        c.on_rtt(25 * MS, false);
        assert_eq!(c.rtt(), Some(25 * MS));
    }

    /// The period of the measure is the receiver's estimate, not the sender's smoothed RTT:
    /// with samples of 20 ms and one of 60 ms (estimate 25 ms), reads 25 ms apart are
    /// separate measures.
    #[test]
    fn the_measure_runs_once_per_receiver_rtt() {
        let mut b = RcvBuf::new(1460);
        b.on_rtt(20 * MS, true);
        b.on_rtt(60 * MS, true);
        assert_eq!(b.rtt(), Some(25 * MS));
        b.on_ack(25 * MS, 5);
        assert_eq!((b.seq, b.time), (5, 25_000));
        b.on_ack(49 * MS, 9);
        assert_eq!(b.seq, 5, "24 ms is within the period");
        b.on_ack(50 * MS, 12);
        assert_eq!((b.seq, b.space), (12, 10), "7 read, not above 10");
    }

    /// The window behind a hole, by hand (`__tcp_select_window`, `tcp_grow_window`): with a
    /// clamp of 300 (a read of 30 after 10: `60 + 2 x 60 x 20 / 10`) and `rcv_ssthresh` 104
    /// (44 + 2 x 30 delivered), a hole at 40 with 41-60 SACKed leaves 279 free, `rcv_ssthresh`
    /// 144 and the edge at 184. Sending up to the edge each round, the edge stops at 196: the
    /// free space (300 less the span) meets `rcv_ssthresh` at 156, and the edge never moves
    /// left. When the hole fills, the window counts from 196 again.
    #[test]
    fn a_hole_holds_the_right_edge() {
        let mut b = RcvBuf::new(1460);
        b.on_delivered(10, 10, 10);
        assert_eq!(
            (b.ssthresh, b.window(10)),
            (44, 44),
            "the initial window is the clamp"
        );
        b.on_rtt(20 * MS, true);
        b.on_ack(20 * MS, 10);
        b.on_ack(40 * MS, 40);
        assert_eq!((b.win, b.space), (300, 30));
        b.on_delivered(40, 40, 30);
        assert_eq!(
            (b.ssthresh, b.edge),
            (104, 144),
            "2 segments per segment delivered"
        );
        b.on_delivered(40, 61, 20);
        assert_eq!((b.win, b.ssthresh, b.edge), (300, 144, 184));
        let mut high = 61;
        for _ in 0..10 {
            let edge = b.edge;
            b.on_delivered(40, edge, edge - high);
            high = edge;
        }
        assert_eq!((b.ssthresh, b.edge, b.window(40)), (156, 196, 156));
        b.on_delivered(196, 196, 1);
        assert_eq!((b.ssthresh, b.window(196)), (158, 158));
        // A span beyond the clamp: the out-of-order term lifts the clamp to 2 space + span.
        b.on_delivered(196, 196 + 400, 0);
        assert_eq!(b.win, 2 * 30 + 400);
    }
}
