//! Bounded-memory statistics: a log-linear histogram for queue delays and the
//! per-link monitor state sampled every `sample_interval`.

use std::collections::BTreeMap;

use aqm::{Qdisc, QueueStats};

use crate::results::{ClassSeries, ClassSummary, DelayHistogram, DelayStats};
use crate::time::Ns;

/// Sub-bucket bits of [`LogHistogram`]: each power-of-two range is split into
/// `2^SUB_BITS = 32` equal bins.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Number of bins: values below 32 are exact, then 59 octaves of 32 bins.
const BINS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// Log-linear (HDR-style) histogram of non-negative integers (nanoseconds).
///
/// Values `< 32` are recorded exactly; a larger value `v` in octave
/// `[2^e, 2^(e+1))` falls into one of 32 equal bins of width `2^(e-5)`, so a
/// bin's width is at most 1/32 of its lower edge. Quantiles report the bin
/// midpoint: **relative error at most 1/64 (1.6 %)**. The mean is exact (kept
/// as a sum). Memory is fixed: 1920 `u64` counters (15 KiB).
#[derive(Clone, Debug)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
}

impl Default for LogHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LogHistogram {
            counts: vec![0; BINS],
            total: 0,
            sum: 0,
        }
    }

    #[inline]
    fn index(v: u64) -> usize {
        if v < SUB {
            v as usize
        } else {
            let e = 63 - v.leading_zeros(); // e >= SUB_BITS
            let m = (v >> (e - SUB_BITS)) & (SUB - 1);
            ((e - SUB_BITS + 1) as u64 * SUB + m) as usize
        }
    }

    /// Midpoint of bin `i` (exact value for the first 32 bins).
    fn midpoint(i: usize) -> f64 {
        let i = i as u64;
        if i < SUB {
            i as f64
        } else {
            let e = i / SUB + SUB_BITS as u64 - 1;
            let m = i % SUB;
            let width = 1u64 << (e - SUB_BITS as u64);
            let low = (SUB + m) << (e - SUB_BITS as u64);
            low as f64 + width as f64 / 2.0
        }
    }

    /// Value range `[lo, hi)` of bin `i` (`hi - lo <= lo / 32`; width 1 below 32).
    pub fn bin_range(i: usize) -> (u64, u64) {
        let i = i as u64;
        if i < SUB {
            (i, i + 1)
        } else {
            let e = i / SUB + SUB_BITS as u64 - 1;
            let m = i % SUB;
            let shift = e - SUB_BITS as u64;
            let low = (SUB + m) << shift;
            // The last bin's upper edge is 2^64, which saturates to u64::MAX.
            (low, low.saturating_add(1u64 << shift))
        }
    }

    /// The non-empty bins in increasing order: `(lo, hi, count)` with values in `[lo, hi)`.
    pub fn nonempty_bins(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = Self::bin_range(i);
                (lo, hi, c)
            })
    }

    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
        self.sum += v as u128;
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Exact mean, 0 if empty.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The `q`-quantile (`0 <= q <= 1`), within 1.6 % relative error; 0 if
    /// empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return Self::midpoint(i);
            }
        }
        Self::midpoint(BINS - 1)
    }

    /// Forgets everything (end of warm-up).
    pub fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
        self.sum = 0;
    }
}

impl DelayHistogram {
    /// The non-empty bins of a monitor's delay histogram (ns) in the summary's form (ms).
    pub fn from_log(h: &LogHistogram) -> Self {
        let mut out = DelayHistogram::default();
        for (lo, hi, c) in h.nonempty_bins() {
            out.lo_ms.push(lo as f64 / 1e6);
            out.hi_ms.push(hi as f64 / 1e6);
            out.counts.push(c);
        }
        out
    }
}

/// Sub-bucket bits of [`FlowHistogram`]: 16 bins per power of two.
const FLOW_SUB_BITS: u32 = 4;
const FLOW_SUB: u64 = 1 << FLOW_SUB_BITS;
/// [`FlowHistogram::base`] of a sparse histogram: above every bin index (at most 975), so
/// that the dense test in [`FlowHistogram::record`] fails for it without a branch of its own.
const SPARSE: u16 = u16::MAX;
/// Distinct bins a sparse [`FlowHistogram`] holds before it turns dense (128 bytes).
const SPARSE_MAX: usize = 32;
/// Bits of a sparse entry's count (the bin index takes the top 10: bins are below 1024).
const SPARSE_COUNT_BITS: u32 = 22;
const SPARSE_COUNT_MAX: u32 = (1 << SPARSE_COUNT_BITS) - 1;

