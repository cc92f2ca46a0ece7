//! The interface between the queue wrapper ([`crate::QueueDisc`]) and one algorithm.
//!
//! An algorithm only *decides* (accept, congestion signal, drop) and keeps its own state;
//! the wrapper owns the packets, the hard limit, the counters and the random stream
//! (docs/design.md, "AQM driver contract"). Dispatch is static: [`crate::config`] wraps every
//! algorithm in one enum and `match`es.

use crate::backlog::{Backlog, DropReason, LinkInfo, QueueLimit, QueueStats};
use crate::error::{ensure, ConfigError};
use crate::packet::Packet;
use crate::params::Params;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Queue occupancy as seen by an algorithm. At an arrival it is the state *before* the
/// arrival is added; after a dequeue, the state *after* the packet left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueView {
    /// Packets in the queue.
    pub len_pkts: u32,
    /// Bytes in the queue.
    pub len_bytes: u64,
    /// Sojourn time of the packet at the head (zero if empty).
    pub head_sojourn: Duration,
}

/// The arriving packet's attributes an algorithm may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Size in bytes.
    pub size: u32,
    /// Flow hash ([`Packet::flow_hash`]).
    pub flow_hash: u64,
    /// [`Packet::ecn_capable`].
    pub ecn_capable: bool,
}

/// Static facts about the queue an algorithm is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Env {
    /// The hard buffer limit enforced by the wrapper.
    pub limit: QueueLimit,
    /// The outgoing link.
    pub link: LinkInfo,
}

/// An algorithm's decision for an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Enqueue unchanged.
    Accept,
    /// Congestion signal: the wrapper marks CE if the config's `ecn` is set and the packet is
    /// ECN-capable (RFC 3168 §5), otherwise drops it with this reason.
    Signal(DropReason),
    /// Drop regardless of ECN (e.g. PIE above its 10 % marking limit, RFC 8033 §5.1).
    Drop(DropReason),
}

impl Verdict {
    /// An early congestion signal with probability `p` (one uniform draw, and none when
    /// `p <= 0`, so the random stream advances only while the law signals at all).
    #[inline]
    pub fn early_with_probability(p: f64, rng: &mut Rng) -> Verdict {
        if p > 0.0 && rng.uniform() < p {
            Verdict::Signal(DropReason::Early)
        } else {
            Verdict::Accept
        }
    }
}

/// One AQM algorithm's state machine.
pub trait Algorithm: Sized {
    /// Its configuration struct.
    type Config: Params;

    /// Fresh state for a validated config.
    fn build(cfg: &Self::Config, env: &Env) -> Self;
    /// The current configuration.
    fn cfg(&self) -> &Self::Config;
    /// Install a new (validated) configuration while running, keeping the dynamic state.
    fn reconfigure(&mut self, cfg: Self::Config);
    /// True if congestion signals may be ECN marks.
    fn ecn(&self) -> bool;

