//! The packet abstraction the queue wrapper is generic over.

use crate::time::Instant;

/// What a queue discipline needs to know about (and do to) a packet.
///
/// Implemented by the simulator's packet handle and, later, by a real IP packet buffer.
/// All methods are expected to be cheap (field reads/writes).
pub trait Packet {
    /// Size on the wire in bytes (the unit of byte limits and rate estimators).
    fn size_bytes(&self) -> u32;
    /// A hash of the flow key (e.g. 5-tuple); used by SRED's zombie list and by flow schedulers.
    fn flow_hash(&self) -> u64;
    /// True if the packet is ECN-capable (ECT(0) or ECT(1), RFC 3168 §5).
    fn ecn_capable(&self) -> bool;
    /// Set the CE codepoint (RFC 3168 §5). Only called on ECN-capable packets.
    fn set_ce(&mut self);
    /// The time the queue stamped on enqueue.
    fn enqueued_at(&self) -> Instant;
    /// Stamp the enqueue time (called by the queue wrapper).
    fn set_enqueued_at(&mut self, t: Instant);
}