/// A small log-linear histogram of non-negative integers (nanoseconds) for per-flow delays.
///
/// The same scheme as [`LogHistogram`] with 16 bins per power of two instead of 32: values
/// below 16 are exact, a larger value in `[2^e, 2^(e+1))` falls into one of 16 equal bins of
/// width `2^(e-4)`, so quantiles read at a bin's midpoint are **within 1/32 (3.1 %)** of the
/// exact order statistic; the mean is exact (kept as a sum). Memory is bounded (at most 977
/// counters) and in practice small. A histogram starts *sparse*: one four-byte entry per
/// non-empty bin (its index and count), sorted by bin, up to 32 of them, so a flow with a
/// few packets whose delays span nanoseconds to hundreds of milliseconds (a million flows
/// on one bottleneck) holds a few entries instead of the 430 counters between its extremes.
/// On its 33rd distinct bin (or a count beyond 2^22 - 1 in one), or when its values span
/// at most 32 bins, it turns *dense*: the counters of every bin between the smallest and
/// the largest value seen (a flow whose delays span 60-300 ms holds 38), grown only when a
/// value falls outside them, never per recorded value otherwise, and read inline by
/// [`FlowHistogram::record`]; a dense histogram widened past 32 bins while fewer hold
/// values turns sparse again. The bins, and so every figure read from them, are the same in
/// both forms.
#[derive(Clone, Debug, Default)]
pub struct FlowHistogram {
    /// Bin index of `counts[0]` when dense; [`SPARSE`] when sparse.
    base: u16,
    /// Dense: values per bin (at most 2^32 - 1 per bin: 4.3 billion packets of one flow in
    /// one bin). Sparse: `bin << 22 | count` per non-empty bin, sorted by bin.
    counts: Vec<u32>,
    /// Sum of the values (ns), for the exact mean.
    sum: u64,
}

impl PartialEq for FlowHistogram {
    /// Equal if they hold the same values in the same bins, whatever their form.
    fn eq(&self, other: &Self) -> bool {
        self.sum == other.sum && self.bins().eq(other.bins())
    }
}

impl FlowHistogram {
    /// The bin of `v`: `v` itself below 16, else `(e - 4) * 16 + (v >> (e - 4))` in octave
    /// `e` (`2^e <= v < 2^(e+1)`), without a branch.
    #[inline(always)]
    fn index(v: u64) -> usize {
        let e = 63 - (v | FLOW_SUB).leading_zeros();
        let shift = e - FLOW_SUB_BITS;
        ((shift as u64) * FLOW_SUB + (v >> shift)) as usize
    }

    /// Value range `[lo, hi)` of bin `i`.
    fn bin_range(i: usize) -> (u64, u64) {
        let i = i as u64;
        if i < FLOW_SUB {
            (i, i + 1)
        } else {
            let e = i / FLOW_SUB + FLOW_SUB_BITS as u64 - 1;
            let shift = e - FLOW_SUB_BITS as u64;
            let low = (FLOW_SUB + i % FLOW_SUB) << shift;
            (low, low.saturating_add(1u64 << shift))
        }
    }

    fn midpoint(i: usize) -> f64 {
        let (lo, hi) = Self::bin_range(i);
        if hi - lo == 1 {
            lo as f64
        } else {
            lo as f64 + (hi - lo) as f64 / 2.0
        }
    }

    /// The non-empty bins in increasing order: `(bin, count)`.
    fn bins(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let (sparse, base) = (self.base == SPARSE, self.base as usize);
        self.counts
            .iter()
            .enumerate()
            .map(move |(k, &c)| {
                if sparse {
                    ((c >> SPARSE_COUNT_BITS) as usize, c & SPARSE_COUNT_MAX)
                } else {
                    (base + k, c)
                }
            })
            .filter(|&(_, c)| c > 0)
    }

