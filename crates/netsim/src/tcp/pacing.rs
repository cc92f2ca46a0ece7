//! Pacing: the earliest departure time of a flow's next segment, Linux's way.
//!
//! A paced flow sends a segment only when `now >= next`; each transmission of `len` payload
//! bytes at pacing rate `R` bytes/s moves `next` to `max(next, now) + len / R` (Linux
//! `tcp_update_skb_after_send`: `tcp_wstamp_ns += len_ns`, where `__tcp_transmit_skb` first
//! set `tcp_wstamp_ns = max(tcp_wstamp_ns, tcp_clock_cache)`, so an idle flow earns no
//! credit). A flow blocked by its pacer waits for one timer (Linux's per-socket pacing
//! hrtimer, `tcp_pacing_check`), kept by the simulator as at most one pending `Pace` event.
//!
//! The rate is the controller's if it sets one (BBR: `sk_pacing_rate` written by
//! `cong_control`, see [`super::cc::Controller::pacing_rate`]), else Linux's
//! `tcp_update_pacing_rate` ([`linux_rate`]): `ratio x max(cwnd, packets_out) x mss / srtt`,
//! with `ratio` = [`PACING_SS_RATIO`] % while `cwnd < ssthresh / 2` and
//! [`PACING_CA_RATIO`] % otherwise; no pacing before the first RTT sample (Linux's initial
//! `sk_pacing_rate` is unlimited).
//!
//! Bursts: Linux sends one TSO/GSO packet of `tcp_tso_segs()` segments per pacing slot (about
//! 1 ms of data at the pacing rate, at least `tcp_min_tso_segs` = 2, or BBR's
//! `bbr_min_tso_segs`; [`tso_autosize`]), and the next slot is that many segments' time later.
//! A host without hardware segmentation splits it in software, so the segments leave back to
//! back; so does the simulator: a slot lets up to that many segments leave at its instant
//! ([`Pacer::ready`], [`Pacer::on_send`]), each advancing `next` by its own time. With SACK (the `linux`
//! profile) every transmission in recovery goes through the paced send loop
//! (`send_sack_recovery`), as in Linux. Without SACK, the retransmissions NewReno sends
//! directly from an ACK (the fast retransmit, the partial-ACK retransmission) are not held
//! back by the pacer but do advance it.

use crate::engine::{Ns, NS_PER_SEC};

/// `net.ipv4.tcp_pacing_ss_ratio` default (percent): pacing rate in slow start.
pub const PACING_SS_RATIO: u64 = 200;
/// `net.ipv4.tcp_pacing_ca_ratio` default (percent): pacing rate in congestion avoidance.
pub const PACING_CA_RATIO: u64 = 120;

/// "No time": an unset deadline or timer.
pub const NEVER: Ns = Ns::MAX;

/// `net.ipv4.tcp_min_tso_segs` default: the fewest segments of a TSO/GSO packet.
pub const MIN_TSO_SEGS: u32 = 2;
/// `sk_pacing_shift` default: a TSO packet holds about `rate >> 10` bytes (1 ms of data).
pub const PACING_SHIFT: u32 = 10;
/// `sk_gso_max_size` default (`GSO_LEGACY_MAX_SIZE`), bytes.
pub const GSO_MAX_SIZE: u64 = 65536;
/// `net.ipv4.tcp_tso_rtt_log` default: the RTT-based allowance halves every 2^9 µs of min RTT.
pub const TSO_RTT_LOG: u32 = 9;

/// Per-flow pacing state (40 bytes): the earliest departure time of the next segment, the
/// deadline the sender is blocked on, the pending timer event and the current burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacer {
    /// Earliest departure time of the next segment (Linux `tcp_wstamp_ns`).
    pub next: Ns,
    /// The sender has data it may send but waits for `next` ([`NEVER`]: not waiting).
    pub wait: Ns,
    /// Time of the pending `Pace` event ([`NEVER`]: none); at most one is pending.
    pub event: Ns,
    /// Departure time of the current burst (one TSO/GSO packet) ([`NEVER`]: none).
    pub slot: Ns,
    /// Segments the current burst may still carry at `slot`.
    pub left: u32,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer {
            next: 0,
            wait: NEVER,
            event: NEVER,
            slot: NEVER,
            left: 0,
        }
    }
}

