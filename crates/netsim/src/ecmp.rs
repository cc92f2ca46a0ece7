//! Equal-cost multi-path (ECMP) routing for the fabrics (`[leaf_spine]`, `[fat_tree]`).
//!
//! [`compute`] finds, for every router `u` and destination `d`, every link `u -> v` that lies on
//! a shortest path (`cost(u -> v) + dist(v, d) = dist(u, d)`); a set of two or more such links
//! is an *ECMP group*. Equal sets are stored once (a fat tree with k = 8 has a handful of
//! distinct groups for thousands of (router, destination) pairs), so the table is the
//! [`Routes`] table of single next hops, `routers x nodes` `u32` entries, plus the groups:
//! an entry at or above [`GROUP`] names a group instead of a link. Forwarding along any member
//! strictly decreases the remaining distance, so no choice can loop.
//!
//! A member is chosen per packet by [`Ecmp::pick`]: a seeded hash of the packet's flow key,
//! reduced to the group's size by a multiply-shift (no division, no allocation, no state).
//! With [`EcmpMode::Flow`] the key is the flow's 5-tuple (each simulated flow has its own port
//! pair, so its 5-tuple is a function of its flow id and direction: data or ACK) and every
//! packet of one direction of a flow takes the same path; with [`EcmpMode::Packet`] (packet
//! spraying) the key also holds the packet's sequence number and timestamp. The hash is salted
//! with the scenario seed and the switch's node id, as switches salt theirs, so that the choices
//! at successive tiers are independent (no hash polarisation).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::packet::{Packet, F_ACK};
use crate::routing::{Edge, Metric, Routes, NO_ROUTE};
use experiment::rng::splitmix64;

pub use experiment::fabric::EcmpMode;

/// Table entries at or above this name an ECMP group (`entry - GROUP`); [`NO_ROUTE`] is
/// `u32::MAX`, above it too, and stays "no route".
pub const GROUP: u32 = 1 << 31;

/// The ECMP groups of a [`Routes`] table and how a member is chosen.
#[derive(Clone, Debug, Default)]
pub struct Ecmp {
    mode: EcmpMode,
    seed: u64,
    /// Group `g`'s members are `members[start[g] .. start[g + 1]]` (link ids, increasing).
    start: Vec<u32>,
    members: Vec<u32>,
}

impl Ecmp {
    /// Number of distinct groups.
    pub fn groups(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// The members of group `g` (an entry `GROUP + g`).
    pub fn members(&self, g: u32) -> &[u32] {
        let g = g as usize;
        &self.members[self.start[g] as usize..self.start[g + 1] as usize]
    }

    /// The 64-bit hash of a packet's key at switch `node` (see the module doc).
    #[inline]
    pub fn key(&self, node: u32, pkt: &Packet) -> u64 {
        self.key_of(node, pkt.flow, pkt.flags, pkt.seq, pkt.ts)
    }

    #[inline]
    fn key_of(&self, node: u32, flow: u32, flags: u32, seq: u32, ts: u64) -> u64 {
        let dir = (flags & F_ACK != 0) as u64;
        let mut k = self.seed ^ splitmix64(((flow as u64) << 1) | dir);
        if self.mode == EcmpMode::Packet {
            k = splitmix64(k ^ ((seq as u64) << 32) ^ ts);
        }
        splitmix64(k ^ ((node as u64) << 32))
    }

    /// The link a packet at `node` takes out of table entry `entry` (a link, a group, or
    /// [`NO_ROUTE`]).
    #[inline]
    pub fn pick(&self, entry: u32, node: u32, pkt: &Packet) -> u32 {
        self.pick_of(entry, node, pkt.flow, pkt.flags, pkt.seq, pkt.ts)
    }

    /// [`Ecmp::pick`] on the packet's key fields, passed by value: out of line and cold, so
    /// that the forwarding path of a table without groups keeps the packet in registers.
    #[cold]
    #[inline(never)]
    pub fn pick_of(&self, entry: u32, node: u32, flow: u32, flags: u32, seq: u32, ts: u64) -> u32 {
        if entry == NO_ROUTE {
            return NO_ROUTE;
        }
        let m = self.members(entry - GROUP);
        // multiply-shift: uniform over the members for a uniform 32-bit hash
        let h = (self.key_of(node, flow, flags, seq, ts) >> 32) as u32;
        m[((h as u64 * m.len() as u64) >> 32) as usize]
    }
}

/// The ECMP table: a [`Routes`] whose rows hold single links or groups (see the module doc),
/// toward the destinations `dests` (a fabric's hosts; other entries stay [`NO_ROUTE`]).
/// Costs as [`Routes::compute`] (`Hops`: 1 per link; `Delay`: delay + 1 ns).
pub fn compute(
    n: usize,
    edges: &[Edge],
    metric: Metric,
    mode: EcmpMode,
    seed: u64,
    dests: std::ops::Range<u32>,
) -> Routes {
    let cost = |e: &Edge| -> u64 {
        match metric {
            Metric::Hops => 1,
            Metric::Delay => e.delay.saturating_add(1),
        }
    };
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut inc: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, e) in edges.iter().enumerate() {
        out[e.from as usize].push(i as u32);
        inc[e.to as usize].push(i as u32);
    }
    let mut routes = Routes::compute_shape(n, &out);
    let mut groups: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut ecmp = Ecmp {
        mode,
        seed: splitmix64(seed ^ 0x4543_4d50), // "ECMP"
        start: vec![0],
        members: Vec::new(),
    };
    let mut dist = vec![u64::MAX; n];
    let mut heap = BinaryHeap::new();
    let mut set = Vec::new();
    for dst in dests.start as usize..dests.end as usize {
        // distances to `dst` (Dijkstra on the reversed links)
        dist.iter_mut().for_each(|d| *d = u64::MAX);
        dist[dst] = 0;
        heap.push(Reverse((0u64, dst as u32)));
        while let Some(Reverse((d, v))) = heap.pop() {
            if d > dist[v as usize] {
                continue;
            }
            for &l in &inc[v as usize] {
                let e = &edges[l as usize];
                let nd = d.saturating_add(cost(e));
                if nd < dist[e.from as usize] {
                    dist[e.from as usize] = nd;
                    heap.push(Reverse((nd, e.from)));
                }
            }
        }
        for u in 0..n {
            if u == dst || !routes.has_row(u as u32) || dist[u] == u64::MAX {
                continue;
            }
            set.clear();
            for &l in &out[u] {
                let e = &edges[l as usize];
                let dv = dist[e.to as usize];
                if dv != u64::MAX && dv.saturating_add(cost(e)) == dist[u] {
                    set.push(l);
                }
            }
            let entry = match set.len() {
                0 => NO_ROUTE,
                1 => set[0],
                _ => {
                    let next = ecmp.groups() as u32;
                    let g = *groups.entry(set.clone()).or_insert_with(|| {
                        ecmp.members.extend_from_slice(&set);
                        ecmp.start.push(ecmp.members.len() as u32);
                        next
                    });
                    GROUP + g
                }
            };
            routes.set(u as u32, dst as u32, entry);
        }
    }
    routes.set_ecmp(ecmp);
    routes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diamond() -> Vec<Edge> {
        // 0 -> {1, 2} -> 3 -> 4, both ways; 0 and 4 are routers too (two links each)
        let e = |from, to| Edge {
            from,
            to,
            delay: 10,
        };
        let mut v = Vec::new();
        for (a, b) in [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (0, 5)] {
            v.push(e(a, b));
            v.push(e(b, a));
        }
        v
    }

