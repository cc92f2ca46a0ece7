//! Propagation: the packets in flight on every link, kept as one time-ordered ring per
//! distinct delay (a *lane*) instead of one event-queue entry per packet.
//!
//! A packet that leaves a link's transmitter at `done` reaches the far node at
//! `done + delay`. Links that share a delay push into the same lane, sorted by that
//! arrival time: a packet mostly goes to the back, and a packet whose serialisation
//! started earlier but ends later than its neighbours' (the links' idle fast path
//! completes a transmission when it starts, `link.rs`) is inserted a few places
//! before. The event queue (`engine::EventQueue`) merges the lanes' fronts
//! with its heap, so a hop costs a ring append and a front pop rather than a heap push,
//! the heap's moves of the entry and a pop; the rings are written and read in order.
//!
//! ## Order (exact, as with one event per link's pipe)
//! The arrivals are delivered exactly when and in the order in which a per-link pipe
//! with one pending event for its oldest packet delivered them (the design before the
//! lanes; `tests/tcp_golden.rs` and the varied scenarios' summaries are unchanged):
//!
//! * A link's oldest packet in flight carries the key `(arrival time, sched, seq)`
//!   that the link's pipe event had: `(done, seq)` drawn when it entered an empty pipe
//!   (the event was scheduled *as of* `done`), else `(now, seq)` drawn when the packet
//!   before it was delivered (the event was re-armed then). Sequence numbers come from
//!   the event queue's counter at those same moments, so every other event keeps its
//!   place among them. The key is kept per link (`LinkPipe::head`).
//! * Packets of one link enter in order of `done` (increasing, equal only when a
//!   serialisation time rounds to 0 ns), so in a lane they stay in the link's order (equal
//!   times keep their insertion order), and every packet in a lane's front *run* (the
//!   packets due at its earliest time) is the oldest of its link, except for a link whose
//!   serialisation time rounds to 0 ns (rates near 1e15 bit/s): its later packets due at
//!   the same instant follow in the same run. A lane offers the smallest key of its run.
//!   The lanes' offers meet in a tournament tree.
//! * A delivery takes every packet of that link due at that instant (`more` in
//!   [`Pipes::pop`], taken with [`Pipes::take`]), as the link's one event did.
//!
//! Invariant per link: `len` packets in flight; while `len > 0`, `head` is the key of
//! its oldest one. Times are integer nanoseconds.

use std::collections::VecDeque;

use crate::packet::Packet;
use experiment::time::Ns;

/// Ordering key of an arrival: `(time, scheduling time, sequence number)`, as the event
/// queue's entries.
pub(crate) type Key = (Ns, Ns, u64);

/// No arrival: later than every real key.
const NONE: Key = (Ns::MAX, Ns::MAX, u64::MAX);

/// A packet in flight on `link`, due at the far node at `at` (ns). One cache line: reading
/// the next arrival's time brings in its packet too.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Transit {
    at: Ns,
    link: u32,
    pkt: Packet,
}

/// The packets in flight on all links of one delay, by arrival time.
#[derive(Debug, Default)]
struct Lane {
    /// Propagation delay of the lane's links (ns).
    delay: Ns,
    /// Sorted by `at`; equal times keep their insertion order.
    ring: VecDeque<Transit>,
    /// Index in `ring` of the packet the lane offers next (0 unless the front run holds
    /// several packets).
    pick: usize,
}

/// Per link: packets in flight and the key of the oldest, and the packets delivered. (Kept
/// here rather than in the [`crate::link::Link`], so that an arrival touches 40 bytes of
/// the link it left, not the link's own lines.)
#[derive(Clone, Copy, Debug, Default)]
struct LinkPipe {
    /// Lane of the link's delay.
    lane: u32,
    /// Packets in flight.
    len: u32,
    /// `(sched, seq)` of the oldest packet's arrival (meaningful while `len > 0`).
    head: (Ns, u64),
    /// Packets that reached the far node.
    delivered: u64,
    /// The far node.
    to: u32,
}

