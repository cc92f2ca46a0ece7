//! Per-packet traces (`src/trace.rs`): stopping at full batches does not change the run, the
//! buffers never grow past their preallocation, and the rows add up to the link's counters.

mod common;

use aqm::Instant;
use netsim::trace::{TraceBatch, TraceKind, TRACE_SLACK};
use netsim::Simulation;
use serde_json::json;

fn config(batch: usize) -> netsim::SimConfig {
    let mut cfg = common::dumbbell(
        3,
        6.0,
        1.0,
        10e6,
        0.04,
        40,
        json!({"type": "codel"}),
        json!([{"kind": "tcp", "count": 6, "cc": "newreno"}]),
    );
    cfg.trace = vec!["R1->R2".into()];
    cfg.trace_batch = Some(batch);
    cfg
}

fn count(b: &TraceBatch, k: TraceKind) -> u64 {
    b.kind.iter().filter(|&&x| x == k as u8).count() as u64
}

/// Reference: the same run untraced (same summary, same events) and the link's own
/// conservation counters.
#[test]
fn traced_run_is_unchanged_bounded_and_adds_up() {
    let batch = 1000;
    let mut plain = Simulation::new(config(batch)).unwrap();
    plain.run();

    let mut sim = Simulation::new(config(batch)).unwrap();
    sim.start_trace();
    let (_, cap0, _) = sim.trace_buffers()[0].clone();
    assert_eq!(cap0, Some(batch + TRACE_SLACK));
    let end = Instant(6_000_000_000);
    let mut all = TraceBatch::default();
    let mut stops = 0;
    let mut largest = 0;
    loop {
        let reached = sim.run_until_traced(end);
        let mut b = TraceBatch::default();
        sim.drain_trace(&mut b);
        largest = largest.max(b.len());
        all.link.extend(b.link);
        all.time_ns.extend(b.time_ns);
        all.kind.extend(b.kind);
        if reached {
            break;
        }
        stops += 1;
    }
    assert!(stops >= 10, "{stops} stops");
    assert!(largest <= batch + TRACE_SLACK, "{largest}");
    assert_eq!(sim.trace_buffers()[0].1, cap0, "the buffer never grew");
    assert_eq!(sim.events(), plain.events());
    assert_eq!(sim.summary(), plain.summary());

    let st = sim.link_status("R1->R2").unwrap();
    let c = st.counters;
    let enq = count(&all, TraceKind::Enqueue);
    let deq = count(&all, TraceKind::Dequeue);
    let d_arr = count(&all, TraceKind::DropArrival);
    let d_vic = count(&all, TraceKind::DropVictim);
    let d_deq = count(&all, TraceKind::DropDequeue);
    assert_eq!(enq + d_arr, c.arrivals);
    assert_eq!(d_arr, c.drops_enqueue);
    assert_eq!(d_deq, c.drops_dequeue);
    assert_eq!(d_vic, c.drops_victim);
    assert!(deq == c.tx_pkts || deq == c.tx_pkts + 1);
    assert_eq!(enq, deq + d_vic + d_deq + st.queue_pkts as u64);
    assert_eq!(count(&all, TraceKind::Mark), c.marks);
    assert!(d_deq > 0, "CoDel dropped at dequeue");
    assert!(all.time_ns.windows(2).all(|w| w[0] <= w[1]));
}
