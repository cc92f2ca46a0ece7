//! How a link with a varying capacity serves packets: the one service model the simulator
//! (`netsim::link`) and the emulator (`emu::link`) both call.
//!
//! Two kinds of varying capacity:
//!
//! * [`RateTrace`]: a trace in Mahimahi's format (Netravali et al., "Mahimahi: Accurate
//!   Record-and-Replay for HTTP", USENIX ATC 2015; `mm-link`): one line per delivery
//!   opportunity of [`OPPORTUNITY_BYTES`] bytes, its time in whole milliseconds from the start,
//!   non-decreasing, the last one > 0; the file repeats with period = the last timestamp
//!   (Mahimahi's `LinkQueue::use_a_delivery_opportunity`: at the wrap the base moves by
//!   `schedule.back()`). Packets are served as Mahimahi's `LinkQueue::rationalize` serves them:
//!   an opportunity at time `T` gives 1500 bytes to the packets queued at `T`, in order; a
//!   packet larger than what is left of an opportunity takes the rest and continues with the
//!   next opportunities (bytes accumulate across opportunities, so a packet of `B` bytes uses
//!   `B / 1500` of them); what is left of an opportunity when the queue is empty is lost; a
//!   packet leaves at the time of the opportunity that gives its last byte. (Mahimahi refuses
//!   packets above 1500 bytes; here they take several opportunities.)
//! * [`RateSteps`]: a piecewise-constant rate (a link's `rate` and its `rate_changes`), rate 0
//!   allowed. A packet in service is served at whatever the rate is while it is served: a
//!   change takes effect for the packet in service too (its bits left are sent at the new
//!   rate), and nothing is sent while the rate is 0.
//!
//! In both, a packet starts its service only when the link can send something (the next
//! opportunity, the end of a rate-0 period): until then it waits in the queue, so an AQM sees
//! an outage as queueing delay, as in Mahimahi, where packets are dequeued at an opportunity.
//!
//! Work and capacity, for utilization: [`Service::capacity_at`] is the capacity offered over
//! `[0, t]` and [`Service::work_at`] the part of it packets used, both in bit x 1e9 units
//! (bit/s x ns) like the fixed-rate link's, with `work(b) - work(a) <= capacity(b) -
//! capacity(a)` for `a <= b` exactly: a trace's opportunity counts (all its 1500 bytes) at its
//! time, and the bytes packets took from it at that time.

use std::sync::Arc;

use crate::time::{Ns, NS_PER_SEC};

/// Bytes one delivery opportunity of a trace can carry (Mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// The window over which a trace's capacity is measured for the AQMs that read the link rate
/// ([`Service::aqm_rate`]): 100 ms, CoDel's interval and the order of a path's RTT, long
/// enough to hold many opportunities of a cellular trace (one per ms at 12 Mb/s), short enough
/// to follow its swings.
pub const AQM_RATE_WINDOW: Ns = 100 * NS_PER_MS;

const NS_PER_MS: u64 = 1_000_000;

/// A Mahimahi trace: the opportunity times (ms from the start, non-decreasing) of one period.
/// Shared ([`Arc`]) by every link that follows the same file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateTrace {
    /// Opportunity times, ms, non-decreasing; the last is the period (> 0).
    times_ms: Box<[u32]>,
}

