//! The scenario schema: the one description of a simulation that users write (TOML files,
//! `aqmlab dumbbell` options, Python dicts) and the only one Python sees. It is parsed here,
//! validated here with errors that name the key path and value
//! (`dumbbell.rate = "1e400bps": not a finite rate`), and converted once into the internal
//! [`SimConfig`] that `netsim::Simulation::new` builds.
//!
//! Units: a quantity is a number in the SI base unit (seconds, bits/s, bytes) or a string with
//! a unit (`"10Mbps"`, `"5ms"`, `"1500B"`; see [`aqm::units`]). The field-by-field reference is
//! `docs/scenario.md`; [`Scenario::normalized`] returns the scenario with every default filled
//! in and every quantity in base units.
//!
//! ```
//! use experiment::scenario::Scenario;
//! let sc = Scenario::from_json(r#"{"duration": "5s", "dumbbell": {"rate": "10Mbps"},
//!                                   "aqm": {"type": "codel", "target": "5ms"},
//!                                   "flows": [{"count": 4, "ecn": true}]}"#).unwrap();
//! assert_eq!(sc.config.duration, 5.0);
//! assert_eq!(sc.link_aliases, vec![("R1->R2".to_string(), "bottleneck".to_string())]);
//! // the AQM marks because the flows are ECN-capable and the scenario did not say otherwise
//! assert_eq!(sc.config.topology.aqm().unwrap().get_param("ecn"), Some(1.0));
//! let err = Scenario::from_json(r#"{"dumbbell": {"rate": "1e400bps"}, "flows": [{}]}"#);
//! assert_eq!(err.unwrap_err().to_string(), r#"dumbbell.rate = "1e400bps": not a finite rate"#);
//! ```

use std::collections::{BTreeSet, HashSet};
use std::fmt;

use aqm::units::{self, Kind};
use aqm::{AqmConfig, ClassConfig, ClassList, QdiscConfig, RawParam};
use serde_json::{Map, Value};

use crate::config::{
    Access, DumbbellConfig, ExplicitTopology, FlowGroup, LinkConfig, ParkingLotConfig, RateChange,
    RouteConfig, ShortTcpGroup, SimConfig, TcpGroup, TopologyConfig, UdpGroup, DEFAULT_MIN_RTO_S,
};
use crate::cc::CcKind;
use crate::config::DEFAULT_INIT_CWND;

/// Largest estimated memory of a run the schema accepts, bytes (8 GiB: a third of the
/// 24 GiB machines the project is developed on).
pub const MAX_MEMORY_BYTES: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0;
/// Estimated memory per flow of a builder topology, bytes (two hosts, four access links with
/// their queues, the TCP state: about 22 KiB measured on a 10,000-flow dumbbell, with room for
/// queue storage growing during a run; see `docs/scenario.md`).
pub const BYTES_PER_FLOW: f64 = 64.0 * 1024.0;
/// Estimated memory per time-series row (one monitored link, one sample), bytes.
pub const BYTES_PER_SAMPLE: f64 = 96.0;
/// Estimated memory per per-class time-series row (one class of a monitored link, one
/// sample), bytes.
pub const BYTES_PER_CLASS_SAMPLE: f64 = 64.0;

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

type Result<T> = std::result::Result<T, ScenarioError>;

/// A value as the user wrote it, for messages: strings in double quotes, numbers plain.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

