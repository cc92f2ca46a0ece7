//! The TCP receiver (sink): in-order delivery and out-of-order reassembly
//! (with SACK blocks, RFC 2018, from [`super::sack::Runs`]), ACK generation
//! with optional delayed ACKs (RFC 5681 §4.2, RFC 1122 §4.2.3.2) and Linux's
//! quick-ACK mode, and the RFC 3168 ECN echo.
//!
//! Units: segments (sequence numbers count segments, see
//! [`crate::packet::Packet`]); times in ns. Each ACK echoes the send
//! timestamp of the segment that triggered it (for a delayed ACK, the first
//! of the segments it acknowledges, RFC 7323 §4.3) and whether that segment
//! was a retransmission (Karn's rule at the sender).

use super::accecn::{AccEcnReceiver, ACE_ACK_DELTA};
use super::sack::Runs;
use crate::engine::Ns;
use crate::packet::{Packet, F_ACK, F_CE, F_CWR, F_ECE, F_RETX, HEADER_BYTES};

/// Delayed-ACK timeout, 40 ms: Linux's `TCP_DELACK_MIN`, which is what an
/// established bulk-transfer connection uses (RFC 1122 §4.2.3.2 allows up
/// to 500 ms; RFC 5681 §4.2 requires an ACK for at least every second full
/// segment, which is also applied).
pub const DELACK_TIMEOUT: Ns = 40_000_000;
/// Immediate ACKs a delayed-ACK receiver sends after the first CE mark of an
/// episode, 2: Linux `__tcp_ecn_check_ce` (net/ipv4/tcp_input.c) calls
/// `tcp_enter_quickack_mode(sk, 2)` when a CE segment arrives while
/// `TCP_ECN_DEMAND_CWR` is clear, i.e. while no ECE is being echoed; each ACK
/// of new data then uses up one (`tcp_dec_quickack_mode`). CE segments that
/// arrive while the echo is already on are acknowledged as usual.
pub const ECN_QUICKACKS: u32 = 2;
/// Quick ACKs of Linux's delayed-ACK receiver at the start of a connection and after a
/// duplicate segment, 16: Linux `TCP_MAX_QUICKACKS` (include/net/tcp.h), given by
/// `tcp_event_data_recv` on the first data (`tcp_incr_quickack`) and by `tcp_data_queue`
/// on a segment wholly below `rcv_nxt` (`tcp_enter_quickack_mode`); Linux also bounds it by
/// half the receive window in segments, which is larger here (no receive-window limit).
pub const MAX_QUICKACKS: u32 = 16;

/// A TCP receiver (sink): reassembly, ACK generation, ECN echo.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    flow: u32,
    /// Node ACKs are addressed to (the sender).
    src: u32,
    delayed_ack: bool,
    /// Next in-order segment expected.
    pub rcv_nxt: u32,
    /// Out-of-order reassembly: runs of segments received above `rcv_nxt`.
    ooo: Runs,
    /// Send SACK blocks.
    sack: bool,
    /// In-order segments received but not yet acknowledged.
    pending: u32,
    ts_echo: Ns,
    retx_echo: bool,
    /// RFC 3168 §6.1.3: ECE is echoed from a CE mark until CWR arrives
    /// (Linux `TCP_ECN_DEMAND_CWR`).
    ece: bool,
    /// Immediate ACKs still due in quick-ACK mode (Linux
    /// `icsk_ack.quick`): set to [`ECN_QUICKACKS`] by the first CE mark of an
    /// episode, one used up per ACK sent; 0 outside quick-ACK mode.
    quick: u32,
    /// DCTCP-style echo (RFC 8257 §3.2): ECE reflects the CE state of the last data
    /// segment (`ece` holds it, CWR is ignored), and a change of that state is
    /// acknowledged at once (after an ACK, with the old state, of the segments still
    /// awaiting a delayed ACK). Used for DCTCP and Prague.
    per_segment_ce: bool,
    /// Linux's delayed-ACK receiver (the `linux` profile): quick-ACK mode of
    /// [`MAX_QUICKACKS`] at the start and after a duplicate segment.
    linux_delack: bool,
    /// Delayed-ACK deadline, if armed.
    pub delack_deadline: Option<Ns>,
    /// Time of the pending `DelAck` event, if any.
    pub delack_event: Option<Ns>,
    /// ACKs sent.
    pub acks_sent: u64,
    /// AccECN feedback ([`super::accecn`]), if negotiated: replaces the ECE echo.
    accecn: Option<AccEcnReceiver>,
    /// AccECN: arrival time of the segment whose timestamp the next ACK echoes (its hold
    /// time goes in the option) and CE packets not yet acknowledged.
    echo_arrival: Ns,
    ce_unacked: u32,
}

