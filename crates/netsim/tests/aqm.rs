//! Each AQM on the classic dumbbell: 10 Mb/s, rtt 100 ms (BDP 125 packets
//! of 1000 B), 50 long-lived NewReno flows, 1000-packet buffer (so the AQM,
//! not the buffer, controls the queue), 60 s with 20 s warm-up, TCP of the `classic` profile
//! (the model these AQMs' references and defaults were checked with; under `linux` REM at its
//! defaults keeps 2.8 packets and 82 % utilization, seed 21). References
//! and tolerances per test; each also requires utilisation > 90 % and packet
//! conservation.

mod common;

use common::*;
use experiment::results::LinkSummary;
use serde_json::{json, Value};

fn scenario(aqm: Value, buffer: u32, flows: u32) -> LinkSummary {
    let sim = run(dumbbell(
        21,
        60.0,
        20.0,
        10e6,
        0.1,
        buffer,
        aqm,
        json!([{"kind": "tcp", "count": flows, "cc": "newreno", "profile": "classic"}]),
    ));
    let s = sim.summary();
    let b = bottleneck(&s).clone();
    eprintln!(
        "{} flows={flows}: util {:.3} q {:.1} pkts, delay mean {:.2} p50 {:.2} p99 {:.2} ms, drops {} acts {}",
        b.aqm,
        b.utilization,
        b.mean_queue_pkts,
        b.queue_delay_ms.mean,
        b.queue_delay_ms.p50,
        b.queue_delay_ms.p99,
        b.drops,
        b.aqm_activations
    );
    assert!(
        b.utilization > 0.9,
        "{}: utilization {}",
        b.aqm,
        b.utilization
    );
    b
}

/// Drop-tail with a 100-packet buffer: the queue sits near full. Reference:
/// with 50 flows the aggregate window far exceeds BDP + buffer, so the
/// queue stays near the limit; mean > 60 % of the buffer, and p99 sojourn
/// close to the full-buffer drain time 100 x 0.8 ms = 80 ms (> 70 ms).
#[test]
fn droptail_fills_the_buffer() {
    let b = scenario(json!({"type": "droptail"}), 100, 50);
    assert!(b.mean_queue_pkts > 60.0, "{}", b.mean_queue_pkts);
    assert!(b.queue_delay_ms.p99 > 70.0, "{}", b.queue_delay_ms.p99);
    assert!(b.drops > 0);
}

/// PI (Hollot, Misra, Towsley, Gong, INFOCOM 2001) with the paper's gains
/// (a = 1.822e-5, b = 1.816e-5, 170 Hz) in the network they were designed
/// for: 60 flows, 15 Mb/s with 500-byte packets (C = 3750 packets/s),
/// propagation rtt 200 ms, q_ref = 200 packets, 800-packet buffer; 100 s
/// with 40 s warm-up (the integral action needs ~10 s to reach the
/// equilibrium drop probability). Reference: the integral action makes
/// q_ref the closed-loop equilibrium; tolerance +-25 % for the TCP
/// sawtooth around it. (With these gains in the 10 Mb/s, 1000-byte
/// scenario the integrator would need minutes to converge.)
#[test]
fn pi_holds_queue_near_qref() {
    let sim = run(dumbbell(
        21,
        100.0,
        40.0,
        15e6,
        0.2,
        800,
        json!({"type": "pi", "q_ref": 200.0}),
        json!([{"kind": "tcp", "count": 60, "cc": "newreno", "packet_size": 500}]),
    ));
    let s = sim.summary();
    let b = bottleneck(&s);
    eprintln!("pi: util {:.3} q {:.1}", b.utilization, b.mean_queue_pkts);
    assert!(b.utilization > 0.9, "{}", b.utilization);
    assert!(
        (b.mean_queue_pkts - 200.0).abs() < 50.0,
        "{}",
        b.mean_queue_pkts
    );
}

