//! SQM in whole scenarios: ten TCP NewReno flows with K = 4 elephant queues on
//! a 10 Mb/s dumbbell (RTT 50 ms, 300-packet buffer): four flows get elephant queues, six
//! share the reserved queue.

mod common;

use common::{bottleneck, dumbbell};
use serde_json::json;

const LINK: &str = "R1->R2";

fn sqm_sim(seed: u64) -> netsim::Simulation {
    let cfg = dumbbell(
        seed,
        40.0,
        10.0,
        10e6,
        0.05,
        300,
        json!({"type": "sqm", "queues": 4}),
        json!([{"kind": "tcp", "count": 10, "profile": "classic"}]),
    );
    netsim::Simulation::new(cfg).expect("config builds")
}

fn secs(s: f64) -> aqm::Instant {
    aqm::Instant((s * 1e9) as u64)
}

/// Four slots taken (the other six flows in the reserved queue), the link busy, the elephant
/// queues' delay near the 5 ms target their automatic β is computed from (β_i = 5 ms x C x
/// share), per-class results present and conserved.
#[test]
fn ten_flows_four_elephant_queues() {
    for seed in [1u64, 2] {
        let mut sim = sqm_sim(seed);
        sim.run_until(secs(10.0));
        let slots = sim.sqm_slots(LINK).unwrap().expect("sqm");
        assert_eq!(slots.len(), 4);
        assert!(slots.iter().all(Option::is_some), "{slots:?}");
        sim.run();
        sim.check_conservation().expect("conservation");
        let s = sim.summary();
        let l = bottleneck(&s);
        assert!(l.utilization > 0.95, "seed {seed}: {}", l.utilization);
        let e = &l.classes["elephants"];
        let r = &l.classes["reserved"];
        assert!(
            (2.5..8.0).contains(&e.queue_delay_ms.mean),
            "seed {seed}: elephant delay {:?}",
            e.queue_delay_ms
        );
        assert!(e.drops > 0 && r.tx_packets > 0, "{e:?} {r:?}");
        assert_eq!(e.tx_packets + r.tx_packets, l.tx_packets);
        // Each elephant sends more than a flow of the reserved queue (which shares one
        // queue six ways).
        let ids: Vec<u32> = slots.iter().map(|s| s.unwrap()).collect();
        let (mut el, mut res) = (f64::INFINITY, 0f64);
        for f in &s.flows {
            if ids.contains(&f.id) {
                el = el.min(f.goodput_bps);
            } else {
                res = res.max(f.goodput_bps);
            }
        }
        assert!(el > res, "seed {seed}: elephants {el} vs reserved {res}");
        // active_flows: the elephant slots in use, all four over the window.
        let af = l.active_flows.expect("slots in use reported");
        assert_eq!(af.max, 4, "{af:?}");
        assert!(af.mean > 3.9 && af.mean <= 4.0, "{af:?}");
    }
}

/// Weights change shares as set: the flow in slot 0 gets weight 3 (by its flow path, as the
/// controller writes it), the other elephants keep 1; over [20 s, 40 s] it delivers about 3
/// times as much as each other elephant. DRR divides the link by weight among *backlogged*
/// queues, so every elephant queue gets β = 30 packets (a standing queue; with the automatic
/// 5 ms β, 1-3 packets here, a lone Reno flow often drains its queue and weight 3 moved its
/// share by 1.3x only, seed 1).
#[test]
fn weights_change_shares() {
    let mut sim = sqm_sim(1);
    sim.run_until(secs(10.0));
    let slots: Vec<u32> = sim
        .sqm_slots(LINK)
        .unwrap()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let heavy = slots[0];
    let path = format!("flows.{}.weight", sim.flow_hash(heavy));
    sim.set_aqm_param(LINK, &path, 3.0).unwrap();
    for i in 0..4 {
        sim.set_aqm_param(LINK, &format!("queues.{i}.beta"), 30.0)
            .unwrap();
    }
    assert_eq!(sim.aqm_param(LINK, "queues.0.weight").unwrap(), Some(3.0));
    assert_eq!(sim.aqm_param(LINK, "queues.1.weight").unwrap(), Some(1.0));
    sim.run_until(secs(20.0));
    let d0: Vec<u64> = slots
        .iter()
        .map(|&f| sim.flow_status(f).unwrap().bytes_delivered)
        .collect();
    sim.run();
    assert_eq!(sim.sqm_slots(LINK).unwrap().unwrap()[0], Some(heavy));
    let got: Vec<f64> = slots
        .iter()
        .zip(&d0)
        .map(|(&f, &b)| (sim.flow_status(f).unwrap().bytes_delivered - b) as f64)
        .collect();
    let others = got[1..].iter().sum::<f64>() / 3.0;
    let ratio = got[0] / others;
    assert!((2.4..3.6).contains(&ratio), "ratio {ratio:.2}: {got:?}");
}
