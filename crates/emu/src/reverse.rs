//! The reverse direction of the emulated link (receivers to senders in `aqmlab emulate`,
//! the far side to the inside in `aqmlab shell`): either a constant delay ([`DelayLine`]:
//! the ACK path of a dumbbell without a reverse trace), or a second [`Bottleneck`] with its
//! own queue discipline, buffer, rate or trace ([`ReverseLink`]): the dumbbell's
//! `reverse_rate_trace` (drop-tail with the side buffer, as the simulator's `R2->R1`) or
//! `aqmlab shell`'s downlink.

use aqm::{BitsPerSec, QdiscConfig, QueueLimit};
use experiment::results::{LinkSummary, TimeSeries};
use experiment::service::{Capacity, Service};

use crate::link::{Bottleneck, DelayLine, Delayed, StatsWindow};
use crate::packet::IpPacket;

/// A reverse direction with a queue: what [`Reverse::Link`] is built from.
#[derive(Clone, Debug)]
pub struct ReverseLink {
    /// Nominal rate (the fixed rate without `capacity`).
    pub rate: BitsPerSec,
    /// A varying capacity (a Mahimahi trace, rate steps); `None`: the fixed `rate`.
    pub capacity: Option<Capacity>,
    /// Buffer.
    pub limit: QueueLimit,
    /// Queue discipline.
    pub qdisc: QdiscConfig,
    /// Name of the link in the results (`links.NAME`, the time series' `link`).
    pub name: String,
    /// netem impairments of its packets after the transmitter (`reverse_netem`, `aqmlab shell
    /// --reverse-netem`; `experiment::netem`); `None`: none.
    pub netem: Option<std::sync::Arc<experiment::netem::NetemSpec>>,
}

/// The reverse direction.
pub enum Reverse {
    /// A constant delay, an unlimited FIFO, no rate.
    Delay(DelayLine),
    /// A bottleneck of its own.
    Link(Box<Bottleneck>),
}

impl Reverse {
    /// The reverse direction for `link` (`None`: a delay of `delay_ns`), with `delay_ns` of
    /// propagation after the link, statistics over `stats`, qdisc seed `seed`.
    pub fn new(
        link: Option<&ReverseLink>,
        delay_ns: u64,
        seed: u64,
        stats: StatsWindow,
    ) -> Result<Self, aqm::ConfigError> {
        let Some(l) = link else {
            return Ok(Reverse::Delay(DelayLine::new(delay_ns)));
        };
        // its own random stream: the forward qdisc has `seed`
        let mut b = Bottleneck::new(
            &l.qdisc,
            l.limit,
            l.rate,
            delay_ns,
            seed ^ 0x0052_4556_4552_5345,
            stats,
            &l.name,
        )?;
        if let Some(c) = &l.capacity {
            b.set_service(Service::new(c.clone()));
        }
        if let Some(n) = &l.netem {
            // stream 1: the forward direction's stage has stream 0
            let rng = experiment::rng::Rng::derive(seed, experiment::rng::Stream::Netem, 1);
            b.set_netem(experiment::netem::Netem::new(n.clone(), rng));
        }
        Ok(Reverse::Link(Box::new(b)))
    }

    /// Brings a queued link up to `now` (nothing for a delay).
    pub fn advance(&mut self, now: u64) {
        if let Reverse::Link(b) = self {
            b.advance(now);
        }
    }

    /// A packet that arrived at `now`.
    pub fn arrive(&mut self, now: u64, pkt: IpPacket) {
        match self {
            Reverse::Delay(d) => d.push(now, pkt),
            Reverse::Link(b) => {
                b.advance(now);
                b.arrive(now, pkt);
            }
        }
    }

    /// The next packet due by `now`, with its scheduled release time.
    pub fn pop_due(&mut self, now: u64) -> Option<Delayed> {
        match self {
            Reverse::Delay(d) => d.pop_due(now),
            Reverse::Link(b) => b.pop_due(now),
        }
    }

    /// The next time something happens without a new arrival.
    pub fn next_deadline(&self) -> Option<u64> {
        match self {
            Reverse::Delay(d) => d.next_deadline(),
            Reverse::Link(b) => Some(b.next_deadline()),
        }
    }

