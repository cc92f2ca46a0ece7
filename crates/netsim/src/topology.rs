//! Topology construction: explicit nodes/links/routes, and the dumbbell and
//! parking-lot builders (the fabrics' are in `fabric.rs`). Produces plain link specifications, the routing
//! table and each flow group's endpoints; resolves every name and checks
//! that every flow is routable.
//!
//! Builder semantics (dumbbell = parking lot with one hop, but with its own
//! delays and names): routers `R1`, `R2` (dumbbell) or `R0 .. RK` (parking
//! lot); each flow `h` (in group order; one per short-flow group) gets a
//! sender host `S{h}` attached to its entry router and a receiver `D{h}`
//! attached to its exit router. Access links run at `access_rate` (default
//! 10 x bottleneck) with drop-tail buffers of `side_buffer_pkts`; the
//! forward bottlenecks `R{i}->R{i+1}` carry the configured AQM, buffer and
//! loss; reverse bottlenecks are drop-tail with the side buffer, or, with a
//! `reverse_aqm` (bidirectional traffic), that AQM with the bottleneck's
//! buffer, monitored after the forward ones. A group with
//! `direction = reverse` has its senders at the exit router and its
//! receivers at the entry router, so its data crosses the chain backwards
//! through the reverse bottlenecks and its ACKs the forward ones. Dumbbell
//! delays: each access link `rtt/8`, the bottleneck `rtt/4` (two-way
//! propagation delay `rtt`); a flow's `extra_delay` is added to its sender's
//! access link in both directions. With `access = none` the dumbbell has
//! no hosts and no access links: every flow runs from `R1` to `R2`, the
//! bottleneck delay is `rtt/2` each way.

use aqm::{QdiscConfig, QueueLimit};

use crate::engine::{secs_to_ns, Ns};
use crate::name_index::NameIndex;
use crate::names::Names;
use crate::routing::{Edge, Routes, NO_ROUTE};
use experiment::config::{
    droptail, Access, ConfigError, Direction, DumbbellConfig, FlowGroup, ParkingLotConfig,
    SimConfig, TopologyConfig, DEFAULT_LINK_BUFFER,
};
use experiment::netem::{LinkNetem, NetemSpec};
use experiment::service::Capacity;
use std::fmt;
use std::sync::Arc;

/// A resolved unidirectional link.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// Config key the link came from (for errors; not allocated for the builders' access
    /// links, hundreds of thousands on a large dumbbell).
    pub key: std::borrow::Cow<'static, str>,
    /// Source node index.
    pub from: u32,
    /// Destination node index.
    pub to: u32,
    /// Rate, bits/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay: Ns,
    /// Bernoulli loss probability.
    pub loss: f64,
    /// Queue discipline.
    pub aqm: QdiscConfig,
    /// Buffer limit.
    pub limit: QueueLimit,
    /// A varying capacity the link follows (`None`: `rate_bps`, which is then nominal).
    pub capacity: Option<Capacity>,
    /// netem impairments of the packets leaving the link (`None`: none).
    pub netem: Option<Arc<NetemSpec>>,
}

/// The built network.
#[derive(Clone, Debug)]
pub struct Built {
    /// Node names (index = node id).
    pub nodes: Names,
    /// Links (index = link id).
    pub links: Vec<LinkSpec>,
    /// Link names (index = link id).
    pub link_names: Names,
    /// Next-hop table.
    pub routes: Routes,
    /// Monitored link ids.
    pub monitor: Vec<u32>,
    /// Traced link ids (`SimConfig::trace`, in its order).
    pub trace: Vec<u32>,
    /// Per flow group: `(src node, dst node)` of each statically created flow
    /// (one entry for a short-flow group).
    pub endpoints: Vec<Vec<(u32, u32)>>,
}

#[derive(Default)]
struct Net {
    nodes: Names,
    index: NameIndex,
    links: Vec<LinkSpec>,
    link_names: Names,
    link_index: NameIndex,
}

