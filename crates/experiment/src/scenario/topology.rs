//! Topology tables: `[dumbbell]`, `[parking_lot]` (the builders) and explicit
//! `[[nodes]]`/`[[links]]`/`[[routes]]`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::error::{err, Result};
use super::qdisc::{apply_ecn_default, parse_aqm};
use super::table::Table;
use aqm::QdiscConfig;
use serde_json::Value;

use crate::config::{
    Access, DumbbellConfig, ExplicitTopology, LinkConfig, LinkTraces, ParkingLotConfig, RateChange,
    RouteConfig,
};
use crate::netem::{LinkNetem, NetemSpec};
use crate::service::RateTrace;

/// Trace files read so far in one scenario, by name: links that follow the same file share it.
pub(super) type TraceFiles = HashMap<String, Arc<RateTrace>>;

/// `rate_trace = "FILE"` and `reverse_rate_trace = "FILE"`: Mahimahi traces (one line per
/// 1500-byte delivery opportunity, ms; `experiment::service`). A relative name is relative to
/// the working folder here (the Python layer makes it relative to the scenario file).
pub(super) fn rate_traces(
    t: &mut Table<'_>,
    files: &mut TraceFiles,
    reverse_allowed: bool,
) -> Result<LinkTraces> {
    let mut one = |t: &mut Table<'_>, k: &'static str| -> Result<Option<Arc<RateTrace>>> {
        let Some(name) = t.string(k)? else {
            return Ok(None);
        };
        if let Some(tr) = files.get(&name) {
            return Ok(Some(tr.clone()));
        }
        let tr = RateTrace::read(&name)
            .map(Arc::new)
            .map_err(|reason| err(&t.key(k), t.raw(k), reason))?;
        files.insert(name, tr.clone());
        Ok(Some(tr))
    };
    let forward = one(t, "rate_trace")?;
    let reverse = one(t, "reverse_rate_trace")?;
    if reverse.is_some() && !reverse_allowed {
        return Err(err(
            &t.key("reverse_rate_trace"),
            t.raw("reverse_rate_trace"),
            "a link with duplex = false has no reverse direction",
        ));
    }
    Ok(LinkTraces { forward, reverse })
}

/// `netem = "..."` and `reverse_netem = "..."`: netem impairments in netem's own syntax
/// (`experiment::netem`, docs/netem.md).
pub(super) fn netems(t: &mut Table<'_>, reverse_allowed: bool) -> Result<LinkNetem> {
    let one = |t: &mut Table<'_>, k: &'static str| -> Result<Option<Arc<NetemSpec>>> {
        let Some(text) = t.string(k)? else {
            return Ok(None);
        };
        NetemSpec::parse(&text)
            .map(|s| Some(Arc::new(s)))
            .map_err(|reason| err(&t.key(k), t.raw(k), reason))
    };
    let forward = one(t, "netem")?;
    let reverse = one(t, "reverse_netem")?;
    if reverse.is_some() && !reverse_allowed {
        return Err(err(
            &t.key("reverse_netem"),
            t.raw("reverse_netem"),
            "a link with duplex = false has no reverse direction",
        ));
    }
    Ok(LinkNetem { forward, reverse })
}

/// The rate of a link that may follow a trace: required without one; with one, the nominal
/// rate AQMs are told, by default the forward trace's mean rate (written into the normalized
/// scenario).
fn nominal_rate(t: &mut Table<'_>, traces: &LinkTraces, what: &str) -> Result<f64> {
    let rate = t.rate("rate")?;
    match (rate, &traces.forward) {
        (Some(r), _) => Ok(r),
        (None, Some(tr)) => {
            let r = tr.mean_rate_bps();
            t.put("rate", r);
            Ok(r)
        }
        (None, None) => t.required::<f64>("rate", None, what),
    }
}