    /// The link's summary over `[warmup, end]` (`None` for a delay).
    pub fn summary(&mut self, end: u64) -> Option<LinkSummary> {
        match self {
            Reverse::Delay(_) => None,
            Reverse::Link(b) => {
                let name = b.qdisc().aqm_name().to_string();
                Some(b.summary(end, &name))
            }
        }
    }

    /// The link's time series (empty for a delay).
    pub fn timeseries(&self) -> TimeSeries {
        match self {
            Reverse::Delay(_) => TimeSeries::default(),
            Reverse::Link(b) => b.timeseries().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use experiment::service::RateTrace;
    use std::sync::Arc;

    fn packet(len: usize) -> IpPacket {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        IpPacket::new(p, 0)
    }

    fn stats() -> StatsWindow {
        StatsWindow {
            warmup_ns: 0,
            interval_ns: 10_000_000,
        }
    }

    /// Without a reverse link the direction is the old constant delay.
    #[test]
    fn without_a_link_it_is_a_delay() {
        let mut r = Reverse::new(None, 5, 1, stats()).unwrap();
        r.arrive(10, packet(40));
        assert_eq!(r.next_deadline(), Some(15));
        assert_eq!(r.pop_due(15).map(|d| d.0), Some(15));
        assert!(r.summary(100).is_none());
    }

    /// A reverse link following a Mahimahi trace of one opportunity every 2 ms releases a
    /// burst of ten 1500-byte packets at the opportunities (2, 4, ..., 20 ms) plus the delay,
    /// as `experiment::service` serves the simulator's `R2->R1`; a 4-packet drop-tail buffer
    /// drops the other six (the first packet waits in the queue for its opportunity).
    #[test]
    fn a_reverse_trace_paces_the_reverse_direction() {
        let link = ReverseLink {
            rate: BitsPerSec::from_mbps(6),
            capacity: Some(Capacity::Trace(Arc::new(RateTrace::from_times(vec![2])))),
            limit: QueueLimit::Packets(4),
            qdisc: QdiscConfig::default_for("droptail").unwrap(),
            name: "reverse".into(),
            netem: None,
        };
        let mut r = Reverse::new(Some(&link), 1_000_000, 1, stats()).unwrap();
        for _ in 0..10 {
            r.arrive(0, packet(1500));
        }
        let end = 100_000_000;
        r.advance(end);
        let out: Vec<u64> = std::iter::from_fn(|| r.pop_due(end)).map(|d| d.0).collect();
        let ms = 1_000_000;
        assert_eq!(out, (1..=4).map(|k| 2 * k * ms + ms).collect::<Vec<_>>());
        let s = r.summary(end).unwrap();
        assert_eq!((s.arrivals, s.drops, s.tx_packets), (10, 6, 4));
        assert_eq!(r.timeseries().link[0], "reverse");
    }
    /// A reverse link with netem (`reverse_netem`, `aqmlab shell --reverse-netem`): its
    /// packets pass the netem stage after the transmitter, so `delay 7ms` adds 7 ms to each
    /// release (1500 B at 12 Mb/s: 1 ms of transmission, then 7 ms, then the 1 ms delay line),
    /// and the summary reports the stage's counters.
    #[test]
    fn a_reverse_link_runs_its_netem_stage() {
        let spec = experiment::netem::NetemSpec::parse("delay 7ms").unwrap();
        let link = ReverseLink {
            rate: BitsPerSec::from_mbps(12),
            capacity: None,
            limit: QueueLimit::Packets(10),
            qdisc: QdiscConfig::default_for("droptail").unwrap(),
            name: "reverse".into(),
            netem: Some(Arc::new(spec)),
        };
        let ms = 1_000_000;
        let mut r = Reverse::new(Some(&link), ms, 1, stats()).unwrap();
        r.arrive(0, packet(1500));
        r.arrive(0, packet(1500));
        let end = 100 * ms;
        let mut out = vec![];
        let mut t = 0;
        while t < end {
            t = r.next_deadline().unwrap().min(end);
            r.advance(t);
            out.extend(std::iter::from_fn(|| r.pop_due(t)).map(|d| d.0));
        }
        assert_eq!(out, vec![9 * ms, 10 * ms]);
        let s = r.summary(end).unwrap();
        assert!(s.netem.is_some(), "the netem counters are reported");
    }
}
