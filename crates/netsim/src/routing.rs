//! Static shortest-path routing, computed once into an O(1) next-hop table.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::ecmp::{Ecmp, GROUP};
use crate::packet::Packet;

pub use experiment::config::Metric;

/// Marker for "no route".
pub const NO_ROUTE: u32 = u32::MAX;

/// Next-hop table.
///
/// A node with a single outgoing link (a host) forwards everything on it and
/// needs no table; every other node `u` has a row `next[row(u) * n + dst]`
/// holding the link it forwards to for `dst`, or [`NO_ROUTE`]. Memory is
/// `routers x nodes` entries (a 1000-flow dumbbell: 2 x 2002), and each row
/// costs one Dijkstra from its node. A fabric's table ([`crate::ecmp::compute`]) may hold
/// ECMP groups instead of links (entries at or above [`GROUP`]); forwarding picks a member
/// per packet ([`Routes::next_hop_pkt`]).
#[derive(Clone, Debug)]
pub struct Routes {
    n: usize,
    /// Per node: its only outgoing link, or [`NO_ROUTE`] if it has a row.
    single: Vec<u32>,
    /// Per node: its row index, or [`NO_ROUTE`].
    row: Vec<u32>,
    next: Vec<u32>,
    /// The ECMP groups the entries name (none outside the fabrics).
    ecmp: Ecmp,
}

/// What routing needs to know about a link.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// Source node.
    pub from: u32,
    /// Destination node.
    pub to: u32,
    /// Propagation delay (ns).
    pub delay: u64,
}

