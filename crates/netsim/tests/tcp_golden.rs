//! Golden digests of whole TCP simulations: a refactoring of the TCP model
//! that is meant to change nothing must leave every digest unchanged.
//!
//! Each scenario runs through [`netsim::Simulation`] for a few simulated
//! seconds; the digest is a 64-bit FNV-1a hash of
//! * the serialized [`netsim::SimResults`] (summary JSON, link time series,
//!   congestion-window traces of a few flows at 10 ms) reduced to what the
//!   model did (`behaviour`: statistics derived for reporting left out), and
//! * the [`netsim::FlowStatus`] of every flow (cwnd, ssthresh, srtt,
//!   counters) every 0.5 s, with exact `f64` digits (`status_line`).
//!
//! Coverage: Reno, NewReno and CUBIC; with and without ECN, delayed ACKs
//! and SACK; random loss; drop-tail, RED, CoDel and PIE; 10 and 50 flows
//! (and 2 flows with large windows);
//! plus mixed groups with finite flows, stop times, receive windows,
//! initial windows and short flows; and the `linux` profile (RACK-TLP, PRR,
//! timestamps, Linux's delayed ACKs) with CoDel, random loss and pacing.
//!
//! The expected values were produced by the TCP code as it was before the
//! split of `tcp/` into sender, receiver, RTT estimator, loss recovery and
//! congestion controllers. A deliberate behaviour change of the TCP model
//! (or of the queues, routing or random streams) changes them: run
//! `cargo test --release -p netsim --test tcp_golden -- --nocapture` and
//! copy the printed table, after checking that the change is intended.

mod common;

use aqm::Instant;
use netsim::{SimConfig, Simulation};
use serde_json::{json, Value};

/// 64-bit FNV-1a (stable across platforms and Rust versions, unlike
/// `DefaultHasher`).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn cfg(
    seed: u64,
    duration: f64,
    rate: f64,
    buffer: u32,
    loss: f64,
    aqm: Value,
    flows: Value,
    trace: &[u32],
) -> SimConfig {
    let mut new = common::scenario(json!({
        "name": "golden", "seed": seed, "duration": duration, "warmup": 1.0, "profile": "classic",
        "sample_interval": 0.01, "cwnd_interval": 0.01,
        "dumbbell": {"rate": rate, "rtt": 0.05, "buffer": buffer, "loss": loss},
        "aqm": aqm.clone(),
        "flows": flows,
    }));
    // the flows whose window is traced (a scenario traces whole groups)
    new.cwnd_trace = trace.to_vec();
    new
}

/// Uniform scenarios: name, seed, duration (s), bottleneck rate (bit/s),
/// buffer (packets), random loss, AQM (`ecn` set if the flows use ECN),
/// flows, controller, options (`ecn`, `delack`, `sack`).
#[rustfmt::skip]
type Uniform = (&'static str, u64, f64, f64, u32, f64, &'static str, u32, &'static str, &'static str);

#[rustfmt::skip]
const UNIFORM: &[Uniform] = &[
    // 10 flows, 10 Mb/s, 8 s.
    ("newreno_droptail_10", 1, 8.0, 10e6, 60, 0.0, "droptail", 10, "newreno", ""),
    ("reno_droptail_loss_10", 2, 8.0, 10e6, 60, 0.01, "droptail", 10, "reno", ""),
    ("cubic_droptail_10", 3, 8.0, 10e6, 60, 0.0, "droptail", 10, "cubic", ""),
    ("newreno_red_ecn_delack_10", 4, 8.0, 10e6, 100, 0.0, "red", 10, "newreno", "ecn delack"),
    ("reno_red_drop_delack_10", 5, 8.0, 10e6, 100, 0.0, "red", 10, "reno", "delack"),
    ("cubic_codel_sack_10", 6, 8.0, 10e6, 100, 0.0, "codel", 10, "cubic", "sack"),
    ("cubic_codel_ecn_sack_delack_10", 7, 8.0, 10e6, 100, 0.0, "codel", 10, "cubic", "ecn sack delack"),
    ("newreno_pie_sack_loss_10", 8, 8.0, 10e6, 100, 0.005, "pie", 10, "newreno", "sack"),
    ("reno_pie_ecn_10", 9, 8.0, 10e6, 100, 0.0, "pie", 10, "reno", "ecn"),
    // 50 flows, 50 Mb/s, 5 s.
    ("newreno_droptail_delack_50", 11, 5.0, 50e6, 150, 0.0, "droptail", 50, "newreno", "delack"),
    ("reno_red_ecn_50", 12, 5.0, 50e6, 300, 0.0, "red", 50, "reno", "ecn"),
    ("cubic_pie_ecn_delack_50", 13, 5.0, 50e6, 300, 0.0, "pie", 50, "cubic", "ecn delack"),
    ("cubic_droptail_sack_loss_50", 14, 5.0, 50e6, 150, 0.002, "droptail", 50, "cubic", "sack"),
    ("newreno_codel_ecn_sack_50", 15, 5.0, 50e6, 300, 0.0, "codel", 50, "newreno", "ecn sack"),
    ("reno_codel_sack_delack_50", 16, 5.0, 50e6, 300, 0.0, "codel", 50, "reno", "sack delack"),
    // Two flows with large windows (CUBIC's concave and convex regions,
    // long NewReno recoveries), 50 Mb/s, 10 s.
    ("cubic_2_droptail_sack_delack", 17, 10.0, 50e6, 400, 0.0, "droptail", 2, "cubic", "sack delack"),
    ("newreno_2_pie", 18, 10.0, 50e6, 400, 0.0, "pie", 2, "newreno", ""),
];

