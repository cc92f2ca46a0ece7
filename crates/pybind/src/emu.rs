//! `aqmlab._core.Forwarder`: the live-emulation forwarder of the `emu` crate, built from a
//! validated `Scenario`. `run` releases the GIL (it blocks for the whole run); `stop` may be
//! called from another thread. Device errors are `OSError`s; scenarios the emulator cannot
//! run are `ScenarioError`s naming the key.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use emu::{EmuConfig, Forwarder, Tun};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::simulation::PyScenario;
use crate::ScenarioError;

/// `Forwarder(scenario, snd_tun, rcv_tun, group_addrs, reverse=None, names=None,
/// until_stopped=False)`: creates the two TUN devices (in the caller's namespace) for the
/// scenario's dumbbell; flow group `g` sends to `group_addrs[g]` (dotted IPv4). `reverse`: a
/// second scenario whose bottleneck becomes the reverse direction (`aqmlab shell`'s
/// downlink); `names`: the two links' names in the results; `until_stopped`: forward until
/// `stop()` rather than for the scenario's duration.
#[pyclass(module = "aqmlab._core", name = "Forwarder", frozen)]
pub struct PyForwarder {
    inner: Mutex<Forwarder>,
    stop: Arc<AtomicBool>,
}

fn addr(s: &str) -> PyResult<[u8; 4]> {
    s.parse::<std::net::Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| crate::argument_error("group_addrs", format!("{s:?}"), "not an IPv4 address"))
}

#[pymethods]
impl PyForwarder {
    #[new]
    #[pyo3(signature = (scenario, snd_tun, rcv_tun, group_addrs, reverse=None, names=None, until_stopped=false))]
    fn new(
        scenario: &PyScenario,
        snd_tun: &str,
        rcv_tun: &str,
        group_addrs: Vec<String>,
        reverse: Option<&PyScenario>,
        names: Option<(String, String)>,
        until_stopped: bool,
    ) -> PyResult<Self> {
        let config = |sc: &PyScenario| {
            EmuConfig::from_sim(&sc.sc.config)
                .map_err(|(k, r)| crate::typed::<ScenarioError>(format!("{k}: {r}"), (k, None, r)))
        };
        let mut cfg = config(scenario)?;
        if let Some(r) = reverse {
            cfg.set_reverse_from(&config(r)?, "reverse");
        }
        if let Some((fwd, rev)) = names {
            cfg.name = fwd;
            if let Some(r) = cfg.reverse.as_mut() {
                r.name = rev;
            }
        }
        if until_stopped {
            cfg.duration_ns = u64::MAX;
        }
        let addrs = group_addrs
            .iter()
            .map(|s| addr(s))
            .collect::<PyResult<Vec<_>>>()?;
        let open = |n: &str| {
            Tun::create(n).map_err(|e| PyOSError::new_err(format!("TUN device {n}: {e}")))
        };
        let (snd, rcv) = (open(snd_tun)?, open(rcv_tun)?);
        let f = Forwarder::new(cfg, snd, rcv, addrs)
            .map_err(|e| crate::typed::<ScenarioError>(format!("aqm: {e}"), e.parts()))?;
        Ok(PyForwarder {
            stop: f.stop_handle(),
            inner: Mutex::new(f),
        })
    }

    /// Forwards from `t0_ns` (a `time.monotonic_ns()` instant) for the scenario's duration or
    /// until `stop()`; releases the GIL.
    fn run(&self, py: Python<'_>, t0_ns: u64) -> PyResult<()> {
        py.allow_threads(|| {
            let mut f = self.inner.lock().expect("forwarder lock");
            f.run(t0_ns)
        })
        .map_err(|e| PyOSError::new_err(format!("forwarder: {e}")))
    }

    /// Ends `run` within 10 ms (thread-safe).
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// `{"seconds", "bottleneck": link summary, "packets_forwarded", "timing"}` as JSON.
    fn report_json(&self) -> String {
        let mut f = self.inner.lock().expect("forwarder lock");
        serde_json::to_string(&f.report()).expect("report serialises")
    }

    /// The bottleneck's time series as `{column: list}`.
    fn timeseries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut f = self.inner.lock().expect("forwarder lock");
        crate::columns::timeseries(py, &f.report().timeseries)
    }

    /// The reverse link's time series as `{column: list}` (no rows for a constant delay).
    fn reverse_timeseries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut f = self.inner.lock().expect("forwarder lock");
        crate::columns::timeseries(py, &f.report().reverse_timeseries)
    }

    /// The bottleneck's per-class time series as `{column: list}` (no rows for a FIFO).
    fn class_timeseries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut f = self.inner.lock().expect("forwarder lock");
        crate::columns::class_series(py, &f.report().class_timeseries)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyForwarder>()
}
