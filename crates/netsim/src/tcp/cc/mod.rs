//! Congestion controllers: the window law, apart from loss detection and
//! recovery (the shape of smoltcp's `socket::tcp::congestion::Controller`
//! and of Linux's `struct tcp_congestion_ops`).
//!
//! A controller **owns** the congestion window `cwnd` and the slow-start
//! threshold `ssthresh`, both in segments (`f64`: congestion avoidance grows
//! `cwnd` by fractions of a segment). The sender ([`super::sender`]) reads
//! [`Controller::window`] and reports events to the controller; it never
//! writes the window. Fast-recovery window inflation (RFC 5681 §3.2 steps
//! 3–4) is not part of `cwnd`: it belongs to the loss recovery
//! ([`super::recovery`]), as ns-2's `dupwnd_` does.
//!
//! Invariants every controller keeps:
//! * `window() >= 1`; `ssthresh()` is infinite before the first congestion
//!   signal and at least [`reno::MIN_SSTHRESH`] after it;
//! * after `on_congestion(Loss | Ecn)` and after `on_recovery_end`,
//!   `window() == ssthresh()` (RFC 5681 §3.2 step 2, RFC 6582 §3.2 step 3
//!   option 2, RFC 3168 §6.1.2); after `on_congestion(Timeout)`,
//!   `window() == LOSS_WINDOW` (RFC 5681 §3.1);
//! * the window grows only on an ACK with [`AckEvent::may_raise_cwnd`].
//!
//! Static dispatch: the sender holds an [`AnyController`] (an enum over the
//! controllers whose [`Controller`] impl is a `match`), so the per-packet
//! path has no `dyn`.
//!
//! Adding a controller takes a file here implementing [`Controller`] (and
//! `with_window(cwnd, ssthresh)`) and one line in the registry,
//! `experiment::cc` (`with_congestion_controllers`), from which the module,
//! [`CcKind`], [`AnyController`] and its dispatch are generated. The per-ACK ECN data DCTCP's EWMA of the marked fraction
//! needs (RFC 8257 §3.3) is in [`AckEvent`] (`acked`, `acked_bytes`, `ece`,
//! `ece_acked`, `ece_bytes`), and `ack`/`snd_max` let the controller delimit
//! its own once-per-RTT observation windows (Linux `dctcp_update_alpha`'s
//! `next_seq`); the cut by alpha/2 (RFC 8257 §3.4) goes in
//! `on_congestion(now, Congestion::Ecn, ..)`, which the sender calls at most
//! once per window of data (RFC 3168 §6.1.2). [`Controller::on_ack`] is
//! called for every ACK, in every [`CaState`], so the EWMA sees all of
//! them. (An exact CE echo, RFC 8257 §3.2, is a receiver mode; Prague's
//! ECT(1) is a packet codepoint.)
//!
//! [`dctcp`] (RFC 8257), [`prague`] (TCP Prague) and [`ledbat`] (RFC 6817, whose
//! delay filters read [`AckEvent::rtt`]) are built this way.
//! Prague departs from the invariants above on purpose: its window also
//! grows during the CWR period (Linux `tcp_prague` runs its `cong_control`
//! on every ACK), and its reductions set `ssthresh` to the reduced window.

use super::rate::{RateSample, RateSampler};
use crate::engine::Ns;
pub use experiment::cc::CcKind;

pub mod classic_ecn;
pub mod hystart;

impl AnyController {
    /// The same controller with CUBIC's HyStart on or off (no effect on other controllers).
    pub fn with_hystart(mut self, on: bool) -> Self {
        if let AnyController::Cubic(c) = &mut self {
            c.hystart = hystart::Hystart::new(on);
        }
        self
    }

