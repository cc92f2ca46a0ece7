//! CAKE's per-tin statistics, as `tc -s qdisc show` prints them (Linux `cake_dump_stats`:
//! `TCA_CAKE_TIN_STATS_*`), and the EWMA that keeps the delays (`cake_ewma`).

use super::hash::WayStats;

/// Linux `cake_ewma`: `avg - avg >> shift + sample >> shift`.
#[inline]
pub fn ewma(avg: u64, sample: u64, shift: u32) -> u64 {
    avg - (avg >> shift) + (sample >> shift)
}

/// One tin's statistics (Linux `struct cake_tin_data`'s counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TinStats {
    /// Threshold rate, bytes/s (0: unlimited).
    pub threshold_rate: u64,
    /// COBALT target, ns.
    pub target_ns: u64,
    /// COBALT interval, ns.
    pub interval_ns: u64,
    /// Packets accepted into the tin (Linux counts them at enqueue: `b->packets`;
    /// ACK-filtered ones included).
    pub packets: u64,
    /// Bytes accepted into the tin (`b->bytes`).
    pub bytes: u64,
    /// Packets dropped by COBALT and by the overflow rule (`tin_dropped`).
    pub drops: u64,
    /// Packets CE-marked (`tin_ecn_mark`).
    pub marks: u64,
    /// Pure ACKs dropped by the ACK filter (`ack_drops`).
    pub ack_drops: u64,
    /// Packets dropped at the memory limit (`drop_overlimit`).
    pub overlimit_drops: u64,
    /// Peak delay EWMA, ns (`peak_delay`: up 1/4, down 1/256 per packet).
    pub peak_delay_ns: u64,
    /// Average delay EWMA, ns (`avge_delay`: 1/256 per packet).
    pub avg_delay_ns: u64,
    /// Base delay EWMA, ns (`base_delay`: down 1/4, up 1/256 per packet).
    pub base_delay_ns: u64,
    /// Hash statistics.
    pub ways: WayStats,
    /// Sparse flows now (`sparse_flow_count + decaying_flow_count`, as `tc` shows them).
    pub sparse_flows: u32,
    /// Bulk flows now.
    pub bulk_flows: u32,
    /// Unresponsive flows now (BLUE active).
    pub unresponsive_flows: u32,
    /// Largest packet seen, bytes (`max_skblen`).
    pub max_len: u32,
    /// Per-flow DRR quantum, bytes.
    pub flow_quantum: u32,
    /// Bytes queued now (`tin_backlog`).
    pub backlog_bytes: u64,
}

impl TinStats {
    /// The statistics of a window that began when `base` was taken (the summary's
    /// `[warmup, end]`): the counters (`packets`, `bytes`, `drops`, `marks`, `ack_drops`,
    /// `overlimit_drops`, the way counters) as differences; the rest as they are now: the
    /// delay EWMAs and flow counts are states at the end, `max_len` the largest packet since
    /// the qdisc was built, the threshold, COBALT parameters and quantum its configuration.
    pub fn since(&self, base: &TinStats) -> TinStats {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        TinStats {
            packets: d(self.packets, base.packets),
            bytes: d(self.bytes, base.bytes),
            drops: d(self.drops, base.drops),
            marks: d(self.marks, base.marks),
            ack_drops: d(self.ack_drops, base.ack_drops),
            overlimit_drops: d(self.overlimit_drops, base.overlimit_drops),
            ways: WayStats {
                directs: d(self.ways.directs, base.ways.directs),
                hits: d(self.ways.hits, base.ways.hits),
                misses: d(self.ways.misses, base.ways.misses),
                collisions: d(self.ways.collisions, base.ways.collisions),
            },
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `since`: the ten counters are differences, everything else is the current value.
    #[test]
    fn since_subtracts_counters_only() {
        let base = TinStats {
            packets: 10,
            bytes: 15_000,
            drops: 2,
            marks: 1,
            ack_drops: 3,
            overlimit_drops: 1,
            ways: WayStats {
                directs: 5,
                hits: 1,
                misses: 4,
                collisions: 0,
            },
            peak_delay_ns: 9,
            max_len: 1500,
            ..Default::default()
        };
        let now = TinStats {
            threshold_rate: 1_250_000,
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            packets: 25,
            bytes: 37_000,
            drops: 5,
            marks: 4,
            ack_drops: 3,
            overlimit_drops: 2,
            peak_delay_ns: 7,
            avg_delay_ns: 6,
            base_delay_ns: 5,
            ways: WayStats {
                directs: 20,
                hits: 3,
                misses: 6,
                collisions: 1,
            },
            sparse_flows: 2,
            bulk_flows: 1,
            unresponsive_flows: 1,
            max_len: 1514,
            flow_quantum: 305,
            backlog_bytes: 3000,
        };
        let w = now.since(&base);
        assert_eq!(
            (
                w.packets,
                w.bytes,
                w.drops,
                w.marks,
                w.ack_drops,
                w.overlimit_drops
            ),
            (15, 22_000, 3, 3, 0, 1)
        );
        assert_eq!(
            w.ways,
            WayStats {
                directs: 15,
                hits: 2,
                misses: 2,
                collisions: 1
            }
        );
        // Everything but the counters is kept as it is now.
        let without_counters = |t: TinStats| TinStats {
            packets: 0,
            bytes: 0,
            drops: 0,
            marks: 0,
            ack_drops: 0,
            overlimit_drops: 0,
            ways: WayStats::default(),
            ..t
        };
        assert_eq!(without_counters(w), without_counters(now));
        assert_eq!(now.since(&TinStats::default()), now);
    }

    /// `cake_ewma` by hand: from 0, a sample of 256 000 ns with shift 8 gives 1000; again
    /// 1000 - 3 + 1000 = 1997 (1000 >> 8 = 3).
    #[test]
    fn ewma_by_hand() {
        assert_eq!(ewma(0, 256_000, 8), 1000);
        assert_eq!(ewma(1000, 256_000, 8), 1997);
        assert_eq!(ewma(1000, 0, 2), 750);
    }
}
