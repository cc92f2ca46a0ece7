//! Short flows in the pool (`crate::flow_pool`): a slot for each arrival, the record of each
//! finished flow, its slot given back.

use super::Simulation;
use crate::engine::{ns_to_secs, Gone};
use crate::flow_pool::ShortRecord;
use crate::flow_report::flow_summary;
use crate::traffic::{Endpoint, Flow};

/// The pool's occupancy ([`Simulation::pool_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Entries of the flow table (static flows plus the short-flow slots ever needed).
    pub table_len: usize,
    /// Static flows.
    pub static_flows: u32,
    /// Short flows that arrived.
    pub short_flows: u64,
    /// Short flows running now.
    pub running: u32,
    /// Most short flows running at once.
    pub peak: u32,
    /// Short flows finished (their slots given back).
    pub finished: u64,
    /// Longest time a completed short flow kept its slot after its completion (while
    /// packets of it were still in the network or a timer of it armed), ns.
    pub longest_hold: u64,
}

impl Simulation {
    /// The slot in the flow table of flow `id`, `None` for a short flow that finished.
    #[inline(always)]
    pub(super) fn slot_of(&self, id: u32) -> Option<usize> {
        if id < self.pool.n_static {
            Some(id as usize)
        } else {
            self.pool.slot_of(id)
        }
    }

    /// Puts short flow `flow` (of `size` bytes) in a free slot, or a new one; returns it.
    /// Completed flows whose last packet was dropped since the last arrival give their
    /// slots back first.
    pub(super) fn pool_slot(&mut self, flow: Flow, size: u64) -> usize {
        self.count_gone();
        let s = match self.pool.take_free() {
            Some(s) => {
                self.flows[s as usize] = flow;
                s as usize
            }
            None => {
                self.flows.push(flow);
                self.flows.len() - 1
            }
        };
        let f = &self.flows[s];
        self.pool.records.push(ShortRecord::new(
            s as u32, f.group, f.src, f.dst, f.start, size,
        ));
        self.pool.started();
        s
    }

    /// The short flow in slot `s` just had a packet or a timer: if it completed, and nothing
    /// of it is left in the network and no timer of it is armed, it leaves the table.
    #[inline(always)]
    pub(super) fn retire_if_done(&mut self, s: usize) {
        if matches!(&self.flows[s].ep, Endpoint::Tcp { snd, .. } if snd.done_at.is_some()) {
            self.retire_if_quiet(s);
        }
    }

    #[cold]
    #[inline(never)]
    fn retire_if_quiet(&mut self, s: usize) {
        let id = self.flows[s].id;
        self.count_gone();
        if self.slot_of(id) == Some(s) && self.quiet(s) {
            self.retire(s);
        }
    }

    /// True if the short flow in slot `s` completed and nothing can reach it any more: no
    /// packet of it is in the network (so none can arrive, nor draw an ACK) and none of its
    /// timers is armed (so none can fire and send). What it would do later in a run without
    /// the pool is nothing, whatever the path's queues.
    fn quiet(&self, s: usize) -> bool {
        let f = &self.flows[s];
        !self.pool.keep
            && f.in_net == 0
            && matches!(&f.ep, Endpoint::Tcp { snd, rcv }
                if snd.done_at.is_some()
                    && snd.rto_deadline.is_none()
                    && snd.pace.wait == crate::tcp::pacing::NEVER
                    && rcv.delack_deadline.is_none())
    }

    /// Applies what the links reported since the last call (`EventQueue::gone`: short
    /// flows' packets dropped, and netem's copies) to the flows' packets in the network,
    /// and retires the completed flows whose last packet was dropped.
    #[cold]
    #[inline(never)]
    pub(super) fn count_gone(&mut self) {
        if self.ev.gone.is_empty() {
            return;
        }
        let mut gone = std::mem::take(&mut self.ev.gone);
        for &g in &gone {
            let (id, copy) = match g {
                Gone::Dropped(id) => (id, false),
                Gone::Copied(id) => (id, true),
            };
            if let Some(s) = self.slot_of(id) {
                let f = &mut self.flows[s];
                f.in_net = match copy {
                    true => f.in_net.wrapping_add(1),
                    false => f.in_net.wrapping_sub(1),
                };
            }
        }
        for &g in &gone {
            if let Gone::Dropped(id) = g {
                match self.slot_of(id) {
                    Some(s) if self.quiet(s) => self.retire(s),
                    _ => {}
                }
            }
        }
        gone.clear();
        if self.ev.gone.is_empty() {
            self.ev.gone = gone; // (keeps its capacity)
        }
    }