impl Pacer {
    /// May a segment leave at `now`: its slot has come, or it joins the burst leaving at `now`?
    /// If not, the sender waits for `next`.
    #[inline]
    pub fn ready(&mut self, now: Ns) -> bool {
        if now >= self.next || (self.left > 0 && now == self.slot) {
            true
        } else {
            self.wait = self.next;
            false
        }
    }

    /// A segment of `len` payload bytes left at `now` at `rate` bytes/s (0: unpaced, nothing
    /// changes): `next = max(next, now) + len x 1e9 / rate` (Linux
    /// `tcp_update_skb_after_send`, integer ns as `div64_ul(len * NSEC_PER_SEC, rate)`). A
    /// segment that does not join the burst leaving at `now` starts one of up to `segs`
    /// segments (`tcp_tso_segs`; [`tso_autosize`]).
    #[inline]
    pub fn on_send(&mut self, now: Ns, len: u32, rate: u64, segs: u32) {
        if let Some(dt) = (len as u64 * NS_PER_SEC).checked_div(rate) {
            if self.left > 0 && now == self.slot && now < self.next {
                self.left -= 1;
            } else {
                self.slot = now;
                self.left = segs.saturating_sub(1);
            }
            self.next = self.next.max(now) + dt;
        }
    }

    /// The timer should be armed at this time, if the sender waits and no event is pending.
    /// Records the event as pending.
    #[inline]
    pub fn arm(&mut self) -> Option<Ns> {
        if self.wait != NEVER && self.event == NEVER {
            self.event = self.wait;
            Some(self.wait)
        } else {
            None
        }
    }

    /// The `Pace` event fired at `now`: no event pending any more; true if the wait is over
    /// (the sender should try to send).
    #[inline]
    pub fn fire(&mut self, now: Ns) -> bool {
        self.event = NEVER;
        if self.wait <= now {
            self.wait = NEVER;
            true
        } else {
            false
        }
    }
}

/// Linux `tcp_tso_autosize` (net/ipv4/tcp_output.c): the segments of one TSO/GSO packet at
/// pacing rate `rate` (payload bytes/s): `rate >> sk_pacing_shift` bytes (about 1 ms of data)
/// plus, for a close peer, `gso_max_size >> (min_rtt_us >> tcp_tso_rtt_log)` (nothing from a
/// min RTT of 16.4 ms up; `min_rtt` 0 = no sample yet, no allowance, as Linux's initial
/// `~0U`), at most `gso_max_size`, in segments of `mss`, at least `min_tso_segs`.
#[inline]
pub fn tso_autosize(rate: u64, mss: u32, min_rtt: Ns, min_tso_segs: u32) -> u32 {
    let mut bytes = rate >> PACING_SHIFT;
    if min_rtt > 0 {
        let r = (min_rtt / 1000) >> TSO_RTT_LOG;
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
    }
    let segs = bytes.min(GSO_MAX_SIZE) / mss.max(1) as u64;
    (segs as u32).max(min_tso_segs)
}

