//! Shared machinery of the hashed flow-queueing qdiscs ([`crate::fq_codel`],
//! [`crate::fq_pie`], [`crate::sfq`], [`crate::sfq_codel`]): hashing a packet's
//! [`Packet::flow_hash`] with a seeded perturbation into buckets, the per-bucket flow queues,
//! the two round-robin lists (new flows, old flows), finding the fattest flow, and counting
//! the backlogged flow queues over time.
//!
//! ## Memory
//!
//! Packets live in **one pool** (a slab of slots, each holding one packet and the indices of
//! its neighbours in its flow queue); a flow queue is a doubly linked list of slot indices
//! (`head`, `tail` in its [`Bucket`]); freed slots go on a free list and are reused. The pool
//! grows only when no freed slot is left, so its size is the high-water mark of packets stored
//! at once: at most the hard limit plus the one arrival that is linked before the limit check
//! (Linux's fq_codel enqueues first, then drops); its capacity grows by doubling but is capped
//! at that bound for a packet limit. Nothing is allocated per
//! packet in steady state, and an idle bucket costs only its fixed-size [`Bucket`] record (the
//! bucket array has exactly `flows` entries, fixed at construction): memory is bounded by the
//! buffer and the configured number of buckets, never by how many buckets were ever used.
//! (A `VecDeque` per bucket would keep the capacity of every bucket's own high-water mark.)
//!
//! ## Lists
//!
//! Each bucket is on at most one of two intrusive FIFO lists of bucket indices, `New` and
//! `Old` ([`List`]): RFC 8290 §4.2's new_flows / old_flows (fq_codel, fq_pie; sfq_codel's new
//! bins and its schedule; sfq's round-robin ring is `Old` alone). Every operation the
//! schedulers need is at a list's front or back, so one `next` index per bucket suffices.
//!
//! ## Hash
//!
//! `bucket = ((mix64(flow_hash ^ key) >> 32) * n) >> 32`: SplitMix64's finaliser of the flow
//! hash xor a 64-bit key drawn from the qdisc's seed, then Linux's `reciprocal_scale` of the
//! top 32 bits into `n` buckets. The key plays the part of Linux's per-boot hash secret
//! (`skb_get_hash`) and of SFQ's perturbation; a new key re-hashes every flow
//! ([`FlowQueues::rehash`]).
//!
//! ## Active flows
//!
//! [`FlowQueues::active`] is the number of backlogged flow queues (buckets holding at least one
//! packet; flow queues that are empty but still on a list do not count). Its time integral
//! ([`FlowQueues::active_area`]) and peak are kept exactly, at each change.
//!
//! ## Common parameters
//!
//! `Limits` (the link's buffer, or the config's `limit` in packets, a byte-limited link keeping
//! its byte limit), the quantum (0 = the link's MTU; else Linux's 256..=1048576 bytes), the
//! flow-count check (1..=65536) and the seed of the hash key are shared here too.

use crate::backlog::{LinkInfo, QueueLimit};
use crate::error::{ensure, ConfigError};
use crate::packet::Packet;
use crate::time::Instant;

/// The [`crate::qdisc::ops::QdiscOps`] items every qdisc on [`FlowQueues`] shares, over its fields
/// `fq` (the flow queues), `stats`, `link_limit` and `link`: lengths, counters, limit, link and
/// pool size; with `flows`, also the active-flow count of the flow queues (a hashed qdisc's;
/// SQM counts its slots instead). Expands inside the qdisc's `impl QdiscOps`.
macro_rules! flow_queue_ops {
    () => {
        #[inline]
        fn len_pkts(&self) -> usize {
            self.fq.len_pkts()
        }
        #[inline]
        fn len_bytes(&self) -> u64 {
            self.fq.len_bytes()
        }
        fn stats(&self) -> $crate::queue::QueueStats {
            self.stats
        }
        fn limit(&self) -> $crate::queue::QueueLimit {
            self.link_limit
        }
        fn link(&self) -> $crate::queue::LinkInfo {
            self.link
        }
        fn pool_slots(&self) -> Option<usize> {
            Some(self.fq.pool_slots())
        }
        fn set_link_rate(&mut self, rate: $crate::time::BitsPerSec) {
            if rate.0 > 0 {
                self.link.rate = rate;
            }
        }
    };
    (flows) => {
        $crate::flowq::flow_queue_ops!();
        #[inline]
        fn active_flows(&self) -> Option<u32> {
            Some(self.fq.active())
        }
        fn flow_count(&self, now: $crate::time::Instant) -> Option<$crate::qdisc::ops::FlowCount> {
            Some($crate::qdisc::ops::FlowCount {
                active: self.fq.active(),
                area: self.fq.active_area(now),
                peak: self.fq.peak(),
            })
        }
        fn reset_flow_peak(&mut self) {
            self.fq.reset_peak();
        }
    };
}
pub(crate) use flow_queue_ops;

