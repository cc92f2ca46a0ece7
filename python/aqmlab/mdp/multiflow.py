"""PAQMAN with several flows and RTTs (docs/paqman.md, PAQMAN §V-B).

Flow ``j`` is Poisson with rate ``lambda_j`` (grid index ``r_j``, unit ``mu / G``) constant between
its own decision epochs; its decision epochs are its first arrivals at least ``R_j`` after the
previous one, and its packets in between are admitted while the buffer has room. The state at a
decision is ``(Q, r, A, i)``: queue, rate vector, age vector (time since each flow's last decision,
``inf`` before the first) and the deciding flow. The action sets flow ``i``'s rate from its next
epoch (``r_i + 1`` or ``max(1, r_i // 2)``), as in the single-flow model.

Because ages are continuous the paper learns Q-values from simulated trajectories (a DQN).
Here (ours: the paper's DQN architecture and training budget are not given, PAQ §V-B and §VI)
the default is *fitted Q-iteration* with a small linear model: per action, a
ridge regression on features that are one-hot queue bins crossed with (1, own rate, total rate,
expected window arrivals still to come), plus the flow index. The SMDP's average reward is
approximated by a continuous-time discount ``exp(-beta tau)`` with a horizon ``1 / beta`` of many
inter-decision times. A DQN (torch) is not part of the default install.

Reward per decision (as :func:`aqmlab.mdp.rtt_model`, default): ``+1`` for each packet admitted
until the next decision (the decision packet and window packets) and ``-P`` for each admitted
packet whose expected delay ``(q + 1) / mu`` exceeds the target.

Examples
--------
>>> from aqmlab.mdp.multiflow import MultiflowConfig, fit_q_policy
>>> cfg = MultiflowConfig(service_pps=833.3, target_s=0.005, rtts_s=(0.001, 0.005))
>>> pol = fit_q_policy(cfg, n_decisions=3000, rounds=1, seed=1)
>>> pol.action(0, [50, 50], [0.0, 1.0], 0)      # empty queue: admit
0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from aqmlab.mdp.model import ADMIT, DROP, RateGrid
from aqmlab.protocol import Result, new_axes, plotted

__all__ = [
    "MultiflowConfig",
    "Trajectory",
    "simulate",
    "features",
    "MultiflowPolicy",
    "fit_q_policy",
    "threshold_policy",
    "draw_drop_region",
]


@dataclass(frozen=True)
class MultiflowConfig:
    """Parameters of the multi-flow model.

    Parameters
    ----------
    service_pps : float
        Exponential service rate ``mu`` (packets/s).
    target_s : float
        Delay target ``d`` (s).
    rtts_s : sequence of float
        RTT ``R_j`` per flow (s); default 1, 5, 10 ms (ours: PAQ §VI's value did not survive).
    buffer : int
        ``B`` (packets).
    grid : int
        ``G``: rate unit ``mu / G``, per-flow indices ``1..2G``.
    penalty : float
        ``P`` per admitted packet that breaches the target (default 1: a late packet earns
        nothing; the single-flow default is 0.5, chosen from the single-flow evaluation against
        CoDel, which has not been repeated for this model).
    """

    service_pps: float
    target_s: float
    rtts_s: Sequence[float] = (0.001, 0.005, 0.010)
    buffer: int = 200
    grid: int = 50
    penalty: float = 1.0

    @property
    def rate_grid(self) -> RateGrid:
        """The per-flow rate grid."""
        return RateGrid(self.service_pps / self.grid, 2 * self.grid)

    @property
    def n_flows(self) -> int:
        """Number of flows ``M``."""
        return len(self.rtts_s)


@dataclass(repr=False)
class Trajectory(Result):
    """Decision epochs of a simulated trajectory (arrays over epochs ``k``).

    ``queue``, ``rates`` (k, M), ``ages`` (k, M), ``flow``, ``action``, ``reward`` (accumulated until
    the next epoch), ``tau`` (time to the next epoch, s); ``time`` of each epoch; ``delivered``
    packets and ``sim_seconds`` for throughput.

    Attributes
    ----------
    queue : numpy.ndarray, shape (k,)
        Queue at each decision epoch (packets).
    rates, ages : numpy.ndarray, shape (k, M)
        Per-flow rate indices and seconds since each flow's last decision.
    flow, action : numpy.ndarray, shape (k,)
        The decision packet's flow and the action taken (0 admit, 1 drop).
    reward : numpy.ndarray, shape (k,)
        Reward accumulated until the next epoch.
    tau : numpy.ndarray, shape (k,)
        Time to the next epoch (s).
    time : numpy.ndarray, shape (k,)
        Time of each epoch (s).
    delivered : int
        Packets delivered.
    sim_seconds : float
        Simulated time (s).
    queue_area : float
        Integral of the queue over time (packet s).
    extra : dict
        Further records of the simulation.
    """

    queue: np.ndarray
    rates: np.ndarray
    ages: np.ndarray
    flow: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    tau: np.ndarray
    time: np.ndarray
    delivered: int = 0
    sim_seconds: float = 0.0
    queue_area: float = 0.0
    extra: dict = field(default_factory=dict)

    def reward_rate(self) -> float:
        """Long-run reward per second (total reward / elapsed time).

        Returns
        -------
        float
        """
        return float(self.reward.sum() / max(self.tau.sum(), 1e-300))

    def _figures(self) -> dict:
        return {
            "epochs": len(self.queue),
            "flows": int(self.rates.shape[1]) if self.rates.ndim == 2 else 0,
            "sim_seconds": self.sim_seconds,
            "delivered": self.delivered,
            "reward_rate": self.reward_rate(),
            "drop_fraction": float(np.mean(self.action == DROP)) if len(self.action) else 0.0,
        }

    def plot(self, ax=None):
        """Queue at each decision epoch, drops marked.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, figsize=(6, 3))
        axes.plot(self.time, self.queue, lw=0.6, label="queue")
        d = self.action == DROP
        axes.plot(self.time[d], self.queue[d], "rx", ms=3, label="drop")
        axes.set_xlabel("time (s)")
        axes.set_ylabel("queue (packets)")
        axes.legend(fontsize=8)
        return plotted(fig, ax)

    def to_pandas(self):
        """One row per decision epoch.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        df = pd.DataFrame(
            {
                "time": self.time,
                "queue": self.queue,
                "flow": self.flow,
                "action": self.action,
                "reward": self.reward,
                "tau": self.tau,
            }
        )
        for j in range(self.rates.shape[1]):
            df[f"rate{j}"] = self.rates[:, j]
            df[f"age{j}"] = self.ages[:, j]
        return df


Policy = Callable[[int, np.ndarray, np.ndarray, int], int]


def threshold_policy(threshold: int) -> Policy:
    """Drop a decision packet iff the queue is at least ``threshold`` (a baseline).

    Parameters
    ----------
    threshold : int
        Queue length (packets) from which decision packets are dropped.

    Returns
    -------
    callable
        ``(q, rates, ages, flow) -> 0 | 1``.
    """
    return lambda q, r, a, i: DROP if q >= threshold else ADMIT


def simulate(
    cfg: MultiflowConfig,
    policy: Policy,
    n_decisions: int,
    rng: np.random.Generator,
    init_rates: Sequence[int] | None = None,
    eps: float = 0.0,
) -> Trajectory:
    """Simulate the PAQ §V-B model (Gillespie over arrivals and services) under ``policy``.

    Parameters
    ----------
    cfg : MultiflowConfig
    policy : callable ``(q, rates, ages, flow) -> 0 | 1``
        Rates are grid indices, ages in seconds (``inf`` before a flow's first decision).
    n_decisions : int
        Decision epochs to record.
    rng : numpy Generator
    init_rates : sequence of int, optional
        Initial indices; default equal shares summing to the service rate (PAQ §VI, Fig. 10).
    eps : float
        Exploration: a random action with this probability.

    Returns
    -------
    Trajectory
    """
    m = cfg.n_flows
    grid = cfg.rate_grid
    mu, d, big_p, cap = cfg.service_pps, cfg.target_s, cfg.penalty, cfg.buffer
    rtt = np.asarray(cfg.rtts_s, dtype=float)
    if init_rates is None:
        init_rates = [max(1, round(cfg.grid / m))] * m
    r = np.array(init_rates, dtype=int)
    pending = r.copy()
    last = np.full(m, -np.inf)  # time of each flow's last decision
    t, q = 0.0, 0
    out = {k: [] for k in ("q", "r", "age", "i", "a", "t")}
    rewards = np.zeros(n_decisions + 1)
    k = -1  # index of the current epoch (rewards accrue to it)
    delivered, area = 0, 0.0
    unit = grid.unit_pps
    while True:
        lam = r * unit
        total = lam.sum() + (mu if q > 0 else 0.0)
        dt = rng.exponential(1.0 / total)
        area += q * dt
        t += dt
        u = rng.random() * total
        if u >= lam.sum():  # service completion
            q -= 1
            delivered += 1
            continue
        j = int(np.searchsorted(np.cumsum(lam), u, side="right"))
        if t - last[j] >= rtt[j]:  # decision epoch of flow j
            k += 1
            if k == n_decisions:
                break
            r[j] = pending[j]  # the rate set by j's previous action comes into force
            ages = t - last
            a = DROP if q >= cap else policy(q, r.copy(), ages, j)
            if eps > 0 and q < cap and rng.random() < eps:
                a = int(rng.integers(2))
            out["q"].append(q)
            out["r"].append(r.copy())
            out["age"].append(ages)
            out["i"].append(j)
            out["a"].append(a)
            out["t"].append(t)
            if a == ADMIT:
                rewards[k] += 1.0 - (big_p if (q + 1) / mu > d else 0.0)
                q += 1
            pending[j] = grid.after_admit(r[j]) if a == ADMIT else grid.after_drop(r[j])
            last[j] = t
        elif q < cap and k >= 0:  # window packet: admitted if there is room
            rewards[k] += 1.0 - (big_p if (q + 1) / mu > d else 0.0)
            q += 1
        elif q < cap:
            q += 1
    times = np.asarray(out["t"])
    tau = np.diff(np.append(times, t))
    return Trajectory(
        queue=np.asarray(out["q"]),
        rates=np.asarray(out["r"]),
        ages=np.asarray(out["age"]),
        flow=np.asarray(out["i"]),
        action=np.asarray(out["a"]),
        reward=rewards[:n_decisions],
        tau=tau,
        time=times,
        delivered=delivered,
        sim_seconds=t,
        queue_area=area,
    )


def features(
    cfg: MultiflowConfig, q: np.ndarray, rates: np.ndarray, ages: np.ndarray, flow: np.ndarray
) -> np.ndarray:
    """Feature matrix of decision states (rows) for the linear Q-model.

    One-hot queue bins ``0..qcap`` (``qcap = ceil(3 d mu)``, last bin = "at least qcap") crossed
    with ``[1, own rate / mu, total rate / mu, expected window arrivals still to come / 10]``,
    then a one-hot flow index.

    Parameters
    ----------
    cfg : MultiflowConfig
    q : ndarray of int, shape (n,)
        Queue lengths.
    rates : ndarray of int, shape (n, M)
        Rate indices.
    ages : ndarray, shape (n, M)
        Ages (s), ``inf`` before a flow's first decision.
    flow : ndarray of int, shape (n,)
        Deciding flow.

    Returns
    -------
    ndarray, shape (n, n_features)
    """
    q = np.atleast_1d(q)
    rates = np.atleast_2d(rates)
    ages = np.atleast_2d(ages)
    flow = np.atleast_1d(flow)
    n = q.size
    mu, unit = cfg.service_pps, cfg.rate_grid.unit_pps
    qcap = int(np.ceil(3 * cfg.target_s * mu))
    rtt = np.asarray(cfg.rtts_s, dtype=float)
    lam = rates * unit
    own = lam[np.arange(n), flow] / mu
    tot = lam.sum(axis=1) / mu
    remaining = np.clip(rtt[None, :] - np.nan_to_num(ages, posinf=1e9), 0, None)
    remaining[np.arange(n), flow] = rtt[flow]  # the deciding flow starts a new window
    window = (lam * remaining).sum(axis=1) / 10.0
    cont = np.stack([np.ones(n), own, tot, window], axis=1)  # (n, 4)
    onehot = np.zeros((n, qcap + 1))
    onehot[np.arange(n), np.minimum(q, qcap)] = 1.0
    crossed = (onehot[:, :, None] * cont[:, None, :]).reshape(n, -1)
    fl = np.zeros((n, cfg.n_flows))
    fl[np.arange(n), flow] = 1.0
    return np.hstack([crossed, fl])


@dataclass(repr=False)
class MultiflowPolicy(Result):
    """Greedy policy of a linear Q-function over ``(queue, rates, ages, flow)``.

    Attributes
    ----------
    cfg : MultiflowConfig
    weights : ndarray, shape (2, n_features)
        Q-model weights for admit and drop.
    history : list of dict
        Per round: reward rate of the behaviour data and of the greedy policy.
    """

    cfg: MultiflowConfig
    weights: np.ndarray
    history: list = field(default_factory=list)

    def q_values(self, q, rates, ages, flow) -> np.ndarray:
        """Q-values, shape (n, 2).

        Parameters
        ----------
        q : int or numpy.ndarray
            Queue (packets).
        rates : array_like
            Per-flow rate indices (``(M,)``, or ``(n, M)`` for many states).
        ages : array_like
            Per-flow seconds since the flow's last decision (same shape).
        flow : int or array_like
            The flow of the decision packet.

        Returns
        -------
        numpy.ndarray, shape (n, 2)
        """
        return features(self.cfg, q, rates, ages, flow) @ self.weights.T

    def action(self, q: int, rates, ages, flow: int) -> int:
        """Greedy action (0 admit, 1 drop); a full buffer drops.

        Parameters
        ----------
        q : int or numpy.ndarray
            Queue (packets).
        rates : array_like
            Per-flow rate indices (``(M,)``, or ``(n, M)`` for many states).
        ages : array_like
            Per-flow seconds since the flow's last decision (same shape).
        flow : int or array_like
            The flow of the decision packet.

        Returns
        -------
        int
            0 admit, 1 drop.
        """
        if q >= self.cfg.buffer:
            return DROP
        qv = self.q_values(np.array([q]), np.asarray(rates)[None], np.asarray(ages)[None], [flow])
        return int(qv[0, DROP] > qv[0, ADMIT])

    def __call__(self, q, rates, ages, flow) -> int:
        return self.action(q, rates, ages, flow)

    def drop_region(self, flow: int, others_rate: int | None = None, qmax: int = 20) -> np.ndarray:
        """Drop table over (own rate index, queue ``0..qmax``), other flows at ``others_rate``
        with windows expired (ages = RTT).

        Parameters
        ----------
        flow : int
            The flow whose rate varies.
        others_rate : int, optional
            The other flows' rate index (default: their fair share).
        qmax : int
            Largest queue.

        Returns
        -------
        numpy.ndarray of int8, shape (R, qmax + 1)
            1 = drop.
        """
        cfg = self.cfg
        g = cfg.rate_grid
        others_rate = others_rate or max(1, cfg.grid // cfg.n_flows)
        rr, qq = np.meshgrid(g.index, np.arange(qmax + 1), indexing="ij")
        n = rr.size
        rates = np.full((n, cfg.n_flows), others_rate)
        rates[:, flow] = rr.ravel()
        ages = np.tile(np.asarray(cfg.rtts_s, dtype=float), (n, 1))
        ages[:, flow] = 0.0
        qv = self.q_values(qq.ravel(), rates, ages, np.full(n, flow))
        return (qv[:, DROP] > qv[:, ADMIT]).reshape(rr.shape).astype(np.int8)

    def _figures(self) -> dict:
        last = self.history[-1] if self.history else {}
        return {
            "flows": self.cfg.n_flows,
            "rounds": len(self.history),
            "features": int(self.weights.shape[1]),
            **{k: v for k, v in last.items() if isinstance(v, int | float)},
        }

    def plot(self, ax=None, flow: int = 0, qmax: int = 20):
        """Drop region of one flow over (queue, own rate), like PAQMAN Fig. 5.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        flow : int
            The flow whose rate is the vertical axis.
        qmax : int
            Largest queue shown.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        return draw_drop_region(
            ax, self.drop_region(flow, qmax=qmax), self.cfg, flow, qmax, "fitted-Q"
        )

    def to_pandas(self):
        """Training history (one row per round).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(self.history)


def fit_q_policy(
    cfg: MultiflowConfig,
    n_decisions: int = 20_000,
    rounds: int = 2,
    fqi_iters: int = 40,
    horizon_s: float = 0.05,
    ridge: float = 1e-3,
    eps: float = 0.2,
    seed: int = 0,
) -> MultiflowPolicy:
    """Fitted Q-iteration on simulated trajectories of the multi-flow model (PAQ §V-B).

    Round 0 collects data with a random queue-threshold policy (threshold drawn per segment from
    ``0..ceil(3 d mu) + 3``) and ``eps``-random actions; each later round collects with the current
    greedy policy plus ``eps`` exploration and refits on all data. Each FQI sweep regresses
    ``y = reward + exp(-tau / horizon_s) max_a' Q(s', a')`` on the features, per action.

    Parameters
    ----------
    cfg : MultiflowConfig
    n_decisions : int
        Decision epochs simulated per round.
    rounds : int
        Data-collection rounds.
    fqi_iters : int
        Regression sweeps per round.
    horizon_s : float
        Discount horizon (s) standing in for the average-reward criterion.
    ridge : float
        Ridge penalty.
    eps : float
        Exploration probability.
    seed : int

    Returns
    -------
    MultiflowPolicy
    """
    rng = np.random.default_rng(seed)
    qcap = int(np.ceil(3 * cfg.target_s * cfg.service_pps))
    nfeat = features(cfg, np.array([0]), np.ones((1, cfg.n_flows), int), np.zeros((1, cfg.n_flows)), [0]).shape[1]  # fmt: skip
    w = np.zeros((2, nfeat))
    data: list[Trajectory] = []
    pol = MultiflowPolicy(cfg, w)
    for rnd in range(rounds):
        if rnd == 0:
            segs = []
            for _ in range(4):
                thr = int(rng.integers(0, qcap + 4))
                segs.append(simulate(cfg, threshold_policy(thr), n_decisions // 4, rng, eps=eps))
            data.extend(segs)
            behaviour = float(np.mean([s.reward_rate() for s in segs]))
        else:
            tr = simulate(cfg, pol, n_decisions, rng, eps=eps)
            data.append(tr)
            behaviour = tr.reward_rate()
        phi, act, rew, disc, phi_next, last = [], [], [], [], [], []
        for tr in data:
            f = features(cfg, tr.queue, tr.rates, tr.ages, tr.flow)
            phi.append(f[:-1])
            phi_next.append(f[1:])
            act.append(tr.action[:-1])
            rew.append(tr.reward[:-1])
            disc.append(np.exp(-tr.tau[:-1] / horizon_s))
        phi = np.vstack(phi)
        phi_next = np.vstack(phi_next)
        act = np.concatenate(act)
        rew = np.concatenate(rew)
        disc = np.concatenate(disc)
        del last
        for _ in range(fqi_iters):
            y = rew + disc * (phi_next @ w.T).max(axis=1)
            for a in (ADMIT, DROP):
                sel = act == a
                x = phi[sel]
                reg = ridge * np.eye(nfeat) * max(1, sel.sum())
                w[a] = np.linalg.solve(x.T @ x + reg, x.T @ y[sel])
        pol = MultiflowPolicy(cfg, w.copy(), pol.history)
        pol.history.append({"round": rnd, "behaviour_reward_rate": behaviour, "samples": act.size})
    return pol


def draw_drop_region(ax, region, cfg: MultiflowConfig, flow: int, qmax: int, method: str):
    """Draws a learned policy's drop region of one flow over (queue, own rate).

    Parameters
    ----------
    ax : matplotlib Axes or None
        Where to draw; without it, a new Figure.
    region : numpy.ndarray
        Drop decisions (1) per (rate, queue) cell, queue 0..``qmax``.
    cfg : MultiflowConfig
        The model (its rate grid sets the vertical axis).
    flow : int
        The flow whose rate is the vertical axis.
    qmax : int
        Largest queue shown.
    method : str
        What learned the policy, for the title ("fitted-Q", "DQN").

    Returns
    -------
    matplotlib Figure or Axes
        The Figure made, else ``ax``.
    """
    fig, axes = new_axes(ax, figsize=(5, 4))
    g = cfg.rate_grid
    axes.imshow(
        region,
        origin="lower",
        aspect="auto",
        cmap="Greys",
        vmin=0,
        vmax=1.4,
        extent=(-0.5, qmax + 0.5, g.unit_pps / 2, g.rates_pps[-1] + g.unit_pps / 2),
    )
    axes.set_xlabel("queue length (packets)")
    axes.set_ylabel(f"flow {flow} rate (packets/s)")
    axes.set_title(f"{method} drop region (dark), flow {flow}", fontsize=8)
    return plotted(fig, ax)
