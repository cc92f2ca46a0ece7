//! Fabrics (`[leaf_spine]`, `[fat_tree]`): structure against Al-Fares et al. (SIGCOMM 2008,
//! section 3.2), ECMP path counts and spreading, loop freedom, and whole runs.

use std::collections::HashMap;

use experiment::scenario::Scenario;
use netsim::ecmp::GROUP;
use netsim::routing::NO_ROUTE;
use netsim::topology::{build, Built};
use netsim::Simulation;

fn scenario(topo: &str, flows: &str) -> Scenario {
    let text = format!(
        r#"{{"seed": 3, "duration": "1s", {topo}, "aqm": {{"type": "red", "min_th": 20, "max_th": 21, "w_q": 1, "max_p": 1, "ecn": true}},
            "flows": [{flows}]}}"#
    );
    Scenario::from_json(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn fat_tree(k: u32, ecmp: &str) -> Built {
    let sc = scenario(
        &format!(r#""fat_tree": {{"k": {k}, "rate": "10Gbps", "ecmp": "{ecmp}"}}"#),
        r#"{"pattern": "permutation", "cc": "dctcp", "size": "100kB"}"#,
    );
    build(&sc.config).unwrap()
}

/// Every shortest path from `src` to `dst` the table allows (following every member of
/// every group); panics on a loop (a path longer than the node count).
fn all_paths(b: &Built, src: u32, dst: u32) -> Vec<Vec<u32>> {
    fn walk(b: &Built, at: u32, dst: u32, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if at == dst {
            out.push(path.clone());
            return;
        }
        assert!(path.len() <= b.nodes.len(), "loop: {path:?}");
        let e = b.routes.entry(at, dst);
        assert_ne!(
            e,
            NO_ROUTE,
            "no route {} -> {}",
            b.nodes.get(at),
            b.nodes.get(dst)
        );
        let members: Vec<u32> = if e >= GROUP {
            b.routes.ecmp().members(e - GROUP).to_vec()
        } else {
            vec![e]
        };
        for l in members {
            assert_eq!(b.links[l as usize].from, at);
            path.push(l);
            walk(b, b.links[l as usize].to, dst, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(b, src, dst, &mut Vec::new(), &mut out);
    out
}

fn host(b: &Built, name: &str) -> u32 {
    b.nodes.iter().position(|n| n == name).unwrap() as u32
}

/// k^3/4 hosts; between pods (k/2)^2 equal-cost paths of 6 links, within a pod across edge
/// switches k/2 paths of 4 links, under one edge switch 1 path of 2 links; every pair
/// reachable without loops (checked by `all_paths`).
#[test]
fn fat_tree_paths() {
    for k in [4u32, 6] {
        let b = fat_tree(k, "flow");
        let half = k / 2;
        let hosts = (k * k * k / 4) as usize;
        assert_eq!(b.nodes.iter().filter(|n| n.starts_with('h')).count(), hosts);
        assert_eq!(b.nodes.len(), hosts + (k * k + k * k / 4) as usize);
        for s in 0..hosts as u32 {
            for d in 0..hosts as u32 {
                if s == d {
                    continue;
                }
                let paths = all_paths(&b, s, d);
                let pod = |h: u32| h / (half * half);
                let edge = |h: u32| h / half;
                let (n, len) = if pod(s) != pod(d) {
                    ((half * half) as usize, 6)
                } else if edge(s) != edge(d) {
                    (half as usize, 4)
                } else {
                    (1, 2)
                };
                assert_eq!(paths.len(), n, "k={k} h{s} -> h{d}");
                assert!(paths.iter().all(|p| p.len() == len));
            }
        }
        // groups, not per-flow routes: one per switch and direction up (the k/2 uplinks of
        // each of the k^2/2 edge and k^2/2 aggregation switches)
        assert_eq!(b.routes.ecmp().groups(), (k * k) as usize);
    }
}

/// Many flows between two hosts in different pods spread over all (k/2)^2 = 4 paths
/// (k = 4): 4000 flows, each path's count binomial(4000, 1/4), sd 27.4, bound 5 sd.
#[test]
fn fat_tree_ecmp_spreads_flows() {
    let b = fat_tree(4, "flow");
    let (s, d) = (host(&b, "h0"), host(&b, "h15"));
    let mut counts: HashMap<Vec<u32>, i64> = HashMap::new();
    for flow in 0..4000u32 {
        let mut at = s;
        let mut path = Vec::new();
        while at != d {
            let l = b.routes.next_hop_flow(at, d, flow);
            path.push(l);
            at = b.links[l as usize].to;
        }
        *counts.entry(path).or_default() += 1;
    }
    assert_eq!(counts.len(), 4, "{counts:?}");
    for (p, c) in &counts {
        assert!((c - 1000).abs() <= 137, "{c} flows on {p:?}");
    }
}

/// Leaf-spine: one path under a leaf, `spines` paths between leaves.
#[test]
fn leaf_spine_paths() {
    let sc = scenario(
        r#""leaf_spine": {"leaves": 3, "spines": 4, "hosts_per_leaf": 2, "rate": "10Gbps"}"#,
        r#"{"pattern": "permutation", "cc": "dctcp", "size": "100kB"}"#,
    );
    let b = build(&sc.config).unwrap();
    assert_eq!(all_paths(&b, 0, 1).len(), 1);
    assert_eq!(all_paths(&b, 0, 2).len(), 4);
    assert_eq!(all_paths(&b, 5, 0).len(), 4);
    // oversubscription 1 by default: 2 x 10 Gb/s down, 4 x 5 Gb/s up
    let link = |name: &str| &b.links[b.link_names.iter().position(|n| n == name).unwrap()];
    let up = link("l0->s0");
    assert_eq!(up.rate_bps, 5_000_000_000);
    assert_eq!(
        b.monitor.len(),
        2 * 3 + 2 * 3 * 4,
        "every switch egress link"
    );
    // host_buffer sets the hosts' NIC queues only; monitor = "none" monitors nothing
    let sc = scenario(
        r#""leaf_spine": {"leaves": 3, "spines": 4, "hosts_per_leaf": 2, "rate": "10Gbps",
            "buffer": 50, "host_buffer": 1000, "monitor": "none"}"#,
        r#"{"pattern": "permutation", "cc": "dctcp", "size": "100kB"}"#,
    );
    let b = build(&sc.config).unwrap();
    let limit = |name: &str| b.links[b.link_names.iter().position(|n| n == name).unwrap()].limit;
    assert_eq!(limit("h0->l0"), aqm::QueueLimit::Packets(1000));
    assert_eq!(limit("l0->h0"), aqm::QueueLimit::Packets(50));
    assert!(b.monitor.is_empty());
}

/// A whole run: a k = 4 fat tree, a DCTCP permutation of 200 kB flows, per-flow and
/// per-packet ECMP: every flow completes, packets are conserved, and the run is the same
/// twice (determinism).
#[test]
fn fat_tree_permutation_runs() {
    for ecmp in ["flow", "packet"] {
        let run = || {
            let sc = scenario(
                &format!(
                    r#""fat_tree": {{"k": 4, "rate": "10Gbps", "delay": "1us", "ecmp": "{ecmp}"}}"#
                ),
                r#"{"pattern": "permutation", "cc": "dctcp", "size": "200kB", "start": 0, "start_jitter": 0}"#,
            );
            let mut sim = Simulation::new(sc.config).unwrap();
            sim.run();
            sim.check_conservation().unwrap();
            let s = sim.summary();
            assert_eq!(s.flows.len(), 16);
            let fct: Vec<f64> = s
                .flows
                .iter()
                .map(|f| f.fct_s.expect("completed"))
                .collect();
            (fct, s.events)
        };
        let (a, ea) = run();
        let (b, eb) = run();
        assert_eq!(a, b, "{ecmp}");
        assert_eq!(ea, eb);
        // 200 kB at 10 Gb/s is 160 us of serialisation
        assert!(a.iter().all(|&t| t > 160e-6 && t < 1.0), "{ecmp}: {a:?}");
    }
}

/// FCT slowdown against its closed form: two hosts under two leaves joined by one spine (4
/// hops each way, 10 Gb/s, 1 us per link), one 500-byte flow each way, no delayed ACK. A
/// lone packet is stored and forwarded at every hop: FCT = 4 x (540 B + 40 B ACK) x 8 / 10
/// Gb/s + 8 us; ideal = 500 x 8 / 10 Gb/s + 8 us (exact to the nanosecond rounding).
#[test]
fn fct_slowdown_closed_form() {
    let sc = scenario(
        r#""leaf_spine": {"leaves": 2, "spines": 1, "hosts_per_leaf": 1, "rate": "10Gbps",
            "spine_rate": "10Gbps", "delay": "1us"}"#,
        r#"{"pattern": "permutation", "size": 500, "packet_size": 540, "delack": false,
            "start": 0, "start_jitter": 0}"#,
    );
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    let s = sim.summary();
    let fct = 4.0 * 580.0 * 8.0 / 1e10 + 8e-6;
    let ideal = 500.0 * 8.0 / 1e10 + 8e-6;
    for f in &s.flows {
        assert!((f.fct_s.unwrap() - fct).abs() < 2e-9, "{:?}", f.fct_s);
    }
    let b = s.fct_slowdown.expect("a fabric reports slowdowns");
    assert_eq!(b[0].bucket, "<100KB");
    assert_eq!(b[0].flows, 2);
    assert!((b[0].p50.unwrap() - fct / ideal).abs() < 1e-3, "{:?}", b[0]);
    assert_eq!(b[4].flows, 2);
}

/// Web-search short flows between random hosts at 30 % load: every size bucket below 10 MB
/// gets flows, every slowdown is at least 1, and a dumbbell's summary has no slowdown table.
#[test]
fn websearch_load_on_a_fat_tree() {
    let sc = scenario(
        r#""fat_tree": {"k": 4, "rate": "1Gbps", "delay": "1us", "buffer": 200}"#,
        r#"{"kind": "tcp_short", "size_cdf": "websearch", "load": 0.3, "cc": "dctcp"}"#,
    );
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    let s = sim.summary();
    let b = s.fct_slowdown.unwrap();
    // 0.3 x 16 x 1 Gb/s / (8 x 1.71 MB) = 351 flows/s: about 350 flows in the second
    assert!(
        s.flows.len() > 250 && s.flows.len() < 450,
        "{}",
        s.flows.len()
    );
    for k in &b[..3] {
        assert!(k.flows > 0, "{k:?}");
        assert!(k.p50.unwrap() >= 1.0, "{k:?}");
    }
    // pairs are random: more than one receiver
    let dsts: std::collections::HashSet<_> = (0..s.flows.len() as u32)
        .map(|i| sim.flow_path(i).unwrap().last().cloned())
        .collect();
    assert!(dsts.len() > 8, "{dsts:?}");
    let sc =
        Scenario::from_json(r#"{"duration": "1s", "dumbbell": {"rate": "10Mbps"}, "flows": [{}]}"#)
            .unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    assert!(sim.summary().fct_slowdown.is_none());
}
