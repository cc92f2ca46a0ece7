//! Scenario errors: one line naming the key path and value (`KEY = VALUE: REASON`), with
//! the closest known key suggested for a typo.

use std::fmt;

use serde_json::Value;

/// A scenario that does not fit the schema. `Display` gives one line:
/// `KEY = VALUE: REASON`, or `KEY: REASON` where no single value is at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// Dotted key path (`flows[0].count`), or empty for the whole scenario.
    pub key: String,
    /// The offending value as the user wrote it (TOML-like), if any.
    pub value: Option<String>,
    /// What is wrong or required.
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.value, self.key.is_empty()) {
            (_, true) => write!(f, "scenario: {}", self.reason),
            (Some(v), false) => write!(f, "{} = {}: {}", self.key, v, self.reason),
            (None, false) => write!(f, "{}: {}", self.key, self.reason),
        }
    }
}

impl std::error::Error for ScenarioError {}

pub(super) type Result<T> = std::result::Result<T, ScenarioError>;

/// A value as the user wrote it, for messages: strings in double quotes, numbers plain.
pub(super) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

pub(super) fn err(key: &str, value: Option<&Value>, reason: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.to_string(),
        value: value.map(show),
        reason: reason.into(),
    }
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Levenshtein distance, for "did you mean" hints on unknown keys.
pub(super) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

pub(super) fn unknown_key(path: &str, key: &str, value: &Value, known: &[&str]) -> ScenarioError {
    let near = known
        .iter()
        .map(|k| (distance(key, k), *k))
        .filter(|(d, k)| *d <= 2 && *d < k.len())
        .min();
    let reason = match near {
        Some((_, k)) => format!("unknown key (did you mean '{k}'?)"),
        None => format!("unknown key (known: {})", known.join(", ")),
    };
    err(&join(path, key), Some(value), reason)
}
