//! The queue wrapper: storage, hard limit, counters, random stream and one AQM.
//!
//! Counter invariants (ns-3 `QueueDisc` style), checked in tests:
//! `received = dropped_enqueue() + enqueued` and
//! `enqueued = dequeued + dropped_dequeue + dropped_victim + len_pkts()`
//! (`dropped_victim` is non-zero only for a FIFO that is a scheduler's class: the scheduler
//! may take its head to make room for another class's arrival, see [`crate::qdisc`]).

use crate::algorithm::{Arrival, Env, QueueView, Verdict};
use crate::config::{AnyAqm, AqmConfig};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

pub use crate::backlog::{
    Backlog, DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats, DEFAULT_MTU, INITIAL_CAPACITY,
};

/// A queue discipline: FIFO + hard limit + counters + seeded RNG + one AQM algorithm.
///
/// Driven from outside (no clock, no self-scheduling): every call takes `now`; a periodic
/// law announces its next run through [`QueueDisc::poll_at`] and is run by
/// [`QueueDisc::on_timer`].
///
/// Drop-tail with its default configuration, which most links of a large topology run
/// (every access link of a dumbbell), holds no law: it counts the five counters of
/// `FifoCounts`, from which [`QueueDisc::stats`] derives the others, and holds no
/// algorithm state, random stream or full [`QueueStats`] (120 bytes a queue instead of
/// 184). Every other AQM holds them in one box (`Law`).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct QueueDisc<P> {
    // `repr(C)`: what every packet touches first (a drop-tail link's whole per-packet state
    // is in these lines), the AQM's own state after.
    backlog: Backlog<P>,
    /// A drop-tail queue's counters (`law` is `None`); unused with a law.
    fifo: FifoCounts,
    limit: QueueLimit,
    link: LinkInfo,
    /// The AQM, its counters and its random stream; `None` for drop-tail with its default
    /// configuration (see above).
    law: Option<Box<Law>>,
}

/// What the AQM sees of `backlog` at `now` (a function of the backlog alone, so that a
/// queue can call it while it holds its law mutably).
#[inline]
fn view_of<P: Packet>(backlog: &Backlog<P>, now: Instant) -> QueueView {
    QueueView {
        len_pkts: backlog.len() as u32,
        len_bytes: backlog.bytes(),
        head_sojourn: backlog
            .front()
            .map_or(Duration::ZERO, |p| now - p.enqueued_at()),
    }
}

/// What a drop-tail FIFO counts; the rest of its [`QueueStats`] follows (it marks nothing,
/// drops nothing early or at dequeue, and has no activations):
/// `enqueued = received - dropped_limit` and
/// `dequeued = enqueued - dropped_victim - len_pkts()`.
#[derive(Debug, Clone, Copy, Default)]
struct FifoCounts {
    received: u64,
    received_bytes: u64,
    dropped_limit: u64,
    dropped_victim: u64,
    dequeued_bytes: u64,
}

/// An AQM with its counters and its random stream (boxed out of a [`QueueDisc`]).
#[derive(Debug, Clone)]
struct Law {
    stats: QueueStats,
    rng: Rng,
    aqm: AnyAqm,
}

