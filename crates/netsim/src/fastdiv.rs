//! Exact division by a run-time constant with one multiplication.
//!
//! A link divides every packet's `bits x 1e9 + carry` by its rate to get the serialisation
//! time (`Link::tx_time`). A 64-bit `div` takes some 40 cycles, about a tenth of a hop's
//! work on the standard dumbbell. [`Divisor`] precomputes, once per rate, the magic number of
//! Granlund and Montgomery ("Division by invariant integers using multiplication", PLDI
//! 1994, Theorem 4.2): for a divisor `d >= 1` with `l = ceil(log2 d)` and numerators
//! `0 <= n < 2^N`, the multiplier `m = ceil(2^(N + l) / d)` gives
//! `floor(n / d) = floor(m n / 2^(N + l))` exactly, with `m < 2^(N + 1)`. Here `N = 62`:
//! `m n < 2^125` fits in a `u128`. Larger numerators fall back to `/`, so the quotient is
//! exact for every `u64`.

/// A divisor with its precomputed multiplier (see the module docs). (`packed(4)`: 20 bytes,
/// not 24, so that a [`crate::link::Link`]'s next `u32` fills what would be padding.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct Divisor {
    d: u64,
    /// `ceil(2^(N + l) / d)`, below `2^63`.
    m: u64,
    /// `N + l`, at most 126.
    shift: u32,
}

/// Numerators below `2^N` take the multiplication.
const N: u32 = 62;

impl Divisor {
    /// The divisor `d` (> 0).
    pub fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        let l = if d == 1 {
            0
        } else {
            64 - (d - 1).leading_zeros()
        };
        let shift = N + l;
        let m = (1u128 << shift).div_ceil(d as u128);
        debug_assert!(m < 1u128 << (N + 1));
        Divisor {
            d,
            m: m as u64,
            shift,
        }
    }

    /// The divisor.
    #[inline(always)]
    pub fn get(&self) -> u64 {
        self.d
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub fn div_rem(&self, n: u64) -> (u64, u64) {
        if n >> N != 0 {
            return (n / self.d, n % self.d);
        }
        let q = ((self.m as u128 * n as u128) >> self.shift) as u64;
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the hardware division (the reference): divisors from 1 to 1e15 bit/s
    /// (powers of two and their neighbours, link rates in use, random ones) and numerators
    /// at the edges of the fast range and at random. Exact: no tolerance.
    #[test]
    fn matches_hardware_division() {
        let mut ds: Vec<u64> = vec![1, 2, 3, 5, 7, 10, 1000, 10_000_000, 32_000_000, 320_000_000];
        ds.extend([
            1e9 as u64,
            1e10 as u64,
            1e12 as u64,
            1e15 as u64,
            u64::MAX,
            u64::MAX - 1,
        ]);
        for k in 1..64 {
            let p = 1u64 << k;
            ds.extend([p - 1, p, p + 1]);
        }
        let mut rng = experiment::rng::Rng::derive(3, experiment::rng::Stream::Flow, 0);
        let mut draw = || ((rng.uniform() * 2f64.powi(53)) as u64) << 11 | 0x5a5;
        for _ in 0..200 {
            let x = draw();
            ds.push((x >> (x % 60)).max(1));
        }
        for &d in &ds {
            let v = Divisor::new(d);
            let mut ns: Vec<u64> = vec![0, 1, d - 1, d, d.wrapping_add(1), u64::MAX];
            ns.extend([(1 << N) - 1, 1 << N, (1 << N) - d.min(1 << 40)]);
            // packet-sized numerators: bytes x 8e9 + carry
            ns.extend([40 * 8_000_000_000 + d - 1, 65_535 * 8_000_000_000 + d - 1]);
            for _ in 0..200 {
                let x = draw();
                ns.push(x >> (x % 64));
            }
            for &n in &ns {
                assert_eq!(v.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
