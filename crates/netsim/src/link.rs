//! Point-to-point unidirectional links: an egress queue, a transmitter that
//! serialises one packet at a time, optional Bernoulli loss, and a
//! propagation delay.
//!
//! Event discipline (htsim style): a link has at most one pending
//! [`Event::TxDone`] (for its head-of-line packet). A transmitted packet is handed
//! to the event queue's pipes ([`EventQueue::pipe_push`], `pipes.rs`), which
//! deliver it at the far node `delay` later, ordered among the events as a pipe
//! with one pending event for its oldest packet would deliver it.
//!
//! Idle-link fast path: on a link that is neither monitored nor traced, a packet
//! that starts its transmission with nothing queued behind it needs no
//! [`Event::TxDone`]: it is counted as sent and enters the pipe at once, and the
//! transmitter is busy until `busy_until`. A packet that arrives before then is
//! queued and one `TxDone` at `busy_until` starts it. The pipe's event and that
//! `TxDone` are scheduled *as of* the times the skipped event would have
//! scheduled them ([`EventQueue::schedule_as_of`]), so simultaneous events keep
//! their order and results are those of the one-event-per-packet discipline
//! (`tests/tcp_golden.rs` and the summaries of varied scenarios are identical;
//! only the event count falls, by 35-40 % on a dumbbell, whose access links and
//! reverse path are mostly idle). On such a link running drop-tail, a packet
//! that arrives while the link is idle does not even enter the queue:
//! `Qdisc::pass_through` records what enqueue and dequeue would have recorded
//! and the packet goes to the wire. [`Link::counters_at`] reports a fast-path
//! packet as sent only from the end of its serialisation.
//!
//! Counter invariants (checked by `Simulation::check_conservation`):
//! `arrivals = drops_enqueue + drops_victim + drops_dequeue + tx_pkts + queued + in_tx` and
//! `tx_pkts = lost + delivered + in_pipe`.
//!
//! Transmitted work, window-exact ([`Link::tx_work_at`]): serialisation
//! times are whole nanoseconds (rounded down, the remainder carried to the
//! next packet), so packet `k` really occupies the *virtual* interval
//! `[s_k + c_k / C, s_k + c_k / C + bits_k / C)`, where `s_k` is its start,
//! `c_k` the carry when it started and `C` the rate. These intervals are
//! disjoint and each ends less than 1 ns after the packet's real
//! completion. Crediting every packet's bits linearly over its virtual
//! interval gives a cumulative work `W(t)` (in bit x 1e9 units, i.e.
//! rate x ns) with `W(b) - W(a) <= C (b - a)` for every `a <= b`, exactly, in
//! integers. It costs three stores per packet.
//!
//! Varying capacity: a link with a [`Service`] (a Mahimahi trace, or a rate with
//! `rate_changes`) is served by `experiment::service`, the model the emulator calls too: a
//! packet starts when the service can send (else the transmitter waits, as after a fast-path
//! packet, with a [`Event::TxDone`] at that time) and ends when the service says; work and
//! capacity are the service's. Such a link takes the traced (slow) path, so a link with a fixed
//! rate pays nothing for it: its paths test one flag (`slow`) as they tested whether the link
//! is traced.
//!
//! netem: a link with `netem` ([`crate::netem`]) offers each packet that leaves its
//! transmitter (and survives the random loss) to its netem stage instead of the pipe; the
//! stage puts what it releases into the pipe. Such a link takes the slow path too.

use crate::engine::{Event, EventQueue, Ns, NS_PER_SEC};
use crate::fastdiv::Divisor;
use crate::netem::LinkNetem;
use crate::packet::{Packet, F_CE, F_CE_IN};
use crate::pcap::PcapTap;
use crate::queue::{inst, Queue, SPARE_RING_SLOTS};
use crate::trace::{TraceBuf, TraceKind};
use aqm::QueueStats;
use experiment::monitor::LinkMonitor;
use experiment::netem::{Netem, NetemCounters};
use experiment::rng::Rng;
use experiment::service::Service;

/// Cumulative per-link counters (packets unless named otherwise), as reports read them
/// ([`Link::tally`], [`Link::counters_at`]); a link stores only its own part, [`LinkTally`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets offered to the egress queue.
    pub arrivals: u64,
    /// Packets whose transmission completed.
    pub tx_pkts: u64,
    /// Bytes whose transmission completed.
    pub tx_bytes: u64,
    /// Packets lost to the link's Bernoulli loss (after transmission).
    pub lost: u64,
    /// Dropped at enqueue (hard limit or AQM).
    pub drops_enqueue: u64,
    /// Dropped at dequeue by the AQM (CoDel).
    pub drops_dequeue: u64,
    /// Stored packets dropped by a scheduler to make room for an arrival (victims: the head
    /// of the fattest class when the shared buffer is full).
    pub drops_victim: u64,
    /// CE marks set by this hop's AQM (counted when the packet leaves the
    /// queue).
    pub marks: u64,
    /// Packets that reached the far node.
    pub delivered: u64,
    /// Integral of queue length in packets over time (packet·ns).
    pub q_area_pkts: u128,
    /// Integral of queue length in bytes over time (byte·ns).
    pub q_area_bytes: u128,
}

