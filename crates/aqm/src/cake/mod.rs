//! CAKE (Common Applications Kept Enhanced), the qdisc of Linux `net/sched/sch_cake.c`
//! (docs/aqm/cake.md).
//!
//! * [`config`]: the options by `tc-cake`'s names.
//! * [`tins`]: the Diffserv tin modes: DSCP-to-tin tables, thresholds and quanta
//!   (`cake_config_*`), per-tin rate and COBALT parameters (`cake_set_rate`).
//! * [`shaper`]: overhead compensation (`cake_calc_overhead`) and the shaper's time.
//! * [`hash`]: the 8-way set-associative flow hash and the host records (`cake_hash`).
//! * [`stats`]: per-tin statistics (`cake_dump_stats`).
//!
//! This file is the qdisc: `cake_enqueue`, `cake_drop`, `cake_dequeue`, `cake_advance_shaper`
//! and `cake_reconfigure`, step for step. Each tin has 1024 flow queues (preallocated at
//! construction for the configured number of tins), each with COBALT state
//! ([`crate::cobalt`]), a DRR++ deficit and its rotation (new/sparse, old/bulk, decaying);
//! packets live in one pool ([`crate::flowq::FlowQueues`], bucket = tin x 1024 + queue).
//! Tins are reported as classes (`bulk`, `best_effort`, `voice`, ...).
//!
//! Differences from Linux, all documented in docs/aqm/cake.md: memory is counted as packet
//! bytes (Linux: `skb->truesize`); the overflow victim is the fattest queue found by a scan
//! (Linux keeps a max-heap: ties may go elsewhere); lengths are IP lengths (Linux subtracts
//! the MAC header it sees when an overhead is given); no `fwmark`, no tc filters, no GSO.

pub mod ack_filter;
pub mod config;
pub mod hash;
pub mod shaper;
pub mod stats;
pub mod tins;

use crate::backlog::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::cobalt::{queue_empty, queue_full, should_drop, CobaltParams, CobaltVars};
use crate::error::ConfigError;
use crate::flowq::{hash_key, FlowQueues};
use crate::packet::Packet;
use crate::params::{ParamInfo, Params};
use crate::qdisc::ops::{QdiscOps, QdiscSpec};
use crate::rng::Rng;
use crate::time::{Duration, Instant};
pub use config::CakeConfig;
use config::{AckFilter, FlowMode};
use hash::{FlowSet, Keys, Slot, TinHash, CAKE_QUEUES};
use shaper::Overhead;
use stats::{ewma, TinStats};
use tins::{TinMode, TinRate};

const NIL: u16 = u16::MAX;
const NEW: usize = 0;
const OLD: usize = 1;
const DECAYING: usize = 2;

/// Linux `quantum_div[i] = 65535 / i` (`[0] = 65535`).
#[inline]
fn quantum_div(i: u32) -> u32 {
    if i == 0 {
        65535
    } else {
        65535 / i.min(CAKE_QUEUES as u32)
    }
}

/// One flow queue's scheduling state (Linux `struct cake_flow`, without its packets).
#[derive(Clone, Copy, Debug)]
struct Flow {
    cvars: CobaltVars,
    deficit: i32,
    dropped: u32,
    next: u16,
    prev: u16,
    /// The list it is on: `NEW`, `OLD`, `DECAYING` or 3 (none).
    list: u8,
}

impl Flow {
    const EMPTY: Flow = Flow {
        cvars: CobaltVars::new(),
        deficit: 0,
        dropped: 0,
        next: NIL,
        prev: NIL,
        list: 3,
    };
}

#[derive(Clone, Copy, Debug)]
struct ListHead {
    head: u16,
    tail: u16,
}

/// One tin (Linux `struct cake_tin_data`).
#[derive(Clone, Debug)]
struct Tin {
    slots: Vec<Slot>,
    flows: Vec<Flow>,
    hash: TinHash,
    lists: [ListHead; 3],
    rate: TinRate,
    cparams: CobaltParams,
    tin_quantum: u16,
    tin_deficit: i32,
    time_next: u64,
    backlog: u64,
    len_pkts: usize,
    sparse: u32,
    bulk: u32,
    decaying: u32,
    unresponsive: u32,
    st: TinStats,
    qs: QueueStats,
}

