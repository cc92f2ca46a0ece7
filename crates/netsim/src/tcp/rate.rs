//! Delivery-rate estimation, as Linux's net/ipv4/tcp_rate.c does it
//! (draft-cheng-iccrg-delivery-rate-estimation): each transmission snapshots the connection's
//! delivery state (`tcp_rate_skb_sent`); each ACK takes the snapshot of the most recently sent
//! segment it delivers (`tcp_rate_skb_delivered`) and turns it into a rate sample: segments
//! delivered since that snapshot over the longer of the send and ACK phases
//! (`tcp_rate_gen`); a gap in the application's data marks samples app-limited
//! (`tcp_rate_check_app_limited`).
//!
//! The sender runs a [`RateSampler`] only for a controller that reads rate samples
//! ([`super::cc::Controller::wants_rate_sample`]: BBR); it is built for any controller of that
//! kind (a later `bbr3` reads the same [`RateSample`]).
//!
//! Storage: the per-segment snapshots live in a ring indexed by sequence number (segments),
//! sized to a power of two at least the flight; it grows (doubling) only when the flight
//! outgrows it, never in steady state, so the per-packet path does not allocate.
//!
//! Differences from Linux, on purpose:
//! * Times are integer ns (Linux: µs); a controller that wants Linux's µs divides.
//! * Per-segment samples come from cumulatively acknowledged segments and, with SACK, from
//!   newly SACKed ones (Linux `tcp_sacktag_one` calls `tcp_rate_skb_delivered`; a SACKed
//!   segment's snapshot is then marked off so its cumulative ACK does not use it again).
//!   Without SACK, each duplicate ACK counts one segment delivered and the cumulative ACK
//!   the rest, as Linux's `tcp_add_reno_sack` / `tcp_remove_reno_sacks` do.
//! * `tcp_min_rtt` (the floor under which an interval is discarded) is the minimum RTT sample
//!   of the connection (Linux: a windowed minimum over `tcp_min_rtt_wlen` = 300 s).

use crate::engine::Ns;

/// One segment's snapshot at its (last) transmission (Linux `tcp_skb_cb::tx` and the skb's
/// timestamp).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TxSnap {
    /// Transmission time (`tcp_skb_timestamp_us`).
    tx_time: Ns,
    /// `tp->first_tx_mstamp` at transmission.
    first_tx: Ns,
    /// `tp->delivered_mstamp` at transmission.
    delivered_time: Ns,
    /// `tp->delivered` at transmission.
    delivered: u32,
    /// Sequence number the entry belongs to (the ring slot may hold an older one).
    seq: u32,
    /// `tx.is_app_limited`.
    app_limited: bool,
    /// A retransmission (`TCPCB_RETRANS`).
    retrans: bool,
    /// Already used by a SACK (Linux clears `tx.delivered_mstamp`): not used again when the
    /// segment is cumulatively acknowledged.
    sacked: bool,
}

