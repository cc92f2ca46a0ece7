//! The emulated links, as pure logic with time passed in (ns since the run's origin): the
//! forwarder feeds them packets and the clock and writes out what they release. Tested
//! without any device.
//!
//! * [`Bottleneck`]: an `aqm` [`Qdisc`] (built from the same [`QdiscConfig`] the simulator
//!   uses) drained at `rate` (serialisation: a packet of `b` bytes occupies the link for
//!   `8 b / rate`, rounded up to the ns), then a propagation delay. The link is driven in
//!   virtual time: a transmission starts when the previous one ends (its scheduled end, not
//!   the moment the forwarder noticed), so the long-run rate is exact whatever the wake-up
//!   jitter; only the release instants (the writes) carry the forwarder's timing error.
//!   With a varying capacity (a Mahimahi trace, `rate_changes`) the link is served by
//!   `experiment::service::Service`, the model the simulator calls: a packet is dequeued when
//!   the service can send (the next delivery opportunity, the end of a rate-0 period) and
//!   leaves when the service says; `rate` is then the nominal rate, and the utilization is the
//!   service's work over its capacity in the window.
//!   With `netem` the packets that leave the transmitter pass `experiment::netem::Netem`, the
//!   stage the simulator runs, before the propagation delay; its watchdog is one more
//!   deadline of [`Bottleneck::advance`].
//! * [`DelayLine`]: the ACK direction, a constant delay with an unlimited FIFO and no rate.
//!
//! Statistics follow the simulator's results contract (`experiment::results`) and exclude the
//! warm-up: sojourn times of dequeued packets, the time-average queue, counters, utilization
//! (transmission time inside the window, pro rata), one time-series row per sample interval.

use std::collections::VecDeque;

use aqm::{BitsPerSec, Enqueue, Instant, LinkInfo, Qdisc, QdiscConfig, QueueLimit, QueueStats};
use experiment::monitor::{
    class_base, class_counters, class_summaries, push_class_rows, IntervalDelay, LogHistogram,
};
use experiment::results::{
    ActiveFlows, ClassSeries, DelayHistogram, DelayStats, LinkSummary, TimeSeries,
};

use crate::packet::IpPacket;
use experiment::netem::{Netem, NetemCounters};
use experiment::results::NetemSummary;
use experiment::service::Service;

/// What statistics cover: the warm-up they exclude and the time-series sample interval.
#[derive(Clone, Copy, Debug)]
pub struct StatsWindow {
    /// Warm-up excluded from the summary, ns.
    pub warmup_ns: u64,
    /// Time-series sample interval, ns (> 0).
    pub interval_ns: u64,
}

/// Arrivals and drops at the bottleneck by ECN capability, inside the statistics window
/// (real senders decide per packet: Linux sends retransmissions Not-ECT, RFC 3168 §6.1.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct EcnCounts {
    /// Not-ECT packets offered to the queue.
    pub not_ect_arrivals: u64,
    /// ECN-capable packets (ECT(0), ECT(1), CE) offered to the queue.
    pub ect_arrivals: u64,
    /// Not-ECT packets dropped (limit, AQM at enqueue or dequeue, victims).
    pub not_ect_drops: u64,
    /// ECN-capable packets dropped.
    pub ect_drops: u64,
}

impl EcnCounts {
    fn drop(&mut self, p: &IpPacket) {
        if p.ecn.is_capable() {
            self.ect_drops += 1;
        } else {
            self.not_ect_drops += 1;
        }
    }
}

/// A packet waiting in a propagation delay: `(release time ns, packet)`.
pub type Delayed = (u64, IpPacket);

/// The forward bottleneck: qdisc, transmitter, propagation delay, monitor.
pub struct Bottleneck {
    qdisc: Qdisc<IpPacket>,
    rate: BitsPerSec,
    delay_ns: u64,
    /// The packet being transmitted and the end of its transmission (ns).
    tx: Option<(u64, IpPacket)>,
    /// Start of the current transmission (ns).
    tx_start: u64,
    /// The service of a varying capacity (`None`: the fixed `rate`).
    service: Option<Box<Service>>,
    /// With a service: when the next packet can start (the transmitter waits until then).
    wait_until: Option<u64>,
    /// With a service: (work, capacity) at the end of the warm-up, bit x 1e9.
    service_base: (u128, u128),
    pipe: VecDeque<Delayed>,
    /// The rate the qdisc was last told (bit/s): the nominal `rate` until a varying capacity
    /// changes it ([`Bottleneck::tell_rate`]).
    told_rate: u64,
    /// The netem stage (`None`: none) and its counters at the end of the warm-up.
    netem: Option<Box<Netem<IpPacket>>>,
    netem_base: NetemCounters,
    mon: Monitor,
    /// ECN counts of the statistics window.
    ecn: EcnCounts,
}

