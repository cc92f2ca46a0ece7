//! The TCP sender: sequence state, transmission, the retransmission timer
//! and the ECN reaction (Linux's CWR state), gluing together the RTT
//! estimator ([`super::rtt`]), the loss recovery ([`super::recovery`]) and
//! the congestion controller ([`super::cc`]), which owns the window.
//!
//! Units: sequence numbers and windows in segments (see
//! [`crate::packet::Packet`]), byte counters in payload bytes, times in ns.
//! Invariants between calls: `snd_una <= snd_nxt <= snd_max` (`snd_nxt <
//! snd_max` only while going back N after a timeout); the sending window is
//! `cwnd + inflation` segments (at least 1, at most `rwnd`), or the pipe
//! rule in SACK recovery; the timer is armed whenever data is outstanding.

use super::accecn::{self, AccEcnSender, F_ACCECN_OPT};
use super::cc::{AckEvent, AnyController, CaState, Congestion, Controller};
use super::pacing::{linux_rate, tso_autosize, Pacer};
use super::rack::Rack;
use super::rate::RateSampler;
use super::rcvbuf::RcvBuf;
use super::recovery::{NewAck, Recovery, RecoveryKind, SackNext};
use super::rtt::RttEstimator;
use super::TcpParams;
use crate::engine::Ns;
use crate::packet::{Packet, F_CWR, F_ECE, F_ECT, F_ECT1, F_RETX, HEADER_BYTES};

/// `x.floor() as u32` without the call to libm's `floor` (x86-64's baseline has no SSE4.1
/// `roundsd`, so `floor` is a function call; it ran about twice per ACK): `as` truncates
/// toward zero, which is the floor for `x >= 0`, and saturates every negative value (and NaN)
/// to 0, as it does the floor of one, so the result is the same for every `f64`.
#[inline(always)]
fn whole(x: f64) -> u32 {
    x as u32
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
    /// Congestion controller; owns `cwnd` and `ssthresh`.
    cc: AnyController,
    /// RTT estimator and RTO.
    rtt: RttEstimator,
    /// Duplicate ACKs, fast recovery, SACK scoreboard.
    rec: Recovery,
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
    /// The last event was a timeout whose retransmission has not been
    /// acknowledged yet (RFC 5681 §3.1: ssthresh is held on repeated
    /// timeouts).
    in_rto_backoff: bool,
    /// No ECN reaction until an ACK acknowledges beyond this point (one
    /// reduction per window, RFC 3168 §6.1.2). Segment number: one past the
    /// highest segment sent (`snd_max`) at the last window reduction of any
    /// cause (Linux `tp->high_seq`, ns-3 `m_recover`).
    ecn_recover: u32,
    /// In the ECN reduction period (Linux `TCP_CA_CWR`, ns-3 `CA_CWR`): set
    /// by the reaction to ECE, cleared by the first ACK with
    /// `ack > ecn_recover` or by a loss response (fast retransmit or timeout,
    /// which take over as Linux's Recovery and Loss states do). While set,
    /// `cwnd == ssthresh` and the window law is not run; with PRR (the `linux` profile) new
    /// data follows the budget of [`Recovery::cwr_on_ack`] instead of the window.
    in_cwr: bool,
    /// Set CWR on the next new data segment (RFC 3168 §6.1.2).
    cwr_pending: bool,
    /// ECN flags of new data segments: 0 without ECN, `F_ECT` (ECT(0)), or `F_ECT |
    /// F_ECT1` (ECT(1), Prague).
    ect_flags: u32,
    /// Retransmission timer deadline, if armed.
    pub rto_deadline: Option<Ns>,
    /// Time of the pending `Rto` event, if any (lazy timer, see `sim.rs`).
    pub rto_event: Option<Ns>,
    last_reduction: Option<Ns>,
    /// Whether the window limits the sender (Linux `tcp_cwnd_validate`; `linux_states`).
    usage: CwndUsage,
    /// Counters.
    pub stats: TcpStats,
    /// Time the last byte of a finite flow was acknowledged.
    pub done_at: Option<Ns>,
    /// AccECN feedback state, if negotiated ([`super::accecn`]).
    accecn: Option<AccEcnSender>,
    /// Pacing state ([`super::pacing`]); used only if `paced`.
    pub pace: Pacer,
    /// Transmissions are paced (the group's `pacing`, or a controller with its own rate).
    paced: bool,
    /// Delivery-rate sampler, for controllers that read rate samples (BBR).
    rate: Option<Box<RateSampler>>,
    /// RACK-TLP state (the `rack` option; boxed, so 8 bytes per flow without it).
    rack: Option<Box<Rack>>,
    /// The receiver's autotuned window ([`super::rcvbuf`]; the `linux` profile without a
    /// fixed `rwnd`).
    rcvbuf: Option<RcvBuf>,
}

/// Linux's record of how much of the window the sender used (`tcp_sock`'s
/// `is_cwnd_limited`, `max_packets_out`, `cwnd_usage_seq`).
#[derive(Clone, Copy, Debug, Default)]
struct CwndUsage {
    /// The window was the limit in the round that ends at `seq`.
    limited: bool,
    /// The largest flight of that round (segments).
    max_out: u32,
    /// The round ends when `snd_una` reaches it.
    seq: u32,
}