/// One ACK's rate sample (Linux `struct rate_sample`), plus what the sender knows of the
/// connection at that ACK (for the controller's `cong_control`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `tp->delivered` at the snapshot taken (`prior_delivered`).
    pub prior_delivered: u32,
    /// `tp->delivered_mstamp` at that snapshot (`prior_mstamp`); `None`: no snapshot, the
    /// sample is invalid.
    pub prior_time: Option<Ns>,
    /// Segments delivered over the interval (`rs->delivered`); `None` if invalid (-1).
    pub delivered: Option<u32>,
    /// The sampling interval (ns): max of the send and ACK phases (`interval_us`); `None` if
    /// invalid (-1), e.g. shorter than the minimum RTT.
    pub interval: Option<Ns>,
    /// The send phase (`snd_interval_us`).
    pub snd_interval: Ns,
    /// The ACK phase (`rcv_interval_us`).
    pub rcv_interval: Ns,
    /// Segments this ACK newly acknowledged or SACKed (`acked_sacked`).
    pub acked_sacked: u32,
    /// Segments newly marked lost (`losses`).
    pub losses: u32,
    /// The snapshot was app-limited (`is_app_limited`).
    pub is_app_limited: bool,
    /// The snapshot's segment was a retransmission (`is_retrans`).
    pub is_retrans: bool,
    /// This ACK's RTT sample (`rtt_us`), if any.
    pub rtt: Option<Ns>,
    /// Segments in flight before this ACK (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// Segments in flight after it (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Linux's `icsk_ca_state` after the ACK: [`CA_OPEN`], [`CA_RECOVERY`] or [`CA_LOSS`].
    pub ca_state: u8,
    /// The sender's earliest departure time of its next segment (`tcp_wstamp_ns`).
    pub edt: Ns,
    /// Payload bytes per full segment (`mss_cache`).
    pub mss: u32,
    /// Smoothed RTT (ns, 0 before the first sample).
    pub srtt: Ns,
    /// Send time of the segment the snapshot came from (`rs->last_end_seq`'s segment).
    pub(crate) last_tx: Ns,
    /// Its sequence number (`rs->last_end_seq`).
    pub(crate) last_seq: u32,
}

/// Linux `TCP_CA_Open` (the CWR and Disorder states count as open for a rate-based
/// controller).
pub const CA_OPEN: u8 = 0;
/// Linux `TCP_CA_Recovery`: fast recovery.
pub const CA_RECOVERY: u8 = 3;
/// Linux `TCP_CA_Loss`: after a retransmission timeout, until the data outstanding then is
/// acknowledged.
pub const CA_LOSS: u8 = 4;

/// The connection's delivery state (the `tcp_sock` fields of tcp_rate.c) and the ring of
/// per-segment snapshots.
#[derive(Clone, Debug)]
pub struct RateSampler {
    ring: Vec<TxSnap>,
    /// Segments delivered (`tp->delivered`).
    pub delivered: u32,
    /// Time of the last delivery (`tp->delivered_mstamp`).
    pub delivered_time: Ns,
    /// Send time of the most recently delivered segment (`tp->first_tx_mstamp`).
    first_tx: Ns,
    /// App-limited until `delivered` passes this (`tp->app_limited`; 0: not app-limited).
    pub app_limited: u32,
    /// Segments marked lost (`tp->lost`).
    pub lost: u32,
    /// Minimum RTT sample (ns; `Ns::MAX` before the first).
    pub min_rtt: Ns,
    /// The last valid sample's delivered and interval (`tp->rate_delivered`,
    /// `rate_interval_us`) and whether it was app-limited.
    pub rate_delivered: u32,
    /// See `rate_delivered`.
    pub rate_interval: Ns,
    /// See `rate_delivered`.
    pub rate_app_limited: bool,
    /// Duplicate ACKs counted delivered without SACK (Linux's `sacked_out` in Reno mode).
    reno_sacked: u32,
    /// In Linux's Loss state until `snd_una` reaches this (`high_seq` of the timeout).
    loss_high: Option<u32>,
    /// The sender's retransmission count already accounted as losses.
    pub retx_seen: u64,
    /// The sample being built by the current ACK.
    rs: RateSample,
}

impl Default for RateSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl RateSampler {
    /// Nothing sent yet; a ring of 16 slots.
    pub fn new() -> Self {
        RateSampler {
            ring: vec![TxSnap::default(); 16],
            delivered: 0,
            delivered_time: 0,
            first_tx: 0,
            app_limited: 0,
            lost: 0,
            min_rtt: Ns::MAX,
            rate_delivered: 0,
            rate_interval: 0,
            rate_app_limited: false,
            reno_sacked: 0,
            loss_high: None,
            retx_seen: 0,
            rs: RateSample::default(),
        }
    }

    #[inline]
    fn slot(&self, seq: u32) -> usize {
        seq as usize & (self.ring.len() - 1)
    }

