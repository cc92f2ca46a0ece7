//! BBR (Linux tcp_bbr.c) and pacing in the simulator.

use experiment::scenario::Scenario;
use netsim::Simulation;

fn sim(json: &str) -> Simulation {
    let sc = Scenario::from_json(json).unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    sim
}

#[test]
fn explore() {
    for rate in ["10Mbps", "50Mbps"] {
        let s = sim(&format!(
            r#"{{"duration": "30s", "warmup": "10s",
            "dumbbell": {{"rate": "{rate}", "rtt": "40ms", "buffer": 400}},
            "flows": [{{"cc": "bbr", "start": 0}}]}}"#
        ))
        .summary();
        let l = &s.links["R1->R2"];
        let d = &l.queue_delay_ms;
        eprintln!(
            "bbr alone {rate}: util {:.4}, delay mean {:.2} ms p50 {:.2} p99 {:.2}, drops {} q {:.1}",
            l.utilization, d.mean, d.p50, d.p99, l.drops, l.mean_queue_pkts
        );
    }
    for n in [1u32, 2] {
        let s = sim(&format!(
            r#"{{"duration": "60s", "warmup": "10s",
            "dumbbell": {{"rate": "20Mbps", "rtt": "40ms", "buffer": 500}},
            "flows": [{{"cc": "bbr", "count": {n}}}]}}"#
        ))
        .summary();
        for f in &s.flows {
            eprintln!(
                "  n{n} {:?} gp {:.0} retx {} to {} rtt {:?}",
                f.cc, f.goodput_bps, f.retransmits, f.timeouts, f.rtt_ms_mean
            );
        }
        let l = &s.links["R1->R2"];
        eprintln!(
            "n{n}: util {:.3} delay {:.1} drops {}",
            l.utilization, l.queue_delay_ms.mean, l.drops
        );
    }
    for aqm in ["droptail", "codel"] {
        let s = sim(&format!(
            r#"{{"duration": "60s", "warmup": "10s", "aqm": {{"type": "{aqm}"}},
            "dumbbell": {{"rate": "20Mbps", "rtt": "40ms", "buffer": 500}},
            "flows": [{{"cc": "bbr", "sack": true}}, {{"cc": "cubic", "sack": true}}]}}"#
        ))
        .summary();
        let (b, c) = (s.flows[0].goodput_bps, s.flows[1].goodput_bps);
        let l = &s.links["R1->R2"];
        for f in &s.flows {
            eprintln!(
                "  {:?} gp {:.0} retx {} to {} rtt {:?}",
                f.cc, f.goodput_bps, f.retransmits, f.timeouts, f.rtt_ms_mean
            );
        }
        eprintln!(
            "{aqm}: bbr share {:.3} util {:.3} delay {:.1} drops {}",
            b / (b + c),
            l.utilization,
            l.queue_delay_ms.mean,
            l.drops
        );
    }
}
