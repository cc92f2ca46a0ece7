//! TCP endpoints at segment granularity (ns-2 style).
//!
//! * Sequence numbers count **segments** (see [`crate::packet::Packet`]);
//!   every segment carries `mss` payload bytes except possibly the last one of
//!   a finite flow. Windows (`cwnd`, `ssthresh`, `rwnd`) are in segments
//!   (`f64` for fractional congestion-avoidance growth).
//! * The sender is either backlogged (long-lived) or has a finite number of
//!   bytes; it may be told to stop offering new data (load steps).
//! * Loss recovery: RFC 5681 fast retransmit on 3 duplicate ACKs, fast
//!   recovery with window inflation; Reno exits on the first new ACK, NewReno
//!   and CUBIC follow RFC 6582 partial-ACK handling ([`newreno`]). Timeouts
//!   follow RFC 6298 (Karn's rule, exponential backoff) with Linux's use of
//!   the minimum RTO (RTO = SRTT + max(4 RTTVAR, min_rto)), and go back N
//!   (no SACK).
//! * RTT samples: each ACK echoes the send timestamp of the segment that
//!   triggered it (for a delayed ACK, the first of the segments it
//!   acknowledges, RFC 7323 §4.3); a sample is taken when the ACK
//!   acknowledges new data and the echoed segment was not a retransmission
//!   (Karn's rule, RFC 6298 §3).
//! * ECN (RFC 3168): ECT on data, the receiver echoes ECE from a CE mark
//!   until it sees CWR, the sender reduces at most once per window of data
//!   and sets CWR on its next new segment. After the reduction the sender is
//!   in Linux's CWR state (`TCP_CA_CWR`; ns-3 `CA_CWR`) until the cumulative
//!   ACK passes the recovery point: the window is not grown meanwhile (see
//!   [`TcpSender::on_ack`]).
//! * Delayed ACKs (optional): an ACK for every second full segment or after
//!   [`DELACK_TIMEOUT`]; immediate ACK for out-of-order, duplicate and
//!   gap-filling segments, and Linux's quick-ACK mode of [`ECN_QUICKACKS`]
//!   ACKs on the first CE mark of an episode (see [`TcpReceiver::on_data`]).

pub mod cubic;
pub mod newreno;
pub mod reno;
pub mod sack;

use serde::{Deserialize, Serialize};

use crate::engine::{Ns, NS_PER_SEC};
use crate::packet::{Packet, F_ACK, F_CE, F_CWR, F_ECE, F_ECT, F_RETX, HEADER_BYTES};
use cubic::Cubic;
use newreno::RecoveryAck;
use reno::Reno;
use sack::{Runs, Scoreboard};

/// Duplicate-ACK threshold for fast retransmit, according to RFC 5681 §3.2.
pub const DUPTHRESH: u32 = 3;
/// Initial RTO, 1 s, according to RFC 6298 §2.1.
pub const INITIAL_RTO: Ns = NS_PER_SEC;
/// Upper bound of the RTO, 60 s, according to RFC 6298 §2.5.
pub const MAX_RTO: Ns = 60 * NS_PER_SEC;
/// Clock granularity G, 1 ms (Linux jiffy at HZ=1000), in RFC 6298 §2.
pub const CLOCK_G: f64 = 1e6;
/// K, according to RFC 6298 §2.
pub const RTO_K: f64 = 4.0;
/// alpha (RTT smoothing gain), according to RFC 6298 §2.3.
pub const RTO_ALPHA: f64 = 1.0 / 8.0;
/// beta (RTT variation gain), according to RFC 6298 §2.3.
pub const RTO_BETA: f64 = 1.0 / 4.0;
/// Default minimum RTO, 200 ms (Linux `TCP_RTO_MIN`; RFC 6298 §2.4 would say
/// 1 s). As in Linux it bounds the variance term: RTO = SRTT +
/// max(4 RTTVAR, min_rto) (see `TcpSender::rtt_sample`).
pub const DEFAULT_MIN_RTO: Ns = 200_000_000;
/// Default initial window, 10 segments (RFC 6928, Linux default).
pub const DEFAULT_INIT_CWND: u32 = 10;
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

/// Congestion-control algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// Reno (RFC 5681).
    Reno,
    /// NewReno (RFC 6582).
    #[default]
    Newreno,
    /// CUBIC (RFC 9438) with NewReno loss recovery.
    Cubic,
}

impl CcKind {
    /// Lower-case name as used in configs and results.
    pub fn name(self) -> &'static str {
        match self {
            CcKind::Reno => "reno",
            CcKind::Newreno => "newreno",
            CcKind::Cubic => "cubic",
        }
    }
}

