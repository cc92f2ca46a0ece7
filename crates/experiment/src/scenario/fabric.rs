//! The fabric tables `[leaf_spine]` and `[fat_tree]` (`crate::fabric`, docs/fabric.md).

use aqm::QueueLimit;
use serde_json::{Map, Value};

use super::error::{err, Result};
use super::qdisc::{apply_ecn_default, parse_aqm, AqmSpec};
use super::table::Table;
use super::topology::{buffer_limit, pkt_size};
use super::Topo;
use crate::fabric::{EcmpMode, FabricConfig, FabricShape, TierQueue};
use crate::sizes::SizeCdf;
use std::sync::Arc;

/// Largest host count a fabric may have (a fat tree with k = 64 has 65 536).
const MAX_HOSTS: u64 = 1 << 16;

/// Parses `[leaf_spine]` or `[fat_tree]` (`table`); `aqm` is the scenario's `[aqm]`, the
/// default of every tier. Returns the fabric, its packet size and the normalised table.
pub(super) fn fabric(
    table: &'static str,
    v: &Value,
    aqm: &AqmSpec,
    any_ecn: bool,
) -> Result<(FabricConfig, u32, Value)> {
    let mut t = Table::new(table, v)?;
    let (shape, host_rate, fabric_rate) = if table == "fat_tree" {
        let k = t.int_or("k", 2, 254, 4)? as u32;
        if k % 2 == 1 {
            return Err(err(
                &t.key("k"),
                v.get("k"),
                "must be even (k/2 ports of every switch go down, k/2 up)",
            ));
        }
        let rate = t.rate("rate")?;
        let rate = t.required("rate", rate, "the rate of every link, e.g. \"10Gbps\"")?;
        (FabricShape::FatTree { k }, rate, rate)
    } else {
        let leaves = t.int_or("leaves", 1, 4096, 4)? as u32;
        let spines = t.int_or("spines", 1, 4096, 2)? as u32;
        let hosts_per_leaf = t.int_or("hosts_per_leaf", 1, 4096, 4)? as u32;
        let rate = t.rate("rate")?;
        let rate = t.required("rate", rate, "the rate of every host link, e.g. \"10Gbps\"")?;
        let spine_rate = t.rate("spine_rate")?;
        let over_given = t.has("oversubscription");
        let over = t.number(
            "oversubscription",
            1.0,
            |x| x.is_finite() && x > 0.0,
            "must be > 0 (a leaf's host capacity / its uplink capacity)",
        )?;
        let fabric_rate = match spine_rate {
            Some(_) if over_given => {
                return Err(err(
                    &t.key("spine_rate"),
                    v.get("spine_rate"),
                    "give spine_rate or oversubscription, not both",
                ))
            }
            Some(r) => {
                t.out.remove("oversubscription");
                r
            }
            None => {
                // a leaf's hosts_per_leaf x rate down, spines x spine_rate up; the normalized
                // scenario keeps the rate it implies
                let r = rate * hosts_per_leaf as f64 / (spines as f64 * over);
                t.out.remove("oversubscription");
                t.put("spine_rate", r);
                r
            }
        };
        let shape = FabricShape::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
        };
        (shape, rate, fabric_rate)
    };
    if shape.hosts() < 2 || shape.hosts() > MAX_HOSTS {
        return Err(err(
            table,
            None,
            format!("{} hosts: a fabric needs 2 ..= {MAX_HOSTS}", shape.hosts()),
        ));
    }
    let delay = t.time_or("delay", false, 1e-6)?;
    let (pkts, bytes) = buffer_limit(&mut t, 100)?;
    let limit = match (pkts, bytes) {
        (_, Some(b)) => QueueLimit::Bytes(b),
        (Some(p), None) => QueueLimit::Packets(p),
        (None, None) => unreachable!("buffer_limit gives one"),
    };
    // the hosts' NIC queues: in packets, or in bytes with buffer_bytes (default: buffer)
    let host_limit = match (t.int("host_buffer", 1, u32::MAX as u64)?, limit) {
        (None, l) => l,
        (Some(n), QueueLimit::Bytes(_)) => QueueLimit::Bytes(n),
        (Some(n), QueueLimit::Packets(_)) => QueueLimit::Packets(n as u32),
    };
    let monitor = t.choice("monitor", &["switches", "none"], "switches")? == "switches";
    let pkt = pkt_size(&mut t, "pkt_size")?.unwrap_or(crate::config::DEFAULT_PACKET_SIZE);
    t.put("pkt_size", pkt);
    let ecmp = match t.choice("ecmp", &["flow", "packet"], "flow")? {
        "packet" => EcmpMode::Packet,
        _ => EcmpMode::Flow,
    };
    // `aqm.TIER`: the qdisc of every queue leaving a node of that tier (default: [aqm])
    let empty = Value::Object(Map::new());
    let aqm_v = t.raw("aqm").unwrap_or(&empty);
    let mut at = Table::new(t.key("aqm"), aqm_v)?;
    let mut tiers = Vec::new();
    let mut norm = Map::new();
    for &tier in shape.tiers() {
        let limit = if tier == "host" { host_limit } else { limit };
        let q = match at.raw(tier) {
            None => TierQueue {
                aqm: aqm.cfg.clone(),
                limit,
            },
            Some(tv) => {
                let mut spec = parse_aqm(&at.key(tier), Some(tv))?;
                apply_ecn_default(&mut spec, any_ecn);
                norm.insert(tier.to_string(), Value::Object(spec.normalized.clone()));
                TierQueue {
                    aqm: spec.cfg,
                    limit,
                }
            }
        };
        tiers.push(q);
    }
    at.finish()?;
    if !norm.is_empty() {
        t.put("aqm", Value::Object(norm));
    }
    let cfg = FabricConfig {
        shape,
        host_rate,
        fabric_rate,
        delay,
        ecmp,
        tiers,
        monitor,
    };
    Ok((cfg, pkt, Value::Object(t.finish()?)))
}

