//! Simulation results: the serde summary (results contract, docs/design.md) plus
//! column vectors for time series, per-flow rows and cwnd traces.
//!
//! All statistics in [`Summary`] exclude the warm-up: they cover
//! `[warmup, now]`. Time series cover the whole run (warm-up included) so the
//! transient can be plotted.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Queue-delay statistics in milliseconds (from the log-linear histogram:
/// quantiles within 1.6 % relative error, mean exact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DelayStats {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// The queue-delay histogram of a link (post-warm-up), its non-empty bins in increasing
/// order: bin `i` holds the packets whose sojourn `d` satisfies `lo_ms[i] <= d < hi_ms[i]`.
///
/// The bins are those of the log-linear histogram the quantiles come from
/// (`monitor::LogHistogram`, which builds this): one bin per nanosecond below 32 ns, then 32 equal bins
/// per power of two, so `hi - lo <= lo / 32`. The CDF is exact at every bin edge; a quantile
/// read at a bin's midpoint is within 1/64 (1.6 %) of the exact order statistic. The bins are
/// the same in every run, so histograms of several runs merge by adding the counts of equal
/// `lo_ms`. Edges are integer nanoseconds divided by 1e6.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DelayHistogram {
    /// Lower edge of each non-empty bin, ms (inclusive).
    pub lo_ms: Vec<f64>,
    /// Upper edge of each non-empty bin, ms (exclusive).
    pub hi_ms: Vec<f64>,
    /// Packets in each bin.
    pub counts: Vec<u64>,
}

/// Per-link summary (post-warm-up).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// Name of the running AQM.
    pub aqm: String,
    /// Bits transmitted inside `[warmup, now]` / (rate x (now - warmup)),
    /// in [0, 1]: a transmission straddling an edge of the window is
    /// credited pro rata (`Link::tx_work_at`).
    pub utilization: f64,
    /// Time-average queue length, packets (excluding the packet in
    /// transmission).
    pub mean_queue_pkts: f64,
    /// Time-average queue length, bytes.
    pub mean_queue_bytes: f64,
    /// Queue sojourn time of dequeued packets, ms.
    pub queue_delay_ms: DelayStats,
    /// Histogram of the same sojourn times (the one the quantiles above come from).
    #[serde(default)]
    pub queue_delay_hist: DelayHistogram,
    /// Packets dropped by the queue (limit + AQM at enqueue + AQM at
    /// dequeue).
    pub drops: u64,
    /// CE marks set by this queue.
    pub marks: u64,
    /// Packets accepted into the queue.
    pub enqueued: u64,
    /// AQM control-law activations.
    pub aqm_activations: u64,
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets lost to the link's random loss.
    pub lost: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Link rate, bits/s.
    pub rate_bps: f64,
    /// Per-class statistics of a class-based qdisc (DRR), by class name;
    /// empty (and not serialised) for a FIFO.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub classes: BTreeMap<String, ClassSummary>,
    /// Backlogged flow queues of a hashed flow-queueing qdisc (`fq_codel`,
    /// `fq_pie`, `sfq`, `sfq_codel`), or SQM's elephant slots in use, over the
    /// window; absent (not serialised) for other qdiscs. The other keys are the qdisc's aggregates, as for
    /// any queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_flows: Option<ActiveFlows>,
    /// CAKE's statistics per tin as `tc -s qdisc show` gives them, by tin name; counted
    /// since the qdisc was built (warm-up included, as Linux's counters are); absent (not
    /// serialised) for other qdiscs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cake_tins: BTreeMap<String, CakeTinStats>,
    /// The counters of the link's netem stage over the window (`netem_drops`,
    /// `duplicates`, ...); absent (not serialised) for a link without `netem`.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub netem: Option<NetemSummary>,
}