/// Monitor state of the bottleneck (see the module doc).
struct Monitor {
    name: String,
    warmup_ns: u64,
    interval_ns: u64,
    next_sample: u64,
    in_window: bool,
    /// Counters at the end of the warm-up.
    base: QueueStats,
    base_flow_area: u128,
    delay: LogHistogram,
    /// Class counters at the end of the warm-up (one entry per class; none for a FIFO).
    class_base: Vec<QueueStats>,
    /// CAKE's tin statistics at the end of the warm-up (none for other qdiscs).
    cake_base: Vec<aqm::cake::stats::TinStats>,
    /// Sojourn times (ns) per class of packets dequeued in the window.
    class_delay: Vec<LogHistogram>,
    interval_delay_sum: u64,
    interval_delay_count: u64,
    /// (arrivals, drops, marks, tx bytes) at the start of the sample interval.
    last: [u64; 4],
    tx_bytes: u64,
    tx_packets: u64,
    base_tx_packets: u64,
    /// Transmission time inside the window, ns.
    busy_ns: u64,
    /// Integral of the queue length (packets, bytes) over the window, packet-ns and byte-ns.
    area_pkts: f64,
    area_bytes: f64,
    last_change: u64,
    ts: TimeSeries,
    /// Per-class rows of a class-based qdisc, at the instants of `ts` (none for a FIFO).
    cts: ClassSeries,
    /// Per class, [`class_counters`] at the start of the sample interval.
    class_last: Vec<[u64; 3]>,
    /// Per class, the sojourn times of the current sample interval.
    class_interval: Vec<IntervalDelay>,
}

impl Bottleneck {
    /// A bottleneck running `cfg` with hard limit `limit` at `rate`, then `delay_ns` of
    /// propagation; statistics exclude `[0, stats.warmup_ns)`; one time-series row every
    /// `stats.interval_ns` under the name `name`.
    pub fn new(
        cfg: &QdiscConfig,
        limit: QueueLimit,
        rate: BitsPerSec,
        delay_ns: u64,
        seed: u64,
        stats: StatsWindow,
        name: &str,
    ) -> Result<Self, aqm::ConfigError> {
        let StatsWindow {
            warmup_ns,
            interval_ns,
        } = stats;
        let qdisc = Qdisc::new(cfg, limit, LinkInfo::new(rate), seed)?;
        let (class_base0, nclasses) = (class_base(&qdisc), qdisc.num_classes());
        Ok(Bottleneck {
            qdisc,
            rate,
            delay_ns,
            tx: None,
            tx_start: 0,
            service: None,
            wait_until: None,
            service_base: (0, 0),
            pipe: VecDeque::new(),
            told_rate: rate.0,
            netem: None,
            netem_base: NetemCounters::default(),
            ecn: EcnCounts::default(),
            mon: Monitor {
                name: name.to_string(),
                warmup_ns,
                interval_ns: interval_ns.max(1),
                next_sample: interval_ns.max(1),
                in_window: warmup_ns == 0,
                base: QueueStats::default(),
                base_flow_area: 0,
                delay: LogHistogram::new(),
                class_base: class_base0,
                cake_base: Vec::new(),
                class_delay: (0..nclasses).map(|_| LogHistogram::new()).collect(),
                interval_delay_sum: 0,
                interval_delay_count: 0,
                last: [0; 4],
                tx_bytes: 0,
                tx_packets: 0,
                base_tx_packets: 0,
                busy_ns: 0,
                area_pkts: 0.0,
                area_bytes: 0.0,
                last_change: 0,
                ts: TimeSeries::default(),
                cts: ClassSeries::default(),
                class_last: vec![[0; 3]; nclasses],
                class_interval: vec![IntervalDelay::default(); nclasses],
            },
        })
    }

    /// Makes the link follow `service` from time 0 (before the first packet); `rate` stays
    /// the nominal rate the qdisc was told and the summary reports.
    pub fn set_service(&mut self, service: Service) {
        self.service = Some(Box::new(service));
    }

