//! RACK-TLP loss detection (RFC 8985) as Linux runs it (`net/ipv4/tcp_recovery.c`,
//! `tcp_output.c`), on the SACK scoreboard ([`super::sack::Scoreboard`] in RACK mode).
//!
//! * **RACK** (RFC 8985 §6, Linux `tcp_rack_advance` and `tcp_rack_detect_loss`): every
//!   segment remembers when it was last sent. Each ACK that delivers segments (cumulatively
//!   or by SACK) advances `RACK.xmit_ts` to the latest send time among them (`RACK.end_seq`
//!   breaks ties) and sets `RACK.rtt` to `now - xmit_ts`; a delivered segment that was ever
//!   retransmitted is ignored when that RTT is below the minimum RTT (it may be the
//!   original that arrived). A segment not SACKed and sent before `RACK.xmit_ts` is lost
//!   once `now >= xmit + RACK.rtt + reo_wnd`; one not yet expired arms the reordering
//!   timer for the rest of that wait (plus Linux's `TCP_TIMEOUT_MIN`, 2 ms).
//!   `reo_wnd = max(min_rtt / 4, 1 ms)` while nothing is marked lost, 1 ms otherwise
//!   (Linux's current rule; the simulator does not reorder, so Linux's `rack.reord` never
//!   applies). Lost retransmissions are detected the same way, without a timeout.
//! * **TLP** (RFC 8985 §7, Linux `tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
//!   `tcp_process_tlp_ack`): with data outstanding and no loss recovery (Linux's Open and
//!   CWR states), the retransmission timer is armed for a probe timeout
//!   `PTO = 2 SRTT + 2 ms` (`+ TCP_RTO_MIN` = 200 ms when one segment is outstanding, the
//!   delayed-ACK allowance; 1 s before an RTT sample), at most the RTO. When it fires, one
//!   probe: a new segment if the application has one (even beyond `cwnd`), else the
//!   highest segment again; then the RTO. One probe per episode (`TLP.end_seq`). An ACK
//!   above the probe's `end_seq` after a retransmitted probe means the probe repaired a
//!   loss: the window is reduced once (as Linux without DSACK, which the receiver here does
//!   not send).
//!
//! Units: sequence numbers in segments, times in ns. State: the send time of each
//! outstanding segment (8 bytes per segment in flight, the top bit flagging a
//! retransmission) and 96 bytes, boxed, only for flows with RACK.

use std::collections::VecDeque;

use super::sack::Scoreboard;
use crate::engine::Ns;

/// Linux `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000), ns: added to the reordering timer and
/// to the probe timeout when more than one segment is outstanding.
pub const TIMEOUT_MIN: Ns = 2_000_000;
/// The smallest reordering window, 1 ms (Linux `tcp_rack_detect_loss`).
pub const REO_WND_MIN: Ns = 1_000_000;
/// Linux `TCP_TIMEOUT_INIT`, 1 s: the probe timeout before any RTT sample.
pub const PTO_NO_RTT: Ns = 1_000_000_000;

/// Top bit of a send time: the segment was retransmitted at least once.
const RETX_BIT: u64 = 1 << 63;

/// RACK-TLP state of one sender.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Send time of each segment in `[base, base + len)`, `RETX_BIT` if ever retransmitted.
    xmit: VecDeque<u64>,
    /// First segment of `xmit` (`snd_una`).
    base: u32,
    /// `RACK.xmit_ts` (0: nothing delivered yet).
    xmit_ts: Ns,
    /// `RACK.end_seq`: one past the segment `xmit_ts` is of.
    end_seq: u32,
    /// `RACK.rtt` (ns).
    rtt: Ns,
    /// Smallest RTT sample (ns; 0 before one).
    min_rtt: Ns,
    /// Something was delivered since the last loss detection (Linux `rack.advanced`).
    advanced: bool,
    /// `TLP.end_seq`: `snd_max` when the outstanding probe was sent.
    pub tlp_high_seq: Option<u32>,
    /// The outstanding probe was a retransmission.
    pub tlp_retrans: bool,
    /// The retransmission timer's deadline when it was armed for a probe (`false`) or for
    /// the reordering timeout (`true`); a deadline set since by anything else is an RTO.
    pub timer: Option<(Ns, bool)>,
}

