//! The table reader: one TOML table (a JSON object) read key by key, each value checked and
//! converted once (quantities with units), unknown keys refused, and the normalized table
//! written as it goes.

use super::error::{distance, err, join, unknown_key, Result};
use aqm::units::{self, Kind};
use serde_json::{Map, Value};

/// A table being read: every read records the normalised value, and [`Table::finish`] rejects
/// the keys nobody read.
pub(super) struct Table<'a> {
    pub(super) path: String,
    pub(super) map: &'a Map<String, Value>,
    pub(super) known: Vec<&'static str>,
    pub(super) out: Map<String, Value>,
}

impl<'a> Table<'a> {
    pub(super) fn new(path: impl Into<String>, v: &'a Value) -> Result<Table<'a>> {
        let path = path.into();
        match v {
            Value::Object(map) => Ok(Table {
                path,
                map,
                known: Vec::new(),
                out: Map::new(),
            }),
            other => Err(err(&path, Some(other), "must be a table")),
        }
    }

    pub(super) fn key(&self, k: &str) -> String {
        join(&self.path, k)
    }

    /// The raw value of `k` (recording `k` as known).
    pub(super) fn raw(&mut self, k: &'static str) -> Option<&'a Value> {
        self.known.push(k);
        self.map.get(k).filter(|v| !v.is_null())
    }

    pub(super) fn has(&self, k: &str) -> bool {
        self.map.get(k).is_some_and(|v| !v.is_null())
    }

    pub(super) fn put(&mut self, k: &str, v: impl Into<Value>) {
        self.out.insert(k.to_string(), v.into());
    }

    pub(super) fn quantity(&mut self, k: &'static str, kind: Kind) -> Result<Option<f64>> {
        let Some(v) = self.raw(k) else {
            return Ok(None);
        };
        let x = match v {
            Value::Number(n) => n.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                err(
                    &self.key(k),
                    Some(v),
                    format!("not a finite {}", kind.name()),
                )
            })?,
            Value::String(s) => {
                units::parse(kind, s).map_err(|e| err(&self.key(k), Some(v), e.to_string()))?
            }
            other => {
                return Err(err(
                    &self.key(k),
                    Some(other),
                    format!("must be a {}, e.g. \"{}\"", kind.name(), kind.example("10")),
                ))
            }
        };
        self.put(k, x);
        Ok(Some(x))
    }

    /// A time >= 0 (`> 0` if `positive`).
    pub(super) fn time(&mut self, k: &'static str, positive: bool) -> Result<Option<f64>> {
        let x = self.quantity(k, Kind::Time)?;
        if let Some(x) = x {
            if x < 0.0 || (positive && x == 0.0) {
                let v = self.map.get(k);
                return Err(err(
                    &self.key(k),
                    v,
                    if positive {
                        "must be > 0"
                    } else {
                        "must be >= 0"
                    },
                ));
            }
        }
        Ok(x)
    }

    pub(super) fn time_or(&mut self, k: &'static str, positive: bool, default: f64) -> Result<f64> {
        let x = self.time(k, positive)?.unwrap_or(default);
        self.put(k, x);
        Ok(x)
    }

    /// A rate in bits/s in [1, 1e15].
    pub(super) fn rate(&mut self, k: &'static str) -> Result<Option<f64>> {
        let x = self.quantity(k, Kind::Rate)?;
        if let Some(x) = x {
            if !(1.0..=1e15).contains(&x) {
                let v = self.map.get(k);
                return Err(err(&self.key(k), v, "must be a rate in [1bps, 1000Tbps]"));
            }
        }
        Ok(x)
    }

    /// `v`, or an error that `k` is required; a misspelling of `k` is reported as such.
    pub(super) fn required<T>(&self, k: &str, v: Option<T>, what: &str) -> Result<T> {
        v.ok_or_else(|| {
            let typo = self.map.iter().find(|(key, _)| {
                !self.known.contains(&key.as_str()) && key.as_str() != k && distance(key, k) <= 2
            });
            match typo {
                Some((key, val)) => unknown_key(&self.path, key, val, &[k]),
                None => err(&self.key(k), None, format!("required ({what})")),
            }
        })
    }

