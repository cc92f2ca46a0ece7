//! TUN devices: layer-3 virtual interfaces whose packets a process reads and writes through
//! a file descriptor (`/dev/net/tun`, `IFF_TUN | IFF_NO_PI`: bare IP packets, no offload
//! flags, so the kernel hands over MTU-sized packets, segmented before the device).
//!
//! The device is created in the namespace of the calling thread (the root namespace) and
//! moved into its namespace by the caller (`ip link set NAME netns NS`); the descriptor keeps
//! working across the move. The device disappears when the descriptor is closed (not
//! persistent), so a killed forwarder leaves no device behind.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `TUNSETIFF = _IOW('T', 202, int)` (linux/if_tun.h).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `IFF_TUN`: layer-3 device.
const IFF_TUN: libc::c_short = 0x0001;
/// `IFF_NO_PI`: no 4-byte packet-information prefix.
const IFF_NO_PI: libc::c_short = 0x1000;
/// Largest packet read, bytes (an IP packet cannot be longer).
pub const MAX_PACKET: usize = 65_535;

/// An open TUN device (non-blocking).
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

impl Tun {
    /// Creates TUN device `name` (at most 15 bytes) and opens it non-blocking.
    pub fn create(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() > 15 || name.contains(['/', ' ', '\0']) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("TUN name {name:?}: 1 to 15 characters, no '/', space or NUL"),
            ));
        }
        let path = CString::new("/dev/net/tun").expect("no NUL");
        // SAFETY: path is a valid C string; the returned fd is checked below.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a freshly opened descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // struct ifreq: 16-byte name, then the union whose first member is `short ifr_flags`.
        let mut ifr = [0u8; 40];
        ifr[..name.len()].copy_from_slice(name.as_bytes());
        ifr[16..18].copy_from_slice(&(IFF_TUN | IFF_NO_PI).to_ne_bytes());
        // SAFETY: ifr is a 40-byte buffer laid out as struct ifreq; TUNSETIFF reads and writes it.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, ifr.as_mut_ptr()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tun {
            fd,
            name: name.to_string(),
        })
    }

    /// The device name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet into `buf`; `Ok(None)` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for buf.len() bytes of writes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Writes one packet (delivers it to the namespace's stack). A full device queue or a
    /// device that is down loses the packet, which is reported as `Ok(false)`.
    pub fn write(&self, pkt: &[u8]) -> io::Result<bool> {
        // SAFETY: pkt is valid for pkt.len() bytes of reads.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::EIO) | Some(libc::ENOBUFS) => {
                Ok(false)
            }
            _ => Err(e),
        }
    }

    /// The raw descriptor (for `ppoll`).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
