//! Statistical and unit tests of the netem stage. Every statistical check uses a fixed seed
//! and states its significance level; each reference is a closed form (binomial, geometric,
//! Markov-chain stationary laws, the normal and Pareto CDFs), not this code.

use std::sync::Arc;

use super::dist::{normal_cdf, tabledist, Crandom, Dist, DIST_SCALE, TABLE_LEN};
use super::spec::{percent_to_u32, NetemSpec};
use super::{Netem, NetemPacket};
use crate::rng::{Rng, Stream};
use crate::time::Ns;

const MS: Ns = 1_000_000;
/// Two-sided 1 % quantile of the standard normal (alpha = 0.01).
const Z99: f64 = 2.5758;

#[derive(Clone, Debug)]
struct Pkt {
    id: u64,
    len: u32,
    ect: bool,
    ce: bool,
}

impl NetemPacket for Pkt {
    fn netem_len(&self) -> u32 {
        self.len
    }
    fn netem_set_ce(&mut self) -> bool {
        if self.ect {
            self.ce = true;
        }
        self.ect
    }
}

/// A released packet: (id, arrival ns, release ns, corrupted, CE).
type Out = (u64, Ns, Ns, bool, bool);

fn stage(text: &str, seed: u64) -> Netem<Pkt> {
    let spec = Arc::new(NetemSpec::parse(text).unwrap());
    Netem::new(spec, Rng::derive(seed, Stream::Netem, 0))
}

/// Drives a stage with arrivals at `times` (sorted): dequeues after each arrival and at each
/// watchdog, as the kernel's qdisc_run and hrtimer do.
fn drive(n: &mut Netem<Pkt>, times: &[Ns], len: u32, ect: bool) -> Vec<Out> {
    let mut out = Vec::new();
    let mut arrived = vec![0; times.len()];
    let drain = |n: &mut Netem<Pkt>, now: Ns, out: &mut Vec<Out>, arrived: &[Ns]| {
        while let Some((p, c)) = n.dequeue(now) {
            out.push((p.id, arrived[p.id as usize], now, c, p.ce));
        }
    };
    let mut i = 0;
    loop {
        let next_arrival = times.get(i).copied();
        let wd = n.watchdog().filter(|_| !n.is_empty());
        match (next_arrival, wd) {
            (None, None) => break,
            (Some(a), w) if w.is_none_or(|w| a <= w) => {
                arrived[i] = a;
                n.enqueue(
                    a,
                    Pkt {
                        id: i as u64,
                        len,
                        ect,
                        ce: false,
                    },
                );
                i += 1;
                drain(n, a, &mut out, &arrived);
            }
            (_, Some(w)) => {
                assert!(n.fire(w));
                drain(n, w, &mut out, &arrived);
            }
            _ => unreachable!(),
        }
    }
    assert!(n.is_empty());
    out
}

fn spaced(count: usize, gap: Ns) -> Vec<Ns> {
    (0..count as u64).map(|i| i * gap).collect()
}

/// |observed - expected| within the two-sided alpha = 0.01 binomial (normal approximation)
/// interval.
fn assert_binomial(k: u64, n: u64, p: f64, what: &str) {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (k as f64 - mean).abs() <= Z99 * sd,
        "{what}: {k} of {n}, expected {mean:.1} +- {:.1} (alpha = 0.01)",
        Z99 * sd
    );
}

