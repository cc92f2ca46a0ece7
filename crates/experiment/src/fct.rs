//! Flow-completion-time slowdown (`fct_slowdown` in `summary.json`, fabrics only): each
//! completed finite flow's FCT divided by its ideal FCT, summarised per size bucket.
//!
//! Ideal FCT of a flow of `size` payload bytes: `8 x size / r + d`, where `r` is the smallest
//! link rate on its data path and `d` the sum of the propagation delays of its data path and
//! of its ACK path (the base RTT): the time to send the payload at the path's line rate on an
//! idle network plus one round trip, as pFabric (Alizadeh et al., SIGCOMM 2013, section 5)
//! and HPCC (Li et al., SIGCOMM 2019) normalise. Headers, store-and-forward serialisation and
//! the receiver's delayed ACK are left out, so a flow's slowdown is above 1.
//! Statistics are exact order statistics (nearest rank: the p-quantile of n values is the
//! `ceil(p x n)`-th smallest).

use serde::{Deserialize, Serialize};

/// The size buckets: `[lo, hi)` bytes, `hi = None` unbounded.
pub const BUCKETS: &[(&str, u64, Option<u64>)] = &[
    ("<100KB", 0, Some(100_000)),
    ("100KB-1MB", 100_000, Some(1_000_000)),
    ("1MB-10MB", 1_000_000, Some(10_000_000)),
    (">10MB", 10_000_000, None),
];

/// One size bucket's slowdowns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlowdownBucket {
    /// `<100KB`, `100KB-1MB`, `1MB-10MB`, `>10MB` or `all`.
    pub bucket: String,
    /// Smallest size in the bucket, bytes.
    pub lo_bytes: u64,
    /// Sizes are below this, bytes (`None`: unbounded).
    pub hi_bytes: Option<u64>,
    /// Completed flows in the bucket.
    pub flows: usize,
    /// Median slowdown (`None` without flows).
    pub p50: Option<f64>,
    /// 99th-percentile slowdown.
    pub p99: Option<f64>,
    /// Mean slowdown.
    pub mean: Option<f64>,
}

/// The nearest-rank p-quantile of sorted values.
fn quantile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

fn bucket(name: &str, lo: u64, hi: Option<u64>, mut v: Vec<f64>) -> SlowdownBucket {
    v.sort_by(f64::total_cmp);
    SlowdownBucket {
        bucket: name.to_string(),
        lo_bytes: lo,
        hi_bytes: hi,
        flows: v.len(),
        p50: quantile(&v, 0.5),
        p99: quantile(&v, 0.99),
        mean: (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
    }
}

/// The buckets of [`BUCKETS`] and `all`, from `(size in bytes, slowdown)` per completed flow.
pub fn slowdowns(flows: impl IntoIterator<Item = (u64, f64)>) -> Vec<SlowdownBucket> {
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); BUCKETS.len()];
    let mut all = Vec::new();
    for (size, s) in flows {
        let i = BUCKETS
            .iter()
            .position(|&(_, lo, hi)| size >= lo && hi.is_none_or(|h| size < h))
            .expect("the buckets cover every size");
        per[i].push(s);
        all.push(s);
    }
    let mut out: Vec<SlowdownBucket> = BUCKETS
        .iter()
        .zip(per)
        .map(|(&(n, lo, hi), v)| bucket(n, lo, hi, v))
        .collect();
    out.push(bucket("all", 0, None, all));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest rank by hand: of 1..=100, p50 is 50 and p99 is 99; of one value, both are it.
    #[test]
    fn buckets_and_ranks() {
        let flows = (1..=100)
            .map(|i| (50_000u64, i as f64))
            .chain([(2_000_000, 7.0)]);
        let b = slowdowns(flows);
        assert_eq!(b.len(), 5);
        assert_eq!(
            (b[0].flows, b[0].p50, b[0].p99),
            (100, Some(50.0), Some(99.0))
        );
        assert_eq!(b[0].mean, Some(50.5));
        assert_eq!((b[1].flows, b[1].p50), (0, None));
        assert_eq!((b[2].flows, b[2].p50, b[2].p99), (1, Some(7.0), Some(7.0)));
        assert_eq!(b[4].flows, 101);
        // bucket edges: 100 kB belongs to the second bucket, 10 MB to the last
        let b = slowdowns([(100_000, 1.0), (99_999, 1.0), (10_000_000, 1.0)]);
        assert_eq!(
            [b[0].flows, b[1].flows, b[2].flows, b[3].flows],
            [1, 1, 0, 1]
        );
    }
}
