//! The forwarder: one thread moving packets between the sender-side and receiver-side TUN
//! devices through the emulated links ([`crate::link`]).
//!
//! Loop: read the clock (`CLOCK_MONOTONIC`, ns since the run's origin `t0`), bring the
//! bottleneck up to now, write every packet whose release time has come, read what the
//! devices hold (each packet timestamped on arrival), then sleep in `ppoll` on both
//! descriptors until the next deadline (timer slack 1 ns). Every write's lateness (actual
//! write time minus scheduled release time) is recorded: it is the forwarder's whole timing
//! error, serialisation and propagation delay together, reported in [`Timing`].

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use experiment::monitor::LogHistogram;
use experiment::results::{ClassSeries, LinkSummary, TimeSeries};
use serde::Serialize;

use crate::clock::{now_ns, realtime_priority, tight_timer_slack};
use crate::config::EmuConfig;
use crate::link::{Bottleneck, StatsWindow};
use crate::packet::IpPacket;
use crate::reverse::Reverse;
use crate::tun::{Tun, MAX_PACKET};

/// Packets read from one device per wake-up before the links are served again.
const READ_BATCH: usize = 64;

/// Lateness of releases (actual write minus scheduled time), µs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Lateness {
    /// Packets written.
    pub packets: u64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Largest, µs.
    pub max_us: f64,
}

/// The forwarder's own timing record.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timing {
    /// Data direction (bottleneck: serialisation + delay).
    pub forward: Lateness,
    /// ACK direction (delay only, or its own link: see [`crate::reverse`]).
    pub reverse: Lateness,
    /// Loop iterations.
    pub wakeups: u64,
    /// Writes the devices refused (packet lost; 0 in a healthy run).
    pub write_failures: u64,
    /// Whether the forwarder thread ran under `SCHED_FIFO` ([`crate::clock::realtime_priority`]).
    pub realtime: bool,
}

/// What a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Seconds emulated (the run's end minus its origin).
    pub seconds: f64,
    /// The bottleneck's summary over `[warmup, end]`.
    pub bottleneck: LinkSummary,
    /// The reverse direction's link summary (`None`: a constant delay), under its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse: Option<(String, LinkSummary)>,
    /// The reverse link's time series (empty for a constant delay).
    #[serde(skip)]
    pub reverse_timeseries: TimeSeries,
    /// The bottleneck's time series.
    #[serde(skip)]
    pub timeseries: TimeSeries,
    /// The bottleneck's per-class time series (empty for a FIFO).
    #[serde(skip)]
    pub class_timeseries: ClassSeries,
    /// Packets written to the devices (both directions).
    pub packets_forwarded: u64,
    /// Timing errors.
    pub timing: Timing,
    /// Bottleneck arrivals and drops by ECN capability (statistics window).
    pub ecn: crate::link::EcnCounts,
}

struct Late {
    h: LogHistogram,
    max: u64,
}

impl Late {
    fn new() -> Self {
        Late {
            h: LogHistogram::new(),
            max: 0,
        }
    }
    fn record(&mut self, ns: u64) {
        self.h.record(ns);
        self.max = self.max.max(ns);
    }
    fn report(&self) -> Lateness {
        Lateness {
            packets: self.h.count(),
            mean_us: self.h.mean() / 1e3,
            p50_us: self.h.quantile(0.5) / 1e3,
            p99_us: self.h.quantile(0.99) / 1e3,
            p999_us: self.h.quantile(0.999) / 1e3,
            max_us: self.max as f64 / 1e3,
        }
    }
}

/// The forwarder between two TUN devices.
pub struct Forwarder {
    cfg: EmuConfig,
    snd: Tun,
    rcv: Tun,
    /// Receiver address of each flow group (its packets' class: `cfg.group_class`).
    group_addr: Vec<[u8; 4]>,
    link: Bottleneck,
    rev: Reverse,
    stop: Arc<AtomicBool>,
    fwd_late: Late,
    rev_late: Late,
    wakeups: u64,
    write_failures: u64,
    forwarded: u64,
    end: u64,
    realtime: bool,
}

impl Forwarder {
    /// A forwarder for `cfg` between `snd` (the senders' device) and `rcv` (the receivers'),
    /// where flow group `g` sends to `group_addr[g]`.
    pub fn new(
        cfg: EmuConfig,
        snd: Tun,
        rcv: Tun,
        group_addr: Vec<[u8; 4]>,
    ) -> Result<Self, aqm::ConfigError> {
        let stats = StatsWindow {
            warmup_ns: cfg.warmup_ns,
            interval_ns: cfg.sample_interval_ns,
        };
        let mut link = Bottleneck::new(
            &cfg.qdisc,
            cfg.limit,
            cfg.rate,
            cfg.fwd_delay_ns,
            cfg.seed,
            stats,
            &cfg.name,
        )?;
        if let Some(c) = &cfg.capacity {
            link.set_service(experiment::service::Service::new(c.clone()));
        }
        if let Some(n) = &cfg.netem {
            let rng = experiment::rng::Rng::derive(cfg.seed, experiment::rng::Stream::Netem, 0);
            link.set_netem(experiment::netem::Netem::new(n.clone(), rng));
        }
        let rev = Reverse::new(cfg.reverse.as_ref(), cfg.rev_delay_ns, cfg.seed, stats)?;
        Ok(Forwarder {
            cfg,
            snd,
            rcv,
            group_addr,
            link,
            rev,
            stop: Arc::new(AtomicBool::new(false)),
            fwd_late: Late::new(),
            rev_late: Late::new(),
            wakeups: 0,
            write_failures: 0,
            forwarded: 0,
            end: 0,
            realtime: false,
        })
    }

