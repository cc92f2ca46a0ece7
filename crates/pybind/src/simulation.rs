//! `aqmlab._core.Scenario` (the scenario schema of `experiment::scenario`: parse and validate once)
//! and `aqmlab._core.Simulation`, a steppable `netsim::Simulation` built from a `Scenario`.
//! Long runs release the GIL.

use experiment::scenario::Scenario;
use netsim::{SimError, Simulation};
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyDict};

use crate::{argument_error, typed, whole, ArgumentError, ScenarioError};

fn sim_err(e: SimError) -> PyErr {
    typed::<ArgumentError>(e.to_string(), e.parts())
}

/// A validated scenario. `Scenario(json)`: the scenario document (TOML's data model) as JSON.
#[pyclass(module = "aqmlab._core", name = "Scenario", frozen)]
pub struct PyScenario {
    pub(crate) sc: Scenario,
}

#[pymethods]
impl PyScenario {
    #[new]
    fn new(json: &str) -> PyResult<Self> {
        let sc = Scenario::from_json(json).map_err(|e| {
            let parts = (e.key.clone(), e.value.clone(), e.reason.clone());
            typed::<ScenarioError>(e.to_string(), parts)
        })?;
        Ok(PyScenario { sc })
    }

    /// The scenario with defaults filled in and quantities in SI base units, as JSON.
    fn normalized_json(&self) -> String {
        self.sc.normalized.to_string()
    }

    /// `[(core link name, result name)]`, e.g. `[("R1->R2", "bottleneck")]`.
    fn link_aliases(&self) -> Vec<(String, String)> {
        self.sc.link_aliases.clone()
    }

    /// The run's estimated memory, bytes (the estimate the 8 GiB size limit checks).
    fn memory_bytes(&self) -> f64 {
        self.sc.memory_bytes
    }
}

/// A packet-level simulation. `Simulation(scenario, seed=None)`; times in seconds.
#[pyclass(module = "aqmlab._core", name = "Simulation")]
pub struct PySimulation {
    sim: Simulation,
}

