//! The packet abstraction the queue wrapper is generic over.

use crate::time::Instant;

/// The ECN codepoint of the IP header (RFC 3168 §5; ECT(1) as the L4S identifier, RFC 9331).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// Not ECN-capable transport (`00`).
    #[default]
    NotEct,
    /// ECN-capable transport, codepoint ECT(1) (`01`).
    Ect1,
    /// ECN-capable transport, codepoint ECT(0) (`10`).
    Ect0,
    /// Congestion Experienced (`11`).
    Ce,
}

impl Ecn {
    /// True for ECT(0), ECT(1) and CE (a CE packet came from an ECN-capable sender).
    #[inline]
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// The TCP header fields of a packet that CAKE's ACK filter reads (Linux `cake_ack_filter`,
/// `cake_tcph_may_drop`, `cake_tcph_sack_compare`). Sequence numbers are compared modulo 2^32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpAck {
    /// The connection and direction (the 5-tuple): only ACKs with equal keys are compared.
    pub conn: u64,
    /// A pure ACK Linux may drop: the ACK flag and no other (ECE and CWR aside), no payload,
    /// and no options but SACK, timestamps and MD5.
    pub pure: bool,
    /// The ECE and CWR flags (bit 0 ECE, bit 1 CWR).
    pub ece_cwr: u8,
    /// The cumulative acknowledgement number.
    pub ack_seq: u32,
    /// SACK blocks `[start, end)`; the first `n_sack` are present.
    pub sack: [(u32, u32); 4],
    /// Number of SACK blocks.
    pub n_sack: u8,
    /// Timestamps option `(TSval, TSecr)`, if present.
    pub ts: Option<(u32, u32)>,
}

/// What a queue discipline needs to know about (and do to) a packet.
///
/// Implemented by the simulator's packet handle and, later, by a real IP packet buffer.
/// All methods are expected to be cheap (field reads/writes).
pub trait Packet {
    /// Size on the wire in bytes (the unit of byte limits and rate estimators).
    fn size_bytes(&self) -> u32;
    /// A hash of the flow key (e.g. 5-tuple); used by SRED's zombie list and by flow schedulers.
    fn flow_hash(&self) -> u64;
    /// True if the packet is ECN-capable (ECT(0), ECT(1) or CE, RFC 3168 §5).
    fn ecn_capable(&self) -> bool;
    /// The ECN codepoint (classifiers such as DualPI2's use it). The default derives ECT(0)
    /// or Not-ECT from [`Packet::ecn_capable`]; packet types that know their codepoint
    /// (the simulator's, a real IP header) override it. Must agree with `ecn_capable`.
    #[inline]
    fn ecn(&self) -> Ecn {
        if self.ecn_capable() {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }
    /// Set the CE codepoint (RFC 3168 §5). Only called on ECN-capable packets.
    fn set_ce(&mut self);
    /// The class index a class-based scheduler files the packet under (e.g. [`crate::drr`]:
    /// the position of the class in its config's list). Indices the scheduler does not have,
    /// and packets of types without classes (the default, 0), go to its first class.
    #[inline]
    fn class(&self) -> u8 {
        0
    }
    /// The Differentiated Services codepoint (RFC 2474 §3: the six high bits of the IPv4 TOS
    /// byte, 0..=63; [`crate::dscp`] names them). Diffserv-aware qdiscs (CAKE's tins) read it;
    /// packet types that do not carry one are best effort (0, the default).
    #[inline]
    fn dscp(&self) -> u8 {
        0
    }
    /// Rewrite the codepoint (CAKE's `wash`); packet types without one ignore it (the
    /// default).
    #[inline]
    fn set_dscp(&mut self, _dscp: u8) {}
    /// The sending host, as an opaque key (CAKE's host isolation hashes it). The default,
    /// for packet types that do not know their hosts, is the flow hash: each flow its own
    /// host.
    #[inline]
    fn src_host(&self) -> u64 {
        self.flow_hash()
    }
    /// The receiving host, as an opaque key (CAKE's host isolation). Default: the flow hash.
    #[inline]
    fn dst_host(&self) -> u64 {
        self.flow_hash()
    }
    /// The TCP ACK fields of a TCP segment with the ACK flag (and without SYN), for CAKE's
    /// ACK filter; `None` (the default) for anything else or packet types that do not carry
    /// them.
    #[inline]
    fn tcp_ack(&self) -> Option<TcpAck> {
        None
    }
    /// The time the queue stamped on enqueue.
    fn enqueued_at(&self) -> Instant;
    /// Stamp the enqueue time (called by the queue wrapper).
    fn set_enqueued_at(&mut self, t: Instant);
}
