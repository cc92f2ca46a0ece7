//! Flow groups (`[[flows]]`): their kind, TCP options, times and where they attach.

use aqm::units::{self, Kind};
use serde_json::Value;

use super::error::{err, Result};
use super::table::Table;
use super::topology::pkt_size;
use super::Topo;
use crate::cc::CcKind;
use crate::config::{
    Access, Direction, FlowGroup, PingGroup, ShortTcpGroup, TcpExtras, TcpGroup, UdpGroup,
    DEFAULT_INIT_CWND, DEFAULT_MIN_RTO_S,
};

/// Flent's ping: one probe every 200 ms.
const DEFAULT_PING_INTERVAL_S: f64 = 0.2;
/// Flent's ping: 64-byte probes.
const DEFAULT_PING_SIZE: u32 = 64;

/// The TCP profiles (`profile` of a flow group or of the scenario): `linux` (the default) or
/// `classic` (the model before profiles existed).
pub(super) const PROFILES: &[&str] = &["linux", "classic"];

/// Every key some kind of flow group takes.
pub(super) const FLOW_KEYS: &[&str] = &[
    "count",
    "cc",
    "ecn",
    "delack",
    "sack",
    "prr",
    "accecn",
    "rtt_scaling",
    "pacing",
    "profile",
    "timestamps",
    "rack",
    "hystart",
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
    "interval",
    "pattern",
    "senders",
    "size_cdf",
    "load",
];

