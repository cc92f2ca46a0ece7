//! Loss detection and recovery: duplicate-ACK counting, fast retransmit,
//! and fast recovery in one of three flavours:
//!
//! * **Reno** (RFC 5681 §3.2): window inflation by one segment per
//!   duplicate ACK; the first ACK of new data ends recovery (step 6), so a
//!   second loss in the same window usually costs a timeout.
//! * **NewReno** (RFC 6582, used with the NewReno and CUBIC controllers):
//!   as Reno, but a *partial* ACK (one that does not cover `recover`, the
//!   highest sequence outstanding when recovery began) retransmits the next
//!   hole and keeps the sender in recovery (§3.2 step 3).
//! * **SACK** (`sack: true`, any controller): conservative RFC 6675
//!   recovery with FACK's loss inference and pipe estimate, on the
//!   scoreboard of [`super::sack`]; no inflation, transmissions while
//!   `pipe < cwnd`.
//!
//! With `prr` (SACK only), proportional rate reduction (RFC 6937, PRR-SSRB,
//! [`Prr`]) replaces the pipe rule's window during SACK recovery: the window
//! law still sets `ssthresh` (and `cwnd = ssthresh`) at once, but the sender
//! transmits, on each ACK, `sndcnt` segments computed from what that ACK
//! delivered, so the flight falls to `ssthresh` gradually over the recovery
//! round instead of the sender going silent until the pipe drops below the
//! halved window. Linux does this (`tcp_cwnd_reduction`, net/ipv4/tcp_input.c).
//!
//! Units: segments. The recovery owns the inflation (ns-2's `dupwnd_`; the
//! sending window in recovery is `cwnd + inflation`), never `cwnd` itself:
//! window reductions and the deflation at the end of recovery go through
//! the congestion controller ([`super::cc::Controller`]), which the sender
//! calls when this module says so.

use super::cc::CcKind;
use super::sack::Scoreboard;

/// Duplicate-ACK threshold for fast retransmit, according to RFC 5681 §3.2.
pub const DUPTHRESH: u32 = 3;

/// Which fast recovery a sender uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryKind {
    /// Reno (RFC 5681 §3.2).
    Reno,
    /// NewReno (RFC 6582).
    NewReno,
    /// SACK-based (RFC 6675 with FACK).
    Sack,
}

impl RecoveryKind {
    /// The recovery for controller `cc`: SACK recovery if `sack`; else, with Linux's
    /// congestion states (`linux`), NewReno's for every controller, as Linux has no other
    /// recovery without SACK (`tcp_is_reno`: a partial ACK retransmits the next hole,
    /// `tcp_newreno_mark_lost`, and the sender stays in `TCP_CA_Recovery` until `high_seq`
    /// is acknowledged); else the one its registry line names (Reno's for Reno, NewReno's
    /// for the others).
    pub fn new(cc: CcKind, sack: bool, linux: bool) -> Self {
        match (sack, cc.recovery()) {
            (true, _) => RecoveryKind::Sack,
            (false, experiment::cc::Recovery::Reno) if !linux => RecoveryKind::Reno,
            (false, _) => RecoveryKind::NewReno,
        }
    }
}

/// What a new ACK that arrives during (non-SACK) fast recovery means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryAck {
    /// The ACK covers `recover`: leave recovery, deflate the window to
    /// `ssthresh` (RFC 6582 §3.2 step 3, "full acknowledgment", option 2).
    Full,
    /// NewReno partial ACK: retransmit the first unacknowledged segment,
    /// deflate the window by the amount acknowledged and add back one
    /// segment, re-arm the retransmission timer (RFC 6582 §3.2 step 3,
    /// "partial acknowledgment").
    Partial,
    /// Reno: any new ACK ends recovery (RFC 5681 §3.2 step 6).
    RenoExit,
}

