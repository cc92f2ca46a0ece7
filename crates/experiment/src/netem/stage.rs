//! The impairment stage: netem's enqueue and dequeue (Linux `net/sched/sch_netem.c`,
//! `netem_enqueue`, `netem_dequeue`, `tfifo_enqueue`, `get_slot_next`) with time passed in,
//! generic over the packet type, so that the simulator and the emulator run the same code.
//!
//! A caller offers each packet with [`Netem::enqueue`], then takes what can leave with
//! [`Netem::dequeue`] until it returns `None`; the last `None` sets [`Netem::watchdog`], the
//! time at which the caller tries again (the kernel's `qdisc_watchdog`): a watchdog that was
//! replaced before it fired does nothing, as a re-armed hrtimer.

use std::collections::VecDeque;
use std::sync::Arc;

use super::dist::{tabledist, Crandom};
use super::loss::Loss;
use super::spec::NetemSpec;
use crate::rng::Rng;
use crate::time::Ns;

/// What the stage needs of a packet.
pub trait NetemPacket: Clone {
    /// Length in bytes (slots count bytes).
    fn netem_len(&self) -> u32;
    /// Sets CE on an ECN-capable packet (`INET_ECN_set_ce`); false if it is not one.
    fn netem_set_ce(&mut self) -> bool;
}

/// Cumulative counters of one stage (packets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetemCounters {
    /// Packets offered, duplicates not included.
    pub arrivals: u64,
    /// Dropped by the loss model, or because the stage held `limit` packets.
    pub drops: u64,
    /// Of `drops`, those refused because the stage was full (`limit`).
    pub limit_drops: u64,
    /// Extra copies made by `duplicate` (each goes through the stage on its own).
    pub duplicates: u64,
    /// Sent ahead of the queue by `reorder` (tc's `requeues`).
    pub reordered: u64,
    /// Corrupted (`corrupt`): delivered with a flipped bit, i.e. discarded by the receiver;
    /// aqmlab drops them where they leave the stage.
    pub corrupted: u64,
    /// Lost packets that `ecn` CE-marked instead.
    pub marks: u64,
    /// Packets that left the stage after one that entered after them (RFC 4737's
    /// reordered packets: by jitter or by `reorder`).
    pub late: u64,
    /// Packets that left the stage (corrupted ones included).
    pub released: u64,
}

struct Held<P> {
    tts: Ns,
    seq: u64,
    corrupt: bool,
    pkt: P,
}

/// The slot state (`q->slot`).
#[derive(Clone, Copy, Debug)]
struct SlotState {
    next: Ns,
    packets_left: i64,
    bytes_left: i64,
}

/// One link's netem stage.
pub struct Netem<P> {
    spec: Arc<NetemSpec>,
    rng: Rng,
    delay_cor: Crandom,
    dup_cor: Crandom,
    reorder_cor: Crandom,
    corrupt_cor: Crandom,
    loss: Loss,
    counter: u32,
    /// `sch->q`: packets put at the head by `reorder`, leaving at once.
    head: VecDeque<Held<P>>,
    /// The tfifo: by time to send, FIFO among equal times.
    tfifo: VecDeque<Held<P>>,
    slot: Option<SlotState>,
    seq: u64,
    max_released: Option<u64>,
    watchdog: Option<Ns>,
    /// The counters.
    pub ctr: NetemCounters,
}

impl<P> std::fmt::Debug for Netem<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Netem")
            .field("spec", &self.spec.text)
            .field("held", &(self.head.len() + self.tfifo.len()))
            .field("ctr", &self.ctr)
            .finish()
    }
}

impl<P: NetemPacket> Netem<P> {
    /// A stage running `spec` from time 0, its randomness from `rng`.
    pub fn new(spec: Arc<NetemSpec>, mut rng: Rng) -> Netem<P> {
        // init_crandom draws each stream's previous value
        let delay_cor = Crandom::new(spec.delay_corr, &mut rng);
        let dup_cor = Crandom::new(spec.dup_corr, &mut rng);
        let reorder_cor = Crandom::new(spec.reorder_corr, &mut rng);
        let corrupt_cor = Crandom::new(spec.corrupt_corr, &mut rng);
        let loss = Loss::new(spec.loss, &mut rng);
        let slot = spec.slot.map(|s| SlotState {
            next: 0,
            packets_left: s.max_packets as i64,
            bytes_left: s.max_bytes as i64,
        });
        Netem {
            spec,
            rng,
            delay_cor,
            dup_cor,
            reorder_cor,
            corrupt_cor,
            loss,
            counter: 0,
            head: VecDeque::new(),
            tfifo: VecDeque::new(),
            slot,
            seq: 0,
            max_released: None,
            watchdog: None,
            ctr: NetemCounters::default(),
        }
    }

    /// The configuration.
    pub fn spec(&self) -> &NetemSpec {
        &self.spec
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.head.len() + self.tfifo.len()
    }

    /// True if no packet is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When the caller must call [`Netem::dequeue`] again (set by the last `dequeue` that
    /// returned `None` while packets were held).
    pub fn watchdog(&self) -> Option<Ns> {
        self.watchdog
    }