/// PIE (RFC 8033) with the default 15 ms target. Reference: the PI law on
/// the estimated queue delay drives it to the target; tolerance: mean
/// queue delay within [0.5, 1.5] x target.
#[test]
fn pie_holds_delay_near_target() {
    let b = scenario(json!({"type": "pie"}), 1000, 50);
    let d = b.queue_delay_ms.mean;
    assert!((7.5..22.5).contains(&d), "PIE mean delay {d} ms");
}

/// CoDel (RFC 8289) with target 5 ms, interval 100 ms. Reference: CoDel
/// keeps the minimum sojourn per interval near target, so the median
/// sojourn sits a few ms above it; with 10 flows (50 flows at 10 Mb/s
/// need more than 125 packets of window at their 2-segment floor, so no
/// AQM can hold 5 ms there) the mean must be within [0.5, 3] x target and
/// far below drop-tail's.
#[test]
fn codel_holds_delay_near_target() {
    let b = scenario(json!({"type": "codel"}), 1000, 10);
    let d = b.queue_delay_ms.mean;
    assert!((2.5..15.0).contains(&d), "CoDel mean delay {d} ms");
}

/// RED (Floyd & Jacobson 1993), gentle, min_th 20, max_th 80, max_p 0.1.
/// Reference: in equilibrium the average queue lies between the
/// thresholds (drop probability in (0, max_p)); the time-average queue
/// tracks the EWMA average, so it must lie in [min_th, max_th].
#[test]
fn red_average_between_thresholds() {
    let b = scenario(
        json!({"type": "red", "min_th": 20.0, "max_th": 80.0, "max_p": 0.1}),
        1000,
        50,
    );
    assert!(
        (20.0..80.0).contains(&b.mean_queue_pkts),
        "RED mean queue {}",
        b.mean_queue_pkts
    );
}

/// The remaining AQMs run and control the queue (a liveness check; their
/// laws are tested in the aqm crate): each must keep the mean queue below
/// 90 % of the 1000-packet buffer (SRED's thresholds are fractions of the
/// buffer: B/6 and B/3, so it settles in the hundreds) and count
/// activations after warm-up.
#[test]
fn other_aqms_run() {
    for name in ["ared", "blue", "sred", "rem", "avq"] {
        // BLUE reacts to overflow and idle events only; with a 1000-packet
        // buffer it needs its queue threshold to see congestion.
        let aqm = if name == "blue" {
            json!({"type": name, "queue_threshold": 200})
        } else {
            json!({"type": name})
        };
        let b = scenario(aqm, 1000, 50);
        assert!(b.mean_queue_pkts < 900.0, "{name}: {}", b.mean_queue_pkts);
        assert!(b.aqm_activations > 0, "{name}");
    }
}

/// One run of a new seed AQM on a dumbbell: (rate bit/s, propagation rtt s, buffer packets,
/// AQM JSON, flows JSON, duration s, warm-up s) with seed `seed`; checks utilisation > 90 %.
#[allow(clippy::too_many_arguments)]
fn seed_run(
    seed: u64,
    rate: f64,
    rtt: f64,
    buffer: u32,
    aqm: Value,
    flows: Value,
    duration: f64,
    warmup: f64,
) -> LinkSummary {
    let sim = run(dumbbell(
        seed, duration, warmup, rate, rtt, buffer, aqm, flows,
    ));
    let s = sim.summary();
    let b = bottleneck(&s).clone();
    eprintln!(
        "{} seed {seed}: util {:.3} q {:.1} pkts, delay {:.1} ms, drops {} marks {} arrivals {} acts {}",
        b.aqm,
        b.utilization,
        b.mean_queue_pkts,
        b.queue_delay_ms.mean,
        b.drops,
        b.marks,
        b.arrivals,
        b.aqm_activations
    );
    assert!(
        b.utilization > 0.9,
        "{}: utilization {}",
        b.aqm,
        b.utilization
    );
    b
}

