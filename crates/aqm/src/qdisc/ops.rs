//! The two traits every qdisc implements in its own file, and what the registry's dispatch
//! asks of them: [`QdiscSpec`] (its name, its config type and that config's parameters) and
//! [`QdiscOps`] (building it, enqueue, dequeue, timers, classes, flow counts).

use crate::config::{AqmConfig, RawParam};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::ParamInfo;
use crate::queue::{DropReason, Enqueue, LinkInfo, QueueLimit, QueueStats};
use crate::time::Instant;

/// What the simulator reads of a hashed qdisc's flow queues: backlogged flow queues now, their
/// time integral and their peak ([`crate::flowq`], "Active flows").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowCount {
    /// Backlogged flow queues now.
    pub active: u32,
    /// Integral of `active` over time up to the `now` asked for, flow x ns.
    pub area: u128,
    /// Largest `active` since the queue was built or since [`Qdisc::reset_flow_peak`].
    pub peak: u32,
}

/// A qdisc's configuration as the registry sees it: its name, its config type and the
/// name/value interface of that config (boundary units: seconds, bytes, 0/1). Implemented
/// by the state type for every packet type (`impl<P> QdiscSpec for Drr<P>`), so that two
/// qdiscs may share a config type (`drr` and `wfq` both take a [`crate::ClassList`]); the
/// registry calls these functions on `State<()>`.
pub trait QdiscSpec {
    /// The name (serde tag, `aqmlab aqms`, errors); equal to the registry's, checked when
    /// the crate compiles.
    const NAME: &'static str;
    /// The configuration (`{"type": NAME, ...}` in serde form, without the tag).
    type Config;
    /// Parameter descriptions (for `aqmlab aqms`; path patterns for trees).
    fn describe() -> Vec<ParamInfo>;
    /// Checks the whole configuration.
    fn validate_config(cfg: &Self::Config) -> Result<(), ConfigError>;
    /// Sets one parameter by path (boundary units) and re-validates; unchanged on error.
    fn set_config_param(cfg: &mut Self::Config, path: &str, value: f64) -> Result<(), ConfigError>;
    /// Reads one parameter by path (boundary units).
    fn get_config_param(cfg: &Self::Config, path: &str) -> Option<f64>;
    /// Sets one parameter while a configuration is built from name/value pairs, which is
    /// validated once at the end ([`QdiscConfig::from_raw`]). Default: [`Self::set_config_param`];
    /// flat parameter lists set the field alone, as an AQM's do, so that cross-field checks
    /// see the final values.
    fn set_config_field(cfg: &mut Self::Config, path: &str, value: f64) -> Result<(), ConfigError> {
        Self::set_config_param(cfg, path, value)
    }
    /// Converts a user-written value for path `key` to its boundary `f64` with the
    /// parameter's unit. Default: `key` among [`Self::describe`].
    fn raw_config_value(
        cfg: &Self::Config,
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        let _ = cfg;
        AqmConfig::value_among(Self::NAME, &Self::describe(), key, raw, require_unit)
    }
}

/// [`QdiscSpec`] for a state type whose config is a flat parameter list
/// ([`crate::params::Params`], built by `aqm_config!`): the name is the config's, and every
/// function is the config's own.
macro_rules! flat_qdisc_spec {
    ($state:ident, $cfg:ty) => {
        impl<P> $crate::qdisc::ops::QdiscSpec for $state<P> {
            const NAME: &'static str = <$cfg as $crate::params::Params>::AQM;
            type Config = $cfg;
            fn describe() -> Vec<$crate::params::ParamInfo> {
                <$cfg as $crate::params::Params>::describe()
            }
            fn validate_config(c: &$cfg) -> Result<(), $crate::error::ConfigError> {
                $crate::params::Params::validate(c)
            }
            fn set_config_param(
                c: &mut $cfg,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                $crate::params::Params::set_param(c, path, value)
            }
            fn get_config_param(c: &$cfg, path: &str) -> Option<f64> {
                $crate::params::Params::get_param(c, path)
            }
            fn set_config_field(
                c: &mut $cfg,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                $crate::params::Params::set_field(c, path, value)
            }
        }
    };
}
pub(crate) use flat_qdisc_spec;