fn err(key: &str, value: Option<&Value>, reason: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.to_string(),
        value: value.map(show),
        reason: reason.into(),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Levenshtein distance, for "did you mean" hints on unknown keys.
fn distance(a: &str, b: &str) -> usize {
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

fn unknown_key(path: &str, key: &str, value: &Value, known: &[&str]) -> ScenarioError {
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

/// A table being read: every read records the normalised value, and [`Table::finish`] rejects
/// the keys nobody read.
struct Table<'a> {
    path: String,
    map: &'a Map<String, Value>,
    known: Vec<&'static str>,
    out: Map<String, Value>,
}

impl<'a> Table<'a> {
    fn new(path: impl Into<String>, v: &'a Value) -> Result<Table<'a>> {
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

    fn key(&self, k: &str) -> String {
        join(&self.path, k)
    }

    /// The raw value of `k` (recording `k` as known).
    fn raw(&mut self, k: &'static str) -> Option<&'a Value> {
        self.known.push(k);
        self.map.get(k).filter(|v| !v.is_null())
    }

    fn has(&self, k: &str) -> bool {
        self.map.get(k).is_some_and(|v| !v.is_null())
    }

    fn put(&mut self, k: &str, v: impl Into<Value>) {
        self.out.insert(k.to_string(), v.into());
    }

    fn quantity(&mut self, k: &'static str, kind: Kind) -> Result<Option<f64>> {
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
    fn time(&mut self, k: &'static str, positive: bool) -> Result<Option<f64>> {
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

    fn time_or(&mut self, k: &'static str, positive: bool, default: f64) -> Result<f64> {
        let x = self.time(k, positive)?.unwrap_or(default);
        self.put(k, x);
        Ok(x)
    }

    /// A rate in bits/s in [1, 1e15].
    fn rate(&mut self, k: &'static str) -> Result<Option<f64>> {
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
    fn required<T>(&self, k: &str, v: Option<T>, what: &str) -> Result<T> {
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
    fn number(
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

    fn probability(&mut self, k: &'static str) -> Result<f64> {
        self.number(k, 0.0, |x| (0.0..1.0).contains(&x), "must be in [0, 1)")
    }

    /// A whole number in `[min, max]`.
    fn int(&mut self, k: &'static str, min: u64, max: u64) -> Result<Option<u64>> {
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

    fn int_or(&mut self, k: &'static str, min: u64, max: u64, default: u64) -> Result<u64> {
        let x = self.int(k, min, max)?.unwrap_or(default);
        self.put(k, x);
        Ok(x)
    }

    fn boolean(&mut self, k: &'static str, default: bool) -> Result<bool> {
        let b = match self.raw(k) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => return Err(err(&self.key(k), Some(v), "must be true or false")),
        };
        self.put(k, b);
        Ok(b)
    }

    fn string(&mut self, k: &'static str) -> Result<Option<String>> {
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
    fn choice(
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

    fn array(&mut self, k: &'static str) -> Result<&'a [Value]> {
        match self.raw(k) {
            None => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(v) => Err(err(&self.key(k), Some(v), "must be an array")),
        }
    }

    /// Rejects every key that was not read; returns the normalised table.
    fn finish(self) -> Result<Map<String, Value>> {
        for (k, v) in self.map {
            if !self.known.contains(&k.as_str()) {
                return Err(unknown_key(&self.path, k, v, &self.known));
            }
        }
        Ok(self.out)
    }
}

/// Parsed AQM table: the config, and whether the user set `ecn` explicitly (per leaf AQM:
/// one entry for a single AQM, one per class for a scheduler).
struct AqmSpec {
    cfg: QdiscConfig,
    ecn_explicit: Vec<bool>,
    normalized: Map<String, Value>,
}

/// An AQM's normalised table: its type and every parameter in boundary units.
fn normalize_aqm(cfg: &AqmConfig) -> Map<String, Value> {
    let mut normalized = Map::new();
    normalized.insert("type".into(), cfg.name().into());
    for info in cfg.param_info() {
        if let Some(x) = cfg.get_param(info.name) {
            normalized.insert(info.name.into(), param_json(&info, x));
        }
    }
    normalized
}

/// A class-based scheduler's table (`sched` is `drr` or `wfq`): `{type = "drr", classes =
/// [{name, weight, aqm = {...}}, ...]}`. Errors name the key path
/// (`aqm.classes[1].aqm.target`). Keys that are parameter paths (`"classes.a.weight" = 2`,
/// what `--aqm-param` produces) are applied afterwards to the class list (or to the default
/// one, a class `default`, if `classes` is not given).
fn parse_classes(path: &str, v: &Value, sched: &str) -> Result<AqmSpec> {
    let with = |classes: ClassList| {
        QdiscConfig::with_classes(sched, classes).expect("a class-based scheduler")
    };
    let mut t = Table::new(path, v)?;
    t.raw("type");
    t.put("type", with(ClassList::default()).name());
    let paths: Vec<(&String, &Value)> = t
        .map
        .iter()
        .filter(|(k, _)| k.starts_with("classes."))
        .collect();
    for (k, val) in t.map {
        if !matches!(k.as_str(), "type" | "classes") && !k.starts_with("classes.") {
            return Err(unknown_key(path, k, val, &["type", "classes"]));
        }
    }
    if !t.has("classes") {
        let mut cfg = with(ClassList::default());
        let mut ecn_explicit = vec![false];
        apply_paths(path, &mut cfg, &paths, &mut ecn_explicit)?;
        return Ok(classes_spec(cfg, ecn_explicit));
    }
    let list = t.array("classes")?;
    if list.is_empty() {
        return Err(err(
            &t.key("classes"),
            v.get("classes"),
            "give at least one class, e.g. [{name = \"a\", weight = 1}]",
        ));
    }
    if list.len() > aqm::classes::MAX_CLASSES {
        return Err(err(
            &t.key("classes"),
            None,
            format!("at most {} classes", aqm::classes::MAX_CLASSES),
        ));
    }
    let mut classes = Vec::with_capacity(list.len());
    let mut norm = Vec::with_capacity(list.len());
    let mut ecn_explicit = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let cp = format!("{}[{i}]", t.key("classes"));
        let mut ct = Table::new(cp.clone(), c)?;
        let name = ct.string("name")?;
        let name = ct.required(
            "name",
            name,
            "the class name flows choose with class = \"NAME\"",
        )?;
        if name.contains('.') || name.trim() != name {
            return Err(err(
                &ct.key("name"),
                c.get("name"),
                "must be a name without '.' or surrounding spaces",
            ));
        }
        if classes.iter().any(|o: &ClassConfig| o.name == name) {
            return Err(err(&ct.key("name"), c.get("name"), "duplicate class name"));
        }
        let weight = ct.number(
            "weight",
            1.0,
            |x| x > 0.0 && x <= 1e6,
            "must be a weight in (0, 1e6]",
        )?;
        let child = parse_aqm(&ct.key("aqm"), ct.raw("aqm"))?;
        let QdiscConfig::Fifo(aqm) = child.cfg else {
            return Err(err(
                &ct.key("aqm"),
                c.get("aqm"),
                "a class runs a single AQM, not a scheduler",
            ));
        };
        ct.put("aqm", Value::Object(child.normalized));
        ecn_explicit.push(child.ecn_explicit[0]);
        classes.push(ClassConfig { name, weight, aqm });
        norm.push(Value::Object(ct.finish()?));
    }
    t.put("classes", Value::Array(norm));
    let mut cfg = with(ClassList { classes });
    cfg.validate().map_err(|e| err(path, None, e.to_string()))?;
    if paths.is_empty() {
        // Unknown keys were rejected above.
        return Ok(AqmSpec {
            cfg,
            ecn_explicit,
            normalized: t.out,
        });
    }
    apply_paths(path, &mut cfg, &paths, &mut ecn_explicit)?;
    Ok(classes_spec(cfg, ecn_explicit))
}

/// A DualPI2 table: `{type = "dualpi2", target = "15ms", ...}`; the L-queue parameters as
/// a sub-table `l = {step_thresh = "1ms"}` or as paths (`"l.step_thresh" = "1ms"`, what
/// `--aqm-param` produces). Errors name the key path (`aqm.l.step_thresh`).
fn parse_dualpi2(path: &str, map: &Map<String, Value>) -> Result<AqmSpec> {
    let mut cfg = QdiscConfig::DualPi2(Default::default());
    let mut keys: Vec<(String, &Value)> = Vec::new();
    for (k, val) in map {
        match (k.as_str(), val) {
            ("type", _) => {}
            ("l", Value::Object(sub)) => {
                keys.extend(sub.iter().map(|(sk, sv)| (format!("l.{sk}"), sv)));
            }
            _ => keys.push((k.clone(), val)),
        }
    }
    let known = aqm::DualPi2Config::describe();
    for (k, val) in keys {
        let key = join(path, &k);
        if !known.iter().any(|i| i.name == k) {
            let names: Vec<&str> = known.iter().map(|i| i.name).collect();
            return Err(err(
                &key,
                Some(val),
                format!("unknown dualpi2 parameter (known: {})", names.join(", ")),
            ));
        }
        set_path(path, &mut cfg, &k, val)?;
    }
    Ok(AqmSpec {
        normalized: normalize_flat(&cfg),
        cfg,
        ecn_explicit: vec![true],
    })
}

/// Sets parameter path `k` of `cfg` from the user's value `val` (units allowed); errors name
/// `path.k` and the value.
fn set_path(path: &str, cfg: &mut QdiscConfig, k: &str, val: &Value) -> Result<()> {
    let key = join(path, k);
    let raw = match val {
        Value::Number(n) => RawParam::Number(n.as_f64().unwrap_or(f64::NAN)),
        Value::Bool(b) => RawParam::Bool(*b),
        Value::String(s) => RawParam::Text(s),
        other => {
            return Err(err(
                &key,
                Some(other),
                "must be a number, boolean or string",
            ))
        }
    };
    let reason = |e: aqm::ConfigError| match &e {
        aqm::ConfigError::InvalidParam { reason, .. }
        | aqm::ConfigError::InvalidText { reason, .. } => reason.clone(),
        _ => e.to_string(),
    };
    let x = cfg
        .raw_value(k, raw, false)
        .map_err(|e| err(&key, Some(val), reason(e)))?;
    cfg.set_param(k, x)
        .map_err(|e| err(&key, Some(val), reason(e)))
}

/// Applies `classes.NAME.weight` / `classes.NAME.aqm.PARAM` keys of an `[aqm]` table.
fn apply_paths(
    path: &str,
    cfg: &mut QdiscConfig,
    paths: &[(&String, &Value)],
    ecn_explicit: &mut [bool],
) -> Result<()> {
    for (k, val) in paths {
        set_path(path, cfg, k, val)?;
        if let (Some(name), Some(d)) = (
            k.strip_prefix("classes.")
                .and_then(|r| r.strip_suffix(".aqm.ecn")),
            cfg.class_list(),
        ) {
            if let Some(i) = d.class_index(name) {
                ecn_explicit[i] = true;
            }
        }
    }
    Ok(())
}

/// The spec of a class-based scheduler's config with its normalised table built from the
/// config.
fn classes_spec(cfg: QdiscConfig, ecn_explicit: Vec<bool>) -> AqmSpec {
    let mut normalized = Map::new();
    normalized.insert("type".into(), cfg.name().into());
    if let Some(d) = cfg.class_list() {
        let classes: Vec<Value> = d
            .classes
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("name".into(), c.name.clone().into());
                m.insert("weight".into(), c.weight.into());
                m.insert("aqm".into(), Value::Object(normalize_aqm(&c.aqm)));
                Value::Object(m)
            })
            .collect();
        normalized.insert("classes".into(), Value::Array(classes));
    }
    AqmSpec {
        cfg,
        ecn_explicit,
        normalized,
    }
}

fn parse_aqm(path: &str, v: Option<&Value>) -> Result<AqmSpec> {
    let empty = Value::Object(Map::new());
    let v = v.unwrap_or(&empty);
    let Value::Object(map) = v else {
        return Err(err(
            path,
            Some(v),
            "must be a table, e.g. {type = \"codel\"}",
        ));
    };
    let name = match map.get("type") {
        None => "droptail",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(err(&join(path, "type"), Some(other), "must be an AQM name")),
    };
    if aqm::qdisc::CLASS_BASED
        .iter()
        .any(|s| name.trim().eq_ignore_ascii_case(s))
    {
        return parse_classes(path, v, name);
    }
    if name.trim().eq_ignore_ascii_case("dualpi2") {
        return parse_dualpi2(path, map);
    }
    // A table-valued parameter (PAQMAN's `policy = "FILE"`) is read here, before the raw
    // values are borrowed.
    let is_file = |k: &str| {
        AqmConfig::describe(name)
            .map(|i| i.iter().any(|p| p.name == k && p.unit == "file"))
            .unwrap_or(false)
    };
    let mut tables: Vec<(&str, aqm::paqman::PaqmanPolicy)> = Vec::new();
    let hashed = aqm::qdisc::HASHED
        .iter()
        .any(|h| name.trim().eq_ignore_ascii_case(h));
    for (k, val) in map {
        if is_file(k) {
            let Value::String(file) = val else {
                return Err(err(
                    &join(path, k),
                    Some(val),
                    "must be a file name (a policy from `aqmlab paqman solve`)",
                ));
            };
            let p = read_policy(file).map_err(|reason| err(&join(path, k), Some(val), reason))?;
            tables.push((k.as_str(), p));
        }
    }
    let mut raw: Vec<(&str, RawParam<'_>)> = Vec::new();
    for (k, p) in &tables {
        raw.push((k, RawParam::Policy(p)));
    }
    for (k, val) in map {
        if k == "type" || is_file(k) {
            continue;
        }
        let r = match val {
            Value::Number(n) => RawParam::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::Bool(b) => RawParam::Bool(*b),
            Value::String(s) => RawParam::Text(s),
            other => {
                return Err(err(
                    &join(path, k),
                    Some(other),
                    "must be a number, boolean or string",
                ))
            }
        };
        raw.push((k.as_str(), r));
    }
    if hashed {
        // A hashed flow-queueing qdisc: flat parameters, like an AQM's.
        let cfg = QdiscConfig::from_raw(name, &raw, false).map_err(|e| aqm_error(path, map, e))?;
        return Ok(AqmSpec {
            normalized: normalize_flat(&cfg),
            cfg,
            ecn_explicit: vec![map.contains_key("ecn")],
        });
    }
    let cfg = AqmConfig::from_raw(name, &raw, false).map_err(|e| aqm_error(path, map, e))?;
    let mut normalized = normalize_aqm(&cfg);
    for (k, _) in &tables {
        // A table-valued parameter is shown as the file it was read from.
        normalized.insert((*k).into(), map[*k].clone());
    }
    Ok(AqmSpec {
        cfg: QdiscConfig::Fifo(cfg),
        ecn_explicit: vec![map.contains_key("ecn")],
        normalized,
    })
}

/// Reads and checks a PAQMAN policy file (docs/paqman_policy_format.md); the error is the
/// reason only (the caller names the key and value).
pub fn read_policy(file: &str) -> std::result::Result<aqm::paqman::PaqmanPolicy, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read the policy: {e}"))?;
    let p: aqm::paqman::PaqmanPolicy =
        serde_json::from_str(&text).map_err(|e| format!("not a PAQMAN policy file: {e}"))?;
    p.check().map_err(|e| format!("bad policy: {e}"))?;
    Ok(p)
}

/// A flat qdisc's (hashed, DualPI2) normalised table: its type and every parameter in
/// boundary units.
/// A parameter's value in the normalized scenario: a choice by its name (`control_law =
/// "linux"`), anything else as its number.
fn param_json(info: &aqm::ParamInfo, x: f64) -> Value {
    match info.choice_name(x) {
        Some(name) => name.into(),
        None => x.into(),
    }
}

fn normalize_flat(cfg: &QdiscConfig) -> Map<String, Value> {
    let mut normalized = Map::new();
    normalized.insert("type".into(), cfg.name().into());
    for info in cfg.param_info() {
        if let Some(x) = cfg.get_param(info.name) {
            normalized.insert(info.name.into(), param_json(&info, x));
        }
    }
    normalized
}

fn aqm_error(path: &str, map: &Map<String, Value>, e: aqm::ConfigError) -> ScenarioError {
    match e.key() {
        Some(k) => {
            let key = join(path, k);
            let reason = match &e {
                aqm::ConfigError::UnknownParam { .. } => e.to_string(),
                aqm::ConfigError::InvalidParam { reason, .. }
                | aqm::ConfigError::InvalidText { reason, .. } => reason.clone(),
                aqm::ConfigError::UnknownAqm { .. } => e.to_string(),
            };
            err(&key, map.get(k), reason)
        }
        None => err(&join(path, "type"), map.get("type"), e.to_string()),
    }
}

/// The topology section, before flows are attached.
enum Topo {
    Dumbbell(DumbbellConfig, u32),
    ParkingLot(ParkingLotConfig, u32),
    Explicit(ExplicitTopology, Vec<String>),
}

/// A validated scenario: the simulator config plus what the front ends need.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The internal config `netsim::Simulation::new` builds.
    pub config: SimConfig,
    /// Core link names and the names results use (`R1->R2` -> `bottleneck`).
    pub link_aliases: Vec<(String, String)>,
    /// The scenario with defaults filled in and quantities in SI base units.
    pub normalized: Value,
    /// Estimated memory of the run, bytes: the time series, the flows and the cwnd traces as
    /// the size limit ([`MAX_MEMORY_BYTES`]) counts them.
    pub memory_bytes: f64,
}

impl Scenario {
    /// Parses and validates a scenario given as JSON text (Python passes `json.dumps` of the
    /// TOML document).
    pub fn from_json(text: &str) -> Result<Scenario> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| err("", None, format!("not a JSON document: {e}")))?;
        Scenario::from_value(&v)
    }

    /// Parses and validates a scenario document.
    pub fn from_value(doc: &Value) -> Result<Scenario> {
        let mut t = Table::new("", doc)?;
        let name = t.string("name")?.unwrap_or_else(|| "scenario".into());
        t.put("name", name.clone());
        let seed = t.int_or("seed", 0, u64::MAX, 1)?;
        let duration = t.time_or("duration", true, 60.0)?;
        let warmup = t.time_or("warmup", false, 0.0)?;
        if warmup >= duration {
            return Err(err(
                "warmup",
                doc.get("warmup"),
                format!("must be shorter than duration = {duration} s"),
            ));
        }
        let sample_interval = t.time_or("sample_interval", true, 0.01)?;
        let routing = match t.choice("routing", &["hops", "delay"], "hops")? {
            "delay" => crate::config::Metric::Delay,
            _ => crate::config::Metric::Hops,
        };
        let cwnd_interval = t.time("cwnd_interval", true)?;

        // Flow groups first: the AQM's ECN default depends on them.
        let groups = t.array("flows")?;
        if groups.is_empty() {
            return Err(err(
                "flows",
                doc.get("flows"),
                "give at least one flow group ([[flows]])",
            ));
        }
        let kinds = ["dumbbell", "parking_lot", "links"]
            .iter()
            .filter(|k| t.has(k))
            .count();
        if kinds != 1 {
            return Err(err(
                "",
                None,
                "give exactly one topology: [dumbbell], [parking_lot] or [[nodes]] + [[links]]",
            ));
        }
        let any_ecn = groups.iter().any(|g| {
            g.get("ecn") == Some(&Value::Bool(true))
                || g.get("cc").and_then(|c| c.as_str()).is_some_and(|c| {
                    matches!(c.trim().to_ascii_lowercase().as_str(), "dctcp" | "prague")
                })
        });
        let aqm_value = t.raw("aqm");
        let mut aqm = parse_aqm("aqm", aqm_value)?;
        apply_ecn_default(&mut aqm, any_ecn);
        t.put("aqm", Value::Object(aqm.normalized.clone()));
        // `[sqm] period = "5s"`: SQM's online controller (run by `aqmlab run`, Python) every
        // period over the links running the sqm qdisc; checked here, not used by the core.
        let sqm_table = match t.raw("sqm") {
            Some(v) => {
                let mut st = Table::new("sqm", v)?;
                st.time_or("period", true, 5.0)?;
                st.choice("sigma_rule", &["reno", "delay", "theorem3"], "reno")?;
                st.choice("state", &["ogd", "measured", "num"], "ogd")?;
                Some(st.finish()?)
            }
            None => None,
        };

        let mut link_aliases = Vec::new();
        let topo = if let Some(v) = t.raw("dumbbell") {
            let (cfg, pkt, norm) = dumbbell(v, aqm.cfg.clone(), duration)?;
            t.put("dumbbell", norm);
            link_aliases.push(("R1->R2".to_string(), "bottleneck".to_string()));
            Topo::Dumbbell(cfg, pkt)
        } else if let Some(v) = t.raw("parking_lot") {
            let (cfg, pkt, norm) = parking_lot(v, aqm.cfg.clone())?;
            for i in 0..cfg.hops {
                link_aliases.push((format!("R{i}->R{}", i + 1), format!("bottleneck{i}")));
            }
            t.put("parking_lot", norm);
            Topo::ParkingLot(cfg, pkt)
        } else {
            t.raw("links");
            let (topo, monitor, norm) = explicit(doc, any_ecn)?;
            t.put("nodes", norm.0);
            t.put("links", norm.1);
            t.put("routes", norm.2);
            Topo::Explicit(topo, monitor)
        };
        t.raw("nodes");
        t.raw("routes");
        // `[sqm] period = "5s"`: SQM's online controller (run by `aqmlab run`, Python) every
        // period over the links running the sqm qdisc; checked here, not used by the core.
        if let Some(st) = sqm_table {
            let runs_sqm = match &topo {
                Topo::Explicit(e, _) => {
                    e.links.iter().any(|l| matches!(l.aqm, QdiscConfig::Sqm(_)))
                }
                _ => matches!(aqm.cfg, QdiscConfig::Sqm(_)),
            };
            if !runs_sqm {
                return Err(err(
                    "sqm",
                    None,
                    format!(
                        "the online controller needs a link running the sqm qdisc \
                         ([aqm] type = \"sqm\", or a link's aqm in an explicit topology; aqm is {})",
                        aqm.cfg.name()
                    ),
                ));
            }
            t.put("sqm", Value::Object(st));
        }
        if !matches!(topo, Topo::Explicit(..)) {
            for k in ["nodes", "routes"] {
                if t.has(k) {
                    return Err(err(
                        k,
                        doc.get(k),
                        "only for explicit topologies ([[links]])",
                    ));
                }
            }
        }

        let pkt_size = match &topo {
            Topo::Dumbbell(_, p) | Topo::ParkingLot(_, p) => *p,
            Topo::Explicit(..) => crate::config::DEFAULT_PACKET_SIZE,
        };
        let mut flows = Vec::with_capacity(groups.len());
        let mut norm_flows = Vec::with_capacity(groups.len());
        let mut cwnd_trace = Vec::new();
        let mut next_id = 0u32;
        let mut total_flows = 0f64;
        for (i, g) in groups.iter().enumerate() {
            let (group, trace, norm) = flow_group(i, g, &topo, pkt_size, duration)?;
            let n = group.static_count();
            if trace {
                cwnd_trace.extend(next_id..next_id.saturating_add(n));
            }
            next_id = next_id.saturating_add(if matches!(group, FlowGroup::ShortTcp(_)) {
                0
            } else {
                n
            });
            total_flows += n as f64;
            flows.push(group);
            norm_flows.push(norm);
        }
        t.put("flows", Value::Array(norm_flows));
        let (trace, trace_batch) = match t.raw("trace") {
            None => (Vec::new(), None),
            Some(v) => {
                let (links, batch, norm) = parse_trace(v, &topo, &link_aliases)?;
                t.put("trace", norm);
                (links, Some(batch))
            }
        };
        let normalized = Value::Object(t.finish()?);

        let (topology, monitor) = match topo {
            Topo::Dumbbell(d, _) => (TopologyConfig::Dumbbell(d), None),
            Topo::ParkingLot(p, _) => (TopologyConfig::ParkingLot(p), None),
            Topo::Explicit(e, m) => (TopologyConfig::Explicit(e), Some(m)),
        };
        let monitored = monitor.as_ref().map_or(link_aliases.len(), Vec::len) as f64;
        let biggest = flows
            .iter()
            .enumerate()
            .max_by_key(|(_, g)| g.static_count())
            .map(|(i, _)| i);
        let classes = match &topology {
            TopologyConfig::Explicit(e) => e
                .links
                .iter()
                .map(|l| l.aqm.class_names().len())
                .max()
                .unwrap_or(0),
            other => other.aqm().map_or(0, |a| a.class_names().len()),
        } as f64;
        let cost = Cost {
            duration,
            sample_interval,
            cwnd_interval,
            monitored,
            classes,
            flows: total_flows,
            traced: cwnd_trace.len(),
        };
        cost.check(doc, biggest)?;
        let memory_bytes = cost.bytes();
        let mut config = SimConfig {
            scenario: name,
            seed,
            duration,
            warmup,
            sample_interval,
            routing,
            topology,
            flows,
            monitor,
            cwnd_trace,
            cwnd_interval,
            trace,
            trace_batch,
        };
        // The internal checks (the same rules, for configs built in Rust) cannot fail on what
        // was read above except for cross-field rules kept there only (extra_delay lengths).
        config.validate_scalars().map_err(|e| internal_error(&e))?;
        config.flows.shrink_to_fit();
        Ok(Scenario {
            config,
            link_aliases,
            normalized,
            memory_bytes,
        })
    }
}

/// `[trace] links = [...], batch = N`: the links whose per-packet queue events are traced
/// (names as results use them: `bottleneck`, `bottleneck0`, ... for the builders, which trace
/// only their bottlenecks; an explicit topology's own link names) and the rows per batch.
/// Returns the core link names, the batch and the normalised table.
fn parse_trace(
    v: &Value,
    topo: &Topo,
    aliases: &[(String, String)],
) -> Result<(Vec<String>, usize, Value)> {
    let mut t = Table::new("trace", v)?;
    // (name as written, core name)
    let known: Vec<(String, String)> = match topo {
        Topo::Explicit(e, _) => e
            .links
            .iter()
            .flat_map(|l| {
                let own = l
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{}->{}", l.from, l.to));
                let rev = l.duplex.then(|| format!("{}->{}", l.to, l.from));
                std::iter::once(own).chain(rev)
            })
            .map(|n| (n.clone(), n))
            .collect(),
        _ => aliases
            .iter()
            .flat_map(|(core, alias)| [(alias.clone(), core.clone()), (core.clone(), core.clone())])
            .collect(),
    };
    let listed: Vec<&str> = match topo {
        Topo::Explicit(..) => known.iter().map(|(n, _)| n.as_str()).collect(),
        _ => aliases.iter().map(|(_, a)| a.as_str()).collect(),
    };
    let items = t.array("links")?;
    if items.is_empty() {
        return Err(err(
            "trace.links",
            v.get("links"),
            format!("name at least one link ({})", listed.join(", ")),
        ));
    }
    let mut links = Vec::with_capacity(items.len());
    let mut norm = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = format!("trace.links[{i}]");
        let Some(name) = item.as_str() else {
            return Err(err(&key, Some(item), "must be a link name (a string)"));
        };
        let Some((_, core)) = known.iter().find(|(n, _)| n == name) else {
            return Err(err(
                &key,
                Some(item),
                format!("unknown link (links: {})", listed.join(", ")),
            ));
        };
        if links.contains(core) {
            return Err(err(&key, Some(item), "link listed twice"));
        }
        links.push(core.clone());
        norm.push(Value::String(name.to_string()));
    }
    t.put("links", Value::Array(norm));
    let batch = t.int_or(
        "batch",
        1,
        1 << 24,
        crate::config::DEFAULT_TRACE_BATCH as u64,
    )? as usize;
    Ok((links, batch, Value::Object(t.finish()?)))
}

fn internal_error(e: &crate::config::ConfigError) -> ScenarioError {
    match e {
        crate::config::ConfigError::Invalid { key, value, reason } => ScenarioError {
            key: key.clone(),
            value: Some(value.clone()),
            reason: reason.clone(),
        },
        other => err("", None, other.to_string()),
    }
}

/// The AQM's `ecn` follows the flows unless the scenario set it: ECN-capable senders expect
/// marks, as with Linux's fq_codel, which marks by default.
fn apply_ecn_default(aqm: &mut AqmSpec, any_ecn: bool) {
    if !any_ecn {
        return;
    }
    let on = |cfg: &mut AqmConfig, norm: &mut Map<String, Value>| {
        if cfg.get_param("ecn").is_some() {
            cfg.set_param("ecn", 1.0)
                .expect("ecn = 1 is valid for every AQM that has it");
            norm.insert("ecn".into(), 1.0.into());
        }
    };
    match &mut aqm.cfg {
        QdiscConfig::Fifo(a) => {
            if !aqm.ecn_explicit[0] {
                on(a, &mut aqm.normalized);
            }
        }
        // DualPI2 always marks ECN-capable packets (it has no `ecn` switch).
        QdiscConfig::DualPi2(_) => {}
        QdiscConfig::Drr(d) | QdiscConfig::Wfq(d) => {
            let Some(Value::Array(norm)) = aqm.normalized.get_mut("classes") else {
                return;
            };
            for (i, c) in d.classes.iter_mut().enumerate() {
                if aqm.ecn_explicit[i] {
                    continue;
                }
                if let Some(Value::Object(n)) = norm[i].get_mut("aqm") {
                    on(&mut c.aqm, n);
                }
            }
        }
        cfg => {
            if cfg.is_hashed() && !aqm.ecn_explicit[0] && cfg.get_param("ecn").is_some() {
                cfg.set_param("ecn", 1.0)
                    .expect("ecn = 1 is valid for every qdisc that has it");
                aqm.normalized.insert("ecn".into(), 1.0.into());
            }
        }
    }
}

/// What a run will hold in memory, estimated before it is built.
struct Cost {
    duration: f64,
    sample_interval: f64,
    cwnd_interval: Option<f64>,
    monitored: f64,
    /// Classes per monitored link (the most any link's qdisc has).
    classes: f64,
    flows: f64,
    traced: usize,
}

impl Cost {
    /// Time-series rows (samples x monitored links).
    fn rows(&self) -> f64 {
        (self.duration / self.sample_interval).ceil() * self.monitored.max(1.0)
    }

    /// Estimated memory of the time series, bytes.
    fn timeseries_bytes(&self) -> f64 {
        self.rows() * (BYTES_PER_SAMPLE + self.classes * BYTES_PER_CLASS_SAMPLE)
    }

    /// Estimated memory of the flows, bytes.
    fn flow_bytes(&self) -> f64 {
        self.flows * BYTES_PER_FLOW
    }

    /// Estimated memory of the congestion-window traces, bytes.
    fn cwnd_bytes(&self) -> f64 {
        let interval = self.cwnd_interval.unwrap_or(self.sample_interval);
        (self.duration / interval).ceil() * self.traced as f64 * 40.0
    }

    /// Estimated memory of the whole run, bytes (what [`Scenario::memory_bytes`] reports).
    fn bytes(&self) -> f64 {
        self.timeseries_bytes() + self.flow_bytes() + self.cwnd_bytes()
    }

    /// Refuses runs whose memory would exceed [`MAX_MEMORY_BYTES`], in microseconds, naming
    /// the key to change (`biggest`: the flow group with the most flows).
    fn check(&self, doc: &Value, biggest: Option<usize>) -> Result<()> {
        let gib = |b: f64| b / (1024.0 * 1024.0 * 1024.0);
        let limit = gib(MAX_MEMORY_BYTES);
        let rows = self.rows();
        let ts = self.timeseries_bytes();
        if ts > MAX_MEMORY_BYTES {
            return Err(err(
                "sample_interval",
                doc.get("sample_interval"),
                format!(
                    "{rows:.3e} time-series rows over duration = {} s would need about {:.0} GiB (limit {limit:.0} GiB); use a longer interval",
                    self.duration,
                    gib(ts)
                ),
            ));
        }
        let fl = self.flow_bytes();
        if fl > MAX_MEMORY_BYTES {
            let i = biggest.unwrap_or(0);
            let key = format!("flows[{i}].count");
            return Err(err(
                &key,
                doc.pointer(&format!("/flows/{i}/count")),
                format!(
                    "{:.0} flows in all would need about {:.0} GiB (limit {limit:.0} GiB, about {} flows)",
                    self.flows,
                    gib(fl),
                    (MAX_MEMORY_BYTES / BYTES_PER_FLOW) as u64
                ),
            ));
        }
        let cw = self.cwnd_bytes();
        if cw > MAX_MEMORY_BYTES {
            return Err(err(
                "cwnd_interval",
                doc.get("cwnd_interval"),
                format!(
                    "the cwnd traces would need about {:.0} GiB (limit {limit:.0} GiB)",
                    gib(cw)
                ),
            ));
        }
        Ok(())
    }
}

fn buffer_limit(t: &mut Table<'_>, default: u64) -> Result<(Option<u32>, Option<u64>)> {
    let n = t.int_or("buffer", 1, u32::MAX as u64, default)?;
    let bytes = t.boolean("buffer_bytes", false)?;
    Ok(if bytes {
        (None, Some(n))
    } else {
        (Some(n as u32), None)
    })
}

fn pkt_size(t: &mut Table<'_>, k: &'static str) -> Result<Option<u32>> {
    Ok(t.int(k, 41, 65535)?.map(|x| x as u32))
}

/// The keys a dumbbell and a parking lot share (their bottlenecks and access links).
struct Builder {
    rate: f64,
    buffer_pkts: Option<u32>,
    buffer_bytes: Option<u64>,
    access_rate: Option<f64>,
    side_buffer_pkts: u32,
    pkt_size: u32,
    loss: f64,
}

fn builder_keys(t: &mut Table<'_>) -> Result<Builder> {
    let rate = t.rate("rate")?;
    let rate = t.required("rate", rate, "the bottleneck rate, e.g. \"10Mbps\"")?;
    let (buffer_pkts, buffer_bytes) = buffer_limit(t, 100)?;
    let access_rate = t.rate("access_rate")?;
    let side = crate::config::DEFAULT_SIDE_BUFFER as u64;
    let side_buffer_pkts = t.int_or("side_buffer", 1, u32::MAX as u64, side)? as u32;
    let pkt_size = pkt_size(t, "pkt_size")?.unwrap_or(crate::config::DEFAULT_PACKET_SIZE);
    t.put("pkt_size", pkt_size);
    let loss = t.probability("loss")?;
    Ok(Builder {
        rate,
        buffer_pkts,
        buffer_bytes,
        access_rate,
        side_buffer_pkts,
        pkt_size,
        loss,
    })
}

/// `[dumbbell] rate_changes = [{at = "20s", rate = "5Mbps"}, ...]`: times strictly
/// increasing in (0, duration), rates as `rate`.
fn rate_changes(t: &mut Table<'_>, duration: f64) -> Result<Vec<RateChange>> {
    let list = t.array("rate_changes")?;
    let mut out = Vec::with_capacity(list.len());
    let mut norm = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let mut c = Table::new(format!("{}[{i}]", t.key("rate_changes")), v)?;
        let at = c.time("at", true)?;
        let at = c.required("at", at, "the time of the change, e.g. \"20s\"")?;
        if at >= duration {
            return Err(err(
                &c.key("at"),
                v.get("at"),
                format!("must be before the end, duration = {duration} s"),
            ));
        }
        if let Some(prev) = out.last().map(|p: &RateChange| p.at) {
            if at <= prev {
                return Err(err(
                    &c.key("at"),
                    v.get("at"),
                    format!("must be after the previous change at {prev} s"),
                ));
            }
        }
        let rate = c.rate("rate")?;
        let rate = c.required("rate", rate, "the new rate, e.g. \"5Mbps\"")?;
        out.push(RateChange { at, rate });
        norm.push(Value::Object(c.finish()?));
    }
    if t.has("rate_changes") {
        t.put("rate_changes", Value::Array(norm));
    }
    Ok(out)
}

fn dumbbell(v: &Value, aqm: QdiscConfig, duration: f64) -> Result<(DumbbellConfig, u32, Value)> {
    let mut t = Table::new("dumbbell", v)?;
    let rtt = t.time_or("rtt", true, 0.1)?;
    // Written into the normalized scenario only when given (the default leaves it as before).
    let access = match t.raw("access") {
        None => Access::Link,
        Some(_) => match t.choice("access", &["link", "none"], "link")? {
            "none" => Access::None,
            _ => Access::Link,
        },
    };
    let b = builder_keys(&mut t)?;
    let rate_changes = rate_changes(&mut t, duration)?;
    if access == Access::None && b.access_rate.is_some() {
        return Err(err(
            &t.key("access_rate"),
            t.raw("access_rate"),
            "no access links with access = \"none\" (remove access_rate)",
        ));
    }
    let cfg = DumbbellConfig {
        bottleneck_rate: b.rate,
        rtt,
        aqm,
        buffer_pkts: b.buffer_pkts,
        buffer_bytes: b.buffer_bytes,
        access_rate: b.access_rate,
        side_buffer_pkts: b.side_buffer_pkts,
        loss: b.loss,
        rate_changes,
        access,
    };
    Ok((cfg, b.pkt_size, Value::Object(t.finish()?)))
}

fn parking_lot(v: &Value, aqm: QdiscConfig) -> Result<(ParkingLotConfig, u32, Value)> {
    let mut t = Table::new("parking_lot", v)?;
    let hops = t.int_or("hops", 1, 10_000, 2)? as u32;
    let hop_delay = t.time_or("link_delay", false, 0.01)?;
    let access_delay = t.time_or("access_delay", false, 0.005)?;
    let b = builder_keys(&mut t)?;
    let cfg = ParkingLotConfig {
        hops,
        bottleneck_rate: b.rate,
        hop_delay,
        access_delay,
        aqm,
        buffer_pkts: b.buffer_pkts,
        buffer_bytes: b.buffer_bytes,
        access_rate: b.access_rate,
        side_buffer_pkts: b.side_buffer_pkts,
        loss: b.loss,
    };
    Ok((cfg, b.pkt_size, Value::Object(t.finish()?)))
}

type ExplicitNorm = (Value, Value, Value);

fn explicit(doc: &Value, any_ecn: bool) -> Result<(ExplicitTopology, Vec<String>, ExplicitNorm)> {
    let empty = Value::Array(Vec::new());
    let as_array = |k: &str| -> Result<&Vec<Value>> {
        match doc.get(k).unwrap_or(&empty) {
            Value::Array(a) => Ok(a),
            other => Err(err(k, Some(other), "must be an array of tables")),
        }
    };
    let mut nodes = Vec::new();
    let mut norm_nodes = Vec::new();
    let mut seen = HashSet::new();
    for (i, n) in as_array("nodes")?.iter().enumerate() {
        let mut t = Table::new(format!("nodes[{i}]"), n)?;
        let name = t.string("name")?;
        let name = t.required("name", name, "a node name")?;
        if !seen.insert(name.clone()) {
            return Err(err(
                &format!("nodes[{i}].name"),
                n.get("name"),
                "duplicate node name",
            ));
        }
        nodes.push(name);
        norm_nodes.push(Value::Object(t.finish()?));
    }
    let node_ok = |key: &str, v: Option<&Value>, name: &str| -> Result<()> {
        if seen.contains(name) {
            Ok(())
        } else {
            Err(err(key, v, "no such node"))
        }
    };
    let mut links = Vec::new();
    let mut norm_links = Vec::new();
    let mut monitor = Vec::new();
    let mut link_names = BTreeSet::new();
    for (i, l) in as_array("links")?.iter().enumerate() {
        let path = format!("links[{i}]");
        let mut t = Table::new(path.clone(), l)?;
        let src = t.string("src")?;
        let src = t.required("src", src, "a node name")?;
        let dst = t.string("dst")?;
        let dst = t.required("dst", dst, "a node name")?;
        node_ok(&format!("{path}.src"), l.get("src"), &src)?;
        node_ok(&format!("{path}.dst"), l.get("dst"), &dst)?;
        if src == dst {
            return Err(err(
                &format!("{path}.dst"),
                l.get("dst"),
                "a link must join two different nodes",
            ));
        }
        let rate = t.rate("rate")?;
        let rate = t.required("rate", rate, "the link rate, e.g. \"10Mbps\"")?;
        let delay = t.time_or("delay", false, 0.0)?;
        let (limit_pkts, limit_bytes) =
            buffer_limit(&mut t, crate::config::DEFAULT_LINK_BUFFER as u64)?;
        let loss = t.probability("loss")?;
        let aqm_v = t.raw("aqm");
        let mut aqm = parse_aqm(&format!("{path}.aqm"), aqm_v)?;
        apply_ecn_default(&mut aqm, any_ecn);
        t.put("aqm", Value::Object(aqm.normalized.clone()));
        let name = t.string("name")?;
        let duplex = t.boolean("duplex", true)?;
        let mon = t.boolean("monitor", true)?;
        let display = name.clone().unwrap_or_else(|| format!("{src}->{dst}"));
        let mut names = vec![display.clone()];
        if duplex {
            names.push(format!("{dst}->{src}"));
        }
        for n in &names {
            if !link_names.insert(n.clone()) {
                return Err(err(
                    &format!("{path}.name"),
                    None,
                    format!("duplicate link name '{n}'"),
                ));
            }
        }
        if mon {
            // a duplex link is two links, each with its own queue: both are monitored
            monitor.extend(names);
        }
        links.push(LinkConfig {
            name,
            from: src,
            to: dst,
            rate,
            delay,
            loss,
            aqm: aqm.cfg,
            limit_pkts,
            limit_bytes,
            duplex,
        });
        norm_links.push(Value::Object(t.finish()?));
    }
    let mut routes = Vec::new();
    let mut norm_routes = Vec::new();
    for (i, r) in as_array("routes")?.iter().enumerate() {
        let path = format!("routes[{i}]");
        let mut t = Table::new(path.clone(), r)?;
        let at = t.string("at")?;
        let at = t.required("at", at, "the node where the entry is installed")?;
        let dst = t.string("dst")?;
        let dst = t.required("dst", dst, "the destination node")?;
        let link = t.string("link")?;
        let link = t.required("link", link, "the name of a link leaving `at`")?;
        node_ok(&format!("{path}.at"), r.get("at"), &at)?;
        node_ok(&format!("{path}.dst"), r.get("dst"), &dst)?;
        if !link_names.contains(&link) {
            return Err(err(&format!("{path}.link"), r.get("link"), "no such link"));
        }
        routes.push(RouteConfig { at, dst, link });
        norm_routes.push(Value::Object(t.finish()?));
    }
    let topo = ExplicitTopology {
        nodes,
        links,
        routes,
    };
    Ok((
        topo,
        monitor,
        (
            Value::Array(norm_nodes),
            Value::Array(norm_links),
            Value::Array(norm_routes),
        ),
    ))
}

/// Every key some kind of flow group takes.
const FLOW_KEYS: &[&str] = &[
    "count",
    "cc",
    "ecn",
    "delack",
    "sack",
    "prr",
    "init_cwnd",
    "min_rto",
    "start_jitter",
    "size",
    "rwnd",
    "cwnd_trace",
    "arrival_rate",
    "mean_size",
    "pareto_shape",
    "rate",
    "on_time",
    "off_time",
];

fn flow_group(
    i: usize,
    v: &Value,
    topo: &Topo,
    default_pkt: u32,
    duration: f64,
) -> Result<(FlowGroup, bool, Value)> {
    let path = format!("flows[{i}]");
    let mut t = Table::new(path.clone(), v)?;
    let kind = t.choice("kind", &["tcp", "tcp_short", "udp_cbr", "udp_onoff"], "tcp")?;
    let name = t.string("name")?.or_else(|| Some(path.clone()));
    let start = t.time("start", false)?;
    let stop = t.time("stop", false)?;
    if let Some(s) = stop {
        let s0 = start.unwrap_or(0.0);
        if s <= s0 {
            return Err(err(
                &t.key("stop"),
                v.get("stop"),
                format!("must be after start = {s0} s"),
            ));
        }
    }
    if start.is_some_and(|s| s >= duration) {
        return Err(err(
            &t.key("start"),
            v.get("start"),
            format!("must be before the end, duration = {duration} s"),
        ));
    }

    // Attachment.
    let (src, dst, fpath, extra_delay) = attachment(&mut t, v, topo)?;
    let class = t.string("class")?;
    if let Some(c) = &class {
        // Builders: the [aqm] of the bottleneck(s) must have the class. Explicit topologies
        // are checked along each flow's path when the simulation is built.
        let aqm = match topo {
            Topo::Dumbbell(d, _) => Some(&d.aqm),
            Topo::ParkingLot(p, _) => Some(&p.aqm),
            Topo::Explicit(..) => None,
        };
        if let Some(aqm) = aqm {
            let names = aqm.class_names();
            if names.is_empty() {
                return Err(err(
                    &t.key("class"),
                    v.get("class"),
                    format!(
                        "the [aqm] ({}) has no classes; use a class-based AQM such as type = \"drr\"",
                        aqm.name()
                    ),
                ));
            }
            if !names.contains(&c.as_str()) {
                return Err(err(
                    &t.key("class"),
                    v.get("class"),
                    format!("no such class in [aqm] (classes: {})", names.join(", ")),
                ));
            }
        }
    }
    let packet_size = pkt_size(&mut t, "packet_size")?.unwrap_or(default_pkt);
    t.put("packet_size", packet_size);

    type TcpOpts = (CcKind, bool, bool, bool, bool, u32, f64);
    let tcp_opts = |t: &mut Table<'_>| -> Result<TcpOpts> {
        let ccs: Vec<&str> = CcKind::ALL.iter().map(|k| k.name()).collect();
        let cc = t.choice("cc", &ccs, CcKind::default().name())?;
        let cc = CcKind::from_name(cc).expect("a registered name");
        // DCTCP and Prague need ECN (Linux TCP_CONG_NEEDS_ECN): on unless refused.
        let ecn = t.boolean("ecn", cc.needs_ecn())?;
        if cc.needs_ecn() && !ecn {
            return Err(err(
                &t.key("ecn"),
                v.get("ecn"),
                format!(
                    "cc = \"{}\" needs ECN (remove ecn or set it to true)",
                    cc.name()
                ),
            ));
        }
        let delack = t.boolean("delack", false)?;
        let sack = t.boolean("sack", false)?;
        // Written to the normalized scenario only when given (older scenarios unchanged).
        let prr = t.raw("prr").is_some() && t.boolean("prr", false)?;
        if prr && !sack {
            return Err(err(
                &t.key("prr"),
                v.get("prr"),
                "needs sack = true (PRR paces the SACK recovery)",
            ));
        }
        let init_cwnd = t.int_or("init_cwnd", 1, 10_000, DEFAULT_INIT_CWND as u64)? as u32;
        let min_rto = t.time_or("min_rto", true, DEFAULT_MIN_RTO_S)?;
        Ok((cc, ecn, delack, sack, prr, init_cwnd, min_rto))
    };

    let mut trace = false;
    let group = match kind {
        "tcp" => {
            let count = t.int_or("count", 1, u32::MAX as u64, 1)? as u32;
            let (cc, ecn, delayed_ack, sack, prr, init_cwnd, min_rto) = tcp_opts(&mut t)?;
            let start_jitter = t.time("start_jitter", false)?;
            let size = t.quantity("size", Kind::Size)?;
            if let Some(s) = size {
                if s < 1.0 {
                    return Err(err(&t.key("size"), v.get("size"), "must be >= 1 byte"));
                }
            }
            let rwnd = t.int("rwnd", 1, u32::MAX as u64)?.map(|x| x as u32);
            trace = t.boolean("cwnd_trace", false)?;
            FlowGroup::Tcp(TcpGroup {
                name,
                count,
                cc,
                ecn,
                delayed_ack,
                sack,
                prr,
                packet_size,
                bytes: size.map(|s| s.round() as u64),
                start,
                start_jitter,
                stop,
                init_cwnd,
                min_rto,
                rwnd,
                src,
                dst,
                path: fpath,
                extra_delay,
                class,
            })
        }
        "tcp_short" => {
            let (cc, ecn, delayed_ack, sack, prr, init_cwnd, min_rto) = tcp_opts(&mut t)?;
            let ar = t.number(
                "arrival_rate",
                f64::NAN,
                |x| x > 0.0,
                "must be > 0 (flows per second)",
            )?;
            if ar.is_nan() {
                return Err(err(
                    &t.key("arrival_rate"),
                    None,
                    "required for a tcp_short group (flows per second)",
                ));
            }
            let ms = t.quantity("mean_size", Kind::Size)?;
            let ms = t.required("mean_size", ms, "for a tcp_short group, e.g. \"100kB\"")?;
            if ms <= 0.0 {
                return Err(err(&t.key("mean_size"), v.get("mean_size"), "must be > 0"));
            }
            let shape = t.number(
                "pareto_shape",
                1.2,
                |x| x > 1.0,
                "must be > 1 (finite mean)",
            )?;
            FlowGroup::ShortTcp(ShortTcpGroup {
                name,
                arrival_rate: ar,
                mean_size: ms,
                pareto_shape: shape,
                cc,
                ecn,
                delayed_ack,
                sack,
                prr,
                packet_size,
                start,
                stop,
                init_cwnd,
                min_rto,
                src,
                dst,
                path: fpath,
                extra_delay,
                class,
            })
        }
        _ => {
            let count = t.int_or("count", 1, u32::MAX as u64, 1)? as u32;
            let rate = t.rate("rate")?;
            let rate = t.required("rate", rate, &format!("the sending rate of a {kind} group"))?;
            let start_jitter = t.time("start_jitter", false)?;
            let (on_mean, off_mean) = if kind == "udp_onoff" {
                let on = t.time("on_time", true)?;
                let on = t.required("on_time", on, "mean on period of a udp_onoff group")?;
                let off = t.time("off_time", true)?;
                let off = t.required("off_time", off, "mean off period of a udp_onoff group")?;
                (Some(on), Some(off))
            } else {
                (None, None)
            };
            if packet_size <= 28 {
                return Err(err(
                    &t.key("packet_size"),
                    v.get("packet_size"),
                    "must be > 28 bytes",
                ));
            }
            let g = UdpGroup {
                name,
                count,
                rate,
                packet_size,
                start,
                start_jitter,
                stop,
                on_mean,
                off_mean,
                src,
                dst,
                path: fpath,
                extra_delay,
                class,
            };
            if kind == "udp_cbr" {
                FlowGroup::UdpCbr(g)
            } else {
                FlowGroup::UdpOnoff(g)
            }
        }
    };
    // A key of another kind is named as such rather than as an unknown key.
    for (k, val) in t.map {
        if !t.known.contains(&k.as_str()) && FLOW_KEYS.contains(&k.as_str()) {
            return Err(err(
                &t.key(k),
                Some(val),
                format!("not used by kind = \"{kind}\""),
            ));
        }
    }
    Ok((group, trace, Value::Object(t.finish()?)))
}

type Attach = (Option<String>, Option<String>, Option<[u32; 2]>, Vec<f64>);

fn attachment(t: &mut Table<'_>, v: &Value, topo: &Topo) -> Result<Attach> {
    let src = t.string("src")?;
    let dst = t.string("dst")?;
    let path_v = t.raw("path");
    let ed_v = t.raw("extra_delay");
    let mut extra = Vec::new();
    if let Some(ed) = ed_v {
        let one = |x: &Value, key: String| -> Result<f64> {
            let secs = match x {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => units::parse(Kind::Time, s).ok(),
                _ => None,
            };
            secs.filter(|s| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| err(&key, Some(x), "must be a time >= 0, e.g. \"20ms\""))
        };
        match ed {
            Value::Array(a) => {
                for (j, x) in a.iter().enumerate() {
                    extra.push(one(x, format!("{}[{j}]", t.key("extra_delay")))?);
                }
            }
            x => extra.push(one(x, t.key("extra_delay"))?),
        }
        t.put("extra_delay", extra.clone());
    }
    match topo {
        Topo::Explicit(e, _) => {
            if path_v.is_some() {
                return Err(err(
                    &t.key("path"),
                    path_v,
                    "only for parking_lot topologies",
                ));
            }
            if ed_v.is_some() {
                return Err(err(
                    &t.key("extra_delay"),
                    ed_v,
                    "only for [dumbbell] and [parking_lot] (set link delays instead)",
                ));
            }
            for (k, n) in [("src", &src), ("dst", &dst)] {
                let n = t.required(k, n.as_ref(), "a node name for explicit topologies")?;
                if !e.nodes.contains(n) {
                    return Err(err(&t.key(k), v.get(k), "no such node"));
                }
            }
            if src == dst {
                return Err(err(&t.key("dst"), v.get("dst"), "must differ from src"));
            }
            Ok((src, dst, None, extra))
        }
        Topo::Dumbbell(..) | Topo::ParkingLot(..) => {
            if let (Topo::Dumbbell(d, _), Some(ed)) = (topo, ed_v) {
                if d.access == Access::None {
                    return Err(err(
                        &t.key("extra_delay"),
                        Some(ed),
                        "needs access links (not with dumbbell.access = \"none\")",
                    ));
                }
            }
            for k in ["src", "dst"] {
                if t.has(k) {
                    return Err(err(
                        &t.key(k),
                        v.get(k),
                        "only for explicit topologies ([[links]])",
                    ));
                }
            }
            let path = match (topo, path_v) {
                (_, None) => None,
                (Topo::ParkingLot(p, _), Some(pv)) => {
                    let hops = p.hops;
                    let bad = || {
                        err(
                            &t.key("path"),
                            Some(pv),
                            format!(
                                "\"long\", a hop index in 0..{}, or [entry, exit] routers",
                                hops - 1
                            ),
                        )
                    };
                    Some(match pv {
                        Value::String(s) if s == "long" => [0, hops],
                        Value::Number(n) => {
                            let h = n.as_u64().filter(|h| *h < hops as u64).ok_or_else(bad)? as u32;
                            [h, h + 1]
                        }
                        Value::Array(a) if a.len() == 2 => {
                            let r: Vec<u32> = a
                                .iter()
                                .filter_map(|x| x.as_u64())
                                .filter(|x| *x <= hops as u64)
                                .map(|x| x as u32)
                                .collect();
                            if r.len() != 2 || r[0] >= r[1] {
                                return Err(bad());
                            }
                            [r[0], r[1]]
                        }
                        _ => return Err(bad()),
                    })
                }
                (_, Some(pv)) => {
                    return Err(err(
                        &t.key("path"),
                        Some(pv),
                        "only for parking_lot topologies",
                    ))
                }
            };
            if let Some(p) = path {
                t.put("path", vec![p[0], p[1]]);
            }
            Ok((None, None, path, extra))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> std::result::Result<Scenario, String> {
        Scenario::from_json(s).map_err(|e| e.to_string())
    }

    const BASE: &str = r#""dumbbell": {"rate": "10Mbps"}"#;

    #[test]
    fn defaults_units_and_aliases() {
        let sc = parse(&format!(r#"{{{BASE}, "flows": [{{"count": 3}}]}}"#)).unwrap();
        let c = &sc.config;
        assert_eq!(
            (c.duration, c.warmup, c.sample_interval, c.seed),
            (60.0, 0.0, 0.01, 1)
        );
        let TopologyConfig::Dumbbell(d) = &c.topology else {
            panic!()
        };
        assert_eq!(
            (d.bottleneck_rate, d.rtt, d.buffer_pkts),
            (10e6, 0.1, Some(100))
        );
        assert_eq!(sc.normalized["dumbbell"]["rate"], 10e6);
        assert_eq!(sc.normalized["flows"][0]["cc"], "newreno");
        // prr is written only when given, so older scenarios normalise as before.
        assert!(sc.normalized["flows"][0].get("prr").is_none());
        c.validate_scalars().unwrap();
    }

    #[test]
    fn errors_name_key_and_value() {
        let cases = [
            (
                r#"{"seed": -1, "dumbbell": {"rate": 1e7}, "flows": [{}]}"#,
                "seed = -1: must be a whole number >= 0",
            ),
            (
                r#"{"dumbbell": {"rate": "10Mbpz"}, "flows": [{}]}"#,
                "dumbbell.rate = \"10Mbpz\": unknown rate unit 'Mbpz'",
            ),
            (
                r#"{"dumbbell": {"rat": "10Mbps"}, "flows": [{}]}"#,
                "dumbbell.rat = \"10Mbps\": unknown key (did you mean 'rate'?)",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": [{"count": -3}]}"#,
                "flows[0].count = -3: must be a whole number in [1, 4294967295]",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "aqm": {"type": "codel", "tagret": "5ms"}, "flows": [{}]}"#,
                "aqm.tagret = \"5ms\": unknown parameter 'tagret' for AQM 'codel'",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "aqm": {"type": "codel", "target": "-5ms"}, "flows": [{}]}"#,
                "aqm.target = \"-5ms\":",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": [{"kind": "udp_cbr"}]}"#,
                "flows[0].rate: required",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": [{"rate": "1Mbps"}]}"#,
                "flows[0].rate = \"1Mbps\": not used by kind = \"tcp\"",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "warmup": "70s", "flows": [{}]}"#,
                "warmup = \"70s\": must be shorter than duration",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": []}"#,
                "flows = []: give at least one flow group",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "sample_interval": "1ns", "flows": [{}]}"#,
                "sample_interval = \"1ns\": 6.000e10 time-series rows",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": [{"count": 10000000}]}"#,
                "flows[0].count = 10000000: 10000000 flows in all would need about",
            ),
            (r#"{"flows": [{}]}"#, "scenario: give exactly one topology"),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": [{"prr": true}]}"#,
                "flows[0].prr = true: needs sack = true",
            ),
            (
                r#"{"dumbbell": {"rate": 1e7}, "flows": [{"sack": true, "prr": 1}]}"#,
                "flows[0].prr = 1: must be true or false",
            ),
        ];
        for (doc, want) in cases {
            let got = parse(doc).unwrap_err();
            assert!(got.starts_with(want), "{doc}\n got:  {got}\n want: {want}");
        }
    }

    #[test]
    fn ecn_default_follows_flows_unless_set() {
        let ecn = |aqm: &str, flow_ecn: bool| {
            let doc = format!(r#"{{{BASE}, "aqm": {aqm}, "flows": [{{"ecn": {flow_ecn}}}]}}"#);
            parse(&doc)
                .unwrap()
                .config
                .topology
                .aqm()
                .unwrap()
                .get_param("ecn")
        };
        assert_eq!(ecn(r#"{"type": "codel"}"#, true), Some(1.0));
        assert_eq!(ecn(r#"{"type": "codel"}"#, false), Some(0.0));
        assert_eq!(ecn(r#"{"type": "codel", "ecn": false}"#, true), Some(0.0));
    }

    #[test]
    fn explicit_topology_names_checked() {
        let doc = r#"{"nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"src": "a", "dst": "b", "rate": "1Mbps", "delay": "5ms"}],
            "flows": [{"src": "a", "dst": "c"}]}"#;
        assert_eq!(
            parse(doc).unwrap_err(),
            "flows[0].dst = \"c\": no such node"
        );
        let ok = doc.replace("\"c\"", "\"b\"");
        let sc = parse(&ok).unwrap();
        // a duplex link is monitored in both directions
        assert_eq!(
            sc.config.monitor,
            Some(vec!["a->b".to_string(), "b->a".to_string()])
        );
    }
}