    /// A flag that ends [`Forwarder::run`] at its next wake-up (at most 10 ms later).
    pub fn stop_handle(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    fn class_of(&self, pkt: &[u8]) -> u8 {
        let Some(d) = crate::ipv4::dst(pkt) else {
            return 0;
        };
        self.group_addr
            .iter()
            .position(|a| *a == d)
            .and_then(|g| self.cfg.group_class.get(g).copied())
            .unwrap_or(0)
    }

    /// Forwards from `t0_ns` (a `CLOCK_MONOTONIC` instant, may lie in the near future) for the
    /// configured duration, or until stopped. Device errors other than a lost packet end the
    /// run with the error.
    pub fn run(&mut self, t0_ns: u64) -> io::Result<()> {
        tight_timer_slack();
        self.realtime = realtime_priority();
        let end = self.cfg.duration_ns;
        let mut buf = vec![0u8; MAX_PACKET];
        let rel = |abs: u64| abs.saturating_sub(t0_ns);
        loop {
            self.wakeups += 1;
            let mut now = rel(now_ns());
            if now >= end || self.stop.load(Ordering::Relaxed) {
                self.end = now.min(end);
                return Ok(());
            }
            self.link.advance(now);
            self.rev.advance(now);
            while let Some((due, p)) = self.link.pop_due(now) {
                let ok = self.rcv.write(&p.data)?;
                self.fwd_late.record(rel(now_ns()).saturating_sub(due));
                self.count_write(ok);
            }
            while let Some((due, p)) = self.rev.pop_due(now) {
                let ok = self.snd.write(&p.data)?;
                self.rev_late.record(rel(now_ns()).saturating_sub(due));
                self.count_write(ok);
            }
            let mut got = 0;
            for _ in 0..READ_BATCH {
                let Some(n) = self.snd.read(&mut buf)? else {
                    break;
                };
                now = rel(now_ns());
                let class = self.class_of(&buf[..n]);
                self.link.advance(now);
                self.link
                    .arrive(now, IpPacket::new(buf[..n].to_vec(), class));
                got += 1;
            }
            for _ in 0..READ_BATCH {
                let Some(n) = self.rcv.read(&mut buf)? else {
                    break;
                };
                now = rel(now_ns());
                self.rev.arrive(now, IpPacket::new(buf[..n].to_vec(), 0));
                got += 1;
            }
            if got > 0 {
                continue;
            }
            let deadline = [Some(self.link.next_deadline()), self.rev.next_deadline()]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(end)
                .min(end);
            let now = rel(now_ns());
            // Wake at least every 10 ms to notice a stop request.
            let wait = deadline.saturating_sub(now).min(10_000_000);
            if wait > 0 {
                self.sleep(wait)?;
            }
        }
    }

    fn count_write(&mut self, ok: bool) {
        if ok {
            self.forwarded += 1;
        } else {
            self.write_failures += 1;
        }
    }

    /// Waits up to `ns` for either device to become readable.
    fn sleep(&self, ns: u64) -> io::Result<()> {
        let mut fds = [
            libc::pollfd {
                fd: self.snd.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.rcv.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: fds and ts are valid for the call; no signal mask is passed.
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(())
    }

    /// The results of the run (call after [`Forwarder::run`]).
    pub fn report(&mut self) -> Report {
        let name = self.link.qdisc().aqm_name().to_string();
        let end = self.end.max(self.cfg.warmup_ns + 1);
        Report {
            seconds: self.end as f64 / 1e9,
            bottleneck: self.link.summary(end, &name),
            reverse: self.rev.summary(end).map(|s| {
                (
                    self.cfg
                        .reverse
                        .as_ref()
                        .map_or("reverse", |r| &r.name)
                        .into(),
                    s,
                )
            }),
            reverse_timeseries: self.rev.timeseries(),
            timeseries: self.link.timeseries().clone(),
            class_timeseries: self.link.class_timeseries().clone(),
            packets_forwarded: self.forwarded,
            ecn: self.link.ecn_counts(),
            timing: Timing {
                forward: self.fwd_late.report(),
                reverse: self.rev_late.report(),
                wakeups: self.wakeups,
                write_failures: self.write_failures,
                realtime: self.realtime,
            },
        }
    }
}
