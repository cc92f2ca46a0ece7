//! Test helpers: a minimal packet type.

use crate::packet::Packet;
use crate::time::Instant;

/// A plain packet for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestPacket {
    pub id: u64,
    pub size: u32,
    pub flow: u64,
    pub ect: bool,
    pub ce: bool,
    pub enqueued_at: Instant,
}

impl TestPacket {
    pub fn new(id: u64, size: u32) -> Self {
        TestPacket {
            id,
            size,
            flow: 0,
            ect: false,
            ce: false,
            enqueued_at: Instant::ZERO,
        }
    }
    pub fn flow(mut self, f: u64) -> Self {
        self.flow = f;
        self
    }
    pub fn ect(mut self) -> Self {
        self.ect = true;
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
    fn set_ce(&mut self) {
        self.ce = true;
    }
    fn enqueued_at(&self) -> Instant {
        self.enqueued_at
    }
    fn set_enqueued_at(&mut self, t: Instant) {
        self.enqueued_at = t;
    }
}
