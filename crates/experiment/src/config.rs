//! The simulation configuration (`SimConfig`), its JSON form and validation.
//!
//! Units at this boundary (see `SCHEMA.md`): **times in seconds** (`f64`),
//! **rates in bits per second** (`f64`), **sizes in bytes or packets**
//! (integers). Everything is converted once to integer nanoseconds and
//! integer bit rates. Unknown keys are rejected (`deny_unknown_fields`) so a
//! typo never silently falls back to a default.

use std::fmt;

use aqm::QdiscConfig;

use crate::cc::CcKind;
use crate::service::{Capacity, RateSteps};
use crate::time::{secs_to_ns, Ns};

/// Default monitor sample interval, 10 ms.
pub const DEFAULT_SAMPLE_INTERVAL: f64 = 0.01;
/// Default packet size in bytes (IP size including 40 bytes of TCP/IP
/// headers, so MSS = 960).
pub const DEFAULT_PACKET_SIZE: u32 = 1000;
/// Default buffer of the non-bottleneck queues of the builders (packets),
/// large enough that only the bottleneck drops.
pub const DEFAULT_SIDE_BUFFER: u32 = 10_000;
/// Default buffer of an explicit link without a limit (packets).
pub const DEFAULT_LINK_BUFFER: u32 = 1000;
/// Default minimum RTO, seconds (Linux).
pub const DEFAULT_MIN_RTO_S: f64 = 0.2;
/// Default start-time jitter of long-lived groups without a `start`: flows
/// start uniformly in `[0, 1 s]`.
pub const DEFAULT_START_JITTER: f64 = 1.0;
/// Largest packet size accepted, bytes.
pub const MAX_PACKET_SIZE: u32 = 65_535;
/// Initial congestion window, segments (RFC 6928, Linux's default).
pub const DEFAULT_INIT_CWND: u32 = 10;
/// Bytes of TCP/IP headers in every TCP packet: a packet's size is its IP size, so a full
/// segment carries `packet_size - 40` bytes of payload.
pub const HEADER_BYTES: u32 = 40;
/// Bytes of UDP/IP headers in every datagram.
pub const UDP_HEADER_BYTES: u32 = 28;
/// Default trace batch: rows per traced link held before the caller drains them.
pub const DEFAULT_TRACE_BATCH: usize = 65_536;

/// Path metric of the static routing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Fewest hops (BFS-equivalent); ties broken by lowest link index.
    #[default]
    Hops,
    /// Smallest total propagation delay, then fewest hops; ties broken by
    /// lowest link index.
    Delay,
}

/// Drop-tail, the default queue discipline.
pub fn droptail() -> QdiscConfig {
    QdiscConfig::default_for("droptail").expect("drop-tail is always registered")
}

/// A whole simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Scenario name, copied into the results.
    pub scenario: String,
    /// Scenario seed; every random stream is derived from it.
    pub seed: u64,
    /// Simulated time, seconds (> 0).
    pub duration: f64,
    /// Warm-up, seconds (>= 0, < duration): statistics exclude it.
    pub warmup: f64,
    /// Monitor sample interval, seconds (> 0).
    pub sample_interval: f64,
    /// Routing metric for the static shortest paths.
    pub routing: Metric,
    /// The network.
    pub topology: TopologyConfig,
    /// Traffic, as flow groups.
    pub flows: Vec<FlowGroup>,
    /// Names of monitored links (time series, delay histograms). Default:
    /// the bottleneck(s) of a builder, every link of an explicit topology.
    pub monitor: Option<Vec<String>>,
    /// Flow ids whose congestion window is traced (ids are assigned in
    /// group order: group 0's flows first).
    pub cwnd_trace: Vec<u32>,
    /// Congestion-window trace interval, seconds (default: `sample_interval`).
    pub cwnd_interval: Option<f64>,
    /// Names of the links whose per-packet queue events can be traced
    /// (`netsim::Simulation::start_trace`; see `netsim::trace`).
    pub trace: Vec<String>,
    /// Rows per trace batch (per traced link) before the traced driver stops to let the
    /// caller drain (default [`DEFAULT_TRACE_BATCH`]).
    pub trace_batch: Option<usize>,
    /// `[pcap]`: the links captured to a pcapng file (`netsim::pcap`); `None`: no capture.
    pub pcap: Option<PcapConfig>,
}

/// Default pcap batch: packets per captured link direction held before they are written.
pub const DEFAULT_PCAP_BATCH: usize = 65_536;

