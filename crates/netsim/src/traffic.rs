//! Flows and traffic generators: long-lived/finite TCP flows, UDP sources,
//! and Poisson arrivals of Pareto-sized short TCP flows.

use crate::engine::Ns;
use crate::rng::Rng;
use crate::tcp::{CcKind, TcpParams, TcpReceiver, TcpSender};
use crate::udp::UdpSource;

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
}

impl FlowKind {
    /// Name used in results.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::ShortTcp => "short_tcp",
            FlowKind::UdpCbr => "udp_cbr",
            FlowKind::UdpOnoff => "udp_onoff",
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
    /// Counters at the end of warm-up (zero if the flow started later).
    pub warm: FlowSnapshot,
    /// Counters at the flow's stop time, once reached.
    pub stop_snap: Option<FlowSnapshot>,
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

    /// The goodput numerator: payload bytes delivered in order to the
    /// receiving application during the flow's measurement window
    /// `[t0, t1] = [max(start, warmup), min(now, stop, completion)]` that
    /// first reached the receiver inside the window. UDP: payload of the
    /// datagrams received in `[t0, t1]`. TCP: in-order delivery during the
    /// window of the segments above the highest one received before `t0`
    /// (`rcv_high` at `t0`), i.e. `bytes(rcv_nxt(t1)) - bytes(rcv_high(t0))`
    /// (0 if negative). Excluded: the runs held in the reassembly buffer at
    /// `t0`, which crossed the network before the window although the
    /// retransmission filling the hole below them releases them inside it,
    /// and (conservatively) the segments of the holes between them.
    /// Meaningful only when `t1 > t0`; see `SCHEMA.md` ("Measurement
    /// definitions") for the resulting capacity bound.
    pub fn goodput_bytes(&self) -> u64 {
        let end = self.stop_snap.unwrap_or_else(|| self.snapshot());
        end.delivered.saturating_sub(self.warm.received_high)
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
                    .with_per_segment_ce(p.cc.needs_ecn()),
            },
            udp_bytes: 0,
            rcv_high: 0,
            warm: FlowSnapshot::default(),
            stop_snap: None,
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
}

impl ShortFlowGen {
    /// Time to the next arrival, seconds.
    pub fn next_gap(&mut self) -> f64 {
        self.rng.exponential(1.0 / self.rate)
    }

    /// Size of the next flow, whole bytes (>= 1).
    pub fn next_size(&mut self) -> u64 {
        (self.rng.pareto(self.mean_size, self.shape).ceil() as u64).max(1)
    }
}
