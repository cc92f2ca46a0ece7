//! `aqmlab._core.Simulation` (filled in once netsim exposes its API).
use pyo3::prelude::*;

pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
