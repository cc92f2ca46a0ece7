//! Building a simulation from its configuration: nodes, links and routes from the topology,
//! flows and their random streams, classes, monitors and timers.

use aqm::LinkInfo;

use super::{tcp_params, GroupRt, Simulation, RESERVED_ROWS};
use crate::engine::{secs_to_ns, Event, EventQueue, Ns};
use crate::link::Link;
use crate::routing::NO_ROUTE;
use crate::traffic::{Endpoint, Flow, FlowKind, ShortFlowGen};
use crate::udp::{UdpSource, UDP_HEADER_BYTES};
use experiment::config::{ConfigError, FlowGroup, SimConfig, TopologyConfig, DEFAULT_START_JITTER};
use experiment::results::{ClassSeries, CwndTrace, TimeSeries};
use experiment::rng::{derive_seed, Rng, Stream};

impl Simulation {
    /// Validates `cfg` and builds the simulation at time 0.
    pub fn new(cfg: SimConfig) -> Result<Simulation, ConfigError> {
        let mut built = crate::topology::build(&cfg)?;
        let seed = cfg.seed;
        let group_class = resolve_classes(&cfg, &built)?;
        let specs = std::mem::take(&mut built.links);
        let mut links = Vec::with_capacity(specs.len());
        // (huge pages for a table of many megabytes read at random: `memhint`)
        memhint::huge_pages(&links);
        for (i, l) in specs.into_iter().enumerate() {
            let q = aqm::Qdisc::new(
                &l.aqm,
                l.limit,
                LinkInfo::new(aqm::BitsPerSec(l.rate_bps)),
                derive_seed(seed, Stream::Queue, i as u64),
            )
            .map_err(|error| ConfigError::Aqm {
                key: format!("{}.aqm", l.key),
                error,
            })?;
            links.push(Link::new(
                l.from,
                l.to,
                l.rate_bps,
                l.delay,
                l.loss,
                Rng::derive(seed, Stream::LinkLoss, i as u64),
                q,
            ));
            if let Some(c) = &l.capacity {
                let link = links.last_mut().expect("just pushed");
                link.set_service(experiment::service::Service::new(c.clone()));
            }
            if let Some(n) = &l.netem {
                let rng = Rng::derive(seed, Stream::Netem, i as u64);
                let link = links.last_mut().expect("just pushed");
                link.set_netem(experiment::netem::Netem::new(n.clone(), rng));
            }
        }
        for &m in &built.monitor {
            let mut mon = Box::<experiment::monitor::LinkMonitor>::default();
            mon.set_classes(links[m as usize].queue.num_classes());
            // a per-flow histogram slot for every static flow, reserved (grown by doubling
            // as flow ids appear it held up to twice that; pages no flow reaches stay
            // untouched)
            mon.flows
                .reserve_exact(built.endpoints.iter().map(Vec::len).sum());
            links[m as usize].set_mon(mon);
        }
        let mut ev = EventQueue::new();
        if matches!(cfg.topology, TopologyConfig::Fabric(_)) {
            // a lane per far node (`Pipes::with_groups`): hundreds of links share one delay
            ev.set_links_grouped(links.iter().map(|l| (l.delay, l.to, l.to)));
        } else {
            ev.set_links(links.iter().map(|l| (l.delay, l.to)));
        }
        let mut flows = Vec::with_capacity(built.endpoints.iter().map(Vec::len).sum());
        memhint::huge_pages(&flows);
        let mut groups = Vec::new();
        for (gi, g) in cfg.flows.iter().enumerate() {
            let mut rng = Rng::derive(seed, Stream::Group, gi as u64);
            let eps = &built.endpoints[gi];
            let start_of = |rng: &mut Rng, start: Option<f64>, jitter: Option<f64>| {
                let base = start.unwrap_or(0.0);
                let j = jitter.unwrap_or(if start.is_none() {
                    DEFAULT_START_JITTER
                } else {
                    0.0
                });
                secs_to_ns(base + j * rng.uniform())
            };
            match g {
                FlowGroup::Tcp(t) => {
                    let mut p = tcp_params(
                        t.cc,
                        t.ecn,
                        t.delayed_ack,
                        t.sack,
                        t.prr,
                        t.packet_size,
                        t.init_cwnd,
                        t.min_rto,
                        t.rwnd,
                        t.accecn,
                        t.rtt_scaling,
                    )
                    .with_extras(t.extras);
                    p.pacing = t.pacing;
                    for &(s, d) in eps {
                        let id = flows.len() as u32;
                        let start = start_of(&mut rng, t.start, t.start_jitter);
                        flows.push(Flow::tcp(
                            id,
                            gi as u32,
                            FlowKind::Tcp,
                            s,
                            d,
                            start,
                            t.stop.map(secs_to_ns),
                            t.bytes,
                            p,
                        ));
                    }
                    groups.push(GroupRt::Static);
                }
                FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => {
                    let onoff = matches!(g, FlowGroup::UdpOnoff(_));
                    for &(s, d) in eps {
                        let id = flows.len() as u32;
                        let start = start_of(&mut rng, u.start, u.start_jitter);
                        let src = UdpSource::new(
                            d,
                            u.packet_size,
                            u.rate,
                            if onoff {
                                Some((u.on_mean.unwrap_or(1.0), u.off_mean.unwrap_or(1.0)))
                            } else {
                                None
                            },
                            Rng::derive(seed, Stream::Flow, id as u64),
                        );
                        flows.push(Flow {
                            id,
                            group: gi as u32,
                            kind: if onoff {
                                FlowKind::UdpOnoff
                            } else {
                                FlowKind::UdpCbr
                            },
                            cc: None,
                            src: s,
                            dst: d,
                            start,
                            stop: u.stop.map(secs_to_ns),
                            size: None,
                            mss: u.packet_size - UDP_HEADER_BYTES,
                            started: false,
                            ep: Endpoint::Udp(src),
                            udp_bytes: 0,
                            rcv_high: 0,
                            in_net: 0,
                            warm: Default::default(),
                            stop_snap: None,
                            delays: Default::default(),
                            ping: None,
                        });
                    }
                    groups.push(GroupRt::Static);
                }
                FlowGroup::Ping(p) => {
                    let interval = secs_to_ns(p.interval).max(1);
                    for &(s, d) in eps {
                        let id = flows.len() as u32;
                        let start = start_of(&mut rng, p.start, p.start_jitter);
                        let src = UdpSource::periodic(
                            d,
                            p.size,
                            interval,
                            Rng::derive(seed, Stream::Flow, id as u64),
                        );
                        flows.push(Flow {
                            id,
                            group: gi as u32,
                            kind: FlowKind::Ping,
                            cc: None,
                            src: s,
                            dst: d,
                            start,
                            stop: p.stop.map(secs_to_ns),
                            size: None,
                            mss: p.size - UDP_HEADER_BYTES,
                            started: false,
                            ep: Endpoint::Udp(src),
                            udp_bytes: 0,
                            rcv_high: 0,
                            in_net: 0,
                            warm: Default::default(),
                            stop_snap: None,
                            delays: Default::default(),
                            ping: Some(Box::default()),
                        });
                    }
                    groups.push(GroupRt::Static);
                }
                FlowGroup::ShortTcp(s) => {
                    let mut p = tcp_params(
                        s.cc,
                        s.ecn,
                        s.delayed_ack,
                        s.sack,
                        s.prr,
                        s.packet_size,
                        s.init_cwnd,
                        s.min_rto,
                        None,
                        s.accecn,
                        s.rtt_scaling,
                    )
                    .with_extras(s.extras);
                    p.pacing = s.pacing;
                    let mut gen = ShortFlowGen {
                        rate: s.arrival_rate,
                        mean_size: s.mean_size,
                        shape: s.pareto_shape,
                        params: p,
                        src: eps[0].0,
                        dst: eps[0].1,
                        stop: s.stop.map(secs_to_ns),
                        rng,
                        cdf: s.size_cdf.clone(),
                        hosts: match &cfg.topology {
                            TopologyConfig::Fabric(f) => f.shape.hosts() as u32,
                            _ => 0,
                        },
                    };
                    let first = secs_to_ns(s.start.unwrap_or(0.0) + gen.next_gap());
                    ev.schedule(first, Event::ShortArrival(gi as u32));
                    groups.push(GroupRt::Short(gen));
                }
            }
        }
        for f in &flows {
            ev.schedule(f.start, Event::FlowStart(f.id));
            if let Some(s) = f.stop {
                ev.schedule(s.max(f.start), Event::FlowStop(f.id));
            }
        }
        let warmup = secs_to_ns(cfg.warmup);
        let sample_interval = secs_to_ns(cfg.sample_interval).max(1);
        let cwnd_interval = cfg.cwnd_interval.map_or(sample_interval, secs_to_ns).max(1);
        let nf = flows.len() as u32;
        let cwnd_flows: Vec<u32> = cfg.cwnd_trace.iter().copied().filter(|&f| f < nf).collect();
        if let Some(&bad) = cfg.cwnd_trace.iter().find(|&&f| f >= nf) {
            return Err(ConfigError::invalid(
                "cwnd_trace",
                bad,
                "flow id out of range (ids count the statically created flows)",
            ));
        }
        if !built.monitor.is_empty() {
            ev.schedule(sample_interval, Event::Sample);
        }
        if !cwnd_flows.is_empty() {
            ev.schedule(0, Event::CwndSample);
        }
        if warmup > 0 {
            ev.schedule(warmup, Event::Warmup);
        }
        let mut link_index: Vec<u32> = (0..links.len() as u32).collect();
        let link_names = std::mem::take(&mut built.link_names);
        link_index.sort_unstable_by(|&a, &b| link_names.get(a).cmp(link_names.get(b)));
        let runs_cake = links.iter().any(|l| l.queue.aqm_name() == "cake");
        let lookahead = super::lookahead::worth_it(links.len(), flows.len());
        let mut sim = Simulation {
            now: 0,
            warmup,
            sample_interval,
            cwnd_interval,
            ev,
            events: 0,
            node_names: std::mem::take(&mut built.nodes),
            links,
            link_names,
            link_index,
            replaced: Default::default(),
            classed: group_class.iter().any(|&c| c != 0)
                || cfg.flows.iter().any(|g| g.dscp() != 0)
                || runs_cake,
            lookahead,
            group_dscp: cfg.flows.iter().map(|g| g.dscp()).collect(),
            group_class,
            class_snap: Vec::new(),
            cake_snap: Vec::new(),
            routes: built.routes,
            pool: crate::flow_pool::FlowPool {
                n_static: nf,
                delays: vec![Default::default(); cfg.flows.len()],
                ..Default::default()
            },
            flows,
            groups,
            monitored: built.monitor,
            cwnd_flows,
            ts: TimeSeries::default(),
            ts_link: Vec::new(),
            cts: ClassSeries::default(),
            cts_ids: Vec::new(),
            cwnd: CwndTrace::default(),
            out_buf: Vec::new(),
            sent: 0,
            delivered: 0,
            warm: false,
            link_snap: Vec::new(),
            trace_links: built.trace,
            tracing: false,
            capture: None,
            pcap_links: Vec::new(),
            host_tap: None,
            host_ifaces: [0; 2],
            cfg,
        };
        sim.reserve_samples();
        if sim.groups.iter().any(|g| matches!(g, GroupRt::Short(_))) {
            // the links report short flows' drops (the pool counts their packets in the
            // network), and the monitors forget a short flow's sojourn times when it finishes
            sim.ev.gone_from = Some(nf);
            for l in &mut sim.links {
                if let Some(m) = l.mon_mut() {
                    m.pooled_from = Some(nf);
                }
            }
        }
        if warmup == 0 {
            sim.end_warmup();
        }
        Ok(sim)
    }