/// `size_cdf = "websearch" | "datamining" | PATH` of a `tcp_short` group (`crate::sizes`);
/// with it the group takes neither `mean_size` nor `pareto_shape`.
pub(super) fn size_cdf(t: &mut Table<'_>, v: &Value) -> Result<Option<Arc<SizeCdf>>> {
    let Some(name) = t.string("size_cdf")? else {
        return Ok(None);
    };
    for k in ["mean_size", "pareto_shape"] {
        if t.has(k) {
            return Err(err(
                &t.key(k),
                v.get(k),
                "not with size_cdf (the CDF gives the sizes)",
            ));
        }
    }
    let cdf =
        SizeCdf::load(&name).map_err(|why| err(&t.key("size_cdf"), v.get("size_cdf"), why))?;
    Ok(Some(Arc::new(cdf)))
}

/// `load` of a `tcp_short` group on a fabric: the arrival rate that offers this fraction of
/// the hosts' link capacity, `load x hosts x host rate / (8 x mean size)` flows per second;
/// exclusive with `arrival_rate`. `None` without `load`.
pub(super) fn load_rate(
    t: &mut Table<'_>,
    v: &Value,
    topo: &Topo,
    mean_size: f64,
) -> Result<Option<f64>> {
    if !t.has("load") {
        t.raw("load");
        return Ok(None);
    }
    let Topo::Fabric(f, _) = topo else {
        return Err(err(
            &t.key("load"),
            v.get("load"),
            "only on fabrics ([leaf_spine], [fat_tree]); give arrival_rate instead",
        ));
    };
    if t.has("arrival_rate") {
        return Err(err(
            &t.key("arrival_rate"),
            v.get("arrival_rate"),
            "give load or arrival_rate, not both",
        ));
    }
    let load = t.number(
        "load",
        0.0,
        |x| x > 0.0 && x <= 1.0,
        "must be in (0, 1]: a fraction of the hosts' link capacity",
    )?;
    Ok(Some(
        load * f.shape.hosts() as f64 * f.host_rate / (8.0 * mean_size),
    ))
}