/// A congestion controller: the window law. Static dispatch by `match`.
#[derive(Clone, Copy, Debug)]
pub enum Cc {
    /// Reno window law, Reno recovery.
    Reno(Reno),
    /// Reno window law, NewReno recovery.
    NewReno(Reno),
    /// CUBIC window law, NewReno recovery.
    Cubic(Cubic),
}

impl Cc {
    /// Controller for `kind` in its initial state.
    pub fn new(kind: CcKind) -> Cc {
        match kind {
            CcKind::Reno => Cc::Reno(Reno),
            CcKind::Newreno => Cc::NewReno(Reno),
            CcKind::Cubic => Cc::Cubic(Cubic::default()),
        }
    }

    /// True if partial ACKs keep the sender in fast recovery (RFC 6582).
    fn newreno_recovery(&self) -> bool {
        !matches!(self, Cc::Reno(_))
    }

    fn on_ack(&mut self, cwnd: &mut f64, ssthresh: f64, acked: u32, now: Ns, srtt: Ns) {
        match self {
            Cc::Reno(r) | Cc::NewReno(r) => r.on_ack(cwnd, ssthresh, acked),
            Cc::Cubic(c) => c.on_ack(cwnd, ssthresh, acked, now, srtt),
        }
    }

    /// New `ssthresh` after a congestion signal.
    fn on_congestion(&mut self, cwnd: f64, flight: u32) -> f64 {
        match self {
            Cc::Reno(r) | Cc::NewReno(r) => r.ssthresh(flight),
            Cc::Cubic(c) => c.on_congestion(cwnd, flight),
        }
    }
}

/// Per-flow TCP parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpParams {
    /// Congestion control.
    pub cc: CcKind,
    /// Negotiate ECN (RFC 3168).
    pub ecn: bool,
    /// Receiver uses delayed ACKs.
    pub delayed_ack: bool,
    /// Payload bytes per full segment (packet size minus 40).
    pub mss: u32,
    /// Initial congestion window (segments).
    pub init_cwnd: u32,
    /// Minimum RTO (ns).
    pub min_rto: Ns,
    /// Receive window in segments (`None`: unlimited).
    pub rwnd: Option<u32>,
    /// Selective acknowledgements (RFC 2018) with FACK/RFC 6675 loss
    /// recovery instead of NewReno's (see [`sack`]).
    pub sack: bool,
}

/// Sender-side counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpStats {
    /// Segments transmitted (including retransmissions).
    pub segs_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Window reductions caused by ECN-Echo.
    pub ecn_reductions: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Sum of RTT samples (ns).
    pub rtt_sum: f64,
    /// Number of RTT samples.
    pub rtt_count: u64,
    /// Smallest interval (ns) between two successive window reductions
    /// (any cause); `u64::MAX` until two reductions happened.
    pub min_reduction_gap: Ns,
}

/// A TCP sender.
#[derive(Clone, Debug)]
pub struct TcpSender {
    flow: u32,
    /// Node the data is addressed to.
    dst: u32,
    p: TcpParams,
    cc: Cc,
    /// Total segments of a finite flow (`None`: backlogged).
    total_segs: Option<u32>,
    /// Payload of the last segment of a finite flow.
    last_payload: u32,
    /// Highest segment the application allows (stop time reached: `snd_max`).
    app_limit: u32,
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send.
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub snd_max: u32,
    /// Congestion window (segments), not including the fast-recovery
    /// inflation (ns-2's `cwnd_`).
    pub cwnd: f64,
    /// Fast-recovery window inflation (segments; ns-2's `dupwnd_`): the
    /// sending window during recovery is `cwnd + inflation` (RFC 5681 §3.2
    /// steps 3–4, RFC 6582 §3.2 step 3 deflation).
    inflation: f64,
    /// The last event was a timeout whose retransmission has not been
    /// acknowledged yet (RFC 5681 §3.1: ssthresh is held on repeated
    /// timeouts).
    in_rto_backoff: bool,
    /// Slow-start threshold (segments).
    pub ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    /// A partial ACK has been seen in the current recovery.
    partial_seen: bool,
    /// RFC 6582 `recover`, stored as one past the highest segment sent when
    /// the last recovery (or timeout) began; 0 before any.
    recover: u32,
    /// No ECN reaction until an ACK acknowledges beyond this point (one
    /// reduction per window, RFC 3168 §6.1.2). Segment number: one past the
    /// highest segment sent (`snd_max`) at the last window reduction of any
    /// cause (Linux `tp->high_seq`, ns-3 `m_recover`).
    ecn_recover: u32,
    /// In the ECN reduction period (Linux `TCP_CA_CWR`, ns-3 `CA_CWR`): set
    /// by the reaction to ECE, cleared by the first ACK with
    /// `ack > ecn_recover` or by a loss response (fast retransmit or timeout,
    /// which take over as Linux's Recovery and Loss states do). While set,
    /// `cwnd == ssthresh` and the window law is not run.
    in_cwr: bool,
    cwr_pending: bool,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    rto: Ns,
    /// Retransmission timer deadline, if armed.
    pub rto_deadline: Option<Ns>,
    /// Time of the pending `Rto` event, if any (lazy timer, see `sim.rs`).
    pub rto_event: Option<Ns>,
    last_reduction: Option<Ns>,
    /// SACK scoreboard (used only with `sack`).
    sb: Scoreboard,
    /// Counters.
    pub stats: TcpStats,
    /// Time the last byte of a finite flow was acknowledged.
    pub done_at: Option<Ns>,
}