pub(super) fn buffer_limit(t: &mut Table<'_>, default: u64) -> Result<(Option<u32>, Option<u64>)> {
    let n = t.int_or("buffer", 1, u32::MAX as u64, default)?;
    let bytes = t.boolean("buffer_bytes", false)?;
    Ok(if bytes {
        (None, Some(n))
    } else {
        (Some(n as u32), None)
    })
}

pub(super) fn pkt_size(t: &mut Table<'_>, k: &'static str) -> Result<Option<u32>> {
    Ok(t.int(k, 41, 65535)?.map(|x| x as u32))
}

/// The keys a dumbbell and a parking lot share (their bottlenecks and access links).
pub(super) struct Builder {
    pub(super) rate: f64,
    pub(super) buffer_pkts: Option<u32>,
    pub(super) buffer_bytes: Option<u64>,
    pub(super) access_rate: Option<f64>,
    pub(super) side_buffer_pkts: u32,
    pub(super) pkt_size: u32,
    pub(super) loss: f64,
    pub(super) traces: LinkTraces,
    pub(super) netem: LinkNetem,
}

pub(super) fn builder_keys(t: &mut Table<'_>, files: &mut TraceFiles) -> Result<Builder> {
    let traces = rate_traces(t, files, true)?;
    let rate = nominal_rate(t, &traces, "the bottleneck rate, e.g. \"10Mbps\"")?;
    let (buffer_pkts, buffer_bytes) = buffer_limit(t, 100)?;
    let access_rate = t.rate("access_rate")?;
    let side = crate::config::DEFAULT_SIDE_BUFFER as u64;
    let side_buffer_pkts = t.int_or("side_buffer", 1, u32::MAX as u64, side)? as u32;
    let pkt_size = pkt_size(t, "pkt_size")?.unwrap_or(crate::config::DEFAULT_PACKET_SIZE);
    t.put("pkt_size", pkt_size);
    let loss = t.probability("loss")?;
    let netem = netems(t, true)?;
    Ok(Builder {
        rate,
        buffer_pkts,
        buffer_bytes,
        access_rate,
        side_buffer_pkts,
        pkt_size,
        loss,
        traces,
        netem,
    })
}

/// `[dumbbell] rate_changes = [{at = "20s", rate = "5Mbps"}, ...]`: times strictly
/// increasing in (0, duration), rates as `rate` or 0 (an outage).
pub(super) fn rate_changes(t: &mut Table<'_>, duration: f64) -> Result<Vec<RateChange>> {
    let list = t.array("rate_changes")?;
    let mut out = Vec::with_capacity(list.len());
    let mut norm = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let mut c = Table::new(format!("{}[{i}]", t.key("rate_changes")), v)?;
        let at = c.time("at", true)?;
        let at = c.required("at", at, "the time of the change, e.g. \"20s\"")?;
        if at >= duration {
            return Err(err(
                &c.key("at"),
                v.get("at"),
                format!("must be before the end, duration = {duration} s"),
            ));
        }
        if let Some(prev) = out.last().map(|p: &RateChange| p.at) {
            if at <= prev {
                return Err(err(
                    &c.key("at"),
                    v.get("at"),
                    format!("must be after the previous change at {prev} s"),
                ));
            }
        }
        let rate = c.quantity("rate", aqm::units::Kind::Rate)?;
        let rate = c.required("rate", rate, "the new rate, e.g. \"5Mbps\", or 0")?;
        if !(0.0..=1e15).contains(&rate) {
            return Err(err(
                &c.key("rate"),
                v.get("rate"),
                "must be a rate in [0bps, 1000Tbps] (0: nothing is sent until the next change)",
            ));
        }
        out.push(RateChange { at, rate });
        norm.push(Value::Object(c.finish()?));
    }
    if t.has("rate_changes") {
        t.put("rate_changes", Value::Array(norm));
    }
    Ok(out)
}

