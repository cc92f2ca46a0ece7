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
    /// The recovery for controller `cc`: SACK recovery if `sack`, else
    /// Reno's for Reno and NewReno's for NewReno and CUBIC.
    pub fn new(cc: CcKind, sack: bool) -> Self {
        match (sack, cc) {
            (true, _) => RecoveryKind::Sack,
            (false, CcKind::Reno) => RecoveryKind::Reno,
            (
                false,
                CcKind::Newreno | CcKind::Cubic | CcKind::Dctcp | CcKind::Prague | CcKind::Ledbat,
            ) => RecoveryKind::NewReno,
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
        }
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

    /// The SACK information of an ACK for `ack` (SACK flows only): the
    /// scoreboard drops what is cumulatively acknowledged and records the
    /// blocks, bounded by `snd_max`.
    #[inline]
    pub fn on_sack_blocks(&mut self, ack: u32, blocks: &[u16; 6], snd_una: u32, snd_max: u32) {
        if ack > snd_una {
            self.sb.advance(ack);
        }
        self.sb.apply(ack, blocks, snd_max);
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
        (self.dupacks == DUPTHRESH || (self.kind == RecoveryKind::Sack && self.sb.is_lost(ack)))
            && (ack > self.recover || self.recover == 0)
    }

    /// Enters fast recovery with `snd_max` outstanding. Returns true if the
    /// first unacknowledged segment is to be retransmitted now (Reno and
    /// NewReno, RFC 5681 §3.2 step 2, with the window inflated by
    /// [`DUPTHRESH`], step 3); with SACK the retransmission comes from the
    /// pipe-limited loop ([`Recovery::sack_next`], RFC 6675 §5 step (4)).
    #[inline]
    pub fn enter(&mut self, snd_max: u32) -> bool {
        self.recover = snd_max;
        self.in_recovery = true;
        self.partial_seen = false;
        if self.kind == RecoveryKind::Sack {
            self.sb.new_episode();
            self.inflation = 0.0;
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
    #[inline]
    pub fn sack_next(&mut self, wnd: u32, snd_max: u32, can_send_new: bool) -> Option<SackNext> {
        if self.sb.pipe(snd_max) >= wnd {
            return None;
        }
        if let Some(h) = self.sb.next_lost() {
            if h < snd_max {
                self.sb.mark_retx(h);
                return Some(SackNext::Retransmit(h));
            }
        }
        can_send_new.then_some(SackNext::NewData)
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
        let mut r = Recovery::new(RecoveryKind::new(CcKind::Newreno, false));
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

    #[test]
    fn kinds() {
        assert_eq!(RecoveryKind::new(CcKind::Reno, false), RecoveryKind::Reno);
        assert_eq!(
            RecoveryKind::new(CcKind::Cubic, false),
            RecoveryKind::NewReno
        );
        assert_eq!(RecoveryKind::new(CcKind::Reno, true), RecoveryKind::Sack);
    }
}
