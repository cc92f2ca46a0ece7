//! Bidirectional traffic (`direction = "reverse"`, `[reverse_aqm]`): flows in both directions
//! of the dumbbell and the parking lot, each direction's bottleneck with its own AQM, data and
//! ACKs sharing the queues they cross.

mod common;

use netsim::Simulation;
use serde_json::{json, Value};

/// 2 forward + 2 reverse CUBIC flows on a 10 Mb/s, 50 ms dumbbell, CoDel (5 ms target) on
/// both bottlenecks (the reverse one takes the `[aqm]` table by default).
fn two_by_two(extra: Value) -> Value {
    let mut doc = json!({
        "name": "bidir", "seed": 3, "duration": 40.0, "warmup": 10.0,
        "dumbbell": {"rate": "10Mbps", "rtt": "50ms", "buffer": 200},
        "aqm": {"type": "codel"},
        "flows": [
            {"count": 2, "cc": "cubic"},
            {"count": 2, "cc": "cubic", "direction": "reverse"},
        ],
    });
    if let (Some(d), Value::Object(e)) = (doc.as_object_mut(), extra) {
        d.extend(e);
    }
    doc
}

#[test]
fn both_directions_are_bottlenecks_under_codel() {
    let sim = common::run(common::scenario(two_by_two(json!({}))));
    let s = sim.summary();
    let names: Vec<&str> = s.links.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["R1->R2", "R2->R1"],
        "both bottlenecks are monitored"
    );
    for (name, l) in &s.links {
        assert_eq!(l.aqm, "codel", "{name}");
        // Two long-lived CUBIC flows each way keep each bottleneck busy (0.93-0.95 here);
        // two-way traffic costs some capacity to ACK compression (the ns-3 test below).
        assert!(
            l.utilization > 0.85,
            "{name}: utilization {}",
            l.utilization
        );
        assert!(l.drops > 0, "{name}: CoDel drops");
    }
    // Per-flow results say the direction, and each flow's bottleneck queue is its data's.
    for f in &s.flows {
        let (dir, link) = if f.group == 0 {
            ("forward", "R1->R2")
        } else {
            ("reverse", "R2->R1")
        };
        assert_eq!(f.direction, dir, "flow {}", f.id);
        assert_eq!(f.queue_delay_link.as_deref(), Some(link), "flow {}", f.id);
        // its ACKs queued in the other direction's bottleneck
        assert_eq!(f.queue_delay_by_link.len(), 2, "flow {}", f.id);
        assert!(f.goodput_bps > 1e6, "flow {}: {}", f.id, f.goodput_bps);
    }
    assert_eq!(s.groups[1].direction, "reverse");
}

/// CoDel under two-way traffic, against ns-3 3.37 (`validation/ns3/dumbbell.cc --flows 2
/// --reverse-flows 2 --cc cubic --aqm codel --rate 10Mbps --rtt 50ms --buffer 200 --duration
/// 40s --warmup 10s`, seeds 1-5, CoDel on both bottleneck devices, no delayed ACKs, no SACK:
/// aqmlab's `classic` profile). ns-3's mean sojourn, averaged over the five seeds and the two
/// directions, is 27.6 ms (per seed and direction 12.6 to 39.9 ms), far above CoDel's 5 ms
/// target and the 6.4 ms of the same run without reverse flows: the queues drain below the
/// target within each interval as the ACK-compressed bursts pass (Zhang, Shenker and Clark,
/// "Observations on the dynamics of a congestion control algorithm: the effects of two-way
/// traffic", SIGCOMM 1991), so CoDel's persistence test keeps resetting. Tolerance: 10 ms,
/// about two standard errors of the difference of two 5-seed means whose per-run spread is
/// about 8 ms in either simulator.
#[test]
fn codel_under_two_way_traffic_agrees_with_ns3() {
    const NS3_MEAN_DELAY_MS: f64 = 27.6;
    let mut delays = Vec::new();
    for seed in 1..=5u64 {
        let doc = two_by_two(json!({"seed": seed, "profile": "classic"}));
        let s = common::run(common::scenario(doc)).summary();
        for (name, l) in &s.links {
            // ns-3: 0.69-0.95 per seed and direction (mean 0.81); aqmlab 0.84-0.95
            assert!(
                l.utilization > 0.75,
                "seed {seed} {name}: {}",
                l.utilization
            );
            delays.push(l.queue_delay_ms.mean);
        }
    }
    let mean = delays.iter().sum::<f64>() / delays.len() as f64;
    assert!(
        (mean - NS3_MEAN_DELAY_MS).abs() < 10.0,
        "mean sojourn {mean:.1} ms over both directions and 5 seeds ({delays:?}); ns-3 27.6 ms"
    );
}