    /// Records one value (a bin index, a bounds test, two additions; a sparse histogram
    /// fails the bounds test and takes [`FlowHistogram::add`]).
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        let k = i.wrapping_sub(self.base as usize);
        if k < self.counts.len() {
            self.counts[k] += 1;
        } else {
            self.add(i, 1);
        }
        self.sum = self.sum.wrapping_add(v);
    }

    /// Adds `n` values to bin `i` outside the dense range (or in a sparse or empty
    /// histogram): out of line, as it runs for a flow's first values and new extremes.
    #[inline(never)]
    fn add(&mut self, i: usize, n: u32) {
        if self.counts.is_empty() {
            if n > SPARSE_COUNT_MAX {
                (self.base, self.counts) = (i as u16, vec![n]);
                return;
            }
            self.base = SPARSE;
        } else if self.base != SPARSE && self.few_bins_wide(i) {
            self.sparsify();
        }
        if self.base == SPARSE {
            let pos = self
                .counts
                .partition_point(|&e| ((e >> SPARSE_COUNT_BITS) as usize) < i);
            let found = self.counts.get(pos).copied();
            if let Some(e) = found.filter(|&e| (e >> SPARSE_COUNT_BITS) as usize == i) {
                // bin `i` has an entry: add to it unless its count would overflow
                if (e & SPARSE_COUNT_MAX) as u64 + (n as u64) <= SPARSE_COUNT_MAX as u64 {
                    self.counts[pos] = e + n;
                    return;
                }
            } else if self.counts.len() < SPARSE_MAX
                && n <= SPARSE_COUNT_MAX
                && !self.dense_is_small(i)
            {
                self.counts
                    .insert(pos, ((i as u32) << SPARSE_COUNT_BITS) | n);
                return;
            }
            self.densify();
        }
        let k = self.slot(i);
        self.counts[k] = self.counts[k].saturating_add(n);
    }

    /// True if a non-empty sparse histogram with bin `i` added would span at most
    /// [`SPARSE_MAX`] bins: dense then takes no more memory than a full sparse one, and
    /// records inline.
    fn dense_is_small(&self, i: usize) -> bool {
        let (Some(&first), Some(&last)) = (self.counts.first(), self.counts.last()) else {
            return false;
        };
        let (first, last) = (
            (first >> SPARSE_COUNT_BITS) as usize,
            (last >> SPARSE_COUNT_BITS) as usize,
        );
        last.max(i) - first.min(i) < SPARSE_MAX
    }

    /// True if a dense histogram widened to bin `i` would span more than [`SPARSE_MAX`]
    /// bins while fewer than that hold values (it turned dense while its values were close
    /// together): sparse is then smaller.
    fn few_bins_wide(&self, i: usize) -> bool {
        let (base, len) = (self.base as usize, self.counts.len());
        let span = (base + len - 1).max(i) - base.min(i) + 1;
        span > SPARSE_MAX
            && self.counts.iter().filter(|&&c| c > 0).count() < SPARSE_MAX
            && self.counts.iter().all(|&c| c <= SPARSE_COUNT_MAX)
    }

    /// Turns a dense histogram sparse (an entry per non-empty bin).
    #[cold]
    fn sparsify(&mut self) {
        let base = self.base as u32;
        self.counts = (self.counts.iter().enumerate())
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| ((base + k as u32) << SPARSE_COUNT_BITS) | c)
            .collect();
        self.base = SPARSE;
    }

    /// Turns a sparse histogram dense (its counters from its smallest to its largest bin).
    #[cold]
    fn densify(&mut self) {
        let sparse = std::mem::take(&mut self.counts);
        let first = (sparse[0] >> SPARSE_COUNT_BITS) as usize;
        let last = (sparse[sparse.len() - 1] >> SPARSE_COUNT_BITS) as usize;
        self.base = first as u16;
        self.counts = vec![0; last - first + 1];
        for e in sparse {
            self.counts[(e >> SPARSE_COUNT_BITS) as usize - first] = e & SPARSE_COUNT_MAX;
        }
    }

    /// The position of bin `i` in a dense `counts`, widening the stored range if needed.
    fn slot(&mut self, i: usize) -> usize {
        let base = self.base as usize;
        if i < base {
            let mut c = vec![0u32; base - i];
            c.extend_from_slice(&self.counts);
            self.counts = c;
            self.base = i as u16;
        } else if i - base >= self.counts.len() {
            self.counts.resize(i - base + 1, 0);
        }
        i - self.base as usize
    }

    /// Adds `other`'s values (the bins are the same in every histogram).
    pub fn merge(&mut self, other: &FlowHistogram) {
        for (i, c) in other.bins() {
            let k = i.wrapping_sub(self.base as usize);
            if k < self.counts.len() {
                self.counts[k] = self.counts[k].saturating_add(c);
            } else {
                self.add(i, c);
            }
        }
        self.sum = self.sum.wrapping_add(other.sum);
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.bins().map(|(_, c)| c as u64).sum()
    }

    /// Exact mean, 0 if empty.
    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }

    /// The `q`-quantile (`0 <= q <= 1`) within 3.1 % relative error; 0 if empty.
    pub fn quantile(&self, q: f64) -> f64 {
        let total = self.count();
        if total == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut acc = 0u64;
        let mut last = 0;
        for (i, c) in self.bins() {
            acc += c as u64;
            last = i;
            if acc >= rank {
                break;
            }
        }
        Self::midpoint(last)
    }

    /// Mean and quantiles in milliseconds, `None` if empty.
    pub fn stats_ms(&self) -> Option<DelayStats> {
        (self.count() > 0).then(|| DelayStats {
            mean: self.mean() / 1e6,
            p50: self.quantile(0.5) / 1e6,
            p95: self.quantile(0.95) / 1e6,
            p99: self.quantile(0.99) / 1e6,
        })
    }

    /// Forgets every value and keeps its memory (end of warm-up).
    pub fn clear(&mut self) {
        if self.base == SPARSE {
            self.counts.clear();
        } else {
            self.counts.iter_mut().for_each(|c| *c = 0);
        }
        self.sum = 0;
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * 4
    }
}

