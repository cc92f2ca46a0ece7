//! Weighted fair queueing by **start-time fair queueing** (SFQ in the paper; "STFQ" here, to
//! keep it apart from stochastic fairness queueing): P. Goyal, H. M. Vin and H. Cheng,
//! "Start-Time Fair Queuing: A Scheduling Algorithm for Integrated Services Packet Switching
//! Networks", ACM SIGCOMM 1996 / IEEE/ACM Transactions on Networking 5(5), 1997.
//!
//! The paper's rules, with class `f` of weight `r_f` (its "rate"):
//! 1. A packet `p_f^j` of `l` bytes arriving at `A` gets a start tag
//!    `S(p_f^j) = max(v(A), F(p_f^{j-1}))` and a finish tag `F(p_f^j) = S(p_f^j) + l / r_f`
//!    (`F(p_f^0) = 0`).
//! 2. `v(0) = 0`. During a busy period `v(t)` is the start tag of the packet in service; at
//!    the end of a busy period `v` is the largest finish tag of the packets served.
//! 3. Packets are served in increasing order of start tags (ties here: the lower class
//!    index).
//!
//! Why start-time rather than self-clocked fair queueing (Golestani 1994, which serves by
//! finish tag with `v` = finish tag of the packet in service): both are self-clocked (no
//! fluid reference system) and cost the same, and STFQ's fairness bound is the same as
//! SCFQ's while its delay bound is better (the paper's Sections 3-4); but the deciding reason
//! here is the class model: a class is a FIFO with its own AQM, and a dequeue-side AQM
//! (CoDel) may drop the head and send a later packet. STFQ chooses the class by its start
//! tag, which does not depend on which packet comes out; SCFQ would choose by the head's
//! finish tag `S + l_head / r`, which is wrong as soon as the AQM drops that head.
//!
//! Implementation (per class, no per-packet state): each class is a FIFO, so when it is
//! backlogged the start tag of each packet is the finish tag of the one before it (a
//! backlogged class's `F` is never below `v`); the scheduler keeps for each class the start
//! tag of its head packet and the finish tag of the last packet it sent. A class that
//! becomes backlogged gets `S = max(v, F_last)`; `dequeue` serves the backlogged class with
//! the smallest `S`, sets `v = S`, and charges the packet actually sent: `F = S + l / r`,
//! next `S = F`. Packets dropped by a class's AQM at dequeue or as victims of the shared
//! buffer are not charged (as if they had never arrived). The busy period ends when an
//! arrival finds the scheduler empty; `v` then becomes the largest finish tag, which is at
//! least every class's `F_last`, so every class's next start tag is `v`: the scheduler
//! resets `v` and all tags to 0 (same order, bounded numbers). (The paper's busy period
//! also covers the transmission of the last packet dequeued; a qdisc does not see it end,
//! so an arrival during it starts a new period here.)
//!
//! Tags are integers: virtual bytes per unit weight scaled by 2^32 (`u128`), so ties are
//! exact and runs are bit-for-bit deterministic; a class's cost per byte `round(2^32 / r)`
//! differs from `2^32 / r` by at most 1.2e-4 relative for weights up to 1e6. `dequeue`
//! scans the classes (at most 255) for the smallest start tag.
//!
//! Classes, their configuration and parameter paths, classification, the shared buffer and
//! its victim rule are those of every class-based scheduler ([`crate::classes`], shared with
//! [`crate::drr`]).

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::classes::{class_list_spec, class_set_ops, ClassList, ClassSet};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::qdisc::ops::{QdiscOps, QdiscSpec};
use crate::time::Instant;

/// WFQ's configuration: the class list (the class model of [`crate::drr`]).
pub type WfqConfig = ClassList;

/// Tag units per virtual byte at weight 1.
const SCALE: f64 = 4_294_967_296.0;

/// Parameter descriptions of `wfq` (for `aqmlab aqms`).
pub fn describe() -> Vec<ParamInfo> {
    ClassList::describe(
        "Weight of class NAME (its rate in start-time fair queueing, Goyal et al. 1996): a \
         packet of L bytes advances the class's virtual time by L/weight; backlogged classes \
         share the link in proportion to their weights.",
    )
}

