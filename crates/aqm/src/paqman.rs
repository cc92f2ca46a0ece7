//! PAQMAN — the runtime of a solved drop policy (Kar, Alt, Koeppl & Rizk, arXiv 2202.10352;
//! docs/aqm/paqman.md, docs/paqman.md for the model, docs/paqman_policy_format.md for the file).
//!
//! `aqmlab paqman solve` computes an optimal admit/drop table over states `(q, r)`: `q` the
//! packets in the system (waiting + in service) just before an arrival, `r` the grid index of
//! the sender's effective rate (`r * unit_pps` packets/s). This AQM looks the table up per
//! arrival. The rate is not observable at a router, so it is estimated online with the
//! project's model-level estimator (`aqmlab.mdp.inference.RateFilter`, PAQMAN §IV), ported:
//! a discrete posterior over the grid indices that at every arrival
//!
//! 1. absorbs the interarrival time `x` with the gamma likelihood of model (4),
//!    `log p_i += α log λ_i − λ_i x`, `λ_i = α · i · unit_pps` (shape α from the policy file
//!    unless `alpha` is set), then renormalises (max subtracted);
//! 2. after a decision, if `aimd_moves`, moves the mass by the policy's AIMD map (admit:
//!    `i -> min(i + admit_step, max_index)`, drop: `i -> max(1, floor(i · drop_factor))`, or
//!    with `rate_grid.drop_projection = "split"` that floor and its ceil with the weights that
//!    make the mean `i · drop_factor`), the model's assumption that the sender reacts at once;
//! 3. spreads `mix` of each index's mass to each neighbour (process noise, so the estimate
//!    follows a sender that is not exactly the model's AIMD; `mix = 0` is Python's default).
//!
//! The policy's rate state is the posterior mode (as `RateFilter.index()`).
//!
//! Decision epochs follow the policy's model: `negligible_rtt` decides at every arrival;
//! `rtt` decides at the first arrival at least `rtt_s` after the previous decision and admits
//! the arrivals in between (the wrapper's hard limit still applies), as the format document's
//! run-time lookup says. The queue `q` is the wrapper's backlog plus one while the link is still
//! sending the last dequeued packet (the model's "system" counts the packet in service). An
//! arrival that finds `q >= queue.max` is dropped (full buffer in the model).
//!
//! A `multiflow` policy (PAQMAN §V-B: a network learned from the multi-flow model's
//! trajectories, `aqmlab.mdp.dqn`) is evaluated by [`crate::paqman_multiflow`] instead: per-flow
//! decision epochs, rates and ages; the table and the rate posterior are not used.
//!
//! Activations: one per table look-up or network evaluation (decision epoch).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Arrival, Env, QueueView, Verdict};
use crate::backlog::DropReason;
use crate::error::{ensure, ConfigError};
use crate::paqman_multiflow::{MultiflowRuntime, MultiflowSpec};
use crate::params::{ParamInfo, ParamValue, Params};
use crate::rng::Rng;
use crate::time::{BitsPerSec, Duration, Instant};

/// The policy file's `format` value.
pub const POLICY_FORMAT: &str = "aqmlab-paqman-policy";
/// The policy file version this runtime reads.
pub const POLICY_VERSION: u32 = 1;

fn one() -> f64 {
    1.0
}

/// `queue` of a policy file: the queue lengths the table covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyQueue {
    /// Always 0.
    pub min: u32,
    /// B, the model's buffer (packets in the system).
    pub max: u32,
}

/// `rate_grid` of a policy file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyGrid {
    /// Rate of one grid step, packets/s.
    pub unit_pps: f64,
    /// First index (1).
    pub min_index: u32,
    /// Last index (number of table rows).
    pub max_index: u32,
    /// Additive increase of the index after an admit.
    pub admit_step: u32,
    /// Multiplicative decrease of the index after a drop.
    pub drop_factor: f64,
    /// How `index * drop_factor` lands on the grid: `"floor"` (`max(1, floor)`, the default
    /// for files without the key) or `"split"` (floor or ceil with the probabilities that
    /// make the mean exact; what `aqmlab paqman solve` writes).
    #[serde(default = "floor_projection")]
    pub drop_projection: String,
}

fn floor_projection() -> String {
    "floor".into()
}

