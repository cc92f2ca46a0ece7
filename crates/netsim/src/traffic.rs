//! Flows and traffic generators: long-lived/finite TCP flows, UDP sources,
//! and Poisson arrivals of Pareto-sized short TCP flows.

use crate::engine::Ns;
use crate::tcp::{CcKind, TcpParams, TcpReceiver, TcpSender};
use crate::udp::UdpSource;
use experiment::monitor::FlowHistogram;
use experiment::rng::Rng;

/// Kind of a flow, as reported in results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// Long-lived (or fixed-size) TCP flow of a `tcp` group.
    Tcp,
    /// Short TCP flow of a `short_tcp` group.
    ShortTcp,
    /// UDP constant bit rate.
    UdpCbr,
    /// UDP on/off.
    UdpOnoff,
    /// Ping prober: UDP probes echoed by the destination.
    Ping,
}

impl FlowKind {
    /// Name used in results.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::ShortTcp => "short_tcp",
            FlowKind::UdpCbr => "udp_cbr",
            FlowKind::UdpOnoff => "udp_onoff",
            FlowKind::Ping => "ping",
        }
    }
}

/// The transport state of a flow. (Stored inline: flows live in one `Vec`,
/// and boxing the TCP variant would add an indirection on every packet.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Endpoint {
    /// A TCP connection: sender at `src`, receiver at `dst`.
    Tcp {
        /// Sender.
        snd: TcpSender,
        /// Receiver.
        rcv: TcpReceiver,
    },
    /// A UDP source at `src`; the sink at `dst` only counts.
    Udp(UdpSource),
}

/// Counters of a flow snapshotted at the end of warm-up (and, for the
/// goodput numerator, at its stop time).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowSnapshot {
    /// Payload bytes delivered in order to the receiving application.
    pub delivered: u64,
    /// TCP: payload bytes of the segments up to the highest one received
    /// so far (`Flow::rcv_high`); UDP: same as `delivered`.
    pub received_high: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Sum of RTT samples (ns).
    pub rtt_sum: f64,
    /// Number of RTT samples.
    pub rtt_count: u64,
}

/// One flow.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Flow id (index in the flow table).
    pub id: u32,
    /// Index of its flow group.
    pub group: u32,
    /// Kind.
    pub kind: FlowKind,
    /// Congestion control (TCP only).
    pub cc: Option<CcKind>,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Start time (ns).
    pub start: Ns,
    /// Stop time (ns), if any.
    pub stop: Option<Ns>,
    /// Size in bytes of a finite flow.
    pub size: Option<u64>,
    /// Payload bytes per full segment (TCP) or per datagram (UDP).
    pub mss: u32,
    /// True once started.
    pub started: bool,
    /// Transport state.
    pub ep: Endpoint,
    /// UDP: payload bytes received by the sink.
    pub udp_bytes: u64,
    /// TCP: one past the highest segment number that reached the
    /// receiver (in order or not).
    pub rcv_high: u32,
    /// Its packets in the network: sent by its endpoints, less those that reached their
    /// endpoint or were dropped, plus netem's copies (kept for short flows, whose slot is
    /// given back when it is 0 after completion, `crate::flow_pool`).
    pub in_net: u32,
    /// Counters at the end of warm-up (zero if the flow started later).
    pub warm: FlowSnapshot,
    /// Counters at the flow's stop time, once reached (boxed: few flows have a stop time,
    /// and a flow costs 48 bytes less without it).
    pub stop_snap: Option<Box<FlowSnapshot>>,
    /// Delays measured in the flow's window (after the warm-up, before a stop).
    pub delays: FlowDelays,
    /// A ping prober's probes (send times and round-trip times); `None` for other flows.
    pub ping: Option<Box<crate::ping::PingLog>>,
}

/// What a flow's packets experienced in its measurement window, measured by the simulator
/// (not by the endpoints' own estimators).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowDelays {
    /// One-way delay of every data packet (TCP segment or UDP datagram, retransmissions
    /// included) that reached the receiver: arrival time minus the time the sender emitted it.
    pub owd: FlowHistogram,
    /// Round-trip time of every ACK that reached the sender (duplicates and ACKs of
    /// retransmissions included): its arrival time minus the emission time of the data
    /// segment whose arrival triggered it (for a delayed ACK, the first segment it
    /// acknowledges), as a TCP timestamp echo measures it (RFC 7323 §4), so it includes the
    /// receiver's delayed-ACK wait. Karn's rule does not apply: each echo names one
    /// transmission.
    pub rtt: FlowHistogram,
}

impl Flow {
    /// Payload bytes of TCP segments `0 .. segs`.
    fn seg_bytes(&self, segs: u32) -> u64 {
        let b = segs as u64 * self.mss as u64;
        self.size.map_or(b, |s| b.min(s))
    }

    /// Payload bytes delivered in order to the receiving application.
    pub fn delivered(&self) -> u64 {
        match &self.ep {
            Endpoint::Tcp { rcv, .. } => self.seg_bytes(rcv.rcv_nxt),
            Endpoint::Udp(_) => self.udp_bytes,
        }
    }