impl Rack {
    /// Segment `seq` was sent at `now` (`retx`: a retransmission).
    #[inline]
    pub fn on_sent(&mut self, seq: u32, now: Ns, retx: bool) {
        let Some(i) = seq.checked_sub(self.base) else {
            return;
        };
        let i = i as usize;
        let v = now | if retx { RETX_BIT } else { 0 };
        if i == self.xmit.len() {
            // New data, sent in order (the usual case: no call to `resize`).
            self.xmit.push_back(v);
        } else if i < self.xmit.len() {
            self.xmit[i] = v | (self.xmit[i] & RETX_BIT);
        } else {
            // Fill a (never expected) gap with `now`.
            self.xmit.resize(i, now);
            self.xmit.push_back(v);
        }
    }

    /// An RTT sample (ns), for the minimum RTT (Linux `tcp_update_rtt_min`; the minimum over
    /// the connection rather than Linux's 5-minute window).
    #[inline]
    pub fn on_rtt(&mut self, r: Ns) {
        if self.min_rtt == 0 || r < self.min_rtt {
            self.min_rtt = r.max(1);
        }
    }

    /// Minimum RTT (ns; 0 before a sample).
    pub fn min_rtt(&self) -> Ns {
        self.min_rtt
    }

    /// `RACK.xmit_ts`, `RACK.end_seq`, `RACK.rtt`.
    pub fn state(&self) -> (Ns, u32, Ns) {
        (self.xmit_ts, self.end_seq, self.rtt)
    }

    /// `tcp_rack_advance` for segment `seq` with send-time word `v`, delivered at `now`.
    #[inline]
    fn advance(&mut self, seq: u32, v: u64, now: Ns) {
        let t = v & !RETX_BIT;
        let end = seq + 1;
        if self.xmit_ts != 0 && !sent_after(t, self.xmit_ts, end, self.end_seq) {
            return;
        }
        let rtt = now.saturating_sub(t);
        if v & RETX_BIT != 0 && rtt < self.min_rtt {
            return;
        }
        self.rtt = rtt;
        self.xmit_ts = t;
        self.end_seq = end;
        self.advanced = true;
    }

    /// Segment `seq` was newly SACKed at `now`.
    #[inline]
    pub fn on_sacked(&mut self, seq: u32, now: Ns) {
        if let Some(&v) = seq
            .checked_sub(self.base)
            .and_then(|i| self.xmit.get(i as usize))
        {
            self.advance(seq, v, now);
        }
    }

    /// The cumulative ACK moved to `ack` at `now`: segments below it are delivered.
    #[inline]
    pub fn on_cum_ack(&mut self, ack: u32, now: Ns) {
        while self.base < ack {
            let v = self.xmit.pop_front().unwrap_or(0);
            if v != 0 {
                self.advance(self.base, v, now);
            }
            self.base += 1;
        }
    }

    /// `tcp_rack_mark_lost` / `tcp_rack_detect_loss` at `now` over the outstanding segments
    /// (`sb` in RACK mode): marks the expired ones lost; returns the reordering timeout to
    /// arm (ns from now), if some segment sent before `RACK.xmit_ts` has not expired yet.
    /// With `force` (the reordering timer fired) the scan runs even if nothing was
    /// delivered since the last one.
    #[inline]
    pub fn detect_loss(&mut self, now: Ns, sb: &mut Scoreboard, force: bool) -> Option<Ns> {
        if !(self.advanced || force) || self.xmit_ts == 0 {
            return None;
        }
        self.advanced = false;
        // The usual ACK, inline: nothing is outstanding, or the oldest outstanding segment is
        // an original transmission not sent before `RACK.xmit_ts`, where the scan stops at
        // once with nothing lost and nothing to wait for.
        match self.xmit.front() {
            None => return None,
            Some(&v)
                if v & RETX_BIT == 0
                    && !sent_after(self.xmit_ts, v, self.end_seq, self.base + 1) =>
            {
                return None
            }
            Some(_) => {}
        }
        self.scan(now, sb)
    }