impl TcpSender {
    /// A sender for flow `flow` to node `dst`; `bytes` = `None` for a
    /// backlogged flow.
    pub fn new(flow: u32, dst: u32, p: TcpParams, bytes: Option<u64>) -> Self {
        let mss = p.mss as u64;
        let (total_segs, last_payload) = match bytes {
            Some(b) => {
                let b = b.max(1);
                let n = b.div_ceil(mss);
                (Some(n as u32), (b - (n - 1) * mss) as u32)
            }
            None => (None, p.mss),
        };
        TcpSender {
            flow,
            dst,
            p,
            cc: Cc::new(p.cc),
            total_segs,
            last_payload,
            app_limit: total_segs.unwrap_or(u32::MAX),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: p.init_cwnd as f64,
            inflation: 0.0,
            in_rto_backoff: false,
            ssthresh: f64::INFINITY,
            dupacks: 0,
            in_recovery: false,
            partial_seen: false,
            recover: 0,
            ecn_recover: 0,
            in_cwr: false,
            cwr_pending: false,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto: INITIAL_RTO,
            rto_deadline: None,
            rto_event: None,
            last_reduction: None,
            sb: Scoreboard::default(),
            stats: TcpStats {
                min_reduction_gap: u64::MAX,
                ..TcpStats::default()
            },
            done_at: None,
        }
    }

    /// Smoothed RTT (ns), `None` before the first sample.
    pub fn srtt(&self) -> Option<Ns> {
        self.has_rtt.then_some(self.srtt as Ns)
    }

    /// Current RTO (ns).
    pub fn rto(&self) -> Ns {
        self.rto
    }

    /// True while in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// True during the ECN reduction period (Linux `TCP_CA_CWR`).
    pub fn in_cwr(&self) -> bool {
        self.in_cwr
    }

    /// True if all data of a finite flow has been acknowledged.
    pub fn is_done(&self) -> bool {
        self.done_at.is_some()
    }

