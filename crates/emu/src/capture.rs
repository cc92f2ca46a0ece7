//! The emulator's packet capture: the real packets at both TUN devices, as pcapng
//! ([`experiment::pcapng`]), timestamped with the forwarder's clock (ns since the run's
//! origin). Interface 0, `senders`, is the senders' device: what the senders sent (read by
//! the forwarder) and what they receive (written); interface 1, `receivers`, the receivers'
//! device. Packets are raw IPv4 (`LINKTYPE_RAW`, as a TUN device carries them), cut at
//! [`SNAPLEN`] bytes (the headers; the original length is kept). The file goes through a
//! 1 MiB buffer, so the forwarder's loop writes to the kernel about once per 8,000 packets.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use experiment::pcapng::{PcapngWriter, LINKTYPE_RAW};

/// Bytes kept of each packet (IPv4 and TCP headers with options fit in 120).
pub const SNAPLEN: usize = 128;
/// Interface of the senders' TUN device.
pub const SENDERS: u32 = 0;
/// Interface of the receivers' TUN device.
pub const RECEIVERS: u32 = 1;

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
        w.add_interface("senders", LINKTYPE_RAW, SNAPLEN as u32)?;
        w.add_interface("receivers", LINKTYPE_RAW, SNAPLEN as u32)?;
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
        if let Err(e) = self.w.packet(iface, t_ns, &pkt[..n], pkt.len() as u32) {
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