/// `table` of a policy file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyTable {
    /// One string per rate index `min_index..=max_index`; character `q` is the action for
    /// queue `q`: `'1'` drop, `'0'` admit.
    pub rows: Vec<String>,
}

/// The run-time part of a PAQMAN policy file (docs/paqman_policy_format.md). Other keys of
/// the file are ignored when reading. Parse with serde (the front end reads the file; this
/// crate does no I/O), then [`PaqmanPolicy::check`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaqmanPolicy {
    /// Must be [`POLICY_FORMAT`].
    pub format: String,
    /// Must be [`POLICY_VERSION`].
    pub version: u32,
    /// `"negligible_rtt"` (a decision at every arrival) or `"rtt"`.
    pub model: String,
    /// RTT of the `rtt` model, seconds.
    #[serde(default)]
    pub rtt_s: f64,
    /// Gamma shape α of the model's interarrival times.
    #[serde(default = "one")]
    pub gamma_shape: f64,
    /// Service rate the policy was solved for, packets/s (not used here; the scenario layer
    /// refuses a policy on a link of another packet rate, docs/paqman.md).
    #[serde(default)]
    pub service_rate_pps: f64,
    /// Queue lengths covered.
    pub queue: PolicyQueue,
    /// The rate grid and its AIMD map.
    pub rate_grid: PolicyGrid,
    /// The action table (empty for `multiflow`).
    pub table: PolicyTable,
    /// The learned network and the flows' RTTs of a `multiflow` policy (PAQMAN §V-B;
    /// [`crate::paqman_multiflow`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiflow: Option<MultiflowSpec>,
}

impl PaqmanPolicy {
    /// Checks the fields a runtime needs; errors name the policy key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, text: String, reason: &str| ConfigError::InvalidText {
            key: format!("policy.{key}"),
            text,
            reason: reason.to_string(),
        };
        if self.format != POLICY_FORMAT {
            return Err(bad(
                "format",
                self.format.clone(),
                "not a PAQMAN policy (expected \"aqmlab-paqman-policy\")",
            ));
        }
        if self.version != POLICY_VERSION {
            return Err(bad(
                "version",
                self.version.to_string(),
                "unknown policy version (this runtime reads version 1)",
            ));
        }
        if !["negligible_rtt", "rtt", "multiflow"].contains(&self.model.as_str()) {
            return Err(bad(
                "model",
                self.model.clone(),
                "expected \"negligible_rtt\", \"rtt\" or \"multiflow\"",
            ));
        }
        let g = &self.rate_grid;
        let num = |k: &str, v: f64, ok: bool, why: &str| {
            if ok {
                Ok(())
            } else {
                Err(bad(k, v.to_string(), why))
            }
        };
        num(
            "rtt_s",
            self.rtt_s,
            self.rtt_s.is_finite() && self.rtt_s >= 0.0,
            "must be >= 0",
        )?;
        num(
            "gamma_shape",
            self.gamma_shape,
            self.gamma_shape.is_finite() && self.gamma_shape > 0.0,
            "must be > 0",
        )?;
        num(
            "rate_grid.unit_pps",
            g.unit_pps,
            g.unit_pps.is_finite() && g.unit_pps > 0.0,
            "must be > 0",
        )?;
        num(
            "rate_grid.min_index",
            g.min_index as f64,
            g.min_index == 1,
            "must be 1",
        )?;
        num(
            "rate_grid.max_index",
            g.max_index as f64,
            (1..=100_000).contains(&g.max_index),
            "must be in 1..100000",
        )?;
        num(
            "rate_grid.drop_factor",
            g.drop_factor,
            g.drop_factor > 0.0 && g.drop_factor < 1.0,
            "must be in (0, 1)",
        )?;
        if g.drop_projection != "floor" && g.drop_projection != "split" {
            return Err(bad(
                "rate_grid.drop_projection",
                g.drop_projection.clone(),
                "expected \"floor\" or \"split\"",
            ));
        }
        num(
            "queue.max",
            self.queue.max as f64,
            self.queue.min == 0 && (1..=1_000_000).contains(&self.queue.max),
            "must be in 1..1000000 with queue.min = 0",
        )?;
        if self.model == "multiflow" {
            let Some(mf) = &self.multiflow else {
                return Err(bad(
                    "multiflow",
                    String::new(),
                    "required by model \"multiflow\" (the network from aqmlab.mdp.dqn)",
                ));
            };
            return mf.check();
        }
        if self.table.rows.len() != g.max_index as usize {
            return Err(bad(
                "table.rows",
                format!("{} rows", self.table.rows.len()),
                "must have one row per rate index (rate_grid.max_index)",
            ));
        }
        let width = self.queue.max as usize + 1;
        for (i, row) in self.table.rows.iter().enumerate() {
            if row.len() != width || !row.bytes().all(|b| b == b'0' || b == b'1') {
                return Err(bad(
                    &format!("table.rows[{i}]"),
                    format!("{} characters", row.len()),
                    "must be queue.max + 1 characters '0' (admit) or '1' (drop)",
                ));
            }
        }
        Ok(())
    }

    /// Decision epochs follow the `rtt` model (else one at every arrival).
    pub fn has_rtt(&self) -> bool {
        self.model == "rtt"
    }
}

