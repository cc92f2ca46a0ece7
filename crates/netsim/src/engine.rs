//! Deterministic event engine: binary min-heaps of events keyed by
//! `(time, scheduling time, insertion sequence)`.
//!
//! Invariant: events due at the same instant are delivered in the order they
//! were scheduled (the scheduling time never decreases and the sequence number
//! strictly increases), so a run never depends on the heap's internal layout.
//! [`EventQueue::schedule_as_of`] lets a caller that skips an event place the
//! events it would have scheduled where that event would have placed them (the
//! links' idle fast path, `link.rs`). Time is integer nanoseconds ([`Ns`]); the
//! public API converts to and from [`aqm::Instant`].

/// Simulation time or duration in integer nanoseconds.
pub type Ns = u64;

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Converts seconds (the JSON boundary unit) to integer nanoseconds, rounding
/// to the nearest nanosecond. Negative or non-finite input maps to 0; callers
/// validate before converting.
pub fn secs_to_ns(s: f64) -> Ns {
    if s.is_finite() && s > 0.0 {
        (s * NS_PER_SEC as f64).round() as Ns
    } else {
        0
    }
}

/// Converts integer nanoseconds to seconds.
pub fn ns_to_secs(ns: Ns) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}

/// Everything that can happen in a simulation. Small and `Copy`: the heap
/// stores events by value, and the handler dispatches with one `match`.
/// Indices are into the simulation's link / flow / group tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head-of-line packet of link `.0` finished serialisation.
    TxDone(u32),
    /// The oldest packet in link `.0`'s propagation pipe reaches the far node.
    PipeArrive(u32),
    /// The AQM of link `.0` asked to be polled (`QueueDisc::poll_at`).
    AqmTimer(u32),
    /// Retransmission timer of TCP flow `.0` (lazily re-armed, see `sim.rs`).
    Rto(u32),
    /// Delayed-ACK timer of TCP flow `.0`.
    DelAck(u32),
    /// Flow `.0` starts sending.
    FlowStart(u32),
    /// Flow `.0` stops offering new data (load steps).
    FlowStop(u32),
    /// UDP flow `.0` emits its next packet (or changes on/off state).
    UdpSend(u32),
    /// Next Poisson arrival of short-flow group `.0`.
    ShortArrival(u32),
    /// Periodic monitor sample.
    Sample,
    /// Periodic congestion-window trace sample.
    CwndSample,
    /// End of the warm-up period: statistics counters are snapshotted.
    Warmup,
    /// Scheduled rate change `.0` (an index into the simulation's list) takes effect.
    RateChange(u32),
}

/// A pending event with its key `(time, sched, seq)` (unique: `seq` strictly increases).
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Ns,
    /// Time the event was scheduled at (see [`EventQueue::schedule_as_of`]).
    sched: Ns,
    seq: u64,
    event: Event,
}

/// Pending events, earliest first; ties break by scheduling time, then insertion order.
///
/// Two binary min-heaps on `(time, seq)` with one sequence counter: `link` holds the links'
/// [`Event::TxDone`] and [`Event::PipeArrive`] (a handful per busy link, due within a
/// serialisation time or a propagation delay), `timer` every other event (one retransmission
/// timer per TCP flow, flow starts, samples: mostly far in the future). A pop takes the
/// earlier of the two roots. Keys are unique, so the pop order is fully determined by them and
/// is the same as one heap's: the split changes no result. It keeps the many far-future
/// timers out of the way of the near-future link events, which are nearly all the events
/// (before the split, a new `TxDone` sifted up through every flow's timer: about a third of
/// the instructions of a 100-flow run went to the heap).
///
/// Written out here (rather than `std`'s `BinaryHeap`) so that push and pop inline into the
/// event loop.
#[derive(Debug, Default)]
pub struct EventQueue {
    link: Vec<Entry>,
    timer: Vec<Entry>,
    next_seq: u64,
    /// Latest time popped so far: the scheduling time of new events. It never decreases,
    /// so for events added with [`EventQueue::schedule`] the key `(time, sched, seq)` orders
    /// exactly as `(time, seq)`, insertion order.
    now: Ns,
}

