//! `aqmlab._core.Queue`: one `aqm::QueueDisc` driven from Python with explicit time, plus the
//! AQM registry (`aqm_names`, `aqm_describe`, `aqm_config_json`).
//!
//! Times cross this boundary as seconds (`f64`) and are rounded to integer nanoseconds.

use aqm::{
    AqmConfig, BitsPerSec, DropReason, Ecn, Enqueue, Instant, LinkInfo, Packet, Qdisc, QdiscConfig,
    QueueLimit, RawParam,
};
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyDict};

use crate::{aqm_err, finite, whole};

/// The packet type of a Python-driven queue: only what a qdisc looks at.
#[derive(Debug, Clone, Copy)]
struct PyPkt {
    size: u32,
    flow: u64,
    ecn: Ecn,
    dscp: u8,
    t: Instant,
    /// The TCP ACK fields the caller gave (CAKE's ACK filter reads them).
    tcp: Option<aqm::TcpAck>,
}

impl Packet for PyPkt {
    fn size_bytes(&self) -> u32 {
        self.size
    }
    fn flow_hash(&self) -> u64 {
        self.flow
    }
    fn ecn_capable(&self) -> bool {
        self.ecn.is_capable()
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
    fn dscp(&self) -> u8 {
        self.dscp
    }
    fn set_dscp(&mut self, d: u8) {
        self.dscp = d & 0x3f;
    }
    fn tcp_ack(&self) -> Option<aqm::TcpAck> {
        self.tcp
    }
    fn enqueued_at(&self) -> Instant {
        self.t
    }
    fn set_enqueued_at(&mut self, t: Instant) {
        self.t = t;
    }
}

/// The ECN codepoint of an offered packet: a bool (True = ECT(0)) or a codepoint name.
fn ecn_of(v: Option<&Bound<'_, PyAny>>) -> PyResult<Ecn> {
    let Some(v) = v else { return Ok(Ecn::NotEct) };
    if let Ok(b) = v.downcast::<pyo3::types::PyBool>() {
        return Ok(if b.is_true() { Ecn::Ect0 } else { Ecn::NotEct });
    }
    let name = v
        .extract::<String>()
        .ok()
        .map(|s| s.trim().to_ascii_lowercase());
    match name.as_deref() {
        Some("not-ect" | "notect" | "not_ect") => Ok(Ecn::NotEct),
        Some("ect0" | "ect(0)") => Ok(Ecn::Ect0),
        Some("ect1" | "ect(1)") => Ok(Ecn::Ect1),
        Some("ce") => Ok(Ecn::Ce),
        _ => Err(crate::argument_error(
            "ecn",
            v.repr()?,
            "must be a bool or one of 'not-ect', 'ect0', 'ect1', 'ce'",
        )),
    }
}

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "not-ect",
        Ecn::Ect0 => "ect0",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

pub(crate) fn secs_to_instant(key: &str, s: f64) -> PyResult<Instant> {
    crate::secs_to_ns(key, s).map(Instant)
}

/// A user-written parameter value: a number (base unit), a bool, or text with a unit.
pub(crate) fn raw_param(key: &str, v: &Bound<'_, PyAny>) -> PyResult<RawParamOwned> {
    if let Ok(b) = v.downcast::<pyo3::types::PyBool>() {
        return Ok(RawParamOwned::Bool(b.is_true()));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(RawParamOwned::Number(x));
    }
    if let Ok(t) = v.extract::<String>() {
        return Ok(RawParamOwned::Text(t));
    }
    let shown = v.repr()?.to_string();
    let reason = "must be a number, bool or string";
    Err(crate::typed::<crate::AqmConfigError>(
        format!("aqm parameter '{key}' = {shown}: {reason}"),
        (key.to_string(), Some(shown), reason.to_string()),
    ))
}

/// Owned form of [`aqm::RawParam`] (Python strings are copied out).
pub(crate) enum RawParamOwned {
    Number(f64),
    Bool(bool),
    Text(String),
    /// A table read from the file a `file` parameter names.
    Policy(Box<aqm::paqman::PaqmanPolicy>),
}

impl RawParamOwned {
    pub(crate) fn as_raw(&self) -> RawParam<'_> {
        match self {
            RawParamOwned::Number(x) => RawParam::Number(*x),
            RawParamOwned::Bool(b) => RawParam::Bool(*b),
            RawParamOwned::Text(t) => RawParam::Text(t),
            RawParamOwned::Policy(p) => RawParam::Policy(p),
        }
    }
}

