//! The fabrics' links and flows: `[leaf_spine]` and `[fat_tree]` (`experiment::fabric` gives
//! the graph and the patterns; routing is [`crate::ecmp`]'s).

use aqm::QdiscConfig;

use crate::engine::secs_to_ns;
use crate::topology::LinkSpec;
use experiment::config::{ConfigError, FlowGroup};
use experiment::fabric::FabricConfig;

/// The fabric's node names, its links (the queue of a link is its source node's tier's) and
/// each flow group's `(sender, receiver)` hosts from its pattern (seeded by `seed`); the
/// monitored links are every switch's egress queue.
pub(crate) struct Fabric {
    pub(crate) nodes: Vec<String>,
    pub(crate) links: Vec<LinkSpec>,
    pub(crate) link_names: Vec<String>,
    pub(crate) endpoints: Vec<Vec<(u32, u32)>>,
    pub(crate) monitor: Vec<u32>,
}

pub(crate) fn build(
    f: &FabricConfig,
    flows: &[FlowGroup],
    seed: u64,
) -> Result<Fabric, ConfigError> {
    let g = f.shape.graph();
    let table = f.shape.table();
    let delay = secs_to_ns(f.delay);
    let mut links = Vec::with_capacity(g.links.len());
    let mut link_names = Vec::with_capacity(g.links.len());
    let mut monitor = Vec::new();
    for (i, l) in g.links.iter().enumerate() {
        let tier = &f.tiers[l.tier as usize];
        let rate = if l.fabric { f.fabric_rate } else { f.host_rate };
        if l.tier > 0 && f.monitor {
            monitor.push(i as u32);
        }
        link_names.push(g.link_name(l));
        links.push(LinkSpec {
            key: format!("{table}.aqm.{}", f.shape.tiers()[l.tier as usize]).into(),
            from: l.from,
            to: l.to,
            rate_bps: rate.round() as u64,
            delay,
            loss: 0.0,
            aqm: QdiscConfig::clone(&tier.aqm),
            limit: tier.limit,
            capacity: None,
            netem: None,
        });
    }
    let hosts = f.shape.hosts() as u32;
    let mut endpoints = Vec::with_capacity(flows.len());
    for (gi, grp) in flows.iter().enumerate() {
        let t = match grp {
            FlowGroup::Tcp(t) => t,
            // each arrival draws its own pair of hosts (`ShortFlowGen::next_pair`); the
            // group's pair only serves the build's routability check
            FlowGroup::ShortTcp(_) => {
                endpoints.push(vec![(0, 1)]);
                continue;
            }
            _ => {
                return Err(ConfigError::invalid(
                    format!("flows[{gi}].kind"),
                    grp.kind(),
                    "fabrics take kind = \"tcp\" groups with a pattern and tcp_short groups",
                ))
            }
        };
        let Some(p) = t.pattern else {
            return Err(ConfigError::invalid(
                format!("flows[{gi}].pattern"),
                "null",
                "required on a fabric",
            ));
        };
        // hosts are nodes 0 .. hosts
        endpoints.push(p.pairs(hosts, seed, gi as u64));
    }
    Ok(Fabric {
        nodes: g.nodes,
        links,
        link_names,
        endpoints,
        monitor,
    })
}
