//! The short-flow pool: a finished `tcp_short` flow gives its slot in the flow table back
//! once nothing of it is left in the network, so the table holds the most flows ever
//! holding a slot at once, not every flow that arrived, and the results are those of the
//! run without the pool.

use netsim::Simulation;

mod common;
use common::Scratch;

/// A web-like workload: 100 flows/s of Pareto-sized flows (mean 20 kB, 16 Mb/s offered) on
/// a 40 Mb/s dumbbell beside two long-lived flows, for 30 s: about 3000 short flows.
const WEB: &str = r#"{"seed": 9, "duration": 30.0, "warmup": 5.0,
    "dumbbell": {"rate": "40Mbps", "rtt": "30ms", "buffer": 100},
    "aqm": {"type": "codel"},
    "flows": [{"count": 2, "cc": "cubic"},
              {"kind": "tcp_short", "arrival_rate": 100.0, "mean_size": 20000}]}"#;

#[test]
fn the_flow_table_stays_at_the_peak_concurrency() {
    let mut sim = Simulation::from_json(WEB).unwrap();
    let mut peaks = Vec::new();
    for t in [10u64, 20, 30] {
        sim.run_until(aqm::Instant(t * 1_000_000_000));
        let p = sim.pool_stats();
        assert_eq!(p.static_flows, 2);
        // every entry beyond the static flows is a slot some short flow needed at a peak
        assert_eq!(p.table_len, 2 + p.peak as usize, "{p:?}");
        assert_eq!(p.finished + p.running as u64, p.short_flows, "{p:?}");
        peaks.push((p.short_flows, p.peak));
    }
    let (flows, peak) = peaks[2];
    assert!(flows > 2500, "{peaks:?}");
    // a flow holds its slot while it runs and while packets of it are in the network: far
    // fewer slots than flows that arrived, and not growing with them
    assert!(peak < 300, "{peaks:?}");
    assert!(
        peaks[2].1 < peaks[0].1 + 50,
        "the peak keeps growing: {peaks:?}"
    );
    assert_eq!(sim.num_flows(), 2 + flows as usize);
    sim.check_conservation().unwrap();

    // every flow is still reported, in id order, the finished ones with their FCT
    let s = sim.summary();
    assert_eq!(s.flows.len(), sim.num_flows());
    assert!(s.flows.iter().enumerate().all(|(i, f)| f.id == i as u32));
    let p = sim.pool_stats();
    let done = s.flows.iter().filter(|f| f.fct_s.is_some()).count() as u64;
    assert!(done >= p.finished, "{done} {p:?}");
    assert_eq!(s.groups[1].flows as u64, flows);
    // a finished flow's status is the one it had when it completed
    let f = s
        .flows
        .iter()
        .find(|f| f.kind == "short_tcp" && f.fct_s.is_some())
        .unwrap();
    let st = sim.flow_status(f.id).unwrap();
    assert_eq!(st.fct_s, f.fct_s);
    assert_eq!(st.bytes_delivered, f.size_bytes.unwrap());
    assert_eq!(st.bytes_acked, f.size_bytes.unwrap());
    assert!(sim.flow_status(sim.num_flows() as u32).is_err());
}

/// Stepping a pooled run in pieces gives the same summary as one run (slots are reused at
/// arrivals, whatever the steps).
#[test]
fn stepping_does_not_change_a_pooled_run() {
    let mut one = Simulation::from_json(WEB).unwrap();
    one.run();
    let mut steps = Simulation::from_json(WEB).unwrap();
    let mut t = 0;
    while t < 30_000_000_000 {
        t += 700_000_000;
        steps.run_until(aqm::Instant(t.min(30_000_000_000)));
    }
    assert_eq!(
        serde_json::to_string(&one.summary()).unwrap(),
        serde_json::to_string(&steps.summary()).unwrap()
    );
}

/// A capture of a pooled run: the headers of a finished flow's packets, synthesised when the
/// capture is written (at the end here, long after most flows gave their slots back), come
/// from its record.
#[test]
fn a_capture_names_finished_flows() {
    let mut sim = Simulation::from_json(
        r#"{"seed": 2, "duration": 6.0, "warmup": 0.0,
            "dumbbell": {"rate": "10Mbps", "rtt": "20ms", "buffer": 100},
            "pcap": {"links": ["R1->R2"], "hosts": true},
            "flows": [{"kind": "tcp_short", "arrival_rate": 50.0, "mean_size": 10000}]}"#,
    )
    .unwrap();
    let dir = Scratch::new("pool-pcap");
    let path = dir.join("pool.pcapng");
    sim.start_pcap(&path).unwrap();
    while !sim.run_until_traced(sim.end()) {}
    let p = sim.pool_stats();
    assert!(p.finished > 100 && p.table_len < 100, "{p:?}");
    let written = sim.finish_pcap().unwrap();
    assert!(written > 1000, "{written}");
}

