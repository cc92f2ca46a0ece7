//! The scenario schema: the one description of a simulation that users write (TOML files,
//! `aqmlab dumbbell` options, Python dicts) and the only one Python sees. It is parsed here,
//! validated here with errors that name the key path and value
//! (`dumbbell.rate = "1e400bps": not a finite rate`), and converted once into the internal
//! [`SimConfig`] that `netsim::Simulation::new` builds.
//!
//! Units: a quantity is a number in the SI base unit (seconds, bits/s, bytes) or a string with
//! a unit (`"10Mbps"`, `"5ms"`, `"1500B"`; see [`aqm::units`]). The field-by-field reference is
//! `docs/scenario.md`; [`Scenario::normalized`] returns the scenario with every default filled
//! in and every quantity in base units.
//!
//! ```
//! use experiment::scenario::Scenario;
//! let sc = Scenario::from_json(r#"{"duration": "5s", "dumbbell": {"rate": "10Mbps"},
//!                                   "aqm": {"type": "codel", "target": "5ms"},
//!                                   "flows": [{"count": 4, "ecn": true}]}"#).unwrap();
//! assert_eq!(sc.config.duration, 5.0);
//! assert_eq!(sc.link_aliases, vec![("R1->R2".to_string(), "bottleneck".to_string())]);
//! // the AQM marks because the flows are ECN-capable and the scenario did not say otherwise
//! assert_eq!(sc.config.topology.aqm().unwrap().get_param("ecn"), Some(1.0));
//! let err = Scenario::from_json(r#"{"dumbbell": {"rate": "1e400bps"}, "flows": [{}]}"#);
//! assert_eq!(err.unwrap_err().to_string(), r#"dumbbell.rate = "1e400bps": not a finite rate"#);
//! ```

mod cost;
mod error;
mod fabric;
#[cfg(test)]
mod fabric_tests;
mod flows;
mod output;
mod pcap;
mod qdisc;
mod reverse;
mod table;
#[cfg(test)]
mod tests;
mod topology;
mod trace;

use aqm::QdiscConfig;
use cost::Cost;
use error::{err, Result};
use flows::flow_group;
use pcap::parse_pcap;
use qdisc::{apply_ecn_default, parse_aqm};
use serde_json::Value;
use table::Table;
use topology::{dumbbell, explicit, parking_lot};
use trace::parse_trace;

use crate::config::{
    DumbbellConfig, ExplicitTopology, FlowGroup, ParkingLotConfig, SimConfig, TopologyConfig,
};

pub use cost::{BYTES_PER_CLASS_SAMPLE, BYTES_PER_FLOW, BYTES_PER_SAMPLE, MAX_MEMORY_BYTES};
pub use error::ScenarioError;
pub use qdisc::read_policy;

/// The topology section, before flows are attached.
enum Topo {
    Dumbbell(DumbbellConfig, u32),
    ParkingLot(ParkingLotConfig, u32),
    Explicit(ExplicitTopology, Vec<String>),
    Fabric(crate::fabric::FabricConfig, u32),
}

/// A validated scenario: the simulator config plus what the front ends need.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The internal config `netsim::Simulation::new` builds.
    pub config: SimConfig,
    /// Core link names and the names results use (`R1->R2` -> `bottleneck`).
    pub link_aliases: Vec<(String, String)>,
    /// The scenario with defaults filled in and quantities in SI base units.
    pub normalized: Value,
    /// Estimated memory of the run, bytes: the time series, the flows and the cwnd traces as
    /// the size limit ([`MAX_MEMORY_BYTES`]) counts them.
    pub memory_bytes: f64,
}

