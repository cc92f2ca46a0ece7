//! DualPI2: the coupled dual-queue AQM of L4S (RFC 9332, "DualQ Coupled AQMs for Low Latency,
//! Low Loss, and Scalable Throughput (L4S)"), following Linux `net/sched/sch_dualpi2.c`
//! (Nokia; in mainline Linux since 2025) rule by rule. `docs/aqm/dualpi2.md` lists the sources of every
//! rule and default and the decisions taken here.
//!
//! Two FIFOs share one buffer: the **L queue** (class `l`) takes packets whose ECN field has
//! its low bit set, ECT(1) and CE (RFC 9332 §2.3; Linux `ecn_mask = ECT_1`); the
//! **C queue** (class `c`) takes Not-ECT and ECT(0). Linux's `ecn_mask` option is
//! available (`3`: every ECN-capable packet to L, e.g. DCTCP in a data centre).
//!
//! * **Base probability p'** (PI2, RFC 9332 Appendix A): every `tupdate` the PI
//!   controller runs on `qdelay = max(qdelay_L, qdelay_C)`, the head sojourn times:
//!   `p' += alpha·(qdelay − target) + beta·(qdelay − qdelay_old)`, clamped to [0, 1]. The
//!   arithmetic is Linux's, in integers: p' is a `u32` over `MAX_PROB = 2^32 − 1`, alpha and
//!   beta are given in Hz, converted to Linux's netlink unit (1/256 Hz, rounded) and scaled
//!   by `dualpi2_scale_alpha_beta` (`(v·MAX_PROB >> 2) / 10^9`), and the sum (in ns·scaled
//!   gain) is divided by 64 (`__scale_delta`). Without `drop_overload`, p' is capped at
//!   `MAX_PROB / k` (`calculate_probability`).
//! * **Classic queue**: drop (Not-ECT) or mark (ECT(0)) with `p_C = p'^2`, as two
//!   independent rolls of p' (`dualpi2_classic_marking`).
//! * **L queue**: mark with `p_CL = k·p'` (coupling factor k, `dualpi2_scalable_marking`),
//!   and independently by the native step AQM: a packet whose sojourn exceeds
//!   `l.step_thresh` is marked at dequeue (`do_step_aqm`), so `p_L = max(p_CL, step)`.
//!   Step marking applies to packets that found at least `l.min_qlen_step` packets in the L
//!   queue at their enqueue.
//! * **Overload**: when `k·p'` exceeds 1, L packets are treated like classic ones: with
//!   `drop_overload` they are dropped with `p'^2` and marked otherwise; without it they are
//!   always marked (and the buffer limit does the rest). C packets are then dropped even if
//!   ECN-capable.
//! * **2-MTU rule**: no PI-based mark or drop while the total backlog (both queues, without the
//!   packet under decision) is below 2 MTU (`must_drop`). Step marking is governed by
//!   `l.min_qlen_step` instead (Linux default 0: always applied).
//! * **Where**: the PI-based decision runs at dequeue (Linux default `drop_early = 0`) or
//!   at enqueue (`drop_early = 1`); step marking always at dequeue.
//! * **Scheduler**: credit-based weighted round robin with C-protection (RFC 9332 §4.2.2,
//!   `dequeue_packet`): weights `wc = c_protection` %, `wl = 100 − wc` (default 10/90). The
//!   signed credit starts at `MTU·(wc − wl)`; the L queue is served if it is backlogged and
//!   the C queue is empty or `credit <= 0`. Sending an L packet while C is backlogged adds
//!   `wc·size`, sending a C packet while L is backlogged subtracts `wl·size`; only packets
//!   actually sent change the credit, and it is reset when both queues are empty.
//! * **Buffer**: the link's hard limit is shared (Linux `sch->limit` / `memory_limit`): an
//!   arrival that does not fit is dropped (`dropped_limit` of its class).
//!
//! Counters: per class (`class_stats(0)` = `l`, `class_stats(1)` = `c`); a class's `marked`
//! counts packets this qdisc turned CE (a packet that arrived CE, or that both rules mark,
//! is not counted twice). PI drops count as `dropped_early` at enqueue or `dropped_dequeue`
//! at dequeue ([`DropReason::Early`]); step drops of Not-ECT packets (possible only with a
//! classifier that puts Not-ECT in L, which this one does not) as `dropped_dequeue`
//! ([`DropReason::AqmForced`]). `activations` counts runs of the PI update.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::algorithm::Periodic;
use crate::backlog::INITIAL_CAPACITY;
use crate::backlog::{Backlog, DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::error::ConfigError;
use crate::packet::{Ecn, Packet};
use crate::params::{ParamInfo, ParamValue};
use crate::qdisc::ops::{QdiscOps, QdiscSpec};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// `MAX_PROB` of Linux: probability 1 as a `u32`.
pub const MAX_PROB: u32 = u32::MAX;
/// Linux `ALPHA_BETA_SHIFT`: netlink alpha/beta are in units of 1/256 Hz.
const ALPHA_BETA_SHIFT: u32 = 8;
/// Linux `ALPHA_BETA_GRANULARITY`: internal alpha/beta are in units of 64 ns.
const ALPHA_BETA_GRANULARITY: u32 = 6;
/// Largest netlink alpha/beta (Linux `ALPHA_BETA_MAX`).
const ALPHA_BETA_MAX: u64 = (1 << 31) - 1;

/// Class index of the L queue.
pub const L: usize = 0;
/// Class index of the C queue.
pub const C: usize = 1;
/// Class names, by index.
pub const CLASS_NAMES: [&str; 2] = ["l", "c"];

/// L-queue parameters (`l.PARAM`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2LConfig {
    /// Step threshold of the native L4S AQM (sojourn time), seconds.
    pub step_thresh: Duration,
    /// Step marking applies to packets that find at least this many packets in the L queue.
    pub min_qlen_step: u32,
}

