//! BBR version 1, following Linux's net/ipv4/tcp_bbr.c function by function (Cardwell,
//! Cheng, Gunn, Hassas Yeganeh and Jacobson, "BBR: Congestion-Based Congestion Control",
//! ACM Queue 14(5), 2016). Each method below is named after, and does what, the kernel
//! function of the same name does; the units are the kernel's: bandwidth in packets per µs
//! scaled by 2^24 ([`BW_UNIT`]), gains scaled by 2^8 ([`BBR_UNIT`]), RTTs in µs, windows in
//! packets.
//!
//! The sender runs the delivery-rate sampler ([`crate::tcp::rate`]) for BBR and calls
//! [`Controller::cong_control`] (Linux `bbr_main`) on every ACK; BBR sets the window and the
//! pacing rate. It ignores the window law hooks: `on_ack` and `on_recovery_end` do nothing
//! (Linux skips `tcp_cong_avoid` and `tcp_end_cwnd_reduction` for a `cong_control`); a loss
//! or ECN reduction only saves the window (`bbr_ssthresh` -> `bbr_save_cwnd`); a timeout
//! sets the window to 1 (Linux `tcp_enter_loss`: in flight + 1 with everything marked lost)
//! and enters the Loss state (`bbr_set_state`).
//!
//! Simplified, and what the simulator does instead:
//! * `bbr_cwnd_event(CA_EVENT_TX_START)` (restart from idle) is not modelled: flows here
//!   are backlogged or send their data at once.
//! * `rs->is_ack_delayed` is taken as false (the min-RTT filter accepts any sample once it
//!   has expired).
//! * `bbr_set_state(TCP_CA_Loss)`'s long-term sampling step runs at the next ACK (the
//!   controller sees the connection state only there).
//! * `sk_max_pacing_rate` is unlimited, `snd_cwnd_clamp` is unlimited.
//! * The sending quantum (`bbr_tso_segs_goal`, the `3 x` budget of
//!   `bbr_quantization_budget`) is computed as Linux does and enlarges the window as in
//!   Linux; the sender still paces one segment per pacing slot (no TSO bursts).
//! * Randomness: the random start of the gain cycle (`prandom_u32_max(bbr_cycle_rand)`) is
//!   drawn from a generator seeded with the flow id.

use super::{AckEvent, Congestion, Controller};
use crate::engine::Ns;
use crate::tcp::minmax::MinMax;
use crate::tcp::rate::{RateSample, RateSampler, CA_LOSS, CA_OPEN, CA_RECOVERY};

/// Scale of bandwidths in packets per µs (`BW_SCALE`).
pub const BW_SCALE: u32 = 24;
/// `BW_UNIT`.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Scale of gains (`BBR_SCALE`).
pub const BBR_SCALE: u32 = 8;
/// `BBR_UNIT`: a gain of 1.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases of the ProbeBW gain cycle (`CYCLE_LEN`).
pub const CYCLE_LEN: u8 = 8;
/// Window of the bandwidth filter in rounds (`bbr_bw_rtts`).
pub const BW_RTTS: u32 = CYCLE_LEN as u32 + 2;
/// Window of the min-RTT filter (`bbr_min_rtt_win_sec`), ns.
pub const MIN_RTT_WIN: Ns = 10_000_000_000;
/// Time at the minimum window in ProbeRTT (`bbr_probe_rtt_mode_ms`), ns.
pub const PROBE_RTT_MODE: Ns = 200_000_000;
/// Below this pacing rate (bits/s) no TSO (`bbr_min_tso_rate`).
pub const MIN_TSO_RATE: u64 = 1_200_000;
/// Pace this many percent below the estimated bandwidth (`bbr_pacing_margin_percent`).
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain` = 2/ln 2 (Startup).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = 1/high_gain (Drain).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain` (ProbeBW).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain`: the ProbeBW cycle 5/4, 3/4, 1 x 6.
pub const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand`: the cycle starts at a random one of this many phases.
pub const CYCLE_RAND: u64 = 7;
/// `bbr_cwnd_min_target` (packets).
pub const CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh`: 25 % growth means more bandwidth may be available.
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: rounds without such growth before the pipe counts as full.
pub const FULL_BW_CNT: u8 = 3;
/// `bbr_lt_intvl_min_rtts`.
pub const LT_INTVL_MIN_RTTS: u8 = 4;
/// `bbr_lt_loss_thresh` (of 256: 20 %).
pub const LT_LOSS_THRESH: u32 = 50;
/// `bbr_lt_bw_ratio` (of 256: 1/8).
pub const LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// `bbr_lt_bw_diff` (bytes/s: 4 kbit/s).
pub const LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`.
pub const LT_BW_MAX_RTTS: u8 = 48;
/// `bbr_extra_acked_gain`.
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts`.
pub const EXTRA_ACKED_WIN_RTTS: u8 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`.
pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`.
pub const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// Linux `TCP_INIT_CWND`.
pub const TCP_INIT_CWND: u32 = 10;
/// Linux `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// A BBR `snd_ssthresh` (packets) as the controller interface's threshold: infinite at
/// [`TCP_INFINITE_SSTHRESH`].
#[inline]
pub fn ssthresh_f64(ssthresh: u32) -> f64 {
    if ssthresh >= TCP_INFINITE_SSTHRESH {
        f64::INFINITY
    } else {
        ssthresh as f64
    }
}
/// Linux's default `sk_pacing_shift` (TSQ: about 1 ms of data per skb).
pub const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (MAX_TCP_HEADER taken as 320 bytes, x86-64).
pub const GSO_BYTES_MAX: u64 = 65536 - 1 - 320;

