//! FCT slowdown of a fabric's finite flows (`experiment::fct` defines it).

use super::Simulation;
use crate::packet::{Packet, F_ACK};
use crate::routing::NO_ROUTE;
use experiment::config::TopologyConfig;
use experiment::fct::{slowdowns, SlowdownBucket};
use experiment::time::ns_to_secs;

impl Simulation {
    /// The ideal FCT of flow `id` of `size` payload bytes, seconds: `8 x size / r + d` with
    /// `r` the smallest rate on its data path and `d` the propagation delays of its data and
    /// ACK paths (the ones its first packets take).
    pub(super) fn ideal_fct(&self, id: u32, size: u64) -> f64 {
        let (src, dst) = self.endpoints(id).unwrap_or_default();
        let mut rate = u64::MAX;
        let mut delay = 0u64;
        for (from, to, flags) in [(src, dst, 0), (dst, src, F_ACK)] {
            let pkt = Packet {
                flow: id,
                dst: to,
                flags,
                ..Default::default()
            };
            let mut at = from;
            let mut hops = 0;
            while at != to && hops <= self.links.len() {
                let l = self.routes.next_hop_pkt(at, &pkt);
                if l == NO_ROUTE {
                    break;
                }
                let link = &self.links[l as usize];
                if flags == 0 {
                    rate = rate.min(link.rate_bps());
                }
                delay += link.delay;
                at = link.to;
                hops += 1;
            }
        }
        8.0 * size as f64 / rate.max(1) as f64 + ns_to_secs(delay)
    }

    /// Per size bucket, the slowdowns of the completed finite flows that started after the
    /// warm-up; `None` outside the fabrics.
    pub(super) fn fct_slowdown(&self) -> Option<Vec<SlowdownBucket>> {
        if !matches!(self.cfg.topology, TopologyConfig::Fabric(_)) {
            return None;
        }
        let n_static = self.pool.n_static as usize;
        let short = self.pool.records.iter().enumerate();
        let flows = (self.flows[..n_static]
            .iter()
            .map(|f| (f.id, f.start, f.size, f.done_at())))
        .chain(short.map(|(k, r)| {
            let id = (n_static + k) as u32;
            match r.finished() {
                true => (id, r.start, Some(r.size), Some(r.done)),
                false => (
                    id,
                    r.start,
                    Some(r.size),
                    self.flows[r.slot as usize].done_at(),
                ),
            }
        }))
        .filter_map(|(id, start, size, done)| {
            let (size, done) = (size?, done?);
            (start >= self.warmup).then(|| {
                let fct = ns_to_secs(done - start);
                (size, fct / self.ideal_fct(id, size))
            })
        });
        Some(slowdowns(flows))
    }
}