impl Default for DualPi2LConfig {
    fn default() -> Self {
        DualPi2LConfig {
            step_thresh: Duration::from_millis(1),
            min_qlen_step: 0,
        }
    }
}

/// DualPI2 configuration (Linux `dualpi2_reset_default` defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2Config {
    /// PI2 target queueing delay, seconds.
    pub target: Duration,
    /// Period of the probability update, seconds.
    pub tupdate: Duration,
    /// Integral gain, Hz (used as round(alpha·256)/256, Linux's unit).
    pub alpha: f64,
    /// Proportional gain, Hz (used as round(beta·256)/256).
    pub beta: f64,
    /// Coupling factor k between p' and the L marking probability.
    pub coupling_factor: u32,
    /// C-protection weight wc of the WRR scheduler, percent (wl = 100 − wc).
    pub c_protection: u32,
    /// Drop (true) or only mark (false) L packets when k·p' exceeds 1.
    pub drop_overload: bool,
    /// PI-based drop/mark at enqueue (true) instead of dequeue (false).
    pub drop_early: bool,
    /// Packets whose ECN field ANDed with this mask is non-zero go to the L queue: 1 =
    /// ECT(1) and CE (L4S), 2 = ECT(0) and CE, 3 = any ECN-capable packet.
    pub ecn_mask: u32,
    /// L-queue parameters.
    pub l: DualPi2LConfig,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            target: Duration::from_millis(15),
            tupdate: Duration::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            coupling_factor: 2,
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            ecn_mask: 1,
            l: DualPi2LConfig::default(),
        }
    }
}

const PARAMS: &[(&str, &str, &str)] = &[
    (
        "target",
        "s",
        "PI2 target queueing delay (of the larger head sojourn of the two queues). \
         Default 0.015 (RFC 9332 Appendix A, Linux sch_dualpi2).",
    ),
    (
        "tupdate",
        "s",
        "Period of the base-probability update. Default 0.016 (RFC 9332 Appendix A, Linux).",
    ),
    (
        "alpha",
        "1/s",
        "Integral gain, Hz; applied in Linux's unit of 1/256 Hz (rounded). Default 0.16 \
         (Linux 41/256).",
    ),
    (
        "beta",
        "1/s",
        "Proportional gain, Hz; applied in 1/256 Hz. Default 3.2 (Linux 819/256).",
    ),
    (
        "coupling_factor",
        "factor",
        "Coupling k: L marking probability k·p', classic p'^2. Default 2 (RFC 9332 §2.1, Appendix C).",
    ),
    (
        "c_protection",
        "percent",
        "WRR weight of the C queue, percent (the L queue gets 100 minus it). Default 10 \
         (Linux).",
    ),
    (
        "drop_overload",
        "bool",
        "When k·p' > 1, drop L packets with p'^2 (true) or keep marking them (false). \
         Default true (Linux).",
    ),
    (
        "drop_early",
        "bool",
        "PI-based drop/mark at enqueue (true) or dequeue (false). Default false (Linux).",
    ),
    (
        "ecn_mask",
        "mask",
        "L-queue classifier: a packet goes to L if its ECN field (ECT(1) = 1, ECT(0) = 2, \
         CE = 3) ANDed with the mask is non-zero. 1 = ECT(1) and CE (L4S), 2 = ECT(0) and CE, \
         3 = any ECT (e.g. DCTCP in a data centre). Default 1 (Linux l4s_ect).",
    ),
    (
        "l.step_thresh",
        "s",
        "Step threshold of the L queue: mark packets whose sojourn exceeds it. Default \
         0.001 (Linux; RFC 9332 Appendix A uses a shallow ramp near 1 ms).",
    ),
    (
        "l.min_qlen_step",
        "packets",
        "Step-mark only packets that found at least this many packets in the L queue. \
         Default 0 (Linux: always).",
    ),
];

impl DualPi2Config {
    /// Parameter descriptions (for `aqmlab aqms`).
    pub fn describe() -> Vec<ParamInfo> {
        let d = DualPi2Config::default();
        PARAMS
            .iter()
            .map(|&(name, unit, doc)| ParamInfo {
                name,
                unit,
                default: d.get_param(name).expect("every listed parameter exists"),
                doc,
            })
            .collect()
    }