    /// Makes room in the time series for every sample of the configured run (at most
    /// [`RESERVED_ROWS`] rows each; a longer series grows as it goes), so that sampling does
    /// not reallocate and the columns end no larger than they need to be.
    pub(super) fn reserve_samples(&mut self) {
        let end = secs_to_ns(self.cfg.duration);
        let rows = |interval: Ns, n: usize| {
            ((end / interval) as usize + 1)
                .saturating_mul(n)
                .min(RESERVED_ROWS)
        };
        let ts = rows(self.sample_interval, self.monitored.len());
        self.ts.reserve(ts);
        self.ts_link.reserve_exact(ts);
        self.cwnd
            .reserve(rows(self.cwnd_interval, self.cwnd_flows.len()));
    }

    /// Parses a scenario document (JSON with the user's keys, `docs/scenario.md`) and builds
    /// it: the scenario's error (key, value, reason) or the build's (routability).
    pub fn from_json(json: &str) -> Result<Simulation, Box<dyn std::error::Error + Send + Sync>> {
        let sc = experiment::scenario::Scenario::from_json(json)?;
        Ok(Simulation::new(sc.config)?)
    }
}

/// The class index of each flow group's packets. A group's `class` must name
/// a class of every class-based qdisc on the forward path of each of its
/// flows, at the same position (packets carry the index, not the name).
pub(super) fn resolve_classes(
    cfg: &SimConfig,
    built: &crate::topology::Built,
) -> Result<Vec<u8>, ConfigError> {
    let mut out = Vec::with_capacity(cfg.flows.len());
    for (gi, g) in cfg.flows.iter().enumerate() {
        let Some(name) = g.class() else {
            out.push(0);
            continue;
        };
        let bad =
            |reason: String| ConfigError::invalid(format!("flows[{gi}].class"), name, &reason);
        let mut index: Option<usize> = None;
        for &(src, dst) in &built.endpoints[gi] {
            let mut at = src;
            let mut hops = 0;
            while at != dst && hops <= built.links.len() {
                let l = built.routes.next_hop(at, dst);
                if l == NO_ROUTE {
                    break;
                }
                let spec = &built.links[l as usize];
                let names = spec.aqm.class_names();
                if !names.is_empty() {
                    match names.iter().position(|n| *n == name) {
                        None => {
                            return Err(bad(format!(
                                "no such class in the AQM of link '{}' (classes: {})",
                                built.link_names.get(l),
                                names.join(", ")
                            )))
                        }
                        Some(i) if index.is_some_and(|j| j != i) => {
                            return Err(bad(format!(
                                "class lists differ along the path (link '{}')",
                                built.link_names.get(l)
                            )))
                        }
                        Some(i) => index = Some(i),
                    }
                }
                at = spec.to;
                hops += 1;
            }
        }
        match index {
            Some(i) => out.push(i as u8),
            None => {
                return Err(bad(
                    "no class-based AQM (e.g. type = \"drr\") on the group's path".into(),
                ))
            }
        }
    }
    Ok(out)
}