/// The scenario's `[pcap]` table: which links the simulator captures and how.
#[derive(Clone, Debug, PartialEq)]
pub struct PcapConfig {
    /// Captured links, each as (name as results show it, core link name); both directions
    /// of each are captured (the link and its reverse twin, if the topology has one).
    pub links: Vec<(String, String)>,
    /// Synthesise an Ethernet header before the IPv4 header (`LINKTYPE_ETHERNET`, 14 bytes
    /// more per packet) instead of raw IPv4 (`LINKTYPE_RAW`).
    pub ethernet: bool,
    /// Also capture at the hosts: every packet a flow's sender or receiver emits or
    /// consumes, on two interfaces `senders` and `receivers`.
    pub hosts: bool,
    /// Packets per captured link direction buffered before they are written.
    pub batch: usize,
}

/// Topology: explicit, or one of the builders. Tagged by `"type"`.
#[derive(Clone, Debug, PartialEq)]
pub enum TopologyConfig {
    /// Nodes, links and optional static routes given one by one.
    Explicit(ExplicitTopology),
    /// The dumbbell (see `SCHEMA.md` for its fixed semantics).
    Dumbbell(DumbbellConfig),
    /// A chain of `hops` bottlenecks.
    ParkingLot(ParkingLotConfig),
    /// A leaf-spine or fat-tree fabric with ECMP routing (`crate::fabric`).
    Fabric(crate::fabric::FabricConfig),
}

impl TopologyConfig {
    /// The AQM of a builder's bottleneck(s); `None` for explicit topologies (each link has
    /// its own).
    pub fn aqm(&self) -> Option<&QdiscConfig> {
        match self {
            TopologyConfig::Dumbbell(d) => Some(&d.aqm),
            TopologyConfig::ParkingLot(p) => Some(&p.aqm),
            TopologyConfig::Explicit(_) | TopologyConfig::Fabric(_) => None,
        }
    }

    /// The AQM of a builder's reverse bottleneck(s) when they are bottlenecks too
    /// ([`DumbbellConfig::reverse_aqm`]); `None` otherwise and for explicit topologies.
    pub fn reverse_aqm(&self) -> Option<&QdiscConfig> {
        match self {
            TopologyConfig::Dumbbell(d) => d.reverse_aqm.as_ref(),
            TopologyConfig::ParkingLot(p) => p.reverse_aqm.as_ref(),
            TopologyConfig::Explicit(_) | TopologyConfig::Fabric(_) => None,
        }
    }
}

/// Which way a builder's flow group sends its data (scenario key `direction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Left to right: senders at the entry router (`R1`, `R{entry}`), data through the
    /// forward bottleneck(s), ACKs through the reverse one(s).
    #[default]
    Forward,
    /// Right to left: senders at the exit router, data through the reverse bottleneck(s)
    /// (a parking lot's chain backwards), ACKs through the forward one(s).
    Reverse,
}

impl Direction {
    /// `"forward"` or `"reverse"`, as in the scenario and the results.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

/// An explicit topology.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplicitTopology {
    /// Node names (unique).
    pub nodes: Vec<String>,
    /// Links.
    pub links: Vec<LinkConfig>,
    /// Static route overrides applied after shortest-path routing.
    pub routes: Vec<RouteConfig>,
}

/// One link (and, if `duplex`, its reverse twin).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Link name (default `"FROM->TO"`); the reverse twin is named
    /// `"TO->FROM"`.
    pub name: Option<String>,
    /// Source node.
    pub from: String,
    /// Destination node.
    pub to: String,
    /// Rate, bits/s (> 0).
    pub rate: f64,
    /// One-way propagation delay, seconds (>= 0).
    pub delay: f64,
    /// Bernoulli loss probability in [0, 1).
    pub loss: f64,
    /// Queue discipline at the egress (default drop-tail).
    pub aqm: QdiscConfig,
    /// Buffer limit in packets (default 1000 unless `limit_bytes`).
    pub limit_pkts: Option<u32>,
    /// Buffer limit in bytes (exclusive with `limit_pkts`).
    pub limit_bytes: Option<u64>,
    /// Also create the reverse link with the same parameters (default true).
    pub duplex: bool,
    /// Capacity traces of the link and of its reverse twin ([`LinkTraces`]).
    pub traces: LinkTraces,
    /// netem impairments of the link and of its reverse twin (`netem`, `reverse_netem`).
    pub netem: crate::netem::LinkNetem,
}