impl RateTrace {
    /// Parses a trace file's text: one whole number of milliseconds per line, non-decreasing,
    /// at least one line, the last > 0 (Mahimahi's rules). The error is the reason (the caller
    /// names the key and file).
    pub fn parse(text: &str) -> Result<RateTrace, String> {
        let mut times: Vec<u32> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let s = line.trim();
            if s.is_empty() {
                // Mahimahi refuses empty lines; a final newline is not one.
                return Err(format!("line {}: empty line", i + 1));
            }
            let ms: u32 = s.parse().map_err(|_| {
                format!(
                    "line {}: {s:?} is not a whole number of milliseconds (below 2^32)",
                    i + 1
                )
            })?;
            if let Some(&prev) = times.last() {
                if ms < prev {
                    return Err(format!(
                        "line {}: {ms} ms is before the previous line's {prev} ms (times must \
                         be non-decreasing)",
                        i + 1
                    ));
                }
            }
            times.push(ms);
        }
        match times.last() {
            None => Err("empty trace (no delivery opportunities)".into()),
            Some(0) => Err("the trace must last a nonzero time (its last line is 0)".into()),
            Some(_) => Ok(RateTrace {
                times_ms: times.into_boxed_slice(),
            }),
        }
    }

    /// Reads and parses a trace file (see [`RateTrace::parse`]).
    pub fn read(path: &str) -> Result<RateTrace, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        Self::parse(&text)
    }

    /// Builds a trace from opportunity times (ms); panics on input [`RateTrace::parse`] refuses.
    pub fn from_times(times_ms: Vec<u32>) -> RateTrace {
        let text: Vec<String> = times_ms.iter().map(u32::to_string).collect();
        Self::parse(&text.join("\n")).expect("a valid trace")
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.times_ms.len()
    }

    /// Never true (a trace has at least one opportunity).
    pub fn is_empty(&self) -> bool {
        self.times_ms.is_empty()
    }

    /// The period (the last timestamp), ms.
    pub fn period_ms(&self) -> u64 {
        *self.times_ms.last().expect("a trace is not empty") as u64
    }

    /// Mean capacity over a period, bit/s: `len x 1500 x 8 / period`.
    pub fn mean_rate_bps(&self) -> f64 {
        self.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period_ms() as f64 / 1e3)
    }

    /// Time (ns) of opportunity `g` (counted from 0 over the repeated periods).
    #[inline]
    fn time_of(&self, g: u64) -> Ns {
        let n = self.len() as u64;
        ((g / n) * self.period_ms() + self.times_ms[(g % n) as usize] as u64) * NS_PER_MS
    }

    /// Opportunities with a time <= `t` ns.
    fn count_until(&self, t: Ns) -> u64 {
        let m = t / NS_PER_MS;
        let p = self.period_ms();
        let n = self.len() as u64;
        let r = (m % p) as u32;
        (m / p) * n + self.times_ms.partition_point(|&x| x <= r) as u64
    }

    /// The first opportunity with a time >= `t` ns.
    fn first_at_or_after(&self, t: Ns) -> u64 {
        if t == 0 {
            0
        } else {
            self.count_until(t - 1)
        }
    }
}

/// A piecewise-constant rate: `(from ns, bit/s)` pieces, the first from 0, times increasing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateSteps {
    steps: Box<[(Ns, u64)]>,
    /// Capacity (bit x 1e9) offered before each piece.
    cum: Box<[u128]>,
}

impl RateSteps {
    /// The rate `rate0` from 0, then `(at ns, rate)` changes (times increasing, > 0).
    pub fn new(rate0: u64, changes: &[(Ns, u64)]) -> RateSteps {
        let mut steps = vec![(0, rate0)];
        steps.extend_from_slice(changes);
        let mut cum = Vec::with_capacity(steps.len());
        let mut c = 0u128;
        for (i, &(at, r)) in steps.iter().enumerate() {
            cum.push(c);
            if let Some(&(next, _)) = steps.get(i + 1) {
                debug_assert!(next > at, "rate changes must increase in time");
                c += r as u128 * (next - at) as u128;
            }
        }
        RateSteps {
            steps: steps.into_boxed_slice(),
            cum: cum.into_boxed_slice(),
        }
    }

    /// Index of the piece holding `t`.
    #[inline]
    fn piece(&self, t: Ns) -> usize {
        self.steps.partition_point(|&(at, _)| at <= t) - 1
    }

    /// The rate at `t`, bit/s.
    pub fn rate_at(&self, t: Ns) -> u64 {
        self.steps[self.piece(t)].1
    }

    fn capacity_at(&self, t: Ns) -> u128 {
        let i = self.piece(t);
        let (at, r) = self.steps[i];
        self.cum[i] + r as u128 * (t - at) as u128
    }

