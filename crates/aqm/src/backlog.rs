//! What a queue holds and counts, shared by the queue wrapper ([`crate::queue`]) and the
//! algorithms that read it: the packets ([`Backlog`]), the hard limit, the link a queue feeds,
//! why a packet was dropped, what an enqueue did, and the counters.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::packet::Packet;
use crate::time::BitsPerSec;

/// Default MTU in bytes used by [`LinkInfo::new`] (Ethernet payload).
pub const DEFAULT_MTU: u32 = 1500;

/// Hard buffer limit, enforced by the wrapper before any packet is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(u32),
    /// At most this many bytes.
    Bytes(u64),
}

impl QueueLimit {
    /// The limit in packets, converting a byte limit with `mtu`-sized packets.
    pub fn as_packets(self, mtu: u32) -> u64 {
        match self {
            QueueLimit::Packets(n) => n as u64,
            QueueLimit::Bytes(b) => b / mtu.max(1) as u64,
        }
    }
    /// The limit in bytes, converting a packet limit with `mtu`-sized packets.
    pub fn as_bytes(self, mtu: u32) -> u64 {
        match self {
            QueueLimit::Packets(n) => n as u64 * mtu as u64,
            QueueLimit::Bytes(b) => b,
        }
    }
    pub(crate) fn is_zero(self) -> bool {
        matches!(self, QueueLimit::Packets(0) | QueueLimit::Bytes(0))
    }
}

/// The outgoing link of the queue (used by rate-based laws and idle-time corrections).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LinkInfo {
    /// Link rate.
    pub rate: BitsPerSec,
    /// Maximum packet size in bytes (CoDel's MAXPACKET default, PIE's "2 packets" rule,
    /// conversions between packet and byte limits).
    pub mtu: u32,
}

impl LinkInfo {
    /// A link of `rate` with [`DEFAULT_MTU`].
    pub const fn new(rate: BitsPerSec) -> LinkInfo {
        LinkInfo {
            rate,
            mtu: DEFAULT_MTU,
        }
    }
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DropReason {
    /// The hard buffer limit was reached (tail drop).
    ForcedLimit,
    /// Probabilistic early drop by the AQM at enqueue.
    Early,
    /// Deterministic AQM drop at enqueue (e.g. RED's average above max_th (non-gentle) or
    /// 2·max_th (gentle), AVQ's virtual-queue overflow, PIE's de-randomisation bound).
    AqmForced,
    /// Dropped at dequeue by CoDel's control law (RFC 8289 §5.5).
    CodelDequeue,
}

/// Result of [`QueueDisc::enqueue`].
#[derive(Debug, PartialEq, Eq)]
pub enum Enqueue<P> {
    /// Stored unchanged.
    Queued,
    /// Stored with CE set (congestion signal as an ECN mark).
    Marked,
    /// Not stored; the packet is handed back so the caller can recycle it.
    Dropped(P, DropReason),
}

/// Counters of one queue (packets unless named `_bytes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueStats {
    /// Arrivals offered to `enqueue`.
    pub received: u64,
    /// Arrivals stored (including marked ones).
    pub enqueued: u64,
    /// Arrivals dropped at the hard limit ([`DropReason::ForcedLimit`]).
    pub dropped_limit: u64,
    /// Arrivals dropped by the AQM at enqueue ([`DropReason::Early`], [`DropReason::AqmForced`]).
    pub dropped_early: u64,
    /// Stored packets dropped at dequeue (CoDel).
    pub dropped_dequeue: u64,
    /// Stored packets dropped at the enqueue of *another* packet (a scheduler's buffer was
    /// full and this queue was the fattest, see [`crate::qdisc`]).
    #[serde(default)]
    pub dropped_victim: u64,
    /// Packets marked CE (at enqueue or dequeue).
    pub marked: u64,
    /// Packets handed to the link.
    pub dequeued: u64,
    /// Times the AQM control law ran (see each algorithm's docs for what counts).
    pub activations: u64,
    /// Bytes offered to `enqueue`.
    pub received_bytes: u64,
    /// Bytes handed to the link.
    pub dequeued_bytes: u64,
}

impl QueueStats {
    /// All drops before storage: `dropped_limit + dropped_early`.
    #[inline]
    pub fn dropped_enqueue(&self) -> u64 {
        self.dropped_limit + self.dropped_early
    }
    /// Early drops: the AQM's decisions (at enqueue, `dropped_early`, and at dequeue,
    /// `dropped_dequeue`), as opposed to [`QueueStats::dropped_forced`].
    #[inline]
    pub fn dropped_aqm(&self) -> u64 {
        self.dropped_early + self.dropped_dequeue
    }
    /// Forced drops: the buffer was full (the arrival at the hard limit, `dropped_limit`, or
    /// a packet a scheduler dropped to make room, `dropped_victim`).
    #[inline]
    pub fn dropped_forced(&self) -> u64 {
        self.dropped_limit + self.dropped_victim
    }
    /// All drops.
    #[inline]
    pub fn dropped(&self) -> u64 {
        self.dropped_enqueue() + self.dropped_dequeue + self.dropped_victim
    }
    /// Adds `o`'s counters to these (a scheduler's totals are the sums over its classes).
    pub fn add(&mut self, o: &QueueStats) {
        self.received += o.received;
        self.enqueued += o.enqueued;
        self.dropped_limit += o.dropped_limit;
        self.dropped_early += o.dropped_early;
        self.dropped_dequeue += o.dropped_dequeue;
        self.dropped_victim += o.dropped_victim;
        self.marked += o.marked;
        self.dequeued += o.dequeued;
        self.activations += o.activations;
        self.received_bytes += o.received_bytes;
        self.dequeued_bytes += o.dequeued_bytes;
    }
}