pub(super) fn dumbbell(
    v: &Value,
    aqm: QdiscConfig,
    duration: f64,
) -> Result<(DumbbellConfig, u32, Value)> {
    let mut t = Table::new("dumbbell", v)?;
    let rtt = t.time_or("rtt", true, 0.1)?;
    // Written into the normalized scenario only when given (the default leaves it as before).
    let access = match t.raw("access") {
        None => Access::Link,
        Some(_) => match t.choice("access", &["link", "none"], "link")? {
            "none" => Access::None,
            _ => Access::Link,
        },
    };
    let b = builder_keys(&mut t, &mut TraceFiles::new())?;
    let rate_changes = rate_changes(&mut t, duration)?;
    if b.traces.forward.is_some() && !rate_changes.is_empty() {
        return Err(err(
            &t.key("rate_changes"),
            None,
            "not with rate_trace (the trace gives the rate over time)",
        ));
    }
    if access == Access::None && b.access_rate.is_some() {
        return Err(err(
            &t.key("access_rate"),
            t.raw("access_rate"),
            "no access links with access = \"none\" (remove access_rate)",
        ));
    }
    let cfg = DumbbellConfig {
        bottleneck_rate: b.rate,
        rtt,
        aqm,
        reverse_aqm: None,
        buffer_pkts: b.buffer_pkts,
        buffer_bytes: b.buffer_bytes,
        access_rate: b.access_rate,
        side_buffer_pkts: b.side_buffer_pkts,
        loss: b.loss,
        rate_changes,
        traces: b.traces,
        netem: b.netem,
        access,
    };
    Ok((cfg, b.pkt_size, Value::Object(t.finish()?)))
}

pub(super) fn parking_lot(v: &Value, aqm: QdiscConfig) -> Result<(ParkingLotConfig, u32, Value)> {
    let mut t = Table::new("parking_lot", v)?;
    let hops = t.int_or("hops", 1, 10_000, 2)? as u32;
    let hop_delay = t.time_or("link_delay", false, 0.01)?;
    let access_delay = t.time_or("access_delay", false, 0.005)?;
    let b = builder_keys(&mut t, &mut TraceFiles::new())?;
    let cfg = ParkingLotConfig {
        hops,
        bottleneck_rate: b.rate,
        hop_delay,
        access_delay,
        aqm,
        reverse_aqm: None,
        buffer_pkts: b.buffer_pkts,
        buffer_bytes: b.buffer_bytes,
        access_rate: b.access_rate,
        side_buffer_pkts: b.side_buffer_pkts,
        loss: b.loss,
        traces: b.traces,
        netem: b.netem,
    };
    Ok((cfg, b.pkt_size, Value::Object(t.finish()?)))
}

pub(super) type ExplicitNorm = (Value, Value, Value);