    /// The first time >= `t` at which the rate is > 0 (`None`: 0 from then on).
    fn sending_from(&self, t: Ns) -> Option<Ns> {
        let i = self.piece(t);
        if self.steps[i].1 > 0 {
            return Some(t);
        }
        self.steps[i + 1..]
            .iter()
            .find(|&&(_, r)| r > 0)
            .map(|&(at, _)| at)
    }

    /// When `bits x 1e9` units of work started at `start` are done (the first ns by which
    /// the capacity offered since `start` covers them; `None`: never).
    fn finish(&self, start: Ns, work: u128) -> Option<Ns> {
        let target = self.capacity_at(start) + work;
        // the first piece whose end capacity reaches the target
        let mut i = self.piece(start);
        loop {
            let (at, r) = self.steps[i];
            let end_cap = self.cum.get(i + 1).copied();
            match end_cap {
                Some(c) if c < target => i += 1,
                _ => {
                    if r == 0 {
                        return None;
                    }
                    let need = target - self.cum[i];
                    let dt = need.div_ceil(r as u128);
                    return Some(at + u64::try_from(dt).ok()?);
                }
            }
        }
    }
}

/// What a link with a varying capacity follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Capacity {
    /// A Mahimahi trace.
    Trace(Arc<RateTrace>),
    /// A piecewise-constant rate.
    Steps(Arc<RateSteps>),
}

/// The service state of one link with a varying capacity (module docs).
#[derive(Clone, Debug)]
pub struct Service {
    cap: Capacity,
    /// Trace: the next opportunity not yet used or skipped.
    next: u64,
    /// Trace: bytes left of the opportunity at `left_at` (usable only by a packet that starts
    /// at `left_at`: one queued when the previous packet left).
    left: u32,
    left_at: Ns,
    /// Bytes of the packets whose service ended before the last one started.
    done_bytes: u64,
    /// The last packet served: its start, size (bytes; 0: none yet), the bytes it took from a
    /// leftover at its start (trace) and its first opportunity (trace).
    last_start: Ns,
    last_size: u32,
    last_pre: u32,
    last_first: u64,
}

impl Service {
    /// A link's service, starting at time 0.
    pub fn new(cap: Capacity) -> Service {
        Service {
            cap,
            next: 0,
            left: 0,
            left_at: 0,
            done_bytes: 0,
            last_start: 0,
            last_size: 0,
            last_pre: 0,
            last_first: 0,
        }
    }

    /// What the link follows.
    pub fn capacity(&self) -> &Capacity {
        &self.cap
    }

    /// The earliest time >= `now` at which a packet can start its service: `now` if what is
    /// left of an opportunity at `now` or the rate at `now` can send something, else the next
    /// opportunity or the end of a rate-0 period (`None`: the rate stays 0 to the end).
    pub fn start_at(&mut self, now: Ns) -> Option<Ns> {
        match &self.cap {
            Capacity::Steps(s) => s.sending_from(now),
            Capacity::Trace(tr) => {
                if self.left > 0 && self.left_at == now {
                    return Some(now);
                }
                self.next = self.next.max(tr.first_at_or_after(now));
                Some(tr.time_of(self.next))
            }
        }
    }

    /// Serves a packet of `bytes` that starts at `start` (a time [`Service::start_at`]
    /// returned, after the previous packet's end); returns when its last byte has been sent
    /// (`None`: never, the rate drops to 0 for good first).
    pub fn serve(&mut self, start: Ns, bytes: u32) -> Option<Ns> {
        self.done_bytes += self.last_size as u64;
        self.last_start = start;
        self.last_size = bytes;
        match &self.cap {
            Capacity::Steps(s) => s.finish(start, bytes as u128 * 8 * NS_PER_SEC as u128),
            Capacity::Trace(tr) => {
                let mut need = bytes;
                self.last_pre = 0;
                if self.left > 0 && self.left_at == start {
                    let take = need.min(self.left);
                    self.left -= take;
                    need -= take;
                    self.last_pre = take;
                    if need == 0 {
                        self.last_first = self.next;
                        return Some(start);
                    }
                }
                self.left = 0;
                self.next = self.next.max(tr.first_at_or_after(start));
                self.last_first = self.next;
                // opportunities needed: ceil(need / 1500)
                let k = need.div_ceil(OPPORTUNITY_BYTES) as u64;
                let last = self.next + k - 1;
                self.next = last + 1;
                let at = tr.time_of(last);
                self.left = k as u32 * OPPORTUNITY_BYTES - need;
                self.left_at = at;
                Some(at)
            }
        }
    }