/// What a link's netem stage did over `[warmup, now]` (packets; docs/netem.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetemSummary {
    /// Dropped by the loss model or the stage's `limit`.
    pub netem_drops: u64,
    /// Of `netem_drops`, refused because the stage held `limit` packets.
    pub netem_limit_drops: u64,
    /// Copies made by `duplicate`.
    pub duplicates: u64,
    /// Sent ahead by `reorder`.
    pub reordered: u64,
    /// Corrupted by `corrupt`, hence dropped (the receiver would discard them).
    pub corrupted: u64,
    /// CE-marked instead of dropped (`ecn`).
    pub netem_marks: u64,
    /// Left the stage after a packet that entered after them (by jitter or `reorder`).
    pub late: u64,
}

impl NetemSummary {
    /// The counts between two snapshots of a stage's counters.
    pub fn between(a: &crate::netem::NetemCounters, b: &crate::netem::NetemCounters) -> Self {
        NetemSummary {
            netem_drops: b.drops - a.drops,
            netem_limit_drops: b.limit_drops - a.limit_drops,
            duplicates: b.duplicates - a.duplicates,
            reordered: b.reordered - a.reordered,
            corrupted: b.corrupted - a.corrupted,
            netem_marks: b.marks - a.marks,
            late: b.late - a.late,
        }
    }
}

/// Backlogged flow queues of a hashed qdisc over `[warmup, now]` (a flow queue
/// is backlogged while it holds at least one packet; two flows hashed into one
/// bucket count once).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActiveFlows {
    /// Time average (exact: the count's integral over the window / its length).
    pub mean: f64,
    /// Largest count reached in the window.
    pub max: u32,
}

/// One CAKE tin's `tc -s` statistics (Linux `cake_dump_stats`), since the qdisc was built.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CakeTinStats {
    /// Tin threshold rate, bit/s (0: unlimited).
    pub threshold_bps: f64,
    /// COBALT target and interval, ms.
    pub target_ms: f64,
    /// COBALT interval, ms.
    pub interval_ms: f64,
    /// Packets and bytes accepted into the tin (Linux counts them at enqueue).
    pub packets: u64,
    /// Bytes accepted into the tin.
    pub bytes: u64,
    /// Packets dropped by COBALT and the memory limit.
    pub drops: u64,
    /// CE marks.
    pub marks: u64,
    /// Pure ACKs dropped by the ACK filter.
    pub ack_drops: u64,
    /// Packets dropped at the memory limit.
    pub overlimit_drops: u64,
    /// Peak, average and base delay EWMAs at the end, ms.
    pub peak_delay_ms: f64,
    /// Average delay EWMA, ms.
    pub avg_delay_ms: f64,
    /// Base delay EWMA, ms.
    pub base_delay_ms: f64,
    /// Hash: direct hits, indirect hits, misses, collisions.
    pub way_directs: u64,
    /// Indirect hits.
    pub way_hits: u64,
    /// Misses.
    pub way_misses: u64,
    /// Collisions.
    pub way_collisions: u64,
    /// Sparse (and decaying), bulk and unresponsive flows at the end.
    pub sparse_flows: u32,
    /// Bulk flows at the end.
    pub bulk_flows: u32,
    /// Unresponsive flows (BLUE active) at the end.
    pub unresponsive_flows: u32,
    /// Largest packet, bytes.
    pub max_len: u32,
    /// Per-flow DRR quantum, bytes.
    pub flow_quantum: u32,
}

/// Per-class summary of a class-based qdisc (post-warm-up).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassSummary {
    /// Sojourn time in the class's queue of packets it sent, ms.
    pub queue_delay_ms: DelayStats,
    /// Packets accepted into the class.
    pub enqueued: u64,
    /// Packets dropped by the class: its limit and AQM at enqueue, its AQM
    /// at dequeue, and victims taken by the scheduler.
    pub drops: u64,
    /// CE marks set by the class's AQM.
    pub marks: u64,
    /// Bytes the class sent to the link.
    pub tx_bytes: u64,
    /// Packets the class sent to the link.
    pub tx_packets: u64,
}

