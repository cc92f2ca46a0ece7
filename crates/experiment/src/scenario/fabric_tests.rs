//! The fabric tables' keys: defaults, the normalized form, and one bad-input line per key.

use super::Scenario;
use crate::config::{FlowGroup, TopologyConfig};
use crate::fabric::{EcmpMode, FabricShape, Pattern};

fn parse(s: &str) -> std::result::Result<Scenario, String> {
    Scenario::from_json(s).map_err(|e| e.to_string())
}

const FLOW: &str = r#"{"pattern": "permutation", "cc": "dctcp", "size": "1MB"}"#;

#[test]
fn defaults_tiers_and_normalized_round_trip() {
    let sc = parse(&format!(
        r#"{{"fat_tree": {{"rate": "10Gbps", "aqm": {{"core": {{"type": "codel"}}}}}},
            "aqm": {{"type": "red", "min_th": 20, "max_th": 21, "w_q": 1, "max_p": 1}},
            "flows": [{FLOW}, {{"pattern": "incast", "senders": 8, "size": "20kB"}}]}}"#
    ))
    .unwrap();
    let TopologyConfig::Fabric(f) = &sc.config.topology else {
        panic!("not a fabric")
    };
    assert_eq!(f.shape, FabricShape::FatTree { k: 4 });
    assert_eq!(f.ecmp, EcmpMode::Flow);
    assert_eq!(f.delay, 1e-6);
    assert_eq!(f.tiers.len(), 4);
    assert_eq!(f.tiers[0].aqm.name(), "red");
    assert!(f.monitor);
    assert_eq!(f.tiers[3].aqm.name(), "codel");
    // the DCTCP flows turned ECN on in every tier's AQM
    assert_eq!(f.tiers[3].aqm.get_param("ecn"), Some(1.0));
    let FlowGroup::Tcp(g) = &sc.config.flows[0] else {
        panic!()
    };
    assert_eq!((g.count, g.pattern), (16, Some(Pattern::Permutation)));
    let FlowGroup::Tcp(g) = &sc.config.flows[1] else {
        panic!()
    };
    assert_eq!(
        (g.count, g.pattern),
        (8, Some(Pattern::Incast { senders: 8 }))
    );
    // the normalized scenario parses to the same configuration
    let again = Scenario::from_value(&sc.normalized).unwrap();
    assert_eq!(again.config, sc.config);

    // web search at 40 % of 16 x 10 Gb/s: 0.4 x 16e10 / (8 x 1 711 250 B) flows per second
    let sc = parse(
        r#"{"fat_tree": {"rate": "10Gbps"}, "flows": [{"kind": "tcp_short",
            "size_cdf": "websearch", "load": 0.4}]}"#,
    )
    .unwrap();
    let FlowGroup::ShortTcp(g) = &sc.config.flows[0] else {
        panic!()
    };
    assert!((g.arrival_rate - 0.4 * 16e10 / (8.0 * 1_711_250.0)).abs() < 1e-9);
    assert_eq!(g.size_cdf.as_ref().unwrap().name, "websearch");
    let again = Scenario::from_value(&sc.normalized).unwrap();
    assert_eq!(again.config, sc.config);

    // leaf-spine: the uplink rate from the oversubscription, kept as spine_rate
    let sc = parse(&format!(
        r#"{{"leaf_spine": {{"leaves": 2, "spines": 2, "hosts_per_leaf": 8, "rate": "10Gbps",
             "oversubscription": 2}}, "flows": [{FLOW}]}}"#
    ))
    .unwrap();
    let TopologyConfig::Fabric(f) = &sc.config.topology else {
        panic!()
    };
    assert_eq!(f.fabric_rate, 20e9);
    assert_eq!(sc.normalized["leaf_spine"]["spine_rate"], 20e9);
    assert!(sc.normalized["leaf_spine"]
        .get("oversubscription")
        .is_none());
    let again = Scenario::from_value(&sc.normalized).unwrap();
    assert_eq!(again.config, sc.config);
}

