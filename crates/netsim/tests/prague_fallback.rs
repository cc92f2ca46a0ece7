//! Prague's classic-ECN AQM detection and fallback (RFC 9331 §4.3; L4STeam `tcp_prague.c`
//! `prague_classic_ecn_detection`): 2 Prague and 20 CUBIC (ECN) flows on a 40 Mb/s,
//! 20 ms base-RTT dumbbell (1500-byte packets, 1000-packet buffer, SACK, 30 s, 6 s warm-up).
//! Under a single-queue Classic AQM (CoDel, PIE: both mark ECT packets) Prague must fall
//! back to a Classic-like reduction; under DualPI2 it must stay L4S.

use experiment::scenario::Scenario;
use netsim::Simulation;

fn run(json: &str, secs: u64) -> experiment::results::Summary {
    let sc = Scenario::from_json(json).unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run_until(aqm::Instant(secs * 1_000_000_000));
    sim.check_conservation().unwrap();
    sim.summary()
}

const SECS: u64 = 30;

fn mixed(aqm: &str, seed: u64, delack: bool) -> String {
    format!(
        r#"{{"seed": {seed}, "duration": "{SECS}s", "warmup": "{w}s",
            "dumbbell": {{"rate": "40Mbps", "rtt": "20ms", "buffer": 1000, "pkt_size": 1500}},
            "aqm": {{"type": "{aqm}"}},
            "flows": [{{"count": 20, "cc": "cubic", "ecn": true, "sack": true, "delack": {delack}}},
                      {{"count": 2, "cc": "prague", "sack": true, "delack": {delack}}}]}}"#,
        w = SECS / 5
    )
}

/// Mean goodput of a Prague flow over that of a CUBIC flow.
fn ratio(s: &experiment::results::Summary) -> f64 {
    let cubic: f64 = s.flows[..20].iter().map(|f| f.goodput_bps).sum::<f64>() / 20.0;
    let prague: f64 = s.flows[20..].iter().map(|f| f.goodput_bps).sum::<f64>() / 2.0;
    prague / cubic
}

/// Under CoDel and PIE a Prague flow gets within 2x of a CUBIC flow's rate (without the
/// fallback, at this commit's parent: 7.2x under CoDel, 4.4-4.9x under PIE, delack off).
/// The bound is the issue's ("within 2x"); the link stays fully used.
#[test]
fn prague_falls_back_under_classic_aqm() {
    for aqm in ["codel", "pie"] {
        for (seed, delack) in [(1, false), (2, true)] {
            let s = run(&mixed(aqm, seed, delack), SECS);
            let l = &s.links["R1->R2"];
            let r = ratio(&s);
            let msg = format!(
                "{aqm} seed {seed} delack {delack}: prague/cubic {r:.2}, util {:.3}, delay {:?}",
                l.utilization, l.queue_delay_ms
            );
            eprintln!("{msg}");
            assert!((0.5..=2.0).contains(&r), "{msg}");
            assert!(l.utilization > 0.95, "{msg}");
        }
    }
}

/// The same mix under DualPI2 (defaults): Prague stays L4S, the L queue's mean delay below
/// 1 ms (RFC 9332 Appendix A's ~1 ms step), and the per-flow ratio within the 0.5-2 bars of
/// `l4s.rs` (RFC 9332 §2.1: the coupling balances the two kinds of flows).
#[test]
fn prague_stays_l4s_under_dualpi2() {
    for (seed, delack) in [(1, false), (2, true)] {
        let s = run(&mixed("dualpi2", seed, delack), SECS);
        let l = &s.links["R1->R2"];
        let lq = &l.classes["l"];
        let r = ratio(&s);
        let msg = format!(
            "dualpi2 seed {seed} delack {delack}: prague/cubic {r:.2}, L {:?}",
            lq.queue_delay_ms
        );
        eprintln!("{msg}");
        assert!(lq.queue_delay_ms.mean < 1.0, "{msg}");
        assert!((0.5..=2.0).contains(&r), "{msg}");
    }
}
