//! CAKE's qdisc checks against Linux's rules, worked by hand.

use super::*;
use crate::testutil::{no_drop, TestPacket};
use crate::time::BitsPerSec;

fn cake(cfg: CakeConfig, limit: u32) -> Cake<TestPacket> {
    let link = LinkInfo::new(BitsPerSec::from_mbps(100));
    Cake::new(&cfg, QueueLimit::Packets(limit), link, 7).unwrap()
}

fn cfg(f: impl FnOnce(&mut CakeConfig)) -> CakeConfig {
    let mut c = CakeConfig::default();
    f(&mut c);
    c
}

/// Keeps every flow of `flows` (flow id, src host, dst host, dscp) backlogged with
/// `size`-byte packets and takes `n` packets from an unshaped CAKE; bytes per flow.
fn backlogged(
    q: &mut Cake<TestPacket>,
    flows: &[(u64, u64, u64, u8)],
    size: u32,
    n: usize,
) -> Vec<u64> {
    let mut got = vec![0u64; flows.len()];
    let mut id = 0;
    let mut queued = vec![0u32; flows.len()];
    let mut now = Instant(0);
    for _ in 0..n {
        for (i, &(f, s, d, dscp)) in flows.iter().enumerate() {
            while queued[i] < 4 {
                id += 1;
                let p = TestPacket::at(id, size, now).flow(f).hosts(s, d).dscp(dscp);
                assert_eq!(q.enqueue(now, p, &mut no_drop()), Enqueue::Queued);
                queued[i] += 1;
            }
        }
        let p = q.dequeue(now, &mut no_drop()).expect("backlogged");
        let i = flows.iter().position(|x| x.0 == p.flow).unwrap();
        queued[i] -= 1;
        got[i] += p.size as u64;
        now = Instant(now.0 + 1000);
    }
    got
}

/// Host isolation (Linux DRR++ with `quantum_div[host_load]`): host A with 8 bulk flows,
/// host B with 1, all to distinct destinations. `triple-isolate` and `dual-srchost` give
/// each source host half (A's flows a quantum / 8 each); `flows` gives each flow 1/9.
/// Tolerance 2 %: the quantum's dither and the 16-bit `quantum_div` rounding.
#[test]
fn host_isolation_shares() {
    let mut flows: Vec<(u64, u64, u64, u8)> = (0..8).map(|i| (100 + i, 1, 50 + i, 0)).collect();
    flows.push((200, 2, 70, 0));
    for (mode, want_b) in [
        (FlowMode::TripleIsolate, 0.5),
        (FlowMode::DualSrchost, 0.5),
        (FlowMode::Flows, 1.0 / 9.0),
        (FlowMode::Srchost, 0.5),
    ] {
        let mut q = cake(cfg(|c| c.flow_mode = mode), 10_000);
        let got = backlogged(&mut q, &flows, 1000, 90_000);
        let total: u64 = got.iter().sum();
        let b = got[8] as f64 / total as f64;
        assert!(
            (b - want_b).abs() < 0.02,
            "{mode:?}: host B has {b:.4}, want {want_b:.4}"
        );
        assert_eq!(
            q.stats().dropped_dequeue,
            0,
            "{mode:?}: no COBALT drops at 1 ms sojourn"
        );
    }
    // dual-dsthost: A's flows go to 8 hosts, B's to one: per destination, 1/9 each.
    let mut q = cake(cfg(|c| c.flow_mode = FlowMode::DualDsthost), 10_000);
    let got = backlogged(&mut q, &flows, 1000, 90_000);
    let b = got[8] as f64 / got.iter().sum::<u64>() as f64;
    assert!((b - 1.0 / 9.0).abs() < 0.02, "dual-dsthost {b}");
}