impl LinkCounters {
    /// All drops at this hop caused by the queue (not random loss).
    pub fn queue_drops(&self) -> u64 {
        self.drops_enqueue + self.drops_dequeue + self.drops_victim
    }
}

/// What a link counts itself; the rest of its [`LinkCounters`] are its queue's counters
/// ([`Link::tally`]): every arrival is offered to the queue (or passes through it), which
/// counts it, and counts the drops at enqueue, at dequeue and of victims, as the link did.
/// A link that kept them too spent 40 bytes on copies (four times per flow on a dumbbell
/// with access links). (`packed(8)`: the two `u128` integrals would align the tally, and
/// every [`Link`], to 16 bytes: padding four times per flow on such a dumbbell; the
/// integrals are read by value.)
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed(8))]
struct LinkTally {
    tx_pkts: u64,
    tx_bytes: u64,
    lost: u64,
    marks: u64,
    q_area_pkts: u128,
    q_area_bytes: u128,
}

/// A unidirectional link with its egress queue.
///
/// Laid out (`repr(C)`) with the state an idle hop reads and writes for every packet in its
/// first 104 bytes, then the counters, the queue, and what only reports read: a packet
/// crossing an idle link touches a few of its 344 bytes, and a dumbbell has hundreds of
/// thousands of links. (It was also aligned to a 64-byte line, which rounded it up to 512
/// bytes: a tenth of a long-lived flow's memory on the standard dumbbell, for a hot part
/// that spans two lines either way.) What few links have (a trace, a capture tap, a monitor,
/// a varying capacity, a netem stage, a random loss) is in one box, [`LinkExtra`], absent on
/// the others (the access links): 8 bytes instead of 48 (a test keeps a `Link` at 344
/// bytes; its queue, drop-tail on such links, holds no AQM state, see
/// `aqm::QueueDisc`).
#[derive(Debug)]
#[repr(C)]
pub struct Link {
    /// What few links have (`None`: none of it, the default).
    extra: Option<Box<LinkExtra>>,
    /// End of the transmission of the last packet sent without a [`Event::TxDone`] (the
    /// idle-link fast path, module docs); the transmitter is busy until then although
    /// `has_tx` is false.
    busy_until: Ns,
    /// Start time of the packet in transmission.
    tx_start: Ns,
    /// `tx_carry` when the packet in transmission started (its virtual
    /// start is `tx_start + tx_start_carry / rate`).
    tx_start_carry: u64,
    /// Remainder of `bits * 1e9 / rate` carried between packets so the
    /// long-run rate is exact although each serialisation time is an integer.
    tx_carry: u64,
    /// Completion time of the last completed transmission.
    last_done: Ns,
    q_last_change: Ns,
    /// Transmission rate in bits per second (> 0), with its multiplier for the serialisation
    /// time's division ([`Link::rate_bps`]; the nominal rate of a link with a [`Service`]).
    rate: Divisor,
    /// Size (bytes) of the last fast-path packet and whether the random loss took it, so
    /// that [`Link::counters_at`] can leave it out while it is still being serialised.
    /// (Right after the 20-byte `rate`, which leaves it a 4-byte slot.)
    fast_size: u32,
    /// One-way propagation delay (ns).
    pub delay: Ns,
    fast_lost: bool,
    /// A [`Event::TxDone`] is pending at `busy_until` to start the next queued packet.
    free_armed: bool,
    /// The link is traced or captured or has a [`Service`] or a netem stage: arrivals and
    /// dequeues take the slow path.
    slow: bool,
    /// `tx_pkt` holds a packet in transmission, with a pending [`Event::TxDone`] (or, with a
    /// [`Service`], none yet). A flag beside the others rather than an `Option<Packet>`, which
    /// costs 8 bytes more a link: four times per flow on a dumbbell with access links.
    has_tx: bool,
    /// True if the queue has a periodic law (`poll_at()` is `Some`; by the `aqm` contract
    /// it is then always `Some`, else always `None`), so the driver skips polling the
    /// others. Set with the queue.
    pub periodic: bool,
    /// True once the warm-up period is over.
    pub warm: bool,
    /// Node the egress queue belongs to.
    pub from: u32,
    /// Node at the far end.
    pub to: u32,
    /// What the link counts itself ([`Link::tally`] adds its queue's counters).
    ctr: LinkTally,
    /// The packet in transmission while `has_tx` (a stale one otherwise).
    tx_pkt: Packet,
    /// Time of the earliest pending [`Event::AqmTimer`] ([`NO_AQM_TIMER`]: none).
    pub aqm_timer_at: Ns,
    /// The egress queue discipline.
    pub queue: Queue,
}

/// [`Link::aqm_timer_at`] when no [`Event::AqmTimer`] is pending.
pub const NO_AQM_TIMER: Ns = Ns::MAX;