/// Per-flow summary (post-warm-up). The definitions are in `docs/design.md` ("Per-flow
/// statistics"); every statistic covers the flow's window `[t0, t1] = [max(start, warmup),
/// min(now, stop, completion)]`.
///
/// A run holds one per flow (a million on the million-flow dumbbell), so its names take no
/// memory of their own: the kind, congestion control and direction are the static names,
/// the link names are shared with the other flows' ([`Arc`]), and the per-link delays are a
/// sorted list ([`LinkDelays`]) rather than a map with a node of eleven entries, and each
/// statistic of four columns is one `Option<DelayStats>` (it is written and read as the
/// four columns).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSummary {
    /// Flow id.
    pub id: u32,
    /// Flow group index.
    pub group: u32,
    /// `tcp`, `short_tcp`, `udp_cbr` or `udp_onoff`.
    pub kind: Cow<'static, str>,
    /// Congestion control (TCP), else null.
    pub cc: Option<Cow<'static, str>>,
    /// `forward` or `reverse`: which way the flow's data crosses a builder's bottleneck(s)
    /// (its group's `direction`; `forward` on explicit topologies).
    pub direction: Cow<'static, str>,
    /// Start time, s.
    pub start_s: f64,
    /// Length of the flow's window `t1 - t0`, s (0 if the flow never started or its window
    /// is empty).
    pub window_s: f64,
    /// Goodput: `8 x bytes_in_window / window_s`, bits/s (0 for an empty window).
    pub goodput_bps: f64,
    /// Payload bytes the receiving application got in order during the window:
    /// `delivered(t1) - delivered(t0)` (UDP: payload of the datagrams received in it).
    pub bytes_in_window: u64,
    /// RTT of the ACKs that reached the sender in the window, ms: the columns
    /// `rtt_ms_mean`, `rtt_ms_p50`, `rtt_ms_p95` and `rtt_ms_p99` (quantiles within 3.1 %;
    /// null if none; UDP: null). See [`crate::traffic::FlowDelays::rtt`].
    pub rtt_ms: Option<DelayStats>,
    /// ACKs that reached the sender in the window (the RTT samples).
    pub rtt_samples: u64,
    /// One-way delay of the data packets that reached the receiver in the window, ms: the
    /// columns `owd_ms_mean`, `owd_ms_p50`, `owd_ms_p95` and `owd_ms_p99` (quantiles within
    /// 3.1 %; null if none). See [`crate::traffic::FlowDelays::owd`].
    pub owd_ms: Option<DelayStats>,
    /// The link the `queue_delay_ms` columns describe: the flow's bottleneck queue, the
    /// monitored link on its data path where its packets' mean queueing delay after the
    /// warm-up was largest (the first on the path on ties; null if none).
    pub queue_delay_link: Option<Arc<str>>,
    /// Queueing delay (sojourn) of the flow's packets at `queue_delay_link`, ms: the
    /// columns `queue_delay_ms_mean`, `queue_delay_ms_p50`, `queue_delay_ms_p95` and
    /// `queue_delay_ms_p99` (quantiles within 3.1 %).
    pub queue_delay_ms: Option<DelayStats>,
    /// Queueing delay of the flow's packets at every monitored link they left after the
    /// warm-up, by link name (data and ACKs: a flow's ACKs are counted at the links they
    /// cross). Only in `summary.json`; `flows.parquet` keeps the flat columns above.
    pub queue_delay_by_link: LinkDelays,
    /// Retransmitted segments after warm-up.
    pub retransmits: u64,
    /// Retransmission timeouts after warm-up.
    pub timeouts: u64,
    /// Flow completion time of a finite flow (start to last byte
    /// acknowledged), s; null if unfinished or not finite.
    pub fct_s: Option<f64>,
    /// Size of a finite flow, bytes.
    pub size_bytes: Option<u64>,
    /// Payload bytes delivered in order over the whole run.
    pub bytes_delivered: u64,
}

