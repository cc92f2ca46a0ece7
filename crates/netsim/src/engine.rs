//! Deterministic event engine: a radix heap of events keyed by
//! `(time, scheduling time, insertion sequence)`, merged with the links'
//! propagation pipes ([`crate::pipes`]), whose arrivals carry keys of the same kind.
//!
//! Invariant: events due at the same instant are delivered in the order they
//! were scheduled (the scheduling time never decreases and the sequence number
//! strictly increases), so a run never depends on the queue's internal layout.
//! [`EventQueue::schedule_as_of`] lets a caller that skips an event place the
//! events it would have scheduled where that event would have placed them (the
//! links' idle fast path, `link.rs`). Time is integer nanoseconds ([`Ns`]); the
//! public API converts to and from [`aqm::Instant`].

use crate::packet::Packet;
use crate::pipes::Pipes;

pub use experiment::time::{ns_to_secs, secs_to_ns, Ns, NS_PER_SEC};

/// Everything that can happen in a simulation. Small and `Copy`: the heap
/// stores events by value, and the handler dispatches with one `match`.
/// Indices are into the simulation's link / flow / group tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head-of-line packet of link `.0` finished serialisation.
    TxDone(u32),
    /// The AQM of link `.0` asked to be polled (`QueueDisc::poll_at`).
    AqmTimer(u32),
    /// Retransmission timer of TCP flow `.0` (lazily re-armed, see `sim.rs`).
    Rto(u32),
    /// Delayed-ACK timer of TCP flow `.0`.
    DelAck(u32),
    /// Pacing timer of TCP flow `.0`: its next segment may leave (at most one pending per
    /// flow, see `tcp::pacing`).
    Pace(u32),
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
    /// The netem stage of link `.0` asked to be looked at again (its watchdog,
    /// `experiment::netem`).
    Netem(u32),
}

/// What the queue yields next: an event, or the arrival of a packet at the far end of
/// `link` with `more` packets of that link due at the same instant
/// ([`EventQueue::pipe_take`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Due {
    /// An event from the heap.
    Event(Event),
    /// A packet reaches the far node of `link`.
    Arrival {
        /// Index of the link.
        link: u32,
        /// The link's far node.
        to: u32,
        /// The packet.
        pkt: Packet,
        /// Packets of the same link due now, to take with [`EventQueue::pipe_take`].
        more: u32,
    },
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

/// Pending events and packets in flight, earliest first; ties break by scheduling time, then
/// insertion order.
///
/// A radix heap (`RadixHeap`) on the event time and the links' propagation lanes
/// ([`Pipes`]), with one sequence counter for both. Keys are unique, so the pop order is fully
/// determined by them: no result depends on the layout. (The heap replaced two binary heaps,
/// one for link events and one for timers; docs/design.md has the measurements.)
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: RadixHeap,
    /// Packets in flight on the links: arrivals, merged with the heap by key.
    pipes: Pipes,
    next_seq: u64,
    /// Latest time popped so far: the scheduling time of new events. It never decreases,
    /// so for events added with [`EventQueue::schedule`] the key `(time, sched, seq)` orders
    /// exactly as `(time, seq)`, insertion order.
    now: Ns,
    /// The flow of each packet of a short flow that a link dropped or lost, and of each copy
    /// netem made ([`EventQueue::dropped`], [`EventQueue::copied`]): the short-flow pool
    /// counts each flow's packets in the network (`crate::flow_pool`).
    pub gone: Vec<Gone>,
    /// The first short flow's id (`None`: no short flows, nothing recorded in `gone`).
    pub gone_from: Option<u32>,
    /// Storage of emptied queues, lent to the next queue that stores a packet (the links
    /// reach it through the event queue they are handed).
    pub rings: crate::queue::SpareRings,
}

/// A change of a flow's packets in the network that happened inside a link
/// ([`EventQueue::gone`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gone {
    /// A packet of the flow was dropped or lost.
    Dropped(u32),
    /// Netem duplicated a packet of the flow.
    Copied(u32),
}

/// `a` pops before `b`.
#[inline(always)]
fn before(a: &Entry, b: &Entry) -> bool {
    (a.time, a.sched, a.seq) < (b.time, b.sched, b.seq)
}