impl PySimulation {
    /// `t_ns` as an instant a run may advance to: not before now, not after the end.
    fn checked_target(&self, t_ns: u64) -> PyResult<aqm::Instant> {
        let (now, end) = (self.sim.now(), self.sim.end());
        let t = format!("{} s", aqm::Duration(t_ns).as_secs_f64());
        if t_ns < now.as_nanos() {
            let why = format!(
                "before the current time {} s (a simulation only runs forward)",
                now.as_secs_f64()
            );
            return Err(argument_error("t", t, &why));
        }
        if t_ns > end.as_nanos() {
            let why = format!(
                "after the scenario's end, duration = {} s",
                end.as_secs_f64()
            );
            return Err(argument_error("t", t, &why));
        }
        Ok(aqm::Instant(t_ns))
    }
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (scenario, seed=None))]
    fn new(scenario: &PyScenario, seed: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mut cfg = scenario.sc.config.clone();
        if let Some(s) = seed {
            cfg.seed = whole("seed", s, 0, u64::MAX)?;
        }
        let sim =
            Simulation::new(cfg).map_err(|e| typed::<ScenarioError>(e.to_string(), e.parts()))?;
        Ok(PySimulation { sim })
    }

    /// Advance the simulation to `t_ns` (integer nanoseconds; not before the current time,
    /// at most the scenario's end), releasing the GIL.
    fn run_until_ns(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let t = self.checked_target(t_ns)?;
        let sim = &mut self.sim;
        py.allow_threads(|| sim.run_until(t));
        Ok(())
    }

    /// Start recording the per-packet events of the scenario's `[trace]` links (their
    /// buffers are allocated now; see `netsim::trace`).
    fn start_trace(&mut self) {
        self.sim.start_trace();
    }

    /// Open the capture of the scenario's `[pcap]` links at `path` (see `netsim::pcap`);
    /// drive the run with `run_until_traced_ns`, which writes full batches.
    fn start_pcap(&mut self, path: std::path::PathBuf) -> PyResult<()> {
        self.sim
            .start_pcap(&path)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    }

    /// Write the remaining captured packets and close the file; returns the packets written.
    fn finish_pcap(&mut self, py: Python<'_>) -> PyResult<u64> {
        let sim = &mut self.sim;
        py.allow_threads(|| sim.finish_pcap())
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("capture: {e}")))
    }

    /// True while a capture is open.
    fn capturing(&self) -> bool {
        self.sim.capturing()
    }

    /// Per capture tap: (interface id, capacity in records).
    fn pcap_taps(&self) -> Vec<(u32, usize)> {
        self.sim.pcap_taps()
    }

    /// Like `run_until_ns`, but stops early (returns False) once a traced link's buffer holds
    /// a full batch; True when time `t_ns` was reached. Releases the GIL.
    fn run_until_traced_ns(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<bool> {
        let t = self.checked_target(t_ns)?;
        let sim = &mut self.sim;
        Ok(py.allow_threads(|| sim.run_until_traced(t)))
    }

    /// The trace rows recorded since the last call, emptying the buffers: a dict of column
    /// name -> little-endian bytes (`link` u32, `time_ns` u64, `flow` u32, `size` u32,
    /// `sojourn_ns` u64, `ecn` u8, `kind` u8), plus `"kinds"` (names by kind code).
    fn drain_trace<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        use pyo3::types::PyBytes;
        let mut b = netsim::trace::TraceBatch::default();
        self.sim.drain_trace(&mut b);
        fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(v.len() * N);
            for &x in v {
                out.extend_from_slice(&f(x));
            }
            out
        }
        let d = PyDict::new(py);
        d.set_item("link", PyBytes::new(py, &le(&b.link, u32::to_le_bytes)))?;
        d.set_item(
            "time_ns",
            PyBytes::new(py, &le(&b.time_ns, u64::to_le_bytes)),
        )?;
        d.set_item("flow", PyBytes::new(py, &le(&b.flow, u32::to_le_bytes)))?;
        d.set_item("size", PyBytes::new(py, &le(&b.size, u32::to_le_bytes)))?;
        d.set_item(
            "sojourn_ns",
            PyBytes::new(py, &le(&b.sojourn_ns, u64::to_le_bytes)),
        )?;
        d.set_item("ecn", PyBytes::new(py, &b.ecn))?;
        d.set_item("kind", PyBytes::new(py, &b.kind))?;
        d.set_item("kinds", netsim::trace::TRACE_KIND_NAMES.to_vec())?;
        Ok(d)
    }

    /// Per traced link: (core link name, buffer capacity in rows or None before
    /// `start_trace`, batch size in rows).
    fn trace_buffers(&self) -> Vec<(String, Option<usize>, usize)> {
        self.sim.trace_buffers()
    }

    /// Run to the configured duration, releasing the GIL.
    fn run(&mut self, py: Python<'_>) {
        let sim = &mut self.sim;
        py.allow_threads(|| sim.run());
    }

    /// Current simulated time, seconds.
    #[getter]
    fn now(&self) -> f64 {
        self.sim.now().as_secs_f64()
    }

    /// Current simulated time, integer nanoseconds.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now().as_nanos()
    }

    /// The scenario's end (its duration), integer nanoseconds.
    #[getter]
    fn end_ns(&self) -> u64 {
        self.sim.end().as_nanos()
    }

    /// Events executed so far.
    #[getter]
    fn events(&self) -> u64 {
        self.sim.events()
    }

    /// Names of all links.
    fn link_names(&self) -> Vec<String> {
        self.sim.link_names()
    }

    /// Names of the monitored links.
    fn monitored_links(&self) -> Vec<String> {
        self.sim.monitored_links()
    }

    /// Number of flows created so far.
    fn num_flows(&self) -> usize {
        self.sim.num_flows()
    }

    /// Snapshot of a link: queue, AQM probability and counters.
    fn link_status<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sim.link_status(name).map_err(sim_err)?;
        let d = PyDict::new(py);
        d.set_item("name", s.name)?;
        d.set_item("aqm", s.aqm)?;
        d.set_item("queue_pkts", s.queue_pkts)?;
        d.set_item("queue_bytes", s.queue_bytes)?;
        d.set_item("probability", s.probability)?;
        d.set_item("aqm_activations", s.aqm_stats.activations)?;
        d.set_item("aqm_received", s.aqm_stats.received)?;
        d.set_item("aqm_dropped", s.aqm_stats.dropped())?;
        d.set_item("aqm_marked", s.aqm_stats.marked)?;
        let c = s.counters;
        d.set_item("arrivals", c.arrivals)?;
        // every drop the queue caused, scheduler victims included (as the summary's `drops`)
        d.set_item("drops", c.queue_drops())?;
        d.set_item("drops_victim", c.drops_victim)?;
        d.set_item("marks", c.marks)?;
        d.set_item("tx_pkts", c.tx_pkts)?;
        d.set_item("tx_bytes", c.tx_bytes)?;
        d.set_item("lost", c.lost)?;
        d.set_item("rate_bps", s.rate_bps)?;
        d.set_item("aqm_rate_bps", s.aqm_rate_bps)?;
        Ok(d)
    }

    /// Snapshot of a flow: cwnd (segments), ssthresh, srtt, bytes, retransmissions.
    fn flow_status<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let n = self.sim.num_flows() as u64;
        let id = whole("flow", id, 0, n.saturating_sub(1))?;
        let s = self.sim.flow_status(id as u32).map_err(sim_err)?;
        let d = PyDict::new(py);
        d.set_item("id", s.id)?;
        d.set_item("kind", s.kind)?;
        d.set_item("started", s.started)?;
        d.set_item("cwnd", s.cwnd)?;
        d.set_item("ssthresh", s.ssthresh)?;
        d.set_item("srtt_s", s.srtt_s)?;
        d.set_item("bytes_acked", s.bytes_acked)?;
        d.set_item("bytes_delivered", s.bytes_delivered)?;
        d.set_item("bytes_received_high", s.bytes_received_high)?;
        d.set_item("retransmits", s.retransmits)?;
        d.set_item("timeouts", s.timeouts)?;
        d.set_item("ecn_reductions", s.ecn_reductions)?;
        d.set_item("rwnd", s.rwnd)?;
        d.set_item("min_reduction_gap_s", s.min_reduction_gap_s)?;
        d.set_item("fct_s", s.fct_s)?;
        Ok(d)
    }

    /// Change one AQM parameter of a link's queue while the simulation runs: a name for a
    /// single AQM (`target`), a path into a scheduler (`classes.b.weight`,
    /// `classes.a.aqm.target`).
    fn set_aqm_param(&mut self, link: &str, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let cfg = self.sim.aqm_config(link).map_err(sim_err)?;
        let x = crate::queue::param_value(&cfg, key, value)?;
        self.sim.set_aqm_param(link, key, x).map_err(sim_err)
    }

    /// Replace a link's AQM (serde JSON of a `QdiscConfig`: an AQM or a scheduler); the
    /// queue's packets are kept.
    fn set_aqm(&mut self, link: &str, aqm_json: &str) -> PyResult<()> {
        let bad = |e: serde_json::Error| {
            typed::<crate::AqmConfigError>(
                format!("aqm config: {e}"),
                ("aqm".into(), None, e.to_string()),
            )
        };
        let v: serde_json::Value = serde_json::from_str(aqm_json).map_err(bad)?;
        let sched = v
            .get("type")
            .and_then(|t| t.as_str())
            .is_some_and(|t| aqm::qdisc::SCHEDULERS.contains(&t));
        // A single AQM is read as such so that serde's message names the field.
        let cfg: aqm::QdiscConfig = if sched {
            serde_json::from_value(v).map_err(bad)?
        } else {
            aqm::QdiscConfig::Fifo(serde_json::from_value(v).map_err(bad)?)
        };
        self.sim.set_aqm(link, cfg).map_err(sim_err)
    }

    /// Replace a link's AQM by name and user-written parameters (`{"target": "5ms"}`).
    #[pyo3(signature = (link, name, params=None))]
    fn set_aqm_named(
        &mut self,
        link: &str,
        name: &str,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let cfg = crate::queue::qdisc_from(name, params, false)?;
        self.sim.set_aqm(link, cfg).map_err(sim_err)
    }

    /// Current value of a link's AQM parameter as running (None if unknown); SQM's
    /// per-queue paths (`queues.N.weight`) included.
    fn aqm_param(&self, link: &str, key: &str) -> PyResult<Option<f64>> {
        self.sim.aqm_param(link, key).map_err(sim_err)
    }

    /// The links flow `flow`'s data packets cross, in order (core link names).
    fn flow_path(&self, flow: u32) -> PyResult<Vec<String>> {
        self.sim.flow_path(flow).map_err(sim_err)
    }

    /// The flow hash queue disciplines see for flow `flow` (SQM's `flows.HASH.*` paths).
    fn flow_hash(&self, flow: u32) -> u64 {
        self.sim.flow_hash(flow)
    }

    /// SQM's elephant slots on a link: per slot the flow number holding it or None; None if
    /// the link does not run SQM.
    fn sqm_slots(&self, link: &str) -> PyResult<Option<Vec<Option<u32>>>> {
        self.sim.sqm_slots(link).map_err(sim_err)
    }

    /// Set a link's Bernoulli loss probability.
    fn set_link_loss(&mut self, link: &str, p: f64) -> PyResult<()> {
        self.sim.set_link_loss(link, p).map_err(sim_err)
    }

    /// Packet conservation totals: sent, delivered, dropped, lost, in_flight, duplicated.
    fn conservation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.sim.conservation();
        let d = PyDict::new(py);
        d.set_item("sent", c.sent)?;
        d.set_item("delivered", c.delivered)?;
        d.set_item("dropped", c.dropped)?;
        d.set_item("lost", c.lost)?;
        d.set_item("in_flight", c.in_flight)?;
        d.set_item("duplicated", c.duplicated)?;
        Ok(d)
    }

    /// The summary (results contract) as JSON, covering `[warmup, now]`.
    fn summary_json(&self) -> String {
        serde_json::to_string(&self.sim.summary()).expect("summary serialises")
    }

    /// Time series, cwnd traces, per-class time series and ping probes as `{"timeseries":
    /// {col: list}, "cwnd": {col: list}, "class_timeseries": {col: list}, "pings": {col:
    /// list}}`.
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.results();
        let ts = crate::columns::timeseries(py, &r.timeseries)?;
        let cw = PyDict::new(py);
        let c = &r.cwnd;
        cw.set_item("time_s", &c.time_s)?;
        cw.set_item("flow", &c.flow)?;
        cw.set_item("cwnd", &c.cwnd)?;
        cw.set_item("ssthresh", &c.ssthresh)?;
        cw.set_item("srtt_ms", &c.srtt_ms)?;
        let cs = crate::columns::class_series(py, &r.class_timeseries)?;
        let d = PyDict::new(py);
        d.set_item("timeseries", ts)?;
        d.set_item("cwnd", cw)?;
        d.set_item("class_timeseries", cs)?;
        let p = &r.pings;
        let pg = PyDict::new(py);
        pg.set_item("flow", &p.flow)?;
        pg.set_item("seq", &p.seq)?;
        pg.set_item("time_s", &p.time_s)?;
        pg.set_item("rtt_ms", &p.rtt_ms)?;
        d.set_item("pings", pg)?;
        Ok(d)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScenario>()?;
    m.add_class::<PySimulation>()?;
    Ok(())
}