    /// The scan of [`Rack::detect_loss`] over the outstanding segments.
    #[inline(never)]
    fn scan(&mut self, now: Ns, sb: &mut Scoreboard) -> Option<Ns> {
        let reo_wnd = if sb.lost_out == 0 && self.min_rtt > 0 {
            (self.min_rtt / 4).max(REO_WND_MIN)
        } else {
            REO_WND_MIN
        };
        let mut wait: Option<Ns> = None;
        // The segments RACK skips (SACKed, or lost and not yet retransmitted) are passed
        // over first, in runs ([`Scoreboard::rack_next`]), as Linux keeps SACKed segments
        // off the list it scans. Skipping them before the time test changes nothing: a
        // skipped segment is never marked, and the only one whose time test would end the
        // scan is the SACKed original that RACK.xmit_ts is of, after which no segment
        // was sent before RACK.xmit_ts (originals go out in sequence order, and a
        // retransmission after its original).
        let end = self.base + self.xmit.len() as u32;
        let mut seq = self.base;
        loop {
            seq = sb.rack_next(seq, end);
            if seq >= end {
                break;
            }
            let v = self.xmit[(seq - self.base) as usize];
            let t = v & !RETX_BIT;
            if !sent_after(self.xmit_ts, t, self.end_seq, seq + 1) {
                if v & RETX_BIT == 0 {
                    // Original transmissions are sent in sequence order: none later is
                    // older than RACK.xmit_ts.
                    break;
                }
                seq += 1;
                continue;
            }
            // Linux: lost when `remaining = RACK.rtt + reo_wnd - (now - xmit) < 0`; else
            // wait `1 us + remaining`.
            let deadline = t + self.rtt + reo_wnd;
            if now > deadline {
                sb.mark_lost(seq);
            } else {
                let rest = deadline - now + 1000;
                wait = Some(wait.map_or(rest, |w| w.max(rest)));
            }
            seq += 1;
        }
        wait.map(|w| w + TIMEOUT_MIN)
    }

    /// The reordering timer holds the retransmission timer, whose deadline is `deadline`
    /// (Linux: `icsk_pending == ICSK_TIME_REO_TIMEOUT`).
    #[inline]
    pub fn reo_pending(&self, deadline: Option<Ns>) -> bool {
        matches!(self.timer, Some((d, true)) if Some(d) == deadline)
    }

    /// The probe timeout (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`) with smoothed RTT
    /// `srtt` (None before a sample) and `flight` segments outstanding, capped at `rto`.
    pub fn pto(srtt: Option<Ns>, flight: u32, rto: Ns, min_rto: Ns) -> Ns {
        let t = match srtt {
            Some(s) => 2 * s + if flight == 1 { min_rto } else { TIMEOUT_MIN },
            None => PTO_NO_RTT,
        };
        t.min(rto)
    }
}

