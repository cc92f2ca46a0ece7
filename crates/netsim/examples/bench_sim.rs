//! Simulator throughput benchmark (run by `make bench`):
//!
//! `cargo run --release -p netsim --example bench_sim [-- --json] [--only NAME[,NAME...]]
//! [--pacing]`
//!
//! Scenarios (dumbbell, rtt 100 ms, access links 10x, 1000-byte packets):
//! 1. `dumbbell_10M_100newreno_60s`: 10 Mb/s, 100 NewReno flows, 60 s,
//!    drop-tail with a buffer of one BDP (125 packets).
//! 2. `dumbbell_1G_1000cubic_5s`: 1 Gb/s, 1000 CUBIC flows, 5 s, CoDel with a
//!    buffer of one BDP (12 500 packets).
//! 3. `dumbbell_32M_100newreno_40s_codel`: 32 Mb/s, 100 NewReno flows, 40 s, CoDel with a
//!    buffer of one BDP (400 packets) (the speed target's first scenario).
//! 4. `dumbbell_1G_1000cubic_5s_fq_codel`: scenario 2 with FQ-CoDel (its Linux
//!    defaults; limit = the buffer) instead of CoDel (the target: at least half
//!    of scenario 2's packets per wall-second). `dumbbell_1G_1000cubic_5s_cake`: scenario 2
//!    with CAKE (Linux defaults; the same target, `benches/bench_cake.py`).
//! 5. `htsim_1G_100newreno_10s`, 6. `htsim_10G_1000newreno_5s`: htsim's dumbbell
//!    (`access = "none"`, rtt 20 ms, 1500-byte packets, drop-tail with 1000 and 10 000
//!    packets; `benches/bench_htsim.py` runs the same in htsim).
//! 7. `linux_32M_100newreno_40s_codel`: scenario 3 under the `linux` TCP profile (SACK,
//!    RACK-TLP, PRR, timestamps, Linux delayed ACKs), the cost of that profile.
//!    `linux_1G_1000cubic_5s_codel`: scenario 2 under the `linux` profile (with HyStart),
//!    the same cost on the large row (not one of `benches/bench_sim.py`'s rows).
//!
//! Scenarios 1-6 run the `classic` TCP profile (the ns-3 and htsim comparisons' TCP).
//!
//! `--pacing` paces every TCP flow (`pacing = true`, docs/tcp.md "Pacing"): the same
//! scenarios, to measure what pacing costs per packet.
//!
//! `--only NAME[,NAME...]` runs only the named scenarios; a NAME that is no scenario's exact
//! name selects those whose names contain it (the benchmark script uses it to measure one
//! scenario's peak RSS alone and to alternate repeated runs of scenarios 2 and 3). `cpu_seconds` is the thread's CPU
//! time over the run (`/proc/thread-self/schedstat`), which a busy machine
//! inflates less than the wall time.
//!
//! For each: events per bottleneck packet, nanoseconds per event, simulated seconds, wall seconds, packets sent over the
//! bottleneck per wall-second, packet transmissions over all hops per
//! wall-second, events per wall-second, peak RSS (`VmHWM` from
//! `/proc/self/status`, process-wide, so it is monotone across scenarios) and
//! the bottleneck qdisc's own memory (`queue_memory_bytes`: packet storage and
//! per-flow state; `queue_pool_slots`: a hashed qdisc's packet-pool size, at
//! most the buffer plus one).

use std::time::Instant as WallClock;

use netsim::{SimConfig, Simulation};
use serde_json::json;

struct Bench {
    name: &'static str,
    /// Parameters in the ns-3 cross-check program's notation (reported so
    /// a comparison can mirror them exactly).
    params: serde_json::Value,
    cfg: SimConfig,
}