/// `bbr_bdp`: ceil(`bw` x `min_rtt_us` x `gain`) packets, `no_rtt` without an RTT sample
/// (`min_rtt_us == u32::MAX`). Shared with BBRv3 ([`super::bbr3`]).
pub fn bdp(bw: u32, min_rtt_us: u32, gain: u32, no_rtt: u32) -> u32 {
    if min_rtt_us == u32::MAX {
        return no_rtt;
    }
    let w = bw as u64 * min_rtt_us as u64;
    (((w * gain as u64) >> BBR_SCALE).div_ceil(BW_UNIT)) as u32
}

/// `bbr_packets_in_net_at_edt`'s arithmetic: `inflight_at_edt` (the flight now, plus the
/// departing sending quantum when increasing) less what the bottleneck delivers at `bw` until
/// the earliest departure time `edt` of the next segment. Shared with BBRv3.
#[inline]
pub fn in_net_at_edt(now: Ns, edt: Ns, bw: u32, inflight_at_edt: u32) -> u32 {
    let interval_us = (edt.max(now) - now) / 1000;
    let interval_delivered = ((bw as u64 * interval_us) >> BW_SCALE) as u32;
    inflight_at_edt.saturating_sub(interval_delivered)
}

/// `prandom_u32_max(n)`: a number below `n` from splitmix64 over the state `rng`.
pub fn rand_below(rng: &mut u64, n: u64) -> u64 {
    *rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *rng;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 32) * n) >> 32
}

/// BBR's ACK-aggregation estimate (the `struct bbr` fields `ack_epoch_mstamp`, `extra_acked`,
/// `ack_epoch_acked`, `extra_acked_win_rtts`, `extra_acked_win_idx`): the max excess of
/// (S)ACKed data over what the bandwidth estimate predicts, over two windows of rounds.
/// Shared with BBRv3.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckAggregation {
    /// Start of the ACK-aggregation epoch (µs, wrapping: Linux's `u64` µs stamp in 32 bits,
    /// exact for epochs under 71 minutes).
    pub epoch_us: u32,
    /// Max excess data ACKed in the epoch, two windows.
    pub extra_acked: [u16; 2],
    /// Packets (S)ACKed in the epoch (20 bits in Linux).
    pub epoch_acked: u32,
    /// Age of `extra_acked`, in rounds.
    pub win_rtts: u8,
    /// Current index in `extra_acked`.
    pub win_idx: u8,
}

impl AckAggregation {
    /// `bbr_extra_acked`: the max of the two windows.
    #[inline]
    pub fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1]) as u32
    }

    /// `bbr_ack_aggregation_cwnd`: `extra_acked` x [`EXTRA_ACKED_GAIN`], at most what `bw`
    /// delivers in [`EXTRA_ACKED_MAX_US`].
    #[inline]
    pub fn cwnd(&self, bw: u32) -> u32 {
        let max_aggr_cwnd = (bw as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = (EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// `bbr_update_ack_aggregation` for an ACK with sample `rs`, at the start of a round or
    /// not, with windows of `win_thresh` rounds (v1: [`EXTRA_ACKED_WIN_RTTS`]; v3: 1 in
    /// Startup), bandwidth estimate `bw` and window `cwnd`.
    pub fn update(
        &mut self,
        rs: &RateSample,
        tp: &RateSampler,
        round_start: bool,
        win_thresh: u8,
        bw: u32,
        cwnd: u32,
    ) {
        if EXTRA_ACKED_GAIN == 0
            || rs.acked_sacked == 0
            || rs.delivered.is_none()
            || rs.interval.is_none_or(|i| i / 1000 == 0)
        {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1f);
            if self.win_rtts >= win_thresh {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx as usize] = 0;
            }
        }
        let now_us = (tp.delivered_time / 1000) as u32;
        let epoch_us = now_us.wrapping_sub(self.epoch_us) as u64;
        let mut expected_acked = (bw as u64 * epoch_us / BW_UNIT) as u32;
        if self.epoch_acked <= expected_acked
            || self.epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_us = now_us;
            expected_acked = 0;
        }
        self.epoch_acked = (self.epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.epoch_acked - expected_acked).min(cwnd);
        let i = self.win_idx as usize;
        if extra > self.extra_acked[i] as u32 {
            self.extra_acked[i] = extra.min(u16::MAX as u32) as u16;
        }
    }
}

/// BBR's modes (`enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up quickly to fill the pipe (`BBR_STARTUP`).
    Startup,
    /// Drain the queue Startup created (`BBR_DRAIN`).
    Drain,
    /// Cycle the pacing gain around the estimated bandwidth (`BBR_PROBE_BW`).
    ProbeBw,
    /// Cut the flight to 4 packets to re-measure the min RTT (`BBR_PROBE_RTT`).
    ProbeRtt,
}

