//! PyO3 bindings: the only crate that knows Python. Thin by design: every decision lives in
//! `aqm` or `netsim`; this file converts types, maps typed errors to Python exceptions and
//! releases the GIL around long runs.
//!
//! Exceptions: [`AqmConfigError`] (bad AQM name or parameter) and [`SimConfigError`] (bad
//! simulation config) are `ValueError` subclasses; both name the offending key and value.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod queue;
mod simulation;

create_exception!(
    _core,
    AqmConfigError,
    PyValueError,
    "An AQM name or parameter is not acceptable (the message names the key and value)."
);
create_exception!(
    _core,
    SimConfigError,
    PyValueError,
    "A simulation configuration is not acceptable (the message names the key and value)."
);

pub(crate) fn aqm_err(e: aqm::ConfigError) -> PyErr {
    AqmConfigError::new_err(e.to_string())
}

/// Version of the Rust core.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add("AqmConfigError", m.py().get_type::<AqmConfigError>())?;
    m.add("SimConfigError", m.py().get_type::<SimConfigError>())?;
    queue::register(m)?;
    simulation::register(m)?;
    Ok(())
}
