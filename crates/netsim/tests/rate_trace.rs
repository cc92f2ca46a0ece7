//! Trace-driven links (`rate_trace`, Mahimahi's format) and `rate_changes` with the same
//! service model (`experiment::service`), checked against what the traces offer, computed
//! here from the trace's lines alone, and against a transcription of Mahimahi's
//! `LinkQueue::rationalize` (src/frontend/link_queue.cc) for per-packet departure times.

use std::path::{Path, PathBuf};

use experiment::scenario::Scenario;
use netsim::trace::TraceBatch;
use netsim::Simulation;

mod common;
use common::Scratch;

/// Writes `times` (ms, one per line) into a fresh file in `dir` and returns its name.
fn trace_file(dir: &Scratch, name: &str, times: &[u32]) -> PathBuf {
    let p = dir.join(name);
    let text: Vec<String> = times.iter().map(u32::to_string).collect();
    std::fs::write(&p, text.join("\n") + "\n").unwrap();
    p
}

/// Opportunities at `per_ms[i]` per ms during ms `i + 1` (the last line is the period).
fn from_counts(per_ms: &[u32]) -> Vec<u32> {
    let mut t = Vec::new();
    for (i, &n) in per_ms.iter().enumerate() {
        t.extend(std::iter::repeat_n(i as u32 + 1, n as usize));
    }
    if t.last() != Some(&(per_ms.len() as u32)) {
        t.push(per_ms.len() as u32); // the period (one more opportunity at its end)
    }
    t
}

/// The generated traces: constant (12 Mb/s), a square wave (24 / 6 Mb/s, 200 ms each),
/// outages (12 Mb/s with 150 ms of nothing every second) and a cellular-like random walk (a
/// seeded walk of 0..=4 opportunities per ms, 10 s).
fn traces() -> Vec<(&'static str, Vec<u32>)> {
    let square: Vec<u32> = (0..400).map(|i| if i < 200 { 2 } else { 1 }).collect();
    let square: Vec<u32> = from_counts(&square)
        .into_iter()
        .enumerate()
        .filter(|&(i, t)| t <= 200 || i % 2 == 0 || t == 400)
        .map(|(_, t)| t)
        .collect();
    let outage: Vec<u32> = (0..1000).map(|i| u32::from(i < 850)).collect();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut level: i64 = 2;
    let walk: Vec<u32> = (0..10_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(10) {
                level = (level + if x.is_multiple_of(20) { 1 } else { -1 }).clamp(0, 4);
            }
            level as u32
        })
        .collect();
    vec![
        ("constant", vec![1]),
        ("square", square),
        ("outage", from_counts(&outage)),
        ("walk", from_counts(&walk)),
    ]
}

/// Opportunities of the repeated trace with a time in (a, b] ms.
fn opportunities(times: &[u32], a: u64, b: u64) -> u64 {
    let p = *times.last().unwrap() as u64;
    let upto = |m: u64| {
        (m / p) * times.len() as u64 + times.iter().filter(|&&t| t as u64 <= m % p).count() as u64
    };
    upto(b) - upto(a)
}

fn scenario(trace: &Path, extra: &str, flows: &str, duration: &str) -> Scenario {
    let j = format!(
        r#"{{"duration": "{duration}", "warmup": "1s", "sample_interval": "10ms",
            "dumbbell": {{"rtt": "20ms", "access": "none", "buffer": 200,
                          "rate_trace": {:?} {extra}}},
            "flows": [{flows}]}}"#,
        trace.to_str().unwrap()
    );
    Scenario::from_json(&j).unwrap()
}