/// Every packet that reached `R2` from a host leaves through `R2->R1` (the routers forward at
/// once): the reverse bottleneck's arrivals are exactly the forward receivers' ACKs plus the
/// reverse senders' data, and likewise at `R1->R2`.
#[test]
fn data_and_acks_share_the_queues_they_cross() {
    let sim = common::run(common::scenario(two_by_two(json!({}))));
    let delivered = |l: &str| sim.link_status(l).unwrap().counters.delivered;
    let arrivals = |l: &str| sim.link_status(l).unwrap().counters.arrivals;
    // hosts: S0, S1 send forward (at R1), S2, S3 reverse (at R2); D0, D1 at R2, D2, D3 at R1
    let fwd_acks = delivered("D0->R2") + delivered("D1->R2");
    let rev_data = delivered("S2->R2") + delivered("S3->R2");
    assert!(fwd_acks > 10_000, "forward flows' ACKs: {fwd_acks}");
    assert!(rev_data > 10_000, "reverse flows' data: {rev_data}");
    assert_eq!(arrivals("R2->R1"), fwd_acks + rev_data);
    let rev_acks = delivered("D2->R1") + delivered("D3->R1");
    let fwd_data = delivered("S0->R1") + delivered("S1->R1");
    assert_eq!(arrivals("R1->R2"), rev_acks + fwd_data);
    // the forward flows' ACKs are about one per two data packets (delayed ACKs)
    let ratio = fwd_acks as f64 / fwd_data as f64;
    assert!((0.4..0.7).contains(&ratio), "ACKs per data packet {ratio}");
}

#[test]
fn reverse_aqm_table_sets_the_reverse_bottleneck() {
    // a type of its own
    let doc = two_by_two(json!({"reverse_aqm": {"type": "pie"}}));
    let sim = Simulation::new(common::scenario(doc)).unwrap();
    assert_eq!(sim.link_status("R2->R1").unwrap().aqm, "pie");
    assert_eq!(sim.link_status("R1->R2").unwrap().aqm, "codel");
    // without a type: the [aqm] table with these keys changed
    let doc = two_by_two(json!({"reverse_aqm": {"target": "10ms"}}));
    let sc = experiment::scenario::Scenario::from_value(&doc).unwrap();
    let rev = sc.config.topology.reverse_aqm().unwrap();
    assert_eq!(rev.name(), "codel");
    assert_eq!(rev.get_param("target"), Some(0.01));
    assert_eq!(
        sc.config.topology.aqm().unwrap().get_param("target"),
        Some(0.005)
    );
    assert_eq!(sc.normalized["reverse_aqm"]["target"], json!(0.01));
    assert!(sc
        .link_aliases
        .contains(&("R2->R1".to_string(), "bottleneck_reverse".to_string())));
}