/// PAQMAN's configuration: the policy (required) and the rate estimator's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PaqmanConfig {
    /// The solved policy (a `aqmlab paqman solve` file's content; scenarios and
    /// `--aqm-param policy=FILE` name the file). Required.
    pub policy: Option<Arc<PaqmanPolicy>>,
    /// Probability mass moved to each neighbouring rate index per arrival (the estimator's
    /// process noise). Default 0.01 (ours: PAQMAN's model has no process noise; with TCP the
    /// sender is not the model's AIMD, docs/aqm/paqman.md).
    pub mix: f64,
    /// Gamma shape α of the estimator's likelihood; 0 = the policy's `gamma_shape`. Default 0.
    pub alpha: f64,
    /// Move the estimate by the policy's AIMD map after each decision (the model's immediate
    /// sender reaction). Default true.
    pub aimd_moves: bool,
    /// Mark CE instead of dropping ECN-capable packets. Default false (PAQMAN drops).
    pub ecn: bool,
}

impl Default for PaqmanConfig {
    fn default() -> Self {
        PaqmanConfig {
            policy: None,
            mix: 0.01,
            alpha: 0.0,
            aimd_moves: true,
            ecn: false,
        }
    }
}

impl Params for PaqmanConfig {
    const AQM: &'static str = "paqman";
    const NAMES: &'static [&'static str] = &["policy", "mix", "alpha", "aimd_moves", "ecn"];

    fn set_field(&mut self, key: &str, value: f64) -> Result<(), ConfigError> {
        match key {
            "mix" => self.mix = f64::from_param(key, value)?,
            "alpha" => self.alpha = f64::from_param(key, value)?,
            "aimd_moves" => self.aimd_moves = bool::from_param(key, value)?,
            "ecn" => self.ecn = bool::from_param(key, value)?,
            "policy" => {
                return Err(ConfigError::invalid(
                    key,
                    value,
                    "is a policy file name (policy = \"FILE\" from `aqmlab paqman solve`)",
                ))
            }
            _ => {
                return Err(ConfigError::UnknownParam {
                    aqm: Self::AQM.into(),
                    key: key.into(),
                    known: Self::NAMES.join(", "),
                })
            }
        }
        Ok(())
    }

    fn get_param(&self, key: &str) -> Option<f64> {
        match key {
            "mix" => Some(self.mix),
            "alpha" => Some(self.alpha),
            "aimd_moves" => Some(self.aimd_moves.to_param()),
            "ecn" => Some(self.ecn.to_param()),
            _ => None,
        }
    }

    fn describe() -> Vec<ParamInfo> {
        let d = Self::default();
        vec![
            ParamInfo {
                name: "policy",
                unit: "file",
                default: f64::NAN,
                doc: "Policy file written by `aqmlab paqman solve` (required).",
            },
            ParamInfo {
                name: "mix",
                unit: "probability",
                default: d.mix,
                doc: "Mass moved to each neighbouring rate index per arrival (estimator noise).",
            },
            ParamInfo {
                name: "alpha",
                unit: "dimensionless",
                default: d.alpha,
                doc: "Gamma shape of the estimator's likelihood; 0 = the policy's gamma_shape.",
            },
            ParamInfo {
                name: "aimd_moves",
                unit: "bool",
                default: d.aimd_moves.to_param(),
                doc: "Move the rate estimate by the policy's AIMD map after each decision.",
            },
            ParamInfo {
                name: "ecn",
                unit: "bool",
                default: d.ecn.to_param(),
                doc: "Mark CE instead of dropping ECN-capable packets.",
            },
        ]
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let Some(p) = &self.policy else {
            return Err(ConfigError::InvalidText {
                key: "policy".into(),
                text: String::new(),
                reason: "required: a policy file from `aqmlab paqman solve` (policy = \"FILE\")"
                    .into(),
            });
        };
        p.check()?;
        ensure(
            (0.0..0.5).contains(&self.mix),
            "mix",
            self.mix,
            "must be in [0, 0.5)",
        )?;
        ensure(
            self.alpha.is_finite() && self.alpha >= 0.0,
            "alpha",
            self.alpha,
            "must be >= 0 (0 = the policy's gamma_shape)",
        )
    }
}