/// FIFO storage with a byte counter. Grows by half its size (at least 4 packets) up to the
/// limit (see [`INITIAL_CAPACITY`]); no allocation per packet in steady state.
#[derive(Debug, Clone)]
pub struct Backlog<P> {
    q: VecDeque<P>,
    bytes: u64,
}

impl<P> Backlog<P> {
    /// Bytes of packet storage held (capacity, kept once grown).
    pub fn memory_bytes(&self) -> usize {
        self.q.capacity() * std::mem::size_of::<P>()
    }
}

impl<P: Packet> Backlog<P> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Backlog {
            q: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }
    /// Remove the head.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<P> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size_bytes() as u64;
        Some(p)
    }
    #[inline]
    /// The packet at the tail (the one just pushed), to mark it.
    pub(crate) fn back_mut(&mut self) -> Option<&mut P> {
        self.q.back_mut()
    }

    pub(crate) fn push(&mut self, p: P) {
        self.bytes += p.size_bytes() as u64;
        if self.q.len() == self.q.capacity() {
            self.grow();
        }
        self.q.push_back(p);
    }

    /// Room for half as many packets again (at least 4): a queue holds at most a third of
    /// its storage unused, where doubling left up to half (an access link's initial window
    /// of 9 queued packets: 9 slots, not 16).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let c = self.q.capacity();
        self.q.reserve_exact(if c < 4 { 4 } else { c / 2 });
    }
    /// Packets of storage held.
    #[inline(always)]
    pub fn slots(&self) -> usize {
        self.q.capacity()
    }
    /// The storage of an empty backlog that holds at least one and at most `max` slots,
    /// leaving it with none (`None` otherwise): to lend to another queue
    /// ([`Backlog::adopt`]).
    pub fn release(&mut self, max: usize) -> Option<VecDeque<P>> {
        let c = self.q.capacity();
        (self.q.is_empty() && c > 0 && c <= max).then(|| std::mem::take(&mut self.q))
    }
    /// Takes `ring` (empty) as storage if this backlog holds none; else gives it back.
    pub fn adopt(&mut self, ring: VecDeque<P>) -> Option<VecDeque<P>> {
        if self.q.capacity() == 0 && ring.is_empty() {
            self.q = ring;
            None
        } else {
            Some(ring)
        }
    }
    /// Packets stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    /// True if no packet is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    /// Bytes stored.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// The head packet.
    #[inline]
    pub fn front(&self) -> Option<&P> {
        self.q.front()
    }
}

/// Packets of storage a queue reserves at construction: none. Storage is allocated by the
/// first packet and grows by half on demand (4, 6, 9, 13, ... up to the limit), so a queue
/// reallocates about log1.5(its largest backlog) times over its whole life and never per
/// packet in steady state, and the tens of thousands of access-link queues of a large dumbbell, which rarely
/// hold more than a few packets, cost a few hundred bytes each instead of a reserved
/// 256-packet ring (12 KB of 48-byte packets) each.
pub const INITIAL_CAPACITY: usize = 0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TestPacket;

    /// Storage grows by half (at least 4 packets): 9 packets take 9 slots, a backlog never
    /// holds more than a third of its storage unused (plus the first 4), and a queue of a
    /// million packets reallocated only some 30 times.
    #[test]
    fn backlog_grows_by_half() {
        let mut b = Backlog::<TestPacket>::with_capacity(INITIAL_CAPACITY);
        let slot = std::mem::size_of::<TestPacket>();
        let (mut grown, mut cap) = (0, 0);
        for n in 1..=1_000_000usize {
            b.push(TestPacket::new(0, 100));
            let c = b.memory_bytes() / slot;
            if c != cap {
                (grown, cap) = (grown + 1, c);
            }
            if n == 9 {
                assert_eq!(c, 9);
            }
            assert!(
                c >= n && (c <= 4 || c * 2 <= 3 * n + 3),
                "{n} packets in {c} slots"
            );
        }
        assert!(grown <= 36, "{grown} reallocations");
        assert_eq!(b.bytes(), 100_000_000);
    }

    /// Only an empty backlog of 1 to `max` slots gives its storage up; a backlog with
    /// storage refuses a ring, one without takes it, and the lent ring is used as it was.
    #[test]
    fn storage_is_lent_only_when_empty_and_small() {
        let mut a = Backlog::<TestPacket>::with_capacity(INITIAL_CAPACITY);
        assert!(a.release(64).is_none(), "no storage to give");
        for _ in 0..9 {
            a.push(TestPacket::new(0, 100));
        }
        assert!(a.release(64).is_none(), "holds packets");
        while a.pop().is_some() {}
        assert!(a.release(8).is_none(), "9 slots > 8");
        let ring = a.release(9).expect("empty, 9 slots");
        assert_eq!((ring.capacity(), a.slots(), a.memory_bytes()), (9, 0, 0));
        let mut b = Backlog::<TestPacket>::with_capacity(INITIAL_CAPACITY);
        b.push(TestPacket::new(0, 100));
        let ring = b.adopt(ring).expect("b has storage: refused");
        let mut c = Backlog::<TestPacket>::with_capacity(INITIAL_CAPACITY);
        assert!(c.adopt(ring).is_none());
        for _ in 0..9 {
            c.push(TestPacket::new(0, 60));
        }
        assert_eq!((c.slots(), c.len(), c.bytes()), (9, 9, 540));
    }
}
