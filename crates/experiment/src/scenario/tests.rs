//! Unit tests of the scenario schema.

use super::*;
#[allow(unused_imports)]
use super::{cost, error, flows, qdisc, table, topology, trace};

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
    // The linux profile by default: prr (= sack) is written.
    assert_eq!(sc.normalized["flows"][0]["profile"], "linux");
    assert_eq!(sc.normalized["flows"][0]["prr"], true);
    // Classic: prr is written only when given, so older scenarios normalise as before.
    let sc = parse(&format!(
        r#"{{{BASE}, "profile": "classic", "flows": [{{"count": 3}}]}}"#
    ))
    .unwrap();
    assert!(sc.normalized["flows"][0].get("prr").is_none());
}

/// `accecn`: default on for Prague, off otherwise; given, it is kept (and normalized).
#[test]
fn accecn_default_and_key() {
    use crate::config::FlowGroup;
    let doc = r#"{"dumbbell": {"rate": 1e7}, "flows": [{"cc": "prague"}, {"cc": "dctcp"},
        {"cc": "dctcp", "accecn": true}, {"cc": "prague", "accecn": false}]}"#;
    let sc = Scenario::from_json(doc).unwrap();
    let on: Vec<bool> = sc
        .config
        .flows
        .iter()
        .map(|g| match g {
            FlowGroup::Tcp(t) => t.accecn,
            _ => panic!(),
        })
        .collect();
    assert_eq!(on, [true, false, true, false]);
    assert!(sc.normalized["flows"][0].get("accecn").is_none());
    assert_eq!(sc.normalized["flows"][2]["accecn"], true);
}

/// The TCP profiles: `linux` by default (sack, prr, delack, timestamps, rack; hystart for
/// CUBIC only), `classic` all off (today's model); the top-level `profile` is the groups'
/// default, a group's own `profile` wins, and explicit keys win over the profile.
#[test]
fn tcp_profiles_defaults_and_overrides() {
    use crate::config::{FlowGroup, TcpExtras};
    let groups = |doc: &str| -> Vec<(bool, bool, bool, TcpExtras)> {
        let sc = parse(doc).unwrap();
        sc.config
            .flows
            .iter()
            .map(|g| match g {
                FlowGroup::Tcp(t) => (t.sack, t.prr, t.delayed_ack, t.extras),
                FlowGroup::ShortTcp(t) => (t.sack, t.prr, t.delayed_ack, t.extras),
                _ => panic!("not tcp"),
            })
            .collect()
    };
    let linux = TcpExtras {
        timestamps: true,
        linux_delack: true,
        hystart: false,
        rack: true,
        prague_pacing: false,
        rcvbuf: true,
        linux_window: true,
        linux_states: true,
    };
    let g = groups(&format!(
        r#"{{{BASE}, "flows": [{{}}, {{"cc": "cubic"}}, {{"profile": "classic"}},
            {{"kind": "tcp_short", "arrival_rate": 1, "mean_size": "10kB"}}]}}"#
    ));
    assert_eq!(g[0], (true, true, true, linux));
    assert_eq!(
        g[1].3,
        TcpExtras {
            hystart: true,
            ..linux
        }
    );
    assert_eq!(g[2], (false, false, false, TcpExtras::default()));
    assert_eq!(g[3], (true, true, true, linux));
    let g = groups(&format!(
        r#"{{{BASE}, "profile": "classic", "flows": [{{}}, {{"profile": "linux", "sack": false}},
            {{"timestamps": true}}, {{"profile": "linux", "delack": false, "rack": false}}]}}"#
    ));
    assert_eq!(g[0], (false, false, false, TcpExtras::default()));
    // sack = false: no PRR, no RACK by default.
    assert_eq!(
        g[1],
        (
            false,
            false,
            true,
            TcpExtras {
                rack: false,
                ..linux
            }
        )
    );
    assert_eq!(
        g[2].3,
        TcpExtras {
            timestamps: true,
            ..TcpExtras::default()
        }
    );
    assert_eq!(
        g[3],
        (
            true,
            true,
            false,
            TcpExtras {
                rack: false,
                linux_delack: false,
                ..linux
            }
        )
    );
    for (doc, want) in [
        (
            r#"{"profile": "bsd", "dumbbell": {"rate": 1e7}, "flows": [{}]}"#,
            "profile = \"bsd\": must be one of linux, classic",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"profile": "win"}]}"#,
            "flows[0].profile = \"win\": must be one of linux, classic",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"sack": false, "rack": true}]}"#,
            "flows[0].rack = true: needs sack = true",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"hystart": true}]}"#,
            "flows[0].hystart = true: only for cc = \"cubic\"",
        ),
    ] {
        let e = parse(doc).unwrap_err();
        assert!(e.starts_with(want), "{e}");
    }
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
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"sack": false, "prr": true}]}"#,
            "flows[0].prr = true: needs sack = true",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"sack": true, "prr": 1}]}"#,
            "flows[0].prr = 1: must be true or false",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"cc": "cubic", "accecn": true}]}"#,
            "flows[0].accecn = true: needs ecn = true",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"cc": "cubic", "rtt_scaling": true}]}"#,
            "flows[0].rtt_scaling = true: only for cc = \"prague\" (not \"cubic\")",
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

