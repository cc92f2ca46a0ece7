//! netem's impairments on a link, in netem's own syntax and with its semantics (Linux
//! `net/sched/sch_netem.c`, iproute2 `tc/q_netem.c`, `man tc-netem`): delay with jitter
//! (uniform, normal, pareto, paretonormal tables) and correlation, random and correlated
//! loss, the 4-state and Gilbert-Elliott loss models, duplication, reordering, corruption
//! (a corrupted packet is dropped: the receiver would discard it) and slots.
//!
//! Where it acts: on the packets that leave a link's transmitter, before the propagation
//! delay, as netem on a separate hop after the bottleneck: the link's queue and its AQM see
//! their traffic undisturbed. The simulator (`netsim::link`) and the emulator (`emu::link`)
//! both run [`Netem`]. See `docs/netem.md`.

pub mod dist;
pub mod loss;
pub mod spec;
mod stage;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use spec::NetemSpec;
pub use stage::{Netem, NetemCounters, NetemPacket};

/// The netem impairments of a link pair (`netem`, `reverse_netem`); `None`: none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkNetem {
    /// The forward link's (a dumbbell's or parking lot's bottleneck(s), an explicit link).
    pub forward: Option<Arc<NetemSpec>>,
    /// The reverse link's (`R2->R1`, the parking lot's reverse bottlenecks, a duplex link's
    /// twin).
    pub reverse: Option<Arc<NetemSpec>>,
}
