//! Property test over random small dumbbell scenarios (seeded, no external
//! crate): packet conservation, utilization in [0, 1], the goodput capacity
//! bound of SCHEMA.md ("Measurement definitions"), queue limits,
//! determinism, and `run_until` stepping equal to one run.
//!
//! `PROPERTY_CASES=n` changes the number of scenarios per test shard
//! (default 75, four shards); `PROPERTY_SEED=s` runs only scenario `s`
//! (the failure message prints it together with the config).

mod common;

use aqm::{AqmConfig, Instant, QdiscConfig};
use experiment::config::{FlowGroup, TopologyConfig};
use netsim::{SimConfig, SimResults, Simulation};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};

const SHARDS: u64 = 4;
const CASES_PER_SHARD: u64 = 75;

struct Gen(Xoshiro256PlusPlus);

impl Gen {
    fn new(seed: u64) -> Self {
        Gen(Xoshiro256PlusPlus::seed_from_u64(seed))
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// Log-uniform in [lo, hi).
    fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit()).exp()
    }
    /// Integer in [lo, hi].
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.0.next_u64() % (hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.int(0, xs.len() as u64 - 1) as usize]
    }
}

/// Rounds seconds to whole microseconds plus a random ns offset, so times
/// are rarely multiples of each other.
fn odd_secs(g: &mut Gen, s: f64) -> f64 {
    (s * 1e6).round() / 1e6 + g.int(1, 999) as f64 * 1e-9
}

/// `odd_secs` of a uniform value in [lo, hi).
fn odd_range(g: &mut Gen, lo: f64, hi: f64) -> f64 {
    let s = g.range(lo, hi);
    odd_secs(g, s)
}

/// Every AQM (as a FIFO; not `paqman`, whose required policy file has no default: its own
/// tests and the wrapper tests cover it), every hashed flow-queueing qdisc and DualPI2 (flat
/// parameters, defaults).
fn qdisc_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = AqmConfig::names()
        .iter()
        .copied()
        .filter(|n| *n != "paqman")
        .collect();
    v.extend_from_slice(aqm::qdisc::HASHED);
    v.push("dualpi2");
    v
}

/// A random scenario; the flows' packet size is the largest packet.
/// The bottleneck's backlog respects its limit of `buffer` packets: in packets, but for CAKE,
/// which (as Linux's `sch_cake`) limits memory only, to the packet limit times `psched_mtu`
/// (the MTU plus a 14-byte link header), so small packets may exceed it in number.
fn within_limit(cfg: &SimConfig, pkts: u64, bytes: u64, buffer: u64) -> bool {
    let cake = match &cfg.topology {
        TopologyConfig::Dumbbell(d) => d.aqm.name() == "cake",
        _ => false,
    };
    if cake {
        bytes <= buffer * (aqm::DEFAULT_MTU as u64 + 14)
    } else {
        pkts <= buffer
    }
}