impl Tin {
    fn new() -> Tin {
        Tin {
            slots: vec![Slot::default(); CAKE_QUEUES],
            flows: vec![Flow::EMPTY; CAKE_QUEUES],
            hash: TinHash::default(),
            lists: [ListHead {
                head: NIL,
                tail: NIL,
            }; 3],
            rate: TinRate::new(0, 1514, 5_000_000, 100_000_000),
            cparams: CobaltParams::linux(Duration::ZERO, Duration::ZERO, Duration::ZERO),
            tin_quantum: 0,
            tin_deficit: 0,
            time_next: 0,
            backlog: 0,
            len_pkts: 0,
            sparse: 0,
            bulk: 0,
            decaying: 0,
            unresponsive: 0,
            st: TinStats::default(),
            qs: QueueStats::default(),
        }
    }

    fn list_del(&mut self, f: usize) {
        let Flow {
            next, prev, list, ..
        } = self.flows[f];
        if list > 2 {
            return;
        }
        let l = list as usize;
        if prev == NIL {
            self.lists[l].head = next;
        } else {
            self.flows[prev as usize].next = next;
        }
        if next == NIL {
            self.lists[l].tail = prev;
        } else {
            self.flows[next as usize].prev = prev;
        }
        let fl = &mut self.flows[f];
        fl.next = NIL;
        fl.prev = NIL;
        fl.list = 3;
    }

    /// `list_move_tail` (also `list_add_tail` for a flow on no list).
    fn move_tail(&mut self, f: usize, l: usize) {
        self.list_del(f);
        let tail = self.lists[l].tail;
        if tail == NIL {
            self.lists[l].head = f as u16;
        } else {
            self.flows[tail as usize].next = f as u16;
        }
        self.lists[l].tail = f as u16;
        let fl = &mut self.flows[f];
        fl.prev = tail;
        fl.next = NIL;
        fl.list = l as u8;
    }

    #[inline]
    fn front(&self, l: usize) -> Option<usize> {
        let h = self.lists[l].head;
        (h != NIL).then_some(h as usize)
    }

    #[inline]
    fn active(&self) -> u32 {
        self.sparse + self.bulk
    }
}

/// Running CAKE.
#[derive(Debug, Clone)]
pub struct Cake<P> {
    cfg: CakeConfig,
    fq: FlowQueues<P>,
    tins: Vec<Tin>,
    tin_mode: TinMode,
    flow_mode: FlowMode,
    key: u64,
    overhead: Overhead,
    /// Global shaper (`q->rate_ns`, `rate_shft`, `rate_bps` in bytes/s).
    rate_ns: u64,
    rate_shft: u32,
    rate_bps: u64,
    time_next: u64,
    failsafe_next: u64,
    cur_tin: usize,
    buffer_used: u64,
    buffer_max_used: u64,
    buffer_limit: u64,
    /// autorate-ingress state (`cake_enqueue`).
    last_packet_time: u64,
    avg_window_begin: u64,
    avg_packet_interval: u64,
    avg_window_bytes: u64,
    avg_peak_bandwidth: u64,
    last_reconfig_time: u64,
    /// Shaper waits (`qstats.overlimits`).
    overlimits: u64,
    last_class: u8,
    link_limit: QueueLimit,
    link: LinkInfo,
    stats: QueueStats,
    rng: Rng,
}

impl<P> QdiscSpec for Cake<P> {
    const NAME: &'static str = "cake";
    type Config = CakeConfig;
    fn describe() -> Vec<ParamInfo> {
        <CakeConfig as Params>::describe()
    }
    fn validate_config(c: &CakeConfig) -> Result<(), ConfigError> {
        c.validate()
    }
    fn set_config_param(c: &mut CakeConfig, path: &str, value: f64) -> Result<(), ConfigError> {
        c.set_param(path, value)
    }
    fn get_config_param(c: &CakeConfig, path: &str) -> Option<f64> {
        c.get_param(path)
    }
    fn set_config_field(c: &mut CakeConfig, path: &str, value: f64) -> Result<(), ConfigError> {
        c.set_field(path, value)
    }
    fn raw_config_value(
        _cfg: &CakeConfig,
        key: &str,
        raw: crate::config::RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        CakeConfig::raw_value(key, raw, require_unit)
    }
}

