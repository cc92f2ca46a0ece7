"""PAQMAN's multi-flow policy learned by a DQN (PAQ §V-B; docs/paqman.md, "Several flows: the
learned policy").

Kar, Alt, Koeppl & Rizk (PAQMAN, arXiv 2202.10352, §V-B) simulate trajectories of the
multi-flow SMDP (state: queue, rate vector, age vector, deciding flow) offline, fit Q-values with
a DQN (Mnih et al., 2015) and act greedily. The paper gives neither the network nor the
training budget; ours (decisions recorded in this docstring):

* **Trajectories**: :func:`aqmlab.mdp.multiflow.simulate` (the §V-B model: Poisson flows whose
  rates change at their own decision epochs, the first arrivals at least one RTT after the
  flow's previous decision). Round 0 collects with random queue-threshold policies, later
  rounds with the current greedy policy; every round adds ``eps``-random actions.
* **Network**: a multilayer perceptron in NumPy (ReLU hidden layers, default two of 32 units,
  a dueling head of two linear outputs ``V`` and ``A`` with ``Q(admit) = V`` and
  ``Q(drop) = V + A``, folded into plain ``Q(admit)``, ``Q(drop)`` rows when exported); input
  :func:`dqn_features` (``1 + 3 M`` numbers). Without the dueling head the training was
  unstable: the actions' Q-values differ by a few per cent of their size, less than the fit's
  error (seeds 1-3 of the quick budget: reward rates 210, 415 and 12 per second against
  459 for the best queue threshold; with it 457, 444, 415).
* **Training**: DQN's experience replay and target network in their batch form (neural fitted
  Q-iteration): each iteration freezes the network as the target, computes
  ``y = reward - g tau + max_a' Q_target(s', a') - c`` over every stored transition and takes
  ``epochs`` passes of Adam over shuffled minibatches of the squared error of the taken
  action's Q-value. This is the SMDP's average-reward criterion (relative values, as
  relative value iteration for SMDPs, Tijms 2003 §7.2): ``g`` is the best reward rate seen so
  far (behaviour data or greedy evaluation), ``c`` the mean of the targets' maxima (the
  relative values' free constant). Rewards are divided by the first data's mean reward so
  that the Q-values are of order one. ``horizon_s`` instead gives the discounted criterion
  ``y = reward + exp(-tau / horizon_s) max_a' Q_target`` of
  :func:`aqmlab.mdp.multiflow.fit_q_policy`; with 0.05 s and P = 0.5 it learned nearly
  "admit all" (model reward 421 per second against 504 for the best queue threshold): a
  drop's effect on a flow's rate lasts many RTTs, longer than the horizon.
* **Restarts**: ``restarts`` trainings from consecutive seeds, the one with the best greedy
  reward rate in the model kept (some seeds stay near "admit all": P = 0.5, quick budget,
  seeds 1-3 gave 430, 567 and 506 per second in the model).
* **Selection**: after each round the greedy policy runs ``n_decisions / 2`` decisions in the
  model without exploration; the network of the best round is kept (later rounds can be
  worse: the greedy policy's own data is narrower).
* Seeded and deterministic (NumPy's ``default_rng``, no threads of our own).

The policy runs at packet level as the ``paqman`` AQM with a policy file of model
``"multiflow"`` (:meth:`DqnPolicy.to_dict`, docs/paqman_policy_format.md), whose network the
Rust core evaluates per decision (``crates/aqm/src/paqman_multiflow.rs``).

Examples
--------
>>> from aqmlab.mdp.multiflow import MultiflowConfig
>>> from aqmlab.mdp.dqn import fit_dqn_policy
>>> cfg = MultiflowConfig(service_pps=833.3, target_s=0.005, rtts_s=(0.001, 0.005))
>>> pol = fit_dqn_policy(cfg, n_decisions=2000, rounds=1, iters=3, seed=1)
>>> pol.parameters() > 0
True
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aqmlab.mdp.model import ADMIT, DROP
from aqmlab.mdp.multiflow import (
    MultiflowConfig,
    Trajectory,
    draw_drop_region,
    simulate,
    threshold_policy,
)
from aqmlab.protocol import Result

__all__ = ["QUEUE_FEATURE_MAX", "dqn_features", "Mlp", "DqnPolicy", "fit_dqn_policy", "evaluate"]

#: Largest queue feature (as the Rust runtime's ``QUEUE_FEATURE_MAX``).
QUEUE_FEATURE_MAX = 10.0
#: Gain of the packet-level runtime's per-flow rate average (ours; written to the policy file).
RATE_GAIN = 0.25


def dqn_features(cfg: MultiflowConfig, q, rates, ages, flow) -> np.ndarray:
    """Network input of decision states (rows), as the Rust runtime computes it.

    ``min(q / (d mu), 10)``; each flow's rate over ``mu``; each flow's share of its RTT window
    still to come, ``clip(R_j - age_j, 0, R_j) / R_j`` (1 for the deciding flow, 0 before a
    flow's first decision or with ``R_j = 0``); a one-hot of the deciding flow.

    Parameters
    ----------
    cfg : MultiflowConfig
        The model (service rate, target, RTTs, rate grid).
    q : array_like of int, shape (n,)
        Queue lengths (packets in the system).
    rates : array_like of int, shape (n, M)
        Rate indices (grid units ``mu / G``).
    ages : array_like, shape (n, M)
        Seconds since each flow's last decision (``inf`` before the first).
    flow : array_like of int, shape (n,)
        Deciding flow.

    Returns
    -------
    numpy.ndarray, shape (n, 1 + 3 M)
    """
    q = np.atleast_1d(np.asarray(q, dtype=float))
    rates = np.atleast_2d(np.asarray(rates, dtype=float))
    ages = np.atleast_2d(np.asarray(ages, dtype=float))
    flow = np.atleast_1d(np.asarray(flow, dtype=int))
    n, m = rates.shape
    mu = cfg.service_pps
    rtt = np.asarray(cfg.rtts_s, dtype=float)
    qf = np.minimum(q / (cfg.target_s * mu), QUEUE_FEATURE_MAX)
    lam = rates * cfg.rate_grid.unit_pps / mu
    with np.errstate(invalid="ignore", divide="ignore"):
        rem = np.where(rtt > 0, (rtt[None, :] - ages) / np.where(rtt > 0, rtt, 1.0), 0.0)
    rem = np.clip(np.nan_to_num(rem, nan=0.0, neginf=0.0, posinf=0.0), 0.0, 1.0)
    rows = np.arange(n)
    rem[rows, flow] = 1.0
    onehot = np.zeros((n, m))
    onehot[rows, flow] = 1.0
    return np.hstack([qf[:, None], lam, rem, onehot])


class Mlp:
    """A multilayer perceptron with ReLU hidden layers and a linear output layer, trained by
    Adam on the squared error of one output per sample.

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, input first, output last.
    rng : numpy.random.Generator
        Initialisation (He-normal weights, zero biases).
    """

    def __init__(self, sizes, rng: np.random.Generator):
        self.weights = [
            rng.normal(0.0, np.sqrt(2.0 / a), size=(b, a))
            for a, b in zip(sizes[:-1], sizes[1:], strict=True)
        ]
        self.biases = [np.zeros(b) for b in sizes[1:]]
        self._m = [np.zeros_like(p) for p in self._params()]
        self._v = [np.zeros_like(p) for p in self._params()]
        self._t = 0

    def _params(self):
        return [*self.weights, *self.biases]

    def copy(self) -> Mlp:
        """A frozen copy (the target network).

        Returns
        -------
        Mlp
        """
        c = object.__new__(Mlp)
        c.weights = [w.copy() for w in self.weights]
        c.biases = [b.copy() for b in self.biases]
        c._m, c._v, c._t = [], [], 0
        return c

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Outputs for inputs ``x`` (rows).

        Parameters
        ----------
        x : numpy.ndarray, shape (n, inputs)

        Returns
        -------
        numpy.ndarray, shape (n, outputs)
        """
        h = x
        last = len(self.weights) - 1
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w.T + b
            if k < last:
                h = np.maximum(h, 0.0)
        return h

    def q(self, x: np.ndarray) -> np.ndarray:
        """Q-values of the dueling head: outputs ``(V, A)`` give ``Q(admit) = V`` and
        ``Q(drop) = V + A``.

        Parameters
        ----------
        x : numpy.ndarray, shape (n, inputs)

        Returns
        -------
        numpy.ndarray, shape (n, 2)
        """
        o = self.forward(x)
        return np.stack([o[:, 0], o[:, 0] + o[:, 1]], axis=1)

    def exported(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The layers with the dueling head folded into the last one (its rows become
        ``Q(admit)`` and ``Q(drop)``), as the runtime evaluates them.

        Returns
        -------
        list of (weights, biases)
        """
        layers = [(w.copy(), b.copy()) for w, b in zip(self.weights, self.biases, strict=True)]
        w, b = layers[-1]
        layers[-1] = (np.stack([w[0], w[0] + w[1]]), np.array([b[0], b[0] + b[1]]))
        return layers

    def step(self, x: np.ndarray, out: np.ndarray, y: np.ndarray, lr: float) -> float:
        """One Adam step on ``mean((Q(x)[i, out_i] - y_i)^2)`` (:meth:`q`); returns the loss
        before it.

        Parameters
        ----------
        x : numpy.ndarray, shape (n, inputs)
        out : numpy.ndarray of int, shape (n,)
            The output each sample's error is taken on.
        y : numpy.ndarray, shape (n,)
            Targets.
        lr : float
            Learning rate.

        Returns
        -------
        float
        """
        acts = [x]
        h = x
        last = len(self.weights) - 1
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w.T + b
            if k < last:
                h = np.maximum(h, 0.0)
            acts.append(h)
        n = x.shape[0]
        o = acts[-1]
        err = o[:, 0] + o[:, 1] * (out == 1) - y
        g = np.zeros_like(o)
        g[:, 0] = 2.0 * err / n
        g[:, 1] = g[:, 0] * (out == 1)
        gw, gb = [None] * len(self.weights), [None] * len(self.weights)
        for k in range(last, -1, -1):
            gw[k] = g.T @ acts[k]
            gb[k] = g.sum(axis=0)
            if k > 0:
                g = (g @ self.weights[k]) * (acts[k] > 0)
        self._t += 1
        b1, b2, e = 0.9, 0.999, 1e-8
        for p, gp, m, v in zip(self._params(), [*gw, *gb], self._m, self._v, strict=True):
            m *= b1
            m += (1 - b1) * gp
            v *= b2
            v += (1 - b2) * gp * gp
            mh = m / (1 - b1**self._t)
            vh = v / (1 - b2**self._t)
            p -= lr * mh / (np.sqrt(vh) + e)
        return float(np.mean(err * err))

    def parameters(self) -> int:
        """Number of weights and biases.

        Returns
        -------
        int
        """
        return int(sum(p.size for p in self._params()))


@dataclass(repr=False)
class DqnPolicy(Result):
    """Greedy policy of a learned Q-network over ``(queue, rates, ages, flow)``.

    Attributes
    ----------
    cfg : MultiflowConfig
        The model it was trained on.
    net : Mlp
        The Q-network (outputs: admit, drop).
    history : list of dict
        Per round: samples, the behaviour data's reward rate, the last loss.
    train_seconds : float
        Wall-clock time of the training (simulation included).
    meta : dict
        Training settings.
    """

    cfg: MultiflowConfig
    net: Mlp
    history: list = field(default_factory=list)
    train_seconds: float = 0.0
    meta: dict = field(default_factory=dict)

    def q_values(self, q, rates, ages, flow) -> np.ndarray:
        """Q-values (scaled), shape (n, 2).

        Parameters
        ----------
        q : int or array_like
            Queue (packets).
        rates : array_like
            Rate indices, ``(M,)`` or ``(n, M)``.
        ages : array_like
            Seconds since each flow's last decision, same shape.
        flow : int or array_like
            Deciding flow.

        Returns
        -------
        numpy.ndarray, shape (n, 2)
        """
        return self.net.q(dqn_features(self.cfg, q, rates, ages, flow))

    def action(self, q: int, rates, ages, flow: int) -> int:
        """Greedy action (0 admit, 1 drop); a full buffer drops.

        Parameters
        ----------
        q : int
            Queue (packets).
        rates : array_like, shape (M,)
            Rate indices.
        ages : array_like, shape (M,)
            Seconds since each flow's last decision.
        flow : int
            Deciding flow.

        Returns
        -------
        int
        """
        if q >= self.cfg.buffer:
            return DROP
        qv = self.q_values([q], np.asarray(rates)[None], np.asarray(ages)[None], [flow])
        return int(qv[0, DROP] > qv[0, ADMIT])

    def __call__(self, q, rates, ages, flow) -> int:
        return self.action(q, rates, ages, flow)

    def parameters(self) -> int:
        """Number of weights and biases of the network.

        Returns
        -------
        int
        """
        return self.net.parameters()

    def nbytes(self) -> int:
        """Bytes of the network's numbers as the runtime holds them (8-byte floats).

        Returns
        -------
        int
        """
        return 8 * self.parameters()

    def drop_region(self, flow: int, qmax: int = 30) -> np.ndarray:
        """Drop table over (own rate index, queue ``0..qmax``), the other flows at their fair
        share with expired windows.

        Parameters
        ----------
        flow : int
            The deciding flow.
        qmax : int
            Largest queue.

        Returns
        -------
        numpy.ndarray of int8, shape (2 G, qmax + 1)
            1 = drop.
        """
        cfg = self.cfg
        g = cfg.rate_grid
        rr, qq = np.meshgrid(g.index, np.arange(qmax + 1), indexing="ij")
        n = rr.size
        rates = np.full((n, cfg.n_flows), max(1, cfg.grid // cfg.n_flows))
        rates[:, flow] = rr.ravel()
        ages = np.tile(np.asarray(cfg.rtts_s, dtype=float), (n, 1))
        ages[:, flow] = 0.0
        qv = self.q_values(qq.ravel(), rates, ages, np.full(n, flow))
        return (qv[:, DROP] > qv[:, ADMIT]).reshape(rr.shape).astype(np.int8)

    def to_dict(self, pkt_size_bytes: int = 1500) -> dict:
        """The policy file (model ``"multiflow"``, docs/paqman_policy_format.md).

        Parameters
        ----------
        pkt_size_bytes : int
            Packet size the service rate counts (for the scenario layer's rate check).

        Returns
        -------
        dict
        """
        cfg = self.cfg
        g = cfg.rate_grid
        return {
            "format": "aqmlab-paqman-policy",
            "version": 1,
            "model": "multiflow",
            "units": {"time": "s", "rate": "packets/s", "queue": "packets", "size": "bytes"},
            "service_rate_pps": cfg.service_pps,
            "pkt_size_bytes": pkt_size_bytes,
            "target_delay_s": cfg.target_s,
            "rtt_s": 0.0,
            "gamma_shape": 1.0,
            "reward": {"kind": "default", "penalty": cfg.penalty},
            "queue": {"min": 0, "max": cfg.buffer, "counts": "packets in system before arrival"},
            "rate_grid": {
                "unit_pps": g.unit_pps,
                "min_index": 1,
                "max_index": g.size,
                "admit_step": 1,
                "drop_factor": g.drop_factor,
                "drop_projection": "floor",
            },
            "table": {"rows": []},
            "multiflow": {
                "rtts_s": [float(r) for r in cfg.rtts_s],
                "queue_scale": cfg.target_s * cfg.service_pps,
                "rate_scale_pps": cfg.service_pps,
                "rate_gain": RATE_GAIN,
                "layers": [
                    {"weights": w.tolist(), "bias": b.tolist()} for w, b in self.net.exported()
                ],
            },
            "training": {
                **self.meta,
                "parameters": self.parameters(),
                "bytes": self.nbytes(),
                "train_seconds": self.train_seconds,
            },
        }

    def save(self, path, pkt_size_bytes: int = 1500) -> Path:
        """Write the policy file (JSON).

        Parameters
        ----------
        path : str or Path
            Destination.
        pkt_size_bytes : int
            Packet size the service rate counts.

        Returns
        -------
        Path
        """
        from aqmlab.mdp.policy_io import atomic_write

        path = Path(path)
        atomic_write(path, json.dumps(self.to_dict(pkt_size_bytes), allow_nan=False) + "\n")
        return path

    def _figures(self) -> dict:
        last = self.history[-1] if self.history else {}
        return {
            "flows": self.cfg.n_flows,
            "parameters": self.parameters(),
            "bytes": self.nbytes(),
            "train_seconds": self.train_seconds,
            **{k: v for k, v in last.items() if isinstance(v, int | float)},
        }

    def plot(self, ax=None, flow: int = 0, qmax: int = 30):
        """Drop region of one flow over (queue, own rate), like PAQMAN Fig. 5.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        flow : int
            The deciding flow.
        qmax : int
            Largest queue shown.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        return draw_drop_region(ax, self.drop_region(flow, qmax), self.cfg, flow, qmax, "DQN")

    def to_pandas(self):
        """Training history (one row per round).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(self.history)


def _transitions(cfg: MultiflowConfig, data: list[Trajectory]):
    x, a, r, disc, xn = [], [], [], [], []
    for tr in data:
        if len(tr.queue) < 2:
            continue
        f = dqn_features(cfg, tr.queue, tr.rates, tr.ages, tr.flow)
        x.append(f[:-1])
        xn.append(f[1:])
        a.append(tr.action[:-1])
        r.append(tr.reward[:-1])
        disc.append(tr.tau[:-1])
    return (np.vstack(x), np.concatenate(a), np.concatenate(r), np.concatenate(disc), np.vstack(xn))


def fit_dqn_policy(
    cfg: MultiflowConfig,
    n_decisions: int = 20_000,
    rounds: int = 3,
    restarts: int = 1,
    seed: int = 0,
    hidden: tuple[int, ...] = (32, 32),
    iters: int = 30,
    epochs: int = 2,
    batch: int = 256,
    lr: float = 1e-3,
    horizon_s: float | None = None,
    eps: float = 0.2,
) -> DqnPolicy:
    """Learn the multi-flow policy (PAQ §V-B) by a DQN on simulated trajectories (module
    docstring: data, network, training, selection), from ``restarts`` seeds; the run whose best
    round's greedy reward rate is highest is kept.

    Parameters
    ----------
    cfg : MultiflowConfig
        The multi-flow model.
    n_decisions : int
        Decision epochs simulated per round.
    rounds : int
        Data-collection rounds (round 0: random thresholds; later: the greedy policy).
    restarts : int
        Independent trainings, seeds ``seed, seed + 1, ...``.
    seed : int
        Seed of the first training.
    hidden : tuple of int
        Widths of the hidden layers.
    iters : int
        Target-network refreshes (fitted-Q iterations) per round.
    epochs : int
        Passes over the stored transitions per iteration.
    batch : int
        Minibatch size.
    lr : float
        Adam's learning rate.
    horizon_s : float or None
        None: the average-reward criterion (relative values, module docstring); else the
        horizon (s) of a continuous-time discount standing in for it.
    eps : float
        Exploration probability while collecting.

    Returns
    -------
    DqnPolicy
        With ``train_seconds`` the time of all restarts and ``meta["restart_rates"]``.
    """
    t0 = time.perf_counter()
    kw = dict(hidden=hidden, iters=iters, epochs=epochs, batch=batch, lr=lr, horizon_s=horizon_s)
    runs = [
        _fit_once(cfg, n_decisions, rounds, eps=eps, seed=seed + k, **kw)
        for k in range(max(1, restarts))
    ]
    rates = [max(h["greedy_reward_rate"] for h in r.history) for r in runs]
    pol = runs[int(np.argmax(rates))]
    pol.meta.update(restarts=len(runs), restart_rates=rates)
    pol.train_seconds = time.perf_counter() - t0
    return pol


def _fit_once(
    cfg: MultiflowConfig,
    n_decisions: int = 20_000,
    rounds: int = 3,
    hidden: tuple[int, ...] = (32, 32),
    iters: int = 30,
    epochs: int = 2,
    batch: int = 256,
    lr: float = 1e-3,
    horizon_s: float | None = None,
    eps: float = 0.2,
    seed: int = 0,
) -> DqnPolicy:
    """One training (:func:`fit_dqn_policy`).

    Parameters
    ----------
    cfg : MultiflowConfig
        The multi-flow model.
    n_decisions : int
        Decision epochs simulated per round.
    rounds : int
        Data-collection rounds (round 0: random thresholds; later: the greedy policy).
    hidden : tuple of int
        Widths of the hidden layers.
    iters : int
        Target-network refreshes (fitted-Q iterations) per round.
    epochs : int
        Passes over the stored transitions per iteration.
    batch : int
        Minibatch size.
    lr : float
        Adam's learning rate.
    horizon_s : float or None
        None: the average-reward criterion (relative values, module docstring); else the
        horizon (s) of a continuous-time discount standing in for it.
    eps : float
        Exploration probability while collecting.
    seed : int
        Seed of the simulation, the initialisation and the minibatches.

    Returns
    -------
    DqnPolicy
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    m = cfg.n_flows
    net = Mlp([1 + 3 * m, *hidden, 2], rng)
    qcap = int(np.ceil(3 * cfg.target_s * cfg.service_pps))
    data: list[Trajectory] = []
    pol = DqnPolicy(cfg, net)
    scale = None
    history = []
    best = None  # (greedy reward rate, network) of the best round
    gain = 0.0  # the best reward rate seen (the average-reward criterion's gain)
    for rnd in range(rounds):
        if rnd == 0:
            segs = []
            for _ in range(4):
                thr = int(rng.integers(0, qcap + 4))
                segs.append(simulate(cfg, threshold_policy(thr), n_decisions // 4, rng, eps=eps))
            behaviour = float(np.mean([s.reward_rate() for s in segs]))
            data.extend(segs)
        else:
            tr = simulate(cfg, pol, n_decisions, rng, eps=eps)
            behaviour = tr.reward_rate()
            data.append(tr)
        x, a, r, tau, xn = _transitions(cfg, data)
        gain = max(gain, behaviour)
        if horizon_s is None:  # average reward: relative values, gain from the best policy seen
            disc = np.ones_like(tau)
            if scale is None:
                scale = max(float(np.mean(r)), 1e-9)
            rs = (r - gain * tau) / scale
        else:
            disc = np.exp(-tau / horizon_s)
            if scale is None:
                scale = max(float(np.mean(r)) / max(1.0 - float(np.mean(disc)), 1e-9), 1e-9)
            rs = r / scale
        n = len(a)
        loss = float("nan")
        for _ in range(iters):
            target = net.copy()
            nxt = target.q(xn).max(axis=1)
            if horizon_s is None:
                nxt -= nxt.mean()  # relative values: no drift of the constant
            y = rs + disc * nxt
            for _ in range(epochs):
                order = rng.permutation(n)
                for s in range(0, n, batch):
                    idx = order[s : s + batch]
                    loss = net.step(x[idx], a[idx], y[idx], lr)
        pol = DqnPolicy(cfg, net)
        greedy = simulate(cfg, pol, max(n_decisions // 2, 2), rng).reward_rate()
        gain = max(gain, greedy)
        if best is None or greedy > best[0]:
            best = (greedy, net.copy())
        history.append(
            {
                "round": rnd,
                "samples": n,
                "behaviour_reward_rate": behaviour,
                "greedy_reward_rate": greedy,
                "loss": loss,
            }
        )
    meta = {
        "method": "DQN (experience replay, target network refreshed per fitted-Q iteration)",
        "hidden": list(hidden),
        "n_decisions": n_decisions,
        "rounds": rounds,
        "iters": iters,
        "epochs": epochs,
        "batch": batch,
        "lr": lr,
        "horizon_s": horizon_s,
        "eps": eps,
        "seed": seed,
        "reward_scale": scale,
    }
    meta["kept_round"] = int(np.argmax([h["greedy_reward_rate"] for h in history]))
    return DqnPolicy(cfg, best[1], history, time.perf_counter() - t0, meta)


def evaluate(cfg: MultiflowConfig, policy, n_decisions: int = 20_000, seed: int = 0) -> dict:
    """Run a policy in the multi-flow model and return its figures.

    Parameters
    ----------
    cfg : MultiflowConfig
        The model.
    policy : callable ``(q, rates, ages, flow) -> 0 | 1``
        The policy (a :class:`DqnPolicy`, a fitted-Q policy, a threshold).
    n_decisions : int
        Decision epochs simulated.
    seed : int
        Seed of the simulation.

    Returns
    -------
    dict
        ``reward_rate`` (reward per second), ``throughput_pps`` (packets delivered per second),
        ``mean_queue`` (time-averaged packets in the system), ``drop_fraction`` (of decisions).
    """
    tr = simulate(cfg, policy, n_decisions, np.random.default_rng(seed))
    return {
        "reward_rate": tr.reward_rate(),
        "throughput_pps": tr.delivered / tr.sim_seconds,
        "mean_queue": tr.queue_area / tr.sim_seconds,
        "drop_fraction": float(np.mean(tr.action == DROP)),
    }