/// `pacing` (TCP groups): off by default and then absent from the normalized scenario (older
/// scenarios normalise as before), written when given, a bool; `cc = "bbr"` is a name the
/// schema takes.
#[test]
fn pacing_key_and_bbr() {
    let sc = parse(&format!(r#"{{{BASE}, "flows": [{{"cc": "bbr"}}]}}"#)).unwrap();
    assert!(sc.normalized["flows"][0].get("pacing").is_none());
    let FlowGroup::Tcp(t) = &sc.config.flows[0] else {
        panic!()
    };
    assert_eq!((t.cc, t.pacing), (crate::cc::CcKind::Bbr, false));
    let sc = parse(&format!(
        r#"{{{BASE}, "flows": [{{"pacing": true}}, {{"kind": "tcp_short", "arrival_rate": 1, "mean_size": "10kB", "pacing": true}}]}}"#
    ))
    .unwrap();
    assert_eq!(sc.normalized["flows"][0]["pacing"], true);
    let (FlowGroup::Tcp(t), FlowGroup::ShortTcp(s)) = (&sc.config.flows[0], &sc.config.flows[1])
    else {
        panic!()
    };
    assert!(t.pacing && s.pacing);
    let got = parse(&format!(r#"{{{BASE}, "flows": [{{"pacing": 1}}]}}"#)).unwrap_err();
    assert!(
        got.starts_with("flows[0].pacing = 1: must be true or false"),
        "{got}"
    );
}

/// `dscp`: a name (any case) or an integer 0..63, normalised to the integer and written only
/// when given; anything else is one line naming the key and value.
#[test]
fn dscp_key() {
    let sc = parse(&format!(
        r#"{{{BASE}, "flows": [{{"dscp": "EF"}}, {{"kind": "udp_cbr", "rate": "1Mbps", "dscp": 8}},
        {{"kind": "tcp_short", "arrival_rate": 1, "mean_size": "10kB", "dscp": "af41"}}, {{}}]}}"#
    ))
    .unwrap();
    let d: Vec<u8> = sc.config.flows.iter().map(|g| g.dscp()).collect();
    assert_eq!(d, [46, 8, 34, 0]);
    assert_eq!(sc.normalized["flows"][0]["dscp"], 46);
    assert_eq!(sc.normalized["flows"][2]["dscp"], 34);
    assert!(sc.normalized["flows"][3].get("dscp").is_none());
    for (v, reason) in [
        ("64", "must be an integer 0..63 or a DSCP name"),
        ("-1", "must be an integer 0..63 or a DSCP name"),
        ("1.5", "must be an integer 0..63 or a DSCP name"),
        (r#""EX""#, "not a DSCP name (BE, CS0, LE, CS1"),
        (
            "true",
            "must be a DSCP name such as \"EF\" or an integer 0..63",
        ),
    ] {
        let got = parse(&format!(r#"{{{BASE}, "flows": [{{"dscp": {v}}}]}}"#)).unwrap_err();
        assert!(
            got.starts_with(&format!("flows[0].dscp = {v}: {reason}")),
            "{got}"
        );
        assert!(!got.contains('\n'), "{got}");
    }
}

#[test]
fn ping_group_defaults_errors_and_output_table() {
    let sc = parse(
        r#"{"dumbbell": {"rate": 1e7}, "flows": [{}, {"kind": "ping"}], "output": {"flent": true}}"#,
    )
    .unwrap();
    let FlowGroup::Ping(p) = &sc.config.flows[1] else {
        panic!("not a ping group");
    };
    // Flent's defaults: 64 bytes every 200 ms
    assert_eq!((p.interval, p.size, p.count), (0.2, 64, 1));
    let norm = &sc.normalized["flows"][1];
    assert_eq!(norm["interval"], 0.2);
    assert_eq!(norm["size"], 64);
    assert!(norm.get("packet_size").is_none());
    assert_eq!(sc.normalized["output"]["flent"], true);
    let off = parse(r#"{"dumbbell": {"rate": 1e7}, "flows": [{}], "output": {}}"#).unwrap();
    assert_eq!(off.normalized["output"]["flent"], false);
    for (doc, want) in [
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"kind": "ping", "interval": "0s"}]}"#,
            "flows[0].interval = \"0s\":",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"kind": "ping", "size": 20}]}"#,
            "flows[0].size = 20: must be a whole number in [29, 65535]",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"kind": "ping", "packet_size": 100}]}"#,
            "flows[0].packet_size = 100: not used by kind = \"ping\"",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"kind": "ping", "cc": "bbr"}]}"#,
            "flows[0].cc = \"bbr\": not used by kind = \"ping\"",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{"interval": "1s"}]}"#,
            "flows[0].interval = \"1s\": not used by kind = \"tcp\"",
        ),
        (
            r#"{"dumbbell": {"rate": 1e7}, "flows": [{}], "output": {"flent": "yes"}}"#,
            "output.flent = \"yes\": must be true or false",
        ),
    ] {
        let e = parse(doc).unwrap_err();
        assert!(e.starts_with(want), "{doc}: {e}");
    }
}