impl<P: Packet> Cake<P> {
    /// `cake_reconfigure`: per-tin rates, quanta and COBALT parameters, the global shaper
    /// and the memory limit from the configuration and `rate_bps`.
    fn reconfigure(&mut self) {
        let mtu = self.link.mtu + 14; // psched_mtu: the device MTU plus the link header
        let target = self.cfg.target_ns();
        let interval = self.cfg.rtt.0;
        for (i, (rate, quantum)) in self
            .tin_mode
            .thresholds(self.rate_bps)
            .into_iter()
            .enumerate()
        {
            let t = &mut self.tins[i];
            t.rate = TinRate::new(rate, mtu, target, interval);
            t.cparams = CobaltParams::linux(
                Duration(t.rate.target),
                Duration(t.rate.interval),
                Duration(t.rate.mtu_time),
            );
            t.tin_quantum = quantum;
            t.st.threshold_rate = rate;
            t.st.target_ns = t.rate.target;
            t.st.interval_ns = t.rate.interval;
            t.st.flow_quantum = t.rate.flow_quantum as u32;
        }
        self.rate_ns = self.tins[0].rate.rate_ns;
        self.rate_shft = self.tins[0].rate.rate_shft;
        let mut limit = if self.cfg.memlimit > 0 {
            self.cfg.memlimit as u64
        } else if self.rate_bps > 0 {
            // rate_bps * interval_us / (USEC_PER_SEC / 4), at least 4 MiB
            (self.rate_bps * (interval / 1000) / 250_000).max(4 << 20)
        } else {
            u32::MAX as u64
        };
        let sch_limit = match self.link_limit {
            QueueLimit::Packets(n) => n as u64 * mtu as u64,
            QueueLimit::Bytes(b) => b,
        };
        limit = limit.min(sch_limit.max(self.cfg.memlimit as u64));
        self.buffer_limit = limit;
        self.overhead = self.cfg.overhead_comp();
    }

    /// The memory limit in bytes (Linux `buffer_limit`).
    pub fn buffer_limit(&self) -> u64 {
        self.buffer_limit
    }

    /// The shaper's rate now, bytes/s (0: unlimited; `autorate-ingress` changes it).
    pub fn rate_bytes(&self) -> u64 {
        self.rate_bps
    }

    /// `autorate-ingress`'s capacity estimate, bytes/s (`avg_peak_bandwidth`).
    pub fn capacity_estimate(&self) -> u64 {
        self.avg_peak_bandwidth
    }

    /// Statistics of tin `i` (tin index order), as `tc -s` gives them.
    pub fn tin_stats(&self, i: usize) -> Option<TinStats> {
        self.tins.get(i).map(|t| {
            let mut s = t.st;
            s.ways = t.hash.ways;
            s.sparse_flows = t.sparse + t.decaying;
            s.bulk_flows = t.bulk;
            s.unresponsive_flows = t.unresponsive;
            s.backlog_bytes = t.backlog;
            s
        })
    }

    /// Number of tins.
    pub fn tin_count(&self) -> usize {
        self.tins.len()
    }

    /// The largest memory use seen, bytes (`buffer_max_used`).
    pub fn memory_used_max(&self) -> u64 {
        self.buffer_max_used
    }

    /// COBALT state of queue `q` of tin `t`.
    pub fn cobalt_vars(&self, t: usize, q: usize) -> Option<&CobaltVars> {
        self.tins.get(t)?.flows.get(q).map(|f| &f.cvars)
    }

    /// The DRR deficit of queue `q` of tin `t`.
    pub fn deficit(&self, t: usize, q: usize) -> Option<i32> {
        Some(self.tins.get(t)?.flows.get(q)?.deficit)
    }

    /// The tin and queue a packet goes to, without enqueueing it (tests, inspection).
    /// Updates the hash's tags like an arrival would.
    pub fn classify(&mut self, pkt: &P) -> (usize, usize) {
        let tin = self.select_tin(pkt.dscp());
        let k = Keys::new(self.key, pkt.flow_hash(), pkt.src_host(), pkt.dst_host());
        let t = &mut self.tins[tin];
        (tin, t.hash.lookup(&mut t.slots, self.flow_mode, k))
    }

    /// `cake_select_tin`: the tin of a DSCP (beyond the tin count: tin 0).
    #[inline]
    fn select_tin(&self, dscp: u8) -> usize {
        let t = self.tin_mode.tin_of(dscp);
        if t >= self.tins.len() {
            0
        } else {
            t
        }
    }

