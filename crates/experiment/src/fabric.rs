//! Data-centre fabrics: the `[leaf_spine]` and `[fat_tree]` builders' configuration, the
//! ECMP mode of their routing and the traffic patterns of their flow groups (which host
//! sends to which). The network itself is built by `netsim::fabric`; docs/fabric.md is the
//! user's reference.

use aqm::{QdiscConfig, QueueLimit};

use crate::rng::{derive_seed, Rng, Stream};

/// How a switch chooses among equal-cost next hops (scenario key `ecmp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcmpMode {
    /// One path per flow and direction: a seeded hash of the flow's 5-tuple.
    #[default]
    Flow,
    /// Packet spraying: the hash also covers the packet's sequence number and timestamp.
    Packet,
}

impl EcmpMode {
    /// `"flow"` or `"packet"`, as in the scenario.
    pub fn name(self) -> &'static str {
        match self {
            EcmpMode::Flow => "flow",
            EcmpMode::Packet => "packet",
        }
    }
}

/// The shape of a fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FabricShape {
    /// Two tiers: `leaves` leaf switches with `hosts_per_leaf` hosts each, every leaf joined
    /// to every one of `spines` spine switches.
    LeafSpine {
        /// Leaf (top-of-rack) switches (>= 1).
        leaves: u32,
        /// Spine switches (>= 1).
        spines: u32,
        /// Hosts under each leaf (>= 1).
        hosts_per_leaf: u32,
    },
    /// The k-ary fat tree of Al-Fares, Loukissas and Vahdat (SIGCOMM 2008, section 3.2):
    /// k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts
    /// (k even, >= 2).
    FatTree {
        /// Ports per switch.
        k: u32,
    },
}

impl FabricShape {
    /// Number of hosts.
    pub fn hosts(&self) -> u64 {
        match *self {
            FabricShape::LeafSpine {
                leaves,
                hosts_per_leaf,
                ..
            } => leaves as u64 * hosts_per_leaf as u64,
            FabricShape::FatTree { k } => (k as u64).pow(3) / 4,
        }
    }

    /// The switch tiers whose egress queues the `aqm.TIER` tables set, host NICs first.
    pub fn tiers(&self) -> &'static [&'static str] {
        match self {
            FabricShape::LeafSpine { .. } => &["host", "leaf", "spine"],
            FabricShape::FatTree { .. } => &["host", "edge", "agg", "core"],
        }
    }

    /// The scenario table: `leaf_spine` or `fat_tree`.
    pub fn table(&self) -> &'static str {
        match self {
            FabricShape::LeafSpine { .. } => "leaf_spine",
            FabricShape::FatTree { .. } => "fat_tree",
        }
    }
}

/// One unidirectional link of a fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricLink {
    /// Source node.
    pub from: u32,
    /// Destination node.
    pub to: u32,
    /// Tier of `from` (index into [`FabricShape::tiers`]): the queue the link runs.
    pub tier: u8,
    /// A switch-to-switch link (rate `fabric_rate`), else a host link (`host_rate`).
    pub fabric: bool,
}

/// The nodes and links of a fabric: hosts are nodes `0 .. hosts` (host `i` is node `i`,
/// named `h{i}`), then the switches; every cable is two links, `FROM->TO` and `TO->FROM`.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricGraph {
    /// Node names (index = node id).
    pub nodes: Vec<String>,
    /// Links (index = link id).
    pub links: Vec<FabricLink>,
}

impl FabricGraph {
    /// The link's name, `FROM->TO`.
    pub fn link_name(&self, l: &FabricLink) -> String {
        format!(
            "{}->{}",
            self.nodes[l.from as usize], self.nodes[l.to as usize]
        )
    }

    fn cable(&mut self, a: u32, ta: u8, b: u32, tb: u8, fabric: bool) {
        self.links.push(FabricLink {
            from: a,
            to: b,
            tier: ta,
            fabric,
        });
        self.links.push(FabricLink {
            from: b,
            to: a,
            tier: tb,
            fabric,
        });
    }
}