/// BBR's state (Linux `struct bbr`, plus the `tcp_sock` fields BBR writes: `snd_cwnd`,
/// `snd_ssthresh`, `sk_pacing_rate`).
#[derive(Clone, Copy, Debug)]
pub struct Bbr {
    /// `tp->snd_cwnd` (packets).
    pub cwnd: u32,
    /// `tp->snd_ssthresh` (packets; [`TCP_INFINITE_SSTHRESH`] until Drain sets it).
    pub ssthresh: u32,
    /// `sk->sk_pacing_rate` (payload bytes/s).
    pub pacing_rate: u64,
    /// Min RTT in the 10 s window (µs; `u32::MAX` before a sample).
    pub min_rtt_us: u32,
    /// When `min_rtt_us` was taken (ns; Linux: jiffies).
    pub min_rtt_stamp: Ns,
    /// End of ProbeRTT (ns; 0: not set).
    pub probe_rtt_done_stamp: Ns,
    /// Max recent delivery rate (packets/µs << 24), over [`BW_RTTS`] rounds.
    pub bw: MinMax,
    /// Packet-timed rounds elapsed.
    pub rtt_cnt: u32,
    /// `tp->delivered` at the end of the round.
    pub next_rtt_delivered: u32,
    /// Start of the current gain-cycle phase (ns).
    pub cycle_mstamp: Ns,
    /// Current mode.
    pub mode: Mode,
    /// CA state on the previous ACK (Linux numbering, [`CA_OPEN`] ...).
    pub prev_ca_state: u8,
    /// Packet conservation in the first round of recovery.
    pub packet_conservation: bool,
    /// The current ACK starts a new round.
    pub round_start: bool,
    /// Restarting after idle.
    pub idle_restart: bool,
    /// A ProbeRTT round at 4 packets is done.
    pub probe_rtt_round_done: bool,
    /// Taking long-term samples.
    pub lt_is_sampling: bool,
    /// Rounds in the long-term interval.
    pub lt_rtt_cnt: u8,
    /// Use `lt_bw` as the bandwidth estimate (policer detected).
    pub lt_use_bw: bool,
    /// Long-term delivery rate (packets/µs << 24).
    pub lt_bw: u32,
    /// Long-term interval start: `tp->delivered`.
    pub lt_last_delivered: u32,
    /// Long-term interval start: `tp->delivered_mstamp` in ms.
    pub lt_last_stamp: u32,
    /// Long-term interval start: `tp->lost`.
    pub lt_last_lost: u32,
    /// Current pacing gain (of 256).
    pub pacing_gain: u32,
    /// Current cwnd gain (of 256).
    pub cwnd_gain: u32,
    /// Startup filled the pipe.
    pub full_bw_reached: bool,
    /// Rounds without large bandwidth gains.
    pub full_bw_cnt: u8,
    /// Index in the pacing-gain cycle.
    pub cycle_idx: u8,
    /// An RTT sample was seen.
    pub has_seen_rtt: bool,
    /// Window before loss recovery or ProbeRTT.
    pub prior_cwnd: u32,
    /// Recent bandwidth, to tell whether the pipe is full.
    pub full_bw: u32,
    /// ACK-aggregation estimate (`ack_epoch_mstamp`, `extra_acked`, ...).
    pub aggr: AckAggregation,
    /// A timeout happened; its `bbr_set_state(TCP_CA_Loss)` sampling step is pending.
    loss_pending: bool,
    /// `tp->delivered` of the ACK being processed (read by
    /// `bbr_set_cwnd_to_recover_or_restore`).
    delivered_now: u32,
    /// Generator state for `prandom_u32_max`.
    rng: u64,
}

impl Bbr {
    /// `bbr_init` with window `cwnd` (packets); the slow-start threshold is BBR's own
    /// (infinite) whatever `_ssthresh` says.
    pub fn with_window(cwnd: f64, _ssthresh: f64) -> Self {
        let mut b = Bbr {
            cwnd: (cwnd.round() as u32).max(1),
            ssthresh: TCP_INFINITE_SSTHRESH,
            pacing_rate: 0,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CA_OPEN,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            aggr: AckAggregation::default(),
            loss_pending: false,
            delivered_now: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
        };
        b.bw.reset(0, 0);
        // The MSS is not known here: the first `cong_control` (which has it) runs
        // `bbr_init_pacing_rate_from_rtt`; until then the pacing rate is 0, i.e. the initial
        // window leaves unpaced (Linux paces it at high_gain x init_cwnd / 1 ms, the whole
        // window within about 0.35 ms).
        b
    }

