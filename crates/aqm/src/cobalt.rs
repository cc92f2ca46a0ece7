//! COBALT — CoDel and BLUE Alternate (Linux `net/sched/sch_cake.c`; ns-3
//! `CobaltQueueDisc`; docs/aqm/cobalt.md).
//!
//! COBALT runs a simplified CoDel and BLUE side by side on the packets of one queue. CoDel
//! answers flows that respond to congestion signals (TCP-like); BLUE, whose probability only
//! grows when the queue overflows, catches unresponsive ones. Linux has it only inside CAKE
//! (one [`CobaltVars`] per flow queue); ns-3 has it as a queue disc of its own
//! (`CobaltQueueDisc`, which this module's `cobalt` AQM follows) and per flow queue
//! (`FqCobaltQueueDisc`, [`crate::fq_cobalt`]).
//!
//! **The shared state machine** mirrors Linux's functions one for one, in Linux's integer
//! arithmetic (time in ns, probabilities in 0.32 fixed point):
//!
//! * [`should_drop`] (`cobalt_should_drop`), on each dequeued packet: the packet is "over
//!   target" if its sojourn exceeds `target` (and, in Linux, `2 · mtu_time · bulk_flows` and
//!   `4 · mtu_time`). Over target, the first time, the dropping state starts with
//!   `drop_next = now + interval · rec_inv_sqrt` ([`control`], `cobalt_control`) and
//!   `count >= 1`. When `drop_next` is due while dropping, the packet is ECN-marked if it can be
//!   (else dropped), `count` grows and `drop_next` moves on by `interval / sqrt(count)`. When
//!   due but no longer dropping, `count` decays, one step per `interval / sqrt(count)`
//!   elapsed. Then BLUE: drop with probability `p_drop` (never a mark: "lack of ECN is
//!   deliberate"). Last, `drop_next` doubles as an activity timeout.
//! * [`queue_full`] (`cobalt_queue_full`), on a tail drop at the buffer limit: BLUE's
//!   `p_drop += p_inc` (saturating at `~0`), at most once per `target`; CoDel's dropping state
//!   starts now.
//! * [`queue_empty`] (`cobalt_queue_empty`), when the queue is serviced and found empty:
//!   `p_drop -= p_dec` (at most once per `target`), the dropping state ends, `count` decays
//!   once if due.
//!
//! `1/sqrt(count)` is Linux's Q0.32 `rec_inv_sqrt`: a table for `count < 16`
//! ([`REC_INV_SQRT_CACHE`], built as `cobalt_cache_init` builds it, four Newton steps per
//! entry), one Newton step ([`newton_step`], `cobalt_newton_step`) per change of `count`
//! above.
//!
//! **ns-3's additions** ([`CobaltParams`]): ns-3 marks only with `UseEcn` (Linux always marks
//! an ECN-capable packet), and raises BLUE's `p_drop` also when a dequeued packet's sojourn
//! exceeds `BlueThreshold` (400 ms by default; Linux has no such rule). ns-3 starts
//! `rec_inv_sqrt` at `~0` ([`CobaltVars::ns3`]), Linux at 0 ([`CobaltVars::new`], the
//! `memset` of `cobalt_vars_init`): with Linux's start, a fresh queue's first dropping state
//! has `drop_next = now` instead of `now + interval`.
//!
//! **The `cobalt` AQM** ([`Cobalt`]) is ns-3's `CobaltQueueDisc`: one FIFO, the hard limit
//! at enqueue calls [`queue_full`], each dequeued packet goes through [`should_drop`] (drops
//! loop to the next head), and the link going idle after the last packet calls
//! [`queue_empty`] (ns-3 calls it on the dequeue that finds the queue empty, i.e. when the
//! device asks for the next packet). `bulk_flows` is 1.
//!
//! Activations: one per [`should_drop`] run (each dequeued packet).

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::{Backlog, DropReason, QueueStats};
use crate::codel::reciprocal_scale;
use crate::error::{ensure, ConfigError};
use crate::packet::Packet;
use crate::params::aqm_config;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Entries of Linux's `cobalt_rec_inv_sqrt_cache` (`REC_INV_SQRT_CACHE`).
pub const REC_INV_SQRT_CACHE_LEN: usize = 16;

/// BLUE's increment in 0.32 fixed point, Linux `cake_set_rate` (`p_inc = 1 << 24`, 1/256;
/// ns-3 `Increment` 1/256).
pub const P_INC: u32 = 1 << 24;
/// BLUE's decrement in 0.32 fixed point, Linux `cake_set_rate` (`p_dec = 1 << 20`, 1/4096;
/// ns-3 `Decrement` 1/4096).
pub const P_DEC: u32 = 1 << 20;