#[test]
fn parser_follows_tc() {
    let s = NetemSpec::parse("delay 10ms 5ms distribution normal loss gemodel 1% 10%").unwrap();
    assert_eq!((s.latency, s.jitter), (10 * MS as i64, 5 * MS as i32));
    assert_eq!(s.dist, Some(Dist::Normal));
    match s.loss {
        super::loss::LossModel::Gemodel { p, r, h, k1 } => {
            assert_eq!(p, percent_to_u32(0.01));
            assert_eq!(r, percent_to_u32(0.10));
            // tc's defaults: 1-h = 100 % (h = 0), 1-k = 0
            assert_eq!((h, k1), (0, 0));
        }
        other => panic!("{other:?}"),
    }
    // a bare percentage is a percentage; a bare time is microseconds, as tc
    let s = NetemSpec::parse("loss 1 25% delay 100").unwrap();
    assert_eq!(
        s.loss,
        super::loss::LossModel::Random {
            p: percent_to_u32(0.01),
            corr: percent_to_u32(0.25)
        }
    );
    assert_eq!(s.latency, 100_000);
    // loss state p13 alone is Bernoulli: p31 = 1 - p13, p23 = 1
    let s = NetemSpec::parse("loss state 2%").unwrap();
    match s.loss {
        super::loss::LossModel::State { p31, p23, .. } => {
            assert_eq!(p31, percent_to_u32(0.98));
            assert_eq!(p23, u32::MAX);
        }
        other => panic!("{other:?}"),
    }
    // reorder without gap: gap 1
    assert_eq!(NetemSpec::parse("delay 10ms reorder 25%").unwrap().gap, 1);
    let s = NetemSpec::parse("slot 1ms 5ms packets 4 bytes 6000").unwrap();
    let sl = s.slot.unwrap();
    assert_eq!(
        (sl.min_delay, sl.max_delay, sl.max_packets, sl.max_bytes),
        (MS as i64, 5 * MS as i64, 4, 6000)
    );
    let sl = NetemSpec::parse("slot distribution pareto 10ms 2ms")
        .unwrap()
        .slot
        .unwrap();
    assert_eq!(
        sl.dist,
        Some((Some(Dist::Pareto), 10 * MS as i64, 2 * MS as i32))
    );
    assert!(
        NetemSpec::parse("delay 10ms 20ms inorder")
            .unwrap()
            .in_order
    );
}

#[test]
fn parser_errors_name_the_word() {
    for (text, needle) in [
        ("", "empty"),
        ("delay 10xs", "\"10xs\""),
        ("loss 120%", "\"120%\""),
        ("loss bogus 1%", "\"bogus\""),
        ("rate 10mbit", "rate"),
        ("delay 10ms jitter", "\"jitter\""),
        ("reorder 25%", "needs some delay"),
        ("gap 5 delay 10ms", "gap"),
        (
            "delay 10ms distribution normal",
            "needs a delay and a jitter",
        ),
        ("delay 10ms 1ms distribution weibull", "\"weibull\""),
        ("ecn", "needs a loss model"),
        ("slot 5ms 1ms", "below the min_delay"),
        ("loss 1% loss 2%", "given twice"),
        ("delay", "missing"),
        ("delay 10ms 3s", "2.147s"),
    ] {
        let e = NetemSpec::parse(text).unwrap_err();
        assert!(e.contains(needle), "{text:?}: {e}");
    }
}

#[test]
fn a_stage_without_delay_passes_packets_at_once_and_is_deterministic() {
    let mut a = stage("loss 10% duplicate 5%", 3);
    let out = drive(&mut a, &spaced(1000, MS), 1500, false);
    assert!(out.iter().all(|o| o.1 == o.2), "no delay configured");
    let mut b = stage("loss 10% duplicate 5%", 3);
    assert_eq!(
        out.iter().map(|o| o.0).collect::<Vec<_>>(),
        drive(&mut b, &spaced(1000, MS), 1500, false)
            .iter()
            .map(|o| o.0)
            .collect::<Vec<_>>()
    );
}

#[test]
fn random_loss_rate_is_binomial() {
    let n = 200_000;
    let mut s = stage("loss 1%", 11);
    let out = drive(&mut s, &spaced(n, MS), 1500, false);
    assert_eq!(s.ctr.drops + out.len() as u64, n as u64);
    assert_binomial(s.ctr.drops, n as u64, 0.01, "loss 1%");
}

#[test]
fn duplication_and_corruption_rates_are_binomial() {
    let n = 200_000u64;
    let mut s = stage("duplicate 2% corrupt 3%", 12);
    let out = drive(&mut s, &spaced(n as usize, MS), 1500, false);
    assert_binomial(s.ctr.duplicates, n, 0.02, "duplicate 2%");
    assert_eq!(out.len() as u64, n + s.ctr.duplicates);
    // the copies get their own corruption draw
    assert_binomial(s.ctr.corrupted, n + s.ctr.duplicates, 0.03, "corrupt 3%");
    assert_eq!(out.iter().filter(|o| o.3).count() as u64, s.ctr.corrupted);
}

#[test]
fn ecn_marks_instead_of_dropping_capable_packets() {
    let mut s = stage("loss 5% ecn", 13);
    let out = drive(&mut s, &spaced(50_000, MS), 1500, true);
    assert_eq!(s.ctr.drops, 0);
    assert_eq!(out.iter().filter(|o| o.4).count() as u64, s.ctr.marks);
    assert_binomial(s.ctr.marks, 50_000, 0.05, "ecn marks");
    let mut s = stage("loss 5% ecn", 13);
    drive(&mut s, &spaced(50_000, MS), 1500, false);
    assert_eq!(s.ctr.marks, 0);
    assert!(s.ctr.drops > 0);
}