    /// Reads one parameter by path (boundary units: seconds, Hz, 0/1, ...).
    pub fn get_param(&self, path: &str) -> Option<f64> {
        Some(match path {
            "target" => self.target.to_param(),
            "tupdate" => self.tupdate.to_param(),
            "alpha" => self.alpha,
            "beta" => self.beta,
            "coupling_factor" => self.coupling_factor.to_param(),
            "c_protection" => self.c_protection.to_param(),
            "drop_overload" => self.drop_overload.to_param(),
            "drop_early" => self.drop_early.to_param(),
            "ecn_mask" => self.ecn_mask.to_param(),
            "l.step_thresh" => self.l.step_thresh.to_param(),
            "l.min_qlen_step" => self.l.min_qlen_step.to_param(),
            _ => return None,
        })
    }

    /// Sets one parameter by path and validates; unchanged on error.
    pub fn set_param(&mut self, path: &str, v: f64) -> Result<(), ConfigError> {
        let mut n = *self;
        match path {
            "target" => n.target = Duration::from_param(path, v)?,
            "tupdate" => n.tupdate = Duration::from_param(path, v)?,
            "alpha" => n.alpha = f64::from_param(path, v)?,
            "beta" => n.beta = f64::from_param(path, v)?,
            "coupling_factor" => n.coupling_factor = u32::from_param(path, v)?,
            "c_protection" => n.c_protection = u32::from_param(path, v)?,
            "drop_overload" => n.drop_overload = bool::from_param(path, v)?,
            "drop_early" => n.drop_early = bool::from_param(path, v)?,
            "ecn_mask" => n.ecn_mask = u32::from_param(path, v)?,
            "l.step_thresh" => n.l.step_thresh = Duration::from_param(path, v)?,
            "l.min_qlen_step" => n.l.min_qlen_step = u32::from_param(path, v)?,
            _ => {
                return Err(ConfigError::UnknownParam {
                    aqm: "dualpi2".into(),
                    key: path.into(),
                    known: PARAMS.iter().map(|p| p.0).collect::<Vec<_>>().join(", "),
                })
            }
        }
        n.validate()?;
        *self = n;
        Ok(())
    }

    /// Checks ranges (Linux's netlink policy).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let gain = |key: &str, x: f64| {
            let v = (x * 256.0).round();
            if x.is_finite() && (1.0..=ALPHA_BETA_MAX as f64).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::invalid(
                    key,
                    x,
                    "must be in [1/256, 8388607] Hz (Linux's unit is 1/256 Hz)",
                ))
            }
        };
        gain("alpha", self.alpha)?;
        gain("beta", self.beta)?;
        crate::algorithm::check_period("tupdate", self.tupdate)?;
        if self.tupdate.as_nanos() > u32::MAX as u64 {
            return Err(ConfigError::invalid(
                "tupdate",
                self.tupdate.as_secs_f64(),
                "must be in [1e-06, 4.29] s",
            ));
        }
        if self.target == Duration::ZERO || self.target.as_nanos() > 4_000_000_000 {
            return Err(ConfigError::invalid(
                "target",
                self.target.as_secs_f64(),
                "must be in (0, 4] s",
            ));
        }
        if !(1..=255).contains(&self.coupling_factor) {
            return Err(ConfigError::invalid(
                "coupling_factor",
                self.coupling_factor as f64,
                "must be a whole number in [1, 255]",
            ));
        }
        if !(1..=3).contains(&self.ecn_mask) {
            return Err(ConfigError::invalid(
                "ecn_mask",
                self.ecn_mask as f64,
                "must be 1 (ECT(1) and CE), 2 (ECT(0) and CE) or 3 (any ECT)",
            ));
        }
        if self.c_protection > 100 {
            return Err(ConfigError::invalid(
                "c_protection",
                self.c_protection as f64,
                "must be a percentage in [0, 100]",
            ));
        }
        if self.l.step_thresh.as_nanos() > u32::MAX as u64 {
            return Err(ConfigError::invalid(
                "l.step_thresh",
                self.l.step_thresh.as_secs_f64(),
                "must be at most 4.29 s",
            ));
        }
        Ok(())
    }
}

/// Linux `dualpi2_scale_alpha_beta`: a gain in 1/256 Hz to the internal unit.
pub fn scale_alpha_beta(param: u32) -> u32 {
    let tmp = (param as u64 * MAX_PROB as u64) >> (ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY);
    (tmp / 1_000_000_000) as u32
}

/// A gain in Hz in Linux's netlink unit (1/256 Hz), rounded.
pub fn gain_to_netlink(hz: f64) -> u32 {
    (hz * 256.0).round().clamp(1.0, ALPHA_BETA_MAX as f64) as u32
}