/// Appends the name `args` formats to `names` and records it in `index`; if `names` has it
/// already, takes it back and returns it.
fn add_name(names: &mut Names, index: &mut NameIndex, args: fmt::Arguments) -> Result<u32, String> {
    let id = names.push_fmt(args);
    let name = names.get(id);
    if index.insert(name, id, |i| names.get(i)).is_err() {
        let name = name.to_string();
        names.pop();
        return Err(name);
    }
    Ok(id)
}

impl Net {
    /// A node named `name` (its id); `key` names the config entry in the error if the name
    /// is taken.
    fn node(&mut self, key: &str, name: fmt::Arguments) -> Result<u32, ConfigError> {
        add_name(&mut self.nodes, &mut self.index, name).map_err(|name| ConfigError::Duplicate {
            key: key.to_string(),
            name,
        })
    }

    fn lookup(&self, key: &str, name: &str) -> Result<u32, ConfigError> {
        self.index
            .get(name, |i| self.nodes.get(i))
            .ok_or_else(|| ConfigError::UnknownNode {
                key: key.to_string(),
                name: name.to_string(),
            })
    }

    /// A link named `name` (its id).
    fn link(&mut self, name: fmt::Arguments, spec: LinkSpec) -> Result<u32, ConfigError> {
        let id = add_name(&mut self.link_names, &mut self.link_index, name).map_err(|name| {
            ConfigError::Duplicate {
                key: spec.key.to_string(),
                name,
            }
        })?;
        debug_assert_eq!(id as usize, self.links.len());
        self.links.push(spec);
        Ok(id)
    }

    /// The id of the link named `name`.
    fn link_id(&self, name: &str) -> Option<u32> {
        self.link_index.get(name, |i| self.link_names.get(i))
    }

    fn edges(&self) -> Vec<Edge> {
        self.links
            .iter()
            .map(|l| Edge {
                from: l.from,
                to: l.to,
                delay: l.delay,
            })
            .collect()
    }
}

/// The queue limit of a buffer given in packets or bytes (the scenario guarantees one, or the
/// default, and that it is positive).
fn limit_of(pkts: Option<u32>, bytes: Option<u64>, default: u32) -> QueueLimit {
    match (pkts, bytes) {
        (_, Some(b)) => QueueLimit::Bytes(b),
        (Some(p), None) => QueueLimit::Packets(p),
        (None, None) => QueueLimit::Packets(default),
    }
}