    /// `cake_advance_shaper`: charges `len` adjusted bytes to tin `tin` and to the global
    /// shaper (and, if not a drop, to the failsafe).
    #[inline]
    fn advance_shaper(&mut self, tin: usize, len: u32, now: u64, drop: bool) -> u32 {
        if self.rate_ns != 0 {
            let b = &mut self.tins[tin];
            let tin_dur = (len as u64 * b.rate.rate_ns) >> b.rate.rate_shft;
            let global_dur = (len as u64 * self.rate_ns) >> self.rate_shft;
            let failsafe_dur = global_dur + (global_dur >> 1);
            if b.time_next < now {
                b.time_next += tin_dur;
            } else if b.time_next < now + tin_dur {
                b.time_next = now + tin_dur;
            }
            self.time_next += global_dur;
            if !drop {
                self.failsafe_next += failsafe_dur;
            }
        }
        len
    }

    /// The host load of flow queue `f` of tin `tin` (`max(1, its hosts' bulk counts)` in
    /// the dual modes).
    #[inline]
    fn host_load(&self, tin: usize, f: usize) -> u32 {
        let t = &self.tins[tin];
        let s = t.slots[f];
        let mut load = 1u32;
        if self.flow_mode.dual_src() {
            load = load.max(t.hash.hosts[s.srchost as usize].src_bulk as u32);
        }
        if self.flow_mode.dual_dst() {
            load = load.max(t.hash.hosts[s.dsthost as usize].dst_bulk as u32);
        }
        load
    }

    /// Adds `d` to the bulk counts of flow `f`'s hosts (in the dual modes).
    #[inline]
    fn host_bulk(&mut self, tin: usize, f: usize, up: bool) {
        let (dsrc, ddst) = (self.flow_mode.dual_src(), self.flow_mode.dual_dst());
        let t = &mut self.tins[tin];
        let s = t.slots[f];
        let adj = |x: &mut u16| {
            *x = if up {
                x.saturating_add(1)
            } else {
                x.saturating_sub(1)
            }
        };
        if dsrc {
            adj(&mut t.hash.hosts[s.srchost as usize].src_bulk);
        }
        if ddst {
            adj(&mut t.hash.hosts[s.dsthost as usize].dst_bulk);
        }
    }

    /// `cake_drop`: drops the head of the longest flow queue (over all tins). Returns the
    /// bucket dropped from and the packet, or `None` if nothing is queued.
    fn drop_fattest(&mut self, now: Instant) -> Option<(usize, P)> {
        let bucket = self.fq.fattest_by_bytes()?;
        let p = self.fq.pop_head(now, bucket)?;
        let (tin, f) = (bucket / CAKE_QUEUES, bucket % CAKE_QUEUES);
        let len = p.size_bytes() as u64;
        let b = &mut self.tins[tin];
        if queue_full(&mut b.flows[f].cvars, &b.cparams, now) {
            b.unresponsive += 1;
        }
        self.buffer_used -= len;
        b.backlog -= len;
        b.len_pkts -= 1;
        b.flows[f].dropped += 1;
        b.st.drops += 1;
        if self.cfg.ingress {
            let adj = self.overhead.adjusted_len(p.size_bytes());
            self.advance_shaper(tin, adj, now.0, true);
        }
        Some((bucket, p))
    }

    /// The ACK filter on bucket `bucket` (tin `tin`) whose tail, just queued, is the ACK
    /// `tail` ([`ack_filter`]): a redundant ACK found is dropped (to `on_drop`, counted as
    /// an ACK drop of the tin and charged to the shaper in ingress mode).
    fn ack_filter(
        &mut self,
        now: Instant,
        tin: usize,
        bucket: usize,
        tail: &crate::packet::TcpAck,
        on_drop: &mut impl FnMut(P, DropReason),
    ) {
        if self.fq.pkts(bucket) < 2 {
            return;
        }
        let fq = &self.fq;
        let last = fq.tail_slot(bucket);
        let mut s = fq.head_slot(bucket);
        let walk = std::iter::from_fn(|| {
            if s == last || s == crate::flowq::NIL {
                return None;
            }
            let cur = s;
            s = fq.next_slot(cur);
            Some((cur, fq.packet_at(cur).tcp_ack()))
        });
        let aggressive = self.cfg.ack_filter == AckFilter::Aggressive;
        let Some(slot) = ack_filter::find(walk, tail, aggressive) else {
            return;
        };
        let ack = self.fq.remove_slot(now, bucket, slot);
        let len = ack.size_bytes() as u64;
        self.buffer_used -= len;
        let b = &mut self.tins[tin];
        b.backlog -= len;
        b.len_pkts -= 1;
        b.st.ack_drops += 1;
        b.qs.dropped_victim += 1;
        self.stats.dropped_victim += 1;
        if self.cfg.ingress {
            let adj = self.overhead.adjusted_len(ack.size_bytes());
            self.advance_shaper(tin, adj, now.0, true);
        }
        on_drop(ack, DropReason::Early);
    }

