//! CoDel — Controlled Delay (RFC 8289; docs/aqm/codel.md).
//!
//! Dequeue-side: the sojourn time of each departing packet is compared with `target`; once
//! it has stayed above `target` for `interval`, CoDel enters the dropping state and drops
//! (or ECN-marks) heads at times spaced by `interval / sqrt(count)` (the control law,
//! RFC 8289 §5.5 `control_law`). The code follows the RFC's pseudo-code (§5.3–§5.5,
//! `dodequeue` and `dequeue`) with integer-nanosecond time.
//!
//! **Control law arithmetic** ([`ControlLaw`], parameter `control_law`). By default
//! (`linux`) `interval / sqrt(count)` is computed as Linux computes it
//! (`include/net/codel_impl.h`): a 16-bit `rec_inv_sqrt` (1/sqrt(count) in Q0.16) is kept per
//! queue, advanced by one Newton step ([`newton_step`], `codel_Newton_step`) each time
//! `count` changes, and the spacing is `reciprocal_scale(interval, rec_inv_sqrt << 16)`
//! ([`control_law_linux`], `codel_control_law`). One step per count does not converge at
//! once: the spacing is 50 ms instead of 70.7 ms at count 2 (100 ms interval), 56.25 ms
//! instead of 57.7 ms at count 3, and about 1.7 % short of the exact value at large counts
//! (the 16-bit truncation). `rfc` computes the RFC's exact `interval / sqrt(count)` with an
//! `f64` square root truncated to whole ns ([`control_law_rfc`]). Linux counts time in
//! 1024-ns units; aqmlab keeps nanoseconds and applies the same scaling to them, so the
//! multiplier is bit for bit Linux's and only the time grain differs.
//!
//! ECN (RFC 8289 §5.5 / Linux `codel_dequeue`): with `ecn` set, an ECN-capable packet due for
//! dropping is marked CE and delivered; in the dropping loop the next drop time is then
//! scheduled and the call returns that packet. A packet that arrived already CE is
//! ECN-capable: it is "marked" (stays CE) and delivered, as Linux's `INET_ECN_set_ce`
//! succeeds on it.
//!
//! `ce_threshold` (Linux `codel_dequeue`, label `end`): a delivered ECT packet whose sojourn
//! exceeds it is CE-marked, whatever `ecn` says.
//!
//! Activations: one per `dequeue` call that finds a packet (the control logic runs on every
//! dequeue, RFC 8289 §5.5).
//!
//! The state machine is [`CodelVars::dequeue`], generic over where the packets come from
//! ([`CodelQueue`]: a FIFO here; one flow queue of `fq_codel` / `sfq_codel`, which hold one
//! [`CodelVars`] per flow queue and call the same code, as Linux's `sch_fq_codel` calls
//! `codel_dequeue` per flow). [`CodelParams`] carries the parameters, the Linux
//! `ce_threshold` option, the control-law arithmetic and the bookkeeping variant
//! ([`CodelRules`]).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::{Backlog, DropReason, QueueStats};
use crate::error::{ensure, ConfigError};
use crate::packet::{Ecn, Packet};
use crate::params::{aqm_config, ParamValue};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// TARGET, according to RFC 8289 §4.4: 5 ms.
pub const TARGET: Duration = Duration::from_millis(5);
/// INTERVAL, according to RFC 8289 §4.3: 100 ms.
pub const INTERVAL: Duration = Duration::from_millis(100);
/// Re-entry window in intervals: count decay applies if the last dropping state ended less
/// than 16 intervals ago (RFC 8289 §5.5, "this is the Linux version").
pub const REENTRY_INTERVALS: u64 = 16;

aqm_config! {
    /// CoDel configuration (RFC 8289).
    pub struct CodelConfig as "codel" {
        /// Acceptable standing queue delay (TARGET), seconds. Default 0.005 (RFC 8289 §4.4).
        pub target: Duration = TARGET, "s";
        /// Sliding window for the minimum sojourn time (INTERVAL), seconds.
        /// Default 0.1 (RFC 8289 §4.3).
        pub interval: Duration = INTERVAL, "s";
        /// MAXPACKET in bytes: no drop while the bytes left in the queue are <= this
        /// (RFC 8289 §5.4 `dodequeue`). 0 = the link's MTU (default).
        pub max_packet: u32 = 0, "bytes";
        /// Mark CE instead of dropping ECN-capable packets. Default false.
        pub ecn: bool = false, "bool";
        /// CE-mark every delivered ECT packet whose sojourn exceeds this, seconds, whatever
        /// `ecn` says (Linux sch_codel ce_threshold, for DCTCP-style senders). 0 = off
        /// (default).
        pub ce_threshold: Duration = Duration::ZERO, "s";
        /// Arithmetic of the control law interval/sqrt(count): "linux" (default; Linux's
        /// 16-bit reciprocal square root advanced by one Newton step per count,
        /// codel_impl.h) or "rfc" (RFC 8289's exact square root).
        pub control_law: ControlLaw = ControlLaw::Linux, "linux|rfc";
    }
}

