//! PAQMAN's multi-flow policy at packet level (Kar, Alt, Koeppl & Rizk, arXiv 2202.10352,
//! §V-B; docs/paqman.md, "Several flows: the learned policy"; docs/paqman_policy_format.md).
//!
//! The paper learns Q-values of its multi-flow SMDP (state: queue, rate vector, age vector,
//! deciding flow) from simulated trajectories with a DQN and acts greedily. `aqmlab.mdp.dqn`
//! trains a small multilayer perceptron (ReLU hidden layers, two linear outputs: the Q-values of
//! admit and drop) and writes its weights into the policy file (`model = "multiflow"`, section
//! `multiflow`). This module evaluates that network per decision, without allocation: the
//! buffers are sized when the policy is loaded.
//!
//! Run-time state per flow (a *slot*; the policy lists one RTT per slot, and flows take the
//! slots in the order of their first packet, since the paper assumes the switch knows the flows'
//! RTTs (§V-B) and nothing else identifies them here; a flow beyond the last slot is admitted
//! without a decision, the hard limit still applies):
//!
//! * decision epochs: the flow's first packet, then its first packet at least its RTT after its
//!   previous decision (§V-B); the packets in between are admitted;
//! * rate: at each of its decisions the flow's packets since its previous decision over the
//!   time since then (the current packet included), smoothed by an exponential average with
//!   gain `rate_gain` (ours), and moved by the model's AIMD map of the flow's last action
//!   (admit: plus one grid unit, drop: times the grid's `drop_factor`), the model's
//!   assumption that the action sets the rate of the next window;
//! * age: time since the flow's last decision.
//!
//! The network's input (the same as `aqmlab.mdp.dqn.dqn_features`, M flows, `1 + 3 M`
//! numbers): `min(q / queue_scale, 10)`; each flow's rate over `rate_scale_pps`; each flow's
//! share of its RTT window still to come, `clamp(R_j - age_j, 0, R_j) / R_j` (1 for the
//! deciding flow, which starts a new window; 0 before a flow's first decision); a one-hot of
//! the deciding flow. Drop iff the drop output exceeds the admit output.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::time::{Duration, Instant};

/// Largest queue feature (queues beyond `10 queue_scale` look alike to the network).
pub const QUEUE_FEATURE_MAX: f64 = 10.0;
/// Largest number of flows (slots) a policy may have.
pub const MAX_FLOWS: usize = 64;
/// Largest width of a layer.
pub const MAX_WIDTH: usize = 1024;

/// One dense layer: `out = weights · in + bias` (ReLU after every layer but the last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// One row per output, one column per input.
    pub weights: Vec<Vec<f64>>,
    /// One per output.
    pub bias: Vec<f64>,
}

/// The `multiflow` section of a policy file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiflowSpec {
    /// RTT of each slot, seconds (flows take the slots in the order of their first packet).
    pub rtts_s: Vec<f64>,
    /// Queue (packets) that the queue feature divides by (the target delay times μ).
    pub queue_scale: f64,
    /// Rate (packets/s) that the rate features divide by (μ).
    pub rate_scale_pps: f64,
    /// Gain of the exponential average of each flow's window rate (ours).
    pub rate_gain: f64,
    /// The network, input layer first; the last has two outputs (admit, drop).
    pub layers: Vec<Layer>,
}

impl MultiflowSpec {
    /// Number of network inputs for `M` flows.
    pub fn inputs(&self) -> usize {
        1 + 3 * self.rtts_s.len()
    }