/// A running qdisc other than the FIFO leaf, as [`Qdisc`] drives it. The per-packet methods
/// (`enqueue`, `dequeue`) of a scheduler are `#[inline(never)]` in its impl, so that the
/// scheduler's code stays out of a caller's FIFO path; the optional parts (timers, classes,
/// flow queues) have defaults meaning "none".
pub trait QdiscOps<P: Packet>: QdiscSpec + Sized {
    /// Builds `cfg` with hard limit `limit` (shared by all its queues) on `link`; `seed`
    /// starts its random streams and hash keys.
    fn new(
        cfg: &Self::Config,
        limit: QueueLimit,
        link: LinkInfo,
        seed: u64,
    ) -> Result<Self, ConfigError>;
    /// Offers a packet: `Queued`, `Marked` or `Dropped(pkt, reason)` for the arrival; other
    /// packets dropped to make room (victims) go to `on_drop`.
    fn enqueue(
        &mut self,
        now: Instant,
        pkt: P,
        on_drop: &mut impl FnMut(P, DropReason),
    ) -> Enqueue<P>;
    /// Takes the next packet for the link; dequeue-side drops go to `on_drop`.
    fn dequeue(&mut self, now: Instant, on_drop: &mut impl FnMut(P, DropReason)) -> Option<P>;
    /// Next time [`QdiscOps::on_timer`] must run (none: no periodic law).
    #[inline]
    fn poll_at(&self) -> Option<Instant> {
        None
    }
    /// Runs the periodic laws that are due.
    #[inline]
    fn on_timer(&mut self, _now: Instant) {}
    /// A shaper's next send time while it holds packets it may not send yet (its last
    /// `dequeue` returned `None` with packets queued); `None` otherwise (the default).
    #[inline]
    fn ready_at(&self) -> Option<Instant> {
        None
    }
    /// Packets stored.
    fn len_pkts(&self) -> usize;
    /// Bytes stored.
    fn len_bytes(&self) -> u64;
    /// Counters over all its queues.
    fn stats(&self) -> QueueStats;
    /// The link's hard limit it was built with.
    fn limit(&self) -> QueueLimit;
    /// The link.
    fn link(&self) -> LinkInfo;
    /// Bytes of state held for packets and flows (not counted: fixed-size fields).
    fn memory_bytes(&self) -> usize;
    /// Drop/mark probability in [0, 1] (0 for qdiscs without one).
    #[inline]
    fn probability(&self) -> f64 {
        0.0
    }
    /// Number of classes reported (0: none).
    #[inline]
    fn num_classes(&self) -> usize {
        0
    }
    /// Name of class `i`.
    #[inline]
    fn class_name(&self, _i: usize) -> Option<&str> {
        None
    }
    /// Counters of class `i`.
    #[inline]
    fn class_stats(&self, _i: usize) -> Option<QueueStats> {
        None
    }
    /// Length of class `i`'s queue now: `(packets, bytes)`.
    #[inline]
    fn class_len(&self, _i: usize) -> Option<(usize, u64)> {
        None
    }
    /// The class the last dequeued packet came from (0 without classes).
    #[inline]
    fn last_class(&self) -> u8 {
        0
    }
    /// Backlogged flow queues (`None` without flow queues).
    #[inline]
    fn active_flows(&self) -> Option<u32> {
        None
    }
    /// The active-flow count, its integral up to `now` and its peak.
    #[inline]
    fn flow_count(&self, _now: Instant) -> Option<FlowCount> {
        None
    }
    /// Restarts the peak of [`QdiscOps::flow_count`] from the current count.
    #[inline]
    fn reset_flow_peak(&mut self) {}
    /// The packet pool's size, for a qdisc with one.
    #[inline]
    fn pool_slots(&self) -> Option<usize> {
        None
    }
    /// The link's rate changed ([`crate::QueueDisc::set_link_rate`]; `rate` > 0). The default
    /// does nothing: a qdisc whose laws read only the MTU (DualPI2). The class-based qdiscs
    /// pass it to their classes' AQMs, the flow-queue qdiscs keep it in their `link` (SQM's
    /// shares read it).
    fn set_link_rate(&mut self, _rate: crate::time::BitsPerSec) {}
    /// Changes one parameter by path while running; on error nothing changes.
    fn set_param(&mut self, path: &str, value: f64) -> Result<(), ConfigError>;
    /// Current value of one parameter by path (default: read from [`QdiscOps::config`]).
    fn param(&self, path: &str) -> Option<f64> {
        Self::get_config_param(&self.config(), path)
    }
    /// The current configuration.
    fn config(&self) -> Self::Config;
}