impl TcpReceiver {
    /// A receiver for flow `flow`, acknowledging to node `src`.
    pub fn new(flow: u32, src: u32, delayed_ack: bool, sack: bool) -> Self {
        TcpReceiver {
            flow,
            src,
            delayed_ack,
            rcv_nxt: 0,
            ooo: Runs::default(),
            sack,
            pending: 0,
            ts_echo: 0,
            retx_echo: false,
            ece: false,
            quick: 0,
            per_segment_ce: false,
            linux_delack: false,
            delack_deadline: None,
            delack_event: None,
            acks_sent: 0,
            accecn: None,
            echo_arrival: 0,
            ce_unacked: 0,
        }
    }

    /// Switches to AccECN feedback (see [`super::accecn`]): every ACK carries the ACE
    /// field and, if it has no SACK blocks, the AccECN option; ECE/CWR are not used.
    pub fn with_accecn(mut self, on: bool) -> Self {
        self.accecn = on.then(AccEcnReceiver::default);
        self
    }

    /// Switches to the DCTCP-style CE echo of RFC 8257 §3.2 (see the field's docs).
    pub fn with_per_segment_ce(mut self, on: bool) -> Self {
        self.per_segment_ce = on;
        self
    }

    /// Switches to Linux's delayed-ACK receiver (see [`MAX_QUICKACKS`]); only with
    /// delayed ACKs. The connection starts in quick-ACK mode.
    pub fn with_linux_delack(mut self, on: bool) -> Self {
        self.linux_delack = on && self.delayed_ack;
        if self.linux_delack {
            self.quick = MAX_QUICKACKS;
        }
        self
    }

    fn send_ack(&mut self, now: Ns, trigger: u32, out: &mut Vec<Packet>) {
        let mut flags = F_ACK;
        if self.ece && self.accecn.is_none() {
            flags |= F_ECE;
        }
        if self.retx_echo {
            flags |= F_RETX;
        }
        out.push(Packet {
            flow: self.flow,
            seq: self.rcv_nxt,
            size: HEADER_BYTES,
            dst: self.src,
            ts: self.ts_echo,
            enq: 0,
            sack: if self.sack && !self.ooo.is_empty() {
                self.ooo.blocks(self.rcv_nxt, trigger)
            } else {
                [0; 6]
            },
            flags,
        });
        if let (Some(a), Some(p)) = (&self.accecn, out.last_mut()) {
            a.write(p, now.saturating_sub(self.echo_arrival) / 1000);
            self.ce_unacked = 0;
        }
        self.pending = 0;
        self.delack_deadline = None;
        self.acks_sent += 1;
        // Linux `tcp_dec_quickack_mode`: every ACK of new data counts.
        self.quick = self.quick.saturating_sub(1);
    }