/// DRR++ (Linux `cake_dequeue`): a new flow starts with one quantum in the new (sparse)
/// rotation and is served before bulk flows; one that uses its quantum becomes bulk.
#[test]
fn sparse_flows_go_first_then_turn_bulk() {
    let mut q = cake(cfg(|c| c.diffserv = TinMode::BestEffort), 10_000);
    let t = Instant(0);
    for i in 0..10 {
        q.enqueue(t, TestPacket::at(i, 1000, t).flow(1), &mut no_drop());
    }
    // flow 1 (new) starts with (1514 x 65535) >> 16 = 1513 bytes of deficit: two 1000-byte
    // packets, then it is out of deficit and, still backlogged, turns bulk
    for _ in 0..3 {
        assert_eq!(q.dequeue(t, &mut no_drop()).unwrap().flow, 1);
    }
    // refilled by (1514 x 65535 + dither) >> 16 = 1513 or 1514 (`cake_dequeue`'s dithering)
    let (_, f) = q.classify(&TestPacket::new(0, 1).flow(1));
    let d = q.deficit(0, f).unwrap();
    assert!(
        d == 1513 - 2000 + 1513 - 1000 || d == 1513 - 2000 + 1514 - 1000,
        "{d}"
    );
    let s = q.tin_stats(0).unwrap();
    assert_eq!((s.sparse_flows, s.bulk_flows), (0, 1));
    // a sparse arrival (flow 2) goes ahead of the bulk flow's backlog
    q.enqueue(t, TestPacket::at(99, 100, t).flow(2), &mut no_drop());
    assert_eq!(q.tin_stats(0).unwrap().sparse_flows, 1);
    assert_eq!(q.dequeue(t, &mut no_drop()).unwrap().id, 99);
    // unlimited: the flow quantum is 1514 (cake_set_rate with rate 0)
    assert_eq!(q.tin_stats(0).unwrap().flow_quantum, 1514);
}

/// Tins in shaped mode (`cake_dequeue`'s "highest-priority tin meeting its schedule"):
/// diffserv4 at 100 Mbit/s with all four tins backlogged; each tin's own shaper runs at its
/// threshold (Voice R/4, Video R/2, Bulk R/16) and the higher tin wins when eligible, so
/// Voice, Video and Bulk get their thresholds and Best Effort the rest: 25 %, 50 %,
/// 6.25 %, 18.75 %. Tolerance 1 % of the link (a tin's shaper may lag one packet).
#[test]
fn diffserv4_tins_take_their_thresholds() {
    let mut q = cake(
        cfg(|c| {
            c.diffserv = TinMode::Diffserv4;
            c.bandwidth = 100e6;
        }),
        100_000,
    );
    let dscp = [0u8, 8, 34, 46]; // BE, CS1, AF41, EF
    let mut got = [0u64; 4];
    let mut id = 0;
    let mut now = Instant(0);
    let end = 2_000_000_000u64;
    let mut queued = [0u32; 4];
    while now.0 < end {
        for t in 0..4 {
            while queued[t] < 20 {
                id += 1;
                let p = TestPacket::at(id, 1000, now)
                    .flow(t as u64)
                    .dscp(dscp[t])
                    .ect();
                q.enqueue(now, p, &mut no_drop());
                queued[t] += 1;
            }
        }
        match q.dequeue(now, &mut no_drop()) {
            Some(p) => {
                let t = p.flow as usize;
                queued[t] -= 1;
                got[t] += p.size as u64;
                assert_eq!(q.last_class() as usize, t);
            }
            None => now = q.ready_at().expect("shaped, backlogged"),
        }
    }
    let total: u64 = got.iter().sum();
    let share: Vec<f64> = got.iter().map(|&b| b as f64 / total as f64).collect();
    for (t, want) in [(0, 0.1875), (1, 0.0625), (2, 0.5), (3, 0.25)] {
        assert!(
            (share[t] - want).abs() < 0.01,
            "tin {t}: {:.4} want {want}",
            share[t]
        );
    }
    // the shaper's rate: 2 s at 100 Mbit/s, within one packet
    assert!((total as f64 * 8.0 / 2.0 - 100e6).abs() < 1e5, "{total}");
    assert_eq!(q.num_classes(), 4);
    assert_eq!(q.class_name(3), Some("voice"));
}

/// Tins in unlimited mode share by their DRR quanta: diffserv3 1024 : 64 : 256 (Best
/// Effort, Bulk, Voice), i.e. 1024/1344, 64/1344, 256/1344. Tolerance 1 %.
#[test]
fn unlimited_tins_share_by_quantum() {
    let mut q = cake(CakeConfig::default(), 100_000);
    let flows = [(1, 1, 1, 0u8), (2, 2, 2, 8), (3, 3, 3, 46)];
    let got = backlogged(&mut q, &flows, 1000, 60_000);
    let total: u64 = got.iter().sum();
    for (i, w) in [1024.0, 64.0, 256.0].iter().enumerate() {
        let s = got[i] as f64 / total as f64;
        assert!((s - w / 1344.0).abs() < 0.01, "tin {i}: {s}");
    }
}

