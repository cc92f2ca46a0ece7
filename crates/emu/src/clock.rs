//! The forwarder's clock (`CLOCK_MONOTONIC` in integer nanoseconds) and the scheduling
//! settings of its thread that bound its wake-up error.
//!
//! The same clock as Python's `time.monotonic_ns()`, so the traffic programs in the
//! namespaces and the forwarder agree on the run's origin `t0` without exchanging messages.

/// Nanoseconds of `CLOCK_MONOTONIC` (never goes back; unaffected by wall-clock changes).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets the calling thread's timer slack to 1 ns (`PR_SET_TIMERSLACK`), so `ppoll` timeouts
/// expire when asked rather than up to 50 µs (the default slack) later.
pub fn tight_timer_slack() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer argument; it cannot fail for 1.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Real-time priority of the forwarder thread under `SCHED_FIFO` (1..=99; low, so kernel
/// threads still preempt it). Its loop sleeps in `ppoll` between packets, and the kernel's
/// real-time throttling keeps 5 % of each second for other tasks.
pub const FIFO_PRIORITY: i32 = 10;

/// Puts the calling thread under `SCHED_FIFO` at [`FIFO_PRIORITY`], so compiler jobs and
/// other load on a small machine do not delay packet releases; false if refused (not root).
pub fn realtime_priority() -> bool {
    let p = libc::sched_param {
        sched_priority: FIFO_PRIORITY,
    };
    // SAFETY: p is a valid sched_param; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

#[cfg(test)]
mod tests {
    #[test]
    fn monotonic_and_advancing() {
        let a = super::now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = super::now_ns();
        assert!(b >= a + 2_000_000, "{a} -> {b}");
    }
}
