//! The simulation: owns the event queue, links, routes and flows, runs the
//! event loop, and exposes stepping, inspection, re-parameterisation and
//! results.
//!
//! Timers of TCP endpoints and AQMs are lazy: a component only stores its
//! deadline; the simulation keeps at most one pending event per timer at
//! the earliest known deadline and, when that event fires, either runs the
//! timer (deadline reached) or re-arms it at the current deadline. This
//! avoids one heap operation per ACK for the retransmission timer.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use aqm::{Instant, LinkInfo, QdiscConfig, QueueStats};

use experiment::config::{ConfigError, FlowGroup, SimConfig, DEFAULT_START_JITTER};
use crate::engine::{ns_to_secs, secs_to_ns, Due, Event, EventQueue, Ns};
use crate::flow_report::{flow_reports, MonitoredLink};
use crate::link::{Link, LinkCounters};
use experiment::monitor::{
    class_base, class_counters, class_summaries, push_class_rows, FlowHistogram, IntervalDelay,
};
use crate::node::Node;
use crate::packet::{Packet, F_ACK};
use experiment::results::{
    jain, ActiveFlows, ClassSeries, CwndTrace, DelayHistogram, DelayStats, Fairness, LinkSummary,
    SimResults, Summary, TimeSeries, JAIN_SCOPE,
};
use experiment::rng::{derive_seed, Rng, Stream};
use crate::routing::{Routes, NO_ROUTE};
use crate::tcp::{CcKind, TcpParams};
use crate::trace::{TraceBatch, TraceBuf};
use crate::traffic::{Endpoint, Flow, FlowKind, ShortFlowGen};
use crate::udp::{UdpSource, UDP_HEADER_BYTES};

/// Errors of operations on a running simulation.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// No link has this name.
    UnknownLink(String),
    /// No flow has this id.
    UnknownFlow(u32),
    /// A value is out of range.
    Invalid {
        /// What was being set.
        key: String,
        /// The value.
        value: f64,
        /// What is required.
        reason: &'static str,
    },
    /// The AQM rejected the parameter or configuration.
    Aqm {
        /// Link name.
        link: String,
        /// The AQM crate's error.
        error: aqm::ConfigError,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownLink(n) => write!(f, "unknown link '{n}'"),
            SimError::UnknownFlow(i) => write!(f, "unknown flow id {i}"),
            SimError::Invalid { key, value, reason } => write!(f, "{key} = {value}: {reason}"),
            SimError::Aqm { link, error } => write!(f, "link '{link}': {error}"),
        }
    }
}

impl std::error::Error for SimError {}

/// Snapshot of a link for inspection between steps.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkStatus {
    /// Link name.
    pub name: String,
    /// Name of the running AQM.
    pub aqm: String,
    /// Packets in the queue.
    pub queue_pkts: usize,
    /// Bytes in the queue.
    pub queue_bytes: u64,
    /// The AQM's current drop/mark probability.
    pub probability: f64,
    /// Counters of the current queue discipline (reset by `set_aqm`).
    pub aqm_stats: QueueStats,
    /// Cumulative link counters.
    pub counters: LinkCounters,
    /// Bytes of packet and per-flow state held by the queue discipline
    /// ([`aqm::Qdisc::memory_bytes`]).
    pub queue_memory_bytes: usize,
    /// A hashed qdisc's packet-pool size: the most packets it ever held at
    /// once, plus one ([`aqm::Qdisc::pool_slots`]); `None` for other qdiscs.
    pub queue_pool_slots: Option<usize>,
    /// Transmission rate, bits per second.
    pub rate_bps: u64,
}

/// Snapshot of a flow for inspection between steps.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowStatus {
    /// Flow id.
    pub id: u32,
    /// Kind name.
    pub kind: &'static str,
    /// Started yet.
    pub started: bool,
    /// Congestion window, segments (0 for UDP).
    pub cwnd: f64,
    /// Slow-start threshold, segments (infinite before the first loss).
    pub ssthresh: f64,
    /// Smoothed RTT, seconds (`None` before the first sample or for UDP).
    pub srtt_s: Option<f64>,
    /// Payload bytes acknowledged (TCP) or received (UDP).
    pub bytes_acked: u64,
    /// Payload bytes delivered in order to the receiver.
    pub bytes_delivered: u64,
    /// Payload bytes up to the highest segment that reached the receiver, in order or not
    /// (UDP: as `bytes_delivered`); minus `bytes_delivered`, the span the receiver's
    /// reassembly buffer holds (holes included).
    pub bytes_received_high: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Window reductions caused by ECN.
    pub ecn_reductions: u64,
    /// Smallest interval between two window reductions, seconds.
    pub min_reduction_gap_s: Option<f64>,
    /// Completion time (s since start) of a finished finite flow.
    pub fct_s: Option<f64>,
}

/// Packet conservation totals (see [`Simulation::check_conservation`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    /// Packets created by endpoints (data, ACKs, datagrams).
    pub sent: u64,
    /// Packets that reached their destination endpoint.
    pub delivered: u64,
    /// Packets dropped by queues.
    pub dropped: u64,
    /// Packets lost to random link loss.
    pub lost: u64,
    /// Packets in queues, in transmission or propagating.
    pub in_flight: u64,
}

/// A violated packet-conservation invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConservationError {
    /// A per-link invariant failed.
    Link {
        /// Link name.
        link: String,
        /// The counters involved.
        detail: String,
    },
    /// The global balance failed.
    Global(Conservation),
}

impl fmt::Display for ConservationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConservationError::Link { link, detail } => {
                write!(f, "conservation violated on link {link}: {detail}")
            }
            ConservationError::Global(c) => write!(
                f,
                "conservation violated: sent {} != delivered {} + dropped {} + lost {} + in flight {}",
                c.sent, c.delivered, c.dropped, c.lost, c.in_flight
            ),
        }
    }
}

impl std::error::Error for ConservationError {}

/// Runtime state of a flow group.
#[derive(Clone, Debug)]
enum GroupRt {
    Static,
    Short(ShortFlowGen),
}

/// Most rows [`Simulation::new`] reserves per time series (about 20 MB for the monitor's).
const RESERVED_ROWS: usize = 1 << 18;