/// Linux `tcp_rack_sent_after`: `t1` later than `t2`, ties broken by the sequence.
#[inline]
fn sent_after(t1: Ns, t2: Ns, seq1: u32, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    fn sb() -> Scoreboard {
        let mut s = Scoreboard::default();
        s.rack = true;
        s
    }

    /// RFC 8985 §6 walked by hand (Linux's rules). Segments 0..9 sent 1 ms apart from
    /// t = 0; min RTT 40 ms. At t = 50 ms an ACK SACKs 5 (sent at 5 ms): RACK.xmit_ts =
    /// 5 ms, RACK.rtt = 45 ms, reo_wnd = 40 / 4 = 10 ms. Segments 0..4 were sent before it:
    /// 0 expires at 0 + 45 + 10 = 55 ms > 50, so nothing is lost yet, and the reordering
    /// timer is the longest wait (segment 4, 59 ms: 9 ms + 1 us) + 2 ms. At t = 57 ms (the
    /// timer) 0 and 1 are lost (55, 56 < 57), 2..4 still wait (57 is not past 57). The
    /// retransmission of 0 (sent at 60 ms), SACKed at 61 ms with an RTT (1 ms) below the
    /// minimum RTT, does not advance RACK (it may be the original that arrived).
    #[test]
    fn rack_marks_by_time() {
        let mut r = Rack::default();
        let mut s = sb();
        for seq in 0..10 {
            r.on_sent(seq, seq as Ns * MS, false);
        }
        r.on_rtt(40 * MS);
        s.apply_with(0, &[5, 6, 0, 0, 0, 0], 10, |q| r.on_sacked(q, 50 * MS));
        assert_eq!(r.state(), (5 * MS, 6, 45 * MS));
        let timer = r.detect_loss(50 * MS, &mut s, false);
        assert_eq!(timer, Some(9 * MS + 1000 + TIMEOUT_MIN));
        assert_eq!(s.lost_out, 0);
        // No delivery since: no scan unless the timer forces it.
        assert_eq!(r.detect_loss(57 * MS, &mut s, false), None);
        r.detect_loss(57 * MS, &mut s, true);
        assert_eq!(s.lost_out, 2);
        assert!(s.is_lost(0) && s.is_lost(1) && !s.is_lost(2));
        assert_eq!(s.next_lost(), Some(0));
        // Pipe: 10 out - 1 SACKed - 2 lost.
        assert_eq!(s.pipe(10), 7);
        s.mark_retx(0);
        r.on_sent(0, 60 * MS, true);
        assert_eq!(s.pipe(10), 8);
        s.apply_with(0, &[0, 1, 5, 6, 0, 0], 10, |q| r.on_sacked(q, 61 * MS));
        assert_eq!(r.state(), (5 * MS, 6, 45 * MS), "ambiguous RTT: no advance");
    }

    /// A lost retransmission (RFC 8985 §6.2, Linux `tcp_rack_mark_skb_lost` on a
    /// `TCPCB_SACKED_RETRANS` segment): 0..3 sent at 0..3 ms, 1..3 SACKed at 50 ms, 0 lost
    /// at 61 ms (it expires at 0 + 47 + 10 = 57 ms) and retransmitted at 100
    /// ms; 4 sent at 105 ms is SACKed at 160 ms (RACK.xmit_ts 105 ms, rtt 55 ms, reo_wnd
    /// 1 ms while 0 is marked lost). The retransmission of 0 expired at 100 + 55 + 1 = 156 ms:
    /// lost again, its retransmission mark cleared so it is sent once more.
    #[test]
    fn rack_detects_lost_retransmission() {
        let mut r = Rack::default();
        let mut s = sb();
        for seq in 0..4 {
            r.on_sent(seq, seq as Ns * MS, false);
        }
        r.on_rtt(40 * MS);
        s.apply_with(0, &[1, 4, 0, 0, 0, 0], 4, |q| r.on_sacked(q, 50 * MS));
        r.detect_loss(50 * MS, &mut s, true);
        r.detect_loss(61 * MS, &mut s, true);
        assert_eq!((s.lost_out, s.next_lost()), (1, Some(0)));
        s.mark_retx(0);
        r.on_sent(0, 100 * MS, true);
        assert_eq!(s.next_lost(), None);
        r.on_sent(4, 105 * MS, false);
        s.apply_with(0, &[1, 5, 0, 0, 0, 0], 5, |q| r.on_sacked(q, 160 * MS));
        assert_eq!(r.state(), (105 * MS, 5, 55 * MS));
        assert_eq!(r.detect_loss(160 * MS, &mut s, false), None);
        assert_eq!((s.retx_out, s.lost_out, s.next_lost()), (0, 1, Some(0)));
        // The cumulative ACK of everything clears the state.
        r.on_cum_ack(5, 200 * MS);
        s.advance(5);
        assert_eq!((s.sacked_out, s.lost_out, s.pipe(5)), (0, 0, 0));
    }

    /// RFC 8985 §7.2 / Linux `tcp_schedule_loss_probe`: PTO = 2 SRTT + 2 ms, + 200 ms with one
    /// segment out, 1 s before a sample, never beyond the RTO.
    #[test]
    fn probe_timeout() {
        let rto = 300 * MS;
        assert_eq!(Rack::pto(Some(50 * MS), 5, rto, 200 * MS), 102 * MS);
        assert_eq!(Rack::pto(Some(50 * MS), 1, rto, 200 * MS), rto);
        assert_eq!(Rack::pto(Some(20 * MS), 1, rto, 200 * MS), 240 * MS);
        assert_eq!(Rack::pto(None, 5, 1000 * MS, 200 * MS), 1000 * MS);
    }

    /// The boxed RACK state of a flow stays at 96 bytes (docs/tcp.md): every flow of the
    /// `linux` profile holds one, and the million-flow run of `benches/bench_scale.py`
    /// (a 4 GB bar) had 47 MB to spare; 32 more bytes each took it to 4.14 GB
    /// (docs/design.md, the paragraph on `Rack::scan`).
    #[test]
    fn rack_state_stays_small() {
        assert_eq!(std::mem::size_of::<Rack>(), 96);
    }
}