/// One Newton step of `1/sqrt(count)`, Linux `cobalt_newton_step`: with `y` =
/// `rec_inv_sqrt` as Q0.32, `y' = (y / 2) (3 - count y^2)` in Linux's unsigned 64-bit
/// arithmetic (wrapping where Linux's wraps), truncated to 32 bits.
#[inline]
pub const fn newton_step(rec_inv_sqrt: u32, count: u32) -> u32 {
    let invsqrt = rec_inv_sqrt as u64;
    let invsqrt2 = (invsqrt * invsqrt) >> 32;
    let mut val = (3u64 << 32).wrapping_sub((count as u64).wrapping_mul(invsqrt2));
    val >>= 2; // "avoid overflow in following multiply"
    val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
    val as u32
}

/// Linux `cobalt_cache_init`: entry 0 is `~0`; entry `n` (1..15) is four Newton steps at
/// count `n` starting from entry `n - 1`'s value.
const fn cache_init() -> [u32; REC_INV_SQRT_CACHE_LEN] {
    let mut c = [0u32; REC_INV_SQRT_CACHE_LEN];
    let mut v = u32::MAX;
    c[0] = v;
    let mut n = 1;
    while n < REC_INV_SQRT_CACHE_LEN {
        let mut k = 0;
        while k < 4 {
            v = newton_step(v, n as u32);
            k += 1;
        }
        c[n] = v;
        n += 1;
    }
    c
}

/// Linux's `cobalt_rec_inv_sqrt_cache`: `rec_inv_sqrt` for `count` 0..15.
pub const REC_INV_SQRT_CACHE: [u32; REC_INV_SQRT_CACHE_LEN] = cache_init();

/// Linux `cobalt_control`: `t + reciprocal_scale(interval, rec_inv_sqrt)`, i.e.
/// `t + interval / sqrt(count)` with the Q0.32 reciprocal. Linux's `reciprocal_scale` takes a
/// 32-bit `interval`; configs keep `interval` below 2^32 ns so the widened product here is
/// the same number.
#[inline]
pub fn control(t: Instant, interval: Duration, rec_inv_sqrt: u32) -> Instant {
    t + Duration(reciprocal_scale(interval.0, rec_inv_sqrt))
}

/// COBALT's parameters (Linux `struct cobalt_params`, plus ns-3's two switches). One set per
/// queue, or one shared by every flow queue of a tin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CobaltParams {
    /// CoDel's INTERVAL: delay before the first signal and scale of the signal spacing.
    pub interval: Duration,
    /// CoDel's TARGET (maximum persistent sojourn) and BLUE's update spacing.
    pub target: Duration,
    /// Serialisation time of a maximum-size packet (Linux `mtu_time`): a sojourn of at most
    /// `4 · mtu_time` or `2 · mtu_time · bulk_flows` is never over target. 0 = no such test
    /// (ns-3).
    pub mtu_time: Duration,
    /// BLUE's increment of `p_drop` (0.32 fixed point).
    pub p_inc: u32,
    /// BLUE's decrement of `p_drop` (0.32 fixed point).
    pub p_dec: u32,
    /// CoDel's signal is a CE mark on an ECN-capable packet. Linux CAKE: always; ns-3:
    /// `UseEcn`.
    pub ecn: bool,
    /// ns-3 `BlueThreshold`: a dequeued packet whose sojourn exceeds it raises `p_drop` by
    /// `p_inc` (at most once per `target`). `None` in Linux.
    pub blue_threshold: Option<Duration>,
}

impl CobaltParams {
    /// Linux's parameters for a CAKE tin (`cake_set_rate`): `target`, `interval` and
    /// `mtu_time` as given, `p_inc = 1 << 24`, `p_dec = 1 << 20`, ECN marking on, no ns-3
    /// BLUE threshold.
    pub fn linux(target: Duration, interval: Duration, mtu_time: Duration) -> CobaltParams {
        CobaltParams {
            interval,
            target,
            mtu_time,
            p_inc: P_INC,
            p_dec: P_DEC,
            ecn: true,
            blue_threshold: None,
        }
    }
}

/// COBALT's per-queue state (Linux `struct cobalt_vars`). CAKE holds one per flow queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CobaltVars {
    /// CoDel's signal count (dropping frequency).
    pub count: u32,
    /// `1/sqrt(count)` in Q0.32 (Linux `rec_inv_sqrt`).
    pub rec_inv_sqrt: u32,
    /// Time of the next signal while dropping; otherwise when the last one was due, or an
    /// activity timeout (`now + interval` while `count == 0`).
    pub drop_next: Instant,
    /// Time of BLUE's last change of `p_drop`.
    pub blue_timer: Instant,
    /// BLUE's drop probability (0.32 fixed point).
    pub p_drop: u32,
    /// In CoDel's dropping state.
    pub dropping: bool,
    /// The last [`should_drop`] marked its packet CE.
    pub ecn_marked: bool,
}