/// Per-link monitoring state: the post-warm-up delay histogram and the
/// running sums of the current sample interval.
#[derive(Clone, Debug, Default)]
pub struct LinkMonitor {
    /// Queue sojourn times (ns) of packets dequeued after warm-up.
    pub delay: LogHistogram,
    /// Sum of sojourn times (ns) dequeued in the current interval.
    pub interval_delay_sum: u64,
    /// Packets dequeued in the current interval.
    pub interval_delay_count: u64,
    /// Link counters at the start of the current interval (arrivals, drops,
    /// marks, transmitted bytes).
    pub last: [u64; 4],
    /// Post-warm-up sojourn times per class of a class-based qdisc (empty for a FIFO).
    pub classes: Vec<LogHistogram>,
    /// Class counters at the start of the current interval (sent bytes, drops, marks), one
    /// entry per class.
    pub class_last: Vec<[u64; 3]>,
    /// Per class, the sum of sojourn times (ns) and the packets dequeued in the current
    /// interval.
    pub class_interval: Vec<IntervalDelay>,
    /// Post-warm-up sojourn times per flow, indexed by flow id (grown when a flow's first
    /// packet leaves the queue).
    pub flows: Vec<FlowHistogram>,
    /// Flows with an id at or above this (the simulator's pooled short flows) keep their
    /// sojourn times in `pooled` instead, which forgets a flow when it finishes
    /// ([`LinkMonitor::take_flow`]); `None`: every flow in `flows`.
    pub pooled_from: Option<u32>,
    /// Post-warm-up sojourn times of the running pooled flows, by flow id.
    pub pooled: std::collections::HashMap<u32, FlowHistogram>,
}

/// Sojourn times of one sample interval: their sum (ns) and count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalDelay {
    /// Sum of sojourn times, ns.
    pub sum: u64,
    /// Packets dequeued.
    pub count: u64,
}

impl IntervalDelay {
    /// Counts one sojourn time.
    #[inline]
    pub fn record(&mut self, sojourn: Ns) {
        self.sum += sojourn;
        self.count += 1;
    }

    /// The mean in ms, NaN if no packet left the queue in the interval.
    pub fn mean_ms(&self) -> f64 {
        if self.count > 0 {
            self.sum as f64 / self.count as f64 / 1e6
        } else {
            f64::NAN
        }
    }
}

impl LinkMonitor {
    /// Records the sojourn time of a dequeued packet of flow `flow`.
    #[inline(always)]
    pub fn on_dequeue(&mut self, sojourn: Ns, after_warmup: bool, flow: u32) {
        self.interval_delay_sum += sojourn;
        self.interval_delay_count += 1;
        if after_warmup {
            self.delay.record(sojourn);
            match self.flows.get_mut(flow as usize) {
                Some(h) => h.record(sojourn),
                None => self.first_of_flow(flow, sojourn),
            }
        }
    }