    /// On a link with a varying capacity: tells the qdisc the rate of the moment, as the
    /// simulator's `Link::tell_rate` does (`experiment::service::Service::aqm_rate`: a
    /// `rate_changes` rate, or a trace's capacity over its last whole window; the nominal rate
    /// before the first window; 0 is ignored by the qdisc, which keeps the last positive
    /// rate), so that the AQMs that read the link rate follow it (docs/traces.md). Called at
    /// arrivals, dequeues and AQM timers, as in the simulator; a fixed rate never calls it.
    fn tell_rate(&mut self, now: u64) {
        let Some(s) = self.service.as_deref() else {
            return;
        };
        let r = s.aqm_rate(now).unwrap_or(self.rate.0);
        if r != self.told_rate {
            self.told_rate = r;
            self.qdisc.set_link_rate(BitsPerSec(r));
        }
    }

    /// The rate the qdisc was last told, bit/s (the nominal rate on a fixed-rate link).
    pub fn told_rate(&self) -> u64 {
        self.told_rate
    }

    /// Puts `stage` between the transmitter and the propagation delay (before the first
    /// packet).
    pub fn set_netem(&mut self, stage: Netem<IpPacket>) {
        self.netem = Some(Box::new(stage));
    }

    /// The netem stage's counters (`None`: no netem).
    pub fn netem_counters(&self) -> Option<NetemCounters> {
        self.netem.as_deref().map(|n| n.ctr)
    }

    /// Moves what the netem stage releases at `t` into the propagation delay (a corrupted
    /// packet is dropped: the receiver would discard it).
    fn netem_drain(&mut self, t: u64) {
        if let Some(n) = self.netem.as_deref_mut() {
            while let Some((pkt, corrupted)) = n.dequeue(t) {
                if !corrupted {
                    self.pipe.push_back((t + self.delay_ns, pkt));
                }
            }
        }
    }

    /// The qdisc (read-only: counters, lengths).
    pub fn qdisc(&self) -> &Qdisc<IpPacket> {
        &self.qdisc
    }

    /// Brings the link up to time `now`: transmissions that ended, the qdisc's periodic laws,
    /// the warm-up boundary and sample instants, each at its own time, in time order.
    pub fn advance(&mut self, now: u64) {
        loop {
            let tx_end = self.tx.as_ref().map(|(e, _)| *e).or(self.wait_until);
            let timer = self.qdisc.poll_at().map(|t| t.0);
            let warm = (!self.mon.in_window).then_some(self.mon.warmup_ns);
            let sample = self.mon.next_sample;
            let netem = self.netem.as_deref().and_then(Netem::watchdog);
            let t = [tx_end, timer, warm, netem, Some(sample)]
                .into_iter()
                .flatten()
                .min()
                .expect("a sample is always pending");
            if t > now {
                return;
            }
            if Some(t) == warm {
                self.account(t);
                self.start_window(t);
            } else if Some(t) == tx_end {
                if self.tx.is_some() {
                    self.finish_tx(t);
                } else {
                    self.wait_until = None;
                }
                self.start_tx(t);
            } else if Some(t) == netem {
                if self.netem.as_deref_mut().is_some_and(|n| n.fire(t)) {
                    self.netem_drain(t);
                }
            } else if Some(t) == timer {
                self.tell_rate(t);
                self.qdisc.on_timer(Instant(t));
            } else {
                self.account(t);
                self.sample(t);
            }
        }
    }

    /// Offers a packet that arrived at `now` (call [`Bottleneck::advance`]`(now)` first).
    pub fn arrive(&mut self, now: u64, pkt: IpPacket) {
        self.account(now);
        let count = self.mon.in_window;
        if count {
            if pkt.ecn.is_capable() {
                self.ecn.ect_arrivals += 1;
            } else {
                self.ecn.not_ect_arrivals += 1;
            }
        }
        self.tell_rate(now);
        // Victims and refused arrivals are freed; the qdisc's counters keep the tally.
        let ecn = &mut self.ecn;
        let r = self.qdisc.enqueue(Instant(now), pkt, &mut |p, _r| {
            if count {
                ecn.drop(&p)
            }
        });
        if let (Enqueue::Dropped(p, _), true) = (r, count) {
            self.ecn.drop(&p);
        }
        if self.tx.is_none() && self.wait_until.is_none() {
            self.start_tx(now);
        }
    }

    /// The next packet whose propagation ended by `now`, with its scheduled release time.
    pub fn pop_due(&mut self, now: u64) -> Option<Delayed> {
        if self.pipe.front().is_some_and(|(t, _)| *t <= now) {
            self.pipe.pop_front()
        } else {
            None
        }
    }