/// SFC (Gao & Hou 2003, Fig. 5) with the paper's gains k1 = 0.0005, k2 = 0.2, target
/// q_0 = 50, C = 1250 packets/s (10 Mb/s of 1000-byte packets, the paper's Example 1),
/// all flows ECN-capable as in the paper's simulations: 50 NewReno flows, propagation rtt
/// 200 ms, 300-packet buffer, 60 s with 20 s warm-up, three seeds. Reference: the law has
/// no integral action and no offset, so the queue settles where the law's static relation
/// meets TCP's demand: averaging p = k1 (q − q_0) + k2 (R − C)/C gives
/// mean q = q_0 + (mean p − k2·mean (R − C)/C)/k1, and with ECN (no early drops) and full
/// utilisation the rate term averages about 0, so mean q ≈ q_0 + (marks/arrivals)/k1
/// (the mark fraction is the arrival-weighted mean of p). Tolerance ±15 %: a 1 % mean rate
/// mismatch moves the prediction by k2/k1·1 % = 4 packets (~3 %), and the time-average
/// queue differs from the arrival-weighted one. The queue also stays above q_0 (no offset;
/// docs/aqm/sfc.md) and well inside the buffer.
#[test]
fn sfc_settles_at_its_static_equilibrium() {
    for seed in [21, 22, 23] {
        let b = seed_run(
            seed,
            10e6,
            0.2,
            300,
            json!({"type": "sfc", "k1": 0.0005, "k2": 0.2, "q_ref": 50.0, "capacity": 1250.0, "ecn": true}),
            json!([{"kind": "tcp", "count": 50, "cc": "newreno", "ecn": true}]),
            60.0,
            20.0,
        );
        assert_eq!(b.aqm_activations, b.arrivals, "one law run per arrival");
        let predicted = 50.0 + (b.marks as f64 / b.arrivals as f64) / 0.0005;
        let q = b.mean_queue_pkts;
        assert!(
            (q - predicted).abs() < 0.15 * predicted,
            "seed {seed}: mean queue {q} vs static equilibrium {predicted}"
        );
        assert!((50.0..250.0).contains(&q), "seed {seed}: {q}");
    }
}

/// PD-LQ (Kim, Tang & Low 2003) experiment A: c = 4000 packets/s (32 Mb/s of 1000-byte
/// packets), N = 100 NewReno sources with ECN, propagation rtt 150 ms, b* = 200, 800-packet
/// buffer, T_s = 2 ms, the memoryless λ = −3.75 design (the defaults: h = 5.657e-4,
/// 3.626e-4, 4.894e-5, P_1 = 1, p* = 1/33); 60 s with 20 s warm-up, three seeds.
/// Reference: the paper reports a mean queue of 205.3 packets for this law; the offset p*
/// makes b* the fluid model's equilibrium. Tolerance ±25 % of b* (as for PI): a PD law
/// has no integral action, so the mismatch between the fluid p* and what the packet-level
/// TCP needs moves the queue by (p_needed − p*)/h1 (1/h1 = 1768 packets per unit p), and
/// the derivative terms on the 2-ms arrival counts are noisy. One activation per 2 ms.
#[test]
fn pdlq_holds_queue_near_target() {
    for seed in [21, 22, 23] {
        let b = seed_run(
            seed,
            32e6,
            0.15,
            800,
            json!({"type": "pdlq", "ecn": true}),
            json!([{"kind": "tcp", "count": 100, "cc": "newreno", "ecn": true, "profile": "classic"}]),
            60.0,
            20.0,
        );
        let q = b.mean_queue_pkts;
        assert!((q - 200.0).abs() < 50.0, "seed {seed}: mean queue {q}");
        // 40 s of 2-ms periods after warm-up.
        assert!(
            b.aqm_activations.abs_diff(20_000) <= 1,
            "{}",
            b.aqm_activations
        );
    }
}

