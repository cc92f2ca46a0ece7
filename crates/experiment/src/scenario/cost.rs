//! The cost estimate: the memory a run would take (time series, flows, cwnd traces),
//! refused above [`MAX_MEMORY_BYTES`] before anything runs.

use super::error::{err, Result};
use serde_json::Value;

/// Largest estimated memory of a run the schema accepts, bytes (8 GiB: a third of the
/// 24 GiB machines the project is developed on).
pub const MAX_MEMORY_BYTES: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0;
/// Estimated memory per flow of a builder topology, bytes (two hosts, four access links with
/// their queues, the TCP state, its share of the packets in flight and its summary row:
/// 3.9 KiB per long-lived flow on a 50,000-flow dumbbell and 5.2 KB a flow in the whole
/// million-flow run, `benches/bench_scale.py`; twice that leaves room for flows with larger
/// windows; see `docs/scenario.md`).
pub const BYTES_PER_FLOW: f64 = 8.0 * 1024.0;
/// Estimated memory per time-series row (one monitored link, one sample), bytes.
pub const BYTES_PER_SAMPLE: f64 = 96.0;
/// Estimated memory per per-class time-series row (one class of a monitored link, one
/// sample), bytes.
pub const BYTES_PER_CLASS_SAMPLE: f64 = 64.0;

/// What a run will hold in memory, estimated before it is built.
pub(super) struct Cost {
    pub(super) duration: f64,
    pub(super) sample_interval: f64,
    pub(super) cwnd_interval: Option<f64>,
    pub(super) monitored: f64,
    /// Classes per monitored link (the most any link's qdisc has).
    pub(super) classes: f64,
    pub(super) flows: f64,
    pub(super) traced: usize,
}

impl Cost {
    /// Time-series rows (samples x monitored links).
    pub(super) fn rows(&self) -> f64 {
        (self.duration / self.sample_interval).ceil() * self.monitored.max(1.0)
    }

    /// Estimated memory of the time series, bytes.
    pub(super) fn timeseries_bytes(&self) -> f64 {
        self.rows() * (BYTES_PER_SAMPLE + self.classes * BYTES_PER_CLASS_SAMPLE)
    }

    /// Estimated memory of the flows, bytes.
    pub(super) fn flow_bytes(&self) -> f64 {
        self.flows * BYTES_PER_FLOW
    }

    /// Estimated memory of the congestion-window traces, bytes.
    pub(super) fn cwnd_bytes(&self) -> f64 {
        let interval = self.cwnd_interval.unwrap_or(self.sample_interval);
        (self.duration / interval).ceil() * self.traced as f64 * 40.0
    }

    /// Estimated memory of the whole run, bytes (what [`Scenario::memory_bytes`] reports).
    pub(super) fn bytes(&self) -> f64 {
        self.timeseries_bytes() + self.flow_bytes() + self.cwnd_bytes()
    }

    /// Refuses runs whose memory would exceed [`MAX_MEMORY_BYTES`], in microseconds, naming
    /// the key to change (`biggest`: the flow group with the most flows).
    pub(super) fn check(&self, doc: &Value, biggest: Option<usize>) -> Result<()> {
        let gib = |b: f64| b / (1024.0 * 1024.0 * 1024.0);
        let limit = gib(MAX_MEMORY_BYTES);
        let rows = self.rows();
        let ts = self.timeseries_bytes();
        if ts > MAX_MEMORY_BYTES {
            return Err(err(
                "sample_interval",
                doc.get("sample_interval"),
                format!(
                    "{rows:.3e} time-series rows over duration = {} s would need about {:.0} GiB (limit {limit:.0} GiB); use a longer interval",
                    self.duration,
                    gib(ts)
                ),
            ));
        }
        let fl = self.flow_bytes();
        if fl > MAX_MEMORY_BYTES {
            let i = biggest.unwrap_or(0);
            let key = format!("flows[{i}].count");
            return Err(err(
                &key,
                doc.pointer(&format!("/flows/{i}/count")),
                format!(
                    "{:.0} flows in all would need about {:.0} GiB (limit {limit:.0} GiB, about {} flows)",
                    self.flows,
                    gib(fl),
                    (MAX_MEMORY_BYTES / BYTES_PER_FLOW) as u64
                ),
            ));
        }
        let cw = self.cwnd_bytes();
        if cw > MAX_MEMORY_BYTES {
            return Err(err(
                "cwnd_interval",
                doc.get("cwnd_interval"),
                format!(
                    "the cwnd traces would need about {:.0} GiB (limit {limit:.0} GiB)",
                    gib(cw)
                ),
            ));
        }
        Ok(())
    }
}