/// `a` pops before `b`.
#[inline(always)]
fn before(a: &Entry, b: &Entry) -> bool {
    (a.time, a.sched, a.seq) < (b.time, b.sched, b.seq)
}

/// Adds `e` to the binary min-heap `h`.
#[inline(always)]
fn heap_push(h: &mut Vec<Entry>, e: Entry) {
    // Sift up: move parents down into the hole until e's place is found.
    let mut i = h.len();
    h.push(e);
    while i > 0 {
        let parent = (i - 1) / 2;
        if !before(&e, &h[parent]) {
            break;
        }
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

/// Removes the root of the non-empty binary min-heap `h`.
#[inline(always)]
fn heap_pop(h: &mut Vec<Entry>) -> Entry {
    let last = h.pop().expect("non-empty heap");
    if h.is_empty() {
        return last;
    }
    let top = h[0];
    // Sift `last` down from the root: move the earlier child up into the hole.
    let n = h.len();
    let mut i = 0;
    loop {
        let l = 2 * i + 1;
        if l >= n {
            break;
        }
        let c = if l + 1 < n && before(&h[l + 1], &h[l]) {
            l + 1
        } else {
            l
        };
        if !before(&h[c], &last) {
            break;
        }
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    top
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at absolute time `time`.
    #[inline(always)]
    pub fn schedule(&mut self, time: Ns, event: Event) {
        self.schedule_as_of(time, event, self.now);
    }

    /// Schedules `event` at `time` as if it had been scheduled at `sched` (>= the current
    /// time): among events due at the same time it goes after those scheduled before `sched`.
    #[inline(always)]
    pub fn schedule_as_of(&mut self, time: Ns, event: Event, sched: Ns) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry {
            time,
            sched,
            seq,
            event,
        };
        match event {
            Event::TxDone(_) | Event::PipeArrive(_) => heap_push(&mut self.link, e),
            _ => heap_push(&mut self.timer, e),
        }
    }

    /// True if the next pop comes from the link heap.
    #[inline(always)]
    fn link_first(&self) -> Option<bool> {
        match (self.link.first(), self.timer.first()) {
            (Some(a), Some(b)) => Some(before(a, b)),
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        }
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        match (self.link.first(), self.timer.first()) {
            (Some(a), Some(b)) => Some(a.time.min(b.time)),
            (a, b) => a.or(b).map(|e| e.time),
        }
    }

    /// Removes and returns the earliest pending event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Ns, Event)> {
        let e = if self.link_first()? {
            heap_pop(&mut self.link)
        } else {
            heap_pop(&mut self.timer)
        };
        // never backwards, so that `sched` never decreases along `seq` for `schedule`
        self.now = self.now.max(e.time);
        Some((e.time, e.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.link.len() + self.timer.len()
    }

    /// True if no event is pending.
    pub fn is_empty(&self) -> bool {
        self.link.is_empty() && self.timer.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: the engine contract (docs/design.md, "Event ties break by
    /// insertion order"). Exact: no tolerance.
    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::TxDone(0));
        q.schedule(5, Event::TxDone(1));
        q.schedule(10, Event::TxDone(2));
        q.schedule(10, Event::TxDone(3));
        q.schedule(5, Event::TxDone(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::TxDone(1)),
                (5, Event::TxDone(4)),
                (10, Event::TxDone(0)),
                (10, Event::TxDone(2)),
                (10, Event::TxDone(3)),
            ]
        );
    }

    /// Ties across the two heaps (link events and timers) also break by insertion order.
    #[test]
    fn ties_across_heaps_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(7, Event::Rto(0));
        q.schedule(7, Event::TxDone(1));
        q.schedule(3, Event::PipeArrive(2));
        q.schedule(7, Event::Sample);
        q.schedule(7, Event::PipeArrive(3));
        q.schedule(3, Event::DelAck(4));
        assert_eq!(q.len(), 6);
        assert_eq!(q.peek_time(), Some(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::PipeArrive(2)),
                (3, Event::DelAck(4)),
                (7, Event::Rto(0)),
                (7, Event::TxDone(1)),
                (7, Event::Sample),
                (7, Event::PipeArrive(3)),
            ]
        );
        assert!(q.is_empty());
    }

    /// The heap against a sorted reference: 20 000 random schedules and pops interleaved,
    /// many equal times; every pop is the smallest pending (time, seq).
    #[test]
    fn pops_in_key_order() {
        let mut q = EventQueue::new();
        let mut reference: Vec<(Ns, u64)> = Vec::new();
        let mut x: u64 = 12345;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || reference.is_empty() {
                let t = x % 50;
                // Both heaps: link events and timers interleave in one key order.
                let ev = if x % 5 < 2 {
                    Event::Rto(seq as u32)
                } else {
                    Event::TxDone(seq as u32)
                };
                q.schedule(t, ev);
                reference.push((t, seq));
                seq += 1;
            } else {
                reference.sort();
                let (t, s) = reference.remove(0);
                let (pt, pe) = q.pop().expect("pending");
                let id = match pe {
                    Event::TxDone(i) | Event::Rto(i) => i,
                    other => panic!("{other:?}"),
                };
                assert_eq!((pt, id as u64), (t, s));
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(secs_to_ns(0.1), 100_000_000);
        assert_eq!(secs_to_ns(-1.0), 0);
        assert!((ns_to_secs(1_500_000_000) - 1.5).abs() < 1e-12);
    }

    /// Against a reference (a sorted map on `(time, seq)`): random interleavings of
    /// schedules and pops on both heaps, with many equal times, pop the same sequence.
    #[test]
    fn pops_in_key_order_under_random_interleaving() {
        use std::collections::BTreeMap;
        let mut rng = crate::rng::Rng::derive(7, crate::rng::Stream::Flow, 0);
        let mut q = EventQueue::new();
        let mut reference = BTreeMap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        for _ in 0..20_000 {
            if rng.uniform() < 0.55 {
                let t = now + (rng.uniform() * 50.0) as u64;
                let ev = if rng.uniform() < 0.5 {
                    Event::TxDone(seq as u32)
                } else {
                    Event::Rto(seq as u32)
                };
                q.schedule(t, ev);
                reference.insert((t, seq), ev);
                seq += 1;
            } else if let Some(((t, _), ev)) = reference.pop_first() {
                assert_eq!(q.pop(), Some((t, ev)));
                now = t;
            } else {
                assert_eq!(q.pop(), None);
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(((t, _), ev)) = reference.pop_first() {
            assert_eq!(q.pop(), Some((t, ev)));
        }
        assert!(q.is_empty());
    }

    /// `schedule_as_of`: an event scheduled early but as of a later time takes the place a
    /// `schedule` at that later time would have given it among simultaneous events: after
    /// those scheduled before that time, before those scheduled after it.
    #[test]
    fn schedule_as_of_places_the_event_at_its_virtual_scheduling_time() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::Sample); // the clock: pops at 10
        q.schedule_as_of(50, Event::PipeArrive(1), 20); // as if scheduled at 20
        q.schedule(50, Event::Rto(0)); // scheduled at 0: before it
        assert_eq!(q.pop(), Some((10, Event::Sample)));
        q.schedule(50, Event::DelAck(2)); // scheduled at 10: before it
        q.schedule(30, Event::Warmup);
        assert_eq!(q.pop(), Some((30, Event::Warmup)));
        q.schedule(50, Event::TxDone(3)); // scheduled at 30: after it
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (50, Event::Rto(0)),
                (50, Event::DelAck(2)),
                (50, Event::PipeArrive(1)),
                (50, Event::TxDone(3)),
            ]
        );
    }
}
