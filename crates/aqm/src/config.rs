//! [`AqmConfig`]: the serde-tagged description of which AQM runs with which parameters,
//! shared by scenario files, Python and pickling; and `AnyAqm`, the matching enum of
//! algorithm states (static dispatch by `match`).
//!
//! Serialized form (JSON shown): `{"type": "codel", "target": 5000000, "ecn": true}`.
//! Time fields serialize as integer **nanoseconds**; at the name/value boundary
//! ([`AqmConfig::from_name`], [`AqmConfig::describe`], `set_param`) they are seconds.

use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::{Backlog, DropReason, QueueStats};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::params::{ParamInfo, Params};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Aliases accepted by [`AqmConfig::from_name`] besides the canonical names.
const ALIASES: &[(&str, &str)] = &[("fifo", "droptail"), ("taildrop", "droptail")];

/// The type an [`AnyAqm`] variant stores: the algorithm's state inline, or boxed (`boxed` on
/// its registry line) when the state is large, so that the enum, held by every queue of a
/// simulation (four access-link queues per flow on a dumbbell), stays as small as the largest
/// inline state.
macro_rules! stored {
    ($t:ty) => { $t };
    ($t:ty, boxed) => { Box<$t> };
}

/// Stores a built state as [`stored!`] says.
macro_rules! store {
    ($e:expr) => {
        $e
    };
    ($e:expr, boxed) => {
        Box::new($e)
    };
}