/// PAQMAN state: the table as bits, the rate posterior and the decision epoch.
#[derive(Debug, Clone)]
pub struct Paqman {
    cfg: PaqmanConfig,
    /// `drop[(r - 1) * width + q]`.
    drop: Vec<bool>,
    width: usize,
    rows: usize,
    /// `α log λ_i` and `λ_i` per index (i = 0 is rate index 1).
    log_lam: Vec<f64>,
    lam: Vec<f64>,
    /// Log-posterior over indices (max 0) and a scratch vector of the same size.
    logp: Vec<f64>,
    scratch: Vec<f64>,
    after_admit: Vec<u32>,
    /// After a drop: index `after_drop` with probability `1 - drop_w`, else `drop_hi`.
    after_drop: Vec<u32>,
    drop_hi: Vec<u32>,
    drop_w: Vec<f64>,
    rtt: Option<Duration>,
    last_arrival: Option<Instant>,
    last_decision: Option<Instant>,
    /// End of the transmission of the last dequeued packet.
    busy_until: Instant,
    link: BitsPerSec,
    activations: u64,
    /// The learned network and per-flow state of a `multiflow` policy.
    mf: Option<Box<MultiflowRuntime>>,
}

impl Paqman {
    fn policy(&self) -> &PaqmanPolicy {
        self.cfg
            .policy
            .as_deref()
            .expect("validated config has a policy")
    }

    /// Rebuilds the tables from the config (keeps nothing of the old estimate).
    fn load(&mut self) {
        let p = self
            .cfg
            .policy
            .clone()
            .expect("validated config has a policy");
        let g = &p.rate_grid;
        let alpha = if self.cfg.alpha > 0.0 {
            self.cfg.alpha
        } else {
            p.gamma_shape
        };
        self.rows = g.max_index as usize;
        self.width = p.queue.max as usize + 1;
        self.drop = p
            .table
            .rows
            .iter()
            .flat_map(|r| r.bytes().map(|b| b == b'1'))
            .collect();
        self.lam = (1..=self.rows)
            .map(|i| alpha * i as f64 * g.unit_pps)
            .collect();
        self.log_lam = self.lam.iter().map(|l| alpha * l.ln()).collect();
        let uniform = -(self.rows as f64).ln();
        self.logp = vec![uniform; self.rows];
        self.scratch = vec![0.0; self.rows];
        self.after_admit = (1..=g.max_index)
            .map(|i| (i + g.admit_step).min(g.max_index))
            .collect();
        self.after_drop = (1..=g.max_index)
            .map(|i| ((i as f64 * g.drop_factor).floor() as u32).max(1))
            .collect();
        // The split projection (as RateGrid.drop_split): mass x - floor(x) on ceil(x).
        let split = g.drop_projection == "split";
        (self.drop_hi, self.drop_w) = (1..=g.max_index)
            .zip(&self.after_drop)
            .map(|(i, &lo)| {
                let x = i as f64 * g.drop_factor;
                let hi = (x.ceil() as u32).clamp(1, g.max_index);
                if split && x.floor() >= 1.0 && hi > lo {
                    (hi, x - x.floor())
                } else {
                    (lo, 0.0)
                }
            })
            .unzip();
        self.rtt = p
            .has_rtt()
            .then(|| Duration::from_secs_f64(p.rtt_s.max(0.0)));
        self.mf = p
            .multiflow
            .as_ref()
            .map(|m| Box::new(MultiflowRuntime::new(m, g.unit_pps, g.drop_factor)));
    }

