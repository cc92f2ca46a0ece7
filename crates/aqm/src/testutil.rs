//! Test helpers: a minimal packet type, drop callbacks, flow ids for the hashed qdiscs.

use crate::algorithm::{Arrival, Env, QueueView};
use crate::backlog::DropReason;
use crate::backlog::{LinkInfo, QueueLimit};
use crate::flowq::FlowQueues;
use crate::packet::Packet;
use crate::time::{BitsPerSec, Duration, Instant};

/// An environment: `limit` on a link of `mbps` Mb/s with MTU 1500.
pub fn env(limit: QueueLimit, mbps: u64) -> Env {
    Env {
        limit,
        link: LinkInfo::new(BitsPerSec::from_mbps(mbps)),
    }
}

/// A queue view with `pkts` packets of `bytes` total.
pub fn view(pkts: u32, bytes: u64) -> QueueView {
    QueueView {
        len_pkts: pkts,
        len_bytes: bytes,
        head_sojourn: Duration::ZERO,
    }
}

/// An arrival of `size` bytes from `flow`.
pub fn arrival(size: u32, flow: u64, ect: bool) -> Arrival {
    Arrival {
        size,
        flow_hash: flow,
        ecn_capable: ect,
    }
}

/// Milliseconds as an instant.
pub fn ms(x: u64) -> Instant {
    Instant(x * 1_000_000)
}

/// A plain packet for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestPacket {
    pub id: u64,
    pub size: u32,
    pub flow: u64,
    pub ect: bool,
    pub ect1: bool,
    pub ce: bool,
    pub class: u8,
    pub dscp: u8,
    /// Source and destination host keys (`None`: the flow, as for packets without hosts).
    pub hosts: Option<(u64, u64)>,
    pub enqueued_at: Instant,
}

impl TestPacket {
    pub fn at(id: u64, size: u32, t: Instant) -> Self {
        let mut p = Self::new(id, size);
        p.enqueued_at = t;
        p
    }
    pub fn new(id: u64, size: u32) -> Self {
        TestPacket {
            id,
            size,
            flow: 0,
            ect: false,
            ect1: false,
            ce: false,
            class: 0,
            dscp: 0,
            hosts: None,
            enqueued_at: Instant::ZERO,
        }
    }
    /// From host `src` to host `dst` (CAKE's host isolation).
    pub fn hosts(mut self, src: u64, dst: u64) -> Self {
        self.hosts = Some((src, dst));
        self
    }
    /// With DSCP `d`.
    pub fn dscp(mut self, d: u8) -> Self {
        self.dscp = d;
        self
    }
    pub fn flow(mut self, f: u64) -> Self {
        self.flow = f;
        self
    }
    pub fn class(mut self, c: u8) -> Self {
        self.class = c;
        self
    }
    pub fn ect(mut self) -> Self {
        self.ect = true;
        self
    }
    /// ECN-capable with the ECT(1) codepoint (L4S).
    pub fn ect1(mut self) -> Self {
        self.ect = true;
        self.ect1 = true;
        self
    }
}

impl Packet for TestPacket {
    fn size_bytes(&self) -> u32 {
        self.size
    }
    fn flow_hash(&self) -> u64 {
        self.flow
    }
    fn ecn_capable(&self) -> bool {
        self.ect
    }
    fn ecn(&self) -> crate::packet::Ecn {
        use crate::packet::Ecn;
        match (self.ect, self.ce, self.ect1) {
            (false, _, _) => Ecn::NotEct,
            (true, true, _) => Ecn::Ce,
            (true, false, true) => Ecn::Ect1,
            (true, false, false) => Ecn::Ect0,
        }
    }
    fn set_ce(&mut self) {
        self.ce = true;
    }
    fn class(&self) -> u8 {
        self.class
    }
    fn dscp(&self) -> u8 {
        self.dscp
    }
    fn set_dscp(&mut self, d: u8) {
        self.dscp = d & 0x3f;
    }
    fn src_host(&self) -> u64 {
        self.hosts.map_or(self.flow, |h| h.0)
    }
    fn dst_host(&self) -> u64 {
        self.hosts.map_or(self.flow, |h| h.1)
    }
    fn enqueued_at(&self) -> Instant {
        self.enqueued_at
    }
    fn set_enqueued_at(&mut self, t: Instant) {
        self.enqueued_at = t;
    }
}

/// A drop callback for steps that must not drop.
pub fn no_drop() -> impl FnMut(TestPacket, DropReason) {
    |_p, _r| panic!("no drop expected")
}

/// The first `n` flow ids (from 0) whose buckets in `q` all differ, in id order (readable
/// fixtures for the hashed qdiscs).
pub fn distinct_bucket_flows<P: Packet>(q: &FlowQueues<P>, n: usize) -> Vec<u64> {
    let mut seen = std::collections::HashSet::new();
    (0u64..)
        .filter(|&f| seen.insert(q.bucket_of(f)))
        .take(n)
        .collect()
}