macro_rules! aqm_registry {
    ($( $variant:ident => $module:ident :: $cfg:ident, $algo:ident $(, $boxed:ident)?; )*) => {
        /// Which AQM, with its parameters. Internally tagged by `"type"` (lowercase name).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", rename_all = "lowercase")]
        pub enum AqmConfig {
            $(
                #[doc = concat!("See [`crate::", stringify!($module), "`].")]
                $variant(crate::$module::$cfg),
            )*
        }

        /// The running state of one AQM (one variant per algorithm; large states boxed, see
        /// [`stored!`]).
        #[derive(Debug, Clone)]
        pub(crate) enum AnyAqm {
            $( $variant(stored!(crate::$module::$algo $(, $boxed)?)), )*
        }

        impl AqmConfig {
            /// Canonical names, in the order of the enum.
            pub fn names() -> &'static [&'static str] {
                &[$( <crate::$module::$cfg as Params>::AQM ),*]
            }

            /// This config's canonical name.
            pub fn name(&self) -> &'static str {
                match self { $( AqmConfig::$variant(_) => <crate::$module::$cfg as Params>::AQM, )* }
            }

            /// The default config of AQM `name` (canonical or alias, case-insensitive).
            pub fn default_for(name: &str) -> Result<AqmConfig, ConfigError> {
                let lower = name.trim().to_ascii_lowercase();
                let canon = ALIASES
                    .iter()
                    .find(|(a, _)| *a == lower)
                    .map_or(lower.as_str(), |(_, c)| *c);
                $(
                    if canon == <crate::$module::$cfg as Params>::AQM {
                        return Ok(AqmConfig::$variant(Default::default()));
                    }
                )*
                Err(ConfigError::UnknownAqm { name: name.to_string(), known: Self::known_names() })
            }

            /// Parameter descriptions of AQM `name` (for `aqmlab aqms`).
            pub fn describe(name: &str) -> Result<Vec<ParamInfo>, ConfigError> {
                Ok(match Self::default_for(name)? {
                    $( AqmConfig::$variant(_) => <crate::$module::$cfg as Params>::describe(), )*
                })
            }

            /// Parameter descriptions of this config's AQM.
            pub fn param_info(&self) -> Vec<ParamInfo> {
                match self { $( AqmConfig::$variant(_) => <crate::$module::$cfg as Params>::describe(), )* }
            }

            /// Check every parameter's range and cross-field constraints.
            pub fn validate(&self) -> Result<(), ConfigError> {
                match self { $( AqmConfig::$variant(c) => c.validate(), )* }
            }

            /// Set one parameter (boundary units) and re-validate; unchanged on error.
            pub fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
                match self { $( AqmConfig::$variant(c) => c.set_param(key, value), )* }
            }

            /// Read one parameter (boundary units).
            pub fn get_param(&self, key: &str) -> Option<f64> {
                match self { $( AqmConfig::$variant(c) => c.get_param(key), )* }
            }

            fn set_field(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
                match self { $( AqmConfig::$variant(c) => c.set_field(key, value), )* }
            }
        }

        impl AnyAqm {
            pub(crate) fn build(cfg: &AqmConfig, env: &Env) -> AnyAqm {
                match cfg { $( AqmConfig::$variant(c) => AnyAqm::$variant(
                    store!(crate::$module::$algo::build(c, env) $(, $boxed)?)
                ), )* }
            }
            pub(crate) fn config(&self) -> AqmConfig {
                match self { $( AnyAqm::$variant(a) => AqmConfig::$variant(a.cfg().clone()), )* }
            }
            pub(crate) fn set_param(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
                match self {
                    $( AnyAqm::$variant(a) => {
                        let mut c = a.cfg().clone();
                        c.set_param(key, value)?;
                        a.reconfigure(c);
                        Ok(())
                    } )*
                }
            }
            #[inline]
            pub(crate) fn ecn(&self) -> bool {
                match self { $( AnyAqm::$variant(a) => a.ecn(), )* }
            }
            // inline(always): called from the FIFO fast path and from schedulers' classes.
            #[inline(always)]
            pub(crate) fn enqueue(&mut self, now: Instant, pkt: &Arrival, q: &QueueView, rng: &mut Rng) -> Verdict {
                match self { $( AnyAqm::$variant(a) => a.enqueue(now, pkt, q, rng), )* }
            }
            #[inline(always)]
            pub(crate) fn dequeue<P: Packet, F: FnMut(P, DropReason)>(
                &mut self, now: Instant, backlog: &mut Backlog<P>, stats: &mut QueueStats, on_drop: &mut F,
                rng: &mut Rng,
            ) -> Option<P> {
                match self { $( AnyAqm::$variant(a) => a.dequeue(now, backlog, stats, on_drop, rng), )* }
            }
            #[inline]
            pub(crate) fn on_dequeued(&mut self, now: Instant, size: u32, sojourn: Duration, q: &QueueView) {
                match self { $( AnyAqm::$variant(a) => a.on_dequeued(now, size, sojourn, q), )* }
            }
            #[inline]
            pub(crate) fn on_empty(&mut self, idle_from: Instant) {
                match self { $( AnyAqm::$variant(a) => a.on_empty(idle_from), )* }
            }
            #[inline]
            pub(crate) fn on_overflow(&mut self, now: Instant) {
                match self { $( AnyAqm::$variant(a) => a.on_overflow(now), )* }
            }
            #[inline]
            pub(crate) fn poll_at(&self) -> Option<Instant> {
                match self { $( AnyAqm::$variant(a) => a.poll_at(), )* }
            }
            #[inline]
            pub(crate) fn on_timer(&mut self, now: Instant, q: &QueueView) {
                match self { $( AnyAqm::$variant(a) => a.on_timer(now, q), )* }
            }
            pub(crate) fn link_changed(&mut self, env: &Env) {
                match self { $( AnyAqm::$variant(a) => a.link_changed(env), )* }
            }
            #[inline]
            pub(crate) fn activations(&self) -> u64 {
                match self { $( AnyAqm::$variant(a) => a.activations(), )* }
            }
            #[inline]
            pub(crate) fn probability(&self) -> f64 {
                match self { $( AnyAqm::$variant(a) => a.probability(), )* }
            }
        }
    };
}