/// What few links have, boxed out of the [`Link`] (module docs of [`Link`]).
#[derive(Debug, Default)]
struct LinkExtra {
    /// Per-packet event rows of a traced link (`None`: not traced, the default; see
    /// [`crate::trace`]).
    trace: Option<Box<TraceBuf>>,
    /// The capture tap of a captured link (`None`: not captured; see [`crate::pcap`]):
    /// every packet that starts its transmission is recorded.
    pcap: Option<Box<PcapTap>>,
    /// Monitoring state (only for monitored links).
    mon: Option<Box<LinkMonitor>>,
    /// The service of a link with a varying capacity (`None`: the fixed `rate`).
    service: Option<Box<LinkService>>,
    /// The netem stage of a link with `netem` (`None`: none).
    netem: Option<Box<LinkNetem>>,
    /// The Bernoulli loss applied to every packet after transmission (`None`: no loss ever
    /// set on this link).
    loss: Option<Box<LinkLoss>>,
    /// The counters of the queues this link ran before its current one (`None`: it runs
    /// its first; [`Link::replace_queue`]), less the packets they handed to their
    /// successor, which counts them again.
    replaced: Option<Box<QueueStats>>,
}

/// A link's varying capacity and the rate its queue was last told (bit/s, see
/// [`Link::tell_rate`]).
#[derive(Debug)]
struct LinkService {
    service: Service,
    told_rate: u64,
}

impl std::ops::Deref for LinkService {
    type Target = Service;
    fn deref(&self) -> &Service {
        &self.service
    }
}

impl std::ops::DerefMut for LinkService {
    fn deref_mut(&mut self) -> &mut Service {
        &mut self.service
    }
}

/// A link's Bernoulli loss: the probability, in [0, 1], and the link's own random stream
/// (drawn from only while the probability is above 0).
#[derive(Debug)]
struct LinkLoss {
    p: f64,
    rng: Rng,
}

