//! Inspection between steps: links, flows, queues, AQM parameters, packet conservation.

use std::fmt;

use aqm::{Instant, QdiscConfig, QueueStats};

use super::Simulation;
use crate::engine::ns_to_secs;
use crate::link::LinkCounters;
use crate::routing::NO_ROUTE;
use crate::traffic::Endpoint;
use experiment::config::SimConfig;

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

impl SimError {
    /// The error's fields: the key, the value as given and the reason, for front ends that
    /// format their own line.
    pub fn parts(&self) -> (String, Option<String>, String) {
        match self {
            SimError::UnknownLink(n) => {
                ("link".into(), Some(format!("'{n}'")), "unknown link".into())
            }
            SimError::UnknownFlow(i) => {
                ("flow".into(), Some(i.to_string()), "unknown flow id".into())
            }
            SimError::Invalid { key, value, reason } => {
                (key.clone(), Some(value.to_string()), reason.to_string())
            }
            SimError::Aqm { link, error } => {
                let (k, v, r) = error.parts();
                (k, v, format!("{r} (link '{link}')"))
            }
        }
    }
}

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
    /// The link rate the queue discipline works with, bits per second: the nominal rate, or
    /// on a link with a varying capacity the rate its AQMs were last told (docs/traces.md,
    /// "What AQMs are told").
    pub aqm_rate_bps: u64,
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
    /// The receiver's window as the sender sees it, segments beyond `snd_una` (the
    /// `linux` profile's autotuned window or a fixed `rwnd`; `None`: unlimited, or UDP, or
    /// a finished flow).
    pub rwnd: Option<u32>,
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
    /// Packets in queues, in transmission, held by netem stages or propagating.
    pub in_flight: u64,
    /// Extra copies made by netem stages (`duplicate`): sent + duplicated = delivered +
    /// dropped + lost + in flight.
    pub duplicated: u64,
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

impl Simulation {
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

    pub(super) fn link_id(&self, name: &str) -> Result<u32, SimError> {
        self.link_index
            .binary_search_by(|&i| self.link_names.get(i).cmp(name))
            .map(|k| self.link_index[k])
            .map_err(|_| SimError::UnknownLink(name.to_string()))
    }

    /// Link names in index order.
    pub fn link_names(&self) -> Vec<String> {
        self.link_names.iter().map(str::to_string).collect()
    }

    /// Names of the monitored links.
    pub fn monitored_links(&self) -> Vec<String> {
        self.monitored
            .iter()
            .map(|&l| self.link_names.get(l).to_string())
            .collect()
    }

    /// Node names in index order.
    pub fn node_names(&self) -> Vec<String> {
        self.node_names.iter().map(str::to_string).collect()
    }

    /// Queue length of link `name` as (packets, bytes).
    pub fn link_queue(&self, name: &str) -> Result<(usize, u64), SimError> {
        let l = &self.links[self.link_id(name)? as usize];
        Ok((l.queue.len_pkts(), l.queue.len_bytes()))
    }

    /// Link `id`'s counters now ([`Link::counters_at`]), with its arrivals at the far node
    /// from the event queue's pipes.
    pub(super) fn link_counters(&self, id: u32) -> LinkCounters {
        self.links[id as usize].counters_at(self.now, self.ev.delivered(id))
    }

    /// Spare rings: storage of emptied queues kept for the next queue that stores a packet
    /// ([`crate::queue::SpareRings`]).
    pub fn spare_rings(&self) -> usize {
        self.ev.rings.len()
    }

    /// Status of link `name`.
    pub fn link_status(&self, name: &str) -> Result<LinkStatus, SimError> {
        let id = self.link_id(name)?;
        let l = &self.links[id as usize];
        Ok(LinkStatus {
            name: self.link_names.get(id).to_string(),
            aqm: l.queue.aqm_name().to_string(),
            queue_pkts: l.queue.len_pkts(),
            queue_bytes: l.queue.len_bytes(),
            probability: l.queue.probability(),
            aqm_stats: l.queue.stats(),
            counters: self.link_counters(id),
            queue_memory_bytes: l.queue.memory_bytes(),
            queue_pool_slots: l.queue.pool_slots(),
            rate_bps: l.rate_at(self.now),
            aqm_rate_bps: l.queue.link().rate.0,
        })
    }

