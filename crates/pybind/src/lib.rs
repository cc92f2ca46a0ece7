//! PyO3 bindings: the only crate that knows Python. Thin by design: every decision lives in
//! `aqm` or `netsim`; this file converts types, maps typed errors to Python exceptions and
//! releases the GIL around long runs.
//!
//! Exceptions: [`AqmConfigError`] (bad AQM name or parameter) and [`SimConfigError`] (bad
//! simulation config) are `ValueError` subclasses; both name the offending key and value.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyAny;

mod columns;
mod emu;
mod queue;
mod queue_tcp;
mod simulation;

create_exception!(
    _core,
    AqmConfigError,
    PyValueError,
    "An AQM name or parameter is not acceptable (the message names the key and value)."
);
create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario is not acceptable (the message names the key path and value)."
);
create_exception!(
    _core,
    ArgumentError,
    PyValueError,
    "An argument of an API call is not acceptable (the message names the argument and value)."
);

/// The fields every error of the core carries: the key (a scenario path, a parameter or an
/// argument name), the value as the user gave it (None where the key itself is at fault) and
/// the reason.
pub(crate) type Parts = (String, Option<String>, String);

/// An exception of type `T` whose `str()` is `msg` (one line) and whose attributes `key`,
/// `value` and `reason` are `parts`, so that a front end formats its own line from the
/// fields instead of reading the message.
pub(crate) fn typed<T: pyo3::PyTypeInfo>(msg: String, parts: Parts) -> PyErr {
    Python::with_gil(|py| {
        let err = PyErr::new::<T, _>(msg);
        let (key, value, reason) = parts;
        let v = err.value(py);
        // attribute assignment on a fresh exception instance cannot fail
        let _ = v.setattr("key", key);
        let _ = v.setattr("value", value);
        let _ = v.setattr("reason", reason);
        err
    })
}

/// An `ArgumentError` `KEY = VALUE: REASON` with its fields.
pub(crate) fn argument_error(key: &str, value: impl std::fmt::Display, reason: &str) -> PyErr {
    let value = value.to_string();
    typed::<ArgumentError>(
        format!("{key} = {value}: {reason}"),
        (key.to_string(), Some(value), reason.to_string()),
    )
}

/// A whole number argument in `[min, max]` (an `int`, or a `float` with no fraction), or an
/// `ArgumentError` naming it.
pub(crate) fn whole(name: &str, v: &Bound<'_, PyAny>, min: u64, max: u64) -> PyResult<u64> {
    let bad = || {
        let shown = v
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".into());
        argument_error(
            name,
            shown,
            &format!("must be a whole number in [{min}, {max}]"),
        )
    };
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad());
    }
    let x = match v.extract::<i128>() {
        Ok(i) => i,
        Err(_) => match v.extract::<f64>() {
            Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e30 => f as i128,
            _ => return Err(bad()),
        },
    };
    if x < min as i128 || x > max as i128 {
        return Err(bad());
    }
    Ok(x as u64)
}

/// A finite number argument, or an `ArgumentError` naming it.
pub(crate) fn finite(name: &str, v: f64, ok: bool, what: &str) -> PyResult<f64> {
    if v.is_finite() && ok {
        Ok(v)
    } else {
        Err(argument_error(name, v, what))
    }
}

pub(crate) fn aqm_err(e: aqm::ConfigError) -> PyErr {
    typed::<AqmConfigError>(e.to_string(), e.parts())
}

/// Version of the Rust core.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The compiler the core was built with (`rustc --version`).
#[pyfunction]
fn rustc_version() -> &'static str {
    env!("AQMLAB_RUSTC_VERSION")
}

/// The registry of congestion controllers (`experiment::cc`), in its order: per controller a
/// dict `name`, `needs_ecn`, `ect1`, `kernel` (the Linux module, or None) and `help`.
#[pyfunction]
fn congestion_controllers(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    experiment::cc::CONGESTION_CONTROLLERS
        .iter()
        .map(|c| {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("name", c.name)?;
            d.set_item("needs_ecn", c.needs_ecn)?;
            d.set_item("ect1", c.ect1)?;
            d.set_item("kernel", c.kernel)?;
            d.set_item("help", c.help)?;
            Ok(d)
        })
        .collect()
}

/// Parse a quantity (`kind`: time, rate, size, packet_rate) to its SI base unit; with
/// `require_unit` a bare number is an error (the command line's rule).
#[pyfunction]
#[pyo3(signature = (kind, text, require_unit=false))]
fn parse_quantity(kind: &str, text: &str, require_unit: bool) -> PyResult<f64> {
    use aqm::units::{parse, parse_with_unit, Kind};
    let k = match kind {
        "time" => Kind::Time,
        "rate" => Kind::Rate,
        "size" => Kind::Size,
        "packet_rate" => Kind::PacketRate,
        other => return Err(argument_error("kind", format!("{other:?}"), "unknown")),
    };
    let r = if require_unit {
        parse_with_unit(k, text)
    } else {
        parse(k, text)
    };
    r.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Seconds to integer nanoseconds by the project's one rounding rule (nearest nanosecond,
/// halves away from zero); `ArgumentError` naming `key` for a negative, non-finite or too
/// large time.
#[pyfunction]
fn secs_to_ns(key: &str, s: f64) -> PyResult<u64> {
    if !s.is_finite() || s < 0.0 {
        return Err(argument_error(
            key,
            s,
            "must be a finite time >= 0 (seconds)",
        ));
    }
    aqm::Duration::try_from_secs_f64(s)
        .map(aqm::Duration::as_nanos)
        .ok_or_else(|| argument_error(key, s, "too far in the future"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(rustc_version, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controllers, m)?)?;
    m.add("AqmConfigError", m.py().get_type::<AqmConfigError>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("ArgumentError", m.py().get_type::<ArgumentError>())?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(secs_to_ns, m)?)?;
    queue::register(m)?;
    simulation::register(m)?;
    emu::register(m)?;
    Ok(())
}
