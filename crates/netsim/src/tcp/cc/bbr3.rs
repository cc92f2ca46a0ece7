//! BBR version 3 (`cc = "bbr3"`), following the IETF draft draft-ietf-ccwg-bbr (revision 06,
//! N. Cardwell, I. Swett, J. Beshay (eds.), "BBR Congestion Control", 2026), which specifies
//! BBRv3, and, where the draft leaves a choice open (the ECN response), Google's BBRv3 release
//! (the `v3` branch of github.com/google/bbr, net/ipv4/tcp_bbr.c). Methods are named after the
//! draft's pseudo-code (and the kernel function where the draft has none); the units are
//! [`super::bbr`]'s (packets, packets per µs << 24, gains << 8), and the per-ACK path is the
//! kernel's `bbr_main`, which the sender calls through [`Controller::cong_control`].
//!
//! The model (draft §2.9, §3.4): `max_bw` (max of two ProbeBW cycles, `bw_hi`), the short-term
//! bounds `bw_lo` / `inflight_lo` (the draft's `bw_shortterm` / `inflight_shortterm`, cut once
//! per round with loss or ECN when not probing) and the long-term bound `inflight_hi` (the
//! draft's `inflight_longterm`, set when a probe's loss or CE rate went too high). The state
//! machine (draft §5.3): Startup, Drain, ProbeBW's Down, Cruise, Refill and Up, ProbeRTT.
//!
//! What the simulator does instead of the kernel (see `docs/tcp.md`, "BBRv3"):
//! * `C.is_cwnd_limited` is taken as "the flight before this ACK filled cwnd".
//! * The per-lost-packet check (`bbr_skb_marked_lost`, the draft's `HandleLostPacket` /
//!   `InflightAtLoss`) is not run: the loss rate is judged on each ACK's rate sample
//!   (`RS.lost` over `RS.tx_in_flight`), as `bbr_adapt_upper_bounds` also does.
//! * No undo of spurious recoveries (draft §5.5.11): the simulator has no DSACK or undo.
//! * Restart from idle (§5.4), TSO sizing beyond the send quantum, PLB and the kernel's fast
//!   path are not modelled.
//! * ECN (the draft, §3.7, specifies none beyond "MUST treat any CE marks as congestion"):
//!   Google's response, for any flow that negotiated ECN (the kernel also requires a
//!   low-latency route flag and a min RTT of at most 5 ms).

use super::bbr::{
    bdp, in_net_at_edt, rand_below, AckAggregation, Bbr, BBR_SCALE, BBR_UNIT, BW_UNIT,
    CWND_GAIN, CWND_MIN_TARGET, EXTRA_ACKED_WIN_RTTS, FULL_BW_CNT, FULL_BW_THRESH, MIN_RTT_WIN,
    PROBE_RTT_MODE, TCP_INFINITE_SSTHRESH, ssthresh_f64,
};
use super::{AckEvent, Congestion, Controller};
use crate::engine::Ns;
use crate::tcp::rate::{RateSample, RateSampler, CA_LOSS, CA_OPEN, CA_RECOVERY};

/// `BBR.StartupPacingGain` = 4 ln 2 ≈ 2.77 (draft §2.5; kernel `bbr_startup_pacing_gain`).
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// `BBR.DefaultCwndGain` = 2, also Startup's cwnd gain (draft §2.6).
pub const DEFAULT_CWND_GAIN: u32 = CWND_GAIN;
/// `BBR.DrainPacingGain` = 0.5 (draft §2.5, §5.3.2; the kernel uses 1/2.885 ≈ 0.35).
pub const DRAIN_PACING_GAIN: u32 = BBR_UNIT / 2;
/// ProbeBW_DOWN pacing gain 0.90 (draft §5.3.3.1; the kernel uses 0.91).
pub const PROBE_DOWN_PACING_GAIN: u32 = BBR_UNIT * 90 / 100;
/// ProbeBW_UP pacing gain 1.25 (draft §5.3.3.5).
pub const PROBE_UP_PACING_GAIN: u32 = BBR_UNIT * 5 / 4;
/// ProbeBW_UP cwnd gain 2.25 (draft §5.3.3.5; kernel `bbr_bw_probe_cwnd_gain` = 1/4 added).
pub const PROBE_UP_CWND_GAIN: u32 = BBR_UNIT * 9 / 4;
/// `BBR.ProbeRTTCwndGain` = 0.5 (draft §2.16.2).
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// `BBR.ProbeRTTInterval` = 5 s (draft §2.16.2; kernel `bbr_probe_rtt_win_ms`).
pub const PROBE_RTT_INTERVAL: Ns = 5_000_000_000;
/// `BBR.Beta` = 0.7: the multiplicative decrease per lossy round (draft §2.8).
pub const BETA: u32 = BBR_UNIT * 7 / 10;
/// `BBR.LossThresh` = 2 % (draft §2.8; of 256, as the kernel: 5/256).
pub const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// `BBR.Headroom` = 0.15 (draft §2.8).
pub const HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// `BBRStartupFullLossCnt` = 6 loss events in a round (draft §5.3.1.3).
pub const FULL_LOSS_CNT: u8 = 6;
/// CE ratio above which a probe went too high, 50 % (kernel `bbr_ecn_thresh`).
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// EWMA gain of the CE ratio, 1/16 (kernel `bbr_ecn_alpha_gain`).
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// `inflight_lo` cut per ECN round: `1 - alpha x 1/3` (kernel `bbr_ecn_factor`).
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// After an ECN-only cycle, the first probe adds this fraction of `inflight_hi` (kernel
/// `bbr_ecn_reprobe_gain`).
pub const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// Startup ends after this many rounds with a CE ratio of at least [`ECN_THRESH`] (kernel
/// `bbr_full_ecn_cnt`).
pub const FULL_ECN_CNT: u8 = 2;
/// Reno-coexistence bound on the rounds between probes, 63 (draft §5.3.3.8).
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// The round bound is lowered by a random 0 or 1 (draft `PickProbeWait`).
pub const BW_PROBE_RAND_ROUNDS: u64 = 2;
/// BBR-native wall-clock wait between probes: 2 s ...
pub const BW_PROBE_BASE_US: u32 = 2_000_000;
/// ... plus up to 1 s at random (draft §5.3.3.8.2).
pub const BW_PROBE_RAND_US: u64 = 1_000_000;
/// Drain ends after this many rounds even if the flight stays high (draft §5.3.2).
pub const DRAIN_MAX_ROUNDS: u8 = 3;
/// Largest send quantum, 64 KB (draft §5.6.3).
pub const MAX_SEND_QUANTUM_BYTES: u64 = 64 * 1024;

/// "Infinity" for `bw_lo`, `inflight_lo`, `inflight_hi` (kernel `~0U`).
pub const UNSET: u32 = u32::MAX;

/// `BBR.state` (draft §5.1): ProbeBW's four phases are states of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Accelerate to find the bandwidth.
    Startup,
    /// Drain the queue Startup made.
    Drain,
    /// Decelerate: drain the queue a probe made, leave headroom (pacing gain 0.9).
    ProbeBwDown,
    /// Cruise at the estimated bandwidth, cut on loss / ECN (gain 1).
    ProbeBwCruise,
    /// Refill the pipe for one round before probing (gain 1).
    ProbeBwRefill,
    /// Probe for more bandwidth (gain 1.25, cwnd gain 2.25).
    ProbeBwUp,
    /// Cut the flight to half a BDP to re-measure the min RTT.
    ProbeRtt,
}

/// `BBR.ack_phase` (draft §2.14): what the incoming ACKs say about the probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not probing; not getting probe feedback.
    Init,
    /// Sending at the estimated bandwidth to fill the pipe.
    Refilling,
    /// Inflight rising to probe.
    ProbeStarting,
    /// Getting feedback from the probe.
    ProbeFeedback,
    /// Stopped probing; still getting its feedback.
    ProbeStopping,
}