    /// The earliest time something happens without a new arrival (a release, the end of a
    /// transmission, a periodic law, a sample).
    pub fn next_deadline(&self) -> u64 {
        [
            self.pipe.front().map(|(t, _)| *t),
            self.tx.as_ref().map(|(e, _)| *e),
            self.wait_until,
            self.netem.as_deref().and_then(Netem::watchdog),
            self.qdisc.poll_at().map(|t| t.0),
            (!self.mon.in_window).then_some(self.mon.warmup_ns),
            Some(self.mon.next_sample),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("a sample is always pending")
    }

    fn start_tx(&mut self, now: u64) {
        debug_assert!(self.tx.is_none());
        if let Some(s) = self.service.as_deref_mut() {
            if self.qdisc.len_pkts() == 0 {
                return;
            }
            match s.start_at(now) {
                Some(t) if t == now => {}
                // wait for the next opportunity (never, if the rate stays 0: u64::MAX)
                t => {
                    self.wait_until = Some(t.unwrap_or(u64::MAX));
                    return;
                }
            }
        }
        self.account(now);
        self.tell_rate(now);
        let (ecn, count) = (&mut self.ecn, self.mon.in_window);
        let Some(pkt) = self.qdisc.dequeue(Instant(now), &mut |p, _r| {
            if count {
                ecn.drop(&p)
            }
        }) else {
            // a shaping qdisc (CAKE's bandwidth) holding its packets: ask again at its time
            if self.qdisc.len_pkts() > 0 {
                self.wait_until = self.qdisc.ready_at().map(|t| t.0).filter(|&t| t > now);
            }
            return;
        };
        let sojourn = now.saturating_sub(pkt.enq.0);
        self.mon.interval_delay_sum += sojourn;
        self.mon.interval_delay_count += 1;
        let class = self.qdisc.last_class() as usize;
        if let Some(d) = self.mon.class_interval.get_mut(class) {
            d.record(sojourn);
        }
        if self.mon.in_window {
            self.mon.delay.record(sojourn);
            if let Some(h) = self.mon.class_delay.get_mut(class) {
                h.record(sojourn);
            }
        }
        let end = match self.service.as_deref_mut() {
            // never done (the rate drops to 0 for good): it stays in transmission
            Some(s) => s.serve(now, pkt.data.len() as u32).unwrap_or(u64::MAX),
            None => now + self.rate.tx_time(pkt.data.len() as u64).0,
        };
        self.tx_start = now;
        self.tx = Some((end, pkt));
    }

    fn finish_tx(&mut self, t: u64) {
        let (end, pkt) = self.tx.take().expect("a transmission is in progress");
        debug_assert_eq!(end, t);
        if self.mon.in_window {
            self.mon.busy_ns += end - self.tx_start.max(self.mon.warmup_ns);
        }
        self.mon.tx_bytes += pkt.data.len() as u64;
        self.mon.tx_packets += 1;
        match self.netem.as_deref_mut() {
            Some(n) => {
                n.enqueue(t, pkt);
                self.netem_drain(t);
            }
            None => self.pipe.push_back((end + self.delay_ns, pkt)),
        }
    }

    /// Adds the queue-length integral up to `t` (window only).
    fn account(&mut self, t: u64) {
        let m = &mut self.mon;
        if m.in_window && t > m.last_change {
            let dt = (t - m.last_change) as f64;
            m.area_pkts += self.qdisc.len_pkts() as f64 * dt;
            m.area_bytes += self.qdisc.len_bytes() as f64 * dt;
        }
        m.last_change = m.last_change.max(t);
    }

    fn start_window(&mut self, t: u64) {
        let m = &mut self.mon;
        m.in_window = true;
        m.base = self.qdisc.stats();
        m.class_base = class_base(&self.qdisc);
        m.cake_base = experiment::monitor::cake_tin_base(&self.qdisc);
        m.class_delay.iter_mut().for_each(LogHistogram::clear);
        m.base_tx_packets = m.tx_packets;
        m.base_flow_area = self.qdisc.flow_count(Instant(t)).map_or(0, |f| f.area);
        m.delay.clear();
        m.last_change = t;
        if let Some(s) = self.service.as_deref() {
            self.service_base = (s.work_at(t), s.capacity_at(t));
        }
        if let Some(n) = self.netem.as_deref() {
            self.netem_base = n.ctr;
        }
        // A transmission straddling the warm-up counts from the warm-up on (finish_tx).
    }

    fn sample(&mut self, t: u64) {
        let st = self.qdisc.stats();
        let m = &mut self.mon;
        let now = [st.received, st.dropped(), st.marked, m.tx_bytes];
        let dt = (t - (m.next_sample - m.interval_ns)) as f64 / 1e9;
        let ts = &mut m.ts;
        ts.time_s.push(t as f64 / 1e9);
        ts.link.push(m.name.clone());
        ts.queue_pkts.push(self.qdisc.len_pkts() as u64);
        ts.queue_bytes.push(self.qdisc.len_bytes());
        ts.queue_delay_ms_mean.push(if m.interval_delay_count == 0 {
            f64::NAN
        } else {
            m.interval_delay_sum as f64 / m.interval_delay_count as f64 / 1e6
        });
        ts.arrivals.push(now[0] - m.last[0]);
        ts.drops.push(now[1] - m.last[1]);
        ts.marks.push(now[2] - m.last[2]);
        ts.tx_bytes.push(now[3] - m.last[3]);
        ts.throughput_bps
            .push((now[3] - m.last[3]) as f64 * 8.0 / dt.max(1e-12));
        ts.active_flows
            .push(self.qdisc.active_flows().unwrap_or(0) as u64);
        let n = push_class_rows(
            &mut m.cts,
            &self.qdisc,
            &m.class_last,
            &m.class_interval,
            t as f64 / 1e9,
        );
        m.class_interval.fill(IntervalDelay::default());
        for ci in 0..n {
            m.cts.link.push(m.name.clone());
            let class = self.qdisc.class_name(ci).unwrap_or_default();
            m.cts.class.push(class.to_string());
            m.class_last[ci] = class_counters(&self.qdisc, ci);
        }
        m.last = now;
        m.interval_delay_sum = 0;
        m.interval_delay_count = 0;
        m.next_sample += m.interval_ns;
    }

    /// The summary over `[warmup, end]` (`end` > warm-up), results-contract shaped.
    pub fn summary(&mut self, end: u64, aqm_name: &str) -> LinkSummary {
        self.account(end);
        let m = &self.mon;
        let st = self.qdisc.stats();
        let b = m.base;
        let window = end.saturating_sub(m.warmup_ns).max(1) as f64;
        let mut busy = m.busy_ns;
        if let Some((e, _)) = &self.tx {
            busy += e.min(&end).saturating_sub(self.tx_start.max(m.warmup_ns));
        }
        let d = &m.delay;
        let ms = |ns: f64| ns / 1e6;
        let utilization = match self.service.as_deref() {
            Some(s) => {
                let (w0, c0) = self.service_base;
                let cap = s.capacity_at(end).saturating_sub(c0);
                if cap == 0 {
                    0.0
                } else {
                    (s.work_at(end).saturating_sub(w0) as f64 / cap as f64).min(1.0)
                }
            }
            None => (busy as f64 / window).min(1.0),
        };
        LinkSummary {
            aqm: aqm_name.to_string(),
            utilization,
            mean_queue_pkts: m.area_pkts / window,
            mean_queue_bytes: m.area_bytes / window,
            queue_delay_ms: DelayStats {
                mean: ms(d.mean()),
                p50: ms(d.quantile(0.5)),
                p95: ms(d.quantile(0.95)),
                p99: ms(d.quantile(0.99)),
            },
            queue_delay_hist: DelayHistogram::from_log(d),
            drops: st.dropped() - b.dropped(),
            marks: st.marked - b.marked,
            enqueued: st.enqueued - b.enqueued,
            aqm_activations: st.activations - b.activations,
            arrivals: st.received - b.received,
            lost: 0,
            tx_packets: m.tx_packets - m.base_tx_packets,
            rate_bps: self
                .service
                .as_deref()
                .and_then(|s| s.rate_at(end))
                .unwrap_or(self.rate.0) as f64,
            classes: class_summaries(&self.qdisc, &m.class_base, &m.class_delay),
            cake_tins: experiment::monitor::cake_tins(&self.qdisc, &m.cake_base),
            active_flows: self.qdisc.flow_count(Instant(end)).map(|f| ActiveFlows {
                mean: f.area.saturating_sub(m.base_flow_area) as f64 / window,
                max: f.peak,
            }),
            netem: self
                .netem
                .as_deref()
                .map(|n| NetemSummary::between(&self.netem_base, &n.ctr)),
        }
    }

    /// Arrivals and drops by ECN capability inside the statistics window.
    pub fn ecn_counts(&self) -> EcnCounts {
        self.ecn
    }

    /// The time series so far (one row per completed sample interval).
    pub fn timeseries(&self) -> &TimeSeries {
        &self.mon.ts
    }

    /// The per-class time series so far (rows at the instants of [`Bottleneck::timeseries`];
    /// empty for a FIFO).
    pub fn class_timeseries(&self) -> &ClassSeries {
        &self.mon.cts
    }

    /// Packets transmitted so far (whole run).
    pub fn tx_packets(&self) -> u64 {
        self.mon.tx_packets
    }
}

/// The reverse (ACK) direction: a constant delay, an unlimited FIFO, no rate limit.
#[derive(Default)]
pub struct DelayLine {
    delay_ns: u64,
    pipe: VecDeque<Delayed>,
}

impl DelayLine {
    /// A delay of `delay_ns`.
    pub fn new(delay_ns: u64) -> Self {
        DelayLine {
            delay_ns,
            pipe: VecDeque::new(),
        }
    }
    /// A packet that arrived at `now` leaves at `now + delay`.
    pub fn push(&mut self, now: u64, pkt: IpPacket) {
        self.pipe.push_back((now + self.delay_ns, pkt));
    }
    /// The next packet due by `now`, with its scheduled release time.
    pub fn pop_due(&mut self, now: u64) -> Option<Delayed> {
        if self.pipe.front().is_some_and(|(t, _)| *t <= now) {
            self.pipe.pop_front()
        } else {
            None
        }
    }
    /// The next release time, if any packet waits.
    pub fn next_deadline(&self) -> Option<u64> {
        self.pipe.front().map(|(t, _)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::AqmConfig;

    fn ect_packet(len: usize, sport: u16) -> IpPacket {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[1] = 0b10;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 200, 0, 1]);
        p[16..20].copy_from_slice(&[10, 200, 1, 1]);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        let c = crate::ipv4::header_checksum(&p).unwrap();
        p[10..12].copy_from_slice(&c.to_be_bytes());
        IpPacket::new(p, 0)
    }

