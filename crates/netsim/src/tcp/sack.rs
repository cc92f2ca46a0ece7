//! Selective acknowledgements: the receiver's out-of-order runs and SACK
//! blocks (RFC 2018), and the sender's scoreboard with FACK-style loss
//! recovery (Mathis & Mahdavi, SIGCOMM 1996; the conservative RFC 6675
//! recovery with FACK's loss inference and pipe estimate).
//!
//! Sender rules (in segments):
//! * `fack` = one past the highest segment known received (cumulatively or
//!   SACKed).
//! * A segment `s` that is neither SACKed nor retransmitted is **lost** when
//!   `s + DUPTHRESH < fack` (FACK; equivalent to RFC 6675's "DupThresh
//!   SACKed segments above it" when there are no further holes).
//! * `pipe` = `snd_max - fack + retransmissions in flight` (FACK's `awnd`).
//! * In recovery the sender transmits while `pipe < cwnd`: first the lowest
//!   lost segment, otherwise new data (RFC 6675 §5 NextSeg rules 1 and 2).
//!
//! With RACK ([`Scoreboard::rack`], the `linux` profile) the FACK rule is off: a segment is
//! lost only when RACK marks it ([`Scoreboard::mark_lost`], [`super::rack`]), and `pipe` is
//! Linux's `tcp_packets_in_flight`: outstanding segments minus SACKed and lost ones plus
//! retransmissions in flight.

use std::collections::VecDeque;

use super::DUPTHRESH;

/// Receiver side: sorted, disjoint, non-adjacent runs `[start, end)` of
/// segments received above `rcv_nxt`.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    runs: Vec<(u32, u32)>,
}

impl Runs {
    /// True if no segment is buffered out of order.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Records segment `seq` (> `rcv_nxt`); returns false if it was already
    /// there (duplicate).
    pub fn insert(&mut self, seq: u32) -> bool {
        let i = self.runs.partition_point(|&(_, e)| e < seq);
        if let Some(&(s, e)) = self.runs.get(i) {
            if s <= seq && seq < e {
                return false;
            }
        }
        // Now either runs[i].end == seq (extend right) or runs[i].start > seq.
        let joins_left = i < self.runs.len() && self.runs[i].1 == seq;
        if joins_left {
            self.runs[i].1 = seq + 1;
            if i + 1 < self.runs.len() && self.runs[i + 1].0 == seq + 1 {
                self.runs[i].1 = self.runs[i + 1].1;
                self.runs.remove(i + 1);
            }
        } else if i < self.runs.len() && self.runs[i].0 == seq + 1 {
            self.runs[i].0 = seq;
        } else {
            self.runs.insert(i, (seq, seq + 1));
        }
        true
    }

    /// If the first run starts at `rcv_nxt`, removes it and returns its end
    /// (the new `rcv_nxt`).
    pub fn pop_in_order(&mut self, rcv_nxt: u32) -> Option<u32> {
        match self.runs.first() {
            Some(&(s, e)) if s == rcv_nxt => {
                self.runs.remove(0);
                Some(e)
            }
            _ => None,
        }
    }

    /// SACK blocks for an ACK of `rcv_nxt` triggered by segment `seq`
    /// (RFC 2018 §4: the first block holds the segment that triggered the
    /// ACK; the others are the lowest remaining runs), as offsets from
    /// `rcv_nxt`.
    pub fn blocks(&self, rcv_nxt: u32, seq: u32) -> [u16; 6] {
        let mut out = [0u16; 6];
        let mut n = 0;
        let first = self.runs.iter().position(|&(s, e)| s <= seq && seq < e);
        let order = first
            .into_iter()
            .chain((0..self.runs.len()).filter(|&i| Some(i) != first));
        for i in order {
            if n >= 3 {
                break;
            }
            let (s, e) = self.runs[i];
            if let (Ok(a), Ok(b)) = (u16::try_from(s - rcv_nxt), u16::try_from(e - rcv_nxt)) {
                out[2 * n] = a;
                out[2 * n + 1] = b;
                n += 1;
            }
        }
        out
    }
}

const SACKED: u8 = 1;
const RETX: u8 = 2;
/// Marked lost by RACK (never set without [`Scoreboard::rack`]).
const LOST: u8 = 4;