/// The flat row a [`FlowSummary`] is written as and read from (`summary.json`'s `flows`):
/// each statistic of four is four columns, null when absent. A summary holds one row per
/// flow (a million on the million-flow dumbbell), so in memory the four are one
/// `Option<DelayStats>` (40 bytes, not 64).
#[derive(Serialize, Deserialize)]
struct FlowRow<'a> {
    id: u32,
    group: u32,
    kind: Cow<'static, str>,
    cc: Option<Cow<'static, str>>,
    #[serde(default = "forward_static")]
    direction: Cow<'static, str>,
    start_s: f64,
    window_s: f64,
    goodput_bps: f64,
    bytes_in_window: u64,
    rtt_ms_mean: Option<f64>,
    rtt_ms_p50: Option<f64>,
    rtt_ms_p95: Option<f64>,
    rtt_ms_p99: Option<f64>,
    rtt_samples: u64,
    owd_ms_mean: Option<f64>,
    owd_ms_p50: Option<f64>,
    owd_ms_p95: Option<f64>,
    owd_ms_p99: Option<f64>,
    queue_delay_link: Option<Arc<str>>,
    queue_delay_ms_mean: Option<f64>,
    queue_delay_ms_p50: Option<f64>,
    queue_delay_ms_p95: Option<f64>,
    queue_delay_ms_p99: Option<f64>,
    #[serde(default)]
    queue_delay_by_link: Cow<'a, LinkDelays>,
    retransmits: u64,
    timeouts: u64,
    fct_s: Option<f64>,
    size_bytes: Option<u64>,
    bytes_delivered: u64,
}

/// The four columns of a statistic, null when absent.
fn columns(s: Option<DelayStats>) -> [Option<f64>; 4] {
    match s {
        Some(s) => [Some(s.mean), Some(s.p50), Some(s.p95), Some(s.p99)],
        None => [None; 4],
    }
}

/// A statistic from its four columns: absent unless all four are there.
fn from_columns(
    mean: Option<f64>,
    p50: Option<f64>,
    p95: Option<f64>,
    p99: Option<f64>,
) -> Option<DelayStats> {
    Some(DelayStats {
        mean: mean?,
        p50: p50?,
        p95: p95?,
        p99: p99?,
    })
}

impl Serialize for FlowSummary {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let [rtt_ms_mean, rtt_ms_p50, rtt_ms_p95, rtt_ms_p99] = columns(self.rtt_ms);
        let [owd_ms_mean, owd_ms_p50, owd_ms_p95, owd_ms_p99] = columns(self.owd_ms);
        let [queue_delay_ms_mean, queue_delay_ms_p50, queue_delay_ms_p95, queue_delay_ms_p99] =
            columns(self.queue_delay_ms);
        FlowRow {
            id: self.id,
            group: self.group,
            kind: self.kind.clone(),
            cc: self.cc.clone(),
            direction: self.direction.clone(),
            start_s: self.start_s,
            window_s: self.window_s,
            goodput_bps: self.goodput_bps,
            bytes_in_window: self.bytes_in_window,
            rtt_ms_mean,
            rtt_ms_p50,
            rtt_ms_p95,
            rtt_ms_p99,
            rtt_samples: self.rtt_samples,
            owd_ms_mean,
            owd_ms_p50,
            owd_ms_p95,
            owd_ms_p99,
            queue_delay_link: self.queue_delay_link.clone(),
            queue_delay_ms_mean,
            queue_delay_ms_p50,
            queue_delay_ms_p95,
            queue_delay_ms_p99,
            queue_delay_by_link: Cow::Borrowed(&self.queue_delay_by_link),
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            fct_s: self.fct_s,
            size_bytes: self.size_bytes,
            bytes_delivered: self.bytes_delivered,
        }
        .serialize(ser)
    }
}

