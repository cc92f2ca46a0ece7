//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use netsim::{SimConfig, Simulation, Summary};
use serde_json::{json, Value};

/// The configuration of a scenario document (the user's keys, as `docs/scenario.md` has them).
pub fn scenario(doc: Value) -> SimConfig {
    experiment::scenario::Scenario::from_value(&doc)
        .unwrap_or_else(|e| panic!("invalid test scenario: {e}\n{doc}"))
        .config
}

#[allow(clippy::too_many_arguments)]
/// A dumbbell scenario: `rate` bit/s, `rtt` s, `buffer` packets, `aqm` table, `flows` groups.
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
    scenario(json!({
        "name": "test", "seed": seed, "duration": duration, "warmup": warmup,
        "dumbbell": {"rate": rate, "rtt": rtt, "buffer": buffer},
        "aqm": aqm, "flows": flows,
    }))
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

/// A directory of the test's own under the system's temporary directory, removed with
/// everything in it when dropped (also when the test fails).
pub struct Scratch(pub std::path::PathBuf);

impl Scratch {
    /// `aqmlab-{name}-{pid}`, created empty.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("aqmlab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// A path inside the directory.
    pub fn join(&self, file: &str) -> std::path::PathBuf {
        self.0.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