/// Builds the network described by `cfg` (names resolved, routes computed,
/// routability checked).
pub fn build(cfg: &SimConfig) -> Result<Built, ConfigError> {
    let mut net = Net::default();
    let (endpoints, default_monitor) = match &cfg.topology {
        TopologyConfig::Explicit(t) => {
            for (i, n) in t.nodes.iter().enumerate() {
                net.node(&format!("nodes[{i}]"), format_args!("{n}"))?;
            }
            for (i, l) in t.links.iter().enumerate() {
                let key = format!("links[{i}]");
                let from = net.lookup(&format!("{key}.src"), &l.from)?;
                let to = net.lookup(&format!("{key}.dst"), &l.to)?;
                if from == to {
                    return Err(ConfigError::invalid(
                        format!("{key}.dst"),
                        &l.to,
                        "a link must join two different nodes",
                    ));
                }
                let limit = limit_of(l.limit_pkts, l.limit_bytes, DEFAULT_LINK_BUFFER);
                let (fwd, rev) = l.traces.capacities();
                let (nf, nr) = (l.netem.forward.clone(), l.netem.reverse.clone());
                let spec = LinkSpec {
                    key: key.clone().into(),
                    from,
                    to,
                    rate_bps: l.rate.round() as u64,
                    delay: secs_to_ns(l.delay),
                    loss: l.loss,
                    aqm: l.aqm.clone(),
                    limit,
                    capacity: fwd,
                    netem: nf,
                };
                match &l.name {
                    Some(n) => net.link(format_args!("{n}"), spec.clone())?,
                    None => net.link(format_args!("{}->{}", l.from, l.to), spec.clone())?,
                };
                if l.duplex {
                    net.link(
                        format_args!("{}->{}", l.to, l.from),
                        LinkSpec {
                            from: to,
                            to: from,
                            capacity: rev,
                            netem: nr,
                            ..spec
                        },
                    )?;
                }
            }
            let mut eps = Vec::new();
            for (gi, g) in cfg.flows.iter().enumerate() {
                let at = g.endpoints();
                let key = |f: &str| format!("flows[{gi}].{f}");
                let src = at.src.ok_or_else(|| {
                    ConfigError::invalid(key("src"), "null", "required for explicit topologies")
                })?;
                let dst = at.dst.ok_or_else(|| {
                    ConfigError::invalid(key("dst"), "null", "required for explicit topologies")
                })?;
                let s = net.lookup(&key("src"), src)?;
                let d = net.lookup(&key("dst"), dst)?;
                if s == d {
                    return Err(ConfigError::invalid(
                        key("dst"),
                        dst,
                        "must differ from src",
                    ));
                }
                eps.push(vec![(s, d); g.static_count() as usize]);
            }
            let all: Vec<u32> = (0..net.links.len() as u32).collect();
            (eps, all)
        }
        TopologyConfig::Dumbbell(d) => build_dumbbell(&mut net, d, &cfg.flows)?,
        TopologyConfig::ParkingLot(p) => build_parking_lot(&mut net, p, &cfg.flows)?,
        TopologyConfig::Fabric(f) => {
            let fab = crate::fabric::build(f, &cfg.flows, cfg.seed)?;
            for n in &fab.nodes {
                net.node(f.shape.table(), format_args!("{n}"))?;
            }
            for (l, n) in fab.links.into_iter().zip(&fab.link_names) {
                net.link(format_args!("{n}"), l)?;
            }
            (fab.endpoints, fab.monitor)
        }
    };

    let edges = net.edges();
    let mut routes = match &cfg.topology {
        TopologyConfig::Fabric(f) => {
            // hosts are nodes 0 .. hosts, the only destinations
            let hosts = f.shape.hosts() as u32;
            crate::ecmp::compute(
                net.nodes.len(),
                &edges,
                cfg.routing,
                f.ecmp,
                cfg.seed,
                0..hosts,
            )
        }
        _ => Routes::compute(net.nodes.len(), &edges, cfg.routing),
    };
    if let TopologyConfig::Explicit(t) = &cfg.topology {
        for (i, r) in t.routes.iter().enumerate() {
            let key = format!("routes[{i}]");
            let at = net.lookup(&format!("{key}.at"), &r.at)?;
            let dst = net.lookup(&format!("{key}.dst"), &r.dst)?;
            let l = net
                .link_id(&r.link)
                .ok_or_else(|| ConfigError::UnknownLink {
                    key: format!("{key}.link"),
                    name: r.link.clone(),
                })?;
            if net.links[l as usize].from != at {
                return Err(ConfigError::invalid(
                    format!("{key}.link"),
                    &r.link,
                    "link does not leave node `at`",
                ));
            }
            routes.set(at, dst, l);
        }
    }

    // Routability: data path for every flow, ACK path for TCP.
    for (gi, g) in cfg.flows.iter().enumerate() {
        // TCP's ACKs and a ping's echoes come back
        let tcp = matches!(
            g,
            FlowGroup::Tcp(_) | FlowGroup::ShortTcp(_) | FlowGroup::Ping(_)
        );
        for (j, &(s, d)) in endpoints[gi].iter().enumerate() {
            let fwd = routes.path(&edges, s, d).is_some();
            let rev = !tcp || routes.path(&edges, d, s).is_some();
            if !(fwd && rev) {
                let (a, b) = if fwd { (d, s) } else { (s, d) };
                return Err(ConfigError::Unroutable {
                    flow: format!("{}#{j}", g.display_name(gi)),
                    src: net.nodes.get(a).to_string(),
                    dst: net.nodes.get(b).to_string(),
                });
            }
        }
    }

    // Link names of `monitor` / `trace` to link ids (an unknown name names its entry).
    let ids = |field: &str, names: &[String]| -> Result<Vec<u32>, ConfigError> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                net.link_id(n).ok_or_else(|| ConfigError::UnknownLink {
                    key: format!("{field}[{i}]"),
                    name: n.clone(),
                })
            })
            .collect()
    };
    let monitor = match &cfg.monitor {
        None => default_monitor,
        Some(names) => ids("monitor", names)?,
    };
    debug_assert!(monitor.iter().all(|&l| l != NO_ROUTE));
    let trace = ids("trace", &cfg.trace)?;
    net.nodes.shrink_to_fit();
    net.link_names.shrink_to_fit();
    Ok(Built {
        nodes: net.nodes,
        links: net.links,
        link_names: net.link_names,
        routes,
        monitor,
        trace,
        endpoints,
    })
}

