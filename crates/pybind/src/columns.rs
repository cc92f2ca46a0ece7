//! Result columns as Python dicts `{column: list}` (the simulator's and the emulator's alike).

use experiment::results::{ClassSeries, TimeSeries};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A monitor time series (`timeseries.parquet`'s columns).
pub(crate) fn timeseries<'py>(py: Python<'py>, t: &TimeSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", &t.time_s)?;
    d.set_item("link", &t.link)?;
    d.set_item("queue_pkts", &t.queue_pkts)?;
    d.set_item("queue_bytes", &t.queue_bytes)?;
    d.set_item("queue_delay_ms_mean", &t.queue_delay_ms_mean)?;
    d.set_item("arrivals", &t.arrivals)?;
    d.set_item("drops", &t.drops)?;
    d.set_item("marks", &t.marks)?;
    d.set_item("throughput_bps", &t.throughput_bps)?;
    d.set_item("active_flows", &t.active_flows)?;
    Ok(d)
}

/// A per-class time series (`class_timeseries.parquet`'s columns).
pub(crate) fn class_series<'py>(py: Python<'py>, c: &ClassSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", &c.time_s)?;
    d.set_item("link", &c.link)?;
    d.set_item("class", &c.class)?;
    d.set_item("queue_pkts", &c.queue_pkts)?;
    d.set_item("queue_bytes", &c.queue_bytes)?;
    d.set_item("tx_bytes", &c.tx_bytes)?;
    d.set_item("drops", &c.drops)?;
    d.set_item("marks", &c.marks)?;
    d.set_item("queue_delay_ms_mean", &c.queue_delay_ms_mean)?;
    Ok(d)
}
