//! The simulated packet.
//!
//! Packets are small `Copy` structs (48 bytes) moved by value through queues
//! and propagation rings rather than living in a slab addressed by an id.
//! Why: every container that holds them (the queue discipline's FIFO, a
//! link's pipe ring, the scratch buffers of the event handler) is a
//! `VecDeque`/`Vec` that reaches its high-water mark early and is reused, so
//! there is no heap allocation per packet per hop either way; by-value
//! packets avoid a slab's free-list bookkeeping, a second indirection on every
//! access, and the "who frees it" question at every drop site (queue, AQM,
//! random loss), which is where conservation bugs usually hide.

/// This is a pure ACK (otherwise a data segment or a UDP datagram).
pub const F_ACK: u32 = 1 << 0;
/// ECN-capable transport, RFC 3168 §5: ECT(0), or ECT(1) together with [`F_ECT1`]. The
/// codepoint ([`Packet::ecn`]) is Not-ECT without this bit, CE with [`F_CE`].
pub const F_ECT: u32 = 1 << 1;
/// Congestion Experienced, RFC 3168 §5.
pub const F_CE: u32 = 1 << 2;
/// ECN-Echo in the TCP header, RFC 3168 §6.1.
pub const F_ECE: u32 = 1 << 3;
/// Congestion Window Reduced in the TCP header, RFC 3168 §6.1.
pub const F_CWR: u32 = 1 << 4;
/// Data: this segment is a retransmission. ACK: the echoed timestamp belongs
/// to a retransmission (Karn's rule: no RTT sample).
pub const F_RETX: u32 = 1 << 5;
/// UDP datagram.
pub const F_UDP: u32 = 1 << 6;
/// Internal: CE was already set when the packet entered the current queue
/// (used to count marks made by this hop only).
pub const F_CE_IN: u32 = 1 << 7;

/// With [`F_ECT`]: the codepoint is ECT(1) (RFC 9331's L4S identifier) instead of ECT(0).
/// TCP sends ECT(0).
pub const F_ECT1: u32 = 1 << 8;
/// The packet carries the node that sent it ([`Packet::src_node`]), for CAKE's host
/// isolation: a data or UDP packet in `sack[4..6]` (stamped when it leaves its endpoint), an
/// ACK (whose `sack` holds SACK blocks) in `enq`, written as it is forwarded onto a link
/// running `cake` and valid until that queue stamps its enqueue time. Only when some link
/// runs `cake`.
pub const F_SRC: u32 = 1 << 13;
/// The class index lives in bits 16..24 of `flags` ([`Packet::class`]).
pub const CLASS_SHIFT: u32 = 16;
const CLASS_MASK: u32 = 0xff << CLASS_SHIFT;
/// The DSCP (RFC 2474 §3, six bits) lives in bits 24..30 of `flags` ([`Packet::dscp`]).
pub const DSCP_SHIFT: u32 = 24;
const DSCP_MASK: u32 = 0x3f << DSCP_SHIFT;

pub use experiment::config::HEADER_BYTES;

/// A packet in flight (48 bytes).
///
/// Sequence numbers are in **segments** (ns-2 style): data segment `k` carries
/// payload bytes `[k * mss, (k + 1) * mss)` of its flow; an ACK carries the
/// next expected segment number (cumulative).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Packet {
    /// Flow index (into the simulation's flow table).
    pub flow: u32,
    /// Data: segment number. ACK: cumulative acknowledgement (next expected
    /// segment). UDP: datagram number.
    pub seq: u32,
    /// Size on the wire in bytes, IP header included.
    pub size: u32,
    /// Destination node index.
    pub dst: u32,
    /// Data: sender timestamp (ns). ACK: echoed timestamp of the segment that
    /// triggered it (RFC 7323 §4.3 style, TS.Recent).
    pub ts: u64,
    /// Time (ns) the packet entered the queue it is currently in.
    pub enq: u64,
    /// Flag bits `F_*` (bits 0..9 and 12), the class index (bits 16..24, see
    /// [`Packet::class`]) and the DSCP (bits 24..30, see [`Packet::dscp`]). One word rather than a separate class field keeps the packet at
    /// 48 bytes and the endpoints' struct literals unchanged.
    pub flags: u32,
    /// ACK with SACK (RFC 2018): up to three blocks `[ack + sack[2i],
    /// ack + sack[2i+1])` of segments received above the cumulative ACK,
    /// as offsets from `seq`; an empty block is `(0, 0)`. Offsets are 16
    /// bits (windows beyond 65 535 segments are not SACKed).
    pub sack: [u16; 6],
}

impl Packet {
    /// True if flag bit(s) `f` are set.
    #[inline]
    pub fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }

    /// The class index a class-based qdisc files the packet under: the position of its flow
    /// group's `class` in the scheduler's class list, 0 (the first class) if unclassified.
    /// Set once when an endpoint emits the packet (`Simulation::emit`).
    #[inline]
    pub fn class(&self) -> u8 {
        ((self.flags & CLASS_MASK) >> CLASS_SHIFT) as u8
    }

    /// Sets the class index.
    #[inline]
    pub fn set_class(&mut self, c: u8) {
        self.flags = (self.flags & !CLASS_MASK) | ((c as u32) << CLASS_SHIFT);
    }

    /// The Differentiated Services codepoint (0..=63): its flow group's `dscp`, set once when
    /// an endpoint emits the packet (`Simulation::emit`), 0 (best effort) without one.
    #[inline]
    pub fn dscp(&self) -> u8 {
        ((self.flags & DSCP_MASK) >> DSCP_SHIFT) as u8
    }

    /// Sets the DSCP (the low six bits of `d`).
    #[inline]
    pub fn set_dscp(&mut self, d: u8) {
        self.flags = (self.flags & !DSCP_MASK) | (((d & 0x3f) as u32) << DSCP_SHIFT);
    }

    /// The node that sent this packet, if stamped ([`F_SRC`]; an ACK's only until its queue
    /// stamps the enqueue time).
    #[inline]
    pub fn src_node(&self) -> Option<u32> {
        if !self.has(F_SRC) {
            None
        } else if self.has(F_ACK) {
            Some(self.enq as u32)
        } else {
            Some(self.sack[4] as u32 | (self.sack[5] as u32) << 16)
        }
    }

    /// Stamps the node that sent an ACK (its flow's receiver) as it is forwarded onto a link
    /// running `cake` ([`F_SRC`]); other packets are left alone.
    #[inline]
    pub fn set_ack_src_node(&mut self, n: u32) {
        if self.has(F_ACK) {
            self.enq = n as u64;
            self.flags |= F_SRC;
        }
    }

    /// Stamps the sending node on a data or UDP packet (ACKs are left alone).
    #[inline]
    pub fn set_src_node(&mut self, n: u32) {
        if !self.has(F_ACK) {
            self.sack[4] = n as u16;
            self.sack[5] = (n >> 16) as u16;
            self.flags |= F_SRC;
        }
    }

    /// The ECN codepoint derived from the flags.
    #[inline]
    pub fn ecn(&self) -> aqm::Ecn {
        if self.has(F_CE) {
            aqm::Ecn::Ce
        } else if self.has(F_ECT) {
            if self.has(F_ECT1) {
                aqm::Ecn::Ect1
            } else {
                aqm::Ecn::Ect0
            }
        } else {
            aqm::Ecn::NotEct
        }
    }
}