    fn fifo(limit: u32, rate_mbps: u64, delay_ns: u64) -> Bottleneck {
        Bottleneck::new(
            &QdiscConfig::default_for("droptail").unwrap(),
            QueueLimit::Packets(limit),
            BitsPerSec::from_mbps(rate_mbps),
            delay_ns,
            1,
            StatsWindow {
                warmup_ns: 0,
                interval_ns: 10_000_000,
            },
            "bottleneck",
        )
        .unwrap()
    }

    /// A burst of 10 packets of 1500 B at 10 Mb/s leaves back to back: packet k is released
    /// at (k+1) x 1.2 ms + delay, exactly, however late the driver looks.
    #[test]
    fn serialisation_and_delay_are_exact_in_virtual_time() {
        let mut l = fifo(100, 10, 5_000_000);
        for i in 0..10 {
            l.arrive(0, ect_packet(1500, i));
        }
        // the driver wakes up only once, long after everything was due
        l.advance(1_000_000_000);
        let out: Vec<u64> = std::iter::from_fn(|| l.pop_due(1_000_000_000))
            .map(|(t, _)| t)
            .collect();
        let want: Vec<u64> = (1..=10).map(|k| k * 1_200_000 + 5_000_000).collect();
        assert_eq!(out, want);
        let s = l.summary(1_000_000_000, "droptail");
        assert_eq!(s.tx_packets, 10);
        // 12 ms busy in 1 s
        assert!((s.utilization - 0.012).abs() < 1e-12, "{}", s.utilization);
        // sojourns 0, 1.2, ..., 10.8 ms: mean 5.4 ms
        assert!((s.queue_delay_ms.mean - 5.4).abs() < 1e-9);
    }