/// The propagation pipes of all links (module docs).
#[derive(Debug)]
pub struct Pipes {
    lanes: Vec<Lane>,
    links: Vec<LinkPipe>,
    /// Tournament tree over the lanes: `offer[c]` is lane `c`'s next key ([`NONE`] if
    /// empty, and for the padding lanes up to `width`); `win[1]` is the lane with the
    /// smallest, `win[width + c] = c`.
    offer: Vec<Key>,
    win: Vec<u32>,
    width: usize,
    /// Lane of the last arrival taken ([`Pipes::pop`]): where the next ones most likely
    /// come from ([`Pipes::ahead`]).
    last: u32,
}

impl Default for Pipes {
    fn default() -> Self {
        Self::new(std::iter::empty())
    }
}

impl Pipes {
    /// Pipes for links `0, 1, ...` with these propagation delays (ns) and far nodes.
    pub fn new(links_to: impl IntoIterator<Item = (Ns, u32)>) -> Self {
        Self::with_groups(links_to.into_iter().map(|(d, to)| (d, to, 0)))
    }

    /// Pipes for links `0, 1, ...` with these propagation delays (ns), far nodes and lane
    /// groups: links share a lane if they have the same delay and the same group. The order
    /// of arrivals does not depend on the groups (module docs), only the cost: with one lane
    /// for hundreds of busy links of one delay (a fabric), a short packet (an ACK) that
    /// follows long ones of other links is inserted before them, shifting them in the ring
    /// (40 % of a k = 8 fat tree's run); a fabric groups its links by far node.
    pub fn with_groups(links_to: impl IntoIterator<Item = (Ns, u32, u32)>) -> Self {
        let mut lanes: Vec<Lane> = Vec::new();
        let mut lane_of_delay = std::collections::HashMap::new();
        let links_to = links_to.into_iter();
        // one entry per link, reserved (doubling would leave up to half of it unused: 2 MB
        // a million links)
        let mut links = Vec::with_capacity(links_to.size_hint().0);
        memhint::huge_pages(&links);
        for (d, to, group) in links_to {
            let lane = *lane_of_delay.entry((d, group)).or_insert_with(|| {
                lanes.push(Lane {
                    delay: d,
                    ..Lane::default()
                });
                lanes.len() - 1
            });
            links.push(LinkPipe {
                lane: lane as u32,
                to,
                ..LinkPipe::default()
            });
        }
        let width = lanes.len().max(1).next_power_of_two();
        let mut win = vec![0u32; 2 * width];
        for (c, w) in win[width..].iter_mut().enumerate() {
            *w = c as u32;
        }
        // All offers are equal (NONE): the internal nodes may name any lane below them.
        for i in (1..width).rev() {
            win[i] = win[2 * i];
        }
        Pipes {
            lanes,
            links,
            offer: vec![NONE; width],
            win,
            width,
            last: 0,
        }
    }

    /// The entry `k` places behind the front of the lane the last arrival came from, if it
    /// holds that many: most likely the `k`-th arrival from now (another lane's may come
    /// first). A guess for prefetching only.
    #[inline(always)]
    fn transit_ahead(&self, k: usize) -> Option<&Transit> {
        self.lanes.get(self.last as usize)?.ring.get(k)
    }

    /// The far node and the packet of the arrival `k` places ahead (`Pipes::transit_ahead`).
    #[inline]
    pub fn ahead(&self, k: usize) -> Option<(u32, &Packet)> {
        let t = self.transit_ahead(k)?;
        Some((self.links[t.link as usize].to, &t.pkt))
    }

    /// Prefetches the per-link record of the arrival `k` places ahead
    /// (`Pipes::transit_ahead`), which [`Pipes::pop`] updates when it arrives and
    /// [`Pipes::refresh`] reads when it reaches the front.
    #[inline]
    pub fn prefetch_record_ahead(&self, k: usize) {
        if let Some(t) = self.transit_ahead(k) {
            memhint::prefetch(&self.links[t.link as usize]);
        }
    }