pub(super) fn flow_group(
    i: usize,
    v: &Value,
    topo: &Topo,
    default_pkt: u32,
    duration: f64,
    profile: &'static str,
) -> Result<(FlowGroup, bool, Value)> {
    let path = format!("flows[{i}]");
    let mut t = Table::new(path.clone(), v)?;
    let kind = t.choice(
        "kind",
        &["tcp", "tcp_short", "udp_cbr", "udp_onoff", "ping"],
        "tcp",
    )?;
    let name = t.string("name")?.or_else(|| Some(path.clone()));
    if matches!(topo, Topo::Fabric(..)) && kind != "tcp" && kind != "tcp_short" {
        return Err(err(
            &t.key("kind"),
            v.get("kind"),
            "fabrics ([leaf_spine], [fat_tree]) take kind = \"tcp\" groups with a pattern \
             and kind = \"tcp_short\" groups",
        ));
    }
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
    let (src, dst, fpath, extra_delay, direction) = attachment(&mut t, v, topo)?;
    let class = t.string("class")?;
    if let Some(c) = &class {
        // Builders: the [aqm] of the bottleneck(s) the data crosses must have the class (the
        // [reverse_aqm] for a reverse group). Explicit topologies are checked along each
        // flow's path when the simulation is built.
        let reverse = direction == Direction::Reverse;
        let aqm = match topo {
            Topo::Dumbbell(d, _) if reverse => d.reverse_aqm.as_ref(),
            Topo::ParkingLot(p, _) if reverse => p.reverse_aqm.as_ref(),
            Topo::Dumbbell(d, _) => Some(&d.aqm),
            Topo::ParkingLot(p, _) => Some(&p.aqm),
            Topo::Explicit(..) | Topo::Fabric(..) => None,
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
    let dscp = dscp(&mut t)?;
    // A ping's probes have their own size (`size`, Flent's 64 bytes by default).
    let packet_size = if kind == "ping" {
        if v.get("packet_size").is_some() {
            return Err(err(
                &t.key("packet_size"),
                v.get("packet_size"),
                "not used by kind = \"ping\" (its probes' size is `size`)",
            ));
        }
        0
    } else {
        let p = pkt_size(&mut t, "packet_size")?.unwrap_or(default_pkt);
        t.put("packet_size", p);
        p
    };

    type TcpOpts = (CcKind, bool, bool, bool, bool, u32, f64, TcpExtras);
    let tcp_opts = |t: &mut Table<'_>| -> Result<TcpOpts> {
        let linux = t.choice("profile", PROFILES, profile)? == "linux";
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
        let delack = t.boolean("delack", linux)?;
        let sack = t.boolean("sack", linux)?;
        // Classic: written to the normalized scenario only when given (older scenarios
        // unchanged); the linux profile paces its SACK recoveries with PRR.
        let prr = if linux {
            t.boolean("prr", sack)?
        } else {
            t.raw("prr").is_some() && t.boolean("prr", false)?
        };
        if prr && !sack {
            return Err(err(
                &t.key("prr"),
                v.get("prr"),
                "needs sack = true (PRR paces the SACK recovery)",
            ));
        }
        let init_cwnd = t.int_or("init_cwnd", 1, 10_000, DEFAULT_INIT_CWND as u64)? as u32;
        let min_rto = t.time_or("min_rto", true, DEFAULT_MIN_RTO_S)?;
        let extras = tcp_extras(t, v, linux, cc, sack, delack)?;
        Ok((cc, ecn, delack, sack, prr, init_cwnd, min_rto, extras))
    };

    let mut trace = false;
    let group = match kind {
        "tcp" => {
            let pattern = pattern(&mut t, v, topo)?;
            let count = match pattern {
                None => t.int_or("count", 1, u32::MAX as u64, 1)? as u32,
                Some((p, n)) => {
                    // the normalized scenario writes the pattern's count
                    if t.int("count", 0, u64::MAX)?.is_some_and(|c| c != n as u64) {
                        return Err(err(
                            &t.key("count"),
                            v.get("count"),
                            format!(
                                "set by the pattern: {} gives {n} flows here (remove count)",
                                p.name()
                            ),
                        ));
                    }
                    t.put("count", n);
                    n
                }
            };
            let pattern = pattern.map(|p| p.0);
            let (cc, ecn, delayed_ack, sack, prr, init_cwnd, min_rto, extras) = tcp_opts(&mut t)?;
            let accecn = accecn_opt(&mut t, v, cc, ecn)?;
            let rtt_scaling = rtt_scaling_opt(&mut t, v, cc)?;
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
                direction,
                class,
                dscp,
                accecn,
                rtt_scaling,
                pacing: pacing(&mut t)?,
                extras,
                pattern,
            })
        }
        "tcp_short" => {
            let (cc, ecn, delayed_ack, sack, prr, init_cwnd, min_rto, extras) = tcp_opts(&mut t)?;
            let accecn = accecn_opt(&mut t, v, cc, ecn)?;
            let rtt_scaling = rtt_scaling_opt(&mut t, v, cc)?;
            let size_cdf = super::fabric::size_cdf(&mut t, v)?;
            let (ms, shape) = match &size_cdf {
                Some(c) => (c.mean(), 1.2),
                None => {
                    let ms = t.quantity("mean_size", Kind::Size)?;
                    let ms =
                        t.required("mean_size", ms, "for a tcp_short group, e.g. \"100kB\"")?;
                    if ms <= 0.0 {
                        return Err(err(&t.key("mean_size"), v.get("mean_size"), "must be > 0"));
                    }
                    let shape = t.number(
                        "pareto_shape",
                        1.2,
                        |x| x > 1.0,
                        "must be > 1 (finite mean)",
                    )?;
                    (ms, shape)
                }
            };
            let ar = match super::fabric::load_rate(&mut t, v, topo, ms)? {
                Some(r) => r,
                None => {
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
                    ar
                }
            };
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
                direction,
                class,
                dscp,
                accecn,
                rtt_scaling,
                pacing: pacing(&mut t)?,
                extras,
                size_cdf,
            })
        }
        "ping" => {
            let count = t.int_or("count", 1, u32::MAX as u64, 1)? as u32;
            let interval = t.time_or("interval", true, DEFAULT_PING_INTERVAL_S)?;
            if interval < 1e-6 {
                return Err(err(
                    &t.key("interval"),
                    v.get("interval"),
                    "must be >= 1 us",
                ));
            }
            let size = t
                .int("size", 29, 65535)?
                .unwrap_or(DEFAULT_PING_SIZE as u64) as u32;
            t.put("size", size);
            let start_jitter = t.time("start_jitter", false)?;
            FlowGroup::Ping(PingGroup {
                name,
                count,
                interval,
                size,
                start,
                start_jitter,
                stop,
                src,
                dst,
                path: fpath,
                extra_delay,
                direction,
                class,
                dscp,
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
                direction,
                class,
                dscp,
            };
            if kind == "udp_cbr" {
                FlowGroup::UdpCbr(g)
            } else {
                FlowGroup::UdpOnoff(g)
            }
        }
    };
    let n = group.static_count() as usize;
    let delays = group.endpoints().extra_delay.len();
    if !(delays <= 1 || delays == n) {
        return Err(err(
            &t.key("extra_delay"),
            v.get("extra_delay"),
            format!("must have 0, 1 or count = {n} entries"),
        ));
    }
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