/// Backlogged (a UDP source far above the peak rate), the bytes the bottleneck sends after
/// the warm-up equal what the trace offers in that window within 1 % (1500-byte packets use
/// one opportunity each; 1000-byte packets share them, bytes accumulating across
/// opportunities as in Mahimahi, so they fill them too), and so does the utilization.
#[test]
fn backlogged_throughput_equals_the_traces_capacity() {
    let dir = Scratch::new("rate-trace-capacity");
    for (name, times) in traces() {
        let f = trace_file(&dir, &format!("{name}.trace"), &times);
        for size in [1500, 1000] {
            let flows =
                format!(r#"{{"kind": "udp_cbr", "rate": "80Mbps", "packet_size": {size}}}"#);
            let sc = scenario(&f, "", &flows, "10s");
            let mut sim = Simulation::new(sc.config).unwrap();
            sim.run();
            sim.check_conservation().unwrap();
            let r = sim.results();
            let ts = &r.timeseries;
            let sent: u64 = (0..ts.time_s.len())
                .filter(|&i| ts.time_s[i] > 1.0 + 1e-9)
                .map(|i| ts.tx_bytes[i])
                .sum();
            let offered = opportunities(&times, 1000, 10_000) * 1500;
            let l = &r.summary.links["R1->R2"];
            eprintln!(
                "{name} {size} B: sent {sent} B, offered {offered} B, utilization {:.5}",
                l.utilization
            );
            let ratio = sent as f64 / offered as f64;
            assert!((ratio - 1.0).abs() < 0.01, "{name} {size}: {ratio}");
            assert!(
                l.utilization > 0.99 && l.utilization <= 1.0,
                "{name}: {l:?}"
            );
        }
    }
}

/// Mahimahi's `rationalize`, transcribed: opportunities in time order give 1500 bytes to the
/// packets queued at their time (arrived at or before it), bytes accumulating across
/// opportunities; returns, per packet, when it is dequeued (the opportunity giving its first
/// byte) and when it departs (the one giving its last byte), ns.
fn mahimahi(times: &[u32], arrivals_ns: &[u64], size: u32) -> (Vec<u64>, Vec<u64>) {
    let p = *times.last().unwrap() as u64;
    let n = times.len() as u64;
    let time = |g: u64| ((g / n) * p + times[(g % n) as usize] as u64) * 1_000_000;
    let (mut g, mut deq, mut out) = (0u64, Vec::new(), Vec::new());
    let mut queue = std::collections::VecDeque::new();
    let mut k = 0;
    let (mut in_transit, mut left_of_packet) = (false, 0u32);
    while out.len() < arrivals_ns.len() {
        let t = time(g);
        g += 1;
        while k < arrivals_ns.len() && arrivals_ns[k] <= t {
            queue.push_back(k);
            k += 1;
        }
        let mut left = 1500u32;
        while left > 0 {
            if !in_transit {
                if queue.pop_front().is_none() {
                    break;
                }
                deq.push(t);
                in_transit = true;
                left_of_packet = size;
            }
            let take = left.min(left_of_packet);
            left_of_packet -= take;
            left -= take;
            if left_of_packet == 0 {
                out.push(t);
                in_transit = false;
            }
        }
    }
    (deq, out)
}

/// A packet caught by an outage leaves with the first opportunity after it, behind the
/// packets queued before it: every dequeue time equals the transcription of Mahimahi's
/// service loop to the ns (for 1500-byte packets the dequeue is the departure), and the first
/// packet of the outage waits the outage (its delay: the outage plus the queue, here empty).
#[test]
fn outage_delay_is_the_outage_plus_the_queue() {
    // 1 opportunity per ms (12 Mb/s), none in (850, 1000) ms, repeating
    let times = from_counts(&(0..1000).map(|i| u32::from(i < 850)).collect::<Vec<_>>());
    let dir = Scratch::new("rate-trace-outage");
    let f = trace_file(&dir, "outage-delay.trace", &times);
    for size in [1500u32, 700] {
        // 6 Mb/s of `size`-byte packets: an idle link between outages
        let rate = 6e6;
        let flows = format!(r#"{{"kind": "udp_cbr", "rate": {rate}, "packet_size": {size}}}"#);
        let j = format!(
            r#"{{"duration": "3s", "warmup": 0, "dumbbell": {{"rtt": "20ms", "access": "none",
                "buffer": 1000, "rate_trace": {:?}}}, "flows": [{flows}],
                "trace": {{"links": ["R1->R2"]}}}}"#,
            f.to_str().unwrap()
        );
        let sc = Scenario::from_json(&j).unwrap();
        let mut sim = Simulation::new(sc.config).unwrap();
        sim.start_trace();
        sim.run();
        let mut b = TraceBatch::default();
        sim.drain_trace(&mut b);
        let (mut arr, mut dep) = (Vec::new(), Vec::new());
        for i in 0..b.len() {
            if b.kind[i] == 1 {
                arr.push(b.time_ns[i] - b.sojourn_ns[i]);
                dep.push(b.time_ns[i]);
            }
        }
        assert!(arr.len() > 1000, "{}", arr.len());
        let (want_deq, want_dep) = mahimahi(&times, &arr, size);
        assert_eq!(dep, want_deq, "{size}-byte packets");
        let want = want_dep;
        // the first packet after the last opportunity before the outage (850 ms) leaves with
        // the first one after it (1000 ms, the period's line): it waits the rest of the outage
        let first = arr.iter().position(|&a| a > 850_000_000).unwrap();
        assert_eq!(want[first], 1_000_000_000);
        let wait = (want[first] - arr[first]) as f64 / 1e6;
        eprintln!("{size} B: first packet of the outage waits {wait:.3} ms");
        assert!((148.0..150.0).contains(&wait), "{wait}");
    }
}