    /// Prefetches the entry `k` places ahead (`Pipes::transit_ahead`): the ring is read in
    /// order, but its entries were written a round trip earlier.
    #[inline]
    pub fn prefetch_transit(&self, k: usize) {
        if let Some(t) = self.transit_ahead(k) {
            memhint::prefetch_line(t, 0);
        }
    }

    /// Prefetches `link`'s per-link record, which [`Pipes::push`] updates.
    #[inline]
    pub fn prefetch_record(&self, link: u32) {
        memhint::prefetch(&self.links[link as usize]);
    }

    /// Gives back the lanes' storage beyond the packets in flight.
    pub fn shrink(&mut self) {
        for l in &mut self.lanes {
            l.ring.shrink_to_fit();
        }
    }

    /// Packets in flight on `link`.
    #[inline]
    pub fn len(&self, link: u32) -> u64 {
        self.links[link as usize].len as u64
    }

    /// Packets delivered at the far node of `link` so far.
    #[inline]
    pub fn delivered(&self, link: u32) -> u64 {
        self.links[link as usize].delivered
    }

    /// True if no packet is in flight.
    pub fn is_empty(&self) -> bool {
        self.lanes.iter().all(|l| l.ring.is_empty())
    }

    /// Puts `pkt`, which left `link`'s transmitter at `done`, in flight. `seq` is the
    /// event queue's sequence counter: the packet takes a number if the link had none in
    /// flight (module docs).
    #[inline]
    pub fn push(&mut self, link: u32, done: Ns, pkt: Packet, seq: &mut u64) {
        let lp = &mut self.links[link as usize];
        if lp.len == 0 {
            lp.head = (done, *seq);
            *seq += 1;
        }
        lp.len += 1;
        let c = lp.lane as usize;
        let lane = &mut self.lanes[c];
        let at = done + lane.delay;
        let t = Transit { at, link, pkt };
        match lane.ring.back() {
            Some(b) if b.at > at => {
                // Due before packets already in the lane: after the last one due no later.
                let mut i = lane.ring.len() - 1;
                while i > 0 && lane.ring[i - 1].at > at {
                    i -= 1;
                }
                lane.ring.insert(i, t);
                // Only a new front changes the offer: a packet that joins the front run is
                // either not its link's oldest or carries the largest key of the run (its
                // `seq` is the newest, and no key in the run has a later `sched` than `done`).
                if i == 0 {
                    self.refresh(c);
                }
            }
            Some(_) => lane.ring.push_back(t),
            None => {
                lane.ring.push_back(t);
                self.refresh(c);
            }
        }
    }

    /// Key of the next arrival, if any packet is in flight.
    #[inline(always)]
    pub fn peek(&self) -> Option<Key> {
        let k = self.offer[self.win[1] as usize];
        (k.0 != Ns::MAX).then_some(k)
    }

    /// Takes the next arrival (there must be one; `now` is its time): its link, the link's
    /// far node, the packet, and how many more packets of that link are due now (taken with
    /// [`Pipes::take`] before anything else happens), all counted as delivered. If the link
    /// still has packets in flight after those, the oldest of them takes its key now.
    #[inline]
    pub fn pop(&mut self, now: Ns, seq: &mut u64) -> (u32, u32, Packet, u32) {
        let c = self.win[1] as usize;
        let lane = &mut self.lanes[c];
        let t = if lane.pick == 0 {
            lane.ring.pop_front()
        } else {
            lane.ring.remove(lane.pick)
        }
        .expect("an arrival is pending");
        debug_assert_eq!(t.at, now);
        let mut more = 0u32;
        if lane.ring.front().is_some_and(|f| f.at == t.at) {
            more = lane
                .ring
                .iter()
                .take_while(|f| f.at == t.at)
                .filter(|f| f.link == t.link)
                .count() as u32;
        }
        let lp = &mut self.links[t.link as usize];
        lp.len -= 1;
        lp.delivered += 1 + more as u64;
        if lp.len > more {
            lp.head = (now, *seq);
            *seq += 1;
        }
        let to = lp.to;
        self.last = c as u32;
        self.refresh(c);
        (t.link, to, t.pkt, more)
    }