    /// The first sojourn of a flow with a higher id than any seen so far, or any of a pooled
    /// flow.
    #[cold]
    #[inline(never)]
    fn first_of_flow(&mut self, flow: u32, sojourn: Ns) {
        if self.pooled_from.is_some_and(|p| flow >= p) {
            self.pooled.entry(flow).or_default().record(sojourn);
            return;
        }
        self.flows
            .resize_with(flow as usize + 1, FlowHistogram::default);
        self.flows[flow as usize].record(sojourn);
    }

    /// Records the sojourn time of a packet of class `class`: in the interval's sums always,
    /// in the class's histogram after the warm-up.
    #[inline]
    pub fn on_class_dequeue(&mut self, class: u8, sojourn: Ns, after_warmup: bool) {
        if let Some(d) = self.class_interval.get_mut(class as usize) {
            d.record(sojourn);
        }
        if after_warmup {
            if let Some(h) = self.classes.get_mut(class as usize) {
                h.record(sojourn);
            }
        }
    }

    /// Keeps one histogram per class of a qdisc with `n` classes (0 for a FIFO).
    pub fn set_classes(&mut self, n: usize) {
        self.classes.resize_with(n, LogHistogram::new);
        self.classes.truncate(n);
        self.class_last.resize(n, [0; 3]);
        self.class_last.truncate(n);
        self.class_interval.resize(n, IntervalDelay::default());
        self.class_interval.truncate(n);
    }

    /// The post-warm-up sojourn times of flow `flow`'s packets (None if none left the queue
    /// after the warm-up).
    pub fn flow_delay(&self, flow: u32) -> Option<&FlowHistogram> {
        self.flows
            .get(flow as usize)
            .or_else(|| self.pooled.get(&flow))
            .filter(|h| h.count() > 0)
    }

    /// Forgets pooled flow `flow`'s sojourn times (it finished).
    pub fn take_flow(&mut self, flow: u32) -> Option<FlowHistogram> {
        self.pooled.remove(&flow)
    }
}

/// Counters of every class of `q` now (none for a FIFO): the base a statistics window's
/// per-class differences start from ([`class_summaries`]).
pub fn class_base<P: aqm::Packet>(q: &Qdisc<P>) -> Vec<QueueStats> {
    (0..q.num_classes())
        .map(|c| q.class_stats(c).unwrap_or_default())
        .collect()
}

/// Class `ci`'s counters as the monitor differences them: sent bytes, drops, marks.
pub fn class_counters<P: aqm::Packet>(q: &Qdisc<P>, ci: usize) -> [u64; 3] {
    let s = q.class_stats(ci).unwrap_or_default();
    [s.dequeued_bytes, s.dropped(), s.marked]
}

/// Appends one row per class of `q` (none for a FIFO) to the numeric columns of `cs` for the
/// interval ending at `t` (s): the class's queue now, its counters since `last[class]`
/// ([`class_counters`] at the interval's start; a missing entry counts from zero) and the mean
/// sojourn time of its packets dequeued in the interval (`interval[class]`). The
/// caller fills `link` and `class` (the simulator names them at the end, the emulator at
/// once). Returns the number of rows. Used by the simulator and the emulator alike.
pub fn push_class_rows<P: aqm::Packet>(
    cs: &mut ClassSeries,
    q: &Qdisc<P>,
    last: &[[u64; 3]],
    interval: &[IntervalDelay],
    t: f64,
) -> usize {
    let n = q.num_classes();
    for ci in 0..n {
        let (pkts, bytes) = q.class_len(ci).unwrap_or_default();
        let cur = class_counters(q, ci);
        let last = last.get(ci).copied().unwrap_or_default();
        let delay = interval.get(ci).copied().unwrap_or_default();
        cs.queue_delay_ms_mean.push(delay.mean_ms());
        cs.time_s.push(t);
        cs.queue_pkts.push(pkts as u64);
        cs.queue_bytes.push(bytes);
        cs.tx_bytes.push(cur[0].saturating_sub(last[0]));
        cs.drops.push(cur[1].saturating_sub(last[1]));
        cs.marks.push(cur[2].saturating_sub(last[2]));
    }
    n
}