/// Build a `QdiscConfig` (an AQM or a scheduler) from a name and `{path: value}`.
pub(crate) fn qdisc_from(
    name: &str,
    params: Option<&Bound<'_, PyDict>>,
    require_unit: bool,
) -> PyResult<QdiscConfig> {
    let mut kv: Vec<(String, RawParamOwned)> = Vec::new();
    let files: Vec<&str> = QdiscConfig::describe(name)
        .map(|i| {
            i.iter()
                .filter(|p| p.unit == "file")
                .map(|p| p.name)
                .collect()
        })
        .unwrap_or_default();
    if let Some(d) = params {
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            let mut raw = raw_param(&key, &v)?;
            if let (true, RawParamOwned::Text(file)) = (files.contains(&key.as_str()), &raw) {
                // A table-valued parameter names a file (PAQMAN's policy): read it here.
                let p = experiment::scenario::read_policy(file).map_err(|reason| {
                    crate::typed::<crate::AqmConfigError>(
                        format!("aqm parameter '{key}' = '{file}': {reason}"),
                        (key.clone(), Some(format!("'{file}'")), reason),
                    )
                })?;
                raw = RawParamOwned::Policy(Box::new(p));
            }
            kv.push((key, raw));
        }
    }
    let refs: Vec<(&str, RawParam<'_>)> =
        kv.iter().map(|(k, v)| (k.as_str(), v.as_raw())).collect();
    QdiscConfig::from_raw(name, &refs, require_unit).map_err(aqm_err)
}

/// A queue discipline (a FIFO with an AQM, or any qdisc: fq_codel, fq_cobalt, fq_pie, sfq, sfq_codel,
/// drr, wfq, dualpi2, sqm), driven with explicit times (seconds); each packet carries a flow
/// key and an ECN codepoint.
///
/// `Queue(aqm, params=None, limit_pkts=1000, link_rate_bps=10e6, seed=1, limit_bytes=None, mtu=1500)`
#[pyclass(module = "aqmlab._core", name = "Queue")]
pub struct PyQueue {
    q: Qdisc<PyPkt>,
    last_now: Instant,
}