/// Shared parameters of the chain builders.
struct Chain<'a> {
    routers: Vec<String>,
    rate: f64,
    hop_delay: Ns,
    access_delay: Ns,
    access_rate: f64,
    aqm: &'a QdiscConfig,
    /// The reverse bottlenecks' qdisc when they are bottlenecks too (`None`: drop-tail ACK
    /// path with the side buffer, unmonitored).
    reverse_aqm: Option<&'a QdiscConfig>,
    limit: QueueLimit,
    side: QueueLimit,
    loss: f64,
    parking_lot: bool,
    /// Varying capacities of the forward and reverse bottlenecks.
    caps: (Option<Capacity>, Option<Capacity>),
    /// netem impairments of the forward and reverse bottlenecks.
    netem: LinkNetem,
}

type Endpointss = (Vec<Vec<(u32, u32)>>, Vec<u32>);

fn build_dumbbell(
    net: &mut Net,
    d: &DumbbellConfig,
    flows: &[FlowGroup],
) -> Result<Endpointss, ConfigError> {
    let access_rate = d.access_rate.unwrap_or(10.0 * d.bottleneck_rate);
    let limit = limit_of(d.buffer_pkts, d.buffer_bytes, DEFAULT_LINK_BUFFER);
    let side = QueueLimit::Packets(d.side_buffer_pkts);
    let rtt = secs_to_ns(d.rtt);
    let bare = d.access == Access::None;
    if bare && d.access_rate.is_some() {
        return Err(ConfigError::invalid(
            "topology.access_rate",
            access_rate,
            "no access links with access = \"none\"",
        ));
    }
    // With access links: `rtt/4` each way on the bottleneck and `rtt/8` on every access link.
    // Without (`access = "none"`): the bottleneck pair alone, `rtt/2` each way.
    let (hop_delay, access_delay) = if bare {
        (rtt / 2, 0)
    } else {
        (rtt / 4, rtt / 8)
    };
    let chain = Chain {
        caps: d.capacities(),
        netem: d.netem.clone(),
        routers: vec!["R1".into(), "R2".into()],
        rate: d.bottleneck_rate,
        hop_delay,
        access_delay,
        access_rate,
        aqm: &d.aqm,
        reverse_aqm: d.reverse_aqm.as_ref(),
        limit,
        side,
        loss: d.loss,
        parking_lot: false,
    };
    if bare {
        build_bare_dumbbell(net, chain, flows)
    } else {
        build_chain(net, chain, flows)
    }
}