/// Mahimahi traces a link pair follows (`rate_trace`, `reverse_rate_trace`); `None`: a fixed
/// rate. With a trace the link's `rate` is only the nominal rate: the summary's, PAQMAN's,
/// and the other rate-reading AQMs' until the trace's first 100 ms window ends.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkTraces {
    /// The forward link's (a dumbbell's or parking lot's bottleneck(s), an explicit link).
    pub forward: Option<std::sync::Arc<crate::service::RateTrace>>,
    /// The reverse link's (`R2->R1`, the parking lot's reverse bottlenecks, a duplex link's
    /// twin).
    pub reverse: Option<std::sync::Arc<crate::service::RateTrace>>,
}

/// A static route: at node `at`, packets for `dst` leave on link `link`.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteConfig {
    /// Node where the entry is installed.
    pub at: String,
    /// Destination node.
    pub dst: String,
    /// Name of an outgoing link of `at`.
    pub link: String,
}

/// Dumbbell builder.
#[derive(Clone, Debug, PartialEq)]
pub struct DumbbellConfig {
    /// Bottleneck rate C, bits/s (> 0).
    pub bottleneck_rate: f64,
    /// Two-way propagation delay of every flow (without extra delay),
    /// seconds (> 0): access links rtt/8 each, bottleneck rtt/4 (with
    /// `access = none`: no access links, bottleneck rtt/2).
    pub rtt: f64,
    /// Queue discipline on R1->R2 (default drop-tail).
    pub aqm: QdiscConfig,
    /// The reverse bottleneck `R2->R1` as a second bottleneck (`[reverse_aqm]`, or the
    /// forward AQM when a group has `direction = "reverse"`): its queue discipline, with the
    /// bottleneck's buffer, monitored. `None`: the ACK path of before, drop-tail with
    /// `side_buffer_pkts`, not monitored.
    pub reverse_aqm: Option<QdiscConfig>,
    /// Bottleneck buffer in packets (exactly one of `buffer_pkts`,
    /// `buffer_bytes`).
    pub buffer_pkts: Option<u32>,
    /// Bottleneck buffer in bytes.
    pub buffer_bytes: Option<u64>,
    /// Access link rate, bits/s (default 10 x `bottleneck_rate`).
    pub access_rate: Option<f64>,
    /// Buffer of every other queue, packets (default 10000).
    pub side_buffer_pkts: u32,
    /// Bernoulli loss on R1->R2, in [0, 1).
    pub loss: f64,
    /// Changes of the bottleneck rate during the run, in increasing time order (varying
    /// capacity); the link starts at `bottleneck_rate`.
    pub rate_changes: Vec<RateChange>,
    /// Capacity traces of the bottleneck `R1->R2` and of `R2->R1`.
    pub traces: LinkTraces,
    /// netem impairments of `R1->R2` and of `R2->R1` (`netem`, `reverse_netem`).
    pub netem: crate::netem::LinkNetem,
    /// How hosts attach to the routers (default [`Access::Link`]; not serialized then, so
    /// the serialized configuration of a dumbbell with access links is unchanged).
    pub access: Access,
}

impl LinkTraces {
    /// The capacities of the pair: (forward, reverse); `None`: a fixed rate.
    pub fn capacities(&self) -> (Option<Capacity>, Option<Capacity>) {
        (
            self.forward.clone().map(Capacity::Trace),
            self.reverse.clone().map(Capacity::Trace),
        )
    }
}

impl DumbbellConfig {
    /// The capacities of the bottleneck `R1->R2` and of `R2->R1`: their traces, or the
    /// bottleneck's `rate_changes` as a piecewise-constant rate; `None`: a fixed rate.
    pub fn capacities(&self) -> (Option<Capacity>, Option<Capacity>) {
        let mut caps = self.traces.capacities();
        if !self.rate_changes.is_empty() {
            let changes: Vec<(Ns, u64)> = self
                .rate_changes
                .iter()
                .map(|c| (secs_to_ns(c.at), c.rate.round() as u64))
                .collect();
            let steps = RateSteps::new(self.bottleneck_rate.round() as u64, &changes);
            caps.0 = Some(Capacity::Steps(std::sync::Arc::new(steps)));
        }
        caps
    }
}

/// How a dumbbell's senders and receivers attach to its routers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// One sender host `S{h}` and one receiver host `D{h}` per flow, each on its own duplex
    /// access link (delay `rtt/8` each way, rate `access_rate`, drop-tail `side_buffer_pkts`);
    /// the bottleneck's delay is `rtt/4` each way.
    #[default]
    Link,
    /// No hosts and no access links (htsim's dumbbell): every sender sits at `R1` and sends
    /// straight into the bottleneck queue `R1->R2`, every receiver sits at `R2` and sends its
    /// ACKs straight into `R2->R1` (zero delay, infinite rate). The bottleneck's propagation
    /// delay is `rtt/2` each way, so the two-way propagation delay is still `rtt`.
    None,
}

