//! Link model: serialisation + propagation timing, loss-free forwarding
//! below capacity, Bernoulli loss statistics.

mod common;

use aqm::Instant;
use netsim::{SimConfig, Simulation};
use serde_json::json;

fn two_nodes(rate: f64, delay: f64, loss: f64, limit: u32, flows: serde_json::Value) -> SimConfig {
    common::scenario(json!({
        "seed": 5, "duration": 100.0,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"src": "a", "dst": "b", "rate": rate, "delay": delay, "loss": loss,
                   "buffer": limit}],
        "flows": flows,
    }))
}

/// Reference: delivery time = serialisation (8 * 1000 B / 10 Mb/s =
/// 800 000 ns) + propagation (10 ms) = 10 800 000 ns, exactly (integer ns,
/// no tolerance).
#[test]
fn single_packet_delivery_time_is_exact() {
    // One datagram: the source sends at t = 0 and is stopped before the
    // next one (interval 1.6 ms at 5 Mb/s).
    let cfg = two_nodes(
        10e6,
        0.01,
        0.0,
        10,
        json!([{"kind": "udp_cbr", "src": "a", "dst": "b", "rate": 5e6,
                "packet_size": 1000, "start": 0.0, "stop": 0.001}]),
    );
    let mut sim = Simulation::new(cfg).unwrap();
    sim.run_until(Instant(10_800_000 - 1));
    assert_eq!(sim.flow_status(0).unwrap().bytes_delivered, 0);
    sim.run_until(Instant(10_800_000));
    assert_eq!(sim.flow_status(0).unwrap().bytes_delivered, 1000 - 28);
    sim.run_until(Instant(1_000_000_000));
    assert_eq!(sim.flow_status(0).unwrap().bytes_delivered, 1000 - 28);
    let c = sim.check_conservation().unwrap();
    assert_eq!((c.sent, c.delivered, c.in_flight), (1, 1, 0));
}

/// A CBR source at 50 % of the link rate never finds more than one packet
/// queued: zero drops (exact), and everything sent arrives except what is
/// in flight at the end.
#[test]
fn cbr_at_half_load_sees_no_loss() {
    let mut cfg = two_nodes(
        10e6,
        0.02,
        0.0,
        2,
        json!([{"kind": "udp_cbr", "src": "a", "dst": "b", "rate": 5e6, "start": 0.0}]),
    );
    cfg.duration = 20.0;
    let sim = common::run(cfg);
    let c = sim.check_conservation().unwrap();
    assert_eq!(c.dropped + c.lost, 0);
    assert!(c.sent > 12_000, "{c:?}");
    assert_eq!(c.sent, c.delivered + c.in_flight);
    let s = sim.summary();
    let l = &s.links["a->b"];
    assert!((l.utilization - 0.5).abs() < 0.01, "{}", l.utilization);
    assert!(l.queue_delay_ms.p99 < 1e-3);
}

/// Reference: binomial distribution. With p = 0.02 and n ~ 50 000
/// transmissions the loss count is within 5 standard deviations of n p
/// (sd = sqrt(n p (1 - p)) ~ 31, i.e. about +-3 % relative).
#[test]
fn bernoulli_loss_rate_within_binomial_bounds() {
    for (seed, p) in [(1u64, 0.02), (2, 0.2)] {
        let mut cfg = two_nodes(
            10e6,
            0.001,
            p,
            100,
            json!([{"kind": "udp_cbr", "src": "a", "dst": "b", "rate": 8e6, "start": 0.0}]),
        );
        cfg.seed = seed;
        cfg.duration = 50.0;
        let sim = common::run(cfg);
        let st = sim.link_status("a->b").unwrap().counters;
        let n = st.tx_pkts as f64;
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!(
            (st.lost as f64 - n * p).abs() < 5.0 * sd,
            "p={p}: lost {} of {n}",
            st.lost
        );
    }
}
