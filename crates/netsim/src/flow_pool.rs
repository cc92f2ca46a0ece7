//! The pool of short-flow slots: a finished `tcp_short` flow gives its slot in the flow table
//! back, and the next arrival reuses it, so that the flow table holds as many entries as the
//! most short flows ever running at once, not as many as ever started.
//!
//! **Ids and slots.** A flow keeps the id it has always had (static flows `0 .. n_static` in
//! group order, then short flows as they arrive); packets and timer events carry that id,
//! and ids are never reused, so the id is its own generation. A completed flow keeps its
//! slot while anything of it can still happen: while a packet of it is in the network (a
//! spurious retransmission still queued, the ACK it draws; [`crate::traffic::Flow::in_net`]
//! counts them: sent, less those that reached their endpoint or that a link dropped or
//! lost, plus netem's copies) or one of its timers is armed. Then it gives the slot back:
//! nothing can reach it any more, so it does what it would have done in a run without the
//! pool, nothing, whatever the path's queues. (Its pending timer events, whose deadlines it
//! had cleared, find its record marked finished ([`NO_SLOT`]) and do nothing, as they would
//! have done.) A static flow's slot is its id; a short flow's
//! slot is in its [`ShortRecord`], found by indexing the records with `id - n_static` (no
//! hash, no search). The packet is unchanged (48 bytes).
//!
//! **What a finished flow leaves.** Its [`ShortRecord`] (one per short flow that arrived,
//! in id order, 224 bytes) keeps what its row of the summary needs: the
//! row is computed once, when the flow completes, by the same code as a running flow's
//! ([`crate::flow_report::flow_summary`]), and stored without its strings (which the group
//! gives back) and with its delay statistics as numbers, so the report gives the row it
//! would have given. Its delay histograms (RTT, one-way delay, queueing delay per monitored
//! link) are merged into its group's at that moment (integer counts: the group's statistics
//! are exact), and the monitors forget its per-flow histograms.

use std::borrow::Cow;
use std::sync::Arc;

use experiment::results::{DelayStats, FlowSummary, LinkDelays};

use crate::engine::Ns;

/// [`ShortRecord::slot`] of a flow that finished.
pub const NO_SLOT: u32 = u32::MAX;

/// One short flow that arrived: where it runs, and once finished what its summary row needs.
#[derive(Clone, Debug)]
pub struct ShortRecord {
    /// Its slot in the flow table while it runs; [`NO_SLOT`] once finished.
    pub slot: u32,
    /// Flow group.
    pub group: u32,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Arrival (start) time, ns.
    pub start: Ns,
    /// Size, bytes.
    pub size: u64,
    /// Completion time (last byte acknowledged), ns; 0 before.
    pub done: Ns,
    /// `bytes_in_window` of its summary row.
    pub bytes_in_window: u64,
    /// `bytes_delivered` of its summary row.
    pub bytes_delivered: u64,
    /// Retransmitted segments and timeouts after the warm-up (its row's), and over its
    /// whole life (its `flow_status`).
    pub retransmits: [u32; 2],
    /// Timeouts: after the warm-up, and over its whole life.
    pub timeouts: [u32; 2],
    /// ECN-triggered window reductions over its whole life (its `flow_status`).
    pub ecn_reductions: u32,
    /// `rtt_samples` of its row.
    pub rtt_samples: u32,
    /// Its sender's final state (its `flow_status`): congestion window and slow-start
    /// threshold (segments), payload bytes acknowledged, smoothed RTT and smallest interval
    /// between two window reductions (ns, `u64::MAX`: none).
    pub cwnd: f64,
    /// Slow-start threshold.
    pub ssthresh: f64,
    /// Payload bytes acknowledged.
    pub bytes_acked: u64,
    /// Smoothed RTT, ns (`u64::MAX`: none).
    pub srtt: u64,
    /// Smallest interval between two window reductions, ns (`u64::MAX`: none).
    pub min_reduction_gap: u64,
    /// RTT statistics of its row (ms).
    pub rtt: Option<DelayStats>,
    /// One-way-delay statistics of its row (ms).
    pub owd: Option<DelayStats>,
    /// Queueing delay per monitored link its packets left after the warm-up (link id,
    /// statistics in ms), ordered by link name; the first entry is its bottleneck queue
    /// (`queue_delay_link`) when `bottleneck_first` is set.
    pub queue: Box<[(u32, DelayStats)]>,
    /// The first entry of `queue` is `queue_delay_link` (else it has none).
    pub bottleneck_first: bool,
}