    /// Doubles the ring until `[snd_una, seq]` fits, keeping the snapshots of that range.
    #[cold]
    fn grow(&mut self, snd_una: u32, seq: u32) {
        let mut n = self.ring.len();
        while n <= (seq - snd_una) as usize {
            n *= 2;
        }
        let mut ring = vec![TxSnap::default(); n];
        for s in snd_una..seq {
            let e = self.ring[self.slot(s)];
            if e.seq == s {
                ring[s as usize & (n - 1)] = e;
            }
        }
        self.ring = ring;
    }

    /// Linux `tcp_rate_skb_sent`: segment `seq` leaves at `now` with `packets_out` segments
    /// outstanding before it (`snd_max - snd_una` for new data); `snd_una` bounds the ring.
    #[inline]
    pub fn on_sent(&mut self, seq: u32, now: Ns, snd_una: u32, packets_out: u32, retrans: bool) {
        if packets_out == 0 {
            self.first_tx = now;
            self.delivered_time = now;
        }
        if seq.wrapping_sub(snd_una) as usize >= self.ring.len() {
            self.grow(snd_una, seq);
        }
        let i = self.slot(seq);
        self.ring[i] = TxSnap {
            tx_time: now,
            first_tx: self.first_tx,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            seq,
            app_limited: self.app_limited != 0,
            retrans,
            sacked: false,
        };
    }

    /// Starts the sample of an ACK that finds `prior_in_flight` segments in flight.
    #[inline]
    pub fn begin_ack(&mut self, prior_in_flight: u32) {
        self.rs = RateSample {
            prior_in_flight,
            ..RateSample::default()
        };
    }

    /// Linux `tcp_rate_skb_delivered` for segment `seq` (cumulatively acknowledged): keep its
    /// snapshot if it is the most recently sent one of this ACK (`tcp_skb_sent_after`: later
    /// send time, or the same time and a higher sequence number).
    #[inline]
    pub fn on_delivered(&mut self, seq: u32) {
        let e = self.ring[self.slot(seq)];
        if e.seq != seq || e.sacked {
            return;
        }
        let rs = &mut self.rs;
        if rs.prior_time.is_none()
            || e.tx_time > self.first_tx
            || (e.tx_time == self.first_tx && seq > rs.last_seq)
        {
            rs.prior_delivered = e.delivered;
            rs.prior_time = Some(e.delivered_time);
            rs.is_app_limited = e.app_limited;
            rs.is_retrans = e.retrans;
            rs.last_seq = seq;
            rs.last_tx = e.tx_time;
            self.first_tx = e.tx_time;
            rs.snd_interval = e.tx_time.saturating_sub(e.first_tx);
        }
    }

    /// Linux `tcp_rate_skb_delivered` for segment `seq` newly SACKed (called from
    /// `tcp_sacktag_one`): as [`RateSampler::on_delivered`], then the snapshot is marked off
    /// ("to avoid being used again when it's cumulatively acked").
    #[inline]
    pub fn on_sacked(&mut self, seq: u32) {
        self.on_delivered(seq);
        let i = self.slot(seq);
        if self.ring[i].seq == seq {
            self.ring[i].sacked = true;
        }
    }

    /// Linux `tcp_count_delivered`: `n` more segments delivered.
    #[inline]
    pub fn count_delivered(&mut self, n: u32) {
        self.delivered = self.delivered.wrapping_add(n);
        self.rs.acked_sacked += n;
    }

    /// Without SACK, a duplicate ACK with `packets_out` outstanding counts one segment
    /// delivered (Linux `tcp_add_reno_sack`, bounded as `tcp_check_reno_reordering` bounds
    /// `sacked_out` by `packets_out - 1`); in the Loss state only once new data went out after
    /// the timeout (`snd_nxt` past its `high_seq`, Linux `tcp_process_loss`): before that a
    /// duplicate is for data the receiver already had.
    #[inline]
    pub fn on_reno_dupack(&mut self, packets_out: u32, snd_nxt: u32) {
        if self.loss_high.is_some_and(|h| snd_nxt <= h) {
            return;
        }
        if self.reno_sacked + 1 < packets_out {
            self.reno_sacked += 1;
            self.count_delivered(1);
        }
    }

