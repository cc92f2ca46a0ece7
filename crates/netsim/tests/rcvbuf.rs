//! The `linux` profile's receive window (Linux receive-buffer autotuning,
//! `crates/netsim/src/tcp/rcvbuf.rs`): the FQ-CoDel/ECN stall found by the emulator grid.
//!
//! 20 CUBIC flows with ECN under FQ-CoDel with ECN at 10 Mb/s, 20 ms (bandwidth-delay product
//! 17 packets, limit 50): with 20 flows every flow queue's packets wait a round of the
//! scheduler, over CoDel's 5 ms target, so CoDel stays in its dropping state and marks every
//! ECT packet. A retransmission is not ECT (RFC 3168 §6.1.5), so it is dropped. Without a
//! receive window, a flow whose first hole had to be retransmitted kept sending new data
//! (SACKed, so out of the pipe), kept its flow queue busy, and lost every retransmission of
//! the hole: before the fix some flows delivered nothing in order for the whole run
//! (e.g. seed 1, one flow 1 segment in 12 s) while retransmitting 40 segments a second, and the
//! run retransmitted 81 and 167 segments per 1000 packets (seeds 1, 2). Real Linux (the
//! emulator grid, `validation/emu/RESULTS.md` section 4) retransmits 0.3 and 0 per 1000: its
//! receiver's window, counted from the hole, stops the new data, the flow queue empties, and
//! the retransmission gets through.

use experiment::scenario::Scenario;
use netsim::Simulation;

fn summary(json: &str) -> experiment::results::Summary {
    let sc = Scenario::from_json(json).unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    sim.summary()
}

fn fq_codel_ecn_20_cubic(seed: u64) -> experiment::results::Summary {
    summary(&format!(
        r#"{{"seed": {seed}, "duration": "12s", "warmup": "4s",
        "dumbbell": {{"rate": "10Mbps", "rtt": "20ms", "buffer": 50, "pkt_size": 1500}},
        "aqm": {{"type": "fq_codel", "ecn": true}},
        "flows": [{{"count": 20, "cc": "cubic", "ecn": true, "profile": "linux"}}]}}"#
    ))
}

/// Seeds 1 and 2: every flow gets at least a quarter of its fair share (0.5 Mb/s) in the
/// measurement window and the run retransmits under 5 segments per 1000 packets at the
/// bottleneck (measured with the fix: 0 on both seeds; Jain's index 1.00). The bound of 5 is
/// far from both the kernel's figure (under 1) and the old one (81 and more).
#[test]
fn fq_codel_ecn_with_20_flows_does_not_stall_a_flow() {
    for seed in 1..=2 {
        let s = fq_codel_ecn_20_cubic(seed);
        let g: Vec<f64> = s.flows.iter().map(|f| f.goodput_bps / 1e6).collect();
        let retx: u64 = s.flows.iter().map(|f| f.retransmits).sum();
        let arrivals = s.links["R1->R2"].arrivals;
        let per_1000 = 1000.0 * retx as f64 / arrivals as f64;
        eprintln!("seed {seed}: goodput {g:.2?} Mb/s, {per_1000:.1} retransmissions per 1000");
        assert!(g.iter().all(|&x| x > 0.125), "seed {seed}: {g:?}");
        assert!(per_1000 < 5.0, "seed {seed}: {per_1000}");
    }
}