impl ShortRecord {
    /// A flow arriving at `start` into slot `slot`.
    pub fn new(slot: u32, group: u32, src: u32, dst: u32, start: Ns, size: u64) -> Self {
        ShortRecord {
            slot,
            group,
            src,
            dst,
            start,
            size,
            done: 0,
            bytes_in_window: 0,
            bytes_delivered: 0,
            retransmits: [0; 2],
            timeouts: [0; 2],
            ecn_reductions: 0,
            rtt_samples: 0,
            cwnd: 0.0,
            ssthresh: 0.0,
            bytes_acked: 0,
            srtt: u64::MAX,
            min_reduction_gap: u64::MAX,
            rtt: None,
            owd: None,
            queue: Box::new([]),
            bottleneck_first: false,
        }
    }

    /// True once the flow finished (its slot is back in the pool).
    #[inline]
    pub fn finished(&self) -> bool {
        self.slot == NO_SLOT
    }

    /// Keeps what summary row `s` says (computed when the flow completed at `done`);
    /// `link_id` turns a monitored link's name into its id.
    pub fn finish(&mut self, s: &FlowSummary, done: Ns, link_id: impl Fn(&str) -> u32) {
        self.slot = NO_SLOT;
        self.done = done;
        self.bytes_in_window = s.bytes_in_window;
        self.bytes_delivered = s.bytes_delivered;
        self.retransmits[0] = sat32(s.retransmits);
        self.timeouts[0] = sat32(s.timeouts);
        self.rtt_samples = sat32(s.rtt_samples);
        self.rtt = s.rtt_ms;
        self.owd = s.owd_ms;
        let first = s.queue_delay_link.as_deref();
        let mut q: Vec<(u32, DelayStats)> = first
            .and_then(|n| Some((link_id(n), *s.queue_delay_by_link.get(n)?)))
            .into_iter()
            .collect();
        self.bottleneck_first = !q.is_empty();
        q.extend(
            s.queue_delay_by_link
                .iter()
                .filter(|(n, _)| Some(*n) != first)
                .map(|(n, st)| (link_id(n), *st)),
        );
        self.queue = q.into_boxed_slice();
    }

    /// Its summary row again (a finished flow): `id` its id, `kind`, `cc` and `direction`
    /// its group's, `link_name` a link's name by id, `warmup` the end of the warm-up.
    pub fn summary<'a>(
        &self,
        id: u32,
        (kind, cc, direction): (&'static str, Option<&'static str>, &'static str),
        link_name: impl Fn(u32) -> &'a str,
        warmup: Ns,
    ) -> FlowSummary {
        let (window_s, goodput_bps) = self.window(warmup);
        let first = self.bottleneck_first.then(|| self.queue[0]);
        FlowSummary {
            id,
            group: self.group,
            kind: Cow::Borrowed(kind),
            cc: cc.map(Cow::Borrowed),
            direction: Cow::Borrowed(direction),
            start_s: crate::engine::ns_to_secs(self.start),
            window_s,
            goodput_bps,
            bytes_in_window: self.bytes_in_window,
            rtt_ms: self.rtt,
            rtt_samples: self.rtt_samples as u64,
            owd_ms: self.owd,
            queue_delay_link: first.map(|(l, _)| Arc::from(link_name(l))),
            queue_delay_ms: first.map(|(_, s)| s),
            queue_delay_by_link: LinkDelays::from_entries(
                self.queue
                    .iter()
                    .map(|&(l, s)| (Arc::from(link_name(l)), s))
                    .collect(),
            ),
            retransmits: self.retransmits[0] as u64,
            timeouts: self.timeouts[0] as u64,
            fct_s: Some(crate::engine::ns_to_secs(self.done - self.start)),
            size_bytes: Some(self.size),
            bytes_delivered: self.bytes_delivered,
        }
    }