#[test]
fn bad_fabric_keys() {
    let ft = |keys: &str, flow: &str| {
        format!(r#"{{"fat_tree": {{"rate": "10Gbps"{keys}}}, "flows": [{flow}]}}"#)
    };
    let ls =
        |keys: &str| format!(r#"{{"leaf_spine": {{"rate": "10Gbps"{keys}}}, "flows": [{FLOW}]}}"#);
    let cases = [
        (ft(r#", "k": 5"#, FLOW), "fat_tree.k = 5: must be even"),
        (ft(r#", "k": 0"#, FLOW), "fat_tree.k = 0: must be a whole number in [2, 254]"),
        (
            r#"{"fat_tree": {}, "flows": [{"pattern": "permutation"}]}"#.to_string(),
            "fat_tree.rate: required",
        ),
        (ft(r#", "delay": "-1us""#, FLOW), "fat_tree.delay = \"-1us\""),
        (ft(r#", "buffer": 0"#, FLOW), "fat_tree.buffer = 0"),
        (ft(r#", "ecmp": "random""#, FLOW), "fat_tree.ecmp = \"random\": must be one of flow, packet"),
        (ft(r#", "aqm": {"spine": {"type": "codel"}}"#, FLOW), "fat_tree.aqm.spine"),
        (ft(r#", "aqm": {"core": {"type": "nope"}}"#, FLOW), "fat_tree.aqm.core"),
        (ft(r#", "kk": 4"#, FLOW), "fat_tree.kk = 4: unknown key"),
        (ft(r#", "host_buffer": 0"#, FLOW), "fat_tree.host_buffer = 0"),
        (ft(r#", "monitor": "all""#, FLOW), "fat_tree.monitor = \"all\": must be one of switches, none"),
        (ls(r#", "leaves": 0"#), "leaf_spine.leaves = 0: must be a whole number in [1, 4096]"),
        (ls(r#", "spines": 0"#), "leaf_spine.spines = 0"),
        (ls(r#", "hosts_per_leaf": 0"#), "leaf_spine.hosts_per_leaf = 0"),
        (
            ls(r#", "leaves": 1, "hosts_per_leaf": 1"#),
            "leaf_spine: 1 hosts: a fabric needs 2",
        ),
        (ls(r#", "oversubscription": 0"#), "leaf_spine.oversubscription = 0: must be > 0"),
        (
            ls(r#", "oversubscription": 2, "spine_rate": "1Gbps""#),
            "leaf_spine.spine_rate = \"1Gbps\": give spine_rate or oversubscription, not both",
        ),
        (ls(r#", "spine_rate": "0bps""#), "leaf_spine.spine_rate = \"0bps\""),
        (ft("", r#"{"cc": "dctcp"}"#), "flows[0].pattern: required on a fabric"),
        (ft("", r#"{"pattern": "ring"}"#), "flows[0].pattern = \"ring\": must be one of"),
        (ft("", r#"{"pattern": "incast"}"#), "flows[0].senders: required"),
        (
            ft("", r#"{"pattern": "incast", "senders": 16}"#),
            "flows[0].senders = 16: must be a whole number in [1, 15]",
        ),
        (
            ft("", r#"{"pattern": "permutation", "senders": 3}"#),
            "flows[0].senders = 3: only with pattern = \"incast\"",
        ),
        (
            ft("", r#"{"pattern": "permutation", "count": 3}"#),
            "flows[0].count = 3: set by the pattern: permutation gives 16 flows here",
        ),
        (
            ft("", r#"{"kind": "udp_cbr", "rate": "1Mbps"}"#),
            "flows[0].kind = \"udp_cbr\": fabrics",
        ),
        (
            ft("", r#"{"pattern": "permutation", "src": "h0"}"#),
            "flows[0].src = \"h0\": not on fabrics",
        ),
        (
            ft("", r#"{"pattern": "permutation", "direction": "reverse"}"#),
            "flows[0].direction = \"reverse\": not on fabrics",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"pattern": "permutation"}]}"#.to_string(),
            "flows[0].pattern = \"permutation\": only for fabrics",
        ),
        (
            r#"{"fat_tree": {"rate": 1e9}, "reverse_aqm": {"type": "codel"}, "flows": [{"pattern": "permutation"}]}"#.to_string(),
            "reverse_aqm = {",
        ),
        (
            ft("", r#"{"kind": "tcp_short", "size_cdf": "websearch"}"#),
            "flows[0].arrival_rate: required",
        ),
        (
            ft("", r#"{"kind": "tcp_short", "size_cdf": "nope.cdf", "load": 0.5}"#),
            "flows[0].size_cdf = \"nope.cdf\": cannot read",
        ),
        (
            ft("", r#"{"kind": "tcp_short", "size_cdf": "websearch", "mean_size": "1MB", "load": 0.5}"#),
            "flows[0].mean_size = \"1MB\": not with size_cdf",
        ),
        (
            ft("", r#"{"kind": "tcp_short", "size_cdf": "websearch", "load": 1.5}"#),
            "flows[0].load = 1.5: must be in (0, 1]",
        ),
        (
            ft("", r#"{"kind": "tcp_short", "size_cdf": "websearch", "load": 0.5, "arrival_rate": 10}"#),
            "flows[0].arrival_rate = 10: give load or arrival_rate, not both",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"kind": "tcp_short", "mean_size": 1e4, "load": 0.5}]}"#.to_string(),
            "flows[0].load = 0.5: only on fabrics",
        ),
        (
            r#"{"fat_tree": {"rate": 1e9}, "leaf_spine": {"rate": 1e9}, "flows": [{}]}"#.to_string(),
            "scenario: give exactly one topology",
        ),
    ];
    for (doc, want) in cases {
        let got = parse(&doc).unwrap_err();
        assert!(got.starts_with(want), "{doc}\n got:  {got}\n want: {want}");
    }
}
