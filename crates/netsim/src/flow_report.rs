//! Per-flow and per-group statistics of a run's measurement window (the `flows` and `groups`
//! of the summary). Definitions (also in `docs/design.md` and `SCHEMA.md`, "Measurement
//! definitions"):
//!
//! - a flow's window is `[t0, t1] = [max(start, warmup), min(now, stop, completion)]`;
//! - goodput is the payload its receiving application got in order during the window,
//!   `delivered(t1) - delivered(t0)`, over `t1 - t0` ([`Flow::goodput_bytes`]);
//! - RTT and one-way delay are the simulator's measurements of every ACK and data packet
//!   that arrived in the window ([`crate::traffic::FlowDelays`]);
//! - queueing delay is the sojourn of each of the flow's packets (data and ACKs) that left
//!   a monitored link's queue after the warm-up, per link.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::{ns_to_secs, Ns};
use crate::flow_pool::ShortRecord;
use crate::traffic::{Flow, FlowKind};
use experiment::config::FlowGroup;
use experiment::monitor::{FlowHistogram, LinkMonitor};
use experiment::results::{jain, DelayStats, FlowSummary, GroupSummary, LinkDelays};

/// A monitored link as the report sees it: its name (shared by every flow summary that
/// names it), its monitor, and its id (to find it on a flow's path).
pub(crate) struct MonitoredLink<'a> {
    pub name: Arc<str>,
    pub id: u32,
    pub mon: &'a LinkMonitor,
}

/// The window `[t0, t1]` of flow `f` at `now` after a warm-up ending at `warmup`, and
/// whether it is open (the flow started and `t1 > t0`).
fn window(f: &Flow, warmup: Ns, now: Ns) -> (Ns, Ns, bool) {
    let t0 = f.start.max(warmup);
    let mut t1 = now;
    if let Some(d) = f.done_at() {
        t1 = t1.min(d);
    }
    if let Some(s) = f.stop {
        t1 = t1.min(s);
    }
    (t0, t1, t1 > t0 && f.started)
}

/// Long-lived: counts in Jain's index (a TCP flow without a size, or a UDP source; not a
/// ping prober).
fn long_lived(f: &Flow) -> bool {
    f.size.is_none() && !matches!(f.kind, FlowKind::ShortTcp | FlowKind::Ping)
}