impl Link {
    /// A new idle link.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        from: u32,
        to: u32,
        rate_bps: u64,
        delay: Ns,
        loss: f64,
        loss_rng: Rng,
        queue: Queue,
    ) -> Self {
        let mut link = Link {
            from,
            to,
            rate: Divisor::new(rate_bps),
            delay,
            periodic: queue.poll_at().is_some(),
            queue,
            has_tx: false,
            tx_pkt: Packet::default(),
            tx_start: 0,
            tx_start_carry: 0,
            last_done: 0,
            busy_until: 0,
            free_armed: false,
            fast_size: 0,
            fast_lost: false,
            tx_carry: 0,
            ctr: LinkTally::default(),
            q_last_change: 0,
            aqm_timer_at: NO_AQM_TIMER,
            warm: false,
            extra: None,
            slow: false,
        };
        if loss > 0.0 {
            link.extra_mut().loss = Some(Box::new(LinkLoss {
                p: loss,
                rng: loss_rng,
            }));
        }
        link
    }

    /// The link's [`LinkExtra`], created empty if it had none.
    #[cold]
    fn extra_mut(&mut self) -> &mut LinkExtra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// The trace buffer of a traced link.
    pub fn trace(&self) -> Option<&TraceBuf> {
        self.extra.as_deref()?.trace.as_deref()
    }

    /// The trace buffer of a traced link, to drain it.
    pub fn trace_mut(&mut self) -> Option<&mut TraceBuf> {
        self.extra.as_deref_mut()?.trace.as_deref_mut()
    }

    /// Starts (`Some`) or stops (`None`) tracing the link's packets.
    pub fn set_trace(&mut self, t: Option<Box<TraceBuf>>) {
        self.extra_mut().trace = t;
        self.update_slow();
    }

    /// The capture tap of a captured link.
    pub fn pcap(&self) -> Option<&PcapTap> {
        self.extra.as_deref()?.pcap.as_deref()
    }

    /// The capture tap of a captured link, to collect its records.
    pub fn pcap_mut(&mut self) -> Option<&mut PcapTap> {
        self.extra.as_deref_mut()?.pcap.as_deref_mut()
    }

    /// Starts (`Some`) or stops (`None`) capturing the link's packets.
    pub fn set_pcap(&mut self, t: Option<Box<PcapTap>>) {
        self.extra_mut().pcap = t;
        self.update_slow();
    }

    /// The monitor of a monitored link.
    pub fn mon(&self) -> Option<&LinkMonitor> {
        self.extra.as_deref()?.mon.as_deref()
    }

    /// The monitor of a monitored link, to sample it.
    pub fn mon_mut(&mut self) -> Option<&mut LinkMonitor> {
        self.extra.as_deref_mut()?.mon.as_deref_mut()
    }

    /// The monitor of a monitored link, to sample it, and the queue, to read it.
    pub fn mon_and_queue(&mut self) -> (Option<&mut LinkMonitor>, &Queue) {
        let mon = self.extra.as_deref_mut().and_then(|x| x.mon.as_deref_mut());
        (mon, &self.queue)
    }

    /// Monitors the link (set before the run starts).
    pub fn set_mon(&mut self, m: Box<LinkMonitor>) {
        self.extra_mut().mon = Some(m);
    }

    fn service(&self) -> Option<&LinkService> {
        self.extra.as_deref()?.service.as_deref()
    }

    fn netem(&self) -> Option<&LinkNetem> {
        self.extra.as_deref()?.netem.as_deref()
    }

    /// Puts `stage` between the transmitter and the propagation delay (set before the run
    /// starts).
    pub fn set_netem(&mut self, stage: Netem<Packet>) {
        self.extra_mut().netem = Some(Box::new(LinkNetem::new(stage)));
        self.update_slow();
    }

    /// The netem stage's counters (`None`: no netem on this link).
    pub fn netem_counters(&self) -> Option<NetemCounters> {
        self.netem().map(LinkNetem::counters)
    }

    /// Packets held by the netem stage.
    pub fn netem_held(&self) -> u64 {
        self.netem().map_or(0, LinkNetem::held)
    }

    /// The netem stage's watchdog ([`Event::Netem`]) at `now`.
    #[cold]
    pub fn netem_wake(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        if let Some(n) = self
            .extra
            .as_deref_mut()
            .and_then(|x| x.netem.as_deref_mut())
        {
            n.wake(now, id, ev);
        }
    }

    /// Makes the link follow `service` from time 0 (set before the run starts); the `rate`
    /// it was built with stays the nominal rate reported; the queue is told the rate of the
    /// moment as the run goes ([`Link::tell_rate`]).
    pub fn set_service(&mut self, service: Service) {
        let told_rate = self.rate_bps();
        self.extra_mut().service = Some(Box::new(LinkService { service, told_rate }));
        self.update_slow();
    }

    /// On a link with a [`Service`]: tells the queue the rate of the moment
    /// ([`Service::aqm_rate`]: a `rate_changes` rate, or a trace's capacity over its last
    /// window) when it differs from what it was told, so that the AQMs that read the link rate
    /// follow it. Called on the slow path (arrivals, dequeues, AQM timers); a link with a fixed
    /// rate never calls it.
    #[cold]
    fn tell_rate(&mut self, now: Ns) {
        let nominal = self.rate_bps();
        let Some(s) = self
            .extra
            .as_deref_mut()
            .and_then(|x| x.service.as_deref_mut())
        else {
            return;
        };
        let r = s.aqm_rate(now).unwrap_or(nominal);
        if r != s.told_rate {
            s.told_rate = r;
            self.queue.set_link_rate(aqm::BitsPerSec(r));
        }
    }

    /// Sets the Bernoulli loss probability (in [0, 1]) for packets finishing transmission
    /// from now; `rng` gives the link's loss stream the first time a loss is set.
    pub fn set_loss(&mut self, p: f64, rng: impl FnOnce() -> Rng) {
        match self
            .extra
            .as_deref_mut()
            .and_then(|x| x.loss.as_deref_mut())
        {
            Some(l) => l.p = p,
            None if p > 0.0 => self.extra_mut().loss = Some(Box::new(LinkLoss { p, rng: rng() })),
            None => {}
        }
    }

    /// Recomputes `slow` after the trace buffer, the capture tap, the service or the netem
    /// stage changed.
    pub fn update_slow(&mut self) {
        self.slow = self.extra.as_deref().is_some_and(|x| {
            x.trace.is_some() || x.pcap.is_some() || x.service.is_some() || x.netem.is_some()
        });
    }

    /// Offered capacity over `[0, t]`, in bit x 1e9 units (bit/s x ns): `rate_bps * t` for a
    /// fixed rate, the service's ([`Service::capacity_at`]) for a varying one, so
    /// `(tx_work_at(b) - tx_work_at(a)) / (capacity_at(b) - capacity_at(a))` is the
    /// utilization over `[a, b]`.
    pub fn capacity_at(&self, t: Ns) -> u128 {
        if let Some(s) = self.service() {
            return s.capacity_at(t);
        }
        self.rate_bps() as u128 * t as u128
    }

    /// The rate at `t` (bit/s): a piecewise-constant rate's current value, else the link's
    /// (nominal) rate.
    pub fn rate_at(&self, t: Ns) -> u64 {
        self.service()
            .and_then(|s| s.rate_at(t))
            .unwrap_or(self.rate_bps())
    }

    /// Transmission rate in bits per second.
    #[inline]
    pub fn rate_bps(&self) -> u64 {
        self.rate.get()
    }

    /// Serialisation time of `bytes` at this link's rate (ns). Each call
    /// rounds down and carries the remainder to the next packet, so a
    /// back-to-back train of packets takes exactly `bits / rate` in total
    /// (to within one ns). From an idle start with no carry, one packet takes
    /// `floor(8 * bytes * 1e9 / rate)` ns.
    /// (`u64` arithmetic suffices: packets are at most 65 535 bytes and
    /// rates at most 1e15 bit/s, so the numerator stays below 2e15.)
    #[inline]
    fn tx_time(&mut self, bytes: u32) -> Ns {
        let num = bytes as u64 * 8 * NS_PER_SEC + self.tx_carry;
        let (t, carry) = self.rate.div_rem(num);
        self.tx_carry = carry;
        t
    }

    /// Adds the queue-length integral up to `now`. (An empty queue adds nothing: on the
    /// idle links that most packets cross, one length query and no multiplication.)
    #[inline(always)]
    fn account_area(&mut self, now: Ns) {
        let dt = (now - self.q_last_change) as u128;
        if dt > 0 {
            let n = self.queue.len_pkts();
            if n > 0 {
                self.ctr.q_area_pkts += n as u128 * dt;
                self.ctr.q_area_bytes += self.queue.len_bytes() as u128 * dt;
            }
            self.q_last_change = now;
        }
    }

    /// Queue-length integrals (packet·ns, byte·ns) up to `now`.
    pub fn area_at(&self, now: Ns) -> (u128, u128) {
        let dt = now.saturating_sub(self.q_last_change) as u128;
        (
            self.ctr.q_area_pkts + self.queue.len_pkts() as u128 * dt,
            self.ctr.q_area_bytes + self.queue.len_bytes() as u128 * dt,
        )
    }

    /// Transmitted work up to `t` (>= the last event time), in bit x 1e9
    /// units (rate in bit/s x ns): every packet's bits credited linearly
    /// over its virtual transmission interval (module docs). Window-exact:
    /// `tx_work_at(b) - tx_work_at(a) <= rate_bps * (b - a)` for `a <= b`,
    /// so `(W(b) - W(a)) / (rate (b - a))` is a utilization in [0, 1]. Once
    /// the link is idle, `W = tx_bytes * 8e9`.
    /// (A link with a [`Service`] reports the service's work, window-exact against
    /// [`Link::capacity_at`] too.)
    pub fn tx_work_at(&self, t: Ns) -> u128 {
        if let Some(s) = self.service() {
            return s.work_at(t);
        }
        let r = self.rate_bps() as u128;
        let done = self.ctr.tx_bytes as u128 * 8 * NS_PER_SEC as u128;
        // Carry left by the last completed packet: the part of its virtual
        // interval that lies after its real completion (< 1 ns).
        let carry = if self.has_tx {
            self.tx_start_carry
        } else {
            self.tx_carry
        } as u128;
        let elapsed = t.saturating_sub(self.last_done) as u128 * r;
        let mut w = done.saturating_sub(carry.saturating_sub(elapsed));
        if let Some(p) = self.tx_ref() {
            let bits = p.size as u128 * 8 * NS_PER_SEC as u128;
            let run = (t.saturating_sub(self.tx_start) as u128 * r)
                .saturating_sub(self.tx_start_carry as u128);
            w += run.min(bits);
        }
        w
    }

    /// A packet arrives at the egress of this link (link index `id`).
    #[inline]
    pub fn arrive(&mut self, now: Ns, pkt: Packet, id: u32, ev: &mut EventQueue) {
        if self.slow {
            self.arrive_traced(now, pkt, id, ev);
        } else {
            self.arrive_as::<false>(now, pkt, id, ev);
        }
    }

    /// [`Link::arrive`] on a traced link or one with a [`Service`], out of line so that the
    /// plain path stays as small as without them.
    #[cold]
    #[inline(never)]
    fn arrive_traced(&mut self, now: Ns, pkt: Packet, id: u32, ev: &mut EventQueue) {
        self.arrive_as::<true>(now, pkt, id, ev);
    }

    /// The arrival, recording trace rows if `TRACE` and `self.trace` is `Some` (`TRACE`: the
    /// slow path, see `slow`).
    #[inline(always)]
    fn arrive_as<const TRACE: bool>(
        &mut self,
        now: Ns,
        mut pkt: Packet,
        id: u32,
        ev: &mut EventQueue,
    ) {
        if TRACE && self.service().is_some() {
            self.tell_rate(now);
        }
        if pkt.has(F_CE) {
            pkt.flags |= F_CE_IN;
        } else {
            pkt.flags &= !F_CE_IN;
        }
        self.account_area(now);
        if self.fast::<TRACE>() && !self.has_tx && now >= self.busy_until {
            // Idle drop-tail link: the packet goes straight to the wire (module docs).
            match self.queue.pass_through(inst(now), pkt) {
                Ok(p) => {
                    self.transmit_fast(now, p, id, ev);
                    return;
                }
                Err(p) => pkt = p,
            }
        }
        if self.queue.storage_slots() == 0 {
            self.borrow_storage(ev);
        }
        let res = if TRACE {
            let mut trace = self
                .extra
                .as_deref_mut()
                .and_then(|x| x.trace.as_deref_mut());
            self.queue.enqueue(inst(now), pkt, &mut |p, _r| {
                ev.dropped(p.flow);
                if let Some(t) = trace.as_deref_mut() {
                    t.push(TraceKind::DropVictim, now, &p);
                }
            })
        } else {
            self.queue.enqueue(inst(now), pkt, &mut |p, _r| {
                ev.dropped(p.flow);
            })
        };
        let dropped = matches!(res, aqm::Enqueue::Dropped(..));
        if dropped {
            ev.dropped(pkt.flow);
        }
        if TRACE {
            if let Some(t) = self.trace_mut() {
                let kind = if dropped {
                    TraceKind::DropArrival
                } else {
                    TraceKind::Enqueue
                };
                t.push(kind, now, &pkt);
            }
        }
        if !self.has_tx {
            // (an armed wake-up due now starts the next packet itself: starting one here too
            // would put two transmissions on the wire)
            if now >= self.busy_until && !self.free_armed {
                self.start_next_as::<TRACE>(now, id, ev);
            } else {
                self.arm_free(id, ev);
            }
        }
    }

    /// Takes a spare ring as the queue's storage, if there is one ([`crate::queue::SpareRings`]).
    #[inline]
    fn borrow_storage(&mut self, ev: &mut EventQueue) {
        if let Some(r) = ev.rings.take() {
            if let Some(r) = self.queue.adopt_storage(r) {
                ev.rings.put(r);
            }
        }
    }

    /// Lends the storage of the emptied queue, if small ([`crate::queue::SpareRings`]).
    #[inline]
    fn lend_storage(&mut self, ev: &mut EventQueue) {
        if let Some(r) = self.queue.release_storage(SPARE_RING_SLOTS) {
            ev.rings.put(r);
        }
    }

    /// The idle-link fast path (module docs) applies: the link is neither traced nor
    /// monitored.
    #[inline(always)]
    fn fast<const TRACE: bool>(&self) -> bool {
        !TRACE && self.extra.as_deref().is_none_or(|x| x.mon.is_none())
    }

    /// While a fast-path packet is on the wire, makes sure a [`Event::TxDone`] at its end
    /// starts the next queued packet. It is scheduled as of the packet's start, where a
    /// transmission with an event would have scheduled it.
    #[inline]
    fn arm_free(&mut self, id: u32, ev: &mut EventQueue) {
        if !self.free_armed && self.queue.len_pkts() > 0 {
            ev.schedule_as_of(self.busy_until, Event::TxDone(id), self.tx_start);
            self.free_armed = true;
        }
    }

    /// Starts transmitting the next packet from the queue, if any.
    #[inline]
    fn start_next(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        if self.slow {
            self.start_next_traced(now, id, ev);
        } else {
            self.start_next_as::<false>(now, id, ev);
        }
    }

    /// [`Link::start_next`] on a traced link (out of line, see [`Link::arrive_traced`]).
    #[cold]
    #[inline(never)]
    fn start_next_traced(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        self.start_next_as::<true>(now, id, ev);
    }

    /// The dequeue, recording trace rows if `TRACE` and `self.trace` is `Some`.
    #[inline]
    fn start_next_as<const TRACE: bool>(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        if TRACE && !self.service_ready(now, id, ev) {
            return;
        }
        if TRACE && self.service().is_some() {
            self.tell_rate(now);
        }
        self.account_area(now);
        let next = if TRACE {
            let mut trace = self
                .extra
                .as_deref_mut()
                .and_then(|x| x.trace.as_deref_mut());
            self.queue.dequeue(inst(now), &mut |p, _r| {
                ev.dropped(p.flow);
                if let Some(t) = trace.as_deref_mut() {
                    t.push(TraceKind::DropDequeue, now, &p);
                }
            })
        } else {
            self.queue.dequeue(inst(now), &mut |p, _r| {
                ev.dropped(p.flow);
            })
        };
        if self.queue.len_pkts() == 0 {
            self.lend_storage(ev);
        }
        if let Some(p) = next {
            let marked = p.has(F_CE) && !p.has(F_CE_IN);
            if marked {
                self.ctr.marks += 1;
            }
            if TRACE {
                if let Some(t) = self.trace_mut() {
                    if marked {
                        t.push(TraceKind::Mark, now, &p);
                    }
                    t.push(TraceKind::Dequeue, now, &p);
                }
                if let Some(c) = self.pcap_mut() {
                    c.push(now, &p);
                }
            }
            if let Some(m) = self.extra.as_deref_mut().and_then(|x| x.mon.as_deref_mut()) {
                let sojourn = now.saturating_sub(p.enq);
                m.on_dequeue(sojourn, self.warm, p.flow);
                if !m.classes.is_empty() {
                    m.on_class_dequeue(self.queue.last_class(), sojourn, self.warm);
                }
            }
            self.tx_start = now;
            if TRACE {
                if let Some(s) = self
                    .extra
                    .as_deref_mut()
                    .and_then(|x| x.service.as_deref_mut())
                {
                    // varying capacity: the service says when the packet is done (never: it
                    // stays in transmission, with no event)
                    let done = s.serve(now, p.size);
                    self.tx_put(p);
                    if let Some(d) = done {
                        ev.schedule(d, Event::TxDone(id));
                    }
                    return;
                }
            }
            self.tx_start_carry = self.tx_carry;
            let t = self.tx_time(p.size);
            if self.fast::<TRACE>() && self.queue.len_pkts() == 0 {
                // Idle-link fast path: nothing waits behind this packet, so its completion
                // needs no event; it is counted and enters the pipe now (module docs).
                self.finish_fast(now + t, p, id, ev);
            } else {
                self.tx_put(p);
                ev.schedule(now + t, Event::TxDone(id));
            }
        } else if self.queue.len_pkts() > 0 {
            self.wait_for_shaper(now, id, ev);
        }
    }

    /// The queue holds packets but gave none: a shaping qdisc (CAKE's `bandwidth`) waits for
    /// its next send time ([`aqm::Qdisc::ready_at`]); the transmitter stays idle until then
    /// and a [`Event::TxDone`] asks again (as [`Link::service_ready`] waits for a service).
    #[cold]
    #[inline(never)]
    fn wait_for_shaper(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        if let Some(t) = self.queue.ready_at() {
            if t.0 > now && !self.free_armed {
                self.busy_until = t.0;
                self.tx_start = now;
                self.arm_free(id, ev);
            }
        }
    }

    /// On a link with a [`Service`] and packets queued: true if a packet can start at `now`;
    /// else the transmitter waits until the service can send (a [`Event::TxDone`] then, none
    /// if it never can) and false. True on other links.
    #[cold]
    fn service_ready(&mut self, now: Ns, id: u32, ev: &mut EventQueue) -> bool {
        let Some(s) = self
            .extra
            .as_deref_mut()
            .and_then(|x| x.service.as_deref_mut())
        else {
            return true;
        };
        if self.queue.len_pkts() == 0 {
            return true;
        }
        match s.start_at(now) {
            Some(t) if t == now => true,
            Some(t) => {
                // (an armed wake-up is for this very time: only its event or an arrival at
                // or after `busy_until` calls this)
                debug_assert!(!self.free_armed || self.busy_until == t);
                if !self.free_armed {
                    self.busy_until = t;
                    self.tx_start = now;
                    self.arm_free(id, ev);
                }
                false
            }
            None => {
                // the rate stays 0: nothing is sent again (the queue keeps its packets)
                self.busy_until = Ns::MAX;
                self.free_armed = true;
                false
            }
        }
    }

    /// The head-of-line transmission finished: the packet enters the pipe
    /// (unless lost) and the next one starts.
    #[inline]
    pub fn tx_done(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        if self.slow {
            self.tx_done_slow(now, id, ev);
            return;
        }
        self.free_armed = false;
        if let Some(p) = self.tx_take() {
            self.complete::<false>(now, p, id, ev);
        }
        self.start_next_as::<false>(now, id, ev);
    }

    /// [`Link::tx_done`] on the slow path (traced, a [`Service`], a netem stage), out of line:
    /// the plain path tests `slow` once, as [`Link::start_next`] did.
    #[cold]
    #[inline(never)]
    fn tx_done_slow(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        self.free_armed = false;
        if let Some(p) = self.tx_take() {
            self.complete::<true>(now, p, id, ev);
        }
        self.start_next_as::<true>(now, id, ev);
    }

    /// Starts transmitting `p` (which passed through an empty drop-tail queue) on the fast
    /// path: what [`Link::start_next_as`] does for a packet with nothing queued behind it.
    #[inline(always)]
    fn transmit_fast(&mut self, now: Ns, p: Packet, id: u32, ev: &mut EventQueue) {
        self.tx_start = now;
        self.tx_start_carry = self.tx_carry;
        let t = self.tx_time(p.size);
        self.finish_fast(now + t, p, id, ev);
    }

    /// A fast-path packet whose serialisation ends at `done`: the transmitter is busy until
    /// then, and the packet is counted and put in the pipe now.
    #[inline(always)]
    fn finish_fast(&mut self, done: Ns, p: Packet, id: u32, ev: &mut EventQueue) {
        self.busy_until = done;
        self.fast_size = p.size;
        let lost = self.ctr.lost;
        self.complete::<false>(done, p, id, ev);
        self.fast_lost = self.ctr.lost != lost;
    }

    /// The transmission of `p` ends at `done`: count it, apply the random loss and put it
    /// in flight, due at the far node at `done + delay`, in the place among simultaneous
    /// events that a pipe event scheduled as of `done` would take ([`EventQueue::pipe_push`]);
    /// on the slow path (`SLOW`), a netem stage takes it instead (`done` is then now).
    #[inline(always)]
    fn complete<const SLOW: bool>(&mut self, done: Ns, p: Packet, id: u32, ev: &mut EventQueue) {
        self.last_done = done;
        self.ctr.tx_pkts += 1;
        self.ctr.tx_bytes += p.size as u64;
        if self
            .extra
            .as_deref_mut()
            .is_some_and(|x| x.loss.as_deref_mut().is_some_and(|l| l.rng.bernoulli(l.p)))
        {
            self.ctr.lost += 1;
            ev.dropped(p.flow);
        } else if let Some(n) = SLOW
            .then(|| {
                self.extra
                    .as_deref_mut()
                    .and_then(|x| x.netem.as_deref_mut())
            })
            .flatten()
        {
            n.offer(done, p, id, ev);
        } else {
            ev.pipe_push(id, done, p);
        }
    }

    /// Runs the AQM's periodic law if due.
    pub fn aqm_timer(&mut self, now: Ns) {
        if self.slow {
            self.tell_rate(now);
        }
        if let Some(t) = self.queue.poll_at() {
            if t.0 <= now {
                self.queue.on_timer(inst(now));
            }
        }
    }

    /// Replaces the queue discipline; packets stored in the old one are
    /// dequeued (any AQM drops at dequeue are counted) and offered to the new
    /// one in order (any drops counted). Conservation is preserved.
    pub fn replace_queue(&mut self, now: Ns, mut new_queue: Queue, id: u32, ev: &mut EventQueue) {
        self.account_area(now);
        let mut moved = Vec::with_capacity(self.queue.len_pkts());
        let mut trace = self
            .extra
            .as_deref_mut()
            .and_then(|x| x.trace.as_deref_mut());
        let mut record = |p: &Packet| {
            if let Some(t) = trace.as_deref_mut() {
                t.push(TraceKind::DropDequeue, now, p);
            }
        };
        while let Some(p) = self.queue.dequeue(inst(now), &mut |p, _r| {
            ev.dropped(p.flow);
            record(&p);
        }) {
            moved.push(p);
        }
        // the old queue's counters carry on, but for the packets it handed over, which the
        // new one counts as arrivals (and drops, if it drops them)
        let mut old = self.queue.stats();
        old.received -= moved.len() as u64;
        for p in moved {
            let res = new_queue.enqueue(inst(now), p, &mut |v, _r| {
                ev.dropped(v.flow);
                record(&v);
            });
            if let aqm::Enqueue::Dropped(p, _) = res {
                ev.dropped(p.flow);
                record(&p);
            }
        }
        self.queue = new_queue;
        self.extra_mut()
            .replaced
            .get_or_insert_with(Default::default)
            .add(&old);
        // (built with the nominal rate: the next arrival, dequeue or timer tells it the
        // current one)
        let rate = self.queue.link().rate.0;
        let classes = self.queue.num_classes();
        if let Some(x) = self.extra.as_deref_mut() {
            if let Some(s) = x.service.as_deref_mut() {
                s.told_rate = rate;
            }
            if let Some(m) = x.mon.as_deref_mut() {
                m.set_classes(classes);
            }
        }
        self.periodic = self.queue.poll_at().is_some();
        self.aqm_timer_at = NO_AQM_TIMER;
        if !self.has_tx {
            if now >= self.busy_until {
                self.start_next(now, id, ev);
            } else {
                self.arm_free(id, ev);
            }
        }
    }

    /// Packets currently being serialised (0 or 1) with a pending [`Event::TxDone`]; a
    /// fast-path packet is already counted as sent and is in the pipe.
    pub fn in_tx(&self) -> u64 {
        self.has_tx as u64
    }

    /// The packet in transmission, if any.
    #[inline]
    fn tx_ref(&self) -> Option<&Packet> {
        self.has_tx.then_some(&self.tx_pkt)
    }

    /// Takes the packet in transmission, if any.
    #[inline]
    fn tx_take(&mut self) -> Option<Packet> {
        std::mem::take(&mut self.has_tx).then_some(self.tx_pkt)
    }

    /// Puts `p` in transmission.
    #[inline]
    fn tx_put(&mut self, p: Packet) {
        self.tx_pkt = p;
        self.has_tx = true;
    }

    /// The counters of every queue this link has run: its queue's, plus those of the queues
    /// [`Link::replace_queue`] replaced (less the packets they handed over).
    pub fn queue_stats(&self) -> QueueStats {
        let mut q = self.queue.stats();
        if let Some(r) = self.extra.as_deref().and_then(|x| x.replaced.as_deref()) {
            q.add(r);
        }
        q
    }

    /// The counters as they stand (a fast-path packet counts as sent from its start;
    /// `delivered` 0: [`Link::counters_at`] gives both as reports want them): what the link
    /// counts itself with what its queues count ([`LinkTally`]).
    pub fn tally(&self) -> LinkCounters {
        let q = self.queue_stats();
        let t = self.ctr;
        LinkCounters {
            arrivals: q.received,
            tx_pkts: t.tx_pkts,
            tx_bytes: t.tx_bytes,
            lost: t.lost,
            drops_enqueue: q.dropped_enqueue(),
            drops_dequeue: q.dropped_dequeue,
            drops_victim: q.dropped_victim,
            marks: t.marks,
            delivered: 0,
            q_area_pkts: t.q_area_pkts,
            q_area_bytes: t.q_area_bytes,
        }
    }

    /// The counters as of `now` (>= the last event time), with a fast-path packet that is
    /// still being serialised not yet counted as sent (nor as lost): what the counters
    /// would read had its completion been an event. `delivered` is the event queue's count
    /// ([`EventQueue::delivered`]): the pipes count arrivals, not the link.
    pub fn counters_at(&self, now: Ns, delivered: u64) -> LinkCounters {
        let mut c = self.tally();
        c.delivered = delivered;
        if self.service().is_none() && now < self.busy_until {
            c.tx_pkts -= 1;
            c.tx_bytes -= self.fast_size as u64;
            c.lost -= self.fast_lost as u64;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A standard dumbbell has four access links per flow: what few links have stays out of
    /// line ([`LinkExtra`]), and no field leaves more than two bytes of padding, and a drop-tail
    /// queue holds no AQM state (`aqm::QueueDisc`), and the queue's counters are not
    /// copied in the link's ([`LinkTally`]), so that a `Link` is 344 bytes.
    #[test]
    fn link_stays_small() {
        assert!(
            std::mem::size_of::<Link>() <= 344,
            "Link is {} bytes",
            std::mem::size_of::<Link>()
        );
    }
}