impl<'de> Deserialize<'de> for FlowSummary {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let r = FlowRow::deserialize(de)?;
        Ok(FlowSummary {
            id: r.id,
            group: r.group,
            kind: r.kind,
            cc: r.cc,
            direction: r.direction,
            start_s: r.start_s,
            window_s: r.window_s,
            goodput_bps: r.goodput_bps,
            bytes_in_window: r.bytes_in_window,
            rtt_ms: from_columns(r.rtt_ms_mean, r.rtt_ms_p50, r.rtt_ms_p95, r.rtt_ms_p99),
            rtt_samples: r.rtt_samples,
            owd_ms: from_columns(r.owd_ms_mean, r.owd_ms_p50, r.owd_ms_p95, r.owd_ms_p99),
            queue_delay_link: r.queue_delay_link,
            queue_delay_ms: from_columns(
                r.queue_delay_ms_mean,
                r.queue_delay_ms_p50,
                r.queue_delay_ms_p95,
                r.queue_delay_ms_p99,
            ),
            queue_delay_by_link: r.queue_delay_by_link.into_owned(),
            retransmits: r.retransmits,
            timeouts: r.timeouts,
            fct_s: r.fct_s,
            size_bytes: r.size_bytes,
            bytes_delivered: r.bytes_delivered,
        })
    }
}

/// Per-group summary (post-warm-up): the group's flows together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    /// Group index (position in the scenario's `flows`).
    pub group: u32,
    /// The group's `name`, or `flows[i]`.
    pub name: String,
    /// The group's kind.
    pub kind: String,
    /// Congestion control (TCP groups), else null.
    pub cc: Option<String>,
    /// The class of a class-based qdisc its packets go to, if set.
    pub class: Option<String>,
    /// The group's `direction` (`forward` or `reverse`).
    #[serde(default = "forward")]
    pub direction: String,
    /// Flows of the group created so far.
    pub flows: usize,
    /// Flows whose window is open (started, `t1 > t0`).
    pub active_flows: usize,
    /// Sum of the active flows' goodputs, bits/s.
    pub goodput_bps: f64,
    /// Mean goodput of the active flows, bits/s.
    pub goodput_bps_mean: f64,
    /// Jain's index of the goodputs of the group's long-lived active flows (TCP without
    /// `bytes`, UDP sources); null if none.
    pub jain: Option<f64>,
    /// Flows in the group's Jain index.
    pub jain_flows: usize,
    /// Retransmitted segments after warm-up.
    pub retransmits: u64,
    /// Retransmission timeouts after warm-up.
    pub timeouts: u64,
    /// RTT of all the group's ACKs in their flows' windows, ms (null if none).
    pub rtt_ms: Option<DelayStats>,
    /// One-way delay of all the group's data packets in their flows' windows, ms.
    pub owd_ms: Option<DelayStats>,
    /// Queueing delay of the group's packets per monitored link, ms.
    pub queue_delay_ms: BTreeMap<String, DelayStats>,
}

/// Fairness over long-lived TCP flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Jain's index `(sum x)^2 / (n sum x^2)` of the goodputs of the
    /// long-lived TCP flows (kind `tcp` without `bytes`) active after
    /// warm-up; null if there are none. UDP, short and finite flows are not in it (each
    /// group's own index is in `groups`).
    pub jain: Option<f64>,
    /// Number of flows in the index.
    pub flows: usize,
    /// Which flows the index covers, in words.
    pub scope: String,
}

/// [`Fairness::scope`] of the simulator's index.
pub const JAIN_SCOPE: &str = "long-lived TCP flows active in the window";

/// The summary (`summary.json` minus `wall_seconds`, which the caller
/// measures).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Simulated seconds (the run's current time).
    pub sim_seconds: f64,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// Events processed.
    pub events: u64,
    /// Packet transmissions completed over all links (hops).
    pub packets_forwarded: u64,
    /// Monitored links by name.
    pub links: BTreeMap<String, LinkSummary>,
    /// Every flow.
    pub flows: Vec<FlowSummary>,
    /// Every flow group, in the scenario's order.
    pub groups: Vec<GroupSummary>,
    /// Fairness.
    pub fairness: Fairness,
    /// Fabrics only: FCT slowdown per size bucket of the completed finite flows that started
    /// after the warm-up (`crate::fct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fct_slowdown: Option<Vec<crate::fct::SlowdownBucket>>,
}