/// One PI2 update (Linux `calculate_probability`) in integers: the new p' (over
/// [`MAX_PROB`]) from the old one, the queue delay and the last one (ns), and the scaled
/// gains.
#[allow(clippy::too_many_arguments)]
pub fn pi2_update(
    prob: u32,
    qdelay: u64,
    last_qdelay: u64,
    target: u64,
    alpha: u32,
    beta: u32,
    coupling: u32,
    drop_overload: bool,
) -> u32 {
    // i128: Linux's s64 cannot overflow for delays below ~4.2 s; this never does.
    let delta = (qdelay as i128 - target as i128) * alpha as i128
        + (qdelay as i128 - last_qdelay as i128) * beta as i128;
    // `__scale_delta` divides the magnitude by 64 (do_div on the absolute value).
    let step = delta.unsigned_abs() / (1 << ALPHA_BETA_GRANULARITY);
    let new = if delta > 0 {
        (prob as u128 + step).min(MAX_PROB as u128) as u32
    } else {
        (prob as u128).saturating_sub(step) as u32
    };
    if drop_overload {
        new
    } else {
        new.min(MAX_PROB / coupling)
    }
}

/// Linux `dualpi2_roll`: true with probability `prob / MAX_PROB` (`get_random_u32() <= prob`).
#[inline]
fn roll(rng: &mut Rng, prob: u32) -> bool {
    ((rng.next_u64() >> 32) as u32) <= prob
}

/// What the PI-based rule decides for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Pass,
    Mark,
    Drop,
}

/// Running state of a DualPI2 qdisc.
#[derive(Debug, Clone)]
pub struct DualPi2<P> {
    cfg: DualPi2Config,
    /// The two FIFOs, indexed by [`L`] and [`C`].
    q: [Backlog<P>; 2],
    /// Per L packet, in queue order: may the step threshold be applied (Linux `apply_step`).
    l_step: VecDeque<bool>,
    stats: [QueueStats; 2],
    limit: QueueLimit,
    link: LinkInfo,
    rng: Rng,
    timer: Periodic,
    activations: u64,
    /// p', over [`MAX_PROB`].
    prob: u32,
    last_qdelay: u64,
    alpha: u32,
    beta: u32,
    credit: i64,
    last_class: u8,
}

impl<P> QdiscSpec for DualPi2<P> {
    const NAME: &'static str = "dualpi2";
    type Config = DualPi2Config;
    fn describe() -> Vec<ParamInfo> {
        DualPi2Config::describe()
    }
    fn validate_config(c: &DualPi2Config) -> Result<(), ConfigError> {
        c.validate()
    }
    fn set_config_param(c: &mut DualPi2Config, path: &str, value: f64) -> Result<(), ConfigError> {
        c.set_param(path, value)
    }
    fn get_config_param(c: &DualPi2Config, path: &str) -> Option<f64> {
        c.get_param(path)
    }
}

impl<P: Packet> QdiscOps<P> for DualPi2<P> {
    /// A DualPI2 with `cfg` and the shared hard limit `limit` on `link`.
    fn new(
        cfg: &DualPi2Config,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let mut d = DualPi2 {
            cfg: *cfg,
            q: [
                Backlog::with_capacity(INITIAL_CAPACITY),
                Backlog::with_capacity(INITIAL_CAPACITY),
            ],
            l_step: VecDeque::with_capacity(INITIAL_CAPACITY),
            stats: [QueueStats::default(); 2],
            limit,
            link,
            rng: Rng::new(seed),
            timer: Periodic::new(cfg.tupdate),
            activations: 0,
            prob: 0,
            last_qdelay: 0,
            alpha: 0,
            beta: 0,
            credit: 0,
            last_class: 0,
        };
        d.derive();
        d.credit = d.credit_init();
        Ok(d)
    }