impl Scenario {
    /// Parses and validates a scenario given as JSON text (Python passes `json.dumps` of the
    /// TOML document).
    pub fn from_json(text: &str) -> Result<Scenario> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| err("", None, format!("not a JSON document: {e}")))?;
        Scenario::from_value(&v)
    }

    /// Parses and validates a scenario document.
    pub fn from_value(doc: &Value) -> Result<Scenario> {
        let mut t = Table::new("", doc)?;
        let name = t.string("name")?.unwrap_or_else(|| "scenario".into());
        t.put("name", name.clone());
        let seed = t.int_or("seed", 0, u64::MAX, 1)?;
        let duration = t.time_or("duration", true, 60.0)?;
        let warmup = t.time_or("warmup", false, 0.0)?;
        if warmup >= duration {
            return Err(err(
                "warmup",
                doc.get("warmup"),
                format!("must be shorter than duration = {duration} s"),
            ));
        }
        let sample_interval = t.time_or("sample_interval", true, 0.01)?;
        let routing = match t.choice("routing", &["hops", "delay"], "hops")? {
            "delay" => crate::config::Metric::Delay,
            _ => crate::config::Metric::Hops,
        };
        let cwnd_interval = t.time("cwnd_interval", true)?;
        // The TCP profile of flow groups that name none.
        let profile = t.choice("profile", flows::PROFILES, "linux")?;

        // Flow groups first: the AQM's ECN default depends on them.
        let groups = t.array("flows")?;
        if groups.is_empty() {
            return Err(err(
                "flows",
                doc.get("flows"),
                "give at least one flow group ([[flows]])",
            ));
        }
        let kinds = ["dumbbell", "parking_lot", "links", "leaf_spine", "fat_tree"]
            .iter()
            .filter(|k| t.has(k))
            .count();
        if kinds != 1 {
            return Err(err(
                "",
                None,
                "give exactly one topology: [dumbbell], [parking_lot], [leaf_spine], [fat_tree] \
                 or [[nodes]] + [[links]]",
            ));
        }
        let any_ecn = groups.iter().any(|g| {
            g.get("ecn") == Some(&Value::Bool(true))
                || g.get("cc").and_then(|c| c.as_str()).is_some_and(|c| {
                    matches!(c.trim().to_ascii_lowercase().as_str(), "dctcp" | "prague")
                })
        });
        let aqm_value = t.raw("aqm");
        let mut aqm = parse_aqm("aqm", aqm_value)?;
        apply_ecn_default(&mut aqm, any_ecn);
        t.put("aqm", Value::Object(aqm.normalized.clone()));
        let reverse_aqm = reverse::reverse_aqm(&mut t, doc, groups, &aqm, any_ecn)?;
        // `[sqm] period = "5s"`: SQM's online controller (run by `aqmlab run`, Python) every
        // period over the links running the sqm qdisc; checked here, not used by the core.
        let sqm_table = match t.raw("sqm") {
            Some(v) => {
                let mut st = Table::new("sqm", v)?;
                st.time_or("period", true, 5.0)?;
                st.choice("sigma_rule", &["reno", "delay", "theorem3"], "reno")?;
                st.choice("state", &["ogd", "measured", "num"], "ogd")?;
                Some(st.finish()?)
            }
            None => None,
        };

        let mut link_aliases = Vec::new();
        let topo = if let Some(v) = t.raw("dumbbell") {
            let (mut cfg, pkt, norm) = dumbbell(v, aqm.cfg.clone(), duration)?;
            t.put("dumbbell", norm);
            link_aliases.push(("R1->R2".to_string(), "bottleneck".to_string()));
            cfg.reverse_aqm = reverse_aqm.clone();
            link_aliases.extend(reverse::aliases(&cfg.reverse_aqm, None));
            Topo::Dumbbell(cfg, pkt)
        } else if let Some(v) = t.raw("parking_lot") {
            let (mut cfg, pkt, norm) = parking_lot(v, aqm.cfg.clone())?;
            for i in 0..cfg.hops {
                link_aliases.push((format!("R{i}->R{}", i + 1), format!("bottleneck{i}")));
            }
            t.put("parking_lot", norm);
            cfg.reverse_aqm = reverse_aqm.clone();
            link_aliases.extend(reverse::aliases(&cfg.reverse_aqm, Some(cfg.hops)));
            Topo::ParkingLot(cfg, pkt)
        } else if let Some((table, v)) = ["leaf_spine", "fat_tree"]
            .into_iter()
            .find_map(|k| t.raw(k).map(|v| (k, v)))
        {
            if let Some(rv) = doc.get("reverse_aqm") {
                return Err(err(
                    "reverse_aqm",
                    Some(rv),
                    format!("only for [dumbbell] and [parking_lot] (a fabric sets each tier's queue: {table}.aqm.TIER)"),
                ));
            }
            let (cfg, pkt, norm) = fabric::fabric(table, v, &aqm, any_ecn)?;
            t.put(table, norm);
            Topo::Fabric(cfg, pkt)
        } else {
            reverse::refuse_explicit(doc)?;
            t.raw("links");
            let (topo, monitor, norm) = explicit(doc, any_ecn)?;
            t.put("nodes", norm.0);
            t.put("links", norm.1);
            t.put("routes", norm.2);
            Topo::Explicit(topo, monitor)
        };
        t.raw("nodes");
        t.raw("routes");
        // `[sqm] period = "5s"`: SQM's online controller (run by `aqmlab run`, Python) every
        // period over the links running the sqm qdisc; checked here, not used by the core.
        if let Some(st) = sqm_table {
            let runs_sqm = match &topo {
                Topo::Explicit(e, _) => {
                    e.links.iter().any(|l| matches!(l.aqm, QdiscConfig::Sqm(_)))
                }
                _ => matches!(aqm.cfg, QdiscConfig::Sqm(_)),
            };
            if !runs_sqm {
                return Err(err(
                    "sqm",
                    None,
                    format!(
                        "the online controller needs a link running the sqm qdisc \
                         ([aqm] type = \"sqm\", or a link's aqm in an explicit topology; aqm is {})",
                        aqm.cfg.name()
                    ),
                ));
            }
            t.put("sqm", Value::Object(st));
        }
        if !matches!(topo, Topo::Explicit(..)) {
            for k in ["nodes", "routes"] {
                if t.has(k) {
                    return Err(err(
                        k,
                        doc.get(k),
                        "only for explicit topologies ([[links]])",
                    ));
                }
            }
        }

        let pkt_size = match &topo {
            Topo::Dumbbell(_, p) | Topo::ParkingLot(_, p) | Topo::Fabric(_, p) => *p,
            Topo::Explicit(..) => crate::config::DEFAULT_PACKET_SIZE,
        };
        let mut flows = Vec::with_capacity(groups.len());
        let mut norm_flows = Vec::with_capacity(groups.len());
        let mut cwnd_trace = Vec::new();
        let mut next_id = 0u32;
        let mut total_flows = 0f64;
        for (i, g) in groups.iter().enumerate() {
            let (group, trace, norm) = flow_group(i, g, &topo, pkt_size, duration, profile)?;
            let n = group.static_count();
            if trace {
                cwnd_trace.extend(next_id..next_id.saturating_add(n));
            }
            next_id = next_id.saturating_add(if matches!(group, FlowGroup::ShortTcp(_)) {
                0
            } else {
                n
            });
            total_flows += n as f64;
            flows.push(group);
            norm_flows.push(norm);
        }
        t.put("flows", Value::Array(norm_flows));
        let (trace, trace_batch) = match t.raw("trace") {
            None => (Vec::new(), None),
            Some(v) => {
                let (links, batch, norm) = parse_trace(v, &topo, &link_aliases)?;
                t.put("trace", norm);
                (links, Some(batch))
            }
        };
        let pcap = match t.raw("pcap") {
            None => None,
            Some(v) => {
                let (p, norm) = parse_pcap(v, &topo, &link_aliases)?;
                t.put("pcap", norm);
                Some(p)
            }
        };
        if let Some(v) = t.raw("output") {
            let norm = output::parse_output(v)?;
            t.put("output", norm);
        }
        let normalized = Value::Object(t.finish()?);

        let (topology, monitor) = match topo {
            Topo::Dumbbell(d, _) => (TopologyConfig::Dumbbell(d), None),
            Topo::ParkingLot(p, _) => (TopologyConfig::ParkingLot(p), None),
            Topo::Explicit(e, m) => (TopologyConfig::Explicit(e), Some(m)),
            Topo::Fabric(f, _) => (TopologyConfig::Fabric(f), None),
        };
        let monitored = match (&topology, &monitor) {
            // a fabric monitors every switch's egress queue
            (TopologyConfig::Fabric(f), None) if f.monitor => {
                f.shape.graph().links.iter().filter(|l| l.tier > 0).count()
            }
            (TopologyConfig::Fabric(_), None) => 0,
            _ => monitor.as_ref().map_or(link_aliases.len(), Vec::len),
        } as f64;
        let biggest = flows
            .iter()
            .enumerate()
            .max_by_key(|(_, g)| g.static_count())
            .map(|(i, _)| i);
        let classes = match &topology {
            TopologyConfig::Explicit(e) => e
                .links
                .iter()
                .map(|l| l.aqm.class_names().len())
                .max()
                .unwrap_or(0),
            TopologyConfig::Fabric(f) => f
                .tiers
                .iter()
                .map(|q| q.aqm.class_names().len())
                .max()
                .unwrap_or(0),
            other => other.aqm().map_or(0, |a| a.class_names().len()),
        } as f64;
        let cost = Cost {
            duration,
            sample_interval,
            cwnd_interval,
            monitored,
            classes,
            flows: total_flows,
            traced: cwnd_trace.len(),
        };
        cost.check(doc, biggest)?;
        let memory_bytes = cost.bytes();
        let mut config = SimConfig {
            scenario: name,
            seed,
            duration,
            warmup,
            sample_interval,
            routing,
            topology,
            flows,
            monitor,
            cwnd_trace,
            cwnd_interval,
            trace,
            trace_batch,
            pcap,
        };
        config.flows.shrink_to_fit();
        Ok(Scenario {
            config,
            link_aliases,
            normalized,
            memory_bytes,
        })
    }
}