    /// `netem_enqueue` at `now`.
    pub fn enqueue(&mut self, now: Ns, pkt: P) {
        self.ctr.arrivals += 1;
        self.enqueue_one(now, pkt, true);
    }

    fn enqueue_one(&mut self, now: Ns, mut pkt: P, may_duplicate: bool) {
        let s = &*self.spec;
        let mut count = 1;
        if may_duplicate && s.duplicate != 0 && s.duplicate >= self.dup_cor.next(&mut self.rng) {
            count += 1;
        }
        if self.loss.event(&mut self.rng) {
            if s.ecn && pkt.netem_set_ce() {
                self.ctr.marks += 1;
            } else {
                count -= 1;
            }
        }
        if count == 0 {
            self.ctr.drops += 1;
            return;
        }
        if count > 1 {
            // the copy re-enters the (root) qdisc, itself not duplicated again
            self.ctr.duplicates += 1;
            self.enqueue_one(now, pkt.clone(), false);
        }
        let s = &*self.spec;
        let corrupt = s.corrupt != 0 && s.corrupt >= self.corrupt_cor.next(&mut self.rng);
        if self.len() >= s.limit as usize {
            self.ctr.drops += 1;
            self.ctr.limit_drops += 1;
            return;
        }
        let seq = self.seq;
        self.seq += 1;
        if s.gap == 0
            || self.counter < s.gap - 1
            || s.reorder < self.reorder_cor.next(&mut self.rng)
        {
            let delay = tabledist(
                s.latency,
                s.jitter,
                Some(&mut self.delay_cor),
                &mut self.rng,
                s.dist,
            );
            let mut tts = (now as i64).saturating_add(delay).max(0) as Ns;
            if s.in_order {
                if let Some(last) = self.tfifo.back() {
                    tts = tts.max(last.tts);
                }
            }
            self.counter += 1;
            let held = Held {
                tts,
                seq,
                corrupt,
                pkt,
            };
            // tfifo_enqueue: after every packet due at or before it
            if self.tfifo.back().is_none_or(|b| tts >= b.tts) {
                self.tfifo.push_back(held);
            } else {
                let at = self.tfifo.partition_point(|h| h.tts <= tts);
                self.tfifo.insert(at, held);
            }
        } else {
            self.counter = 0;
            self.ctr.reordered += 1;
            self.head.push_front(Held {
                tts: now,
                seq,
                corrupt,
                pkt,
            });
        }
    }

    /// `netem_dequeue` at `now`: the next packet that leaves, and whether it is corrupted
    /// (the caller drops it: the receiver would discard it), or `None` (then
    /// [`Netem::watchdog`] says when to try again).
    pub fn dequeue(&mut self, now: Ns) -> Option<(P, bool)> {
        if let Some(h) = self.head.pop_front() {
            return Some(self.release(h));
        }
        let tts = self.tfifo.front()?.tts;
        if let Some(sl) = self.slot {
            if sl.next < tts {
                self.slot_next(now);
            }
        }
        let slot_next = self.slot.map_or(0, |s| s.next);
        if tts <= now && slot_next <= now {
            let h = self.tfifo.pop_front().expect("peeked");
            if let Some(sl) = self.slot.as_mut() {
                sl.packets_left -= 1;
                sl.bytes_left -= h.pkt.netem_len() as i64;
                if sl.packets_left <= 0 || sl.bytes_left <= 0 {
                    self.slot_next(now);
                }
            }
            return Some(self.release(h));
        }
        self.watchdog = Some(tts.max(slot_next));
        None
    }

    /// A watchdog at `now` fired: true if it is the current one (then it is consumed and
    /// the caller dequeues), false for one that was replaced.
    pub fn fire(&mut self, now: Ns) -> bool {
        if self.watchdog == Some(now) {
            self.watchdog = None;
            true
        } else {
            false
        }
    }

    fn release(&mut self, h: Held<P>) -> (P, bool) {
        self.ctr.released += 1;
        match self.max_released {
            Some(m) if h.seq < m => self.ctr.late += 1,
            _ => self.max_released = Some(h.seq),
        }
        if h.corrupt {
            self.ctr.corrupted += 1;
        }
        (h.pkt, h.corrupt)
    }

    /// `get_slot_next`: the next slot starts a drawn spacing after `now`.
    fn slot_next(&mut self, now: Ns) {
        let cfg = self.spec.slot.expect("slots configured");
        let d = match cfg.dist {
            None => {
                let span = (cfg.max_delay - cfg.min_delay) as u128;
                cfg.min_delay + ((span * self.rng.next_u32() as u128) >> 32) as i64
            }
            Some((dist, delay, jitter)) => tabledist(delay, jitter, None, &mut self.rng, dist),
        };
        self.slot = Some(SlotState {
            next: (now as i64).saturating_add(d).max(0) as Ns,
            packets_left: cfg.max_packets as i64,
            bytes_left: cfg.max_bytes as i64,
        });
    }
}