    /// Bayes update with one interarrival time of `x` seconds.
    pub fn observe(&mut self, x: f64) {
        let mut max = f64::NEG_INFINITY;
        for i in 0..self.rows {
            let v = self.logp[i] + self.log_lam[i] - self.lam[i] * x;
            self.logp[i] = v;
            max = max.max(v);
        }
        if max.is_finite() {
            for v in &mut self.logp {
                *v -= max;
            }
        }
    }

    /// Moves the posterior by the AIMD map of `action` (`None`: no move), then mixes.
    pub fn act(&mut self, action: Option<bool>) {
        let moved = action.is_some() && self.cfg.aimd_moves;
        let mix = self.cfg.mix;
        if !moved && mix == 0.0 {
            return;
        }
        let n = self.rows;
        for i in 0..n {
            self.scratch[i] = self.logp[i].exp();
        }
        if moved {
            // logp serves as the buffer of the moved mass, then the two swap roles.
            self.logp.fill(0.0);
            if action == Some(true) {
                for i in 0..n {
                    let (w, hi) = (self.drop_w[i], self.drop_hi[i] as usize - 1);
                    self.logp[self.after_drop[i] as usize - 1] += (1.0 - w) * self.scratch[i];
                    self.logp[hi] += w * self.scratch[i];
                }
            } else {
                for (&to, &w) in self.after_admit.iter().zip(&self.scratch) {
                    self.logp[to as usize - 1] += w;
                }
            }
            std::mem::swap(&mut self.logp, &mut self.scratch);
        }
        let p = &mut self.scratch;
        if mix > 0.0 && n > 1 {
            // (1 - 2 mix) p_i + mix p_{i-1} + mix p_{i+1}; an end keeps the share it would
            // give to its missing neighbour (as RateFilter.act).
            let (first, last) = (p[0], p[n - 1]);
            let mut prev = first;
            for i in 0..n {
                let cur = p[i];
                let right = if i + 1 < n { p[i + 1] } else { last };
                p[i] = (1.0 - 2.0 * mix) * cur + mix * prev + mix * right;
                prev = cur;
            }
        }
        let sum: f64 = p.iter().sum();
        for (l, w) in self.logp.iter_mut().zip(p.iter()) {
            *l = (w / sum).ln();
        }
    }

    /// Posterior mode as a 1-based rate index.
    pub fn index(&self) -> u32 {
        let mut best = 0;
        for i in 1..self.rows {
            if self.logp[i] > self.logp[best] {
                best = i;
            }
        }
        best as u32 + 1
    }

    /// Posterior mean rate, packets/s.
    pub fn rate_estimate_pps(&self) -> f64 {
        let unit = self.policy().rate_grid.unit_pps;
        let (mut s, mut m) = (0.0, 0.0);
        for i in 0..self.rows {
            let w = self.logp[i].exp();
            s += w;
            m += w * (i + 1) as f64 * unit;
        }
        m / s
    }

    /// The table's action for rate index `r` (1-based) and queue `q`: true = drop. A queue at
    /// or beyond the table's buffer is a drop.
    pub fn lookup(&self, r: u32, q: usize) -> bool {
        if q + 1 >= self.width {
            return true;
        }
        let r = (r.clamp(1, self.rows as u32) - 1) as usize;
        self.drop[r * self.width + q]
    }
}

impl Algorithm for Paqman {
    type Config = PaqmanConfig;