    /// A varying capacity tells the qdisc the rate of the moment, as the simulator's link does
    /// (docs/traces.md, "What AQMs are told"): `rate_changes` steps exactly (10 -> 2 Mb/s at
    /// 50 ms; an outage at 80 ms leaves the qdisc at 2 Mb/s), a trace its last whole 100 ms
    /// window after the nominal rate in the first window (one opportunity per ms from 1 ms:
    /// 99 in [0, 100 ms), 11.88 Mb/s).
    /// Before, the emulator's qdisc kept the nominal rate throughout.
    #[test]
    fn a_varying_capacity_tells_the_qdisc_its_rate() {
        use experiment::service::{Capacity, RateSteps, RateTrace};
        use std::sync::Arc;
        let ms = 1_000_000;
        let mut l = fifo(100, 10, 0);
        let steps = RateSteps::new(10_000_000, &[(50 * ms, 2_000_000), (80 * ms, 0)]);
        l.set_service(Service::new(Capacity::Steps(Arc::new(steps))));
        let rate = |l: &Bottleneck| l.qdisc().link().rate.0;
        l.advance(10 * ms);
        l.arrive(10 * ms, ect_packet(100, 1));
        assert_eq!((l.told_rate(), rate(&l)), (10_000_000, 10_000_000));
        l.advance(60 * ms);
        l.arrive(60 * ms, ect_packet(100, 1));
        assert_eq!((l.told_rate(), rate(&l)), (2_000_000, 2_000_000));
        l.advance(90 * ms);
        l.arrive(90 * ms, ect_packet(100, 1));
        assert_eq!(
            (l.told_rate(), rate(&l)),
            (0, 2_000_000),
            "an outage is not told"
        );

        let mut l = fifo(100, 5, 0);
        let trace = Arc::new(RateTrace::from_times(vec![1]));
        l.set_service(Service::new(Capacity::Trace(trace.clone())));
        l.advance(50 * ms);
        l.arrive(50 * ms, ect_packet(100, 1));
        assert_eq!(rate(&l), 5_000_000, "the nominal rate in the first window");
        l.advance(150 * ms);
        l.arrive(150 * ms, ect_packet(100, 1));
        let sim = Service::new(Capacity::Trace(trace)).aqm_rate(150 * ms);
        assert_eq!((Some(rate(&l)), rate(&l)), (sim, 11_880_000));
    }