impl CobaltVars {
    /// Linux `cobalt_vars_init`: everything zero (including `rec_inv_sqrt`).
    pub const fn new() -> CobaltVars {
        CobaltVars {
            count: 0,
            rec_inv_sqrt: 0,
            drop_next: Instant::ZERO,
            blue_timer: Instant::ZERO,
            p_drop: 0,
            dropping: false,
            ecn_marked: false,
        }
    }

    /// ns-3 `CobaltQueueDisc::InitializeParams`: as Linux but `rec_inv_sqrt = ~0` (1.0).
    pub const fn ns3() -> CobaltVars {
        let mut v = CobaltVars::new();
        v.rec_inv_sqrt = u32::MAX;
        v
    }

    /// BLUE's `p_drop` as a probability in [0, 1].
    pub fn p_drop_f64(&self) -> f64 {
        self.p_drop as f64 / 4_294_967_296.0
    }

    /// Linux `cobalt_invsqrt`: the cached value for `count < 16`, else one Newton step.
    #[inline]
    fn invsqrt(&mut self) {
        self.rec_inv_sqrt = match REC_INV_SQRT_CACHE.get(self.count as usize) {
            Some(&c) => c,
            None => newton_step(self.rec_inv_sqrt, self.count),
        };
    }
}

/// `now - then > limit` with Linux's types: a signed ns difference compared with an unsigned
/// one (C converts the difference to `u64`, so a negative one counts as huge).
#[inline]
fn elapsed_over(now: Instant, then: Instant, limit: Duration) -> bool {
    now.0.wrapping_sub(then.0) > limit.0
}

/// BLUE's increment (shared by [`queue_full`] and ns-3's threshold rule): `p_drop += p_inc`,
/// saturating at `~0` as Linux does. Returns true if `p_drop` was 0 before.
#[inline]
fn blue_up(vars: &mut CobaltVars, p: &CobaltParams, now: Instant) -> bool {
    let up = vars.p_drop == 0;
    vars.p_drop = vars.p_drop.saturating_add(p.p_inc);
    vars.blue_timer = now;
    up
}

/// Linux `cobalt_queue_full`: a packet had to be dropped because the queue is full. BLUE's
/// `p_drop` grows by `p_inc` if more than `target` has passed since its last change; CoDel's
/// dropping state starts with `drop_next = now` and `count >= 1`. Returns true if BLUE was
/// quiescent (`p_drop == 0`) before and active after.
pub fn queue_full(vars: &mut CobaltVars, p: &CobaltParams, now: Instant) -> bool {
    let mut up = false;
    if elapsed_over(now, vars.blue_timer, p.target) {
        up = blue_up(vars, p, now);
    }
    vars.dropping = true;
    vars.drop_next = now;
    if vars.count == 0 {
        vars.count = 1;
    }
    up
}

/// Linux `cobalt_queue_empty`: the queue was serviced and found empty. BLUE's `p_drop`
/// shrinks by `p_dec` (to no less than 0) if non-zero and more than `target` has passed since
/// its last change; the dropping state ends; if a signal was due, `count` decays by one and
/// `drop_next` moves on by the control law. Returns true if BLUE was active before and
/// quiescent after.
pub fn queue_empty(vars: &mut CobaltVars, p: &CobaltParams, now: Instant) -> bool {
    let mut down = false;
    if vars.p_drop != 0 && elapsed_over(now, vars.blue_timer, p.target) {
        vars.p_drop = vars.p_drop.saturating_sub(p.p_dec);
        vars.blue_timer = now;
        down = vars.p_drop == 0;
    }
    vars.dropping = false;
    if vars.count != 0 && now.signed_diff(vars.drop_next) >= 0 {
        vars.count -= 1;
        vars.invsqrt();
        vars.drop_next = control(vars.drop_next, p.interval, vars.rec_inv_sqrt);
    }
    down
}