/// "No index" in the pool and the lists.
pub const NIL: u32 = u32::MAX;

/// Most buckets a hashed qdisc takes (Linux fq_codel/fq_pie `flows` and sfq `divisor`: 65536).
pub const MAX_BUCKETS: u32 = 65_536;

/// Linux `FQ_CODEL_QUANTUM_MAX` (1 << 20 bytes), also sfq's and fq_pie's bound.
pub const QUANTUM_MAX: u32 = 1 << 20;
/// Linux's smallest quantum (`max(256U, quantum)`).
pub const QUANTUM_MIN: u32 = 256;

/// Checks the flow count shared by the hashed qdiscs.
pub(crate) fn check_flows(key: &str, n: u32) -> Result<(), ConfigError> {
    ensure(
        (1..=MAX_BUCKETS).contains(&n),
        key,
        n as f64,
        "must be in 1..=65536",
    )
}

/// Checks a quantum: 0 (the link's MTU) or Linux's range.
pub(crate) fn check_quantum(q: u32) -> Result<(), ConfigError> {
    ensure(
        q == 0 || (QUANTUM_MIN..=QUANTUM_MAX).contains(&q),
        "quantum",
        q as f64,
        "must be 0 (the link's MTU) or in 256..=1048576 bytes",
    )
}

/// Packet and byte limits of a hashed qdisc: the link's buffer, or `limit` packets if the
/// config gives one (a byte-limited link keeps its byte limit as well).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub pkts: u64,
    pub bytes: u64,
}

impl Limits {
    pub fn new(link_limit: QueueLimit, cfg_limit: u32) -> Limits {
        let (mut pkts, bytes) = match link_limit {
            QueueLimit::Packets(n) => (n as u64, u64::MAX),
            QueueLimit::Bytes(b) => (u64::MAX, b),
        };
        if cfg_limit > 0 {
            pkts = cfg_limit as u64;
        }
        Limits { pkts, bytes }
    }
    #[inline]
    pub fn exceeded(&self, pkts: usize, bytes: u64) -> bool {
        pkts as u64 > self.pkts || bytes > self.bytes
    }
    /// Slots to reserve in the pool up front.
    pub fn pool_hint(&self) -> usize {
        (self.pkts.min(self.bytes / 64).min(1 << 16) as usize + 1).min(256)
    }
    /// Most slots the pool may need: the packet limit plus the arrival linked before the limit
    /// check (unbounded for a byte limit: the pool then grows by doubling).
    pub fn pool_max(&self) -> usize {
        if self.pkts == u64::MAX {
            usize::MAX
        } else {
            (self.pkts as usize).saturating_add(1)
        }
    }
}

/// The quantum in bytes: the config's, or the link's MTU.
pub(crate) fn quantum_of(q: u32, link: LinkInfo) -> i64 {
    if q == 0 {
        link.mtu.max(1) as i64
    } else {
        q as i64
    }
}

/// FQ-CoDel's quantum in bytes: 0 = the link's MTU, otherwise at least 256 (Linux
/// `fq_codel_change`: `q->quantum = max(256U, nla_get_u32(tb[TCA_FQ_CODEL_QUANTUM]))`, a
/// smaller value is raised, not refused).
pub(crate) fn quantum_at_least_min(q: u32, link: LinkInfo) -> i64 {
    if q == 0 {
        quantum_of(q, link)
    } else {
        q.max(QUANTUM_MIN) as i64
    }
}

/// The seed of a hashed qdisc's perturbation key.
pub(crate) fn hash_key(seed: u64) -> u64 {
    mix64(seed ^ 0x5eed_f10e_c0de_0001)
}

/// SplitMix64's finaliser (a bijective 64-bit mixer).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seeded hash of a flow key into `n` buckets (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowHasher {
    key: u64,
    n: u32,
}

impl FlowHasher {
    /// `n` buckets (1..=[`MAX_BUCKETS`]), perturbation `key`.
    pub fn new(key: u64, n: u32) -> FlowHasher {
        FlowHasher { key, n: n.max(1) }
    }
    /// The bucket of a packet with flow hash `flow_hash`.
    #[inline]
    pub fn bucket(&self, flow_hash: u64) -> usize {
        let h = mix64(flow_hash ^ self.key) >> 32;
        ((h * self.n as u64) >> 32) as usize
    }
    /// The perturbation key.
    pub fn key(&self) -> u64 {
        self.key
    }
}