    /// Segments outstanding.
    #[inline]
    fn flight(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// FlightSize for the ssthresh computation (RFC 5681 §3.1 eq. (4)),
    /// bounded by `cwnd`: during a recovery `snd_max - snd_una` also counts
    /// segments that have left the network (they sit in the receiver's
    /// reassembly queue), which would inflate ssthresh after a timeout.
    #[inline]
    fn flight_for_ssthresh(&self) -> u32 {
        self.flight().min(self.cwnd.floor() as u32)
    }

    /// Payload bytes of segment `seq`.
    #[inline]
    fn payload(&self, seq: u32) -> u32 {
        match self.total_segs {
            Some(n) if seq + 1 == n => self.last_payload,
            _ => self.p.mss,
        }
    }

    /// Payload bytes of segments `[0, seq)`.
    #[inline]
    fn bytes_before(&self, seq: u32) -> u64 {
        match self.total_segs {
            Some(n) if seq >= n => (n as u64 - 1) * self.p.mss as u64 + self.last_payload as u64,
            _ => seq as u64 * self.p.mss as u64,
        }
    }

    /// The application stops offering new data: only what was already sent
    /// is completed.
    pub fn stop(&mut self) {
        self.app_limit = self.app_limit.min(self.snd_max);
    }

    /// Emits segment `seq`.
    #[inline]
    fn emit(&mut self, seq: u32, now: Ns, out: &mut Vec<Packet>) {
        let mut flags = 0;
        // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
        if self.p.ecn && seq >= self.snd_max {
            flags |= F_ECT;
        }
        if seq < self.snd_max {
            flags |= F_RETX;
            self.stats.retransmits += 1;
        } else if self.cwr_pending {
            // RFC 3168 §6.1.2: CWR on the first new data segment after the
            // reduction.
            flags |= F_CWR;
            self.cwr_pending = false;
        }
        self.stats.segs_sent += 1;
        out.push(Packet {
            flow: self.flow,
            seq,
            size: self.payload(seq) + HEADER_BYTES,
            dst: self.dst,
            ts: now,
            enq: 0,
            sack: [0; 6],
            flags,
        });
    }

    /// Sends as much as the windows and the application allow.
    pub fn send_allowed(&mut self, now: Ns, out: &mut Vec<Packet>) {
        let rwnd = self.p.rwnd.unwrap_or(u32::MAX);
        if self.p.sack && self.in_recovery {
            self.send_sack_recovery(now, rwnd, out);
        } else {
            let wnd = ((self.cwnd + self.inflation).min(rwnd as f64).floor() as u32).max(1);
            while self.snd_nxt < self.app_limit && self.snd_nxt < self.snd_una.saturating_add(wnd) {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                // After a timeout, segments the receiver SACKed are skipped.
                if self.p.sack && seq < self.snd_max && self.sb.is_sacked(seq) {
                    continue;
                }
                self.emit(seq, now, out);
                if self.snd_nxt > self.snd_max {
                    self.snd_max = self.snd_nxt;
                }
            }
        }
        // RFC 6298 §5.1: arm the timer when data is outstanding.
        if self.rto_deadline.is_none() && self.snd_max > self.snd_una {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// SACK-based recovery transmissions (RFC 6675 §5 with FACK's pipe):
    /// while `pipe < cwnd`, the lowest lost segment, else new data.
    fn send_sack_recovery(&mut self, now: Ns, rwnd: u32, out: &mut Vec<Packet>) {
        let wnd = (self.cwnd.floor() as u32).max(1);
        self.snd_nxt = self.snd_nxt.max(self.snd_max);
        while self.sb.pipe(self.snd_max) < wnd {
            if let Some(h) = self.sb.next_lost() {
                if h < self.snd_max {
                    self.emit(h, now, out);
                    self.sb.mark_retx(h);
                    continue;
                }
            }
            if self.snd_max < self.app_limit && self.snd_max < self.snd_una.saturating_add(rwnd) {
                let seq = self.snd_max;
                self.emit(seq, now, out);
                self.snd_max += 1;
                self.snd_nxt = self.snd_max;
                continue;
            }
            break;
        }
    }

    /// RTT measurement, RFC 6298 §2.2–2.4 (also clears the Karn backoff,
    /// since the RTO is recomputed from the new estimate).
    fn rtt_sample(&mut self, r: f64) {
        if self.has_rtt {
            self.rttvar = (1.0 - RTO_BETA) * self.rttvar + RTO_BETA * (self.srtt - r).abs();
            self.srtt = (1.0 - RTO_ALPHA) * self.srtt + RTO_ALPHA * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        }
        // RFC 6298 §2.3 computes SRTT + max(G, K * RTTVAR) and §2.4 then
        // applies the minimum to the whole RTO. Linux (`tcp_set_rto`) instead
        // floors the variance term: RTO = SRTT + max(K * RTTVAR, min_rto).
        // We follow Linux: with a 200 ms minimum applied RFC-style, an RTO
        // barely above the base RTT fires spuriously whenever queueing delay
        // grows by more than a few tens of ms within an RTT (observed as
        // self-sustaining go-back-N oscillations under AQM).
        let var = (RTO_K * self.rttvar)
            .max(CLOCK_G)
            .max(self.p.min_rto as f64);
        self.rto = ((self.srtt + var) as Ns).min(MAX_RTO);
        self.stats.rtt_sum += r;
        self.stats.rtt_count += 1;
    }

    fn note_reduction(&mut self, now: Ns) {
        if let Some(t) = self.last_reduction {
            self.stats.min_reduction_gap = self.stats.min_reduction_gap.min(now - t);
        }
        self.last_reduction = Some(now);
    }

    /// Processes an ACK; new segments to transmit are appended to `out`.
    ///
    /// ECN reduction period, following Linux `tcp_ack` (net/ipv4/tcp_input.c):
    /// `tcp_fastretrans_alert` first ends a CWR period once `snd_una` is
    /// *above* `high_seq` (`tcp_end_cwnd_reduction`, which sets cwnd =
    /// ssthresh), then an ECE in the Open state starts a new one
    /// (`tcp_try_to_open` -> `tcp_enter_cwr` -> `tcp_init_cwnd_reduction`:
    /// `high_seq = snd_nxt`, ssthresh from the window law, CWR queued for the
    /// next segment); afterwards `tcp_cong_control` runs the window law
    /// (`tcp_cong_avoid`) only if not `tcp_in_cwnd_reduction` (CWR or
    /// Recovery) and `tcp_may_raise_cwnd` (new data acknowledged). So no ACK
    /// grows the window from the ECE one up to the last one at or below the
    /// recovery point; the ACK that passes it ends the period and grows the
    /// window. ns-3 3.37 does the same (`TcpSocketBase::ProcessAck`: CA_CWR is
    /// left when `ackNumber > m_recover`, and `IncreaseWindow` is called in
    /// CA_OPEN only). One difference is kept on purpose: Linux brings cwnd
    /// down to ssthresh gradually during the period (`tcp_cwnd_reduction`,
    /// proportional rate reduction, RFC 6937) whereas aqmlab (like ns-3 with
    /// `TcpClassicRecovery`) sets cwnd = ssthresh at the ECE, so the sender
    /// is silent until the flight drops below the halved window. Both end the
    /// period at cwnd = ssthresh.
    pub fn on_ack(&mut self, now: Ns, ack_pkt: &Packet, out: &mut Vec<Packet>) {
        let ack = ack_pkt.seq.min(self.snd_max);
        let ece = self.p.ecn && ack_pkt.has(F_ECE);
        if self.p.sack {
            if ack > self.snd_una {
                self.sb.advance(ack);
            }
            self.sb.apply(ack, &ack_pkt.sack, self.snd_max);
        }
        // End of the ECN reduction period: something above the recovery
        // point is acknowledged (Linux `tcp_fastretrans_alert`, TCP_CA_CWR:
        // "CWR is to be held something *above* high_seq is ACKed").
        if self.in_cwr && ack > self.ecn_recover {
            self.in_cwr = false;
            debug_assert_eq!(self.cwnd, self.ssthresh);
        }
        // RFC 3168 §6.1.2: react to ECE at most once per window of data.
        if ece && !self.in_recovery && ack > self.ecn_recover {
            self.ssthresh = self.cc.on_congestion(self.cwnd, self.flight_for_ssthresh());
            self.cwnd = self.ssthresh;
            self.ecn_recover = self.snd_max;
            self.in_cwr = true;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
            self.note_reduction(now);
        }
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            // RFC 6298 §5.3: restart the timer on new data acknowledged,
            // except for partial ACKs after the first one in a recovery
            // (RFC 6582 §3.2 step 3, the "Impatient" variant: a window with
            // many losses falls back to a timeout instead of recovering one
            // segment per RTT).
            let mut restart_timer = true;
            self.in_rto_backoff = false;
            if !ack_pkt.has(F_RETX) {
                self.rtt_sample(now.saturating_sub(ack_pkt.ts) as f64);
            }
            self.stats.bytes_acked += self.bytes_before(ack) - self.bytes_before(self.snd_una);
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if self.in_recovery && self.p.sack {
                // RFC 6675 §5: recovery ends when `recover` is covered; the
                // scoreboard drives retransmissions until then.
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh;
                }
            } else if self.in_recovery {
                match newreno::classify(ack, self.recover, self.cc.newreno_recovery()) {
                    RecoveryAck::Full | RecoveryAck::RenoExit => {
                        self.in_recovery = false;
                        self.dupacks = 0;
                        self.inflation = 0.0;
                        self.cwnd = self.ssthresh;
                    }
                    RecoveryAck::Partial => {
                        let seq = self.snd_una;
                        self.emit(seq, now, out);
                        self.inflation = (self.inflation - acked as f64 + 1.0).max(1.0 - self.cwnd);
                        restart_timer = !self.partial_seen;
                        self.partial_seen = true;
                    }
                }
            } else {
                self.dupacks = 0;
                // Linux `tcp_cong_control`: no growth while in the reduction
                // period (this includes the ACK carrying the ECE).
                if !self.in_cwr {
                    let srtt = self.srtt as Ns;
                    self.cc
                        .on_ack(&mut self.cwnd, self.ssthresh, acked, now, srtt);
                }
            }
            // RFC 6298 §5.2 / §5.3.
            if self.snd_una == self.snd_max {
                self.rto_deadline = None;
            } else if restart_timer {
                self.rto_deadline = Some(now + self.rto);
            }
            if Some(self.snd_una) == self.total_segs && self.done_at.is_none() {
                self.done_at = Some(now);
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            // Duplicate ACK (RFC 5681 §2 definition: nothing new acknowledged
            // while data is outstanding).
            self.dupacks += 1;
            if self.in_recovery && self.p.sack {
                // The scoreboard, not inflation, opens the window.
            } else if self.in_recovery {
                // RFC 5681 §3.2 step 4: inflate by one segment per dup ACK.
                self.inflation += 1.0;
            } else if (self.dupacks == DUPTHRESH || (self.p.sack && self.sb.is_lost(ack)))
                && (ack > self.recover || self.recover == 0)
            {
                // RFC 6582 §3.2 step 2 (and RFC 5681 §3.2 steps 2–3): fast
                // retransmit and enter fast recovery only if the ACK covers
                // more than `recover` (its highest segment is `recover - 1`),
                // so duplicate ACKs caused by go-back-N retransmissions of
                // segments the receiver already had do not trigger a
                // spurious fast retransmit (RFC 6582 §4).
                self.ssthresh = self.cc.on_congestion(self.cwnd, self.flight_for_ssthresh());
                self.recover = self.snd_max;
                self.in_recovery = true;
                // Recovery supersedes CWR (Linux `tcp_enter_recovery` from
                // TCP_CA_CWR); the window is held by the recovery instead.
                self.in_cwr = false;
                self.partial_seen = false;
                self.stats.fast_retransmits += 1;
                // The loss response is also this window's congestion response
                // to ECN (RFC 3168 §6.1.2).
                self.ecn_recover = self.snd_max;
                self.note_reduction(now);
                self.cwnd = self.ssthresh;
                self.rto_deadline = Some(now + self.rto);
                if self.p.sack {
                    // RFC 6675 §5 step (4): retransmission comes from the
                    // pipe-limited loop in `send_allowed`.
                    self.sb.new_episode();
                    self.inflation = 0.0;
                } else {
                    let seq = self.snd_una;
                    self.emit(seq, now, out);
                    self.inflation = DUPTHRESH as f64;
                }
            }
        }
        self.send_allowed(now, out);
    }

    /// The retransmission timer expired at `now` (caller checked the
    /// deadline): RFC 6298 §5.4–5.6 and RFC 5681 §3.1 equation (4)/(5).
    pub fn on_rto(&mut self, now: Ns, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        if self.snd_una == self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        if !self.in_rto_backoff {
            self.ssthresh = self.cc.on_congestion(self.cwnd, self.flight_for_ssthresh());
        }
        self.in_rto_backoff = true;
        self.cwnd = 1.0;
        self.inflation = 0.0;
        self.in_recovery = false;
        // Linux `tcp_enter_loss`: TCP_CA_Loss replaces CWR; slow start follows.
        self.in_cwr = false;
        self.dupacks = 0;
        // RFC 6582 §3.2 step 1 after a timeout: do not fast-retransmit on
        // duplicates of data sent before it.
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.note_reduction(now);
        // Go back N (skipping SACKed segments, see `send_allowed`).
        self.snd_nxt = self.snd_una;
        self.sb.new_episode();
        // RFC 6298 §5.5: back off.
        self.rto = (self.rto * 2).min(MAX_RTO);
        self.send_allowed(now, out);
        self.rto_deadline = Some(now + self.rto);
    }
}

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
    /// Delayed-ACK deadline, if armed.
    pub delack_deadline: Option<Ns>,
    /// Time of the pending `DelAck` event, if any.
    pub delack_event: Option<Ns>,
    /// ACKs sent.
    pub acks_sent: u64,
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
            delack_deadline: None,
            delack_event: None,
            acks_sent: 0,
        }
    }

    fn send_ack(&mut self, trigger: u32, out: &mut Vec<Packet>) {
        let mut flags = F_ACK;
        if self.ece {
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
    pub fn on_data(&mut self, now: Ns, pkt: &Packet, out: &mut Vec<Packet>) -> u32 {
        // RFC 3168 §6.1.3: CWR stops the echo; a new CE restarts it.
        if pkt.has(F_CWR) {
            self.ece = false;
        }
        if pkt.has(F_CE) {
            if !self.ece {
                // Linux `tcp_incr_quickack`: raise, never lower, the count.
                self.quick = self.quick.max(ECN_QUICKACKS);
            }
            self.ece = true;
        }
        let seq = pkt.seq;
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
        if in_order_clean && self.delayed_ack && self.quick == 0 {
            // RFC 5681 §4.2: ACK at least every second full segment; echo
            // the timestamp of the first unacknowledged one (RFC 7323 §4.3).
            if self.pending == 0 {
                self.ts_echo = pkt.ts;
                self.retx_echo = pkt.has(F_RETX);
            }
            self.pending += 1;
            if self.pending >= 2 {
                self.send_ack(seq, out);
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
            }
            self.send_ack(seq, out);
        }
        delivered
    }

    /// The delayed-ACK timer expired (caller checked the deadline).
    pub fn on_delack(&mut self, out: &mut Vec<Packet>) {
        self.delack_deadline = None;
        if self.pending > 0 {
            let seq = self.rcv_nxt;
            self.send_ack(seq, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(cc: CcKind) -> TcpParams {
        TcpParams {
            cc,
            ecn: false,
            delayed_ack: false,
            mss: 960,
            init_cwnd: 10,
            min_rto: DEFAULT_MIN_RTO,
            rwnd: None,
            sack: false,
        }
    }

    fn ack(seq: u32, ts: Ns) -> Packet {
        Packet {
            flow: 0,
            seq,
            size: 40,
            dst: 0,
            ts,
            enq: 0,
            sack: [0; 6],
            flags: F_ACK,
        }
    }

    /// Reference: RFC 6582 §3.2 walked through by hand: 20 segments out,
    /// segments 0 and 5 lost.
    #[test]
    fn newreno_partial_ack_and_full_ack() {
        let mut s = TcpSender::new(0, 1, params(CcKind::Newreno), None);
        s.cwnd = 20.0;
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 20);
        out.clear();
        for _ in 0..3 {
            s.on_ack(10, &ack(0, 0), &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh, 10.0);
        assert_eq!(out[0].seq, 0);
        assert!(out[0].has(F_RETX));
        out.clear();
        // Partial ACK up to 5: retransmit 5, stay in recovery.
        s.on_ack(20, &ack(5, 0), &mut out);
        assert!(s.in_recovery());
        assert_eq!(out[0].seq, 5);
        out.clear();
        // Full ACK.
        s.on_ack(30, &ack(20, 0), &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd, 10.0);
        assert_eq!(s.stats.retransmits, 2);
        assert_eq!(s.stats.fast_retransmits, 1);
    }

    /// Reno leaves recovery on the partial ACK instead.
    #[test]
    fn reno_exits_on_partial_ack() {
        let mut s = TcpSender::new(0, 1, params(CcKind::Reno), None);
        s.cwnd = 20.0;
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        for _ in 0..3 {
            s.on_ack(10, &ack(0, 0), &mut out);
        }
        s.on_ack(20, &ack(5, 0), &mut out);
        assert!(!s.in_recovery());
    }

    /// Reference: RFC 6298 §2.2 and §2.3 arithmetic: first sample R gives
    /// SRTT = R, RTTVAR = R/2, RTO = R + 4 R / 2 = 3R; the variance term is
    /// floored at min_rto (Linux), so a 10 ms sample gives 10 + 200 ms.
    #[test]
    fn rto_computation_and_backoff() {
        let mut s = TcpSender::new(0, 1, params(CcKind::Newreno), None);
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        s.on_ack(100_000_000, &ack(1, 0), &mut out);
        assert_eq!(s.rto(), 300_000_000);
        let mut s2 = TcpSender::new(0, 1, params(CcKind::Newreno), None);
        s2.send_allowed(0, &mut out);
        s2.on_ack(10_000_000, &ack(1, 0), &mut out);
        assert_eq!(s2.rto(), 10_000_000 + DEFAULT_MIN_RTO);
        out.clear();
        s2.on_rto(500_000_000, &mut out);
        assert_eq!(s2.rto(), 2 * (10_000_000 + DEFAULT_MIN_RTO));
        assert_eq!(s2.cwnd, 1.0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 1);
    }

    /// Reference: RFC 3168 §6.1.3: the receiver echoes ECE from CE until CWR.
    #[test]
    fn receiver_ecn_echo_and_reassembly() {
        let mut r = TcpReceiver::new(0, 0, false, false);
        let mut out = Vec::new();
        let data = |seq, flags| Packet {
            flow: 0,
            seq,
            size: 1000,
            dst: 1,
            ts: 0,
            enq: 0,
            sack: [0; 6],
            flags,
        };
        assert_eq!(r.on_data(0, &data(0, F_ECT | F_CE), &mut out), 1);
        assert!(out[0].has(F_ECE));
        r.on_data(0, &data(2, F_ECT), &mut out);
        assert!(out[1].has(F_ECE));
        assert_eq!(out[1].seq, 1);
        assert_eq!(r.on_data(0, &data(1, F_ECT | F_CWR), &mut out), 2);
        assert!(!out[2].has(F_ECE));
        assert_eq!(out[2].seq, 3);
    }

    /// Reference: Linux `tcp_ack` / `tcp_cong_control` (TCP_CA_CWR: no
    /// `tcp_cong_avoid` until `snd_una` is above `high_seq`), worked by hand:
    /// 20 segments out at cwnd 20 in congestion avoidance; the ACK of segment
    /// 0 carries ECE: ssthresh = cwnd = 10, recovery point 20. ACKs up to 20
    /// leave cwnd at 10 (the old code grew it to about 11.8), ECE below the
    /// recovery point is ignored, the ACK of segment 20 (the first one sent
    /// after the reduction, which carries CWR) ends the period and grows the
    /// window by 1/cwnd, and a later ECE reduces again.
    #[test]
    fn ecn_cwr_period_holds_cwnd_until_recovery_point() {
        let mut s = TcpSender::new(
            0,
            1,
            TcpParams {
                ecn: true,
                ..params(CcKind::Newreno)
            },
            None,
        );
        s.cwnd = 20.0;
        s.ssthresh = 20.0;
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 20);
        out.clear();
        let ece = |seq| Packet {
            flags: F_ACK | F_ECE,
            ..ack(seq, 0)
        };
        s.on_ack(10, &ece(1), &mut out);
        assert!(s.in_cwr());
        assert_eq!((s.cwnd, s.ssthresh), (10.0, 10.0));
        assert_eq!(s.stats.ecn_reductions, 1);
        assert!(out.is_empty(), "19 in flight, window 10: nothing to send");
        for a in 2..=20 {
            let pkt = if a == 15 { ece(a) } else { ack(a, 0) };
            s.on_ack(10 + a as Ns, &pkt, &mut out);
            assert!(s.in_cwr(), "ack {a} is not above the recovery point 20");
            assert_eq!(s.cwnd, 10.0, "no growth in CWR (ack {a})");
        }
        assert_eq!(s.stats.ecn_reductions, 1, "one reduction per window");
        // Segments 20..30 went out as the flight drained; 20 carries CWR.
        assert_eq!(out.first().map(|p| p.seq), Some(20));
        assert!(out[0].has(F_CWR));
        assert!(out[1..].iter().all(|p| !p.has(F_CWR)));
        assert_eq!(s.snd_nxt, 30);
        out.clear();
        s.on_ack(40, &ack(21, 0), &mut out);
        assert!(!s.in_cwr());
        assert!((s.cwnd - 10.1).abs() < 1e-12, "grows again: {}", s.cwnd);
        s.on_ack(41, &ack(22, 0), &mut out);
        assert!((s.cwnd - (10.1 + 1.0 / 10.1)).abs() < 1e-12);
        // A new ECE above the old recovery point starts a new period.
        s.on_ack(42, &ece(23), &mut out);
        assert!(s.in_cwr());
        assert_eq!(s.stats.ecn_reductions, 2);
    }

    /// A loss response during the ECN period ends it (Linux: Recovery
    /// supersedes CWR), and after a full ACK the window grows again.
    #[test]
    fn fast_retransmit_during_cwr_takes_over() {
        let mut s = TcpSender::new(
            0,
            1,
            TcpParams {
                ecn: true,
                ..params(CcKind::Newreno)
            },
            None,
        );
        s.cwnd = 20.0;
        s.ssthresh = 20.0;
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        s.on_ack(
            10,
            &Packet {
                flags: F_ACK | F_ECE,
                ..ack(1, 0)
            },
            &mut out,
        );
        assert!(s.in_cwr());
        for _ in 0..3 {
            s.on_ack(20, &ack(1, 0), &mut out);
        }
        assert!(s.in_recovery() && !s.in_cwr());
        s.on_ack(30, &ack(20, 0), &mut out);
        assert!(!s.in_recovery());
        let w = s.cwnd;
        s.on_ack(40, &ack(21, 0), &mut out);
        assert!(s.cwnd > w);
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
        let data = |seq| Packet {
            flow: 0,
            seq,
            size: 1000,
            dst: 1,
            ts: 0,
            enq: 0,
            sack: [0; 6],
            flags: 0,
        };
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
}
