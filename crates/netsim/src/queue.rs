//! The egress queue of a link: an [`aqm::Qdisc`] over simulator packets.

use crate::engine::Ns;
use crate::packet::{Packet, F_ACK, F_CE, F_CWR, F_ECE, F_ECT};
use aqm::Instant;

impl aqm::Packet for Packet {
    #[inline]
    fn size_bytes(&self) -> u32 {
        self.size
    }
    #[inline]
    fn flow_hash(&self) -> u64 {
        experiment::rng::splitmix64(self.flow as u64)
    }
    #[inline]
    fn ecn_capable(&self) -> bool {
        self.has(F_ECT)
    }
    #[inline]
    fn ecn(&self) -> aqm::Ecn {
        Packet::ecn(self)
    }
    #[inline]
    fn class(&self) -> u8 {
        Packet::class(self)
    }
    #[inline]
    fn dscp(&self) -> u8 {
        Packet::dscp(self)
    }
    #[inline]
    fn set_dscp(&mut self, d: u8) {
        Packet::set_dscp(self, d)
    }
    /// The sending node of a stamped packet ([`Packet::src_node`]: a data packet's sender,
    /// an ACK's receiver); an unstamped packet counts as a host of its own flow.
    #[inline]
    fn src_host(&self) -> u64 {
        match self.src_node() {
            Some(n) => n as u64,
            None => aqm::Packet::flow_hash(self),
        }
    }
    /// The destination node.
    #[inline]
    fn dst_host(&self) -> u64 {
        self.dst as u64
    }
    /// A pure ACK's header as CAKE's ACK filter reads it: its flow is the connection, the
    /// cumulative ACK and SACK blocks in segments, the timestamp echo (TSecr, in us mod
    /// 2^32; TSval 0: a flow's ACKs reach a queue in the order they were sent, so Linux's
    /// TSval test always passes here). AccECN's option and its AE bit make it not pure.
    #[inline]
    fn tcp_ack(&self) -> Option<aqm::TcpAck> {
        use crate::tcp::accecn::{ACE_MASK, ACE_SHIFT, F_ACCECN_OPT};
        if !self.has(F_ACK) {
            return None;
        }
        let ace = (self.flags >> ACE_SHIFT) & ACE_MASK;
        let opt = self.has(F_ACCECN_OPT);
        let mut a = aqm::TcpAck {
            conn: self.flow as u64,
            pure: !opt && ace & 4 == 0,
            ece_cwr: (self.has(F_ECE) || ace & 1 != 0) as u8
                | (((self.has(F_CWR) || ace & 2 != 0) as u8) << 1),
            ack_seq: self.seq,
            ts: Some((0, (self.ts / 1000) as u32)),
            ..Default::default()
        };
        if !opt {
            for i in 0..3 {
                let (l, r) = (self.sack[2 * i], self.sack[2 * i + 1]);
                if r > l {
                    a.sack[a.n_sack as usize] = (
                        self.seq.wrapping_add(l as u32),
                        self.seq.wrapping_add(r as u32),
                    );
                    a.n_sack += 1;
                }
            }
        }
        Some(a)
    }
    #[inline]
    fn set_ce(&mut self) {
        self.flags |= F_CE;
    }
    #[inline]
    fn enqueued_at(&self) -> Instant {
        Instant(self.enq)
    }
    #[inline]
    fn set_enqueued_at(&mut self, t: Instant) {
        self.enq = t.0;
    }
}

/// Queue discipline type used at every egress: a FIFO with an AQM (the fast path) or a
/// scheduler with classes.
pub type Queue = aqm::Qdisc<Packet>;

/// Converts simulator time to the AQM crate's instant.
#[inline]
pub fn inst(ns: Ns) -> Instant {
    Instant(ns)
}

/// Largest storage (packet slots) a queue lends when it empties ([`SpareRings`]): an access
/// link's burst (an initial window of 10 queues 9), a switch port between bursts; a queue
/// that once held more (a bottleneck) keeps its own.
pub const SPARE_RING_SLOTS: usize = 64;

/// Packet storage of emptied queues, lent to the next queue that needs storage.
///
/// A queue that empties gives its storage here if it holds at most [`SPARE_RING_SLOTS`]
/// slots ([`aqm::Qdisc::release_storage`]); a queue with none that is about to store a
/// packet takes one ([`aqm::Qdisc::adopt_storage`]). So the hundreds of thousands of access
/// links of a large dumbbell, each of which queues a few packets now and then (an initial
/// window), hold storage only while they hold packets (a million flows: 0.43 GB of rings
/// kept after their bursts, now a few), and queues that fill and empty in turn (a fabric's
/// ports) allocate none: they reuse each other's. Storage is not behaviour: which ring a queue
/// gets changes nothing it does.
#[derive(Debug, Default)]
pub struct SpareRings {
    spare: Vec<std::collections::VecDeque<Packet>>,
}

impl SpareRings {
    /// Keeps `ring` (empty) for the next queue.
    #[inline]
    pub fn put(&mut self, ring: std::collections::VecDeque<Packet>) {
        debug_assert!(ring.is_empty());
        self.spare.push(ring);
    }
    /// A ring for a queue with none (`None` if there is no spare one).
    #[inline]
    pub fn take(&mut self) -> Option<std::collections::VecDeque<Packet>> {
        self.spare.pop()
    }
    /// Rings kept.
    pub fn len(&self) -> usize {
        self.spare.len()
    }
    /// True if no ring is kept.
    pub fn is_empty(&self) -> bool {
        self.spare.is_empty()
    }
}