pub(super) fn explicit(
    doc: &Value,
    any_ecn: bool,
) -> Result<(ExplicitTopology, Vec<String>, ExplicitNorm)> {
    let empty = Value::Array(Vec::new());
    let as_array = |k: &str| -> Result<&Vec<Value>> {
        match doc.get(k).unwrap_or(&empty) {
            Value::Array(a) => Ok(a),
            other => Err(err(k, Some(other), "must be an array of tables")),
        }
    };
    let mut nodes = Vec::new();
    let mut norm_nodes = Vec::new();
    let mut seen = HashSet::new();
    for (i, n) in as_array("nodes")?.iter().enumerate() {
        let mut t = Table::new(format!("nodes[{i}]"), n)?;
        let name = t.string("name")?;
        let name = t.required("name", name, "a node name")?;
        if !seen.insert(name.clone()) {
            return Err(err(
                &format!("nodes[{i}].name"),
                n.get("name"),
                "duplicate node name",
            ));
        }
        nodes.push(name);
        norm_nodes.push(Value::Object(t.finish()?));
    }
    let node_ok = |key: &str, v: Option<&Value>, name: &str| -> Result<()> {
        if seen.contains(name) {
            Ok(())
        } else {
            Err(err(key, v, "no such node"))
        }
    };
    let mut links = Vec::new();
    let mut norm_links = Vec::new();
    let mut monitor = Vec::new();
    let mut link_names = BTreeSet::new();
    let mut files = TraceFiles::new();
    for (i, l) in as_array("links")?.iter().enumerate() {
        let path = format!("links[{i}]");
        let mut t = Table::new(path.clone(), l)?;
        let src = t.string("src")?;
        let src = t.required("src", src, "a node name")?;
        let dst = t.string("dst")?;
        let dst = t.required("dst", dst, "a node name")?;
        node_ok(&format!("{path}.src"), l.get("src"), &src)?;
        node_ok(&format!("{path}.dst"), l.get("dst"), &dst)?;
        if src == dst {
            return Err(err(
                &format!("{path}.dst"),
                l.get("dst"),
                "a link must join two different nodes",
            ));
        }
        let duplex = t.boolean("duplex", true)?;
        let traces = rate_traces(&mut t, &mut files, duplex)?;
        let rate = nominal_rate(&mut t, &traces, "the link rate, e.g. \"10Mbps\"")?;
        let delay = t.time_or("delay", false, 0.0)?;
        let (limit_pkts, limit_bytes) =
            buffer_limit(&mut t, crate::config::DEFAULT_LINK_BUFFER as u64)?;
        let loss = t.probability("loss")?;
        let netem = netems(&mut t, duplex)?;
        let aqm_v = t.raw("aqm");
        let mut aqm = parse_aqm(&format!("{path}.aqm"), aqm_v)?;
        apply_ecn_default(&mut aqm, any_ecn);
        t.put("aqm", Value::Object(aqm.normalized.clone()));
        let name = t.string("name")?;
        let mon = t.boolean("monitor", true)?;
        let display = name.clone().unwrap_or_else(|| format!("{src}->{dst}"));
        let mut names = vec![display.clone()];
        if duplex {
            names.push(format!("{dst}->{src}"));
        }
        for n in &names {
            if !link_names.insert(n.clone()) {
                return Err(err(
                    &format!("{path}.name"),
                    None,
                    format!("duplicate link name '{n}'"),
                ));
            }
        }
        if mon {
            // a duplex link is two links, each with its own queue: both are monitored
            monitor.extend(names);
        }
        links.push(LinkConfig {
            name,
            from: src,
            to: dst,
            rate,
            delay,
            loss,
            aqm: aqm.cfg,
            limit_pkts,
            limit_bytes,
            duplex,
            traces,
            netem,
        });
        norm_links.push(Value::Object(t.finish()?));
    }
    let mut routes = Vec::new();
    let mut norm_routes = Vec::new();
    for (i, r) in as_array("routes")?.iter().enumerate() {
        let path = format!("routes[{i}]");
        let mut t = Table::new(path.clone(), r)?;
        let at = t.string("at")?;
        let at = t.required("at", at, "the node where the entry is installed")?;
        let dst = t.string("dst")?;
        let dst = t.required("dst", dst, "the destination node")?;
        let link = t.string("link")?;
        let link = t.required("link", link, "the name of a link leaving `at`")?;
        node_ok(&format!("{path}.at"), r.get("at"), &at)?;
        node_ok(&format!("{path}.dst"), r.get("dst"), &dst)?;
        if !link_names.contains(&link) {
            return Err(err(&format!("{path}.link"), r.get("link"), "no such link"));
        }
        routes.push(RouteConfig { at, dst, link });
        norm_routes.push(Value::Object(t.finish()?));
    }
    let topo = ExplicitTopology {
        nodes,
        links,
        routes,
    };
    Ok((
        topo,
        monitor,
        (
            Value::Array(norm_nodes),
            Value::Array(norm_links),
            Value::Array(norm_routes),
        ),
    ))
}