/// The `linux` profile's mechanisms beyond the classic keys: `timestamps`, `rack`,
/// `hystart` default to what the profile implies (see [`TcpExtras::linux`]), and an explicit
/// key wins; the Linux delayed-ACK receiver comes with the profile when `delack` is on.
fn tcp_extras(
    t: &mut Table<'_>,
    v: &Value,
    linux: bool,
    cc: CcKind,
    sack: bool,
    delack: bool,
) -> Result<TcpExtras> {
    let d = if linux {
        TcpExtras::linux(cc, sack)
    } else {
        TcpExtras::default()
    };
    let timestamps = t.boolean("timestamps", d.timestamps)?;
    let rack = t.boolean("rack", d.rack)?;
    if rack && !sack {
        return Err(err(
            &t.key("rack"),
            v.get("rack"),
            "needs sack = true (RACK marks losses on the SACK scoreboard)",
        ));
    }
    let hystart = t.boolean("hystart", d.hystart)?;
    if hystart && cc != CcKind::Cubic {
        return Err(err(
            &t.key("hystart"),
            v.get("hystart"),
            format!("only for cc = \"cubic\" (cc is \"{}\")", cc.name()),
        ));
    }
    Ok(TcpExtras {
        timestamps,
        linux_delack: linux && delack,
        hystart,
        rack,
        prague_pacing: d.prague_pacing,
        rcvbuf: d.rcvbuf,
        linux_window: d.linux_window,
        linux_states: d.linux_states,
    })
}

pub(super) type Attach = (
    Option<String>,
    Option<String>,
    Option<[u32; 2]>,
    Vec<f64>,
    Direction,
);

/// `accecn`: AccECN feedback (default on for Prague, off otherwise; needs ECN). Written to
/// the normalized scenario only when given.
fn accecn_opt(t: &mut Table<'_>, v: &Value, cc: CcKind, ecn: bool) -> Result<bool> {
    if t.raw("accecn").is_none() {
        return Ok(cc == CcKind::Prague);
    }
    let on = t.boolean("accecn", false)?;
    if on && !ecn {
        return Err(err(
            &t.key("accecn"),
            v.get("accecn"),
            "needs ecn = true (AccECN feeds back ECN marks)",
        ));
    }
    Ok(on)
}

/// `rtt_scaling`: Prague's RTT independence (off by default; Prague only). Written to the
/// normalized scenario only when given.
fn rtt_scaling_opt(t: &mut Table<'_>, v: &Value, cc: CcKind) -> Result<bool> {
    if t.raw("rtt_scaling").is_none() {
        return Ok(false);
    }
    let on = t.boolean("rtt_scaling", false)?;
    if on && cc != CcKind::Prague {
        return Err(err(
            &t.key("rtt_scaling"),
            v.get("rtt_scaling"),
            format!("only for cc = \"prague\" (not \"{}\")", cc.name()),
        ));
    }
    Ok(on)
}

/// `pacing` (bool, TCP groups): pace transmissions as a host with `sch_fq` does. Written to
/// the normalized scenario only when given (older scenarios normalise as before).
fn pacing(t: &mut Table<'_>) -> Result<bool> {
    Ok(t.raw("pacing").is_some() && t.boolean("pacing", false)?)
}