fn scenario(seed: u64) -> SimConfig {
    let mut g = Gen::new(seed);
    let rate = g.range(1e6, 50e6).round();
    let rtt = g.log_range(0.002, 0.2);
    let buffer = g.int(5, 300);
    let ecn = g.chance(0.4);
    let name = *g.pick(&qdisc_names());
    let mut aqm = QdiscConfig::default_for(name).expect("registered AQM");
    if ecn && aqm.get_param("ecn").is_some() {
        aqm.set_param("ecn", 1.0).expect("ecn param");
    }
    let duration = odd_range(&mut g, 1.0, 3.0);
    let warmup = if g.chance(0.8) {
        odd_range(&mut g, 0.0, 0.6 * duration)
    } else {
        0.0
    };
    let sample_interval = {
        let s = g.log_range(0.003, 0.2);
        odd_secs(&mut g, s)
    };
    let mut flows = Vec::new();
    let mut left = g.int(1, 20);
    while left > 0 {
        let n = g.int(1, left);
        left -= n;
        let start = g.range(0.0, 0.3 * duration);
        let mut f = json!({
            "kind": "tcp",
            "count": n,
            "cc": *g.pick(&["newreno", "reno", "cubic", "bbr"]),
            "ecn": ecn,
            "delack": g.chance(0.5),
            "sack": g.chance(0.5),
            "start": start,
            "start_jitter": g.range(0.0, 0.3 * duration),
        });
        if g.chance(0.3) {
            f["packet_size"] = json!(g.int(100, 1500));
        }
        if g.chance(0.25) {
            f["pacing"] = json!(true);
        }
        if g.chance(0.3) {
            f["extra_delay"] = json!([g.range(0.0, 0.05)]);
        }
        if g.chance(0.25) {
            f["stop"] = json!(odd_range(&mut g, start + 0.01, duration));
        }
        if g.chance(0.2) {
            f["size"] = json!(g.int(1, 300_000));
        }
        flows.push(f);
    }
    if g.chance(0.3) {
        let start = g.range(0.0, 0.5 * duration);
        let mut u = json!({
            "kind": "udp_cbr",
            "count": g.int(1, 2),
            "rate": rate * g.range(0.05, 0.6),
            "start": start,
            "start_jitter": 0.0,
        });
        if g.chance(0.3) {
            u["packet_size"] = json!(g.int(100, 1500));
        }
        if g.chance(0.3) {
            u["stop"] = json!(odd_range(&mut g, start + 0.01, duration));
        }
        flows.push(u);
    }
    if g.chance(0.15) {
        flows.push(json!({
            "kind": "tcp_short",
            "arrival_rate": g.range(2.0, 30.0),
            "mean_size": g.range(2e3, 50e3),
            "start": 0.0,
            "ecn": ecn,
            "sack": g.chance(0.5),
        }));
    }
    let access = if g.chance(0.3) {
        json!(rate * g.range(1.0, 20.0))
    } else {
        Value::Null
    };
    let loss = if g.chance(0.5) {
        g.range(0.0, 0.02)
    } else {
        0.0
    };
    let mut dumbbell = json!({"rate": rate, "rtt": rtt, "buffer": buffer, "loss": loss});
    if !access.is_null() {
        dumbbell["access_rate"] = access.clone();
    }
    let mut aqm_table = json!({"type": name});
    if ecn && aqm.get_param("ecn").is_some() {
        aqm_table["ecn"] = json!(true);
    }
    let mut new = common::scenario(json!({
        "name": format!("prop-{seed}"),
        "seed": seed,
        "duration": duration,
        "warmup": warmup,
        "sample_interval": sample_interval,
        "dumbbell": dumbbell,
        "aqm": aqm_table,
        "flows": flows,
    }));
    // both directions of the bottleneck (a dumbbell scenario monitors the forward one)
    new.monitor = Some(vec!["R1->R2".into(), "R2->R1".into()]);
    new
}

fn results_json(r: &SimResults) -> String {
    serde_json::to_string(r).expect("results serialise")
}

/// Per-flow goodput windows `[max(start, warmup), min(now, stop,
/// completion)]` (s), from the config and the summary.
fn windows(cfg: &SimConfig, s: &netsim::Summary) -> Vec<f64> {
    let mut stops = Vec::new();
    for g in &cfg.flows {
        match g {
            FlowGroup::Tcp(t) => stops.extend(std::iter::repeat_n(t.stop, t.count as usize)),
            FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => {
                stops.extend(std::iter::repeat_n(u.stop, u.count as usize))
            }
            FlowGroup::ShortTcp(_) => {}
            FlowGroup::Ping(p) => stops.extend(std::iter::repeat_n(p.stop, p.count as usize)),
        }
    }
    s.flows
        .iter()
        .map(|f| {
            let t0 = f.start_s.max(s.warmup_s);
            let mut t1 = s.sim_seconds;
            if let Some(Some(st)) = stops.get(f.id as usize) {
                t1 = t1.min(*st);
            }
            if let Some(fct) = f.fct_s {
                t1 = t1.min(f.start_s + fct);
            }
            (t1 - t0).max(0.0)
        })
        .collect()
}

/// The stop time (s) of static flow `i`, if its group has one.
fn w_stop(cfg: &SimConfig, i: usize) -> Option<f64> {
    let mut n = 0usize;
    for g in &cfg.flows {
        let (count, stop) = match g {
            FlowGroup::Tcp(t) => (t.count as usize, t.stop),
            FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => (u.count as usize, u.stop),
            FlowGroup::ShortTcp(_) => (0, None),
            FlowGroup::Ping(p) => (p.count as usize, p.stop),
        };
        if i < n + count {
            return stop;
        }
        n += count;
    }
    None
}