    /// Without SACK, a cumulative ACK of `acked` segments: one for the hole, the rest eat the
    /// duplicate ACKs already counted (Linux `tcp_remove_reno_sacks`). Outside fast recovery
    /// (`in_recovery` false) an advancing cumulative ACK then clears the count (Linux
    /// `tcp_fastretrans_alert` in the Open and Disorder states, and `tcp_process_loss` in the
    /// Loss state: `tcp_reset_reno_sack` when `snd_una` advances).
    #[inline]
    pub fn on_reno_cumack(&mut self, acked: u32, in_recovery: bool) {
        if acked > 0 {
            self.count_delivered(acked.saturating_sub(self.reno_sacked).max(1));
            self.reno_sacked = self.reno_sacked.saturating_sub(acked - 1);
            if !in_recovery {
                self.reno_sacked = 0;
            }
        }
    }

    /// The duplicate ACKs counted delivered without SACK (Linux's `sacked_out` in Reno mode).
    #[inline]
    pub fn reno_sacked(&self) -> u32 {
        self.reno_sacked
    }

    /// Fast recovery ended: the duplicate-ACK count restarts (Linux `tcp_fastretrans_alert`
    /// calls `tcp_reset_reno_sack` when a Reno recovery ends). Partial ACKs of one segment
    /// each leave `tcp_remove_reno_sacks` nothing to subtract, so without this the count
    /// would outlive the recovery and understate the flight from then on.
    #[inline]
    pub fn on_recovery_end(&mut self) {
        self.reno_sacked = 0;
    }

    /// `n` segments newly marked lost (`tp->lost`, `rs->losses`).
    #[inline]
    pub fn mark_lost(&mut self, n: u32) {
        self.lost = self.lost.wrapping_add(n);
        self.rs.losses += n;
    }

    /// A retransmission timeout with `snd_max` sent: Linux's Loss state until it is
    /// acknowledged; every outstanding segment (`packets_out`) is marked lost
    /// (`tcp_enter_loss` -> `tcp_timeout_mark_lost`); the duplicate-ACK count is reset.
    pub fn on_timeout(&mut self, snd_max: u32, packets_out: u32) {
        self.loss_high = Some(snd_max);
        self.lost = self.lost.wrapping_add(packets_out);
        self.reno_sacked = 0;
    }

    /// In Linux's Loss state (after a timeout, until its data is acknowledged).
    #[inline]
    pub fn in_loss(&self) -> bool {
        self.loss_high.is_some()
    }

    /// Linux's `icsk_ca_state` after an ACK up to `snd_una`, given whether fast recovery
    /// is running.
    #[inline]
    pub fn ca_state(&mut self, snd_una: u32, in_recovery: bool) -> u8 {
        if let Some(h) = self.loss_high {
            if snd_una >= h {
                self.loss_high = None;
            } else {
                return CA_LOSS;
            }
        }
        if in_recovery {
            CA_RECOVERY
        } else {
            CA_OPEN
        }
    }

