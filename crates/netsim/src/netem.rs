//! A link's netem stage in the simulator: `experiment::netem::Netem` (the code the emulator
//! runs too) between the link's transmitter and its propagation delay. A packet that leaves
//! the transmitter is offered to the stage; what the stage releases enters the link's pipe
//! at that instant; its watchdog is an [`Event::Netem`]. Only links with `netem` have one,
//! and they take the link's slow path (`link.rs`), so other links pay nothing.

use crate::engine::{Event, EventQueue, Ns};
use crate::packet::{Packet, F_CE, F_ECT};
use experiment::netem::{Netem, NetemCounters, NetemPacket};

impl NetemPacket for Packet {
    #[inline]
    fn netem_len(&self) -> u32 {
        self.size
    }

    #[inline]
    fn netem_set_ce(&mut self) -> bool {
        if self.has(F_ECT) {
            self.flags |= F_CE;
            true
        } else {
            false
        }
    }
}

/// The stage and the time of its pending [`Event::Netem`], if any.
#[derive(Debug)]
pub struct LinkNetem {
    stage: Netem<Packet>,
    armed: Option<Ns>,
}

impl LinkNetem {
    /// A link's stage.
    pub fn new(stage: Netem<Packet>) -> LinkNetem {
        LinkNetem { stage, armed: None }
    }

    /// `p` left link `id`'s transmitter at `now`.
    pub fn offer(&mut self, now: Ns, p: Packet, id: u32, ev: &mut EventQueue) {
        let before = (self.stage.ctr.duplicates, self.stage.ctr.drops);
        self.stage.enqueue(now, p);
        if ev.gone_from.is_some() {
            // (the short-flow pool counts the flow's packets in the network)
            for _ in before.0..self.stage.ctr.duplicates {
                ev.copied(p.flow);
            }
            for _ in before.1..self.stage.ctr.drops {
                ev.dropped(p.flow);
            }
        }
        self.drain(now, id, ev);
    }

    /// The [`Event::Netem`] of link `id` at `now`.
    pub fn wake(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        if self.armed == Some(now) {
            self.armed = None;
        }
        if self.stage.fire(now) {
            self.drain(now, id, ev);
        }
    }

    /// Puts what can leave at `now` into the pipe (a corrupted packet is dropped: the
    /// receiver would discard it) and arms the watchdog.
    fn drain(&mut self, now: Ns, id: u32, ev: &mut EventQueue) {
        while let Some((p, corrupted)) = self.stage.dequeue(now) {
            if !corrupted {
                ev.pipe_push(id, now, p);
            } else {
                ev.dropped(p.flow);
            }
        }
        if let Some(w) = self.stage.watchdog() {
            if self.armed != Some(w) {
                ev.schedule(w, Event::Netem(id));
                self.armed = Some(w);
            }
        }
    }

    /// The counters.
    pub fn counters(&self) -> NetemCounters {
        self.stage.ctr
    }

    /// Packets held.
    pub fn held(&self) -> u64 {
        self.stage.len() as u64
    }
}
