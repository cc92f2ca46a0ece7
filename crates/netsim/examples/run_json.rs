//! Runs the simulation a scenario document describes (JSON with the user's keys,
//! `docs/scenario.md`) and prints the summary as JSON plus wall-clock time on stderr.
//!
//! `cargo run --release -p netsim --example run_json -- scenario.json`

use std::time::Instant as WallClock;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_json CONFIG.json");
    let text = std::fs::read_to_string(&path).expect("readable config file");
    let mut sim = match netsim::Simulation::from_json(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let t0 = WallClock::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    if let Err(e) = sim.check_conservation() {
        eprintln!("conservation violated: {e}");
        std::process::exit(1);
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&sim.summary()).expect("summary serialises")
    );
    eprintln!("wall_seconds {wall:.3} events {}", sim.events());
}