    /// Decide on an arrival. `q` is the queue before the arrival.
    fn enqueue(&mut self, now: Instant, pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict;

    /// Take the next packet to send. The default pops the head; dequeue-side AQMs (CoDel,
    /// COBALT) override it, may drop several heads (counting them in `stats.dropped_dequeue`
    /// and handing them to `on_drop`) and mark (counting `stats.marked`). `rng` is the queue's
    /// stream (COBALT's BLUE draws at dequeue).
    #[inline]
    fn dequeue<P: Packet, F: FnMut(P, DropReason)>(
        &mut self,
        _now: Instant,
        backlog: &mut Backlog<P>,
        _stats: &mut QueueStats,
        _on_drop: &mut F,
        _rng: &mut Rng,
    ) -> Option<P> {
        backlog.pop()
    }

    /// A packet of `size` bytes with sojourn `sojourn` was handed to the link; `q` is the
    /// queue after it left.
    #[inline]
    fn on_dequeued(&mut self, _now: Instant, _size: u32, _sojourn: Duration, _q: &QueueView) {}
    /// The queue became empty; the link goes idle at `idle_from` (end of the last
    /// transmission).
    #[inline]
    fn on_empty(&mut self, _idle_from: Instant) {}
    /// An accepted arrival was dropped at the hard limit.
    #[inline]
    fn on_overflow(&mut self, _now: Instant) {}
    /// Next time the periodic law must run, if any. Contract: an algorithm with a periodic
    /// law always returns `Some` (from construction on); one without always returns `None`,
    /// so a driver may stop polling a queue whose `poll_at` was `None` when it was built.
    #[inline]
    fn poll_at(&self) -> Option<Instant> {
        None
    }
    /// Run the periodic law.
    #[inline]
    fn on_timer(&mut self, _now: Instant, _q: &QueueView) {}
    /// The outgoing link's rate changed (a link with a varying capacity; `env.link.rate` is
    /// the new rate, > 0): an algorithm whose law reads the rate recomputes what it derived
    /// from it and keeps its dynamic state. The default ignores it (laws that read no rate).
    #[inline]
    fn link_changed(&mut self, _env: &Env) {}
    /// How many times the control law ran (definition documented per algorithm).
    fn activations(&self) -> u64;
    /// The current drop/mark probability in [0, 1] (0 for algorithms without one).
    fn probability(&self) -> f64 {
        0.0
    }
}

/// Shortest period of an AQM timer: 1 µs. A timer that fired more often than once per
/// simulated microsecond would dominate any run (an SFQ with `perturb = 1ns` rehashed its
/// queue a billion times per simulated second), so such periods are refused.
pub const MIN_TIMER_PERIOD: Duration = Duration(1_000);

/// Refuses a timer period below [`MIN_TIMER_PERIOD`] (naming `key` and the value in seconds).
pub(crate) fn check_period(key: &str, period: Duration) -> Result<(), ConfigError> {
    ensure(
        period >= MIN_TIMER_PERIOD,
        key,
        period.as_secs_f64(),
        "must be >= 1e-06 s (an AQM timer fires at most once per simulated microsecond)",
    )
}

/// Refuses a timer frequency that is not in (0, 1e6] Hz (period of at least
/// [`MIN_TIMER_PERIOD`]).
pub(crate) fn check_rate_hz(key: &str, hz: f64) -> Result<(), ConfigError> {
    ensure(
        hz > 0.0 && hz <= 1e6,
        key,
        hz,
        "must be in (0, 1e6] Hz (an AQM timer fires at most once per simulated microsecond)",
    )
}

/// The timer of a law that runs every `period` (PI, PIE, REM, Adaptive RED): ticks at
/// `period, 2·period, ...` from time zero. Invariant: `next` is the first tick not yet run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Periodic {
    next: Instant,
    period: Duration,
}

impl Periodic {
    /// First tick at `Instant::ZERO + period`.
    pub fn new(period: Duration) -> Periodic {
        Periodic {
            next: Instant::ZERO + period,
            period,
        }
    }
    /// The next tick (what `poll_at` reports).
    #[inline]
    pub fn next(&self) -> Instant {
        self.next
    }
    /// True if a tick is due at `now`; the deadline then moves past `now` (ticks missed by a
    /// late call are skipped, not run twice). Calling early does nothing and returns false.
    #[inline]
    pub fn fire(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        // Skip to the first tick after `now` (one division, not one step per missed tick).
        let missed = (now - self.next).0 / self.period.0.max(1);
        self.next += Duration(self.period.0.saturating_mul(missed.saturating_add(1)));
        true
    }
    /// Change the period, keeping the time of the last tick: the next one comes `period`
    /// after it.
    pub fn set_period(&mut self, period: Duration) {
        if period != self.period {
            self.next = (self.next - self.period) + period;
            self.period = period;
        }
    }
}

/// The [`Algorithm`] methods of a periodic law on the queue length (packets) whose signal is
/// one probability applied to arrivals: PI, PIP and FLC. Inside `impl Algorithm for T`, after
/// `type Config` and `fn build`. `T` has fields `cfg: Config` (with `ecn: bool` and
/// `period() -> Duration`), `p: f64`, `timer: Periodic` and `activations: u64`, and a method
/// `update(&mut self, q_pkts: f64)` that runs the law once (and counts the activation).
macro_rules! periodic_queue_law {
    ($config:ty) => {
        fn cfg(&self) -> &$config {
            &self.cfg
        }
        fn reconfigure(&mut self, cfg: $config) {
            self.timer.set_period(cfg.period());
            self.cfg = cfg;
        }
        fn ecn(&self) -> bool {
            self.cfg.ecn
        }
        #[inline]
        fn enqueue(
            &mut self,
            _now: $crate::time::Instant,
            _pkt: &$crate::algorithm::Arrival,
            _q: &$crate::algorithm::QueueView,
            rng: &mut $crate::rng::Rng,
        ) -> $crate::algorithm::Verdict {
            $crate::algorithm::Verdict::early_with_probability(self.p, rng)
        }
        fn poll_at(&self) -> Option<$crate::time::Instant> {
            Some(self.timer.next())
        }
        fn on_timer(&mut self, now: $crate::time::Instant, q: &$crate::algorithm::QueueView) {
            if self.timer.fire(now) {
                self.update(q.len_pkts as f64);
            }
        }
        fn activations(&self) -> u64 {
            self.activations
        }
        fn probability(&self) -> f64 {
            self.p
        }
    };
}
pub(crate) use periodic_queue_law;