    /// The goodput numerator: payload bytes delivered in order to the receiving application
    /// during the flow's measurement window `[t0, t1] = [max(start, warmup), min(now, stop,
    /// completion)]`: `delivered(t1) - delivered(t0)`, what the receiving application read in
    /// the window (for UDP, the payload of the datagrams received in it). Data held in the
    /// reassembly buffer at `t0` counts when the retransmission filling the hole below it
    /// releases it inside the window, as an application would see it; see `SCHEMA.md`
    /// ("Measurement definitions") for the capacity bound this implies.
    pub fn goodput_bytes(&self) -> u64 {
        let end = self
            .stop_snap
            .as_deref()
            .copied()
            .unwrap_or_else(|| self.snapshot());
        end.delivered.saturating_sub(self.warm.delivered)
    }

    /// True while the flow's measurement window is open at `now` once the warm-up is over:
    /// started and not stopped (a finite flow's window closes at its completion, after which
    /// nothing of it arrives).
    #[inline]
    pub fn measuring(&self) -> bool {
        self.stop_snap.is_none()
    }

    /// Current counters (same shape as the warm-up snapshot).
    pub fn snapshot(&self) -> FlowSnapshot {
        let (received_high, retransmits, timeouts, rtt_sum, rtt_count) = match &self.ep {
            Endpoint::Tcp { snd, .. } => (
                self.seg_bytes(self.rcv_high),
                snd.stats.retransmits,
                snd.stats.timeouts,
                snd.stats.rtt_sum,
                snd.stats.rtt_count,
            ),
            Endpoint::Udp(_) => (self.udp_bytes, 0, 0, 0.0, 0),
        };
        FlowSnapshot {
            delivered: self.delivered(),
            received_high,
            retransmits,
            timeouts,
            rtt_sum,
            rtt_count,
        }
    }

    /// Completion time of a finite TCP flow (last byte acknowledged).
    pub fn done_at(&self) -> Option<Ns> {
        match &self.ep {
            Endpoint::Tcp { snd, .. } => snd.done_at,
            Endpoint::Udp(_) => None,
        }
    }

    /// A TCP flow.
    #[allow(clippy::too_many_arguments)]
    pub fn tcp(
        id: u32,
        group: u32,
        kind: FlowKind,
        src: u32,
        dst: u32,
        start: Ns,
        stop: Option<Ns>,
        size: Option<u64>,
        p: TcpParams,
    ) -> Flow {
        Flow {
            id,
            group,
            kind,
            cc: Some(p.cc),
            src,
            dst,
            start,
            stop,
            size,
            mss: p.mss,
            started: false,
            ep: Endpoint::Tcp {
                snd: TcpSender::new(id, dst, p, size),
                rcv: TcpReceiver::new(id, src, p.delayed_ack, p.sack)
                    .with_per_segment_ce(p.cc.needs_ecn())
                    .with_accecn(p.accecn)
                    .with_linux_delack(p.extras.linux_delack),
            },
            udp_bytes: 0,
            rcv_high: 0,
            in_net: 0,
            warm: FlowSnapshot::default(),
            stop_snap: None,
            delays: FlowDelays::default(),
            ping: None,
        }
    }
}

/// Poisson arrivals of short TCP flows with Pareto sizes.
#[derive(Clone, Debug)]
pub struct ShortFlowGen {
    /// Arrival rate, flows/s.
    pub rate: f64,
    /// Mean size, bytes.
    pub mean_size: f64,
    /// Pareto shape.
    pub shape: f64,
    /// TCP parameters of every flow.
    pub params: TcpParams,
    /// Endpoints shared by the group's flows.
    pub src: u32,
    /// Destination.
    pub dst: u32,
    /// No arrivals after this time.
    pub stop: Option<Ns>,
    /// The group's random stream.
    pub rng: Rng,
    /// Sizes from this CDF instead of the Pareto law.
    pub cdf: Option<std::sync::Arc<experiment::sizes::SizeCdf>>,
    /// On a fabric: its host count (hosts are nodes `0 .. hosts`); each flow then runs between
    /// two distinct hosts drawn uniformly. 0: every flow from `src` to `dst`.
    pub hosts: u32,
}

impl ShortFlowGen {
    /// Time to the next arrival, seconds.
    pub fn next_gap(&mut self) -> f64 {
        self.rng.exponential(1.0 / self.rate)
    }

    /// Size of the next flow, whole bytes (>= 1).
    pub fn next_size(&mut self) -> u64 {
        match &self.cdf {
            Some(c) => c.quantile(self.rng.uniform()),
            None => (self.rng.pareto(self.mean_size, self.shape).ceil() as u64).max(1),
        }
    }

    /// The next flow's `(src, dst)`: the group's pair, or on a fabric two distinct hosts drawn
    /// uniformly.
    pub fn next_pair(&mut self) -> (u32, u32) {
        if self.hosts < 2 {
            return (self.src, self.dst);
        }
        let n = self.hosts as u64;
        let s = ((self.rng.next_u32() as u64 * n) >> 32) as u32;
        let d = ((self.rng.next_u32() as u64 * (n - 1)) >> 32) as u32;
        (s, if d >= s { d + 1 } else { d })
    }
}

#[cfg(test)]
mod tests {
    /// A flow's table entry (its TCP endpoints included) stays within 1 KiB (1016 bytes with
    /// the pacer's burst state): what few flows have (a stop-time snapshot, a ping log) is
    /// boxed.
    #[test]
    fn flow_stays_small() {
        let n = std::mem::size_of::<super::Flow>();
        assert!(n <= 1024, "Flow is {n} bytes");
    }
}
