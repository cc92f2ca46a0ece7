//! The receiver's advertised window under Linux's receive-buffer autotuning, as the sender
//! sees it (the `linux` profile, without a fixed `rwnd`).
//!
//! Linux (6.18; `tcp_rcv_space_adjust` and `tcp_rcvbuf_grow`, net/ipv4/tcp_input.c)
//! measures once per receiver RTT estimate the bytes the application read in that RTT
//! (`copied`); when it exceeds the last measure (`rcvq_space.space`, `old`), the receive buffer
//! grows to hold `rcvwin = 2 copied` ("DRS is always one RTT late") plus, while the reads grow
//! as in slow start, `2 rcvwin (copied - old) / old` ("allow the sender to double its rate";
//! commit aa251c84636c, "tcp: fix too slow tcp_rcvbuf_grow() action", in 6.18: with
//! `rcvwin = 2 copied` alone the sender was limited by the window while its cwnd ramped up),
//! and the window clamp follows; the buffer never shrinks. The buffer starts at `tcp_rmem[1]` =
//! 128 KiB, half of it window at the default `len / truesize` ratio of 50 %
//! (`TCP_DEFAULT_SCALING_RATIO`): 64 KiB. The first measure is `TCP_INIT_CWND` segments
//! (`tcp_init_buffer_space`). The cap is `tcp_rmem[2]` = 32 MiB of buffer, 16 MiB of window.
//!
//! The window is counted from the cumulative ACK (`rcv_nxt`): segments held out of order
//! take buffer space, so the right edge stays within about `max(64 KiB, 2 x space)` of the
//! first hole, and Linux never moves it left (`tcp_select_window`). That bound is what this
//! model adds: without it, a flow whose retransmission of the first hole keeps being
//! dropped can go on sending new data, SACKed one RTT later, for as long as the run lasts.
//!
//! What the simulator does instead:
//! * The measure runs at the sender, on cumulative ACKs (the receiver's reads, half an RTT
//!   later), once per smoothed RTT (Linux: the receiver's own RTT estimate from timestamps).
//! * The application reads at once (`inq` = 0); the window is the clamp (the receive-side
//!   slow start of `rcv_ssthresh`, 2 segments per segment received, is not modelled); the
//!   `len / truesize` ratio stays 50 %; the out-of-order term of `tcp_rcvbuf_grow`, which
//!   enlarges the buffer by the out-of-order span so that those segments do not eat the
//!   window, is taken as doing exactly that.

use crate::engine::Ns;

/// `tcp_rmem[1]` (bytes): the initial receive buffer.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]` (bytes): the largest receive buffer autotuning sets (Linux 6.x default).
pub const RMEM_MAX: u64 = 33_554_432;
/// `TCP_INIT_CWND`: the first `rcvq_space.space` (segments).
pub const INIT_SPACE: u32 = 10;

/// The receive window of one connection (segments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvBuf {
    /// Window from `rcv_nxt` (segments): the clamp, never smaller than before.
    win: u32,
    /// Largest window (segments): half of `tcp_rmem[2]`.
    max: u32,
    /// `rcvq_space.space`: the largest per-RTT read so far (segments).
    space: u32,
    /// `rcvq_space.seq`: `rcv_nxt` at the start of the measure.
    seq: u32,
    /// `rcvq_space.time`: start of the measure (ns).
    time: Ns,
}

impl RcvBuf {
    /// The window of a new connection with `mss`-byte segments.
    pub fn new(mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        RcvBuf {
            win: (RMEM_DEFAULT / 2 / mss).max(1) as u32,
            max: (RMEM_MAX / 2 / mss).max(1) as u32,
            space: INIT_SPACE,
            seq: 0,
            time: 0,
        }
    }

    /// The advertised window (segments), counted from the cumulative ACK.
    #[inline]
    pub fn window(&self) -> u32 {
        self.win
    }

    /// `tcp_rcv_space_adjust` when the cumulative ACK reaches `rcv_nxt` at `now`, with RTT
    /// estimate `rtt` (none before a sample: no measure, as Linux's `rcv_rtt_est.rtt_us == 0`).
    #[inline]
    pub fn on_ack(&mut self, now: Ns, rcv_nxt: u32, rtt: Option<Ns>) {
        let Some(rtt) = rtt else {
            return;
        };
        if now.saturating_sub(self.time) < rtt {
            return;
        }
        let copied = rcv_nxt.wrapping_sub(self.seq);
        if copied > self.space {
            let (old, new) = (self.space.max(1) as u64, copied as u64);
            let rcvwin = 2 * new;
            let rcvwin = rcvwin + 2 * (rcvwin * (new - old) / old);
            self.space = copied;
            self.win = self.win.max(rcvwin.min(self.max as u64) as u32);
        }
        self.seq = rcv_nxt;
        self.time = now;
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
        assert_eq!(b.window(), 44);
        assert_eq!(RcvBuf::new(1460).max, 11_491);
        b.on_ack(5 * MS, 5, None);
        assert_eq!((b.window(), b.seq), (44, 0), "no RTT estimate: no measure");
        b.on_ack(20 * MS, 10, Some(20 * MS));
        assert_eq!(
            (b.window(), b.space, b.seq),
            (44, 10, 10),
            "10 is not above 10"
        );
        b.on_ack(30 * MS, 60, Some(20 * MS));
        assert_eq!(b.seq, 10, "within one RTT of the last measure");
        b.on_ack(40 * MS, 110, Some(20 * MS));
        assert_eq!((b.window(), b.space, b.seq), (3800, 100, 110));
        b.on_ack(60 * MS, 220, Some(20 * MS));
        assert_eq!((b.window(), b.space), (3800, 110));
        b.on_ack(80 * MS, 240, Some(20 * MS));
        assert_eq!((b.window(), b.space), (3800, 110));
        // At most half of tcp_rmem[2].
        b.on_ack(100 * MS, 240 + 20_000, Some(20 * MS));
        assert_eq!(b.window(), 11_491);
    }
}