// One line per AQM. Every state larger than a word (`tests::MAX_INLINE_STATE`: all but
// drop-tail's) is marked `boxed` (checked by the test below): every queue of a simulation holds
// an `AnyAqm`, so its size is paid four times per flow on a dumbbell with access links, whose
// drop-tail queues then carry 16 bytes for it instead of the largest state. The AQM of a
// bottleneck costs one pointer load per call (+1.7 % instructions on the 32 Mb/s CoDel bench
// row, callgrind).
aqm_registry! {
    DropTail => droptail::DropTailConfig, DropTail;
    Red => red::RedConfig, Red, boxed;
    Ared => ared::AredConfig, Ared, boxed;
    Pi => pi::PiConfig, Pi, boxed;
    Pie => pie::PieConfig, Pie, boxed;
    Codel => codel::CodelConfig, Codel, boxed;
    Cobalt => cobalt::CobaltConfig, Cobalt, boxed;
    Blue => blue::BlueConfig, Blue, boxed;
    Sred => sred::SredConfig, Sred, boxed;
    Rem => rem::RemConfig, Rem, boxed;
    Avq => avq::AvqConfig, Avq, boxed;
    Sfc => sfc::SfcConfig, Sfc, boxed;
    Pdlq => pdlq::PdlqConfig, Pdlq, boxed;
    Edc => edc::EdcConfig, Edc, boxed;
    Pip => pip::PipConfig, Pip, boxed;
    Aopc => aopc::AopcConfig, Aopc, boxed;
    Flc => flc::FlcConfig, Flc, boxed;
    Paqman => paqman::PaqmanConfig, Paqman, boxed;
}