/// Monitor time series, one row per (sample instant, monitored link).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeSeries {
    /// Sample time, s (end of the interval; the last interval may be
    /// shorter than `sample_interval` when the run's end is not a multiple
    /// of it).
    pub time_s: Vec<f64>,
    /// Link name.
    pub link: Vec<String>,
    /// Queue length at the sample instant, packets.
    pub queue_pkts: Vec<u64>,
    /// Queue length at the sample instant, bytes.
    pub queue_bytes: Vec<u64>,
    /// Mean sojourn time of packets dequeued in the interval, ms (NaN if
    /// none left the queue).
    pub queue_delay_ms_mean: Vec<f64>,
    /// Packets offered to the queue in the interval.
    pub arrivals: Vec<u64>,
    /// Queue drops in the interval.
    pub drops: Vec<u64>,
    /// CE marks in the interval.
    pub marks: Vec<u64>,
    /// Bits transmitted in the interval / interval length, bits/s.
    pub throughput_bps: Vec<f64>,
    /// Bytes transmitted in the interval.
    pub tx_bytes: Vec<u64>,
    /// Backlogged flow queues of a hashed flow-queueing qdisc (SQM: elephant
    /// slots in use) at the sample instant (0 for qdiscs without flow queues:
    /// FIFO, DRR). Left out of the
    /// serde form when every value is 0 (no monitored link has a hashed
    /// qdisc), so that such results serialise as before the column existed.
    #[serde(default, skip_serializing_if = "all_zero")]
    pub active_flows: Vec<u64>,
}

impl TimeSeries {
    /// Makes room for `rows` more rows in every column a run fills (all but `link`, which is
    /// filled from the link ids at the end), so that sampling does not reallocate.
    pub fn reserve(&mut self, rows: usize) {
        self.time_s.reserve_exact(rows);
        self.queue_pkts.reserve_exact(rows);
        self.queue_bytes.reserve_exact(rows);
        self.queue_delay_ms_mean.reserve_exact(rows);
        self.arrivals.reserve_exact(rows);
        self.drops.reserve_exact(rows);
        self.marks.reserve_exact(rows);
        self.throughput_bps.reserve_exact(rows);
        self.tx_bytes.reserve_exact(rows);
        self.active_flows.reserve_exact(rows);
    }
}

/// The direction of results written before directions existed.
fn forward() -> String {
    "forward".into()
}

fn forward_static() -> Cow<'static, str> {
    Cow::Borrowed("forward")
}

/// Delay statistics by link name, sorted by name: a flow's `queue_delay_by_link`, written
/// and read as a JSON object like a map. (A flow crosses one or two monitored links, and a
/// run holds one per flow: a list of one entry takes 64 bytes where a `BTreeMap`'s first
/// node takes some 600.)
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkDelays(Vec<(Arc<str>, DelayStats)>);

impl LinkDelays {
    /// From entries in any order; a later entry for a name replaces an earlier one.
    pub fn from_entries(mut v: Vec<(Arc<str>, DelayStats)>) -> Self {
        v.reverse();
        v.sort_by(|a, b| a.0.cmp(&b.0)); // stable: the last given first among equal names
        v.dedup_by(|later, first| later.0 == first.0);
        v.shrink_to_fit();
        LinkDelays(v)
    }

    /// Number of links.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if no link.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The statistics at link `name`.
    pub fn get(&self, name: &str) -> Option<&DelayStats> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(name))
            .ok()
            .map(|i| &self.0[i].1)
    }

    /// The links and their statistics, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &DelayStats)> {
        self.0.iter().map(|(k, v)| (&**k, v))
    }
}

