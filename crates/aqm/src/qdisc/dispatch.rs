//! [`Qdisc`]: a running queue discipline. The enum and its dispatch are generated from the
//! registry ([`super`]): one variant per qdisc, and every method one `match` whose FIFO arm
//! comes first and calls [`QueueDisc`] directly, the other arms the variant's
//! [`super::QdiscOps`].

use crate::packet::Packet;
use crate::queue::QueueDisc;
use crate::sqm::Sqm;

/// Generates [`Qdisc`] from the registry's lines, in order.
macro_rules! qdisc_states {
    ( $( $v:ident($m:ident :: $s:ident); )* ) => {
        /// A running queue discipline: a FIFO with an AQM (the fast path), a class-based
        /// scheduler or a hashed flow-queueing qdisc.
        ///
        /// The per-packet methods are `#[inline(always)]` thin `match`es and the schedulers'
        /// entry points are never inlined, so that a caller's FIFO path compiles as a direct
        /// call (or inlining) of [`crate::QueueDisc`]'s, as before trees existed.
        ///
        /// The FIFO variant is stored inline (no box, no extra indirection per packet); the
        /// schedulers are boxed (one indirection per call, against their own per-packet
        /// work of hashing and class selection), so that the enum, held by every link of a
        /// simulation, is no larger than a FIFO.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub enum Qdisc<P> {
            /// FIFO + hard limit + one AQM.
            Fifo($crate::queue::QueueDisc<P>),
            $(
                #[doc = concat!("See [`crate::", stringify!($m), "`].")]
                $v(Box<$crate::$m::$s<P>>),
            )*
        }

        impl<P: $crate::packet::Packet> Qdisc<P> {
            /// Builds `cfg` with hard limit `limit` (shared by a scheduler's classes and flow
            /// queues) on `link`.
            pub fn new(
                cfg: &QdiscConfig,
                limit: $crate::queue::QueueLimit,
                link: $crate::queue::LinkInfo,
                seed: u64,
            ) -> Result<Self, $crate::error::ConfigError> {
                Ok(match cfg {
                    QdiscConfig::Fifo(a) => {
                        Qdisc::Fifo($crate::queue::QueueDisc::new(a, limit, link, seed)?)
                    }
                    $(
                        QdiscConfig::$v(c) => Qdisc::$v(Box::new(
                            <$crate::$m::$s<P> as $crate::qdisc::QdiscOps<P>>::new(
                                c, limit, link, seed,
                            )?,
                        )),
                    )*
                })
            }

            /// Offers a packet: `Queued`, `Marked` or `Dropped(pkt, reason)` for the arrival;
            /// other packets dropped to make room (victims) go to `on_drop`.
            #[inline(always)]
            pub fn enqueue(
                &mut self,
                now: $crate::time::Instant,
                pkt: P,
                on_drop: &mut impl FnMut(P, $crate::queue::DropReason),
            ) -> $crate::queue::Enqueue<P> {
                match self {
                    Qdisc::Fifo(q) => q.enqueue(now, pkt),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::enqueue(&mut **q, now, pkt, on_drop), )*
                }
            }

            /// [`crate::QueueDisc::pass_through`] for a drop-tail FIFO; `Err(pkt)` for every other
            /// qdisc.
            #[inline(always)]
            pub fn pass_through(&mut self, now: $crate::time::Instant, pkt: P) -> Result<P, P> {
                match self {
                    Qdisc::Fifo(q) => q.pass_through(now, pkt),
                    _ => Err(pkt),
                }
            }

            /// Takes the next packet for the link; dequeue-side drops go to `on_drop`.
            #[inline(always)]
            pub fn dequeue(
                &mut self,
                now: $crate::time::Instant,
                on_drop: &mut impl FnMut(P, $crate::queue::DropReason),
            ) -> Option<P> {
                match self {
                    Qdisc::Fifo(q) => q.dequeue(now, on_drop),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::dequeue(&mut **q, now, on_drop), )*
                }
            }

            /// Next time [`Qdisc::on_timer`] must be called (earliest over the tree).
            #[inline(always)]
            pub fn poll_at(&self) -> Option<$crate::time::Instant> {
                match self {
                    Qdisc::Fifo(q) => q.poll_at(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::poll_at(&**q), )*
                }
            }

            /// A shaping qdisc holding packets it may not send yet (its `dequeue` returned
            /// `None`): the time it can send the next one (CAKE's shaper). `None` for every
            /// other qdisc and whenever `dequeue` would give a packet or nothing is queued;
            /// the driver calls `dequeue` again at that time.
            #[inline]
            pub fn ready_at(&self) -> Option<$crate::time::Instant> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::ready_at(&**q), )*
                }
            }

            /// Runs the periodic laws that are due.
            pub fn on_timer(&mut self, now: $crate::time::Instant) {
                match self {
                    Qdisc::Fifo(q) => q.on_timer(now),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::on_timer(&mut **q, now), )*
                }
            }

            /// Packets stored.
            #[inline(always)]
            pub fn len_pkts(&self) -> usize {
                match self {
                    Qdisc::Fifo(q) => q.len_pkts(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::len_pkts(&**q), )*
                }
            }

            /// Bytes stored.
            #[inline(always)]
            pub fn len_bytes(&self) -> u64 {
                match self {
                    Qdisc::Fifo(q) => q.len_bytes(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::len_bytes(&**q), )*
                }
            }

            /// Counters (a scheduler's are the sums over its classes or flow queues).
            pub fn stats(&self) -> $crate::queue::QueueStats {
                match self {
                    Qdisc::Fifo(q) => q.stats(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::stats(&**q), )*
                }
            }

            /// Number of classes (0 for a FIFO and for a hashed qdisc; DualPI2: 2, `l` and
            /// `c`; SQM: 2, `reserved` and `elephants` (all elephant queues together)).
            pub fn num_classes(&self) -> usize {
                match self {
                    Qdisc::Fifo(_) => 0,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::num_classes(&**q), )*
                }
            }

            /// Name of class `i`.
            pub fn class_name(&self, i: usize) -> Option<&str> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::class_name(&**q, i), )*
                }
            }

            /// Counters of class `i`.
            pub fn class_stats(&self, i: usize) -> Option<$crate::queue::QueueStats> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::class_stats(&**q, i), )*
                }
            }

            /// Length of class `i`'s queue now: `(packets, bytes)`.
            pub fn class_len(&self, i: usize) -> Option<(usize, u64)> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::class_len(&**q, i), )*
                }
            }

            /// The class the last dequeued packet came from (0 without classes).
            #[inline]
            pub fn last_class(&self) -> u8 {
                match self {
                    Qdisc::Fifo(_) => 0,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::last_class(&**q), )*
                }
            }

            /// Backlogged flow queues of a hashed qdisc; for SQM the elephant slots in use
            /// (`None` for other qdiscs).
            #[inline]
            pub fn active_flows(&self) -> Option<u32> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::active_flows(&**q), )*
                }
            }

            /// A hashed qdisc's active-flow count, its integral up to `now` and its peak
            /// (`None` for other qdiscs).
            pub fn flow_count(
                &self,
                now: $crate::time::Instant,
            ) -> Option<$crate::qdisc::FlowCount> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::flow_count(&**q, now), )*
                }
            }

            /// Tells the qdisc its link's rate changed (a varying capacity; 0 is ignored: an
            /// outage keeps the last positive rate). See [`crate::QueueDisc::set_link_rate`].
            pub fn set_link_rate(&mut self, rate: $crate::time::BitsPerSec) {
                match self {
                    Qdisc::Fifo(q) => q.set_link_rate(rate),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::set_link_rate(&mut **q, rate), )*
                }
            }

            /// Restarts the peak of [`Qdisc::flow_count`] from the current count (end of
            /// warm-up).
            pub fn reset_flow_peak(&mut self) {
                match self {
                    Qdisc::Fifo(_) => {}
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::reset_flow_peak(&mut **q), )*
                }
            }

            /// Bytes of state the qdisc holds for packets and flows: a FIFO's storage, a DRR
            /// tree's class FIFOs, a hashed qdisc's packet pool, bucket records and per-flow
            /// AQM state. (Not counted: fixed-size fields.) For a hashed qdisc it is bounded
            /// by the buffer and `flows` (docs/aqm/fq_codel.md, "Memory").
            pub fn memory_bytes(&self) -> usize {
                match self {
                    Qdisc::Fifo(q) => q.memory_bytes(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::memory_bytes(&**q), )*
                }
            }

            /// Packets of storage held by a FIFO leaf (`usize::MAX` for the other qdiscs,
            /// whose storage is their own: [`Qdisc::release_storage`]).
            #[inline(always)]
            pub fn storage_slots(&self) -> usize {
                match self {
                    Qdisc::Fifo(q) => q.storage_slots(),
                    _ => usize::MAX,
                }
            }

            /// The storage of an empty FIFO leaf holding at most `max` packet slots, which it
            /// gives up (`None` for the other qdiscs): a simulator lends it to the next queue
            /// that needs one ([`Qdisc::adopt_storage`]), so that thousands of rarely busy
            /// queues hold storage only while they hold packets, and queues that fill and
            /// empty in turn allocate none.
            #[inline]
            pub fn release_storage(&mut self, max: usize) -> Option<std::collections::VecDeque<P>> {
                match self {
                    Qdisc::Fifo(q) => q.release_storage(max),
                    _ => None,
                }
            }

            /// Takes `ring` (empty) as a FIFO leaf's storage if it holds none; else gives it
            /// back.
            #[inline]
            pub fn adopt_storage(
                &mut self,
                ring: std::collections::VecDeque<P>,
            ) -> Option<std::collections::VecDeque<P>> {
                match self {
                    Qdisc::Fifo(q) => q.adopt_storage(ring),
                    _ => Some(ring),
                }
            }

            /// A hashed qdisc's pool size: the largest number of packets it ever held at once
            /// (plus the arrival linked before an overflow drop); `None` for other qdiscs.
            pub fn pool_slots(&self) -> Option<usize> {
                match self {
                    Qdisc::Fifo(_) => None,
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::pool_slots(&**q), )*
                }
            }

            /// The hard limit.
            pub fn limit(&self) -> $crate::queue::QueueLimit {
                match self {
                    Qdisc::Fifo(q) => q.limit(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::limit(&**q), )*
                }
            }

            /// The link.
            pub fn link(&self) -> $crate::queue::LinkInfo {
                match self {
                    Qdisc::Fifo(q) => q.link(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::link(&**q), )*
                }
            }

            /// Drop/mark probability in [0, 1] (a scheduler: the largest of its classes' or
            /// flows').
            pub fn probability(&self) -> f64 {
                match self {
                    Qdisc::Fifo(q) => q.probability(),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::probability(&**q), )*
                }
            }

            /// Changes one parameter by path while running; on error nothing changes.
            pub fn set_param(
                &mut self,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                match self {
                    Qdisc::Fifo(q) => q.set_param(path, value),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::set_param(&mut **q, path, value), )*
                }
            }

            /// Current value of one parameter by path.
            pub fn param(&self, path: &str) -> Option<f64> {
                match self {
                    Qdisc::Fifo(q) => q.config().get_param(path),
                    $( Qdisc::$v(q) => $crate::qdisc::QdiscOps::param(&**q, path), )*
                }
            }

            /// The current configuration tree.
            pub fn config(&self) -> QdiscConfig {
                match self {
                    Qdisc::Fifo(q) => QdiscConfig::Fifo(q.config()),
                    $( Qdisc::$v(q) => QdiscConfig::$v($crate::qdisc::QdiscOps::config(&**q)), )*
                }
            }

            /// Name of the running AQM or scheduler.
            pub fn aqm_name(&self) -> &'static str {
                match self {
                    Qdisc::Fifo(q) => q.aqm_name(),
                    $( Qdisc::$v(_) => <$crate::$m::$s<P> as $crate::qdisc::QdiscSpec>::NAME, )*
                }
            }
        }
    };
}
pub(crate) use qdisc_states;

impl<P: Packet> From<QueueDisc<P>> for super::Qdisc<P> {
    fn from(q: QueueDisc<P>) -> Self {
        super::Qdisc::Fifo(q)
    }
}

impl<P: Packet> super::Qdisc<P> {
    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_pkts() == 0
    }

    /// The SQM qdisc, if this is one (its slots: [`Sqm::slot_flow`]).
    #[inline]
    pub fn sqm(&self) -> Option<&Sqm<P>> {
        match self {
            Self::Sqm(q) => Some(q),
            _ => None,
        }
    }
}