/// Which round-robin list a bucket is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum List {
    /// On no list.
    #[default]
    None,
    /// RFC 8290's new_flows (sfq_codel: bins not yet served since they became active).
    New,
    /// RFC 8290's old_flows (sfq: the round-robin ring).
    Old,
}

/// One bucket: its flow queue and scheduling state.
#[derive(Debug, Clone, Copy)]
pub struct Bucket {
    head: u32,
    tail: u32,
    pkts: u32,
    bytes: u64,
    /// DRR byte credit (Linux fq_codel/fq_pie `deficit`, sfq `allot`, ns-2 `deficit_`).
    pub deficit: i64,
    next: u32,
    list: List,
    /// Sequence number of the last change of `pkts` (sfq's "most recently changed" tie rule).
    stamp: u64,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        head: NIL,
        tail: NIL,
        pkts: 0,
        bytes: 0,
        deficit: 0,
        next: NIL,
        list: List::None,
        stamp: 0,
    };
}

#[derive(Debug, Clone, Copy)]
struct ListHead {
    head: u32,
    tail: u32,
    len: u32,
}

impl ListHead {
    const EMPTY: ListHead = ListHead {
        head: NIL,
        tail: NIL,
        len: 0,
    };
}

#[derive(Debug, Clone)]
struct Slot<P> {
    pkt: Option<P>,
    prev: u32,
    next: u32,
}

/// The flow queues of a hashed qdisc: buckets, the packet pool, the two lists, totals and the
/// active-flow count (module docs).
#[derive(Debug, Clone)]
pub struct FlowQueues<P> {
    buckets: Vec<Bucket>,
    slots: Vec<Slot<P>>,
    free: u32,
    /// Capacity cap of `slots` (growth never reserves beyond it).
    max_slots: usize,
    hasher: FlowHasher,
    lists: [ListHead; 2],
    len_pkts: usize,
    len_bytes: u64,
    active: u32,
    peak: u32,
    area: u128,
    area_at: Instant,
    seq: u64,
    scratch: Vec<u32>,
}

impl<P: Packet> FlowQueues<P> {
    /// `n` empty buckets hashed with perturbation `key`; `pool_hint` slots are reserved up
    /// front; the pool grows on demand (doubling) but never reserves more than `max_slots`.
    pub fn new(n: u32, key: u64, pool_hint: usize, max_slots: usize) -> FlowQueues<P> {
        FlowQueues {
            buckets: vec![Bucket::EMPTY; n.max(1) as usize],
            slots: Vec::with_capacity(pool_hint.min(max_slots)),
            free: NIL,
            max_slots,
            hasher: FlowHasher::new(key, n),
            lists: [ListHead::EMPTY; 2],
            len_pkts: 0,
            len_bytes: 0,
            active: 0,
            peak: 0,
            area: 0,
            area_at: Instant::ZERO,
            seq: 0,
            scratch: Vec::new(),
        }
    }

    /// Number of buckets.
    #[inline]
    pub fn num_buckets(&self) -> usize {
        self.buckets.len()
    }
    /// The bucket of flow hash `h`.
    #[inline]
    pub fn bucket_of(&self, h: u64) -> usize {
        self.hasher.bucket(h)
    }
    /// The hasher.
    pub fn hasher(&self) -> FlowHasher {
        self.hasher
    }
    /// Packets stored in all buckets.
    #[inline]
    pub fn len_pkts(&self) -> usize {
        self.len_pkts
    }
    /// Bytes stored in all buckets.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }
    /// Packets in bucket `b`.
    #[inline]
    pub fn pkts(&self, b: usize) -> u32 {
        self.buckets[b].pkts
    }
    /// Bytes in bucket `b`.
    #[inline]
    pub fn bytes(&self, b: usize) -> u64 {
        self.buckets[b].bytes
    }
    /// Bucket `b`'s record.
    #[inline]
    pub fn bucket(&self, b: usize) -> &Bucket {
        &self.buckets[b]
    }
    /// Bucket `b`'s DRR credit.
    #[inline]
    pub fn deficit(&self, b: usize) -> i64 {
        self.buckets[b].deficit
    }
    /// Sets bucket `b`'s DRR credit.
    #[inline]
    pub fn set_deficit(&mut self, b: usize, d: i64) {
        self.buckets[b].deficit = d;
    }
    /// The list bucket `b` is on.
    #[inline]
    pub fn list_of(&self, b: usize) -> List {
        self.buckets[b].list
    }
    /// The head packet of bucket `b`.
    #[inline]
    pub fn head(&self, b: usize) -> Option<&P> {
        let s = self.buckets[b].head;
        if s == NIL {
            None
        } else {
            self.slots[s as usize].pkt.as_ref()
        }
    }
    /// The tail packet of bucket `b`.
    #[inline]
    pub fn tail(&self, b: usize) -> Option<&P> {
        let s = self.buckets[b].tail;
        if s == NIL {
            None
        } else {
            self.slots[s as usize].pkt.as_ref()
        }
    }