impl CodelConfig {
    fn check(&self) -> Result<(), ConfigError> {
        ensure(
            self.target > Duration::ZERO,
            "target",
            self.target.as_secs_f64(),
            "must be > 0",
        )?;
        ensure(
            self.interval > Duration::ZERO,
            "interval",
            self.interval.as_secs_f64(),
            "must be > 0",
        )
    }
}

/// How the control law's spacing `interval / sqrt(count)` is computed (parameter
/// `control_law`; module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlLaw {
    /// Linux `codel_impl.h`: a Q0.16 `rec_inv_sqrt` advanced by one Newton step
    /// ([`newton_step`]) per change of `count`, scaled with `reciprocal_scale`
    /// ([`control_law_linux`]).
    #[default]
    Linux,
    /// RFC 8289 §5.5: `interval / sqrt(count)` with an exact square root ([`control_law_rfc`]).
    Rfc,
}

/// At the parameter boundary (`f64`): 0 = `linux`, 1 = `rfc` (the unit `"linux|rfc"` lists
/// the names in that order; text values are converted by name).
impl ParamValue for ControlLaw {
    fn from_param(key: &str, v: f64) -> Result<Self, ConfigError> {
        if v == 0.0 {
            Ok(ControlLaw::Linux)
        } else if v == 1.0 {
            Ok(ControlLaw::Rfc)
        } else {
            Err(ConfigError::invalid(key, v, "must be \"linux\" or \"rfc\""))
        }
    }
    fn to_param(self) -> f64 {
        match self {
            ControlLaw::Linux => 0.0,
            ControlLaw::Rfc => 1.0,
        }
    }
}

/// Bits of Linux's `rec_inv_sqrt` (`REC_INV_SQRT_BITS`, `include/net/codel.h`: a `u16`).
pub const REC_INV_SQRT_BITS: u32 = 16;
/// Shift from `rec_inv_sqrt` to a Q0.32 number (`REC_INV_SQRT_SHIFT`, `include/net/codel.h`).
pub const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;
/// `rec_inv_sqrt` for `count = 1` (`~0U >> REC_INV_SQRT_SHIFT`, Linux `codel_dequeue`).
pub const REC_INV_SQRT_ONE: u16 = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;

/// One Newton step of the reciprocal square root of `count`, Linux `codel_Newton_step`
/// (`include/net/codel_impl.h`): with `y` = `rec_inv_sqrt` as Q0.32,
/// `y' = (y / 2) (3 - count y^2)`, in Linux's integer arithmetic (unsigned 64-bit, wrapping
/// where Linux's does, e.g. when `count y^2 > 3`), truncated back to 16 bits.
#[inline]
pub fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let invsqrt = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64);
    val >>= 2; // "avoid overflow in following multiply"
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    (val >> REC_INV_SQRT_SHIFT) as u16
}

/// Linux `reciprocal_scale(val, ep_ro)` = `(val * ep_ro) >> 32` (`include/linux/kernel.h`),
/// widened so that `val` may be any `u64` (nanoseconds); for `val < 2^32` it is Linux's value.
#[inline]
pub fn reciprocal_scale(val: u64, ep_ro: u32) -> u64 {
    ((val as u128 * ep_ro as u128) >> 32) as u64
}

/// Linux `codel_control_law`: `t + reciprocal_scale(interval, rec_inv_sqrt << 16)`.
#[inline]
pub fn control_law_linux(t: Instant, interval: Duration, rec_inv_sqrt: u16) -> Instant {
    t + Duration(reciprocal_scale(
        interval.0,
        (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT,
    ))
}

/// RFC 8289 §5.5 `control_law`: `t + interval / sqrt(count)` (exact square root, truncated to
/// whole ns).
#[inline]
pub fn control_law_rfc(t: Instant, interval: Duration, count: u32) -> Instant {
    let step = interval.0 as f64 / (count.max(1) as f64).sqrt();
    t + Duration(step as u64)
}

/// Which CoDel variant's bookkeeping applies. The variants share the state machine (RFC 8289
/// §5.4–§5.5) and differ only in the re-entry rule and in when the drop count grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodelRules {
    /// RFC 8289 §5.5 (its pseudo-code is "the Linux version", `codel_impl.h`): `count` grows
    /// before each drop of the dropping loop; on re-entry within 16 intervals of the last
    /// drop time, `count = count - lastcount` if that is > 1, else 1.
    Rfc8289,
    /// Nichols' ns-2 `sfqcodel.cc` (2013): `count` grows only when the state stays
    /// `dropping` after a drop; on re-entry within 8 intervals, `count = count - 2` if
    /// `count > 2`, else 1 (see docs/aqm/sfq_codel.md).
    Ns2Sfq,
}