impl<P: Packet> QueueDisc<P> {
    /// A queue running `cfg` with hard limit `limit` on `link`; `seed` starts its random
    /// stream. Fails if the config does not validate or the limit is zero.
    pub fn new(
        cfg: &AqmConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if limit.is_zero() {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let law = (*cfg != AqmConfig::DropTail(Default::default())).then(|| {
            Box::new(Law {
                stats: QueueStats::default(),
                rng: Rng::new(seed),
                aqm: AnyAqm::build(cfg, &Env { limit, link }),
            })
        });
        // No storage until the first packet, then doubling on demand ([`INITIAL_CAPACITY`]):
        // a queue reallocates about log2(its largest backlog) times over its whole life,
        // never per packet in steady state.
        Ok(QueueDisc {
            backlog: Backlog::with_capacity(INITIAL_CAPACITY),
            fifo: FifoCounts::default(),
            limit,
            link,
            law,
        })
    }

    /// The law of a drop-tail queue that holds none (see [`QueueDisc`]), built with its
    /// counters as they stand: drop-tail with its default configuration. Called before such
    /// a queue is reconfigured.
    fn give_law(&mut self) -> &mut Law {
        if self.law.is_none() {
            let stats = self.stats();
            let env = Env {
                limit: self.limit,
                link: self.link,
            };
            self.law = Some(Box::new(Law {
                stats,
                rng: Rng::new(0),
                aqm: AnyAqm::build(&AqmConfig::DropTail(Default::default()), &env),
            }));
        }
        self.law.as_deref_mut().expect("just set")
    }

    #[inline]
    fn view(&self, now: Instant) -> QueueView {
        view_of(&self.backlog, now)
    }

    #[inline]
    fn fits(&self, size: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.backlog.len() as u64) < n as u64,
            QueueLimit::Bytes(b) => self.backlog.bytes() + size as u64 <= b,
        }
    }

    /// Offer a packet. The AQM decides first (on the queue before the arrival); an accepted
    /// or marked packet that does not fit under the hard limit is dropped with
    /// [`DropReason::ForcedLimit`] (never marked).
    ///
    /// (`inline(always)`: it has two callers, [`crate::Qdisc`]'s FIFO path and the schedulers'
    /// classes; the FIFO path must compile as it did before schedulers existed.)
    #[inline(always)]
    pub fn enqueue(&mut self, now: Instant, mut pkt: P) -> Enqueue<P> {
        let size = pkt.size_bytes();
        let fits = self.fits(size);
        let Some(law) = self.law.as_deref_mut() else {
            // drop-tail: accepts every arrival that fits
            self.fifo.received += 1;
            self.fifo.received_bytes += size as u64;
            if !fits {
                self.fifo.dropped_limit += 1;
                return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
            }
            pkt.set_enqueued_at(now);
            self.backlog.push(pkt);
            return Enqueue::Queued;
        };
        law.stats.received += 1;
        law.stats.received_bytes += size as u64;
        let arrival = Arrival {
            size,
            flow_hash: pkt.flow_hash(),
            ecn_capable: pkt.ecn_capable(),
        };
        let view = view_of(&self.backlog, now);
        let verdict = law.aqm.enqueue(now, &arrival, &view, &mut law.rng);
        law.stats.activations = law.aqm.activations();
        let mark = match verdict {
            Verdict::Accept => false,
            Verdict::Signal(reason) => {
                if law.aqm.ecn() && arrival.ecn_capable {
                    true
                } else {
                    law.stats.dropped_early += 1;
                    return Enqueue::Dropped(pkt, reason);
                }
            }
            Verdict::Drop(reason) => {
                law.stats.dropped_early += 1;
                return Enqueue::Dropped(pkt, reason);
            }
        };
        if !fits {
            law.aqm.on_overflow(now);
            law.stats.dropped_limit += 1;
            return Enqueue::Dropped(pkt, DropReason::ForcedLimit);
        }
        pkt.set_enqueued_at(now);
        self.backlog.push(pkt);
        law.stats.enqueued += 1;
        if mark {
            // Only reached for ECN-capable packets (checked above).
            if let Some(p) = self.backlog.back_mut() {
                p.set_ce();
            }
            law.stats.marked += 1;
            Enqueue::Marked
        } else {
            Enqueue::Queued
        }
    }

    /// An arrival that leaves at once: if this is a drop-tail FIFO (no enqueue decision, no
    /// dequeue law) with an empty backlog and room for `pkt`, records exactly what
    /// [`QueueDisc::enqueue`] then [`QueueDisc::dequeue`] would (received, enqueued and
    /// dequeued counts and bytes; drop-tail's hooks do nothing) and hands the packet back
    /// stamped with its enqueue time, without storing it. Otherwise gives `pkt` back
    /// untouched as `Err`, for the caller to enqueue. For a driver whose link is idle.
    #[inline(always)]
    pub fn pass_through(&mut self, now: Instant, mut pkt: P) -> Result<P, P> {
        let size = pkt.size_bytes();
        if !self.backlog.is_empty() || !self.fits(size) {
            return Err(pkt);
        }
        match self.law.as_deref_mut() {
            None => {
                self.fifo.received += 1;
                self.fifo.received_bytes += size as u64;
                self.fifo.dequeued_bytes += size as u64;
            }
            Some(law) if matches!(law.aqm, AnyAqm::DropTail(_)) => {
                let s = &mut law.stats;
                s.received += 1;
                s.received_bytes += size as u64;
                s.enqueued += 1;
                s.dequeued += 1;
                s.dequeued_bytes += size as u64;
            }
            Some(_) => return Err(pkt),
        }
        pkt.set_enqueued_at(now);
        Ok(pkt)
    }

    /// Take the next packet for the link, or `None` if the queue is empty. Dequeue-side AQMs
    /// may drop heads first; each such packet goes to `on_drop` with its reason.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        let Some(law) = self.law.as_deref_mut() else {
            // drop-tail: the head
            let pkt = self.backlog.pop()?;
            self.fifo.dequeued_bytes += pkt.size_bytes() as u64;
            return Some(pkt);
        };
        let pkt = law.aqm.dequeue(
            now,
            &mut self.backlog,
            &mut law.stats,
            on_drop,
            &mut law.rng,
        );
        law.stats.activations = law.aqm.activations();
        let pkt = pkt?;
        let size = pkt.size_bytes();
        law.stats.dequeued += 1;
        law.stats.dequeued_bytes += size as u64;
        let sojourn = now - pkt.enqueued_at();
        let view = view_of(&self.backlog, now);
        law.aqm.on_dequeued(now, size, sojourn, &view);
        if self.backlog.is_empty() {
            law.aqm.on_empty(now + self.link.rate.tx_time(size as u64));
        }
        Some(pkt)
    }

    /// Drops the head packet as a victim (a scheduler makes room for an arrival in another
    /// class): counted in `dropped_victim`, handed back. The AQM is not consulted.
    pub fn drop_head(&mut self, now: Instant) -> Option<P> {
        let p = self.backlog.pop()?;
        match self.law.as_deref_mut() {
            None => self.fifo.dropped_victim += 1,
            Some(law) => {
                law.stats.dropped_victim += 1;
                if self.backlog.is_empty() {
                    law.aqm.on_empty(now);
                }
            }
        }
        Some(p)
    }

    /// Next time [`QueueDisc::on_timer`] must be called, if the AQM has a periodic law.
    #[inline]
    pub fn poll_at(&self) -> Option<Instant> {
        self.law.as_deref().and_then(|l| l.aqm.poll_at())
    }

    /// Run the AQM's periodic law (call at or after [`QueueDisc::poll_at`]; calling early is
    /// harmless: the law only runs when its deadline has passed).
    pub fn on_timer(&mut self, now: Instant) {
        let view = self.view(now);
        if let Some(law) = self.law.as_deref_mut() {
            law.aqm.on_timer(now, &view);
            law.stats.activations = law.aqm.activations();
        }
    }

    /// Packets stored.
    #[inline]
    pub fn len_pkts(&self) -> usize {
        self.backlog.len()
    }
    /// Bytes stored.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.backlog.bytes()
    }
    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.backlog.is_empty()
    }
    /// The counters (a drop-tail queue without a law derives them from what it counts).
    #[inline]
    pub fn stats(&self) -> QueueStats {
        match self.law.as_deref() {
            Some(law) => law.stats,
            None => {
                let f = &self.fifo;
                let enqueued = f.received - f.dropped_limit;
                QueueStats {
                    received: f.received,
                    enqueued,
                    dropped_limit: f.dropped_limit,
                    dropped_victim: f.dropped_victim,
                    dequeued: enqueued - f.dropped_victim - self.backlog.len() as u64,
                    received_bytes: f.received_bytes,
                    dequeued_bytes: f.dequeued_bytes,
                    ..QueueStats::default()
                }
            }
        }
    }
    /// Sojourn time of the head packet at `now` (zero if empty).
    #[inline]
    pub fn head_sojourn(&self, now: Instant) -> Duration {
        self.backlog
            .front()
            .map_or(Duration::ZERO, |p| now - p.enqueued_at())
    }
    /// The head packet, if any.
    #[inline]
    pub fn peek(&self) -> Option<&P> {
        self.backlog.front()
    }
    /// The hard limit.
    #[inline]
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
    /// The link this queue feeds.
    #[inline]
    pub fn link(&self) -> LinkInfo {
        self.link
    }
    /// Tells the queue its link's rate changed (a varying capacity): the idle instant it
    /// derives and the AQMs whose law reads the rate (`Algorithm::link_changed`) use `rate`
    /// from now on. A rate of 0 is ignored (an outage: the last positive rate is kept).
    pub fn set_link_rate(&mut self, rate: crate::time::BitsPerSec) {
        if rate.0 == 0 || rate == self.link.rate {
            return;
        }
        self.link.rate = rate;
        let env = Env {
            limit: self.limit,
            link: self.link,
        };
        if let Some(law) = self.law.as_deref_mut() {
            law.aqm.link_changed(&env);
        }
    }
    /// The AQM's current drop/mark probability in [0, 1] (0 if it has none).
    #[inline]
    pub fn probability(&self) -> f64 {
        self.law.as_deref().map_or(0.0, |l| l.aqm.probability())
    }
    /// Change one parameter while running (boundary units: seconds, 0/1, ...). The dynamic
    /// state is kept; derived constants are recomputed. On error nothing changes.
    pub fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
        if self.law.is_none() {
            // checked first: on error nothing changes, no law is built
            self.config().set_param(key, value)?;
        }
        self.give_law().aqm.set_param(key, value)
    }
    /// The current value of one parameter (boundary units).
    pub fn param(&self, key: &str) -> Option<f64> {
        self.config().get_param(key)
    }
    /// The current configuration.
    pub fn config(&self) -> AqmConfig {
        match self.law.as_deref() {
            Some(law) => law.aqm.config(),
            None => AqmConfig::DropTail(Default::default()),
        }
    }
    /// The algorithm state (tests only; `None` for drop-tail without a law).
    #[cfg(test)]
    pub(crate) fn aqm(&self) -> Option<&AnyAqm> {
        self.law.as_deref().map(|l| &l.aqm)
    }
    /// CoDel's state variables when this queue runs CoDel (count, drop_next, rec_inv_sqrt,
    /// ...), for inspection; `None` for other AQMs.
    pub fn codel_vars(&self) -> Option<crate::codel::CodelVars> {
        match self.law.as_deref().map(|l| &l.aqm) {
            Some(AnyAqm::Codel(c)) => Some(*c.vars()),
            _ => None,
        }
    }
    /// Bytes of packet storage held (the FIFO's capacity, which grows by doubling up to the
    /// limit and is kept).
    pub fn memory_bytes(&self) -> usize {
        self.backlog.memory_bytes()
    }
    /// Packets of storage held (its capacity, kept once grown).
    #[inline(always)]
    pub fn storage_slots(&self) -> usize {
        self.backlog.slots()
    }
    /// The storage of an empty queue holding at most `max` slots, which it gives up
    /// ([`Backlog::release`]); the queue is the same with none.
    #[inline]
    pub fn release_storage(&mut self, max: usize) -> Option<std::collections::VecDeque<P>> {
        self.backlog.release(max)
    }
    /// Takes `ring` (empty) as storage if the queue holds none; else gives it back.
    #[inline]
    pub fn adopt_storage(
        &mut self,
        ring: std::collections::VecDeque<P>,
    ) -> Option<std::collections::VecDeque<P>> {
        self.backlog.adopt(ring)
    }
    /// Canonical name of the running AQM.
    pub fn aqm_name(&self) -> &'static str {
        self.config().name()
    }
}
