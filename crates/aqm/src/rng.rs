//! Per-queue seeded random stream (no global RNG: docs/design.md, "Determinism and units").

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A small seeded RNG: Xoshiro256++ seeded through `SeedableRng::seed_from_u64`
/// (SplitMix64 expansion), so equal seeds give bit-identical streams.
#[derive(Debug, Clone)]
pub struct Rng {
    inner: Xoshiro256PlusPlus,
}

impl Rng {
    /// A new stream from a 64-bit seed.
    pub fn new(seed: u64) -> Rng {
        Rng {
            inner: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }
    /// Uniform `f64` in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.inner.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform `u64`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
    /// Uniform integer in `[0, n)` (`n > 0`), by multiply-shift (bias < n / 2^64).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.inner.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// True with probability `p` (`p <= 0` never, `p >= 1` always).
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let mut differs = false;
        for _ in 0..1000 {
            let x = a.uniform();
            assert_eq!(x, b.uniform());
            assert!((0.0..1.0).contains(&x));
            differs |= x != c.uniform();
            assert!(a.below(10) < 10);
            b.below(10);
            c.below(10);
        }
        assert!(differs);
    }
}