    fn pkt(flow: u32, seq: u32, dst: u32) -> Packet {
        Packet {
            flow,
            seq,
            dst,
            size: 1000,
            ..Default::default()
        }
    }

    /// Both two-hop paths of a diamond form one group at the branching router; one flow always
    /// takes one of them; many flows split evenly (binomial: 4000 flows, p = 1/2, sd 31.6,
    /// bound 5 sd); packet spraying splits one flow's packets the same way.
    #[test]
    fn diamond_groups_and_hashing() {
        let edges = diamond();
        for mode in [EcmpMode::Flow, EcmpMode::Packet] {
            let r = compute(6, &edges, Metric::Hops, mode, 7, 0..6);
            let e = r.entry(0, 4);
            assert!(e >= GROUP && e != NO_ROUTE);
            assert_eq!(r.ecmp().members(e - GROUP), &[0, 2]);
            // 0 -> {1,2} -> 3, 3 -> {1,2} -> 0, 1 -> {0,3} -> 2 and 2 -> {0,3} -> 1
            assert_eq!(r.ecmp().groups(), 4);
            // single next hops stay links
            assert_eq!(r.entry(3, 4), 8);
            let mut via1 = 0;
            for f in 0..4000u32 {
                let seq = if mode == EcmpMode::Flow { 0 } else { f };
                let flow = if mode == EcmpMode::Flow { f } else { 3 };
                let l = r.next_hop_pkt(0, &pkt(flow, seq, 4));
                assert!(l == 0 || l == 2);
                // the same packet key always takes the same link
                assert_eq!(l, r.next_hop_pkt(0, &pkt(flow, seq, 4)));
                via1 += (l == 0) as i32;
            }
            assert!(
                (via1 - 2000).abs() < 158,
                "{mode:?}: {via1} of 4000 via node 1"
            );
        }
        // per flow: every packet of one flow on one path
        let r = compute(6, &edges, Metric::Hops, EcmpMode::Flow, 7, 0..6);
        let first = r.next_hop_pkt(0, &pkt(11, 0, 4));
        assert!((1..500).all(|s| r.next_hop_pkt(0, &pkt(11, s, 4)) == first));
    }

    /// Another seed changes the choices, the same seed repeats them (determinism).
    #[test]
    fn seeded() {
        let edges = diamond();
        let a = compute(6, &edges, Metric::Hops, EcmpMode::Flow, 1, 0..6);
        let b = compute(6, &edges, Metric::Hops, EcmpMode::Flow, 1, 0..6);
        let c = compute(6, &edges, Metric::Hops, EcmpMode::Flow, 2, 0..6);
        let pick = |r: &Routes| -> Vec<u32> {
            (0..64).map(|f| r.next_hop_pkt(0, &pkt(f, 0, 4))).collect()
        };
        assert_eq!(pick(&a), pick(&b));
        assert_ne!(pick(&a), pick(&c));
    }

    /// With a unique shortest path the table equals `Routes::compute`'s (Delay metric on the
    /// diamond with one faster branch).
    #[test]
    fn unique_paths_match_single_path_routing() {
        let mut edges = diamond();
        for i in [2, 3, 6, 7] {
            edges[i].delay = 1; // 0 <-> 2 <-> 3
        }
        let a = compute(6, &edges, Metric::Delay, EcmpMode::Flow, 1, 0..6);
        let b = Routes::compute(6, &edges, Metric::Delay);
        for s in 0..6 {
            for d in 0..6 {
                assert_eq!(a.path(&edges, s, d), b.path(&edges, s, d), "{s} -> {d}");
            }
        }
    }
}