/// Classifies a new cumulative ACK `ack` received in fast recovery with
/// recovery point `recover` (one past the highest segment sent when recovery
/// began).
#[inline]
pub fn classify(ack: u32, recover: u32, newreno: bool) -> RecoveryAck {
    if ack >= recover {
        RecoveryAck::Full
    } else if newreno {
        RecoveryAck::Partial
    } else {
        RecoveryAck::RenoExit
    }
}

/// What the sender does after a new cumulative ACK (see
/// [`Recovery::on_new_ack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewAck {
    /// Not in recovery: the window law may run.
    Open,
    /// Recovery ended: deflate the window
    /// ([`super::cc::Controller::on_recovery_end`]).
    Exit,
    /// NewReno partial ACK: retransmit the first unacknowledged segment now;
    /// restart the retransmission timer only if `restart_timer`.
    Partial {
        /// Restart the timer (RFC 6298 §5.3).
        restart_timer: bool,
    },
    /// SACK recovery continues; the scoreboard drives retransmissions.
    SackContinue,
}

/// The next transmission in SACK recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SackNext {
    /// Retransmit this lost segment (already marked retransmitted).
    Retransmit(u32),
    /// Send the next new segment (`snd_max`).
    NewData,
}

/// Proportional rate reduction state of one recovery (RFC 6937 §3, in
/// segments): `RecoverFS` (the flight when recovery began, at least 1),
/// `prr_delivered` (segments delivered to the receiver since) and `prr_out`
/// (segments sent since, retransmissions included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    /// `RecoverFS = snd.nxt - snd.una` at the start of recovery (>= 1).
    pub recover_fs: u32,
    /// `prr_delivered`.
    pub delivered: u32,
    /// `prr_out`.
    pub out: u32,
}