impl FabricShape {
    /// The fabric's nodes and links.
    ///
    /// Leaf-spine: hosts `h{i}` (host `i` under leaf `i / hosts_per_leaf`), leaves `l{j}`,
    /// spines `s{j}`, every leaf cabled to every spine. Fat tree (Al-Fares et al. 2008,
    /// section 3.2): pod `p` has edge switches `e{p}_{j}` and aggregation switches `a{p}_{j}`
    /// (j < k/2), each edge switch `k/2` hosts (host `i` under edge switch `i / (k/2)`, pod
    /// `i / (k/2)^2`) and a cable to every aggregation switch of its pod; core switch `c{i}`
    /// (i < (k/2)^2) is cabled to aggregation switch `i / (k/2)` of every pod.
    pub fn graph(&self) -> FabricGraph {
        let hosts = self.hosts() as u32;
        let mut g = FabricGraph {
            nodes: (0..hosts).map(|i| format!("h{i}")).collect(),
            links: Vec::new(),
        };
        let add = |g: &mut FabricGraph, name: String| -> u32 {
            g.nodes.push(name);
            g.nodes.len() as u32 - 1
        };
        match *self {
            FabricShape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                let l0 = hosts;
                for j in 0..leaves {
                    add(&mut g, format!("l{j}"));
                }
                let s0 = l0 + leaves;
                for j in 0..spines {
                    add(&mut g, format!("s{j}"));
                }
                for h in 0..hosts {
                    g.cable(h, 0, l0 + h / hosts_per_leaf, 1, false);
                }
                for l in 0..leaves {
                    for s in 0..spines {
                        g.cable(l0 + l, 1, s0 + s, 2, true);
                    }
                }
            }
            FabricShape::FatTree { k } => {
                let half = k / 2;
                let e0 = hosts;
                for p in 0..k {
                    for j in 0..half {
                        add(&mut g, format!("e{p}_{j}"));
                    }
                }
                let a0 = e0 + k * half;
                for p in 0..k {
                    for j in 0..half {
                        add(&mut g, format!("a{p}_{j}"));
                    }
                }
                let c0 = a0 + k * half;
                for i in 0..half * half {
                    add(&mut g, format!("c{i}"));
                }
                for h in 0..hosts {
                    g.cable(h, 0, e0 + h / half, 1, false);
                }
                for p in 0..k {
                    for e in 0..half {
                        for a in 0..half {
                            g.cable(e0 + p * half + e, 1, a0 + p * half + a, 2, true);
                        }
                    }
                }
                for c in 0..half * half {
                    for p in 0..k {
                        g.cable(a0 + p * half + c / half, 2, c0 + c, 3, true);
                    }
                }
            }
        }
        g
    }
}

/// The egress queue of one tier: every link leaving a node of that tier has it.
#[derive(Clone, Debug, PartialEq)]
pub struct TierQueue {
    /// Queue discipline.
    pub aqm: QdiscConfig,
    /// Buffer limit.
    pub limit: QueueLimit,
}

/// A fabric (`[leaf_spine]` or `[fat_tree]`).
#[derive(Clone, Debug, PartialEq)]
pub struct FabricConfig {
    /// Its shape.
    pub shape: FabricShape,
    /// Rate of every host link (both directions), bits/s.
    pub host_rate: f64,
    /// Rate of every switch-to-switch link (both directions), bits/s.
    pub fabric_rate: f64,
    /// One-way propagation delay of every link, seconds.
    pub delay: f64,
    /// ECMP mode.
    pub ecmp: EcmpMode,
    /// Per tier (in [`FabricShape::tiers`] order): the queue of every link leaving a node of
    /// that tier.
    pub tiers: Vec<TierQueue>,
    /// Monitor every switch's egress link (time series, delay histograms); `false`: none.
    pub monitor: bool,
}

/// Which host sends to which in a flow group on a fabric (scenario key `pattern`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Every host sends to exactly one other host and receives from exactly one (a random
    /// derangement, seeded): `hosts` flows.
    Permutation,
    /// Every host sends to every other host: `hosts x (hosts - 1)` flows.
    AllToAll,
    /// `senders` distinct hosts send to one receiver, all at the group's `start` (the
    /// synchronised answers to one request): `senders` flows.
    Incast {
        /// Number of senders (1 ..= hosts - 1).
        senders: u32,
    },
}

