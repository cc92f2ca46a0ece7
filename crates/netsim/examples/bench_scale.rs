//! Scale benchmark, one run per process (run by `benches/bench_scale.py`):
//!
//! `cargo run --release -p netsim --example bench_scale -- --flows N [--access link|none]
//! [--duration S] [--warmup S] [--rate BIT_PER_S] [--rtt S] [--short FLOWS_PER_S
//! [--mean-size BYTES]]`
//!
//! The scale issue's dumbbell: 10 Gb/s, rtt 20 ms (or `--rate`, `--rtt`: the million-flow
//! run is 100 Gb/s and 200 ms), long-lived CUBIC flows (`linux` profile), CoDel with a
//! one-BDP buffer (16 667 packets of 1500 B at 10 Gb/s and 20 ms). `--access link` (the default) gives
//! every flow its own host pair and access links (aqmlab's standard dumbbell); `none` puts
//! senders on R1 and receivers on R2 (htsim's dumbbell).
//!
//! `--short R`: instead of long-lived flows, a web-like `tcp_short` workload: Poisson
//! arrivals at `R` flows/s of Pareto-sized CUBIC flows (mean `--mean-size`, 20 000 bytes by
//! default), which the short-flow pool keeps in a flow table of the peak concurrency; the
//! JSON line then also gives the short flows that arrived and finished and the pool's peak,
//! and no summary is built (it lists every flow).
//!
//! Prints one JSON line: the flows, the resident set after building (`rss_built_bytes`,
//! `VmRSS`) and at its peak (`VmHWM`), events, wall seconds of the run and nanoseconds per
//! event, bottleneck packets and utilisation. One run per process, so that the RSS figures
//! are this run's alone.

use std::time::Instant as WallClock;

use netsim::Simulation;
use serde_json::json;

/// A `/proc/self/status` field in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    match args.iter().position(|a| a == name) {
        None => default,
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                eprintln!("{name}: missing or invalid value");
                std::process::exit(2)
            }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flows: u32 = arg(&args, "--flows", 100);
    let access: String = arg(&args, "--access", "link".to_string());
    let duration: f64 = arg(&args, "--duration", 1.0);
    let warmup: f64 = arg(&args, "--warmup", 0.5);
    let rate: f64 = arg(&args, "--rate", 10e9);
    let rtt: f64 = arg(&args, "--rtt", 0.02);
    if !(rate >= 1e3 && rtt > 0.0 && rtt.is_finite() && rate.is_finite()) {
        eprintln!(
            "--rate = {rate}, --rtt = {rtt}: need a rate of at least 1000 bit/s and an rtt > 0"
        );
        std::process::exit(2);
    }
    let buffer = (rate * rtt / (8.0 * 1500.0)).round().max(1.0) as u64;
    if access != "link" && access != "none" {
        eprintln!("--access = {access}: must be link or none");
        std::process::exit(2);
    }
    let short: f64 = arg(&args, "--short", 0.0);
    let mean_size: f64 = arg(&args, "--mean-size", 20_000.0);
    let group = if short > 0.0 {
        json!({"kind": "tcp_short", "arrival_rate": short, "mean_size": mean_size,
               "cc": "cubic"})
    } else {
        json!({"count": flows, "cc": "cubic"})
    };
    let doc = json!({
        "name": "scale", "seed": 1, "duration": duration, "warmup": warmup,
        "dumbbell": {"rate": rate, "rtt": rtt, "buffer": buffer, "pkt_size": 1500,
                     "access": access},
        "aqm": {"type": "codel"},
        "flows": [group]
    });
    let cfg = experiment::scenario::Scenario::from_value(&doc)
        .unwrap_or_else(|e| panic!("scale scenario: {e}"))
        .config;
    let mut sim = Simulation::new(cfg).expect("scale config builds");
    let rss_built = status_bytes("VmRSS:");
    let t0 = WallClock::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    if short > 0.0 {
        let p = sim.pool_stats();
        let bott = sim.link_tx_packets("R1->R2").expect("bottleneck");
        println!(
            "{}",
            json!({
                "short_rate": short,
                "access": access,
                "sim_seconds": duration,
                "wall_seconds": wall,
                "events": sim.events(),
                "ns_per_event": wall * 1e9 / sim.events().max(1) as f64,
                "bottleneck_packets": bott,
                "short_flows": p.short_flows,
                "finished": p.finished,
                "peak_slots": p.peak,
                "table_len": p.table_len,
                "longest_hold_s": p.longest_hold as f64 * 1e-9,
                "rss_built_bytes": rss_built,
                "peak_rss_bytes": status_bytes("VmHWM:"),
            })
        );
        return;
    }
    let s = sim.summary();
    let bott = sim.link_tx_packets("R1->R2").expect("bottleneck");
    println!(
        "{}",
        json!({
            "flows": flows,
            "access": access,
            "sim_seconds": s.sim_seconds,
            "wall_seconds": wall,
            "events": s.events,
            "ns_per_event": wall * 1e9 / s.events.max(1) as f64,
            "bottleneck_packets": bott,
            "utilization": s.links["R1->R2"].utilization,
            "rss_built_bytes": rss_built,
            "peak_rss_bytes": status_bytes("VmHWM:"),
        })
    );
}
