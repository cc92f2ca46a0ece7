//! A minimal pcapng writer (the IETF draft `draft-ietf-opsawg-pcapng`, the format Wireshark
//! and tshark read natively), shared by the simulator's synthesised captures and the
//! emulator's captures of real packets.
//!
//! A file is one section: a Section Header Block (SHB, §4.1), one Interface Description Block
//! (IDB, §4.2) per interface, with its name (`if_name`) and nanosecond timestamps
//! (`if_tsresol` = 9), and one Enhanced Packet Block (EPB, §4.3) per packet: interface id,
//! 64-bit timestamp in ns, captured length (the bytes stored: headers only when the payload is
//! not kept), original length (the packet's real size). Everything is little-endian; blocks
//! are padded to 4 bytes. No options are written on packets, so an EPB costs 32 bytes plus
//! the captured bytes rounded up to 4.
//!
//! The writer appends each block to a reused scratch buffer and hands it to the underlying
//! writer in one call (wrap a file in a `BufWriter`): no allocation per packet once the
//! scratch buffer has grown to the largest block.

use std::io::{self, Write};

/// `LINKTYPE_ETHERNET` (tcpdump.org link-layer header types).
pub const LINKTYPE_ETHERNET: u16 = 1;
/// `LINKTYPE_RAW`: raw IPv4/IPv6, no link-layer header (what a TUN device carries).
pub const LINKTYPE_RAW: u16 = 101;

const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 0x0000_0001;
const EPB: u32 = 0x0000_0006;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const OPT_ENDOFOPT: u16 = 0;
const OPT_SHB_USERAPPL: u16 = 4;
const OPT_IF_NAME: u16 = 2;
const OPT_IF_TSRESOL: u16 = 9;

/// Bytes of an EPB around its packet data: block type, length, interface id, timestamp (2
/// words), captured and original length, trailing length.
pub const EPB_OVERHEAD: usize = 32;

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// Writes one pcapng section to `W`.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    w: W,
    scratch: Vec<u8>,
    interfaces: u32,
    packets: u64,
    bytes: u64,
}

impl<W: Write> PcapngWriter<W> {
    /// Starts a section (writes the SHB) naming the application `app` (`shb_userappl`).
    pub fn new(w: W, app: &str) -> io::Result<Self> {
        let mut s = PcapngWriter {
            w,
            scratch: Vec::with_capacity(256),
            interfaces: 0,
            packets: 0,
            bytes: 0,
        };
        let b = &mut s.scratch;
        b.clear();
        put32(b, SHB);
        put32(b, 0); // length, patched below
        put32(b, BYTE_ORDER_MAGIC);
        put16(b, 1); // major
        put16(b, 0); // minor
        b.extend_from_slice(&(-1i64).to_le_bytes()); // section length: unspecified
        put_opt(b, OPT_SHB_USERAPPL, app.as_bytes());
        put_opt(b, OPT_ENDOFOPT, &[]);
        s.finish_block()?;
        Ok(s)
    }

    /// Declares an interface (IDB) and returns its id (0, 1, ... in declaration order).
    /// Declare every interface before the first packet.
    pub fn add_interface(&mut self, name: &str, linktype: u16, snaplen: u32) -> io::Result<u32> {
        let b = &mut self.scratch;
        b.clear();
        put32(b, IDB);
        put32(b, 0);
        put16(b, linktype);
        put16(b, 0);
        put32(b, snaplen);
        put_opt(b, OPT_IF_NAME, name.as_bytes());
        put_opt(b, OPT_IF_TSRESOL, &[9]); // 10^-9 s
        put_opt(b, OPT_ENDOFOPT, &[]);
        self.finish_block()?;
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// Writes one packet (EPB): `data` are the captured bytes, `orig_len` the packet's real
    /// length (>= `data.len()`), `ts_ns` its time in ns.
    pub fn packet(&mut self, iface: u32, ts_ns: u64, data: &[u8], orig_len: u32) -> io::Result<()> {
        debug_assert!(iface < self.interfaces, "interface {iface} not declared");
        let b = &mut self.scratch;
        b.clear();
        put32(b, EPB);
        put32(b, 0);
        put32(b, iface);
        put32(b, (ts_ns >> 32) as u32);
        put32(b, ts_ns as u32);
        put32(b, data.len() as u32);
        put32(b, orig_len.max(data.len() as u32));
        b.extend_from_slice(data);
        b.resize(pad4(b.len()), 0);
        self.packets += 1;
        self.finish_block()
    }

    /// Packets written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Bytes written so far (the file's size once flushed).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }

    /// The underlying writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// Appends the trailing length, patches the leading one and writes the block.
    fn finish_block(&mut self) -> io::Result<()> {
        let len = self.scratch.len() as u32 + 4;
        put32(&mut self.scratch, len);
        self.scratch[4..8].copy_from_slice(&len.to_le_bytes());
        self.bytes += len as u64;
        self.w.write_all(&self.scratch)
    }
}

fn put16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_opt(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    put16(b, code);
    put16(b, value.len() as u16);
    b.extend_from_slice(value);
    b.resize(pad4(b.len()), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
    }

    #[test]
    fn blocks_are_framed_and_padded() {
        let mut w = PcapngWriter::new(Vec::new(), "t").unwrap();
        assert_eq!(w.add_interface("a:fwd", LINKTYPE_RAW, 128).unwrap(), 0);
        w.packet(0, 0x1_0000_0002, &[1, 2, 3, 4, 5], 1500).unwrap();
        let n = w.bytes();
        let b = w.finish().unwrap();
        assert_eq!(b.len() as u64, n);
        // walk the blocks: each starts with type, length, and ends with the same length
        let mut i = 0;
        let mut types = Vec::new();
        while i < b.len() {
            let len = u32_at(&b, i + 4) as usize;
            assert_eq!(len % 4, 0);
            assert_eq!(u32_at(&b, i + len - 4) as usize, len);
            types.push(u32_at(&b, i));
            i += len;
        }
        assert_eq!(types, vec![SHB, IDB, EPB]);
        assert_eq!(u32_at(&b, 8), BYTE_ORDER_MAGIC);
        // the EPB: 32 bytes + 5 data bytes padded to 8
        let epb = &b[b.len() - 40..];
        assert_eq!(u32_at(epb, 4), 40);
        assert_eq!(u32_at(epb, 12), 1); // ts high
        assert_eq!(u32_at(epb, 16), 2); // ts low
        assert_eq!(u32_at(epb, 20), 5); // captured
        assert_eq!(u32_at(epb, 24), 1500); // original
        assert_eq!(&epb[28..33], &[1, 2, 3, 4, 5]);
    }
}