/// A radix heap on the event time (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for
/// the shortest path problem", J. ACM 37(2), 1990), which fits a simulation's clock: no event
/// is scheduled before the last one popped.
///
/// Bucket 0 holds the events due at `last`; bucket `i >= 1` those whose highest bit that
/// differs from `last` is bit `i - 1` (bucket 63 also the few beyond), so every event in
/// bucket `i` is earlier than every event in bucket `i + 1`. A push is one `xor` and one leading-zero count. When bucket
/// 0 is empty, [`RadixHeap::settle`] moves the lowest non-empty bucket down: its earliest
/// time becomes `last` and each of its events lands in a strictly lower bucket. An event
/// therefore moves at most 63 times, and in practice a few, with no data-dependent branch per
/// level as in a binary heap's sift-down.
///
/// Among the events of bucket 0 the earliest whole key `(time, sched, seq)` is taken, so the
/// order is exactly the key order. An event due before `last` (the simulation schedules
/// none) would also go to bucket 0: it is still earlier than every other bucket's, and
/// bucket 0's search compares whole keys, so it pops first, as from a heap. `last` may run
/// ahead of the clock: [`EventQueue::pop_until`] settles the heap before it compares the
/// earliest time with its limit.
#[derive(Debug)]
struct RadixHeap {
    buckets: [Vec<Entry>; 64],
    /// Bit `i` set iff bucket `i` is non-empty.
    occupied: u64,
    /// Reference time of the buckets (0 at the start); never decreases.
    last: Ns,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            // Every bucket gets room for 64 events now (2 KiB): the high ones are first used
            // when the clock crosses a power of two (17.2 s, 34.4 s, ...), and on a 20-flow
            // dumbbell (tests/alloc.rs) none then grows in the steady state.
            buckets: std::array::from_fn(|_| Vec::with_capacity(64)),
            occupied: 0,
            last: 0,
            len: 0,
        }
    }
}

/// Bucket of an event due at `time` when the reference time is `last`: 0 if `time <= last`,
/// else one more than the position of the highest bit in which they differ, at most 63.
/// (Bucket 63 thus also holds the times that differ from `last` in bit 63, 292 years: they
/// are later than all others, and a bucket's earliest time is always found by a search, so
/// sharing a bucket changes no order.)
#[inline(always)]
fn bucket_of(time: Ns, last: Ns) -> usize {
    if time <= last {
        0
    } else {
        ((64 - (time ^ last).leading_zeros()) as usize).min(63)
    }
}

/// Appends `e` to a bucket. A full bucket doubles: it grows only when its own length reaches
/// a new high (a bounded number of times, so no allocation in steady state) and holds at
/// most twice its own peak. (Growing a full bucket to twice all pending events, as before,
/// reserved that much in every bucket a burst of flow starts passed through.)
#[inline(always)]
fn put(v: &mut Vec<Entry>, e: Entry) {
    if v.len() == v.capacity() {
        grow(v);
    }
    v.push(e);
}

#[cold]
#[inline(never)]
fn grow(v: &mut Vec<Entry>) {
    v.reserve_exact(v.len().max(1));
}