    /// autorate-ingress (`cake_enqueue`'s capacity estimate).
    fn autorate(&mut self, now: u64) {
        let mut interval = now.saturating_sub(self.last_packet_time);
        if interval > 1_000_000_000 {
            interval = 1_000_000_000;
        }
        let shift = if interval > self.avg_packet_interval {
            2
        } else {
            8
        };
        self.avg_packet_interval = ewma(self.avg_packet_interval, interval, shift);
        self.last_packet_time = now;
        if interval > self.avg_packet_interval {
            let window = now.saturating_sub(self.avg_window_begin).max(1);
            let b = (self.avg_window_bytes as u128 * 1_000_000_000 / window as u128) as u64;
            let shift = if b > self.avg_peak_bandwidth { 2 } else { 8 };
            self.avg_peak_bandwidth = ewma(self.avg_peak_bandwidth, b, shift);
            self.avg_window_bytes = 0;
            self.avg_window_begin = now;
            if now > self.last_reconfig_time + 250_000_000 {
                self.rate_bps = (self.avg_peak_bandwidth * 15) >> 4;
                self.last_reconfig_time = now;
                self.reconfigure();
            }
        }
    }
}

impl<P: Packet> QdiscOps<P> for Cake<P> {
    /// A CAKE with `cfg` on `link`; `limit` (the link's buffer) caps the memory limit as
    /// Linux's `sch->limit` x MTU does; `seed` draws the hash key and BLUE's and the DRR
    /// dither's random stream.
    fn new(
        cfg: &CakeConfig,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if matches!(limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(ConfigError::invalid("limit", 0.0, "must be > 0"));
        }
        let n = cfg.diffserv.tins();
        let pool_hint = match limit {
            QueueLimit::Packets(p) => (p as usize + 1).min(256),
            QueueLimit::Bytes(_) => 256,
        };
        let mut q = Cake {
            cfg: *cfg,
            fq: FlowQueues::new((n * CAKE_QUEUES) as u32, 0, pool_hint, usize::MAX),
            tins: (0..n).map(|_| Tin::new()).collect(),
            tin_mode: cfg.diffserv,
            flow_mode: cfg.flow_mode,
            key: hash_key(seed ^ 0xca4e),
            overhead: cfg.overhead_comp(),
            rate_ns: 0,
            rate_shft: 0,
            rate_bps: cfg.rate_bytes(),
            time_next: 0,
            failsafe_next: 0,
            cur_tin: 0,
            buffer_used: 0,
            buffer_max_used: 0,
            buffer_limit: 0,
            last_packet_time: 0,
            avg_window_begin: 0,
            avg_packet_interval: 0,
            avg_window_bytes: 0,
            avg_peak_bandwidth: cfg.rate_bytes(),
            last_reconfig_time: 0,
            overlimits: 0,
            last_class: 0,
            link_limit: limit,
            link,
            stats: QueueStats::default(),
            rng: Rng::new(seed),
        };
        q.reconfigure();
        Ok(q)
    }

