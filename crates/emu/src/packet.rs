//! A real IP packet as the `aqm` crate's [`aqm::Packet`]: the bytes read from a TUN device
//! plus the few fields the queue disciplines read, parsed once on arrival.

use aqm::{Ecn, Instant};

use crate::ipv4;

/// One packet in flight through the forwarder.
///
/// Invariant: `ecn`, `hash` describe `data` (parsed on arrival; [`aqm::Packet::set_ce`]
/// rewrites `data` and `ecn` together).
#[derive(Debug, Clone)]
pub struct IpPacket {
    /// The IP packet as read from the TUN device (no link-layer header).
    pub data: Vec<u8>,
    /// ECN codepoint of the IPv4 header (Not-ECT for other packets).
    pub ecn: Ecn,
    /// 5-tuple hash ([`ipv4::flow_hash`]).
    pub hash: u64,
    /// Class index of a class-based qdisc (from the flow group of the destination).
    pub class: u8,
    /// Enqueue time stamped by the queue, ns since the run's origin.
    pub enq: Instant,
}

impl IpPacket {
    /// Parses `data` (an IP packet) filed under class `class`.
    pub fn new(data: Vec<u8>, class: u8) -> Self {
        IpPacket {
            ecn: ipv4::ecn(&data),
            hash: ipv4::flow_hash(&data),
            data,
            class,
            enq: Instant(0),
        }
    }
}

impl aqm::Packet for IpPacket {
    #[inline]
    fn size_bytes(&self) -> u32 {
        self.data.len() as u32
    }
    #[inline]
    fn flow_hash(&self) -> u64 {
        self.hash
    }
    #[inline]
    fn ecn_capable(&self) -> bool {
        self.ecn.is_capable()
    }
    #[inline]
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    #[inline]
    fn set_ce(&mut self) {
        if ipv4::set_ce(&mut self.data) {
            self.ecn = Ecn::Ce;
        }
    }
    #[inline]
    fn class(&self) -> u8 {
        self.class
    }
    #[inline]
    fn dscp(&self) -> u8 {
        ipv4::dscp(&self.data)
    }
    #[inline]
    fn set_dscp(&mut self, d: u8) {
        ipv4::set_dscp(&mut self.data, d & 0x3f);
    }
    /// The IPv4 source address (CAKE's host isolation); the flow hash for non-IPv4.
    #[inline]
    fn src_host(&self) -> u64 {
        ipv4::src(&self.data).map_or(self.hash, |a| u32::from_be_bytes(a) as u64)
    }
    /// The IPv4 destination address; the flow hash for non-IPv4.
    #[inline]
    fn dst_host(&self) -> u64 {
        ipv4::dst(&self.data).map_or(self.hash, |a| u32::from_be_bytes(a) as u64)
    }
    /// The TCP header's ACK fields for CAKE's ACK filter ([`crate::tcp`]); read from the
    /// bytes at each call (CAKE asks only with `ack-filter` on).
    #[inline]
    fn tcp_ack(&self) -> Option<aqm::TcpAck> {
        crate::tcp::tcp_ack(&self.data)
    }
    #[inline]
    fn enqueued_at(&self) -> Instant {
        self.enq
    }
    #[inline]
    fn set_enqueued_at(&mut self, t: Instant) {
        self.enq = t;
    }
}