/// Linux `cobalt_should_drop`: decides on a freshly dequeued packet `pkt` (its sojourn is
/// `now - pkt.enqueued_at()`); `bulk_flows` is the number of bulk flows sharing the tin
/// (Linux CAKE; 1 for a single queue). Returns true to drop it; when CoDel's signal was a CE
/// mark instead, the packet is marked and `vars.ecn_marked` is set. BLUE's random draw
/// (a `u32` from `rng`, compared with `p_drop` as Linux's `get_random_u32() < p_drop`) is
/// taken only while `p_drop > 0`.
pub fn should_drop<P: Packet>(
    vars: &mut CobaltVars,
    p: &CobaltParams,
    now: Instant,
    pkt: &mut P,
    bulk_flows: u32,
    rng: &mut Rng,
) -> bool {
    let sojourn = now.0.saturating_sub(pkt.enqueued_at().0);
    let mut schedule = now.signed_diff(vars.drop_next);
    let mtu = p.mtu_time.0;
    let over_target = sojourn > p.target.0
        && sojourn > mtu.saturating_mul(bulk_flows as u64).saturating_mul(2)
        && sojourn > mtu.saturating_mul(4);
    let mut next_due = vars.count != 0 && schedule >= 0;
    let mut drop = false;

    vars.ecn_marked = false;

    if over_target {
        if !vars.dropping {
            vars.dropping = true;
            vars.drop_next = control(now, p.interval, vars.rec_inv_sqrt);
        }
        if vars.count == 0 {
            vars.count = 1;
        }
    } else if vars.dropping {
        vars.dropping = false;
    }

    if next_due && vars.dropping {
        // Use ECN mark if possible, otherwise drop (INET_ECN_set_ce succeeds on ECT and CE).
        if p.ecn && pkt.ecn_capable() {
            pkt.set_ce();
            vars.ecn_marked = true;
        } else {
            drop = true;
        }
        vars.count = vars.count.saturating_add(1);
        vars.invsqrt();
        vars.drop_next = control(vars.drop_next, p.interval, vars.rec_inv_sqrt);
        schedule = now.signed_diff(vars.drop_next);
    } else {
        while next_due {
            vars.count -= 1;
            vars.invsqrt();
            vars.drop_next = control(vars.drop_next, p.interval, vars.rec_inv_sqrt);
            schedule = now.signed_diff(vars.drop_next);
            next_due = vars.count != 0 && schedule >= 0;
        }
    }

    // ns-3 CobaltShouldDrop: BLUE also rises on a sojourn above BlueThreshold.
    if let Some(th) = p.blue_threshold {
        if sojourn > th.0 && elapsed_over(now, vars.blue_timer, p.target) {
            blue_up(vars, p, now);
        }
    }

    // Simple BLUE implementation. Lack of ECN is deliberate (Linux).
    if vars.p_drop != 0 {
        drop |= ((rng.next_u64() >> 32) as u32) < vars.p_drop;
    }

    // Overload the drop_next field as an activity timeout.
    if vars.count == 0 {
        vars.drop_next = now + p.interval;
    } else if schedule > 0 && !drop {
        vars.drop_next = now;
    }
    drop
}

/// Largest `interval`: Linux's `reciprocal_scale` takes a 32-bit interval (ns).
pub(crate) const INTERVAL_MAX: Duration = Duration(u32::MAX as u64);

/// Converts a probability in [0, 1] to 0.32 fixed point (rounded; 1.0 is `~0`).
pub fn prob_to_fixed(p: f64) -> u32 {
    (p * 4_294_967_296.0).round().min(u32::MAX as f64).max(0.0) as u32
}

aqm_config! {
    /// COBALT configuration (ns-3 `CobaltQueueDisc`'s defaults; Linux `sch_cake.c`).
    pub struct CobaltConfig as "cobalt" {
        /// CoDel TARGET, seconds: acceptable standing sojourn, also BLUE's update spacing.
        /// Default 0.005 (ns-3 Target; Linux CAKE: 5 ms, raised at low rates).
        pub target: Duration = crate::codel::TARGET, "s";
        /// CoDel INTERVAL, seconds, below 4.294967296 (Linux's 32-bit reciprocal_scale).
        /// Default 0.1 (ns-3 Interval; Linux CAKE rtt 100 ms).
        pub interval: Duration = crate::codel::INTERVAL, "s";
        /// Mark CE instead of dropping ECN-capable packets on CoDel's signal (BLUE always
        /// drops). Default false (ns-3 UseEcn; Linux CAKE always marks).
        pub ecn: bool = false, "bool";
        /// BLUE's increment of p_drop on a queue overflow, probability. Default 1/256
        /// (ns-3 Increment; Linux p_inc = 1 << 24 in 0.32 fixed point).
        pub p_inc: f64 = 1.0 / 256.0, "probability";
        /// BLUE's decrement of p_drop when the queue is found empty, probability. Default
        /// 1/4096 (ns-3 Decrement; Linux p_dec = 1 << 20).
        pub p_dec: f64 = 1.0 / 4096.0, "probability";
        /// Sojourn above which a dequeued packet raises p_drop (at most once per target),
        /// seconds; 0 = off (Linux). Default 0.4 (ns-3 BlueThreshold).
        pub blue_threshold: Duration = Duration::from_millis(400), "s";
        /// Serialisation time of an MTU (Linux mtu_time): a sojourn of at most 4 mtu_time is
        /// never over target, seconds. Default 0 = off (ns-3; Linux CAKE derives it from
        /// the shaped rate).
        pub mtu_time: Duration = Duration::ZERO, "s";
    }
}

impl CobaltConfig {
    fn check(&self) -> Result<(), ConfigError> {
        check_common(
            self.target,
            self.interval,
            self.p_inc,
            self.p_dec,
            self.mtu_time,
        )
    }

    /// The state machine's parameters.
    pub fn params(&self) -> CobaltParams {
        CobaltParams {
            interval: self.interval,
            target: self.target,
            mtu_time: self.mtu_time,
            p_inc: prob_to_fixed(self.p_inc),
            p_dec: prob_to_fixed(self.p_dec),
            ecn: self.ecn,
            blue_threshold: (self.blue_threshold > Duration::ZERO).then_some(self.blue_threshold),
        }
    }
}