/// A rate of 0 in `rate_changes` is an outage: nothing is sent during it, the packet in
/// service finishes at the restored rate. (Before, 0 was refused, and with a 1 kb/s floor one
/// packet started in a 100 ms dip held the link for 12 s.)
#[test]
fn a_rate_change_to_zero_is_an_outage() {
    let j = r#"{"duration": "30s", "warmup": "5s",
        "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 100,
                     "rate_changes": [{"at": "10s", "rate": 0}, {"at": "10.1s", "rate": "10Mbps"},
                                      {"at": "20s", "rate": "1kbps"}, {"at": "20.1s", "rate": "10Mbps"}]},
        "flows": [{"count": 10}]}"#;
    let sc = Scenario::from_json(j).unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let l = &r.summary.links["R1->R2"];
    eprintln!(
        "dips: utilization {:.4}, delay {:?}",
        l.utilization, l.queue_delay_ms
    );
    // the buffer (100 packets, 120 ms at 10 Mb/s) plus the 100 ms dip bounds every sojourn
    assert!(l.queue_delay_ms.p99 < 250.0, "{:?}", l.queue_delay_ms);
    assert!(
        l.utilization > 0.97 && l.utilization <= 1.0,
        "{}",
        l.utilization
    );
    // nothing leaves during the outage: the samples inside it send nothing
    let ts = &r.timeseries;
    for i in 0..ts.time_s.len() {
        if ts.time_s[i] > 10.0 + 1e-9 && ts.time_s[i] <= 10.1 + 1e-9 {
            assert_eq!(ts.tx_bytes[i], 0, "at {}", ts.time_s[i]);
        }
    }
}