    /// The links flow `id`'s data packets cross, in order, from its source to its
    /// destination under the simulation's routing (ACKs take the reverse route).
    pub fn flow_path(&self, id: u32) -> Result<Vec<String>, SimError> {
        if id as usize >= self.num_flows() {
            return Err(SimError::UnknownFlow(id));
        }
        Ok(self
            .flow_link_ids(id)
            .into_iter()
            .map(|l| self.link_names.get(l).to_string())
            .collect())
    }

    /// The ids of the links flow `id`'s data packets cross, in order.
    pub(super) fn flow_link_ids(&self, id: u32) -> Vec<u32> {
        let Some((src, dst)) = self.endpoints(id) else {
            return Vec::new();
        };
        let mut path = Vec::new();
        let mut at = src;
        while at != dst && path.len() <= self.links.len() {
            let l = self.routes.next_hop_flow(at, dst, id);
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
                    (0..self.num_flows() as u32).find(|&f| self.flow_hash(f) == h)
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
        self.pool.num_flows()
    }

    /// Status of flow `id`. A short flow that finished has left the flow table: its status
    /// is the one it had when it completed (kept in its record).
    pub fn flow_status(&self, id: u32) -> Result<FlowStatus, SimError> {
        let Some(s) = self.slot_of(id) else {
            return self.finished_status(id).ok_or(SimError::UnknownFlow(id));
        };
        let f = &self.flows[s];
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
                rwnd: snd.receive_window().filter(|_| fct_s.is_none()),
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
                rwnd: None,
                min_reduction_gap_s: None,
                fct_s: None,
            },
        })
    }

    /// Packet conservation totals over the whole run.
    pub fn conservation(&self) -> Conservation {
        let mut c = Conservation {
            sent: self.sent,
            delivered: self.delivered,
            ..Default::default()
        };
        for (i, l) in self.links.iter().enumerate() {
            let t = l.tally();
            c.dropped += t.queue_drops();
            c.lost += t.lost;
            c.in_flight += l.queue.len_pkts() as u64 + l.in_tx() + self.ev.in_pipe(i as u32);
            if let Some(n) = l.netem_counters() {
                // netem's drops and corrupted packets are losses on the link
                c.lost += n.drops + n.corrupted;
                c.in_flight += l.netem_held();
                c.duplicated += n.duplicates;
            }
        }
        c
    }

    /// Checks packet conservation: globally, packets sent by sources (+ netem's
    /// duplicates) = delivered + dropped + lost + in flight; per link,
    /// `arrivals = queue drops + transmitted + queued + in transmission` and
    /// `transmitted (+ netem's duplicates) = lost + netem's drops, corrupted and held +
    /// delivered to the far node + propagating`.
    pub fn check_conservation(&self) -> Result<Conservation, ConservationError> {
        for (i, l) in self.links.iter().enumerate() {
            // Raw counters (a fast-path packet counts as sent), arrivals from the pipes.
            let c = &LinkCounters {
                delivered: self.ev.delivered(i as u32),
                ..l.tally()
            };
            let in_pipe = self.ev.in_pipe(i as u32);
            let rhs = c.queue_drops() + c.tx_pkts + l.queue.len_pkts() as u64 + l.in_tx();
            if c.arrivals != rhs {
                return Err(ConservationError::Link {
                    link: self.link_names.get(i as u32).to_string(),
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
            let n = l.netem_counters().unwrap_or_default();
            let netem_out = n.drops + n.corrupted + l.netem_held();
            if c.tx_pkts + n.duplicates != c.lost + netem_out + c.delivered + in_pipe {
                return Err(ConservationError::Link {
                    link: self.link_names.get(i as u32).to_string(),
                    detail: format!(
                        "transmitted {} + duplicated {} != lost {} + netem dropped, corrupted \
                         or held {} + delivered {} + propagating {}",
                        c.tx_pkts, n.duplicates, c.lost, netem_out, c.delivered, in_pipe
                    ),
                });
            }
        }
        let c = self.conservation();
        if c.sent + c.duplicated != c.delivered + c.dropped + c.lost + c.in_flight {
            return Err(ConservationError::Global(c));
        }
        Ok(c)
    }

    /// Packets transmitted over link `name` so far.
    pub fn link_tx_packets(&self, name: &str) -> Result<u64, SimError> {
        Ok(self.link_counters(self.link_id(name)?).tx_pkts)
    }
}
