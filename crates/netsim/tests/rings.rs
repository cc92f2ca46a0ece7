//! Queue storage is lent between queues (`netsim::queue::SpareRings`): a queue that empties
//! gives its storage back if small, so the access links of a large dumbbell, each of which
//! queued its flow's initial window once, hold storage only while they hold packets.

use netsim::Simulation;
use serde_json::json;

/// 2000 flows with their own access links, starting over 0.2 s: every sender's access
/// link queued 9 packets of its initial window. At the end, no access link that is empty
/// holds storage (before the lending, all 2000 kept 9 slots, 432 bytes each), and the
/// storage the access links hold is at most one 64-slot ring per queue holding packets
/// now, plus the spare rings: at most a few, since bursts of different flows rarely overlap.
/// Once the run reaches its end, the spare rings are given back.
#[test]
fn emptied_access_queues_hold_no_storage() {
    let cfg = experiment::scenario::Scenario::from_value(&json!({
        "seed": 3, "duration": 0.6, "warmup": 0.1,
        "dumbbell": {"rate": 1e9, "rtt": 0.02, "buffer": 1700},
        "aqm": {"type": "codel"},
        "flows": [{"count": 2000, "cc": "cubic", "start_jitter": 0.2}]
    }))
    .unwrap()
    .config;
    let mut sim = Simulation::new(cfg).unwrap();
    sim.run_until(aqm::Instant(599_999_999));
    sim.check_conservation().unwrap();
    let (mut held, mut busy, mut access) = (0usize, 0usize, 0usize);
    for name in sim.link_names() {
        if name.starts_with("R1->R2") || name.starts_with("R2->R1") {
            continue;
        }
        access += 1;
        let st = sim.link_status(&name).unwrap();
        if st.queue_pkts == 0 {
            assert_eq!(st.queue_memory_bytes, 0, "{name}: empty, holds storage");
        } else {
            busy += 1;
        }
        held += st.queue_memory_bytes;
    }
    assert_eq!(access, 8000);
    let ring = 64 * std::mem::size_of::<netsim::packet::Packet>();
    assert!(
        held <= busy * ring,
        "{held} bytes held by {busy} busy access queues"
    );
    let spare = sim.spare_rings();
    assert!((1..=64).contains(&spare), "{spare} spare rings");
    // reaching the end gives storage back: the spare rings go
    sim.run();
    assert_eq!(sim.spare_rings(), 0);
    sim.check_conservation().unwrap();
}