/// The shaper's closed form: `bandwidth 20Mbit overhead 18 atm` (2 500 000 B/s) sends
/// back-to-back 1500-byte packets one per 1696 x 400 ns = 678 400 ns exactly
/// (`cake_advance_shaper`: (len x rate_ns) >> rate_shft with rate_ns = 400 x 2^25).
#[test]
fn shaper_spacing_is_exact_with_atm() {
    let mut q = cake(
        cfg(|c| {
            c.bandwidth = 20e6;
            c.overhead = 18.0;
            c.atm = config::Atm::Atm;
            c.diffserv = TinMode::BestEffort;
        }),
        10_000,
    );
    let t0 = Instant(1_000_000);
    for i in 0..200 {
        q.enqueue(t0, TestPacket::at(i, 1500, t0).ect(), &mut no_drop());
    }
    let mut now = t0;
    let mut times = vec![];
    while times.len() < 100 {
        match q.dequeue(now, &mut no_drop()) {
            Some(_) => times.push(now.0),
            None => now = q.ready_at().unwrap(),
        }
    }
    for (k, t) in times.iter().enumerate() {
        assert_eq!(*t, t0.0 + k as u64 * 678_400, "packet {k}");
    }
}

/// Memory limit (`cake_drop`): over the limit the head of the longest queue goes, and its
/// COBALT's BLUE rises (`cobalt_queue_full`). memlimit 5000 B: five 1000-byte packets of
/// flow 1 fit, a sixth packet (flow 2) pushes flow 1's head out.
#[test]
fn memlimit_drops_from_the_fattest() {
    let mut q = cake(cfg(|c| c.memlimit = 5000), 10_000);
    assert_eq!(q.buffer_limit(), 5000);
    // (BLUE moves at most once per target since its last change, at 0: start later)
    let t = Instant(10_000_000);
    for i in 0..5 {
        q.enqueue(t, TestPacket::at(i, 1000, t).flow(1), &mut no_drop());
    }
    let mut victims = vec![];
    let r = q.enqueue(t, TestPacket::at(9, 1000, t).flow(2), &mut |p, _| {
        victims.push(p.id)
    });
    assert_eq!(r, Enqueue::Queued);
    assert_eq!(victims, vec![0]);
    let (tin, f) = q.classify(&TestPacket::new(0, 1).flow(1));
    assert!(q.cobalt_vars(tin, f).unwrap().p_drop > 0);
    assert_eq!(q.tin_stats(0).unwrap().overlimit_drops, 1);
    // Linux's default limit: unlimited rate -> the link's buffer x psched_mtu (1514)
    let d = cake(CakeConfig::default(), 100);
    assert_eq!(d.buffer_limit(), 100 * 1514);
    // shaped: 4 x rate x rtt, at least 4 MiB, capped by the buffer
    let s = cake(cfg(|c| c.bandwidth = 1e9), 100_000);
    assert_eq!(s.buffer_limit(), 125_000_000 * 100_000 / 250_000);
}

/// Counters balance (received = dropped + dequeued + queued) through overflow and COBALT
/// drops, per tin and in total; `wash` clears the DSCP after classification.
#[test]
fn counters_balance_and_wash() {
    let mut q = cake(
        cfg(|c| {
            c.wash = true;
            c.bandwidth = 10e6;
        }),
        50,
    );
    let mut now = Instant(0);
    let mut dropped = 0u64;
    let mut out = 0u64;
    for i in 0..20_000u64 {
        let p = TestPacket::at(i, 1000, now)
            .flow(i % 7)
            .dscp(if i % 3 == 0 { 46 } else { 0 });
        if let Enqueue::Dropped(..) = q.enqueue(now, p, &mut |_, _| dropped += 1) {
            dropped += 1;
        }
        if i % 2 == 0 {
            while let Some(p) = q.dequeue(now, &mut |_, _| dropped += 1) {
                assert_eq!(p.dscp, 0, "washed");
                out += 1;
            }
        }
        now = Instant(now.0 + 400_000);
    }
    let s = q.stats();
    assert_eq!(s.received, 20_000);
    assert_eq!(
        s.received,
        s.dropped_enqueue()
            + s.dropped_victim
            + s.dropped_dequeue
            + s.dequeued
            + q.len_pkts() as u64
    );
    assert_eq!(dropped + out + q.len_pkts() as u64, 20_000);
    let sum: u64 = (0..3).map(|i| q.class_stats(i).unwrap().dequeued).sum();
    assert_eq!(sum, s.dequeued);
    assert!(q.class_stats(2).unwrap().dequeued > 0, "EF went to Voice");
}