    /// Offers a packet (Linux `dualpi2_enqueue_skb`). Never drops another packet.
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: P,
        _on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let class = self.classify(&pkt);
        let size = pkt.size_bytes();
        let s = &mut self.stats[class];
        s.received += 1;
        s.received_bytes += size as u64;
        if !self.fits(size) {
            self.stats[class].dropped_limit += 1;
            return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
        }
        let mut marked = false;
        if self.cfg.drop_early {
            let backlog = self.backlog_bytes();
            match self.must_drop(class, pkt.ecn(), backlog) {
                Action::Pass => {}
                Action::Drop => {
                    self.stats[class].dropped_early += 1;
                    return Enqueue::Dropped(pkt, DropReason::Early);
                }
                Action::Mark => {
                    let fresh = pkt.ecn() != Ecn::Ce;
                    marked = Self::mark(&mut self.stats[class], &mut pkt) && fresh;
                }
            }
        }
        pkt.set_enqueued_at(now);
        if class == L {
            let apply = self.q[L].len() as u64 >= self.cfg.l.min_qlen_step as u64;
            self.l_step.push_back(apply);
        }
        self.q[class].push(pkt);
        self.stats[class].enqueued += 1;
        if marked {
            Enqueue::Marked
        } else {
            Enqueue::Queued
        }
    }

    /// The next packet (Linux `dualpi2_qdisc_dequeue`); packets dropped on the way go to
    /// `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        while let Some((class, mut p, apply_step, change)) = self.pick() {
            if !self.cfg.drop_early {
                let backlog = self.backlog_bytes();
                match self.must_drop(class, p.ecn(), backlog) {
                    Action::Pass => {}
                    Action::Drop => {
                        self.stats[class].dropped_dequeue += 1;
                        on_drop(p, DropReason::Early);
                        continue;
                    }
                    Action::Mark => {
                        Self::mark(&mut self.stats[class], &mut p);
                    }
                }
            }
            if class == L
                && apply_step
                && now.saturating_duration_since(p.enqueued_at()) > self.cfg.l.step_thresh
            {
                if p.ecn() == Ecn::NotEct {
                    self.stats[L].dropped_dequeue += 1;
                    on_drop(p, DropReason::AqmForced);
                    continue;
                }
                Self::mark(&mut self.stats[L], &mut p);
            }
            self.credit += change;
            let s = &mut self.stats[class];
            s.dequeued += 1;
            s.dequeued_bytes += p.size_bytes() as u64;
            self.last_class = class as u8;
            return Some(p);
        }
        None
    }

    /// The PI update's next run.
    #[inline]
    fn poll_at(&self) -> Option<Instant> {
        Some(self.timer.next())
    }

    /// Runs the PI update if due (Linux `dualpi2_timer`).
    fn on_timer(&mut self, now: Instant) {
        if !self.timer.fire(now) {
            return;
        }
        let qdelay = self.head_delay(L, now).max(self.head_delay(C, now));
        self.prob = pi2_update(
            self.prob,
            qdelay,
            self.last_qdelay,
            self.cfg.target.as_nanos(),
            self.alpha,
            self.beta,
            self.cfg.coupling_factor,
            self.cfg.drop_overload,
        );
        self.last_qdelay = qdelay;
        self.activations += 1;
    }

    /// Packets stored.
    #[inline]
    fn len_pkts(&self) -> usize {
        self.q[L].len() + self.q[C].len()
    }

    /// Bytes stored.
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.backlog_bytes()
    }

    /// Totals over both queues; `activations` counts PI updates.
    fn stats(&self) -> QueueStats {
        let mut s = self.stats[L];
        s.add(&self.stats[C]);
        s.activations = self.activations;
        s
    }

    /// Counters of class `i` (0 = `l`, 1 = `c`).
    fn class_stats(&self, i: usize) -> Option<QueueStats> {
        self.stats.get(i).copied()
    }

    /// Bytes of packet storage held by the two FIFOs and the L queue's step flags.
    fn memory_bytes(&self) -> usize {
        self.q[L].memory_bytes() + self.q[C].memory_bytes() + self.l_step.capacity()
    }

    /// Length of class `i`'s queue: `(packets, bytes)`.
    fn class_len(&self, i: usize) -> Option<(usize, u64)> {
        self.q.get(i).map(|q| (q.len(), q.bytes()))
    }

    /// The class of the packet last returned by `dequeue`.
    #[inline]
    fn last_class(&self) -> u8 {
        self.last_class
    }

    /// p', the base probability in [0, 1].
    fn probability(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// The hard limit.
    fn limit(&self) -> QueueLimit {
        self.limit
    }

    /// The link.
    fn link(&self) -> LinkInfo {
        self.link
    }

    /// The current configuration.
    fn config(&self) -> DualPi2Config {
        self.cfg
    }

    /// Changes one parameter by path while running; p', the queues and the credit are kept
    /// (a new `c_protection` resets the credit, as Linux's `dualpi2_change` does).
    fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        let old = self.cfg;
        self.cfg.set_param(path, value)?;
        self.derive();
        if self.cfg.c_protection != old.c_protection {
            self.credit = self.credit_init();
        }
        Ok(())
    }

    fn num_classes(&self) -> usize {
        CLASS_NAMES.len()
    }
    fn class_name(&self, i: usize) -> Option<&str> {
        CLASS_NAMES.get(i).copied()
    }
}