/// RACK passes over a segment with state `st`: SACKed, or marked lost and not yet
/// retransmitted (Linux `tcp_rack_detect_loss`).
#[inline(always)]
fn rack_skips(st: u8) -> bool {
    st & SACKED != 0 || st & (LOST | RETX) == LOST
}

/// One in the low bit of each byte of a word of eight states.
const ONES: u64 = 0x0101_0101_0101_0101;

/// The states of a word of eight that RACK keeps (a one in the low bit of each kept byte):
/// not SACKed, and not `LOST` without `RETX` ([`rack_skips`]).
#[inline(always)]
fn rack_kept_word(x: u64) -> u64 {
    let sacked = x & (SACKED as u64 * ONES);
    let lost_unretx = (x >> 2) & !(x >> 1) & ONES;
    !(sacked | lost_unretx) & ONES
}

/// The states of a word of eight not SACKed (a one in the low bit of each such byte).
#[inline(always)]
fn unsacked_word(x: u64) -> u64 {
    !x & (SACKED as u64 * ONES)
}

/// Index of the first state in `s` that `kept_word` keeps, eight states at a time (a window
/// of hundreds of SACKed segments in recovery is passed over in a few dozen steps on every
/// ACK); `kept_word` maps eight states to a one in the low bit of each kept byte, and
/// `kept` is the same test of one state (cheaper than the word's on the usual single test;
/// `word_scans_match_a_scan_of_every_state` checks that the two agree).
#[inline(always)]
fn first_kept(
    s: &[u8],
    kept_word: impl Fn(u64) -> u64,
    kept: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut chunks = s.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        let k = kept_word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        if k != 0 {
            return Some(at + k.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&st| kept(st))
        .map(|p| at + p)
}

/// Sender-side scoreboard, indexed from `snd_una`.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    state: VecDeque<u8>,
    base: u32,
    /// One past the highest segment known received.
    pub fack: u32,
    /// Retransmissions sent in this recovery and not yet acknowledged.
    pub retx_out: u32,
    next_hole: u32,
    /// Segments known delivered so far: each counted once, when first SACKed or, if never
    /// SACKed, when cumulatively acknowledged. The difference over one ACK is RFC 6937's
    /// `DeliveredData` (in segments).
    pub delivered: u64,
    /// RACK marks the losses (no FACK rule; see the module doc).
    pub rack: bool,
    /// Outstanding segments SACKed (Linux `sacked_out`).
    pub sacked_out: u32,
    /// Outstanding segments marked lost and not SACKed (Linux `lost_out`; RACK only).
    pub lost_out: u32,
    /// One past the highest segment marked lost (RACK only).
    lost_hi: u32,
}

impl Scoreboard {
    #[inline]
    fn get(&self, seq: u32) -> u8 {
        seq.checked_sub(self.base)
            .and_then(|i| self.state.get(i as usize).copied())
            .unwrap_or(0)
    }

    fn slot(&mut self, seq: u32) -> &mut u8 {
        let i = (seq - self.base) as usize;
        if self.state.len() <= i {
            self.state.resize(i + 1, 0);
        }
        &mut self.state[i]
    }

    /// The lowest segment not cumulatively acknowledged (`snd_una`).
    #[inline]
    pub fn base(&self) -> u32 {
        self.base
    }

    /// True if `seq` has been SACKed.
    #[inline]
    pub fn is_sacked(&self, seq: u32) -> bool {
        self.get(seq) & SACKED != 0
    }

    /// The cumulative ACK moved to `ack`.
    pub fn advance(&mut self, ack: u32) {
        while self.base < ack && !self.state.is_empty() {
            let st = self.state.pop_front().unwrap_or(0);
            if st & RETX != 0 && st & SACKED == 0 {
                self.retx_out -= 1;
            }
            if st & SACKED == 0 {
                self.delivered += 1;
            } else {
                self.sacked_out -= 1;
            }
            if st & LOST != 0 {
                self.lost_out -= 1;
            }
            self.base += 1;
        }
        // Segments beyond the recorded states were never SACKed, retransmitted or marked
        // lost: each is delivered now, in one step (the usual ACK, with nothing recorded).
        if self.base < ack {
            self.delivered += (ack - self.base) as u64;
            self.base = ack;
        }
        self.fack = self.fack.max(ack);
        self.next_hole = self.next_hole.max(ack);
    }

