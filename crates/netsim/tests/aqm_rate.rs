//! What the AQMs of a link with a varying capacity are told of its rate (docs/traces.md, "What
//! AQMs are told"): with `rate_changes`, the rate of the moment (an outage keeps the last
//! positive rate); with a Mahimahi trace, the trace's capacity over the last whole 100 ms
//! window, computed here from the trace's lines. A link with a fixed rate keeps its rate.

use aqm::Instant;
use experiment::scenario::Scenario;
use netsim::Simulation;
use serde_json::json;

mod common;
use common::Scratch;

fn at(s: f64) -> Instant {
    Instant((s * 1e9).round() as u64)
}

/// REM reads the rate (its price compares the arrivals with the capacity per update): a UDP
/// source above every rate keeps packets arriving, so the queue is told at each change.
#[test]
fn rem_is_told_the_rate_of_the_moment() {
    let doc = json!({
        "duration": "16s",
        "dumbbell": {"rate": "10Mbps", "rate_changes": [
            {"at": "5s", "rate": "5Mbps"}, {"at": "10s", "rate": 0}, {"at": "12s", "rate": "8Mbps"}]},
        "aqm": {"type": "rem"},
        "flows": [{"kind": "udp_cbr", "rate": "20Mbps", "start": 0}],
    });
    let mut sim = Simulation::new(Scenario::from_value(&doc).unwrap().config).unwrap();
    let told = |sim: &Simulation| sim.link_status("R1->R2").unwrap().aqm_rate_bps;
    for (t, want) in [(4.9, 10e6), (7.0, 5e6), (11.0, 5e6), (14.0, 8e6)] {
        sim.run_until(at(t));
        assert_eq!(told(&sim), want as u64, "at {t} s");
    }
    // the access links and the reverse path keep their fixed rates
    assert_eq!(sim.link_status("R2->R1").unwrap().aqm_rate_bps, 10_000_000);
}

/// A trace offering 2 opportunities per ms for 500 ms, then 1 per ms for 500 ms (24 and 12
/// Mb/s): the nominal rate until the first window ends, then each window's capacity.
#[test]
fn a_trace_is_told_its_capacity_over_the_last_window() {
    let mut times: Vec<u32> = (1..=500).flat_map(|m| [m, m]).collect();
    times.extend(501..=1000);
    let dir = Scratch::new("aqm-rate");
    let file = dir.join("steps.trace");
    let text: Vec<String> = times.iter().map(u32::to_string).collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let doc = json!({
        "duration": "3s",
        "dumbbell": {"rate_trace": file.to_str().unwrap(), "rate": "15Mbps", "access": "none"},
        "aqm": {"type": "red"},
        "flows": [{"kind": "udp_cbr", "rate": "30Mbps", "start": 0}],
    });
    let mut sim = Simulation::new(Scenario::from_value(&doc).unwrap().config).unwrap();
    let told = |sim: &Simulation| sim.link_status("R1->R2").unwrap().aqm_rate_bps;
    // window [(k-1) 100 ms, k 100 ms) holds 200 opportunities (24 Mb/s) in the first half of
    // each second and 100 (12 Mb/s) in the second; the period repeats at 1000 ms, whose
    // opportunity (the last line) falls in [1.0, 1.1) s
    let opps = |a: u32, b: u32| times.iter().filter(|&&m| m >= a && m < b).count() as u64;
    assert_eq!(opps(200, 300), 200);
    assert_eq!(opps(600, 700), 100);
    for (t, want) in [
        (0.05, 15_000_000),
        (0.35, opps(200, 300) * 12_000 * 10),
        (0.75, opps(600, 700) * 12_000 * 10),
        (1.35, opps(200, 300) * 12_000 * 10),
    ] {
        sim.run_until(at(t));
        assert_eq!(told(&sim), want, "at {t} s");
    }
}