impl Pattern {
    /// The pattern's name in the scenario.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Permutation => "permutation",
            Pattern::AllToAll => "all_to_all",
            Pattern::Incast { .. } => "incast",
        }
    }

    /// Number of flows on a fabric with `hosts` hosts.
    pub fn flows(self, hosts: u64) -> u64 {
        match self {
            Pattern::Permutation => hosts,
            Pattern::AllToAll => hosts * hosts.saturating_sub(1),
            Pattern::Incast { senders } => senders as u64,
        }
    }

    /// The (sender, receiver) host indices of the flows of group `group`, in flow order,
    /// drawn from the scenario `seed` (a stream of their own: other random draws are not
    /// perturbed). `hosts` >= 2.
    pub fn pairs(self, hosts: u32, seed: u64, group: u64) -> Vec<(u32, u32)> {
        let mut rng = Rng::derive(
            derive_seed(seed, Stream::Group, group),
            Stream::Flow,
            0x7061,
        );
        let below =
            |rng: &mut Rng, n: u32| -> u32 { ((rng.next_u32() as u64 * n as u64) >> 32) as u32 };
        match self {
            Pattern::Permutation => {
                // Sattolo's algorithm: a uniformly random cyclic permutation, so no host is
                // its own receiver.
                let mut to: Vec<u32> = (0..hosts).collect();
                for i in (1..hosts as usize).rev() {
                    let j = below(&mut rng, i as u32) as usize;
                    to.swap(i, j);
                }
                (0..hosts).map(|s| (s, to[s as usize])).collect()
            }
            Pattern::AllToAll => (0..hosts)
                .flat_map(|s| (0..hosts).filter(move |&d| d != s).map(move |d| (s, d)))
                .collect(),
            Pattern::Incast { senders } => {
                let rcv = below(&mut rng, hosts);
                // a partial Fisher-Yates shuffle of the other hosts
                let mut others: Vec<u32> = (0..hosts).filter(|&h| h != rcv).collect();
                for i in 0..senders as usize {
                    let j = i + below(&mut rng, (others.len() - i) as u32) as usize;
                    others.swap(i, j);
                }
                others[..senders as usize]
                    .iter()
                    .map(|&s| (s, rcv))
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Al-Fares et al. 2008, section 3.2: k^3/4 hosts, k pods of k/2 edge and k/2
    /// aggregation switches, (k/2)^2 cores, every switch with k ports.
    #[test]
    fn fat_tree_counts() {
        assert_eq!(FabricShape::FatTree { k: 48 }.hosts(), 27_648);
        for k in [2u32, 4, 6, 8] {
            let g = FabricShape::FatTree { k }.graph();
            let hosts = (k * k * k / 4) as usize;
            let count = |p: char| g.nodes.iter().filter(|n| n.starts_with(p)).count();
            assert_eq!(count('h'), hosts);
            assert_eq!(count('e'), (k * k / 2) as usize);
            assert_eq!(count('a'), (k * k / 2) as usize);
            assert_eq!(count('c'), (k * k / 4) as usize);
            // every switch has k ports (k links out), every host one
            let mut deg = vec![0u32; g.nodes.len()];
            for l in &g.links {
                deg[l.from as usize] += 1;
            }
            for (n, d) in g.nodes.iter().zip(&deg) {
                assert_eq!(*d, if n.starts_with('h') { 1 } else { k }, "{n}");
            }
            let names: std::collections::HashSet<_> =
                g.links.iter().map(|l| g.link_name(l)).collect();
            assert_eq!(names.len(), g.links.len(), "link names are unique");
        }
    }

    #[test]
    fn leaf_spine_counts() {
        let g = FabricShape::LeafSpine {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 3,
        }
        .graph();
        assert_eq!(g.nodes.len(), 12 + 4 + 2);
        // 12 host cables + 8 leaf-spine cables, two links each
        assert_eq!(g.links.len(), 2 * (12 + 8));
        assert_eq!(g.links.iter().filter(|l| l.fabric).count(), 16);
        assert_eq!(
            g.nodes[g.links[2 * 5].to as usize],
            "l1",
            "host 5 under leaf 5 / 3"
        );
    }

    /// A permutation: every host sends once and receives once, never to itself; seeded.
    #[test]
    fn permutation_is_a_derangement() {
        for seed in 0..20 {
            let p = Pattern::Permutation.pairs(16, seed, 0);
            assert_eq!(p.len(), 16);
            let mut rcv = [0; 16];
            for &(s, d) in &p {
                assert_ne!(s, d);
                rcv[d as usize] += 1;
            }
            assert!(rcv.iter().all(|&c| c == 1));
            assert_eq!(p, Pattern::Permutation.pairs(16, seed, 0));
        }
        assert_ne!(
            Pattern::Permutation.pairs(16, 1, 0),
            Pattern::Permutation.pairs(16, 2, 0)
        );
    }

    #[test]
    fn all_to_all_and_incast() {
        let a = Pattern::AllToAll.pairs(5, 1, 0);
        assert_eq!(a.len() as u64, Pattern::AllToAll.flows(5));
        let set: std::collections::HashSet<_> = a.iter().copied().collect();
        assert_eq!(set.len(), 20);
        assert!(a.iter().all(|(s, d)| s != d));
        let p = Pattern::Incast { senders: 15 }.pairs(16, 3, 1);
        assert_eq!(p.len(), 15);
        let r = p[0].1;
        assert!(p.iter().all(|&(s, d)| d == r && s != r));
        let senders: std::collections::HashSet<_> = p.iter().map(|x| x.0).collect();
        assert_eq!(senders.len(), 15);
    }
}