    /// Applies the SACK blocks of an ACK for `ack`, bounded by `snd_max`.
    pub fn apply(&mut self, ack: u32, blocks: &[u16; 6], snd_max: u32) {
        self.apply_with(ack, blocks, snd_max, |_| {});
    }

    /// [`Scoreboard::apply`], calling `newly_sacked(seq)` for each segment it marks SACKed.
    #[inline]
    pub fn apply_with(
        &mut self,
        ack: u32,
        blocks: &[u16; 6],
        snd_max: u32,
        mut newly_sacked: impl FnMut(u32),
    ) {
        if *blocks == [0; 6] {
            // No SACK block (every block below would be skipped as empty).
            return;
        }
        for (i, b) in blocks.chunks_exact(2).enumerate() {
            if b[1] <= b[0] {
                continue;
            }
            let start = (ack + b[0] as u32).max(self.base);
            let end = (ack + b[1] as u32).min(snd_max);
            if self.rack && i == 0 {
                // RACK: the first block holds the segment that triggered the ACK (RFC 2018
                // §4), which may have joined two runs (a retransmission filling a hole):
                // read all of it, or that segment would stay unSACKed and RACK would deem
                // it lost again. The SACKed runs in it are passed over eight at a time.
                let mut s = start;
                loop {
                    s = self.next_unsacked(s, end);
                    if s >= end {
                        break;
                    }
                    if self.mark_sacked(s) {
                        newly_sacked(s);
                    }
                    s += 1;
                }
                self.fack = self.fack.max(end);
                continue;
            }
            // A block usually grows by one segment per ACK: mark from both
            // ends inwards and stop at the first segment already known, so
            // the cost per ACK is the news, not the block length.
            let mut lo = start;
            while lo < end && self.mark_sacked(lo) {
                newly_sacked(lo);
                lo += 1;
            }
            let mut hi = end;
            while hi > lo && self.mark_sacked(hi - 1) {
                newly_sacked(hi - 1);
                hi -= 1;
            }
            self.fack = self.fack.max(end);
        }
    }

    /// Marks `seq` SACKed; returns false if it already was.
    #[inline]
    fn mark_sacked(&mut self, seq: u32) -> bool {
        let st = self.slot(seq);
        if *st & SACKED != 0 {
            return false;
        }
        let (was_retx, was_lost) = (*st & RETX != 0, *st & LOST != 0);
        *st = (*st | SACKED) & !LOST;
        if was_retx {
            self.retx_out -= 1;
        }
        if was_lost {
            self.lost_out -= 1;
        }
        self.sacked_out += 1;
        self.delivered += 1;
        true
    }

    /// RACK marks `seq` lost (Linux `tcp_rack_mark_skb_lost`): a segment not yet lost becomes
    /// lost; a lost segment's retransmission is deemed lost too (it may be sent again).
    pub fn mark_lost(&mut self, seq: u32) {
        let st = self.slot(seq);
        if *st & SACKED != 0 {
            return;
        }
        if *st & LOST == 0 {
            *st |= LOST;
            self.lost_out += 1;
        } else if *st & RETX != 0 {
            *st &= !RETX;
            self.retx_out -= 1;
        } else {
            return;
        }
        self.lost_hi = self.lost_hi.max(seq + 1);
        self.next_hole = self.next_hole.min(seq);
    }

    /// Segment `seq` is marked lost and has not been retransmitted since (RACK skips it).
    #[inline]
    pub fn is_lost_unsent(&self, seq: u32) -> bool {
        self.get(seq) & (LOST | RETX | SACKED) == LOST
    }

    /// RACK's loss scan passes over segment `seq`: it is SACKed, or marked lost and not
    /// retransmitted since ([`Scoreboard::is_lost_unsent`]); one lookup for both.
    #[inline]
    pub fn rack_skips(&self, seq: u32) -> bool {
        rack_skips(self.get(seq))
    }

