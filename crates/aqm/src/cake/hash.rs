//! CAKE's set-associative flow hash and host isolation (Linux `cake_hash`).
//!
//! Each tin has [`CAKE_QUEUES`] flow queues in sets of [`CAKE_SET_WAYS`]. A packet's 32-bit
//! flow hash (the flow key; or, without `CAKE_FLOW_FLOWS`, the source and/or destination
//! host hashes xor-ed) selects a set (`reduced = hash % 1024`, set = `reduced - reduced %
//! 8`). The queue whose tag equals the hash is used: at `reduced` itself while it is in use
//! (a *direct* hit), else any queue of the set carrying that tag (a *way hit* when not at
//! `reduced`); else the first queue of the set not in use, from `reduced % 8` on (a *way
//! miss*); else `reduced` is shared (a *collision*; its bulk flow leaves its hosts' counts).
//! The chosen queue takes the tag.
//!
//! When a queue is (re)allocated and the mode counts hosts (`dual-srchost`, `dual-dsthost`,
//! `triple-isolate`), the source and/or destination host is looked up the same way in the
//! tin's 1024 host records (tag = host hash; a free record is one with no bulk flows) and the
//! flow queue remembers its host indices. The hosts' bulk-flow counts then divide each flow's
//! DRR quantum (`mod.rs`).
//!
//! Hashes: aqmlab's packets carry a 64-bit flow hash and host identities
//! ([`crate::Packet::flow_hash`], [`crate::Packet::src_host`], [`crate::Packet::dst_host`]);
//! they are mixed with the qdisc's seeded key into 32 bits (Linux: `skb_get_hash` and
//! `flow_hash_from_keys` of the addresses, with a boot-time secret).

use super::config::FlowMode;
use crate::flowq::mix64;

/// Flow queues per tin (Linux `CAKE_QUEUES`).
pub const CAKE_QUEUES: usize = 1024;
/// Ways per set (Linux `CAKE_SET_WAYS`).
pub const CAKE_SET_WAYS: usize = 8;

/// Which rotation a flow queue is in (Linux `CAKE_SET_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum FlowSet {
    /// Not in use.
    #[default]
    None,
    /// New (sparse) flow.
    Sparse,
    /// Counted as sparse, in the bulk rotation (it ran out of deficit while empty).
    SparseWait,
    /// Bulk flow.
    Bulk,
    /// Empty, its COBALT state decaying.
    Decaying,
}

/// One host record (Linux `struct cake_host`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Host {
    /// Tag of the source host using this record.
    pub src_tag: u32,
    /// Tag of the destination host using this record.
    pub dst_tag: u32,
    /// Bulk flows of that source host.
    pub src_bulk: u16,
    /// Bulk flows of that destination host.
    pub dst_bulk: u16,
}

/// Hash-table statistics of a tin (`tc -s`: way_directs, way_hits, way_misses,
/// way_collisions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WayStats {
    /// Direct hits.
    pub directs: u64,
    /// Indirect hits (the flow's tag elsewhere in its set).
    pub hits: u64,
    /// Misses (a free queue of the set allocated).
    pub misses: u64,
    /// Collisions (no free queue in the set).
    pub collisions: u64,
}

/// What the hash reads and writes of a flow queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    /// The rotation it is in.
    pub set: FlowSet,
    /// Its source host record.
    pub srchost: u16,
    /// Its destination host record.
    pub dsthost: u16,
}

/// A packet's hashes, 32 bits each as Linux has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    /// Flow (5-tuple) hash.
    pub flow: u32,
    /// Source host hash.
    pub src: u32,
    /// Destination host hash.
    pub dst: u32,
}

impl Keys {
    /// The 32-bit hashes of a packet with flow hash `flow` and hosts `src`, `dst`, under the
    /// qdisc's `key`.
    #[inline]
    pub fn new(key: u64, flow: u64, src: u64, dst: u64) -> Keys {
        let h = |x: u64, salt: u64| (mix64(x ^ key ^ salt) >> 32) as u32;
        Keys {
            flow: h(flow, 0),
            src: h(src, 0x5c5c_0001_0000_0000),
            dst: h(dst, 0xd5d5_0002_0000_0000),
        }
    }
}