    /// The same controller with Linux's window arithmetic ([`reno::Reno::linux`],
    /// [`cubic::Cubic::linux`]) on or off (Reno, NewReno and CUBIC; no effect on other
    /// controllers).
    pub fn with_linux_window(self, on: bool) -> Self {
        match self {
            AnyController::Reno(c) => AnyController::Reno(c.linux(on)),
            AnyController::Newreno(c) => AnyController::Newreno(c.linux(on)),
            AnyController::Cubic(c) => AnyController::Cubic(c.linux(on)),
            other => other,
        }
    }
}

/// The controllers' modules, their types, [`AnyController`] (one variant per [`CcKind`], of
/// the same name) and its constructor and dispatch, all from the one registry line each
/// controller has (`experiment::with_congestion_controllers`).
macro_rules! controllers {
    ($($variant:ident($module:ident::$ty:ident) = $name:literal, ecn: $ecn:literal,
       ect1: $ect1:literal, recovery: $rec:ident, kernel: $kernel:expr, $help:literal;)*) => {
        $(
            pub mod $module;
            pub use $module::$ty;
        )*

        /// The controllers, for static dispatch.
        #[derive(Clone, Copy, Debug)]
        pub enum AnyController {
            $(
                #[doc = $help]
                $variant($ty),
            )*
        }

        macro_rules! dispatch {
            ($self_:expr, $c:ident => $e:expr) => {
                match $self_ {
                    $(AnyController::$variant($c) => $e,)*
                }
            };
        }

        impl AnyController {
            /// Controller for `kind` in its initial state but with the given window
            /// and threshold (segments; hand-worked examples and tests).
            pub fn with_window(kind: CcKind, cwnd: f64, ssthresh: f64) -> Self {
                match kind {
                    $(CcKind::$variant => AnyController::$variant($ty::with_window(cwnd, ssthresh)),)*
                }
            }

            /// Which algorithm this is.
            pub fn kind(&self) -> CcKind {
                match self {
                    $(AnyController::$variant(_) => CcKind::$variant,)*
                }
            }
        }
    };
}

experiment::with_congestion_controllers!(controllers);

/// The loss window, 1 segment: `cwnd` after a retransmission timeout,
/// according to RFC 5681 §3.1 (LW = 1 full-sized segment).
pub const LOSS_WINDOW: f64 = 1.0;

/// The sender's congestion state when an ACK is processed (Linux
/// `icsk_ca_state`; the Loss state after a timeout is not distinguished
/// from Open, since the window grows in both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// No reduction in progress (Linux `TCP_CA_Open`).
    Open,
    /// ECN reduction period (Linux `TCP_CA_CWR`, ns-3 `CA_CWR`): from the
    /// reaction to ECE until the cumulative ACK passes the recovery point
    /// (see [`super::TcpSender::on_ack`]).
    Cwr,
    /// Fast recovery (Linux `TCP_CA_Recovery`), including the ACK that ends
    /// it.
    Recovery,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// Loss detected by duplicate ACKs or the SACK scoreboard (fast
    /// retransmit, RFC 5681 §3.2 step 2, RFC 6675 §5): reduce `ssthresh`,
    /// `cwnd = ssthresh`.
    Loss,
    /// ECN-Echo, at most once per window of data (RFC 3168 §6.1.2): the same
    /// reduction as a loss, without retransmission.
    Ecn,
    /// Retransmission timeout (RFC 5681 §3.1, RFC 6298 §5.4–5.6): `cwnd =`
    /// [`LOSS_WINDOW`]; `ssthresh` is reduced unless `repeated` (the timer
    /// expired again before the retransmission was acknowledged: RFC 5681
    /// §3.1 holds `ssthresh` on repeated timeouts).
    Timeout {
        /// A further timeout of the same data, or (Linux `tcp_enter_loss`, the
        /// `linux_states` option) a timeout inside a reduction that already set `ssthresh`
        /// in this window: `ssthresh` is kept.
        repeated: bool,
    },
}

