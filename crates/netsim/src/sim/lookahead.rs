//! The event loop's lookahead: on a network too large for the caches, each arrival
//! prefetches what the arrivals a few places behind it will touch.
//!
//! With 100 000 flows on the standard dumbbell, the links, flows, pipe records and routing
//! entries an arrival reads lie in main memory, and an arrival that waits for them one after
//! the other spends most of its time waiting. The propagation lanes are in time order
//! (`crate::pipes`), so the arrivals behind the front of a lane are known: the lane that
//! gave the last arrival will most likely give the next few (another lane's may come first,
//! and then a prefetch was wasted, not wrong). The prefetches go in stages, so that each
//! reads only lines an earlier stage fetched: `4 AHEAD` arrivals ahead, the lane's entry;
//! `3 AHEAD` ahead, the pipe record of the link it arrives on; `2 AHEAD` ahead, its routing
//! entry at the far node or, if it arrives at its destination, its flow and the host's link
//! out (its endpoint answers on it); `AHEAD` ahead, the link it will be forwarded onto or
//! answered on, and that link's pipe record. A prefetch changes nothing but timing
//! (`memhint`); the test below checks that the results are the same with it and without.
//!
//! The large tables also ask for huge pages (`memhint::huge_pages`, in `build.rs` and the
//! pipes), so that the translations of what is prefetched are in the TLB too.

use super::Simulation;
use crate::routing::NO_ROUTE;

/// Bytes of links and flows from which a network counts as too large for the caches: a
/// standard dumbbell of 2048 flows (8192 links of 344 bytes and 2048 flows of 1016), or
/// 4000 flows with hosts on the bottleneck. Below, what an arrival touches is mostly in
/// cache, and a prefetch would only add instructions (the standard bench rows hold at most
/// 2.4 MB).
const LOOKAHEAD_BYTES: usize = 4 << 20;

/// How many arrivals ahead the link a packet will be forwarded onto is prefetched (the other
/// stages look two, three and four times as far): at a few hundred nanoseconds an arrival at
/// that scale, four arrivals cover a miss to main memory, and a guess that near is mostly
/// right. (Of 3 to 8, 4 was fastest at 100 000 flows.)
const AHEAD: usize = 4;

/// True if a network of `links` links and `flows` flows gets the lookahead.
pub(super) fn worth_it(links: usize, flows: usize) -> bool {
    links * std::mem::size_of::<crate::link::Link>()
        + flows * std::mem::size_of::<crate::traffic::Flow>()
        >= LOOKAHEAD_BYTES
}

impl Simulation {
    /// Prefetches what the coming arrivals will touch (module docs).
    #[inline(always)]
    pub(super) fn prefetch_ahead(&self) {
        let pipes = self.ev.pipes();
        pipes.prefetch_transit(4 * AHEAD);
        pipes.prefetch_record_ahead(3 * AHEAD);
        if let Some((to, pkt)) = pipes.ahead(2 * AHEAD) {
            if pkt.dst != to {
                self.routes.prefetch_entry(to, pkt.dst);
            } else if let Some(s) = self.slot_of(pkt.flow) {
                memhint::prefetch(&self.flows[s]);
                self.routes.prefetch_single(to);
            }
        }
        if let Some((to, pkt)) = pipes.ahead(AHEAD) {
            let l = if pkt.dst != to {
                self.routes.next_hop_pkt(to, pkt)
            } else {
                self.routes.single(to).unwrap_or(NO_ROUTE)
            };
            if let Some(link) = self.links.get(l as usize) {
                memhint::prefetch(link);
                pipes.prefetch_record(l);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Simulation;

    /// A network above the threshold gets the lookahead, and it changes nothing but timing:
    /// long and short flows on a standard dumbbell of 2100 long flows (8400 access links,
    /// 5 MB of links and flows), the same summary with the lookahead and without.
    #[test]
    fn lookahead_changes_no_result() {
        let doc = r#"{"seed": 3, "duration": 0.4, "warmup": 0.1,
            "dumbbell": {"rate": "1Gbps", "rtt": "20ms", "buffer": 2000},
            "aqm": {"type": "codel"},
            "flows": [{"count": 2100, "cc": "cubic"},
                      {"kind": "tcp_short", "arrival_rate": 2000.0, "mean_size": 20000}]}"#;
        let run = |lookahead: bool| {
            let mut sim = Simulation::from_json(doc).unwrap();
            assert!(
                sim.lookahead,
                "5 MB of links and flows are above the threshold"
            );
            sim.lookahead = lookahead;
            sim.run();
            sim.check_conservation().unwrap();
            assert!(sim.events() > 100_000, "{} events", sim.events());
            serde_json::to_string(&sim.summary()).unwrap()
        };
        assert_eq!(run(true), run(false));
    }
}