    /// Processes a data segment; an ACK, if due now, is appended to `out`.
    /// Returns the number of segments newly delivered in order.
    ///
    /// CE with delayed ACKs, as Linux: the CWR flag is taken first
    /// (`tcp_ecn_accept_cwr`, clears `TCP_ECN_DEMAND_CWR`), then the CE mark
    /// (`__tcp_ecn_check_ce`): only a CE that starts an echo episode enters
    /// quick-ACK mode ([`ECN_QUICKACKS`] immediate ACKs: this segment's and
    /// the next one's); further CE segments of the episode are acknowledged
    /// like unmarked ones (every second segment or the timer), carrying ECE.
    /// Not modelled: Linux also ACKs a data segment carrying CWR at once
    /// (`tcp_ecn_accept_cwr` sets `ICSK_ACK_NOW`); ns-3 3.37 has neither.
    ///
    /// With the DCTCP-style echo (RFC 8257 §3.2's two-state machine, as Linux
    /// `dctcp_ece_ack_update`): when the CE state changes, segments awaiting a delayed ACK
    /// are acknowledged first with the old ECE value, then this segment at once with the
    /// new one; otherwise ACKs follow the usual rules and carry ECE iff the state is CE.
    pub fn on_data(&mut self, now: Ns, pkt: &Packet, out: &mut Vec<Packet>) -> u32 {
        let mut ack_now = false;
        if let Some(a) = self.accecn.as_mut() {
            // AccECN (draft-ietf-tcpm-accurate-ecn §3.2.2.5.1): count, and ACK at once on a
            // CE after a non-CE packet (change-triggered) or when ACE_ACK_DELTA CE packets
            // are unacknowledged (increment-triggered).
            let ce = pkt.has(F_CE);
            a.on_data(pkt, pkt.size.saturating_sub(HEADER_BYTES));
            if ce {
                self.ce_unacked += 1;
                ack_now = !self.ece || self.ce_unacked >= ACE_ACK_DELTA;
            }
            self.ece = ce;
        } else if self.per_segment_ce {
            let ce = pkt.has(F_CE);
            if ce != self.ece {
                if self.pending > 0 {
                    let prior = self.rcv_nxt;
                    self.send_ack(now, prior, out);
                }
                self.ece = ce;
                ack_now = true;
            }
        } else if pkt.has(F_CWR) {
            // RFC 3168 §6.1.3: CWR stops the echo; a new CE restarts it.
            self.ece = false;
        }
        if !self.per_segment_ce && self.accecn.is_none() && pkt.has(F_CE) {
            if !self.ece {
                // Linux `tcp_incr_quickack`: raise, never lower, the count.
                self.quick = self.quick.max(ECN_QUICKACKS);
            }
            self.ece = true;
        }
        let seq = pkt.seq;
        if self.linux_delack && seq < self.rcv_nxt {
            // Linux `tcp_data_queue`, a segment wholly below `rcv_nxt` (a spurious
            // retransmission): `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`.
            self.quick = self.quick.max(MAX_QUICKACKS);
        }
        let before = self.rcv_nxt;
        let had_gap = !self.ooo.is_empty();
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            while let Some(end) = self.ooo.pop_in_order(self.rcv_nxt) {
                self.rcv_nxt = end;
            }
        } else if seq > self.rcv_nxt {
            self.ooo.insert(seq);
        }
        let delivered = self.rcv_nxt - before;
        let in_order_clean = seq == before && !had_gap;
        if in_order_clean && self.delayed_ack && self.quick == 0 && !ack_now {
            // RFC 5681 §4.2: ACK at least every second full segment; echo
            // the timestamp of the first unacknowledged one (RFC 7323 §4.3).
            if self.pending == 0 {
                self.ts_echo = pkt.ts;
                self.retx_echo = pkt.has(F_RETX);
                self.echo_arrival = now;
            }
            self.pending += 1;
            if self.pending >= 2 {
                self.send_ack(now, seq, out);
            } else {
                self.delack_deadline = Some(now + DELACK_TIMEOUT);
            }
        } else {
            // Immediate ACK: delayed ACKs off, out-of-order or duplicate
            // segment, gap filled (RFC 5681 §4.2), or quick-ACK mode after
            // the first CE of an episode (Linux `__tcp_ack_snd_check`).
            if self.pending == 0 || !in_order_clean {
                self.ts_echo = pkt.ts;
                self.retx_echo = pkt.has(F_RETX);
                self.echo_arrival = now;
            }
            self.send_ack(now, seq, out);
        }
        delivered
    }

    /// The delayed-ACK timer expired (caller checked the deadline).
    pub fn on_delack(&mut self, out: &mut Vec<Packet>) {
        // The timer fires at its deadline (the hold time AccECN reports).
        let now = self.delack_deadline.take().unwrap_or(self.echo_arrival);
        if self.pending > 0 {
            let seq = self.rcv_nxt;
            self.send_ack(now, seq, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::F_ECT;

    /// A 1000-byte data segment `seq` of flow 0 with `flags`.
    fn data(seq: u32, flags: u32) -> Packet {
        Packet {
            flow: 0,
            seq,
            size: 1000,
            dst: 1,
            ts: 0,
            enq: 0,
            sack: [0; 6],
            flags,
        }
    }

    /// Reference: RFC 3168 §6.1.3: the receiver echoes ECE from CE until CWR.
    #[test]
    fn receiver_ecn_echo_and_reassembly() {
        let mut r = TcpReceiver::new(0, 0, false, false);
        let mut out = Vec::new();
        assert_eq!(r.on_data(0, &data(0, F_ECT | F_CE), &mut out), 1);
        assert!(out[0].has(F_ECE));
        r.on_data(0, &data(2, F_ECT), &mut out);
        assert!(out[1].has(F_ECE));
        assert_eq!(out[1].seq, 1);
        assert_eq!(r.on_data(0, &data(1, F_ECT | F_CWR), &mut out), 2);
        assert!(!out[2].has(F_ECE));
        assert_eq!(out[2].seq, 3);
    }

    /// Reference: Linux `__tcp_ecn_check_ce` + `tcp_enter_quickack_mode(sk,
    /// 2)`: with delayed ACKs, the first CE of an echo episode (no ECE being
    /// echoed) is acknowledged at once and so is the next segment (a quick-ACK
    /// count of 2); further CE segments of the same episode are acknowledged
    /// as usual, every second segment, with ECE. After CWR ends the episode,
    /// the next CE starts a new one.
    #[test]
    fn delayed_ack_quick_acks_only_first_ce_of_episode() {
        let mut r = TcpReceiver::new(0, 0, true, false);
        let mut out = Vec::new();
        let data = |seq, flags| Packet {
            flow: 0,
            seq,
            size: 1000,
            dst: 1,
            ts: 0,
            enq: 0,
            sack: [0; 6],
            flags: F_ECT | flags,
        };
        r.on_data(0, &data(0, 0), &mut out);
        assert!(out.is_empty());
        // First CE: quick-ACK mode, ACK now (covers 0 and 1).
        r.on_data(1, &data(1, F_CE), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 2);
        assert!(out[0].has(F_ECE));
        // Second quick ACK.
        r.on_data(2, &data(2, F_CE), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].seq, 3);
        // Quick-ACK mode over: CE segments of the same episode are delayed.
        r.on_data(3, &data(3, F_CE), &mut out);
        assert_eq!(
            out.len(),
            2,
            "second CE of the episode is not acked at once"
        );
        assert_eq!(r.delack_deadline, Some(3 + DELACK_TIMEOUT));
        r.on_data(4, &data(4, F_CE), &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].seq, 5);
        assert!(out[2].has(F_ECE));
        r.on_data(5, &data(5, F_CE), &mut out);
        r.on_data(6, &data(6, 0), &mut out);
        assert_eq!(out.len(), 4);
        assert!(out[3].has(F_ECE));
        // CWR ends the episode; the next CE starts a new one: ACK at once.
        r.on_data(7, &data(7, F_CWR), &mut out);
        assert_eq!(out.len(), 4);
        r.on_data(8, &data(8, F_CE), &mut out);
        assert_eq!(out.len(), 5);
        assert_eq!(out[4].seq, 9);
        assert!(out[4].has(F_ECE));
    }

    /// Delayed ACK: every second segment, or the timer.
    #[test]
    fn delayed_ack_every_second_segment() {
        let mut r = TcpReceiver::new(0, 0, true, false);
        let mut out = Vec::new();
        let data = |seq| data(seq, 0);
        r.on_data(0, &data(0), &mut out);
        assert!(out.is_empty());
        assert_eq!(r.delack_deadline, Some(DELACK_TIMEOUT));
        r.on_data(1, &data(1), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 2);
        r.on_data(2, &data(2), &mut out);
        r.on_delack(&mut out);
        assert_eq!(out.len(), 2);
        // Out of order: immediate duplicate ACK.
        r.on_data(3, &data(4), &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].seq, 3);
    }

    /// Reference: Linux's receiver (`tcp_event_data_recv`: the first data enters quick-ACK
    /// mode with `TCP_MAX_QUICKACKS` = 16; `__tcp_ack_snd_check`: quick-ACK mode or more than
    /// one full segment unacknowledged sends at once, else `tcp_send_delayed_ack` with
    /// `TCP_DELACK_MIN` = 40 ms; `tcp_data_queue`: a segment wholly below `rcv_nxt` re-enters
    /// quick-ACK mode), walked by hand: segments 0..15 get an ACK each (16 quick ACKs); 16 is
    /// held (timer at now + 40 ms), 17 releases the ACK of both; 18 is held and the timer
    /// sends it; a duplicate of 5 is acknowledged at once and the next 15 segments are again
    /// acknowledged one by one. The classic receiver delays from the first segment.
    #[test]
    fn linux_delack_quick_acks_at_start_and_after_duplicate() {
        let data = |seq| data(seq, 0);
        let mut r = TcpReceiver::new(0, 0, true, false).with_linux_delack(true);
        let mut out = Vec::new();
        for seq in 0..16 {
            r.on_data(seq as Ns, &data(seq), &mut out);
            assert_eq!(out.len(), seq as usize + 1, "quick ACK for {seq}");
        }
        r.on_data(100, &data(16), &mut out);
        assert_eq!(out.len(), 16);
        assert_eq!(r.delack_deadline, Some(100 + DELACK_TIMEOUT));
        r.on_data(101, &data(17), &mut out);
        assert_eq!((out.len(), out[16].seq), (17, 18));
        r.on_data(102, &data(18), &mut out);
        assert_eq!(out.len(), 17);
        r.on_delack(&mut out);
        assert_eq!((out.len(), out[17].seq), (18, 19));
        r.on_data(103, &data(5), &mut out);
        assert_eq!((out.len(), out[18].seq), (19, 19), "duplicate: ACK now");
        for seq in 19..34 {
            r.on_data(200, &data(seq), &mut out);
        }
        assert_eq!(out.len(), 19 + 15, "15 more quick ACKs");
        r.on_data(201, &data(34), &mut out);
        assert_eq!(out.len(), 34, "quick-ACK mode used up");
        // The classic receiver (and `with_linux_delack` without delayed ACKs) has none.
        let mut c = TcpReceiver::new(0, 0, true, false);
        let mut out = Vec::new();
        c.on_data(0, &data(0), &mut out);
        assert!(out.is_empty());
        let mut n = TcpReceiver::new(0, 0, false, false).with_linux_delack(true);
        n.on_data(0, &data(0), &mut out);
        assert_eq!(out.len(), 1);
    }

    /// Reference: RFC 8257 §3.2 (the two-state ACK generation of Figure 1) and Linux
    /// `dctcp_ece_ack_update`, worked by hand with delayed ACKs. Segments 0, 1 unmarked:
    /// one ACK (2) without ECE. 2 unmarked (pending), 3 CE: state change -> ACK 3 (for 2,
    /// old state: no ECE) then ACK 4 at once with ECE. 4, 5 CE: one delayed ACK 6 with ECE.
    /// 6 unmarked: change -> ACK 7 at once without ECE (nothing was pending). CWR is ignored,
    /// and no quick-ACK mode is entered.
    #[test]
    fn dctcp_per_segment_echo_with_delayed_acks() {
        let mut r = TcpReceiver::new(0, 0, true, false).with_per_segment_ce(true);
        let mut out = Vec::new();
        let data = |seq, flags| Packet {
            flow: 0,
            seq,
            size: 1000,
            dst: 1,
            ts: seq as Ns,
            enq: 0,
            sack: [0; 6],
            flags: F_ECT | flags,
        };
        r.on_data(0, &data(0, 0), &mut out);
        r.on_data(1, &data(1, 0), &mut out);
        r.on_data(2, &data(2, 0), &mut out);
        r.on_data(3, &data(3, F_CE), &mut out);
        let acks: Vec<(u32, bool, Ns)> = out.iter().map(|a| (a.seq, a.has(F_ECE), a.ts)).collect();
        assert_eq!(acks, [(2, false, 0), (3, false, 2), (4, true, 3)]);
        out.clear();
        r.on_data(4, &data(4, F_CE | F_CWR), &mut out);
        assert!(out.is_empty(), "same state: delayed");
        r.on_data(5, &data(5, F_CE), &mut out);
        assert_eq!((out[0].seq, out[0].has(F_ECE)), (6, true));
        r.on_data(6, &data(6, 0), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!((out[1].seq, out[1].has(F_ECE)), (7, false));
        r.on_data(7, &data(7, 0), &mut out);
        assert_eq!(out.len(), 2, "no quick-ACK mode");
    }
}