/// The checks `cobalt` and `fq_cobalt` share.
pub(crate) fn check_common(
    target: Duration,
    interval: Duration,
    p_inc: f64,
    p_dec: f64,
    mtu_time: Duration,
) -> Result<(), ConfigError> {
    ensure(
        target > Duration::ZERO,
        "target",
        target.as_secs_f64(),
        "must be > 0",
    )?;
    ensure(
        interval > Duration::ZERO && interval <= INTERVAL_MAX,
        "interval",
        interval.as_secs_f64(),
        "must be > 0 and at most 4.294967295 s (Linux reciprocal_scale takes 32-bit ns)",
    )?;
    ensure(
        (0.0..=1.0).contains(&p_inc),
        "p_inc",
        p_inc,
        "must be a probability in [0, 1]",
    )?;
    ensure(
        (0.0..=1.0).contains(&p_dec),
        "p_dec",
        p_dec,
        "must be a probability in [0, 1]",
    )?;
    ensure(
        mtu_time <= Duration::from_secs(1),
        "mtu_time",
        mtu_time.as_secs_f64(),
        "must be at most 1 s (the serialisation time of one packet)",
    )
}

/// The COBALT AQM on a FIFO (ns-3 `CobaltQueueDisc`): the configuration and one
/// [`CobaltVars`].
#[derive(Debug, Clone)]
pub struct Cobalt {
    cfg: CobaltConfig,
    prm: CobaltParams,
    vars: CobaltVars,
    activations: u64,
}

impl Cobalt {
    /// The state variables.
    pub fn vars(&self) -> &CobaltVars {
        &self.vars
    }
}

impl Algorithm for Cobalt {
    type Config = CobaltConfig;

    fn build(cfg: &CobaltConfig, _env: &Env) -> Self {
        Cobalt {
            cfg: *cfg,
            prm: cfg.params(),
            vars: CobaltVars::ns3(),
            activations: 0,
        }
    }
    fn cfg(&self) -> &CobaltConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: CobaltConfig) {
        self.cfg = cfg;
        self.prm = cfg.params();
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
        // COBALT decides at dequeue; the wrapper timestamps the arrival.
        Verdict::Accept
    }

    /// ns-3 `CobaltQueueDisc::DoDequeue`: heads go through [`should_drop`] until one is kept.
    #[inline]
    fn dequeue<P: Packet, F: FnMut(P, DropReason)>(
        &mut self,
        now: Instant,
        backlog: &mut Backlog<P>,
        stats: &mut QueueStats,
        on_drop: &mut F,
        rng: &mut Rng,
    ) -> Option<P> {
        self.dequeue_with(now, backlog, stats, on_drop, rng)
    }

    /// The link went idle after the last packet: ns-3's empty dequeue, [`queue_empty`].
    #[inline]
    fn on_empty(&mut self, idle_from: Instant) {
        queue_empty(&mut self.vars, &self.prm, idle_from);
    }
    /// A tail drop at the hard limit: [`queue_full`].
    #[inline]
    fn on_overflow(&mut self, now: Instant) {
        queue_full(&mut self.vars, &self.prm, now);
    }
    fn activations(&self) -> u64 {
        self.activations
    }
    fn probability(&self) -> f64 {
        self.vars.p_drop_f64()
    }
}

impl Cobalt {
    fn dequeue_with<P: Packet, F: FnMut(P, DropReason)>(
        &mut self,
        now: Instant,
        backlog: &mut Backlog<P>,
        stats: &mut QueueStats,
        on_drop: &mut F,
        rng: &mut Rng,
    ) -> Option<P> {
        while let Some(mut p) = backlog.pop() {
            self.activations += 1;
            if should_drop(&mut self.vars, &self.prm, now, &mut p, 1, rng) {
                stats.dropped_dequeue += 1;
                on_drop(p, DropReason::CodelDequeue);
            } else {
                if self.vars.ecn_marked {
                    stats.marked += 1;
                }
                return Some(p);
            }
        }
        self.vars.dropping = false;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ms, TestPacket};
    use crate::{AqmConfig, BitsPerSec, LinkInfo, QueueDisc, QueueLimit};

    const I: Duration = Duration::from_millis(100);
    const T: Duration = Duration::from_millis(5);

    fn prm(ecn: bool) -> CobaltParams {
        CobaltParams {
            ecn,
            blue_threshold: None,
            ..CobaltParams::linux(T, I, Duration::ZERO)
        }
    }

    /// A packet dequeued at `now` after `sojourn_ms`.
    fn pkt(now: Instant, sojourn_ms: u64) -> TestPacket {
        TestPacket::at(0, 1500, Instant(now.0 - sojourn_ms * 1_000_000))
    }

