//! Bidirectional traffic on the builders: `[reverse_aqm]`, the queue discipline of the reverse
//! bottleneck(s) (`R2->R1`, a parking lot's `R{i+1}->R{i}`), and their result names.
//!
//! The reverse bottleneck becomes a bottleneck like the forward one (its own AQM, the
//! bottleneck's buffer, monitored as `bottleneck_reverse`, `bottleneck{i}_reverse`) when the
//! scenario gives `[reverse_aqm]` or a flow group has `direction = "reverse"`; otherwise it
//! stays the drop-tail ACK path of a forward-only scenario, unmonitored, so those scenarios
//! run exactly as before. Its AQM:
//!
//! * no `[reverse_aqm]`: the `[aqm]` table (same type, same parameters; RFC 7928 §8 puts an
//!   AQM on both directions);
//! * `[reverse_aqm]` with a `type`: that table alone (unset parameters take that AQM's
//!   defaults);
//! * `[reverse_aqm]` without a `type`: the `[aqm]` table with these keys changed.

use serde_json::{Map, Value};

use super::error::{err, Result};
use super::qdisc::{apply_ecn_default, parse_aqm, AqmSpec};
use super::table::Table;
use aqm::QdiscConfig;

/// True if some raw flow group asks for `direction = "reverse"` (the value is checked with
/// its group).
fn any_reverse(groups: &[Value]) -> bool {
    groups.iter().any(|g| {
        g.get("direction")
            .and_then(Value::as_str)
            .is_some_and(|d| d.trim().eq_ignore_ascii_case("reverse"))
    })
}

/// The reverse bottleneck's qdisc when it is a bottleneck (module docs), its normalized
/// table written into the scenario; `None` for a forward-only scenario without
/// `[reverse_aqm]`.
pub(super) fn reverse_aqm(
    t: &mut Table<'_>,
    doc: &Value,
    groups: &[Value],
    forward: &AqmSpec,
    any_ecn: bool,
) -> Result<Option<QdiscConfig>> {
    let given = t.raw("reverse_aqm");
    if given.is_none() && !any_reverse(groups) {
        return Ok(None);
    }
    let spec = match given {
        None => AqmSpec {
            cfg: forward.cfg.clone(),
            ecn_explicit: forward.ecn_explicit.clone(),
            normalized: forward.normalized.clone(),
        },
        Some(Value::Object(map)) if !map.contains_key("type") => {
            // the [aqm] table as written, with these keys changed
            let mut merged = match doc.get("aqm") {
                Some(Value::Object(f)) => f.clone(),
                _ => Map::new(),
            };
            merged.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
            let mut s = parse_aqm("reverse_aqm", Some(&Value::Object(merged)))?;
            apply_ecn_default(&mut s, any_ecn);
            s
        }
        Some(v) => {
            let mut s = parse_aqm("reverse_aqm", Some(v))?;
            apply_ecn_default(&mut s, any_ecn);
            s
        }
    };
    t.put("reverse_aqm", Value::Object(spec.normalized));
    Ok(Some(spec.cfg))
}

/// The (core name, result name) pairs of the reverse bottlenecks when they are bottlenecks:
/// a dumbbell's (`hops = None`) `R2->R1` is `bottleneck_reverse`, a parking lot's
/// `R{i+1}->R{i}` is `bottleneck{i}_reverse`.
pub(super) fn aliases(
    reverse_aqm: &Option<QdiscConfig>,
    hops: Option<u32>,
) -> Vec<(String, String)> {
    match (reverse_aqm, hops) {
        (None, _) => Vec::new(),
        (Some(_), None) => vec![("R2->R1".into(), "bottleneck_reverse".into())],
        (Some(_), Some(k)) => (0..k)
            .map(|i| {
                (
                    format!("R{}->R{i}", i + 1),
                    format!("bottleneck{i}_reverse"),
                )
            })
            .collect(),
    }
}

/// `[reverse_aqm]` is for the builders: an explicit topology gives each link its own `aqm`.
pub(super) fn refuse_explicit(doc: &Value) -> Result<()> {
    match doc.get("reverse_aqm") {
        None => Ok(()),
        Some(v) => Err(err(
            "reverse_aqm",
            Some(v),
            "only for [dumbbell] and [parking_lot] (an explicit link has its own aqm)",
        )),
    }
}
