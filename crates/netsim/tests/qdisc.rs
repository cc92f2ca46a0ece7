//! Queue-discipline trees in whole scenarios: DRR and WFQ classes chosen by flow groups.

use experiment::scenario::Scenario;
use netsim::Simulation;

fn drr_scenario(seed: u64) -> String {
    scenario("drr", seed)
}

fn scenario(sched: &str, seed: u64) -> String {
    format!(
        r#"{{"seed": {seed}, "duration": "40s", "warmup": "10s",
            "dumbbell": {{"rate": "10Mbps", "rtt": "60ms", "buffer": 150}},
            "aqm": {{"type": "{sched}", "classes": [
                {{"name": "a", "weight": 1}},
                {{"name": "b", "weight": 2, "aqm": {{"type": "codel", "target": "5ms"}}}},
                {{"name": "c", "weight": 3}}]}},
            "flows": [{{"count": 4, "class": "a"}},
                      {{"count": 4, "class": "b"}},
                      {{"count": 4, "class": "c"}}]}}"#
    )
}

/// Three backlogged TCP classes with weights 1:2:3 get goodput in proportion.
/// Reference: DRR gives each backlogged class `Q_i / sum Q` of the link
/// (Shreedhar-Varghese 1996, Theorem 1: the share of a backlogged class is
/// within one maximum packet per round of its quantum). Tolerance 10 % of
/// each class's share: four NewReno flows per class keep each class
/// backlogged, but a class may briefly empty after losses, and goodput
/// excludes headers and retransmissions (equal fractions in every class).
#[test]
fn drr_shares_follow_weights() {
    shares_follow_weights("drr");
}

/// The same for WFQ. Reference: start-time fair queueing serves two
/// backlogged classes so that `|W_f / r_f - W_m / r_m| <= l_f / r_f + l_m / r_m`
/// over any interval (Goyal, Vin and Cheng 1996, Theorem 1), so long-run
/// shares are `r_i / sum r`. Same tolerance as DRR's, for the same reasons.
#[test]
fn wfq_shares_follow_weights() {
    shares_follow_weights("wfq");
}

fn shares_follow_weights(sched: &str) {
    for seed in [1, 2] {
        let sc = Scenario::from_json(&scenario(sched, seed)).unwrap();
        let mut sim = Simulation::new(sc.config).unwrap();
        sim.run_until(aqm::Instant(40_000_000_000));
        sim.check_conservation().unwrap();
        let s = sim.summary();
        let mut per = [0.0f64; 3];
        for f in &s.flows {
            per[f.group as usize] += f.goodput_bps;
        }
        let total: f64 = per.iter().sum();
        eprintln!(
            "{sched} seed {seed}: goodput shares {:?}",
            per.map(|x| x / total)
        );
        for (i, w) in [1.0, 2.0, 3.0].iter().enumerate() {
            let share = per[i] / total;
            let want = w / 6.0;
            assert!(
                (share - want).abs() <= 0.1 * want,
                "seed {seed}: class {i} share {share:.3}, want {want:.3} ({per:?})"
            );
        }
        let l = &s.links["R1->R2"];
        assert_eq!(l.aqm, sched);
        assert!(l.utilization > 0.95, "{}", l.utilization);
        let names: Vec<&str> = l.classes.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let tx: Vec<u64> = l.classes.values().map(|c| c.tx_bytes).collect();
        let t: u64 = tx.iter().sum();
        assert!((tx[2] as f64 / t as f64 - 0.5).abs() < 0.05, "{tx:?}");
        // Class counters add up to the link's.
        let enq: u64 = l.classes.values().map(|c| c.enqueued).sum();
        let drops: u64 = l.classes.values().map(|c| c.drops).sum();
        assert_eq!(enq, l.enqueued);
        assert_eq!(drops, l.drops);
        // CoDel keeps class b's delay low; the drop-tail classes queue more.
        assert!(l.classes["b"].queue_delay_ms.p50 < l.classes["c"].queue_delay_ms.p50);
    }
}