/// What one ACK tells the controller. Segments count as in
/// [`crate::packet::Packet`]; bytes are payload bytes; times are ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckEvent {
    /// The cumulative ACK after this one (`snd_una`, the first segment not
    /// acknowledged).
    pub ack: u32,
    /// One past the highest segment sent (`snd_max`) when the ACK arrived.
    pub snd_max: u32,
    /// Segments newly acknowledged cumulatively (0 for a duplicate ACK).
    pub acked: u32,
    /// Segments newly delivered (Linux `acked_sacked`, what `tcp_cong_avoid` grows the window
    /// by): with SACK those cumulatively acknowledged that were not SACKed before plus those
    /// newly SACKed, so a repaired hole does not count again what the receiver had already
    /// reported; without SACK, `acked`.
    pub delivered: u32,
    /// Payload bytes of the segments of `acked`.
    pub acked_bytes: u64,
    /// The ACK carries ECN-Echo (never set without ECN).
    pub ece: bool,
    /// Segments of `acked` acknowledged by an ACK with ECE (`acked` if
    /// `ece`, else 0): RFC 8257 §3.3's "bytes acknowledged with ECE" in
    /// segments.
    pub ece_acked: u32,
    /// Payload bytes of those segments.
    pub ece_bytes: u64,
    /// This ACK's RTT sample (ns), if it gives one (new data acknowledged,
    /// echoed segment not a retransmission: Karn's rule, RFC 6298 §3).
    pub rtt: Option<Ns>,
    /// The RTT of the newest acknowledged segment, without a delayed-ACK wait (Linux
    /// `ca_rtt_us`): `rtt` less the receiver's hold time when AccECN reports it
    /// ([`crate::tcp::accecn`]), else `rtt`.
    pub ca_rtt: Option<Ns>,
    /// Smoothed RTT (ns) including this sample; 0 before the first sample.
    pub srtt: Ns,
    /// The sender's state when the ACK arrived (after its ECN reaction to
    /// this ACK, before recovery processing ends a recovery).
    pub state: CaState,
    /// Linux `tcp_is_cwnd_limited`: the window was the limit of the last transmissions, or
    /// in slow start below twice the largest flight of the last round; a window that
    /// the receive window, pacing or the application held back does not grow (the `linux`
    /// profile; always true otherwise).
    pub cwnd_limited: bool,
}

impl AckEvent {
    /// The window law may run: new data acknowledged in the Open state.
    /// Linux `tcp_cong_control` calls `tcp_cong_avoid` only if not
    /// `tcp_in_cwnd_reduction` (CWR or Recovery) and `tcp_may_raise_cwnd`;
    /// so no ACK grows the window during an ECN reduction period (including
    /// the ACK carrying the ECE) or a fast recovery.
    #[inline]
    pub fn may_raise_cwnd(&self) -> bool {
        self.state == CaState::Open && self.acked > 0 && self.cwnd_limited
    }
}

/// A congestion controller: owns `cwnd` and `ssthresh` (segments).
pub trait Controller {
    /// Congestion window (segments, >= 1), without fast-recovery
    /// inflation.
    fn window(&self) -> f64;

    /// Slow-start threshold (segments; infinite before the first congestion
    /// signal).
    fn ssthresh(&self) -> f64;

    /// One ACK, called for every ACK the sender processes (new, duplicate or
    /// old), after the sender's ECN and loss-recovery reactions to it. The
    /// window law runs only if [`AckEvent::may_raise_cwnd`].
    fn on_ack(&mut self, now: Ns, ack: &AckEvent);

    /// Before the sender's ECN and loss reactions to an ACK (Linux's `in_ack_event` hook):
    /// the cumulative ACK (`snd_una` after it), `snd_max`, the payload bytes it newly
    /// acknowledges and how many of them are CE-marked (all of them if it carries ECE with
    /// RFC 3168 / per-segment feedback; the AccECN count times the MSS, at most all, with
    /// AccECN). Default: nothing (DCTCP updates its alpha
    /// here, so that the cut on the same ACK uses the new value, as Linux does).
    #[inline]
    fn in_ack_event(&mut self, _snd_una: u32, _snd_max: u32, _acked_bytes: u64, _ece_bytes: u64) {}