/// Tag units a byte costs a class of weight `w` (at least 1).
fn cost_per_byte(w: f64) -> u128 {
    ((SCALE / w).round() as u128).max(1)
}

#[derive(Debug, Clone, Copy)]
struct Tags {
    /// Start tag of the class's head packet (meaningful while the class is backlogged).
    start: u128,
    /// Finish tag of the last packet the class sent.
    finish: u128,
    /// Tag units per byte (`2^32 / weight`).
    per_byte: u128,
}

/// Running state of a WFQ (start-time fair queueing) scheduler.
#[derive(Debug, Clone)]
pub struct Wfq<P> {
    set: ClassSet<P>,
    tags: Vec<Tags>,
    /// System virtual time `v`.
    vtime: u128,
}

impl<P> QdiscSpec for Wfq<P> {
    const NAME: &'static str = "wfq";
    type Config = WfqConfig;
    fn describe() -> Vec<ParamInfo> {
        describe()
    }
    class_list_spec!();
}

impl<P: Packet> QdiscOps<P> for Wfq<P> {
    /// A scheduler with `cfg`'s classes ([`ClassSet::new`]).
    fn new(
        cfg: &WfqConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        let set = ClassSet::new(cfg, limit, link, seed)?;
        let tags = cfg
            .classes
            .iter()
            .map(|c| Tags {
                start: 0,
                finish: 0,
                per_byte: cost_per_byte(c.weight),
            })
            .collect();
        Ok(Wfq {
            set,
            tags,
            vtime: 0,
        })
    }

    /// Offers a packet to its class (rule 1 for a class that becomes backlogged). Victims
    /// dropped to make room go to `on_drop`.
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        if self.set.len_pkts() == 0 {
            // End of the busy period: v = max F >= every F_last; restart from 0.
            self.vtime = 0;
            for t in &mut self.tags {
                t.start = 0;
                t.finish = 0;
            }
        }
        let i = self.set.classify(&pkt);
        let was_idle = self.set.class_is_empty(i);
        let r = self.set.offer(now, i, pkt);
        if matches!(r, Enqueue::Dropped(..)) {
            return r;
        }
        if was_idle {
            let t = &mut self.tags[i];
            t.start = self.vtime.max(t.finish);
        }
        self.set.drop_victims(now, on_drop);
        r
    }

    /// The next packet: from the backlogged class with the smallest start tag (rule 3);
    /// child dequeue-side drops go to `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        loop {
            let mut best: Option<usize> = None;
            for (i, t) in self.tags.iter().enumerate() {
                if !self.set.class_is_empty(i) && best.is_none_or(|b| t.start < self.tags[b].start)
                {
                    best = Some(i);
                }
            }
            let i = best?;
            if let Some(p) = self.set.take(now, i, on_drop) {
                let t = &mut self.tags[i];
                self.vtime = t.start;
                t.finish = t.start + p.size_bytes() as u128 * t.per_byte;
                t.start = t.finish;
                return Some(p);
            }
            // The class's AQM dropped all it held: nothing to charge; next class.
            debug_assert!(self.set.class_is_empty(i));
        }
    }

    /// Changes one parameter by path (`classes.NAME.weight`, `classes.NAME.aqm.PARAM`) while
    /// running; tags and AQM states are kept (a new weight prices the class's next packets).
    /// On error nothing changes.
    fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError> {
        if let Some(i) = self.set.set_param(Self::NAME, path, value)? {
            self.tags[i].per_byte = cost_per_byte(value);
        }
        Ok(())
    }

    class_set_ops!();
}

impl<P: Packet> Wfq<P> {
    /// The classes: queues, counters, lengths, names, timers ([`ClassSet`]).
    #[inline]
    pub fn classes(&self) -> &ClassSet<P> {
        &self.set
    }

    /// The system virtual time `v`, virtual bytes (bytes per unit weight).
    pub fn vtime(&self) -> f64 {
        self.vtime as f64 / SCALE
    }

