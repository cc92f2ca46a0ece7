//! The starvation case of the `linux` profile (docs/tcp.md, "Profiles"): 8 CUBIC + 8
//! NewReno flows on a 20 Mb/s, 60 ms drop-tail dumbbell (300-packet buffer), 30 s with a
//! 5 s warm-up, 18 seeds. Under the `classic` profile (no SACK, no timestamps, Karn's rule)
//! a flow whose retransmission times out gets no RTT sample until a segment sent after the
//! timeout is acknowledged; with repeated losses its backed-off RTO never clears and it
//! starves (goodput below 20 % of the median) in many seeds. Under `linux` (SACK with
//! PRR, an RTT sample from every ACK of new data, Linux's delayed ACK) no flow of any seed
//! falls below 20 % of the median.

mod common;

use common::{run, scenario};
use serde_json::json;

/// Per seed, the smallest goodput divided by the median goodput of the 16 flows.
fn worst_ratios(profile: &str) -> Vec<f64> {
    (1..=18u64)
        .map(|seed| {
            let sim = run(scenario(json!({
                "name": "starvation", "seed": seed, "duration": "30s", "warmup": "5s",
                "profile": profile,
                "dumbbell": {"rate": "20Mbps", "rtt": "60ms", "buffer": 300},
                "aqm": {"type": "droptail"},
                "flows": [{"count": 8, "cc": "cubic"}, {"count": 8, "cc": "newreno"}],
            })));
            let mut g: Vec<f64> = sim.summary().flows.iter().map(|f| f.goodput_bps).collect();
            g.sort_by(f64::total_cmp);
            let median = (g[7] + g[8]) / 2.0;
            g[0] / median
        })
        .collect()
}

/// The criterion: no flow below 20 % of the median, in each of 18 seeded runs.
#[test]
fn linux_profile_starves_no_flow() {
    let r = worst_ratios("linux");
    assert!(
        r.iter().all(|&x| x >= 0.2),
        "worst/median per seed: {r:.2?}"
    );
}

/// The same runs under `classic` do starve flows (8 of 18 seeds when written), so the test
/// above can fail: at least 3 seeds below 20 %.
#[test]
fn classic_profile_starves_some_flows() {
    let r = worst_ratios("classic");
    let starved = r.iter().filter(|&&x| x < 0.2).count();
    assert!(starved >= 3, "worst/median per seed: {r:.2?}");
}