/// The correlated generator is an AR(1) with uniform innovations:
/// `Y' = (1 - r) U + r Y` (r = (rho + 1) / 2^32), so its stationary mean is that of U,
/// its variance `(1 - r)^2 / (1 - r^2) x Var U = (1 - r) / (1 + r) / 12` (in units of 2^32)
/// and its lag-1 autocorrelation `r`. Checked on 400 000 draws against 5 standard errors of
/// the AR(1) (the variance inflation of the mean is (1 + r) / (1 - r)).
#[test]
fn correlated_draws_follow_the_ar1_closed_forms() {
    let mut rng = Rng::derive(5, Stream::Netem, 1);
    for corr in [0.25, 0.75] {
        let mut c = Crandom::new(percent_to_u32(corr), &mut rng);
        let n = 400_000;
        let y: Vec<f64> = (0..n)
            .map(|_| c.next(&mut rng) as f64 / 4294967296.0)
            .collect();
        let r = corr;
        let mean = y.iter().sum::<f64>() / n as f64;
        let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        let lag1 = y
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>()
            / (n - 1) as f64
            / var;
        let want_var = (1.0 - r) / (1.0 + r) / 12.0;
        let se_mean = (want_var * (1.0 + r) / (1.0 - r) / n as f64).sqrt();
        assert!((mean - 0.5).abs() < 5.0 * se_mean, "mean {mean}");
        assert!(
            (var / want_var - 1.0).abs() < 0.02,
            "var {var} vs {want_var}"
        );
        assert!((lag1 - r).abs() < 0.01, "lag-1 {lag1} vs {r}");
    }
}

/// Correlated random loss: netem's correlated draw narrows toward 1/2, so with `loss 10% 50%`
/// a packet follows a loss more often than the rate (bursts), and the rate itself falls far
/// below 10 % (0.1 % here: netem's known behaviour, kept).
#[test]
fn correlated_loss_is_bursty() {
    let n = 200_000;
    let mut s = stage("loss 10% 50%", 14);
    let out = drive(&mut s, &spaced(n, MS), 1500, false);
    let mut lost = vec![true; n];
    for o in &out {
        lost[o.0 as usize] = false;
    }
    let rate = s.ctr.drops as f64 / n as f64;
    let after_loss = lost.windows(2).filter(|w| w[0]).count() as f64;
    let both = lost.windows(2).filter(|w| w[0] && w[1]).count() as f64;
    let cond = both / after_loss;
    assert!(rate < 0.1 && rate > 0.0002, "rate {rate}");
    assert!(cond > 2.0 * rate, "P(loss | loss) {cond} vs rate {rate}");
}

/// Chi-square statistic of counts against probabilities (bins of expected count >= 5).
fn chi_square(observed: &[f64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(o, e)| (o - e).powi(2) / e)
        .sum()
}

/// Upper alpha = 0.01 quantile of chi-square with `k` degrees of freedom (Wilson-Hilferty,
/// within 0.5 % for k >= 10).
fn chi2_crit(k: usize) -> f64 {
    let k = k as f64;
    let t = 1.0 - 2.0 / (9.0 * k) + 2.3263 * (2.0 / (9.0 * k)).sqrt();
    k * t * t * t
}