/// The dumbbell without access links ([`Access::None`]): routers `R1`, `R2` only, the
/// bottleneck pair with `rtt/2` each way; every flow's endpoints are `(R1, R2)` (flows are
/// told apart by their flow id, not by their node).
fn build_bare_dumbbell(
    net: &mut Net,
    c: Chain,
    flows: &[FlowGroup],
) -> Result<Endpointss, ConfigError> {
    let (routers, monitor) = build_routers(net, &c)?;
    let (r1, r2) = (routers[0], routers[1]);
    let mut eps = Vec::new();
    for (gi, g) in flows.iter().enumerate() {
        let at = g.endpoints();
        let key = |f: &str| format!("flows[{gi}].{f}");
        reject_endpoints(gi, &at, "only for explicit topologies")?;
        if let Some(p) = at.path {
            return Err(ConfigError::invalid(
                key("path"),
                format!("{p:?}"),
                "only for parking_lot topologies",
            ));
        }
        if !at.extra_delay.is_empty() {
            return Err(ConfigError::invalid(
                key("extra_delay"),
                format!("{:?}", at.extra_delay),
                "needs access links (not with access = \"none\")",
            ));
        }
        let pair = match at.direction {
            Direction::Forward => (r1, r2),
            Direction::Reverse => (r2, r1),
        };
        eps.push(vec![pair; g.static_count() as usize]);
    }
    Ok((eps, monitor))
}

/// A builder topology's flow group names no `src`/`dst` (those are for explicit topologies);
/// `why` is the error's reason.
fn reject_endpoints(
    gi: usize,
    at: &experiment::config::Endpoints,
    why: &str,
) -> Result<(), ConfigError> {
    if at.src.is_some() || at.dst.is_some() {
        return Err(ConfigError::invalid(
            format!(
                "flows[{gi}].{}",
                if at.src.is_some() { "src" } else { "dst" }
            ),
            at.src.or(at.dst).unwrap_or_default(),
            why,
        ));
    }
    Ok(())
}

fn build_parking_lot(
    net: &mut Net,
    p: &ParkingLotConfig,
    flows: &[FlowGroup],
) -> Result<Endpointss, ConfigError> {
    let access_rate = p.access_rate.unwrap_or(10.0 * p.bottleneck_rate);
    let limit = limit_of(p.buffer_pkts, p.buffer_bytes, DEFAULT_LINK_BUFFER);
    let side = QueueLimit::Packets(p.side_buffer_pkts);
    build_chain(
        net,
        Chain {
            caps: p.traces.capacities(),
            netem: p.netem.clone(),
            routers: (0..=p.hops).map(|i| format!("R{i}")).collect(),
            rate: p.bottleneck_rate,
            hop_delay: secs_to_ns(p.hop_delay),
            access_delay: secs_to_ns(p.access_delay),
            access_rate,
            aqm: &p.aqm,
            reverse_aqm: p.reverse_aqm.as_ref(),
            limit,
            side,
            loss: p.loss,
            parking_lot: true,
        },
        flows,
    )
}

/// The chain's routers and, between consecutive ones, the bottleneck pair (forward with the
/// AQM, reverse drop-tail or with the reverse AQM); returns the routers' node ids and the
/// monitored links: the forward bottlenecks, then the reverse ones if they have an AQM.
fn build_routers(net: &mut Net, c: &Chain) -> Result<(Vec<u32>, Vec<u32>), ConfigError> {
    let k = c.routers.len() - 1;
    let mut routers = Vec::new();
    for (i, r) in c.routers.iter().enumerate() {
        routers.push(net.node(&format!("topology.routers[{i}]"), format_args!("{r}"))?);
    }
    let dt = droptail();
    let mut monitor = Vec::new();
    let mut reverse = Vec::new();
    let (rev_aqm, rev_limit) = match c.reverse_aqm {
        Some(q) => (q, c.limit),
        None => (&dt, c.side),
    };
    for i in 0..k {
        let (a, b) = (routers[i], routers[i + 1]);
        let key = format!("topology.bottleneck[{i}]");
        monitor.push(net.link(
            format_args!("{}->{}", c.routers[i], c.routers[i + 1]),
            LinkSpec {
                key: key.clone().into(),
                from: a,
                to: b,
                rate_bps: c.rate.round() as u64,
                delay: c.hop_delay,
                loss: c.loss,
                aqm: c.aqm.clone(),
                limit: c.limit,
                capacity: c.caps.0.clone(),
                netem: c.netem.forward.clone(),
            },
        )?);
        reverse.push(net.link(
            format_args!("{}->{}", c.routers[i + 1], c.routers[i]),
            LinkSpec {
                key: key.into(),
                from: b,
                to: a,
                rate_bps: c.rate.round() as u64,
                delay: c.hop_delay,
                loss: 0.0,
                aqm: rev_aqm.clone(),
                limit: rev_limit,
                capacity: c.caps.1.clone(),
                netem: c.netem.reverse.clone(),
            },
        )?);
    }
    if c.reverse_aqm.is_some() {
        monitor.extend(reverse);
    }
    Ok((routers, monitor))
}

