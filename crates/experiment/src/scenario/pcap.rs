//! `[pcap]`: the links the simulator captures to `capture.pcapng` (`netsim::pcap`).

use super::error::{err, Result};
use super::table::Table;
use super::trace::link_names;
use super::Topo;
use crate::config::{PcapConfig, DEFAULT_PCAP_BATCH};
use serde_json::Value;

/// `[pcap] links = [...], hosts = false, ethernet = true, batch = N`: the captured links (names as results
/// use them, as in `[trace]`; both directions of each are captured), whether the hosts are
/// captured too, whether an Ethernet
/// header is synthesised, and the packets buffered per link direction before writing.
/// Returns the configuration and the normalised table.
pub(super) fn parse_pcap(
    v: &Value,
    topo: &Topo,
    aliases: &[(String, String)],
) -> Result<(PcapConfig, Value)> {
    let mut t = Table::new("pcap", v)?;
    let (known, listed) = link_names(topo, aliases);
    let items = t.array("links")?;
    if items.is_empty() {
        return Err(err(
            "pcap.links",
            v.get("links"),
            format!("name at least one link ({})", listed.join(", ")),
        ));
    }
    let mut links: Vec<(String, String)> = Vec::with_capacity(items.len());
    let mut norm = Vec::with_capacity(items.len());
    for item in items {
        let Some(name) = item.as_str() else {
            return Err(err(
                "pcap.links",
                Some(item),
                "must be a link name (a string)",
            ));
        };
        let Some((_, core)) = known.iter().find(|(n, _)| n == name) else {
            return Err(err(
                "pcap.links",
                Some(item),
                format!("no such link (links: {})", listed.join(", ")),
            ));
        };
        if links.iter().any(|(_, c)| c == core) {
            return Err(err("pcap.links", Some(item), "link listed twice"));
        }
        links.push((name.to_string(), core.clone()));
        norm.push(Value::String(name.to_string()));
    }
    t.put("links", Value::Array(norm));
    let ethernet = t.boolean("ethernet", true)?;
    let hosts = t.boolean("hosts", false)?;
    let batch = t.int_or("batch", 1, 1 << 24, DEFAULT_PCAP_BATCH as u64)? as usize;
    Ok((
        PcapConfig {
            links,
            ethernet,
            hosts,
            batch,
        },
        Value::Object(t.finish()?),
    ))
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

    fn sc(pcap: &str) -> Result<Scenario, String> {
        Scenario::from_json(&format!(
            r#"{{"duration": 1.0, "dumbbell": {{"rate": "10Mbps"}}, "flows": [{{"count": 1}}],
                "pcap": {pcap}}}"#
        ))
        .map_err(|e| e.to_string())
    }

    #[test]
    fn links_defaults_and_errors() {
        let s = sc(r#"{"links": ["bottleneck"]}"#).unwrap();
        let p = s.config.pcap.unwrap();
        assert_eq!(p.links, vec![("bottleneck".into(), "R1->R2".into())]);
        assert!(p.ethernet && !p.hosts);
        assert_eq!(p.batch, crate::config::DEFAULT_PCAP_BATCH);
        let e = sc(r#"{"links": ["nope"]}"#).unwrap_err();
        assert_eq!(
            e,
            r#"pcap.links = "nope": no such link (links: bottleneck)"#
        );
        assert!(sc(r#"{"links": []}"#)
            .unwrap_err()
            .starts_with("pcap.links"));
        assert!(sc(r#"{"links": ["bottleneck"], "snap": 1}"#)
            .unwrap_err()
            .starts_with("pcap.snap"));
    }
}
