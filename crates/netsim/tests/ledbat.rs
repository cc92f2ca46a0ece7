//! Less-than-best-effort sending (LEDBAT, RFC 6817) and varying capacity
//! (`[dumbbell] rate_changes`): the two models behind RFC 7928 §4.4 and §7.2.6 in the suite.

use experiment::scenario::Scenario;
use netsim::Simulation;

fn sim(json: &str) -> Simulation {
    let sc = Scenario::from_json(json).unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    sim
}

/// One LEDBAT flow alone on a drop-tail dumbbell whose buffer (400 packets, 320 ms) is far
/// deeper than TARGET = 100 ms: it fills the link and holds the queueing delay near TARGET
/// (no loss once it has settled: the delay, not the buffer, limits it).
#[test]
fn ledbat_alone_holds_the_queue_near_target() {
    let s = sim(r#"{"duration": "60s", "warmup": "30s",
        "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 400},
        "flows": [{"cc": "ledbat", "start": 0}]}"#)
    .summary();
    let l = &s.links["R1->R2"];
    let d = &l.queue_delay_ms;
    eprintln!(
        "ledbat alone: util {:.4}, delay mean {:.1} ms p50 {:.1} p99 {:.1}, drops {}",
        l.utilization, d.mean, d.p50, d.p99, l.drops
    );
    assert_eq!(s.flows[0].cc.as_deref(), Some("ledbat"));
    assert!(l.utilization > 0.99, "{}", l.utilization);
    assert!((85.0..=105.0).contains(&d.mean), "{d:?}");
    assert!(d.p99 <= 110.0, "{d:?}");
    assert_eq!(l.drops, 0);
}

/// LEDBAT against one NewReno flow on a drop-tail dumbbell with a buffer (250 packets, 200
/// ms) deep enough that NewReno keeps the queue above TARGET: LEDBAT yields (under 25 % of
/// the goodput); with CoDel, which keeps the queue far below TARGET, it competes as a
/// best-effort flow (a share above 30 %; measured 0.59-0.60 on seeds 1-2).
#[test]
fn ledbat_yields_to_newreno_above_target() {
    let run = |aqm: &str, seed: u64| {
        let s = sim(&format!(
            r#"{{"duration": "60s", "warmup": "10s", "seed": {seed}, "aqm": {{"type": "{aqm}"}},
                "dumbbell": {{"rate": "10Mbps", "rtt": "100ms", "buffer": 250}},
                "flows": [{{"cc": "newreno"}}, {{"cc": "ledbat"}}]}}"#
        ))
        .summary();
        let (reno, lbe) = (s.flows[0].goodput_bps, s.flows[1].goodput_bps);
        let share = lbe / (reno + lbe);
        let l = &s.links["R1->R2"];
        eprintln!(
            "{aqm} seed {seed}: ledbat share {share:.3}, util {:.3}, delay mean {:.1} ms",
            l.utilization, l.queue_delay_ms.mean
        );
        (share, l.queue_delay_ms.mean)
    };
    for seed in [1, 2] {
        let (share, delay) = run("droptail", seed);
        assert!(delay > 100.0, "{delay}");
        assert!(share < 0.25, "{share}");
        let (share, delay) = run("codel", seed);
        assert!(delay < 20.0, "{delay}");
        assert!(share > 0.3, "{share}");
    }
}

/// The bottleneck rate halves at 20 s and comes back at 40 s: the time series' throughput
/// follows the rate (within 5 % over each phase, away from the edges) and the utilization,
/// over the offered capacity ∫ rate dt, is near 1 with 10 flows. A rate change schedules
/// nothing else: with an empty list a run is the same as without the key.
#[test]
fn rate_changes_follow_the_capacity() {
    let json = |changes: &str| {
        format!(
            r#"{{"duration": "60s", "warmup": "5s",
                "dumbbell": {{"rate": "10Mbps", "rtt": "40ms", "buffer": 100 {changes}}},
                "flows": [{{"count": 10}}]}}"#
        )
    };
    let s = sim(&json(
        r#", "rate_changes": [{"at": "20s", "rate": "5Mbps"}, {"at": "40s", "rate": "10Mbps"}]"#,
    ));
    let r = s.results();
    let ts = &r.timeseries;
    let mean = |a: f64, b: f64| {
        let v: Vec<f64> = (0..ts.time_s.len())
            .filter(|&i| ts.time_s[i] > a && ts.time_s[i] <= b)
            .map(|i| ts.throughput_bps[i])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (p1, p2, p3) = (mean(6.0, 20.0), mean(21.0, 40.0), mean(41.0, 60.0));
    let u = r.summary.links["R1->R2"].utilization;
    eprintln!("rate changes: {p1:.0} / {p2:.0} / {p3:.0} bit/s, utilization {u:.4}");
    assert!((p1 / 10e6 - 1.0).abs() < 0.05, "{p1}");
    assert!((p2 / 5e6 - 1.0).abs() < 0.05, "{p2}");
    assert!((p3 / 10e6 - 1.0).abs() < 0.05, "{p3}");
    // Not in 1: the utilization is measured against ∫ rate dt, not the initial rate
    // (against 10 Mb/s throughout it would be about 0.82).
    assert!(u > 0.97 && u <= 1.0, "{u}");
    assert_eq!(r.summary.links["R1->R2"].rate_bps, 10e6);
    // An empty list changes nothing.
    let a = sim(&json("")).results();
    let b = sim(&json(r#", "rate_changes": []"#)).results();
    // (Debug text: the time series hold NaN, which is not equal to itself.)
    assert_eq!(
        format!("{:?}", a.summary.links),
        format!("{:?}", b.summary.links)
    );
    assert_eq!(format!("{:?}", a.timeseries), format!("{:?}", b.timeseries));
}

/// Validation of `rate_changes`: one line naming the key and value.
#[test]
fn rate_changes_are_validated() {
    let bad = |changes: &str| {
        let j = format!(
            r#"{{"duration": "30s", "dumbbell": {{"rate": "10Mbps", "rate_changes": {changes}}},
                "flows": [{{}}]}}"#
        );
        Scenario::from_json(&j).unwrap_err().to_string()
    };
    let e = bad(r#"[{"at": "40s", "rate": "5Mbps"}]"#);
    assert!(
        e.starts_with("dumbbell.rate_changes[0].at = \"40s\": must be before the end"),
        "{e}"
    );
    let e = bad(r#"[{"at": "20s", "rate": "5Mbps"}, {"at": "10s", "rate": "1Mbps"}]"#);
    assert!(
        e.starts_with("dumbbell.rate_changes[1].at = \"10s\": must be after"),
        "{e}"
    );
    let e = bad(r#"[{"at": "20s", "rate": -1}]"#);
    assert!(
        e.starts_with("dumbbell.rate_changes[0].rate = -1: must be a rate in [0bps"),
        "{e}"
    );
    let e = bad(r#"[{"at": "20s"}]"#);
    assert!(
        e.starts_with("dumbbell.rate_changes[0].rate: required"),
        "{e}"
    );
    let e = bad(r#"[{"at": "20s", "rate": "5Mbps", "rtt": 1}]"#);
    assert!(
        e.contains("dumbbell.rate_changes[0].rtt = 1: unknown key"),
        "{e}"
    );
    let e = bad(r#"{"at": "20s"}"#);
    assert!(e.starts_with("dumbbell.rate_changes = "), "{e}");
}