    fn build(cfg: &PaqmanConfig, env: &Env) -> Self {
        let mut a = Paqman {
            cfg: cfg.clone(),
            drop: Vec::new(),
            width: 0,
            rows: 0,
            log_lam: Vec::new(),
            lam: Vec::new(),
            logp: Vec::new(),
            scratch: Vec::new(),
            after_admit: Vec::new(),
            after_drop: Vec::new(),
            drop_hi: Vec::new(),
            drop_w: Vec::new(),
            rtt: None,
            last_arrival: None,
            last_decision: None,
            busy_until: Instant::ZERO,
            link: env.link.rate,
            activations: 0,
            mf: None,
        };
        a.load();
        a
    }
    fn cfg(&self) -> &PaqmanConfig {
        &self.cfg
    }
    fn reconfigure(&mut self, cfg: PaqmanConfig) {
        let same_policy = cfg.policy == self.cfg.policy;
        self.cfg = cfg;
        if !same_policy {
            self.load();
        }
    }
    fn ecn(&self) -> bool {
        self.cfg.ecn
    }

    fn enqueue(&mut self, now: Instant, pkt: &Arrival, q: &QueueView, _rng: &mut Rng) -> Verdict {
        if let Some(mf) = &mut self.mf {
            let in_service = usize::from(now < self.busy_until);
            let buffer = self.width.saturating_sub(1);
            let q = q.len_pkts as usize + in_service;
            return match mf.arrival(now, pkt.flow_hash, q, buffer) {
                None => Verdict::Accept,
                Some(drop) => {
                    self.activations += 1;
                    if drop {
                        Verdict::Signal(DropReason::Early)
                    } else {
                        Verdict::Accept
                    }
                }
            };
        }
        if let Some(t) = self.last_arrival {
            self.observe((now - t).as_secs_f64());
        }
        self.last_arrival = Some(now);
        let epoch = match (self.rtt, self.last_decision) {
            (Some(rtt), Some(t)) => now >= t + rtt,
            _ => true,
        };
        if !epoch {
            // Inside the RTT window: admitted (the wrapper's limit still applies).
            self.act(None);
            return Verdict::Accept;
        }
        self.activations += 1;
        self.last_decision = Some(now);
        let in_service = usize::from(now < self.busy_until);
        let drop = self.lookup(self.index(), q.len_pkts as usize + in_service);
        self.act(Some(drop));
        if drop {
            Verdict::Signal(DropReason::Early)
        } else {
            Verdict::Accept
        }
    }

    fn on_dequeued(&mut self, now: Instant, size: u32, _sojourn: Duration, _q: &QueueView) {
        self.busy_until = now + self.link.tx_time(size as u64);
    }

    fn activations(&self) -> u64 {
        self.activations
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testutil::{arrival, env, view};
    use crate::QueueLimit;

    /// A small threshold policy: 4 rate indices, B = 5; index r drops from queue 5 - r on
    /// (r = 1: q >= 4; r = 4: q >= 1). Grid unit 100 pkt/s, Reno's AIMD map.
    pub(crate) fn threshold_policy(model: &str, rtt_s: f64) -> PaqmanPolicy {
        let rows = (1..=4)
            .map(|r| {
                (0..=5)
                    .map(|q| if q >= 5 - r { '1' } else { '0' })
                    .collect()
            })
            .collect();
        PaqmanPolicy {
            format: POLICY_FORMAT.into(),
            version: 1,
            model: model.into(),
            rtt_s,
            gamma_shape: 1.0,
            service_rate_pps: 250.0,
            queue: PolicyQueue { min: 0, max: 5 },
            rate_grid: PolicyGrid {
                unit_pps: 100.0,
                min_index: 1,
                max_index: 4,
                admit_step: 1,
                drop_factor: 0.5,
                drop_projection: "floor".into(),
            },
            table: PolicyTable { rows },
            multiflow: None,
        }
    }

    pub(crate) fn config(model: &str, rtt_s: f64) -> PaqmanConfig {
        PaqmanConfig {
            policy: Some(Arc::new(threshold_policy(model, rtt_s))),
            ..Default::default()
        }
    }

    fn build(cfg: PaqmanConfig) -> Paqman {
        cfg.validate().unwrap();
        Paqman::build(&cfg, &env(QueueLimit::Packets(100), 10))
    }

    /// A `multiflow` policy read from JSON drives the AQM per flow: flow 7's first packet on
    /// an empty queue is admitted, its next packet inside its 1-ms window is admitted without
    /// a decision, flow 8's first packet on a queue of 20 (feature 5 > 1) is dropped.
    #[test]
    fn multiflow_policy_decides_per_flow() {
        let mut p = threshold_policy("multiflow", 0.0);
        p.table.rows.clear();
        p.multiflow = Some(crate::paqman_multiflow::tests::spec());
        let text = serde_json::to_string(&p).unwrap();
        let back: PaqmanPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p);
        p.queue.max = 100;
        let cfg = PaqmanConfig {
            policy: Some(Arc::new(p.clone())),
            ..Default::default()
        };
        let mut a = build(cfg);
        let mut rng = Rng::new(1);
        let v = |n| view(n, 1500 * n as u64);
        assert_eq!(
            a.enqueue(Instant(0), &arrival(1500, 7, false), &v(0), &mut rng),
            Verdict::Accept
        );
        assert_eq!(
            a.enqueue(Instant(500_000), &arrival(1500, 7, false), &v(30), &mut rng),
            Verdict::Accept
        );
        assert_eq!(
            a.enqueue(Instant(600_000), &arrival(1500, 8, false), &v(20), &mut rng),
            Verdict::Signal(DropReason::Early)
        );
        assert_eq!(a.activations(), 2);
        // Without its section a multiflow policy is refused, naming the key.
        p.multiflow = None;
        let e = p.check().unwrap_err().to_string();
        assert!(e.contains("policy.multiflow"), "{e}");
    }