impl Routes {
    /// Computes shortest paths: one Dijkstra from every node with more than
    /// one outgoing link, recording the first hop toward every destination
    /// (ties: the lowest first-hop link index). Hop-by-hop forwarding along
    /// first hops is loop-free because every hop strictly decreases the
    /// remaining distance (all costs are positive).
    pub fn compute(n: usize, edges: &[Edge], metric: Metric) -> Routes {
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, e) in edges.iter().enumerate() {
            out[e.from as usize].push(i as u32);
        }
        let cost = |e: &Edge| -> u64 {
            match metric {
                Metric::Hops => 1,
                // +1 ns per hop prefers fewer hops among equal delays.
                Metric::Delay => e.delay.saturating_add(1),
            }
        };
        let Routes {
            single,
            row,
            mut next,
            ..
        } = Routes::compute_shape(n, &out);
        let mut dist = vec![u64::MAX; n];
        let mut heap = BinaryHeap::new();
        for src in 0..n {
            let r = row[src];
            if r == NO_ROUTE {
                continue;
            }
            let first = &mut next[r as usize * n..(r as usize + 1) * n];
            dist.iter_mut().for_each(|d| *d = u64::MAX);
            dist[src] = 0;
            heap.push(Reverse((0u64, src as u32)));
            while let Some(Reverse((d, u))) = heap.pop() {
                if d > dist[u as usize] {
                    continue;
                }
                for &l in &out[u as usize] {
                    let e = &edges[l as usize];
                    let v = e.to as usize;
                    if v == src {
                        continue;
                    }
                    let nd = d.saturating_add(cost(e));
                    let hop = if u as usize == src {
                        l
                    } else {
                        first[u as usize]
                    };
                    if nd < dist[v] {
                        dist[v] = nd;
                        first[v] = hop;
                        heap.push(Reverse((nd, v as u32)));
                    } else if nd == dist[v] && hop < first[v] {
                        first[v] = hop;
                    }
                }
            }
        }
        Routes {
            n,
            single,
            row,
            next,
            ecmp: Ecmp::default(),
        }
    }

    /// An empty table for the nodes' outgoing links `out` (per node, the link ids leaving
    /// it): a node with one link forwards on it, every other node with links gets a row of
    /// [`NO_ROUTE`] entries.
    pub(crate) fn compute_shape(n: usize, out: &[Vec<u32>]) -> Routes {
        let mut single = vec![NO_ROUTE; n];
        let mut row = vec![NO_ROUTE; n];
        let mut rows = 0usize;
        for u in 0..n {
            if out[u].len() == 1 {
                single[u] = out[u][0];
            } else if out[u].len() > 1 {
                row[u] = rows as u32;
                rows += 1;
            }
        }
        Routes {
            n,
            single,
            row,
            next: vec![NO_ROUTE; rows * n],
            ecmp: Ecmp::default(),
        }
    }

    /// True if `node` has a row (more than one outgoing link).
    pub(crate) fn has_row(&self, node: u32) -> bool {
        self.row[node as usize] != NO_ROUTE
    }

    pub(crate) fn set_ecmp(&mut self, ecmp: Ecmp) {
        self.ecmp = ecmp;
    }

    /// The ECMP groups (empty outside the fabrics).
    pub fn ecmp(&self) -> &Ecmp {
        &self.ecmp
    }

    /// The raw table entry of (`node`, `dst`): a link id, `GROUP + g` for ECMP group `g`, or
    /// [`NO_ROUTE`].
    #[inline]
    pub fn entry(&self, node: u32, dst: u32) -> u32 {
        let s = self.single[node as usize];
        if s != NO_ROUTE {
            return if node == dst { NO_ROUTE } else { s };
        }
        let r = self.row[node as usize];
        if r == NO_ROUTE {
            return NO_ROUTE;
        }
        self.next[r as usize * self.n + dst as usize]
    }

    /// Prefetches the table entry of (`node`, `dst`) that [`Routes::entry`] reads.
    #[inline]
    pub fn prefetch_entry(&self, node: u32, dst: u32) {
        if self.single[node as usize] != NO_ROUTE {
            return;
        }
        let r = self.row[node as usize];
        if r != NO_ROUTE {
            memhint::prefetch_line(&self.next[r as usize * self.n + dst as usize], 0);
        }
    }

    /// Prefetches `node`'s entry in the table of nodes with a single outgoing link (a
    /// host's link out, which the packets its endpoints send take).
    #[inline]
    pub fn prefetch_single(&self, node: u32) {
        memhint::prefetch_line(&self.single[node as usize], 0);
    }

    /// `node`'s only outgoing link, if it has one and no routing row.
    #[inline]
    pub fn single(&self, node: u32) -> Option<u32> {
        let s = self.single[node as usize];
        (s != NO_ROUTE).then_some(s)
    }

    /// Link index `node` forwards to for `dst`, or [`NO_ROUTE`]; for an ECMP group, its first
    /// member (every member lies on a shortest path: what routability and class checks need).
    #[inline]
    pub fn next_hop(&self, node: u32, dst: u32) -> u32 {
        let e = self.entry(node, dst);
        if e >= GROUP && e != NO_ROUTE {
            return self.ecmp.members(e - GROUP)[0];
        }
        e
    }

    /// The link packet `pkt` at `node` leaves on: the entry for its destination, or the
    /// member of its ECMP group its hash picks ([`Ecmp::pick`]).
    #[inline]
    pub fn next_hop_pkt(&self, node: u32, pkt: &Packet) -> u32 {
        let e = self.entry(node, pkt.dst);
        if e < GROUP {
            return e;
        }
        self.ecmp
            .pick_of(e, node, pkt.flow, pkt.flags, pkt.seq, pkt.ts)
    }

    /// The link the data of flow `flow` at `node` leaves on toward `dst` (its first packet's
    /// choice; with packet spraying, one of the paths its packets take).
    pub fn next_hop_flow(&self, node: u32, dst: u32, flow: u32) -> u32 {
        let pkt = Packet {
            flow,
            dst,
            ..Default::default()
        };
        self.next_hop_pkt(node, &pkt)
    }

    /// Overrides one entry (explicit static route). `link` must leave
    /// `node`; at a node with a single outgoing link this is a no-op.
    pub fn set(&mut self, node: u32, dst: u32, link: u32) {
        let r = self.row[node as usize];
        if r != NO_ROUTE {
            self.next[r as usize * self.n + dst as usize] = link;
        }
    }

    /// Follows the table from `src` to `dst`; returns the link indices of the
    /// path, or `None` if a hop is missing or the path loops.
    pub fn path(&self, edges: &[Edge], src: u32, dst: u32) -> Option<Vec<u32>> {
        let mut at = src;
        let mut path = Vec::new();
        while at != dst {
            let l = self.next_hop(at, dst);
            if l == NO_ROUTE || path.len() > self.n {
                return None;
            }
            path.push(l);
            at = edges[l as usize].to;
        }
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: hand-computed shortest paths on a 4-node diamond where the
    /// two-hop paths differ in delay.
    #[test]
    fn hops_and_delay_metrics() {
        // 0 -> 1 -> 3 (delays 10 + 10), 0 -> 2 -> 3 (1 + 1), 0 -> 3 direct (100)
        let e = |from, to, delay| Edge { from, to, delay };
        let edges = vec![
            e(0, 1, 10),
            e(1, 3, 10),
            e(0, 2, 1),
            e(2, 3, 1),
            e(0, 3, 100),
        ];
        let r = Routes::compute(4, &edges, Metric::Hops);
        assert_eq!(r.path(&edges, 0, 3), Some(vec![4]));
        let r = Routes::compute(4, &edges, Metric::Delay);
        assert_eq!(r.path(&edges, 0, 3), Some(vec![2, 3]));
        assert_eq!(r.path(&edges, 3, 0), None);
    }
}