/// CoDel's parameters as its state machine uses them (one set per queue, or one shared by
/// every flow queue of a hashed FQ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    /// TARGET (RFC 8289 §4.4).
    pub target: Duration,
    /// INTERVAL (RFC 8289 §4.3).
    pub interval: Duration,
    /// Mark CE instead of dropping ECN-capable packets.
    pub ecn: bool,
    /// Linux `ce_threshold` (`codel_dequeue`, label `end`): a delivered ECT packet whose
    /// sojourn exceeds this is marked CE (whatever `ecn` says). `None`: off.
    pub ce_threshold: Option<Duration>,
    /// Arithmetic of the control law.
    pub law: ControlLaw,
    /// Bookkeeping variant.
    pub rules: CodelRules,
}

/// What CoDel dequeues from: a FIFO ([`Backlog`]) or one flow queue of a hashed FQ
/// ([`crate::flowq`]). The "small queue" test is the owner's: RFC 8289 §5.4 compares the
/// bytes left in the queue with MAXPACKET, Linux fq_codel the whole qdisc's backlog, ns-2
/// sfqcodel the whole backlog with the largest packet seen or the bin being empty.
pub trait CodelQueue<P> {
    /// Removes the head packet.
    fn pop(&mut self) -> Option<P>;
    /// True if, after the last `pop`, the queue is too short to drop from (no drop while this
    /// holds, RFC 8289 §5.4 `dodequeue`).
    fn too_small(&self) -> bool;
}

/// A FIFO backlog with the RFC 8289 small-queue test: bytes left <= MAXPACKET.
struct Fifo<'a, P> {
    backlog: &'a mut Backlog<P>,
    max_packet: u64,
}

impl<P: Packet> CodelQueue<P> for Fifo<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<P> {
        self.backlog.pop()
    }
    #[inline]
    fn too_small(&self) -> bool {
        self.backlog.bytes() <= self.max_packet
    }
}

/// CoDel's per-queue state variables (RFC 8289 §5.2) and its state machine. The CoDel AQM
/// ([`Codel`]) holds one; a hashed FQ (`fq_codel`, `sfq_codel`) holds one per flow queue and
/// calls the same [`CodelVars::dequeue`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// Time when the sojourn time went (and stayed) above target, plus INTERVAL;
    /// `None` is the RFC's `first_above_time_ = 0`.
    pub first_above_time: Option<Instant>,
    /// Time of the next drop while in the dropping state.
    pub drop_next: Instant,
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
    /// 1/sqrt(count) in Q0.16, Linux's `rec_inv_sqrt` (used by [`ControlLaw::Linux`]; kept
    /// up to date under either law, so that switching laws while running is seamless).
    pub rec_inv_sqrt: u16,
}

/// Drop `p` (counted in `stats.dropped_dequeue`, handed to `on_drop`), or mark and return it
/// when `ecn` applies.
#[inline]
fn signal<P: Packet, F: FnMut(P, DropReason)>(
    ecn: bool,
    mut p: P,
    stats: &mut QueueStats,
    on_drop: &mut F,
) -> Option<P> {
    if ecn && p.ecn_capable() {
        p.set_ce();
        stats.marked += 1;
        Some(p)
    } else {
        stats.dropped_dequeue += 1;
        on_drop(p, DropReason::CodelDequeue);
        None
    }
}

impl CodelVars {
    /// `count += 1` and, as Linux does after every increment, one Newton step of
    /// `rec_inv_sqrt` (`codel_dequeue`'s dropping loop).
    #[inline]
    pub fn count_up(&mut self) {
        self.count = self.count.saturating_add(1);
        self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
    }

    /// Sets `count` on entering the dropping state: `resume = Some(n)` resumes at count `n`
    /// with one Newton step from the old `rec_inv_sqrt` (Linux: "we dont care if
    /// rec_inv_sqrt approximation is not very precise: next Newton steps will correct it
    /// quadratically"); `None` restarts at count 1 with `rec_inv_sqrt = 1.0`.
    #[inline]
    fn enter_count(&mut self, resume: Option<u32>) {
        match resume {
            Some(n) => {
                self.count = n;
                self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, n);
            }
            None => {
                self.count = 1;
                self.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
        }
    }