impl Prr {
    /// The state at the start of a recovery with `recover_fs` segments in flight.
    pub fn new(recover_fs: u32) -> Self {
        Prr {
            recover_fs: recover_fs.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// RFC 6937 §3, "on every ACK during recovery", with the slow-start
    /// reduction bound (PRR-SSRB): adds `delivered_data` to `prr_delivered`
    /// and returns `sndcnt`, the segments the sender may send now, given
    /// `pipe` after the ACK (the RFC's is RFC 6675's; the sender passes its
    /// FACK estimate) and `ssthresh`:
    ///
    /// * `pipe > ssthresh` (proportional part):
    ///   `sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out`;
    /// * else (bound): `sndcnt = MIN(ssthresh - pipe,
    ///   MAX(prr_delivered - prr_out, DeliveredData) + 1)`
    ///
    /// (negative values are 0).
    pub fn sndcnt(&mut self, delivered_data: u32, pipe: u32, ssthresh: u32) -> u32 {
        self.delivered += delivered_data;
        if pipe > ssthresh {
            let due = (self.delivered as u64 * ssthresh as u64).div_ceil(self.recover_fs as u64);
            due.saturating_sub(self.out as u64) as u32
        } else {
            let limit = self.delivered.saturating_sub(self.out).max(delivered_data) + 1;
            (ssthresh - pipe).min(limit)
        }
    }

    /// `prr_out += n` (segments sent, on any transmission or retransmission).
    pub fn on_sent(&mut self, n: u32) {
        self.out += n;
    }
}

/// Loss-recovery state of one sender.
#[derive(Clone, Debug)]
pub struct Recovery {
    kind: RecoveryKind,
    /// Duplicate ACKs in a row.
    dupacks: u32,
    /// In fast recovery.
    in_recovery: bool,
    /// A partial ACK has been seen in the current recovery.
    partial_seen: bool,
    /// RFC 6582 `recover`, stored as one past the highest segment sent when
    /// the last recovery (or timeout) began; 0 before any.
    recover: u32,
    /// Fast-recovery window inflation (segments; ns-2's `dupwnd_`): the
    /// sending window during recovery is `cwnd + inflation` (RFC 5681 §3.2
    /// steps 3–4, RFC 6582 §3.2 step 3 deflation). Always 0 outside a
    /// non-SACK recovery.
    inflation: f64,
    /// SACK scoreboard (used only with [`RecoveryKind::Sack`]).
    sb: Scoreboard,
    /// PRR paces SACK recoveries (see the module doc).
    prr_on: bool,
    /// The running recovery's PRR state (`prr_on`, SACK recovery only).
    prr: Option<Prr>,
    /// Segments the last ACK delivered (scoreboard's `delivered` difference).
    delivered_data: u32,
    /// PRR's `sndcnt` of the last ACK, not yet sent.
    prr_budget: u32,
}

impl Recovery {
    /// Idle recovery state of the given kind.
    pub fn new(kind: RecoveryKind) -> Self {
        Recovery {
            kind,
            dupacks: 0,
            in_recovery: false,
            partial_seen: false,
            recover: 0,
            inflation: 0.0,
            sb: Scoreboard::default(),
            prr_on: false,
            prr: None,
            delivered_data: 0,
            prr_budget: 0,
        }
    }

    /// The same recovery with RACK marking the losses of SACK recoveries (RFC 8985,
    /// [`super::rack`]; no effect on Reno and NewReno recovery): no fast retransmit on
    /// duplicate ACKs, the sender enters recovery when RACK has marked a loss.
    pub fn with_rack(mut self, on: bool) -> Self {
        self.sb.rack = on && self.kind == RecoveryKind::Sack;
        self
    }

    /// The SACK scoreboard (RACK's marks).
    #[inline]
    pub fn scoreboard_mut(&mut self) -> &mut Scoreboard {
        &mut self.sb
    }

    /// One past the highest segment known received, cumulatively or by SACK (the
    /// scoreboard's `fack`).
    #[inline]
    pub fn fack(&self) -> u32 {
        self.sb.fack
    }

    /// The recovery point (RFC 6582 `recover`): one past the highest segment sent when the
    /// last recovery or timeout began.
    #[inline]
    pub fn recover(&self) -> u32 {
        self.recover
    }

    /// Segments marked lost by RACK and not SACKed.
    #[inline]
    pub fn lost_out(&self) -> u32 {
        self.sb.lost_out
    }

    /// A RACK loss may begin recovery at cumulative ACK `ack`, as Linux decides for a SACK
    /// connection (`tcp_fastretrans_alert`): not in recovery, and not in the Loss state of a
    /// timeout, which ends when `snd_una` reaches the point the timeout recorded
    /// (`!before(snd_una, high_seq)`). Unlike the duplicate-ACK entry there is no RFC 6582
    /// guard (`ack > recover`, §3.2 step 2) (Linux: "SACK TCP is safe"), so a loss of the first segment sent after a
    /// recovery begins the next one without waiting for a timeout.
    #[inline]
    pub fn may_enter_rack(&self, ack: u32) -> bool {
        !self.in_recovery && ack >= self.recover
    }

    /// The same recovery with PRR pacing SACK recoveries (RFC 6937; no
    /// effect on Reno and NewReno recovery).
    pub fn with_prr(mut self, on: bool) -> Self {
        self.prr_on = on && self.kind == RecoveryKind::Sack;
        self
    }

    /// PRR paces this sender's SACK recoveries.
    #[inline]
    pub fn prr_on(&self) -> bool {
        self.prr_on
    }

    /// The running recovery's PRR state (None outside a PRR recovery).
    #[inline]
    pub fn prr(&self) -> Option<&Prr> {
        self.prr.as_ref().filter(|_| self.in_recovery)
    }

    /// The flavour.
    #[inline]
    pub fn kind(&self) -> RecoveryKind {
        self.kind
    }

    /// True while in fast recovery.
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// True while in SACK-based recovery (transmissions come from
    /// [`Recovery::sack_next`]).
    #[inline]
    pub fn in_sack_recovery(&self) -> bool {
        self.in_recovery && self.kind == RecoveryKind::Sack
    }

    /// Fast-recovery window inflation (segments).
    #[inline]
    pub fn inflation(&self) -> f64 {
        self.inflation
    }

    /// Segments the last ACK newly delivered by the SACK scoreboard's count (cumulatively
    /// or by SACK; SACK flows only).
    #[inline]
    pub fn delivered_data(&self) -> u32 {
        self.delivered_data
    }

    /// The scoreboard's pipe (RFC 6675) for `snd_max`.
    #[inline]
    pub fn pipe(&self, snd_max: u32) -> u32 {
        self.sb.pipe(snd_max)
    }

    /// The SACK information of an ACK for `ack` (SACK flows only): the
    /// scoreboard drops what is cumulatively acknowledged and records the
    /// blocks, bounded by `snd_max`.
    #[inline]
    pub fn on_sack_blocks(&mut self, ack: u32, blocks: &[u16; 6], snd_una: u32, snd_max: u32) {
        self.on_sack_blocks_with(ack, blocks, snd_una, snd_max, |_| {});
    }

    /// [`Recovery::on_sack_blocks`], calling `newly_sacked(seq)` for each segment newly
    /// SACKed (RACK's deliveries).
    #[inline]
    pub fn on_sack_blocks_with(
        &mut self,
        ack: u32,
        blocks: &[u16; 6],
        snd_una: u32,
        snd_max: u32,
        newly_sacked: impl FnMut(u32),
    ) {
        let before = self.sb.delivered;
        if ack > snd_una {
            self.sb.advance(ack);
        }
        self.sb.apply_with(ack, blocks, snd_max, newly_sacked);
        self.delivered_data = (self.sb.delivered - before) as u32;
    }

    /// PRR on an ACK in SACK recovery, after the ACK was processed (and
    /// recovery possibly entered on it): RFC 6937's `sndcnt` for this ACK's
    /// delivered segments becomes the budget of [`Recovery::sack_next`]. As
    /// in Linux (`tcp_cwnd_reduction`), an ACK that delivers nothing sends
    /// nothing, and the first ACK of a recovery may always send one segment
    /// (the fast retransmit).
    pub fn prr_on_ack(&mut self, ssthresh: u32, snd_max: u32) {
        self.prr_budget = if self.in_recovery {
            self.prr_sndcnt(ssthresh, snd_max).unwrap_or(0)
        } else {
            0
        };
    }

    /// Linux `tcp_cwnd_reduction` for the last ACK: `sndcnt` for the segments it delivered,
    /// at least one before anything was sent (the fast retransmit, or the segment carrying
    /// CWR); `None` if it delivered nothing (Linux leaves the window) or no PRR is running.
    fn prr_sndcnt(&mut self, ssthresh: u32, snd_max: u32) -> Option<u32> {
        let dd = self.delivered_data;
        let pipe = self.sb.pipe(snd_max);
        let p = self.prr.as_mut().filter(|_| dd > 0)?;
        Some(p.sndcnt(dd, pipe, ssthresh).max(u32::from(p.out == 0)))
    }

    /// Spends one segment of the PRR budget (`prr_out += 1`); false if none is left.
    fn take_prr_budget(&mut self) -> bool {
        match self.prr.as_mut() {
            Some(p) if self.prr_budget > 0 => {
                self.prr_budget -= 1;
                p.on_sent(1);
                true
            }
            _ => false,
        }
    }

    /// Begins the proportional rate reduction of an ECN window reduction outside recovery
    /// (Linux `tcp_enter_cwr` -> `tcp_init_cwnd_reduction`: `prior_cwnd`, `prr_delivered = 0`,
    /// `prr_out = 0`); `prior_cwnd` is the window before the reduction. Linux reduces the
    /// window of the `TCP_CA_CWR` state with the same `tcp_cwnd_reduction` as a recovery's,
    /// so the sender keeps sending on the ACKs of the reduction round (the first ACK one
    /// segment at least, which carries CWR) instead of going silent until the flight falls
    /// below the halved window. Without PRR nothing changes.
    pub fn cwr_begin(&mut self, prior_cwnd: u32) {
        if self.prr_on && !self.in_recovery {
            self.prr = Some(Prr::new(prior_cwnd));
            self.prr_budget = 0;
        }
    }

    /// PRR on an ACK of an ECN reduction ([`Recovery::cwr_begin`]; Linux
    /// `tcp_cwnd_reduction` in `TCP_CA_CWR`, after the ACK was processed): an ACK that
    /// delivered segments sets the budget to `sndcnt` for them (Linux: `cwnd = in_flight +
    /// sndcnt`), at least one before anything was sent; an ACK that delivered nothing leaves
    /// the window, and so the unsent budget, as it was.
    pub fn cwr_on_ack(&mut self, ssthresh: u32, snd_max: u32) {
        if self.in_recovery {
            return;
        }
        if let Some(n) = self.prr_sndcnt(ssthresh, snd_max) {
            self.prr_budget = n;
        }
    }

    /// Takes one segment of an ECN reduction's budget ([`Recovery::cwr_on_ack`]) for a new
    /// transmission; false if none is left.
    pub fn cwr_take(&mut self) -> bool {
        self.take_prr_budget()
    }

    /// PRR when RACK's reordering timer marked segments lost (Linux `tcp_rack_reo_timeout`),
    /// after recovery was entered if it had not been: the `newly` segments marked lost left
    /// the flight, and Linux sends while the flight is below the window PRR set at the last
    /// ACK (`tcp_xmit_retransmit_queue`), so the budget grows by `newly`; a recovery not yet
    /// sending (entered by this timer) gets `tcp_cwnd_reduction(sk, 1, ...)`'s count for one
    /// delivered segment, at least one (the fast retransmit). Without PRR (or outside a
    /// recovery) nothing changes: the pipe limits the SACK recovery.
    pub fn prr_on_reo_timeout(&mut self, newly: u32, ssthresh: u32, snd_max: u32) {
        let pipe = self.sb.pipe(snd_max);
        if let Some(p) = self.prr.as_mut().filter(|_| self.in_recovery) {
            self.prr_budget = if p.out == 0 {
                p.sndcnt(1, pipe, ssthresh).max(1)
            } else {
                self.prr_budget + newly
            };
        }
    }

    /// A new cumulative ACK `ack` acknowledging `acked` segments; `cwnd` is
    /// the controller's window (for the partial-ACK deflation bound).
    #[inline]
    pub fn on_new_ack(&mut self, ack: u32, acked: u32, cwnd: f64) -> NewAck {
        if !self.in_recovery {
            self.dupacks = 0;
            return NewAck::Open;
        }
        if self.kind == RecoveryKind::Sack {
            // RFC 6675 §5: recovery ends when `recover` is covered; the
            // scoreboard drives retransmissions until then.
            if ack >= self.recover {
                self.in_recovery = false;
                self.dupacks = 0;
                return NewAck::Exit;
            }
            return NewAck::SackContinue;
        }
        match classify(ack, self.recover, self.kind == RecoveryKind::NewReno) {
            RecoveryAck::Full | RecoveryAck::RenoExit => {
                self.in_recovery = false;
                self.dupacks = 0;
                self.inflation = 0.0;
                NewAck::Exit
            }
            RecoveryAck::Partial => {
                self.inflation = (self.inflation - acked as f64 + 1.0).max(1.0 - cwnd);
                // RFC 6298 §5.3: restart the timer on new data acknowledged,
                // except for partial ACKs after the first one in a recovery
                // (RFC 6582 §3.2 step 3, the "Impatient" variant: a window
                // with many losses falls back to a timeout instead of
                // recovering one segment per RTT).
                let restart_timer = !self.partial_seen;
                self.partial_seen = true;
                NewAck::Partial { restart_timer }
            }
        }
    }

    /// A duplicate ACK for `ack` (RFC 5681 §2 definition: nothing new
    /// acknowledged while data is outstanding). Returns true if fast
    /// retransmit is due now: the sender reduces the window
    /// ([`super::cc::Congestion::Loss`]) and calls [`Recovery::enter`].
    #[inline]
    pub fn on_dup_ack(&mut self, ack: u32) -> bool {
        self.dupacks += 1;
        if self.in_recovery {
            if self.kind != RecoveryKind::Sack {
                // RFC 5681 §3.2 step 4: inflate by one segment per dup ACK.
                // (In SACK recovery the scoreboard, not inflation, opens the
                // window.)
                self.inflation += 1.0;
            }
            return false;
        }
        // RFC 6582 §3.2 step 2 (and RFC 5681 §3.2 steps 2–3): fast
        // retransmit and enter fast recovery only if the ACK covers more
        // than `recover` (its highest segment is `recover - 1`), so
        // duplicate ACKs caused by go-back-N retransmissions of segments the
        // receiver already had do not trigger a spurious fast retransmit
        // (RFC 6582 §4). With SACK, the scoreboard may deem the first hole
        // lost before DUPTHRESH duplicates (FACK).
        // With RACK, losses are marked by time instead (the sender enters recovery).
        !self.sb.rack
            && (self.dupacks == DUPTHRESH
                || (self.kind == RecoveryKind::Sack && self.sb.is_lost(ack)))
            && (ack > self.recover || self.recover == 0)
    }

    /// Enters fast recovery with `snd_max` outstanding. Returns true if the
    /// first unacknowledged segment is to be retransmitted now (Reno and
    /// NewReno, RFC 5681 §3.2 step 2, with the window inflated by
    /// [`DUPTHRESH`], step 3); with SACK the retransmission comes from the
    /// pipe-limited loop ([`Recovery::sack_next`], RFC 6675 §5 step (4)).
    #[inline]
    pub fn enter(&mut self, snd_max: u32) -> bool {
        self.begin(snd_max, false)
    }

    /// Enters fast recovery from an ECN reduction under way (Linux `tcp_enter_recovery` in
    /// `TCP_CA_CWR`, where `tcp_in_cwnd_reduction` skips `tcp_init_cwnd_reduction`): the
    /// recovery point is the reduction's `high_seq` and PRR goes on with the reduction's
    /// `prior_cwnd`, `prr_delivered` and `prr_out`. Returns as [`Recovery::enter`].
    #[inline]
    pub fn enter_from_cwr(&mut self, high_seq: u32) -> bool {
        self.begin(high_seq, true)
    }

    /// [`Recovery::enter`] with recovery point `snd_max`; `keep_prr`: a PRR under way goes on.
    #[inline]
    fn begin(&mut self, snd_max: u32, keep_prr: bool) -> bool {
        self.recover = snd_max;
        self.in_recovery = true;
        self.partial_seen = false;
        if self.kind == RecoveryKind::Sack {
            self.sb.new_episode();
            self.inflation = 0.0;
            if self.prr_on && !(keep_prr && self.prr.is_some()) {
                let recover_fs = snd_max.saturating_sub(self.sb.base());
                self.prr = Some(Prr::new(recover_fs));
                self.prr_budget = 0;
            }
            false
        } else {
            self.inflation = DUPTHRESH as f64;
            true
        }
    }

    /// Retransmission timeout with `snd_max` outstanding: recovery is
    /// abandoned, and (RFC 6582 §3.2 step 1 after a timeout) duplicates of
    /// data sent before it do not trigger a fast retransmit; the scoreboard
    /// forgets its retransmission marks (the sender goes back N).
    #[inline]
    pub fn on_timeout(&mut self, snd_max: u32) {
        self.inflation = 0.0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = snd_max;
        self.sb.new_episode();
        if self.sb.rack {
            self.sb.forget_losses();
        }
    }

    /// True if segment `seq` (below `snd_max`) is to be skipped when going
    /// back N after a timeout: the receiver SACKed it.
    #[inline]
    pub fn skip_sacked(&self, seq: u32, snd_max: u32) -> bool {
        self.kind == RecoveryKind::Sack && seq < snd_max && self.sb.is_sacked(seq)
    }

    /// SACK-based recovery transmissions (RFC 6675 §5 with FACK's pipe):
    /// while `pipe < wnd`, the lowest lost segment (NextSeg rule 1), else new
    /// data if `can_send_new` (rule 2); `None` when nothing may be sent.
    ///
    /// In a PRR recovery `wnd` is ignored: the budget of
    /// [`Recovery::prr_on_ack`] is spent instead, one segment per call.
    #[inline]
    pub fn sack_next(&mut self, wnd: u32, snd_max: u32, can_send_new: bool) -> Option<SackNext> {
        // (`prr` is only ever set with `prr_on`)
        let prr = self.prr.is_some();
        if prr && self.prr_budget == 0 || !prr && self.sb.pipe(snd_max) >= wnd {
            return None;
        }
        let next = match self.sb.next_lost().filter(|&h| h < snd_max) {
            Some(h) => {
                self.sb.mark_retx(h);
                Some(SackNext::Retransmit(h))
            }
            None => can_send_new.then_some(SackNext::NewData),
        };
        if next.is_some() && prr {
            self.take_prr_budget();
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(classify(10, 10, true), RecoveryAck::Full);
        assert_eq!(classify(9, 10, true), RecoveryAck::Partial);
        assert_eq!(classify(9, 10, false), RecoveryAck::RenoExit);
    }

    /// RFC 5681 §3.2 / RFC 6582 §3.2 by hand: 20 segments out, window 10
    /// after the reduction; three duplicates enter recovery with inflation
    /// 3, a fourth inflates to 4; the partial ACK of 5 segments deflates to
    /// 4 - 5 + 1 = 0 and restarts the timer only the first time.
    #[test]
    fn newreno_inflation_and_partial_acks() {
        let mut r = Recovery::new(RecoveryKind::new(CcKind::Newreno, false, false));
        assert!(!r.on_dup_ack(0) && !r.on_dup_ack(0));
        assert!(r.on_dup_ack(0));
        assert!(r.enter(20));
        assert_eq!(r.inflation(), 3.0);
        assert!(!r.on_dup_ack(0));
        assert_eq!(r.inflation(), 4.0);
        assert_eq!(
            r.on_new_ack(5, 5, 10.0),
            NewAck::Partial {
                restart_timer: true
            }
        );
        assert_eq!(r.inflation(), 0.0);
        assert_eq!(
            r.on_new_ack(6, 1, 10.0),
            NewAck::Partial {
                restart_timer: false
            }
        );
        assert_eq!(r.on_new_ack(20, 14, 10.0), NewAck::Exit);
        assert!(!r.in_recovery() && r.inflation() == 0.0);
        // Duplicates of data sent before `recover` do not re-enter.
        for _ in 0..3 {
            assert!(!r.on_dup_ack(15));
        }
    }

    /// RFC 6937's equations on its one-loss case (§5's example: Reno, 20
    /// segments in flight, one lost, `ssthresh = 10`, `RecoverFS = 20`; the
    /// pipe is 19 at the start). Each ACK delivers one segment. While
    /// `pipe > ssthresh` the proportional part sends
    /// `CEIL(prr_delivered * 10 / 20) - prr_out`: one segment per two
    /// delivered, the first being the retransmission. At the 17th ACK the
    /// pipe is down to `ssthresh` and the bound takes over (`ssthresh - pipe`:
    /// 0, then one per ACK). The flight reaches `ssthresh` exactly at the end
    /// of the round, with 10 segments sent, where RFC 6675 would send nothing
    /// for 9 ACKs and then one per ACK. Sequence derived by hand from §3.
    #[test]
    fn prr_one_loss_halves_smoothly() {
        let (ssthresh, mut pipe) = (10u32, 19u32);
        let mut p = Prr::new(20);
        let mut sent = Vec::new();
        for _ in 1..=19u32 {
            // The ACK took one segment out of the network; what we send adds to it.
            let n = p.sndcnt(1, pipe - 1, ssthresh);
            pipe = pipe - 1 + n;
            p.on_sent(n);
            sent.push(n);
        }
        let want = [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1];
        assert_eq!(sent, want);
        assert_eq!((pipe, p.out, p.delivered), (ssthresh, 10, 19));
    }

    /// PRR-SSRB below `ssthresh` (RFC 6937 §3, the bound): after a burst of
    /// losses the pipe is 4 with `ssthresh = 10` and nothing owed (`prr_out =
    /// prr_delivered`); each ACK delivering one segment may send
    /// `MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, 1) + 1) = 2`, i.e.
    /// the flight grows by one per ACK (slow start) up to `ssthresh`, never
    /// beyond.
    #[test]
    fn prr_ssrb_slow_starts_to_ssthresh() {
        let mut p = Prr::new(20);
        p.delivered = 8;
        p.out = 8;
        let mut pipe = 4u32;
        let mut sent = Vec::new();
        for _ in 0..8 {
            let n = p.sndcnt(1, pipe - 1, 10);
            pipe = pipe - 1 + n;
            p.on_sent(n);
            sent.push(n);
        }
        assert_eq!(sent, [2, 2, 2, 2, 2, 2, 1, 1]);
        assert_eq!(pipe, 10);
        // Conservative when owed nothing and the ACK delivered a lot: MAX(.., DeliveredData) + 1.
        let mut q = Prr::new(20);
        assert_eq!(q.sndcnt(5, 2, 10), 6);
    }

    /// The scoreboard-driven PRR recovery: 20 segments out, segment 0 lost,
    /// `ssthresh = 10`. The ACK entering recovery SACKs 1..4
    /// (`DeliveredData = 4`, pipe 15): `CEIL(4 * 10 / 20) = 2` segments, the
    /// retransmission and one new one (pipe 17). Each later ACK SACKs one
    /// more segment: one new segment on every other ACK until the 13th finds
    /// the pipe (`snd_max - fack + retransmissions`, 17 + sent - k) at
    /// `ssthresh`; then the bound sends `ssthresh - pipe` (0, 1, 1).
    /// `prr_out = 10` after the 15 ACKs, as in the example above.
    #[test]
    fn prr_paces_sack_recovery() {
        let mut r = Recovery::new(RecoveryKind::Sack).with_prr(true);
        let sack = |r: &mut Recovery, upto: u16| {
            r.on_sack_blocks(0, &[1, upto, 0, 0, 0, 0], 0, 20);
        };
        sack(&mut r, 5);
        assert!(
            r.on_dup_ack(0),
            "FACK: 0 is lost with 4 segments SACKed above it"
        );
        assert!(!r.enter(20));
        r.prr_on_ack(10, 20);
        assert_eq!(r.prr().map(|p| p.recover_fs), Some(20));
        assert_eq!(r.sack_next(0, 20, true), Some(SackNext::Retransmit(0)));
        assert_eq!(r.sack_next(0, 20, true), Some(SackNext::NewData));
        assert_eq!(r.sack_next(0, 21, true), None);
        let mut snd_max = 21;
        let mut new = Vec::new();
        for upto in 6..=20u16 {
            sack(&mut r, upto);
            r.on_dup_ack(0);
            r.prr_on_ack(10, snd_max);
            let mut n = 0;
            while let Some(SackNext::NewData) = r.sack_next(0, snd_max, true) {
                snd_max += 1;
                n += 1;
            }
            new.push(n);
        }
        assert_eq!(r.prr().map(|p| (p.delivered, p.out)), Some((19, 10)));
        assert_eq!(new, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1]);
    }

    #[test]
    fn kinds() {
        assert_eq!(
            RecoveryKind::new(CcKind::Reno, false, false),
            RecoveryKind::Reno
        );
        assert_eq!(
            RecoveryKind::new(CcKind::Reno, false, true),
            RecoveryKind::NewReno
        );
        assert_eq!(
            RecoveryKind::new(CcKind::Cubic, false, false),
            RecoveryKind::NewReno
        );
        for linux in [false, true] {
            assert_eq!(
                RecoveryKind::new(CcKind::Reno, true, linux),
                RecoveryKind::Sack
            );
        }
    }
}
