//! netem's random numbers: the correlated uniform generator (`get_crandom`), the delay
//! distribution tables (iproute2's `netem/normal.c`, `pareto.c`, `paretonormal.c`, generated
//! here the same way rather than read from `.dist` files) and `tabledist`, which turns a
//! uniform draw into a delay (Linux `net/sched/sch_netem.c`).

use std::sync::OnceLock;

use crate::rng::Rng;

/// `NETEM_DIST_SCALE` (`include/uapi/linux/pkt_sched.h`): table entries are in units of
/// 1/8192 of the jitter.
pub const DIST_SCALE: i64 = 8192;

/// Entries of a generated table: iproute2 samples `TABLESIZE = 16384` quantile levels every
/// 4th, so a table holds 4096 entries, entry `k` at the level `k / 4096`.
pub const TABLE_LEN: usize = 4096;

/// A delay distribution table (`distribution NAME`); uniform has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    /// iproute2's `normal.dist`: the standard normal's quantiles.
    Normal,
    /// iproute2's `pareto.dist`: Pareto with shape 3, centred and scaled by 4/3.
    Pareto,
    /// iproute2's `paretonormal.dist`: (normal + 3 x pareto) / 4, quantile by quantile.
    ParetoNormal,
}

impl Dist {
    /// The name as written after `distribution`.
    pub fn name(self) -> &'static str {
        match self {
            Dist::Normal => "normal",
            Dist::Pareto => "pareto",
            Dist::ParetoNormal => "paretonormal",
        }
    }

    /// The table (generated once per process).
    pub fn table(self) -> &'static [i16] {
        static N: OnceLock<Vec<i16>> = OnceLock::new();
        static P: OnceLock<Vec<i16>> = OnceLock::new();
        static PN: OnceLock<Vec<i16>> = OnceLock::new();
        match self {
            Dist::Normal => N.get_or_init(normal_table),
            Dist::Pareto => P.get_or_init(pareto_table),
            Dist::ParetoNormal => PN.get_or_init(paretonormal_table),
        }
    }
}

/// The error function, to double precision for |x| <= 7 (Taylor series below 2.5, Lentz's
/// continued fraction of erfc above). (Rust's `std` has no `erf`; iproute2 uses libm's.)
pub fn erf(x: f64) -> f64 {
    let a = x.abs();
    let r = if a < 2.5 {
        // erf(a) = 2/sqrt(pi) sum (-1)^n a^(2n+1) / (n! (2n+1))
        let (mut term, mut sum, a2) = (a, a, a * a);
        for n in 1..200 {
            term *= -a2 / n as f64;
            let t = term / (2 * n + 1) as f64;
            sum += t;
            if t.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        // erfc(a) = exp(-a^2)/sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...))))
        let tiny = 1e-300;
        let mut f = a;
        let (mut c, mut d) = (a, 0.0);
        for n in 1..500 {
            let an = n as f64 / 2.0;
            d = a + an * d;
            d = if d.abs() < tiny { 1.0 / tiny } else { 1.0 / d };
            c = a + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            let delta = c * d;
            f *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// The standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 + 0.5 * erf(x / std::f64::consts::SQRT_2)
}

/// iproute2 `normal.c`: `table[i]` = the largest `x` on the grid -10, -9.99995, ... with
/// `rint(16384 Phi(x)) == i`; every 4th entry, times 8192, rounded, clamped to i16.
fn normal_quantiles() -> Vec<f64> {
    const TABLESIZE: usize = 16384;
    let mut table = vec![0.0f64; TABLESIZE + 1];
    // (x += .00005 in C accumulates its rounding; so does this loop)
    let mut x = -10.0f64;
    while x < 10.05 {
        let i = (TABLESIZE as f64 * normal_cdf(x)).round_ties_even() as usize;
        table[i] = x;
        x += 0.00005;
    }
    table
}

fn clamp16(v: f64) -> i16 {
    v.round_ties_even().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

fn normal_table() -> Vec<i16> {
    let q = normal_quantiles();
    (0..TABLE_LEN)
        .map(|k| clamp16(q[4 * k] * DIST_SCALE as f64))
        .collect()
}

/// iproute2 `pareto.c` / `paretovalue`: entry `k` from `i = 65536 - 16 k`:
/// `(4/3) (1 / (i/65536)^(1/3) - 1.5) x 8192`, capped at 32767, rounded.
fn pareto_value(k: usize) -> i32 {
    let i = 65536 - 16 * k as i64;
    let mut d = 1.0 / (i as f64 / 65536.0).powf(1.0 / 3.0);
    d -= 1.5;
    d *= (4.0 / 3.0) * DIST_SCALE as f64;
    if d > 32767.0 {
        d = 32767.0;
    }
    d.round_ties_even() as i32
}

fn pareto_table() -> Vec<i16> {
    (0..TABLE_LEN).map(|k| pareto_value(k) as i16).collect()
}

/// iproute2 `paretonormal.c`: `(normvalue + 3 parvalue) / 4` (C integer division), clamped.
fn paretonormal_table() -> Vec<i16> {
    let q = normal_quantiles();
    (0..TABLE_LEN)
        .map(|k| {
            let norm = (q[4 * k] * DIST_SCALE as f64).round_ties_even() as i32;
            let v = (norm + 3 * pareto_value(k)) / 4;
            v.clamp(i16::MIN as i32, i16::MAX as i32) as i16
        })
        .collect()
}

/// netem's `struct crndstate`: a correlated uniform u32 stream (`get_crandom`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Crandom {
    /// The correlation, scaled to u32 (0: independent draws).
    pub rho: u32,
    last: u32,
}

impl Crandom {
    /// `init_crandom`: correlation `rho`, the previous value drawn at random.
    pub fn new(rho: u32, rng: &mut Rng) -> Crandom {
        Crandom {
            rho,
            last: rng.next_u32(),
        }
    }

    /// `get_crandom`: `(value (2^32 - rho') + last rho') >> 32` with `rho' = rho + 1`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u32 {
        let value = rng.next_u32() as u64;
        if self.rho == 0 {
            return value as u32;
        }
        let rho = self.rho as u64 + 1;
        let answer = ((value * ((1u64 << 32) - rho) + self.last as u64 * rho) >> 32) as u32;
        self.last = answer;
        answer
    }
}

/// `tabledist(mu, sigma, state, prng, dist)`: a delay (ns) of mean `mu` and jitter `sigma`:
/// uniform on `[mu - sigma, mu + sigma)` without a table, else `mu + sigma x t / 8192` with
/// `t` the table entry at `rnd % len`, rounded as the kernel rounds. `state`: a correlated
/// stream, or `None` for an independent draw (slots).
pub fn tabledist(
    mu: i64,
    sigma: i32,
    state: Option<&mut Crandom>,
    rng: &mut Rng,
    dist: Option<Dist>,
) -> i64 {
    if sigma == 0 {
        return mu;
    }
    let rnd = match state {
        Some(s) => s.next(rng),
        None => rng.next_u32(),
    };
    let Some(d) = dist else {
        return (rnd % (2 * sigma as u32)) as i64 + mu - sigma as i64;
    };
    let table = d.table();
    let t = table[rnd as usize % table.len()] as i64;
    let sigma = sigma as i64;
    let mut x = (sigma % DIST_SCALE) * t;
    if x >= 0 {
        x += DIST_SCALE / 2;
    } else {
        x -= DIST_SCALE / 2;
    }
    x / DIST_SCALE + (sigma / DIST_SCALE) * t + mu
}
