//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use netsim::{SimConfig, Simulation, Summary};
use serde_json::{json, Value};

#[allow(clippy::too_many_arguments)]
/// A dumbbell config: `rate` bit/s, `rtt` s, `buffer` packets, `aqm` JSON,
/// `flows` groups JSON.
pub fn dumbbell(
    seed: u64,
    duration: f64,
    warmup: f64,
    rate: f64,
    rtt: f64,
    buffer: u32,
    aqm: Value,
    flows: Value,
) -> SimConfig {
    let v = json!({
        "scenario": "test", "seed": seed, "duration": duration, "warmup": warmup,
        "topology": {"type": "dumbbell", "bottleneck_rate": rate, "rtt": rtt,
                     "buffer_pkts": buffer, "aqm": aqm},
        "flows": flows,
    });
    serde_json::from_value(v).expect("valid test config")
}

/// Builds, runs to the end, checks conservation, returns the simulation.
pub fn run(cfg: SimConfig) -> Simulation {
    let mut sim = Simulation::new(cfg).expect("config builds");
    sim.run();
    let c = sim
        .check_conservation()
        .expect("packets sent = delivered + dropped + lost + in flight");
    assert!(c.sent > 0);
    sim
}

/// The bottleneck summary of a dumbbell.
pub fn bottleneck(s: &Summary) -> &experiment::results::LinkSummary {
    &s.links["R1->R2"]
}