/// Bad trace files: one line naming the key and value.
#[test]
fn bad_trace_files_are_refused() {
    let dir = Scratch::new("rate-trace-bad");
    let bad = |content: Option<&str>, extra: &str| {
        let f = dir.join("bad.trace");
        let _ = std::fs::remove_file(&f);
        if let Some(c) = content {
            std::fs::write(&f, c).unwrap();
        }
        let j = format!(
            r#"{{"dumbbell": {{"rate_trace": {:?} {extra}}}, "flows": [{{}}]}}"#,
            f.to_str().unwrap()
        );
        let e = Scenario::from_json(&j).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    };
    let e = bad(None, "");
    assert!(
        e.starts_with("dumbbell.rate_trace = \"") && e.contains("cannot read"),
        "{e}"
    );
    assert!(bad(Some(""), "").contains(": empty trace"));
    assert!(bad(Some("5\n3\n"), "").contains("line 2: 3 ms is before"));
    assert!(bad(Some("0\n"), "").contains("nonzero"));
    let e = bad(
        Some("1\n"),
        r#", "rate_changes": [{"at": "1s", "rate": "1Mbps"}]"#,
    );
    assert!(
        e.starts_with("dumbbell.rate_changes: not with rate_trace"),
        "{e}"
    );
    // the nominal rate defaults to the trace's mean rate
    let f = trace_file(&dir, "nominal.trace", &[1]);
    let sc = scenario(&f, "", "{}", "2s");
    assert_eq!(sc.normalized["dumbbell"]["rate"], 12e6);
    let sc = scenario(&f, r#", "rate": "5Mbps""#, "{}", "2s");
    assert_eq!(sc.normalized["dumbbell"]["rate"], 5e6);
}

/// An explicit duplex link follows `rate_trace` one way and `reverse_rate_trace` the other,
/// each at its trace's capacity when backlogged; every parking-lot bottleneck follows the
/// builder's trace. A `reverse_rate_trace` on a link without a reverse twin is refused.
#[test]
fn explicit_and_parking_lot_links_follow_their_traces() {
    let dir = Scratch::new("rate-trace-links");
    let fast = trace_file(&dir, "fast.trace", &[1]); // 12 Mb/s
    let slow = trace_file(&dir, "slow.trace", &[2]); // 6 Mb/s
    let (fast, slow) = (fast.to_str().unwrap(), slow.to_str().unwrap());
    let udp = |src: &str, dst: &str| {
        format!(
            r#"{{"kind": "udp_cbr", "rate": "40Mbps", "packet_size": 1500, "src": "{src}", "dst": "{dst}"}}"#
        )
    };
    let j = format!(
        r#"{{"duration": "5s", "warmup": "1s",
            "nodes": [{{"name": "A"}}, {{"name": "B"}}],
            "links": [{{"src": "A", "dst": "B", "delay": "5ms", "rate_trace": {fast:?},
                        "reverse_rate_trace": {slow:?}}}],
            "flows": [{}, {}]}}"#,
        udp("A", "B"),
        udp("B", "A")
    );
    let sc = Scenario::from_json(&j).unwrap();
    assert_eq!(sc.normalized["links"][0]["rate"], 12e6);
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    let s = sim.summary();
    for (name, cap) in [("A->B", 12e6), ("B->A", 6e6)] {
        let l = &s.links[name];
        let sent = l.tx_packets as f64 * 1500.0 * 8.0 / 4.0;
        eprintln!("{name}: {sent:.0} bit/s, utilization {:.5}", l.utilization);
        assert!((sent / cap - 1.0).abs() < 0.01, "{name}: {sent}");
        assert!(l.utilization > 0.99, "{name}: {}", l.utilization);
    }
    let j = format!(
        r#"{{"duration": "5s", "warmup": "1s",
            "parking_lot": {{"hops": 2, "rate_trace": {slow:?}}},
            "flows": [{{"kind": "udp_cbr", "rate": "40Mbps", "packet_size": 1500}},
                      {{"kind": "udp_cbr", "rate": "40Mbps", "packet_size": 1500, "path": [1, 2]}}]}}"#
    );
    let mut sim = Simulation::new(Scenario::from_json(&j).unwrap().config).unwrap();
    sim.run();
    let s = sim.summary();
    for name in ["R0->R1", "R1->R2"] {
        let sent = s.links[name].tx_packets as f64 * 1500.0 * 8.0 / 4.0;
        assert!((sent / 6e6 - 1.0).abs() < 0.01, "{name}: {sent}");
    }
    let j = format!(
        r#"{{"nodes": [{{"name": "A"}}, {{"name": "B"}}],
            "links": [{{"src": "A", "dst": "B", "duplex": false, "rate_trace": {fast:?},
                        "reverse_rate_trace": {slow:?}}}],
            "flows": [{}]}}"#,
        udp("A", "B")
    );
    let e = Scenario::from_json(&j).unwrap_err().to_string();
    assert!(
        e.starts_with("links[0].reverse_rate_trace = ") && e.contains("duplex = false"),
        "{e}"
    );
}