/// CAKE's per-tin statistics of `q` now (none for other qdisc kinds): the base a statistics
/// window's tin counters start from ([`cake_tins`]).
pub fn cake_tin_base<P: aqm::Packet>(q: &Qdisc<P>) -> Vec<aqm::cake::stats::TinStats> {
    q.as_cake().map_or_else(Vec::new, |c| {
        (0..c.tin_count()).filter_map(|i| c.tin_stats(i)).collect()
    })
}

/// CAKE's per-tin statistics of `q` by tin name (empty for other qdisc kinds) over a
/// statistics window: the counters since `base` (from [`cake_tin_base`] at the window's
/// start; a missing entry counts from zero), the rest as they are now
/// ([`aqm::cake::stats::TinStats::since`]). Used by the simulator and the emulator alike.
pub fn cake_tins<P: aqm::Packet>(
    q: &Qdisc<P>,
    base: &[aqm::cake::stats::TinStats],
) -> BTreeMap<String, crate::results::CakeTinStats> {
    let mut out = BTreeMap::new();
    let Some(c) = q.as_cake() else {
        return out;
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    for i in 0..c.tin_count() {
        let Some(t) = c.tin_stats(i) else { continue };
        let t = t.since(&base.get(i).copied().unwrap_or_default());
        out.insert(
            q.class_name(i).unwrap_or_default().to_string(),
            crate::results::CakeTinStats {
                threshold_bps: t.threshold_rate as f64 * 8.0,
                target_ms: ms(t.target_ns),
                interval_ms: ms(t.interval_ns),
                packets: t.packets,
                bytes: t.bytes,
                drops: t.drops,
                marks: t.marks,
                ack_drops: t.ack_drops,
                overlimit_drops: t.overlimit_drops,
                peak_delay_ms: ms(t.peak_delay_ns),
                avg_delay_ms: ms(t.avg_delay_ns),
                base_delay_ms: ms(t.base_delay_ns),
                way_directs: t.ways.directs,
                way_hits: t.ways.hits,
                way_misses: t.ways.misses,
                way_collisions: t.ways.collisions,
                sparse_flows: t.sparse_flows,
                bulk_flows: t.bulk_flows,
                unresponsive_flows: t.unresponsive_flows,
                max_len: t.max_len,
                flow_quantum: t.flow_quantum,
            },
        );
    }
    out
}

/// Per-class summaries of the class-based qdisc `q` (drr/wfq classes by name, DualPI2's
/// `l`/`c`; empty for a FIFO) over a statistics window: counters since `base` (from
/// [`class_base`] at the window's start; a missing entry counts from zero) and sojourn
/// times (ns, recorded after the warm-up) from `hists[class]` (a missing one reads 0 ms).
/// Used by the simulator and the emulator alike.
pub fn class_summaries<P: aqm::Packet>(
    q: &Qdisc<P>,
    base: &[QueueStats],
    hists: &[LogHistogram],
) -> BTreeMap<String, ClassSummary> {
    let mut classes = BTreeMap::new();
    for ci in 0..q.num_classes() {
        let cs = q.class_stats(ci).unwrap_or_default();
        let c0 = base.get(ci).copied().unwrap_or_default();
        let h = hists.get(ci);
        let quant = |p: f64| h.map_or(0.0, |h| h.quantile(p) / 1e6);
        classes.insert(
            q.class_name(ci).unwrap_or_default().to_string(),
            ClassSummary {
                queue_delay_ms: DelayStats {
                    mean: h.map_or(0.0, |h| h.mean() / 1e6),
                    p50: quant(0.5),
                    p95: quant(0.95),
                    p99: quant(0.99),
                },
                enqueued: cs.enqueued.saturating_sub(c0.enqueued),
                drops: cs.dropped().saturating_sub(c0.dropped()),
                marks: cs.marked.saturating_sub(c0.marked),
                tx_bytes: cs.dequeued_bytes.saturating_sub(c0.dequeued_bytes),
                tx_packets: cs.dequeued.saturating_sub(c0.dequeued),
            },
        );
    }
    classes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: the exact order statistics of the recorded values; the
    /// histogram promises 1.6 % relative error.
    #[test]
    fn quantiles_within_stated_error() {
        let mut h = LogHistogram::new();
        let vals: Vec<u64> = (1..=100_000u64).map(|i| i * 997 % 10_000_019).collect();
        for &v in &vals {
            h.record(v);
        }
        let mut sorted = vals.clone();
        sorted.sort_unstable();
        for q in [0.5, 0.95, 0.99] {
            let exact = sorted[((q * sorted.len() as f64).ceil() as usize) - 1] as f64;
            let est = h.quantile(q);
            assert!(
                (est - exact).abs() / exact <= 1.0 / 64.0 + 1e-9,
                "q{q}: {est} vs {exact}"
            );
        }
        let mean = vals.iter().sum::<u64>() as f64 / vals.len() as f64;
        assert!((h.mean() - mean).abs() < 1e-6);
        // Small values are exact.
        // The bins tile the integers: every value lies in its bin's range, bins are
        // contiguous, and a bin is at most 1/32 of its lower edge wide.
        for i in 0..BINS - 1 {
            let (lo, hi) = LogHistogram::bin_range(i);
            assert_eq!(LogHistogram::bin_range(i + 1).0, hi, "bin {i}");
            assert_eq!(LogHistogram::index(lo), i);
            assert_eq!(LogHistogram::index(hi - 1), i);
            assert!(lo < SUB || (hi - lo) * 32 <= lo, "bin {i}: [{lo}, {hi})");
            assert!(
                LogHistogram::midpoint(i) >= lo as f64 && LogHistogram::midpoint(i) < hi as f64
            );
        }
        let total: u64 = h.nonempty_bins().map(|(_, _, c)| c).sum();
        assert_eq!(total, h.count());
        for (lo, hi, c) in h.nonempty_bins() {
            let exact = vals.iter().filter(|&&v| lo <= v && v < hi).count() as u64;
            assert_eq!(c, exact, "[{lo}, {hi})");
        }
        let mut h = LogHistogram::new();
        h.record(7);
        assert_eq!(h.quantile(0.5), 7.0);
        assert_eq!(LogHistogram::index(u64::MAX), BINS - 1);
    }
    /// Reference: exact order statistics of the recorded values. The per-flow histogram
    /// promises 1/32 relative error, stores only the bins between its extremes, and merging
    /// two histograms equals recording both sets of values into one.
    #[test]
    fn flow_histogram_quantiles_range_and_merge() {
        let vals: Vec<u64> = (1..=50_000u64)
            .map(|i| 40_000_000 + i * 7919 % 9_000_000)
            .collect();
        let mut h = FlowHistogram::default();
        // record from the middle outwards so the range widens both ways
        for &v in vals.iter().rev().step_by(2).chain(vals.iter().step_by(2)) {
            h.record(v);
        }
        let mut sorted = vals.clone();
        sorted.sort_unstable();
        for q in [0.5, 0.95, 0.99] {
            let exact = sorted[((q * sorted.len() as f64).ceil() as usize) - 1] as f64;
            let est = h.quantile(q);
            assert!(
                (est - exact).abs() / exact <= 1.0 / 32.0,
                "q{q}: {est} vs {exact}"
            );
        }
        let mean = vals.iter().sum::<u64>() as f64 / vals.len() as f64;
        assert!((h.mean() - mean).abs() < 1e-6);
        // 40-49 ms spans one octave (2^25 ns = 33.6 ms .. 67 ms): at most 16 counters
        assert!(h.heap_bytes() <= 16 * 4 * 2, "{}", h.heap_bytes());
        let (a, b) = vals.split_at(20_000);
        let (mut ha, mut hb) = (FlowHistogram::default(), FlowHistogram::default());
        a.iter().for_each(|&v| ha.record(v));
        b.iter().for_each(|&v| hb.record(v));
        hb.record(3); // an exact small bin far below the others
        ha.merge(&hb);
        h.record(3);
        assert_eq!(ha.count(), h.count());
        for q in [0.0, 0.01, 0.5, 0.99, 1.0] {
            assert_eq!(ha.quantile(q), h.quantile(q));
        }
        assert_eq!(h.quantile(0.0), 3.0);
        assert!(FlowHistogram::default().stats_ms().is_none());
        // the bins tile the integers like LogHistogram's
        for i in 0..975 {
            let (lo, hi) = FlowHistogram::bin_range(i);
            assert_eq!(FlowHistogram::bin_range(i + 1).0, hi, "bin {i}");
            assert_eq!(FlowHistogram::index(lo), i);
            assert_eq!(FlowHistogram::index(hi - 1), i);
            assert!(lo < 16 || (hi - lo) * 16 <= lo);
        }
        assert_eq!(FlowHistogram::index(u64::MAX), 975);
    }

    /// The quantile of a multiset of bins read the way the documentation defines it: the
    /// midpoint of the bin holding the `ceil(q n)`-th smallest value.
    fn reference_quantile(bins: &BTreeMap<usize, u64>, q: f64) -> f64 {
        let n: u64 = bins.values().sum();
        let rank = ((q * n as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (&i, &c) in bins {
            acc += c;
            if acc >= rank {
                return FlowHistogram::midpoint(i);
            }
        }
        unreachable!()
    }

    /// A flow with a few packets whose delays span nanoseconds to 200 ms (a million flows on
    /// one bottleneck) keeps a few entries, not the ~430 counters between its extremes, and
    /// reads the same figures as the bins of its values; past 32 distinct bins it turns
    /// dense and still does; merging sparse and dense histograms in either order equals
    /// recording all their values into one.
    #[test]
    fn flow_histogram_sparse_then_dense_same_figures() {
        let mut state = 7u64;
        let mut draw = |n: usize| -> Vec<u64> {
            (0..n)
                .map(|_| {
                    state += 1;
                    let r = crate::rng::splitmix64(state);
                    match r % 4 {
                        0 => 0,
                        1 => (r >> 8) % 64,
                        _ => ((r >> 32) * 200_000_000) >> 32,
                    }
                })
                .collect()
        };
        let few = [
            0,
            3,
            900,
            15_000,
            2_000_000,
            40_000_000,
            120_000_000,
            200_000_000,
        ];
        let mut h = FlowHistogram::default();
        few.iter().for_each(|&v| h.record(v));
        assert!(h.heap_bytes() <= 64, "{} bytes", h.heap_bytes());
        // values close together (a flow's RTTs) are dense at once: recorded inline
        let close: Vec<u64> = (0..100).map(|k| 60_000_000 + k * 10_000).collect();
        // close together first, then far apart: dense, then sparse again
        let mut apart = close.clone();
        apart.extend([0, 5, 200_000_000]);
        for (vals, dense) in [
            (few.to_vec(), false),
            (draw(20), false),
            (draw(5000), true),
            (close, true),
            (apart, false),
        ] {
            let mut h = FlowHistogram::default();
            let mut bins = BTreeMap::new();
            for &v in &vals {
                h.record(v);
                *bins.entry(FlowHistogram::index(v)).or_insert(0u64) += 1;
            }
            assert_eq!(h.base != SPARSE, dense, "{} bins", bins.len());
            assert_eq!(h.count(), vals.len() as u64);
            let got: Vec<(usize, u64)> = h.bins().map(|(i, c)| (i, c as u64)).collect();
            let want: Vec<(usize, u64)> = bins.iter().map(|(&i, &c)| (i, c)).collect();
            assert_eq!(got, want);
            let mean = vals.iter().sum::<u64>() as f64 / vals.len() as f64;
            assert!((h.mean() - mean).abs() <= 1e-9 * mean.max(1.0));
            for q in [0.0, 0.01, 0.5, 0.95, 0.99, 1.0] {
                assert_eq!(h.quantile(q), reference_quantile(&bins, q), "q{q}");
            }
            // merging: sparse into dense, dense into sparse, halves of either form
            let (a, b) = vals.split_at(vals.len() / 3);
            for (x, y) in [(a, b), (b, a)] {
                let (mut hx, mut hy) = (FlowHistogram::default(), FlowHistogram::default());
                x.iter().for_each(|&v| hx.record(v));
                y.iter().for_each(|&v| hy.record(v));
                hx.merge(&hy);
                assert_eq!(hx, h);
                assert_eq!(hx.quantile(0.99), h.quantile(0.99));
            }
            let mut c = h.clone();
            c.clear();
            assert_eq!((c.count(), c.stats_ms()), (0, None));
            c.record(5);
            assert_eq!(c.quantile(0.5), 5.0);
        }
        // a count beyond a sparse entry's 22 bits turns the histogram dense, not wrong
        let mut big = FlowHistogram::default();
        let mut one = FlowHistogram::default();
        one.record(1000);
        for _ in 0..(1 << 23) / 1024 {
            let mut k = FlowHistogram::default();
            for _ in 0..1024 {
                k.record(1000);
            }
            big.merge(&k);
        }
        big.merge(&one);
        assert_eq!(big.count(), (1 << 23) + 1);
    }
}
