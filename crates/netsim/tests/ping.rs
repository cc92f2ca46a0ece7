//! Ping probers (`kind = "ping"`): probes echoed by the destination across the real queues.

mod common;

use common::*;
use serde_json::json;

/// An idle 10 Mb/s dumbbell (access links at 100 Mb/s), base RTT 40 ms. Reference (closed
/// form, store and forward): every probe's RTT is the propagation delay plus the
/// serialization of a 64-byte packet on the three hops each way,
/// 40 ms + 2 x (512 bit / 10 Mb/s + 2 x 512 bit / 100 Mb/s) = 40.122 88 ms, exactly (the
/// simulator's times are integer ns and every term is a whole number of ns).
#[test]
fn idle_rtt_is_propagation_plus_serialization() {
    let sim = run(dumbbell(
        1,
        3.0,
        0.5,
        10e6,
        0.04,
        100,
        json!({"type": "droptail"}),
        json!([{"kind": "ping", "start": 0.1, "start_jitter": 0.0}]),
    ));
    let p = sim.pings();
    // probes at 0.1, 0.3, ..., 2.9 s: 15 (none at the end, 3.0 s)
    assert_eq!(p.seq.len(), 15);
    assert_eq!(p.seq, (0..15).collect::<Vec<u32>>());
    for (t, r) in p.time_s.iter().zip(&p.rtt_ms) {
        assert_eq!(*r, 40.122_88, "probe at {t}");
    }
    let s = sim.summary();
    let f = &s.flows[0];
    assert_eq!(f.kind, "ping");
    // probes sent after the warm-up whose echo came back: 0.5 .. 2.9 s
    assert_eq!(f.rtt_samples, 13);
    assert!((f.rtt_ms.unwrap().mean - 40.122_88).abs() < 1e-9);
}

/// Probes share the data's FIFO: a UDP source at 1.5 x a 10 Mb/s drop-tail bottleneck keeps
/// its 50-packet buffer full. Reference: a probe that finds the buffer full is dropped (its
/// RTT is NaN, lost); one that gets in waits for the packets ahead of it, between 49 and 50
/// 1000-byte packets (0.8 ms each at 10 Mb/s), so its RTT is 20 ms of propagation plus
/// 39.2 .. 40 ms of queue plus under 0.2 ms of serialization. The echo crosses the idle
/// reverse bottleneck. Every packet (echoes included) is conserved (`run` checks it).
#[test]
fn probes_queue_behind_the_load_and_are_lost_at_a_full_buffer() {
    let sim = run(dumbbell(
        1,
        10.0,
        1.0,
        10e6,
        0.02,
        50,
        json!({"type": "droptail"}),
        json!([
            {"kind": "udp_cbr", "rate": "15Mbps", "packet_size": 1000, "start": 0.0, "start_jitter": 0.0},
            {"kind": "ping", "interval": "50ms", "size": 64, "start": 0.5, "start_jitter": 0.0, "stop": 9.5}
        ]),
    ));
    let p = sim.pings();
    // probes at 0.5, 0.55, ..., < 9.5 s: 180
    assert_eq!(p.seq.len(), 180);
    let mut lost = 0;
    for (t, r) in p.time_s.iter().zip(&p.rtt_ms) {
        if r.is_nan() {
            lost += 1;
        } else if *t > 0.6 {
            assert!((59.2..60.2).contains(r), "probe at {t}: {r} ms");
        }
    }
    assert!(lost > 0 && lost < 180, "lost {lost}");
    let s = sim.summary();
    assert_eq!(s.flows[1].kind, "ping");
    // the ping group is not a long-lived source in Jain's index
    assert_eq!(s.groups[1].jain, None);
}

/// A reverse prober's probes cross the reverse bottleneck and its echoes the forward one:
/// with the forward queue full (as above) and the reverse one idle, its RTTs carry the same
/// 39.2 .. 40 ms of queueing.
#[test]
fn reverse_probes_echo_through_the_forward_queue() {
    let sim = run(dumbbell(
        2,
        5.0,
        1.0,
        10e6,
        0.02,
        50,
        json!({"type": "droptail"}),
        json!([
            {"kind": "udp_cbr", "rate": "15Mbps", "packet_size": 1000, "start": 0.0, "start_jitter": 0.0},
            {"kind": "ping", "direction": "reverse", "start": 1.0, "start_jitter": 0.0}
        ]),
    ));
    let p = sim.pings();
    // probes at 1.0, 1.2, ..., 5.0 s (the end of the run is inclusive)
    assert_eq!(p.seq.len(), 21);
    let ok: Vec<f64> = p.rtt_ms.iter().copied().filter(|r| !r.is_nan()).collect();
    assert!(!ok.is_empty());
    for r in ok {
        assert!((59.2..60.2).contains(&r), "{r} ms");
    }
}