/// Linux `tcp_update_pacing_rate` (net/ipv4/tcp_input.c) in payload bytes/s: `mss x ratio/100
/// x max(cwnd, packets_out) / srtt`, `ratio` = [`PACING_SS_RATIO`] if `cwnd < ssthresh / 2`
/// else [`PACING_CA_RATIO`]; 0 (unpaced) without an RTT sample (`srtt_ns == 0`). Linux uses
/// the integer `snd_cwnd`, so `cwnd` is floored.
#[inline]
pub fn linux_rate(mss: u32, cwnd: f64, ssthresh: f64, packets_out: u32, srtt_ns: Ns) -> u64 {
    if srtt_ns == 0 {
        return 0;
    }
    let ratio = if cwnd < ssthresh / 2.0 {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    };
    let w = (cwnd.floor() as u64).max(packets_out as u64).max(1);
    // mss * ratio / 100 * w * 1e9 / srtt, in u128 against overflow at large windows.
    (mss as u128 * ratio as u128 * w as u128 * NS_PER_SEC as u128 / (100 * srtt_ns as u128)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux's ratios by hand: 10 segments of 1000 bytes per 100 ms is 100 kB/s; 200 % of it
    /// in slow start (cwnd < ssthresh / 2), 120 % otherwise; packets_out above cwnd counts.
    #[test]
    fn linux_ratios() {
        let srtt = 100_000_000;
        assert_eq!(linux_rate(1000, 10.0, f64::INFINITY, 0, srtt), 200_000);
        assert_eq!(linux_rate(1000, 10.0, 20.0, 0, srtt), 120_000);
        assert_eq!(linux_rate(1000, 10.0, 21.0, 0, srtt), 200_000);
        assert_eq!(linux_rate(1000, 10.0, 20.0, 15, srtt), 180_000);
        assert_eq!(linux_rate(1000, 10.0, 20.0, 0, 0), 0);
    }

    /// The departure times: back to back at the rate, no credit after idling, and one timer.
    #[test]
    fn departures_and_one_timer() {
        let mut p = Pacer::default();
        assert!(p.ready(0));
        p.on_send(0, 1000, 1_000_000, 1); // 1 ms per 1000 bytes
        assert_eq!(p.next, 1_000_000);
        assert!(!p.ready(500_000));
        assert_eq!(p.arm(), Some(1_000_000));
        assert_eq!(p.arm(), None, "one pending event at most");
        assert!(!p.ready(600_000));
        assert_eq!(p.arm(), None);
        assert!(p.fire(1_000_000));
        assert!(p.ready(1_000_000));
        p.on_send(1_000_000, 1000, 1_000_000, 1);
        assert_eq!(p.next, 2_000_000);
        // Idle for 10 ms: the next departure is not earlier than now.
        p.on_send(12_000_000, 500, 1_000_000, 1);
        assert_eq!(p.next, 12_500_000);
        // Unpaced: nothing moves.
        p.on_send(20_000_000, 1000, 0, 1);
        assert_eq!(p.next, 12_500_000);
        // An event that fires before the wait is over leaves the sender waiting.
        assert!(!p.ready(12_000_000) && p.arm() == Some(12_500_000));
        p.wait = 13_000_000;
        assert!(!p.fire(12_500_000));
        assert_eq!(p.arm(), Some(13_000_000));
    }

    /// Bursts: a slot of 3 segments lets three leave at its instant, back to back, and the
    /// next slot comes three segments' time later; a segment that becomes sendable later
    /// in the same slot waits (Linux would send it in the next TSO packet).
    #[test]
    fn bursts_of_tso_segs() {
        let mut p = Pacer::default();
        for k in 0..3u64 {
            assert!(p.ready(0), "segment {k} of the burst");
            p.on_send(0, 1000, 1_000_000, 3);
            assert_eq!(p.next, (k + 1) * 1_000_000);
        }
        assert!(!p.ready(0), "the burst is full");
        assert_eq!(p.wait, 3_000_000);
        assert!(p.ready(3_000_000));
        p.on_send(3_000_000, 1000, 1_000_000, 3);
        // Cwnd-limited: the next segment is sendable only later in the slot: it waits.
        assert!(!p.ready(3_500_000));
        assert_eq!(p.wait, 4_000_000);
    }

    /// `tcp_tso_autosize` by hand: 10 Mb/s (1.25 MB/s >> 10 = 1220 bytes) is under one
    /// 1448-byte segment, so the floor of 2; 50 Mb/s is 6103 bytes, 4 segments; at a min RTT
    /// of 1 ms (1000 µs >> 9 = 1) 32 KB more, 26 segments; from 16.4 ms (r = 32) nothing more;
    /// BBR's floor of 1 below 150 kB/s.
    #[test]
    fn tso_autosize_by_hand() {
        assert_eq!(tso_autosize(1_250_000, 1448, 20_000_000, MIN_TSO_SEGS), 2);
        assert_eq!(tso_autosize(6_250_000, 1448, 20_000_000, MIN_TSO_SEGS), 4);
        assert_eq!(
            tso_autosize(6_250_000, 1448, 1_000_000, MIN_TSO_SEGS),
            (6103 + 32768) / 1448
        );
        assert_eq!(tso_autosize(6_250_000, 1448, 16_384_000, MIN_TSO_SEGS), 4);
        assert_eq!(tso_autosize(6_250_000, 1448, 0, MIN_TSO_SEGS), 4);
        assert_eq!(tso_autosize(100_000, 1448, 20_000_000, 1), 1);
        assert_eq!(
            tso_autosize(1_000_000_000, 1448, 20_000_000, 2),
            65536 / 1448
        );
    }
}
