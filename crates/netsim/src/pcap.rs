//! Packet captures of the simulator: the packets of chosen links (and optionally of the
//! hosts) as pcapng ([`experiment::pcapng`]), with Ethernet (optional), IPv4 and TCP/UDP
//! headers synthesised from the simulator's packets. The payload is not stored: every record
//! holds the headers only (captured length) and the packet's real length (original length),
//! so a capture costs well under 100 bytes per packet. `docs/pcap.md` states what is
//! synthesised and what is not real.
//!
//! Recording follows [`crate::trace`]: a captured link direction owns a [`PcapTap`], a
//! preallocated buffer of (time, packet) records that its dequeue path appends to (the
//! link's slow path); whenever a tap holds a full batch the driver
//! ([`crate::Simulation::run_until_traced`]) merges every tap's records by time, synthesises
//! their headers and writes them out ([`Capture::write`]). Memory is bounded by the batch.
//!
//! Header synthesis is a pure function of the packet and its flow's fixed identity
//! ([`FlowWire`]), so one packet captured at several points has the same headers
//! everywhere (but for the CE mark a queue set on the way):
//!
//! * addresses: host node `n` is `10.0.0.0 + n + 1`; MAC addresses (with `ethernet`)
//!   `02:00:` followed by the IPv4 address;
//! * ports: the sender's `1024 + id mod 64512`, the receiver's `5001 + id / 64512`;
//! * sequence numbers in bytes: segment `k` of a flow starts at `ISN + 1 + k * mss` (the ISN a
//!   hash of the flow id, deterministic; the `+ 1` is the SYN the simulator does not send);
//!   an ACK's cumulative acknowledgement of segment `k` is `ISN + 1 + k * mss` (capped at a
//!   finite flow's size), its SACK blocks likewise;
//! * the TCP header carries the timestamps option (RFC 7323) when the flow's profile uses
//!   timestamps (TSval in ms), SACK blocks (RFC 2018) when an ACK has any, ECE/CWR (RFC 3168)
//!   or the AccECN ACE field, the advertised window (the receive window in bytes, at most
//!   65 535: no window scaling is negotiated); the IP header the DSCP and the ECN codepoint;
//! * the options are added to the simulator's 40 header bytes: the IP total length is the
//!   simulated size plus the option bytes, and a data segment carries exactly the simulated
//!   payload (`size - 40`), so bytes and sequence numbers are the simulator's;
//! * checksums (IPv4 header, TCP, UDP) are correct for the headers with an all-zero payload.

use std::io::{self, Write};

use crate::engine::Ns;
use crate::packet::{Packet, F_ACK, F_CWR, F_ECE, F_UDP};
use crate::tcp::accecn::{ACE_MASK, ACE_SHIFT, F_ACCECN_OPT};
use crate::tcp::TcpParams;
use experiment::pcapng::{PcapngWriter, LINKTYPE_ETHERNET, LINKTYPE_RAW};

pub use experiment::config::DEFAULT_PCAP_BATCH;

/// Largest header a record holds: Ethernet 14, IPv4 20, TCP 20 + 40 bytes of options.
pub const MAX_HEADER: usize = 94;
/// The snap length declared for every interface (headers only).
pub const SNAPLEN: u32 = 128;
/// Records one event may add beyond the batch without reallocating (see
/// [`crate::trace::TRACE_SLACK`]).
pub const PCAP_SLACK: usize = 4096;

/// One captured packet: its time, the interface and the packet as it was there.
#[derive(Clone, Copy, Debug)]
pub struct Rec {
    /// Capture time, ns.
    pub t: Ns,
    /// Interface id in the capture file.
    pub iface: u32,
    /// The packet.
    pub pkt: Packet,
}

/// A capture point's buffer of records (preallocated to `batch + PCAP_SLACK`).
#[derive(Clone, Debug)]
pub struct PcapTap {
    /// Interface id of the records [`PcapTap::push`] adds.
    pub iface: u32,
    recs: Vec<Rec>,
    batch: usize,
}