    /// `cobalt_newton_step` by hand from y = ~0 (1.0 in Q0.32):
    /// count 1: y^2 >> 32 = 0xFFFFFFFE; 3<<32 - 0xFFFFFFFE = 0x2_0000_0002; >> 2 =
    /// 0x8000_0000; * 0xFFFFFFFF >> 31 = 0xFFFFFFFF (1.0 is a fixed point, so cache entries 0
    /// and 1 are both ~0, as Linux's comment says).
    /// count 2: 3<<32 - 2 * 0xFFFFFFFE = 0x1_0000_0004; >> 2 = 0x4000_0001; times
    /// 0xFFFFFFFF >> 31 = 0x8000_0001 = 1/sqrt(4), "the value that *should* have been
    /// produced at count 4" (Linux's comment on one step from count 1 to 2).
    #[test]
    fn newton_step_by_hand() {
        assert_eq!(newton_step(u32::MAX, 1), u32::MAX);
        assert_eq!(newton_step(u32::MAX, 2), 0x8000_0001);
        assert_eq!(REC_INV_SQRT_CACHE[0], u32::MAX);
        assert_eq!(REC_INV_SQRT_CACHE[1], u32::MAX);
    }

    /// Four Newton steps per entry approach 2^32 / sqrt(n); the worst entry is count 2 (the
    /// chain starts from 1.0, far from 0.707): 0.06 % low there, within 1e-8 for count >= 4
    /// (the grain of Q0.32 is 2.3e-10).
    #[test]
    fn cache_close_to_inverse_square_root() {
        for (n, &c) in REC_INV_SQRT_CACHE.iter().enumerate().skip(1) {
            let exact = 1.0 / (n as f64).sqrt();
            let got = c as f64 / 4_294_967_296.0;
            let tol = if n < 4 { 6e-4 } else { 1e-8 };
            assert!(
                (exact - got).abs() / exact < tol,
                "count {n}: {got} vs {exact}"
            );
        }
    }

    /// `cobalt_control` by hand: 100 ms * (2^32 - 1) >> 32 = 1e8 - 1e8/2^32, truncated:
    /// 99 999 999 ns; with rec_inv_sqrt 0 (Linux's fresh state) the spacing is 0.
    #[test]
    fn control_law_by_hand() {
        assert_eq!(
            control(ms(10), I, u32::MAX),
            Instant(10_000_000 + 99_999_999)
        );
        assert_eq!(control(ms(10), I, 0), ms(10));
        assert_eq!(control(ms(0), I, 0x8000_0000), ms(50));
    }

    /// Runs `should_drop` once per ms from 0 to `until_ms`: sojourn 1 ms before 50 ms,
    /// 10 ms from then on. Returns the drop times (ms).
    fn drop_times(mut v: CobaltVars, until_ms: u64) -> Vec<u64> {
        let p = prm(false);
        let mut rng = Rng::new(1);
        let mut drops = vec![];
        for t in 1..=until_ms {
            let now = ms(t);
            let mut pk = pkt(now, if t < 50 { 1 } else { 10 });
            if should_drop(&mut v, &p, now, &mut pk, 1, &mut rng) {
                drops.push(t);
            }
        }
        drops
    }

    /// The drop schedule by hand, ns-3's start (rec_inv_sqrt = ~0). Before 50 ms each
    /// packet sets the activity timeout drop_next = now + 100 ms. At 50 ms the sojourn goes
    /// over target: dropping, drop_next = 50 ms + 99 999 999 ns, count 1. Drops then come at
    /// the first tick at or after each D_k, D_{k+1} = D_k + (1e8 * cache[k+1]) >> 32:
    /// D_1 = 149 999 999 (tick 150), + 70 670 846 (cache[2] = 0xb4ead8a0) = 220 670 845
    /// (tick 221), + 57 735 025 (0x93cd39e7) = 278 405 870 (279), + 49 999 999 (0x7fffffff)
    /// = 328 405 869 (329), + 44 721 359 (0x727c9717) = 373 127 228 (374).
    #[test]
    fn drop_schedule_ns3_start() {
        assert_eq!(
            drop_times(CobaltVars::ns3(), 380),
            vec![150, 221, 279, 329, 374]
        );
    }

    /// Linux's start (cobalt_vars_init zeroes rec_inv_sqrt): at 50 ms drop_next =
    /// 50 ms + 100 ms * 0 = 50 ms, so the next packet (51 ms) is dropped at once; then
    /// count 2: + 70 670 846 = 120 670 846 (tick 121), + 57 735 025 = 178 405 871 (179),
    /// + 49 999 999 = 228 405 870 (229).
    #[test]
    fn drop_schedule_linux_start() {
        assert_eq!(drop_times(CobaltVars::new(), 230), vec![51, 121, 179, 229]);
    }