    /// `cake_enqueue` (module docs); packets dropped at the memory limit other than the
    /// arrival go to `on_drop`.
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P> {
        let t_now = now.0;
        let len = pkt.size_bytes();
        self.stats.received += 1;
        self.stats.received_bytes += len as u64;
        let tin = self.select_tin(pkt.dscp());
        if self.cfg.wash {
            pkt.set_dscp(0);
        }
        let k = Keys::new(self.key, pkt.flow_hash(), pkt.src_host(), pkt.dst_host());
        let mode = self.flow_mode;
        let idx = {
            let t = &mut self.tins[tin];
            t.hash.lookup(&mut t.slots, mode, k)
        };
        let bucket = tin * CAKE_QUEUES + idx;
        // ensure shaper state isn't stale
        if self.tins[tin].backlog == 0 {
            let b = &mut self.tins[tin];
            if b.time_next < t_now {
                b.time_next = t_now;
            }
            if self.fq.len_pkts() == 0 && self.time_next < t_now {
                self.failsafe_next = t_now;
                self.time_next = t_now;
            }
        }
        {
            let b = &mut self.tins[tin];
            b.st.max_len = b.st.max_len.max(len);
            b.st.packets += 1;
            b.st.bytes += len as u64;
            b.backlog += len as u64;
            b.len_pkts += 1;
            b.qs.received += 1;
            b.qs.received_bytes += len as u64;
        }
        pkt.set_enqueued_at(now);
        let tcp = if self.cfg.ack_filter == AckFilter::Off {
            None
        } else {
            pkt.tcp_ack()
        };
        self.fq.push(now, bucket, pkt);
        self.buffer_used += len as u64;
        if let Some(tail) = tcp {
            self.ack_filter(now, tin, bucket, &tail, on_drop);
        }
        self.avg_window_bytes += len as u64;
        if self.cfg.autorate_ingress {
            self.autorate(t_now);
        } else {
            self.avg_window_bytes = 0;
            self.last_packet_time = t_now;
        }
        // flowchain
        let set = self.tins[tin].slots[idx].set;
        match set {
            FlowSet::None | FlowSet::Decaying => {
                let b = &mut self.tins[tin];
                if set == FlowSet::Decaying {
                    b.decaying -= 1;
                }
                b.move_tail(idx, NEW);
                b.slots[idx].set = FlowSet::Sparse;
                b.sparse += 1;
                let load = self.host_load(tin, idx);
                let b = &mut self.tins[tin];
                b.flows[idx].deficit =
                    ((b.rate.flow_quantum as u32 * quantum_div(load)) >> 16) as i32;
            }
            FlowSet::SparseWait => {
                let b = &mut self.tins[tin];
                b.slots[idx].set = FlowSet::Bulk;
                b.sparse -= 1;
                b.bulk += 1;
                self.host_bulk(tin, idx, true);
            }
            _ => {}
        }
        self.buffer_max_used = self.buffer_max_used.max(self.buffer_used);
        let mut arrival = None;
        while self.buffer_used > self.buffer_limit {
            let Some((b, p)) = self.drop_fattest(now) else {
                break;
            };
            let t = b / CAKE_QUEUES;
            self.tins[t].st.overlimit_drops += 1;
            if b == bucket && self.fq.pkts(b) == 0 && arrival.is_none() {
                // the arrival was its queue's tail: it is the one dropped
                arrival = Some(p);
            } else {
                self.stats.dropped_victim += 1;
                self.tins[t].qs.dropped_victim += 1;
                on_drop(p, DropReason::ForcedLimit);
            }
        }
        match arrival {
            Some(p) => {
                self.stats.dropped_limit += 1;
                self.tins[tin].qs.dropped_limit += 1;
                Enqueue::Dropped(p, DropReason::ForcedLimit)
            }
            None => {
                self.stats.enqueued += 1;
                self.tins[tin].qs.enqueued += 1;
                Enqueue::Queued
            }
        }
    }