/// A tin's tags and host records (Linux `cake_tin_data`: `tags`, `hosts`) and its way
/// statistics.
#[derive(Clone, Debug)]
pub struct TinHash {
    /// Tag of each flow queue.
    pub tags: Vec<u32>,
    /// Host records.
    pub hosts: Vec<Host>,
    /// Way statistics.
    pub ways: WayStats,
}

impl Default for TinHash {
    fn default() -> Self {
        TinHash {
            tags: vec![0; CAKE_QUEUES],
            hosts: vec![Host::default(); CAKE_QUEUES],
            ways: WayStats::default(),
        }
    }
}

impl TinHash {
    /// Linux `cake_hash`: the flow queue of a packet with hashes `k` under `mode`, updating
    /// tags, host records and the way statistics. `slots` are the tin's flow queues.
    pub fn lookup(&mut self, slots: &mut [Slot], mode: FlowMode, k: Keys) -> usize {
        if mode == FlowMode::Flowblind {
            return 0;
        }
        let bits = mode.bits();
        let mut flow_hash = if mode.flows() { k.flow } else { 0 };
        if !mode.flows() {
            if bits & 1 != 0 {
                flow_hash ^= k.src;
            }
            if bits & 2 != 0 {
                flow_hash ^= k.dst;
            }
        }
        let mut reduced = flow_hash as usize % CAKE_QUEUES;
        if self.tags[reduced] == flow_hash && slots[reduced].set != FlowSet::None {
            self.ways.directs += 1;
            return reduced;
        }
        let inner = reduced % CAKE_SET_WAYS;
        let outer = reduced - inner;
        let (dsrc, ddst) = (mode.dual_src(), mode.dual_dst());
        let mut k_way = inner;
        let mut alloc = None;
        for i in 0..CAKE_SET_WAYS {
            if self.tags[outer + k_way] == flow_hash {
                if i > 0 {
                    self.ways.hits += 1;
                }
                alloc = Some(slots[outer + k_way].set == FlowSet::None);
                break;
            }
            k_way = (k_way + 1) % CAKE_SET_WAYS;
        }
        let allocate = match alloc {
            Some(a) => a,
            None => {
                let mut found = false;
                for _ in 0..CAKE_SET_WAYS {
                    if slots[outer + k_way].set == FlowSet::None {
                        self.ways.misses += 1;
                        found = true;
                        break;
                    }
                    k_way = (k_way + 1) % CAKE_SET_WAYS;
                }
                if !found {
                    // No empty queue: share the original one; its bulk flow leaves its hosts.
                    self.ways.collisions += 1;
                    if slots[outer + k_way].set == FlowSet::Bulk {
                        let s = slots[reduced];
                        self.hosts[s.srchost as usize].src_bulk =
                            self.hosts[s.srchost as usize].src_bulk.saturating_sub(1);
                        self.hosts[s.dsthost as usize].dst_bulk =
                            self.hosts[s.dsthost as usize].dst_bulk.saturating_sub(1);
                    }
                }
                true
            }
        };
        reduced = outer + k_way;
        self.tags[reduced] = flow_hash;
        if allocate && dsrc {
            let idx = self.host_index(k.src, true);
            if slots[reduced].set == FlowSet::Bulk {
                self.hosts[idx].src_bulk += 1;
            }
            slots[reduced].srchost = idx as u16;
        }
        if allocate && ddst {
            let idx = self.host_index(k.dst, false);
            if slots[reduced].set == FlowSet::Bulk {
                self.hosts[idx].dst_bulk += 1;
            }
            slots[reduced].dsthost = idx as u16;
        }
        reduced
    }