/// The BBRv3 state (kernel `struct bbr` of the v3 tree, plus `snd_cwnd`, `snd_ssthresh`,
/// `sk_pacing_rate`). Times the kernel keeps in jiffies or µs are kept in ms / µs as `u32`
/// (wrapping, as the kernel's), to keep [`super::AnyController`] at its size.
#[derive(Clone, Copy, Debug)]
pub struct Bbr3 {
    /// `sk_pacing_rate` (payload bytes/s; 0 before the first `cong_control`).
    pub pacing_rate: u64,
    /// ACK-aggregation estimate (draft §5.5.9).
    pub aggr: AckAggregation,
    /// Generator state for the random probe waits.
    rng: u64,
    /// Start of the current ProbeBW phase (µs, wrapping; `BBR.cycle_stamp`).
    cycle_stamp_us: u32,
    /// `BBR.bw_probe_wait` (µs).
    pub probe_wait_us: u32,
    /// `snd_cwnd` (packets).
    pub cwnd: u32,
    /// `snd_ssthresh` (packets; for monitoring: set at Drain entry).
    pub ssthresh: u32,
    /// `BBR.min_rtt` (µs; `u32::MAX` before a sample) and its stamp (ms).
    pub min_rtt_us: u32,
    min_rtt_stamp_ms: u32,
    /// `BBR.probe_rtt_min_delay` (µs) and its stamp (ms).
    pub probe_rtt_min_us: u32,
    probe_rtt_min_stamp_ms: u32,
    /// End of ProbeRTT (ms; 0: not set).
    probe_rtt_done_stamp_ms: u32,
    /// `BBR.next_round_delivered`.
    next_rtt_delivered: u32,
    /// `BBR.prior_cwnd`.
    pub prior_cwnd: u32,
    /// `BBR.full_bw`.
    pub full_bw: u32,
    /// `tp->delivered` ending the loss round (`loss_round_delivered`).
    loss_round_delivered: u32,
    /// `BBR.bw_latest`, `BBR.inflight_latest`: 1-round maxima of delivery rate and volume.
    pub bw_latest: u32,
    /// See `bw_latest`.
    pub inflight_latest: u32,
    /// `bw_lo` (the draft's `bw_shortterm`; [`UNSET`] when not set).
    pub bw_lo: u32,
    /// `bw_hi`: max delivery rate of the current and the previous ProbeBW cycle.
    pub bw_hi: [u32; 2],
    /// `inflight_lo` (the draft's `inflight_shortterm`; [`UNSET`] when not set).
    pub inflight_lo: u32,
    /// `inflight_hi` (the draft's `inflight_longterm`; [`UNSET`] when not set).
    pub inflight_hi: u32,
    /// Packets (S)ACKed per `inflight_hi` increment in ProbeBW_UP.
    bw_probe_up_cnt: u32,
    /// Packets (S)ACKed since the last increment.
    bw_probe_up_acks: u32,
    /// `tp->delivered` / `tp->delivered_ce` at the last alpha update.
    alpha_last_delivered: u32,
    alpha_last_delivered_ce: u32,
    /// `ecn_alpha` (of 256): EWMA of the CE ratio per round.
    pub ecn_alpha: u16,
    /// Current pacing and cwnd gains (of 256).
    pub pacing_gain: u16,
    /// See `pacing_gain`.
    pub cwnd_gain: u16,
    /// Current state.
    pub state: State,
    /// Current ACK phase.
    pub ack_phase: AckPhase,
    /// Linux CA state on the previous ACK.
    prev_ca_state: u8,
    /// Rounds without 25 % bandwidth growth.
    full_bw_cnt: u8,
    /// Rounds since the last probe (`rounds_since_probe`, saturating).
    pub rounds_since_probe: u8,
    /// Rounds of `inflight_hi` growth in ProbeBW_UP.
    bw_probe_up_rounds: u8,
    /// Loss events in the current Startup round.
    loss_events_in_round: u8,
    /// Consecutive Startup rounds with a high CE ratio.
    startup_ecn_rounds: u8,
    /// Rounds spent in Drain.
    drain_rounds: u8,
    /// Initial window (`C.InitialCwnd`).
    init_cwnd: u8,
    /// Flags ([`F_ROUND_START`] ...).
    flags: u32,
}

/// This ACK starts a packet-timed round.
const F_ROUND_START: u32 = 1;
/// This ACK starts a loss round.
const F_LOSS_ROUND_START: u32 = 1 << 1;
/// `BBR.full_bw_reached`.
const F_FULL_BW_REACHED: u32 = 1 << 2;
/// `BBR.full_bw_now`.
const F_FULL_BW_NOW: u32 = 1 << 3;
/// A ProbeRTT round at the low flight is done.
const F_PROBE_RTT_ROUND_DONE: u32 = 1 << 4;
/// Loss / ECN in this round, in this cycle.
const F_LOSS_IN_ROUND: u32 = 1 << 5;
const F_ECN_IN_ROUND: u32 = 1 << 6;
const F_LOSS_IN_CYCLE: u32 = 1 << 7;
const F_ECN_IN_CYCLE: u32 = 1 << 8;
/// Rate samples reflect bandwidth probing (`BBR.is_bw_probe_sample`).
const F_BW_PROBE_SAMPLES: u32 = 1 << 9;
/// The last probe went too high (`BBR.prev_probe_too_high`).
const F_PREV_PROBE_TOO_HIGH: u32 = 1 << 10;
/// The last ProbeBW_UP stopped at `inflight_hi` (`BBR.prev_probe_precautionary`).
const F_STOPPED_RISKY_PROBE: u32 = 1 << 11;
/// The flow negotiated ECN: CE marks are congestion (`ecn_eligible`).
const F_ECN: u32 = 1 << 12;
/// The connection has SACK (`C.has_selective_acks`).
const F_SACK: u32 = 1 << 13;
/// An RTT sample was seen (for the initial pacing rate).
const F_HAS_SEEN_RTT: u32 = 1 << 14;
/// The current ACK carries ECE.
const F_ACK_ECE: u32 = 1 << 15;