/// Runs `doc` pooled and with every finished flow kept in its slot (no pooling), and checks
/// that the two give the same results bit for bit: the summary (every flow's row, the
/// groups, the links), every flow's status and the conservation of packets. Returns the
/// pooled run's occupancy.
fn same_as_without_pool(doc: &str) -> netsim::PoolStats {
    let mut pooled = Simulation::from_json(doc).unwrap();
    pooled.run();
    let mut kept = Simulation::from_json(doc).unwrap();
    kept.keep_finished_flows();
    kept.run();
    pooled.check_conservation().unwrap();
    kept.check_conservation().unwrap();
    let (p, k) = (pooled.pool_stats(), kept.pool_stats());
    assert_eq!(k.finished, 0, "{k:?}");
    assert!(p.finished > 0 && p.table_len < k.table_len, "{p:?} {k:?}");
    assert_eq!(pooled.num_flows(), kept.num_flows());
    for id in 0..pooled.num_flows() as u32 {
        assert_eq!(
            pooled.flow_status(id).unwrap(),
            kept.flow_status(id).unwrap()
        );
    }
    // the summary, the links' time series and the window traces
    assert_eq!(
        serde_json::to_string(&pooled.results()).unwrap(),
        serde_json::to_string(&kept.results()).unwrap()
    );
    p
}

/// EDC's classic reproduction on the LL network with gentle RED (`aqmlab.repro.edc`'s
/// scenario `("LL", "red")`, 120 s, as tests/test_ns2.py runs it against ns-2): over a
/// second of queue at the bottleneck, so late duplicates of HTTP flows arrive more than 1 s
/// after the flows completed. The fixed 1-s linger moved the bottleneck's drops (3130 ->
/// 3147); the pooled run is now the unpooled one.
#[test]
fn edc_ll_red_same_as_without_pool() {
    let p = same_as_without_pool(
        r#"{"name": "edc-LL-red", "seed": 1, "profile": "classic", "duration": 120.0,
            "warmup": 0.0, "sample_interval": 0.05,
            "dumbbell": {"rate": "1.5Mbps", "rtt": 0.14, "buffer": 800, "pkt_size": 1000,
                         "access_rate": "10Mbps"},
            "aqm": {"type": "red", "gentle": true, "min_th": 150.0, "max_th": 300.0,
                    "w_q": 0.00133, "max_p": 0.1, "mean_pkt_size": 1000},
            "flows": [{"name": "ftp", "kind": "tcp", "count": 60, "cc": "newreno"},
                      {"name": "ftp-late", "kind": "tcp", "count": 60, "cc": "newreno",
                       "start": 100.0},
                      {"name": "http", "kind": "tcp_short", "cc": "newreno",
                       "arrival_rate": 9.0, "mean_size": 4000, "pareto_shape": 1.2,
                       "start": 0.0}]}"#,
    );
    assert!(p.finished > 900 && p.longest_hold > 1_000_000_000, "{p:?}");
}

/// A deep drop-tail queue (600 packets at 4 Mb/s: 1.8 s) under two long-lived flows and
/// web-like arrivals: spurious retransmissions of short flows still queue, and their ACKs
/// still come back, long after the flows completed (more than the 1 s a fixed linger once
/// gave them). A pooled run gives exactly the results of the run without the pool.
#[test]
fn deep_queue_late_duplicates_same_as_without_pool() {
    for profile in ["classic", "linux"] {
        let doc = format!(
            r#"{{"seed": 3, "duration": 40.0, "warmup": 5.0, "profile": "{profile}",
                "dumbbell": {{"rate": "4Mbps", "rtt": "40ms", "buffer": 600}},
                "flows": [{{"count": 2, "cc": "cubic"}},
                          {{"kind": "tcp_short", "arrival_rate": 10.0, "mean_size": 15000}}]}}"#
        );
        let p = same_as_without_pool(&doc);
        assert!(p.longest_hold > 1_000_000_000, "{profile}: {p:?}");
    }
}

/// The same with an AQM that marks and drops (RED with ECN), a flow-queueing qdisc
/// (FQ-CoDel), and netem on the bottleneck (delay with jitter, loss, duplicates and
/// corruption, whose copies and drops the pool counts).
#[test]
fn marking_flow_queueing_and_netem_same_as_without_pool() {
    let web = r#"{"kind": "tcp_short", "arrival_rate": 20.0, "mean_size": 20000}"#;
    for (aqm, netem) in [
        (r#"{"type": "red", "ecn": true}"#, ""),
        (r#"{"type": "fq_codel"}"#, ""),
        (
            r#"{"type": "droptail"}"#,
            r#", "netem": "delay 5ms 20ms loss 1% duplicate 2% corrupt 1%""#,
        ),
    ] {
        let doc = format!(
            r#"{{"seed": 5, "duration": 20.0, "warmup": 2.0,
                "dumbbell": {{"rate": "10Mbps", "rtt": "30ms", "buffer": 300{netem}}},
                "aqm": {aqm},
                "flows": [{{"count": 2, "cc": "cubic", "ecn": true}}, {web}]}}"#
        );
        same_as_without_pool(&doc);
    }
}

/// The same on a fat tree (k = 4, 1 Gb/s, 200-packet buffers) with web-search short flows at
/// 50 % load sprayed per packet over the equal-cost paths (`ecmp = "packet"`: a flow's
/// packets take different queues, and reorder).
#[test]
fn fat_tree_packet_spraying_same_as_without_pool() {
    same_as_without_pool(
        r#"{"seed": 3, "duration": "1s",
            "fat_tree": {"k": 4, "rate": "1Gbps", "delay": "1us", "buffer": 200,
                         "ecmp": "packet"},
            "aqm": {"type": "red", "min_th": 20, "max_th": 21, "w_q": 1, "max_p": 1,
                    "ecn": true},
            "flows": [{"kind": "tcp_short", "size_cdf": "websearch", "load": 0.5,
                       "cc": "dctcp"}]}"#,
    );
}
