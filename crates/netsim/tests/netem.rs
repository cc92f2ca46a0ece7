//! netem on simulated links end to end: the stage (`experiment::netem`, tested statistically
//! there) placed after the bottleneck's transmitter, its counters in the summary, packet
//! conservation with duplicates, and the delay it adds to each packet.

mod common;

use common::{bottleneck, run, scenario};
use serde_json::{json, Value};

fn doc(netem: Option<&str>, flows: Value, duration: f64) -> Value {
    let mut d = json!({
        "name": "netem", "seed": 7, "duration": duration, "warmup": 1.0,
        "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 100},
        "flows": flows,
    });
    if let Some(n) = netem {
        d["dumbbell"]["netem"] = json!(n);
    }
    d
}

fn cbr() -> Value {
    json!([{"kind": "udp_cbr", "rate": 5e6, "packet_size": 1000}])
}

/// `loss 1%`: the stage's drops are a binomial sample of the packets it was offered (the
/// bottleneck's transmissions), within the alpha = 0.01 interval.
#[test]
fn loss_one_percent_drops_about_one_percent() {
    let sim = run(scenario(doc(Some("loss 1%"), cbr(), 41.0)));
    let s = sim.summary();
    let b = bottleneck(&s);
    let n = b.netem.expect("netem counters");
    let tx = b.tx_packets as f64;
    let (mean, sd) = (tx * 0.01, (tx * 0.01 * 0.99).sqrt());
    assert!(
        (n.netem_drops as f64 - mean).abs() < 2.5758 * sd,
        "{} of {tx}",
        n.netem_drops
    );
    assert!(tx > 20_000.0);
    // the flow's receiver misses exactly those packets (no queue drops at 5 of 10 Mb/s)
    assert_eq!(b.drops, 0);
    // other links have no netem counters
    assert!(s.links.values().filter(|l| l.netem.is_some()).count() == 1);
}

/// `delay 10ms`: every data packet's one-way delay grows by exactly 10 ms (a CBR flow at half
/// the rate: no queueing), and a window-limited TCP flow's mean RTT by 10 ms.
#[test]
fn delay_adds_to_the_one_way_delay_and_the_rtt() {
    let owd = |netem| {
        let sim = run(scenario(doc(netem, cbr(), 6.0)));
        sim.summary().flows[0].owd_ms.unwrap().mean
    };
    let (a, b) = (owd(None), owd(Some("delay 10ms")));
    assert!((b - a - 10.0).abs() < 1e-6, "owd {a} -> {b}");
    let tcp = json!([{"kind": "tcp", "count": 1, "rwnd": 4}]);
    let rtt = |netem| {
        let sim = run(scenario(doc(netem, tcp.clone(), 6.0)));
        sim.summary().flows[0].rtt_ms.unwrap().mean
    };
    let (a, b) = (rtt(None), rtt(Some("delay 10ms")));
    assert!((b - a - 10.0).abs() < 0.01, "rtt {a} -> {b}");
}

/// Duplicates, corruption and jitter under TCP: conservation holds (sent + duplicated =
/// delivered + dropped + lost + in flight, checked by `run`), the run is deterministic, and
/// the counters are there.
#[test]
fn impaired_tcp_conserves_packets_and_is_deterministic() {
    let flows = json!([{"kind": "tcp", "count": 4}]);
    let text = "delay 5ms 3ms distribution normal duplicate 1% corrupt 0.5% reorder 5% loss gemodel 0.5% 20%";
    let a = run(scenario(doc(Some(text), flows.clone(), 10.0)));
    let b = run(scenario(doc(Some(text), flows, 10.0)));
    let (sa, sb) = (a.summary(), b.summary());
    assert_eq!(
        serde_json::to_string(&sa).unwrap(),
        serde_json::to_string(&sb).unwrap()
    );
    let n = bottleneck(&sa).netem.unwrap();
    assert!(n.duplicates > 0 && n.corrupted > 0 && n.reordered > 0 && n.netem_drops > 0);
    assert!(n.late >= n.reordered);
    assert!(a.conservation().duplicated > 0);
}

/// `reverse_netem` impairs R2->R1 (the ACKs), `netem` on an explicit link and its twin.
#[test]
fn reverse_and_explicit_links() {
    let mut d = doc(None, json!([{"kind": "tcp", "count": 1, "rwnd": 4}]), 4.0);
    d["dumbbell"]["reverse_netem"] = json!("delay 7ms");
    let s = run(scenario(d)).summary();
    assert!(bottleneck(&s).netem.is_none());
    let base = run(scenario(doc(
        None,
        json!([{"kind": "tcp", "count": 1, "rwnd": 4}]),
        4.0,
    )))
    .summary();
    let (a, b) = (
        base.flows[0].rtt_ms.unwrap().mean,
        s.flows[0].rtt_ms.unwrap().mean,
    );
    assert!((b - a - 7.0).abs() < 0.01, "rtt {a} -> {b}");
    let e = scenario(json!({
        "name": "x", "duration": 3.0,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"src": "a", "dst": "b", "rate": "10Mbps", "delay": "5ms",
                   "netem": "loss 2%", "reverse_netem": "delay 1ms"}],
        "flows": [{"kind": "udp_cbr", "src": "a", "dst": "b", "rate": 1e6}],
    }));
    let s = run(e).summary();
    assert!(s.links["a->b"].netem.unwrap().netem_drops > 0);
    assert_eq!(s.links["b->a"].netem.unwrap().netem_drops, 0);
}

#[test]
fn bad_netem_names_the_key_and_the_word() {
    let mut d = doc(None, cbr(), 2.0);
    d["dumbbell"]["netem"] = json!("delay 10ms rate 1mbit");
    let e = experiment::scenario::Scenario::from_value(&d)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("dumbbell.netem = \"delay 10ms rate 1mbit\": rate:"),
        "{e}"
    );
    let e = experiment::scenario::Scenario::from_value(&json!({
        "name": "x", "duration": 3.0,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"src": "a", "dst": "b", "rate": "10Mbps", "duplex": false,
                   "reverse_netem": "delay 1ms"}],
        "flows": [{"kind": "udp_cbr", "src": "a", "dst": "b", "rate": 1e6}],
    }))
    .unwrap_err()
    .to_string();
    assert!(e.contains("links[0].reverse_netem"), "{e}");
}