    /// Keeps every finished short flow in its slot to the end of the run (no pooling): the
    /// run the pool's tests compare a pooled run with.
    pub fn keep_finished_flows(&mut self) {
        self.pool.keep = true;
    }

    /// The short flow in slot `s` completed and is quiet ([`Simulation::quiet`]): its summary
    /// row goes into its record, its delay histograms into its group's, and its slot back to
    /// the pool. Its row is computed as the report would compute it at any later time (its
    /// window closed at its completion, and nothing of it changes any more).
    #[cold]
    #[inline(never)]
    fn retire(&mut self, s: usize) {
        if !self.warm {
            // as the end of the warm-up would have done: nothing of it is in the window
            let f = &mut self.flows[s];
            f.warm = f.snapshot();
        }
        let f = &self.flows[s];
        let (id, group) = (f.id, f.group as usize);
        let done = f.done_at().expect("a completed flow");
        self.pool.longest_hold = self.pool.longest_hold.max(self.now - done);
        let st = self.flow_status(id).expect("a running flow");
        let (srtt, gap) = match &f.ep {
            Endpoint::Tcp { snd, .. } => (snd.srtt(), snd.stats.min_reduction_gap),
            Endpoint::Udp(_) => (None, u64::MAX),
        };
        let mut delays = std::mem::take(&mut self.pool.delays);
        let monitored = self.monitors();
        let route = self.flow_link_ids(id);
        let (row, _, _) = flow_summary(
            f,
            &self.cfg.flows,
            &monitored,
            &route,
            self.warmup,
            self.now,
        );
        if let Some(acc) = delays.get_mut(group) {
            acc.add_delays(f, &monitored);
        }
        let ids: Vec<(String, u32)> = monitored
            .iter()
            .map(|m| (m.name.to_string(), m.id))
            .collect();
        drop(monitored);
        self.pool.delays = delays;
        let k = (id - self.pool.n_static) as usize;
        let rec = &mut self.pool.records[k];
        rec.finish(&row, done, |name| {
            ids.iter()
                .find(|(n, _)| n == name)
                .map_or(u32::MAX, |&(_, l)| l)
        });
        rec.retransmits[1] = st.retransmits.min(u32::MAX as u64) as u32;
        rec.timeouts[1] = st.timeouts.min(u32::MAX as u64) as u32;
        rec.ecn_reductions = st.ecn_reductions.min(u32::MAX as u64) as u32;
        rec.cwnd = st.cwnd;
        rec.ssthresh = st.ssthresh;
        rec.bytes_acked = st.bytes_acked;
        rec.srtt = srtt.unwrap_or(u64::MAX);
        rec.min_reduction_gap = gap;
        for &m in &self.monitored {
            if let Some(mon) = self.links[m as usize].mon_mut() {
                mon.take_flow(id);
            }
        }
        self.pool.release(s as u32);
    }

    /// The source and destination nodes of flow `id` (running or finished).
    pub(super) fn endpoints(&self, id: u32) -> Option<(u32, u32)> {
        if let Some(s) = self.slot_of(id) {
            let f = &self.flows[s];
            return Some((f.src, f.dst));
        }
        self.pool.record(id).map(|r| (r.src, r.dst))
    }

    /// The status of short flow `id` once finished (`Simulation::flow_status`).
    pub(super) fn finished_status(&self, id: u32) -> Option<super::FlowStatus> {
        let r = self.pool.record(id).filter(|r| r.finished())?;
        Some(super::FlowStatus {
            id,
            kind: crate::traffic::FlowKind::ShortTcp.name(),
            started: true,
            cwnd: r.cwnd,
            ssthresh: r.ssthresh,
            srtt_s: (r.srtt != u64::MAX).then(|| ns_to_secs(r.srtt)),
            bytes_acked: r.bytes_acked,
            bytes_delivered: r.bytes_delivered,
            bytes_received_high: r.size,
            retransmits: r.retransmits[1] as u64,
            timeouts: r.timeouts[1] as u64,
            ecn_reductions: r.ecn_reductions as u64,
            rwnd: None,
            min_reduction_gap_s: (r.min_reduction_gap != u64::MAX)
                .then(|| ns_to_secs(r.min_reduction_gap)),
            fct_s: Some(ns_to_secs(r.done - r.start)),
        })
    }