    /// Count decay in `should_drop` by hand: count 5, not dropping, drop_next = 0, a packet
    /// under target at 200 ms: count 4 (0x7fffffff): drop_next 49 999 999, due; count 3:
    /// + 57 735 025 = 107 735 024, due; count 2: + 70 670 846 = 178 405 870, due; count 1:
    /// + 99 999 999 = 278 405 869, not due: stop at count 1.
    #[test]
    fn count_decays_while_due() {
        let mut v = CobaltVars {
            count: 5,
            ..CobaltVars::new()
        };
        let now = ms(200);
        let mut pk = pkt(now, 1);
        assert!(!should_drop(
            &mut v,
            &prm(false),
            now,
            &mut pk,
            1,
            &mut Rng::new(1)
        ));
        assert_eq!(v.count, 1);
        assert_eq!(v.drop_next, Instant(278_405_869));
        assert_eq!(v.rec_inv_sqrt, u32::MAX);
    }

    /// CoDel's signal is a mark on an ECN-capable packet when `ecn` is set (count still
    /// grows), a drop otherwise; BLUE never marks.
    #[test]
    fn ecn_marks_codel_signal_but_not_blue() {
        let due = CobaltVars {
            count: 3,
            dropping: true,
            drop_next: ms(100),
            rec_inv_sqrt: REC_INV_SQRT_CACHE[3],
            ..CobaltVars::new()
        };
        let now = ms(101);
        let mut rng = Rng::new(1);
        let mut v = due;
        let mut ect = pkt(now, 10).ect();
        assert!(!should_drop(&mut v, &prm(true), now, &mut ect, 1, &mut rng));
        assert!(ect.ce && v.ecn_marked);
        assert_eq!(v.count, 4);
        let mut v = due;
        let mut plain = pkt(now, 10);
        assert!(should_drop(
            &mut v,
            &prm(true),
            now,
            &mut plain,
            1,
            &mut rng
        ));
        let mut v = due;
        let mut ect = pkt(now, 10).ect();
        assert!(should_drop(&mut v, &prm(false), now, &mut ect, 1, &mut rng));
        assert!(!ect.ce);
        // BLUE at p = ~0 drops an ECN-capable packet under target.
        let mut v = CobaltVars {
            p_drop: u32::MAX,
            ..CobaltVars::new()
        };
        let mut ect = pkt(now, 1).ect();
        assert!(should_drop(&mut v, &prm(true), now, &mut ect, 1, &mut rng));
        assert!(!ect.ce && !v.ecn_marked);
    }

    /// Linux's over-target test: sojourn 10 ms with mtu_time 2 ms is over target with 2 bulk
    /// flows (10 > 8) but not with 3 (10 <= 12).
    #[test]
    fn mtu_time_and_bulk_flows_gate_over_target() {
        let p = CobaltParams {
            mtu_time: Duration::from_millis(2),
            ..prm(false)
        };
        let now = ms(10);
        for (bulk, over) in [(2, true), (3, false)] {
            let mut v = CobaltVars::ns3();
            should_drop(&mut v, &p, now, &mut pkt(now, 10), bulk, &mut Rng::new(1));
            assert_eq!(v.dropping, over, "bulk_flows {bulk}");
        }
    }

    /// `cobalt_queue_full` by hand (target 5 ms, p_inc 2^24): at 10 ms p_drop 0 -> 2^24
    /// (BLUE up: true); at 15 ms 5 ms have passed, not more: unchanged; at 15 ms + 1 ns:
    /// 2^25 (not "up": it was active). Dropping starts now with count 1. Saturation at ~0.
    #[test]
    fn queue_full_by_hand() {
        let p = prm(false);
        let mut v = CobaltVars::ns3();
        assert!(queue_full(&mut v, &p, ms(10)));
        assert_eq!((v.p_drop, v.blue_timer), (1 << 24, ms(10)));
        assert!(v.dropping && v.count == 1 && v.drop_next == ms(10));
        assert!(!queue_full(&mut v, &p, ms(15)));
        assert_eq!(v.p_drop, 1 << 24);
        assert!(!queue_full(&mut v, &p, Instant(15_000_001)));
        assert_eq!(v.p_drop, 1 << 25);
        let mut v = CobaltVars {
            p_drop: u32::MAX - 5,
            ..CobaltVars::new()
        };
        queue_full(&mut v, &p, ms(10));
        assert_eq!(v.p_drop, u32::MAX);
    }