/// A running simulation.
pub struct Simulation {
    cfg: SimConfig,
    now: Ns,
    warmup: Ns,
    sample_interval: Ns,
    cwnd_interval: Ns,
    ev: EventQueue,
    events: u64,
    nodes: Vec<Node>,
    links: Vec<Link>,
    link_index: HashMap<String, u32>,
    /// AQM activations of queue disciplines replaced by `set_aqm`.
    activations_base: Vec<u64>,
    /// Active-flow integral (flow x ns) and peak (since the warm-up) of hashed queue
    /// disciplines replaced by `set_aqm`.
    flow_base: Vec<(u128, u32)>,
    routes: Routes,
    flows: Vec<Flow>,
    groups: Vec<GroupRt>,
    monitored: Vec<u32>,
    cwnd_flows: Vec<u32>,
    ts: TimeSeries,
    /// Link id of each time-series row (`ts.link` is filled by `results`).
    ts_link: Vec<u32>,
    /// Per-class rows (link and class names empty here; `cts_ids` holds (link id, class)).
    cts: ClassSeries,
    cts_ids: Vec<(u32, u8)>,
    cwnd: CwndTrace,
    out_buf: Vec<Packet>,
    sent: u64,
    delivered: u64,
    warm: bool,
    link_snap: Vec<LinkSnap>,
    /// Class index of each flow group's packets (0: unclassified, the first class).
    group_class: Vec<u8>,
    /// True if some group has a class: only then does `emit` stamp packets.
    classed: bool,
    /// Per link, the class counters at the end of the warm-up.
    class_snap: Vec<Vec<QueueStats>>,
    /// Scheduled rate changes: (link id, new rate in bit/s), by [`Event::RateChange`] index.
    rate_changes: Vec<(u32, u64)>,
    /// Link ids named by `SimConfig::trace` (traced once [`Simulation::start_trace`] ran).
    trace_links: Vec<u32>,
    /// True once [`Simulation::start_trace`] gave the traced links their buffers.
    tracing: bool,
}

/// A link's statistics at the end of the warm-up.
#[derive(Clone, Copy, Debug, Default)]
struct LinkSnap {
    ctr: LinkCounters,
    activations: u64,
    area: (u128, u128),
    /// Active-flow integral (hashed qdiscs), flow x ns.
    flow_area: u128,
    /// [`Link::tx_work_at`] at the warm-up instant.
    work: u128,
    /// [`Link::capacity_at`] at the warm-up instant.
    cap: u128,
}

#[allow(clippy::too_many_arguments)]
fn tcp_params(
    cc: CcKind,
    ecn: bool,
    delayed_ack: bool,
    sack: bool,
    prr: bool,
    packet_size: u32,
    init_cwnd: u32,
    min_rto: f64,
    rwnd: Option<u32>,
) -> TcpParams {
    TcpParams {
        cc,
        ecn,
        delayed_ack,
        mss: packet_size - crate::packet::HEADER_BYTES,
        init_cwnd,
        min_rto: secs_to_ns(min_rto),
        rwnd,
        sack,
        prr,
    }
}

impl Simulation {
    /// Validates `cfg` and builds the simulation at time 0.
    pub fn new(cfg: SimConfig) -> Result<Simulation, ConfigError> {
        cfg.validate_scalars()?;
        let built = crate::topology::build(&cfg)?;
        let seed = cfg.seed;
        let mut links = Vec::with_capacity(built.links.len());
        let mut link_index = HashMap::new();
        for (i, l) in built.links.iter().enumerate() {
            let q = aqm::Qdisc::new(
                &l.aqm,
                l.limit,
                LinkInfo::new(aqm::BitsPerSec(l.rate_bps)),
                derive_seed(seed, Stream::Queue, i as u64),
            )
            .map_err(|error| ConfigError::Aqm {
                key: format!("{}.aqm", l.key),
                error,
            })?;
            link_index.insert(l.name.clone(), i as u32);
            links.push(Link::new(
                l.name.clone(),
                l.from,
                l.to,
                l.rate_bps,
                l.delay,
                l.loss,
                Rng::derive(seed, Stream::LinkLoss, i as u64),
                q,
            ));
        }
        for &m in &built.monitor {
            let mut mon = Box::<experiment::monitor::LinkMonitor>::default();
            mon.set_classes(links[m as usize].queue.num_classes());
            links[m as usize].mon = Some(mon);
        }
        let group_class = resolve_classes(&cfg, &built)?;
        let mut ev = EventQueue::new();
        ev.set_links(links.iter().map(|l| (l.delay, l.to)));
        let mut flows = Vec::new();
        let mut groups = Vec::new();
        for (gi, g) in cfg.flows.iter().enumerate() {
            let mut rng = Rng::derive(seed, Stream::Group, gi as u64);
            let eps = &built.endpoints[gi];
            let start_of = |rng: &mut Rng, start: Option<f64>, jitter: Option<f64>| {
                let base = start.unwrap_or(0.0);
                let j = jitter.unwrap_or(if start.is_none() {
                    DEFAULT_START_JITTER
                } else {
                    0.0
                });
                secs_to_ns(base + j * rng.uniform())
            };
            match g {
                FlowGroup::Tcp(t) => {
                    let p = tcp_params(
                        t.cc,
                        t.ecn,
                        t.delayed_ack,
                        t.sack,
                        t.prr,
                        t.packet_size,
                        t.init_cwnd,
                        t.min_rto,
                        t.rwnd,
                    );
                    for &(s, d) in eps {
                        let id = flows.len() as u32;
                        let start = start_of(&mut rng, t.start, t.start_jitter);
                        flows.push(Flow::tcp(
                            id,
                            gi as u32,
                            FlowKind::Tcp,
                            s,
                            d,
                            start,
                            t.stop.map(secs_to_ns),
                            t.bytes,
                            p,
                        ));
                    }
                    groups.push(GroupRt::Static);
                }
                FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => {
                    let onoff = matches!(g, FlowGroup::UdpOnoff(_));
                    for &(s, d) in eps {
                        let id = flows.len() as u32;
                        let start = start_of(&mut rng, u.start, u.start_jitter);
                        let src = UdpSource::new(
                            d,
                            u.packet_size,
                            u.rate,
                            if onoff {
                                Some((u.on_mean.unwrap_or(1.0), u.off_mean.unwrap_or(1.0)))
                            } else {
                                None
                            },
                            Rng::derive(seed, Stream::Flow, id as u64),
                        );
                        flows.push(Flow {
                            id,
                            group: gi as u32,
                            kind: if onoff {
                                FlowKind::UdpOnoff
                            } else {
                                FlowKind::UdpCbr
                            },
                            cc: None,
                            src: s,
                            dst: d,
                            start,
                            stop: u.stop.map(secs_to_ns),
                            size: None,
                            mss: u.packet_size - UDP_HEADER_BYTES,
                            started: false,
                            ep: Endpoint::Udp(src),
                            udp_bytes: 0,
                            rcv_high: 0,
                            warm: Default::default(),
                            stop_snap: None,
                            delays: Default::default(),
                        });
                    }
                    groups.push(GroupRt::Static);
                }
                FlowGroup::ShortTcp(s) => {
                    let p = tcp_params(
                        s.cc,
                        s.ecn,
                        s.delayed_ack,
                        s.sack,
                        s.prr,
                        s.packet_size,
                        s.init_cwnd,
                        s.min_rto,
                        None,
                    );
                    let mut gen = ShortFlowGen {
                        rate: s.arrival_rate,
                        mean_size: s.mean_size,
                        shape: s.pareto_shape,
                        params: p,
                        src: eps[0].0,
                        dst: eps[0].1,
                        stop: s.stop.map(secs_to_ns),
                        rng,
                    };
                    let first = secs_to_ns(s.start.unwrap_or(0.0) + gen.next_gap());
                    ev.schedule(first, Event::ShortArrival(gi as u32));
                    groups.push(GroupRt::Short(gen));
                }
            }
        }
        for f in &flows {
            ev.schedule(f.start, Event::FlowStart(f.id));
            if let Some(s) = f.stop {
                ev.schedule(s.max(f.start), Event::FlowStop(f.id));
            }
        }
        let warmup = secs_to_ns(cfg.warmup);
        let sample_interval = secs_to_ns(cfg.sample_interval).max(1);
        let cwnd_interval = cfg.cwnd_interval.map_or(sample_interval, secs_to_ns).max(1);
        let nf = flows.len() as u32;
        let cwnd_flows: Vec<u32> = cfg.cwnd_trace.iter().copied().filter(|&f| f < nf).collect();
        if let Some(&bad) = cfg.cwnd_trace.iter().find(|&&f| f >= nf) {
            return Err(ConfigError::invalid(
                "cwnd_trace",
                bad,
                "flow id out of range (ids count the statically created flows)",
            ));
        }
        if !built.monitor.is_empty() {
            ev.schedule(sample_interval, Event::Sample);
        }
        if !cwnd_flows.is_empty() {
            ev.schedule(0, Event::CwndSample);
        }
        if warmup > 0 {
            ev.schedule(warmup, Event::Warmup);
        }
        let mut rate_changes = Vec::new();
        if let experiment::config::TopologyConfig::Dumbbell(d) = &cfg.topology {
            for c in &d.rate_changes {
                let l = link_index["R1->R2"];
                ev.schedule(
                    secs_to_ns(c.at),
                    Event::RateChange(rate_changes.len() as u32),
                );
                rate_changes.push((l, c.rate.round() as u64));
            }
        }
        let nl = links.len();
        let mut sim = Simulation {
            now: 0,
            warmup,
            sample_interval,
            cwnd_interval,
            ev,
            events: 0,
            nodes: built.nodes.into_iter().map(|name| Node { name }).collect(),
            links,
            link_index,
            activations_base: vec![0; nl],
            flow_base: vec![(0, 0); nl],
            classed: group_class.iter().any(|&c| c != 0),
            group_class,
            class_snap: vec![Vec::new(); nl],
            routes: built.routes,
            flows,
            groups,
            monitored: built.monitor,
            cwnd_flows,
            ts: TimeSeries::default(),
            ts_link: Vec::new(),
            cts: ClassSeries::default(),
            cts_ids: Vec::new(),
            cwnd: CwndTrace::default(),
            out_buf: Vec::new(),
            sent: 0,
            delivered: 0,
            warm: false,
            link_snap: Vec::new(),
            rate_changes,
            trace_links: built.trace,
            tracing: false,
            cfg,
        };
        sim.reserve_samples();
        if warmup == 0 {
            sim.end_warmup();
        }
        Ok(sim)
    }

