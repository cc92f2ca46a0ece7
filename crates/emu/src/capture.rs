//! The emulator's packet capture: the real packets at both TUN devices, as pcapng
//! ([`experiment::pcapng`]), timestamped with the forwarder's clock (ns since the run's
//! origin). Interface 0, `senders`, is the senders' device: what the senders sent (read by
//! the forwarder) and what they receive (written); interface 1, `receivers`, the receivers'
//! device. A TUN device carries raw IPv4; each packet is recorded behind a synthesised
//! 14-byte Ethernet header (`LINKTYPE_ETHERNET`, MAC addresses `02:00:` and the IPv4 address,
//! as the simulator's captures have them), so that libpcap's tools (tcptrace, tcpdump) read the
//! two-interface file, which they refuse for raw IPv4 (docs/pcap.md). Packets are cut at
//! [`SNAPLEN`] bytes (the headers; the original length, Ethernet header included, is kept).
//! The file goes through a 1 MiB buffer, so the forwarder's loop writes to the kernel about
//! once per 8,000 packets.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use experiment::pcapng::{PcapngWriter, LINKTYPE_ETHERNET};

/// Bytes kept of each IP packet (IPv4 and TCP headers with options fit in 120).
pub const SNAPLEN: usize = 128;
/// The synthesised Ethernet header's length.
const ETH: usize = 14;
/// Interface of the senders' TUN device.
pub const SENDERS: u32 = 0;
/// Interface of the receivers' TUN device.
pub const RECEIVERS: u32 = 1;

/// The Ethernet header recorded before an IP packet: destination and source MAC addresses
/// `02:00:` followed by the packet's IPv4 destination and source (locally administered, as the
/// simulator's captures synthesise them), type IPv4 (0x0800; IPv6 0x86DD with zero addresses).
fn ethernet_header(pkt: &[u8]) -> [u8; ETH] {
    let mut h = [0u8; ETH];
    if pkt.first().is_some_and(|b| b >> 4 == 6) {
        h[12..].copy_from_slice(&[0x86, 0xdd]);
        return h;
    }
    h[12..].copy_from_slice(&[0x08, 0x00]);
    if pkt.len() >= 20 {
        h[..2].copy_from_slice(&[0x02, 0x00]);
        h[2..6].copy_from_slice(&pkt[16..20]);
        h[6..8].copy_from_slice(&[0x02, 0x00]);
        h[8..12].copy_from_slice(&pkt[12..16]);
    }
    h
}

/// An open capture.
pub struct Capture {
    w: PcapngWriter<BufWriter<std::fs::File>>,
    error: Option<io::Error>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("packets", &self.w.packets())
            .finish()
    }
}

impl Capture {
    /// Creates (or replaces) the file at `path` with its two interfaces.
    pub fn create(path: &Path) -> io::Result<Self> {
        let f = std::fs::File::create(path)?;
        let mut w = PcapngWriter::new(BufWriter::with_capacity(1 << 20, f), "aqmlab emulator")?;
        w.add_interface("senders", LINKTYPE_ETHERNET, (ETH + SNAPLEN) as u32)?;
        w.add_interface("receivers", LINKTYPE_ETHERNET, (ETH + SNAPLEN) as u32)?;
        Ok(Capture { w, error: None })
    }

    /// Records `pkt` on interface `iface` at `t_ns`. A write error stops the capture (not the
    /// run); [`Capture::finish`] reports it.
    #[inline]
    pub fn record(&mut self, iface: u32, t_ns: u64, pkt: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let n = pkt.len().min(SNAPLEN);
        let mut frame = [0u8; ETH + SNAPLEN];
        frame[..ETH].copy_from_slice(&ethernet_header(pkt));
        frame[ETH..ETH + n].copy_from_slice(&pkt[..n]);
        if let Err(e) = self
            .w
            .packet(iface, t_ns, &frame[..ETH + n], (ETH + pkt.len()) as u32)
        {
            self.error = Some(e);
        }
    }

    /// Packets recorded.
    pub fn packets(&self) -> u64 {
        self.w.packets()
    }

    /// Flushes and closes the file; returns the packets written or the first error.
    pub fn finish(self) -> io::Result<u64> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let n = self.w.packets();
        self.w.finish()?.flush()?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The synthesised header: MACs from the IPv4 addresses (dst first), type IPv4.
    #[test]
    fn ethernet_header_from_the_ip_addresses() {
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[12..16].copy_from_slice(&[10, 203, 0, 2]);
        ip[16..20].copy_from_slice(&[10, 203, 1, 2]);
        assert_eq!(
            ethernet_header(&ip),
            [2, 0, 10, 203, 1, 2, 2, 0, 10, 203, 0, 2, 0x08, 0x00]
        );
        assert_eq!(ethernet_header(&[0x60; 40])[12..], [0x86, 0xdd]);
    }
}