    /// `cake_dequeue` (module docs): `None` while the shaper holds the packets
    /// ([`QdiscOps::ready_at`] says until when); COBALT's drops go to `on_drop`.
    #[inline(never)]
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P> {
        let t_now = now.0;
        let n = self.tins.len();
        let mut first_flow = true;
        'begin: loop {
            if self.fq.len_pkts() == 0 {
                return None;
            }
            // global hard shaper
            if self.time_next > t_now && self.failsafe_next > t_now {
                self.overlimits += 1;
                return None;
            }
            // choose a tin
            if self.rate_ns == 0 {
                let (mut wrapped, mut empty) = (false, true);
                loop {
                    let b = &mut self.tins[self.cur_tin];
                    if !(b.tin_deficit < 0 || b.active() == 0) {
                        break;
                    }
                    if b.tin_deficit <= 0 {
                        b.tin_deficit += b.tin_quantum as i32;
                    }
                    if b.active() > 0 {
                        empty = false;
                    }
                    self.cur_tin += 1;
                    if self.cur_tin >= n {
                        self.cur_tin = 0;
                        if wrapped {
                            if empty {
                                return None;
                            }
                        } else {
                            wrapped = true;
                        }
                    }
                }
            } else {
                let mut best_time = i64::MAX;
                let mut best = 0;
                for (i, b) in self.tins.iter().enumerate() {
                    if b.active() > 0 {
                        let ttp = b.time_next as i64 - t_now as i64;
                        if ttp <= 0 || ttp <= best_time {
                            best_time = ttp;
                            best = i;
                        }
                    }
                }
                self.cur_tin = best;
                if self.tins[best].active() == 0 {
                    return None;
                }
            }
            'retry: loop {
                let tin = self.cur_tin;
                let b = &self.tins[tin];
                let f = if first_flow && b.front(DECAYING).is_some() {
                    b.front(DECAYING)
                } else {
                    b.front(NEW)
                        .or_else(|| b.front(OLD))
                        .or_else(|| b.front(DECAYING))
                };
                let Some(f) = f else {
                    continue 'begin;
                };
                first_flow = false;
                let bucket = tin * CAKE_QUEUES + f;
                // flow isolation (DRR++)
                if self.tins[tin].flows[f].deficit <= 0 {
                    if self.tins[tin].slots[f].set == FlowSet::Sparse {
                        if self.fq.pkts(bucket) > 0 {
                            let b = &mut self.tins[tin];
                            b.sparse -= 1;
                            b.bulk += 1;
                            b.slots[f].set = FlowSet::Bulk;
                            self.host_bulk(tin, f, true);
                        } else {
                            self.tins[tin].slots[f].set = FlowSet::SparseWait;
                        }
                    }
                    let load = self.host_load(tin, f);
                    let dither = (self.rng.next_u64() >> 48) as u32;
                    let b = &mut self.tins[tin];
                    let q = b.rate.flow_quantum as u32 * quantum_div(load);
                    b.flows[f].deficit += ((q + dither) >> 16) as i32;
                    b.move_tail(f, OLD);
                    continue 'retry;
                }
                // retrieve a packet via the AQM
                loop {
                    let Some(mut p) = self.fq.pop_head(now, bucket) else {
                        // this queue was actually empty
                        let b = &mut self.tins[tin];
                        let fl = &mut b.flows[f];
                        if queue_empty(&mut fl.cvars, &b.cparams, now) {
                            b.unresponsive = b.unresponsive.saturating_sub(1);
                        }
                        let c = fl.cvars;
                        let set = b.slots[f].set;
                        let keep = c.p_drop != 0 || c.count != 0 || t_now < c.drop_next.0;
                        if keep {
                            // keep in the flowchain until the state has decayed to rest
                            b.move_tail(f, DECAYING);
                        } else {
                            b.list_del(f);
                        }
                        match set {
                            FlowSet::Sparse | FlowSet::SparseWait => b.sparse -= 1,
                            FlowSet::Bulk => b.bulk -= 1,
                            _ => {}
                        }
                        if keep {
                            if set != FlowSet::Decaying {
                                b.decaying += 1;
                            }
                            b.slots[f].set = FlowSet::Decaying;
                        } else {
                            if set == FlowSet::Decaying {
                                b.decaying -= 1;
                            }
                            b.slots[f].set = FlowSet::None;
                        }
                        if set == FlowSet::Bulk {
                            self.host_bulk(tin, f, false);
                        }
                        continue 'begin;
                    };
                    let len = p.size_bytes() as u64;
                    self.buffer_used -= len;
                    let b = &mut self.tins[tin];
                    b.backlog -= len;
                    b.len_pkts -= 1;
                    self.stats.activations += 1;
                    let bulk = if self.cfg.ingress { b.bulk } else { 0 };
                    let fl = &mut b.flows[f];
                    let drop =
                        should_drop(&mut fl.cvars, &b.cparams, now, &mut p, bulk, &mut self.rng);
                    // the last packet in the queue may be marked, not dropped
                    if !drop || self.fq.pkts(bucket) == 0 {
                        break 'begin self.deliver(tin, f, p, t_now);
                    }
                    if self.cfg.ingress {
                        let adj = self.overhead.adjusted_len(p.size_bytes());
                        let l = self.advance_shaper(tin, adj, t_now, true) as i32;
                        let b = &mut self.tins[tin];
                        b.flows[f].deficit -= l;
                        b.tin_deficit -= l;
                    }
                    let b = &mut self.tins[tin];
                    b.flows[f].dropped += 1;
                    b.st.drops += 1;
                    b.qs.dropped_dequeue += 1;
                    self.stats.dropped_dequeue += 1;
                    on_drop(p, DropReason::CodelDequeue);
                    if self.cfg.ingress {
                        continue 'retry;
                    }
                }
            }
        }
    }

    /// The shaper's next send time while packets wait for it.
    fn ready_at(&self) -> Option<Instant> {
        (self.rate_ns != 0 && self.fq.len_pkts() > 0)
            .then(|| Instant(self.time_next.min(self.failsafe_next)))
    }

    #[inline]
    fn len_pkts(&self) -> usize {
        self.fq.len_pkts()
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.fq.len_bytes()
    }
    fn stats(&self) -> QueueStats {
        self.stats
    }
    fn limit(&self) -> QueueLimit {
        self.link_limit
    }
    fn link(&self) -> LinkInfo {
        self.link
    }
    fn pool_slots(&self) -> Option<usize> {
        Some(self.fq.pool_slots())
    }
    fn set_link_rate(&mut self, rate: crate::time::BitsPerSec) {
        if rate.0 > 0 {
            self.link.rate = rate;
        }
    }
    #[inline]
    fn active_flows(&self) -> Option<u32> {
        Some(self.fq.active())
    }
    fn flow_count(&self, now: Instant) -> Option<crate::qdisc::ops::FlowCount> {
        Some(crate::qdisc::ops::FlowCount {
            active: self.fq.active(),
            area: self.fq.active_area(now),
            peak: self.fq.peak(),
        })
    }
    fn reset_flow_peak(&mut self) {
        self.fq.reset_peak();
    }
    fn num_classes(&self) -> usize {
        self.tins.len()
    }
    fn class_name(&self, i: usize) -> Option<&str> {
        let names: &[&str] = match self.tin_mode {
            TinMode::BestEffort => &["best_effort"],
            TinMode::Diffserv3 => &["best_effort", "bulk", "voice"],
            TinMode::Diffserv4 => &["best_effort", "bulk", "video", "voice"],
            TinMode::Diffserv8 | TinMode::Precedence => &[
                "tin0", "tin1", "tin2", "tin3", "tin4", "tin5", "tin6", "tin7",
            ],
        };
        names.get(i).copied()
    }
    fn class_stats(&self, i: usize) -> Option<QueueStats> {
        self.tins.get(i).map(|t| t.qs)
    }
    fn class_len(&self, i: usize) -> Option<(usize, u64)> {
        self.tins.get(i).map(|t| (t.len_pkts, t.backlog))
    }
    fn last_class(&self) -> u8 {
        self.last_class
    }

    /// Changes one parameter while running; queued packets and flow states are kept.
    /// `diffserv` (the number of tins) is fixed once built.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
        let mut next = self.cfg;
        next.set_param(key, value)?;
        if next.diffserv != self.cfg.diffserv {
            return Err(ConfigError::invalid(
                "diffserv",
                value,
                "is fixed once the queue is built",
            ));
        }
        self.cfg = next;
        self.flow_mode = next.flow_mode;
        self.rate_bps = next.rate_bytes();
        self.reconfigure();
        Ok(())
    }

    fn config(&self) -> CakeConfig {
        self.cfg
    }

    /// The packet pool, the flow records and hash tables of every tin.
    fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.fq.memory_bytes()
            + self.tins.len()
                * CAKE_QUEUES
                * (size_of::<Flow>()
                    + size_of::<Slot>()
                    + size_of::<u32>()
                    + size_of::<hash::Host>())
    }
}