#[pymethods]
impl PyQueue {
    #[new]
    #[pyo3(signature = (aqm, params=None, limit_pkts=None, link_rate_bps=10e6, seed=None, limit_bytes=None, mtu=None))]
    fn new(
        aqm: &str,
        params: Option<&Bound<'_, PyDict>>,
        limit_pkts: Option<&Bound<'_, PyAny>>,
        link_rate_bps: f64,
        seed: Option<&Bound<'_, PyAny>>,
        limit_bytes: Option<&Bound<'_, PyAny>>,
        mtu: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        finite(
            "link_rate_bps",
            link_rate_bps,
            (1.0..=1e15).contains(&link_rate_bps),
            "must be a rate in [1, 1e15] bits/s",
        )?;
        let opt = |name: &str, v: Option<&Bound<'_, PyAny>>, min: u64, max: u64, default: u64| {
            v.map_or(Ok(default), |v| whole(name, v, min, max))
        };
        let limit_pkts = opt("limit_pkts", limit_pkts, 1, u32::MAX as u64, 1000)? as u32;
        let seed = opt("seed", seed, 0, u64::MAX, 1)?;
        let mtu = opt("mtu", mtu, 1, 65535, aqm::DEFAULT_MTU as u64)? as u32;
        let cfg = qdisc_from(aqm, params, false)?;
        let limit = match limit_bytes {
            Some(b) => QueueLimit::Bytes(whole("limit_bytes", b, 1, u64::MAX)?),
            None => QueueLimit::Packets(limit_pkts),
        };
        let link = LinkInfo {
            rate: BitsPerSec(link_rate_bps.round() as u64),
            mtu,
        };
        let q = Qdisc::new(&cfg, limit, link, seed).map_err(aqm_err)?;
        Ok(PyQueue {
            q,
            last_now: Instant(0),
        })
    }

    /// Offer a packet at time `now_s`; returns "queued", "marked" or "dropped" (the arrival's
    /// fate; packets a scheduler drops to make room are counted in `stats()`). `flow` is the
    /// packet's flow key (hashed by fq_codel, fq_cobalt, fq_pie, sfq, sfq_codel, sqm); `ecn`
    /// its ECN codepoint: a bool (True = ECT(0)) or "not-ect", "ect0", "ect1", "ce"; `dscp`
    /// its DSCP (0..63 or a name such as "EF"; CAKE's tins read it). A TCP segment gives
    /// its header for CAKE's ACK filter: `tcp_flags` (letters of "FSRPAUEC" or the flag
    /// byte), `ack_seq`, `sack` (up to 4 `(start, end)` pairs), `ts` (`(TSval, TSecr)`) and
    /// `payload` (bytes of data, 0 for a pure ACK); its connection is `flow`.
    #[pyo3(signature = (now_s, size_bytes, flow=None, ecn=None, dscp=None, tcp_flags=None, ack_seq=None, sack=None, ts=None, payload=None))]
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &mut self,
        now_s: f64,
        size_bytes: &Bound<'_, PyAny>,
        flow: Option<&Bound<'_, PyAny>>,
        ecn: Option<&Bound<'_, PyAny>>,
        dscp: Option<&Bound<'_, PyAny>>,
        tcp_flags: Option<&Bound<'_, PyAny>>,
        ack_seq: Option<&Bound<'_, PyAny>>,
        sack: Option<&Bound<'_, PyAny>>,
        ts: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<&'static str> {
        let size_bytes = whole("size_bytes", size_bytes, 1, u32::MAX as u64)? as u32;
        let flow = flow.map_or(Ok(0), |f| whole("flow", f, 0, u64::MAX))?;
        let ecn = ecn_of(ecn)?;
        let dscp = match dscp {
            None => 0,
            Some(d) => match d.extract::<String>() {
                Ok(name) => aqm::dscp::parse(&name).ok_or_else(|| {
                    crate::argument_error("dscp", name.clone(), "not a DSCP name (EF, CS1, ...)")
                })?,
                Err(_) => whole("dscp", d, 0, 63)? as u8,
            },
        };
        let tcp = crate::queue_tcp::tcp_of(flow, tcp_flags, ack_seq, sack, ts, payload)?;
        let now = self.advance(now_s)?;
        let pkt = PyPkt {
            size: size_bytes,
            flow,
            ecn,
            dscp,
            t: now,
            tcp,
        };
        Ok(
            match self
                .q
                .enqueue(now, pkt, &mut |_p: PyPkt, _r: DropReason| {})
            {
                Enqueue::Queued => "queued",
                Enqueue::Marked => "marked",
                Enqueue::Dropped(_, _) => "dropped",
            },
        )
    }

    /// Take the next packet for transmission at `now_s`: its size in bytes, or None if empty.
    /// Dequeue-side drops (CoDel) happen inside and are counted in `stats()`.
    fn dequeue(&mut self, now_s: f64) -> PyResult<Option<u32>> {
        let now = self.advance(now_s)?;
        Ok(self
            .q
            .dequeue(now, &mut |_p: PyPkt, _r: DropReason| {})
            .map(|p| p.size))
    }

    /// Like `dequeue` but returns `(size_bytes, sojourn_s, ce)` of the departing packet.
    fn dequeue_info(&mut self, now_s: f64) -> PyResult<Option<(u32, f64, bool)>> {
        let now = self.advance(now_s)?;
        Ok(self
            .q
            .dequeue(now, &mut |_p: PyPkt, _r: DropReason| {})
            .map(|p| {
                (
                    p.size,
                    now.saturating_duration_since(p.t).as_secs_f64(),
                    p.ecn == Ecn::Ce,
                )
            }))
    }

    /// Like `dequeue` but returns the departing packet as a dict: `size` (bytes), `flow`,
    /// `sojourn_s`, `ecn` (its codepoint now: "not-ect", "ect0", "ect1" or "ce"); None if
    /// empty.
    fn dequeue_packet<'py>(
        &mut self,
        py: Python<'py>,
        now_s: f64,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let now = self.advance(now_s)?;
        let Some(p) = self.q.dequeue(now, &mut |_p: PyPkt, _r: DropReason| {}) else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("size", p.size)?;
        d.set_item("flow", p.flow)?;
        d.set_item(
            "sojourn_s",
            now.saturating_duration_since(p.t).as_secs_f64(),
        )?;
        d.set_item("ecn", ecn_name(p.ecn))?;
        Ok(Some(d))
    }

    /// A shaping qdisc (CAKE with `bandwidth`) holding packets it may not send yet: the time
    /// (s) to call `dequeue` again; None otherwise.
    fn ready_at(&self) -> Option<f64> {
        self.q.ready_at().map(|t| t.as_secs_f64())
    }

    /// Next time (s) the qdisc needs `on_timer`, or None.
    fn poll_at(&self) -> Option<f64> {
        self.q.poll_at().map(|t| t.as_secs_f64())
    }

    /// Run the qdisc's periodic laws that are due at `now_s`.
    fn on_timer(&mut self, now_s: f64) -> PyResult<()> {
        let now = self.advance(now_s)?;
        self.q.on_timer(now);
        Ok(())
    }

    /// Change one parameter (or parameter path) while running (same names and units as
    /// `aqmlab aqms`).
    fn set_param(&mut self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = param_value(&self.q.config(), key, value)?;
        self.q.set_param(key, x).map_err(aqm_err)
    }

    /// Current value of one parameter at the `f64` boundary (None if unknown).
    fn param(&self, key: &str) -> Option<f64> {
        self.q.param(key)
    }

    /// Current drop/mark probability of the AQM (0 for laws without one).
    #[getter]
    fn probability(&self) -> f64 {
        self.q.probability()
    }

    /// Packets in the queue.
    #[getter]
    fn len_pkts(&self) -> usize {
        self.q.len_pkts()
    }

    /// Bytes in the queue.
    #[getter]
    fn len_bytes(&self) -> u64 {
        self.q.len_bytes()
    }

    /// Name of the AQM or qdisc.
    #[getter]
    fn aqm(&self) -> &'static str {
        self.q.aqm_name()
    }

    /// Backlogged flow queues of a hashed qdisc (fq_codel, fq_cobalt, fq_pie, sfq, sfq_codel, sqm), else
    /// None.
    #[getter]
    fn active_flows(&self) -> Option<u32> {
        self.q.active_flows()
    }

    /// Counters: received, enqueued, dropped_enqueue, dropped_limit, dropped_early,
    /// dropped_dequeue, dropped_victim, marked, dequeued, activations, received_bytes,
    /// dequeued_bytes, and the drops by cause: `dropped_aqm` (early drops, the AQM's
    /// decisions: dropped_early + dropped_dequeue) and `dropped_forced` (the buffer was full:
    /// dropped_limit + dropped_victim).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.q.stats();
        let d = PyDict::new(py);
        d.set_item("received", s.received)?;
        d.set_item("enqueued", s.enqueued)?;
        d.set_item("dropped_enqueue", s.dropped_enqueue())?;
        d.set_item("dropped_limit", s.dropped_limit)?;
        d.set_item("dropped_early", s.dropped_early)?;
        d.set_item("dropped_dequeue", s.dropped_dequeue)?;
        d.set_item("dropped_victim", s.dropped_victim)?;
        d.set_item("dropped_aqm", s.dropped_aqm())?;
        d.set_item("dropped_forced", s.dropped_forced())?;
        d.set_item("marked", s.marked)?;
        d.set_item("dequeued", s.dequeued)?;
        d.set_item("activations", s.activations)?;
        d.set_item("received_bytes", s.received_bytes)?;
        d.set_item("dequeued_bytes", s.dequeued_bytes)?;
        Ok(d)
    }

    /// The configuration as JSON (serde form: time fields in integer nanoseconds).
    fn config_json(&self) -> String {
        serde_json::to_string(&self.q.config()).expect("QdiscConfig serialises")
    }
}