    /// Linux `tcp_rate_gen` at `now` with this ACK's RTT sample: finishes the sample (the
    /// caller fills in the connection fields it returns with).
    #[inline]
    pub fn gen(&mut self, now: Ns, rtt: Option<Ns>) -> RateSample {
        if let Some(r) = rtt {
            self.min_rtt = self.min_rtt.min(r);
        }
        // Clear app limited if bubble is acked and gone.
        if self.app_limited != 0 && (self.delivered.wrapping_sub(self.app_limited) as i32) > 0 {
            self.app_limited = 0;
        }
        let rs = &mut self.rs;
        rs.rtt = rtt;
        if rs.acked_sacked > 0 {
            self.delivered_time = now;
        }
        let Some(prior_time) = rs.prior_time else {
            rs.delivered = None;
            rs.interval = None;
            return *rs;
        };
        let delivered = self.delivered.wrapping_sub(rs.prior_delivered);
        rs.delivered = Some(delivered);
        let snd = rs.snd_interval;
        let ack = now.saturating_sub(prior_time);
        rs.rcv_interval = ack;
        let interval = snd.max(ack);
        // Normally interval >= min RTT; a shorter one (a spurious retransmission first
        // acknowledged) is discarded.
        if self.min_rtt != Ns::MAX && interval < self.min_rtt {
            rs.interval = None;
            return *rs;
        }
        rs.interval = Some(interval);
        // Record the last non-app-limited or the highest app-limited bw.
        if !rs.is_app_limited
            || delivered as u128 * self.rate_interval as u128
                >= self.rate_delivered as u128 * interval as u128
        {
            self.rate_delivered = delivered;
            self.rate_interval = interval;
            self.rate_app_limited = rs.is_app_limited;
        }
        *rs
    }

