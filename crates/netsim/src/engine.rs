//! Deterministic event engine: a binary min-heap of events keyed by
//! `(time, insertion sequence)`.
//!
//! Invariant: events scheduled for the same instant are delivered in the
//! order they were scheduled (the sequence number is strictly increasing), so
//! a run never depends on the heap's internal layout. Time is integer
//! nanoseconds ([`Ns`]); the public API converts to and from [`aqm::Instant`].

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Ns,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest
    /// `(time, seq)` first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Pending events, earliest first; ties break by insertion order.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at absolute time `time`.
    #[inline]
    pub fn schedule(&mut self, time: Ns, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.peek().map(|e| e.time)
    }

    /// Removes and returns the earliest pending event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True if no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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

    #[test]
    fn seconds_round_trip() {
        assert_eq!(secs_to_ns(0.1), 100_000_000);
        assert_eq!(secs_to_ns(-1.0), 0);
        assert!((ns_to_secs(1_500_000_000) - 1.5).abs() < 1e-12);
    }
}