    /// A congestion signal at `now`. `flight` is FlightSize (segments) for
    /// the `ssthresh` computation (RFC 5681 §3.1 equation (4)), already
    /// bounded by `window()` (see `TcpSender::flight_for_ssthresh`).
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32);

    /// Fast recovery ended (full ACK, RFC 6582 §3.2 step 3 option 2; Reno's
    /// exit on any new ACK, RFC 5681 §3.2 step 6; SACK recovery covering
    /// `recover`, RFC 6675 §5): deflate, `cwnd = ssthresh`.
    fn on_recovery_end(&mut self, now: Ns);

    /// The pacing rate (payload bytes/s) this controller sets, given the smoothed RTT `srtt`
    /// (ns, 0 before a sample) and the MSS (Linux: `sk_pacing_rate` written by the
    /// controller, as BBR's `cong_control` and Prague's `prague_update_pacing_rate` do), or
    /// `None` (default): then Linux's `tcp_update_pacing_rate`
    /// ([`super::pacing::linux_rate`]) applies if the flow is paced.
    #[inline]
    fn pacing_rate(&self, _srtt: Ns, _mss: u32) -> Option<u64> {
        None
    }

    /// The fewest segments of one TSO/GSO packet (Linux `ca_ops->min_tso_segs`, else
    /// `net.ipv4.tcp_min_tso_segs`, [`super::pacing::MIN_TSO_SEGS`]).
    #[inline]
    fn min_tso_segs(&self) -> u32 {
        super::pacing::MIN_TSO_SEGS
    }

    /// The controller paces the flow whatever its group says (Linux `SK_PACING_NEEDED`: BBR, BBRv3,
    /// and Prague with `TcpExtras::prague_pacing`). Default: no (paced only with `pacing = true`).
    #[inline]
    fn paces(&self) -> bool {
        false
    }

    /// The controller reads delivery-rate samples (default: no): the sender then runs a
    /// [`super::rate::RateSampler`] and calls [`Controller::cong_control`] on every ACK.
    #[inline]
    fn wants_rate_sample(&self) -> bool {
        false
    }

    /// Linux's `cong_control` hook: after [`Controller::on_ack`], on every ACK, the ACK's
    /// rate sample and the connection's delivery state (which the controller may mark
    /// app-limited, as BBR's ProbeRTT does). Called only if
    /// [`Controller::wants_rate_sample`]. Default: nothing.
    #[inline]
    fn cong_control(&mut self, _now: Ns, _rs: &RateSample, _tp: &mut RateSampler) {}

    /// A per-flow seed for a controller's own randomness (BBR's random start of the gain
    /// cycle); called once by the sender. Default: nothing.
    #[inline]
    fn seed(&mut self, _seed: u64) {}
}

impl AnyController {
    /// Controller for `kind` with initial window `init_cwnd` segments and
    /// infinite `ssthresh`.
    pub fn new(kind: CcKind, init_cwnd: u32) -> Self {
        Self::with_window(kind, init_cwnd as f64, f64::INFINITY)
    }
}

impl Controller for AnyController {
    #[inline]
    fn window(&self) -> f64 {
        dispatch!(self, c => c.window())
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        dispatch!(self, c => c.ssthresh())
    }

    #[inline]
    fn on_ack(&mut self, now: Ns, ack: &AckEvent) {
        dispatch!(self, c => c.on_ack(now, ack))
    }

    #[inline]
    fn in_ack_event(&mut self, snd_una: u32, snd_max: u32, acked_bytes: u64, ece_bytes: u64) {
        dispatch!(self, c => c.in_ack_event(snd_una, snd_max, acked_bytes, ece_bytes))
    }

    #[inline]
    fn on_congestion(&mut self, now: Ns, kind: Congestion, flight: u32) {
        dispatch!(self, c => c.on_congestion(now, kind, flight))
    }

    #[inline]
    fn on_recovery_end(&mut self, now: Ns) {
        dispatch!(self, c => c.on_recovery_end(now))
    }