    // ----- active flows -----

    /// Backlogged flow queues now.
    #[inline]
    pub fn active(&self) -> u32 {
        self.active
    }
    /// Largest [`FlowQueues::active`] since construction or the last
    /// [`FlowQueues::reset_peak`].
    pub fn peak(&self) -> u32 {
        self.peak
    }
    /// Restarts the peak from the current value (end of a warm-up).
    pub fn reset_peak(&mut self) {
        self.peak = self.active;
    }
    /// Integral of [`FlowQueues::active`] over time up to `now`, flow x ns.
    pub fn active_area(&self, now: Instant) -> u128 {
        self.area + self.active as u128 * now.0.saturating_sub(self.area_at.0) as u128
    }
    #[inline]
    fn account(&mut self, now: Instant) {
        if now > self.area_at {
            self.area += self.active as u128 * (now.0 - self.area_at.0) as u128;
            self.area_at = now;
        }
    }

    // ----- packets -----

    fn alloc(&mut self, pkt: P) -> u32 {
        if self.free != NIL {
            let s = self.free;
            let slot = &mut self.slots[s as usize];
            self.free = slot.next;
            slot.pkt = Some(pkt);
            slot.prev = NIL;
            slot.next = NIL;
            s
        } else {
            let len = self.slots.len();
            if len == self.slots.capacity() {
                // Double, but not beyond the limit's need: the pool's capacity stays within
                // the buffer (plus one) for a packet limit.
                let want = len
                    .saturating_mul(2)
                    .max(16)
                    .min(self.max_slots)
                    .max(len + 1);
                self.slots.reserve_exact(want - len);
            }
            let s = len as u32;
            self.slots.push(Slot {
                pkt: Some(pkt),
                prev: NIL,
                next: NIL,
            });
            s
        }
    }

    #[inline]
    fn release(&mut self, s: u32) -> P {
        let slot = &mut self.slots[s as usize];
        let p = slot.pkt.take().expect("linked slot holds a packet");
        slot.next = self.free;
        slot.prev = NIL;
        self.free = s;
        p
    }

    /// Links slot `s` (holding a packet of `size` bytes) at the tail of bucket `b`.
    #[inline]
    fn link_tail(&mut self, now: Instant, b: usize, s: u32, size: u32) {
        let bk = &mut self.buckets[b];
        let old_tail = bk.tail;
        self.slots[s as usize].prev = old_tail;
        self.slots[s as usize].next = NIL;
        let bk = &mut self.buckets[b];
        if old_tail == NIL {
            bk.head = s;
        } else {
            self.slots[old_tail as usize].next = s;
        }
        let bk = &mut self.buckets[b];
        bk.tail = s;
        bk.pkts += 1;
        bk.bytes += size as u64;
        self.seq += 1;
        bk.stamp = self.seq;
        let became_active = bk.pkts == 1;
        self.len_pkts += 1;
        self.len_bytes += size as u64;
        if became_active {
            self.account(now);
            self.active += 1;
            self.peak = self.peak.max(self.active);
        }
    }

    /// Bookkeeping after slot of `size` bytes left bucket `b`.
    #[inline]
    fn unlinked(&mut self, now: Instant, b: usize, size: u32) {
        let bk = &mut self.buckets[b];
        bk.pkts -= 1;
        bk.bytes -= size as u64;
        self.seq += 1;
        bk.stamp = self.seq;
        let emptied = bk.pkts == 0;
        self.len_pkts -= 1;
        self.len_bytes -= size as u64;
        if emptied {
            self.account(now);
            self.active -= 1;
        }
    }

    /// Appends `pkt` to bucket `b`'s flow queue (the caller stamps its enqueue time first).
    #[inline]
    pub fn push(&mut self, now: Instant, b: usize, pkt: P) {
        let size = pkt.size_bytes();
        let s = self.alloc(pkt);
        self.link_tail(now, b, s, size);
    }

    /// Removes the head packet of bucket `b`.
    #[inline]
    pub fn pop_head(&mut self, now: Instant, b: usize) -> Option<P> {
        let s = self.buckets[b].head;
        if s == NIL {
            return None;
        }
        let next = self.slots[s as usize].next;
        let bk = &mut self.buckets[b];
        bk.head = next;
        if next == NIL {
            bk.tail = NIL;
        } else {
            self.slots[next as usize].prev = NIL;
        }
        let p = self.release(s);
        self.unlinked(now, b, p.size_bytes());
        Some(p)
    }

