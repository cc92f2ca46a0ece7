//! Simulation time: integer nanoseconds, and the one conversion from seconds.

/// Simulation time or duration in integer nanoseconds.
pub type Ns = u64;

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Converts seconds (the JSON boundary unit) to integer nanoseconds by the one rounding rule
/// of the whole project, [`aqm::Duration::try_from_secs_f64`]: to the nearest nanosecond,
/// halves away from zero. Negative, non-finite or too large input maps to 0; callers validate
/// before converting.
pub fn secs_to_ns(s: f64) -> Ns {
    aqm::Duration::try_from_secs_f64(s).map_or(0, aqm::Duration::as_nanos)
}

/// Converts integer nanoseconds to seconds.
pub fn ns_to_secs(ns: Ns) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}