/// Gilbert-Elliott (`loss gemodel 1% 10%`, 1-h = 100 %, 1-k = 0): losses are the bad state's
/// runs, whose lengths are geometric with parameter r = 10 %; the loss rate is
/// p / (p + r) = 1/11. Chi-square of the burst lengths against the geometric law (bins 1..30
/// and a tail, alpha = 0.01), and the loss rate against the two-state chain's stationary
/// law with its asymptotic variance `pi (1 - pi) (1 + l) / (1 - l) / n`, l = 1 - p - r.
#[test]
fn gilbert_elliott_bursts_are_geometric() {
    let n = 400_000;
    let mut s = stage("loss gemodel 1% 10%", 21);
    let out = drive(&mut s, &spaced(n, MS), 1500, false);
    let mut lost = vec![true; n];
    for o in &out {
        lost[o.0 as usize] = false;
    }
    let mut bursts = Vec::new();
    let mut run = 0usize;
    for &l in &lost {
        if l {
            run += 1;
        } else if run > 0 {
            bursts.push(run);
            run = 0;
        }
    }
    let (p, r) = (0.01f64, 0.10f64);
    let m = bursts.len() as f64;
    let bins = 30;
    let mut obs = vec![0.0; bins + 1];
    for &b in &bursts {
        obs[(b - 1).min(bins)] += 1.0;
    }
    let mut exp: Vec<f64> = (1..=bins)
        .map(|k| m * (1.0 - r).powi(k as i32 - 1) * r)
        .collect();
    exp.push(m * (1.0 - r).powi(bins as i32));
    let x2 = chi_square(&obs, &exp);
    assert!(
        x2 < chi2_crit(bins),
        "chi-square {x2} >= {}",
        chi2_crit(bins)
    );
    let pi = p / (p + r);
    let l = 1.0 - p - r;
    let sd = (pi * (1.0 - pi) * (1.0 + l) / (1.0 - l) / n as f64).sqrt();
    let rate = s.ctr.drops as f64 / n as f64;
    assert!(
        (rate - pi).abs() < Z99 * sd,
        "rate {rate} vs {pi} +- {}",
        Z99 * sd
    );
}

/// The 4-state model's loss rate against its stationary law (balance equations:
/// pi4 = p14 pi1, pi3 = p13 / p31 pi1, pi2 = p32 / p23 pi3; loss = pi3 + pi4). The
/// tolerance is a t-interval from 100 batch means (alpha = 0.01, t_99 = 2.626).
#[test]
fn four_state_loss_rate_matches_the_stationary_law() {
    let (p13, p31, p32, p23, p14) = (0.02, 0.3, 0.2, 0.1, 0.01);
    let n = 500_000;
    let mut s = stage("loss state 2% 30% 20% 10% 1%", 22);
    let out = drive(&mut s, &spaced(n, MS), 1500, false);
    let mut lost = vec![1.0f64; n];
    for o in &out {
        lost[o.0 as usize] = 0.0;
    }
    let pi1 = 1.0;
    let pi4 = p14 * pi1;
    let pi3 = p13 / p31 * pi1;
    let pi2 = p32 / p23 * pi3;
    let want = (pi3 + pi4) / (pi1 + pi2 + pi3 + pi4);
    let batches: Vec<f64> = lost
        .chunks(n / 100)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let mean = batches.iter().sum::<f64>() / 100.0;
    let sd = (batches.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / 99.0).sqrt();
    let half = 2.626 * sd / 10.0;
    assert!(
        (mean - want).abs() < half,
        "loss {mean} vs {want} +- {half}"
    );
}

/// Kolmogorov-Smirnov distance between the sorted sample `x` and a CDF (`cdf(v)`: P(X <= v);
/// `left(v)`: P(X < v), equal to it but at atoms).
fn ks(x: &mut [f64], cdf: impl Fn(f64) -> f64, left: impl Fn(f64) -> f64) -> f64 {
    x.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    let mut d = 0.0f64;
    let mut i = 0;
    while i < x.len() {
        let v = x[i];
        let mut j = i;
        while j < x.len() && x[j] == v {
            j += 1;
        }
        d = d.max((j as f64 / n - cdf(v)).abs());
        d = d.max((i as f64 / n - left(v)).abs());
        i = j;
    }
    d
}

/// Delays (in units of the jitter, centred) of `n` packets far apart through `text`.
fn delays(text: &str, seed: u64, n: usize, mu: f64, sigma: f64) -> Vec<f64> {
    let mut s = stage(text, seed);
    let out = drive(&mut s, &spaced(n, 100 * MS), 1000, false);
    assert_eq!(out.len(), n);
    out.iter()
        .map(|o| ((o.2 - o.1) as f64 - mu) / sigma)
        .collect()
}

/// The KS bound: the alpha = 0.01 critical value 1.628 / sqrt(n), plus the tables'
/// quantisation (4096 equally likely entries: a CDF step of 1/4096, and the tails beyond
/// the first and last entry folded onto them) -- 2/4096 in all.
fn ks_bound(n: usize) -> f64 {
    1.628 / (n as f64).sqrt() + 2.0 / TABLE_LEN as f64
}

#[test]
fn uniform_jitter_is_uniform() {
    let n = 50_000;
    let mut x = delays("delay 50ms 10ms", 31, n, 50e6, 10e6);
    let cdf = |v: f64| ((v + 1.0) / 2.0).clamp(0.0, 1.0);
    let d = ks(&mut x, cdf, cdf);
    assert!(d < 1.628 / (n as f64).sqrt(), "KS {d}");
}