fn build_chain(net: &mut Net, c: Chain, flows: &[FlowGroup]) -> Result<Endpointss, ConfigError> {
    let k = c.routers.len() - 1;
    let (routers, monitor) = build_routers(net, &c)?;
    let dt = droptail();
    // host `host` is `S{h}` or `D{h}` (`kind`)
    let access = |net: &mut Net, host: u32, kind: char, h: u32, r: usize, delay: Ns, out: bool| {
        let rname = &c.routers[r];
        let spec = |from, to| LinkSpec {
            key: "topology".into(),
            from,
            to,
            rate_bps: c.access_rate.round() as u64,
            delay,
            loss: 0.0,
            aqm: dt.clone(),
            limit: c.side,
            capacity: None,
            netem: None,
        };
        if out {
            net.link(format_args!("{kind}{h}->{rname}"), spec(host, routers[r]))
        } else {
            net.link(format_args!("{rname}->{kind}{h}"), spec(routers[r], host))
        }
    };
    let mut eps = Vec::new();
    let mut h = 0u32;
    for (gi, g) in flows.iter().enumerate() {
        let at = g.endpoints();
        let key = |f: &str| format!("flows[{gi}].{f}");
        reject_endpoints(
            gi,
            &at,
            "only for explicit topologies (builders create one host pair per flow)",
        )?;
        let [a, b] = match at.path {
            None => [0, k as u32],
            Some(p) if !c.parking_lot => {
                return Err(ConfigError::invalid(
                    key("path"),
                    format!("{p:?}"),
                    "only for parking_lot topologies",
                ))
            }
            Some([a, b]) if a < b && (b as usize) <= k => [a, b],
            Some(p) => {
                return Err(ConfigError::invalid(
                    key("path"),
                    format!("{p:?}"),
                    "must be [entry, exit] router indices with entry < exit <= hops",
                ))
            }
        };
        // a reverse group's senders attach where a forward group's receivers do
        let (a, b) = match at.direction {
            Direction::Forward => (a, b),
            Direction::Reverse => (b, a),
        };
        let mut pairs = Vec::new();
        for j in 0..g.static_count() as usize {
            let extra = match at.extra_delay.len() {
                0 => 0,
                1 => secs_to_ns(at.extra_delay[0]),
                _ => secs_to_ns(at.extra_delay[j]),
            };
            let s = net.node("topology", format_args!("S{h}"))?;
            let d = net.node("topology", format_args!("D{h}"))?;
            access(net, s, 'S', h, a as usize, c.access_delay + extra, true)?;
            access(net, s, 'S', h, a as usize, c.access_delay + extra, false)?;
            access(net, d, 'D', h, b as usize, c.access_delay, false)?;
            access(net, d, 'D', h, b as usize, c.access_delay, true)?;
            pairs.push((s, d));
            h += 1;
        }
        eps.push(pairs);
    }
    Ok((eps, monitor))
}
