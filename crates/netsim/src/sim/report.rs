//! Reporting: time-series samples and the summary and results over the measurement window.

use std::collections::BTreeMap;

use aqm::Instant;

use super::{LinkSnap, Simulation};
use crate::engine::ns_to_secs;
use crate::flow_report::{flow_reports, FlowRow, MonitoredLink};
use crate::link::Link;
use crate::traffic::Endpoint;
use experiment::monitor::{class_counters, class_summaries, push_class_rows, IntervalDelay};
use experiment::results::{
    jain, ActiveFlows, ClassSeries, DelayHistogram, DelayStats, Fairness, LinkSummary, PingSeries,
    SimResults, Summary, TimeSeries, JAIN_SCOPE,
};

impl Simulation {
    pub(super) fn sample(&mut self) {
        let t = ns_to_secs(self.now);
        let dt = ns_to_secs(self.sample_interval);
        for &m in &self.monitored {
            let link = &mut self.links[m as usize];
            // Link ids here; `results()` turns them into names.
            if push_sample(&mut self.ts, &mut self.ts_link, link, m, t, dt) {
                push_class_samples(&mut self.cts, &mut self.cts_ids, link, m, t);
                let c = link.tally();
                let (mon, queue) = link.mon_and_queue();
                let mon = mon.expect("sampled");
                mon.last = [c.arrivals, c.queue_drops(), c.marks, c.tx_bytes];
                for (ci, last) in mon.class_last.iter_mut().enumerate() {
                    *last = class_counters(queue, ci);
                }
                mon.interval_delay_count = 0;
                mon.interval_delay_sum = 0;
                mon.class_interval.fill(IntervalDelay::default());
            }
        }
    }

    pub(super) fn cwnd_sample(&mut self) {
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

    /// Post-warm-up summary at the current time.
    pub fn summary(&self) -> Summary {
        let now = self.now;
        let measured = now.saturating_sub(self.warmup);
        let mut links = BTreeMap::new();
        for (k, &m) in self.monitored.iter().enumerate() {
            let l = &self.links[m as usize];
            let base = self.replaced.get(&m).copied().unwrap_or_default();
            let LinkSnap {
                ctr: snap,
                activations: act0,
                area: area0,
                flow_area: flow_area0,
                work: work0,
                cap: cap0,
                netem: netem0,
            } = self.link_snap.get(k).copied().unwrap_or_default();
            let c = self.link_counters(m);
            let area = l.area_at(now);
            let hist = l.mon().map(|m| &m.delay);
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
            let acts = l.queue_stats().activations;
            let classes = class_summaries(
                &l.queue,
                self.class_snap.get(k).map_or(&[][..], |c| &c[..]),
                l.mon().map_or(&[][..], |m| &m.classes[..]),
            );
            let (fbase, fpeak) = (base.flow_area, base.flow_peak);
            let active_flows = l.queue.flow_count(Instant(now)).map(|f| ActiveFlows {
                mean: if measured > 0 {
                    (fbase + f.area).saturating_sub(flow_area0) as f64 / measured as f64
                } else {
                    f.active as f64
                },
                max: f.peak.max(fpeak),
            });
            links.insert(
                self.link_names.get(m).to_string(),
                LinkSummary {
                    aqm: l.queue.aqm_name().to_string(),
                    // Window-exact: the integer numerator is at most the
                    // denominator (the offered capacity, ∫ rate dt over the window:
                    // rate x measured for a fixed rate), so the quotient is in [0, 1]
                    // (a link following a trace or rate changes: the service's capacity
                    // and work; 0 if it offered none in the window).
                    utilization: if measured > 0 && l.capacity_at(now) > cap0 {
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
                    rate_bps: l.rate_at(now) as f64,
                    classes,
                    active_flows,
                    cake_tins: experiment::monitor::cake_tins(
                        &l.queue,
                        self.cake_snap.get(k).map_or(&[][..], |c| &c[..]),
                    ),
                    netem: l
                        .netem_counters()
                        .map(|c| experiment::results::NetemSummary::between(&netem0, &c)),
                },
            );
        }
        let monitored = self.monitors();
        let n_static = self.pool.n_static as usize;
        let rows = self.flows[..n_static].iter().map(FlowRow::Live).chain(
            self.pool.records.iter().enumerate().map(|(k, r)| {
                if r.finished() {
                    FlowRow::Finished((n_static + k) as u32, r)
                } else {
                    FlowRow::Live(&self.flows[r.slot as usize])
                }
            }),
        );
        let (flows, groups, long_goodputs) = flow_reports(
            rows,
            &self.pool.delays,
            &self.cfg.flows,
            &monitored,
            |f| self.flow_link_ids(f),
            |l| self.link_names.get(l),
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
            fairness: Fairness {
                jain: jain(&long_goodputs),
                flows: long_goodputs.len(),
                scope: JAIN_SCOPE.to_string(),
            },
            fct_slowdown: self.fct_slowdown(),
            flows,
            groups,
        }
    }

    /// The monitored links as the report sees them.
    pub(super) fn monitors(&self) -> Vec<MonitoredLink<'_>> {
        self.monitored
            .iter()
            .filter_map(|&m| {
                let l = &self.links[m as usize];
                l.mon().map(|mon| MonitoredLink {
                    name: std::sync::Arc::from(self.link_names.get(m)),
                    id: m,
                    mon,
                })
            })
            .collect()
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
            cts.link.push(self.link_names.get(l).to_string());
            cts.class.push(
                q.queue
                    .class_name(c as usize)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        timeseries.link = ts_link
            .iter()
            .map(|&l| self.link_names.get(l).to_string())
            .collect();
        SimResults {
            summary: self.summary(),
            timeseries,
            cwnd: self.cwnd.clone(),
            class_timeseries: cts,
            pings: self.pings(),
        }
    }

    /// Every probe of the ping probers so far.
    pub fn pings(&self) -> PingSeries {
        let mut p = PingSeries::default();
        for f in &self.flows {
            let Some(log) = f.ping.as_deref() else {
                continue;
            };
            for (i, (&t, &r)) in log.sent.iter().zip(&log.rtt).enumerate() {
                p.flow.push(f.id);
                p.seq.push(i as u32);
                p.time_s.push(ns_to_secs(t));
                p.rtt_ms.push(if r == crate::ping::NO_ECHO {
                    f64::NAN
                } else {
                    r as f64 / 1e6
                });
            }
        }
        p
    }
}

/// Appends the time-series row of monitored link `m` for the interval of
/// length `dt` (s) ending at `t` (s); false if the link has no monitor.
pub(super) fn push_sample(
    ts: &mut TimeSeries,
    ts_link: &mut Vec<u32>,
    link: &Link,
    m: u32,
    t: f64,
    dt: f64,
) -> bool {
    let Some(mon) = link.mon() else {
        return false;
    };
    let c = link.tally();
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
pub(super) fn push_class_samples(
    cs: &mut ClassSeries,
    ids: &mut Vec<(u32, u8)>,
    link: &Link,
    m: u32,
    t: f64,
) {
    let Some(mon) = link.mon() else {
        return;
    };
    let n = push_class_rows(cs, &link.queue, &mon.class_last, &mon.class_interval, t);
    ids.extend((0..n).map(|ci| (m, ci as u8)));
}