    /// The control law from `t` with the current `count` (and `rec_inv_sqrt`).
    #[inline]
    pub fn control_law(&self, t: Instant, prm: &CodelParams) -> Instant {
        match prm.law {
            ControlLaw::Linux => control_law_linux(t, prm.interval, self.rec_inv_sqrt),
            ControlLaw::Rfc => control_law_rfc(t, prm.interval, self.count),
        }
    }

    /// RFC 8289 §5.4 `dodequeue`: pop the head and decide whether dropping is allowed.
    #[inline]
    fn dodequeue<P: Packet, Q: CodelQueue<P>>(
        &mut self,
        now: Instant,
        prm: &CodelParams,
        q: &mut Q,
    ) -> (Option<P>, bool) {
        let Some(p) = q.pop() else {
            // Queue is empty: we can't be above TARGET.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - p.enqueued_at();
        let mut ok_to_drop = false;
        if sojourn < prm.target || q.too_small() {
            // Went below: stay below for at least INTERVAL.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above from below; if still above at first_above_time, drop.
                None => self.first_above_time = Some(now + prm.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    /// RFC 8289 §5.5 `dequeue` on queue `q`: returns the packet to send, if any; packets
    /// dropped on the way go to `on_drop` (counted in `stats.dropped_dequeue`), marks are
    /// counted in `stats.marked`. `activations` grows by one when the queue had a packet.
    #[inline]
    pub fn dequeue<P: Packet, Q: CodelQueue<P>, F: FnMut(P, DropReason)>(
        &mut self,
        now: Instant,
        prm: &CodelParams,
        q: &mut Q,
        stats: &mut QueueStats,
        on_drop: &mut F,
        activations: &mut u64,
    ) -> Option<P> {
        let (mut p, mut ok_to_drop) = self.dodequeue(now, prm, q);
        if p.is_none() {
            self.dropping = false;
            return None;
        }
        *activations += 1;
        let ns2 = prm.rules == CodelRules::Ns2Sfq;
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below TARGET: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop: drop the current packet and dequeue the next; a large
            // backlog may need several drops now, hence the loop.
            while self.dropping && now >= self.drop_next {
                let head = p.take().expect("dropping implies a packet");
                if !ns2 {
                    self.count_up();
                }
                if let Some(marked) = signal(prm.ecn, head, stats, on_drop) {
                    if ns2 {
                        self.count_up();
                    }
                    self.drop_next = self.control_law(self.drop_next, prm);
                    // Already CE: the ce_threshold test below cannot mark it again.
                    return Some(marked);
                }
                (p, ok_to_drop) = self.dodequeue(now, prm, q);
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    if ns2 {
                        self.count_up();
                    }
                    self.drop_next = self.control_law(self.drop_next, prm);
                }
            }
        } else if ok_to_drop {
            // Sojourn above TARGET for INTERVAL: enter the dropping state.
            let head = p.take().expect("ok_to_drop implies a packet");
            let mut marked = false;
            p = match signal(prm.ecn, head, stats, on_drop) {
                Some(m) => {
                    marked = true;
                    Some(m)
                }
                None => self.dodequeue(now, prm, q).0,
            };
            self.dropping = true;
            let since = now.signed_diff(self.drop_next);
            if ns2 {
                // ns-2 sfqcodel: count - 2 if the last dropping state ended < 8 intervals ago.
                let window = prm.interval.0.saturating_mul(8).min(i64::MAX as u64) as i64;
                let resume = (self.count > 2 && since < window).then(|| self.count - 2);
                self.enter_count(resume);
            } else {
                // Count decay on re-entry (RFC 8289 §5.5): resume near the last drop rate if
                // the previous dropping state ended recently.
                let delta = self.count.saturating_sub(self.lastcount);
                let window = prm.interval.0.saturating_mul(REENTRY_INTERVALS);
                let recent = since < window.min(i64::MAX as u64) as i64;
                self.enter_count((delta > 1 && recent).then_some(delta));
            }
            self.drop_next = self.control_law(now, prm);
            self.lastcount = self.count;
            if marked {
                return p;
            }
        }
        if let (Some(th), Some(pkt)) = (prm.ce_threshold, p.as_mut()) {
            // Linux codel_dequeue, label `end`: INET_ECN_set_ce succeeds on ECT(0)/ECT(1).
            if now - pkt.enqueued_at() > th && matches!(pkt.ecn(), Ecn::Ect0 | Ecn::Ect1) {
                pkt.set_ce();
                stats.marked += 1;
            }
        }
        p
    }
}

/// The CoDel AQM on a FIFO: the configuration and one [`CodelVars`].
#[derive(Debug, Clone)]
pub struct Codel {
    cfg: CodelConfig,
    /// MAXPACKET actually used (config or link MTU).
    max_packet: u64,
    /// The link's MTU (default MAXPACKET).
    link_mtu: u32,
    vars: CodelVars,
    activations: u64,
}

impl Codel {
    /// The state machine's parameters.
    #[inline]
    fn params(&self) -> CodelParams {
        CodelParams {
            target: self.cfg.target,
            interval: self.cfg.interval,
            ecn: self.cfg.ecn,
            ce_threshold: ce_threshold(self.cfg.ce_threshold),
            law: self.cfg.control_law,
            rules: CodelRules::Rfc8289,
        }
    }

    /// The state variables.
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
    /// True while in the dropping state.
    pub fn dropping(&self) -> bool {
        self.vars.dropping
    }
    /// Current drop count.
    pub fn count(&self) -> u32 {
        self.vars.count
    }
    /// Scheduled time of the next drop (meaningful while dropping).
    pub fn drop_next(&self) -> Instant {
        self.vars.drop_next
    }
}

impl Algorithm for Codel {
    type Config = CodelConfig;

    fn build(cfg: &CodelConfig, env: &Env) -> Self {
        let mut c = Codel {
            cfg: *cfg,
            max_packet: 0,
            link_mtu: env.link.mtu,
            vars: CodelVars::default(),
            activations: 0,
        };
        c.update_max_packet();
        c
    }
    fn cfg(&self) -> &CodelConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: CodelConfig) {
        self.cfg = cfg;
        self.update_max_packet();
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }
    #[inline]
    fn enqueue(
        &mut self,
        _now: Instant,
        _pkt: &Arrival,
        _q: &QueueView,
        _rng: &mut Rng,
    ) -> Verdict {
        // CoDel only timestamps on enqueue (done by the wrapper), RFC 8289 §5.2.
        Verdict::Accept
    }

    /// RFC 8289 §5.5 `dequeue` ([`CodelVars::dequeue`] on the FIFO).
    #[inline]
    fn dequeue<P: Packet, F: FnMut(P, DropReason)>(
        &mut self,
        now: Instant,
        backlog: &mut Backlog<P>,
        stats: &mut QueueStats,
        on_drop: &mut F,
        _rng: &mut Rng,
    ) -> Option<P> {
        let prm = self.params();
        let mut q = Fifo {
            backlog,
            max_packet: self.max_packet,
        };
        self.vars
            .dequeue(now, &prm, &mut q, stats, on_drop, &mut self.activations)
    }

    fn activations(&self) -> u64 {
        self.activations
    }
}

/// A `ce_threshold` parameter (0 = off) as [`CodelParams::ce_threshold`].
#[inline]
pub(crate) fn ce_threshold(d: Duration) -> Option<Duration> {
    (d > Duration::ZERO).then_some(d)
}

impl Codel {
    fn update_max_packet(&mut self) {
        self.max_packet = if self.cfg.max_packet == 0 {
            self.link_mtu as u64
        } else {
            self.cfg.max_packet as u64
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AnyAqm;
    use crate::testutil::{env, ms, TestPacket};
    use crate::{AqmConfig, LinkInfo, QueueDisc, QueueLimit};

    const I: u64 = 100_000_000; // INTERVAL in ns

    fn codel_queue_with(law: ControlLaw) -> QueueDisc<TestPacket> {
        let cfg = CodelConfig {
            control_law: law,
            ..Default::default()
        };
        QueueDisc::new(
            &AqmConfig::Codel(cfg),
            QueueLimit::Packets(10_000),
            LinkInfo::new(crate::BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap()
    }
    fn codel_queue() -> QueueDisc<TestPacket> {
        codel_queue_with(ControlLaw::Rfc)
    }
    fn state(q: &QueueDisc<TestPacket>) -> &Codel {
        match q.aqm().expect("codel") {
            AnyAqm::Codel(c) => c,
            _ => unreachable!(),
        }
    }
    /// Dequeue once at `t`; returns (delivered?, number of drops).
    fn tick(q: &mut QueueDisc<TestPacket>, t: Instant) -> (bool, u32) {
        let mut drops = 0;
        let got = q.dequeue(t, &mut |_p, r| {
            assert_eq!(r, DropReason::CodelDequeue);
            drops += 1
        });
        (got.is_some(), drops)
    }
    /// Reference drop schedule from RFC 8289 §5.5 independent of the implementation:
    /// D_1 = entry time, D_2 = D_1 + I/sqrt(1), D_{k+1} = D_k + I/sqrt(k) (integer ns,
    /// truncated as the RFC's integer `time_t` arithmetic does).
    fn reference_schedule(entry: u64, n: usize, first_count: u64) -> Vec<u64> {
        let mut d = vec![entry];
        let mut next = entry + (I as f64 / (first_count as f64).sqrt()) as u64;
        let mut count = first_count;
        while d.len() < n {
            d.push(next);
            count += 1;
            next += (I as f64 / (count as f64).sqrt()) as u64;
        }
        d
    }

    /// Reference drop schedule of Linux's arithmetic (`codel_impl.h`): D_1 = entry,
    /// rec_1 = 0xffff; D_{k+1} = D_k + ((I * (rec_k << 16)) >> 32) with
    /// rec_{k+1} = codel_Newton_step(rec_k, k + 1) (the Newton step itself is checked bit for
    /// bit against Linux's vectors in tests/ns3_suites.rs).
    fn linux_schedule(entry: u64, n: usize) -> Vec<u64> {
        let mut d = vec![entry];
        let mut rec = REC_INV_SQRT_ONE;
        let mut count = 1u32;
        while d.len() < n {
            let last = *d.last().unwrap();
            d.push(last + ((I as u128 * ((rec as u128) << 16)) >> 32) as u64);
            count += 1;
            rec = newton_step(rec, count);
        }
        d
    }

    /// Drops of a queue whose sojourn stays above TARGET, dequeued every 1 ms from 10 ms to
    /// 1999 ms: the tick of each drop.
    fn drop_ticks(q: &mut QueueDisc<TestPacket>) -> Vec<u64> {
        for i in 0..5000 {
            q.enqueue(Instant::ZERO, TestPacket::new(i, 1000));
        }
        let mut drop_ticks = Vec::new();
        for k in 0..1990u64 {
            let t = ms(10 + k);
            let (delivered, drops) = tick(q, t);
            assert!(delivered, "a packet is delivered on every tick");
            for _ in 0..drops {
                drop_ticks.push(t.0);
            }
        }
        drop_ticks
    }

    /// Linux's control law (the default): a queue whose sojourn stays above TARGET, ticks
    /// every 1 ms from 10 ms; the first drop is at 110 ms, then drop k at the first tick at or
    /// after D_k of [`linux_schedule`]. Tolerance: exact. The third drop comes 50 ms after the
    /// second (one Newton step from 1.0 at count 2 gives 1/2, not 1/sqrt 2).
    #[test]
    fn drop_times_follow_linux_newton_steps() {
        let mut q = codel_queue_with(ControlLaw::Linux);
        let got = drop_ticks(&mut q);
        let reference = linux_schedule(ms(110).0, got.len() + 1);
        assert!(got.len() > 30, "got {} drops", got.len());
        for (k, (&g, &d)) in got.iter().zip(&reference).enumerate() {
            assert_eq!(
                g,
                d.div_ceil(1_000_000) * 1_000_000,
                "drop #{} (D = {d} ns)",
                k + 1
            );
        }
        assert!(*reference.last().unwrap() > ms(1999).0, "no drop missing");
        assert_eq!(got[1] - got[0], ms(100).0);
        assert_eq!(
            got[2] - got[1],
            ms(50).0,
            "D_3 = 259.999999 ms -> tick 260 ms"
        );
        // The exact law differs (RFC): its third drop is 70.7 ms after the second.
        let rfc = reference_schedule(ms(110).0, 3, 1);
        assert_eq!(rfc[2] - rfc[1], 70_710_678);
    }

    /// RFC 8289 §5.4–5.5 (`control_law = "rfc"`): a queue whose sojourn stays above TARGET.
    /// Ticks every 1 ms from 10 ms; first_above_time = 10 ms + INTERVAL, so the first drop is
    /// at 110 ms, then drop k happens at the first tick >= D_k of the reference schedule.
    /// Tolerance: exact (the drop must fall on that very tick).
    #[test]
    fn drop_times_follow_rfc_spacing() {
        let mut q = codel_queue();
        let drop_ticks = drop_ticks(&mut q);
        let reference = reference_schedule(ms(110).0, drop_ticks.len(), 1);
        assert!(drop_ticks.len() > 30, "got {} drops", drop_ticks.len());
        for (k, (&got, &d)) in drop_ticks.iter().zip(&reference).enumerate() {
            let expected_tick = d.div_ceil(1_000_000) * 1_000_000;
            assert_eq!(got, expected_tick, "drop #{} (D = {d} ns)", k + 1);
        }
        // And no extra drop: the next reference time lies beyond the last tick.
        let next = reference_schedule(ms(110).0, drop_ticks.len() + 1, 1);
        assert!(*next.last().unwrap() > ms(1999).0);
        assert_eq!(state(&q).count() as usize, drop_ticks.len());
        let s = q.stats();
        assert_eq!(s.dropped_dequeue as usize, drop_ticks.len());
        assert_eq!(
            s.enqueued,
            s.dequeued + s.dropped_dequeue + q.len_pkts() as u64
        );
    }

    /// Phase 1 as above until 1 s, drain the queue (leaves the dropping state), refill and
    /// re-enter. RFC 8289 §5.5: re-entry within 16 intervals resumes with
    /// count = count − lastcount (lastcount = 1 here); after longer, count = 1.
    /// Under Linux's law the count decay on re-entry takes one Newton step from the old
    /// `rec_inv_sqrt` (`codel_dequeue`), a restart at count 1 resets it to 0xffff.
    #[test]
    fn reentry_count_decay() {
        for (law, gap_ms, expect_decay) in [
            (ControlLaw::Rfc, 10u64, true),
            (ControlLaw::Rfc, 2_000, false),
            (ControlLaw::Linux, 10, true),
            (ControlLaw::Linux, 2_000, false),
        ] {
            let mut q = codel_queue_with(law);
            for i in 0..3000 {
                q.enqueue(Instant::ZERO, TestPacket::new(i, 1000));
            }
            for k in 0..990u64 {
                tick(&mut q, ms(10 + k));
            }
            let n = state(&q).count();
            assert!(n > 5);
            // Drain at 1 s: the last dequeues leave <= MTU behind, so dropping stops.
            while q.len_pkts() > 0 {
                tick(&mut q, ms(1000));
            }
            assert!(!state(&q).dropping());
            assert_eq!(state(&q).count(), n, "count is kept while not dropping");
            let rec_before = state(&q).vars().rec_inv_sqrt;
            let t2 = 1000 + gap_ms;
            for i in 0..3000 {
                q.enqueue(ms(t2), TestPacket::new(10_000 + i, 1000));
            }
            // Re-entry at t2 + 10 ms + INTERVAL.
            let mut entry = None;
            for k in 0..200u64 {
                let t = ms(t2 + 10 + k);
                let (_, drops) = tick(&mut q, t);
                if drops > 0 {
                    entry = Some(t);
                    break;
                }
            }
            let entry = entry.expect("re-entered dropping");
            assert_eq!(entry, ms(t2 + 110));
            let expected = if expect_decay { n - 1 } else { 1 };
            assert_eq!(state(&q).count(), expected, "gap {gap_ms} ms");
            let next = match law {
                ControlLaw::Rfc => entry + Duration((I as f64 / (expected as f64).sqrt()) as u64),
                ControlLaw::Linux => {
                    let rec = if expect_decay {
                        newton_step(rec_before, expected)
                    } else {
                        REC_INV_SQRT_ONE
                    };
                    assert_eq!(state(&q).vars().rec_inv_sqrt, rec);
                    entry + Duration(((I as u128 * ((rec as u128) << 16)) >> 32) as u64)
                }
            };
            assert_eq!(state(&q).drop_next(), next, "{law:?}, gap {gap_ms} ms");
        }
    }

    /// RFC 8289 §5.5: in the dropping state, a dequeue whose packet has sojourn < TARGET
    /// leaves the dropping state without dropping (state fixture).
    #[test]
    fn leaves_dropping_state_when_sojourn_below_target() {
        let mut c = Codel::build(&CodelConfig::default(), &env(QueueLimit::Packets(100), 10));
        let mut b = Backlog::with_capacity(16);
        let now = ms(1000);
        for i in 0..4 {
            // Head sojourn 1 ms < TARGET.
            b.push(TestPacket::at(i, 1500, ms(999)));
        }
        c.vars.dropping = true;
        c.vars.count = 5;
        c.vars.drop_next = ms(900); // a drop would be due
        c.vars.first_above_time = Some(ms(800));
        let mut stats = QueueStats::default();
        let p = c.dequeue(
            now,
            &mut b,
            &mut stats,
            &mut |_p, _r| panic!("no drop expected"),
            &mut Rng::new(1),
        );
        assert_eq!(p.unwrap().id, 0);
        assert!(!c.vars.dropping);
        assert_eq!(c.vars.first_above_time, None);
        assert_eq!(stats.dropped_dequeue, 0);
    }

    /// RFC 8289 §5.4: no drop while the bytes left after the dequeue are <= MAXPACKET (MTU),
    /// even with a huge sojourn. Control: with one more packet queued, drops do happen.
    #[test]
    fn no_drop_when_backlog_at_most_one_mtu() {
        for (keep, expect_drops) in [(2usize, false), (3, true)] {
            let mut c = Codel::build(&CodelConfig::default(), &env(QueueLimit::Packets(100), 10));
            let mut b = Backlog::with_capacity(16);
            let mut stats = QueueStats::default();
            let mut id = 0;
            let mut drops = 0;
            for k in 0..1000u64 {
                while b.len() < keep {
                    b.push(TestPacket::at(id, 1500, Instant::ZERO));
                    id += 1;
                }
                c.dequeue(
                    ms(1000 + k),
                    &mut b,
                    &mut stats,
                    &mut |_p, _r| drops += 1,
                    &mut Rng::new(1),
                );
            }
            assert_eq!(drops > 0, expect_drops, "keep {keep}: {drops} drops");
        }
    }

    /// With ECN, the packet due for dropping is marked CE and delivered instead.
    #[test]
    fn ecn_marks_instead_of_dropping() {
        let cfg = CodelConfig {
            ecn: true,
            ..Default::default()
        };
        let mut q = QueueDisc::<TestPacket>::new(
            &AqmConfig::Codel(cfg),
            QueueLimit::Packets(10_000),
            LinkInfo::new(crate::BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        for i in 0..2000 {
            q.enqueue(Instant::ZERO, TestPacket::new(i, 1000).ect());
        }
        let mut ce = 0;
        for k in 0..1000u64 {
            let p = q
                .dequeue(ms(10 + k), &mut |_p, _r| panic!("ECN-capable: no drop"))
                .unwrap();
            ce += p.ce as u64;
        }
        assert!(ce > 10);
        assert_eq!(q.stats().marked, ce);
        assert_eq!(q.stats().dropped_dequeue, 0);
    }

    #[test]
    fn control_law_values() {
        // RFC: interval / sqrt(count): 100 ms, 70.710678 ms, 57.735026 ms (truncated to ns).
        let i = Duration::from_millis(100);
        assert_eq!(control_law_rfc(Instant(0), i, 1), Instant(100_000_000));
        assert_eq!(control_law_rfc(Instant(0), i, 2), Instant(70_710_678));
        assert_eq!(control_law_rfc(Instant(0), i, 3), Instant(57_735_026));
        // Linux, by hand: rec 0xffff -> 1e8 * 0xffff0000 / 2^32 = 99 998 474 ns; one Newton
        // step at count 2 from 0xffff: y = 1 - 2^-16, y^2 ~ 1 - 2^-15, (y/2)(3 - 2 y^2) ~ 1/2
        // -> rec 32769 (0x8001) -> 50 001 525 ns; count 3 from 0x8001 -> 36864 (0.5625)
        // -> 56 250 000 ns.
        let rec2 = newton_step(REC_INV_SQRT_ONE, 2);
        let rec3 = newton_step(rec2, 3);
        assert_eq!((rec2, rec3), (32769, 36864));
        assert_eq!(
            control_law_linux(Instant(0), i, REC_INV_SQRT_ONE),
            Instant(99_998_474)
        );
        assert_eq!(control_law_linux(Instant(0), i, rec2), Instant(50_001_525));
        assert_eq!(control_law_linux(Instant(0), i, rec3), Instant(56_250_000));
    }

    /// `ce_threshold` (Linux `codel_dequeue`, label `end`): a delivered ECT packet whose
    /// sojourn is strictly above it is marked, a Not-ECT one is not, and below it nothing is.
    #[test]
    fn ce_threshold_marks_delivered_ect_packets() {
        let cfg = CodelConfig {
            ce_threshold: Duration::from_millis(2),
            ..Default::default()
        };
        let mut q = QueueDisc::<TestPacket>::new(
            &AqmConfig::Codel(cfg),
            QueueLimit::Packets(100),
            LinkInfo::new(crate::BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        for i in 0..4 {
            q.enqueue(Instant::ZERO, TestPacket::new(i, 1000).ect());
        }
        q.enqueue(Instant::ZERO, TestPacket::new(9, 1000));
        let mut got = |t| q.dequeue(t, &mut |_p, _r| panic!("no drop")).unwrap();
        assert!(!got(ms(1)).ce, "sojourn 1 ms < 2 ms");
        assert!(!got(ms(2)).ce, "sojourn 2 ms is not above 2 ms");
        assert!(got(Instant(2_000_001)).ce, "sojourn above 2 ms");
        assert!(got(ms(3)).ce);
        assert!(!got(ms(4)).ce, "Not-ECT is never marked");
        assert_eq!(q.stats().marked, 2);
    }
}
