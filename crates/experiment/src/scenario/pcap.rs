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
