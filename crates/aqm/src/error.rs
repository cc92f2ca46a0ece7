//! Typed errors.

use core::fmt;

/// Errors in building or re-parameterising an AQM configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigError {
    /// The AQM name is not known.
    UnknownAqm {
        /// The name given.
        name: String,
        /// Comma-separated list of known names.
        known: String,
    },
    /// The parameter does not exist for this AQM.
    UnknownParam {
        /// The AQM the parameter was given for.
        aqm: String,
        /// The parameter name given.
        key: String,
        /// Comma-separated list of known parameters.
        known: String,
    },
    /// A value written as text (`"5"`, `"5 parsecs"`) is not a quantity the parameter takes.
    InvalidText {
        /// The parameter name.
        key: String,
        /// The text as given.
        text: String,
        /// Why it is rejected, e.g. "give a unit, e.g. 5ms".
        reason: String,
    },
    /// The parameter exists but the value is not acceptable.
    InvalidParam {
        /// The parameter name.
        key: String,
        /// The offending value (time parameters in seconds).
        value: f64,
        /// Why it is rejected, e.g. "must be > 0".
        reason: String,
    },
}

impl ConfigError {
    /// Shorthand for [`ConfigError::InvalidParam`].
    pub fn invalid(key: &str, value: f64, reason: impl Into<String>) -> ConfigError {
        ConfigError::InvalidParam {
            key: key.to_string(),
            value,
            reason: reason.into(),
        }
    }
    /// The same error with `prefix` put before its key (a child AQM's error reported with
    /// its path in a tree: `target` -> `classes.a.aqm.target`).
    pub fn prefixed(self, prefix: &str) -> ConfigError {
        match self {
            ConfigError::UnknownAqm { .. } => self,
            ConfigError::UnknownParam { aqm, key, known } => ConfigError::UnknownParam {
                aqm,
                key: format!("{prefix}{key}"),
                known,
            },
            ConfigError::InvalidText { key, text, reason } => ConfigError::InvalidText {
                key: format!("{prefix}{key}"),
                text,
                reason,
            },
            ConfigError::InvalidParam { key, value, reason } => ConfigError::InvalidParam {
                key: format!("{prefix}{key}"),
                value,
                reason,
            },
        }
    }
    /// The error's fields: the key (`type` for an unknown AQM), the value as given (None when
    /// the key itself is the fault) and the reason, for front ends that format their own line.
    pub fn parts(&self) -> (String, Option<String>, String) {
        match self {
            ConfigError::UnknownAqm { name, known } => (
                "type".into(),
                Some(format!("'{name}'")),
                format!("unknown AQM (known: {known})"),
            ),
            ConfigError::UnknownParam { aqm, key, known } => (
                key.clone(),
                None,
                format!("unknown parameter for AQM '{aqm}' (known: {known})"),
            ),
            ConfigError::InvalidParam { key, value, reason } => {
                (key.clone(), Some(value.to_string()), reason.clone())
            }
            ConfigError::InvalidText { key, text, reason } => {
                (key.clone(), Some(format!("'{text}'")), reason.clone())
            }
        }
    }

    /// The offending key, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::UnknownAqm { .. } => None,
            ConfigError::UnknownParam { key, .. }
            | ConfigError::InvalidParam { key, .. }
            | ConfigError::InvalidText { key, .. } => Some(key),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownAqm { name, known } => {
                write!(f, "unknown AQM '{name}' (known: {known})")
            }
            ConfigError::UnknownParam { aqm, key, known } => {
                write!(
                    f,
                    "unknown parameter '{key}' for AQM '{aqm}' (known: {known})"
                )
            }
            ConfigError::InvalidParam { key, value, reason } => {
                write!(f, "aqm parameter '{key}' = {value}: {reason}")
            }
            ConfigError::InvalidText { key, text, reason } => {
                write!(f, "aqm parameter '{key}' = '{text}': {reason}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Returns `Err(InvalidParam)` unless `ok`.
#[inline]
pub(crate) fn ensure(ok: bool, key: &str, value: f64, reason: &str) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError::invalid(key, value, reason))
    }
}