impl Access {
    /// True for [`Access::Link`] (the default).
    pub fn is_link(&self) -> bool {
        matches!(self, Access::Link)
    }
}

/// A change of a link's rate at a given time; it applies to the packet in transmission too
/// (its bits left are sent at the new rate; `experiment::service`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateChange {
    /// Time of the change, seconds (in (0, duration); strictly increasing in a list).
    pub at: f64,
    /// New rate, bits/s (>= 0; 0: nothing is sent until the next change).
    pub rate: f64,
}

/// Parking-lot builder: routers R0 .. R{hops}, bottleneck i = `R{i}->R{i+1}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParkingLotConfig {
    /// Number of bottlenecks K (>= 1).
    pub hops: u32,
    /// Rate of every bottleneck, bits/s (> 0).
    pub bottleneck_rate: f64,
    /// One-way propagation delay of each bottleneck, seconds.
    pub hop_delay: f64,
    /// One-way propagation delay of each access link, seconds.
    pub access_delay: f64,
    /// Queue discipline on every forward bottleneck.
    pub aqm: QdiscConfig,
    /// Queue discipline of every reverse bottleneck `R{i+1}->R{i}` (see
    /// [`DumbbellConfig::reverse_aqm`]).
    pub reverse_aqm: Option<QdiscConfig>,
    /// Bottleneck buffer in packets (exactly one of the two).
    pub buffer_pkts: Option<u32>,
    /// Bottleneck buffer in bytes.
    pub buffer_bytes: Option<u64>,
    /// Access link rate, bits/s (default 10 x `bottleneck_rate`).
    pub access_rate: Option<f64>,
    /// Buffer of every other queue, packets (default 10000).
    pub side_buffer_pkts: u32,
    /// Bernoulli loss on every forward bottleneck, in [0, 1).
    pub loss: f64,
    /// Capacity traces of every forward bottleneck and of every reverse one.
    pub traces: LinkTraces,
    /// netem impairments of every forward bottleneck and of every reverse one.
    pub netem: crate::netem::LinkNetem,
}

/// Where a group's flows attach. Explicit topologies need `src` and `dst`;
/// builders allocate one host pair per flow (one per short-flow group) and
/// parking lots use `path = [entry router, exit router]` (default
/// `[0, hops]`, the long flows).
#[derive(Clone, Copy, Debug)]
pub struct Endpoints<'a> {
    /// Source node (explicit topologies).
    pub src: Option<&'a str>,
    /// Destination node (explicit topologies).
    pub dst: Option<&'a str>,
    /// Parking lot: `[entry router index, exit router index]`.
    pub path: Option<[u32; 2]>,
    /// Builders: extra one-way delay per flow (seconds).
    pub extra_delay: &'a [f64],
    /// Builders: which way the data goes.
    pub direction: Direction,
}

/// A group of flows. Tagged by `"kind"`.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowGroup {
    /// `count` TCP flows, backlogged or of `bytes` each.
    Tcp(TcpGroup),
    /// `count` constant-bit-rate UDP sources.
    UdpCbr(UdpGroup),
    /// `count` on/off UDP sources (exponential on and off periods).
    UdpOnoff(UdpGroup),
    /// Short TCP flows: Poisson arrivals, Pareto sizes.
    ShortTcp(ShortTcpGroup),
    /// `count` ping probers: a small UDP probe every `interval`, echoed by the destination
    /// (latency under load, as Flent's ping).
    Ping(PingGroup),
}