    #[test]
    fn lookup_reads_rows_by_rate_and_queue() {
        let a = build(config("negligible_rtt", 0.0));
        assert!(!a.lookup(1, 3) && a.lookup(1, 4));
        assert!(!a.lookup(4, 0) && a.lookup(4, 1));
        // Beyond the table's buffer: drop; indices clamp to the grid.
        assert!(a.lookup(1, 5) && a.lookup(1, 50));
        assert!(a.lookup(9, 1) && !a.lookup(0, 3));
    }

    /// Hand-computed filter step (alpha = 1, unit 100 pkt/s, mix 0, no AIMD moves): from the
    /// uniform prior, one interarrival of x = 5 ms adds log(100 i) - 100 i x, so the posterior
    /// is proportional to w_i = i e^{-0.5 i}, i = 1..4: 0.60653, 0.73576, 0.66939, 0.54134.
    /// Mode i = 2; mean = 100 sum(i w_i) / sum(w_i) = 100 * 6.25158 / 2.55302 = 244.87 pkt/s.
    #[test]
    fn filter_step_hand_computed() {
        let mut a = build(PaqmanConfig {
            mix: 0.0,
            aimd_moves: false,
            ..config("negligible_rtt", 0.0)
        });
        a.observe(0.005);
        assert_eq!(a.index(), 2);
        assert!(
            (a.rate_estimate_pps() - 244.87).abs() < 0.01,
            "{}",
            a.rate_estimate_pps()
        );
    }

    /// AIMD moves: mass at index 4 goes to 2 after a drop (floor(4/2)), mass at 3 to 4 after an
    /// admit. Mixing 0.1 from a point mass at 2 gives 0.1 / 0.8 / 0.1 on 1, 2, 3.
    #[test]
    fn aimd_moves_and_mix() {
        let mut a = build(PaqmanConfig {
            mix: 0.0,
            ..config("negligible_rtt", 0.0)
        });
        a.logp = vec![f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0];
        a.act(Some(true));
        assert_eq!(a.index(), 2);
        a.act(Some(false));
        assert_eq!(a.index(), 3);
        a.act(Some(false));
        a.act(Some(false)); // clamps at max_index
        assert_eq!(a.index(), 4);
        let mut b = build(PaqmanConfig {
            mix: 0.1,
            aimd_moves: false,
            ..config("negligible_rtt", 0.0)
        });
        b.logp = vec![f64::NEG_INFINITY, 0.0, f64::NEG_INFINITY, f64::NEG_INFINITY];
        b.act(None);
        let p: Vec<f64> = b.logp.iter().map(|l| l.exp()).collect();
        for (got, want) in p.iter().zip([0.1, 0.8, 0.1, 0.0]) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
    }