/// Parameters by path while running; unknown classes and bad values are
/// errors naming the path.
#[test]
fn set_param_by_path_and_class_errors() {
    let sc = Scenario::from_json(&drr_scenario(1)).unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run_until(aqm::Instant(2_000_000_000));
    sim.set_aqm_param("R1->R2", "classes.a.weight", 3.0)
        .unwrap();
    sim.set_aqm_param("R1->R2", "classes.b.aqm.target", 0.002)
        .unwrap();
    let cfg = sim.aqm_config("R1->R2").unwrap();
    assert_eq!(cfg.get_param("classes.a.weight"), Some(3.0));
    assert_eq!(cfg.get_param("classes.b.aqm.target"), Some(0.002));
    let e = sim
        .set_aqm_param("R1->R2", "classes.b.aqm.target", -1.0)
        .unwrap_err();
    assert!(e.to_string().contains("'classes.b.aqm.target' = -1"), "{e}");
    assert!(sim
        .set_aqm_param("R1->R2", "classes.z.weight", 1.0)
        .is_err());
    sim.run_until(aqm::Instant(40_000_000_000));
    sim.check_conservation().unwrap();

    let bad = |doc: &str| Scenario::from_json(doc).unwrap_err().to_string();
    let base = drr_scenario(1);
    assert_eq!(
        bad(&base.replacen(r#""class": "a""#, r#""class": "x""#, 1)),
        r#"flows[0].class = "x": no such class in [aqm] (classes: a, b, c)"#
    );
    let e = bad(&base.replace(r#""target": "5ms""#, r#""target": "5xs""#));
    assert!(
        e.starts_with(r#"aqm.classes[1].aqm.target = "5xs": "#),
        "{e}"
    );
    let e = bad(&base.replace(r#""target": "5ms""#, r#""tagret": "5ms""#));
    assert!(
        e.starts_with(r#"aqm.classes[1].aqm.tagret = "5ms": unknown parameter"#),
        "{e}"
    );
    assert_eq!(
        bad(&base.replace(r#""weight": 3"#, r#""weight": 0"#)),
        "aqm.classes[2].weight = 0: must be a weight in (0, 1e6]"
    );
    assert_eq!(
        bad(&base.replace(r#"{"name": "c""#, r#"{"name": "a""#)),
        r#"aqm.classes[2].name = "a": duplicate class name"#
    );
    let fifo = base.replace(r#""type": "drr""#, r#""type": "codel""#);
    assert!(bad(&fifo).starts_with("aqm.classes = "), "{}", bad(&fifo));
    // Parameter paths as keys of [aqm] (what `--aqm-param classes.b.weight=4` produces).
    let sc = Scenario::from_json(&base.replace(
        r#""type": "drr","#,
        r#""type": "drr", "classes.b.weight": 4, "classes.b.aqm.target": "2ms","#,
    ))
    .unwrap();
    let aqm = sc.config.topology.aqm().unwrap();
    assert_eq!(aqm.get_param("classes.b.weight"), Some(4.0));
    assert_eq!(aqm.get_param("classes.b.aqm.target"), Some(0.002));
    assert_eq!(sc.normalized["aqm"]["classes"][1]["weight"], 4.0);
    let e = bad(&base.replace(
        r#""type": "drr","#,
        r#""type": "drr", "classes.q.weight": 4,"#,
    ));
    assert!(e.starts_with("aqm.classes.q.weight = 4: "), "{e}");
    let one = Scenario::from_json(
        r#"{"dumbbell": {"rate": "1Mbps"}, "aqm": {"type": "drr", "classes.default.weight": 2},
            "flows": [{}]}"#,
    )
    .unwrap();
    assert_eq!(one.normalized["aqm"]["classes"][0]["name"], "default");
    // The normalized scenario shows the tree with units converted.
    let sc = Scenario::from_json(&base).unwrap();
    let n = &sc.normalized["aqm"];
    assert_eq!(n["type"], "drr");
    assert_eq!(n["classes"][1]["aqm"]["target"], 0.005);
    assert_eq!(n["classes"][0]["aqm"]["type"], "droptail");
    assert_eq!(n["classes"][2]["weight"], 3.0);
    assert_eq!(sc.normalized["flows"][1]["class"], "b");
}

/// WFQ takes the same class lists, paths and errors as DRR (one class model).
#[test]
fn wfq_paths_and_errors() {
    let base = scenario("wfq", 1);
    let sc = Scenario::from_json(&base).unwrap();
    assert_eq!(sc.normalized["aqm"]["type"], "wfq");
    assert_eq!(sc.normalized["aqm"]["classes"][1]["aqm"]["target"], 0.005);
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run_until(aqm::Instant(2_000_000_000));
    sim.set_aqm_param("R1->R2", "classes.a.weight", 3.0)
        .unwrap();
    assert_eq!(
        sim.aqm_config("R1->R2")
            .unwrap()
            .get_param("classes.a.weight"),
        Some(3.0)
    );
    let e = sim
        .set_aqm_param("R1->R2", "classes.z.weight", 1.0)
        .unwrap_err();
    assert!(e.to_string().contains("classes: a, b, c"), "{e}");
    sim.run_until(aqm::Instant(5_000_000_000));
    sim.check_conservation().unwrap();
    let bad = |doc: &str| Scenario::from_json(doc).unwrap_err().to_string();
    assert_eq!(
        bad(&base.replace(r#""weight": 3"#, r#""weight": 0"#)),
        "aqm.classes[2].weight = 0: must be a weight in (0, 1e6]"
    );
    assert_eq!(
        bad(&base.replacen(r#""class": "a""#, r#""class": "x""#, 1)),
        r#"flows[0].class = "x": no such class in [aqm] (classes: a, b, c)"#
    );
    let one = Scenario::from_json(
        r#"{"dumbbell": {"rate": "1Mbps"}, "aqm": {"type": "WFQ", "classes.default.weight": 2},
            "flows": [{}]}"#,
    )
    .unwrap();
    assert_eq!(one.normalized["aqm"]["type"], "wfq");
    assert_eq!(one.normalized["aqm"]["classes"][0]["weight"], 2.0);
}

/// Per-class time series: one row per sample and class, same instants as the link's rows;
/// the class queues add up to the link's queue at every sample, the class drops to the
/// link's per interval and the bytes sent to the link's; a FIFO has none.
#[test]
fn per_class_time_series() {
    for sched in ["drr", "wfq"] {
        let doc = scenario(sched, 3).replace(r#""duration": "40s""#, r#""duration": "12.005s""#);
        let sc = Scenario::from_json(&doc).unwrap();
        let mut sim = Simulation::new(sc.config).unwrap();
        sim.run_until(aqm::Instant(12_005_000_000));
        let r = sim.results();
        let (ts, cs) = (&r.timeseries, &r.class_timeseries);
        // 1200 full intervals and the partial one at the end.
        assert_eq!(ts.time_s.len(), 1201);
        assert_eq!(cs.time_s.len(), 3 * 1201);
        assert_eq!(&cs.class[..3], ["a", "b", "c"]);
        assert!(cs.link.iter().all(|l| l == "R1->R2"));
        let mut busy = [0usize; 3];
        // A class counts a packet as sent when it leaves the queue, the link when its
        // transmission ends: the running totals differ by at most the packet on the wire.
        let (mut sent_classes, mut sent_link) = (0u64, 0u64);
        for (row, t) in ts.time_s.iter().enumerate() {
            let k = 3 * row;
            assert!(cs.time_s[k..k + 3].iter().all(|x| x == t));
            let sum = |v: &[u64]| v[k..k + 3].iter().sum::<u64>();
            assert_eq!(sum(&cs.queue_pkts), ts.queue_pkts[row], "{sched} t={t}");
            assert_eq!(sum(&cs.queue_bytes), ts.queue_bytes[row]);
            assert_eq!(sum(&cs.drops), ts.drops[row]);
            sent_classes += sum(&cs.tx_bytes);
            sent_link += ts.tx_bytes[row];
            assert!(sent_classes - sent_link <= 1000, "{sched} t={t}");
            for (b, q) in busy.iter_mut().zip(&cs.queue_pkts[k..k + 3]) {
                *b += (*q > 0) as usize;
            }
        }
        // Every class is backlogged most of the time (its flows keep it so).
        assert!(busy.iter().all(|&b| b > 600), "{sched}: {busy:?}");
        // Class c (weight 3) sends about half of the bytes after the first second.
        let tx = |c: usize| -> u64 {
            (0..ts.time_s.len())
                .filter(|&row| ts.time_s[row] > 2.0)
                .map(|row| cs.tx_bytes[3 * row + c])
                .sum()
        };
        let total = tx(0) + tx(1) + tx(2);
        assert!((tx(2) as f64 / total as f64 - 0.5).abs() < 0.05, "{sched}");
    }
    let sc = Scenario::from_json(
        r#"{"duration": "2s", "dumbbell": {"rate": "10Mbps"}, "aqm": {"type": "codel"},
            "flows": [{"count": 2}]}"#,
    )
    .unwrap();
    let mut sim = Simulation::new(sc.config).unwrap();
    sim.run_until(aqm::Instant(2_000_000_000));
    let r = sim.results();
    assert_eq!(r.timeseries.time_s.len(), 200);
    assert!(r.class_timeseries.time_s.is_empty());
}