    /// The first segment in `[seq, end)` that RACK does not skip ([`Scoreboard::rack_skips`]),
    /// else `end`: a run of SACKed segments (most of a window in recovery) is passed over in
    /// one pass over their state bytes.
    #[inline]
    pub fn rack_next(&self, seq: u32, end: u32) -> u32 {
        self.next_kept(seq, end, rack_kept_word, |st| !rack_skips(st))
    }

    /// The first segment in `[seq, end)` not SACKed, else `end`, eight states at a time.
    #[inline]
    fn next_unsacked(&self, seq: u32, end: u32) -> u32 {
        self.next_kept(seq, end, unsacked_word, |st| st & SACKED == 0)
    }

    /// The first segment in `[seq, end)` whose state `kept` keeps (`kept_word`: the same
    /// test of eight states, [`first_kept`]), else `end`; a segment below the base or
    /// beyond the recorded states (state 0) is kept.
    #[inline(always)]
    fn next_kept(
        &self,
        seq: u32,
        end: u32,
        kept_word: impl Fn(u64) -> u64 + Copy,
        kept: impl Fn(u8) -> bool + Copy,
    ) -> u32 {
        let Some(i) = seq.checked_sub(self.base) else {
            return seq.min(end);
        };
        let i = i as usize;
        match self.state.get(i) {
            // beyond the recorded states, or kept: the usual case, tested alone
            None => return seq.min(end),
            Some(&st) if kept(st) => return seq.min(end),
            _ => {}
        }
        let (a, b) = self.state.as_slices();
        let found = if i < a.len() {
            match first_kept(&a[i..], kept_word, kept) {
                Some(p) => i + p,
                None => a.len() + first_kept(b, kept_word, kept).unwrap_or(b.len()),
            }
        } else if i < a.len() + b.len() {
            let k = i - a.len();
            a.len() + k + first_kept(&b[k..], kept_word, kept).unwrap_or(b.len() - k)
        } else {
            i
        };
        (self.base + found as u32).min(end)
    }

    /// Segment `seq` is SACKed or has been retransmitted in this episode: `(sacked, retx)`.
    #[inline]
    pub fn flags(&self, seq: u32) -> (bool, bool) {
        let st = self.get(seq);
        (st & SACKED != 0, st & RETX != 0)
    }

    /// True if segment `seq` is deemed lost (FACK rule).
    #[inline]
    pub fn is_lost(&self, seq: u32) -> bool {
        if self.rack {
            return self.get(seq) & (LOST | SACKED) == LOST;
        }
        self.get(seq) & SACKED == 0 && seq + DUPTHRESH < self.fack
    }

    /// Lowest lost segment not yet retransmitted in this recovery.
    pub fn next_lost(&mut self) -> Option<u32> {
        if self.rack {
            while self.next_hole < self.lost_hi {
                let s = self.next_hole;
                if self.is_lost_unsent(s) {
                    return Some(s);
                }
                self.next_hole += 1;
            }
            return None;
        }
        while self.next_hole + DUPTHRESH < self.fack {
            let s = self.next_hole;
            if self.get(s) == 0 {
                return Some(s);
            }
            self.next_hole += 1;
        }
        None
    }

    /// Segment `seq` was retransmitted.
    pub fn mark_retx(&mut self, seq: u32) {
        let st = self.slot(seq);
        if *st & (RETX | SACKED) == 0 {
            *st |= RETX;
            self.retx_out += 1;
        }
    }

    /// Estimated segments in the network (FACK `awnd`).
    #[inline]
    pub fn pipe(&self, snd_max: u32) -> u32 {
        if self.rack {
            // Linux `tcp_packets_in_flight`.
            let out = snd_max.saturating_sub(self.base);
            return (out + self.retx_out).saturating_sub(self.sacked_out + self.lost_out);
        }
        snd_max.saturating_sub(self.fack) + self.retx_out
    }

    /// Starts a new recovery (or a timeout): retransmission marks are
    /// forgotten so lost segments can be sent again.
    pub fn new_episode(&mut self) {
        for st in self.state.iter_mut() {
            *st &= !RETX;
        }
        self.retx_out = 0;
        self.next_hole = self.base;
    }

