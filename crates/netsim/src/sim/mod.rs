//! The simulation: owns the event queue, links, routes and flows, runs the
//! event loop, and exposes stepping, inspection, re-parameterisation and
//! results.
//!
//! Timers of TCP endpoints and AQMs are lazy: a component only stores its
//! deadline; the simulation keeps at most one pending event per timer at
//! the earliest known deadline and, when that event fires, either runs the
//! timer (deadline reached) or re-arms it at the current deadline. This
//! avoids one heap operation per ACK for the retransmission timer.

mod build;
mod capture;
mod control;
mod fct;
mod inspect;
mod lookahead;
mod pool;
mod report;
mod run;
mod tracing;

use std::collections::BTreeMap;
use std::fmt;

use aqm::QueueStats;

use crate::engine::{secs_to_ns, EventQueue, Ns};
use crate::link::{Link, LinkCounters};
use crate::names::Names;
use crate::packet::Packet;
use crate::routing::Routes;
use crate::tcp::{CcKind, TcpExtras, TcpParams};
use crate::traffic::{Flow, ShortFlowGen};
use experiment::config::SimConfig;
use experiment::results::{ClassSeries, CwndTrace, TimeSeries};

pub use inspect::{Conservation, ConservationError, FlowStatus, LinkStatus, SimError};
pub use pool::PoolStats;

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
    /// Node names (index = node id).
    node_names: Names,
    links: Vec<Link>,
    /// Link names (index = link id).
    link_names: Names,
    /// Link ids sorted by name (a name lookup is a binary search over `link_names`: no
    /// second copy of every name).
    link_index: Vec<u32>,
    /// Per link whose queue discipline `set_aqm` replaced: the replaced disciplines'
    /// active-flow integral (flow x ns) and peak since the warm-up (hashed queue
    /// disciplines; their counters are the link's, `Link::queue_stats`). Other links have
    /// no entry.
    replaced: BTreeMap<u32, ReplacedBase>,
    routes: Routes,
    /// The flow table: static flows at their ids, then the slots of running short flows
    /// (`pool` maps a short flow's id to its slot).
    flows: Vec<Flow>,
    /// Short flows: their records and the free slots of `flows` (`crate::flow_pool`).
    pool: crate::flow_pool::FlowPool,
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
    /// Per monitored link (in the order of `monitored`), its counters at the end of the
    /// warm-up: only monitored links are reported, so only they keep a snapshot.
    link_snap: Vec<LinkSnap>,
    /// Class index of each flow group's packets (0: unclassified, the first class).
    group_class: Vec<u8>,
    /// DSCP of each flow group's packets (0: best effort).
    group_dscp: Vec<u8>,
    /// True if some group has a class or a DSCP: only then does `emit` stamp packets.
    classed: bool,
    /// True if the network is too large for the caches: every arrival then prefetches what
    /// the coming ones will touch (`lookahead.rs`).
    lookahead: bool,
    /// Per monitored link (in the order of `monitored`), the class counters at the end of
    /// the warm-up.
    class_snap: Vec<Vec<QueueStats>>,
    /// Per monitored link (in the order of `monitored`), CAKE's tin statistics at the end
    /// of the warm-up (emptied when `set_aqm` replaces the qdisc after it).
    cake_snap: Vec<Vec<aqm::cake::stats::TinStats>>,
    /// Link ids named by `SimConfig::trace` (traced once [`Simulation::start_trace`] ran).
    trace_links: Vec<u32>,
    /// True once [`Simulation::start_trace`] gave the traced links their buffers.
    tracing: bool,
    /// The open packet capture ([`Simulation::start_pcap`]; see [`crate::pcap`]).
    capture: Option<Box<crate::pcap::Capture>>,
    /// Links with a capture tap.
    pcap_links: Vec<u32>,
    /// The hosts' capture tap (`[pcap] hosts`) and its interfaces (senders, receivers).
    host_tap: Option<Box<crate::pcap::PcapTap>>,
    host_ifaces: [u32; 2],
}

/// A link's statistics at the end of the warm-up.
/// What the queue disciplines `set_aqm` replaced on a link had counted.
#[derive(Clone, Copy, Debug, Default)]
struct ReplacedBase {
    flow_area: u128,
    flow_peak: u32,
}

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
    /// The netem stage's counters at the warm-up instant.
    netem: experiment::netem::NetemCounters,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn tcp_params(
    cc: CcKind,
    ecn: bool,
    delayed_ack: bool,
    sack: bool,
    prr: bool,
    packet_size: u32,
    init_cwnd: u32,
    min_rto: f64,
    rwnd: Option<u32>,
    accecn: bool,
    rtt_scaling: bool,
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
        accecn: accecn && (ecn || cc.needs_ecn()),
        rtt_scaling,
        pacing: false,
        extras: TcpExtras::default(),
    }
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