#[test]
fn normal_jitter_is_normal() {
    let n = 50_000;
    let mut x = delays("delay 50ms 10ms distribution normal", 32, n, 50e6, 10e6);
    let d = ks(&mut x, normal_cdf, normal_cdf);
    assert!(d < ks_bound(n), "KS {d}");
}

/// iproute2's Pareto table: `Y = (4/3) (X - 1.5)`, X Pareto with scale 1 and shape 3, capped
/// at 32767/8192: P(Y <= y) = 1 - (1.5 + 0.75 y)^-3 below the cap, an atom at the cap (a
/// delay in whole ns reaches the cap to within 1e-6 jitters).
fn pareto_cdf(y: f64) -> f64 {
    let cap = 32767.0 / DIST_SCALE as f64 - 1e-6;
    if y >= cap {
        1.0
    } else if y < -2.0 / 3.0 {
        0.0
    } else {
        1.0 - (1.5 + 0.75 * y).powi(-3)
    }
}

fn pareto_left(y: f64) -> f64 {
    pareto_cdf(y.min(32767.0 / DIST_SCALE as f64 - 2e-6))
}

#[test]
fn pareto_jitter_is_pareto() {
    let n = 50_000;
    let mut x = delays("delay 50ms 10ms distribution pareto", 33, n, 50e6, 10e6);
    let d = ks(&mut x, pareto_cdf, pareto_left);
    assert!(d < ks_bound(n), "KS {d}");
}

