//! Memory hints for the simulator's large tables, safe to call: a cache-line prefetch for
//! the event loop's lookahead, and transparent huge pages for its largest arrays.
//!
//! With hundreds of thousands of flows, the links and flows an event touches lie in main
//! memory, each behind a translation the TLB no longer holds. `netsim`'s event loop knows a
//! few arrivals ahead which link, route entry and flow they will touch (its propagation
//! lanes are in time order) and asks for them early ([`prefetch`]), so that the waits
//! overlap instead of coming one after the other; and its link and flow tables ask the
//! kernel for 2 MB pages ([`huge_pages`]), one TLB entry for what took 512.
//!
//! The model crates (`aqm`, `experiment`, `netsim`) forbid `unsafe`, and stable Rust has no
//! safe form of either: x86-64's prefetch is the intrinsic `_mm_prefetch`, an `unsafe fn`
//! only because it is declared for the SSE target feature, which every x86-64 processor
//! has; `madvise` is a system call. So they are called here. Both are hints: neither
//! changes a byte the program can read. A prefetch cannot fault whatever the address, and
//! the processor may drop it; `MADV_HUGEPAGE` only makes a range eligible for huge pages,
//! and is ignored where the kernel has them off. The functions only ever pass addresses
//! inside a live reference or vector all the same. On other targets they do nothing.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

/// Bytes in a cache line (x86-64, and the common 64 of other targets).
pub const LINE: usize = 64;

/// Asks the processor to bring the cache line that holds byte `offset` of `*r` (its last
/// byte if `offset` is past the end) into every cache level. Nothing is read.
#[inline(always)]
pub fn prefetch_line<T>(r: &T, offset: usize) {
    let size = std::mem::size_of::<T>();
    if size == 0 {
        return;
    }
    let p = (r as *const T)
        .cast::<u8>()
        .wrapping_add(offset.min(size - 1));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline, so the intrinsic's target feature is
    // present; a prefetch reads nothing architecturally and cannot fault; `p` lies inside
    // `*r`.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch_line`] for every cache line `*r` spans.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    let size = std::mem::size_of::<T>();
    let mut off = 0;
    while off < size {
        prefetch_line(r, off);
        off += LINE;
    }
    // (`*r` need not start on a line: its last bytes may be on one more)
    prefetch_line(r, size);
}

/// Bytes in a transparent huge page (x86-64 and most Linux targets).
pub const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back the 2 MB-aligned part of `v`'s allocated storage (its capacity,
/// used or not) with transparent huge pages as it is first touched (`madvise` with
/// `MADV_HUGEPAGE`). Worth it for a vector of many megabytes read at random, before it is
/// filled: pages touched already keep their size. Returns whether the kernel took the
/// advice (false on other systems, with huge pages off, or for a vector under 2 MB).
pub fn huge_pages<T>(v: &Vec<T>) -> bool {
    let start = v.as_ptr() as usize;
    let len = v.capacity().saturating_mul(std::mem::size_of::<T>());
    let lo = start.next_multiple_of(HUGE_PAGE);
    let hi = (start + len) / HUGE_PAGE * HUGE_PAGE;
    if hi <= lo {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `[lo, hi)` lies inside `v`'s allocation, which stays mapped while `v` is
        // borrowed; MADV_HUGEPAGE changes no content, only how later faults are served.
        let r = unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
        r == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice covers only whole huge pages inside the vector's storage: none for a
    /// small vector, and on Linux with huge pages available to `madvise` (the kernel's
    /// `enabled` setting not `never`), the kernel takes it for a large one.
    #[test]
    fn huge_pages_only_inside_the_storage() {
        let small: Vec<u64> = Vec::with_capacity(1000);
        assert!(!huge_pages(&small));
        let large: Vec<u64> = Vec::with_capacity(4 * HUGE_PAGE / 8);
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        match thp {
            Ok(s) if !s.contains("[never]") => assert!(huge_pages(&large)),
            _ => eprintln!("transparent huge pages unavailable here: advice not checked"),
        }
    }
}
