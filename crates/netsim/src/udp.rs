//! UDP sources: constant bit rate, or on/off with exponentially distributed
//! on and off periods (sending at `rate` while on). The sink only counts.

use crate::engine::{secs_to_ns, Ns, NS_PER_SEC};
use crate::packet::{Packet, F_UDP};
use experiment::rng::Rng;

pub use experiment::config::UDP_HEADER_BYTES;

/// A UDP source.
#[derive(Clone, Debug)]
pub struct UdpSource {
    /// Destination node.
    pub dst: u32,
    /// IP packet size, bytes.
    pub size: u32,
    /// Inter-packet gap while on (ns) = size * 8 / rate.
    pub interval: Ns,
    /// Mean on and off periods (s), `None` for CBR.
    pub onoff: Option<(f64, f64)>,
    /// End of the current on period.
    on_until: Ns,
    rng: Rng,
    /// Next datagram number.
    pub seq: u32,
    /// No more packets after a stop.
    pub stopped: bool,
}

impl UdpSource {
    /// A source of `size`-byte packets at `rate_bps` while on.
    pub fn new(dst: u32, size: u32, rate_bps: f64, onoff: Option<(f64, f64)>, rng: Rng) -> Self {
        let interval = ((size as f64 * 8.0 * NS_PER_SEC as f64) / rate_bps).round() as Ns;
        UdpSource {
            dst,
            size,
            interval: interval.max(1),
            onoff,
            on_until: Ns::MAX,
            rng,
            seq: 0,
            stopped: false,
        }
    }

    /// A source of one `size`-byte packet every `interval` ns (a ping prober).
    pub fn periodic(dst: u32, size: u32, interval: Ns, rng: Rng) -> Self {
        UdpSource {
            dst,
            size,
            interval: interval.max(1),
            onoff: None,
            on_until: Ns::MAX,
            rng,
            seq: 0,
            stopped: false,
        }
    }

    /// The source starts at `now` (begins with an on period).
    pub fn start(&mut self, now: Ns) {
        if let Some((on, _)) = self.onoff {
            self.on_until = now + secs_to_ns(self.rng.exponential(on));
        }
    }

    /// Called at each scheduled send time: returns the packet to send now
    /// (if any) and the time of the next call (if any).
    pub fn on_send(&mut self, now: Ns, flow: u32) -> (Option<Packet>, Option<Ns>) {
        if self.stopped {
            return (None, None);
        }
        if let Some((on, off)) = self.onoff {
            if now >= self.on_until {
                let next_on = now + secs_to_ns(self.rng.exponential(off));
                self.on_until = next_on + secs_to_ns(self.rng.exponential(on));
                return (None, Some(next_on));
            }
        }
        let p = Packet {
            flow,
            seq: self.seq,
            size: self.size,
            dst: self.dst,
            ts: now,
            enq: 0,
            sack: [0; 6],
            flags: F_UDP,
        };
        self.seq = self.seq.wrapping_add(1);
        (Some(p), Some(now + self.interval))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use experiment::rng::Stream;

    /// Reference: on/off duty cycle on/(on+off) = 0.25 with on = 0.1 s,
    /// off = 0.3 s; over 2000 s (~5000 cycles) the fraction of packets
    /// relative to CBR is within 5% of 0.25 (cycle-count noise ~2%).
    #[test]
    fn onoff_duty_cycle() {
        let rng = Rng::derive(1, Stream::Flow, 0);
        let mut s = UdpSource::new(1, 1000, 8e6, Some((0.1, 0.3)), rng);
        s.start(0);
        let end = 2000 * NS_PER_SEC;
        let mut t = 0;
        let mut sent = 0u64;
        while t < end {
            let (p, next) = s.on_send(t, 0);
            sent += p.is_some() as u64;
            t = next.unwrap();
        }
        let cbr = end / s.interval;
        let frac = sent as f64 / cbr as f64;
        assert!((frac - 0.25).abs() < 0.25 * 0.05, "duty {frac}");
    }
}