fn scenarios() -> Vec<Bench> {
    let mk_profile = |profile: &str,
                      seed: u64,
                      rate: f64,
                      buffer: u32,
                      aqm: serde_json::Value,
                      n: u32,
                      cc: &str,
                      dur: f64| {
        scenario(json!({
            "name": "bench", "seed": seed, "duration": dur, "warmup": 0.0,
            "sample_interval": 0.01, "profile": profile,
            "dumbbell": {"rate": rate, "rtt": 0.1, "buffer": buffer},
            "aqm": aqm,
            "flows": [{"count": n, "cc": cc}]
        }))
    };
    let mk =
        |seed: u64, rate: f64, buffer: u32, aqm: serde_json::Value, n: u32, cc: &str, dur: f64| {
            scenario(json!({
                "name": "bench", "seed": seed, "duration": dur, "warmup": 0.0,
                "sample_interval": 0.01, "profile": "classic",
                "dumbbell": {"rate": rate, "rtt": 0.1, "buffer": buffer},
                "aqm": aqm,
                "flows": [{"count": n, "cc": cc}]
            }))
        };
    vec![
        Bench {
            name: "dumbbell_10M_100newreno_60s",
            params: json!({"rate": "10Mbps", "flows": 100, "cc": "newreno", "aqm": "droptail",
                           "rtt": "100ms", "buffer": 125, "duration": "60s"}),
            cfg: mk(
                1,
                10e6,
                125,
                json!({"type": "droptail"}),
                100,
                "newreno",
                60.0,
            ),
        },
        Bench {
            name: "dumbbell_1G_1000cubic_5s",
            params: json!({"rate": "1Gbps", "flows": 1000, "cc": "cubic", "aqm": "codel",
                           "rtt": "100ms", "buffer": 12500, "duration": "5s"}),
            cfg: mk(1, 1e9, 12_500, json!({"type": "codel"}), 1000, "cubic", 5.0),
        },
        Bench {
            name: "dumbbell_32M_100newreno_40s_codel",
            params: json!({"rate": "32Mbps", "flows": 100, "cc": "newreno", "aqm": "codel",
                           "rtt": "100ms", "buffer": 400, "duration": "40s"}),
            cfg: mk(1, 32e6, 400, json!({"type": "codel"}), 100, "newreno", 40.0),
        },
        Bench {
            name: "dumbbell_1G_1000cubic_5s_fq_codel",
            params: json!({"rate": "1Gbps", "flows": 1000, "cc": "cubic", "aqm": "fq_codel",
                           "rtt": "100ms", "buffer": 12500, "duration": "5s"}),
            cfg: mk(
                1,
                1e9,
                12_500,
                json!({"type": "fq_codel"}),
                1000,
                "cubic",
                5.0,
            ),
        },
        // scenario 2 with CAKE (its Linux defaults: unlimited, diffserv3, triple-isolate);
        // benches/bench_cake.py compares it with scenario 2
        Bench {
            name: "dumbbell_1G_1000cubic_5s_cake",
            params: json!({"rate": "1Gbps", "flows": 1000, "cc": "cubic", "aqm": "cake",
                           "rtt": "100ms", "buffer": 12500, "duration": "5s"}),
            cfg: mk(1, 1e9, 12_500, json!({"type": "cake"}), 1000, "cubic", 5.0),
        },
        // htsim's dumbbell (benches/bench_htsim.py runs the same in htsim): no access links,
        // 1500-byte packets, rtt 20 ms, drop-tail.
        Bench {
            name: "htsim_1G_100newreno_10s",
            params: json!({"rate": "1Gbps", "flows": 100, "cc": "newreno", "aqm": "droptail",
                           "rtt": "20ms", "buffer": 1000, "duration": "10s", "access": "none",
                           "pkt_size": 1500}),
            cfg: bare(1e9, 1000, 100, 10.0),
        },
        Bench {
            name: "htsim_10G_1000newreno_5s",
            params: json!({"rate": "10Gbps", "flows": 1000, "cc": "newreno", "aqm": "droptail",
                           "rtt": "20ms", "buffer": 10000, "duration": "5s", "access": "none",
                           "pkt_size": 1500}),
            cfg: bare(10e9, 10_000, 1000, 5.0),
        },
        Bench {
            name: "linux_32M_100newreno_40s_codel",
            params: json!({"rate": "32Mbps", "flows": 100, "cc": "newreno", "aqm": "codel",
                           "rtt": "100ms", "buffer": 400, "duration": "40s",
                           "profile": "linux"}),
            cfg: mk_profile(
                "linux",
                1,
                32e6,
                400,
                json!({"type": "codel"}),
                100,
                "newreno",
                40.0,
            ),
        },
        Bench {
            name: "linux_1G_1000cubic_5s_codel",
            params: json!({"rate": "1Gbps", "flows": 1000, "cc": "cubic", "aqm": "codel",
                           "rtt": "100ms", "buffer": 12500, "duration": "5s",
                           "profile": "linux"}),
            cfg: mk_profile(
                "linux",
                1,
                1e9,
                12_500,
                json!({"type": "codel"}),
                1000,
                "cubic",
                5.0,
            ),
        },
    ]
}