/// Overload through the shaper: four diffserv4 tins each offered the whole shaped rate on
/// a link twice as fast, the memory limit dropping from the fattest queue; the qdisc keeps
/// sending at the shaped rate and its counters balance.
#[test]
fn overloaded_tins_through_the_shaper() {
    let mut q = cake(
        cfg(|c| {
            c.diffserv = TinMode::Diffserv4;
            c.bandwidth = 10e6;
        }),
        1000,
    );
    let dscp = [0u8, 8, 34, 46];
    let mut now = 0u64;
    let mut next_arr = [0u64; 4];
    let mut link_free = 0u64;
    let mut sent = 0u64;
    let mut id = 0;
    let end = 3_000_000_000u64;
    while now < end {
        for t in 0..4 {
            while next_arr[t] <= now {
                id += 1;
                let p = TestPacket::at(id, 1000, Instant(next_arr[t]))
                    .flow(t as u64)
                    .dscp(dscp[t]);
                q.enqueue(Instant(next_arr[t]), p, &mut |_, _| {});
                next_arr[t] += 800_000;
            }
        }
        if link_free <= now {
            match q.dequeue(Instant(now), &mut |_, _| {}) {
                Some(p) => {
                    sent += p.size as u64;
                    link_free = now + 400_000;
                }
                None => {
                    let r = q.ready_at().expect("packets wait for the shaper");
                    assert!(r.0 > now);
                    link_free = r.0;
                }
            }
        }
        now = link_free.min(*next_arr.iter().min().unwrap());
    }
    let rate = sent as f64 * 8.0 / 3.0;
    assert!((rate / 10e6 - 1.0).abs() < 0.01, "{rate}");
    let s = q.stats();
    assert_eq!(
        s.received,
        s.dropped_enqueue()
            + s.dropped_victim
            + s.dropped_dequeue
            + s.dequeued
            + q.len_pkts() as u64
    );
}

/// Memory per flow queue (docs/aqm/cake.md quotes it): the scheduling record, the hash's slot,
/// tag and host record, and the packet pool's bucket.
#[test]
fn per_queue_memory() {
    use std::mem::size_of;
    let per = size_of::<Flow>()
        + size_of::<Slot>()
        + size_of::<u32>()
        + size_of::<hash::Host>()
        + size_of::<crate::flowq::Bucket>();
    assert_eq!(per, 118);
    let q = cake(CakeConfig::default(), 100);
    assert!(q.memory_bytes() >= 3 * 1024 * 118);
}

/// `ingress` (Linux `cake_drop` / `cake_dequeue` with `CAKE_FLAG_INGRESS`): a dropped packet
/// is charged to the shaper, not to its failsafe. 20 Mbit/s (400 ns per byte), memlimit
/// 2000 B, three 1000-byte packets at t: the third pushes the first out. With ingress the
/// clock is t + 400 us (the drop) + 400 us (the packet sent), the failsafe t + 600 us, so
/// the next send is at t + 600 us; without, the clock alone says t + 400 us.
#[test]
fn ingress_charges_drops_to_the_shaper() {
    for (ingress, next) in [(true, 600_000u64), (false, 400_000)] {
        let mut q = cake(
            cfg(|c| {
                c.bandwidth = 20e6;
                c.memlimit = 2000;
                c.ingress = ingress;
                c.diffserv = TinMode::BestEffort;
            }),
            10_000,
        );
        let t = Instant(1_000_000_000);
        let mut victims = 0;
        for i in 0..3 {
            q.enqueue(t, TestPacket::at(i, 1000, t), &mut |_, _| victims += 1);
        }
        assert_eq!(victims, 1);
        assert_eq!(q.dequeue(t, &mut no_drop()).unwrap().id, 1);
        assert_eq!(q.ready_at(), Some(Instant(t.0 + next)), "ingress {ingress}");
    }
}

/// `autorate-ingress` (Linux `cake_enqueue`'s capacity estimate): arrivals in pairs 400 us
/// apart every 1.6 ms (10 Mbit/s of 1000-byte packets, bursts at 20 Mbit/s). Each gap longer
/// than the EWMA of the gaps closes a window and feeds bytes / window into the peak-rate EWMA;
/// every 250 ms the shaper is set to 15/16 of it. The estimate measures what arrives: it ends
/// between the mean and the burst rate (10 and 20 Mbit/s), and the shaper at 15/16 of it.
#[test]
fn autorate_ingress_follows_the_arrivals() {
    let mut q = cake(cfg(|c| c.autorate_ingress = true), 100_000);
    assert_eq!(q.rate_bytes(), 0);
    let mut id = 0;
    for k in 0..1250u64 {
        for dt in [0, 400_000] {
            let t = Instant(k * 1_600_000 + dt);
            id += 1;
            q.enqueue(t, TestPacket::at(id, 1000, t).flow(id % 3), &mut |_, _| {});
            while q.dequeue(t, &mut |_, _| {}).is_some() {}
        }
    }
    let est = q.capacity_estimate();
    assert!((1_250_000..=2_500_000).contains(&est), "estimate {est} B/s");
    let r = q.rate_bytes();
    assert!(
        r > 0 && r <= est * 15 / 16 + est / 8,
        "rate {r}, estimate {est}"
    );
}