    /// Checks the section; errors name the policy key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, text: String, reason: &str| ConfigError::InvalidText {
            key: format!("policy.multiflow.{key}"),
            text,
            reason: reason.to_string(),
        };
        let m = self.rtts_s.len();
        if !(1..=MAX_FLOWS).contains(&m) {
            return Err(bad(
                "rtts_s",
                format!("{m} flows"),
                &format!("must list 1..{MAX_FLOWS} RTTs"),
            ));
        }
        if let Some(r) = self.rtts_s.iter().find(|r| !(r.is_finite() && **r >= 0.0)) {
            return Err(bad("rtts_s", r.to_string(), "every RTT must be >= 0"));
        }
        for (k, v) in [
            ("queue_scale", self.queue_scale),
            ("rate_scale_pps", self.rate_scale_pps),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(k, v.to_string(), "must be > 0"));
            }
        }
        if !(self.rate_gain > 0.0 && self.rate_gain <= 1.0) {
            return Err(bad(
                "rate_gain",
                self.rate_gain.to_string(),
                "must be in (0, 1]",
            ));
        }
        if self.layers.is_empty() {
            return Err(bad("layers", "[]".into(), "needs at least one layer"));
        }
        let mut width = self.inputs();
        for (i, l) in self.layers.iter().enumerate() {
            let out = l.bias.len();
            if !(1..=MAX_WIDTH).contains(&out) || l.weights.len() != out {
                return Err(bad(
                    &format!("layers[{i}]"),
                    format!("{} rows, {out} biases", l.weights.len()),
                    &format!("needs one weight row per bias, 1..{MAX_WIDTH}"),
                ));
            }
            if let Some(row) = l.weights.iter().find(|r| r.len() != width) {
                return Err(bad(
                    &format!("layers[{i}].weights"),
                    format!("a row of {} columns", row.len()),
                    &format!("every row needs {width} columns (the layer's inputs)"),
                ));
            }
            let finite = l.bias.iter().chain(l.weights.iter().flatten());
            if let Some(v) = finite.copied().find(|v| !v.is_finite()) {
                return Err(bad(
                    &format!("layers[{i}]"),
                    v.to_string(),
                    "weights and biases must be finite",
                ));
            }
            width = out;
        }
        if width != 2 {
            return Err(bad(
                "layers",
                format!("{width} outputs"),
                "the last layer needs 2 outputs (admit, drop)",
            ));
        }
        Ok(())
    }

    /// Number of weights and biases.
    pub fn parameters(&self) -> usize {
        self.layers
            .iter()
            .map(|l| l.bias.len() * (1 + l.weights.first().map_or(0, Vec::len)))
            .sum()
    }
}

/// The network and the per-flow state, all buffers sized at load.
#[derive(Debug, Clone)]
pub struct MultiflowRuntime {
    /// Per layer: (inputs, outputs, offset into `params`); weights row-major, then biases.
    dims: Vec<(usize, usize, usize)>,
    params: Vec<f64>,
    a: Vec<f64>,
    b: Vec<f64>,
    queue_scale: f64,
    rate_scale: f64,
    gain: f64,
    unit_pps: f64,
    drop_factor: f64,
    rtt: Vec<Duration>,
    /// Flow hash of each slot taken, in the order of first packets.
    hashes: Vec<u64>,
    last: Vec<Option<Instant>>,
    count: Vec<u32>,
    /// Smoothed window rate (packets/s) and the rate after the last action's AIMD move.
    smooth: Vec<f64>,
    rate: Vec<f64>,
    last_drop: Vec<Option<bool>>,
}

impl MultiflowRuntime {
    /// Builds the runtime of a checked section; `unit_pps` and `drop_factor` are the rate
    /// grid's (the model's AIMD map).
    pub fn new(spec: &MultiflowSpec, unit_pps: f64, drop_factor: f64) -> Self {
        let mut dims = Vec::with_capacity(spec.layers.len());
        let mut params = Vec::with_capacity(spec.parameters());
        let mut widest = spec.inputs();
        for l in &spec.layers {
            let (inp, out) = (l.weights[0].len(), l.bias.len());
            dims.push((inp, out, params.len()));
            params.extend(l.weights.iter().flatten());
            params.extend(&l.bias);
            widest = widest.max(out);
        }
        let m = spec.rtts_s.len();
        MultiflowRuntime {
            dims,
            params,
            a: vec![0.0; widest],
            b: vec![0.0; widest],
            queue_scale: spec.queue_scale,
            rate_scale: spec.rate_scale_pps,
            gain: spec.rate_gain,
            unit_pps,
            drop_factor,
            rtt: spec
                .rtts_s
                .iter()
                .map(|&r| Duration::from_secs_f64(r))
                .collect(),
            hashes: Vec::with_capacity(m),
            last: vec![None; m],
            count: vec![0; m],
            smooth: vec![0.0; m],
            rate: vec![0.0; m],
            last_drop: vec![None; m],
        }
    }