/// The scenarios, by name.
fn scenarios() -> Vec<(&'static str, SimConfig)> {
    let mut v: Vec<(&'static str, SimConfig)> = UNIFORM
        .iter()
        .map(|&(name, seed, dur, rate, buffer, loss, aqm, n, cc, opts)| {
            let ecn = opts.contains("ecn");
            // Per-flow extra delay 0, 5, 10, 20 ms in turn (RTTs 50 to 90 ms).
            let extra: Vec<f64> = (0..n)
                .map(|i| [0.0, 0.005, 0.01, 0.02][i as usize % 4])
                .collect();
            let aqm = if aqm == "droptail" {
                json!({"type": aqm})
            } else {
                json!({"type": aqm, "ecn": ecn})
            };
            let flows = json!([{"kind": "tcp", "count": n, "cc": cc, "ecn": ecn,
                "delack": opts.contains("delack"), "sack": opts.contains("sack"),
                "start_jitter": 0.5, "extra_delay": extra}]);
            let trace: Vec<u32> = (0..n.min(3)).collect();
            (name, cfg(seed, dur, rate, buffer, loss, aqm, flows, &trace))
        })
        .collect();
    v.extend([
        // Mixed groups: the three controllers side by side, finite flows,
        // a stop time, a receive window, a small initial window, a larger
        // minimum RTO, short flows, and a tiny buffer that forces timeouts.
        (
            "mixed_red_ecn",
            cfg(
                21,
                5.0,
                20e6,
                80,
                0.001,
                json!({"type": "red", "ecn": true}),
                json!([
                    {"kind": "tcp", "count": 4, "cc": "reno", "ecn": true, "sack": true},
                    {"kind": "tcp", "count": 4, "cc": "newreno", "ecn": true,
                     "delack": true, "rwnd": 20, "stop": 3.0},
                    {"kind": "tcp", "count": 4, "cc": "cubic", "ecn": true, "init_cwnd": 2,
                     "min_rto": 0.3, "size": 400000},
                    {"kind": "tcp_short", "arrival_rate": 20.0, "mean_size": 30000.0,
                     "cc": "cubic", "ecn": true, "sack": true},
                    {"kind": "tcp_short", "arrival_rate": 10.0, "mean_size": 20000.0,
                     "cc": "reno", "delack": true}
                ]),
                &[0, 4, 8],
            ),
        ),
        (
            "mixed_droptail_tiny_buffer",
            cfg(
                22,
                5.0,
                10e6,
                8,
                0.0,
                json!({"type": "droptail"}),
                json!([
                    {"kind": "tcp", "count": 3, "cc": "reno"},
                    {"kind": "tcp", "count": 3, "cc": "newreno", "delack": true},
                    {"kind": "tcp", "count": 3, "cc": "cubic", "sack": true,
                     "packet_size": 1500},
                    {"kind": "tcp_short", "arrival_rate": 15.0, "mean_size": 50000.0,
                     "cc": "newreno", "sack": true, "delack": true}
                ]),
                &[0, 3, 6],
            ),
        ),
        // The `linux` profile (SACK with RACK-TLP, PRR, timestamps, Linux's delayed ACKs,
        // receive-window autotuning, HyStart): CoDel with ECN and without, finite and short
        // flows; a tiny drop-tail buffer with random loss (probes, reordering timers, lost
        // retransmissions, timeouts); paced flows.
        (
            "linux_codel_mixed",
            cfg(
                23,
                6.0,
                20e6,
                150,
                0.0,
                json!({"type": "codel", "ecn": true}),
                json!([
                    {"kind": "tcp", "count": 6, "cc": "newreno", "profile": "linux"},
                    {"kind": "tcp", "count": 6, "cc": "cubic", "profile": "linux", "ecn": true},
                    {"kind": "tcp", "count": 3, "cc": "cubic", "profile": "linux",
                     "size": 300000},
                    {"kind": "tcp_short", "arrival_rate": 15.0, "mean_size": 40000.0,
                     "cc": "cubic", "profile": "linux"}
                ]),
                &[0, 6, 12],
            ),
        ),
        (
            "linux_droptail_tiny_buffer_loss",
            cfg(
                24,
                6.0,
                10e6,
                10,
                0.01,
                json!({"type": "droptail"}),
                json!([
                    {"kind": "tcp", "count": 4, "cc": "newreno", "profile": "linux"},
                    {"kind": "tcp", "count": 4, "cc": "cubic", "profile": "linux"},
                    {"kind": "tcp_short", "arrival_rate": 10.0, "mean_size": 60000.0,
                     "cc": "newreno", "profile": "linux"}
                ]),
                &[0, 4],
            ),
        ),
        (
            "linux_paced_red",
            cfg(
                25,
                6.0,
                30e6,
                200,
                0.002,
                json!({"type": "red"}),
                json!([
                    {"kind": "tcp", "count": 5, "cc": "newreno", "profile": "linux",
                     "pacing": true},
                    {"kind": "tcp", "count": 5, "cc": "cubic", "profile": "linux",
                     "pacing": true}
                ]),
                &[0, 5],
            ),
        ),
    ]);
    v
}

/// Runs `cfg` and returns its digest.
fn digest(cfg: SimConfig) -> u64 {
    let mut h = Fnv::new();
    let dur_ns = (cfg.duration * 1e9).round() as u64;
    let mut sim = Simulation::new(cfg).expect("config builds");
    let step = 500_000_000;
    let mut t = step;
    while t <= dur_ns {
        sim.run_until(Instant(t));
        for id in 0..sim.num_flows() as u32 {
            let st = sim.flow_status(id).expect("flow exists");
            h.write(status_line(t, &st).as_bytes());
        }
        t += step;
    }
    sim.run();
    sim.check_conservation().expect("conservation");
    // What the scenario exercised (shown with --nocapture).
    let (mut retx, mut rtos, mut ecn) = (0, 0, 0);
    for id in 0..sim.num_flows() as u32 {
        let st = sim.flow_status(id).expect("flow exists");
        retx += st.retransmits;
        rtos += st.timeouts;
        ecn += st.ecn_reductions;
    }
    let s = sim.summary();
    let b = &s.links["R1->R2"];
    println!(
        "  {} flows, util {:.3}, drops {}, marks {}, lost {}, retransmits {retx}, timeouts {rtos}, ECN reductions {ecn}",
        sim.num_flows(),
        b.utilization,
        b.drops,
        b.marks,
        b.lost
    );
    let r = serde_json::to_value(sim.results()).expect("results serialize");
    h.write(behaviour(r).to_string().as_bytes());
    h.0
}

/// The state of a flow the digest covers: the [`netsim::FlowStatus`] fields the model
/// produces (exact `f64` digits), in a fixed format, so that a field added for reporting
/// does not change the digest.
fn status_line(t: u64, st: &netsim::FlowStatus) -> String {
    format!(
        "{t} {} {} {} {:?} {:?} {:?} {} {} {} {} {} {:?} {:?}\n",
        st.id,
        st.kind,
        st.started,
        st.cwnd,
        st.ssthresh,
        st.srtt_s,
        st.bytes_acked,
        st.bytes_delivered,
        st.retransmits,
        st.timeouts,
        st.ecn_reductions,
        st.min_reduction_gap_s,
        st.fct_s
    )
}

/// The serialized results reduced to what the model did: link time series and summaries,
/// cwnd traces, and per flow the counters the TCP model produces. Left out are the
/// statistics derived for reporting, which were added or redefined after these digests were
/// recorded (per-flow goodput, RTT, one-way and queueing delays, groups, fairness, the links'
/// `queue_delay_hist`, per-class delay series) and the summary's `events` (how many events
/// the engine processed: it measures the engine, not the model, and an engine that reaches
/// the same results with fewer events, like the idle-link fast path of `link.rs`, must keep
/// every digest). Every counter and time series they are computed from stays in.
fn behaviour(mut r: Value) -> Value {
    const FLOW_KEYS: [&str; 10] = [
        "id",
        "group",
        "kind",
        "cc",
        "start_s",
        "retransmits",
        "timeouts",
        "fct_s",
        "size_bytes",
        "bytes_delivered",
    ];
    let s = r["summary"].as_object_mut().expect("summary");
    s.insert("events".into(), json!(0));
    s.remove("groups");
    s.remove("fairness");
    for f in s["flows"].as_array_mut().expect("flows") {
        f.as_object_mut()
            .expect("flow")
            .retain(|k, _| FLOW_KEYS.contains(&k.as_str()));
    }
    for l in s["links"].as_object_mut().expect("links").values_mut() {
        l.as_object_mut().expect("link").remove("queue_delay_hist");
    }
    if let Some(c) = r.get_mut("class_timeseries").and_then(Value::as_object_mut) {
        c.remove("queue_delay_ms_mean");
    }
    r
}

/// Digests recorded before the TCP split (see the module doc), recomputed with the event
/// count left out on the code before the idle-link fast path, and recomputed again with the
/// `behaviour` projection on the code before the per-flow delay statistics (where they equal
/// what the code after gives: those statistics changed no behaviour). The four CoDel digests
/// were recomputed when CoDel's control law became Linux's arithmetic by default; with
/// `control_law = "rfc"` those scenarios give the earlier digests unchanged (checked).
const GOLDEN: &[(&str, u64)] = &[
    ("newreno_droptail_10", 0xbd97bdfd29f3e1e6),
    ("reno_droptail_loss_10", 0xf2a98e6ae053f8f1),
    ("cubic_droptail_10", 0xf1684c3873fba770),
    ("newreno_red_ecn_delack_10", 0x6853cad703c8bb56),
    ("reno_red_drop_delack_10", 0x0d0689823195c8e7),
    ("cubic_codel_sack_10", 0x012078e0aa1af05e),
    ("cubic_codel_ecn_sack_delack_10", 0xa4b80e0c60daab0e),
    ("newreno_pie_sack_loss_10", 0x7478de6c18e70dd1),
    ("reno_pie_ecn_10", 0x7c49eace741b7f1d),
    ("newreno_droptail_delack_50", 0x6f3d91d6f609f4e8),
    ("reno_red_ecn_50", 0xbbb39843bc081214),
    ("cubic_pie_ecn_delack_50", 0x98fd6588ee73351b),
    ("cubic_droptail_sack_loss_50", 0x9ea7ba8a4dbf1f02),
    ("newreno_codel_ecn_sack_50", 0x249af3eec7510685),
    ("reno_codel_sack_delack_50", 0xba1af85148cf7af8),
    ("cubic_2_droptail_sack_delack", 0xbc356f14a0e291da),
    ("newreno_2_pie", 0xabbb0b4cee711030),
    ("mixed_red_ecn", 0x706bb7cc65cc5a3a),
    ("mixed_droptail_tiny_buffer", 0x7e2d874662febff0),
    // recorded on the code before the `linux` profile's per-ACK work was made cheaper (the
    // paced one on that code once paced flows sent TSO/GSO bursts; the CoDel one, whose CUBIC
    // group has ECN, again once PRR paced the ECN reduction as Linux's `tcp_cwnd_reduction`
    // does in `TCP_CA_CWR`; both again once the receive window followed Linux's
    // `rcv_ssthresh`, free space and receiver RTT estimate; all three again once CUBIC
    // followed `tcp_cubic.c`'s arithmetic and the sender Linux's congestion states: growth
    // by the segments newly delivered, only while the window is the limit, CWR turning into
    // recovery without a second reduction, the timer re-armed on partial ACKs)
    ("linux_codel_mixed", 0x718079f50bf08ced),
    ("linux_droptail_tiny_buffer_loss", 0x58515505a78f8425),
    ("linux_paced_red", 0xb2a86791376f3073),
];

#[test]
fn tcp_golden_digests() {
    let got: Vec<(&str, u64)> = scenarios()
        .into_iter()
        .map(|(name, cfg)| {
            println!("{name}:");
            (name, digest(cfg))
        })
        .collect();
    let table: String = got
        .iter()
        .map(|(name, d)| format!("    (\"{name}\", 0x{d:016x}),\n"))
        .collect();
    println!("{table}");
    assert_eq!(
        got.len(),
        GOLDEN.len(),
        "one golden digest per scenario\n{table}"
    );
    let bad: Vec<&str> = got
        .iter()
        .zip(GOLDEN)
        .filter(|(g, w)| g != w)
        .map(|(g, _)| g.0)
        .collect();
    assert!(
        bad.is_empty(),
        "digests changed: {bad:?}\nnew table:\n{table}"
    );
}