    /// Makes room in the time series for every sample of the configured run (at most
    /// [`RESERVED_ROWS`] rows each; a longer series grows as it goes), so that sampling does
    /// not reallocate and the columns end no larger than they need to be.
    fn reserve_samples(&mut self) {
        let end = secs_to_ns(self.cfg.duration);
        let rows = |interval: Ns, n: usize| {
            ((end / interval) as usize + 1)
                .saturating_mul(n)
                .min(RESERVED_ROWS)
        };
        let ts = rows(self.sample_interval, self.monitored.len());
        self.ts.reserve(ts);
        self.ts_link.reserve_exact(ts);
        self.cwnd
            .reserve(rows(self.cwnd_interval, self.cwnd_flows.len()));
    }

    /// Parses JSON and builds.
    pub fn from_json(json: &str) -> Result<Simulation, ConfigError> {
        Simulation::new(SimConfig::from_json(json)?)
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Current simulated time.
    pub fn now(&self) -> Instant {
        Instant(self.now)
    }

    /// True once the warm-up period is over (statistics are being
    /// collected).
    pub fn warmed_up(&self) -> bool {
        self.warm
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Processes every event up to and including time `t`; afterwards
    /// `now() == max(now, t)`.
    pub fn run_until(&mut self, t: Instant) {
        let limit = t.0;
        while let Some((time, due)) = self.ev.pop_until(limit) {
            self.now = time;
            self.events += 1;
            self.handle(due);
        }
        self.now = self.now.max(limit);
    }

    /// Gives every link named by `SimConfig::trace` its trace buffer (preallocated to the
    /// batch size plus [`crate::trace::TRACE_SLACK`] rows); from now on their queue events
    /// are recorded. Drive a traced run with [`Simulation::run_until_traced`] and empty the
    /// buffers with [`Simulation::drain_trace`] whenever it stops early: plain
    /// [`Simulation::run_until`] keeps every row in memory. Calling it again does nothing.
    pub fn start_trace(&mut self) {
        if self.tracing {
            return;
        }
        self.tracing = true;
        let batch = self
            .cfg
            .trace_batch
            .unwrap_or(crate::trace::DEFAULT_TRACE_BATCH);
        for &l in &self.trace_links {
            self.links[l as usize].trace = Some(Box::new(TraceBuf::with_batch(batch)));
        }
    }

    /// Like [`Simulation::run_until`], but returns `false` as soon as a traced link's buffer
    /// holds a full batch (after the event that filled it, `now()` at that event's time);
    /// `true` once every event up to `t` ran. Without a started trace it is `run_until`.
    /// Stopping early does not change the run: the next call continues with the next event.
    pub fn run_until_traced(&mut self, t: Instant) -> bool {
        if !self.tracing || self.trace_links.is_empty() {
            self.run_until(t);
            return true;
        }
        let limit = t.0;
        while let Some((time, due)) = self.ev.pop_until(limit) {
            self.now = time;
            self.events += 1;
            self.handle(due);
            if self.trace_full() {
                return false;
            }
        }
        self.now = self.now.max(limit);
        true
    }

    /// True if some traced link's buffer holds a full batch.
    #[inline]
    fn trace_full(&self) -> bool {
        self.trace_links.iter().any(|&l| {
            self.links[l as usize]
                .trace
                .as_deref()
                .is_some_and(|t| t.is_full())
        })
    }

    /// Moves every traced link's rows into `out` (appending; links in `SimConfig::trace`
    /// order, each in time order) and empties their buffers, which keep their capacity.
    pub fn drain_trace(&mut self, out: &mut TraceBatch) {
        for &l in &self.trace_links {
            if let Some(t) = self.links[l as usize].trace.as_deref_mut() {
                t.drain_into(l, out);
            }
        }
    }

    /// Per traced link (in `SimConfig::trace` order): its name, its buffer's capacity in rows
    /// (`None` before [`Simulation::start_trace`]) and its batch size.
    pub fn trace_buffers(&self) -> Vec<(String, Option<usize>, usize)> {
        self.trace_links
            .iter()
            .map(|&l| {
                let link = &self.links[l as usize];
                let t = link.trace.as_deref();
                (
                    link.name.clone(),
                    t.map(TraceBuf::capacity),
                    t.map_or(0, TraceBuf::batch),
                )
            })
            .collect()
    }

    /// The configured end of the run (the duration), as an instant.
    pub fn end(&self) -> Instant {
        Instant(secs_to_ns(self.cfg.duration))
    }

    /// Runs to the configured duration.
    pub fn run(&mut self) {
        self.run_until(self.end());
    }

    #[inline(always)]
    fn handle(&mut self, due: Due) {
        match due {
            Due::Event(ev) => self.handle_event(ev),
            Due::Arrival {
                link,
                to,
                pkt,
                more,
            } => {
                self.deliver(to, pkt);
                for _ in 0..more {
                    let p = self.ev.pipe_take(link);
                    self.deliver(to, p);
                }
            }
        }
    }

    #[inline]
    fn handle_event(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::TxDone(l) => {
                self.links[l as usize].tx_done(now, l, &mut self.ev);
                self.arm_aqm(l, now);
            }
            Event::AqmTimer(l) => {
                let link = &mut self.links[l as usize];
                if link.aqm_timer_at == Some(now) {
                    link.aqm_timer_at = None;
                }
                link.aqm_timer(now);
                self.arm_aqm(l, now + 1);
            }
            Event::Rto(f) => {
                let mut out = std::mem::take(&mut self.out_buf);
                let flow = &mut self.flows[f as usize];
                if let Endpoint::Tcp { snd, .. } = &mut flow.ep {
                    if snd.rto_event == Some(now) {
                        snd.rto_event = None;
                    }
                    if matches!(snd.rto_deadline, Some(d) if d <= now) {
                        snd.on_rto(now, &mut out);
                    }
                }
                let src = flow.src;
                self.emit(src, &mut out);
                self.out_buf = out;
                self.arm_tcp(f);
            }
            Event::DelAck(f) => {
                let mut out = std::mem::take(&mut self.out_buf);
                let flow = &mut self.flows[f as usize];
                if let Endpoint::Tcp { rcv, .. } = &mut flow.ep {
                    if rcv.delack_event == Some(now) {
                        rcv.delack_event = None;
                    }
                    if matches!(rcv.delack_deadline, Some(d) if d <= now) {
                        rcv.on_delack(&mut out);
                    }
                }
                let dst = flow.dst;
                self.emit(dst, &mut out);
                self.out_buf = out;
                self.arm_tcp(f);
            }
            Event::FlowStart(f) => self.start_flow(f),
            Event::FlowStop(f) => {
                let flow = &mut self.flows[f as usize];
                // The goodput window ends here: what is delivered later
                // (data already in flight) is not counted.
                flow.stop_snap = Some(flow.snapshot());
                match &mut flow.ep {
                    Endpoint::Tcp { snd, .. } => snd.stop(),
                    Endpoint::Udp(u) => u.stopped = true,
                }
            }
            Event::UdpSend(f) => {
                let flow = &mut self.flows[f as usize];
                if let Endpoint::Udp(u) = &mut flow.ep {
                    let (p, next) = u.on_send(now, f);
                    if let Some(t) = next {
                        self.ev.schedule(t, Event::UdpSend(f));
                    }
                    if let Some(p) = p {
                        let src = flow.src;
                        self.sent += 1;
                        self.forward(src, p);
                    }
                }
            }
            Event::ShortArrival(g) => self.short_arrival(g),
            Event::Sample => {
                self.sample();
                self.ev.schedule(now + self.sample_interval, Event::Sample);
            }
            Event::CwndSample => {
                self.cwnd_sample();
                self.ev
                    .schedule(now + self.cwnd_interval, Event::CwndSample);
            }
            Event::Warmup => self.end_warmup(),
            Event::RateChange(i) => {
                let (l, rate) = self.rate_changes[i as usize];
                self.links[l as usize].set_rate(now, rate);
            }
        }
    }

    /// Sends packets created by an endpoint at `node`.
    #[inline]
    fn emit(&mut self, node: u32, out: &mut Vec<Packet>) {
        self.sent += out.len() as u64;
        if self.classed {
            self.stamp_classes(out);
        }
        for p in out.drain(..) {
            self.forward(node, p);
        }
    }

    /// Sets the class index of packets leaving an endpoint (only when some group has a
    /// class; out of line so that `emit` stays as small as without classes).
    #[inline(never)]
    fn stamp_classes(&self, out: &mut [Packet]) {
        for p in out.iter_mut() {
            let g = self.flows[p.flow as usize].group as usize;
            p.set_class(self.group_class[g]);
        }
    }

    /// Forwards `pkt` from `node` onto the next-hop link.
    #[inline]
    fn forward(&mut self, node: u32, pkt: Packet) {
        let l = self.routes.next_hop(node, pkt.dst);
        debug_assert_ne!(l, NO_ROUTE, "routability is checked at build time");
        self.links[l as usize].arrive(self.now, pkt, l, &mut self.ev);
        self.arm_aqm(l, self.now);
    }

    /// A packet reaches `node`: consume it at its destination or forward.
    #[inline]
    fn deliver(&mut self, node: u32, pkt: Packet) {
        if pkt.dst != node {
            self.forward(node, pkt);
            return;
        }
        self.delivered += 1;
        let now = self.now;
        let f = pkt.flow;
        let mut out = std::mem::take(&mut self.out_buf);
        let flow = &mut self.flows[f as usize];
        let measure = self.warm && flow.measuring();
        let at = match &mut flow.ep {
            Endpoint::Tcp { snd, rcv } => {
                if pkt.has(F_ACK) {
                    if measure {
                        flow.delays.rtt.record(now.saturating_sub(pkt.ts));
                    }
                    snd.on_ack(now, &pkt, &mut out);
                    flow.src
                } else {
                    if measure {
                        flow.delays.owd.record(now.saturating_sub(pkt.ts));
                    }
                    flow.rcv_high = flow.rcv_high.max(pkt.seq + 1);
                    rcv.on_data(now, &pkt, &mut out);
                    flow.dst
                }
            }
            Endpoint::Udp(_) => {
                if measure {
                    flow.delays.owd.record(now.saturating_sub(pkt.ts));
                }
                flow.udp_bytes += (pkt.size - UDP_HEADER_BYTES) as u64;
                flow.dst
            }
        };
        let tcp = matches!(flow.ep, Endpoint::Tcp { .. });
        self.emit(at, &mut out);
        self.out_buf = out;
        if tcp {
            self.arm_tcp(f);
        }
    }

    /// Keeps one pending `AqmTimer` event at the AQM's `poll_at` (not
    /// earlier than `earliest`). Only links whose AQM polls have work here: the test is
    /// inlined into every arrival and departure, the rest is out of line.
    #[inline(always)]
    fn arm_aqm(&mut self, l: u32, earliest: Ns) {
        if self.links[l as usize].periodic {
            self.arm_aqm_polled(l, earliest);
        }
    }

    #[inline(never)]
    fn arm_aqm_polled(&mut self, l: u32, earliest: Ns) {
        let link = &mut self.links[l as usize];
        if let Some(t) = link.queue.poll_at() {
            let t = t.0.max(earliest);
            if link.aqm_timer_at.is_none_or(|a| t < a) {
                link.aqm_timer_at = Some(t);
                self.ev.schedule(t, Event::AqmTimer(l));
            }
        }
    }

    /// Keeps one pending event per TCP timer at its earliest deadline.
    #[inline(always)]
    fn arm_tcp(&mut self, f: u32) {
        if let Endpoint::Tcp { snd, rcv } = &mut self.flows[f as usize].ep {
            if let Some(d) = snd.rto_deadline {
                if snd.rto_event.is_none_or(|e| d < e) {
                    snd.rto_event = Some(d);
                    self.ev.schedule(d, Event::Rto(f));
                }
            }
            if let Some(d) = rcv.delack_deadline {
                if rcv.delack_event.is_none_or(|e| d < e) {
                    rcv.delack_event = Some(d);
                    self.ev.schedule(d, Event::DelAck(f));
                }
            }
        }
    }

    fn start_flow(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.started {
            return;
        }
        flow.started = true;
        match &mut flow.ep {
            Endpoint::Tcp { snd, .. } => {
                let mut out = std::mem::take(&mut self.out_buf);
                snd.send_allowed(now, &mut out);
                let src = flow.src;
                self.emit(src, &mut out);
                self.out_buf = out;
                self.arm_tcp(f);
            }
            Endpoint::Udp(u) => {
                u.start(now);
                self.ev.schedule(now, Event::UdpSend(f));
            }
        }
    }

    fn short_arrival(&mut self, g: u32) {
        let now = self.now;
        let GroupRt::Short(gen) = &mut self.groups[g as usize] else {
            return;
        };
        if gen.stop.is_some_and(|s| now >= s) {
            return;
        }
        let size = gen.next_size();
        let next = now + secs_to_ns(gen.next_gap());
        let (src, dst, p) = (gen.src, gen.dst, gen.params);
        self.ev.schedule(next, Event::ShortArrival(g));
        let id = self.flows.len() as u32;
        self.flows.push(Flow::tcp(
            id,
            g,
            FlowKind::ShortTcp,
            src,
            dst,
            now,
            None,
            Some(size),
            p,
        ));
        // A flow created after warm-up keeps its all-zero warm-up snapshot.
        self.start_flow(id);
    }

    fn sample(&mut self) {
        let t = ns_to_secs(self.now);
        let dt = ns_to_secs(self.sample_interval);
        for &m in &self.monitored {
            let link = &mut self.links[m as usize];
            // Link ids here; `results()` turns them into names.
            if push_sample(&mut self.ts, &mut self.ts_link, link, m, t, dt) {
                push_class_samples(&mut self.cts, &mut self.cts_ids, link, m, t);
                let c = link.ctr;
                let mon = link.mon.as_deref_mut().expect("sampled");
                mon.last = [c.arrivals, c.queue_drops(), c.marks, c.tx_bytes];
                for (ci, last) in mon.class_last.iter_mut().enumerate() {
                    *last = class_counters(&link.queue, ci);
                }
                mon.interval_delay_count = 0;
                mon.interval_delay_sum = 0;
                mon.class_interval.fill(IntervalDelay::default());
            }
        }
    }

    fn cwnd_sample(&mut self) {
        let t = ns_to_secs(self.now);
        for &f in &self.cwnd_flows {
            if let Endpoint::Tcp { snd, .. } = &self.flows[f as usize].ep {
                self.cwnd.time_s.push(t);
                self.cwnd.flow.push(f);
                self.cwnd.cwnd.push(snd.cwnd());
                self.cwnd.ssthresh.push(snd.ssthresh());
                self.cwnd
                    .srtt_ms
                    .push(snd.srtt().map_or(f64::NAN, |s| s as f64 / 1e6));
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn end_warmup(&mut self) {
        let now = self.now;
        self.warm = true;
        self.link_snap = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| LinkSnap {
                ctr: self.link_counters(i as u32),
                activations: self.activations_base[i] + l.queue.stats().activations,
                area: l.area_at(now),
                flow_area: self.flow_base[i].0
                    + l.queue.flow_count(Instant(now)).map_or(0, |f| f.area),
                work: l.tx_work_at(now),
                cap: l.capacity_at(now),
            })
            .collect();
        self.class_snap = self.links.iter().map(|l| class_base(&l.queue)).collect();
        for b in &mut self.flow_base {
            b.1 = 0;
        }
        for l in &mut self.links {
            l.queue.reset_flow_peak();
            l.warm = true;
            if let Some(m) = l.mon.as_deref_mut() {
                m.delay.clear();
                m.classes.iter_mut().for_each(|h| h.clear());
                m.flows.iter_mut().for_each(FlowHistogram::clear);
            }
        }
        for f in &mut self.flows {
            f.warm = f.snapshot();
            f.delays = Default::default();
        }
    }

    // ----- inspection and control between steps -----

    fn link_id(&self, name: &str) -> Result<u32, SimError> {
        self.link_index
            .get(name)
            .copied()
            .ok_or_else(|| SimError::UnknownLink(name.to_string()))
    }

    /// Link names in index order.
    pub fn link_names(&self) -> Vec<String> {
        self.links.iter().map(|l| l.name.clone()).collect()
    }

    /// Names of the monitored links.
    pub fn monitored_links(&self) -> Vec<String> {
        self.monitored
            .iter()
            .map(|&l| self.links[l as usize].name.clone())
            .collect()
    }

    /// Node names in index order.
    pub fn node_names(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.name.clone()).collect()
    }

    /// Queue length of link `name` as (packets, bytes).
    pub fn link_queue(&self, name: &str) -> Result<(usize, u64), SimError> {
        let l = &self.links[self.link_id(name)? as usize];
        Ok((l.queue.len_pkts(), l.queue.len_bytes()))
    }

    /// Link `id`'s counters now ([`Link::counters_at`]), with its arrivals at the far node
    /// from the event queue's pipes.
    fn link_counters(&self, id: u32) -> LinkCounters {
        self.links[id as usize].counters_at(self.now, self.ev.delivered(id))
    }

    /// Status of link `name`.
    pub fn link_status(&self, name: &str) -> Result<LinkStatus, SimError> {
        let id = self.link_id(name)?;
        let l = &self.links[id as usize];
        Ok(LinkStatus {
            name: l.name.clone(),
            aqm: l.queue.aqm_name().to_string(),
            queue_pkts: l.queue.len_pkts(),
            queue_bytes: l.queue.len_bytes(),
            probability: l.queue.probability(),
            aqm_stats: l.queue.stats(),
            counters: self.link_counters(id),
            queue_memory_bytes: l.queue.memory_bytes(),
            queue_pool_slots: l.queue.pool_slots(),
            rate_bps: l.rate_bps(),
        })
    }

    /// The links flow `id`'s data packets cross, in order, from its source to its
    /// destination under the simulation's routing (ACKs take the reverse route).
    pub fn flow_path(&self, id: u32) -> Result<Vec<String>, SimError> {
        if id as usize >= self.flows.len() {
            return Err(SimError::UnknownFlow(id));
        }
        Ok(self
            .flow_link_ids(id)
            .into_iter()
            .map(|l| self.links[l as usize].name.clone())
            .collect())
    }

    /// The ids of the links flow `id`'s data packets cross, in order.
    fn flow_link_ids(&self, id: u32) -> Vec<u32> {
        let f = &self.flows[id as usize];
        let mut path = Vec::new();
        let mut at = f.src;
        while at != f.dst && path.len() <= self.links.len() {
            let l = self.routes.next_hop(at, f.dst);
            if l == NO_ROUTE {
                break;
            }
            path.push(l);
            at = self.links[l as usize].to;
        }
        path
    }

    /// Current value of one AQM parameter of link `name` by path, as running (an SQM queue's
    /// `queues.N.weight` included); `None` for an unknown path.
    pub fn aqm_param(&self, name: &str, key: &str) -> Result<Option<f64>, SimError> {
        Ok(self.links[self.link_id(name)? as usize].queue.param(key))
    }

    /// The flow hash the queue disciplines see for flow `id` (SQM's `flows.HASH.*` paths).
    pub fn flow_hash(&self, id: u32) -> u64 {
        experiment::rng::splitmix64(id as u64)
    }

    /// SQM's elephant slots on link `name`: for each slot the flow id holding it (`None`:
    /// free); `None` if the link does not run SQM.
    pub fn sqm_slots(&self, name: &str) -> Result<Option<Vec<Option<u32>>>, SimError> {
        let l = &self.links[self.link_id(name)? as usize];
        let Some(q) = l.queue.sqm() else {
            return Ok(None);
        };
        let n = q.config().queues as usize;
        Ok(Some(
            (0..n)
                .map(|i| {
                    let h = q.slot_flow(i)?;
                    (0..self.flows.len() as u32).find(|&f| self.flow_hash(f) == h)
                })
                .collect(),
        ))
    }

    /// Current AQM configuration of link `name`.
    pub fn aqm_config(&self, name: &str) -> Result<QdiscConfig, SimError> {
        Ok(self.links[self.link_id(name)? as usize].queue.config())
    }

    /// Number of flows created so far (short flows are added as they arrive).
    pub fn num_flows(&self) -> usize {
        self.flows.len()
    }

    /// Status of flow `id`.
    pub fn flow_status(&self, id: u32) -> Result<FlowStatus, SimError> {
        let f = self
            .flows
            .get(id as usize)
            .ok_or(SimError::UnknownFlow(id))?;
        let fct_s = f.done_at().map(|d| ns_to_secs(d - f.start));
        Ok(match &f.ep {
            Endpoint::Tcp { snd, .. } => FlowStatus {
                id,
                kind: f.kind.name(),
                started: f.started,
                cwnd: snd.cwnd(),
                ssthresh: snd.ssthresh(),
                srtt_s: snd.srtt().map(ns_to_secs),
                bytes_acked: snd.stats.bytes_acked,
                bytes_delivered: f.delivered(),
                bytes_received_high: f.snapshot().received_high,
                retransmits: snd.stats.retransmits,
                timeouts: snd.stats.timeouts,
                ecn_reductions: snd.stats.ecn_reductions,
                min_reduction_gap_s: (snd.stats.min_reduction_gap != u64::MAX)
                    .then(|| ns_to_secs(snd.stats.min_reduction_gap)),
                fct_s,
            },
            Endpoint::Udp(_) => FlowStatus {
                id,
                kind: f.kind.name(),
                started: f.started,
                cwnd: 0.0,
                ssthresh: 0.0,
                srtt_s: None,
                bytes_acked: f.udp_bytes,
                bytes_delivered: f.udp_bytes,
                bytes_received_high: f.udp_bytes,
                retransmits: 0,
                timeouts: 0,
                ecn_reductions: 0,
                min_reduction_gap_s: None,
                fct_s: None,
            },
        })
    }

    /// Changes one AQM parameter of link `name` (boundary units: seconds,
    /// 0/1, ...) by path: a plain name for a single AQM (`target`), a path
    /// into a scheduler (`classes.b.weight`, `classes.a.aqm.target`). The
    /// AQM keeps its dynamic state.
    pub fn set_aqm_param(&mut self, name: &str, key: &str, value: f64) -> Result<(), SimError> {
        let l = self.link_id(name)?;
        self.links[l as usize]
            .queue
            .set_param(key, value)
            .map_err(|error| SimError::Aqm {
                link: name.to_string(),
                error,
            })?;
        self.arm_aqm(l, self.now);
        Ok(())
    }

    /// Replaces the queue discipline of link `name`; queued packets are
    /// moved to the new one in order. Counters of the link carry on.
    pub fn set_aqm(&mut self, name: &str, cfg: impl Into<QdiscConfig>) -> Result<(), SimError> {
        let cfg: QdiscConfig = cfg.into();
        let l = self.link_id(name)?;
        let link = &self.links[l as usize];
        if link.queue.num_classes() > 0 || !cfg.class_names().is_empty() {
            // Packets carry class indices resolved against the class list at build time.
            let old = link.queue.config();
            if old.class_names() != cfg.class_names() {
                return Err(SimError::Aqm {
                    link: name.to_string(),
                    error: aqm::ConfigError::InvalidText {
                        key: "classes".into(),
                        text: cfg.class_names().join(", "),
                        reason: format!(
                            "set_aqm keeps a link's class list (now: [{}])",
                            old.class_names().join(", ")
                        ),
                    },
                });
            }
        }
        let q = aqm::Qdisc::new(
            &cfg,
            link.queue.limit(),
            link.queue.link(),
            derive_seed(
                self.cfg.seed ^ self.now.rotate_left(17),
                Stream::Queue,
                l as u64,
            ),
        )
        .map_err(|error| SimError::Aqm {
            link: name.to_string(),
            error,
        })?;
        self.activations_base[l as usize] += link.queue.stats().activations;
        let now = self.now;
        if let Some(f) = link.queue.flow_count(Instant(now)) {
            let b = &mut self.flow_base[l as usize];
            b.0 += f.area;
            if self.warm {
                b.1 = b.1.max(f.peak);
            }
        }
        self.links[l as usize].replace_queue(now, q, l, &mut self.ev);
        self.arm_aqm(l, now);
        Ok(())
    }

    /// Sets the Bernoulli loss probability of link `name` (in [0, 1]; 1 is a
    /// blackout). Takes effect for packets finishing transmission from now.
    pub fn set_link_loss(&mut self, name: &str, p: f64) -> Result<(), SimError> {
        let l = self.link_id(name)?;
        if !(0.0..=1.0).contains(&p) {
            return Err(SimError::Invalid {
                key: format!("{name}.loss"),
                value: p,
                reason: "must be in [0, 1]",
            });
        }
        self.links[l as usize].loss = p;
        Ok(())
    }

    /// Packet conservation totals over the whole run.
    pub fn conservation(&self) -> Conservation {
        let mut c = Conservation {
            sent: self.sent,
            delivered: self.delivered,
            ..Default::default()
        };
        for (i, l) in self.links.iter().enumerate() {
            c.dropped += l.ctr.queue_drops();
            c.lost += l.ctr.lost;
            c.in_flight += l.queue.len_pkts() as u64 + l.in_tx() + self.ev.in_pipe(i as u32);
        }
        c
    }

    /// Checks packet conservation: globally, packets sent by sources =
    /// delivered + dropped + lost + in flight; per link,
    /// `arrivals = queue drops + transmitted + queued + in transmission` and
    /// `transmitted = lost + delivered to the far node + propagating`.
    pub fn check_conservation(&self) -> Result<Conservation, ConservationError> {
        for (i, l) in self.links.iter().enumerate() {
            // Raw counters (a fast-path packet counts as sent), arrivals from the pipes.
            let c = &LinkCounters {
                delivered: self.ev.delivered(i as u32),
                ..l.ctr
            };
            let in_pipe = self.ev.in_pipe(i as u32);
            let rhs = c.queue_drops() + c.tx_pkts + l.queue.len_pkts() as u64 + l.in_tx();
            if c.arrivals != rhs {
                return Err(ConservationError::Link {
                    link: l.name.clone(),
                    detail: format!(
                        "arrivals {} != drops {} + transmitted {} + queued {} + in tx {}",
                        c.arrivals,
                        c.queue_drops(),
                        c.tx_pkts,
                        l.queue.len_pkts(),
                        l.in_tx()
                    ),
                });
            }
            if c.tx_pkts != c.lost + c.delivered + in_pipe {
                return Err(ConservationError::Link {
                    link: l.name.clone(),
                    detail: format!(
                        "transmitted {} != lost {} + delivered {} + propagating {}",
                        c.tx_pkts, c.lost, c.delivered, in_pipe
                    ),
                });
            }
        }
        let c = self.conservation();
        if c.sent != c.delivered + c.dropped + c.lost + c.in_flight {
            return Err(ConservationError::Global(c));
        }
        Ok(c)
    }

    // ----- results -----

    /// Post-warm-up summary at the current time.
    pub fn summary(&self) -> Summary {
        let now = self.now;
        let measured = now.saturating_sub(self.warmup);
        let mut links = BTreeMap::new();
        for &m in &self.monitored {
            let l = &self.links[m as usize];
            let LinkSnap {
                ctr: snap,
                activations: act0,
                area: area0,
                flow_area: flow_area0,
                work: work0,
                cap: cap0,
            } = self.link_snap.get(m as usize).copied().unwrap_or_default();
            let c = self.link_counters(m);
            let area = l.area_at(now);
            let hist = l.mon.as_deref().map(|m| &m.delay);
            let q = |p: f64| hist.map_or(0.0, |h| h.quantile(p) / 1e6);
            let per_s = |a: u128, a0: u128| {
                if measured > 0 {
                    (a - a0) as f64 / measured as f64
                } else {
                    0.0
                }
            };
            let drops = c.queue_drops() - snap.queue_drops();
            let arrivals = c.arrivals - snap.arrivals;
            let acts = self.activations_base[m as usize] + l.queue.stats().activations;
            let classes = class_summaries(
                &l.queue,
                &self.class_snap[m as usize],
                l.mon.as_deref().map_or(&[][..], |m| &m.classes[..]),
            );
            let (fbase, fpeak) = self.flow_base[m as usize];
            let active_flows = l.queue.flow_count(Instant(now)).map(|f| ActiveFlows {
                mean: if measured > 0 {
                    (fbase + f.area).saturating_sub(flow_area0) as f64 / measured as f64
                } else {
                    f.active as f64
                },
                max: f.peak.max(fpeak),
            });
            links.insert(
                l.name.clone(),
                LinkSummary {
                    aqm: l.queue.aqm_name().to_string(),
                    // Window-exact: the integer numerator is at most the
                    // denominator (the offered capacity, ∫ rate dt over the window:
                    // rate x measured for a fixed rate), so the quotient is in [0, 1]
                    // (clamped for the carry of a packet straddling a rate change).
                    utilization: if measured > 0 {
                        ((l.tx_work_at(now) - work0) as f64 / (l.capacity_at(now) - cap0) as f64)
                            .min(1.0)
                    } else {
                        0.0
                    },
                    mean_queue_pkts: per_s(area.0, area0.0),
                    mean_queue_bytes: per_s(area.1, area0.1),
                    queue_delay_ms: DelayStats {
                        mean: hist.map_or(0.0, |h| h.mean() / 1e6),
                        p50: q(0.5),
                        p95: q(0.95),
                        p99: q(0.99),
                    },
                    queue_delay_hist: hist
                        .map_or_else(DelayHistogram::default, DelayHistogram::from_log),
                    drops,
                    marks: c.marks - snap.marks,
                    enqueued: arrivals - (c.drops_enqueue - snap.drops_enqueue),
                    aqm_activations: acts - act0,
                    arrivals,
                    lost: c.lost - snap.lost,
                    tx_packets: c.tx_pkts - snap.tx_pkts,
                    rate_bps: l.rate_bps() as f64,
                    classes,
                    active_flows,
                },
            );
        }
        let monitored: Vec<MonitoredLink<'_>> = self
            .monitored
            .iter()
            .filter_map(|&m| {
                let l = &self.links[m as usize];
                l.mon.as_deref().map(|mon| MonitoredLink {
                    name: &l.name,
                    id: m,
                    mon,
                })
            })
            .collect();
        let (flows, groups, long_goodputs) = flow_reports(
            &self.flows,
            &self.cfg.flows,
            &monitored,
            |f| self.flow_link_ids(f),
            self.warmup,
            now,
        );
        Summary {
            scenario: self.cfg.scenario.clone(),
            seed: self.cfg.seed,
            sim_seconds: ns_to_secs(now),
            warmup_s: ns_to_secs(self.warmup),
            events: self.events,
            packets_forwarded: (0..self.links.len() as u32)
                .map(|i| self.link_counters(i).tx_pkts)
                .sum(),
            links,
            flows,
            groups,
            fairness: Fairness {
                jain: jain(&long_goodputs),
                flows: long_goodputs.len(),
                scope: JAIN_SCOPE.to_string(),
            },
        }
    }

    /// Summary plus time series and cwnd traces (copies; the simulation can
    /// continue).
    ///
    /// When `now` is not a multiple of the sampling interval, the time
    /// series ends with one more row per monitored link for the partial
    /// interval since the last sample (its `throughput_bps` divided by the
    /// interval's real length). It is computed here, not stored, so the
    /// rows do not depend on how the run was split into `run_until` steps.
    pub fn results(&self) -> SimResults {
        let mut timeseries = self.ts.clone();
        let mut ts_link = self.ts_link.clone();
        let mut cts = self.cts.clone();
        let mut cts_ids = self.cts_ids.clone();
        let last = self.now / self.sample_interval * self.sample_interval;
        if self.now > last {
            let (t, dt) = (ns_to_secs(self.now), ns_to_secs(self.now - last));
            for &m in &self.monitored {
                let link = &self.links[m as usize];
                if push_sample(&mut timeseries, &mut ts_link, link, m, t, dt) {
                    push_class_samples(&mut cts, &mut cts_ids, link, m, t);
                }
            }
        }
        for &(l, c) in &cts_ids {
            let q = &self.links[l as usize];
            cts.link.push(q.name.clone());
            cts.class.push(
                q.queue
                    .class_name(c as usize)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        timeseries.link = ts_link
            .iter()
            .map(|&l| self.links[l as usize].name.clone())
            .collect();
        SimResults {
            summary: self.summary(),
            timeseries,
            cwnd: self.cwnd.clone(),
            class_timeseries: cts,
        }
    }

    /// Packets transmitted over link `name` so far.
    pub fn link_tx_packets(&self, name: &str) -> Result<u64, SimError> {
        Ok(self.link_counters(self.link_id(name)?).tx_pkts)
    }
}

/// The class index of each flow group's packets. A group's `class` must name
/// a class of every class-based qdisc on the forward path of each of its
/// flows, at the same position (packets carry the index, not the name).
fn resolve_classes(
    cfg: &SimConfig,
    built: &crate::topology::Built,
) -> Result<Vec<u8>, ConfigError> {
    let mut out = Vec::with_capacity(cfg.flows.len());
    for (gi, g) in cfg.flows.iter().enumerate() {
        let Some(name) = g.class() else {
            out.push(0);
            continue;
        };
        let bad =
            |reason: String| ConfigError::invalid(format!("flows[{gi}].class"), name, &reason);
        let mut index: Option<usize> = None;
        for &(src, dst) in &built.endpoints[gi] {
            let mut at = src;
            let mut hops = 0;
            while at != dst && hops <= built.links.len() {
                let l = built.routes.next_hop(at, dst);
                if l == NO_ROUTE {
                    break;
                }
                let spec = &built.links[l as usize];
                let names = spec.aqm.class_names();
                if !names.is_empty() {
                    match names.iter().position(|n| *n == name) {
                        None => {
                            return Err(bad(format!(
                                "no such class in the AQM of link '{}' (classes: {})",
                                spec.name,
                                names.join(", ")
                            )))
                        }
                        Some(i) if index.is_some_and(|j| j != i) => {
                            return Err(bad(format!(
                                "class lists differ along the path (link '{}')",
                                spec.name
                            )))
                        }
                        Some(i) => index = Some(i),
                    }
                }
                at = spec.to;
                hops += 1;
            }
        }
        match index {
            Some(i) => out.push(i as u8),
            None => {
                return Err(bad(
                    "no class-based AQM (e.g. type = \"drr\") on the group's path".into(),
                ))
            }
        }
    }
    Ok(out)
}

/// Appends the time-series row of monitored link `m` for the interval of
/// length `dt` (s) ending at `t` (s); false if the link has no monitor.
fn push_sample(
    ts: &mut TimeSeries,
    ts_link: &mut Vec<u32>,
    link: &Link,
    m: u32,
    t: f64,
    dt: f64,
) -> bool {
    let Some(mon) = link.mon.as_deref() else {
        return false;
    };
    let c = link.ctr;
    let cur = [c.arrivals, c.queue_drops(), c.marks, c.tx_bytes];
    let d = |i: usize| cur[i] - mon.last[i];
    ts.time_s.push(t);
    ts_link.push(m);
    ts.queue_pkts.push(link.queue.len_pkts() as u64);
    ts.queue_bytes.push(link.queue.len_bytes());
    ts.queue_delay_ms_mean
        .push(if mon.interval_delay_count > 0 {
            mon.interval_delay_sum as f64 / mon.interval_delay_count as f64 / 1e6
        } else {
            f64::NAN
        });
    ts.arrivals.push(d(0));
    ts.drops.push(d(1));
    ts.marks.push(d(2));
    ts.throughput_bps.push(d(3) as f64 * 8.0 / dt);
    ts.tx_bytes.push(d(3));
    ts.active_flows
        .push(link.queue.active_flows().map_or(0, u64::from));
    true
}

/// Appends one per-class row per class of monitored link `m` (none for a FIFO) for the
/// interval ending at `t` (s): queue lengths now, counters since the interval began.
fn push_class_samples(cs: &mut ClassSeries, ids: &mut Vec<(u32, u8)>, link: &Link, m: u32, t: f64) {
    let Some(mon) = link.mon.as_deref() else {
        return;
    };
    let n = push_class_rows(cs, &link.queue, &mon.class_last, &mon.class_interval, t);
    ids.extend((0..n).map(|ci| (m, ci as u8)));
}

impl fmt::Debug for Simulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("now", &self.now)
            .field("events", &self.events)
            .field("links", &self.links.len())
            .field("flows", &self.flows.len())
            .finish()
    }
}