    /// The network's Q-values `(admit, drop)` for the input now in the first buffer.
    fn forward(&mut self) -> (f64, f64) {
        let n = self.dims.len();
        for (k, &(inp, out, off)) in self.dims.iter().enumerate() {
            let w = &self.params[off..off + inp * out];
            let bias = &self.params[off + inp * out..off + inp * out + out];
            for o in 0..out {
                let row = &w[o * inp..(o + 1) * inp];
                let mut s = bias[o];
                for (x, y) in row.iter().zip(&self.a[..inp]) {
                    s += x * y;
                }
                self.b[o] = if k + 1 < n { s.max(0.0) } else { s };
            }
            std::mem::swap(&mut self.a, &mut self.b);
        }
        (self.a[0], self.a[1])
    }

    /// Q-values `(admit, drop)` of a state given directly (tests, cross-checks with Python):
    /// `q` packets, per-flow `rates` (packets/s) and `remaining` window shares, deciding `flow`.
    pub fn q_values(
        &mut self,
        q: usize,
        rates: &[f64],
        remaining: &[f64],
        flow: usize,
    ) -> (f64, f64) {
        let m = self.rtt.len();
        self.a[0] = (q as f64 / self.queue_scale).min(QUEUE_FEATURE_MAX);
        for j in 0..m {
            self.a[1 + j] = rates[j] / self.rate_scale;
            self.a[1 + m + j] = remaining[j];
            self.a[1 + 2 * m + j] = f64::from(u8::from(j == flow));
        }
        self.forward()
    }

    /// The slot of a flow, taking a free one for a new flow; `None` when all are taken.
    fn slot(&mut self, hash: u64) -> Option<usize> {
        if let Some(i) = self.hashes.iter().position(|&h| h == hash) {
            return Some(i);
        }
        if self.hashes.len() < self.rtt.len() {
            self.hashes.push(hash);
            return Some(self.hashes.len() - 1);
        }
        None
    }

    /// An arrival of flow `hash` finding `q` packets in the system: `None` outside a decision
    /// epoch (admit), else `Some(drop)`. A queue at or beyond `buffer` is a drop.
    pub fn arrival(&mut self, now: Instant, hash: u64, q: usize, buffer: usize) -> Option<bool> {
        let i = self.slot(hash)?;
        self.count[i] = self.count[i].saturating_add(1);
        if let Some(t) = self.last[i] {
            if now < t + self.rtt[i] {
                return None;
            }
            let dt = (now - t).as_secs_f64();
            if dt > 0.0 {
                let x = f64::from(self.count[i]) / dt;
                self.smooth[i] = if self.smooth[i] > 0.0 {
                    (1.0 - self.gain) * self.smooth[i] + self.gain * x
                } else {
                    x
                };
            }
            self.rate[i] = match self.last_drop[i] {
                Some(true) => self.smooth[i] * self.drop_factor,
                Some(false) => self.smooth[i] + self.unit_pps,
                None => self.smooth[i],
            };
        }
        let m = self.rtt.len();
        for j in 0..m {
            let rem = match self.last[j] {
                _ if j == i => 1.0,
                None => 0.0,
                Some(t) => {
                    let r = self.rtt[j].as_secs_f64();
                    if r > 0.0 {
                        ((r - (now - t).as_secs_f64()) / r).clamp(0.0, 1.0)
                    } else {
                        0.0
                    }
                }
            };
            self.b[j] = rem;
        }
        let drop = if q >= buffer {
            true
        } else {
            self.a[0] = (q as f64 / self.queue_scale).min(QUEUE_FEATURE_MAX);
            for j in 0..m {
                self.a[1 + j] = self.rate[j] / self.rate_scale;
                self.a[1 + m + j] = self.b[j];
                self.a[1 + 2 * m + j] = f64::from(u8::from(j == i));
            }
            let (admit, drop) = self.forward();
            drop > admit
        };
        self.last[i] = Some(now);
        self.count[i] = 0;
        self.last_drop[i] = Some(drop);
        Some(drop)
    }