    /// Removes the tail packet of bucket `b` (sfq's and ns-2 sfqcodel's tail drop).
    pub fn pop_tail(&mut self, now: Instant, b: usize) -> Option<P> {
        let s = self.buckets[b].tail;
        if s == NIL {
            return None;
        }
        let prev = self.slots[s as usize].prev;
        let bk = &mut self.buckets[b];
        bk.tail = prev;
        if prev == NIL {
            bk.head = NIL;
        } else {
            self.slots[prev as usize].next = NIL;
        }
        let p = self.release(s);
        self.unlinked(now, b, p.size_bytes());
        Some(p)
    }

    /// The first slot of bucket `b`'s queue ([`NIL`] if empty); [`FlowQueues::next_slot`]
    /// walks it head to tail (CAKE's ACK filter).
    #[inline]
    pub fn head_slot(&self, b: usize) -> u32 {
        self.buckets[b].head
    }
    /// The tail slot of bucket `b`'s queue ([`NIL`] if empty).
    #[inline]
    pub fn tail_slot(&self, b: usize) -> u32 {
        self.buckets[b].tail
    }
    /// The slot after `s` in its queue ([`NIL`] at the tail).
    #[inline]
    pub fn next_slot(&self, s: u32) -> u32 {
        self.slots[s as usize].next
    }
    /// The packet in slot `s` (a linked slot).
    #[inline]
    pub fn packet_at(&self, s: u32) -> &P {
        self.slots[s as usize]
            .pkt
            .as_ref()
            .expect("linked slot holds a packet")
    }
    /// Removes the packet in slot `s` of bucket `b`, wherever it is in the queue.
    pub fn remove_slot(&mut self, now: Instant, b: usize, s: u32) -> P {
        let (prev, next) = (self.slots[s as usize].prev, self.slots[s as usize].next);
        if prev == NIL {
            self.buckets[b].head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            self.buckets[b].tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
        let p = self.release(s);
        self.unlinked(now, b, p.size_bytes());
        p
    }

    /// Slots in the pool: the high-water mark of packets stored at once.
    pub fn pool_slots(&self) -> usize {
        self.slots.len()
    }

    /// Changes the pool's capacity cap (a new limit while running).
    pub fn set_pool_max(&mut self, max_slots: usize) {
        self.max_slots = max_slots;
    }

    /// Bytes of one pool slot (a packet and its two links).
    pub const fn slot_bytes() -> usize {
        std::mem::size_of::<Slot<P>>()
    }

    /// Bytes of state held: the pool's capacity, the bucket array and the lists' scratch.
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot<P>>()
            + self.buckets.capacity() * std::mem::size_of::<Bucket>()
            + self.scratch.capacity() * std::mem::size_of::<u32>()
    }

    // ----- lists -----

    #[inline]
    fn lh(&self, l: List) -> &ListHead {
        match l {
            List::New => &self.lists[0],
            List::Old => &self.lists[1],
            List::None => unreachable!("List::None has no head"),
        }
    }
    #[inline]
    fn lh_mut(&mut self, l: List) -> &mut ListHead {
        match l {
            List::New => &mut self.lists[0],
            List::Old => &mut self.lists[1],
            List::None => unreachable!("List::None has no head"),
        }
    }

    /// The deficit round robin turn of RFC 8290 §4.2 (Linux `fq_codel_dequeue`): the front
    /// bucket of new_flows, else of old_flows, with credit left (`deficit > 0`); a front
    /// bucket without credit gets `quantum` bytes more and moves to the tail of old_flows.
    /// `None` when both lists are empty.
    #[inline]
    pub fn next_with_credit(&mut self, quantum: i64) -> Option<(List, usize)> {
        loop {
            let (list, b) = match self.front(List::New) {
                Some(b) => (List::New, b),
                None => (List::Old, self.front(List::Old)?),
            };
            let d = self.deficit(b);
            if d > 0 {
                return Some((list, b));
            }
            self.set_deficit(b, d + quantum);
            self.move_front_to_old(list);
        }
    }

    /// The front bucket of `list` was found empty: from new_flows it passes through
    /// old_flows when that list is non-empty (against starvation, RFC 8290 §4.2), else it
    /// leaves the lists.
    #[inline]
    pub fn retire_empty_front(&mut self, list: List) {
        if list == List::New && !self.list_is_empty(List::Old) {
            self.move_front_to_old(List::New);
        } else {
            self.pop_front(list);
        }
    }

