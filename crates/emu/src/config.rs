//! What the emulator takes from a simulator scenario: the dumbbell's bottleneck (rate,
//! two-way propagation delay, buffer, queue discipline) and the statistics settings, read
//! from the very [`experiment::config::SimConfig`] the scenario schema (`experiment::scenario`) produces, so
//! `--aqm`, `--aqm-param` and TOML mean exactly what they mean to the simulator.

use aqm::{BitsPerSec, QdiscConfig, QueueLimit};
use experiment::config::SimConfig;
use experiment::config::{FlowGroup, TopologyConfig};
use experiment::service::Capacity;

use crate::reverse::ReverseLink;

/// The emulated dumbbell.
#[derive(Clone, Debug)]
pub struct EmuConfig {
    /// Scenario name (copied into the results).
    pub scenario: String,
    /// Seed of the qdisc's random stream.
    pub seed: u64,
    /// Bottleneck rate (with `capacity`: the nominal rate the qdisc is told).
    pub rate: BitsPerSec,
    /// The bottleneck's varying capacity (a Mahimahi trace, `rate_changes`), served as the
    /// simulator serves it (`experiment::service`); `None`: the fixed `rate`.
    pub capacity: Option<Capacity>,
    /// netem impairments of the bottleneck's packets (`dumbbell.netem`; `experiment::netem`).
    pub netem: Option<std::sync::Arc<experiment::netem::NetemSpec>>,
    /// One-way propagation delay of the data direction, ns (half the two-way `rtt`).
    pub fwd_delay_ns: u64,
    /// One-way propagation delay of the ACK direction, ns (the other half).
    pub rev_delay_ns: u64,
    /// Bottleneck buffer.
    pub limit: QueueLimit,
    /// The bottleneck's queue discipline.
    pub qdisc: QdiscConfig,
    /// Run length, ns.
    pub duration_ns: u64,
    /// Warm-up excluded from statistics, ns.
    pub warmup_ns: u64,
    /// Time-series sample interval, ns.
    pub sample_interval_ns: u64,
    /// Per flow group, the class index of a class-based qdisc its packets go to (0 without
    /// classes or without a `class`).
    pub group_class: Vec<u8>,
    /// The reverse direction's queue, rate and name (`None`: a constant delay, the ACK path).
    pub reverse: Option<ReverseLink>,
    /// Name of the forward link in the results (`bottleneck`).
    pub name: String,
    /// Capture the packets at both TUN devices into this pcapng file ([`crate::capture`];
    /// `None`: no capture). Not part of the scenario: the caller (`aqmlab emulate --pcap`,
    /// `aqmlab shell`) sets it.
    pub pcap: Option<std::path::PathBuf>,
}

/// Seconds to nanoseconds by the project's one rounding rule (nearest ns).
fn ns(s: f64) -> u64 {
    aqm::Duration::from_secs_f64(s).as_nanos()
}

impl EmuConfig {
    /// The emulated link of a dumbbell scenario; `Err(key, reason)` for what the emulator
    /// cannot run (other topologies; a group's class unknown to the qdisc).
    pub fn from_sim(cfg: &SimConfig) -> Result<EmuConfig, (String, String)> {
        let TopologyConfig::Dumbbell(d) = &cfg.topology else {
            return Err((
                "topology".into(),
                "the emulator runs dumbbell scenarios ([dumbbell]) only".into(),
            ));
        };
        let (capacity, reverse_capacity) = d.capacities();
        let limit = match (d.buffer_pkts, d.buffer_bytes) {
            (Some(p), _) => QueueLimit::Packets(p),
            (None, Some(b)) => QueueLimit::Bytes(b),
            (None, None) => return Err(("dumbbell.buffer".into(), "required".into())),
        };
        // The ACK direction is the simulator's `R2->R1` when the scenario makes it more than
        // a delay: with `reverse_aqm` (a `[reverse_aqm]` table, or the forward AQM when a group
        // sends the other way) that qdisc with the bottleneck's buffer, else drop-tail with
        // the side buffer; nominally at the bottleneck's rate, following a reverse trace if
        // any, its packets through the reverse netem stage if any.
        let reverse_netem = d.netem.reverse.clone();
        let queued = reverse_capacity.is_some() || reverse_netem.is_some();
        let reverse = (queued || d.reverse_aqm.is_some()).then(|| ReverseLink {
            rate: BitsPerSec(d.bottleneck_rate.round() as u64),
            capacity: reverse_capacity,
            limit: match d.reverse_aqm {
                Some(_) => limit,
                None => QueueLimit::Packets(d.side_buffer_pkts),
            },
            qdisc: d
                .reverse_aqm
                .clone()
                .unwrap_or_else(experiment::config::droptail),
            // the simulator's name for a monitored reverse bottleneck, so that the two result
            // folders compare key for key; `reverse` for the ACK path's own link
            name: if d.reverse_aqm.is_some() {
                "bottleneck_reverse"
            } else {
                "reverse"
            }
            .into(),
            netem: reverse_netem,
        });
        if d.access != experiment::config::Access::Link {
            return Err((
                "dumbbell.access".into(),
                "the emulator's hosts sit in namespaces behind the forwarder (access = \"none\" \
                 is simulator-only)"
                    .into(),
            ));
        }
        let rtt = ns(d.rtt);
        let names = d.aqm.class_names();
        let mut group_class = Vec::with_capacity(cfg.flows.len());
        for (i, g) in cfg.flows.iter().enumerate() {
            // a reverse group's packets cross the reverse link (its first class)
            let reverse = g.endpoints().direction == experiment::config::Direction::Reverse;
            let class = match g {
                FlowGroup::Tcp(t) if reverse && t.class.is_some() => {
                    return Err((
                        format!("flows[{i}].class"),
                        "a reverse group's class is simulator-only (the emulator files reverse \
                         packets under the reverse qdisc's first class)"
                            .into(),
                    ));
                }
                FlowGroup::Tcp(t) => t.class.as_deref(),
                _ => None,
            };
            let idx = match class {
                None => 0,
                Some(c) => names.iter().position(|n| *n == c).ok_or_else(|| {
                    (
                        format!("flows[{i}].class"),
                        format!("no class {c:?} in the AQM (classes: {})", names.join(", ")),
                    )
                })?,
            };
            group_class.push(idx as u8);
        }
        Ok(EmuConfig {
            scenario: cfg.scenario.clone(),
            seed: cfg.seed,
            rate: BitsPerSec(d.bottleneck_rate.round() as u64),
            capacity,
            netem: d.netem.forward.clone(),
            fwd_delay_ns: rtt / 2,
            rev_delay_ns: rtt - rtt / 2,
            limit,
            qdisc: d.aqm.clone(),
            duration_ns: ns(cfg.duration),
            warmup_ns: ns(cfg.warmup),
            sample_interval_ns: ns(cfg.sample_interval).max(1),
            group_class,
            reverse,
            name: "bottleneck".into(),
            pcap: None,
        })
    }

    /// The forward link of `other` (its rate, capacity, buffer, qdisc and netem) as this
    /// configuration's reverse direction, named `name` (`aqmlab shell`'s downlink: each
    /// direction validated as a dumbbell's bottleneck by the one scenario schema).
    pub fn set_reverse_from(&mut self, other: &EmuConfig, name: &str) {
        self.reverse = Some(ReverseLink {
            rate: other.rate,
            capacity: other.capacity.clone(),
            limit: other.limit,
            qdisc: other.qdisc.clone(),
            name: name.into(),
            netem: other.netem.clone(),
        });
    }
}