fn check(seed: u64, cfg: &SimConfig) -> Result<(), String> {
    let err = |what: &str| Err::<(), String>(what.to_string());
    let (rate, buffer, access) = match &cfg.topology {
        experiment::config::TopologyConfig::Dumbbell(d) => (
            d.bottleneck_rate,
            d.buffer_pkts.expect("pkts") as u64,
            d.access_rate.unwrap_or(10.0 * d.bottleneck_rate),
        ),
        _ => unreachable!(),
    };
    // Largest packet on the bottleneck.
    let p_max = cfg
        .flows
        .iter()
        .map(|g| match g {
            FlowGroup::Tcp(t) => t.packet_size,
            FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => u.packet_size,
            FlowGroup::ShortTcp(t) => t.packet_size,
            FlowGroup::Ping(p) => p.size,
        })
        .max()
        .unwrap_or(0) as f64;
    // One run, read at the warm-up's end and at every stop time: per flow, the receiver's
    // in-order bytes when its window opens and closes (`flow_status`, the reference the
    // summary's goodput must agree with) and the reassembly span at the warm-up.
    let ns = |x: f64| (x * 1e9).round() as u64;
    let warmup = ns(cfg.warmup);
    let mut stops: Vec<u64> = cfg
        .flows
        .iter()
        .filter_map(|g| match g {
            FlowGroup::Tcp(t) => t.stop,
            FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => u.stop,
            FlowGroup::ShortTcp(_) => None,
            FlowGroup::Ping(p) => p.stop,
        })
        .map(ns)
        .filter(|&t| t > warmup)
        .collect();
    stops.sort_unstable();
    let mut a = Simulation::new(cfg.clone()).map_err(|e| e.to_string())?;
    a.run_until(Instant(warmup));
    let status = |sim: &Simulation| -> Vec<netsim::sim::FlowStatus> {
        (0..sim.num_flows() as u32)
            .map(|i| sim.flow_status(i).expect("flow"))
            .collect()
    };
    let at_warmup = status(&a);
    let held: u64 = at_warmup
        .iter()
        .map(|f| f.bytes_received_high - f.bytes_delivered)
        .sum();
    let mut at_stop = Vec::new();
    for &t in &stops {
        a.run_until(Instant(t));
        at_stop.push((t, status(&a)));
    }
    a.run();
    a.check_conservation().map_err(|e| e.to_string())?;
    let at_end = status(&a);
    let ra = a.results();
    let s = &ra.summary;
    for (name, l) in &s.links {
        if !(0.0..=1.0).contains(&l.utilization) {
            return err(&format!("utilization of {name} = {}", l.utilization));
        }
    }
    // Goodput bound (SCHEMA.md): sum_i goodput_i T_i <= C (T + dd) + 8 P
    // + C x 1 ns, with dd <= 8 P / access_rate (access_rate >= C here).
    let t = s.sim_seconds - s.warmup_s;
    let w = windows(cfg, s);
    let lhs: f64 = s.flows.iter().zip(&w).map(|(f, t)| f.goodput_bps * t).sum();
    let rhs = rate * t + 8.0 * p_max * (1.0 + rate / access) + rate * 1e-9 + 8.0 * held as f64;
    if lhs > rhs * (1.0 + 1e-9) {
        return err(&format!(
            "goodput bound: sum goodput x window {lhs} > {rhs} (C T = {})",
            rate * t
        ));
    }
    for (f, t) in s.flows.iter().zip(&w) {
        if f.goodput_bps < 0.0 || (*t == 0.0 && f.goodput_bps != 0.0) {
            return err(&format!(
                "flow {}: goodput {} over {t} s",
                f.id, f.goodput_bps
            ));
        }
        // goodput x window = the in-order bytes flow_status shows delivered in the window
        // (within one packet: the window lengths here are computed in float seconds)
        let i = f.id as usize;
        let d0 = at_warmup.get(i).map_or(0, |st| st.bytes_delivered);
        let stop_ns = w_stop(cfg, i).map(ns);
        let d1 = match stop_ns.and_then(|st| at_stop.iter().find(|(t, _)| *t == st)) {
            Some((_, v)) => v[i].bytes_delivered,
            None => at_end[i].bytes_delivered,
        };
        let want = if *t > 0.0 { d1.saturating_sub(d0) } else { 0 };
        if f.bytes_in_window != want || (f.goodput_bps * t / 8.0 - want as f64).abs() > p_max {
            return err(&format!(
                "flow {}: goodput {} x window {t} s = {} bytes, flow_status delivered {want} in it",
                f.id,
                f.goodput_bps,
                f.goodput_bps * t / 8.0
            ));
        }
        // RTT statistics exist for every flow that got an ACK of new data in its window
        let acked0 = at_warmup.get(i).map_or(0, |st| st.bytes_acked);
        let tcp = f.kind != "udp_cbr" && f.kind != "udp_onoff";
        if tcp
            && *t > 0.0
            && at_end[i].bytes_acked > acked0
            && stop_ns.is_none()
            && (f.rtt_ms.is_none() || f.rtt_samples == 0)
        {
            return err(&format!("flow {}: ACKs in the window but no RTT", f.id));
        }
        if f.rtt_ms.is_some() != (f.rtt_samples > 0) {
            return err(&format!("flow {}: rtt_ms_mean without samples", f.id));
        }
    }
    let ts = &ra.timeseries;
    for (i, l) in ts.link.iter().enumerate() {
        let (q, b) = (ts.queue_pkts[i], ts.queue_bytes[i]);
        if l == "R1->R2" && !within_limit(cfg, q, b, buffer) {
            return err(&format!(
                "queue {q} packets, {b} bytes > limit {buffer} at t {}",
                ts.time_s[i]
            ));
        }
    }
    // The time series (with its last partial row) adds up to the counters.
    for name in ["R1->R2", "R2->R1"] {
        let c = a.link_status(name).map_err(|e| e.to_string())?.counters;
        let sum = |col: &[u64]| -> u64 {
            col.iter()
                .zip(&ts.link)
                .filter(|(_, l)| *l == name)
                .map(|(v, _)| *v)
                .sum()
        };
        let got = [
            sum(&ts.tx_bytes),
            sum(&ts.arrivals),
            sum(&ts.drops),
            sum(&ts.marks),
        ];
        let want = [c.tx_bytes, c.arrivals, c.queue_drops(), c.marks];
        if got != want {
            return err(&format!(
                "{name}: time series sums {got:?} != counters {want:?}"
            ));
        }
    }
    // Determinism.
    let mut b = Simulation::new(cfg.clone()).map_err(|e| e.to_string())?;
    b.run();
    if results_json(&b.results()) != results_json(&ra) {
        return err("two runs of the same config differ");
    }
    // Stepping in random chunks, with checks between steps.
    let mut g = Gen::new(seed ^ 0x5eed);
    let end = (cfg.duration * 1e9).round() as u64;
    let mut cuts: Vec<u64> = (0..g.int(1, 6)).map(|_| g.int(1, end - 1)).collect();
    cuts.sort_unstable();
    let mut c = Simulation::new(cfg.clone()).map_err(|e| e.to_string())?;
    for &cut in &cuts {
        c.run_until(Instant(cut));
        c.check_conservation()
            .map_err(|e| format!("at {cut} ns: {e}"))?;
        let (q, b) = c.link_queue("R1->R2").map_err(|e| e.to_string())?;
        if !within_limit(cfg, q as u64, b, buffer) {
            return err(&format!(
                "queue {q} packets, {b} bytes > limit {buffer} at {cut} ns"
            ));
        }
        for (name, l) in &c.summary().links {
            if !(0.0..=1.0).contains(&l.utilization) {
                return err(&format!(
                    "utilization of {name} = {} at {cut} ns",
                    l.utilization
                ));
            }
        }
    }
    c.run();
    if results_json(&c.results()) != results_json(&ra) {
        return err(&format!("stepping at {cuts:?} ns differs from one run"));
    }
    Ok(())
}