/// ms and µs of a time in ns, as the kernel's jiffies and `tcp_mstamp` (wrapping `u32`).
#[inline]
fn ms(t: Ns) -> u32 {
    (t / 1_000_000) as u32
}
#[inline]
fn us(t: Ns) -> u32 {
    (t / 1000) as u32
}
/// `after(a, b)` for wrapping stamps.
#[inline]
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl Bbr3 {
    /// `bbr_init` with window `cwnd` (packets); BBR's own slow-start threshold (infinite).
    pub fn with_window(cwnd: f64, _ssthresh: f64) -> Self {
        let cwnd = (cwnd.round() as u32).max(1);
        Bbr3 {
            pacing_rate: 0,
            aggr: AckAggregation::default(),
            rng: 0x2545_f491_4f6c_dd1d,
            cycle_stamp_us: 0,
            probe_wait_us: 0,
            cwnd,
            ssthresh: TCP_INFINITE_SSTHRESH,
            min_rtt_us: u32::MAX,
            min_rtt_stamp_ms: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp_ms: 0,
            probe_rtt_done_stamp_ms: 0,
            next_rtt_delivered: 0,
            prior_cwnd: 0,
            full_bw: 0,
            // Start the loss rounds after the first full flight is ACKed.
            loss_round_delivered: 1,
            bw_latest: 0,
            inflight_latest: 0,
            bw_lo: UNSET,
            bw_hi: [0, 0],
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            ecn_alpha: BBR_UNIT as u16,
            pacing_gain: STARTUP_PACING_GAIN as u16,
            cwnd_gain: DEFAULT_CWND_GAIN as u16,
            state: State::Startup,
            ack_phase: AckPhase::Init,
            prev_ca_state: CA_OPEN,
            full_bw_cnt: 0,
            rounds_since_probe: 0,
            bw_probe_up_rounds: 0,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            drain_rounds: 0,
            init_cwnd: cwnd.min(0x7f) as u8,
            flags: F_SACK,
        }
    }

    #[inline]
    fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }

    #[inline]
    fn set(&mut self, f: u32, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }

    /// CE marks are congestion signals (the flow negotiated ECN; draft §3.7).
    pub fn set_ecn(&mut self, on: bool) {
        self.set(F_ECN, on);
    }

    /// The connection has SACK (`C.has_selective_acks`; on by default).
    pub fn set_sack(&mut self, on: bool) {
        self.set(F_SACK, on);
    }

    /// `BBR.full_bw_reached`.
    pub fn full_bw_reached(&self) -> bool {
        self.has(F_FULL_BW_REACHED)
    }

    /// `BBR.max_bw`: the max of the two cycles' filters.
    #[inline]
    pub fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `BBR.bw` = min(`max_bw`, `bw_lo`) (draft `BoundBWForModel`).
    #[inline]
    pub fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    /// `BBR.bdp` x `gain` (draft `BDPMultiple`), `C.InitialCwnd` without an RTT sample.
    #[inline]
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        bdp(bw, self.min_rtt_us, gain, self.init_cwnd as u32)
    }

    /// `C.send_quantum` in packets (draft §5.6.3): 1 ms at the pacing rate, at least 2
    /// packets, at most 64 KB.
    pub fn send_quantum(&self, mss: u32) -> u32 {
        let mss = mss.max(1) as u64;
        let bytes = (self.pacing_rate / 1000).clamp(2 * mss, MAX_SEND_QUANTUM_BYTES.max(2 * mss));
        (bytes / mss) as u32
    }

    /// Draft `QuantizationBudget`: at least the offload budget (3 send quanta, §5.5.8) and
    /// `BBR.MinPipeCwnd`; + 2 packets in ProbeBW_UP.
    pub fn quantization_budget(&self, mss: u32, inflight: u32) -> u32 {
        let mut cap = inflight
            .max(3 * self.send_quantum(mss))
            .max(CWND_MIN_TARGET);
        if self.state == State::ProbeBwUp {
            cap += 2;
        }
        cap
    }

    /// Draft `Inflight(bw, gain)`: `BDPMultiple` with the quantization budget.
    pub fn inflight(&self, mss: u32, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(mss, self.bdp(bw, gain))
    }

    /// Draft `TargetInflight` (kernel `bbr_target_inflight`): the BDP (with the budget),
    /// unless congestion cut cwnd.
    fn target_inflight(&self, mss: u32) -> u32 {
        self.inflight(mss, self.bw(), BBR_UNIT).min(self.cwnd)
    }

    /// Draft `InflightWithHeadroom`: `inflight_hi` less 15 % (at least 1), at least 4.
    pub fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = ((self.inflight_hi as u64 * HEADROOM as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi
            .saturating_sub(headroom)
            .max(CWND_MIN_TARGET)
    }

    /// Draft `ProbeRTTCwnd`: half the BDP, at least 4.
    pub fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN)
            .max(CWND_MIN_TARGET)
    }

    /// Draft `IsProbingBW`: Startup, ProbeBW_REFILL, ProbeBW_UP.
    fn is_probing_bandwidth(&self) -> bool {
        matches!(
            self.state,
            State::Startup | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    fn in_probe_bw(&self) -> bool {
        matches!(
            self.state,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    /// Draft `SaveCwnd` (kernel `bbr_save_cwnd`).
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CA_RECOVERY && self.state != State::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// Draft `InitPacingRate`: `StartupPacingGain x C.InitialCwnd / C.srtt` (1 ms before an
    /// RTT sample).
    fn init_pacing_rate(&mut self, mss: u32, srtt: Ns) {
        let rtt_us = if srtt > 0 {
            self.set(F_HAS_SEEN_RTT, true);
            (srtt / 1000).max(1)
        } else {
            1000
        };
        let bw = self.cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = Bbr::bw_to_pacing_rate(mss, bw as u32, STARTUP_PACING_GAIN);
    }

    /// Draft `SetPacingRateWithGain`: `gain x bw x 99 %`, lowered only once the pipe was
    /// full.
    fn set_pacing_rate(&mut self, rs: &RateSample, bw: u32, gain: u32) {
        let rate = Bbr::bw_to_pacing_rate(rs.mss, bw, gain);
        if !self.has(F_HAS_SEEN_RTT) && rs.srtt > 0 {
            self.init_pacing_rate(rs.mss, rs.srtt);
        }
        if self.full_bw_reached() || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Draft `UpdateRound`: a packet-timed round ends when a packet sent after the last
    /// round's end is delivered.
    fn update_round(&mut self, rs: &RateSample, tp: &RateSampler) {
        let start = rs.interval.is_some()
            && rs.prior_delivered.wrapping_sub(self.next_rtt_delivered) as i32 >= 0;
        if start {
            self.next_rtt_delivered = tp.delivered;
        }
        self.set(F_ROUND_START, start);
    }

    /// The delivery rate of the sample (packets/µs << 24, rounded up; 0 if invalid).
    fn bw_sample(rs: &RateSample) -> u32 {
        match (rs.delivered, rs.interval) {
            (Some(d), Some(i)) if i >= 1000 => {
                (d as u64 * BW_UNIT).div_ceil(i / 1000).min(u32::MAX as u64) as u32
            }
            _ => 0,
        }
    }

    /// Kernel `bbr_update_ecn_alpha` at a round start: the CE ratio of the round (of 256)
    /// into the EWMA, and Startup's ECN exit.
    fn update_ecn_alpha(&mut self, mss: u32, tp: &RateSampler) {
        if !self.has(F_ECN) {
            return;
        }
        let delivered = tp.delivered.wrapping_sub(self.alpha_last_delivered);
        let ce = tp.delivered_ce.wrapping_sub(self.alpha_last_delivered_ce);
        if delivered == 0 || delivered as i32 <= 0 || (ce as i32) < 0 {
            return;
        }
        let ce_ratio = ((ce as u64) << BBR_SCALE) / delivered as u64;
        let g = ECN_ALPHA_GAIN as u64;
        let alpha = (((BBR_UNIT as u64 - g) * self.ecn_alpha as u64) >> BBR_SCALE)
            + ((g * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u16;
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        // bbr_check_ecn_too_high_in_startup.
        if !self.full_bw_reached() {
            if ce_ratio >= ECN_THRESH as u64 {
                self.startup_ecn_rounds = self.startup_ecn_rounds.saturating_add(1);
            } else {
                self.startup_ecn_rounds = 0;
            }
            if self.startup_ecn_rounds >= FULL_ECN_CNT {
                self.handle_queue_too_high_in_startup(mss);
            }
        }
    }

    /// Draft `UpdateLatestDeliverySignals`.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample, tp: &RateSampler, bw: u32) {
        self.set(F_LOSS_ROUND_START, false);
        if rs.interval.is_none() || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.unwrap_or(0));
        if rs.prior_delivered.wrapping_sub(self.loss_round_delivered) as i32 >= 0 {
            self.loss_round_delivered = tp.delivered;
            self.set(F_LOSS_ROUND_START, true);
        }
    }

    /// Draft `AdvanceLatestDeliverySignals`.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, bw: u32) {
        if self.has(F_LOSS_ROUND_START) {
            self.bw_latest = bw;
            self.inflight_latest = rs.delivered.unwrap_or(0);
        }
    }

    /// Draft `ResetCongestionSignals`.
    fn reset_congestion_signals(&mut self) {
        self.flags &= !(F_LOSS_IN_ROUND | F_ECN_IN_ROUND | F_LOSS_IN_CYCLE | F_ECN_IN_CYCLE);
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// Draft `ResetShortTermModel`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    /// Draft `InitLowerBounds`.
    fn init_lower_bounds(&mut self, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = self.cwnd;
        }
    }

    /// Draft `AdaptLowerBoundsFromCongestion` (kernel `bbr_adapt_lower_bounds`), once per
    /// round when not probing: loss cuts `bw_lo` and `inflight_lo` to `Beta` x themselves (not
    /// below the last round's delivery); ECN cuts `inflight_lo` by `alpha / 3`.
    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.has(F_ECN_IN_ROUND) {
            self.init_lower_bounds(false);
            let cut = BBR_UNIT as u64 - ((self.ecn_alpha as u64 * ECN_FACTOR as u64) >> BBR_SCALE);
            ecn_inflight_lo = ((self.inflight_lo as u64 * cut) >> BBR_SCALE) as u32;
        }
        if self.has(F_LOSS_IN_ROUND) {
            self.init_lower_bounds(true);
            self.bw_lo = self
                .bw_latest
                .max(((self.bw_lo as u64 * BETA as u64) >> BBR_SCALE) as u32);
            self.inflight_lo = self
                .inflight_latest
                .max(((self.inflight_lo as u64 * BETA as u64) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// Draft `UpdateCongestionSignals`: the max filter, then once per loss round the
    /// short-term model.
    fn update_congestion_signals(&mut self, rs: &RateSample, bw: u32) {
        if rs.interval.is_none() || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        if rs.losses > 0 {
            self.flags |= F_LOSS_IN_ROUND;
        }
        if !self.has(F_LOSS_ROUND_START) {
            return;
        }
        self.adapt_lower_bounds();
        self.flags &= !(F_LOSS_IN_ROUND | F_ECN_IN_ROUND);
    }

    /// Draft `IsInflightTooHigh` (kernel `bbr_is_inflight_too_high`): the sample's loss rate
    /// above `LossThresh` (any loss without SACK), or its CE ratio above [`ECN_THRESH`].
    pub fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let thresh = (rs.tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE;
            if rs.lost as u64 > thresh || !self.has(F_SACK) {
                return true;
            }
        }
        let delivered = rs.delivered.unwrap_or(0);
        if rs.delivered_ce > 0 && delivered > 0 && self.has(F_ECN) {
            let thresh = (delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
            if rs.delivered_ce as u64 > thresh {
                return true;
            }
        }
        false
    }

    /// Draft `HandleInflightTooHigh`: `inflight_hi = max(tx_in_flight, Beta x
    /// TargetInflight)` (unless app-limited), once per probe; ProbeBW_UP ends.
    fn handle_inflight_too_high(&mut self, now: Ns, rs: &RateSample, tp: &RateSampler) {
        self.flags |= F_PREV_PROBE_TOO_HIGH;
        self.flags &= !F_BW_PROBE_SAMPLES;
        if !rs.is_app_limited {
            let t = ((self.target_inflight(rs.mss) as u64 * BETA as u64) >> BBR_SCALE) as u32;
            self.inflight_hi = rs.tx_in_flight.max(t);
        }
        if self.state == State::ProbeBwUp {
            self.start_probe_down(now, tp);
        }
    }

    /// Startup's exits on loss or ECN (kernel `bbr_handle_queue_too_high_in_startup`, draft
    /// §5.3.1.3): the pipe is full; `inflight_hi = max(BDP, inflight_latest)`.
    fn handle_queue_too_high_in_startup(&mut self, mss: u32) {
        self.flags |= F_FULL_BW_REACHED;
        let bdp = self.inflight(mss, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// Draft `CheckStartupHighLoss` (kernel `bbr_check_loss_too_high_in_startup`).
    fn check_loss_too_high_in_startup(&mut self, rs: &RateSample) {
        if self.full_bw_reached() {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        let enough = if self.has(F_SACK) {
            self.loss_events_in_round >= FULL_LOSS_CNT
        } else {
            self.loss_events_in_round > 0
        };
        if self.has(F_LOSS_ROUND_START)
            && rs.ca_state == CA_RECOVERY
            && enough
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(rs.mss);
            return;
        }
        if self.has(F_LOSS_ROUND_START) {
            self.loss_events_in_round = 0;
        }
    }

    /// Draft `ResetFullBW`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.flags &= !F_FULL_BW_NOW;
    }

    /// Draft `CheckFullBWReached`: 3 non-app-limited rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample, bw: u32) {
        if self.has(F_FULL_BW_NOW) || !self.has(F_ROUND_START) || rs.is_app_limited {
            return;
        }
        if bw as u64 >= (self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE {
            self.reset_full_bw();
            self.full_bw = bw;
            return;
        }
        self.full_bw_cnt = self.full_bw_cnt.saturating_add(1);
        if self.full_bw_cnt >= FULL_BW_CNT {
            self.flags |= F_FULL_BW_NOW | F_FULL_BW_REACHED;
        }
    }

    /// Draft `CheckStartupDone` / `EnterDrain` / `CheckDrainDone`: Drain once the pipe is
    /// full; ProbeBW once the flight at the next departure is down to the BDP, or after 3
    /// rounds.
    fn check_drain(&mut self, now: Ns, rs: &RateSample, tp: &RateSampler) {
        if self.state == State::Startup && self.full_bw_reached() {
            self.state = State::Drain;
            self.drain_rounds = 0;
            self.ssthresh = self.inflight(rs.mss, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.state == State::Drain {
            let bw = self.bw();
            let in_net = in_net_at_edt(now, rs.edt, bw, rs.in_flight);
            if in_net <= self.inflight(rs.mss, self.max_bw(), BBR_UNIT)
                || self.drain_rounds > DRAIN_MAX_ROUNDS
            {
                self.start_probe_down(now, tp);
            }
        }
    }

    /// Draft `PickProbeWait`: 0 or 1 round already counted, 2-3 s of wall clock.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = rand_below(&mut self.rng, BW_PROBE_RAND_ROUNDS) as u8;
        self.probe_wait_us = BW_PROBE_BASE_US + rand_below(&mut self.rng, BW_PROBE_RAND_US) as u32;
    }

    /// Draft `StartProbeBW_DOWN`.
    fn start_probe_down(&mut self, now: Ns, tp: &RateSampler) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_stamp_us = us(now);
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.state = State::ProbeBwDown;
    }

    /// Draft `StartProbeBW_CRUISE` (kernel: `inflight_lo` at most `inflight_hi`).
    fn start_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.state = State::ProbeBwCruise;
    }

    /// Draft `StartProbeBW_REFILL`, with `up_rounds` rounds of `inflight_hi` growth already
    /// counted (kernel: > 0 after an ECN-only cycle).
    fn start_probe_refill(&mut self, up_rounds: u8, tp: &RateSampler) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0;
        self.flags &= !F_STOPPED_RISKY_PROBE;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.state = State::ProbeBwRefill;
    }

    /// Draft `StartProbeBW_UP`.
    fn start_probe_up(&mut self, now: Ns, tp: &RateSampler, bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_stamp_us = us(now);
        self.reset_full_bw();
        self.full_bw = bw;
        self.state = State::ProbeBwUp;
        self.raise_inflight_hi_slope();
    }

    /// Draft `RaiseInflightLongtermSlope`: each round of ProbeBW_UP doubles the growth.
    fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (self.cwnd / growth_this_round).max(1);
    }

    /// The connection used all of cwnd (`C.is_cwnd_limited`): the flight before this ACK
    /// filled the window.
    fn cwnd_limited(&self, rs: &RateSample) -> bool {
        rs.prior_in_flight >= self.cwnd
    }

    /// Draft `ProbeInflightLongtermUpward`.
    fn probe_inflight_hi_upward(&mut self, rs: &RateSample) {
        if !self.cwnd_limited(rs) || self.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.has(F_ROUND_START) {
            self.raise_inflight_hi_slope();
        }
    }

    /// Draft `AdaptLongTermModel` (kernel `bbr_adapt_upper_bounds`); true if it decided a
    /// state transition.
    fn adapt_upper_bounds(&mut self, now: Ns, rs: &RateSample, tp: &RateSampler) -> bool {
        let round_start = self.has(F_ROUND_START);
        if self.ack_phase == AckPhase::ProbeStarting && round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && round_start {
            self.flags &= !F_BW_PROBE_SAMPLES;
            self.ack_phase = AckPhase::Init;
            // AdvanceMaxBwFilter: the filter keeps this cycle and the previous one.
            if self.in_probe_bw() && !rs.is_app_limited && self.bw_hi[1] != 0 {
                self.bw_hi = [self.bw_hi[1], 0];
            }
            if self.in_probe_bw()
                && self.has(F_STOPPED_RISKY_PROBE)
                && !self.has(F_PREV_PROBE_TOO_HIGH)
            {
                self.start_probe_refill(0, tp);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.has(F_BW_PROBE_SAMPLES) {
                self.handle_inflight_too_high(now, rs, tp);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false;
            }
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.state == State::ProbeBwUp {
                self.probe_inflight_hi_upward(rs);
            }
        }
        false
    }

    /// Draft `IsTimeToProbeBW` (with the kernel's quick re-probe after an ECN-only cycle).
    fn check_time_to_probe_bw(&mut self, now: Ns, rs: &RateSample, tp: &RateSampler) -> bool {
        if self.has(F_ECN)
            && self.has(F_ECN_IN_CYCLE)
            && !self.has(F_LOSS_IN_CYCLE)
            && rs.ca_state == CA_OPEN
        {
            let v = (self.inflight_hi as u64 * ECN_REPROBE_GAIN as u64) >> BBR_SCALE;
            let n = v.checked_ilog2().unwrap_or(0).min(30) as u8;
            self.start_probe_refill(n, tp);
            return true;
        }
        let elapsed = after(us(now), self.cycle_stamp_us.wrapping_add(self.probe_wait_us));
        let reno_rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(rs.mss));
        if elapsed || self.rounds_since_probe as u32 >= reno_rounds {
            self.start_probe_refill(0, tp);
            return true;
        }
        false
    }

    /// Draft `IsTimeToCruise`: the flight leaves the headroom and is down to the BDP.
    fn check_time_to_cruise(&self, mss: u32, inflight: u32, bw: u32) -> bool {
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(mss, bw, BBR_UNIT)
    }

    /// Draft `UpdateProbeBWCyclePhase`.
    fn update_cycle_phase(&mut self, now: Ns, rs: &RateSample, tp: &RateSampler, bw: u32) {
        if !self.full_bw_reached() || self.adapt_upper_bounds(now, rs, tp) || !self.in_probe_bw()
        {
            return;
        }
        let inflight = in_net_at_edt(now, rs.edt, self.bw(), rs.prior_in_flight);
        match self.state {
            State::ProbeBwCruise => {
                self.check_time_to_probe_bw(now, rs, tp);
            }
            // After one round of REFILL, UP.
            State::ProbeBwRefill if self.has(F_ROUND_START) => {
                self.flags |= F_BW_PROBE_SAMPLES;
                self.start_probe_up(now, tp, bw);
            }
            State::ProbeBwUp => {
                let mut done = false;
                if self.has(F_PREV_PROBE_TOO_HIGH) && inflight >= self.inflight_hi {
                    self.flags |= F_STOPPED_RISKY_PROBE;
                    done = true;
                } else if self.cwnd_limited(rs) && self.cwnd >= self.inflight_hi {
                    // inflight_hi limits the growth: the plateau says nothing.
                    self.reset_full_bw();
                    self.full_bw = bw;
                } else if self.has(F_FULL_BW_NOW) {
                    done = true;
                }
                if done {
                    self.flags &= !F_PREV_PROBE_TOO_HIGH;
                    self.start_probe_down(now, tp);
                }
            }
            State::ProbeBwDown => {
                if self.check_time_to_probe_bw(now, rs, tp) {
                    return;
                }
                if self.check_time_to_cruise(rs.mss, inflight, self.max_bw()) {
                    self.start_probe_cruise();
                }
            }
            _ => {}
        }
    }

    /// Draft `ExitProbeRTT`.
    fn exit_probe_rtt(&mut self, now: Ns, tp: &RateSampler) {
        self.reset_lower_bounds();
        if self.full_bw_reached() {
            self.start_probe_down(now, tp);
            self.start_probe_cruise();
        } else {
            self.state = State::Startup;
        }
    }

    /// Draft `UpdateMinRTT` and `CheckProbeRTT`: the 5 s ProbeRTT filter inside the 10 s
    /// min-RTT filter; ProbeRTT holds the flight at half a BDP for 200 ms and a round.
    fn update_min_rtt(&mut self, now: Ns, rs: &RateSample, tp: &mut RateSampler) {
        let now_ms = ms(now);
        let probe_rtt_expired = after(
            now_ms,
            self.probe_rtt_min_stamp_ms
                .wrapping_add(ms(PROBE_RTT_INTERVAL)),
        );
        if let Some(rtt) = rs.rtt {
            let rtt_us = (rtt / 1000).min(u32::MAX as u64 - 1) as u32;
            if rtt_us < self.probe_rtt_min_us || probe_rtt_expired {
                self.probe_rtt_min_us = rtt_us;
                self.probe_rtt_min_stamp_ms = now_ms;
            }
        }
        let min_rtt_expired = after(now_ms, self.min_rtt_stamp_ms.wrapping_add(ms(MIN_RTT_WIN)));
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp_ms = self.probe_rtt_min_stamp_ms;
        }
        if probe_rtt_expired && self.state != State::ProbeRtt {
            self.state = State::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp_ms = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        if self.state == State::ProbeRtt {
            // Ignore low rate samples during ProbeRTT.
            tp.app_limited = tp.delivered.wrapping_add(rs.in_flight).max(1);
            if self.probe_rtt_done_stamp_ms == 0 && rs.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp_ms = now_ms.wrapping_add(ms(PROBE_RTT_MODE)).max(1);
                self.flags &= !F_PROBE_RTT_ROUND_DONE;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp_ms != 0 {
                if self.has(F_ROUND_START) {
                    self.flags |= F_PROBE_RTT_ROUND_DONE;
                }
                if self.has(F_PROBE_RTT_ROUND_DONE)
                    && after(now_ms, self.probe_rtt_done_stamp_ms)
                {
                    // CheckProbeRTTDone: schedule the next ProbeRTT, restore cwnd.
                    self.probe_rtt_min_stamp_ms = now_ms;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    self.exit_probe_rtt(now, tp);
                }
            }
        }
    }

    /// The gains of the state (draft §5.6.1's table).
    fn update_gains(&mut self) {
        let (p, c) = match self.state {
            State::Startup => (STARTUP_PACING_GAIN, DEFAULT_CWND_GAIN),
            State::Drain => (DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN),
            State::ProbeBwDown => (PROBE_DOWN_PACING_GAIN, DEFAULT_CWND_GAIN),
            State::ProbeBwCruise | State::ProbeBwRefill => (BBR_UNIT, DEFAULT_CWND_GAIN),
            State::ProbeBwUp => (PROBE_UP_PACING_GAIN, PROBE_UP_CWND_GAIN),
            State::ProbeRtt => (BBR_UNIT, PROBE_RTT_CWND_GAIN),
        };
        (self.pacing_gain, self.cwnd_gain) = (p as u16, c as u16);
    }

    /// Draft `SetCwnd`: toward `max_inflight` (BDP x cwnd gain + aggregation + budget), by
    /// at most the packets ACKed; at least 4; ProbeRTT's cap.
    fn set_cwnd(&mut self, rs: &RateSample, bw: u32, delivered: u32) {
        let acked = rs.acked_sacked;
        if acked > 0 {
            let target = self.bdp(bw, self.cwnd_gain as u32) + self.aggr.cwnd(bw);
            let max_inflight = self.quantization_budget(rs.mss, target);
            if self.full_bw_reached() {
                self.cwnd = (self.cwnd + acked).min(max_inflight);
            } else if self.cwnd < max_inflight || delivered < self.init_cwnd as u32 {
                self.cwnd += acked;
            }
            self.cwnd = self.cwnd.max(CWND_MIN_TARGET);
        }
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// Draft `BoundCwndForModel`: `inflight_hi` while probing in ProbeBW, with headroom in
    /// Cruise and ProbeRTT; `inflight_lo` always; at least 4.
    fn bound_cwnd_for_model(&mut self) {
        let mut cap = UNSET;
        if self.in_probe_bw() && self.state != State::ProbeBwCruise {
            cap = self.inflight_hi;
        } else if matches!(self.state, State::ProbeRtt | State::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        self.cwnd = self.cwnd.min(cap);
    }
}

impl Controller for Bbr3 {
    #[inline]
    fn window(&self) -> f64 {
        self.cwnd as f64
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        ssthresh_f64(self.ssthresh)
    }

    /// Notes whether the ACK carries ECE (`rs->is_ece`); the model runs in `cong_control`.
    #[inline]
    fn on_ack(&mut self, _now: Ns, ack: &AckEvent) {
        self.set(F_ACK_ECE, ack.ece || ack.ece_acked > 0);
    }

    /// Fast recovery or CWR entry: draft `OnEnterFastRecovery` (`SaveCwnd`). Timeout: draft
    /// `OnEnterRTO` (cwnd = in flight + 1 = 1 here, everything being marked lost) and
    /// kernel `bbr_set_state(TCP_CA_Loss)`: the full-bandwidth detector restarts and, when
    /// not probing, `inflight_lo` starts from the window before the timeout.
    fn on_congestion(&mut self, _now: Ns, kind: Congestion, _flight: u32) {
        match kind {
            Congestion::Loss | Congestion::Ecn => self.save_cwnd(),
            Congestion::Timeout { repeated } => {
                if !repeated {
                    self.save_cwnd();
                }
                self.cwnd = 1;
                self.prev_ca_state = CA_LOSS;
                self.reset_full_bw();
                if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
                    self.inflight_lo = self.cwnd.max(self.prior_cwnd);
                }
            }
        }
    }

    /// Draft `RestoreCwnd` at the end of a fast recovery (§5.6.4.4); the model bounds the
    /// window at the next ACK.
    #[inline]
    fn on_recovery_end(&mut self, _now: Ns) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    #[inline]
    fn pacing_rate(&self, _srtt: Ns, _mss: u32) -> Option<u64> {
        Some(self.pacing_rate)
    }

    /// Linux BBRv3's `bbr_min_tso_segs`, as v1's: 1 below `bbr_min_tso_rate`, else 2.
    #[inline]
    fn min_tso_segs(&self) -> u32 {
        if self.pacing_rate < super::bbr::MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    #[inline]
    fn paces(&self) -> bool {
        true
    }

    #[inline]
    fn wants_rate_sample(&self) -> bool {
        true
    }

    /// Kernel `bbr_main` of the v3 tree (draft §5.2.3, "Per-ACK Steps").
    fn cong_control(&mut self, now: Ns, rs: &RateSample, tp: &mut RateSampler) {
        if self.pacing_rate == 0 {
            self.init_pacing_rate(rs.mss, rs.srtt);
        }
        if rs.losses > 0 {
            // NoteLoss (kernel bbr_note_loss from bbr_skb_marked_lost).
            if !self.has(F_LOSS_IN_ROUND) {
                self.loss_round_delivered = tp.delivered;
            }
            self.flags |= F_LOSS_IN_ROUND | F_LOSS_IN_CYCLE;
        }
        if self.prev_ca_state == CA_LOSS && rs.ca_state != CA_LOSS {
            // bbr_exit_loss_recovery: RestoreCwnd after the timeout's recovery.
            self.cwnd = self.cwnd.max(self.prior_cwnd);
        }
        self.update_round(rs, tp);
        if self.has(F_ROUND_START) {
            self.rounds_since_probe = self.rounds_since_probe.saturating_add(1);
            if self.state == State::Drain {
                self.drain_rounds = self.drain_rounds.saturating_add(1);
            }
            self.update_ecn_alpha(rs.mss, tp);
        }
        if self.has(F_ECN) && self.has(F_ACK_ECE) {
            self.flags |= F_ECN_IN_ROUND;
        }
        let bw = Self::bw_sample(rs);
        self.update_latest_delivery_signals(rs, tp, bw);
        // bbr_update_model.
        self.update_congestion_signals(rs, bw);
        let win = if self.full_bw_reached() {
            EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        let (round_start, model_bw, cwnd) = (self.has(F_ROUND_START), self.bw(), self.cwnd);
        self.aggr.update(rs, tp, round_start, win, model_bw, cwnd);
        self.check_loss_too_high_in_startup(rs);
        self.check_full_bw_reached(rs, bw);
        self.check_drain(now, rs, tp);
        self.update_cycle_phase(now, rs, tp, bw);
        self.update_min_rtt(now, rs, tp);
        // Control.
        self.update_gains();
        let model_bw = self.bw();
        self.set_pacing_rate(rs, model_bw, self.pacing_gain as u32);
        self.set_cwnd(rs, model_bw, tp.delivered);
        self.bound_cwnd_for_model();
        self.advance_latest_delivery_signals(rs, bw);
        self.prev_ca_state = rs.ca_state;
        if rs.lost > 0 {
            self.flags |= F_LOSS_IN_CYCLE;
        }
        if rs.delivered_ce > 0 {
            self.flags |= F_ECN_IN_CYCLE;
        }
    }

    fn seed(&mut self, seed: u64) {
        self.rng ^= seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::super::open_ack;
    use super::*;

    const MS: Ns = 1_000_000;
    const MSS: u32 = 1000;

    /// What one ACK tells the controller: a sample of `d` packets delivered over 10 ms
    /// (`bw(d)`), `acked` newly delivered (`ce` of them CE-marked), `losses` newly marked lost,
    /// `lost` of `tx_in_flight` lost over the sample, the flight before and after, the RTT
    /// sample, whether it ends a round, the CA state.
    #[derive(Clone, Copy)]
    struct Ack {
        dt: Ns,
        d: u32,
        acked: u32,
        ce: u32,
        losses: u32,
        lost: u32,
        tx_in_flight: u32,
        prior: u32,
        inflight: u32,
        rtt: Ns,
        round: bool,
        app_limited: bool,
        ca_state: u8,
    }

    impl Default for Ack {
        fn default() -> Self {
            Ack {
                dt: 10 * MS,
                d: 100,
                acked: 10,
                ce: 0,
                losses: 0,
                lost: 0,
                tx_in_flight: 100,
                prior: 100,
                inflight: 100,
                rtt: 10 * MS,
                round: true,
                app_limited: false,
                ca_state: CA_OPEN,
            }
        }
    }

    /// A flow as BBRv3's `cong_control` sees it (MSS 1000 bytes, ECN negotiated).
    struct Flow {
        c: Bbr3,
        tp: RateSampler,
        now: Ns,
    }

    impl Flow {
        fn new() -> Self {
            let mut c = Bbr3::with_window(10.0, f64::INFINITY);
            c.set_ecn(true);
            Flow {
                c,
                tp: RateSampler::new(),
                now: 0,
            }
        }

        fn ack(&mut self, a: Ack) {
            self.now += a.dt;
            self.tp.delivered += a.acked;
            self.tp.delivered_ce += a.ce;
            self.tp.lost += a.losses;
            self.tp.delivered_time = self.now;
            // A round (and a loss round) ends when the sample's snapshot is at or past its end.
            let end = self.c.next_rtt_delivered.max(self.c.loss_round_delivered);
            let start = self.c.next_rtt_delivered.min(self.c.loss_round_delivered);
            let prior_delivered = if a.round {
                end
            } else {
                start.wrapping_sub(1)
            };
            let ev = AckEvent {
                ece: a.ce > 0,
                ece_acked: a.ce,
                ..open_ack(a.acked, a.rtt)
            };
            self.c.on_ack(self.now, &ev);
            let rs = RateSample {
                prior_delivered,
                prior_time: Some(self.now - 10 * MS),
                delivered: Some(a.d),
                interval: Some(10 * MS),
                acked_sacked: a.acked,
                losses: a.losses,
                lost: a.lost,
                tx_in_flight: a.tx_in_flight,
                delivered_ce: a.ce,
                is_app_limited: a.app_limited,
                rtt: Some(a.rtt),
                prior_in_flight: a.prior,
                in_flight: a.inflight,
                ca_state: a.ca_state,
                mss: MSS,
                srtt: a.rtt,
                ..RateSample::default()
            };
            self.c.cong_control(self.now, &rs, &mut self.tp);
        }

        /// A round of `d` packets per 10 ms with `inflight` packets in flight.
        fn round(&mut self, d: u32, inflight: u32) {
            self.ack(Ack {
                d,
                prior: inflight,
                inflight,
                tx_in_flight: inflight,
                ..Ack::default()
            });
        }

        /// Startup with a growing rate, a plateau at 100 packets per 10 ms (BDP 100), Drain
        /// down to the BDP: in ProbeBW_DOWN.
        fn enter_probe_bw(&mut self) {
            for d in [10, 20, 40, 80, 100, 100, 100, 100] {
                self.round(d, 2 * d);
            }
            assert_eq!(self.c.state, State::Drain);
            // The flight at the BDP, the flight before this ACK above it (no CRUISE yet).
            self.ack(Ack {
                prior: 150,
                ..Ack::default()
            });
            assert_eq!(self.c.state, State::ProbeBwDown);
        }
    }

    /// `d` packets per 10 ms in BBR's unit.
    fn bw(d: u32) -> u32 {
        (d as u64 * BW_UNIT).div_ceil(10_000) as u32
    }

    /// The draft's constants in BBR's fixed point (of 256): 2.77, 0.5, 0.9, 1.25, 2.25, 0.5,
    /// Beta 0.7, LossThresh 2 % (5/256 = 1.95 %), Headroom 0.15, ECN threshold 0.5, alpha gain
    /// 1/16; pacing at gain x bw x 99 %: 100 packets of 1000 bytes per 10 ms at gain 1 is
    /// 9.9 MB/s.
    #[test]
    fn constants_by_hand() {
        assert_eq!(
            (STARTUP_PACING_GAIN, DRAIN_PACING_GAIN, PROBE_DOWN_PACING_GAIN),
            (710, 128, 230)
        );
        assert_eq!((PROBE_UP_PACING_GAIN, PROBE_UP_CWND_GAIN), (320, 576));
        assert_eq!((DEFAULT_CWND_GAIN, PROBE_RTT_CWND_GAIN), (512, 128));
        assert_eq!((BETA, LOSS_THRESH, HEADROOM), (179, 5, 38));
        assert_eq!((ECN_THRESH, ECN_ALPHA_GAIN, ECN_FACTOR), (128, 16, 85));
        let r = Bbr::bw_to_pacing_rate(MSS, bw(100), BBR_UNIT);
        assert!((r as f64 - 9.9e6).abs() < 1e3, "{r}");
    }

    /// Draft §5.3: Startup (2.77) while the rate grows by 25 % a round; three rounds without
    /// (100, 100, 100 after 80 -> 100) fill the pipe: Drain (0.5, ssthresh = the BDP with its
    /// budget); the flight down to the BDP: ProbeBW_DOWN (0.9); the flight below the BDP
    /// (no `inflight_hi` yet, so no headroom bound): CRUISE (1.0); 63 rounds later (the
    /// Reno-coexistence bound, §5.3.3.8: min(63, target inflight 100)): REFILL (1.0, short-term
    /// bounds reset); a round later UP (1.25, cwnd gain 2.25); three rounds without growth:
    /// DOWN again. The pacing rate is gain x bw x 99 % in every state once the pipe is full.
    #[test]
    fn probe_bw_cycle_down_cruise_refill_up() {
        let mut f = Flow::new();
        for d in [10, 20, 40, 80, 100, 100] {
            f.round(d, 2 * d);
            assert_eq!(f.c.state, State::Startup, "{d}");
            assert_eq!(f.c.pacing_gain as u32, STARTUP_PACING_GAIN);
        }
        f.round(100, 200);
        assert_eq!(f.c.state, State::Startup);
        f.round(100, 200);
        assert_eq!(f.c.state, State::Drain);
        assert!(f.c.full_bw_reached());
        assert_eq!(f.c.pacing_gain as u32, DRAIN_PACING_GAIN);
        assert_eq!(f.c.ssthresh, f.c.inflight(MSS, bw(100), BBR_UNIT));
        // 100 packets per 10 ms over 10 ms, both rounded up as the kernel does: 101.
        let bdp = f.c.inflight(MSS, bw(100), BBR_UNIT);
        assert_eq!(bdp, 101);
        f.ack(Ack {
            round: false,
            inflight: bdp + 1,
            ..Ack::default()
        });
        assert_eq!(f.c.state, State::Drain, "flight above the BDP");
        f.ack(Ack {
            round: false,
            inflight: bdp,
            prior: bdp + 1,
            ..Ack::default()
        });
        assert_eq!(f.c.state, State::ProbeBwDown);
        assert_eq!(f.c.pacing_gain as u32, PROBE_DOWN_PACING_GAIN);
        f.ack(Ack {
            round: false,
            prior: bdp + 1,
            ..Ack::default()
        });
        assert_eq!(f.c.state, State::ProbeBwDown, "queue not drained");
        f.ack(Ack {
            round: false,
            prior: bdp,
            ..Ack::default()
        });
        assert_eq!(f.c.state, State::ProbeBwCruise);
        assert_eq!(
            f.c.pacing_rate,
            Bbr::bw_to_pacing_rate(MSS, f.c.bw(), BBR_UNIT)
        );
        // Rounds of cruising until the Reno-coexistence bound.
        let mut rounds = f.c.rounds_since_probe as u32;
        while f.c.state == State::ProbeBwCruise {
            f.round(100, 100);
            rounds += 1;
            assert!(rounds <= BW_PROBE_MAX_ROUNDS, "{rounds}");
        }
        assert_eq!(rounds, BW_PROBE_MAX_ROUNDS);
        assert_eq!(f.c.state, State::ProbeBwRefill);
        assert_eq!((f.c.bw_lo, f.c.inflight_lo), (UNSET, UNSET));
        assert_eq!(f.c.pacing_gain as u32, BBR_UNIT);
        f.round(100, 100);
        assert_eq!(f.c.state, State::ProbeBwUp);
        assert_eq!(
            (f.c.pacing_gain as u32, f.c.cwnd_gain as u32),
            (PROBE_UP_PACING_GAIN, PROBE_UP_CWND_GAIN)
        );
        assert_eq!(
            f.c.pacing_rate,
            Bbr::bw_to_pacing_rate(MSS, f.c.bw(), PROBE_UP_PACING_GAIN)
        );
        for _ in 0..2 {
            f.round(100, 100);
            assert_eq!(f.c.state, State::ProbeBwUp);
        }
        f.round(100, 100);
        assert_eq!(f.c.state, State::ProbeBwDown, "plateau: the pipe is full");
    }

    /// Draft §5.3.2: Drain ends after 3 rounds even if the flight stays above the BDP.
    #[test]
    fn drain_ends_after_three_rounds() {
        let mut f = Flow::new();
        for d in [10, 20, 40, 80, 100, 100, 100, 100] {
            f.round(d, 2 * d);
        }
        assert_eq!(f.c.state, State::Drain);
        for _ in 0..3 {
            f.round(100, 300);
            assert_eq!(f.c.state, State::Drain);
        }
        f.round(100, 300);
        assert_eq!(f.c.state, State::ProbeBwDown);
    }

    /// Draft §5.3.3.8: with long rounds (100 ms RTT, so 63 rounds take 6.3 s) the BBR-native
    /// wall clock starts the probe: REFILL 2-3 s after DOWN began, not before 2 s.
    #[test]
    fn probe_wait_is_two_to_three_seconds() {
        let mut f = Flow::new();
        f.enter_probe_bw();
        let down_at = f.now;
        let wait = f.c.probe_wait_us as Ns * 1000;
        assert!((2_000 * MS..3_000 * MS).contains(&wait), "{wait}");
        while f.c.state != State::ProbeBwRefill {
            f.ack(Ack {
                dt: 50 * MS,
                round: false,
                prior: 90,
                ..Ack::default()
            });
            assert!(f.now - down_at <= wait + 50 * MS);
        }
        assert!(f.now - down_at > wait);
    }

    /// Draft §5.3.4: 5 s without an RTT sample below `probe_rtt_min_delay` (equal ones do not
    /// count) enter ProbeRTT, cwnd at most max(4, BDP/2) = 51; 200 ms (from when the flight
    /// is down to it) and a round later it ends: CRUISE with the saved cwnd (then bounded by
    /// the model). The 10 s `min_rtt` is not touched.
    #[test]
    fn probe_rtt_after_five_seconds_without_a_new_min() {
        let mut f = Flow::new();
        f.enter_probe_bw();
        let stamp = f.now;
        let mut entered = None;
        while entered.is_none() {
            f.ack(Ack {
                dt: 100 * MS,
                round: false,
                prior: 90,
                ..Ack::default()
            });
            if f.c.state == State::ProbeRtt {
                entered = Some(f.now);
            }
        }
        let t = entered.unwrap() - stamp;
        assert!(
            (PROBE_RTT_INTERVAL..=PROBE_RTT_INTERVAL + 200 * MS).contains(&t),
            "{t}"
        );
        assert_eq!(f.c.probe_rtt_cwnd(), 51, "half of 101, rounded up");
        assert!(f.c.cwnd <= 51, "{}", f.c.cwnd);
        assert_eq!(f.c.min_rtt_us, 10_000);
        assert_ne!(f.tp.app_limited, 0, "ProbeRTT's samples are app-limited");
        let saved = f.c.prior_cwnd;
        assert!(saved > 51);
        // The flight reaches 51: the 200 ms start.
        f.ack(Ack {
            round: false,
            inflight: 51,
            ..Ack::default()
        });
        let start = f.now;
        while f.c.state == State::ProbeRtt {
            f.ack(Ack {
                dt: 20 * MS,
                inflight: 51,
                prior: 51,
                ..Ack::default()
            });
            assert!(f.now - start <= PROBE_RTT_MODE + 20 * MS);
        }
        assert!(f.now - start > PROBE_RTT_MODE);
        assert_eq!(f.c.state, State::ProbeBwCruise);
    }

    /// Draft §5.5.10.2 / kernel `bbr_is_inflight_too_high`: in UP, a sample losing more than
    /// 2 % of its flight (200 in flight: 5/256 x 200 = 3.9, so 3 lost is not too high, 4 is)
    /// sets `inflight_hi = max(tx_in_flight, 0.7 x target inflight)` and ends the probe (DOWN);
    /// the next probe stops as soon as the flight reaches `inflight_hi`. CE: a sample over
    /// 50 % marked is too high (50 of 100 is not, 51 is); without ECN marks are ignored.
    #[test]
    fn loss_and_ecn_above_their_thresholds_cut_inflight_hi_in_up() {
        let up = |ecn: bool| {
            let mut f = Flow::new();
            f.c.set_ecn(ecn);
            f.enter_probe_bw();
            f.c.start_probe_refill(0, &f.tp);
            f.round(100, 100);
            assert_eq!(f.c.state, State::ProbeBwUp);
            f
        };
        let mut f = up(true);
        f.ack(Ack {
            round: false,
            lost: 3,
            losses: 3,
            tx_in_flight: 200,
            prior: 200,
            ..Ack::default()
        });
        assert_eq!((f.c.state, f.c.inflight_hi), (State::ProbeBwUp, UNSET));
        let target = f.c.target_inflight(MSS);
        f.ack(Ack {
            round: false,
            lost: 4,
            losses: 1,
            tx_in_flight: 200,
            prior: 200,
            ..Ack::default()
        });
        assert_eq!(f.c.state, State::ProbeBwDown);
        assert_eq!(f.c.inflight_hi, 200.max(target * BETA / 256));
        // A low flight at the loss: 0.7 x target inflight instead.
        let mut g = up(true);
        let target = g.c.target_inflight(MSS);
        g.ack(Ack {
            round: false,
            lost: 2,
            losses: 2,
            tx_in_flight: 20,
            prior: 200,
            ..Ack::default()
        });
        assert_eq!(g.c.inflight_hi, target * BETA / 256);
        assert!(g.c.cwnd <= g.c.inflight_hi.max(CWND_MIN_TARGET));
        // CE ratio.
        let mut e = up(true);
        e.ack(Ack {
            round: false,
            acked: 100,
            ce: 50,
            ..Ack::default()
        });
        assert_eq!(e.c.state, State::ProbeBwUp, "50 % is not above 50 %");
        e.ack(Ack {
            round: false,
            acked: 100,
            ce: 51,
            prior: 200,
            ..Ack::default()
        });
        assert_eq!(e.c.state, State::ProbeBwDown);
        let mut n = up(false);
        n.ack(Ack {
            round: false,
            acked: 100,
            ce: 100,
            ..Ack::default()
        });
        assert_eq!((n.c.state, n.c.inflight_hi), (State::ProbeBwUp, UNSET));
    }

    /// Draft §5.5.10.3: when not probing (CRUISE), a round with loss cuts the short-term
    /// model at its end: `bw_lo = max(bw_latest, 0.7 x max_bw)`, `inflight_lo =
    /// max(inflight_latest, 0.7 x cwnd)`; the window follows (at least 4). A round with ECE
    /// cuts `inflight_lo` by `alpha / 3` (kernel `bbr_ecn_lower_bounds`).
    #[test]
    fn loss_and_ecn_rounds_cut_the_short_term_model() {
        let mut f = Flow::new();
        f.enter_probe_bw();
        f.ack(Ack {
            round: false,
            prior: 90,
            ..Ack::default()
        });
        assert_eq!(f.c.state, State::ProbeBwCruise);
        // A round delivering 40 packets per 10 ms, then a lossy one.
        f.round(40, 100);
        f.ack(Ack {
            round: false,
            d: 40,
            losses: 1,
            lost: 1,
            ..Ack::default()
        });
        assert_eq!((f.c.bw_lo, f.c.inflight_lo), (UNSET, UNSET), "not before its end");
        let cwnd = f.c.cwnd;
        f.round(40, 100);
        assert_eq!(f.c.bw_lo, bw(40).max(bw(100) * BETA / 256));
        assert_eq!(f.c.inflight_lo, 40.max(cwnd * BETA / 256));
        assert!(f.c.cwnd <= f.c.inflight_lo);
        assert_eq!(f.c.bw(), f.c.bw_lo);
        // ECN (in Drain, which does not probe): an ECE round cuts inflight_lo by alpha / 3
        // (alpha, 1 at the start, lowered by the rounds without CE).
        let mut e = Flow::new();
        for d in [10, 20, 40, 80, 100, 100, 100, 100] {
            e.round(d, 2 * d);
        }
        assert_eq!(e.c.state, State::Drain);
        assert!(e.c.ecn_alpha < 256);
        e.ack(Ack {
            round: false,
            ce: 1,
            inflight: 300,
            ..Ack::default()
        });
        let cwnd = e.c.cwnd;
        e.round(100, 300);
        assert_eq!(e.c.state, State::Drain);
        // The alpha of this round's end (its CE ratio, 1 of 10, folded in first).
        let cut = 256 - e.c.ecn_alpha as u32 * ECN_FACTOR / 256;
        assert_eq!(e.c.inflight_lo, cwnd * cut / 256);
        // Heavy cuts never take cwnd below 4.
        e.c.inflight_lo = 1;
        e.round(100, 100);
        assert_eq!(e.c.cwnd, CWND_MIN_TARGET);
    }

    /// Draft §5.3.1.3: Startup ends on loss once a round in fast recovery had 6 loss events
    /// and lost more than 2 %; `inflight_hi = max(BDP, inflight_latest)`; Drain follows.
    /// Five events are not enough.
    #[test]
    fn startup_exits_on_high_loss() {
        let lossy_round = |events: u32| {
            let mut f = Flow::new();
            for d in [10, 20, 40, 80] {
                f.round(d, 2 * d);
            }
            for _ in 0..events {
                f.ack(Ack {
                    round: false,
                    d: 160,
                    losses: 1,
                    lost: 10,
                    tx_in_flight: 200,
                    ca_state: CA_RECOVERY,
                    ..Ack::default()
                });
            }
            f.ack(Ack {
                d: 160,
                lost: 10,
                tx_in_flight: 200,
                prior: 300,
                inflight: 300,
                ca_state: CA_RECOVERY,
                ..Ack::default()
            });
            f
        };
        let f = lossy_round(5);
        assert_eq!(f.c.state, State::Startup);
        let f = lossy_round(6);
        assert_eq!(f.c.state, State::Drain);
        assert_eq!(
            f.c.inflight_hi,
            f.c.inflight(MSS, f.c.max_bw(), BBR_UNIT).max(160)
        );
    }
}