    /// The host record of host hash `h` (source or destination): the set's record tagged
    /// `h`, else the first with no bulk flows (tagged `h` then), else the first probed.
    fn host_index(&mut self, h: u32, src: bool) -> usize {
        let idx = h as usize % CAKE_QUEUES;
        let inner = idx % CAKE_SET_WAYS;
        let outer = idx - inner;
        let tag = |x: &Host| if src { x.src_tag } else { x.dst_tag };
        let bulk = |x: &Host| if src { x.src_bulk } else { x.dst_bulk };
        let mut k = inner;
        for _ in 0..CAKE_SET_WAYS {
            if tag(&self.hosts[outer + k]) == h {
                return outer + k;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        for _ in 0..CAKE_SET_WAYS {
            if bulk(&self.hosts[outer + k]) == 0 {
                break;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        let rec = &mut self.hosts[outer + k];
        if src {
            rec.src_tag = h;
        } else {
            rec.dst_tag = h;
        }
        outer + k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(flow: u32, src: u32, dst: u32) -> Keys {
        Keys { flow, src, dst }
    }

    /// The way logic by hand (Linux `cake_hash`): hashes 5, 1029 and 2053 all reduce to
    /// queue 5 (set 0..8, way 5). The first takes 5 (a miss: tag 0 there is not 5), then is
    /// a direct hit while in use; the second finds 5 in use with another tag and takes the
    /// next free way, 6 (a miss), the third 7; a flow whose tag is at 6 is a way hit. With
    /// all 8 ways in use a ninth hash of the set collides and shares queue 5.
    #[test]
    fn ways_by_hand() {
        let mut t = TinHash::default();
        let mut s = vec![Slot::default(); CAKE_QUEUES];
        let m = FlowMode::Flows;
        let a = t.lookup(&mut s, m, keys(5, 0, 0));
        assert_eq!((a, t.ways.misses), (5, 1));
        s[a].set = FlowSet::Bulk;
        assert_eq!(t.lookup(&mut s, m, keys(5, 0, 0)), 5);
        assert_eq!(t.ways.directs, 1);
        let b = t.lookup(&mut s, m, keys(1029, 0, 0));
        assert_eq!((b, t.ways.misses), (6, 2));
        s[b].set = FlowSet::Sparse;
        let c = t.lookup(&mut s, m, keys(2053, 0, 0));
        assert_eq!(c, 7);
        s[c].set = FlowSet::Sparse;
        // 1029 again: queue 5 holds another tag; its tag is found at way 6 (i = 1): a hit.
        assert_eq!(t.lookup(&mut s, m, keys(1029, 0, 0)), 6);
        assert_eq!(t.ways.hits, 1);
        // Fill the set: ways 0..4 (probing wraps from 5 to 0).
        for (i, h) in [3077u32, 4101, 5125, 6149, 7173].iter().enumerate() {
            let q = t.lookup(&mut s, m, keys(*h, 0, 0));
            assert_eq!(q, i, "{h}");
            s[q].set = FlowSet::Sparse;
        }
        let before = t.ways;
        let q = t.lookup(&mut s, m, keys(8197, 0, 0));
        assert_eq!(q, 5, "a collision shares the original queue");
        assert_eq!(t.ways.collisions, before.collisions + 1);
        assert_eq!(t.tags[5], 8197);
    }

    /// Host records: two flows of one source host share its record; a bulk flow counts there.
    #[test]
    fn hosts_share_records() {
        let mut t = TinHash::default();
        let mut s = vec![Slot::default(); CAKE_QUEUES];
        let m = FlowMode::DualSrchost;
        let a = t.lookup(&mut s, m, keys(10, 77, 1));
        let b = t.lookup(&mut s, m, keys(11, 77, 2));
        assert_ne!(a, b);
        assert_eq!(s[a].srchost, s[b].srchost);
        assert_eq!(s[a].srchost as usize, 77 % CAKE_QUEUES);
        let c = t.lookup(&mut s, m, keys(12, 78, 1));
        assert_ne!(s[c].srchost, s[a].srchost);
        // srchost mode: the queue is the source host's (no flow hash).
        let mut t2 = TinHash::default();
        let mut s2 = vec![Slot::default(); CAKE_QUEUES];
        let x = t2.lookup(&mut s2, FlowMode::Srchost, keys(10, 77, 1));
        let y = t2.lookup(&mut s2, FlowMode::Srchost, keys(11, 77, 2));
        assert_eq!((x, y), (77, 77));
        assert_eq!(t2.lookup(&mut s2, FlowMode::Flowblind, keys(1, 2, 3)), 0);
    }
}