/// A parameter value as a user wrote it (scenario file, command line, Python).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawParam<'a> {
    /// A number in the parameter's base unit (seconds, bytes, packets, ...).
    Number(f64),
    /// A boolean; only `bool` parameters take one.
    Bool(bool),
    /// Text: a number with a unit (`"5ms"`), `"true"`/`"false"`, or a bare number.
    Text(&'a str),
    /// The content of a table-valued parameter (unit `"file"`: PAQMAN's `policy`), read from
    /// the file the user named by the front end (this crate does no I/O).
    Policy(&'a crate::paqman::PaqmanPolicy),
}

impl AqmConfig {
    /// Converts a user-written value of parameter `info` to its boundary `f64` (seconds,
    /// bytes, 0/1, ...). Time and byte parameters written as text take a unit (`"5ms"`,
    /// `"1500B"`); with `require_unit` (the command line) a bare number is an error for them.
    pub fn param_value(
        info: &ParamInfo,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        use crate::units::{parse, parse_with_unit, Kind};
        let bad = |text: &str, reason: String| ConfigError::InvalidText {
            key: info.name.to_string(),
            text: text.to_string(),
            reason,
        };
        match (raw, info.unit) {
            (RawParam::Policy(_), _) => Err(bad("(policy)", "not a table-valued parameter".into())),
            (_, "file") => Err(bad(
                &format!("{raw:?}"),
                "names a file the front end reads (a scenario or --aqm-param policy=FILE)".into(),
            )),
            // A choice (unit "a|b|..."): its name, converted to the name's index.
            (RawParam::Text(t), _) if info.is_choice() => info
                .choice_index(t)
                .map(|i| i as f64)
                .ok_or_else(|| bad(t, info.choices_reason())),
            (RawParam::Number(x), _) if info.is_choice() => {
                Err(bad(&x.to_string(), info.choices_reason()))
            }
            (RawParam::Bool(b), _) if info.is_choice() => {
                Err(bad(&b.to_string(), info.choices_reason()))
            }
            (RawParam::Bool(b), "bool") => Ok(if b { 1.0 } else { 0.0 }),
            (RawParam::Bool(b), unit) => Err(bad(&b.to_string(), format!("not a {unit} value"))),
            (RawParam::Number(x), _) => Ok(x),
            (RawParam::Text(t), "bool") => match t.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => Ok(1.0),
                "false" | "0" | "no" | "off" => Ok(0.0),
                _ => Err(bad(t, "must be true or false".into())),
            },
            (RawParam::Text(t), unit @ ("s" | "bytes")) => {
                let kind = if unit == "s" { Kind::Time } else { Kind::Size };
                let r = if require_unit {
                    parse_with_unit(kind, t)
                } else {
                    parse(kind, t)
                };
                r.map_err(|e| bad(t, e.to_string()))
            }
            (RawParam::Text(t), unit) => t
                .trim()
                .parse::<f64>()
                .map_err(|_| bad(t, format!("must be a number ({unit})"))),
        }
    }

    /// Like [`AqmConfig::from_name`], with values as the user wrote them
    /// (see [`AqmConfig::param_value`]). Unknown parameters are reported with the AQM's list.
    pub fn from_raw(
        name: &str,
        params: &[(&str, RawParam<'_>)],
        require_unit: bool,
    ) -> Result<AqmConfig, ConfigError> {
        let mut cfg = Self::default_for(name)?;
        for (k, raw) in params {
            if let RawParam::Policy(p) = raw {
                if cfg
                    .param_info()
                    .iter()
                    .any(|i| i.name == *k && i.unit == "file")
                {
                    cfg.set_policy(p)?;
                    continue;
                }
            }
            let x = cfg.raw_value(k, *raw, require_unit)?;
            cfg.set_field(k, x)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Installs a PAQMAN policy (unchanged and an error for other AQMs).
    pub fn set_policy(&mut self, p: &crate::paqman::PaqmanPolicy) -> Result<(), ConfigError> {
        match self {
            AqmConfig::Paqman(c) => {
                p.check()?;
                c.policy = Some(std::sync::Arc::new(p.clone()));
                Ok(())
            }
            other => Err(ConfigError::UnknownParam {
                aqm: other.name().into(),
                key: "policy".into(),
                known: other
                    .param_info()
                    .iter()
                    .map(|i| i.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Converts a user-written value of this AQM's parameter `key` to its boundary `f64`
    /// ([`AqmConfig::param_value`] with the parameter's own unit); unknown keys are errors
    /// listing the known ones.
    pub fn raw_value(
        &self,
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        Self::value_among(self.name(), &self.param_info(), key, raw, require_unit)
    }

    /// Converts a user-written value of parameter `key`, one of `infos` (the parameters of
    /// `aqm`, an AQM or a flat-parameter qdisc), to its boundary `f64`; unknown keys are errors
    /// listing the known ones.
    pub fn value_among(
        aqm: &str,
        infos: &[ParamInfo],
        key: &str,
        raw: RawParam<'_>,
        require_unit: bool,
    ) -> Result<f64, ConfigError> {
        let Some(info) = infos.iter().find(|i| i.name == key) else {
            return Err(ConfigError::UnknownParam {
                aqm: aqm.to_string(),
                key: key.to_string(),
                known: infos.iter().map(|i| i.name).collect::<Vec<_>>().join(", "),
            });
        };
        Self::param_value(info, raw, require_unit)
    }

    fn known_names() -> String {
        let mut v: Vec<&str> = Self::names().to_vec();
        v.extend(ALIASES.iter().map(|(a, _)| *a));
        v.join(", ")
    }

    /// Build a config from an AQM name (canonical or alias, case-insensitive) and
    /// `(parameter, value)` pairs in boundary units (time in seconds, booleans 0/1).
    /// All pairs are applied, then the whole config is validated.
    ///
    /// Errors name the offending AQM, key and value: `unknown AQM 'foo' (known: ...)`,
    /// `unknown parameter 'x' = 1 for AQM 'red' (known: ...)`,
    /// `aqm parameter 'target' = -1: must be ...`.
    pub fn from_name(name: &str, params: &[(String, f64)]) -> Result<AqmConfig, ConfigError> {
        let mut cfg = Self::default_for(name)?;
        for (k, v) in params {
            cfg.set_field(k, *v)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest AQM state (bytes) an [`AnyAqm`] variant stores inline; larger ones are boxed.
    const MAX_INLINE_STATE: usize = 8;

    /// Every inline state fits [`MAX_INLINE_STATE`], so the enum (tag included) stays at
    /// most one word larger: a new AQM with a larger state must be marked `boxed`.
    #[test]
    fn any_aqm_stays_small() {
        let n = std::mem::size_of::<AnyAqm>();
        assert!(n <= MAX_INLINE_STATE + 8, "AnyAqm is {n} bytes");
    }
}