    /// Capacity offered over `[0, t]`, bit x 1e9 (module docs).
    pub fn capacity_at(&self, t: Ns) -> u128 {
        match &self.cap {
            Capacity::Steps(s) => s.capacity_at(t),
            Capacity::Trace(tr) => {
                tr.count_until(t) as u128 * OPPORTUNITY_BYTES as u128 * 8 * NS_PER_SEC as u128
            }
        }
    }

    /// Work done over `[0, t]` (`t` >= the last start), bit x 1e9 (module docs): the bytes of
    /// the packets served before the last one, and what the last one got by `t`.
    pub fn work_at(&self, t: Ns) -> u128 {
        let unit = 8 * NS_PER_SEC as u128;
        let done = self.done_bytes as u128 * unit;
        if self.last_size == 0 || t < self.last_start {
            return done;
        }
        let size = self.last_size as u128 * unit;
        let got = match &self.cap {
            Capacity::Steps(s) => s.capacity_at(t) - s.capacity_at(self.last_start),
            Capacity::Trace(tr) => {
                let opps = tr.count_until(t).saturating_sub(self.last_first) as u128;
                (self.last_pre as u128 + opps * OPPORTUNITY_BYTES as u128) * unit
            }
        };
        done + got.min(size)
    }

    /// The rate the AQMs of a link following this capacity are told at `t`
    /// ([`aqm::QueueDisc::set_link_rate`], docs/traces.md "What AQMs are told"): a
    /// piecewise-constant rate's current value; for a trace, which has no rate of the moment,
    /// the capacity of its opportunities in the last whole window of [`AQM_RATE_WINDOW`]
    /// (`[(k - 1) W, k W)` for `k W <= t < (k + 1) W`), `None` before the first window ends
    /// (the caller keeps the nominal rate). A value of 0 (an outage) leaves the AQMs with the
    /// last positive rate.
    pub fn aqm_rate(&self, t: Ns) -> Option<u64> {
        match &self.cap {
            Capacity::Steps(s) => Some(s.rate_at(t)),
            Capacity::Trace(tr) => {
                let w = AQM_RATE_WINDOW;
                let k = t / w;
                if k == 0 {
                    return None;
                }
                let opps = tr.first_at_or_after(k * w) - tr.first_at_or_after((k - 1) * w);
                let bits = opps as u128 * OPPORTUNITY_BYTES as u128 * 8 * NS_PER_SEC as u128;
                Some((bits / w as u128) as u64)
            }
        }
    }