    /// `bbr_max_bw`.
    #[inline]
    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// `bbr_bw`: the long-term rate if a policer was detected, else the max filter.
    #[inline]
    pub fn bbr_bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_rate_bytes_per_sec`: `rate` (packets/µs << 24) x `gain` in bytes/s, 1 % below.
    pub fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut rate = rate * mss as u64;
        rate *= gain as u64;
        rate >>= BBR_SCALE;
        rate *= 1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT);
        rate >> BW_SCALE
    }

    /// `bbr_bw_to_pacing_rate` (no `sk_max_pacing_rate` cap).
    pub fn bw_to_pacing_rate(mss: u32, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(mss, bw as u64, gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd / SRTT (1 ms before a sample).
    fn init_pacing_rate_from_rtt(&mut self, mss: u32, srtt: Ns) {
        let rtt_us = if srtt > 0 {
            self.has_seen_rtt = true;
            ((srtt / 1000) as u32).max(1)
        } else {
            1000
        };
        let bw = self.cwnd as u64 * BW_UNIT / rtt_us as u64;
        self.pacing_rate = Self::bw_to_pacing_rate(mss, bw as u32, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`.
    fn set_pacing_rate(&mut self, rs: &RateSample, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(rs.mss, bw, gain);
        if !self.has_seen_rtt && rs.srtt > 0 {
            self.init_pacing_rate_from_rtt(rs.mss, rs.srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(&self) -> u32 {
        if self.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate, at least
    /// `bbr_min_tso_segs`, at most 127 segments.
    pub fn tso_segs_goal(&self, mss: u32) -> u32 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_BYTES_MAX);
        let segs = ((bytes / mss.max(1) as u64) as u32).max(self.min_tso_segs());
        segs.min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CA_RECOVERY && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain), [`TCP_INIT_CWND`] without an RTT sample.
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        bdp(bw, self.min_rtt_us, gain, TCP_INIT_CWND)
    }

    /// `bbr_quantization_budget`: + 3 sending quanta, rounded up to even, + 2 in the
    /// probing phase of ProbeBW.
    pub fn quantization_budget(&self, mss: u32, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, mss: u32, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(mss, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in flight when the next segment departs (the pacer's
    /// earliest departure time), less what the bottleneck delivers until then.
    fn packets_in_net_at_edt(&self, now: Ns, rs: &RateSample, inflight_now: u32) -> u32 {
        let edt_segs = if self.pacing_gain > BBR_UNIT {
            self.tso_segs_goal(rs.mss)
        } else {
            0
        };
        in_net_at_edt(now, rs.edt, self.bbr_bw(), inflight_now + edt_segs)
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.full_bw_reached {
            self.aggr.cwnd(self.bbr_bw())
        } else {
            0
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// recovery, the saved window restored after it. Returns the window, and whether packet
    /// conservation applies.
    fn set_cwnd_to_recover_or_restore(&mut self, rs: &RateSample, acked: u32) -> (u32, bool) {
        let (prev_state, state) = (self.prev_ca_state, rs.ca_state);
        let mut cwnd = self.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CA_RECOVERY && prev_state != CA_RECOVERY {
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered_now;
            cwnd = rs.in_flight + acked;
        } else if prev_state >= CA_RECOVERY && state < CA_RECOVERY {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(rs.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow-start toward the target window (BDP x gain + aggregation +
    /// quanta), or snap down to it once the pipe was full; at least 4; 4 in ProbeRTT.
    fn set_cwnd(&mut self, rs: &RateSample, acked: u32, bw: u32, gain: u32, delivered: u32) {
        let mut cwnd = self.cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(rs.mss, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || delivered < TCP_INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        self.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, now: Ns, rs: &RateSample, delivered_time: Ns) -> bool {
        let is_full_length =
            delivered_time.saturating_sub(self.cycle_mstamp) / 1000 > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(now, rs, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(rs.mss, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(rs.mss, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, delivered_time: Ns) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = delivered_time;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, now: Ns, rs: &RateSample, delivered_time: Ns) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(now, rs, delivered_time) {
            self.advance_cycle_phase(delivered_time);
        }
    }

    /// `bbr_reset_probe_bw_mode`: ProbeBW at a random phase other than the draining one.
    fn reset_probe_bw_mode(&mut self, delivered_time: Ns) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - rand_below(&mut self.rng, CYCLE_RAND) as u8;
        self.advance_cycle_phase(delivered_time);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, delivered_time: Ns) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(delivered_time);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &RateSampler) {
        self.lt_last_stamp = (tp.delivered_time / 1_000_000) as u32;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tp: &RateSampler) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &RateSampler, mss: u32, bw: u32) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff as u64 * BBR_UNIT as u64 <= LT_BW_RATIO as u64 * self.lt_bw as u64
                || Self::rate_bytes_per_sec(mss, diff as u64, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: long-term bandwidth sampling for token-bucket policers.
    fn lt_bw_sampling(&mut self, tp: &RateSampler, rs_losses: u32, app_limited: bool, mss: u32) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt = self.lt_rtt_cnt.saturating_add(1);
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp.delivered_time);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs_losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt = self.lt_rtt_cnt.saturating_add(1);
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if rs_losses == 0 {
            return;
        }
        let lost = tp.lost.wrapping_sub(self.lt_last_lost);
        let delivered = tp.delivered.wrapping_sub(self.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = ((tp.delivered_time / 1_000_000) as u32).wrapping_sub(self.lt_last_stamp) as i32;
        if t < 1 {
            return;
        }
        if t as u32 >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let t_us = t as u64 * 1000;
        let bw = delivered as u64 * BW_UNIT / t_us;
        self.lt_bw_interval_done(tp, mss, bw as u32);
    }

    /// `bbr_update_bw`: rounds, long-term sampling and the max filter.
    fn update_bw(&mut self, rs: &RateSample, tp: &RateSampler) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else {
            return;
        };
        let interval_us = interval / 1000;
        if interval_us == 0 {
            return;
        }
        if rs.prior_delivered.wrapping_sub(self.next_rtt_delivered) as i32 >= 0 {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs.losses, rs.is_app_limited, rs.mss);
        let bw = (delivered as u64 * BW_UNIT / interval_us) as u32;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, rs: &RateSample, tp: &RateSampler) {
        let (round_start, bw, cwnd) = (self.round_start, self.bbr_bw(), self.cwnd);
        self.aggr
            .update(rs, tp, round_start, EXTRA_ACKED_WIN_RTTS, bw, cwnd);
    }

    /// `bbr_check_full_bw_reached`: 3 rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: Drain once the pipe is full, ProbeBW once the flight is down to
    /// the BDP.
    fn check_drain(&mut self, now: Ns, rs: &RateSample, delivered_time: Ns) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight(rs.mss, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(now, rs, rs.in_flight)
                <= self.inflight(rs.mss, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(delivered_time);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, now: Ns, delivered_time: Ns) {
        if !(self.probe_rtt_done_stamp != 0 && now > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(delivered_time);
    }

    /// `bbr_update_min_rtt`: the 10 s min-RTT filter and ProbeRTT.
    fn update_min_rtt(&mut self, now: Ns, rs: &RateSample, tp: &mut RateSampler) {
        let filter_expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            let rtt_us = (rtt / 1000).min(u32::MAX as u64 - 1) as u32;
            if rtt_us <= self.min_rtt_us || filter_expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = now;
            }
        }
        if PROBE_RTT_MODE > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low rate samples during this mode.
            tp.app_limited = tp.delivered.wrapping_add(rs.in_flight).max(1);
            if self.probe_rtt_done_stamp == 0 && rs.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = (now + PROBE_RTT_MODE).max(1);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, tp.delivered_time);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, now: Ns, rs: &RateSample, tp: &mut RateSampler) {
        self.update_bw(rs, tp);
        self.update_ack_aggregation(rs, tp);
        self.update_cycle_phase(now, rs, tp.delivered_time);
        self.check_full_bw_reached(rs);
        self.check_drain(now, rs, tp.delivered_time);
        self.update_min_rtt(now, rs, tp);
        self.update_gains();
    }
}

impl Controller for Bbr {
    #[inline]
    fn window(&self) -> f64 {
        self.cwnd as f64
    }

    #[inline]
    fn ssthresh(&self) -> f64 {
        ssthresh_f64(self.ssthresh)
    }

    /// Nothing: BBR's `cong_control` replaces the window law.
    #[inline]
    fn on_ack(&mut self, _now: Ns, _ack: &AckEvent) {}

    /// `bbr_ssthresh` (`bbr_save_cwnd`) at recovery or CWR entry; a timeout also does Linux
    /// `tcp_enter_loss`'s `snd_cwnd = in flight + 1 = 1` and `bbr_set_state(TCP_CA_Loss)`.
    fn on_congestion(&mut self, _now: Ns, kind: Congestion, _flight: u32) {
        match kind {
            Congestion::Loss | Congestion::Ecn => self.save_cwnd(),
            Congestion::Timeout { repeated } => {
                if !repeated {
                    self.save_cwnd();
                }
                self.cwnd = 1;
                // bbr_set_state(sk, TCP_CA_Loss)
                self.prev_ca_state = CA_LOSS;
                self.full_bw = 0;
                self.loss_pending = true;
            }
        }
    }

    /// Nothing (Linux `tcp_end_cwnd_reduction` returns early for a `cong_control`).
    #[inline]
    fn on_recovery_end(&mut self, _now: Ns) {}

    #[inline]
    fn pacing_rate(&self, _srtt: Ns, _mss: u32) -> Option<u64> {
        Some(self.pacing_rate)
    }

    #[inline]
    fn min_tso_segs(&self) -> u32 {
        Bbr::min_tso_segs(self)
    }

    #[inline]
    fn paces(&self) -> bool {
        true
    }

    #[inline]
    fn wants_rate_sample(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn cong_control(&mut self, now: Ns, rs: &RateSample, tp: &mut RateSampler) {
        self.delivered_now = tp.delivered;
        if self.pacing_rate == 0 {
            // bbr_init's bbr_init_pacing_rate_from_rtt, now that the MSS is known.
            self.init_pacing_rate_from_rtt(rs.mss, rs.srtt);
        }
        if self.loss_pending {
            // bbr_set_state(TCP_CA_Loss): treat the RTO like the end of a round.
            self.loss_pending = false;
            self.round_start = true;
            self.lt_bw_sampling(tp, 1, false, rs.mss);
        }
        self.update_model(now, rs, tp);
        let bw = self.bbr_bw();
        self.set_pacing_rate(rs, bw, self.pacing_gain);
        self.set_cwnd(rs, rs.acked_sacked, bw, self.cwnd_gain, tp.delivered);
    }

    fn seed(&mut self, seed: u64) {
        self.rng ^= seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ns = 1000;
    const MS: Ns = 1_000_000;

    /// Feeds BBR hand-made rate samples (MSS 1000 bytes), as `bbr_main` sees them.
    struct Drive {
        b: Bbr,
        tp: RateSampler,
        now: Ns,
    }

    impl Drive {
        fn new() -> Self {
            Drive {
                b: Bbr::with_window(10.0, f64::INFINITY),
                tp: RateSampler::new(),
                now: 0,
            }
        }

        /// One ACK `dt` after the previous one, acknowledging `acked` packets, with a sample
        /// of `d` packets delivered over 10 ms, an RTT sample `rtt`, the given flights, and
        /// (if `round`) the end of a packet-timed round; the sample is app-limited while the
        /// connection is marked so (`tp.app_limited`).
        #[allow(clippy::too_many_arguments)]
        fn ack(&mut self, dt: Ns, acked: u32, d: u32, rtt: Ns, prior: u32, inflight: u32, round: bool) {
            self.now += dt;
            let prior_delivered = if round {
                self.b.next_rtt_delivered
            } else {
                self.b.next_rtt_delivered.wrapping_sub(1)
            };
            self.tp.delivered += acked;
            self.tp.delivered_time = self.now;
            let rs = RateSample {
                prior_delivered,
                prior_time: Some(self.now.saturating_sub(10 * MS)),
                delivered: Some(d),
                interval: Some(10 * MS),
                acked_sacked: acked,
                rtt: Some(rtt),
                prior_in_flight: prior,
                in_flight: inflight,
                mss: 1000,
                srtt: rtt,
                // What the sampler's snapshots would say: app-limited while marked so.
                is_app_limited: self.tp.app_limited != 0,
                ..RateSample::default()
            };
            self.b.cong_control(self.now, &rs, &mut self.tp);
        }

        /// A round of `d` packets per 10 ms (RTT 10 ms), with `inflight` packets in flight.
        fn round(&mut self, d: u32, inflight: u32) {
            self.ack(10 * MS, d, d, 10 * MS, inflight, inflight, true);
        }
    }

    /// `bw` of `d` packets per 10 ms in BBR's unit (packets/µs << 24).
    fn bw(d: u32) -> u32 {
        (d as u64 * BW_UNIT / 10_000) as u32
    }

    /// Gains by hand from tcp_bbr.c's constants.
    #[test]
    fn constants() {
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        // 100 packets per 10 ms over a 10 ms min RTT: BDP 100 packets (rounded up).
        let mut b = Bbr::with_window(10.0, f64::INFINITY);
        assert_eq!(b.bdp(bw(100), BBR_UNIT), TCP_INIT_CWND, "no RTT sample yet");
        b.min_rtt_us = 10_000;
        assert_eq!(b.bdp(bw(100), BBR_UNIT), 100);
        assert_eq!(b.bdp(bw(100), CWND_GAIN), 200);
        // 10 MB/s at gain 1, 1 % margin.
        let r = Bbr::bw_to_pacing_rate(1000, bw(100), BBR_UNIT);
        assert!((r as f64 - 9.9e6).abs() < 1e3, "{r}");
        // Sending quantum: 9.9 MB/s >> 10 = 9667 bytes = 9 segments of 1000 bytes.
        b.pacing_rate = r;
        assert_eq!(b.tso_segs_goal(1000), 9);
        assert_eq!(b.quantization_budget(1000, 100), 128);
        b.pacing_rate = 100_000; // below bbr_min_tso_rate: 1 segment
        assert_eq!(b.tso_segs_goal(1000), 1);
    }

    /// `bbr_check_full_bw_reached` and `bbr_check_drain` by hand: bandwidth doubling each
    /// round keeps Startup; growth under 25 % (80 -> 90 -> 95 -> 95) three rounds running
    /// ends it (a round with 25 % growth, 130, restarts the count); Drain paces at 1/2.885
    /// with ssthresh = bbr_inflight(max_bw), and ends when the flight at the next departure
    /// is down to bbr_inflight(max_bw) (the BDP plus the sending quanta).
    #[test]
    fn startup_exits_after_three_rounds_without_growth_then_drains_to_bdp() {
        let mut d = Drive::new();
        for x in [10, 20, 40, 80, 90, 95] {
            d.round(x, 1000);
            assert_eq!(d.b.mode, Mode::Startup, "{x}");
            assert_eq!(d.b.pacing_gain, HIGH_GAIN);
        }
        assert_eq!(d.b.full_bw_cnt, 2);
        d.round(130, 1000); // >= 1.25 x 80: the count restarts
        assert_eq!((d.b.full_bw_cnt, d.b.full_bw), (0, bw(130)));
        d.round(130, 1000);
        d.round(140, 1000);
        assert_eq!(d.b.mode, Mode::Startup);
        d.round(150, 1000); // third round under 1.25 x 130 = 162.5
        assert!(d.b.full_bw_reached);
        assert_eq!(d.b.mode, Mode::Drain);
        assert_eq!((d.b.pacing_gain, d.b.cwnd_gain), (DRAIN_GAIN, HIGH_GAIN));
        // ssthresh = bbr_inflight at Drain entry: BDP 150 + 3 quanta at the pacing rate
        // then (set on the previous ACK: 2.885 x 14 MB/s x 0.99 = 40.0 MB/s, >> 10 = 39.0 kB,
        // 39 segments), rounded up to even: 150 + 117 + 1 = 268.
        assert_eq!(d.b.max_bw(), bw(150));
        assert_eq!(d.b.bdp(bw(150), BBR_UNIT), 150);
        assert_eq!(d.b.ssthresh, 268);
        // The drain target at the Drain pacing rate (15 MB/s / 2.885 x 0.99 = 5.1 MB/s,
        // >> 10 = 5.0 kB, 4 segments of 1000 bytes): 150 + 12 = 162.
        let target = d.b.inflight(1000, bw(150), BBR_UNIT);
        assert_eq!(target, 162);
        // Not drained while the flight exceeds it (mid-round ACKs), drained at it.
        d.ack(MS, 1, 150, 10 * MS, target + 1, target + 1, false);
        assert_eq!(d.b.mode, Mode::Drain);
        d.ack(MS, 1, 150, 10 * MS, target, target, false);
        assert_eq!(d.b.mode, Mode::ProbeBw);
        assert_ne!(d.b.cycle_idx, 1, "never starts in the draining phase");
        assert_eq!(d.b.cwnd_gain, CWND_GAIN);
    }

    /// `bbr_update_cycle_phase` by hand (BDP 100 packets, min RTT 10 ms): phase 0 (5/4)
    /// lasts at least a min RTT and until the flight reaches bbr_inflight(bw, 5/4); phase 1
    /// (3/4) ends as soon as the flight is down to bbr_inflight(bw, 1) (or after a min RTT);
    /// the six phases at 1 last a min RTT each: 1.25, 0.75, 1 x 6, and round again.
    #[test]
    fn probe_bw_gain_cycle() {
        let mut d = Drive::new();
        for x in [100, 100, 100, 100] {
            d.round(x, 100);
        }
        assert_eq!(d.b.mode, Mode::ProbeBw);
        d.b.cycle_idx = 7;
        d.b.update_gains();
        let mut gains = Vec::new();
        // Phase 7 (gain 1) ends 10 ms after it started.
        d.b.cycle_mstamp = d.now;
        d.ack(10 * MS, 1, 100, 10 * MS, 100, 100, false);
        assert_eq!(d.b.cycle_idx, 7, "exactly one min RTT is not more than one");
        d.ack(US, 1, 100, 10 * MS, 100, 100, false);
        gains.push(d.b.pacing_gain);
        assert_eq!(d.b.cycle_idx, 0);
        // Probing: a min RTT passes, but the flight is below 5/4 BDP (+ quanta at the
        // probing rate, + 1 sending quantum for the departing segment): stay.
        let hi = d.b.inflight(1000, bw(100), PACING_GAIN[0]) - d.b.tso_segs_goal(1000);
        d.ack(11 * MS, 1, 100, 10 * MS, hi - 1, hi - 1, false);
        assert_eq!(d.b.cycle_idx, 0);
        d.ack(MS, 1, 100, 10 * MS, hi, hi, false);
        gains.push(d.b.pacing_gain);
        assert_eq!(d.b.cycle_idx, 1);
        // Draining: ends as soon as the flight is down to the BDP (+ quanta).
        let one = d.b.inflight(1000, bw(100), BBR_UNIT);
        d.ack(MS, 1, 100, 10 * MS, one + 1, one + 1, false);
        assert_eq!(d.b.cycle_idx, 1);
        d.ack(MS, 1, 100, 10 * MS, one, one, false);
        gains.push(d.b.pacing_gain);
        for i in 2..8u8 {
            assert_eq!(d.b.cycle_idx, i);
            d.ack(5 * MS, 1, 100, 10 * MS, one, one, false);
            assert_eq!(d.b.cycle_idx, i, "half a min RTT");
            d.ack(6 * MS, 1, 100, 10 * MS, one, one, false);
            gains.push(d.b.pacing_gain);
        }
        assert_eq!(d.b.cycle_idx, 0);
        assert_eq!(gains, [320, 192, 256, 256, 256, 256, 256, 256, 320]);
    }

    /// `bbr_update_min_rtt` by hand: 10 s without an RTT sample at or below the min RTT
    /// enter ProbeRTT (cwnd saved, capped at 4); the 200 ms start once the flight is at most
    /// 4; the mode ends after 200 ms and a round, restoring the saved cwnd, back in ProbeBW.
    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_packets_for_200_ms() {
        let mut d = Drive::new();
        for x in [100, 100, 100, 100] {
            d.round(x, 100);
        }
        assert_eq!(d.b.mode, Mode::ProbeBw);
        let stamp = d.b.min_rtt_stamp;
        // Rounds with RTT 12 ms (above the 10 ms min) for 10 s.
        while d.now + 10 * MS <= stamp + MIN_RTT_WIN {
            d.ack(10 * MS, 100, 100, 12 * MS, 150, 150, true);
            assert_ne!(d.b.mode, Mode::ProbeRtt, "at {} ms", d.now / MS);
        }
        let cwnd = d.b.cwnd;
        assert!(cwnd > 100);
        d.ack(10 * MS, 100, 100, 12 * MS, 150, 150, true);
        assert_eq!(d.b.mode, Mode::ProbeRtt);
        assert_eq!((d.b.cwnd, d.b.prior_cwnd), (CWND_MIN_TARGET, cwnd));
        assert_eq!(d.b.min_rtt_us, 12_000, "the expired filter takes the new sample");
        assert_ne!(d.tp.app_limited, 0, "samples in ProbeRTT are app-limited");
        // The flight drains; the 200 ms start when it is at 4.
        d.ack(MS, 1, 100, 12 * MS, 100, 50, false);
        assert_eq!(d.b.probe_rtt_done_stamp, 0);
        d.ack(MS, 1, 100, 12 * MS, 5, 4, false);
        let start = d.now;
        assert_eq!(d.b.probe_rtt_done_stamp, start + PROBE_RTT_MODE);
        // A round ends, but 200 ms have not passed: hold cwnd 4.
        while d.now + 20 * MS <= start + PROBE_RTT_MODE {
            d.ack(20 * MS, 4, 4, 10 * MS, 4, 4, true);
            assert_eq!((d.b.mode, d.b.cwnd), (Mode::ProbeRtt, CWND_MIN_TARGET));
        }
        d.ack(20 * MS, 4, 4, 10 * MS, 4, 4, true);
        assert_eq!(d.b.mode, Mode::ProbeBw);
        assert!(d.now > start + PROBE_RTT_MODE);
        // The saved cwnd is restored (`bbr_check_probe_rtt_done`), then `bbr_set_cwnd` caps it
        // at the target, 2 x BDP + quanta.
        let target = d.b.inflight(1000, d.b.bbr_bw(), CWND_GAIN);
        assert!(target < cwnd);
        assert!((target..=target + 4).contains(&d.b.cwnd), "{} {target}", d.b.cwnd);
        assert_eq!(d.b.min_rtt_stamp, d.now);
        assert_eq!(d.b.min_rtt_us, 10_000);
    }

    /// The bandwidth filter (`minmax_running_max` over `bbr_bw_rtts` = 10 rounds): a round
    /// at 200 packets per 10 ms among rounds at 100 is the estimate for 10 more rounds and
    /// forgotten in the 11th.
    #[test]
    fn bandwidth_filter_over_ten_rounds() {
        let mut d = Drive::new();
        for x in [100, 100, 100, 100, 100, 100] {
            d.round(x, 100);
        }
        d.round(200, 100);
        let peak_round = d.b.rtt_cnt;
        for _ in 0..10 {
            d.round(100, 100);
            assert_eq!(d.b.max_bw(), bw(200), "round {}", d.b.rtt_cnt);
        }
        assert_eq!(d.b.rtt_cnt, peak_round + 10);
        d.round(100, 100);
        assert_eq!(d.b.max_bw(), bw(100));
        // App-limited samples below the estimate do not enter the filter.
        let mut d = Drive::new();
        d.round(100, 100);
        d.tp.app_limited = 1;
        for _ in 0..15 {
            d.round(10, 100);
            assert_eq!(d.b.max_bw(), bw(100));
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: entering recovery cuts cwnd to what is in
    /// flight plus what was acknowledged (packet conservation for a round); leaving it
    /// restores the window saved at the loss (`bbr_ssthresh` -> `bbr_save_cwnd`).
    #[test]
    fn recovery_conserves_packets_and_restores_cwnd() {
        let mut d = Drive::new();
        for x in [100, 100, 100, 100] {
            d.round(x, 100);
        }
        let cwnd = d.b.cwnd;
        d.b.on_congestion(d.now, Congestion::Loss, 100);
        assert_eq!(d.b.prior_cwnd, cwnd);
        // ACK in recovery: 1 lost, 60 in flight, 2 acked.
        d.now += MS;
        d.tp.delivered += 2;
        let rs = RateSample {
            prior_delivered: d.b.next_rtt_delivered.wrapping_sub(1),
            prior_time: Some(d.now - 10 * MS),
            delivered: Some(100),
            interval: Some(10 * MS),
            acked_sacked: 2,
            losses: 1,
            rtt: Some(10 * MS),
            in_flight: 60,
            prior_in_flight: 63,
            ca_state: CA_RECOVERY,
            mss: 1000,
            srtt: 10 * MS,
            ..RateSample::default()
        };
        d.b.cong_control(d.now, &rs, &mut d.tp);
        assert!(d.b.packet_conservation);
        assert_eq!(d.b.cwnd, 62);
        // Recovery over: back to the saved window.
        d.ack(MS, 2, 100, 10 * MS, 60, 60, false);
        assert!(!d.b.packet_conservation);
        assert!(d.b.cwnd >= cwnd.min(d.b.inflight(1000, d.b.bbr_bw(), CWND_GAIN)));
    }
}