    /// A timeout under RACK: the sender goes back N over everything not SACKed, so the
    /// lost marks are dropped with the retransmission marks.
    pub fn forget_losses(&mut self) {
        for st in self.state.iter_mut() {
            *st &= !LOST;
        }
        self.lost_out = 0;
        self.lost_hi = self.base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rack_next` and `next_unsacked` (eight states at a time, over a ring split in two
    /// slices) find what a test of every state in turn finds: random states, every start
    /// and end, ring heads at every offset.
    #[test]
    fn word_scans_match_a_scan_of_every_state() {
        let mut rng = experiment::rng::Rng::derive(5, experiment::rng::Stream::Flow, 0);
        let mut wrapped = 0;
        for round in 0..60 {
            let n = 1 + (rng.uniform() * 90.0) as usize;
            // mostly skipped states (SACKed, or lost and not retransmitted), as in recovery
            let states: Vec<u8> = (0..n)
                .map(|_| match (rng.uniform() * 10.0) as u32 {
                    0 => 0,
                    1 => RETX,
                    2 => LOST | RETX,
                    3 | 4 => LOST,
                    _ => SACKED | if rng.uniform() < 0.3 { RETX } else { 0 },
                })
                .collect();
            // the head near the end of the storage, so that the states wrap around
            let mut state: VecDeque<u8> = VecDeque::with_capacity(n + 7);
            let shift = n + 7 - 1 - round % 9;
            for _ in 0..shift {
                state.push_back(0);
            }
            while state.pop_front().is_some() {}
            state.extend(&states);
            wrapped += (state.as_slices().0.len() < n) as u32;
            let sb = Scoreboard {
                state,
                base: 100,
                ..Default::default()
            };
            for from in 95..100 + n as u32 + 3 {
                for end in [from, 100 + n as u32 / 2, 100 + n as u32, 100 + n as u32 + 5] {
                    // the first segment in [from, end) that `kept` keeps, tested one by one
                    let first = |kept: &dyn Fn(u32) -> bool| {
                        (from..end)
                            .find(|&q| kept(q))
                            .unwrap_or(end.max(from))
                            .min(end)
                    };
                    assert_eq!(
                        sb.rack_next(from, end),
                        first(&|q| q < 100 || !sb.rack_skips(q)),
                        "{states:?} from {from} end {end}"
                    );
                    assert_eq!(
                        sb.next_unsacked(from, end),
                        first(&|q| !sb.is_sacked(q)),
                        "unSACKed: {states:?} from {from} end {end}"
                    );
                }
            }
        }
        assert!(wrapped >= 30, "{wrapped} of 60 rings wrapped");
    }

    #[test]
    fn runs_merge_and_blocks() {
        let mut r = Runs::default();
        assert!(r.insert(5));
        assert!(r.insert(7));
        assert!(r.insert(6));
        assert!(!r.insert(6));
        assert!(r.insert(10));
        // runs: [5,8) [10,11)
        assert_eq!(r.blocks(3, 10), [7, 8, 2, 5, 0, 0]);
        assert!(r.insert(4));
        assert!(r.insert(3));
        assert_eq!(r.pop_in_order(3), Some(8));
        assert_eq!(r.pop_in_order(8), None);
    }

    /// FACK arithmetic by hand: 10 segments out, 0 and 4 lost.
    #[test]
    fn scoreboard_fack_rules() {
        let mut sb = Scoreboard::default();
        sb.new_episode();
        // ACK 0 with SACK [1,4) then [5,10).
        sb.apply(0, &[1, 4, 0, 0, 0, 0], 10);
        assert!(sb.is_lost(0));
        assert!(!sb.is_lost(4));
        sb.apply(0, &[5, 10, 1, 4, 0, 0], 10);
        assert_eq!(sb.fack, 10);
        assert_eq!(sb.pipe(10), 0);
        assert_eq!(sb.next_lost(), Some(0));
        sb.mark_retx(0);
        assert_eq!(sb.next_lost(), Some(4));
        sb.mark_retx(4);
        assert_eq!(sb.pipe(10), 2);
        sb.advance(4);
        assert_eq!(sb.retx_out, 1);
        sb.advance(10);
        assert_eq!(sb.retx_out, 0);
    }
}
