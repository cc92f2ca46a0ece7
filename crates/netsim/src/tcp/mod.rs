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
//!   and CUBIC follow RFC 6582 partial-ACK handling ([`recovery`]). Timeouts
//!   follow RFC 6298 (Karn's rule, exponential backoff) with Linux's use of
//!   the minimum RTO (RTO = SRTT + max(4 RTTVAR, min_rto), [`rtt`]), and go
//!   back N (skipping SACKed segments with SACK).
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
//!
//! Layout, one concern per module:
//! * [`sender`]: [`TcpSender`], sequence state, transmission, the
//!   retransmission timer and the ECN reaction (CWR state); it drives the
//!   three below.
//! * [`rtt`]: [`rtt::RttEstimator`], RFC 6298 SRTT/RTTVAR and the RTO.
//! * [`recovery`]: [`recovery::Recovery`], duplicate ACKs, fast retransmit,
//!   Reno/NewReno fast recovery and SACK recovery (on [`sack`]'s scoreboard).
//! * [`cc`]: the [`cc::Controller`] trait, whose implementations own the
//!   window (`cwnd`, `ssthresh`): Reno, NewReno, CUBIC, statically
//!   dispatched through [`cc::AnyController`].
//! * [`receiver`]: [`TcpReceiver`], reassembly, ACK generation, ECN echo.
//! * [`sack`]: SACK runs and blocks (receiver), scoreboard (sender).
//! * [`pacing`]: [`pacing::Pacer`], a paced flow's earliest departure time (Linux
//!   `tcp_wstamp_ns`) and Linux's pacing rate (`tcp_update_pacing_rate`).
//! * [`rate`]: [`rate::RateSampler`], delivery-rate estimation (Linux tcp_rate.c) for the
//!   controllers that read rate samples (BBR).

pub mod accecn;
pub mod cc;
pub mod minmax;
pub mod pacing;
pub mod rack;
pub mod rate;
pub mod rcvbuf;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod sack;
pub mod sender;

use crate::engine::Ns;
pub use cc::CcKind;
pub use receiver::{TcpReceiver, DELACK_TIMEOUT, ECN_QUICKACKS, MAX_QUICKACKS};
pub use recovery::DUPTHRESH;
pub use rtt::{CLOCK_G, DEFAULT_MIN_RTO, INITIAL_RTO, MAX_RTO, RTO_ALPHA, RTO_BETA, RTO_K};
pub use sender::{TcpSender, TcpStats};

pub use experiment::config::{TcpExtras, DEFAULT_INIT_CWND};

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
    /// Proportional rate reduction (RFC 6937, PRR-SSRB) paces the SACK
    /// recovery's transmissions instead of halving the window at once (see
    /// [`recovery::Prr`]); only with `sack`.
    pub prr: bool,
    /// Accurate ECN feedback ([`accecn`]) negotiated by both ends (only with ECN).
    pub accecn: bool,
    /// Prague's RTT independence ([`cc::Prague::set_rtt_scaling`]); ignored by the others.
    pub rtt_scaling: bool,
    /// Pace transmissions at Linux's `tcp_update_pacing_rate` (as a host with `sch_fq`
    /// does); a controller that sets its own pacing rate (BBR) is paced regardless (see
    /// [`pacing`]).
    pub pacing: bool,
    /// The `linux` profile's mechanisms (timestamps, Linux delayed ACK, HyStart, RACK-TLP;
    /// all off: the `classic` profile).
    pub extras: TcpExtras,
}

impl TcpParams {
    /// The same parameters with the given `linux`-profile mechanisms.
    pub fn with_extras(mut self, extras: TcpExtras) -> Self {
        self.extras = extras;
        self
    }
}