/// htsim's dumbbell in aqmlab: `access = "none"`, rtt 20 ms, 1500-byte NewReno, drop-tail.
fn bare(rate: f64, buffer: u32, n: u32, dur: f64) -> SimConfig {
    scenario(json!({
        "name": "bench", "seed": 1, "duration": dur, "warmup": 0.0,
        "sample_interval": 0.01, "profile": "classic",
        "dumbbell": {"rate": rate, "rtt": 0.02, "buffer": buffer, "access": "none"},
        "aqm": {"type": "droptail"},
        "flows": [{"count": n, "cc": "newreno", "packet_size": 1500}]
    }))
}

/// The configuration of a scenario document (the user's keys, `docs/scenario.md`).
fn scenario(doc: serde_json::Value) -> SimConfig {
    experiment::scenario::Scenario::from_value(&doc)
        .unwrap_or_else(|e| panic!("bench scenario: {e}"))
        .config
}

/// CPU time of this thread in ns (first field of `/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Peak resident set size in bytes (`VmHWM`), if available.
fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let as_json = args.iter().any(|a| a == "--json");
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    // `--pacing`: every TCP group paced (`pacing = true`), to measure pacing's cost.
    let pacing = args.iter().any(|a| a == "--pacing");
    let mut all = scenarios();
    if pacing {
        for b in &mut all {
            for g in &mut b.cfg.flows {
                if let experiment::config::FlowGroup::Tcp(t) = g {
                    t.pacing = true;
                }
            }
        }
    }
    // A NAME selects the scenario of that exact name, else those whose names contain it.
    let selected =
        |name: &str, n: &str| name == n || (!all.iter().any(|b| b.name == n) && name.contains(n));
    let mut rows = Vec::new();
    for b in &all {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| selected(b.name, n)))
        {
            continue;
        }
        let t_build = WallClock::now();
        let mut sim = Simulation::new(b.cfg.clone()).expect("bench config builds");
        let build_s = t_build.elapsed().as_secs_f64();
        let c0 = thread_cpu_ns();
        let t0 = WallClock::now();
        sim.run();
        let wall = t0.elapsed().as_secs_f64();
        let cpu = match (c0, thread_cpu_ns()) {
            (Some(a), Some(b)) => Some((b - a) as f64 / 1e9),
            _ => None,
        };
        sim.check_conservation().expect("conservation");
        let s = sim.summary();
        let bott = sim.link_tx_packets("R1->R2").expect("bottleneck");
        let st = sim.link_status("R1->R2").expect("bottleneck");
        let mut row = json!({
            "scenario": b.name,
            "rate_bps": s.links["R1->R2"].rate_bps,
            "sim_seconds": s.sim_seconds,
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "build_seconds": build_s,
            "events": s.events,
            "bottleneck_packets": bott,
            "packets_forwarded": s.packets_forwarded,
            "bottleneck_pkts_per_wall_s": bott as f64 / wall,
            "hop_pkts_per_wall_s": s.packets_forwarded as f64 / wall,
            "events_per_wall_s": s.events as f64 / wall,
            "events_per_bottleneck_pkt": s.events as f64 / bott.max(1) as f64,
            "ns_per_event": wall * 1e9 / s.events.max(1) as f64,
            "utilization": s.links["R1->R2"].utilization,
            "peak_rss_bytes": peak_rss_bytes(),
            "queue_memory_bytes": st.queue_memory_bytes,
            "queue_pool_slots": st.queue_pool_slots,
            "pacing": pacing,
        });
        if let (Some(r), Some(p)) = (row.as_object_mut(), b.params.as_object()) {
            for (k, v) in p {
                r.insert(k.clone(), v.clone());
            }
        }
        if !as_json {
            println!(
                "{:<30} sim {:>5.1} s  wall {:>7.3} s  bottleneck {:>10.0} pkt/s  all hops {:>10.0} pkt/s  events {:>10.0} /s  util {:.3}  peak RSS {:.0} MiB",
                b.name,
                s.sim_seconds,
                wall,
                bott as f64 / wall,
                s.packets_forwarded as f64 / wall,
                s.events as f64 / wall,
                s.links["R1->R2"].utilization,
                peak_rss_bytes().unwrap_or(0) as f64 / (1024.0 * 1024.0)
            );
        }
        rows.push(row);
    }
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"netsim": rows})).unwrap()
        );
    }
}