    #[inline]
    fn pacing_rate(&self, srtt: Ns, mss: u32) -> Option<u64> {
        dispatch!(self, c => c.pacing_rate(srtt, mss))
    }

    #[inline]
    fn min_tso_segs(&self) -> u32 {
        dispatch!(self, c => c.min_tso_segs())
    }

    #[inline]
    fn paces(&self) -> bool {
        dispatch!(self, c => c.paces())
    }

    #[inline]
    fn wants_rate_sample(&self) -> bool {
        dispatch!(self, c => c.wants_rate_sample())
    }

    #[inline]
    fn cong_control(&mut self, now: Ns, rs: &RateSample, tp: &mut RateSampler) {
        dispatch!(self, c => c.cong_control(now, rs, tp))
    }

    #[inline]
    fn seed(&mut self, seed: u64) {
        dispatch!(self, c => c.seed(seed))
    }
}

/// An ACK in the Open state of `acked` new segments (no ECE, no RTT
/// sample) with smoothed RTT `srtt`: for tests of the window laws.
#[cfg(test)]
pub(crate) fn open_ack(acked: u32, srtt: Ns) -> AckEvent {
    AckEvent {
        ack: 0,
        snd_max: 0,
        acked,
        delivered: acked,
        acked_bytes: 0,
        ece: false,
        ece_acked: 0,
        ece_bytes: 0,
        rtt: None,
        ca_rtt: None,
        srtt,
        state: CaState::Open,
        cwnd_limited: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-flow memory: BBRv3's state is no larger than BBRv1's (152 bytes), so the
    /// controller enum, 152 bytes before BBRv3, grows only by the tag it can no longer hide
    /// in a niche (160 bytes; measured before and after, x86-64).
    #[test]
    fn controller_state_size() {
        use std::mem::size_of;
        assert!(
            size_of::<Bbr3>() <= size_of::<Bbr>(),
            "{}",
            size_of::<Bbr3>()
        );
        assert!(
            size_of::<AnyController>() <= 160,
            "{}",
            size_of::<AnyController>()
        );
    }

    /// The invariants of the module doc, for every controller.
    #[test]
    fn window_invariants() {
        for kind in [CcKind::Reno, CcKind::Newreno, CcKind::Cubic] {
            let mut c = AnyController::new(kind, 10);
            assert_eq!(c.kind(), kind);
            assert_eq!((c.window(), c.ssthresh()), (10.0, f64::INFINITY));
            for i in 0..50 {
                c.on_ack(i, &open_ack(1, 100_000_000));
            }
            assert!(c.window() > 10.0);
            c.on_congestion(60, Congestion::Loss, 30);
            assert_eq!(c.window(), c.ssthresh());
            assert!(c.ssthresh() >= reno::MIN_SSTHRESH);
            let w = c.window();
            // No growth outside the Open state or without new data.
            for state in [CaState::Cwr, CaState::Recovery] {
                c.on_ack(
                    61,
                    &AckEvent {
                        state,
                        ..open_ack(1, 100_000_000)
                    },
                );
            }
            c.on_ack(62, &open_ack(0, 100_000_000));
            assert_eq!(c.window(), w);
            c.on_congestion(63, Congestion::Timeout { repeated: false }, 1);
            assert_eq!(
                (c.window(), c.ssthresh()),
                (LOSS_WINDOW, reno::MIN_SSTHRESH)
            );
            c.on_congestion(64, Congestion::Timeout { repeated: true }, 100);
            assert_eq!(
                (c.window(), c.ssthresh()),
                (LOSS_WINDOW, reno::MIN_SSTHRESH)
            );
            c.on_ack(65, &open_ack(1, 100_000_000));
            assert_eq!(c.window(), 2.0);
            c.on_congestion(66, Congestion::Ecn, 2);
            c.on_recovery_end(67);
            assert_eq!((c.window(), c.ssthresh()), (2.0, 2.0));
        }
    }
}
