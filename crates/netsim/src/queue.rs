//! The egress queue of a link: an [`aqm::Qdisc`] over simulator packets.

use crate::engine::Ns;
use crate::packet::{Packet, F_CE, F_ECT};
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
    /// The sending node of a stamped data packet ([`Packet::src_node`]); an ACK (or an
    /// unstamped packet) counts as a host of its own flow.
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
