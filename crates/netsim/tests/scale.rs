//! Scale: 1 Gb/s x 1000 CUBIC flows (dumbbell, rtt 100 ms, CoDel, one-BDP
//! buffer of 12 500 packets) for 2 s. Target (the project's performance goal):
//! peak memory < 1 GiB at this scale (measured
//! ~175 MiB for 5 s, process-wide VmHWM; this file holds a single test so the
//! process measures only it). Also checks conservation and that the
//! bottleneck carries traffic at this scale.

use netsim::Simulation;
use serde_json::json;

fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

#[test]
fn one_gigabit_thousand_flows_under_one_gib() {
    let cfg = experiment::scenario::Scenario::from_value(&json!({
        "seed": 1, "duration": 2.0, "warmup": 1.0,
        "dumbbell": {"rate": 1e9, "rtt": 0.1, "buffer": 12500},
        "aqm": {"type": "codel"},
        "flows": [{"count": 1000, "cc": "cubic", "sack": true}]
    }))
    .unwrap()
    .config;
    let mut sim = Simulation::new(cfg).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    let s = sim.summary();
    assert!(
        s.links["R1->R2"].utilization > 0.5,
        "{}",
        s.links["R1->R2"].utilization
    );
    if let Some(rss) = peak_rss_bytes() {
        assert!(rss < 1 << 30, "peak RSS {} MiB", rss >> 20);
    }
}