/// The TCP mechanisms of the `linux` profile beyond the classic model (scenario key `profile`,
/// see `docs/tcp.md`): all off is the `classic` profile, today's model bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpExtras {
    /// RFC 7323 timestamps: every ACK of new data yields an RTT sample, retransmissions
    /// included (Linux `tcp_rtt_tsopt_us`), instead of Karn's rule.
    pub timestamps: bool,
    /// Linux's delayed-ACK receiver (with `delayed_ack`): quick-ACK mode at the start and
    /// after a duplicate segment (`TCP_MAX_QUICKACKS`).
    pub linux_delack: bool,
    /// HyStart in CUBIC's slow start (Linux `tcp_cubic.c`); CUBIC only.
    pub hystart: bool,
    /// RACK-TLP loss detection (RFC 8985); with SACK only.
    pub rack: bool,
    /// Prague paces itself at its own rate (Linux `tcp_prague` sets `SK_PACING_NEEDED` and
    /// `sk_pacing_rate` in `prague_update_pacing_rate`); Prague only. Off in both profiles for
    /// now: with it, two Prague flows among 20 CUBIC ones under PIE starved
    /// (`crates/netsim/tests/prague_fallback.rs`, seed 2 with delayed ACKs), not yet explained.
    pub prague_pacing: bool,
    /// Linux's receive-buffer autotuning bounds the receiver's window (`tcp_rcv_space_adjust`;
    /// only without a fixed `rwnd`).
    pub rcvbuf: bool,
    /// Linux's window arithmetic for Reno, NewReno and CUBIC: a whole-number window, slow
    /// start by every acknowledged segment (`tcp_slow_start`), congestion avoidance by a
    /// counter of acknowledged segments (`tcp_cong_avoid_ai`); `ssthresh = max(cwnd / 2, 2)`
    /// on the window for Reno and NewReno (`tcp_reno_ssthresh`), and for CUBIC the rest of
    /// `tcp_cubic.c` (`bictcp_update` in jiffies from the smallest RTT,
    /// `cubictcp_recalc_ssthresh` on the window).
    pub linux_window: bool,
    /// Linux's congestion states and timer: a loss found during an ECN reduction
    /// (`TCP_CA_CWR`) turns it into a recovery that goes on with the same `ssthresh`,
    /// `high_seq` and PRR counts instead of reducing a second time (`tcp_enter_recovery`); a
    /// timeout inside a reduction whose `high_seq` is not yet acknowledged keeps its
    /// `ssthresh` (`tcp_enter_loss`); the window grows only while it is the limit
    /// (`tcp_is_cwnd_limited`); every partial ACK re-arms the retransmission timer
    /// (`tcp_clean_rtx_queue`'s `FLAG_SET_XMIT_TIMER`).
    pub linux_states: bool,
}

impl TcpExtras {
    /// Everything the `linux` profile turns on, for controller `cc` with SACK `sack`.
    pub fn linux(cc: CcKind, sack: bool) -> Self {
        TcpExtras {
            timestamps: true,
            linux_delack: true,
            hystart: cc == CcKind::Cubic,
            rack: sack,
            prague_pacing: false,
            rcvbuf: true,
            linux_window: matches!(cc, CcKind::Reno | CcKind::Newreno | CcKind::Cubic),
            linux_states: true,
        }
    }
}

/// Long-lived (or fixed-size) TCP flows.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpGroup {
    /// Group name (results, errors). Default `"flows[i]"`.
    pub name: Option<String>,
    /// Number of flows (>= 1).
    pub count: u32,
    /// Congestion control.
    pub cc: CcKind,
    /// ECN (RFC 3168).
    pub ecn: bool,
    /// Delayed ACKs at the receiver.
    pub delayed_ack: bool,
    /// Selective acknowledgements (RFC 2018) with SACK-based loss recovery
    /// (RFC 6675, FACK loss inference) instead of NewReno's.
    pub sack: bool,
    /// Proportional rate reduction (RFC 6937, PRR-SSRB) in SACK recovery
    /// (needs `sack`); off by default.
    pub prr: bool,
    /// IP packet size of full segments, bytes (> 40).
    pub packet_size: u32,
    /// Bytes per flow (`None`: backlogged).
    pub bytes: Option<u64>,
    /// Start time, seconds (default 0 with 1 s jitter).
    pub start: Option<f64>,
    /// Each flow starts at `start + U[0, start_jitter]` (default 1 s if
    /// `start` is absent, else 0).
    pub start_jitter: Option<f64>,
    /// Time the flows stop offering new data, seconds.
    pub stop: Option<f64>,
    /// Initial window, segments (>= 1).
    pub init_cwnd: u32,
    /// Minimum RTO, seconds (> 0).
    pub min_rto: f64,
    /// Receive window, segments (default unlimited).
    pub rwnd: Option<u32>,
    /// Source node (explicit topologies).
    pub src: Option<String>,
    /// Destination node (explicit topologies).
    pub dst: Option<String>,
    /// Parking lot: `[entry router index, exit router index]` (default
    /// `[0, hops]`).
    pub path: Option<[u32; 2]>,
    /// Builders: extra one-way delay (seconds) on each flow's sender access
    /// link, both directions: `[]` none, `[d]` for all flows, or one value
    /// per flow.
    pub extra_delay: Vec<f64>,
    /// Builders: which way the data goes (default forward).
    pub direction: Direction,
    /// Class of a class-based qdisc (e.g. DRR) the group's packets (data and
    /// ACKs) are filed under; must name a class of every class-based qdisc
    /// on the group's forward path, at the same position. `None`: the first
    /// class.
    pub class: Option<String>,
    /// Differentiated Services codepoint of the group's packets, data and ACKs
    /// (RFC 2474, 0..=63; `flows[i].dscp`); 0 is best effort.
    pub dscp: u8,
    /// Accurate ECN feedback (AccECN, draft-ietf-tcpm-accurate-ecn) negotiated by both
    /// ends (needs `ecn`); default on for Prague, off otherwise.
    pub accecn: bool,
    /// Prague's RTT independence (Linux `RTT_CONTROL_RATE`); off by default, Prague only.
    pub rtt_scaling: bool,
    /// Pace every transmission at Linux's `tcp_update_pacing_rate` (a host with `sch_fq`);
    /// controllers that set their own pacing rate (BBR) are paced regardless. Off by default.
    pub pacing: bool,
    /// The `linux` profile's mechanisms (all off: `classic`).
    pub extras: TcpExtras,
    /// Fabrics: which host sends to which (`count` is then the pattern's flow count).
    pub pattern: Option<crate::fabric::Pattern>,
}

