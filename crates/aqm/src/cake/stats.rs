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

#[cfg(test)]
mod tests {
    use super::*;

    /// `cake_ewma` by hand: from 0, a sample of 256 000 ns with shift 8 gives 1000; again
    /// 1000 - 3 + 1000 = 1997 (1000 >> 8 = 3).
    #[test]
    fn ewma_by_hand() {
        assert_eq!(ewma(0, 256_000, 8), 1000);
        assert_eq!(ewma(1000, 256_000, 8), 1997);
        assert_eq!(ewma(1000, 0, 2), 750);
    }
}