fn shard(k: u64) {
    let only: Option<u64> = std::env::var("PROPERTY_SEED")
        .ok()
        .map(|s| s.parse().expect("PROPERTY_SEED is an integer"));
    let cases: u64 = std::env::var("PROPERTY_CASES")
        .ok()
        .map_or(CASES_PER_SHARD, |s| s.parse().expect("PROPERTY_CASES"));
    let seeds: Vec<u64> = match only {
        Some(s) if s % SHARDS == k => vec![s],
        Some(_) => vec![],
        None => (0..cases).map(|i| i * SHARDS + k).collect(),
    };
    let mut failures = Vec::new();
    for seed in seeds {
        let cfg = scenario(seed);
        if let Err(e) = check(seed, &cfg) {
            failures.push(format!(
                "seed {seed} (rerun: PROPERTY_SEED={seed} cargo test --release -p netsim \
                 --test properties): {e}\nconfig: {cfg:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn properties_shard_0() {
    shard(0);
}

#[test]
fn properties_shard_1() {
    shard(1);
}

#[test]
fn properties_shard_2() {
    shard(2);
}

#[test]
fn properties_shard_3() {
    shard(3);
}

/// The generator covers what it should.
#[test]
fn generator_covers_the_space() {
    let cfgs: Vec<SimConfig> = (0..SHARDS * CASES_PER_SHARD).map(scenario).collect();
    let aqms: std::collections::BTreeSet<String> = cfgs
        .iter()
        .map(|c| {
            c.topology
                .aqm()
                .expect("a dumbbell's aqm")
                .name()
                .to_string()
        })
        .collect();
    assert_eq!(aqms.len(), qdisc_names().len(), "{aqms:?}");
    let has =
        |p: &dyn Fn(&FlowGroup) -> bool| cfgs.iter().filter(|c| c.flows.iter().any(p)).count();
    let udp = has(&|g| matches!(g, FlowGroup::UdpCbr(_)));
    let short = has(&|g| matches!(g, FlowGroup::ShortTcp(_)));
    let stop = has(&|g| match g {
        FlowGroup::Tcp(t) => t.stop.is_some(),
        FlowGroup::UdpCbr(u) | FlowGroup::UdpOnoff(u) => u.stop.is_some(),
        FlowGroup::ShortTcp(_) => false,
        FlowGroup::Ping(p) => p.stop.is_some(),
    });
    assert!(udp > 30 && short > 10 && stop > 30, "{udp} {short} {stop}");
}