    /// How the flow table is used: its entries, the static flows, and the short flows that
    /// arrived, run now, ran at most at once and finished. A finished short flow's slot is
    /// reused by the next arrival, so `table_len` is the static flows plus `peak`.
    pub fn pool_stats(&self) -> PoolStats {
        PoolStats {
            table_len: self.flows.len(),
            static_flows: self.pool.n_static,
            short_flows: self.pool.records.len() as u64,
            running: self.pool.live,
            peak: self.pool.peak,
            finished: self.pool.finished,
            longest_hold: self.pool.longest_hold,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aqm::Instant;

    use crate::engine::Event;
    use crate::packet::{Packet, F_ACK};
    use crate::Simulation;

    /// Steps a web-like run until a short flow sits in the slot an earlier, finished flow
    /// held; returns `(old id, new id)`.
    fn reused_slot(sim: &mut Simulation) -> (u32, u32) {
        let mut held: HashMap<u32, u32> = HashMap::new(); // slot -> last id seen in it
        loop {
            sim.run_until(Instant(sim.now + 1_000_000));
            assert!(sim.now < 20_000_000_000, "no slot reused in 20 s");
            let n = sim.pool.n_static;
            for (k, r) in sim.pool.records.iter().enumerate() {
                let id = n + k as u32;
                if r.finished() {
                    continue;
                }
                if let Some(&old) = held.get(&r.slot) {
                    if old != id && sim.pool.record(old).unwrap().finished() {
                        return (old, id);
                    }
                }
                held.insert(r.slot, id);
            }
        }
    }

    /// A finished flow's straggling ACK and data segment, and its timers, arriving after its
    /// slot went to a new flow, reach nothing: no packet is sent, and neither the new flow
    /// nor the old flow's record changes.
    #[test]
    fn late_packets_and_timers_of_a_finished_flow_miss_its_successor() {
        let mut sim = Simulation::from_json(
            r#"{"seed": 4, "duration": 30.0, "warmup": 0.0,
                "dumbbell": {"rate": "10Mbps", "rtt": "20ms", "buffer": 100},
                "flows": [{"kind": "tcp_short", "arrival_rate": 20.0, "mean_size": 20000}]}"#,
        )
        .unwrap();
        let (old, new) = reused_slot(&mut sim);
        sim.check_conservation().unwrap();
        let slot = sim.slot_of(new).unwrap();
        let (src, dst) = sim.endpoints(old).unwrap();
        let before = (
            sim.sent,
            sim.flow_status(new).unwrap(),
            sim.flow_status(old).unwrap(),
        );
        assert!(before.2.fct_s.is_some(), "{before:?}");
        let now = sim.now;
        // an ACK for everything and beyond, and a data segment, as if from the old flow
        let ack = Packet {
            flow: old,
            seq: 1_000,
            size: 40,
            dst: src,
            ts: now,
            flags: F_ACK,
            ..Default::default()
        };
        let data = Packet {
            flow: old,
            seq: 0,
            size: 1040,
            dst,
            ts: now,
            ..Default::default()
        };
        sim.deliver(src, ack);
        sim.deliver(dst, data);
        for ev in [Event::Rto(old), Event::DelAck(old), Event::Pace(old)] {
            sim.handle_event(ev);
        }
        let after = (
            sim.sent,
            sim.flow_status(new).unwrap(),
            sim.flow_status(old).unwrap(),
        );
        assert_eq!(before, after);
        assert_eq!(sim.slot_of(new), Some(slot));
        // the same ACK with the new flow's id does reach it (the check above is not vacuous)
        sim.deliver(src, Packet { flow: new, ..ack });
        assert_ne!(sim.flow_status(new).unwrap(), before.1);
    }
}