    /// `(window_s, goodput_bps)` of a finished flow: its window `[max(start, warmup), done]`
    /// (as `flow_report`'s window at any time after its completion).
    pub fn window(&self, warmup: Ns) -> (f64, f64) {
        let (t0, t1) = (self.start.max(warmup), self.done);
        if t1 > t0 {
            let w = crate::engine::ns_to_secs(t1 - t0);
            (w, self.bytes_in_window as f64 * 8.0 / w)
        } else {
            (0.0, 0.0)
        }
    }
}

fn sat32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// The short flows of a run: their records in id order and the free slots.
#[derive(Clone, Debug, Default)]
pub struct FlowPool {
    /// Static flows (ids and slots `0 .. n_static`).
    pub n_static: u32,
    /// One record per short flow that arrived; flow `n_static + k` is record `k`.
    pub records: Vec<ShortRecord>,
    /// Free slots of the flow table (last freed first).
    pub free: Vec<u32>,
    /// Short flows holding a slot now (running, or completed with packets still in the
    /// network).
    pub live: u32,
    /// Most short flows holding a slot at once.
    pub peak: u32,
    /// Finished flows keep their slots (no pooling: the reference run of the pool's tests).
    pub keep: bool,
    /// Short flows finished so far.
    pub finished: u64,
    /// Longest time a completed flow kept its slot (packets of it still in the network), ns.
    pub longest_hold: Ns,
    /// Per flow group, the delay histograms of its finished short flows.
    pub(crate) delays: Vec<crate::flow_report::GroupAcc>,
}

impl FlowPool {
    /// The slot of pooled flow `id` (`id >= n_static`), `None` once it finished (or for an id
    /// never given).
    #[inline]
    pub fn slot_of(&self, id: u32) -> Option<usize> {
        let r = self.records.get(id.wrapping_sub(self.n_static) as usize)?;
        (r.slot != NO_SLOT).then_some(r.slot as usize)
    }

    /// The record of short flow `id`, if it is one.
    pub fn record(&self, id: u32) -> Option<&ShortRecord> {
        self.records.get(id.checked_sub(self.n_static)? as usize)
    }

    /// The id the next short flow gets (`None` once ids run out: 2^32 - 1 flows).
    pub fn next_id(&self) -> Option<u32> {
        u32::try_from(self.n_static as u64 + self.records.len() as u64)
            .ok()
            .filter(|&i| i != u32::MAX)
    }

    /// Flows so far (static and short).
    pub fn num_flows(&self) -> usize {
        self.n_static as usize + self.records.len()
    }

    /// A free slot, if any (the caller appends a new one otherwise).
    pub fn take_free(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// Counts a new running flow.
    pub fn started(&mut self) {
        self.live += 1;
        self.peak = self.peak.max(self.live);
    }

    /// Flow `id` in slot `slot` finished: the slot returns to the pool.
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
        self.live -= 1;
        self.finished += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a finished short flow costs (`docs/design.md`, "Memory per flow", says 224).
    #[test]
    fn record_stays_small() {
        assert_eq!(std::mem::size_of::<ShortRecord>(), 224);
    }

    #[test]
    fn ids_map_to_slots_until_finished() {
        let mut p = FlowPool {
            n_static: 3,
            ..Default::default()
        };
        assert_eq!(p.next_id(), Some(3));
        p.records.push(ShortRecord::new(7, 0, 0, 1, 10, 100));
        p.started();
        assert_eq!(p.slot_of(3), Some(7));
        assert_eq!(p.slot_of(4), None, "an id never given");
        assert_eq!(p.slot_of(2), None, "a static id is not the pool's");
        p.records[0].slot = NO_SLOT;
        p.release(7);
        assert_eq!(p.slot_of(3), None, "a finished flow's id reaches nothing");
        assert_eq!(p.take_free(), Some(7));
        assert_eq!((p.live, p.peak, p.finished), (0, 1, 1));
    }
}