/// `pattern` (with `senders` for `incast`) of a TCP group: required on a fabric, refused
/// elsewhere. Returns the pattern and its flow count.
fn pattern(
    t: &mut Table<'_>,
    v: &Value,
    topo: &Topo,
) -> Result<Option<(crate::fabric::Pattern, u32)>> {
    use crate::fabric::Pattern;
    let Topo::Fabric(f, _) = topo else {
        for k in ["pattern", "senders"] {
            if t.has(k) {
                return Err(err(
                    &t.key(k),
                    v.get(k),
                    "only for fabrics ([leaf_spine], [fat_tree])",
                ));
            }
        }
        return Ok(None);
    };
    let hosts = f.shape.hosts();
    if !t.has("pattern") {
        return Err(err(
            &t.key("pattern"),
            None,
            "required on a fabric: \"permutation\", \"all_to_all\" or \"incast\"",
        ));
    }
    let p = match t.choice(
        "pattern",
        &["permutation", "all_to_all", "incast"],
        "permutation",
    )? {
        "all_to_all" => Pattern::AllToAll,
        "incast" => {
            let n = t.int("senders", 1, hosts - 1)?;
            let n = t.required(
                "senders",
                n,
                &format!("the number of incast senders, 1 ..= {}", hosts - 1),
            )?;
            Pattern::Incast { senders: n as u32 }
        }
        _ => Pattern::Permutation,
    };
    if !matches!(p, Pattern::Incast { .. }) && t.has("senders") {
        return Err(err(
            &t.key("senders"),
            v.get("senders"),
            "only with pattern = \"incast\"",
        ));
    }
    let n = p.flows(hosts);
    if n > u32::MAX as u64 {
        return Err(err(
            &t.key("pattern"),
            v.get("pattern"),
            format!("{n} flows: too many"),
        ));
    }
    Ok(Some((p, n as u32)))
}

pub(super) fn attachment(t: &mut Table<'_>, v: &Value, topo: &Topo) -> Result<Attach> {
    let src = t.string("src")?;
    let dst = t.string("dst")?;
    let path_v = t.raw("path");
    let ed_v = t.raw("extra_delay");
    let dir_v = t.raw("direction");
    // Written into the normalized scenario only when given (older scenarios unchanged).
    let direction = match dir_v {
        None => Direction::Forward,
        Some(_) => match t.choice("direction", &["forward", "reverse"], "forward")? {
            "reverse" => Direction::Reverse,
            _ => Direction::Forward,
        },
    };
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
        Topo::Fabric(..) => {
            for (k, given) in [
                ("src", src.is_some()),
                ("dst", dst.is_some()),
                ("path", path_v.is_some()),
                ("extra_delay", ed_v.is_some()),
                ("direction", dir_v.is_some()),
            ] {
                if given {
                    return Err(err(
                        &t.key(k),
                        v.get(k),
                        "not on fabrics (a group's pattern places its flows)",
                    ));
                }
            }
            Ok((None, None, None, extra, direction))
        }
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
            if direction == Direction::Reverse {
                return Err(err(
                    &t.key("direction"),
                    dir_v,
                    "only for [dumbbell] and [parking_lot] (swap src and dst instead)",
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
            Ok((src, dst, None, extra, direction))
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
            Ok((None, None, path, extra, direction))
        }
    }
}

/// `dscp`: a codepoint name (`EF`, `AF41`, `CS1`, `BE`, `LE`, `VA`, ...; [`aqm::dscp`]) or an
/// integer 0..=63; normalised to the integer, written only when given. Default 0 (best
/// effort).
fn dscp(t: &mut Table<'_>) -> Result<u8> {
    let Some(v) = t.raw("dscp") else {
        return Ok(0);
    };
    let d = match v {
        Value::String(s) => aqm::dscp::parse(s).ok_or_else(|| {
            err(
                &t.key("dscp"),
                Some(v),
                format!(
                    "not a DSCP name ({}) or an integer 0..63",
                    aqm::dscp::names().collect::<Vec<_>>().join(", ")
                ),
            )
        })?,
        Value::Number(n) => n
            .as_u64()
            .filter(|&x| x <= aqm::dscp::MAX as u64)
            .ok_or_else(|| {
                err(
                    &t.key("dscp"),
                    Some(v),
                    "must be an integer 0..63 or a DSCP name",
                )
            })? as u8,
        _ => {
            return Err(err(
                &t.key("dscp"),
                Some(v),
                "must be a DSCP name such as \"EF\" or an integer 0..63",
            ))
        }
    };
    t.put("dscp", d);
    Ok(d)
}
