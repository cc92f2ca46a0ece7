//! Hot-path allocation check: in steady state the simulator does not
//! allocate per packet. A counting global allocator (this test binary
//! only) measures heap allocations between t = 20 s and t = 40 s of a
//! 20-flow dumbbell (with SACK, ECN-marking CoDel, delayed ACKs). Reference:
//! the design rule "no heap allocation per packet per hop"; what is left is
//! amortised growth of the time-series columns (a few reallocations per
//! doubling), so the bound is 1 allocation per 10 000 packet transmissions
//! (20 s: ~270 000 transmissions).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

mod common;

use aqm::Instant;
use common::scenario;
use netsim::Simulation;
use serde_json::json;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// CoDel, then SQM (8 elephant queues for 20 flows: 12 in the reserved queue; the sketch
/// restarts every second, slots are looked up and the law drawn per packet). One test: the
/// allocation counter is global to the binary, so the runs must not overlap.
#[test]
fn no_allocation_per_packet_in_steady_state() {
    steady_state(json!({"type": "codel", "ecn": true}), None);
    steady_state(json!({"type": "sqm", "queues": 8, "ecn": true}), None);
    // a fat tree: every packet's ECMP choice, per flow and sprayed
    for ecmp in ["flow", "packet"] {
        steady_state(
            json!({"type": "codel", "ecn": true}),
            Some(json!({"k": 4, "rate": 20e6, "delay": 0.01, "buffer": 400, "ecmp": ecmp})),
        );
    }
}

fn steady_state(aqm: serde_json::Value, fat_tree: Option<serde_json::Value>) {
    let mut doc = json!({
        "seed": 1, "duration": 40.0, "warmup": 5.0,
        "dumbbell": {"rate": 20e6, "rtt": 0.08, "buffer": 400},
        "aqm": aqm,
        "flows": [
            {"count": 10, "sack": true, "delack": true},
            {"count": 10, "cc": "cubic", "ecn": true}
        ]
    });
    if let Some(ft) = fat_tree {
        doc.as_object_mut().unwrap().remove("dumbbell");
        doc["fat_tree"] = ft;
        doc["flows"] = json!([{"pattern": "permutation", "sack": true, "cc": "cubic"}]);
    }
    let cfg = scenario(doc);
    let mut sim = Simulation::new(cfg).unwrap();
    sim.run_until(Instant(20_000_000_000));
    let a0 = ALLOCS.load(Ordering::Relaxed);
    let p0 = sim.summary().packets_forwarded;
    sim.run_until(Instant(40_000_000_000));
    let a1 = ALLOCS.load(Ordering::Relaxed);
    // `summary()` itself allocates; count it on both sides.
    let p1 = sim.summary().packets_forwarded;
    let a2 = ALLOCS.load(Ordering::Relaxed);
    // (saturating: the run itself may allocate nothing while the two summaries differ by a few)
    let allocs = (a1 - a0).saturating_sub(a2 - a1);
    let pkts = p1 - p0;
    eprintln!("{allocs} allocations for {pkts} packet transmissions");
    assert!(pkts > 200_000);
    assert!(
        (allocs as f64) < pkts as f64 / 10_000.0,
        "{allocs} allocations for {pkts}"
    );
    sim.check_conservation().unwrap();
}