impl RadixHeap {
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        let b = bucket_of(e.time, self.last);
        self.len += 1;
        put(&mut self.buckets[b], e);
        self.occupied |= 1 << b;
    }

    /// Makes bucket 0 non-empty (unless the heap is empty) and returns the index in it of the
    /// earliest event.
    #[inline(always)]
    fn settle(&mut self) -> Option<usize> {
        if self.occupied & 1 == 0 {
            if self.occupied == 0 {
                return None;
            }
            let i = self.occupied.trailing_zeros() as usize;
            // The lowest non-empty bucket holds the earliest events: move it down.
            let m = self.buckets[i]
                .iter()
                .map(|e| e.time)
                .min()
                .expect("occupied");
            self.last = m;
            // Every event of bucket `i` goes to a lower one; each vector keeps its own
            // allocation, so in steady state nothing is allocated.
            let (lower, from) = self.buckets.split_at_mut(i);
            let mut occ = self.occupied & !(1 << i);
            for e in from[0].drain(..) {
                let b = bucket_of(e.time, m);
                put(&mut lower[b], e);
                occ |= 1 << b;
            }
            self.occupied = occ;
        }
        let v = &self.buckets[0];
        let mut k = 0;
        for j in 1..v.len() {
            if before(&v[j], &v[k]) {
                k = j;
            }
        }
        Some(k)
    }

    /// Gives back the buckets' storage beyond their events (and the 64 each starts with):
    /// each bucket keeps the room its largest load once took, and over a long run of many
    /// flows the empty ones hold several times the live events (a million flows: about 0.2
    /// GB of 0.26).
    fn shrink(&mut self) {
        for b in &mut self.buckets {
            b.shrink_to(b.len().max(64));
        }
    }

    /// Removes entry `k` of bucket 0 (as returned by [`RadixHeap::settle`]).
    #[inline(always)]
    fn take(&mut self, k: usize) -> Entry {
        let v = &mut self.buckets[0];
        let e = v.swap_remove(k);
        if v.is_empty() {
            self.occupied &= !1;
        }
        self.len -= 1;
        e
    }

    /// Time of the earliest event, without settling.
    fn peek_time(&self) -> Option<Ns> {
        if self.occupied == 0 {
            return None;
        }
        let v = &self.buckets[self.occupied.trailing_zeros() as usize];
        v.iter().map(|e| e.time).min()
    }
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// A link dropped or lost a packet of flow `flow` (recorded if it is a short flow).
    #[inline(always)]
    pub fn dropped(&mut self, flow: u32) {
        if self.gone_from.is_some_and(|n| flow >= n) {
            self.push_gone(Gone::Dropped(flow));
        }
    }

    /// (out of line: the queues' drop callbacks stay as small as without it)
    #[cold]
    #[inline(never)]
    fn push_gone(&mut self, g: Gone) {
        self.gone.push(g);
    }

    /// Netem made a copy of a packet of flow `flow` (recorded if it is a short flow).
    #[inline]
    pub fn copied(&mut self, flow: u32) {
        if self.gone_from.is_some_and(|n| flow >= n) {
            self.gone.push(Gone::Copied(flow));
        }
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
        self.heap.push(Entry {
            time,
            sched,
            seq,
            event,
        });
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Ns> {
        let arrival = self.pipes.peek().map(|k| k.0);
        match (self.heap.peek_time(), arrival) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes and returns the earliest pending event or arrival.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Ns, Due)> {
        self.pop_until(Ns::MAX)
    }

    /// Removes and returns the earliest pending event or arrival if it is due at or before
    /// `limit` (else leaves the queue as it was, but for the radix heap's internal layout).
    /// After an arrival with `more > 0`, take those packets with [`EventQueue::pipe_take`]
    /// before anything else.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Ns) -> Option<(Ns, Due)> {
        let k = self.heap.settle();
        let arrival = self.pipes.peek();
        let heap_first = match (k, arrival) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(k), Some(a)) => {
                let e = &self.heap.buckets[0][k];
                (e.time, e.sched, e.seq) < a
            }
        };
        if heap_first {
            let k = k.expect("heap first");
            let time = self.heap.buckets[0][k].time;
            if time > limit {
                return None;
            }
            let e = self.heap.take(k);
            // never backwards, so that `sched` never decreases along `seq` for `schedule`
            self.now = self.now.max(time);
            Some((time, Due::Event(e.event)))
        } else {
            let time = arrival.expect("arrival first").0;
            if time > limit {
                return None;
            }
            self.now = self.now.max(time);
            let (link, to, pkt, more) = self.pipes.pop(time, &mut self.next_seq);
            Some((
                time,
                Due::Arrival {
                    link,
                    to,
                    pkt,
                    more,
                },
            ))
        }
    }

    /// Gives the links `0, 1, ...` their propagation delays (ns) and far nodes; before the
    /// first [`EventQueue::pipe_push`].
    pub fn set_links(&mut self, links: impl IntoIterator<Item = (Ns, u32)>) {
        debug_assert!(self.pipes.is_empty());
        self.pipes = Pipes::new(links);
    }

    /// [`EventQueue::set_links`] with lane groups ([`Pipes::with_groups`]).
    pub fn set_links_grouped(&mut self, links: impl IntoIterator<Item = (Ns, u32, u32)>) {
        debug_assert!(self.pipes.is_empty());
        self.pipes = Pipes::with_groups(links);
    }

    /// `pkt` left `link`'s transmitter at `done`: it arrives at the far node after the
    /// link's delay, ordered among the events as the link's pipe event would have been
    /// (scheduled as of `done` if the link had nothing in flight, else when the packet
    /// before it arrives).
    #[inline(always)]
    pub fn pipe_push(&mut self, link: u32, done: Ns, pkt: Packet) {
        self.pipes.push(link, done, pkt, &mut self.next_seq);
    }

    /// The packets in flight (read only: for [`Pipes::ahead`] and its prefetches).
    #[inline(always)]
    pub fn pipes(&self) -> &Pipes {
        &self.pipes
    }

    /// The next of the `more` packets of an arrival's link due at the same instant.
    pub fn pipe_take(&mut self, link: u32) -> Packet {
        self.pipes.take(link)
    }

    /// Gives back storage held beyond what is pending: the heap's buckets and the pipes'
    /// rings keep the room of their largest load, and the spare rings of emptied queues
    /// are dropped. Nothing pending changes (only where it is stored); what runs next
    /// allocates again as it needs.
    pub fn shrink_storage(&mut self) {
        self.heap.shrink();
        self.pipes.shrink();
        self.rings = Default::default();
    }

    /// Packets in flight on `link`.
    #[inline]
    pub fn in_pipe(&self, link: u32) -> u64 {
        self.pipes.len(link)
    }

    /// Packets that reached the far node of `link`.
    #[inline]
    pub fn delivered(&self, link: u32) -> u64 {
        self.pipes.delivered(link)
    }

    /// Number of pending events (not counting packets in flight).
    pub fn len(&self) -> usize {
        self.heap.len
    }

    /// True if no event is pending and no packet is in flight.
    pub fn is_empty(&self) -> bool {
        self.heap.len == 0 && self.pipes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next event (these tests put no packet in flight).
    fn pop_ev(q: &mut EventQueue) -> Option<(Ns, Event)> {
        q.pop().map(|(t, d)| match d {
            Due::Event(e) => (t, e),
            Due::Arrival { .. } => panic!("no packet in flight"),
        })
    }

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
        let order: Vec<_> = std::iter::from_fn(|| pop_ev(&mut q)).collect();
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

    /// Ties between link events and timers also break by insertion order.
    #[test]
    fn ties_across_event_kinds_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(7, Event::Rto(0));
        q.schedule(7, Event::TxDone(1));
        q.schedule(3, Event::AqmTimer(2));
        q.schedule(7, Event::Sample);
        q.schedule(7, Event::AqmTimer(3));
        q.schedule(3, Event::DelAck(4));
        assert_eq!(q.len(), 6);
        assert_eq!(q.peek_time(), Some(3));
        let order: Vec<_> = std::iter::from_fn(|| pop_ev(&mut q)).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::AqmTimer(2)),
                (3, Event::DelAck(4)),
                (7, Event::Rto(0)),
                (7, Event::TxDone(1)),
                (7, Event::Sample),
                (7, Event::AqmTimer(3)),
            ]
        );
        assert!(q.is_empty());
    }

    /// The queue against a sorted reference: 20 000 random schedules and pops interleaved,
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
                // Link events and timers interleave in one key order.
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
                let (pt, pe) = pop_ev(&mut q).expect("pending");
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
    /// schedules and pops of link events and timers, with many equal times, pop the same
    /// sequence; giving back storage now and then ([`EventQueue::shrink_storage`]) changes
    /// nothing.
    #[test]
    fn pops_in_key_order_under_random_interleaving() {
        use std::collections::BTreeMap;
        let mut rng = experiment::rng::Rng::derive(7, experiment::rng::Stream::Flow, 0);
        let mut q = EventQueue::new();
        let mut reference = BTreeMap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        for i in 0..20_000 {
            if i % 997 == 0 {
                q.shrink_storage();
            }
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
                assert_eq!(pop_ev(&mut q), Some((t, ev)));
                now = t;
            } else {
                assert_eq!(pop_ev(&mut q), None);
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(((t, _), ev)) = reference.pop_first() {
            assert_eq!(pop_ev(&mut q), Some((t, ev)));
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
        q.schedule_as_of(50, Event::AqmTimer(1), 20); // as if scheduled at 20
        q.schedule(50, Event::Rto(0)); // scheduled at 0: before it
        assert_eq!(pop_ev(&mut q), Some((10, Event::Sample)));
        q.schedule(50, Event::DelAck(2)); // scheduled at 10: before it
        q.schedule(30, Event::Warmup);
        assert_eq!(pop_ev(&mut q), Some((30, Event::Warmup)));
        q.schedule(50, Event::TxDone(3)); // scheduled at 30: after it
        let order: Vec<_> = std::iter::from_fn(|| pop_ev(&mut q)).collect();
        assert_eq!(
            order,
            vec![
                (50, Event::Rto(0)),
                (50, Event::DelAck(2)),
                (50, Event::AqmTimer(1)),
                (50, Event::TxDone(3)),
            ]
        );
    }
}

/// The pipes' arrivals against the discipline they replaced: one pending `PipeArrive`
/// event per link for its oldest packet (scheduled as of the packet's `done` when its pipe
/// was empty, else re-armed when the packet before it arrived), in one key-ordered map with
/// the other events. Random pushes (some completing in the future, as on the links' fast
/// path, some with 0 ns serialisation) and events on links of three delays (0 among them)
/// must come out in the same order. Exact: no tolerance.
#[cfg(test)]
mod pipe_order_tests {
    use std::collections::{BTreeMap, VecDeque};

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Out {
        Event(u32),
        Arrival(u32, u32),
    }

    /// The per-link-pipe reference.
    #[derive(Default)]
    struct Reference {
        events: BTreeMap<(Ns, Ns, u64), Option<u32>>, // None: PipeArrive of the link in the pipe map
        arrive: BTreeMap<(Ns, Ns, u64), u32>,
        seq: u64,
        now: Ns,
        pipes: Vec<VecDeque<(Ns, u32)>>,
        delays: Vec<Ns>,
    }

    impl Reference {
        fn schedule(&mut self, t: Ns, id: u32) {
            self.events.insert((t, self.now, self.seq), Some(id));
            self.seq += 1;
        }
        fn arm(&mut self, at: Ns, sched: Ns, link: u32) {
            let key = (at, sched, self.seq);
            self.seq += 1;
            self.events.insert(key, None);
            self.arrive.insert(key, link);
        }
        fn push(&mut self, link: u32, done: Ns, id: u32) {
            let at = done + self.delays[link as usize];
            if self.pipes[link as usize].is_empty() {
                self.arm(at, done, link);
            }
            self.pipes[link as usize].push_back((at, id));
        }
        fn pop(&mut self, out: &mut Vec<(Ns, Out)>) -> bool {
            let Some((key, item)) = self.events.pop_first() else {
                return false;
            };
            let t = key.0;
            self.now = self.now.max(t);
            match item {
                Some(id) => out.push((t, Out::Event(id))),
                None => {
                    let link = self.arrive.remove(&key).expect("armed");
                    let pipe = &self.pipes[link as usize];
                    let n = pipe.iter().take_while(|(at, _)| *at <= t).count();
                    if let Some(&(at, _)) = pipe.get(n) {
                        let now = self.now;
                        self.arm(at, now, link);
                    }
                    for _ in 0..n {
                        let (_, id) = self.pipes[link as usize].pop_front().expect("counted");
                        out.push((t, Out::Arrival(link, id)));
                    }
                }
            }
            true
        }
    }

    fn pop_new(q: &mut EventQueue, out: &mut Vec<(Ns, Out)>) -> bool {
        let Some((t, due)) = q.pop() else {
            return false;
        };
        match due {
            Due::Event(Event::Rto(id)) => out.push((t, Out::Event(id))),
            Due::Event(e) => panic!("{e:?}"),
            Due::Arrival {
                link, pkt, more, ..
            } => {
                out.push((t, Out::Arrival(link, pkt.seq)));
                for _ in 0..more {
                    out.push((t, Out::Arrival(link, q.pipe_take(link).seq)));
                }
            }
        }
        true
    }

    #[test]
    fn arrivals_come_out_as_per_link_pipe_events_did() {
        let delays = [10, 10, 25, 0, 25, 10];
        for seed in 0..20 {
            let mut rng = experiment::rng::Rng::derive(seed, experiment::rng::Stream::Flow, 1);
            let mut q = EventQueue::new();
            q.set_links(delays.iter().map(|&d| (d, 0)));
            let mut r = Reference {
                pipes: vec![VecDeque::new(); delays.len()],
                delays: delays.to_vec(),
                ..Reference::default()
            };
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut last_done = [0u64; 6];
            for id in 0..4000u32 {
                let u = rng.uniform();
                let now = r.now;
                if u < 0.25 {
                    let t = now + (rng.uniform() * 30.0) as u64;
                    q.schedule(t, Event::Rto(id));
                    r.schedule(t, id);
                } else if u < 0.6 {
                    let l = (rng.uniform() * delays.len() as f64) as usize;
                    // Serialisation of 0-4 ns (0: rates near 1e15 bit/s), from now or from
                    // the link's previous completion, whichever is later.
                    let done = now.max(last_done[l]) + (rng.uniform() * 5.0) as u64;
                    last_done[l] = done;
                    let pkt = Packet {
                        seq: id,
                        ..Packet::default()
                    };
                    q.pipe_push(l as u32, done, pkt);
                    r.push(l as u32, done, id);
                } else {
                    assert_eq!(pop_new(&mut q, &mut a), r.pop(&mut b));
                }
            }
            while pop_new(&mut q, &mut a) {}
            while r.pop(&mut b) {}
            assert_eq!(a, b, "seed {seed}");
            assert!(q.is_empty());
            assert!(a.len() > 2000);
        }
    }
}