    /// Split projection: a point mass at index 3 goes half to 1 and half to 2 after a drop
    /// (3 / 2 = 1.5); at index 4 it goes wholly to 2. An unknown projection is a named error.
    #[test]
    fn split_drop_projection_moves_mass_to_floor_and_ceil() {
        let mut pol = threshold_policy("negligible_rtt", 0.0);
        pol.rate_grid.drop_projection = "split".into();
        let cfg = PaqmanConfig {
            mix: 0.0,
            policy: Some(Arc::new(pol.clone())),
            ..Default::default()
        };
        let mut a = build(cfg.clone());
        a.logp = vec![f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0, f64::NEG_INFINITY];
        a.act(Some(true));
        let p: Vec<f64> = a.logp.iter().map(|l| l.exp()).collect();
        for (got, want) in p.iter().zip([0.5, 0.5, 0.0, 0.0]) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
        let mut b = build(cfg);
        b.logp = vec![f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0];
        b.act(Some(true));
        assert!((b.logp[1].exp() - 1.0).abs() < 1e-12);
        pol.rate_grid.drop_projection = "ceil".into();
        let e = pol.check().unwrap_err().to_string();
        assert!(e.contains("policy.rate_grid.drop_projection"), "{e}");
    }

    /// Decisions: with a point mass at index 4 (drop from q >= 1), an arrival to an empty idle
    /// queue is admitted; one that finds one packet waiting is dropped. The packet in service
    /// counts: after a dequeue (1000 B at 10 Mb/s = 0.8 ms of transmission) an arrival to an
    /// empty queue within 0.8 ms sees q = 1 and is dropped.
    #[test]
    fn decisions_follow_the_table() {
        let mut a = build(PaqmanConfig {
            mix: 0.0,
            aimd_moves: false,
            ..config("negligible_rtt", 0.0)
        });
        a.logp = vec![f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0];
        let mut rng = Rng::new(1);
        let pkt = arrival(1000, 0, false);
        // Interarrivals huge relative to the grid would move the mode; keep the point mass
        // (-inf stays -inf) and check the table decisions only.
        let v = a.enqueue(Instant(0), &pkt, &view(0, 0), &mut rng);
        assert_eq!(v, Verdict::Accept);
        let v = a.enqueue(Instant(1_000), &pkt, &view(1, 1000), &mut rng);
        assert_eq!(v, Verdict::Signal(DropReason::Early));
        a.on_dequeued(Instant(10_000), 1000, Duration::ZERO, &view(0, 0));
        let v = a.enqueue(Instant(500_000), &pkt, &view(0, 0), &mut rng);
        assert_eq!(v, Verdict::Signal(DropReason::Early));
        let v = a.enqueue(Instant(900_000), &pkt, &view(0, 0), &mut rng);
        assert_eq!(v, Verdict::Accept);
        assert_eq!(a.activations(), 4);
    }

    /// The rtt model decides at the first arrival at least rtt_s after the last decision and
    /// admits the arrivals in between, whatever the table says.
    #[test]
    fn rtt_model_decides_once_per_rtt() {
        let mut a = build(PaqmanConfig {
            mix: 0.0,
            aimd_moves: false,
            ..config("rtt", 0.010)
        });
        a.logp = vec![f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0];
        let mut rng = Rng::new(1);
        let pkt = arrival(1000, 0, false);
        let full = view(4, 4000);
        let ms = |m: u64| Instant(m * 1_000_000);
        assert_eq!(
            a.enqueue(ms(0), &pkt, &full, &mut rng),
            Verdict::Signal(DropReason::Early)
        );
        for t in [1, 5, 9] {
            assert_eq!(a.enqueue(ms(t), &pkt, &full, &mut rng), Verdict::Accept);
        }
        assert_eq!(
            a.enqueue(ms(10), &pkt, &full, &mut rng),
            Verdict::Signal(DropReason::Early)
        );
        assert_eq!(a.activations(), 2);
    }

    #[test]
    fn bad_policies_are_named() {
        let mut p = threshold_policy("negligible_rtt", 0.0);
        p.table.rows[2] = "0102".into();
        let e = PaqmanConfig {
            policy: Some(Arc::new(p)),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("policy.table.rows[2]"), "{e}");
        let mut p = threshold_policy("negligible_rtt", 0.0);
        p.format = "other".into();
        let e = PaqmanConfig {
            policy: Some(Arc::new(p)),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("policy.format"), "{e}");
        let e = PaqmanConfig::default().validate().unwrap_err();
        assert!(e.to_string().contains("policy"), "{e}");
    }
}