    /// Takes the next packet of `link` due now (one of the `more` that [`Pipes::pop`]
    /// counted).
    pub fn take(&mut self, link: u32) -> Packet {
        let lp = &mut self.links[link as usize];
        lp.len -= 1;
        let c = lp.lane as usize;
        let lane = &mut self.lanes[c];
        let i = lane
            .ring
            .iter()
            .position(|f| f.link == link)
            .expect("pop counted it");
        let t = lane.ring.remove(i).expect("in range");
        self.refresh(c);
        t.pkt
    }

    /// Recomputes lane `c`'s offer and the tournament path above it.
    #[inline]
    fn refresh(&mut self, c: usize) {
        let lane = &mut self.lanes[c];
        let key = match lane.ring.front() {
            None => NONE,
            Some(f) if lane.ring.get(1).is_none_or(|s| s.at != f.at) => {
                lane.pick = 0;
                let (s, q) = self.links[f.link as usize].head;
                (f.at, s, q)
            }
            Some(f) => {
                // Several packets due at the same instant: the smallest key among the
                // oldest packets of their links (the first of each link in the run).
                let at = f.at;
                let run = lane.ring.iter().take_while(|t| t.at == at).count();
                let mut best = (NONE, 0);
                for i in 0..run {
                    let l = lane.ring[i].link;
                    if (0..i).any(|j| lane.ring[j].link == l) {
                        continue;
                    }
                    let (s, q) = self.links[l as usize].head;
                    if (at, s, q) < best.0 {
                        best = ((at, s, q), i);
                    }
                }
                lane.pick = best.1;
                best.0
            }
        };
        self.offer[c] = key;
        let mut i = (self.width + c) / 2;
        while i >= 1 {
            let (a, b) = (self.win[2 * i], self.win[2 * i + 1]);
            self.win[i] = if self.offer[b as usize] < self.offer[a as usize] {
                b
            } else {
                a
            };
            i /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u32) -> Packet {
        Packet {
            seq,
            ..Packet::default()
        }
    }

    /// Drains the pipes in key order: (time, link, packet seq) per arrival.
    fn drain(p: &mut Pipes, seq: &mut u64) -> Vec<(Ns, u32, u32)> {
        let mut out = Vec::new();
        while let Some((t, _, _)) = p.peek() {
            let (l, _, k, more) = p.pop(t, seq);
            out.push((t, l, k.seq));
            for _ in 0..more {
                out.push((t, l, p.take(l).seq));
            }
        }
        out
    }

    /// Packets of two lanes come out by arrival time; an earlier arrival pushed after a
    /// later one of the same lane (a fast-path packet) is inserted before it.
    #[test]
    fn arrivals_in_time_order_across_lanes() {
        let mut p = Pipes::new([(10, 0), (20, 0), (10, 0)]);
        let mut seq = 0;
        p.push(0, 5, pkt(1), &mut seq); // due 15
        p.push(1, 0, pkt(2), &mut seq); // due 20
        p.push(2, 3, pkt(3), &mut seq); // due 13: before 15 in lane 0
        p.push(0, 30, pkt(4), &mut seq); // due 40
        assert_eq!((p.len(0), p.len(1), p.len(2)), (2, 1, 1));
        assert_eq!(
            drain(&mut p, &mut seq),
            vec![(13, 2, 3), (15, 0, 1), (20, 1, 2), (40, 0, 4)]
        );
        assert!(p.is_empty());
        assert_eq!((p.len(0), p.len(1), p.len(2)), (0, 0, 0));
    }

    /// Ties at one instant go by the oldest packets' keys, which need not be the lane's
    /// insertion order: a link whose previous packet is delivered at the same instant
    /// takes its key at that delivery.
    #[test]
    fn ties_break_by_the_links_keys() {
        let mut p = Pipes::new([(10, 0), (10, 0), (10, 0)]);
        let mut seq = 0;
        p.push(1, 0, pkt(1), &mut seq); // due 10, key (0, 0)
        p.push(1, 5, pkt(2), &mut seq); // due 15: link 1 not empty, no key yet
        p.push(0, 5, pkt(3), &mut seq); // due 15, key (5, 1)
        assert_eq!(p.peek(), Some((10, 0, 0)));
        let (l, _, k, more) = p.pop(10, &mut seq); // link 1's next takes key (10, 2)
        assert_eq!((l, k.seq, more), (1, 1, 0));
        p.push(2, 0, pkt(4), &mut seq); // due 10 < 15, key (0, 3): first
        assert_eq!(p.peek(), Some((10, 0, 3)));
        p.pop(10, &mut seq);
        // At 15: link 0 (5, 1) before link 1 (10, 2), though link 1's packet came first.
        assert_eq!(p.peek(), Some((15, 5, 1)));
        assert_eq!(drain(&mut p, &mut seq), vec![(15, 0, 3), (15, 1, 2)]);
    }

    /// Lane groups change nothing but the lanes: the same pushes (links of one delay, short
    /// and long serialisations interleaved, as ACKs among data) come out at the same times,
    /// in the same order and with the same keys with one lane, a lane per far node, or a lane
    /// per link.
    #[test]
    fn lane_groups_do_not_change_the_order() {
        let links: Vec<(Ns, u32)> = (0..12).map(|i| (1000, i % 4)).collect();
        let run = |mut p: Pipes| -> Vec<(Ns, u32, u32, u64)> {
            let mut rng = experiment::rng::Rng::derive(7, experiment::rng::Stream::Flow, 0);
            let mut busy = vec![0 as Ns; links.len()];
            let (mut seq, mut now, mut out) = (0u64, 0 as Ns, Vec::new());
            for n in 0..20_000u32 {
                now += (rng.next_u32() % 50) as Ns;
                while let Some((t, _, _)) = p.peek().filter(|k| k.0 <= now) {
                    let (l, _, k, more) = p.pop(t, &mut seq);
                    out.push((t, l, k.seq, seq));
                    for _ in 0..more {
                        out.push((t, l, p.take(l).seq, seq));
                    }
                }
                let l = (rng.next_u32() % links.len() as u32) as usize;
                // a data packet (1200 ns) or an ACK (32 ns) on a link busy until busy[l]
                let tx = if rng.next_u32() & 1 == 0 { 1200 } else { 32 };
                busy[l] = busy[l].max(now) + tx;
                p.push(l as u32, busy[l], pkt(n), &mut seq);
            }
            out.extend(
                drain(&mut p, &mut seq)
                    .into_iter()
                    .map(|(t, l, s)| (t, l, s, 0)),
            );
            out
        };
        let one = run(Pipes::new(links.iter().copied()));
        let by_node = run(Pipes::with_groups(links.iter().map(|&(d, to)| (d, to, to))));
        let by_link = run(Pipes::with_groups(
            links
                .iter()
                .enumerate()
                .map(|(i, &(d, to))| (d, to, i as u32)),
        ));
        assert!(one.len() == 20_000);
        assert_eq!(one, by_node);
        assert_eq!(one, by_link);
    }

    /// A link whose packets are due at the same instant (0 ns serialisation) delivers them
    /// together, and its next packet takes its key before they are handed on.
    #[test]
    fn packets_of_one_link_due_together_come_out_together() {
        let mut p = Pipes::new([(10, 0), (10, 0)]);
        let mut seq = 0;
        p.push(0, 0, pkt(1), &mut seq); // key (0, 0)
        p.push(0, 0, pkt(2), &mut seq);
        p.push(1, 0, pkt(3), &mut seq); // key (0, 1)
        p.push(0, 4, pkt(4), &mut seq);
        let (l, _, k, more) = p.pop(10, &mut seq);
        assert_eq!((l, k.seq, more), (0, 1, 1));
        assert_eq!(seq, 3, "link 0's packet due at 14 took key (10, 2)");
        assert_eq!(p.take(0).seq, 2);
        assert_eq!(p.peek(), Some((10, 0, 1)));
        assert_eq!(drain(&mut p, &mut seq), vec![(10, 1, 3), (14, 0, 4)]);
    }
}
