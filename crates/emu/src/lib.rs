//! # emu — a userspace bottleneck for real Linux TCP
//!
//! Real kernel TCP connections run between two network namespaces (senders, receivers), each
//! with a TUN device; this crate's [`forwarder::Forwarder`] reads both devices and moves the
//! packets through an emulated dumbbell: the data direction through the `aqm` crate's
//! [`aqm::Qdisc`] (the same code, built from the same config, as the simulator's bottleneck),
//! serialised at the link rate and delayed by the propagation delay; the ACK direction
//! through a constant delay, or through a queued link of its own ([`reverse`]: a dumbbell's
//! `reverse_rate_trace`, `aqmlab shell`'s downlink). CE marks are written into the real IPv4 headers with the
//! checksum updated ([`ipv4`]).
//!
//! Why TUN rather than veth + `AF_PACKET`: a TUN device is layer 3 (no ARP, no MAC
//! addresses, no bridging), its descriptor is the only path between the namespaces (so
//! nothing bypasses the forwarder, unlike a veth pair whose kernel path would also carry the
//! packets), and without offload flags the kernel hands over MTU-sized packets (GSO segments
//! are split before the device).
//!
//! Modules: [`capture`] (pcapng of both devices, `EmuConfig::pcap`), [`clock`] (`CLOCK_MONOTONIC` ns), [`tun`] (devices), [`ipv4`] (header fields,
//! CE marking with RFC 1624 checksum update), [`tcp`] (the TCP header as CAKE's ACK filter
//! reads it), [`packet`] (a real packet as [`aqm::Packet`]), [`config`] (the link from a scenario of `experiment`), [`link`] (the emulated
//! links as pure logic, time passed in), [`reverse`] (the reverse direction: a delay or a
//! queued link of its own), [`forwarder`] (the I/O loop).
//!
//! Namespaces, addresses, sysctls and the traffic programs are set up by the Python side
//! (`aqmlab.emu`), which also needs root; this crate only opens the devices it is told to.

pub mod capture;
pub mod clock;
pub mod config;
pub mod forwarder;
pub mod ipv4;
pub mod link;
pub mod netem;
pub mod packet;
pub mod reverse;
pub mod tcp;
pub mod tun;

pub use config::EmuConfig;
pub use forwarder::{Forwarder, Report, Timing};
pub use tun::Tun;
