//! Per-packet event traces of chosen links, in bounded memory.
//!
//! A traced link owns one [`TraceBuf`]: columns (struct of arrays) preallocated at
//! [`TraceBuf::with_batch`] to `batch + TRACE_SLACK` rows. The link pushes one row per queue
//! event (no allocation while the buffer is below its capacity); the driver
//! ([`crate::Simulation::run_until_traced`]) stops as soon as a buffer holds `batch` rows so
//! that the caller can drain it ([`crate::Simulation::drain_trace`]) and write it out (the
//! Python layer writes one Parquet row group per drain). Memory is therefore bounded by the
//! batch size, not by the length of the run.
//!
//! Rows are pushed in event order; within one link, `time_ns` never decreases.
//!
//! Counting rules (checked by `tests/test_trace.py`), per traced link over the whole run:
//! `enqueue + drop_arrival = arrivals`, `dequeue = transmitted + in transmission`,
//! `enqueue = dequeue + drop_victim + drop_dequeue + queued`, `mark = marks`.

use crate::engine::Ns;
use crate::packet::Packet;

/// Rows a single event may add beyond the batch size without reallocating: one event can
/// touch a traced link several times (a burst of arrivals, a CoDel dequeue dropping several
/// heads, FQ-CoDel's drop batch of up to 64 victims). Should one event ever add more, the
/// buffer grows once (amortised) and keeps that capacity; `tests/test_trace.py` checks that
/// the capacity stays at its initial value on long runs.
pub const TRACE_SLACK: usize = 4096;

pub use experiment::config::DEFAULT_TRACE_BATCH;

/// What happened to the packet. The discriminant is the code in [`TraceBuf::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceKind {
    /// Accepted into the queue (`sojourn_ns` not applicable).
    Enqueue = 0,
    /// Left the queue to be transmitted; `sojourn_ns` is its time in the queue.
    Dequeue = 1,
    /// The packet leaving the queue carries a CE mark set by this queue (recorded just before
    /// its `Dequeue` row, at the same time; as the link's `marks` counter counts).
    Mark = 2,
    /// The arriving packet was dropped (hard limit or AQM at enqueue); never queued.
    DropArrival = 3,
    /// A stored packet was dropped to make room for an arrival (a scheduler's victim, e.g.
    /// FQ-CoDel's fattest flow); `sojourn_ns` is the time it had spent queued.
    DropVictim = 4,
    /// Dropped at dequeue by the AQM (CoDel), or when `set_aqm` moved the queue's packets to
    /// a new discipline; `sojourn_ns` is the time it had spent queued.
    DropDequeue = 5,
}

/// Names of the kinds, by code (the Parquet `kind` column's dictionary).
pub const TRACE_KIND_NAMES: [&str; 6] = [
    "enqueue",
    "dequeue",
    "mark",
    "drop_arrival",
    "drop_victim",
    "drop_dequeue",
];

/// One link's trace rows (columns of equal length).
#[derive(Clone, Debug, Default)]
pub struct TraceBuf {
    /// Event time, ns since the start of the run.
    pub time_ns: Vec<u64>,
    /// Flow id of the packet.
    pub flow: Vec<u32>,
    /// Packet size on the wire, bytes (IP header included).
    pub size: Vec<u32>,
    /// Time spent in the queue, ns (dequeue, mark, drop_victim, drop_dequeue); 0 for the
    /// other kinds (the Python layer writes null there).
    pub sojourn_ns: Vec<u64>,
    /// ECN codepoint as the two IP bits (RFC 3168 §5): 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE;
    /// the packet's codepoint at the event (arrival for enqueue/drop_arrival, departure for
    /// dequeue/mark).
    pub ecn: Vec<u8>,
    /// [`TraceKind`] code.
    pub kind: Vec<u8>,
    /// Rows after which the driver stops to let the caller drain.
    batch: usize,
}

impl TraceBuf {
    /// An empty buffer with room for `batch + TRACE_SLACK` rows (`batch >= 1`).
    pub fn with_batch(batch: usize) -> Self {
        let batch = batch.max(1);
        let cap = batch + TRACE_SLACK;
        TraceBuf {
            time_ns: Vec::with_capacity(cap),
            flow: Vec::with_capacity(cap),
            size: Vec::with_capacity(cap),
            sojourn_ns: Vec::with_capacity(cap),
            ecn: Vec::with_capacity(cap),
            kind: Vec::with_capacity(cap),
            batch,
        }
    }

    /// Appends one row for `pkt` at time `now`; the sojourn is `now - pkt.enq` for the kinds
    /// that have one.
    #[inline]
    pub fn push(&mut self, kind: TraceKind, now: Ns, pkt: &Packet) {
        let sojourn = match kind {
            TraceKind::Enqueue | TraceKind::DropArrival => 0,
            _ => now.saturating_sub(pkt.enq),
        };
        self.time_ns.push(now);
        self.flow.push(pkt.flow);
        self.size.push(pkt.size);
        self.sojourn_ns.push(sojourn);
        self.ecn.push(match pkt.ecn() {
            aqm::Ecn::NotEct => 0,
            aqm::Ecn::Ect1 => 1,
            aqm::Ecn::Ect0 => 2,
            aqm::Ecn::Ce => 3,
        });
        self.kind.push(kind as u8);
    }

    /// Rows held.
    #[inline]
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// True if no row is held.
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    /// True once the buffer holds a full batch (the driver stops).
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len() >= self.batch
    }

    /// Rows the buffer can hold without reallocating (the smallest column's capacity).
    pub fn capacity(&self) -> usize {
        [
            self.time_ns.capacity(),
            self.flow.capacity(),
            self.size.capacity(),
            self.sojourn_ns.capacity(),
            self.ecn.capacity(),
            self.kind.capacity(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
    }

    /// Batch size (rows).
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Appends every row to `out` (with `link` as the link column) and empties the buffer,
    /// keeping its capacity.
    pub fn drain_into(&mut self, link: u32, out: &mut TraceBatch) {
        out.link.resize(out.link.len() + self.len(), link);
        out.time_ns.append(&mut self.time_ns);
        out.flow.append(&mut self.flow);
        out.size.append(&mut self.size);
        out.sojourn_ns.append(&mut self.sojourn_ns);
        out.ecn.append(&mut self.ecn);
        out.kind.append(&mut self.kind);
    }
}

/// Rows drained from every traced link: the [`TraceBuf`] columns plus the link index
/// (into [`crate::Simulation::link_names`]). Rows are grouped by link, in time order within
/// each link.
#[derive(Clone, Debug, Default)]
pub struct TraceBatch {
    /// Link index of each row.
    pub link: Vec<u32>,
    /// See [`TraceBuf::time_ns`].
    pub time_ns: Vec<u64>,
    /// See [`TraceBuf::flow`].
    pub flow: Vec<u32>,
    /// See [`TraceBuf::size`].
    pub size: Vec<u32>,
    /// See [`TraceBuf::sojourn_ns`].
    pub sojourn_ns: Vec<u64>,
    /// See [`TraceBuf::ecn`].
    pub ecn: Vec<u8>,
    /// See [`TraceBuf::kind`].
    pub kind: Vec<u8>,
}

impl TraceBatch {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// True if no row is held.
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }
}
