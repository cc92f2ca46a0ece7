//! [`QdiscConfig`]: what to run, as scenario files, Python and pickling give it. The enum,
//! its serde form and every `match` over its variants are generated from the registry
//! ([`super`]); the functions below them build configs from names and user-written values.

use crate::classes::ClassList;
use crate::config::{AqmConfig, RawParam};
use crate::error::ConfigError;
use crate::params::ParamInfo;

use super::SCHEDULERS;

/// Generates [`QdiscConfig`] from the registry's lines: `all` lists every qdisc in order,
/// `classes` and `hashed` the variants of those kinds. Expanded in [`crate::qdisc`], where
/// [`super::QdiscSpec`] is in scope.
macro_rules! qdisc_configs {
    (
        all { $( $n:literal => $v:ident($m:ident :: $s:ident, $tm:ident :: $t:ident); )* }
        classes { $( $cv:ident ),* }
        hashed { $( $hv:ident ),* }
    ) => {
        /// A queue-discipline tree: one FIFO with an AQM, or a scheduler with classes, or a
        /// hashed or other qdisc with its flat parameters. `Clone`, not `Copy` (class lists
        /// are vectors).
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(into = "Repr", try_from = "Repr")]
        pub enum QdiscConfig {
            /// A single FIFO running this AQM.
            Fifo($crate::config::AqmConfig),
            $(
                #[doc = concat!("The `", $n, "` qdisc ([`crate::", stringify!($m), "`]).")]
                $v($crate::$tm::$t),
            )*
        }

        /// The serde form of a qdisc other than the FIFO: tagged by its name.
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(tag = "type")]
        enum SchedRepr {
            $(
                #[serde(rename = $n)]
                $v($crate::$tm::$t),
            )*
        }

        /// A FIFO keeps its AQM's own serde form (`{"type": "codel", ...}`).
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Sched(SchedRepr),
            Fifo($crate::config::AqmConfig),
        }

        impl From<QdiscConfig> for Repr {
            fn from(c: QdiscConfig) -> Repr {
                match c {
                    QdiscConfig::Fifo(a) => Repr::Fifo(a),
                    $( QdiscConfig::$v(c) => Repr::Sched(SchedRepr::$v(c)), )*
                }
            }
        }

        impl TryFrom<Repr> for QdiscConfig {
            type Error = $crate::error::ConfigError;
            fn try_from(r: Repr) -> Result<QdiscConfig, $crate::error::ConfigError> {
                Ok(match r {
                    Repr::Fifo(a) => QdiscConfig::Fifo(a),
                    $( Repr::Sched(SchedRepr::$v(c)) => QdiscConfig::$v(c), )*
                })
            }
        }

        impl QdiscConfig {
            /// The AQM's or scheduler's canonical name.
            pub fn name(&self) -> &'static str {
                match self {
                    QdiscConfig::Fifo(a) => a.name(),
                    $( QdiscConfig::$v(_) => $n, )*
                }
            }

            /// True for a hashed flow-queueing qdisc ([`HASHED`]).
            pub fn is_hashed(&self) -> bool {
                match self {
                    $( QdiscConfig::$hv(_) => true, )*
                    #[allow(unreachable_patterns)]
                    _ => false,
                }
            }

            /// The class list of a class-based scheduler ([`CLASS_BASED`]).
            pub fn class_list(&self) -> Option<&$crate::classes::ClassList> {
                match self {
                    $( QdiscConfig::$cv(c) => Some(c), )*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            /// The class list of a class-based scheduler, to change it.
            pub fn class_list_mut(&mut self) -> Option<&mut $crate::classes::ClassList> {
                match self {
                    $( QdiscConfig::$cv(c) => Some(c), )*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            /// The class-based scheduler `name` ([`CLASS_BASED`]; case-insensitive) over
            /// `classes`.
            pub fn with_classes(
                name: &str,
                classes: $crate::classes::ClassList,
            ) -> Option<QdiscConfig> {
                match Self::scheduler_default(&name.trim().to_ascii_lowercase())? {
                    $( QdiscConfig::$cv(_) => Some(QdiscConfig::$cv(classes)), )*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            /// The default config of qdisc `lower` (a lowercase registry name).
            fn scheduler_default(lower: &str) -> Option<QdiscConfig> {
                $(
                    if lower == $n {
                        return Some(QdiscConfig::$v(<$crate::$tm::$t>::default()));
                    }
                )*
                None
            }

            /// Parameter descriptions of this config's kind (a DRR tree: the path patterns).
            pub fn param_info(&self) -> Vec<$crate::params::ParamInfo> {
                match self {
                    QdiscConfig::Fifo(a) => a.param_info(),
                    $( QdiscConfig::$v(_) => <crate::$m::$s<()> as QdiscSpec>::describe(), )*
                }
            }

            /// Checks the whole tree.
            pub fn validate(&self) -> Result<(), $crate::error::ConfigError> {
                match self {
                    QdiscConfig::Fifo(a) => a.validate(),
                    $(
                        QdiscConfig::$v(c) => <crate::$m::$s<()> as QdiscSpec>::validate_config(c),
                    )*
                }
            }

            /// Sets one parameter by path (boundary units) and re-validates; unchanged on
            /// error.
            pub fn set_param(
                &mut self,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                match self {
                    QdiscConfig::Fifo(a) => a.set_param(path, value),
                    $(
                        QdiscConfig::$v(c) => {
                            <crate::$m::$s<()> as QdiscSpec>::set_config_param(c, path, value)
                        }
                    )*
                }
            }

            /// Reads one parameter by path (boundary units).
            pub fn get_param(&self, path: &str) -> Option<f64> {
                match self {
                    QdiscConfig::Fifo(a) => a.get_param(path),
                    $(
                        QdiscConfig::$v(c) => {
                            <crate::$m::$s<()> as QdiscSpec>::get_config_param(c, path)
                        }
                    )*
                }
            }

            /// Sets one parameter of a config being built ([`QdiscSpec::set_config_field`]).
            fn set_field(
                &mut self,
                path: &str,
                value: f64,
            ) -> Result<(), $crate::error::ConfigError> {
                match self {
                    QdiscConfig::Fifo(a) => a.set_param(path, value),
                    $(
                        QdiscConfig::$v(c) => {
                            <crate::$m::$s<()> as QdiscSpec>::set_config_field(c, path, value)
                        }
                    )*
                }
            }

            /// Converts a user-written value for path `key` to its boundary `f64`
            /// ([`AqmConfig::param_value`] with the parameter's own unit).
            pub fn raw_value(
                &self,
                key: &str,
                raw: $crate::config::RawParam<'_>,
                require_unit: bool,
            ) -> Result<f64, $crate::error::ConfigError> {
                match self {
                    QdiscConfig::Fifo(a) => a.raw_value(key, raw, require_unit),
                    $(
                        QdiscConfig::$v(c) => {
                            <crate::$m::$s<()> as QdiscSpec>::raw_config_value(
                                c, key, raw, require_unit,
                            )
                        }
                    )*
                }
            }
        }
    };
}
pub(crate) use qdisc_configs;

impl From<AqmConfig> for super::QdiscConfig {
    fn from(a: AqmConfig) -> super::QdiscConfig {
        super::QdiscConfig::Fifo(a)
    }
}

impl super::QdiscConfig {
    /// Every name `default_for` takes: the AQMs (as single FIFOs), then the schedulers.
    pub fn names() -> Vec<&'static str> {
        let mut v = AqmConfig::names().to_vec();
        v.extend_from_slice(SCHEDULERS);
        v
    }

    /// The single AQM, if this is a FIFO.
    pub fn as_aqm(&self) -> Option<&AqmConfig> {
        match self {
            Self::Fifo(a) => Some(a),
            _ => None,
        }
    }

    /// Class names of a scheduler, in order (empty for a FIFO and a hashed qdisc).
    pub fn class_names(&self) -> Vec<&str> {
        self.class_list().map_or_else(Vec::new, ClassList::names)
    }

    /// The default config of `name` (an AQM, alias or scheduler; case-insensitive).
    pub fn default_for(name: &str) -> Result<Self, ConfigError> {
        if let Some(cfg) = Self::scheduler_default(&name.trim().to_ascii_lowercase()) {
            return Ok(cfg);
        }
        AqmConfig::default_for(name)
            .map(Self::Fifo)
            .map_err(|e| match e {
                ConfigError::UnknownAqm { name, known } => ConfigError::UnknownAqm {
                    name,
                    known: format!("{known}, {}", SCHEDULERS.join(", ")),
                },
                e => e,
            })
    }

    /// Parameter descriptions of `name` (for `aqmlab aqms`).
    pub fn describe(name: &str) -> Result<Vec<ParamInfo>, ConfigError> {
        Ok(Self::default_for(name)?.param_info())
    }

    /// Like [`AqmConfig::from_raw`] for any name; for a scheduler the keys are paths into its
    /// default config (`classes.default.weight`). Every value is set, then the whole config
    /// is checked. Class lists are built by the scenario schema or serde, not by name/value
    /// pairs.
    pub fn from_raw(
        name: &str,
        params: &[(&str, RawParam<'_>)],
        require_unit: bool,
    ) -> Result<Self, ConfigError> {
        let mut cfg = Self::default_for(name)?;
        if let Self::Fifo(_) = cfg {
            return AqmConfig::from_raw(name, params, require_unit).map(Self::Fifo);
        }
        for (k, raw) in params {
            let x = cfg.raw_value(k, *raw, require_unit)?;
            cfg.set_field(k, x)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Builds from a name and `(path, value)` pairs in boundary units.
    pub fn from_name(name: &str, params: &[(String, f64)]) -> Result<Self, ConfigError> {
        let mut cfg = Self::default_for(name)?;
        if let Self::Fifo(_) = cfg {
            return AqmConfig::from_name(name, params).map(Self::Fifo);
        }
        for (k, v) in params {
            cfg.set_field(k, *v)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }
}