/// PD-LQ's memory law in experiment B (propagation rtt 350 ms, τ = 0.4 s, gains on the
/// predictor state 6.093e-4, 5.672e-4, 1.308e-4 and p* = 0.00775 from docs/design/pd_lq.md;
/// the model's c = 4000 packets/s and N = 100). A liveness and range check, not the paper's
/// result: the law runs every 2 ms and keeps the queue inside the buffer at full
/// utilisation (mean in [50, 300] packets). The queue settles below b* (about 100 packets):
/// with p* under 1 % the noisy derivative terms clamp p at 0 most of the time, so the mean
/// of the clamped p exceeds p* + mean δp (docs/aqm/pdlq.md, "Known disagreements").
#[test]
fn pdlq_memory_law_runs() {
    let b = seed_run(
        21,
        32e6,
        0.35,
        800,
        json!({"type": "pdlq", "ecn": true, "memory": true, "capacity": 4000.0,
               "n_flows": 100.0, "tau": 0.4, "h1": 6.093e-4, "h2": 5.672e-4,
               "h3": 1.308e-4, "p_offset": 0.00775}),
        json!([{"kind": "tcp", "count": 100, "cc": "newreno", "ecn": true, "profile": "classic"}]),
        60.0,
        20.0,
    );
    let q = b.mean_queue_pkts;
    assert!((50.0..300.0).contains(&q), "mean queue {q}");
    assert!(
        b.aqm_activations.abs_diff(20_000) <= 1,
        "{}",
        b.aqm_activations
    );
}

/// EDC (Suzer, Kang & Basaran 2011): event threshold n = 30 arrivals, q_ref = 200,
/// 800-packet buffer (the paper's), drops; 60 NewReno flows over 15 Mb/s of 1000-byte
/// packets (the paper's HH bottleneck), propagation rtt 100 ms, 100 s with 40 s warm-up,
/// three seeds; K_P = 0.001, K_I = 0.01. Reference: the integral action makes q_ref the
/// closed-loop equilibrium while p stays inside (0, 1); tolerance ±25 % of q_ref (as for
/// PI) for the TCP sawtooth. Activations: exactly one per 30 arrivals (±1 for the
/// warm-up boundary), which is the paper's activation-frequency metric.
///
/// With the paper's K_P = 0.03 (a 10-packet change of the queue moves p by 0.3) p is
/// clamped at 0 or 1 most of the time, the integral action is lost at each clamp and the
/// queue settles well below q_ref (about 60 packets here, 120 at 1.5 Mb/s); that case is
/// checked for control only (docs/aqm/edc.md, "Known disagreements").
#[test]
fn edc_holds_queue_near_qref() {
    for seed in [21, 22, 23] {
        let b = seed_run(
            seed,
            15e6,
            0.1,
            800,
            json!({"type": "edc", "kp": 0.001, "ki": 0.01, "q_ref": 200.0, "n_event": 30}),
            json!([{"kind": "tcp", "count": 60, "cc": "newreno"}]),
            100.0,
            40.0,
        );
        let q = b.mean_queue_pkts;
        assert!((q - 200.0).abs() < 50.0, "seed {seed}: mean queue {q}");
        assert!(
            b.aqm_activations.abs_diff(b.arrivals / 30) <= 1,
            "{} activations for {} arrivals",
            b.aqm_activations,
            b.arrivals
        );
    }
    // The paper's gains: controlled (mean well inside the buffer, below q_ref), and the
    // activation count still follows the arrivals.
    let b = seed_run(
        21,
        15e6,
        0.1,
        800,
        json!({"type": "edc"}),
        json!([{"kind": "tcp", "count": 60, "cc": "newreno"}]),
        100.0,
        40.0,
    );
    assert!(b.mean_queue_pkts < 200.0, "{}", b.mean_queue_pkts);
    assert!(b.aqm_activations.abs_diff(b.arrivals / 30) <= 1);
}