impl<P: Packet> DualPi2<P> {
    /// Recomputes the scaled gains from the config.
    fn derive(&mut self) {
        self.alpha = scale_alpha_beta(gain_to_netlink(self.cfg.alpha));
        self.beta = scale_alpha_beta(gain_to_netlink(self.cfg.beta));
        self.timer.set_period(self.cfg.tupdate);
    }
    /// Linux `dualpi2_calculate_c_protection`: `MTU·(wc − wl)`.
    fn credit_init(&self) -> i64 {
        let wc = self.cfg.c_protection as i64;
        self.link.mtu as i64 * (wc - (100 - wc))
    }
    /// Linux `dualpi2_skb_classify`: `ECN field & ecn_mask` (default ECT(1) and CE).
    #[inline]
    fn classify(&self, p: &P) -> usize {
        let field = match p.ecn() {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        };
        if field & self.cfg.ecn_mask != 0 {
            L
        } else {
            C
        }
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.q[L].bytes() + self.q[C].bytes()
    }
    #[inline]
    fn fits(&self, size: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.len_pkts() as u64) < n as u64,
            QueueLimit::Bytes(b) => self.backlog_bytes() + size as u64 <= b,
        }
    }
    /// Linux `must_drop` with `dualpi2_classic_marking` / `dualpi2_scalable_marking`;
    /// `backlog` is the total backlog in bytes without the packet.
    fn must_drop(&mut self, class: usize, ecn: Ecn, backlog: u64) -> Action {
        if backlog < 2 * self.link.mtu as u64 {
            return Action::Pass;
        }
        let prob = self.prob;
        let local_l_prob = prob as u64 * self.cfg.coupling_factor as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        let rng = &mut self.rng;
        if class == C {
            if roll(rng, prob) && roll(rng, prob) {
                if overload || ecn == Ecn::NotEct {
                    return Action::Drop;
                }
                return Action::Mark;
            }
            return Action::Pass;
        }
        if overload {
            // Drop with p'^2 if drop_overload, else (and otherwise) mark.
            if self.cfg.drop_overload && roll(rng, prob) && roll(rng, prob) {
                return Action::Drop;
            }
            return Action::Mark;
        }
        if roll(rng, local_l_prob as u32) {
            if ecn == Ecn::NotEct {
                return Action::Drop;
            }
            return Action::Mark;
        }
        Action::Pass
    }
    /// Sets CE (if the packet is ECN-capable and not CE yet) and counts the mark.
    #[inline]
    fn mark(stats: &mut QueueStats, p: &mut P) -> bool {
        match p.ecn() {
            Ecn::NotEct => false,
            Ecn::Ce => true,
            Ecn::Ect0 | Ecn::Ect1 => {
                p.set_ce();
                stats.marked += 1;
                true
            }
        }
    }
    /// Linux `dequeue_packet`: the WRR choice; returns the class, the packet and the credit
    /// change to apply if it is sent.
    #[inline]
    fn pick(&mut self) -> Option<(usize, P, bool, i64)> {
        let (l_len, c_len) = (self.q[L].len(), self.q[C].len());
        let wc = self.cfg.c_protection as i64;
        if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            let p = self.q[L].pop()?;
            let step = self.l_step.pop_front().unwrap_or(true);
            let change = if c_len > 0 { wc } else { 0 } * p.size_bytes() as i64;
            Some((L, p, step, change))
        } else if c_len > 0 {
            let p = self.q[C].pop()?;
            let change = if l_len > 0 { -(100 - wc) } else { 0 } * p.size_bytes() as i64;
            Some((C, p, false, change))
        } else {
            self.credit = self.credit_init();
            None
        }
    }
    /// Head sojourn time of class `class` at `now`, ns (0 if empty).
    #[inline]
    fn head_delay(&self, class: usize, now: Instant) -> u64 {
        self.q[class].front().map_or(0, |p| {
            now.saturating_duration_since(p.enqueued_at()).as_nanos()
        })
    }
    /// p' as Linux holds it (over [`MAX_PROB`]).
    pub fn prob_raw(&self) -> u32 {
        self.prob
    }
    /// The WRR credit, bytes·percent (Linux `c_protection_credit`).
    pub fn credit(&self) -> i64 {
        self.credit
    }
    /// The scaled gains (Linux `pi2_alpha`, `pi2_beta`).
    pub fn gains(&self) -> (u32, u32) {
        (self.alpha, self.beta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TestPacket;
    use crate::time::BitsPerSec;

    fn q(cfg: DualPi2Config) -> DualPi2<TestPacket> {
        DualPi2::new(
            &cfg,
            QueueLimit::Packets(1000),
            LinkInfo::new(BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap()
    }

    fn l4s(id: u64, size: u32) -> TestPacket {
        TestPacket::new(id, size).ect1()
    }

    /// Linux's fixed point by hand: `dualpi2_scale_alpha_beta(41)` =
    /// ((41·(2^32 − 1)) >> 2) / 10^9 = 44023414773 / 10^9 = 44, and for 819:
    /// 879394553651 / 10^9 = 879.
    #[test]
    fn default_gains_are_linux_integers() {
        assert_eq!(gain_to_netlink(0.16), 41);
        assert_eq!(gain_to_netlink(3.2), 819);
        assert_eq!(scale_alpha_beta(41), 44);
        assert_eq!(scale_alpha_beta(819), 879);
        assert_eq!(scale_alpha_beta(1), 1);
        let d = q(DualPi2Config::default());
        assert_eq!(d.gains(), (44, 879));
        assert_eq!(d.credit(), 1500 * (10 - 90));
    }

    /// `calculate_probability` by hand. From p' = 0, qdelay 20 ms, last 10 ms, target 15 ms:
    /// delta = 5e6·44 + 10e6·879 = 9 010 000 000; /64 = 140 781 250 (p' = 0.03278, vs. the
    /// float PI 0.16015625·0.005 + 3.19921875·0.01 = 0.03279). Then qdelay 12 ms (last 20):
    /// delta = −3e6·44 − 8e6·879 = −7 164 000 000; /64 = 111 937 500 ->
    /// 140 781 250 − 111 937 500 = 28 843 750. A large negative step clamps at 0, a large
    /// positive one at MAX_PROB; without drop_overload the result is capped at MAX_PROB/k.
    #[test]
    fn pi_update_matches_linux_arithmetic() {
        let ms = 1_000_000u64;
        let p1 = pi2_update(0, 20 * ms, 10 * ms, 15 * ms, 44, 879, 2, true);
        assert_eq!(p1, 140_781_250);
        let f = 41.0 / 256.0 * 0.005 + 819.0 / 256.0 * 0.01;
        // The truncated scaled gains (44 for 44.02, 879 for 879.39) cost 0.05 %.
        assert!((p1 as f64 / MAX_PROB as f64 / f - 1.0).abs() < 1e-3);
        let p2 = pi2_update(p1, 12 * ms, 20 * ms, 15 * ms, 44, 879, 2, true);
        assert_eq!(p2, 28_843_750);
        assert_eq!(pi2_update(p2, 0, 500 * ms, 15 * ms, 44, 879, 2, true), 0);
        let hi = pi2_update(MAX_PROB - 10, 4000 * ms, 0, 15 * ms, 44, 879, 2, true);
        assert_eq!(hi, MAX_PROB);
        let capped = pi2_update(MAX_PROB - 10, 4000 * ms, 0, 15 * ms, 44, 879, 2, false);
        assert_eq!(capped, MAX_PROB / 2);
    }

    /// The timer runs the update every tupdate on max(head delay L, head delay C).
    #[test]
    fn timer_uses_the_larger_head_delay() {
        let mut d = q(DualPi2Config::default());
        let ms = |x: u64| Instant(x * 1_000_000);
        // A C packet enqueued at 0 and an L packet at 10 ms; first update at 16 ms:
        // qdelay = 16 ms (C head), last 0: delta = 1e6·44 + 16e6·879 = 14 108 000 000.
        d.enqueue(ms(0), TestPacket::new(1, 1500), &mut |_, _| {});
        d.enqueue(ms(10), l4s(2, 1500), &mut |_, _| {});
        assert_eq!(d.poll_at(), Some(ms(16)));
        d.on_timer(ms(15));
        assert_eq!(d.prob_raw(), 0, "early call is a no-op");
        d.on_timer(ms(16));
        assert_eq!(d.prob_raw(), 220_437_500);
        assert_eq!(d.stats().activations, 1);
        assert_eq!(d.poll_at(), Some(ms(32)));
    }

    /// `dequeue_packet` by hand with 1000-byte packets and MTU 1500: credit starts at
    /// 1500·(10 − 90) = −120 000, so L goes first; each L packet sent while C is backlogged
    /// adds 10·1000, each C packet while L is backlogged subtracts 90·1000. With 20 L and 3 C
    /// packets: 12 L packets take the credit to 0, the 13th is still L (credit <= 0), then
    /// C (credit 10 000 > 0) -> −80 000, then the 7 remaining L packets (to −10 000), then
    /// the two last C packets with L empty (no change). Order: 13 L, C, 7 L, C, C; when both
    /// queues are empty the credit is reset.
    #[test]
    fn wrr_credit_by_hand() {
        let mut d = q(DualPi2Config::default());
        for i in 0..20 {
            d.enqueue(Instant(0), l4s(i, 1000), &mut |_, _| {});
        }
        for i in 0..3 {
            d.enqueue(Instant(0), TestPacket::new(100 + i, 1000), &mut |_, _| {});
        }
        let mut order = String::new();
        let mut credits = Vec::new();
        while let Some(p) = d.dequeue(Instant(1), &mut |_, _| panic!("no drop")) {
            order.push(if p.id >= 100 { 'C' } else { 'L' });
            credits.push(d.credit());
        }
        assert_eq!(
            order,
            format!("{}C{}C{}C", "L".repeat(13), "L".repeat(7), "")
        );
        assert_eq!(credits[11], 0);
        assert_eq!(credits[12], 10_000);
        assert_eq!(credits[13], -80_000);
        assert_eq!(credits[20], -10_000);
        assert_eq!(credits[22], -10_000, "no change while L is empty");
        assert_eq!(d.credit(), 1500 * (10 - 90), "reset when both are empty");
    }

    /// The step threshold marks L packets whose sojourn exceeds 1 ms, at dequeue, even
    /// below 2 MTU of backlog (min_qlen_step = 0); C packets are not step-marked, and with
    /// p' = 0 nothing else is marked.
    #[test]
    fn step_marks_l_only() {
        let mut d = q(DualPi2Config::default());
        d.enqueue(Instant(0), l4s(1, 1000), &mut |_, _| {});
        d.enqueue(Instant(0), l4s(2, 1000), &mut |_, _| {});
        d.enqueue(Instant(0), TestPacket::new(3, 1000).ect(), &mut |_, _| {});
        let a = d.dequeue(Instant(1_000_000), &mut |_, _| {}).unwrap();
        assert!(!a.ce, "sojourn = 1 ms is not above the threshold");
        let b = d.dequeue(Instant(1_000_001), &mut |_, _| {}).unwrap();
        assert!(b.ce);
        let c = d.dequeue(Instant(50_000_000), &mut |_, _| {}).unwrap();
        assert_eq!(c.id, 3);
        assert!(!c.ce);
        assert_eq!(d.class_stats(L).unwrap().marked, 1);
        assert_eq!(d.class_stats(C).unwrap().marked, 0);
    }

    /// Marking frequencies of `must_drop`: with p' = 0.3 and k = 2, L packets are marked
    /// with 0.6, ECT(0) C packets with p'^2 = 0.09 and Not-ECT C packets dropped with 0.09.
    /// Nothing happens while the backlog is under 2 MTU.
    #[test]
    fn coupled_probabilities() {
        let mut d = q(DualPi2Config::default());
        d.prob = (0.3 * MAX_PROB as f64) as u32;
        let n = 30_000;
        let count = |d: &mut DualPi2<TestPacket>, class, ecn, want| {
            (0..n)
                .filter(|_| d.must_drop(class, ecn, 4000) == want)
                .count() as f64
                / n as f64
        };
        let lm = count(&mut d, L, Ecn::Ect1, Action::Mark);
        let cm = count(&mut d, C, Ecn::Ect0, Action::Mark);
        let cd = count(&mut d, C, Ecn::NotEct, Action::Drop);
        assert!((lm - 0.6).abs() < 0.02, "L {lm}");
        assert!((cm - 0.09).abs() < 0.01, "C mark {cm}");
        assert!((cd - 0.09).abs() < 0.01, "C drop {cd}");
        assert_eq!(count(&mut d, C, Ecn::Ect0, Action::Drop), 0.0);
        assert_eq!(d.must_drop(L, Ecn::Ect1, 2999), Action::Pass, "2-MTU rule");
        assert_eq!(
            d.must_drop(C, Ecn::NotEct, 2999),
            Action::Pass,
            "2-MTU rule"
        );
    }

    /// Overload (k·p' > 1): C packets are dropped even if ECT(0); L packets are dropped
    /// with p'^2 (drop_overload) or always marked (not).
    #[test]
    fn overload() {
        let mut d = q(DualPi2Config::default());
        d.prob = MAX_PROB;
        assert_eq!(d.must_drop(C, Ecn::Ect0, 10_000), Action::Drop);
        assert_eq!(d.must_drop(L, Ecn::Ect1, 10_000), Action::Drop);
        let mut d = q(DualPi2Config {
            drop_overload: false,
            ..DualPi2Config::default()
        });
        d.prob = MAX_PROB;
        assert_eq!(d.must_drop(L, Ecn::Ect1, 10_000), Action::Mark);
    }

    #[test]
    fn classification_and_paths() {
        let mut d = q(DualPi2Config::default());
        d.enqueue(Instant(0), l4s(1, 100), &mut |_, _| {});
        let mut ce = TestPacket::new(2, 100).ect();
        ce.ce = true;
        d.enqueue(Instant(0), ce, &mut |_, _| {});
        d.enqueue(Instant(0), TestPacket::new(3, 100).ect(), &mut |_, _| {});
        d.enqueue(Instant(0), TestPacket::new(4, 100), &mut |_, _| {});
        assert_eq!(d.class_len(L).map(|l| l.0), Some(2));
        assert_eq!(d.class_len(C).map(|l| l.0), Some(2));
        d.set_param("ecn_mask", 3.0).unwrap();
        d.enqueue(Instant(0), TestPacket::new(5, 100).ect(), &mut |_, _| {});
        d.enqueue(Instant(0), TestPacket::new(6, 100), &mut |_, _| {});
        assert_eq!(d.class_len(L).map(|l| l.0), Some(3), "any ECT to L");
        assert!(d.set_param("ecn_mask", 4.0).is_err());
        d.set_param("l.step_thresh", 0.002).unwrap();
        assert_eq!(d.config().get_param("l.step_thresh"), Some(0.002));
        let e = d.set_param("coupling_factor", 0.0).unwrap_err();
        assert_eq!(e.key(), Some("coupling_factor"));
        let e = d.set_param("step_thresh", 1.0).unwrap_err();
        assert!(e.to_string().contains("l.step_thresh"), "{e}");
        d.set_param("c_protection", 50.0).unwrap();
        assert_eq!(d.credit(), 0);
        assert_eq!(DualPi2Config::describe().len(), PARAMS.len());
    }

    /// The shared limit drops the arrival, whatever its class.
    #[test]
    fn shared_limit() {
        let mut d = DualPi2::<TestPacket>::new(
            &DualPi2Config::default(),
            QueueLimit::Packets(3),
            LinkInfo::new(BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        for i in 0..3 {
            d.enqueue(Instant(0), TestPacket::new(i, 100), &mut |_, _| {});
        }
        let r = d.enqueue(Instant(0), l4s(9, 100), &mut |_, _| {});
        assert!(matches!(r, Enqueue::Dropped(_, DropReason::ForcedLimit)));
        assert_eq!(d.class_stats(L).unwrap().dropped_limit, 1);
    }
}