    /// Linux `tcp_rate_check_app_limited`, called when the application has less than a
    /// segment to send: app-limited if not limited by `cwnd` (`in_flight < cwnd`) and no lost
    /// segment waits for retransmission (`lost_waiting`).
    #[inline]
    pub fn check_app_limited(&mut self, in_flight: u32, cwnd: u32, lost_waiting: bool) {
        if in_flight < cwnd && !lost_waiting {
            self.app_limited = self.delivered.wrapping_add(in_flight).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    /// draft-cheng-iccrg-delivery-rate-estimation §3 (the send and ACK phases), worked by
    /// hand: 10 segments sent 1 ms apart from t = 0 into an idle connection, each ACKed
    /// 100 ms after it was sent. Every snapshot holds delivered = 0 and delivered time 0 (the
    /// idle start: `C.delivered_time = now` when nothing is in flight), so the ACK of segment
    /// i at 100 + i ms gives delivered = i + 1, a send phase of i ms and an ACK phase of
    /// 100 + i ms: the rate of the first window is bounded by the RTT.
    #[test]
    fn first_window_rate_is_bounded_by_the_rtt() {
        let mut r = RateSampler::new();
        for i in 0..10 {
            r.on_sent(i, i as Ns * MS, 0, i, false);
        }
        for i in 0..10u32 {
            let now = (100 + i as Ns) * MS;
            r.begin_ack(10 - i);
            r.on_delivered(i);
            r.on_reno_cumack(1, false);
            let rs = r.gen(now, Some(100 * MS));
            // Snapshot of segment i: delivered 0 (all were sent before any ACK), delivered
            // time 0 (the idle start), so the ACK phase is `now` and delivered is i + 1.
            assert_eq!(rs.prior_delivered, 0);
            assert_eq!(rs.delivered, Some(i + 1));
            assert_eq!(rs.snd_interval, i as Ns * MS);
            assert_eq!(rs.rcv_interval, now);
            assert_eq!(rs.interval, Some(now));
            assert_eq!(rs.acked_sacked, 1);
        }
        assert_eq!(r.delivered, 10);
    }

    /// A steady flow through a 1 ms/segment bottleneck: segments sent as ACKs arrive (ACK
    /// clocking, one per ms), RTT 100 ms. In steady state each sample covers the RTT and
    /// delivers the window: exactly 100 segments per 100 ms, the bottleneck rate. ACK
    /// compression (from ACK 300 on, the ACKs of each group of ten arrive together, with the
    /// first) shortens the ACK phase to as little as 91 ms, which alone would give 1.1
    /// segments/ms; the send phase (100 ms) bounds the interval, so the rate stays 1.
    #[test]
    fn steady_rate_and_ack_compression() {
        let mut r = RateSampler::new();
        let (mut una, mut nxt) = (0u32, 0u32);
        // Initial window of 100 segments, sent 1 ms apart (paced).
        while nxt < 100 {
            r.on_sent(nxt, nxt as Ns * MS, una, nxt - una, false);
            nxt += 1;
        }
        let mut last = None;
        for k in 0..400u32 {
            // ACK of segment k at k ms + 100 ms; bursts of 10 ACKs at once from k = 300.
            let now = if k >= 300 {
                (k / 10 * 10) as Ns * MS + 100 * MS
            } else {
                k as Ns * MS + 100 * MS
            };
            r.begin_ack(nxt - una);
            r.on_delivered(k);
            r.on_reno_cumack(1, false);
            una = k + 1;
            let rs = r.gen(now, Some(100 * MS));
            if k >= 200 {
                let (d, i) = (rs.delivered.unwrap(), rs.interval.unwrap());
                let rate = d as f64 / (i as f64 / MS as f64);
                assert_eq!((d, i), (100, 100 * MS), "k {k}: rate {rate}");
            }
            last = Some(rs);
            // Send the next segment now (ACK clocked; under compression, in a burst).
            r.on_sent(nxt, now, una, nxt - una, false);
            nxt += 1;
        }
        assert!(!last.unwrap().is_app_limited);
    }

    /// App-limited marking (draft §3.4 / `tcp_rate_check_app_limited`): segments sent after
    /// the application ran dry carry the mark until the bubble is delivered; a sample whose
    /// interval is below the minimum RTT is invalid.
    #[test]
    fn app_limited_bubble_and_min_rtt_floor() {
        let mut r = RateSampler::new();
        r.on_sent(0, 0, 0, 0, false);
        r.check_app_limited(1, 10, false);
        assert_eq!(r.app_limited, 1);
        r.on_sent(1, MS, 0, 1, false);
        r.begin_ack(2);
        r.on_delivered(0);
        r.on_reno_cumack(1, false);
        let rs = r.gen(100 * MS, Some(100 * MS));
        assert!(!rs.is_app_limited, "segment 0 went out before the bubble");
        assert_eq!(r.app_limited, 1, "delivered 1 is not past the bubble");
        r.begin_ack(1);
        r.on_delivered(1);
        r.on_reno_cumack(1, false);
        let rs = r.gen(101 * MS, Some(100 * MS));
        assert!(rs.is_app_limited);
        assert_eq!(r.app_limited, 0, "delivered 2 passed the bubble");
        // Cwnd-limited or lost data waiting: not app-limited.
        r.check_app_limited(10, 10, false);
        r.check_app_limited(1, 10, true);
        assert_eq!(r.app_limited, 0);
        // A 50 ms interval with a 100 ms minimum RTT is discarded.
        r.on_sent(2, 200 * MS, 2, 0, false);
        r.begin_ack(1);
        r.on_delivered(2);
        r.on_reno_cumack(1, false);
        assert_eq!(r.gen(250 * MS, Some(50 * MS)).interval, Some(50 * MS));
        r.on_sent(3, 300 * MS, 3, 0, true);
        r.begin_ack(1);
        r.on_delivered(3);
        r.on_reno_cumack(1, false);
        let rs = r.gen(340 * MS, None);
        assert!(rs.is_retrans);
        assert_eq!(rs.interval, None, "40 ms < min RTT 50 ms");
    }

    /// Linux `tcp_sacktag_one` -> `tcp_rate_skb_delivered`, worked by hand: segments 0..4
    /// sent at 0..4 ms into an idle connection, segment 0 lost. The ACK at 100 ms SACKs
    /// segment 1: a valid sample from segment 1's snapshot (delivered 1 over max(send phase
    /// 1 ms, ACK phase 100 ms)), although nothing is cumulatively acknowledged. The ACK at
    /// 102 ms SACKs segment 3 (sent at 3 ms): its snapshot, delivered 2 over 102 ms. The
    /// retransmission of 0 goes out at 120 ms (snapshot: delivered 2 at 102 ms); its
    /// cumulative ACK at 220 ms, which also covers 1..3, samples the retransmission:
    /// delivered 2 over max(117, 118) ms. A later cumulative ACK of segments already SACKed
    /// gives no sample: their snapshots were marked off.
    #[test]
    fn sacked_segments_give_samples_once() {
        let mut r = RateSampler::new();
        for i in 0..5 {
            r.on_sent(i, i as Ns * MS, 0, i, false);
        }
        r.min_rtt = 90 * MS;
        r.begin_ack(5);
        r.on_sacked(1);
        r.count_delivered(1);
        let rs = r.gen(100 * MS, None);
        assert_eq!((rs.prior_delivered, rs.last_seq), (0, 1));
        assert_eq!((rs.delivered, rs.interval), (Some(1), Some(100 * MS)));
        r.begin_ack(4);
        r.on_sacked(3);
        r.count_delivered(1);
        let rs = r.gen(102 * MS, None);
        assert_eq!(
            (rs.delivered, rs.interval, rs.last_seq),
            (Some(2), Some(102 * MS), 3)
        );
        r.on_sent(0, 120 * MS, 0, 5, true);
        r.begin_ack(3);
        for s in 0..4 {
            r.on_delivered(s);
        }
        r.count_delivered(2);
        let rs = r.gen(220 * MS, None);
        assert!(rs.is_retrans);
        assert_eq!((rs.last_seq, rs.prior_delivered), (0, 2));
        assert_eq!((rs.delivered, rs.interval), (Some(2), Some(118 * MS)));
        r.begin_ack(1);
        r.on_delivered(1);
        r.on_delivered(3);
        assert_eq!(r.gen(230 * MS, None).delivered, None);
    }

    /// Duplicate ACKs without SACK: each counts one delivered (at most packets_out - 1), the
    /// cumulative ACK adds max(acked - counted, 1) (Linux `tcp_remove_reno_sacks`); the ring
    /// grows past 16 segments in flight and keeps the snapshots.
    #[test]
    fn reno_accounting_and_ring_growth() {
        let mut r = RateSampler::new();
        for s in 0..40 {
            r.on_sent(s, s as Ns, 0, s, false);
        }
        for _ in 0..3 {
            r.begin_ack(40);
            r.on_reno_dupack(40, 40);
        }
        assert_eq!((r.delivered, r.reno_sacked()), (3, 3));
        r.begin_ack(40);
        for s in 0..10 {
            r.on_delivered(s);
        }
        r.on_reno_cumack(10, true);
        assert_eq!(r.delivered, 10);
        let rs = r.gen(1000, None);
        assert_eq!(rs.prior_delivered, 0);
        assert_eq!(rs.last_seq, 9, "the most recently sent segment's snapshot");
        assert_eq!(r.reno_sacked(), 0);
        // Outside recovery a duplicate's count is cleared by the next advancing cumulative
        // ACK, even of one segment (Linux `tcp_fastretrans_alert`, Open/Disorder:
        // `tcp_reset_reno_sack` on FLAG_SND_UNA_ADVANCED); in recovery it is only reduced
        // by acked - 1 (`tcp_remove_reno_sacks`).
        r.on_reno_dupack(30, 40);
        r.on_reno_dupack(30, 40);
        r.on_reno_cumack(1, true);
        assert_eq!(r.reno_sacked(), 2);
        r.on_reno_cumack(1, false);
        assert_eq!(r.reno_sacked(), 0);
        assert_eq!(r.ca_state(10, true), CA_RECOVERY);
        r.on_timeout(40, 30);
        // Loss state: duplicates before new data went out count nothing; an advancing
        // cumulative ACK clears what was counted (Linux `tcp_process_loss`).
        r.on_reno_dupack(30, 40);
        assert_eq!(r.reno_sacked(), 0);
        r.on_reno_dupack(30, 41);
        assert_eq!(r.reno_sacked(), 1);
        r.on_reno_cumack(5, false);
        assert_eq!(r.reno_sacked(), 0);
        assert_eq!((r.ca_state(20, false), r.lost), (CA_LOSS, 30));
        assert_eq!(r.ca_state(40, false), CA_OPEN);
    }
}