/// paretonormal: iproute2 averages the two tables entry by entry, `(normal + 3 pareto) / 4`,
/// so its quantile function is `Q(u) = (Phi^-1(u) + 3 Qpareto(u)) / 4`; the CDF is found
/// by inverting Q on a grid of 2^16 levels (linear between them).
#[test]
fn paretonormal_jitter_follows_the_averaged_quantiles() {
    let cap = 32767.0 / DIST_SCALE as f64;
    let inv_phi = |u: f64| {
        let (mut lo, mut hi) = (-10.0f64, 10.0f64);
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if normal_cdf(mid) < u {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let grid = 1 << 16;
    let q: Vec<f64> = (0..=grid)
        .map(|i| {
            let u = (i as f64 / grid as f64).clamp(1e-9, 1.0 - 1e-9);
            let par = ((4.0 / 3.0) * ((1.0 - u).powf(-1.0 / 3.0) - 1.5)).min(cap);
            (inv_phi(u) + 3.0 * par) / 4.0
        })
        .collect();
    let cdf = |y: f64| {
        let k = q.partition_point(|&v| v <= y);
        if k == 0 {
            0.0
        } else if k > grid {
            1.0
        } else {
            let (a, b) = (q[k - 1], q[k]);
            ((k - 1) as f64 + (y - a) / (b - a)) / grid as f64
        }
    };
    let n = 50_000;
    let mut x = delays(
        "delay 50ms 10ms distribution paretonormal",
        34,
        n,
        50e6,
        10e6,
    );
    let d = ks(&mut x, cdf, cdf);
    assert!(d < ks_bound(n), "KS {d}");
}

/// The generated normal table against the normal quantiles: iproute2 keeps, for level
/// `i / 16384`, the largest grid point whose rounded CDF is i, i.e. about
/// Phi^-1((i + 1/2) / 16384); within one grid step (5e-5) and the rounding (1/8192).
#[test]
fn normal_table_matches_the_quantiles() {
    let t = Dist::Normal.table();
    assert_eq!(t.len(), TABLE_LEN);
    for k in (1..TABLE_LEN).step_by(97) {
        let u = (4.0 * k as f64 + 0.5) / 16384.0;
        let (mut lo, mut hi) = (-10.0f64, 10.0f64);
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if normal_cdf(mid) < u {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let got = t[k] as f64 / DIST_SCALE as f64;
        assert!(
            (got - lo).abs() <= 5e-5 + 1.0 / 8192.0,
            "k {k}: {got} vs {lo}"
        );
    }
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
    // Pareto's first entry: (4/3)(1 - 1.5) x 8192 = -5461.3 -> -5461
    assert_eq!(Dist::Pareto.table()[0], -5461);
}

#[test]
fn tabledist_rounds_as_the_kernel() {
    let mut rng = Rng::derive(1, Stream::Netem, 9);
    assert_eq!(tabledist(7, 0, None, &mut rng, Some(Dist::Normal)), 7);
    for _ in 0..1000 {
        let v = tabledist(1000, 100, None, &mut rng, None);
        assert!((900..1100).contains(&v));
    }
}

/// `reorder 25%` (gap 1): each packet is sent at once with probability 25 %, the others
/// `delay` later; a packet sent at once overtakes those in the delay.
#[test]
fn reorder_rate_is_binomial() {
    let n = 100_000u64;
    let mut s = stage("delay 10ms reorder 25%", 41);
    let out = drive(&mut s, &spaced(n as usize, MS), 1500, false);
    assert_binomial(s.ctr.reordered, n, 0.25, "reorder 25%");
    let early = out.iter().filter(|o| o.2 == o.1).count() as u64;
    assert_eq!(early, s.ctr.reordered);
    assert!(out.iter().all(|o| o.2 == o.1 || o.2 == o.1 + 10 * MS));
    assert!(s.ctr.late > 0);
}

/// Jitter reorders (netem's tfifo sorts by time to send) unless `inorder` is given.
#[test]
fn jitter_reorders_by_default_and_inorder_keeps_order() {
    let times = spaced(20_000, MS);
    let mut s = stage("delay 20ms 10ms", 42);
    drive(&mut s, &times, 1500, false);
    assert!(s.ctr.late > 1000, "late {}", s.ctr.late);
    let mut s = stage("delay 20ms 10ms inorder", 42);
    let out = drive(&mut s, &times, 1500, false);
    assert_eq!(s.ctr.late, 0);
    assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(out.iter().all(|o| o.2 >= o.1 + 10 * MS));
}

#[test]
fn limit_drops_what_does_not_fit() {
    let mut s = stage("delay 100ms limit 10", 43);
    let out = drive(&mut s, &spaced(100, MS), 1500, false);
    // 100 ms of delay at one packet per ms: the stage holds 10, the rest is refused
    assert_eq!(s.ctr.limit_drops, s.ctr.drops);
    assert_eq!(out.len() as u64 + s.ctr.drops, 100);
    assert!(out.len() < 20);
}

/// Slots: with a backlog, each slot sends `packets` (or `bytes`) and the next opens a
/// uniform spacing in [min, max) later: the bursts are exactly the configured size and the
/// spacings pass a KS test against U(5 ms, 15 ms) (alpha = 0.01).
#[test]
fn slots_release_bursts_of_the_configured_size() {
    let backlog = vec![0; 8000];
    let mut s = stage("slot 5ms 15ms packets 4 limit 100000", 51);
    let out = drive(&mut s, &backlog, 1500, false);
    let mut bursts: Vec<(Ns, usize)> = Vec::new();
    for o in &out {
        match bursts.last_mut() {
            Some((t, c)) if *t == o.2 => *c += 1,
            _ => bursts.push((o.2, 1)),
        }
    }
    assert!(bursts.iter().all(|b| b.1 == 4), "bursts of 4");
    let mut gaps: Vec<f64> = bursts
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) as f64 / MS as f64)
        .collect();
    let cdf = |v: f64| ((v - 5.0) / 10.0).clamp(0.0, 1.0);
    let n = gaps.len();
    let d = ks(&mut gaps, cdf, cdf);
    assert!(d < 1.628 / (n as f64).sqrt(), "KS {d} on {n} spacings");
    // bytes: 3000 per slot of 1500-byte packets is 2 per slot
    let mut s = stage("slot 10ms bytes 3000 limit 100000", 52);
    let out = drive(&mut s, &vec![0; 100], 1500, false);
    for pair in out.chunks(2) {
        assert_eq!(pair[0].2, pair[1].2);
    }
    assert_eq!(out[2].2 - out[0].2, 10 * MS);
}

/// A packet that becomes due while no slot is open waits for the next slot, drawn from when
/// the stage looks (the kernel's `get_slot_next(q, now)` when the slot began before it).
#[test]
fn an_idle_slot_restarts_when_a_packet_is_due() {
    let mut s = stage("slot 10ms", 53);
    let out = drive(&mut s, &[0, 100 * MS], 1500, false);
    // the first slot opens at 0 (the qdisc's creation): the packet at 0 leaves at once and
    // starts a new slot at 10 ms; the one at 100 ms finds that slot long past and waits 10 ms
    assert_eq!(out[0].2, 0);
    assert_eq!(out[1].2, 110 * MS);
}
