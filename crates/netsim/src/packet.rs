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
pub const F_ACK: u8 = 1 << 0;
/// ECN-capable transport (ECT(0)), RFC 3168 §5.
pub const F_ECT: u8 = 1 << 1;
/// Congestion Experienced, RFC 3168 §5.
pub const F_CE: u8 = 1 << 2;
/// ECN-Echo in the TCP header, RFC 3168 §6.1.
pub const F_ECE: u8 = 1 << 3;
/// Congestion Window Reduced in the TCP header, RFC 3168 §6.1.
pub const F_CWR: u8 = 1 << 4;
/// Data: this segment is a retransmission. ACK: the echoed timestamp belongs
/// to a retransmission (Karn's rule: no RTT sample).
pub const F_RETX: u8 = 1 << 5;
/// UDP datagram.
pub const F_UDP: u8 = 1 << 6;
/// Internal: CE was already set when the packet entered the current queue
/// (used to count marks made by this hop only).
pub const F_CE_IN: u8 = 1 << 7;

/// TCP/IP header bytes of every segment (20 IP + 20 TCP); a pure ACK is
/// exactly this size.
pub const HEADER_BYTES: u32 = 40;

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
    /// Flag bits `F_*`.
    pub flags: u8,
    /// ACK with SACK (RFC 2018): up to three blocks `[ack + sack[2i],
    /// ack + sack[2i+1])` of segments received above the cumulative ACK,
    /// as offsets from `seq`; an empty block is `(0, 0)`. Offsets are 16
    /// bits (windows beyond 65 535 segments are not SACKed).
    pub sack: [u16; 6],
}

impl Packet {
    /// True if flag bit(s) `f` are set.
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}
