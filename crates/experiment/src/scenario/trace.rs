//! `[trace]`: the links whose per-packet queue events are recorded.

use super::error::{err, Result};
use super::table::Table;
use super::Topo;
use serde_json::Value;

/// `[trace] links = [...], batch = N`: the links whose per-packet queue events are traced
/// (names as results use them: `bottleneck`, `bottleneck0`, ... for the builders, which trace
/// only their bottlenecks; an explicit topology's own link names) and the rows per batch.
/// Returns the core link names, the batch and the normalised table.
pub(super) fn parse_trace(
    v: &Value,
    topo: &Topo,
    aliases: &[(String, String)],
) -> Result<(Vec<String>, usize, Value)> {
    let mut t = Table::new("trace", v)?;
    let (known, listed) = link_names(topo, aliases);
    let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
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

/// The link names a scenario may use for its links, each as (name as written, core name),
/// and the names to list in an error (the builders' aliases, or an explicit topology's links
/// in both directions). Shared by `[trace]` and `[pcap]`.
pub(super) fn link_names(
    topo: &Topo,
    aliases: &[(String, String)],
) -> (Vec<(String, String)>, Vec<String>) {
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
    let listed = match topo {
        Topo::Explicit(..) => known.iter().map(|(n, _)| n.clone()).collect(),
        _ => aliases.iter().map(|(_, a)| a.clone()).collect(),
    };
    (known, listed)
}