impl<P: Packet> Cake<P> {
    /// The delivery part of `cake_dequeue`: marks, delay statistics, the shaper and the
    /// deficits.
    #[inline]
    fn deliver(&mut self, tin: usize, f: usize, p: P, now: u64) -> Option<P> {
        let len = p.size_bytes();
        let marked = self.tins[tin].flows[f].cvars.ecn_marked;
        let delay = now.saturating_sub(p.enqueued_at().0);
        {
            let b = &mut self.tins[tin];
            if marked {
                b.st.marks += 1;
                b.qs.marked += 1;
                self.stats.marked += 1;
            }
            b.st.avg_delay_ns = ewma(b.st.avg_delay_ns, delay, 8);
            let s = if delay > b.st.peak_delay_ns { 2 } else { 8 };
            b.st.peak_delay_ns = ewma(b.st.peak_delay_ns, delay, s);
            let s = if delay < b.st.base_delay_ns { 2 } else { 8 };
            b.st.base_delay_ns = ewma(b.st.base_delay_ns, delay, s);
            b.qs.dequeued += 1;
            b.qs.dequeued_bytes += len as u64;
        }
        let adj = self.overhead.adjusted_len(len);
        let l = self.advance_shaper(tin, adj, now, false) as i32;
        let b = &mut self.tins[tin];
        b.flows[f].deficit -= l;
        b.tin_deficit -= l;
        self.stats.dequeued += 1;
        self.stats.dequeued_bytes += len as u64;
        self.last_class = tin as u8;
        Some(p)
    }
}

impl<P: Packet> crate::Qdisc<P> {
    /// The running CAKE, if this qdisc is one (its per-tin `tc -s` statistics).
    pub fn as_cake(&self) -> Option<&Cake<P>> {
        match self {
            crate::Qdisc::Cake(q) => Some(q),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
