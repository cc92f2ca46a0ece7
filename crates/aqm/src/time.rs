//! Integer time and rate newtypes.
//!
//! All simulation time in this crate is integer nanoseconds: [`Instant`] is a point in time
//! (ns since an arbitrary epoch chosen by the caller), [`Duration`] a non-negative span.
//! Arithmetic never panics: `+` saturates at `u64::MAX`, `Instant - Instant` saturates at zero.
//! Floating point seconds appear only at the configuration boundary
//! ([`Duration::from_secs_f64`], [`Duration::as_secs_f64`]).

use core::ops::{Add, AddAssign, Sub};
use serde::{Deserialize, Serialize};

/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in time: nanoseconds since an arbitrary epoch.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Instant(pub u64);

/// A span of time in nanoseconds (never negative).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Duration(pub u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// The latest representable instant ("never").
    pub const MAX: Instant = Instant(u64::MAX);

    /// Nanoseconds since the epoch.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the epoch (for reporting only).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// `self + d`, or `None` on overflow.
    #[inline]
    pub const fn checked_add(self, d: Duration) -> Option<Instant> {
        match self.0.checked_add(d.0) {
            Some(v) => Some(Instant(v)),
            None => None,
        }
    }
    /// `self - earlier`, or `None` if `earlier` is later than `self`.
    #[inline]
    pub const fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(v) => Some(Duration(v)),
            None => None,
        }
    }
    /// `self - earlier`, zero if `earlier` is later than `self`.
    #[inline]
    pub const fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// Signed difference `self - other` in ns (saturating at the `i64` range).
    #[inline]
    pub fn signed_diff(self, other: Instant) -> i64 {
        let d = self.0 as i128 - other.0 as i128;
        d.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable duration.
    pub const MAX: Duration = Duration(u64::MAX);

    /// From whole seconds (saturating).
    #[inline]
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s.saturating_mul(NANOS_PER_SEC))
    }
    /// From milliseconds (saturating).
    #[inline]
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms.saturating_mul(1_000_000))
    }
    /// From microseconds (saturating).
    #[inline]
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us.saturating_mul(1_000))
    }
    /// From nanoseconds.
    #[inline]
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    /// From seconds, rounded to the nearest nanosecond. Negative or NaN gives zero,
    /// too large (or +inf) gives [`Duration::MAX`]. Use [`Duration::try_from_secs_f64`]
    /// to reject such values.
    pub fn from_secs_f64(s: f64) -> Duration {
        Self::try_from_secs_f64(s).unwrap_or(if s > 0.0 {
            Duration::MAX
        } else {
            Duration::ZERO
        })
    }
    /// From seconds, rounded to the nearest nanosecond; `None` if negative, NaN or too large.
    pub fn try_from_secs_f64(s: f64) -> Option<Duration> {
        if !s.is_finite() || s < 0.0 {
            return None;
        }
        let ns = (s * NANOS_PER_SEC as f64).round();
        if ns >= u64::MAX as f64 {
            return None;
        }
        Some(Duration(ns as u64))
    }
    /// Length in seconds.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Length in nanoseconds.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self + o`, or `None` on overflow.
    #[inline]
    pub const fn checked_add(self, o: Duration) -> Option<Duration> {
        match self.0.checked_add(o.0) {
            Some(v) => Some(Duration(v)),
            None => None,
        }
    }
    /// `self - o`, or `None` if `o > self`.
    #[inline]
    pub const fn checked_sub(self, o: Duration) -> Option<Duration> {
        match self.0.checked_sub(o.0) {
            Some(v) => Some(Duration(v)),
            None => None,
        }
    }
    /// `self - o`, zero if `o > self`.
    #[inline]
    pub const fn saturating_sub(self, o: Duration) -> Duration {
        Duration(self.0.saturating_sub(o.0))
    }
    /// `self * n` (saturating).
    #[inline]
    pub const fn saturating_mul(self, n: u64) -> Duration {
        Duration(self.0.saturating_mul(n))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturating at [`Instant::MAX`].
    #[inline]
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    /// Saturating at [`Instant::ZERO`].
    #[inline]
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating at [`Duration::ZERO`] when `rhs` is later than `self`.
    #[inline]
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}
impl Add for Duration {
    type Output = Duration;
    /// Saturating at [`Duration::MAX`].
    #[inline]
    fn add(self, o: Duration) -> Duration {
        Duration(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, o: Duration) {
        *self = *self + o;
    }
}
impl Sub for Duration {
    type Output = Duration;
    /// Saturating at [`Duration::ZERO`].
    #[inline]
    fn sub(self, o: Duration) -> Duration {
        self.saturating_sub(o)
    }
}

/// A link rate in bits per second.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    /// From megabits per second (10^6 b/s), saturating.
    pub const fn from_mbps(m: u64) -> BitsPerSec {
        BitsPerSec(m.saturating_mul(1_000_000))
    }
    /// Serialisation time of `bytes` at this rate, in integer ns rounded up.
    /// A zero rate gives [`Duration::MAX`].
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        // Exact in u64 while bytes * 8e9 fits (any packet, up to 2.3 GB); u128 beyond.
        const FAST_MAX: u64 = u64::MAX / (8 * NANOS_PER_SEC);
        if bytes <= FAST_MAX {
            return Duration((bytes * 8 * NANOS_PER_SEC).div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * NANOS_PER_SEC as u128;
        let ns = num.div_ceil(self.0 as u128);
        Duration(ns.min(u64::MAX as u128) as u64)
    }
    /// Packets of `pkt_bytes` bytes the link can send per second.
    #[inline]
    pub fn packets_per_sec(self, pkt_bytes: u32) -> f64 {
        if pkt_bytes == 0 {
            return 0.0;
        }
        self.0 as f64 / (8.0 * pkt_bytes as f64)
    }
    /// Rate in bits per second as `f64`.
    #[inline]
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
}

/// A size in bytes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Instant(5) - Instant(7), Duration::ZERO);
        assert_eq!(Instant(7) - Instant(5), Duration(2));
        assert_eq!(Instant::MAX + Duration(1), Instant::MAX);
        assert_eq!(Instant(3) - Duration(5), Instant::ZERO);
        assert_eq!(Duration(3) - Duration(5), Duration::ZERO);
        assert_eq!(Instant(1).checked_add(Duration::MAX), None);
        assert_eq!(Instant(2).signed_diff(Instant(5)), -3);
    }

    #[test]
    fn conversions() {
        assert_eq!(Duration::from_secs_f64(0.005), Duration(5_000_000));
        assert_eq!(Duration::from_millis(100), Duration(100_000_000));
        assert_eq!(Duration::from_micros(3), Duration(3_000));
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::try_from_secs_f64(f64::NAN), None);
        assert_eq!(Duration::from_secs_f64(1e30), Duration::MAX);
        assert!((Duration(1_500_000).as_secs_f64() - 0.0015).abs() < 1e-15);
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1500 B at 10 Mb/s = 1.2 ms exactly.
        assert_eq!(BitsPerSec(10_000_000).tx_time(1500), Duration(1_200_000));
        // 1 B at 3 b/s = 8/3 s -> rounded up to the next ns.
        assert_eq!(BitsPerSec(3).tx_time(1), Duration(2_666_666_667));
        assert_eq!(BitsPerSec(0).tx_time(1), Duration::MAX);
        // The u64 fast path agrees with the exact u128 formula on both sides of its bound.
        let exact = |r: u64, b: u64| {
            let ns = (b as u128 * 8_000_000_000).div_ceil(r as u128);
            Duration(ns.min(u64::MAX as u128) as u64)
        };
        let bound = u64::MAX / 8_000_000_000;
        for r in [1, 3, 7_777_777, 10_000_000, 1_000_000_007, u64::MAX] {
            for b in [
                0,
                1,
                40,
                1499,
                1500,
                65_535,
                bound - 1,
                bound,
                bound + 1,
                u64::MAX,
            ] {
                assert_eq!(BitsPerSec(r).tx_time(b), exact(r, b), "rate {r} bytes {b}");
            }
        }
    }
}