impl PcapTap {
    /// An empty tap for interface `iface`.
    pub fn new(iface: u32, batch: usize) -> Self {
        let batch = batch.max(1);
        PcapTap {
            iface,
            recs: Vec::with_capacity(batch + PCAP_SLACK),
            batch,
        }
    }

    /// Records `pkt` at `t` on the tap's interface.
    #[inline]
    pub fn push(&mut self, t: Ns, pkt: &Packet) {
        self.push_on(t, self.iface, pkt);
    }

    /// Records `pkt` at `t` on interface `iface`.
    #[inline]
    pub fn push_on(&mut self, t: Ns, iface: u32, pkt: &Packet) {
        self.recs.push(Rec {
            t,
            iface,
            pkt: *pkt,
        });
    }

    /// True once the tap holds a full batch.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.recs.len() >= self.batch
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True if no record is held.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Records the tap can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.recs.capacity()
    }

    /// Moves the records into `out`, keeping the capacity.
    pub fn drain_into(&mut self, out: &mut Vec<Rec>) {
        out.append(&mut self.recs);
    }
}

/// The fixed wire identity of a flow: addresses, ports, initial sequence numbers, the
/// options its packets carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowWire {
    /// Sender's and receiver's IPv4 addresses.
    pub src_ip: [u8; 4],
    /// Receiver's address.
    pub dst_ip: [u8; 4],
    /// Sender's port.
    pub sport: u16,
    /// Receiver's port.
    pub dport: u16,
    /// Initial sequence numbers of the sender and of the receiver.
    pub isn_snd: u32,
    /// Receiver's ISN.
    pub isn_rcv: u32,
    /// Timestamp offsets (ms) of the sender's and the receiver's clocks.
    pub ts_snd: u32,
    /// Receiver's timestamp offset.
    pub ts_rcv: u32,
    /// Payload bytes per full segment.
    pub mss: u32,
    /// A finite flow's size in bytes (`u64::MAX`: unlimited).
    pub end: u64,
    /// UDP (else TCP).
    pub udp: bool,
    /// The timestamps option is on every segment.
    pub timestamps: bool,
    /// AccECN: the ACE field replaces ECE/CWR.
    pub accecn: bool,
    /// Advertised window (bytes, at most 65 535).
    pub window: u16,
}

/// IPv4 address of host node `n`.
pub fn host_ip(n: u32) -> [u8; 4] {
    (0x0a00_0000u32.wrapping_add(n + 1)).to_be_bytes()
}

impl FlowWire {
    /// The identity of flow `id` from node `src` to node `dst`: `tcp` the TCP parameters of
    /// a TCP flow (`None`: UDP), `mss` its payload per full segment, `size` a finite size.
    pub fn new(
        id: u32,
        src: u32,
        dst: u32,
        mss: u32,
        size: Option<u64>,
        tcp: Option<&TcpParams>,
    ) -> Self {
        let h = experiment::rng::splitmix64(0x7063_6170_0000_0000 ^ id as u64);
        let window = tcp
            .and_then(|p| p.rwnd)
            .map_or(u16::MAX, |w| (w as u64 * mss as u64).min(65_535) as u16);
        FlowWire {
            src_ip: host_ip(src),
            dst_ip: host_ip(dst),
            sport: (1024 + id % 64_512) as u16,
            dport: (5001 + id / 64_512) as u16,
            isn_snd: h as u32,
            isn_rcv: (h >> 32) as u32,
            ts_snd: ((h >> 8) as u32) & 0x00ff_ffff,
            ts_rcv: ((h >> 40) as u32) & 0x00ff_ffff,
            mss,
            end: size.unwrap_or(u64::MAX),
            udp: tcp.is_none(),
            timestamps: tcp.is_some_and(|p| p.extras.timestamps),
            accecn: tcp.is_some_and(|p| p.accecn),
            window,
        }
    }

    /// Byte offset (from `ISN + 1`) of segment `seg`, capped at a finite flow's end.
    #[inline]
    fn bytes(&self, seg: u32) -> u32 {
        (seg as u64 * self.mss as u64).min(self.end) as u32
    }
}