/// UDP sources (CBR or on/off).
#[derive(Clone, Debug, PartialEq)]
pub struct UdpGroup {
    /// Group name.
    pub name: Option<String>,
    /// Number of sources (>= 1).
    pub count: u32,
    /// Sending rate while on, bits/s (> 0).
    pub rate: f64,
    /// IP packet size, bytes (> 28).
    pub packet_size: u32,
    /// Start time, seconds (default 0 with 1 s jitter).
    pub start: Option<f64>,
    /// Start jitter, seconds.
    pub start_jitter: Option<f64>,
    /// Stop time, seconds.
    pub stop: Option<f64>,
    /// On/off: mean on period, seconds (required for `udp_onoff`).
    pub on_mean: Option<f64>,
    /// On/off: mean off period, seconds (required for `udp_onoff`).
    pub off_mean: Option<f64>,
    /// Source node (explicit topologies).
    pub src: Option<String>,
    /// Destination node (explicit topologies).
    pub dst: Option<String>,
    /// Parking lot: `[entry router index, exit router index]` (default
    /// `[0, hops]`).
    pub path: Option<[u32; 2]>,
    /// Builders: extra one-way delay (seconds) on each flow's sender access
    /// link, both directions: `[]` none, `[d]` for all flows, or one value
    /// per flow.
    pub extra_delay: Vec<f64>,
    /// Builders: which way the data goes (default forward).
    pub direction: Direction,
    /// Class of a class-based qdisc (e.g. DRR) the group's packets (data and
    /// ACKs) are filed under; must name a class of every class-based qdisc
    /// on the group's forward path, at the same position. `None`: the first
    /// class.
    pub class: Option<String>,
    /// Differentiated Services codepoint of the group's packets, data and ACKs
    /// (RFC 2474, 0..=63; `flows[i].dscp`); 0 is best effort.
    pub dscp: u8,
}

/// Ping probers: one `size`-byte probe every `interval` from the source to the destination,
/// which echoes it at once; each probe's round-trip time is recorded (lost if no echo).
#[derive(Clone, Debug, PartialEq)]
pub struct PingGroup {
    /// Group name.
    pub name: Option<String>,
    /// Number of probers (>= 1).
    pub count: u32,
    /// Time between probes, seconds (> 0; default 0.2, Flent's).
    pub interval: f64,
    /// IP packet size of a probe and of its echo, bytes (> 28; default 64).
    pub size: u32,
    /// Start time, seconds (default 0 with 1 s jitter).
    pub start: Option<f64>,
    /// Start jitter, seconds.
    pub start_jitter: Option<f64>,
    /// Stop time, seconds.
    pub stop: Option<f64>,
    /// Source node (explicit topologies).
    pub src: Option<String>,
    /// Destination node (explicit topologies).
    pub dst: Option<String>,
    /// Parking lot: `[entry router index, exit router index]`.
    pub path: Option<[u32; 2]>,
    /// Builders: extra one-way delay (seconds) on each prober's access link.
    pub extra_delay: Vec<f64>,
    /// Builders: which way the probes go (the echoes go the other way).
    pub direction: Direction,
    /// Class of a class-based qdisc the probes and echoes are filed under.
    pub class: Option<String>,
    /// DiffServ code point of the probes and echoes (RFC 2474, 0..=63; `flows[i].dscp`); 0 is
    /// best effort.
    pub dscp: u8,
}