impl PyQueue {
    /// Time must not run backwards: an AQM's state assumes monotone `now`.
    fn advance(&mut self, now_s: f64) -> PyResult<Instant> {
        let now = secs_to_instant("now_s", now_s)?;
        if now < self.last_now {
            let why = format!(
                "time went backwards (last call at {} s)",
                self.last_now.as_secs_f64()
            );
            return Err(crate::argument_error("now_s", now_s, &why));
        }
        self.last_now = now;
        Ok(now)
    }
}

/// The boundary value of a user-written parameter (a name, or a path into a scheduler such
/// as `classes.b.weight`) of `cfg` (units converted).
pub(crate) fn param_value(cfg: &QdiscConfig, key: &str, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    let raw = raw_param(key, value)?;
    cfg.raw_value(key, raw.as_raw(), false).map_err(aqm_err)
}

/// Names of the schedulers (class-based queue disciplines).
#[pyfunction]
fn scheduler_names() -> Vec<&'static str> {
    aqm::qdisc::SCHEDULERS.to_vec()
}

/// Names of the available AQMs.
#[pyfunction]
fn aqm_names() -> Vec<&'static str> {
    AqmConfig::names().to_vec()
}

/// Parameters of one AQM: list of (name, unit, default, doc).
#[pyfunction]
fn aqm_describe(name: &str) -> PyResult<Vec<(String, String, f64, String)>> {
    Ok(QdiscConfig::describe(name)
        .map_err(aqm_err)?
        .into_iter()
        .map(|p| (p.name.into(), p.unit.into(), p.default, p.doc.trim().into()))
        .collect())
}

/// Validate `name` + `{param: value}` (values may carry units; with `require_unit`, the
/// command line's rule, time and byte parameters must) and return the serde JSON of the
/// `AqmConfig`.
#[pyfunction]
#[pyo3(signature = (name, params=None, require_unit=false))]
fn aqm_config_json(
    name: &str,
    params: Option<&Bound<'_, PyDict>>,
    require_unit: bool,
) -> PyResult<String> {
    let cfg = qdisc_from(name, params, require_unit)?;
    Ok(serde_json::to_string(&cfg).expect("QdiscConfig serialises"))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyQueue>()?;
    m.add_function(wrap_pyfunction!(aqm_names, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add_function(wrap_pyfunction!(aqm_describe, m)?)?;
    m.add_function(wrap_pyfunction!(aqm_config_json, m)?)?;
    Ok(())
}