    /// Start tag of class `i`'s head packet, virtual bytes (None if the class is empty).
    pub fn start_tag(&self, i: usize) -> Option<f64> {
        if i < self.tags.len() && !self.set.class_is_empty(i) {
            Some(self.tags[i].start as f64 / SCALE)
        } else {
            None
        }
    }

    /// Finish tag of the last packet class `i` sent, virtual bytes.
    pub fn finish_tag(&self, i: usize) -> Option<f64> {
        self.tags.get(i).map(|t| t.finish as f64 / SCALE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::ClassConfig;
    use crate::config::AqmConfig;
    use crate::testutil::TestPacket;
    use crate::time::BitsPerSec;

    fn wfq(weights: &[f64], limit: u32) -> Wfq<TestPacket> {
        let cfg = WfqConfig {
            classes: weights
                .iter()
                .enumerate()
                .map(|(i, &w)| ClassConfig {
                    name: format!("c{i}"),
                    weight: w,
                    aqm: AqmConfig::DropTail(Default::default()),
                })
                .collect(),
        };
        let link = LinkInfo::new(BitsPerSec::from_mbps(10));
        Wfq::new(&cfg, QueueLimit::Packets(limit), link, 1).unwrap()
    }

    fn put(q: &mut Wfq<TestPacket>, id: u64, class: u8, size: u32) {
        let r = q.enqueue(
            Instant::ZERO,
            TestPacket::new(id, size).class(class),
            &mut |_, _| panic!("no victim expected"),
        );
        assert!(matches!(r, Enqueue::Queued));
    }

    /// Goyal et al.'s rules by hand. Classes a (weight 1), b (2), c (4).
    /// t0: a0 (1000 B), a1 (500), b0 (1000), b1 (1000), b2 (2000) arrive, v = 0:
    ///   S(a0) = 0, F = 1000; S(a1) = 1000, F = 1500;
    ///   S(b0) = 0, F = 500; S(b1) = 500, F = 1000; S(b2) = 1000, F = 2000.
    /// Served by start tag (ties to the lower class): a0 (S 0, v 0), b0 (0, 0), b1 (500,
    /// 500), a1 (1000, 1000; a is now idle with F = 1500).
    /// Then c0, c1 (1000 B each) arrive: S(c0) = max(v = 1000, F_c = 0) = 1000, F = 1250;
    /// S(c1) = 1250, F = 1500. Served: b2 (S 1000, v 1000, F_b = 2000), c0 (1000, 1000),
    /// c1 (1250, 1250). The scheduler is empty: the next arrival starts a new busy period
    /// (v = max F = 2000, every S = v: all tags restart from 0).
    #[test]
    fn start_tags_by_hand() {
        let mut q = wfq(&[1.0, 2.0, 4.0], 100);
        put(&mut q, 0, 0, 1000);
        put(&mut q, 1, 0, 500);
        for (id, s) in [(10, 1000), (11, 1000), (12, 2000)] {
            put(&mut q, id, 1, s);
        }
        assert_eq!(
            (q.start_tag(0), q.start_tag(1), q.start_tag(2)),
            (Some(0.0), Some(0.0), None)
        );
        let mut seen = Vec::new();
        let step = |q: &mut Wfq<TestPacket>| {
            let p = q.dequeue(Instant(1), &mut |_, _| panic!()).unwrap();
            (p.id, q.vtime())
        };
        for _ in 0..4 {
            seen.push(step(&mut q));
        }
        assert_eq!(seen, vec![(0, 0.0), (10, 0.0), (11, 500.0), (1, 1000.0)]);
        assert_eq!(q.finish_tag(0), Some(1500.0));
        assert_eq!(q.start_tag(0), None);
        put(&mut q, 20, 2, 1000);
        put(&mut q, 21, 2, 1000);
        assert_eq!(
            (q.start_tag(1), q.start_tag(2)),
            (Some(1000.0), Some(1000.0))
        );
        for _ in 0..3 {
            seen.push(step(&mut q));
        }
        assert_eq!(&seen[4..], &[(12, 1000.0), (20, 1000.0), (21, 1250.0)]);
        assert_eq!(
            (q.finish_tag(0), q.finish_tag(1), q.finish_tag(2)),
            (Some(1500.0), Some(2000.0), Some(1500.0))
        );
        assert!(q.dequeue(Instant(2), &mut |_, _| panic!()).is_none());
        // New busy period.
        put(&mut q, 30, 1, 1000);
        assert_eq!(
            (q.vtime(), q.start_tag(1), q.finish_tag(1)),
            (0.0, Some(0.0), Some(0.0))
        );
    }

    /// Backlogged classes of weights 1:2:3 with 1000-byte packets: after n dequeues each class
    /// has sent its weighted share within one packet (the paper's fairness bound,
    /// |W_f/r_f - W_m/r_m| <= l_f/r_f + l_m/r_m).
    #[test]
    fn shares_follow_weights() {
        let mut q = wfq(&[1.0, 2.0, 3.0], 1000);
        let mut id = 0;
        let mut sent = [0f64; 3];
        for n in 1..=6000 {
            for c in 0..3u8 {
                while q.classes().class_queue(c as usize).unwrap().len_pkts() < 5 {
                    put(&mut q, id, c, 1000);
                    id += 1;
                }
            }
            let p = q.dequeue(Instant(1), &mut |_, _| {}).unwrap();
            sent[p.class as usize] += p.size as f64;
            let norm: Vec<f64> = sent
                .iter()
                .zip([1.0, 2.0, 3.0])
                .map(|(s, w)| s / w)
                .collect();
            for f in 0..3 {
                for m in 0..3 {
                    let bound = 1000.0 / [1.0, 2.0, 3.0][f] + 1000.0 / [1.0, 2.0, 3.0][m];
                    assert!(
                        (norm[f] - norm[m]).abs() <= bound + 1e-6,
                        "after {n}: {sent:?}"
                    );
                }
            }
        }
        assert_eq!(sent.iter().sum::<f64>(), 6_000_000.0);
        assert!((sent[2] / sent[0] - 3.0).abs() < 0.01, "{sent:?}");
    }

    /// A class that was idle gets no credit for it: it starts at the current v, not at 0.
    #[test]
    fn idle_class_gets_no_credit() {
        let mut q = wfq(&[1.0, 1.0], 1000);
        for id in 0..200 {
            put(&mut q, id, 0, 1000);
        }
        for _ in 0..100 {
            q.dequeue(Instant(1), &mut |_, _| {}).unwrap();
        }
        assert_eq!(q.vtime(), 99_000.0);
        for id in 0..50 {
            put(&mut q, 1000 + id, 1, 1000);
        }
        assert_eq!(q.start_tag(1), Some(99_000.0));
        let mut from_b = 0;
        for _ in 0..20 {
            from_b += q.dequeue(Instant(1), &mut |_, _| {}).unwrap().class as usize;
        }
        assert_eq!(from_b, 10);
    }

    /// The shared buffer drops the fattest class's head; the next packet inherits its start
    /// tag (dropped packets are not charged). Paths change weights while running.
    #[test]
    fn victims_and_paths() {
        let mut q = wfq(&[1.0, 1.0], 4);
        for id in 0..4 {
            put(&mut q, id, 0, 1000);
        }
        let mut victims = Vec::new();
        q.enqueue(
            Instant::ZERO,
            TestPacket::new(9, 1000).class(1),
            &mut |p, _| victims.push(p.id),
        );
        assert_eq!(victims, vec![0]);
        assert_eq!(q.start_tag(0), Some(0.0));
        assert_eq!(q.dequeue(Instant(1), &mut |_, _| {}).unwrap().id, 1);
        q.set_param("classes.c1.weight", 4.0).unwrap();
        assert_eq!(q.config().classes[1].weight, 4.0);
        assert_eq!(q.dequeue(Instant(1), &mut |_, _| {}).unwrap().id, 9);
        assert_eq!(q.finish_tag(1), Some(250.0));
        let e = q.set_param("classes.c9.weight", 1.0).unwrap_err();
        assert!(e.to_string().contains("c0, c1"), "{e}");
        let e = q.set_param("classes.c0.weight", -1.0).unwrap_err();
        assert_eq!(e.key(), Some("classes.c0.weight"));
    }
}