impl Serialize for LinkDelays {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for LinkDelays {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = BTreeMap::<String, DelayStats>::deserialize(d)?;
        Ok(LinkDelays(
            m.into_iter().map(|(k, v)| (Arc::from(k), v)).collect(),
        ))
    }
}

fn all_zero(v: &[u64]) -> bool {
    v.iter().all(|&x| x == 0)
}

/// Per-class monitor time series of class-based qdiscs (drr, wfq, any qdisc with named
/// classes), one row per (sample instant, monitored link with classes, class). Rows are sampled
/// with [`TimeSeries`]'s (same instants, same intervals).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassSeries {
    /// Sample time, s (as [`TimeSeries::time_s`]).
    pub time_s: Vec<f64>,
    /// Link name.
    pub link: Vec<String>,
    /// Class name.
    pub class: Vec<String>,
    /// The class's queue length at the sample instant, packets.
    pub queue_pkts: Vec<u64>,
    /// The class's queue length at the sample instant, bytes.
    pub queue_bytes: Vec<u64>,
    /// Bytes the class sent in the interval.
    pub tx_bytes: Vec<u64>,
    /// The class's drops in the interval (limit, AQM at enqueue and dequeue, victims).
    pub drops: Vec<u64>,
    /// The class's CE marks in the interval.
    pub marks: Vec<u64>,
    /// Mean sojourn time of the class's packets dequeued in the interval, ms (NaN if none
    /// left its queue).
    pub queue_delay_ms_mean: Vec<f64>,
}

impl ClassSeries {
    /// True if there is no row.
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}

/// Congestion-window traces of the selected flows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CwndTrace {
    /// Sample time, s.
    pub time_s: Vec<f64>,
    /// Flow id.
    pub flow: Vec<u32>,
    /// Congestion window, segments.
    pub cwnd: Vec<f64>,
    /// Slow-start threshold, segments (infinite before the first loss).
    pub ssthresh: Vec<f64>,
    /// Smoothed RTT, ms (NaN before the first sample).
    pub srtt_ms: Vec<f64>,
}

impl CwndTrace {
    /// Makes room for `rows` more rows in every column.
    pub fn reserve(&mut self, rows: usize) {
        self.time_s.reserve_exact(rows);
        self.flow.reserve_exact(rows);
        self.cwnd.reserve_exact(rows);
        self.ssthresh.reserve_exact(rows);
        self.srtt_ms.reserve_exact(rows);
    }
}

/// Every probe of the ping probers (flow groups of kind `ping`), one row per probe in the
/// order of flow id and probe number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PingSeries {
    /// Flow id of the prober.
    pub flow: Vec<u32>,
    /// Probe number (from 0, per prober).
    pub seq: Vec<u32>,
    /// Time the probe was sent, s.
    pub time_s: Vec<f64>,
    /// Round-trip time, ms (NaN: no echo by the end of the run).
    pub rtt_ms: Vec<f64>,
}