#[test]
fn forward_only_scenarios_keep_the_drop_tail_ack_path() {
    let doc = json!({
        "duration": 5.0, "dumbbell": {"rate": "10Mbps"}, "aqm": {"type": "codel"},
        "flows": [{"count": 2}],
    });
    let sc = experiment::scenario::Scenario::from_value(&doc).unwrap();
    assert!(sc.config.topology.reverse_aqm().is_none());
    assert!(sc.normalized.get("reverse_aqm").is_none());
    assert!(sc.normalized["flows"][0].get("direction").is_none());
    let sim = common::run(sc.config);
    assert_eq!(sim.link_status("R2->R1").unwrap().aqm, "droptail");
    assert_eq!(sim.summary().links.len(), 1);
    // [reverse_aqm] alone puts an AQM on the ACK path and monitors it
    let mut doc = doc;
    doc["reverse_aqm"] = json!({"type": "codel"});
    let sim = common::run(common::scenario(doc));
    let s = sim.summary();
    assert_eq!(s.links["R2->R1"].aqm, "codel");
    assert!(s.links["R2->R1"].arrivals > 0);
}

#[test]
fn parking_lot_reverse_groups_cross_the_chain_backwards() {
    let doc = json!({
        "seed": 2, "duration": 10.0, "warmup": 2.0,
        "parking_lot": {"hops": 2, "rate": "10Mbps"},
        "aqm": {"type": "codel"},
        "flows": [
            {"count": 1, "cc": "cubic"},
            {"count": 1, "cc": "cubic", "direction": "reverse"},
            {"count": 1, "cc": "cubic", "direction": "reverse", "path": 1},
        ],
    });
    let sim = common::run(common::scenario(doc));
    assert_eq!(
        sim.flow_path(1).unwrap(),
        ["S1->R2", "R2->R1", "R1->R0", "R0->D1"]
    );
    assert_eq!(sim.flow_path(2).unwrap(), ["S2->R2", "R2->R1", "R1->D2"]);
    let s = sim.summary();
    let names: Vec<&str> = s.links.keys().map(String::as_str).collect();
    assert_eq!(names, ["R0->R1", "R1->R0", "R1->R2", "R2->R1"]);
    // the reverse hop R2->R1 carries both reverse flows' data: its queue is the busier one
    assert!(s.links["R2->R1"].utilization > 0.9);
    assert_eq!(s.flows[2].queue_delay_link.as_deref(), Some("R2->R1"));
}

#[test]
fn bare_dumbbell_reverse_flows_run_from_r2() {
    let doc = json!({
        "duration": 5.0, "dumbbell": {"rate": "10Mbps", "access": "none"},
        "aqm": {"type": "codel"},
        "flows": [{"count": 1}, {"count": 1, "direction": "reverse"}],
    });
    let sim = common::run(common::scenario(doc));
    assert_eq!(sim.flow_path(1).unwrap(), ["R2->R1"]);
    assert!(sim.flow_status(1).unwrap().bytes_delivered > 0);
}

#[test]
fn bad_direction_names_the_key_and_value() {
    let bad = |doc: Value| {
        experiment::scenario::Scenario::from_value(&doc)
            .unwrap_err()
            .to_string()
    };
    let e = bad(json!({"dumbbell": {"rate": 1e7}, "flows": [{"direction": "sideways"}]}));
    assert_eq!(
        e,
        r#"flows[0].direction = "sideways": must be one of forward, reverse"#
    );
    let e = bad(json!({
        "nodes": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "rate": 1e7}],
        "flows": [{"src": "a", "dst": "b", "direction": "reverse"}],
    }));
    assert!(
        e.starts_with(r#"flows[0].direction = "reverse": only for [dumbbell]"#),
        "{e}"
    );
    let e = bad(json!({
        "nodes": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "rate": 1e7}],
        "reverse_aqm": {"type": "codel"}, "flows": [{"src": "a", "dst": "b"}],
    }));
    assert!(e.starts_with("reverse_aqm = "), "{e}");
    let e = bad(
        json!({"dumbbell": {"rate": 1e7}, "reverse_aqm": {"type": "nope"},
                       "flows": [{}]}),
    );
    assert!(e.starts_with("reverse_aqm.type = "), "{e}");
}