    /// The first bucket of list `l`.
    #[inline]
    pub fn front(&self, l: List) -> Option<usize> {
        let h = self.lh(l).head;
        (h != NIL).then_some(h as usize)
    }
    /// Buckets on list `l`.
    #[inline]
    pub fn list_len(&self, l: List) -> u32 {
        self.lh(l).len
    }
    /// True if list `l` is empty.
    #[inline]
    pub fn list_is_empty(&self, l: List) -> bool {
        self.lh(l).head == NIL
    }

    /// Appends bucket `b` (on no list) to list `l`.
    #[inline]
    pub fn push_back(&mut self, l: List, b: usize) {
        debug_assert_eq!(self.buckets[b].list, List::None);
        self.buckets[b].list = l;
        self.buckets[b].next = NIL;
        let tail = self.lh(l).tail;
        if tail == NIL {
            self.lh_mut(l).head = b as u32;
        } else {
            self.buckets[tail as usize].next = b as u32;
        }
        let h = self.lh_mut(l);
        h.tail = b as u32;
        h.len += 1;
    }

    /// Removes the first bucket of list `l` (it is then on no list).
    #[inline]
    pub fn pop_front(&mut self, l: List) -> Option<usize> {
        let b = self.lh(l).head;
        if b == NIL {
            return None;
        }
        let next = self.buckets[b as usize].next;
        let h = self.lh_mut(l);
        h.head = next;
        if next == NIL {
            h.tail = NIL;
        }
        h.len -= 1;
        let bk = &mut self.buckets[b as usize];
        bk.next = NIL;
        bk.list = List::None;
        Some(b as usize)
    }

    /// Moves the first bucket of list `from` to the back of the old list (Linux
    /// `list_move_tail(&flow->flowchain, &q->old_flows)`).
    #[inline]
    pub fn move_front_to_old(&mut self, from: List) {
        if let Some(b) = self.pop_front(from) {
            self.push_back(List::Old, b);
        }
    }

    /// The buckets of list `l`, front to back (tests and inspection).
    pub fn list_order(&self, l: List) -> Vec<usize> {
        let mut v = Vec::new();
        let mut b = self.lh(l).head;
        while b != NIL {
            v.push(b as usize);
            b = self.buckets[b as usize].next;
        }
        v
    }

    // ----- the fattest flow -----

    /// One round of Linux `fq_codel_drop` (ns-3 `FqCoDelDrop`, `FqCobaltDrop`): drops from the
    /// head of bucket `fat` until half of its bytes or `batch` packets are gone. Victims go to
    /// `on_victim`; if the round reaches the arrival (the tail of bucket `arrival_bucket`,
    /// when that is `fat`), it is returned instead of dropped. Returns the packets taken
    /// (victims and the arrival) and the arrival.
    pub fn drop_half_of(
        &mut self,
        now: Instant,
        fat: usize,
        arrival_bucket: usize,
        batch: u32,
        on_victim: &mut impl FnMut(P),
    ) -> (u32, Option<P>)
    where
        P: Packet,
    {
        let threshold = self.bytes(fat) / 2;
        let (mut len, mut taken, mut arrival) = (0u64, 0u32, None);
        while let Some(p) = self.pop_head(now, fat) {
            len += p.size_bytes() as u64;
            taken += 1;
            if fat == arrival_bucket && self.pkts(fat) == 0 {
                // The batch reached the arrival, its flow's tail.
                arrival = Some(p);
            } else {
                on_victim(p);
            }
            if taken >= batch || len >= threshold {
                break;
            }
        }
        (taken, arrival)
    }

    /// The bucket with the most bytes, ties to the lowest index (Linux `fq_codel_drop`'s scan
    /// of `backlogs[]` with a strict `>`); `None` if all are empty.
    pub fn fattest_by_bytes(&self) -> Option<usize> {
        let mut best = None;
        let mut most = 0u64;
        for (i, b) in self.buckets.iter().enumerate() {
            if b.bytes > most {
                most = b.bytes;
                best = Some(i);
            }
        }
        best
    }

    /// The bucket with the most packets, ties to the one whose length changed last: the head
    /// of Linux sfq's `dep[cur_depth]` chain (`sfq_inc`/`sfq_dec` relink a slot at the head of
    /// its depth's chain at every change). `None` if all are empty.
    pub fn fattest_by_packets_latest(&self) -> Option<usize> {
        let mut best = None;
        let mut key = (0u32, 0u64);
        for (i, b) in self.buckets.iter().enumerate() {
            if b.pkts > 0 && (b.pkts, b.stamp) > key {
                key = (b.pkts, b.stamp);
                best = Some(i);
            }
        }
        best
    }

