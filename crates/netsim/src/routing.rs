//! Static shortest-path routing, computed once into an O(1) next-hop table.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

/// Path metric of the static routing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Fewest hops (BFS-equivalent); ties broken by lowest link index.
    #[default]
    Hops,
    /// Smallest total propagation delay, then fewest hops; ties broken by
    /// lowest link index.
    Delay,
}

/// Marker for "no route".
pub const NO_ROUTE: u32 = u32::MAX;

/// Next-hop table: `next[node * n + dst]` is the index of the link `node`
/// forwards to for destination `dst`, or [`NO_ROUTE`].
#[derive(Clone, Debug)]
pub struct Routes {
    n: usize,
    next: Vec<u32>,
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
    /// Computes all-destinations shortest paths: one Dijkstra per destination
    /// over the reversed graph (O(N (E log N))).
    pub fn compute(n: usize, edges: &[Edge], metric: Metric) -> Routes {
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, e) in edges.iter().enumerate() {
            incoming[e.to as usize].push(i as u32);
        }
        let cost = |e: &Edge| -> u64 {
            match metric {
                Metric::Hops => 1,
                // +1 ns per hop prefers fewer hops among equal delays.
                Metric::Delay => e.delay.saturating_add(1),
            }
        };
        let mut next = vec![NO_ROUTE; n * n];
        let mut dist = vec![u64::MAX; n];
        let mut heap = BinaryHeap::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u64::MAX);
            dist[dst] = 0;
            heap.push(Reverse((0u64, dst as u32)));
            while let Some(Reverse((d, u))) = heap.pop() {
                if d > dist[u as usize] {
                    continue;
                }
                for &l in &incoming[u as usize] {
                    let e = &edges[l as usize];
                    let v = e.from as usize;
                    if v == dst {
                        continue;
                    }
                    let nd = d.saturating_add(cost(e));
                    let slot = &mut next[v * n + dst];
                    if nd < dist[v] {
                        dist[v] = nd;
                        *slot = l;
                        heap.push(Reverse((nd, v as u32)));
                    } else if nd == dist[v] && l < *slot {
                        *slot = l;
                    }
                }
            }
        }
        Routes { n, next }
    }

    /// Link index `node` forwards to for `dst`, or [`NO_ROUTE`].
    #[inline]
    pub fn next_hop(&self, node: u32, dst: u32) -> u32 {
        self.next[node as usize * self.n + dst as usize]
    }

    /// Overrides one entry (explicit static route).
    pub fn set(&mut self, node: u32, dst: u32, link: u32) {
        self.next[node as usize * self.n + dst as usize] = link;
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