    /// The rate state of slot `i` (packets/s; 0 before its second decision).
    pub fn rate_pps(&self, i: usize) -> f64 {
        self.rate.get(i).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-built network over two flows: hidden unit 0 = relu(q feature - 1), unit 1 =
    /// relu(1 - q feature); outputs admit = unit 1, drop = unit 0 (drop iff q > queue_scale).
    pub(crate) fn spec() -> MultiflowSpec {
        let inputs = 7;
        let mut w0 = vec![vec![0.0; inputs]; 2];
        w0[0][0] = 1.0;
        w0[1][0] = -1.0;
        MultiflowSpec {
            rtts_s: vec![0.001, 0.01],
            queue_scale: 4.0,
            rate_scale_pps: 800.0,
            rate_gain: 0.5,
            layers: vec![
                Layer {
                    weights: w0,
                    bias: vec![-1.0, 1.0],
                },
                Layer {
                    weights: vec![vec![0.0, 1.0], vec![1.0, 0.0]],
                    bias: vec![0.0, 0.0],
                },
            ],
        }
    }

    #[test]
    fn forward_pass_hand_computed() {
        let mut rt = MultiflowRuntime::new(&spec(), 16.0, 0.5);
        // q = 2: feature 0.5 -> hidden (0, 0.5) -> admit 0.5, drop 0.
        assert_eq!(rt.q_values(2, &[0.0, 0.0], &[1.0, 0.0], 0), (0.5, 0.0));
        // q = 12: feature 3 -> hidden (2, 0) -> admit 0, drop 2.
        assert_eq!(rt.q_values(12, &[0.0, 0.0], &[1.0, 0.0], 0), (0.0, 2.0));
        assert_eq!(spec().parameters(), 2 * 8 + 2 * 3);
    }

    #[test]
    fn decisions_once_per_rtt_per_flow_and_rates() {
        let mut rt = MultiflowRuntime::new(&spec(), 16.0, 0.5);
        let t = |us: u64| Instant(us * 1000);
        // Flow A takes slot 0 (RTT 1 ms), flow B slot 1 (RTT 10 ms); a third flow none.
        assert_eq!(rt.arrival(t(0), 0xA, 2, 100), Some(false));
        assert_eq!(rt.arrival(t(100), 0xB, 20, 100), Some(true));
        assert_eq!(rt.arrival(t(200), 0xC, 20, 100), None);
        // Inside A's window: no decision; at 1 ms: a decision.
        assert_eq!(rt.arrival(t(500), 0xA, 20, 100), None);
        assert_eq!(rt.arrival(t(1000), 0xA, 2, 100), Some(false));
        // A's window: 2 packets in 1 ms = 2000 pkt/s, moved by the admit before: +16.
        assert!((rt.rate_pps(0) - 2016.0).abs() < 1e-9, "{}", rt.rate_pps(0));
        // Next window: 1 packet in 2 ms = 500; smoothed 0.5 * 2000 + 0.5 * 500 = 1250, +16.
        assert_eq!(rt.arrival(t(3000), 0xA, 2, 100), Some(false));
        assert!((rt.rate_pps(0) - 1266.0).abs() < 1e-9, "{}", rt.rate_pps(0));
        // B's next decision after 10 ms: rate 2 packets / 10 ms = 200, halved by its drop.
        assert_eq!(rt.arrival(t(5000), 0xB, 2, 100), None);
        assert_eq!(rt.arrival(t(10_100), 0xB, 2, 100), Some(false));
        assert!((rt.rate_pps(1) - 100.0).abs() < 1e-9, "{}", rt.rate_pps(1));
        // A full buffer drops.
        assert_eq!(rt.arrival(t(20_000), 0xA, 100, 100), Some(true));
    }

    #[test]
    fn bad_sections_are_named() {
        let mut s = spec();
        s.layers[1].bias.push(0.0);
        s.layers[1].weights.push(vec![0.0, 0.0]);
        let e = s.check().unwrap_err().to_string();
        assert!(
            e.contains("policy.multiflow.layers") && e.contains("2 outputs"),
            "{e}"
        );
        let mut s = spec();
        s.layers[0].weights[1].pop();
        let e = s.check().unwrap_err().to_string();
        assert!(e.contains("layers[0].weights"), "{e}");
        let mut s = spec();
        s.rate_gain = 0.0;
        assert!(s.check().unwrap_err().to_string().contains("rate_gain"));
        let mut s = spec();
        s.rtts_s.clear();
        assert!(s.check().unwrap_err().to_string().contains("rtts_s"));
        assert!(spec().check().is_ok());
    }
}