    /// CAKE shaping below the link (`bandwidth 20Mbit overhead 18 atm` on 100 Mb/s): the
    /// bottleneck waits for the qdisc's send time, so 1500-byte packets leave one per
    /// 1696 x 400 ns = 678.4 us (Linux `cake_advance_shaper`), not one per 120 us.
    #[test]
    fn a_shaping_qdisc_paces_the_link() {
        let mut cfg = QdiscConfig::default_for("cake").unwrap();
        for (k, v) in [
            ("bandwidth", 20e6),
            ("overhead", 18.0),
            ("atm", 1.0),
            ("diffserv", 0.0),
        ] {
            cfg.set_param(k, v).unwrap();
        }
        let mut l = Bottleneck::new(
            &cfg,
            QueueLimit::Packets(100),
            BitsPerSec::from_mbps(100),
            0,
            1,
            StatsWindow {
                warmup_ns: 0,
                interval_ns: 10_000_000,
            },
            "bottleneck",
        )
        .unwrap();
        for i in 0..5 {
            l.arrive(0, ect_packet(1500, i));
        }
        l.advance(1_000_000_000);
        let out: Vec<u64> = std::iter::from_fn(|| l.pop_due(1_000_000_000))
            .map(|(t, _)| t)
            .collect();
        let want: Vec<u64> = (0..5).map(|k| k * 678_400 + 120_000).collect();
        assert_eq!(out, want);
    }

    /// Drop-tail at its limit: 5 packets fit the queue beside the one in transmission.
    #[test]
    fn droptail_limit_drops_the_excess() {
        let mut l = fifo(5, 10, 0);
        for i in 0..10 {
            l.arrive(0, ect_packet(1000, i));
        }
        let s = l.summary(1, "droptail");
        assert_eq!(s.arrivals, 10);
        assert_eq!(s.drops, 4);
        assert_eq!(s.enqueued, 6);
        let e = l.ecn_counts();
        assert_eq!(
            (e.ect_arrivals, e.ect_drops, e.not_ect_arrivals),
            (10, 4, 0)
        );
    }

    /// CoDel with ECN marks (not drops) a standing queue of ECT packets, and the marked
    /// packets leave with CE and a valid header checksum.
    #[test]
    fn codel_marks_real_headers() {
        let cfg = AqmConfig::from_name("codel", &[("ecn".to_string(), 1.0)]).unwrap();
        let mut l = Bottleneck::new(
            &QdiscConfig::Fifo(cfg),
            QueueLimit::Packets(1000),
            BitsPerSec::from_mbps(1),
            0,
            1,
            StatsWindow {
                warmup_ns: 0,
                interval_ns: 10_000_000,
            },
            "bottleneck",
        )
        .unwrap();
        // 1 Mb/s drains 83 packets/s of 1500 B; offer 300 at once: sojourns reach seconds.
        for i in 0..300 {
            l.arrive(0, ect_packet(1500, i));
        }
        let end = 4_000_000_000;
        l.advance(end);
        let mut ce = 0;
        while let Some((_, p)) = l.pop_due(end) {
            if p.data[1] & 3 == 3 {
                ce += 1;
                let stored = u16::from_be_bytes([p.data[10], p.data[11]]);
                assert_eq!(Some(stored), crate::ipv4::header_checksum(&p.data));
            }
        }
        let s = l.summary(end, "codel");
        assert!(ce > 0 && s.marks == ce, "marks {} ce {ce}", s.marks);
        assert_eq!(s.drops, 0);
    }