    /// ns-2 sfqcodel's scan (`enque`, full buffer): starting from the previous choice `prev`,
    /// every other bucket on a list with at least as many packets replaces the candidate (so
    /// ties go to the highest index other than `prev`).
    pub fn fattest_by_packets_ns2(&self, prev: usize) -> usize {
        let mut m = prev.min(self.buckets.len() - 1);
        for (j, b) in self.buckets.iter().enumerate() {
            if j != prev && b.list != List::None && b.pkts >= self.buckets[m].pkts {
                m = j;
            }
        }
        m
    }

    // ----- perturbation -----

    /// Re-hashes every stored packet with the new perturbation `key` (Linux `sfq_rehash`):
    /// the flow queues are taken in service order (list `New`, then `Old`, each front to
    /// back, packets head to tail) and appended to their new buckets; a bucket that receives
    /// its first packet joins the back of the `Old` list with credit `quantum`. Packets keep
    /// their relative order within a flow and none is dropped.
    pub fn rehash(&mut self, now: Instant, key: u64, quantum: i64) {
        self.account(now);
        self.hasher = FlowHasher::new(key, self.buckets.len() as u32);
        let mut order = std::mem::take(&mut self.scratch);
        order.clear();
        for l in [List::New, List::Old] {
            let mut b = self.lh(l).head;
            while b != NIL {
                let mut s = self.buckets[b as usize].head;
                while s != NIL {
                    order.push(s);
                    s = self.slots[s as usize].next;
                }
                b = self.buckets[b as usize].next;
            }
        }
        debug_assert_eq!(
            order.len(),
            self.len_pkts,
            "every packet's bucket is on a list"
        );
        for bk in &mut self.buckets {
            *bk = Bucket {
                deficit: bk.deficit,
                ..Bucket::EMPTY
            };
        }
        self.lists = [ListHead::EMPTY; 2];
        self.active = 0;
        self.len_pkts = 0;
        self.len_bytes = 0;
        for &s in &order {
            let p = self.slots[s as usize].pkt.as_ref().expect("stored");
            let (h, size) = (p.flow_hash(), p.size_bytes());
            let b = self.hasher.bucket(h);
            self.link_tail(now, b, s, size);
            if self.buckets[b].pkts == 1 {
                self.buckets[b].deficit = quantum;
                self.push_back(List::Old, b);
            }
        }
        self.scratch = order;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TestPacket;

    fn pkt(id: u64, flow: u64, size: u32) -> TestPacket {
        TestPacket::new(id, size).flow(flow)
    }

    #[test]
    fn pool_reuses_slots_and_keeps_fifo_order() {
        let mut fq = FlowQueues::<TestPacket>::new(4, 1, 0, usize::MAX);
        let t = Instant(0);
        for i in 0..3 {
            fq.push(t, 1, pkt(i, 0, 100));
        }
        fq.push(t, 2, pkt(9, 0, 50));
        assert_eq!((fq.len_pkts(), fq.len_bytes(), fq.active()), (4, 350, 2));
        assert_eq!(fq.pop_head(t, 1).unwrap().id, 0);
        assert_eq!(fq.pop_tail(t, 1).unwrap().id, 2);
        assert_eq!(fq.pop_head(t, 1).unwrap().id, 1);
        assert!(fq.pop_head(t, 1).is_none());
        assert_eq!(fq.active(), 1);
        // Freed slots are reused: the pool never exceeds the high-water mark (4).
        for i in 10..13 {
            fq.push(t, 3, pkt(i, 0, 10));
        }
        assert_eq!(fq.pool_slots(), 4);
        // The capacity cap: with max 5 slots the pool never reserves more than 5.
        let mut small = FlowQueues::<TestPacket>::new(4, 1, 0, 5);
        for i in 0..5 {
            small.push(t, 0, pkt(i, 0, 1));
        }
        assert!(small.memory_bytes() <= 5 * FlowQueues::<TestPacket>::slot_bytes() + 4 * 48);
        assert_eq!(fq.pop_head(t, 3).unwrap().id, 10);
        assert_eq!(fq.head(3).unwrap().id, 11);
        assert_eq!(fq.tail(3).unwrap().id, 12);
    }

    /// The per-bucket record stays small (docs/aqm/fq_codel.md quotes these sizes).
    #[test]
    fn record_sizes() {
        assert_eq!(std::mem::size_of::<Bucket>(), 48);
        assert_eq!(std::mem::size_of::<crate::codel::CodelVars>(), 40);
    }

    #[test]
    fn lists_fifo_and_moves() {
        let mut fq = FlowQueues::<TestPacket>::new(8, 1, 0, usize::MAX);
        fq.push_back(List::New, 3);
        fq.push_back(List::New, 5);
        fq.push_back(List::Old, 1);
        fq.move_front_to_old(List::New);
        assert_eq!(fq.list_order(List::New), vec![5]);
        assert_eq!(fq.list_order(List::Old), vec![1, 3]);
        assert_eq!(fq.pop_front(List::Old), Some(1));
        assert_eq!(fq.list_of(1), List::None);
        assert_eq!(fq.list_of(3), List::Old);
        assert_eq!((fq.list_len(List::Old), fq.list_len(List::New)), (1, 1));
    }

    /// Time integral and peak of the backlogged-flow count.
    #[test]
    fn active_area_is_exact() {
        let mut fq = FlowQueues::<TestPacket>::new(8, 1, 0, usize::MAX);
        fq.push(Instant(10), 0, pkt(0, 0, 1)); // 1 active from 10
        fq.push(Instant(20), 1, pkt(1, 0, 1)); // 2 active from 20
        fq.push(Instant(25), 1, pkt(2, 0, 1)); // still 2
        fq.pop_head(Instant(40), 0); // 1 active from 40
        assert_eq!(fq.active_area(Instant(50)), 10 + 2 * 20 + 10);
        assert_eq!(fq.peak(), 2);
        fq.reset_peak();
        assert_eq!(fq.peak(), 1);
    }

    #[test]
    fn fattest_rules() {
        let mut fq = FlowQueues::<TestPacket>::new(8, 1, 0, usize::MAX);
        let t = Instant(0);
        fq.push(t, 2, pkt(0, 0, 1000));
        fq.push(t, 5, pkt(1, 0, 600));
        fq.push(t, 5, pkt(2, 0, 400));
        // Bytes: a tie between 2 and 5 (1000 each) goes to the lower index.
        assert_eq!(fq.fattest_by_bytes(), Some(2));
        // Packets: 5 has 2.
        assert_eq!(fq.fattest_by_packets_latest(), Some(5));
        fq.push(t, 6, pkt(3, 0, 1));
        fq.push(t, 6, pkt(4, 0, 1));
        // 5 and 6 tie at 2 packets: 6 changed last.
        assert_eq!(fq.fattest_by_packets_latest(), Some(6));
        fq.push(t, 5, pkt(5, 0, 1));
        fq.pop_tail(t, 5);
        // 5 changed last (3 -> 2).
        assert_eq!(fq.fattest_by_packets_latest(), Some(5));
        // ns-2's scan only looks at buckets on a list; ties go to the highest other index.
        for b in [2, 5, 6] {
            fq.push_back(List::Old, b);
        }
        assert_eq!(fq.fattest_by_packets_ns2(0), 6);
        assert_eq!(fq.fattest_by_packets_ns2(6), 5);
        assert!(FlowQueues::<TestPacket>::new(4, 1, 0, usize::MAX)
            .fattest_by_bytes()
            .is_none());
    }

    /// The hash spreads flows over all buckets and depends on the key.
    #[test]
    fn hash_range_and_key() {
        let a = FlowHasher::new(1, 1024);
        let b = FlowHasher::new(2, 1024);
        let mut seen = vec![false; 1024];
        let mut differ = 0;
        for f in 0..20_000u64 {
            let x = a.bucket(f);
            assert!(x < 1024);
            seen[x] = true;
            differ += (x != b.bucket(f)) as u32;
        }
        assert!(seen.iter().all(|&s| s));
        assert!(differ > 19_000);
        assert_eq!(FlowHasher::new(7, 1).bucket(123), 0);
    }

    #[test]
    fn rehash_moves_every_packet_in_order() {
        let mut fq = FlowQueues::<TestPacket>::new(16, 1, 0, usize::MAX);
        let t = Instant(0);
        for i in 0..40u64 {
            let flow = i % 5;
            let b = fq.bucket_of(flow);
            if fq.pkts(b) == 0 {
                fq.push_back(List::Old, b);
            }
            fq.push(t, b, pkt(i, flow, 100 + flow as u32));
        }
        let before = (fq.len_pkts(), fq.len_bytes());
        fq.rehash(Instant(5), 99, 1500);
        assert_eq!((fq.len_pkts(), fq.len_bytes()), before);
        // Every flow's packets are in the new bucket of that flow, in order.
        let mut got = Vec::new();
        while let Some(b) = fq.pop_front(List::Old) {
            assert_eq!(fq.deficit(b), 1500);
            let mut last = None;
            while let Some(p) = fq.pop_head(t, b) {
                assert_eq!(fq.hasher().bucket(p.flow), b);
                if let Some(l) = last {
                    assert!(p.id > l);
                }
                last = Some(p.id);
                got.push(p.id);
            }
        }
        got.sort_unstable();
        assert_eq!(got, (0..40).collect::<Vec<_>>());
        assert_eq!(fq.active(), 0);
    }
}