/// Short TCP flows with Poisson arrivals and Pareto sizes (or sizes from a CDF; on a fabric
/// each between two random hosts).
#[derive(Clone, Debug, PartialEq)]
pub struct ShortTcpGroup {
    /// Group name.
    pub name: Option<String>,
    /// Poisson arrival rate, flows per second (> 0).
    pub arrival_rate: f64,
    /// Mean flow size, bytes (> 0).
    pub mean_size: f64,
    /// Pareto shape (> 1; default 1.2).
    pub pareto_shape: f64,
    /// Congestion control.
    pub cc: CcKind,
    /// ECN.
    pub ecn: bool,
    /// Delayed ACKs.
    pub delayed_ack: bool,
    /// SACK (see [`TcpGroup::sack`]).
    pub sack: bool,
    /// PRR (see [`TcpGroup::prr`]).
    pub prr: bool,
    /// IP packet size, bytes.
    pub packet_size: u32,
    /// First arrival process start, seconds (default 0).
    pub start: Option<f64>,
    /// No arrivals after this time, seconds.
    pub stop: Option<f64>,
    /// Initial window, segments.
    pub init_cwnd: u32,
    /// Minimum RTO, seconds.
    pub min_rto: f64,
    /// Source node (explicit topologies).
    pub src: Option<String>,
    /// Destination node (explicit topologies).
    pub dst: Option<String>,
    /// Parking lot: `[entry router index, exit router index]` (default
    /// `[0, hops]`).
    pub path: Option<[u32; 2]>,
    /// Builders: extra one-way delay (seconds) on each flow's sender access
    /// link, both directions: `[]` none, `[d]` for all flows, or one value
    /// per flow.
    pub extra_delay: Vec<f64>,
    /// Builders: which way the data goes (default forward).
    pub direction: Direction,
    /// Class of a class-based qdisc (e.g. DRR) the group's packets (data and
    /// ACKs) are filed under; must name a class of every class-based qdisc
    /// on the group's forward path, at the same position. `None`: the first
    /// class.
    pub class: Option<String>,
    /// Differentiated Services codepoint of the group's packets, data and ACKs
    /// (RFC 2474, 0..=63; `flows[i].dscp`); 0 is best effort.
    pub dscp: u8,
    /// Accurate ECN feedback (AccECN, draft-ietf-tcpm-accurate-ecn) negotiated by both
    /// ends (needs `ecn`); default on for Prague, off otherwise.
    pub accecn: bool,
    /// Prague's RTT independence (Linux `RTT_CONTROL_RATE`); off by default, Prague only.
    pub rtt_scaling: bool,
    /// Pacing (see [`TcpGroup::pacing`]).
    pub pacing: bool,
    /// The `linux` profile's mechanisms (all off: `classic`).
    pub extras: TcpExtras,
    /// Sizes drawn from this CDF instead of the Pareto law (`mean_size` is then its mean).
    pub size_cdf: Option<std::sync::Arc<crate::sizes::SizeCdf>>,
}

impl FlowGroup {
    /// The attachment of the group.
    pub fn endpoints(&self) -> Endpoints<'_> {
        macro_rules! ep {
            ($g:expr) => {
                Endpoints {
                    src: $g.src.as_deref(),
                    dst: $g.dst.as_deref(),
                    path: $g.path,
                    extra_delay: &$g.extra_delay,
                    direction: $g.direction,
                }
            };
        }
        match self {
            FlowGroup::Tcp(g) => ep!(g),
            FlowGroup::UdpCbr(g) | FlowGroup::UdpOnoff(g) => ep!(g),
            FlowGroup::ShortTcp(g) => ep!(g),
            FlowGroup::Ping(g) => ep!(g),
        }
    }

    /// Number of host pairs / flows created at build time (short-flow groups
    /// share one pair).
    pub fn static_count(&self) -> u32 {
        match self {
            FlowGroup::Tcp(g) => g.count,
            FlowGroup::UdpCbr(g) | FlowGroup::UdpOnoff(g) => g.count,
            FlowGroup::ShortTcp(_) => 1,
            FlowGroup::Ping(g) => g.count,
        }
    }

    /// The class name the group's packets are filed under, if any.
    pub fn class(&self) -> Option<&str> {
        match self {
            FlowGroup::Tcp(g) => g.class.as_deref(),
            FlowGroup::UdpCbr(g) | FlowGroup::UdpOnoff(g) => g.class.as_deref(),
            FlowGroup::ShortTcp(g) => g.class.as_deref(),
            FlowGroup::Ping(g) => g.class.as_deref(),
        }
    }

    /// The DSCP of the group's packets (0: best effort).
    pub fn dscp(&self) -> u8 {
        match self {
            FlowGroup::Tcp(g) => g.dscp,
            FlowGroup::UdpCbr(g) | FlowGroup::UdpOnoff(g) => g.dscp,
            FlowGroup::ShortTcp(g) => g.dscp,
            FlowGroup::Ping(g) => g.dscp,
        }
    }

    /// Display name: the `name` field or `flows[i]`.
    pub fn display_name(&self, i: usize) -> String {
        let n = match self {
            FlowGroup::Tcp(g) => &g.name,
            FlowGroup::UdpCbr(g) | FlowGroup::UdpOnoff(g) => &g.name,
            FlowGroup::ShortTcp(g) => &g.name,
            FlowGroup::Ping(g) => &g.name,
        };
        n.clone().unwrap_or_else(|| format!("flows[{i}]"))
    }

    /// Kind as in the JSON tag.
    pub fn kind(&self) -> &'static str {
        match self {
            FlowGroup::Tcp(_) => "tcp",
            FlowGroup::UdpCbr(_) => "udp_cbr",
            FlowGroup::UdpOnoff(_) => "udp_onoff",
            FlowGroup::ShortTcp(_) => "short_tcp",
            FlowGroup::Ping(_) => "ping",
        }
    }
}