impl PingSeries {
    /// True without probes.
    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimResults {
    /// The summary.
    pub summary: Summary,
    /// Time series of the monitored links.
    pub timeseries: TimeSeries,
    /// Cwnd traces.
    pub cwnd: CwndTrace,
    /// Per-class time series (empty without class-based qdiscs on monitored links; then
    /// not serialized, so FIFO results serialize as before).
    #[serde(default, skip_serializing_if = "ClassSeries::is_empty")]
    pub class_timeseries: ClassSeries,
    /// Ping probes (empty without ping probers; then not serialized).
    #[serde(default, skip_serializing_if = "PingSeries::is_empty")]
    pub pings: PingSeries,
}

/// Jain's fairness index of `x` (1 for a single value; `None` if empty or
/// all zero).
pub fn jain(x: &[f64]) -> Option<f64> {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || s2 == 0.0 {
        None
    } else {
        Some(s * s / (x.len() as f64 * s2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow's row is written as the flat columns it always had (each statistic four
    /// columns, null when absent, in the same order) and read back to the same summary;
    /// in memory a row is 336 bytes (it was 408 with sixteen `Option<f64>`).
    #[test]
    fn flow_rows_are_written_flat() {
        let st = |m: f64| DelayStats {
            mean: m,
            p50: m + 1.0,
            p95: m + 2.0,
            p99: m + 3.0,
        };
        let f = FlowSummary {
            id: 3,
            group: 1,
            kind: Cow::Borrowed("tcp"),
            cc: Some(Cow::Borrowed("cubic")),
            direction: Cow::Borrowed("forward"),
            start_s: 0.5,
            window_s: 9.5,
            goodput_bps: 1e6,
            bytes_in_window: 1_187_500,
            rtt_ms: Some(st(20.0)),
            rtt_samples: 400,
            owd_ms: None,
            queue_delay_link: Some(Arc::from("R1->R2")),
            queue_delay_ms: Some(st(5.0)),
            queue_delay_by_link: LinkDelays::from_entries(vec![(Arc::from("R1->R2"), st(5.0))]),
            retransmits: 2,
            timeouts: 0,
            fct_s: None,
            size_bytes: None,
            bytes_delivered: 1_200_000,
        };
        let v = serde_json::to_value(&f).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let want = "id group kind cc direction start_s window_s goodput_bps bytes_in_window \
                    rtt_ms_mean rtt_ms_p50 rtt_ms_p95 rtt_ms_p99 rtt_samples owd_ms_mean \
                    owd_ms_p50 owd_ms_p95 owd_ms_p99 queue_delay_link queue_delay_ms_mean \
                    queue_delay_ms_p50 queue_delay_ms_p95 queue_delay_ms_p99 \
                    queue_delay_by_link retransmits timeouts fct_s size_bytes bytes_delivered";
        let mut want: Vec<&str> = want.split_whitespace().collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        want.sort_unstable();
        assert_eq!(sorted, want);
        assert_eq!(v["rtt_ms_p95"], 22.0);
        assert_eq!(v["queue_delay_ms_p99"], 8.0);
        assert!(v["owd_ms_mean"].is_null() && v["owd_ms_p99"].is_null());
        assert_eq!(v["queue_delay_by_link"]["R1->R2"]["mean"], 5.0);
        let back: FlowSummary = serde_json::from_value(v).unwrap();
        assert_eq!(back, f);
        assert!(std::mem::size_of::<FlowSummary>() <= 336);
    }

    /// A flow's per-link delays read and write the JSON object the map they replaced did
    /// (keys sorted by name, a later entry for a name winning), and take one small block.
    #[test]
    fn link_delays_are_written_as_the_map_was() {
        let st = |m: f64| DelayStats {
            mean: m,
            p50: m,
            p95: m,
            p99: m,
        };
        let (a, b): (Arc<str>, Arc<str>) = ("R2->R1".into(), "R1->R2".into());
        let d = LinkDelays::from_entries(vec![
            (a.clone(), st(9.0)),
            (b.clone(), st(1.0)),
            (a.clone(), st(2.0)),
        ]);
        let map: BTreeMap<String, DelayStats> = [
            ("R1->R2".to_string(), st(1.0)),
            ("R2->R1".to_string(), st(2.0)),
        ]
        .into();
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(json, serde_json::to_string(&map).unwrap());
        assert_eq!(serde_json::from_str::<LinkDelays>(&json).unwrap(), d);
        assert_eq!(
            (d.len(), d.get("R2->R1"), d.get("x")),
            (2, Some(&st(2.0)), None)
        );
        let names: Vec<&str> = d.iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["R1->R2", "R2->R1"]);
        assert_eq!(d.0.capacity(), 2);
        assert!(LinkDelays::default().is_empty());
    }

    #[test]
    fn jain_index() {
        assert_eq!(super::jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(super::jain(&[1.0, 0.0]), Some(0.5));
        assert_eq!(super::jain(&[]), None);
    }
}