    /// The rate at `t` of piecewise-constant rate, else `None` (a trace has none).
    pub fn rate_at(&self, t: Ns) -> Option<u64> {
        match &self.cap {
            Capacity::Steps(s) => Some(s.rate_at(t)),
            Capacity::Trace(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = NS_PER_MS;

    fn trace(times: &[u32]) -> Service {
        Service::new(Capacity::Trace(Arc::new(RateTrace::from_times(
            times.to_vec(),
        ))))
    }

    #[test]
    fn parse_follows_mahimahis_rules() {
        assert_eq!(RateTrace::parse("1\n2\n2\n5\n").unwrap().len(), 4);
        assert!(RateTrace::parse("").unwrap_err().contains("empty trace"));
        assert!(RateTrace::parse("0\n0\n").unwrap_err().contains("nonzero"));
        assert!(RateTrace::parse("3\n2\n")
            .unwrap_err()
            .contains("non-decreasing"));
        assert!(RateTrace::parse("1\n\n2\n").unwrap_err().contains("line 2"));
        assert!(RateTrace::parse("1\nx\n").unwrap_err().contains("line 2"));
        let t = RateTrace::parse("1").unwrap();
        assert_eq!(t.period_ms(), 1);
        assert!((t.mean_rate_bps() - 12e6).abs() < 1e-6);
    }

    #[test]
    fn opportunities_repeat_with_the_last_timestamp_as_period() {
        // Mahimahi: at the wrap the base moves by schedule.back(), so "0, 2" gives
        // opportunities at 0, 2, 2, 4, 4, 6, ... ms.
        let t = RateTrace::from_times(vec![0, 2]);
        let got: Vec<Ns> = (0..6).map(|g| t.time_of(g) / MS).collect();
        assert_eq!(got, vec![0, 2, 2, 4, 4, 6]);
        assert_eq!(t.count_until(0), 1);
        assert_eq!(t.count_until(2 * MS), 3);
        assert_eq!(t.count_until(3 * MS), 3);
        assert_eq!(t.first_at_or_after(MS + 1), 1);
        assert_eq!(t.first_at_or_after(2 * MS + 1), 3);
    }

    #[test]
    fn bytes_accumulate_across_opportunities_and_leftovers_are_lost_when_idle() {
        // one opportunity per ms
        let mut s = trace(&[1]);
        // a 1000-byte packet at 0: first opportunity at 1 ms, 500 bytes left there
        assert_eq!(s.start_at(0), Some(MS));
        assert_eq!(s.serve(MS, 1000), Some(MS));
        // the next packet queued at 1 ms takes the 500 left and 500 of the opportunity at 2
        assert_eq!(s.start_at(MS), Some(MS));
        assert_eq!(s.serve(MS, 1000), Some(2 * MS));
        // a 3000-byte packet queued then: 500 left at 2 ms, then 3 and 4 ms (2500 bytes)
        assert_eq!(s.serve(2 * MS, 3000), Some(4 * MS));
        // 500 left at 4 ms, lost: the next packet arrives at 4.5 ms and waits for 5 ms
        assert_eq!(s.start_at(4 * MS + MS / 2), Some(5 * MS));
        assert_eq!(s.serve(5 * MS, 100), Some(5 * MS));
        // the work: all packets' bytes once done; capacity: 5 opportunities by 5 ms
        let unit = 8 * NS_PER_SEC as u128;
        assert_eq!(s.work_at(5 * MS), 5100 * unit);
        assert_eq!(s.capacity_at(5 * MS), 5 * 1500 * unit);
    }

    #[test]
    fn an_outage_holds_packets_until_the_next_opportunity() {
        // opportunities at 1..=10 ms, then none until the period (100 ms) repeats
        let mut times: Vec<u32> = (1..=10).collect();
        times.push(100);
        let mut s = trace(&times);
        assert_eq!(s.start_at(20 * MS), Some(100 * MS));
        assert_eq!(s.serve(100 * MS, 1500), Some(100 * MS));
        assert_eq!(s.start_at(100 * MS + 1), Some(101 * MS));
    }

    #[test]
    fn rate_steps_serve_the_packet_in_service_at_the_new_rate() {
        // 12 Mb/s (1 ms per 1500 bytes), 0 from 0.5 ms to 100.5 ms, 12 Mb/s again: a packet
        // started at 0 is half sent at the dip and ends 0.5 ms after it.
        let r = 12_000_000;
        let s = RateSteps::new(r, &[(MS / 2, 0), (100 * MS + MS / 2, r)]);
        let mut sv = Service::new(Capacity::Steps(Arc::new(s)));
        assert_eq!(sv.start_at(0), Some(0));
        assert_eq!(sv.serve(0, 1500), Some(101 * MS));
        assert_eq!(sv.start_at(MS), Some(100 * MS + MS / 2));
        // work is the capacity used: half the packet by the dip, all of it at the end
        let unit = 8 * NS_PER_SEC as u128;
        assert_eq!(sv.work_at(50 * MS), 750 * unit);
        assert_eq!(sv.work_at(101 * MS), 1500 * unit);
        assert_eq!(sv.capacity_at(101 * MS), 1500 * unit);
        // a rate 0 to the end: never done, never started
        let s = RateSteps::new(r, &[(MS / 2, 0)]);
        let mut sv = Service::new(Capacity::Steps(Arc::new(s)));
        assert_eq!(sv.serve(0, 1500), None);
        assert_eq!(sv.start_at(MS), None);
    }
}