    /// COBALT and FQ-COBALT with ECN, on the emulator's bottleneck: a standing queue of ECT
    /// packets is marked (CoDel's signal), not dropped; the marks leave with CE and a valid
    /// header checksum.
    #[test]
    fn cobalt_marks_real_headers() {
        for name in ["cobalt", "fq_cobalt"] {
            let params = [
                ("ecn".to_string(), 1.0),
                ("blue_threshold".to_string(), 0.0),
            ];
            let mut l = Bottleneck::new(
                &QdiscConfig::from_name(name, &params).unwrap(),
                QueueLimit::Packets(1000),
                BitsPerSec::from_mbps(1),
                0,
                1,
                StatsWindow {
                    warmup_ns: 0,
                    interval_ns: 10_000_000,
                },
                "bottleneck",
            )
            .unwrap();
            for i in 0..300 {
                l.arrive(0, ect_packet(1500, i));
            }
            let end = 4_000_000_000;
            l.advance(end);
            let mut ce = 0;
            while let Some((_, p)) = l.pop_due(end) {
                if p.data[1] & 3 == 3 {
                    ce += 1;
                    let stored = u16::from_be_bytes([p.data[10], p.data[11]]);
                    assert_eq!(Some(stored), crate::ipv4::header_checksum(&p.data));
                }
            }
            let s = l.summary(end, name);
            assert!(ce > 0 && s.marks == ce, "{name}: marks {} ce {ce}", s.marks);
            assert_eq!(s.drops, 0, "{name}");
        }
    }

    /// DRR classes `a` (weight 1) and `b` (weight 2), both backlogged from t = 0 with 300
    /// packets of 1500 B at 10 Mb/s (1.2 ms each), window [0.1 s, 0.4 s]: the per-class
    /// summary (the simulator's `class_summaries`) counts only the window: 250 packets sent,
    /// split 1:2 to within one DRR round (3 packets: |ratio - 2| < 0.05), nothing enqueued
    /// or dropped inside it, and each class's sojourn times are those of its own packets.
    #[test]
    fn drr_classes_are_reported_per_class() {
        use aqm::classes::{ClassConfig, ClassList};
        let class = |name: &str, weight| ClassConfig {
            name: name.into(),
            weight,
            aqm: AqmConfig::DropTail(Default::default()),
        };
        let cfg = QdiscConfig::with_classes(
            "drr",
            ClassList {
                classes: vec![class("a", 1.0), class("b", 2.0)],
            },
        )
        .unwrap();
        let stats = StatsWindow {
            warmup_ns: 100_000_000,
            interval_ns: 10_000_000,
        };
        let rate = BitsPerSec::from_mbps(10);
        let mut l = Bottleneck::new(
            &cfg,
            QueueLimit::Packets(1000),
            rate,
            0,
            1,
            stats,
            "bottleneck",
        )
        .unwrap();
        for i in 0..600u16 {
            let mut p = ect_packet(1500, i);
            p.class = (i % 2) as u8;
            l.arrive(0, p);
        }
        let end = 400_000_000;
        l.advance(end);
        let s = l.summary(end, "drr");
        assert_eq!(s.classes.keys().collect::<Vec<_>>(), ["a", "b"]);
        let (a, b) = (&s.classes["a"], &s.classes["b"]);
        assert_eq!(a.tx_packets + b.tx_packets, 250, "{a:?} {b:?}");
        assert_eq!(a.tx_bytes, 1500 * a.tx_packets);
        let ratio = b.tx_bytes as f64 / a.tx_bytes as f64;
        assert!((ratio - 2.0).abs() < 0.05, "ratio {ratio}");
        assert_eq!((a.enqueued, b.enqueued, a.drops + b.drops), (0, 0, 0));
        // each class's sojourn times are its own packets' (all queued at 0, sent in the window)
        let counts: Vec<u64> = l.mon.class_delay.iter().map(LogHistogram::count).collect();
        assert_eq!(counts, [a.tx_packets, b.tx_packets]);
        for c in [a, b] {
            assert!(
                c.queue_delay_ms.p50 > 100.0 && c.queue_delay_ms.p99 <= 400.0,
                "{c:?}"
            );
        }
    }

    #[test]
    fn delay_line_is_a_constant_delay() {
        let mut d = DelayLine::new(7);
        d.push(1, ect_packet(40, 1));
        d.push(3, ect_packet(40, 2));
        assert_eq!(d.next_deadline(), Some(8));
        assert!(d.pop_due(7).is_none());
        assert_eq!(d.pop_due(10).map(|x| x.0), Some(8));
        assert_eq!(d.pop_due(10).map(|x| x.0), Some(10));
        assert!(d.pop_due(100).is_none());
    }
}