impl TcpSender {
    /// The connection's parameters.
    pub fn params(&self) -> &TcpParams {
        &self.p
    }

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
        let mut cc = AnyController::new(p.cc, p.init_cwnd);
        match &mut cc {
            AnyController::Prague(c) => {
                c.set_rtt_scaling(p.rtt_scaling);
                c.set_self_paced(p.extras.prague_pacing);
            }
            AnyController::Bbr3(c) => {
                c.set_ecn(p.ecn || p.cc.needs_ecn());
                c.set_sack(p.sack);
            }
            _ => {}
        }
        cc.seed(flow as u64);
        let paced = p.pacing || cc.paces();
        let rate = cc.wants_rate_sample().then(Box::<RateSampler>::default);
        // Linux `tcp_cong_control`: a controller with its own `cong_control` (BBR) sets the
        // window on every ACK, recovery included, and `tcp_cwnd_reduction` (PRR) never runs
        // for it; recovery transmissions are then bounded by that window
        // (`tcp_xmit_retransmit_queue`: `snd_cwnd - tcp_packets_in_flight`).
        let prr = p.prr && rate.is_none();
        TcpSender {
            flow,
            dst,
            p,
            cc: cc
                .with_hystart(p.extras.hystart)
                .with_linux_window(p.extras.linux_window),
            rtt: RttEstimator::new(p.min_rto),
            rec: Recovery::new(RecoveryKind::new(p.cc, p.sack, p.extras.linux_states))
                .with_prr(prr)
                .with_rack(p.extras.rack),
            total_segs,
            last_payload,
            app_limit: total_segs.unwrap_or(u32::MAX),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            in_rto_backoff: false,
            ecn_recover: 0,
            in_cwr: false,
            cwr_pending: false,
            ect_flags: match (p.ecn || p.cc.needs_ecn(), p.cc.sends_ect1()) {
                (false, _) => 0,
                (true, false) => F_ECT,
                (true, true) => F_ECT | F_ECT1,
            },
            rto_deadline: None,
            rto_event: None,
            last_reduction: None,
            usage: CwndUsage::default(),
            stats: TcpStats {
                min_reduction_gap: u64::MAX,
                ..TcpStats::default()
            },
            done_at: None,
            rack: (p.extras.rack && p.sack).then(Box::default),
            rcvbuf: (p.extras.rcvbuf && p.rwnd.is_none()).then(|| RcvBuf::new(p.mss)),
            accecn: (p.accecn && (p.ecn || p.cc.needs_ecn())).then(AccEcnSender::default),
            pace: Pacer::default(),
            paced,
            rate,
        }
    }

    /// Transmissions are paced.
    pub fn paced(&self) -> bool {
        self.paced
    }

    /// The pacing rate (payload bytes/s; 0: unpaced): the controller's, else Linux's
    /// `tcp_update_pacing_rate` from the current window and SRTT.
    #[inline]
    pub fn pacing_rate(&self) -> u64 {
        match self.cc.pacing_rate(self.rtt.srtt_ns(), self.p.mss) {
            Some(r) => r,
            None => linux_rate(
                self.p.mss,
                self.cc.window(),
                self.cc.ssthresh(),
                self.flight(),
                self.rtt.srtt_ns(),
            ),
        }
    }

    /// Segments in flight as Linux's `tcp_packets_in_flight` estimates them: the SACK
    /// recovery's pipe; after a timeout, what was resent; else the outstanding segments less
    /// the duplicate ACKs counted delivered (rate-sampled flows only).
    #[inline]
    fn packets_in_flight(&self, rate: &RateSampler, loss: bool) -> u32 {
        if self.rec.in_sack_recovery() {
            self.rec.pipe(self.snd_max)
        } else if loss {
            self.snd_nxt - self.snd_una
        } else {
            self.flight().saturating_sub(rate.reno_sacked())
        }
    }

    /// Congestion window (segments), not including the fast-recovery
    /// inflation (ns-2's `cwnd_`).
    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.cc.window()
    }

    /// Slow-start threshold (segments; infinite before the first congestion
    /// signal).
    #[inline]
    pub fn ssthresh(&self) -> f64 {
        self.cc.ssthresh()
    }

    /// The congestion controller.
    pub fn controller(&self) -> &AnyController {
        &self.cc
    }

    /// The AccECN feedback state, if negotiated.
    pub fn accecn(&self) -> Option<&AccEcnSender> {
        self.accecn.as_ref()
    }

    /// Smoothed RTT (ns), `None` before the first sample.
    pub fn srtt(&self) -> Option<Ns> {
        self.rtt.srtt()
    }

    /// Current RTO (ns).
    pub fn rto(&self) -> Ns {
        self.rtt.rto()
    }

    /// True while in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.rec.in_recovery()
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
        self.flight().min(whole(self.cc.window()))
    }

    /// Segments the ACK being processed newly delivered (Linux `acked_sacked`): with SACK the
    /// scoreboard's count (cumulatively acknowledged and not SACKed before, or newly
    /// SACKed), without it the `acked` segments the cumulative ACK covers.
    #[inline]
    fn delivered(&self, acked: u32) -> u32 {
        if self.rec.kind() == RecoveryKind::Sack {
            self.rec.delivered_data()
        } else {
            acked
        }
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

    /// Linux `tcp_tso_segs`: the segments of one TSO/GSO packet at pacing rate `rate`, with
    /// the controller's floor (`min_tso_segs`) and the connection's min RTT (the rate
    /// sampler's, else RACK's; none before a sample).
    fn tso_segs(&self, rate: u64) -> u32 {
        let min_rtt = match (self.rate.as_deref(), self.rack.as_deref()) {
            (Some(r), _) if r.min_rtt != Ns::MAX => r.min_rtt,
            (_, Some(r)) => r.min_rtt(),
            _ => 0,
        };
        tso_autosize(rate, self.p.mss, min_rtt, self.cc.min_tso_segs())
    }

    /// Emits segment `seq`.
    #[inline]
    fn emit(&mut self, seq: u32, now: Ns, out: &mut Vec<Packet>) {
        let mut flags = 0;
        // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
        if seq >= self.snd_max {
            flags |= self.ect_flags;
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
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_sent(seq, now, seq < self.snd_max);
        }
        if self.paced {
            let rate = self.pacing_rate();
            let segs = self.tso_segs(rate);
            self.pace.on_send(now, self.payload(seq), rate, segs);
        }
        if let Some(r) = self.rate.as_deref() {
            // In flight with this segment (`tcp_packets_in_flight` + 1).
            let in_flight = self.packets_in_flight(r, r.in_loss()) + 1;
            let (una, out_before) = (self.snd_una, self.snd_max - self.snd_una);
            if let Some(r) = self.rate.as_deref_mut() {
                r.on_sent(seq, now, una, out_before, in_flight, seq < self.snd_max);
            }
        }
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

    /// The receive window (segments from `snd_una`): the autotuned one, else the fixed
    /// `rwnd`, else unlimited.
    #[inline]
    fn rwnd(&self) -> u32 {
        match &self.rcvbuf {
            Some(b) => b.window(self.snd_una),
            None => self.p.rwnd.unwrap_or(u32::MAX),
        }
    }

    /// The receive window the sender obeys (segments beyond `snd_una`), `None` if unlimited.
    pub fn receive_window(&self) -> Option<u32> {
        Some(self.rwnd()).filter(|&w| w != u32::MAX)
    }

    /// Sends as much as the windows and the application allow.
    pub fn send_allowed(&mut self, now: Ns, out: &mut Vec<Packet>) {
        let rwnd = self.rwnd();
        let sent_before = out.len();
        if self.rec.in_sack_recovery() {
            self.send_sack_recovery(now, rwnd, out);
        } else {
            let wnd = whole((self.cc.window() + self.rec.inflation()).min(rwnd as f64)).max(1);
            // In an ECN reduction under PRR the budget of the last ACK bounds new data, with
            // the receive window (Linux: `cwnd = in_flight + sndcnt`).
            let prr = self.cwr_prr();
            let limit = if prr { rwnd } else { wnd };
            while self.snd_nxt < self.app_limit && self.snd_nxt < self.snd_una.saturating_add(limit)
            {
                if self.paced && !self.pace.ready(now) {
                    break;
                }
                let seq = self.snd_nxt;
                // After a timeout, segments the receiver SACKed are skipped.
                let skip = self.rec.skip_sacked(seq, self.snd_max);
                if prr && !skip && !self.rec.cwr_take() {
                    break;
                }
                self.snd_nxt += 1;
                if skip {
                    continue;
                }
                self.emit(seq, now, out);
                if self.snd_nxt > self.snd_max {
                    self.snd_max = self.snd_nxt;
                }
            }
            // Linux `tcp_rate_check_app_limited`: the application has nothing more to send.
            if self.snd_nxt >= self.app_limit {
                if let Some(r) = self.rate.as_deref_mut() {
                    r.check_app_limited(self.snd_max - self.snd_una, wnd, false);
                }
            }
        }
        if self.p.extras.linux_states {
            self.cwnd_validate(out.len() > sent_before);
        }
        // RFC 6298 §5.1: arm the timer when data is outstanding.
        if self.rto_deadline.is_none() && self.snd_max > self.snd_una {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// Linux `tcp_cwnd_validate` after the transmissions of [`TcpSender::send_allowed`]
    /// (`sent`: any): the flight at the window (`tcp_packets_in_flight >= snd_cwnd`; the pipe
    /// in a SACK recovery) marks the window limited for the round, else the round's largest
    /// flight is kept. Called only if something was sent or the window is the limit.
    fn cwnd_validate(&mut self, sent: bool) {
        let packets_out = self.flight();
        let in_flight = if self.rec.in_sack_recovery() {
            self.rec.pipe(self.snd_max)
        } else {
            packets_out
        };
        let limited = in_flight >= whole(self.cc.window());
        if !(sent || limited) {
            return;
        }
        let u = &mut self.usage;
        if self.snd_una >= u.seq || limited || (!u.limited && packets_out > u.max_out) {
            *u = CwndUsage {
                limited,
                max_out: packets_out,
                seq: self.snd_max,
            };
        }
    }

    /// Linux `tcp_is_cwnd_limited`: the window limited the round, or in slow start it is
    /// below twice the round's largest flight ("ensure cwnd grows to twice what was ACKed").
    #[inline]
    fn is_cwnd_limited(&self) -> bool {
        let cwnd = whole(self.cc.window());
        self.usage.limited
            || (self.cc.window() < self.cc.ssthresh() && cwnd < 2 * self.usage.max_out)
    }

    /// SACK-based recovery transmissions (RFC 6675 §5 with FACK's pipe):
    /// while `pipe < cwnd`, the lowest lost segment, else new data.
    fn send_sack_recovery(&mut self, now: Ns, rwnd: u32, out: &mut Vec<Packet>) {
        let wnd = whole(self.cc.window()).max(1);
        self.snd_nxt = self.snd_nxt.max(self.snd_max);
        loop {
            if self.paced && !self.pace.ready(now) {
                break;
            }
            let can_send_new =
                self.snd_max < self.app_limit && self.snd_max < self.snd_una.saturating_add(rwnd);
            match self.rec.sack_next(wnd, self.snd_max, can_send_new) {
                Some(SackNext::Retransmit(h)) => {
                    self.emit(h, now, out);
                    if h == self.snd_una {
                        self.rearm_on_head_retransmit(now);
                    }
                }
                Some(SackNext::NewData) => {
                    let seq = self.snd_max;
                    self.emit(seq, now, out);
                    self.snd_max += 1;
                    self.snd_nxt = self.snd_max;
                }
                None => break,
            }
        }
    }

    /// Linux `tcp_xmit_retransmit_queue`: retransmitting the head of the retransmission queue
    /// (`snd_una`) re-arms the retransmission timer at `icsk_rto` (backed off as it is) unless
    /// the reordering timer is pending. So a sender whose retransmissions of the head keep
    /// being lost, and found lost by RACK, keeps recovering instead of timing out one RTO
    /// after the last cumulative ACK. RACK-TLP senders (the `linux` profile); RFC 6298 restarts
    /// the timer on new data acknowledged only, which the other senders keep.
    fn rearm_on_head_retransmit(&mut self, now: Ns) {
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        if r.reo_pending(self.rto_deadline) {
            return;
        }
        // `tcp_reset_xmit_timer(ICSK_TIME_RETRANS)` replaces a pending probe.
        r.timer = None;
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// The window of the ECN reduction under way is reduced by PRR, as Linux's
    /// `tcp_cwnd_reduction` does in `TCP_CA_CWR` for a controller without its own
    /// `cong_control` (not BBR, whose PRR is off, nor Prague, which grows its window during
    /// the reduction): the `linux` profile.
    #[inline]
    fn cwr_prr(&self) -> bool {
        self.in_cwr
            && self.rec.prr_on()
            && !self.rec.in_recovery()
            && self.p.cc != crate::tcp::CcKind::Prague
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
    ///
    /// The congestion controller sees every ACK ([`Controller::on_ack`],
    /// after the reactions above, with the state the ACK found) and decides
    /// from [`AckEvent::may_raise_cwnd`] whether its window law runs.
    pub fn on_ack(&mut self, now: Ns, ack_pkt: &Packet, out: &mut Vec<Packet>) {
        let ev = self.process_ack(now, ack_pkt, out);
        self.cc.on_ack(now, &ev);
        if self.rate.is_some() {
            self.rate_sample(now, &ev);
        }
        self.send_allowed(now, out);
        if self.rack.is_some() {
            self.schedule_probe(now);
        }
    }

    /// Linux `tcp_rate_gen` and `cong_control` for a controller that reads rate samples.
    #[inline(never)]
    fn rate_sample(&mut self, now: Ns, ev: &AckEvent) {
        let Some(mut r) = self.rate.take() else {
            return;
        };
        let ca_state = r.ca_state(self.snd_una, self.rec.in_recovery());
        // Newly lost: the segments retransmitted since the last sample (fast retransmit,
        // partial ACK, SACK recovery), except during the Loss state, whose timeout marked
        // everything outstanding lost at once.
        let retx = self.stats.retransmits;
        if ca_state != super::rate::CA_LOSS && retx > r.retx_seen {
            r.mark_lost((retx - r.retx_seen) as u32);
        }
        r.retx_seen = retx;
        // `tp->delivered_ce` (the BBRv3 tree's `tcp_count_delivered_ce`).
        r.delivered_ce = r.delivered_ce.wrapping_add(ev.ece_acked);
        let mut rs = r.gen(now, ev.rtt);
        rs.ca_state = ca_state;
        rs.in_flight = self.packets_in_flight(&r, ca_state == super::rate::CA_LOSS);
        rs.edt = self.pace.next;
        rs.mss = self.p.mss;
        rs.srtt = ev.srtt;
        self.cc.cong_control(now, &rs, &mut r);
        self.rate = Some(r);
    }

    /// The delivery accounting of an ACK for `ack` for the rate sampler (the sample was
    /// begun and fed the newly SACKed segments in `process_ack`), before `snd_una` moves:
    /// `tcp_rate_skb_delivered` for each cumulatively acknowledged segment and the delivered
    /// count (`tcp_count_delivered`).
    #[inline(never)]
    fn rate_on_ack(&mut self, ack: u32) {
        let Some(mut r) = self.rate.take() else {
            return;
        };
        for seq in self.snd_una..ack.max(self.snd_una) {
            r.on_delivered(seq);
        }
        if self.rec.kind() == RecoveryKind::Sack {
            r.count_delivered(self.rec.delivered_data());
        } else if ack > self.snd_una {
            r.on_reno_cumack(ack - self.snd_una, self.rec.in_recovery());
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            r.on_reno_dupack(self.snd_max - self.snd_una, self.snd_nxt);
        }
        self.rate = Some(r);
    }

    /// [`TcpSender::on_ack`] up to the controller's `on_ack`: the ECN
    /// reaction, RTT sample, loss recovery and timer; returns what the
    /// controller is told about this ACK.
    #[inline]
    fn process_ack(&mut self, now: Ns, ack_pkt: &Packet, out: &mut Vec<Packet>) -> AckEvent {
        let ack = ack_pkt.seq.min(self.snd_max);
        // AccECN (a hook): the CE count from the ACE field and option replaces ECE.
        let ce_count = self
            .accecn
            .as_mut()
            .map(|a| a.on_ack(ack_pkt, ack.saturating_sub(self.snd_una), self.p.mss));
        let ece = match ce_count {
            Some(n) => n > 0,
            None => self.ect_flags != 0 && ack_pkt.has(F_ECE),
        };
        // An AccECN option in the SACK area is not a SACK block.
        let sack_blocks = !ack_pkt.has(F_ACCECN_OPT);
        // Linux `tcp_ack`: the rate sample starts with the flight before the ACK
        // (`prior_in_flight`), then `tcp_sacktag_write_queue` hands each newly SACKed segment
        // to `tcp_rate_skb_delivered`, then `tcp_clean_rtx_queue` the cumulatively
        // acknowledged ones (`rate_on_ack`).
        let mut rate = self.rate.take();
        if let Some(r) = rate.as_deref_mut() {
            let prior = self.packets_in_flight(r, r.in_loss());
            r.begin_ack(prior);
        }
        // Without SACK blocks (an AccECN option in their place) the scoreboard still
        // drops what the cumulative ACK covers.
        let blocks = if sack_blocks { ack_pkt.sack } else { [0; 6] };
        if let Some(r) = self.rack.as_deref_mut() {
            // RACK: deliveries by SACK and by the cumulative ACK advance RACK.xmit_ts.
            let (una, max) = (self.snd_una, self.snd_max);
            self.rec.on_sack_blocks_with(ack, &blocks, una, max, |q| {
                r.on_sacked(q, now);
                if let Some(rt) = rate.as_deref_mut() {
                    rt.on_sacked(q);
                }
            });
            r.on_cum_ack(ack, now);
        } else if self.rec.kind() == RecoveryKind::Sack {
            let (una, max) = (self.snd_una, self.snd_max);
            self.rec.on_sack_blocks_with(ack, &blocks, una, max, |q| {
                if let Some(rt) = rate.as_deref_mut() {
                    rt.on_sacked(q);
                }
            });
        }
        self.rate = rate;
        if self.rate.is_some() {
            self.rate_on_ack(ack);
        }
        // The window this ACK advertises (Linux `tcp_ack_update_window`, before anything
        // is sent on it).
        if self.rcvbuf.is_some() {
            let newly = self.delivered(ack.saturating_sub(self.snd_una));
            let high = if self.rec.kind() == RecoveryKind::Sack {
                self.rec.fack().max(ack)
            } else {
                ack
            };
            let una = ack.max(self.snd_una);
            if let Some(b) = self.rcvbuf.as_mut() {
                b.on_delivered(una, high, newly);
            }
        }
        // End of the ECN reduction period: something above the recovery
        // point is acknowledged (Linux `tcp_fastretrans_alert`, TCP_CA_CWR:
        // "CWR is to be held something *above* high_seq is ACKed").
        if self.in_cwr && ack > self.ecn_recover {
            self.in_cwr = false;
            // (Prague grows its window during CWR, see `cc`.)
            debug_assert!(
                self.p.cc == crate::tcp::CcKind::Prague
                    || self.rate.is_some()
                    || self.cc.window() == self.cc.ssthresh()
            );
        }
        // Linux `in_ack_event` (DCTCP's alpha update), before the ECN reaction.
        let una = ack.max(self.snd_una);
        let new_bytes = self.bytes_before(una) - self.bytes_before(self.snd_una);
        let ece_new_bytes = match ce_count {
            Some(n) => new_bytes.min(n as u64 * self.p.mss as u64),
            None if ece => new_bytes,
            None => 0,
        };
        self.cc
            .in_ack_event(una, self.snd_max, new_bytes, ece_new_bytes);
        // RFC 3168 §6.1.2: react to ECE at most once per window of data.
        if ece && !self.rec.in_recovery() && ack > self.ecn_recover {
            let flight = self.flight_for_ssthresh();
            let prior_cwnd = whole(self.cc.window());
            self.cc.on_congestion(now, Congestion::Ecn, flight);
            self.ecn_recover = self.snd_max;
            self.in_cwr = true;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
            self.note_reduction(now);
            if self.cwr_prr() {
                self.rec.cwr_begin(prior_cwnd);
            }
        }
        // Linux `tcp_cong_control`: in the reduction period `tcp_cwnd_reduction` (PRR) sets
        // what this ACK may send, the ACK carrying the ECE included.
        if self.cwr_prr() {
            let ssthresh = whole(self.cc.ssthresh());
            self.rec.cwr_on_ack(ssthresh, self.snd_max);
        }
        // Linux `tcp_cong_control`: no growth while in the reduction period
        // (this includes the ACK carrying the ECE) or in fast recovery.
        let state = if self.rec.in_recovery() {
            CaState::Recovery
        } else if self.in_cwr {
            CaState::Cwr
        } else {
            CaState::Open
        };
        let mut acked = 0;
        let mut acked_bytes = 0;
        let mut rtt = None;
        if ack > self.snd_una {
            acked = ack - self.snd_una;
            // RFC 6298 §5.3: restart the timer on new data acknowledged
            // (except for some partial ACKs, see `Recovery::on_new_ack`).
            let mut restart_timer = true;
            self.in_rto_backoff = false;
            // Karn's rule (RFC 6298 §3), or with timestamps every ACK of new data
            // (RFC 7323 §4.3; Linux `tcp_ack_update_rtt` with `tcp_rtt_tsopt_us`).
            if !ack_pkt.has(F_RETX) || self.p.extras.timestamps {
                let r = now.saturating_sub(ack_pkt.ts);
                self.rtt.sample(r as f64);
                self.stats.rtt_sum += r as f64;
                self.stats.rtt_count += 1;
                rtt = Some(r);
                if let Some(rk) = self.rack.as_deref_mut() {
                    rk.on_rtt(r);
                }
                if let Some(b) = self.rcvbuf.as_mut() {
                    b.on_rtt(r, self.p.extras.timestamps);
                }
            }
            acked_bytes = self.bytes_before(ack) - self.bytes_before(self.snd_una);
            self.stats.bytes_acked += acked_bytes;
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if let Some(b) = self.rcvbuf.as_mut() {
                b.on_ack(now, ack);
            }
            match self.rec.on_new_ack(ack, acked, self.cc.window()) {
                NewAck::Open | NewAck::SackContinue => {}
                NewAck::Exit => {
                    self.cc.on_recovery_end(now);
                    if let Some(r) = self.rate.as_deref_mut() {
                        r.on_recovery_end();
                    }
                }
                NewAck::Partial { restart_timer: r } => {
                    let seq = self.snd_una;
                    self.emit(seq, now, out);
                    // Linux re-arms the timer on every ACK of new data (`tcp_clean_rtx_queue`
                    // sets `FLAG_SET_XMIT_TIMER`): RFC 6582's "Slow-but-Steady" variant.
                    restart_timer = r || self.p.extras.linux_states;
                }
            }
            // RFC 6298 §5.2 / §5.3.
            if self.snd_una == self.snd_max {
                self.rto_deadline = None;
            } else if restart_timer {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
            if Some(self.snd_una) == self.total_segs && self.done_at.is_none() {
                self.done_at = Some(now);
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una && self.rec.on_dup_ack(ack) {
            self.fast_retransmit(now, out);
        }
        if self.rack.is_some() {
            self.rack_on_ack(now, ack, acked, out);
        }
        // RFC 6937: this ACK's share of the recovery's transmissions.
        if self.rec.prr_on() && self.rec.in_sack_recovery() {
            let ssthresh = whole(self.cc.ssthresh());
            self.rec.prr_on_ack(ssthresh, self.snd_max);
        }
        let (ece_acked, ece_bytes) = match ce_count {
            Some(n) => (n.min(acked), acked_bytes.min(n as u64 * self.p.mss as u64)),
            None if ece => (acked, acked_bytes),
            None => (0, 0),
        };
        // The newest segment's RTT (Linux `ca_rtt_us`): without the receiver's hold time
        // when the AccECN option reports it.
        let ca_rtt = match (rtt, accecn::option(ack_pkt)) {
            (Some(r), Some([.., hold_us])) => Some(r.saturating_sub(hold_us as Ns * 1000)),
            (r, _) => r,
        };
        let delivered = self.delivered(acked);
        AckEvent {
            ack: self.snd_una,
            snd_max: self.snd_max,
            acked,
            delivered,
            acked_bytes,
            ece,
            ece_acked,
            ece_bytes,
            rtt,
            ca_rtt,
            srtt: self.rtt.srtt_ns(),
            state,
            cwnd_limited: !self.p.extras.linux_states || self.is_cwnd_limited(),
        }
    }

    /// RACK-TLP on an ACK (see [`super::rack`]): the probe's outcome (Linux
    /// `tcp_process_tlp_ack`), loss detection (`tcp_rack_mark_lost`), entry into recovery when
    /// a loss is marked (`tcp_time_to_recover`: "the loss is proven") and the reordering
    /// timer.
    fn rack_on_ack(&mut self, now: Ns, ack: u32, acked: u32, out: &mut Vec<Packet>) {
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        if let Some(high) = r.tlp_high_seq {
            if !r.tlp_retrans && ack >= high {
                r.tlp_high_seq = None;
            } else if r.tlp_retrans && ack > high && acked > 0 {
                // The retransmitted probe repaired a loss: reduce once (no DSACK here to
                // tell a needless probe).
                r.tlp_high_seq = None;
                let flight = self.flight_for_ssthresh();
                self.cc.on_congestion(now, Congestion::Loss, flight);
                self.ecn_recover = self.snd_max;
                self.note_reduction(now);
            }
        }
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        let reo = r.detect_loss(now, self.rec.scoreboard_mut(), false);
        if self.rec.lost_out() > 0 && self.rec.may_enter_rack(ack) {
            self.fast_retransmit(now, out);
        }
        if let (Some(w), Some(r)) = (reo, self.rack.as_deref_mut()) {
            let d = now + w;
            self.rto_deadline = Some(d);
            r.timer = Some((d, true));
        }
    }

    /// After an ACK: arm the retransmission timer for a tail-loss probe (Linux
    /// `tcp_schedule_loss_probe`) if one may be sent, unless the reordering timer is pending.
    fn schedule_probe(&mut self, now: Ns) {
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        if r.reo_pending(self.rto_deadline) {
            return;
        }
        r.timer = None;
        if self.snd_max == self.snd_una
            || self.rec.in_recovery()
            || self.in_rto_backoff
            || r.tlp_high_seq.is_some()
        {
            return;
        }
        let left = self
            .rto_deadline
            .map_or(self.rtt.rto(), |d| d.saturating_sub(now));
        let flight = self.snd_max - self.snd_una;
        let d = now + Rack::pto(self.rtt.srtt(), flight, left, self.p.min_rto);
        self.rto_deadline = Some(d);
        r.timer = Some((d, false));
    }

    /// The retransmission timer fired for RACK-TLP (`reo`: the reordering timer, Linux
    /// `tcp_rack_reo_timeout`; else the probe, `tcp_send_loss_probe`).
    fn on_rack_timer(&mut self, now: Ns, reo: bool, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        if self.snd_una == self.snd_max {
            return;
        }
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        if reo {
            // Linux `tcp_rack_reo_timeout`: what was marked lost (a first loss, or a lost
            // retransmission) leaves the flight; recovery begins if it may, and the marked
            // segments are sent under PRR.
            let pipe0 = self.rec.scoreboard_mut().pipe(self.snd_max);
            let wait = r.detect_loss(now, self.rec.scoreboard_mut(), true);
            let pipe1 = self.rec.scoreboard_mut().pipe(self.snd_max);
            if pipe1 < pipe0 {
                if self.rec.may_enter_rack(self.snd_una) {
                    self.fast_retransmit(now, out);
                }
                let ssthresh = whole(self.cc.ssthresh());
                let snd_max = self.snd_max;
                self.rec
                    .prr_on_reo_timeout(pipe0 - pipe1, ssthresh, snd_max);
                self.send_allowed(now, out);
            }
            if let (Some(w), Some(r)) = (wait, self.rack.as_deref_mut()) {
                let d = now + w;
                self.rto_deadline = Some(d);
                r.timer = Some((d, true));
                return;
            }
        } else if r.tlp_high_seq.is_none() {
            let rwnd = self.rwnd();
            let new = self.snd_nxt == self.snd_max
                && self.snd_max < self.app_limit
                && self.snd_max < self.snd_una.saturating_add(rwnd);
            // A new segment (even beyond cwnd), else the highest one again.
            let seq = if new { self.snd_max } else { self.snd_max - 1 };
            self.emit(seq, now, out);
            if new {
                self.snd_max += 1;
                self.snd_nxt = self.snd_max;
            }
            if let Some(r) = self.rack.as_deref_mut() {
                r.tlp_retrans = !new;
                r.tlp_high_seq = Some(self.snd_max);
            }
        }
        // Linux `tcp_rearm_rto`.
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// Fast retransmit and entry into fast recovery (RFC 5681 §3.2 steps
    /// 2–3, RFC 6582 §3.2 step 2, RFC 6675 §5); the duplicate-ACK rules are
    /// [`Recovery::on_dup_ack`]'s.
    fn fast_retransmit(&mut self, now: Ns, out: &mut Vec<Packet>) {
        if let Some(r) = self.rack.as_deref_mut() {
            // Linux `tcp_init_cwnd_reduction`: the probe episode ends.
            r.tlp_high_seq = None;
        }
        // Recovery supersedes CWR (Linux `tcp_enter_recovery` from TCP_CA_CWR); the window
        // is held by the recovery instead. Linux goes on with the reduction under way
        // (`linux_states`); otherwise the loss is a congestion response of its own, which
        // is also this window's response to ECN (RFC 3168 §6.1.2).
        let from_cwr = self.in_cwr && self.p.extras.linux_states;
        if !from_cwr {
            let flight = self.flight_for_ssthresh();
            self.cc.on_congestion(now, Congestion::Loss, flight);
            self.ecn_recover = self.snd_max;
            self.note_reduction(now);
        }
        self.in_cwr = false;
        self.stats.fast_retransmits += 1;
        self.rto_deadline = Some(now + self.rtt.rto());
        let retransmit = if from_cwr {
            self.rec.enter_from_cwr(self.ecn_recover)
        } else {
            self.rec.enter(self.snd_max)
        };
        if retransmit {
            let seq = self.snd_una;
            self.emit(seq, now, out);
        }
    }

    /// The retransmission timer expired at `now` (caller checked the
    /// deadline): RFC 6298 §5.4–5.6 and RFC 5681 §3.1 equation (4)/(5).
    pub fn on_rto(&mut self, now: Ns, out: &mut Vec<Packet>) {
        if let Some(r) = self.rack.as_deref_mut() {
            match r.timer.take() {
                Some((d, reo)) if Some(d) == self.rto_deadline => {
                    return self.on_rack_timer(now, reo, out);
                }
                _ => r.tlp_high_seq = None,
            }
        }
        self.rto_deadline = None;
        if self.snd_una == self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        if let Some(r) = self.rate.as_deref_mut() {
            r.on_timeout(self.snd_max, self.snd_max - self.snd_una);
        }
        let flight = self.flight_for_ssthresh();
        // Linux `tcp_enter_loss` recomputes ssthresh unless a reduction (CWR or Recovery)
        // whose `high_seq` is not yet acknowledged already made it in this window.
        let reduced = self.p.extras.linux_states
            && (self.in_cwr || self.rec.in_recovery())
            && self.ecn_recover > self.snd_una;
        let repeated = self.in_rto_backoff || reduced;
        self.cc
            .on_congestion(now, Congestion::Timeout { repeated }, flight);
        self.in_rto_backoff = true;
        // Recovery abandoned; RFC 6582 §3.2 step 1 after a timeout: do not
        // fast-retransmit on duplicates of data sent before it.
        self.rec.on_timeout(self.snd_max);
        // Linux `tcp_enter_loss`: TCP_CA_Loss replaces CWR; slow start follows.
        self.in_cwr = false;
        self.ecn_recover = self.snd_max;
        self.note_reduction(now);
        // Go back N (skipping SACKed segments, see `send_allowed`).
        self.snd_nxt = self.snd_una;
        // RFC 6298 §5.5: back off.
        self.rtt.backoff();
        self.send_allowed(now, out);
        if let Some(r) = self.rate.as_deref_mut() {
            r.retx_seen = self.stats.retransmits;
        }
        self.rto_deadline = Some(now + self.rtt.rto());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{F_ACK, F_CE};
    use crate::tcp::{CcKind, TcpReceiver, DEFAULT_MIN_RTO};

    /// Replaces the controller by one of the same kind with the given
    /// window and threshold.
    fn set_window(s: &mut TcpSender, cwnd: f64, ssthresh: f64) {
        s.cc = AnyController::with_window(s.cc.kind(), cwnd, ssthresh);
    }

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
            prr: false,
            accecn: false,
            rtt_scaling: false,
            pacing: false,
            extras: Default::default(),
        }
    }

    /// The `linux` profile's loss recovery on top of [`params`]: SACK, PRR, timestamps, RACK.
    fn sack_rack_prr(cc: CcKind) -> TcpParams {
        TcpParams {
            sack: true,
            prr: true,
            extras: crate::tcp::TcpExtras {
                timestamps: true,
                rack: true,
                ..Default::default()
            },
            ..params(cc)
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
        set_window(&mut s, 20.0, f64::INFINITY);
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 20);
        out.clear();
        for _ in 0..3 {
            s.on_ack(10, &ack(0, 0), &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh(), 10.0);
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
        assert_eq!(s.cwnd(), 10.0);
        assert_eq!(s.stats.retransmits, 2);
        assert_eq!(s.stats.fast_retransmits, 1);
    }

    /// The `linux` profile's receive window (`TcpExtras::rcvbuf`, [`super::rcvbuf`]): with a
    /// window of 100 segments the sender stops at the receiver's initial 64 KiB (68 segments of
    /// 960 bytes); a fixed `rwnd` replaces it (30); without the option, the window rules (100).
    #[test]
    fn receive_window_bounds_the_flight() {
        use crate::tcp::TcpExtras;
        let auto = TcpExtras {
            rcvbuf: true,
            ..TcpExtras::default()
        };
        for (extras, rwnd, want) in [
            (auto, None, 68),
            (auto, Some(30), 30),
            (TcpExtras::default(), None, 100),
        ] {
            let p = TcpParams {
                extras,
                rwnd,
                ..params(CcKind::Newreno)
            };
            let mut s = TcpSender::new(0, 1, p, None);
            set_window(&mut s, 100.0, f64::INFINITY);
            let mut out = Vec::new();
            s.send_allowed(0, &mut out);
            assert_eq!(out.len(), want, "{extras:?} rwnd {rwnd:?}");
        }
    }

    /// Prague paces itself under the `linux` profile (`TcpExtras::prague_pacing`, Linux
    /// `tcp_prague`'s `SK_PACING_NEEDED`) without `pacing = true`, at `prague_update_pacing_rate`:
    /// after the ACK of segment 0 at 100 ms (cwnd 11 in slow start, ssthresh infinite, so
    /// doubled) 2 x 11 x 960 bytes / 100 ms = 211 200 bytes/s: the two segments the window
    /// allows leave at once as one GSO packet of 2 (`tcp_min_tso_segs`), and the next may
    /// leave 2 x 4 545 454 ns later. Under `classic` (no extras) it is unpaced: both leave at
    /// once and nothing is scheduled.
    #[test]
    fn prague_paces_itself_under_the_linux_profile() {
        use crate::tcp::TcpExtras;
        let p = TcpParams {
            ecn: true,
            extras: TcpExtras {
                prague_pacing: true,
                ..TcpExtras::default()
            },
            ..params(CcKind::Prague)
        };
        let mut s = TcpSender::new(0, 1, p, None);
        assert!(s.paced());
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 10, "no rate before an RTT sample");
        out.clear();
        let t = 100_000_000;
        s.on_ack(t, &ack(1, 0), &mut out);
        let AnyController::Prague(c) = s.controller() else {
            panic!("not prague")
        };
        assert_eq!(c.prague_pacing_rate(t, 960), Some(211_200));
        assert_eq!(s.pacing_rate(), 211_200);
        assert_eq!(out.len(), 2);
        assert_eq!(s.pace.next, t + 2 * 4_545_454);
        let mut u = TcpSender::new(
            0,
            1,
            TcpParams {
                ecn: true,
                ..params(CcKind::Prague)
            },
            None,
        );
        assert!(!u.paced());
        let mut out = Vec::new();
        u.send_allowed(0, &mut out);
        out.clear();
        u.on_ack(t, &ack(1, 0), &mut out);
        assert_eq!(out.len(), 2);
    }

    /// Pacing (`pacing = true`), worked by hand: without an RTT sample the initial window
    /// leaves at once (Linux's initial `sk_pacing_rate` is unlimited). The ACK of segment 0
    /// at 100 ms gives SRTT 100 ms and cwnd 11 in slow start, so Linux's rate is 200 % x 11 x
    /// 960 bytes / 100 ms = 211 200 bytes/s, one 960-byte segment per 4 545 454 ns. The two
    /// segments the window allows leave at once, one GSO packet of `tcp_min_tso_segs` = 2
    /// (`tcp_tso_autosize`: 211 200 >> 10 = 206 bytes is under one segment), and the next
    /// packet may leave two segments' time later. The ACK of segment 1 at 101 ms opens the
    /// window by two: the sender waits for that time with one timer, and when it fires both
    /// leave, again as one burst, and nothing more waits.
    #[test]
    fn paced_sender_spaces_segments_with_one_timer() {
        use crate::tcp::pacing::NEVER;
        let p = TcpParams {
            pacing: true,
            ..params(CcKind::Newreno)
        };
        let mut s = TcpSender::new(0, 1, p, None);
        assert!(s.paced());
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        let t = 100_000_000;
        s.on_ack(t, &ack(1, 0), &mut out);
        assert_eq!(s.pacing_rate(), 2 * 11 * 960 * 10);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].seq, out[1].seq), (10, 11));
        let slot = t + 2 * 4_545_454;
        assert_eq!((s.pace.next, s.pace.wait), (slot, NEVER), "window-limited");
        out.clear();
        s.on_ack(t + 1_000_000, &ack(2, 0), &mut out);
        assert!(out.is_empty(), "the next burst waits for its slot");
        assert_eq!(s.pace.wait, slot);
        assert_eq!(s.pace.arm(), Some(slot));
        assert_eq!(s.pace.arm(), None, "one pending timer");
        // An attempt before the time sends nothing.
        s.send_allowed(t + 2_000_000, &mut out);
        assert!(out.is_empty());
        assert!(s.pace.fire(slot));
        s.send_allowed(slot, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].seq, out[1].seq), (12, 13));
        assert_eq!(
            s.pace.wait, NEVER,
            "window-limited, not waiting for the pacer"
        );
        assert_eq!(s.pace.arm(), None);
        // Unpaced flows never wait.
        let mut u = TcpSender::new(0, 1, params(CcKind::Newreno), None);
        assert!(!u.paced());
        u.send_allowed(0, &mut out);
        u.on_ack(t, &ack(1, 0), &mut out);
        assert_eq!(u.pace.arm(), None);
        assert_eq!(out.len(), 2 + 10 + 2);
    }

    /// Reno leaves recovery on the partial ACK instead.
    #[test]
    fn reno_exits_on_partial_ack() {
        let mut s = TcpSender::new(0, 1, params(CcKind::Reno), None);
        set_window(&mut s, 20.0, f64::INFINITY);
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
        assert_eq!(s2.cwnd(), 1.0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 1);
    }

    /// A sender with parameters `p` that has sent segments 0-19 at cwnd = ssthresh = 20, and
    /// its (empty) output buffer.
    fn twenty_out(p: TcpParams) -> (TcpSender, Vec<Packet>) {
        let mut s = TcpSender::new(0, 1, p, None);
        set_window(&mut s, 20.0, 20.0);
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 20);
        out.clear();
        (s, out)
    }

    /// Reference: Linux `tcp_cong_control` -> `tcp_cwnd_reduction` in `TCP_CA_CWR`
    /// (net/ipv4/tcp_input.c), worked by hand. 20 segments out at cwnd 20 with SACK and PRR
    /// (the `linux` profile); the ACK of segment 0 carries ECE: ssthresh 10, `prior_cwnd` 20.
    /// That ACK delivered one segment with 19 in flight (> ssthresh): `sndcnt =
    /// ceil(1 * 10 / 20) - 0 = 1`, so segment 20 goes out at once and carries CWR (without
    /// PRR the sender waits until the flight is below 10: nothing for 9 ACKs). Each later
    /// ACK delivers one: `ceil(k * 10 / 20) - prr_out`, one segment every second ACK, to
    /// ACK 17. ACK 19 leaves a flight of 10 = ssthresh, so the bound takes over
    /// (`min(ssthresh - pipe, max(prr_delivered - prr_out, 1) + 1)`): 0 then, 1 on ACK 20,
    /// which leaves 9. ACK 21 (above the recovery point 20) ends the period from cwnd =
    /// ssthresh = 10 (and grows it by 1/10). The same sender without PRR sends the same ten
    /// segments, but none before ACK 11.
    #[test]
    fn ecn_cwr_period_is_paced_by_prr_as_linux() {
        let ece = |seq| Packet {
            flags: F_ACK | F_ECE,
            ..ack(seq, 0)
        };
        let mut sent_at = Vec::new();
        for prr in [true, false] {
            let (mut s, mut out) = twenty_out(TcpParams {
                ecn: true,
                prr,
                ..sack_rack_prr(CcKind::Newreno)
            });
            let mut when = Vec::new();
            for a in 1..=20u32 {
                let pkt = if a == 1 { ece(a) } else { ack(a, 0) };
                s.on_ack(10 + a as Ns, &pkt, &mut out);
                assert!(s.in_cwr(), "ack {a} is not above the recovery point 20");
                when.extend(out.drain(..).map(|p| (a, p.seq, p.has(F_CWR))));
            }
            assert_eq!(s.ssthresh(), 10.0);
            s.on_ack(40, &ack(21, 0), &mut out);
            assert!(!s.in_cwr());
            assert!(
                (s.cwnd() - 10.1).abs() < 1e-12,
                "from 10, grows: {}",
                s.cwnd()
            );
            sent_at.push(when);
        }
        let acks = |v: &[(u32, u32, bool)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(
            sent_at[0][0],
            (1, 20, true),
            "PRR: CWR goes out on the ECE's ACK"
        );
        assert_eq!(acks(&sent_at[0]), [1, 3, 5, 7, 9, 11, 13, 15, 17, 20]);
        assert_eq!(
            sent_at[1][0],
            (11, 20, true),
            "without PRR: once the flight is below 10"
        );
        assert_eq!(acks(&sent_at[1]), [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
        for v in &sent_at {
            let seqs: Vec<u32> = v.iter().map(|x| x.1).collect();
            assert_eq!(seqs, (20..30).collect::<Vec<_>>());
            assert!(v[1..].iter().all(|x| !x.2), "only the first carries CWR");
        }
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
        let (mut s, mut out) = twenty_out(TcpParams {
            ecn: true,
            ..params(CcKind::Newreno)
        });
        let ece = |seq| Packet {
            flags: F_ACK | F_ECE,
            ..ack(seq, 0)
        };
        s.on_ack(10, &ece(1), &mut out);
        assert!(s.in_cwr());
        assert_eq!((s.cwnd(), s.ssthresh()), (10.0, 10.0));
        assert_eq!(s.stats.ecn_reductions, 1);
        assert!(out.is_empty(), "19 in flight, window 10: nothing to send");
        for a in 2..=20 {
            let pkt = if a == 15 { ece(a) } else { ack(a, 0) };
            s.on_ack(10 + a as Ns, &pkt, &mut out);
            assert!(s.in_cwr(), "ack {a} is not above the recovery point 20");
            assert_eq!(s.cwnd(), 10.0, "no growth in CWR (ack {a})");
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
        assert!((s.cwnd() - 10.1).abs() < 1e-12, "grows again: {}", s.cwnd());
        s.on_ack(41, &ack(22, 0), &mut out);
        assert!((s.cwnd() - (10.1 + 1.0 / 10.1)).abs() < 1e-12);
        // A new ECE above the old recovery point starts a new period.
        s.on_ack(42, &ece(23), &mut out);
        assert!(s.in_cwr());
        assert_eq!(s.stats.ecn_reductions, 2);
    }

    /// The linux profile's sender, by hand. Timestamps (RFC 7323 §4, Linux
    /// `tcp_rtt_tsopt_us`): the ACK of a retransmission echoes the retransmission's time and
    /// gives a sample, which clears the timeout's backoff (Karn's rule gives none). TLP
    /// (RFC 8985 §7, `tcp_schedule_loss_probe` / `tcp_send_loss_probe`): after an ACK with
    /// 10 segments out and SRTT 100 ms the timer is armed at 2 x 100 + 2 = 202 ms (below the
    /// 300 ms RTO); when it fires one new segment goes out although the window is full, then
    /// the RTO is armed; the probe's SACK lets RACK mark the tail (sent 202 ms before the
    /// probe) lost and recovery retransmits it without a timeout.
    #[test]
    fn linux_timestamps_and_tail_loss_probe() {
        use crate::tcp::TcpExtras;
        const MS: Ns = 1_000_000;
        let linux = |cc| TcpParams {
            sack: true,
            extras: TcpExtras {
                timestamps: true,
                rack: true,
                ..TcpExtras::default()
            },
            ..params(cc)
        };
        // Timestamps: segment 0 times out, its retransmission is acknowledged.
        for (p, sample) in [
            (params(CcKind::Newreno), false),
            (linux(CcKind::Newreno), true),
        ] {
            let mut s = TcpSender::new(0, 1, p, None);
            let mut out = Vec::new();
            s.send_allowed(0, &mut out);
            s.on_rto(1000 * MS, &mut out);
            let rto = s.rto();
            let retx = out.last().unwrap().ts;
            s.on_ack(
                1100 * MS,
                &Packet {
                    flags: F_ACK | F_RETX,
                    ..ack(10, retx)
                },
                &mut out,
            );
            assert_eq!(s.srtt().is_some(), sample);
            if sample {
                assert_eq!(s.srtt(), Some(100 * MS));
            } else {
                assert_eq!(s.rto(), rto, "Karn: no sample, backoff kept");
            }
        }
        // TLP: window 10, SRTT 100 ms.
        let mut s = TcpSender::new(0, 1, linux(CcKind::Newreno), None);
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        s.on_ack(100 * MS, &ack(1, 0), &mut out);
        // cwnd 11 after slow start: segments 10, 11 went out; 1..11 outstanding.
        assert_eq!((s.snd_una, s.snd_max), (1, 12));
        assert_eq!(s.rto_deadline, Some(100 * MS + 202 * MS));
        out.clear();
        s.on_rto(302 * MS, &mut out);
        assert_eq!(out.len(), 1, "one probe");
        assert_eq!((out[0].seq, out[0].has(F_RETX)), (12, false));
        assert_eq!(s.rto_deadline, Some(302 * MS + s.rto()));
        assert_eq!(s.stats.timeouts, 0);
        // The probe is SACKed (segments 1..11 were lost): RACK marks them lost at once.
        out.clear();
        let probe_ack = Packet {
            sack: [11, 12, 0, 0, 0, 0],
            ..ack(1, 302 * MS)
        };
        s.on_ack(402 * MS, &probe_ack, &mut out);
        assert!(s.in_recovery());
        assert!(out.iter().any(|p| p.seq == 1 && p.has(F_RETX)), "{out:?}");
        assert_eq!((s.stats.timeouts, s.stats.fast_retransmits), (0, 1));
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
        set_window(&mut s, 20.0, 20.0);
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
        let w = s.cwnd();
        s.on_ack(40, &ack(21, 0), &mut out);
        assert!(s.cwnd() > w);
    }

    /// The parameters of [`params`] with Linux's congestion states (`linux_states`) on or off.
    fn states(cc: CcKind, on: bool) -> TcpParams {
        TcpParams {
            extras: crate::tcp::TcpExtras {
                linux_states: on,
                ..Default::default()
            },
            ..params(cc)
        }
    }

    /// Linux `tcp_enter_recovery` from `TCP_CA_CWR` skips `tcp_init_cwnd_reduction`
    /// (`tcp_in_cwnd_reduction`), worked by hand: 20 out at cwnd 20, the ACK of segment 0
    /// carries ECE (ssthresh 10), then three duplicates of it. With Linux's states the
    /// recovery keeps ssthresh 10 and the ECN reduction's recovery point 20 (the ACK of 20
    /// ends it), one reduction in all; without, the loss reduces again (ssthresh 5, half the
    /// window of 10) and counts as a second reduction.
    #[test]
    fn a_loss_during_cwr_continues_the_reduction_as_linux() {
        for (on, ssthresh, reductions) in [(true, 10.0, 1), (false, 5.0, 2)] {
            let (mut s, mut out) = twenty_out(TcpParams {
                ecn: true,
                ..states(CcKind::Newreno, on)
            });
            let ece = Packet {
                flags: F_ACK | F_ECE,
                ..ack(1, 0)
            };
            s.on_ack(10, &ece, &mut out);
            assert_eq!((s.in_cwr(), s.ssthresh()), (true, 10.0));
            for _ in 0..3 {
                s.on_ack(20, &ack(1, 0), &mut out);
            }
            assert!(s.in_recovery() && !s.in_cwr());
            assert_eq!(s.ssthresh(), ssthresh, "linux_states {on}");
            assert_eq!(s.stats.fast_retransmits, 1);
            let gap = s.stats.min_reduction_gap;
            assert_eq!(gap != u64::MAX, reductions == 2, "{gap}");
            s.on_ack(30, &ack(20, 0), &mut out);
            assert!(!s.in_recovery(), "the recovery point is 20");
        }
    }

    /// Linux `tcp_enter_loss`: "Reduce ssthresh if it has not yet been made inside this
    /// window". 20 out at cwnd 20, segment 0 lost: three duplicates enter recovery with
    /// ssthresh 10; the timer then fires inside it (`high_seq` 20 not acknowledged): Linux's
    /// states keep 10; without them the timeout halves the flight again (window 10 in
    /// recovery: 5).
    #[test]
    fn a_timeout_inside_a_recovery_keeps_its_ssthresh_as_linux() {
        for (on, want) in [(true, 10.0), (false, 5.0)] {
            let (mut s, mut out) = twenty_out(states(CcKind::Newreno, on));
            for _ in 0..3 {
                s.on_ack(10, &ack(0, 0), &mut out);
            }
            assert!(s.in_recovery());
            assert_eq!(s.ssthresh(), 10.0);
            s.on_rto(1_000_000_000, &mut out);
            assert_eq!((s.ssthresh(), s.cwnd()), (want, 1.0), "linux_states {on}");
        }
    }

    /// RFC 6582 §3.2 step 5 leaves the timer's reset on partial ACKs to the implementation:
    /// the `classic` sender resets it on the first only ("Impatient"), Linux on every ACK of
    /// new data (`tcp_clean_rtx_queue`'s `FLAG_SET_XMIT_TIMER`, "Slow-but-Steady"). 20 out,
    /// segments 0, 5 and 10 lost: recovery on three duplicates, partial ACKs of 5 and 10.
    #[test]
    fn partial_acks_rearm_the_timer_as_linux() {
        for on in [true, false] {
            let (mut s, mut out) = twenty_out(states(CcKind::Newreno, on));
            for _ in 0..3 {
                s.on_ack(10, &ack(0, 0), &mut out);
            }
            s.on_ack(20, &ack(5, 0), &mut out);
            let first = s.rto_deadline;
            assert_eq!(first, Some(20 + s.rto()), "the first partial ACK");
            s.on_ack(30, &ack(10, 0), &mut out);
            assert!(s.in_recovery());
            let want = if on { Some(30 + s.rto()) } else { first };
            assert_eq!(s.rto_deadline, want, "linux_states {on}");
        }
    }

    /// Linux `tcp_is_cwnd_limited`, `tcp_cwnd_validate`: a sender held back by a receive
    /// window of 5 segments with cwnd 10 in slow start sends 5; their ACKs do not grow the
    /// window (10 is not below twice the largest flight, 5); without Linux's states each ACK
    /// adds a segment (15). With the receive window at 50 the window is the limit and grows
    /// (10 ACKs of the 10 sent: 20).
    #[test]
    fn the_window_grows_only_while_it_is_the_limit_as_linux() {
        for (on, rwnd, want) in [(true, 5, 10.0), (false, 5, 15.0), (true, 50, 20.0)] {
            let mut s = TcpSender::new(
                0,
                1,
                TcpParams {
                    rwnd: Some(rwnd),
                    ..states(CcKind::Newreno, on)
                },
                None,
            );
            let mut out = Vec::new();
            s.send_allowed(0, &mut out);
            let sent = out.len() as u32;
            assert_eq!(sent, rwnd.min(10));
            for a in 1..=sent {
                s.on_ack(10 + a as Ns, &ack(a, 0), &mut out);
            }
            assert_eq!(s.cwnd(), want, "linux_states {on}, rwnd {rwnd}");
        }
    }

    /// Linux grows the window by `acked_sacked` (`tcp_cong_avoid(sk, ack, acked_sacked)`):
    /// 10 out in slow start with SACK and Linux's Reno arithmetic; segment 0 arrives after
    /// 1 and 2 (their ACKs duplicate 0 and SACK them, too few to recover). The cumulative
    /// ACK of 3 delivers only segment 0: the window grows 10 to 11, not by the 3 segments the
    /// ACK covers (13).
    #[test]
    fn a_cumulative_ack_over_sacked_segments_grows_the_window_by_what_it_delivers() {
        let p = TcpParams {
            sack: true,
            extras: crate::tcp::TcpExtras {
                linux_window: true,
                linux_states: true,
                ..Default::default()
            },
            ..params(CcKind::Reno)
        };
        let mut s = TcpSender::new(0, 1, p, None);
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        assert_eq!(out.len(), 10);
        for (t, hi) in [(10, 2), (11, 3)] {
            let dup = Packet {
                sack: [1, hi, 0, 0, 0, 0],
                ..ack(0, 0)
            };
            s.on_ack(t, &dup, &mut out);
        }
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd(), 10.0);
        s.on_ack(12, &ack(3, 0), &mut out);
        assert_eq!(s.cwnd(), 11.0);
    }

    /// A sender behind a drop-tail bottleneck, in 1 ms steps: the bottleneck forwards one
    /// packet per ms from a queue of `cap` packets; data reaches it and ACKs come back 5 ms
    /// after being sent (base RTT 11 ms, BDP 11 packets). Timers (RTO, RACK, pacing) fire at
    /// the step they fall in. `check` sees the sender after each ACK with whether that ACK
    /// moved `snd_una`.
    fn bottleneck(s: &mut TcpSender, ms: u64, cap: usize, check: impl FnMut(&TcpSender, bool)) {
        bottleneck_dropping(s, ms, cap, |_| false, check);
    }

    /// [`bottleneck`], dropping the data packets `drop` picks before the queue.
    fn bottleneck_dropping(
        s: &mut TcpSender,
        ms: u64,
        cap: usize,
        mut drop: impl FnMut(&Packet) -> bool,
        mut check: impl FnMut(&TcpSender, bool),
    ) {
        use std::collections::VecDeque;
        const MS: Ns = 1_000_000;
        let mut rcv = TcpReceiver::new(0, 0, false, true);
        let (mut to_q, mut q, mut to_s) = (VecDeque::new(), VecDeque::new(), VecDeque::new());
        let (mut out, mut acks) = (Vec::new(), Vec::new());
        for t in 0..ms {
            let now = t * MS;
            while to_s.front().is_some_and(|&(at, _)| at <= now) {
                let (_, a): (Ns, Packet) = to_s.pop_front().unwrap();
                let una = s.snd_una;
                s.on_ack(now, &a, &mut out);
                check(s, s.snd_una > una);
            }
            if s.rto_deadline.is_some_and(|d| d <= now) {
                s.on_rto(now, &mut out);
            }
            if s.pace.wait <= now {
                s.pace.wait = crate::tcp::pacing::NEVER;
                s.send_allowed(now, &mut out);
            }
            if t == 0 {
                s.send_allowed(now, &mut out);
            }
            to_q.extend(out.drain(..).map(|p| (now + 5 * MS, p)));
            while to_q.front().is_some_and(|&(at, _)| at <= now) {
                let (_, p) = to_q.pop_front().unwrap();
                if q.len() < cap && !drop(&p) {
                    q.push_back(p);
                }
            }
            if let Some(p) = q.pop_front() {
                rcv.on_data(now, &p, &mut acks);
                to_s.extend(acks.drain(..).map(|a| (now + 5 * MS, a)));
            }
        }
    }

    /// BBR with the linux profile's SACK, RACK and PRR options behind a shallow bottleneck
    /// (10 packets, BDP 11): Startup overflows the queue and a SACK recovery follows.
    /// Reference: Linux `tcp_ack` / `tcp_cong_control` / `tcp_xmit_retransmit_queue`:
    /// * newly SACKed segments give rate samples (`tcp_sacktag_one` ->
    ///   `tcp_rate_skb_delivered`), so ACKs that do not move `snd_una` still yield valid
    ///   samples (the old code sampled cumulatively acknowledged segments only: while a hole
    ///   stayed open BBR got no sample, no round ended and it stayed in Startup at gain
    ///   2.89);
    /// * PRR (`tcp_cwnd_reduction`) does not run for a controller with its own
    ///   `cong_control`, so in recovery the flight after an ACK's transmissions stays within
    ///   BBR's window (the old code let PRR with BBR's infinite ssthresh send
    ///   `delivered + 1` per ACK, beyond the window);
    /// * the whole transfer recovers without a timeout and BBR leaves Startup.
    #[test]
    fn bbr_sack_recovery_samples_sacks_and_keeps_to_its_window() {
        use crate::tcp::cc::bbr::Mode;
        let p = sack_rack_prr(CcKind::Bbr);
        let mut s = TcpSender::new(0, 1, p, None);
        let (mut sack_samples, mut recovery_acks) = (0, 0);
        let mut last = (0, 0);
        bottleneck(&mut s, 3000, 2, |s, una_moved| {
            let r = s.rate.as_deref().unwrap();
            let sample = (r.rate_delivered, r.rate_interval);
            if !una_moved && sample != last {
                sack_samples += 1;
            }
            last = sample;
            if s.rec.in_sack_recovery() {
                recovery_acks += 1;
                let pipe = s.rec.pipe(s.snd_max);
                assert!(pipe as f64 <= s.cwnd(), "pipe {pipe} > cwnd {}", s.cwnd());
            }
        });
        let AnyController::Bbr(b) = s.controller() else {
            panic!()
        };
        eprintln!(
            "sack samples {sack_samples}, recovery ACKs {recovery_acks}, recoveries {}, \
             timeouts {}, mode {:?}, delivered {}",
            s.stats.fast_retransmits, s.stats.timeouts, b.mode, s.stats.bytes_acked
        );
        assert!(s.stats.fast_retransmits > 0 && recovery_acks > 5);
        assert!(sack_samples >= 3, "{sack_samples}");
        assert_ne!(b.mode, Mode::Startup);
        assert_eq!(s.stats.timeouts, 0);
        // 3 s at 1 packet/ms: at least 90 % of it delivered.
        assert!(s.snd_una > 2700, "{}", s.snd_una);
    }

    /// RACK losses in small windows recover without a timeout, as in Linux (Reno, SACK,
    /// RACK, PRR, timestamps, window 4, behind [`bottleneck`] with a deep queue):
    /// * the first segment sent after a recovery's point is lost: the next recovery begins
    ///   when RACK marks it (Linux `tcp_fastretrans_alert` has no RFC 6582 guard for SACK);
    ///   the old rule (`ack > recover`) waited for the RTO;
    /// * a loss, then its retransmission lost too, found by RACK's reordering timer with
    ///   nothing left in flight: the timer's marks are sent under PRR (Linux
    ///   `tcp_rack_reo_timeout` -> `tcp_xmit_retransmit_queue`); the old code sent nothing
    ///   and waited for the RTO.
    #[test]
    fn rack_recovers_small_window_losses_without_timeout() {
        use std::cell::Cell;
        let p = sack_rack_prr(CcKind::Newreno);
        // (case, window, the segment lost first)
        for (case, w, k) in [("after recovery", 4.0, 20), ("lost retransmission", 3.0, 6)] {
            let mut s = TcpSender::new(0, 1, p, None);
            set_window(&mut s, w, w);
            // the first recovery's point, once it began
            let recover = Cell::new(u32::MAX);
            let (mut sent_k, mut sent_r, mut recoveries) = (0, 0, 0);
            bottleneck_dropping(
                &mut s,
                2000,
                100,
                |pk| {
                    if pk.seq == k {
                        sent_k += 1;
                        return sent_k <= if case == "after recovery" { 1 } else { 2 };
                    }
                    if case == "after recovery" && pk.seq == recover.get() {
                        sent_r += 1;
                        return sent_r == 1;
                    }
                    false
                },
                |s, _| {
                    if s.rec.in_recovery() && recover.get() == u32::MAX {
                        recover.set(s.rec.recover());
                    }
                    recoveries = s.stats.fast_retransmits;
                },
            );
            let msg = format!(
                "{case}: recoveries {recoveries}, timeouts {}, retransmits {}, snd_una {}",
                s.stats.timeouts, s.stats.retransmits, s.snd_una
            );
            assert_ne!(recover.get(), u32::MAX, "{msg}");
            assert_eq!(s.stats.timeouts, 0, "{msg}");
            eprintln!("{msg}");
            let want = if case == "after recovery" {
                (2, 2)
            } else {
                (1, 2)
            };
            assert_eq!((recoveries, s.stats.retransmits), want, "{msg}");
        }
    }

    /// Retransmitting the head of the queue re-arms the retransmission timer, as Linux's
    /// `tcp_xmit_retransmit_queue` does (`tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)`
    /// when the head was retransmitted and the reordering timer is not pending). Segment 0
    /// is sent at 0 and 1-9 at 1 ms; at 101 ms 1-9 are SACKed and the reordering timer
    /// marks 0 lost; recovery retransmits it and arms the timer. 150 ms later RACK has found
    /// that retransmission lost (as on an ACK SACKing new data sent well after it, with no
    /// reordering timer left: a paced flow's) and it is sent again: the timer now runs from
    /// then. Before, it kept running from the first retransmission; under CoDel with ECN in
    /// its dropping state, which drops retransmissions (not ECT) and marks new data (ECT),
    /// flows timed out in turn and starved (`validation/emu/RESULTS.md`, section 4).
    #[test]
    fn head_retransmission_rearms_the_timer_as_linux() {
        const MS: Ns = 1_000_000;
        // without PRR, whose budget only an ACK would give (BBR has none either)
        let p = TcpParams {
            prr: false,
            ..sack_rack_prr(CcKind::Newreno)
        };
        let mut s = TcpSender::new(0, 1, p, None);
        let mut out = Vec::new();
        set_window(&mut s, 1.0, 1.0);
        s.send_allowed(0, &mut out);
        set_window(&mut s, 10.0, 10.0);
        s.send_allowed(MS, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        let sacked = Packet {
            sack: [1, 10, 0, 0, 0, 0],
            ..ack(0, MS)
        };
        s.on_ack(101 * MS, &sacked, &mut out);
        // the reordering timer holds 0 back for a quarter of the minimum RTT
        let reo = s.rto_deadline.unwrap();
        assert!(out.is_empty() && reo > 101 * MS, "{out:?}");
        s.on_rto(reo, &mut out);
        assert!(s.rec.in_recovery());
        assert_eq!(out.first().map(|p| p.seq), Some(0), "{out:?}");
        assert_eq!((s.rto_deadline, s.stats.timeouts), (Some(reo + s.rto()), 0));
        out.clear();
        // RACK finds the retransmission lost; it goes out again at `t`
        s.rec.scoreboard_mut().mark_lost(0);
        if let Some(r) = s.rack.as_deref_mut() {
            r.timer = None;
        }
        let t = reo + 150 * MS;
        s.send_allowed(t, &mut out);
        assert_eq!(out.first().map(|p| p.seq), Some(0), "{out:?}");
        assert_eq!(s.rto_deadline, Some(t + s.rto()));
    }

    /// An ACK whose SACK area holds an AccECN option (no SACK blocks) still moves the
    /// scoreboard with the cumulative ACK: before, the SACKed segments below it stayed
    /// counted, so a Prague flow (AccECN, RACK) went on with a stale scoreboard and could
    /// enter a recovery with nothing outstanding and stall.
    #[test]
    fn scoreboard_follows_cumulative_acks_without_sack_blocks() {
        const MS: Ns = 1_000_000;
        let p = sack_rack_prr(CcKind::Newreno);
        let mut s = TcpSender::new(0, 1, p, None);
        set_window(&mut s, 4.0, 4.0);
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        // 0 delivered, 1 not yet, 2 and 3 SACKed
        let sacked = Packet {
            sack: [1, 3, 0, 0, 0, 0],
            ..ack(1, 0)
        };
        s.on_ack(100 * MS, &sacked, &mut out);
        assert_eq!(s.rec.scoreboard_mut().sacked_out, 2);
        // then everything, on an ACK carrying an AccECN option instead of blocks
        let with_option = Packet {
            flags: F_ACK | F_ACCECN_OPT,
            ..ack(4, 0)
        };
        s.on_ack(101 * MS, &with_option, &mut out);
        let sb = s.rec.scoreboard_mut();
        assert_eq!((sb.base(), sb.sacked_out, sb.lost_out), (4, 0, 0));
        assert!(!s.rec.in_recovery());
    }

    /// Sender and receiver back to back, in rounds of one RTT (50 ms): the
    /// segments a round's ACKs release reach the receiver half an RTT later,
    /// where `fate(i)` of the i-th data packet ever sent says whether it is
    /// dropped (`Some(false)`), CE-marked (`Some(true)`) or delivered as is;
    /// the ACKs come back at the next round. With `events`, each ACK goes
    /// through `process_ack`, the controller and `send_allowed` one by one
    /// (what `on_ack` does), the `AckEvent`s are recorded and the window is
    /// checked not to move on an ACK that may not raise it (nor to fail to
    /// reach `ssthresh` after an ECN reduction). Returns `cwnd` after every
    /// ACK and the number of ACKs.
    fn rounds(
        s: &mut TcpSender,
        n: u32,
        fate: fn(u64) -> Option<bool>,
        mut events: Option<&mut Vec<AckEvent>>,
    ) -> (Vec<f64>, usize) {
        const RTT: Ns = 50_000_000;
        let mut rcv = TcpReceiver::new(0, 0, false, false);
        let (mut data, mut acks, mut trace) = (Vec::new(), Vec::new(), Vec::new());
        let (mut sent, mut n_acks) = (0u64, 0usize);
        s.send_allowed(0, &mut data);
        for r in 0..n as Ns {
            let now = r * RTT;
            if r > 0 {
                if s.rto_deadline.is_some_and(|d| d <= now) {
                    s.on_rto(now, &mut data);
                }
                for a in std::mem::take(&mut acks) {
                    match events.as_deref_mut() {
                        None => s.on_ack(now, &a, &mut data),
                        Some(evs) => {
                            let reductions = s.stats.ecn_reductions;
                            let ev = s.process_ack(now, &a, &mut data);
                            let w = s.cwnd();
                            s.cc.on_ack(now, &ev);
                            assert!(ev.may_raise_cwnd() || s.cwnd() == w, "{ev:?}");
                            if s.stats.ecn_reductions > reductions {
                                assert!(ev.ece && ev.state == CaState::Cwr);
                                assert_eq!(s.cwnd(), s.ssthresh());
                            }
                            s.send_allowed(now, &mut data);
                            evs.push(ev);
                        }
                    }
                    trace.push(s.cwnd());
                    n_acks += 1;
                }
            }
            for mut p in data.drain(..) {
                let f = fate(sent);
                sent += 1;
                match f {
                    Some(false) => continue,
                    Some(true) if p.has(F_ECT) => p.flags |= F_CE,
                    _ => {}
                }
                rcv.on_data(now + RTT / 2, &p, &mut acks);
            }
        }
        (trace, n_acks)
    }

    /// The controller hooks (what a DCTCP or Prague controller reads,
    /// RFC 8257 §3.3): every ACK yields one `AckEvent`, with exact byte
    /// counts and ECN-Echo counts, the state it found (`Cwr` during the ECN
    /// reduction period, `Recovery` in fast recovery), and the window moves
    /// only when `may_raise_cwnd`. Periodic CE marks (ECN) or drops (two
    /// interleaved periods, so some windows lose two segments and some
    /// recoveries end in a timeout); all three controllers.
    #[test]
    fn ack_events_for_the_controller() {
        let marks: fn(u64) -> Option<bool> = |i| (i % 17 == 5).then_some(true);
        let drops: fn(u64) -> Option<bool> = |i| (i % 37 == 11 || i % 53 == 2).then_some(false);
        for cc in [CcKind::Reno, CcKind::Newreno, CcKind::Cubic] {
            for (ecn, fate) in [(true, marks), (false, drops)] {
                let p = TcpParams { ecn, ..params(cc) };
                let mut s = TcpSender::new(0, 1, p, None);
                let mut evs = Vec::new();
                let (trace, n_acks) = rounds(&mut s, 200, fate, Some(&mut evs));
                let mut plain = TcpSender::new(0, 1, p, None);
                assert_eq!(rounds(&mut plain, 200, fate, None).0, trace);
                assert_eq!(evs.len(), n_acks);
                let bytes: u64 = evs.iter().map(|e| e.acked_bytes).sum();
                assert_eq!(bytes, s.stats.bytes_acked);
                let segs: u32 = evs.iter().map(|e| e.acked).sum();
                assert_eq!(segs, s.snd_una);
                for e in &evs {
                    assert_eq!(e.ece_acked, if e.ece { e.acked } else { 0 });
                    assert_eq!(e.ece_bytes, if e.ece { e.acked_bytes } else { 0 });
                    assert!(e.ack <= e.snd_max);
                    if let Some(r) = e.rtt {
                        assert!(e.acked > 0 && r == 50_000_000, "{e:?}");
                    }
                }
                if ecn {
                    assert!(s.stats.ecn_reductions > 5, "{cc:?}");
                    assert!(evs.iter().any(|e| e.ece && e.acked > 0));
                    assert!(evs.iter().any(|e| e.state == CaState::Cwr && e.acked > 0));
                    assert_eq!(s.stats.retransmits, 0);
                } else {
                    assert!(
                        s.stats.fast_retransmits > 5 && s.stats.timeouts > 0,
                        "{cc:?}"
                    );
                    assert!(evs.iter().any(|e| e.state == CaState::Recovery));
                    assert!(evs.iter().all(|e| !e.ece));
                }
            }
        }
    }

    /// DCTCP and Prague need no `ecn` flag: DCTCP sends ECT(0), Prague ECT(1), neither on
    /// retransmissions (RFC 3168 §6.1.5). DCTCP's alpha is updated by the ACK that ends its
    /// observation window *before* the cut that ACK's ECE triggers (Linux `in_ack_event`
    /// before `tcp_fastretrans_alert`), worked by hand: 20 segments of 960 bytes out, window
    /// end 0, so the ACK of segment 0 ends the first window (M = 0: alpha = 15/16) and sets
    /// the next end to 20; ACKs 2..19 unmarked; the ACK of 20 carries ECE: M = 960 / (19 x
    /// 960) = 1/19, alpha = (15/16)^2 + 1/(16 x 19), and cwnd is cut by alpha/2 of its value
    /// before that ACK.
    #[test]
    fn dctcp_and_prague_codepoints_and_alpha_before_cut() {
        use crate::packet::F_ECT1;
        let mut out = Vec::new();
        let mut p = TcpSender::new(0, 1, params(CcKind::Prague), None);
        p.send_allowed(0, &mut out);
        assert!(out.iter().all(|x| x.has(F_ECT) && x.has(F_ECT1)));
        out.clear();
        let mut s = TcpSender::new(0, 1, params(CcKind::Dctcp), None);
        set_window(&mut s, 20.0, 20.0);
        s.send_allowed(0, &mut out);
        assert!(out.iter().all(|x| x.has(F_ECT) && !x.has(F_ECT1)));
        for a in 1..20 {
            s.on_ack(10, &ack(a, 0), &mut out);
        }
        let AnyController::Dctcp(d) = s.controller() else {
            panic!()
        };
        assert_eq!(d.alpha(), 15.0 / 16.0);
        let w = s.cwnd();
        s.on_ack(
            20,
            &Packet {
                flags: F_ACK | F_ECE,
                ..ack(20, 0)
            },
            &mut out,
        );
        let alpha = (15.0f64 / 16.0).powi(2) + 1.0 / (16.0 * 19.0);
        let AnyController::Dctcp(d) = s.controller() else {
            panic!()
        };
        assert!((d.alpha() - alpha).abs() < 1e-12, "{}", d.alpha());
        assert!((s.cwnd() - w * (1.0 - alpha / 2.0)).abs() < 1e-9);
        assert_eq!(s.stats.ecn_reductions, 1);
        // A retransmission (timeout) is not ECN-capable.
        out.clear();
        s.on_rto(10_000_000_000, &mut out);
        assert!(out[0].has(F_RETX) && !out[0].has(F_ECT));
    }
}