/// A flow as the report sees it: in the flow table (a static flow or a running short flow),
/// or a short flow that finished (its id and record).
pub(crate) enum FlowRow<'a> {
    Live(&'a Flow),
    Finished(u32, &'a ShortRecord),
}

/// The summaries of every flow, of every group, and the goodputs of the long-lived TCP flows
/// active in their window (the global Jain index's input). `rows` gives the flows in id order;
/// `base` per group the delays of its finished short flows ([`GroupAcc::add_delays`]);
/// `path(flow)` the ids of the links the flow's data crosses, in order; `link_name` a link's
/// name by id.
#[allow(clippy::too_many_arguments)]
pub(crate) fn flow_reports<'a, 'n>(
    rows: impl Iterator<Item = FlowRow<'a>>,
    base: &[GroupAcc],
    groups: &[FlowGroup],
    monitored: &[MonitoredLink<'_>],
    path: impl Fn(u32) -> Vec<u32>,
    link_name: impl Fn(u32) -> &'n str + Copy,
    warmup: Ns,
    now: Ns,
) -> (Vec<FlowSummary>, Vec<GroupSummary>, Vec<f64>) {
    let mut out = Vec::with_capacity(rows.size_hint().0);
    let mut tcp_goodputs = Vec::new();
    let mut acc: Vec<GroupAcc> = groups
        .iter()
        .enumerate()
        .map(|(i, _)| base.get(i).cloned().unwrap_or_default())
        .collect();
    for row in rows {
        let f = match row {
            FlowRow::Live(f) => f,
            FlowRow::Finished(id, r) => {
                let g = groups.get(r.group as usize);
                let s = r.summary(
                    id,
                    (
                        FlowKind::ShortTcp.name(),
                        g.and_then(group_cc),
                        g.map_or("forward", |g| g.endpoints().direction.name()),
                    ),
                    link_name,
                    warmup,
                );
                if let Some(a) = acc.get_mut(r.group as usize) {
                    a.add_counts(
                        s.retransmits,
                        s.timeouts,
                        s.goodput_bps,
                        s.window_s > 0.0,
                        false,
                    );
                }
                out.push(s);
                continue;
            }
        };
        let (s, goodput, active) = flow_summary(f, groups, monitored, &path(f.id), warmup, now);
        if f.kind == FlowKind::Tcp && f.size.is_none() && active {
            tcp_goodputs.push(goodput);
        }
        if let Some(a) = acc.get_mut(f.group as usize) {
            a.add(f, goodput, active, monitored);
        }
        out.push(s);
    }
    let groups = groups
        .iter()
        .zip(acc)
        .enumerate()
        .map(|(i, (g, a))| a.finish(i, g))
        .collect();
    (out, groups, tcp_goodputs)
}

/// The congestion control a group's flows report.
fn group_cc(g: &FlowGroup) -> Option<&'static str> {
    match g {
        FlowGroup::Tcp(t) => Some(t.cc.name()),
        FlowGroup::ShortTcp(s) => Some(s.cc.name()),
        _ => None,
    }
}

/// Flow `f`'s summary row at `now`, its goodput and whether its window is open; `route` the
/// ids of the links its data crosses, in order.
pub(crate) fn flow_summary(
    f: &Flow,
    groups: &[FlowGroup],
    monitored: &[MonitoredLink<'_>],
    route: &[u32],
    warmup: Ns,
    now: Ns,
) -> (FlowSummary, f64, bool) {
    {
        let cur = f.snapshot();
        let w = f.warm;
        let (t0, t1, active) = window(f, warmup, now);
        let goodput = if active {
            f.goodput_bytes() as f64 * 8.0 / ns_to_secs(t1 - t0)
        } else {
            0.0
        };
        // queueing delay per monitored link the flow's packets left, in the order of its path;
        // the flat columns describe its bottleneck queue
        let mut by_link: Vec<(Arc<str>, DelayStats)> = Vec::new();
        let mut first: Option<(&Arc<str>, DelayStats)> = None;
        for id in route.iter().copied() {
            let Some(m) = monitored.iter().find(|m| m.id == id) else {
                continue;
            };
            if let Some(st) = m.mon.flow_delay(f.id).and_then(FlowHistogram::stats_ms) {
                by_link.push((m.name.clone(), st));
                // the flow's bottleneck queue: the largest mean, the first on the path on ties
                if first.is_none_or(|(_, b)| st.mean > b.mean) {
                    first = Some((&m.name, st));
                }
            }
        }
        // ACKs cross the reverse links: monitored links off the data path that saw the flow
        for m in monitored {
            if !by_link.iter().any(|(n, _)| *n == m.name) {
                if let Some(st) = m.mon.flow_delay(f.id).and_then(FlowHistogram::stats_ms) {
                    by_link.push((m.name.clone(), st));
                }
            }
        }
        let rtt = f.delays.rtt.stats_ms();
        let owd = f.delays.owd.stats_ms();
        let s = FlowSummary {
            id: f.id,
            group: f.group,
            kind: Cow::Borrowed(f.kind.name()),
            cc: f.cc.map(|c| Cow::Borrowed(c.name())),
            direction: Cow::Borrowed(
                groups
                    .get(f.group as usize)
                    .map_or("forward", |g| g.endpoints().direction.name()),
            ),
            start_s: ns_to_secs(f.start),
            window_s: if active { ns_to_secs(t1 - t0) } else { 0.0 },
            goodput_bps: goodput,
            bytes_in_window: f.goodput_bytes(),
            rtt_ms: rtt,
            rtt_samples: f.delays.rtt.count(),
            owd_ms: owd,
            queue_delay_link: first.map(|(n, _)| n.clone()),
            queue_delay_ms: first.map(|(_, s)| s),
            queue_delay_by_link: LinkDelays::from_entries(by_link),
            retransmits: cur.retransmits - w.retransmits,
            timeouts: cur.timeouts - w.timeouts,
            fct_s: f.done_at().map(|d| ns_to_secs(d - f.start)),
            size_bytes: f.size,
            bytes_delivered: cur.delivered,
        };
        (s, goodput, active)
    }
}

/// A group's flows gathered for its summary.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupAcc {
    flows: usize,
    goodputs: Vec<f64>,
    long_goodputs: Vec<f64>,
    retransmits: u64,
    timeouts: u64,
    rtt: FlowHistogram,
    owd: FlowHistogram,
    queue: BTreeMap<String, FlowHistogram>,
}

impl GroupAcc {
    fn add(&mut self, f: &Flow, goodput: f64, active: bool, monitored: &[MonitoredLink<'_>]) {
        let (cur, w) = (f.snapshot(), f.warm);
        self.add_counts(
            cur.retransmits - w.retransmits,
            cur.timeouts - w.timeouts,
            goodput,
            active,
            long_lived(f),
        );
        self.add_delays(f, monitored);
    }

    /// Counts one flow: its retransmits and timeouts after the warm-up, its goodput if its
    /// window is open, in Jain's index if long-lived.
    fn add_counts(
        &mut self,
        retransmits: u64,
        timeouts: u64,
        goodput: f64,
        active: bool,
        long: bool,
    ) {
        self.flows += 1;
        self.retransmits += retransmits;
        self.timeouts += timeouts;
        if active {
            self.goodputs.push(goodput);
            if long {
                self.long_goodputs.push(goodput);
            }
        }
    }

    /// Merges flow `f`'s delay histograms (RTT, one-way, queueing per monitored link).
    pub(crate) fn add_delays(&mut self, f: &Flow, monitored: &[MonitoredLink<'_>]) {
        self.rtt.merge(&f.delays.rtt);
        self.owd.merge(&f.delays.owd);
        for m in monitored {
            if let Some(h) = m.mon.flow_delay(f.id) {
                match self.queue.get_mut(&*m.name) {
                    Some(q) => q.merge(h),
                    None => {
                        self.queue.insert(m.name.to_string(), h.clone());
                    }
                }
            }
        }
    }

    fn finish(self, i: usize, g: &FlowGroup) -> GroupSummary {
        let total: f64 = self.goodputs.iter().sum();
        GroupSummary {
            group: i as u32,
            name: g.display_name(i),
            kind: g.kind().to_string(),
            cc: group_cc(g).map(str::to_string),
            class: g.class().map(str::to_string),
            direction: g.endpoints().direction.name().to_string(),
            flows: self.flows,
            active_flows: self.goodputs.len(),
            goodput_bps: total,
            goodput_bps_mean: if self.goodputs.is_empty() {
                0.0
            } else {
                total / self.goodputs.len() as f64
            },
            jain: jain(&self.long_goodputs),
            jain_flows: self.long_goodputs.len(),
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            rtt_ms: self.rtt.stats_ms(),
            owd_ms: self.owd.stats_ms(),
            queue_delay_ms: self
                .queue
                .iter()
                .filter_map(|(k, h)| h.stats_ms().map(|s| (k.clone(), s)))
                .collect(),
        }
    }
}