    /// A number in `lo..hi` (inclusive bounds as given by `check`).
    pub(super) fn number(
        &mut self,
        k: &'static str,
        default: f64,
        ok: impl Fn(f64) -> bool,
        what: &str,
    ) -> Result<f64> {
        let x = match self.raw(k) {
            None => default,
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && ok(x) => x,
                Some(_) => return Err(err(&self.key(k), Some(v), what.to_string())),
                None => {
                    return Err(err(
                        &self.key(k),
                        Some(v),
                        format!("must be a number: {what}"),
                    ))
                }
            },
        };
        self.put(k, x);
        Ok(x)
    }

    pub(super) fn probability(&mut self, k: &'static str) -> Result<f64> {
        self.number(k, 0.0, |x| (0.0..1.0).contains(&x), "must be in [0, 1)")
    }

    /// A whole number in `[min, max]`.
    pub(super) fn int(&mut self, k: &'static str, min: u64, max: u64) -> Result<Option<u64>> {
        let Some(v) = self.raw(k) else {
            return Ok(None);
        };
        let what = if max == u64::MAX {
            format!("must be a whole number >= {min}")
        } else {
            format!("must be a whole number in [{min}, {max}]")
        };
        let x = match v {
            Value::Number(n) => match (n.as_u64(), n.as_f64()) {
                (Some(x), _) => Some(x),
                (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => Some(f as u64),
                _ => None,
            },
            _ => None,
        };
        match x {
            Some(x) if (min..=max).contains(&x) => {
                self.put(k, x);
                Ok(Some(x))
            }
            _ => Err(err(&self.key(k), Some(v), what)),
        }
    }

    pub(super) fn int_or(
        &mut self,
        k: &'static str,
        min: u64,
        max: u64,
        default: u64,
    ) -> Result<u64> {
        let x = self.int(k, min, max)?.unwrap_or(default);
        self.put(k, x);
        Ok(x)
    }

    pub(super) fn boolean(&mut self, k: &'static str, default: bool) -> Result<bool> {
        let b = match self.raw(k) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => return Err(err(&self.key(k), Some(v), "must be true or false")),
        };
        self.put(k, b);
        Ok(b)
    }

    pub(super) fn string(&mut self, k: &'static str) -> Result<Option<String>> {
        match self.raw(k) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => {
                self.put(k, s.clone());
                Ok(Some(s.clone()))
            }
            Some(v) => Err(err(&self.key(k), Some(v), "must be a non-empty string")),
        }
    }

    /// A string from a fixed set.
    pub(super) fn choice(
        &mut self,
        k: &'static str,
        options: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str> {
        let c = match self.raw(k) {
            None => default,
            Some(v @ Value::String(s)) => {
                let lower = s.trim().to_ascii_lowercase();
                *options.iter().find(|o| **o == lower).ok_or_else(|| {
                    err(
                        &self.key(k),
                        Some(v),
                        format!("must be one of {}", options.join(", ")),
                    )
                })?
            }
            Some(v) => {
                return Err(err(
                    &self.key(k),
                    Some(v),
                    format!("must be one of {}", options.join(", ")),
                ))
            }
        };
        self.put(k, c);
        Ok(c)
    }

    pub(super) fn array(&mut self, k: &'static str) -> Result<&'a [Value]> {
        match self.raw(k) {
            None => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(v) => Err(err(&self.key(k), Some(v), "must be an array")),
        }
    }

    /// Rejects every key that was not read; returns the normalised table.
    pub(super) fn finish(self) -> Result<Map<String, Value>> {
        for (k, v) in self.map {
            if !self.known.contains(&k.as_str()) {
                return Err(unknown_key(&self.path, k, v, &self.known));
            }
        }
        Ok(self.out)
    }
}