/// RFC 1071 one's-complement sum of `b` added to `acc` (not folded).
fn sum16(b: &[u8], mut acc: u32) -> u32 {
    let mut c = b.chunks_exact(2);
    for w in &mut c {
        acc += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [x] = c.remainder() {
        acc += (*x as u32) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Writes the headers of `p` (a packet of the flow `w`) into `buf`; returns the header
/// length (the captured bytes) and the packet's length on the wire.
pub fn encode(
    p: &Packet,
    w: &FlowWire,
    ethernet: bool,
    buf: &mut [u8; MAX_HEADER],
) -> (usize, u32) {
    let ack = p.has(F_ACK);
    let (src, dst, sport, dport) = if ack {
        (w.dst_ip, w.src_ip, w.dport, w.sport)
    } else {
        (w.src_ip, w.dst_ip, w.sport, w.dport)
    };
    let eth = if ethernet { 14 } else { 0 };
    if ethernet {
        buf[0..2].copy_from_slice(&[0x02, 0x00]);
        buf[2..6].copy_from_slice(&dst);
        buf[6..8].copy_from_slice(&[0x02, 0x00]);
        buf[8..12].copy_from_slice(&src);
        buf[12..14].copy_from_slice(&[0x08, 0x00]);
    }
    let ip = eth;
    let l4 = ip + 20;
    // the transport header
    let (l4_len, payload, proto) = if w.udp || p.has(F_UDP) {
        let len = p.size.saturating_sub(20).max(8);
        let u = &mut buf[l4..l4 + 8];
        u[0..2].copy_from_slice(&sport.to_be_bytes());
        u[2..4].copy_from_slice(&dport.to_be_bytes());
        u[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        u[6..8].copy_from_slice(&[0, 0]);
        (8usize, len - 8, 17u8)
    } else {
        let mut o = l4 + 20; // options
        if w.timestamps {
            // TSval/TSecr: a data segment's TSval is its send time; an ACK echoes the
            // timestamp of the segment that triggered it (its own TSval is that instant in
            // the receiver's clock: the simulator does not carry the ACK's send time)
            let ms = (p.ts / 1_000_000) as u32;
            let (val, ecr) = if ack {
                (ms.wrapping_add(w.ts_rcv), ms.wrapping_add(w.ts_snd))
            } else {
                (ms.wrapping_add(w.ts_snd), ms.wrapping_add(w.ts_rcv))
            };
            buf[o..o + 4].copy_from_slice(&[1, 1, 8, 10]);
            buf[o + 4..o + 8].copy_from_slice(&val.to_be_bytes());
            buf[o + 8..o + 12].copy_from_slice(&ecr.to_be_bytes());
            o += 12;
        }
        if ack && !p.has(F_ACCECN_OPT) {
            let n = (0..3)
                .take_while(|&i| p.sack[2 * i + 1] > p.sack[2 * i])
                .count();
            let room = if w.timestamps { 3 } else { 4 };
            let n = n.min(room);
            if n > 0 {
                buf[o..o + 4].copy_from_slice(&[1, 1, 5, 2 + 8 * n as u8]);
                o += 4;
                for i in 0..n {
                    let l = isn_plus(w.isn_snd, w.bytes(p.seq + p.sack[2 * i] as u32));
                    let r = isn_plus(w.isn_snd, w.bytes(p.seq + p.sack[2 * i + 1] as u32));
                    buf[o..o + 4].copy_from_slice(&l.to_be_bytes());
                    buf[o + 4..o + 8].copy_from_slice(&r.to_be_bytes());
                    o += 8;
                }
            }
        }
        let hl = o - l4;
        let (seq, ackno) = if ack {
            (isn_plus(w.isn_rcv, 0), isn_plus(w.isn_snd, w.bytes(p.seq)))
        } else {
            (isn_plus(w.isn_snd, w.bytes(p.seq)), isn_plus(w.isn_rcv, 0))
        };
        let payload = if ack {
            0
        } else {
            p.size.saturating_sub(crate::packet::HEADER_BYTES)
        };
        // flags: ACK always (established); ECN feedback
        let mut flags: u16 = 0x010;
        if w.accecn {
            // the ACE field (AE, CWR, ECE): an ACK's is the receiver's CE packet count mod 8;
            // the sender receives no CE (its ACKs are not ECN-capable): its count stays 5
            let ace = if ack {
                (p.flags >> ACE_SHIFT) & ACE_MASK
            } else {
                5
            } as u16;
            flags |= (ace & 4) << 6 | (ace & 2) << 6 | (ace & 1) << 6;
        } else {
            if p.has(F_ECE) {
                flags |= 0x040;
            }
            if p.has(F_CWR) {
                flags |= 0x080;
            }
        }
        let t = &mut buf[l4..l4 + 20];
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&dport.to_be_bytes());
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[8..12].copy_from_slice(&ackno.to_be_bytes());
        let doff_flags = ((hl as u16 / 4) << 12) | flags;
        t[12..14].copy_from_slice(&doff_flags.to_be_bytes());
        t[14..16].copy_from_slice(&w.window.to_be_bytes());
        t[16..20].copy_from_slice(&[0, 0, 0, 0]);
        (hl, payload, 6u8)
    };
    let total = 20 + l4_len as u32 + payload;
    // IPv4 header (RFC 791): no options, DF, TTL 64, the DS field (RFC 2474 §3: the DSCP in
    // the six high bits of the TOS byte) and the ECN codepoint in its low bits (RFC 3168 §5)
    let ecn = match p.ecn() {
        aqm::Ecn::NotEct => 0,
        aqm::Ecn::Ect1 => 1,
        aqm::Ecn::Ect0 => 2,
        aqm::Ecn::Ce => 3,
    };
    let h = &mut buf[ip..ip + 20];
    h[0] = 0x45;
    h[1] = (p.dscp() << 2) | ecn;
    h[2..4].copy_from_slice(&(total.min(65_535) as u16).to_be_bytes());
    h[4..8].copy_from_slice(&[0, 0, 0x40, 0]);
    h[8] = 64;
    h[9] = proto;
    h[10..12].copy_from_slice(&[0, 0]);
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    let c = fold(sum16(h, 0));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    // transport checksum over the pseudo-header, the header and an all-zero payload
    let seg_len = l4_len as u32 + payload;
    let mut acc = sum16(&src, 0);
    acc = sum16(&dst, acc);
    acc += proto as u32 + (seg_len & 0xffff) + (seg_len >> 16);
    acc = sum16(&buf[l4..l4 + l4_len], acc);
    let mut c = fold(acc);
    let at = if proto == 17 {
        if c == 0 {
            c = 0xffff; // RFC 768: a computed 0 is sent as all ones
        }
        l4 + 6
    } else {
        l4 + 16
    };
    buf[at..at + 2].copy_from_slice(&c.to_be_bytes());
    (l4 + l4_len, eth as u32 + total)
}

#[inline]
fn isn_plus(isn: u32, off: u32) -> u32 {
    isn.wrapping_add(1).wrapping_add(off)
}

type FileWriter = PcapngWriter<io::BufWriter<std::fs::File>>;

/// A batch handed to the writer thread: records (each tap's in time order) and the
/// identities of the flows they are the first records of.
struct Batch {
    recs: Vec<Rec>,
    wires: Vec<(u32, FlowWire)>,
}

/// An open capture. Interfaces are declared on the file first; the first
/// [`Capture::write`] starts a writer thread that merges each batch by time, synthesises the
/// headers and writes them, while the simulation goes on. One batch waits in the channel at
/// most (the simulation blocks on the next if the writer lags), so memory stays bounded by
/// about three batches of every tap.
pub struct Capture {
    file: Option<FileWriter>,
    ethernet: bool,
    /// Flows whose identity was sent to the writer.
    known: Vec<bool>,
    merged: Vec<Rec>,
    tx: Option<std::sync::mpsc::SyncSender<Batch>>,
    /// Emptied record buffers coming back from the writer.
    back: Option<std::sync::Mutex<std::sync::mpsc::Receiver<Vec<Rec>>>>,
    thread: Option<std::thread::JoinHandle<io::Result<u64>>>,
    /// The writer thread ended early (a write error, reported by [`Capture::finish`]).
    broken: bool,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("ethernet", &self.ethernet)
            .field("writing", &self.thread.is_some())
            .finish()
    }
}

impl Capture {
    /// Creates the file at `path` (replacing it) and writes its section header.
    pub fn create(path: &std::path::Path, ethernet: bool) -> io::Result<Self> {
        let f = std::fs::File::create(path)?;
        let w = PcapngWriter::new(io::BufWriter::with_capacity(1 << 20, f), "aqmlab simulator")?;
        Ok(Capture {
            file: Some(w),
            ethernet,
            known: Vec::new(),
            merged: Vec::new(),
            tx: None,
            back: None,
            thread: None,
            broken: false,
        })
    }

    /// Declares an interface named `name`; returns its id. Only before the first
    /// [`Capture::write`].
    pub fn add_interface(&mut self, name: &str) -> io::Result<u32> {
        let lt = if self.ethernet {
            LINKTYPE_ETHERNET
        } else {
            LINKTYPE_RAW
        };
        match self.file.as_mut() {
            Some(w) => w.add_interface(name, lt, SNAPLEN),
            None => Err(io::Error::other(
                "interfaces are declared before the first packet",
            )),
        }
    }

    /// Moves every record of `tap` into the next batch (call for every tap, then
    /// [`Capture::write`]).
    pub fn collect(&mut self, tap: &mut PcapTap) {
        tap.drain_into(&mut self.merged);
    }

    /// Hands the collected records to the writer thread, which writes them in time order
    /// (records of equal time in the order they were collected), synthesising each header
    /// with `wire(flow)`, the flow's identity (asked once per flow, here).
    pub fn write(&mut self, mut wire: impl FnMut(u32) -> FlowWire) {
        if self.merged.is_empty() || self.broken {
            self.merged.clear();
            return;
        }
        self.start();
        let mut wires = Vec::new();
        for r in &self.merged {
            let f = r.pkt.flow as usize;
            if self.known.len() <= f {
                self.known.resize(f + 1, false);
            }
            if !self.known[f] {
                self.known[f] = true;
                wires.push((r.pkt.flow, wire(r.pkt.flow)));
            }
        }
        let spare = self
            .back
            .as_ref()
            .and_then(|b| b.lock().ok()?.try_recv().ok())
            .unwrap_or_default();
        let recs = std::mem::replace(&mut self.merged, spare);
        let sent = self
            .tx
            .as_ref()
            .is_some_and(|tx| tx.send(Batch { recs, wires }).is_ok());
        if !sent {
            self.broken = true; // the writer ended: finish() reports why
        }
    }

    /// Starts the writer thread (once).
    fn start(&mut self) {
        let Some(mut w) = self.file.take() else {
            return;
        };
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(1);
        let (back_tx, back_rx) = std::sync::mpsc::sync_channel::<Vec<Rec>>(2);
        let ethernet = self.ethernet;
        let thread = std::thread::Builder::new()
            .name("aqmlab-pcap".into())
            .spawn(move || -> io::Result<u64> {
                let mut wires: Vec<Option<FlowWire>> = Vec::new();
                let mut buf = [0u8; MAX_HEADER];
                for mut b in rx {
                    for (f, fw) in b.wires {
                        if wires.len() <= f as usize {
                            wires.resize(f as usize + 1, None);
                        }
                        wires[f as usize] = Some(fw);
                    }
                    // each tap's records are in time order: a stable sort merges the runs
                    b.recs.sort_by_key(|r| r.t);
                    for r in &b.recs {
                        let fw = wires[r.pkt.flow as usize].expect("identity sent first");
                        let (cap, orig) = encode(&r.pkt, &fw, ethernet, &mut buf);
                        w.packet(r.iface, r.t, &buf[..cap], orig)?;
                    }
                    b.recs.clear();
                    let _ = back_tx.try_send(b.recs);
                }
                let n = w.packets();
                w.finish()?.flush()?;
                Ok(n)
            })
            .expect("spawn the capture writer");
        self.tx = Some(tx);
        self.back = Some(std::sync::Mutex::new(back_rx));
        self.thread = Some(thread);
    }

    /// Waits for the writer to write everything, closes the file and returns the packets
    /// written, or the first error.
    pub fn finish(mut self) -> io::Result<u64> {
        self.tx = None; // ends the writer's loop
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the capture writer panicked"))),
            None => match self.file.take() {
                Some(w) => {
                    w.finish()?.flush()?;
                    Ok(0)
                }
                None => Ok(0),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(ts: bool) -> FlowWire {
        let mut p = crate::sim::tcp_params(
            crate::tcp::CcKind::Reno,
            true,
            false,
            true,
            false,
            1000,
            10,
            0.2,
            None,
            false,
            false,
        );
        p.extras.timestamps = ts;
        FlowWire::new(3, 4, 9, 960, Some(5000), Some(&p))
    }

    fn verify(b: &[u8]) -> bool {
        fold(sum16(b, 0)) == 0
    }

    #[test]
    fn data_segment_headers() {
        let w = wire(true);
        let p = Packet {
            flow: 3,
            seq: 2,
            size: 1000,
            ts: 7_000_000,
            flags: crate::packet::F_ECT,
            ..Default::default()
        };
        let mut b = [0u8; MAX_HEADER];
        let (cap, orig) = encode(&p, &w, false, &mut b);
        assert_eq!(cap, 20 + 32);
        assert_eq!(orig, 1012);
        assert_eq!(&b[12..16], &[10, 0, 0, 5]);
        assert_eq!(&b[16..20], &[10, 0, 0, 10]);
        assert_eq!(b[1], 2, "ECT(0)");
        assert!(verify(&b[..20]), "IPv4 header checksum");
        // the DS field: EF (46) in the six high bits of the TOS byte, the ECN bits kept
        let mut ef = p;
        ef.set_dscp(46);
        encode(&ef, &w, false, &mut b);
        assert_eq!(b[1], (46 << 2) | 2, "DSCP EF with ECT(0)");
        assert!(verify(&b[..20]), "IPv4 header checksum with a DSCP");
        let seq = u32::from_be_bytes(b[24..28].try_into().unwrap());
        assert_eq!(seq, w.isn_snd.wrapping_add(1 + 2 * 960));
        // TCP checksum over pseudo-header + header + 960 zero bytes
        let mut acc = sum16(&b[12..20], 0) + 6 + (32 + 960);
        acc = sum16(&b[20..52], acc);
        assert_eq!(fold(acc), 0);
        // finite flow: the ACK of the last segment is capped at the size
        let a = Packet {
            flow: 3,
            seq: 6,
            size: 40,
            flags: F_ACK,
            sack: [0; 6],
            ..Default::default()
        };
        let (cap, orig) = encode(&a, &w, true, &mut b);
        assert_eq!((cap, orig), (14 + 52, 14 + 52));
        let ackno = u32::from_be_bytes(b[14 + 28..14 + 32].try_into().unwrap());
        assert_eq!(ackno, w.isn_snd.wrapping_add(1 + 5000));
    }

    #[test]
    fn sack_blocks_in_bytes() {
        let w = wire(false);
        let a = Packet {
            flow: 3,
            seq: 1,
            size: 40,
            flags: F_ACK | F_ECE,
            sack: [2, 4, 0, 0, 0, 0],
            ..Default::default()
        };
        let mut b = [0u8; MAX_HEADER];
        let (cap, orig) = encode(&a, &w, false, &mut b);
        assert_eq!((cap, orig), (20 + 20 + 12, 52));
        assert_eq!(b[33] & 0x40, 0x40, "ECE");
        assert_eq!(&b[40..44], &[1, 1, 5, 10]);
        let l = u32::from_be_bytes(b[44..48].try_into().unwrap());
        let r = u32::from_be_bytes(b[48..52].try_into().unwrap());
        assert_eq!(l, w.isn_snd.wrapping_add(1 + 3 * 960));
        assert_eq!(r, w.isn_snd.wrapping_add(1 + 5 * 960));
    }
}
