//! AQM and qdisc tables (`[aqm]`, a class's `aqm`, a link's `aqm`): a single AQM, a
//! class-based scheduler, a hashed qdisc or DualPI2; PAQMAN policy files; and the ECN default
//! (an AQM marks when the flows are ECN-capable and the table does not say otherwise).

use super::error::{err, join, unknown_key, Result, ScenarioError};
use super::table::Table;
use aqm::{AqmConfig, ClassConfig, ClassList, QdiscConfig, RawParam};
use serde_json::{Map, Value};

/// Parsed AQM table: the config, and whether the user set `ecn` explicitly (per leaf AQM:
/// one entry for a single AQM, one per class for a scheduler).
pub(super) struct AqmSpec {
    pub(super) cfg: QdiscConfig,
    pub(super) ecn_explicit: Vec<bool>,
    pub(super) normalized: Map<String, Value>,
}

/// An AQM's normalised table: its type and every parameter in boundary units.
pub(super) fn normalize_aqm(cfg: &AqmConfig) -> Map<String, Value> {
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
pub(super) fn parse_classes(path: &str, v: &Value, sched: &str) -> Result<AqmSpec> {
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
pub(super) fn parse_dualpi2(path: &str, map: &Map<String, Value>) -> Result<AqmSpec> {
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
pub(super) fn set_path(path: &str, cfg: &mut QdiscConfig, k: &str, val: &Value) -> Result<()> {
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
pub(super) fn apply_paths(
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
pub(super) fn classes_spec(cfg: QdiscConfig, ecn_explicit: Vec<bool>) -> AqmSpec {
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

pub(super) fn parse_aqm(path: &str, v: Option<&Value>) -> Result<AqmSpec> {
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
pub(super) fn param_json(info: &aqm::ParamInfo, x: f64) -> Value {
    match info.choice_name(x) {
        Some(name) => name.into(),
        None => x.into(),
    }
}

pub(super) fn normalize_flat(cfg: &QdiscConfig) -> Map<String, Value> {
    let mut normalized = Map::new();
    normalized.insert("type".into(), cfg.name().into());
    for info in cfg.param_info() {
        if let Some(x) = cfg.get_param(info.name) {
            normalized.insert(info.name.into(), param_json(&info, x));
        }
    }
    normalized
}

pub(super) fn aqm_error(
    path: &str,
    map: &Map<String, Value>,
    e: aqm::ConfigError,
) -> ScenarioError {
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

/// The AQM's `ecn` follows the flows unless the scenario set it: ECN-capable senders expect
/// marks, as with Linux's fq_codel, which marks by default.
pub(super) fn apply_ecn_default(aqm: &mut AqmSpec, any_ecn: bool) {
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