/// Configuration errors. Each names the offending key (a dotted path such as
/// `topology.bottleneck_rate` or `flows[2].rate`) and value.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigError {
    /// A value is out of range.
    Invalid {
        /// Dotted key.
        key: String,
        /// The offending value, as text.
        value: String,
        /// What is required.
        reason: String,
    },
    /// A node name that does not exist.
    UnknownNode {
        /// Dotted key.
        key: String,
        /// The name.
        name: String,
    },
    /// A link name that does not exist.
    UnknownLink {
        /// Dotted key.
        key: String,
        /// The name.
        name: String,
    },
    /// Two nodes or links with the same name.
    Duplicate {
        /// Dotted key.
        key: String,
        /// The name.
        name: String,
    },
    /// No route between a flow's endpoints (in either direction for TCP).
    Unroutable {
        /// Flow (group name and index).
        flow: String,
        /// Source node.
        src: String,
        /// Destination node.
        dst: String,
    },
    /// The AQM rejected its configuration.
    Aqm {
        /// Dotted key of the queue.
        key: String,
        /// The AQM crate's error.
        error: aqm::ConfigError,
    },
}

impl ConfigError {
    /// The error's fields: the key, the value as given (None where no single value is at
    /// fault) and the reason, for front ends that format their own line.
    pub fn parts(&self) -> (String, Option<String>, String) {
        match self {
            ConfigError::Invalid { key, value, reason } => {
                (key.clone(), Some(value.clone()), reason.clone())
            }
            ConfigError::UnknownNode { key, name } => (
                key.clone(),
                Some(format!("\"{name}\"")),
                "no such node".into(),
            ),
            ConfigError::UnknownLink { key, name } => (
                key.clone(),
                Some(format!("\"{name}\"")),
                "no such link".into(),
            ),
            ConfigError::Duplicate { key, name } => (
                key.clone(),
                Some(format!("\"{name}\"")),
                "duplicate name".into(),
            ),
            ConfigError::Unroutable { flow, src, dst } => (
                "flows".into(),
                Some(format!("\"{flow}\"")),
                format!("no route from {src} to {dst} (and back, for TCP)"),
            ),
            ConfigError::Aqm { key, error } => {
                let (k, v, r) = error.parts();
                (format!("{key}.{k}"), v, r)
            }
        }
    }

    /// An out-of-range value of `key`.
    pub fn invalid(key: impl Into<String>, value: impl fmt::Display, reason: &str) -> Self {
        ConfigError::Invalid {
            key: key.into(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }

    /// The offending key, if the error has one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Unroutable { .. } => None,
            ConfigError::Invalid { key, .. }
            | ConfigError::UnknownNode { key, .. }
            | ConfigError::UnknownLink { key, .. }
            | ConfigError::Duplicate { key, .. }
            | ConfigError::Aqm { key, .. } => Some(key),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Invalid { key, value, reason } => write!(f, "{key} = {value}: {reason}"),
            ConfigError::UnknownNode { key, name } => write!(f, "{key}: unknown node '{name}'"),
            ConfigError::UnknownLink { key, name } => write!(f, "{key}: unknown link '{name}'"),
            ConfigError::Duplicate { key, name } => write!(f, "{key}: duplicate name '{name}'"),
            ConfigError::Unroutable { flow, src, dst } => {
                write!(
                    f,
                    "flow {flow} is unroutable: no path between {src} and {dst}"
                )
            }
            ConfigError::Aqm { key, error } => write!(f, "{key}: {error}"),
        }
    }
}

impl std::error::Error for ConfigError {}
