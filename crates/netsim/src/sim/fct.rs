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
        let f = &self.flows[id as usize];
        let mut rate = u64::MAX;
        let mut delay = 0u64;
        for (from, to, flags) in [(f.src, f.dst, 0), (f.dst, f.src, F_ACK)] {
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
        let flows = self.flows.iter().filter_map(|f| {
            let size = f.size?;
            let done = f.done_at()?;
            (f.start >= self.warmup).then(|| {
                let fct = ns_to_secs(done - f.start);
                (size, fct / self.ideal_fct(f.id, size))
            })
        });
        Some(slowdowns(flows))
    }
}
