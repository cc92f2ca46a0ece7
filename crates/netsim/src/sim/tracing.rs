//! Per-packet queue traces: starting them, running until a trace batch is full, draining.

use aqm::Instant;

use super::Simulation;
use crate::trace::{TraceBatch, TraceBuf};

impl Simulation {
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
            self.links[l as usize].set_trace(Some(Box::new(TraceBuf::with_batch(batch))));
        }
    }

    /// Like [`Simulation::run_until`], but returns `false` as soon as a traced link's buffer
    /// holds a full batch (after the event that filled it, `now()` at that event's time);
    /// `true` once every event up to `t` ran. Without a started trace it is `run_until`.
    /// With an open capture ([`Simulation::start_pcap`]) it also writes the capture's
    /// records whenever a capture tap holds a full batch (without stopping).
    /// Stopping early does not change the run: the next call continues with the next event.
    pub fn run_until_traced(&mut self, t: Instant) -> bool {
        let traced = self.tracing && !self.trace_links.is_empty();
        if !traced && !self.capturing() {
            self.run_until(t);
            return true;
        }
        let limit = t.0;
        while let Some((time, due)) = self.ev.pop_until(limit) {
            self.now = time;
            self.events += 1;
            self.handle(due);
            if self.capture.is_some() && self.pcap_full() {
                // a capture writes its full batches itself
                self.flush_pcap();
            }
            if traced && self.trace_full() {
                return false;
            }
        }
        self.now = self.now.max(limit);
        true
    }

    /// True if some traced link's buffer holds a full batch.
    #[inline]
    pub(super) fn trace_full(&self) -> bool {
        self.trace_links
            .iter()
            .any(|&l| self.links[l as usize].trace().is_some_and(|t| t.is_full()))
    }

    /// Moves every traced link's rows into `out` (appending; links in `SimConfig::trace`
    /// order, each in time order) and empties their buffers, which keep their capacity.
    pub fn drain_trace(&mut self, out: &mut TraceBatch) {
        for &l in &self.trace_links {
            if let Some(t) = self.links[l as usize].trace_mut() {
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
                let t = link.trace();
                (
                    self.link_names.get(l).to_string(),
                    t.map(TraceBuf::capacity),
                    t.map_or(0, TraceBuf::batch),
                )
            })
            .collect()
    }
}