    /// `cobalt_queue_empty` by hand (p_dec 2^20): 2^25 -> 2^25 - 2^20 after more than target
    /// (BLUE still active: false); 2^19 < p_dec -> 0 (down: true). A due count decays once:
    /// count 3 -> 2, drop_next 100 ms + 70 670 846 ns.
    #[test]
    fn queue_empty_by_hand() {
        let p = prm(false);
        let mut v = CobaltVars {
            p_drop: 1 << 25,
            count: 3,
            dropping: true,
            drop_next: ms(100),
            ..CobaltVars::ns3()
        };
        assert!(!queue_empty(&mut v, &p, ms(100)));
        assert_eq!(v.p_drop, (1 << 25) - (1 << 20));
        assert!(!v.dropping);
        assert_eq!(v.count, 2);
        assert_eq!(v.drop_next, Instant(100_000_000 + 70_670_846));
        // Within target of the last change: unchanged.
        assert!(!queue_empty(&mut v, &p, ms(104)));
        assert_eq!(v.p_drop, (1 << 25) - (1 << 20));
        v.p_drop = 1 << 19;
        assert!(queue_empty(&mut v, &p, ms(106)));
        assert_eq!(v.p_drop, 0);
    }

    /// ns-3's BlueThreshold: a packet with sojourn 500 ms > 400 ms raises p_drop by p_inc,
    /// once per target; off (None, Linux) it does not.
    #[test]
    fn ns3_blue_threshold() {
        let p = CobaltParams {
            blue_threshold: Some(Duration::from_millis(400)),
            ..prm(false)
        };
        let now = ms(1000);
        let mut v = CobaltVars::ns3();
        should_drop(&mut v, &p, now, &mut pkt(now, 500), 1, &mut Rng::new(1));
        assert_eq!(v.p_drop, P_INC);
        let mut v = CobaltVars::ns3();
        should_drop(
            &mut v,
            &prm(false),
            now,
            &mut pkt(now, 500),
            1,
            &mut Rng::new(1),
        );
        assert_eq!(v.p_drop, 0);
    }

    /// BLUE's draw: p_drop = 2^31 drops about half (binomial, n = 20000, 5 sigma = 354);
    /// p_drop = 0 takes no draw from the stream.
    #[test]
    fn blue_draw() {
        let p = prm(false);
        let mut rng = Rng::new(7);
        let mut drops = 0;
        for t in 0..20_000u64 {
            let mut v = CobaltVars {
                p_drop: 1 << 31,
                ..CobaltVars::new()
            };
            let now = Instant(t * 1_000);
            if should_drop(
                &mut v,
                &p,
                now,
                &mut TestPacket::at(0, 1500, now),
                1,
                &mut rng,
            ) {
                drops += 1;
            }
        }
        assert!((drops as i64 - 10_000).abs() < 354, "{drops}");
        let mut a = Rng::new(3);
        let mut b = a.clone();
        let mut v = CobaltVars::new();
        should_drop(&mut v, &p, ms(1), &mut pkt(ms(1), 1), 1, &mut a);
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn probabilities_to_fixed_point() {
        assert_eq!(prob_to_fixed(1.0 / 256.0), P_INC);
        assert_eq!(prob_to_fixed(1.0 / 4096.0), P_DEC);
        assert_eq!(prob_to_fixed(1.0), u32::MAX);
        assert_eq!(prob_to_fixed(0.0), 0);
    }

    #[test]
    fn bad_config_is_refused() {
        for (k, v) in [
            ("interval", 4.3),
            ("interval", 0.0),
            ("target", 0.0),
            ("p_inc", 1.5),
            ("p_dec", -0.1),
            ("mtu_time", 2.0),
        ] {
            let err = AqmConfig::from_name("cobalt", &[(k.to_string(), v)]).unwrap_err();
            assert!(err.to_string().contains(k), "{k}: {err}");
        }
    }

    /// On a queue: a tail drop at the limit raises BLUE's probability by p_inc (10 ms after
    /// the start, more than target); the five packets leave at 11..15 ms (sojourn <= 5 ms, no
    /// CoDel drop) and the link goes idle 1.2 ms after the last (1500 B at 10 Mb/s), 6.2 ms
    /// after BLUE's change: p_drop falls by p_dec. The counters add up.
    #[test]
    fn on_a_queue_overflow_and_idle_drive_blue() {
        let cfg = AqmConfig::from_name("cobalt", &[]).unwrap();
        let mut q: QueueDisc<TestPacket> = QueueDisc::new(
            &cfg,
            QueueLimit::Packets(5),
            LinkInfo::new(BitsPerSec::from_mbps(10)),
            1,
        )
        .unwrap();
        for i in 0..6 {
            q.enqueue(ms(10), TestPacket::at(i, 1500, ms(10)));
        }
        assert_eq!(q.stats().dropped_limit, 1);
        assert!((q.probability() - 1.0 / 256.0).abs() < 1e-12);
        for t in 11..=15 {
            assert!(q.dequeue(ms(t), &mut |_p, _r| panic!("no drop")).is_some());
        }
        assert_eq!(q.len_pkts(), 0);
        let s = q.stats();
        assert_eq!(s.received, s.dropped_limit + s.dequeued);
        let expect = 1.0 / 256.0 - 1.0 / 4096.0;
        assert!(
            (q.probability() - expect).abs() < 1e-12,
            "{}",
            q.probability()
        );
    }
}
