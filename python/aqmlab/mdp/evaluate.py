"""Model-level evaluation of PAQMAN against CoDel and drop-tail (docs/paqman.md, PAQ §VI).

One bottleneck with exponential service ``mu`` and one sender whose packets arrive as a gamma
renewal stream (shape ``alpha``; exponential when ``alpha = 1``) with effective rate
``x = r * unit`` on the policy's rate grid. The sender is AIMD with the RTT lag of the PAQMAN
models: its *epochs* are every arrival when ``R = 0`` (the rate reacts immediately, PAQ §III)
and otherwise the first arrival at least ``R`` after the previous epoch (PAQ §V-A). At an epoch
the rate
becomes ``max(1, r // 2)`` if any of its packets was dropped since the previous epoch (at most
one reduction per RTT, as TCP), else ``min(r + 1, 2G)``. The same sender drives every AQM:

* ``paqman``: at an epoch, the policy table decides for the packet (state = packets in the
  system and the rate index); packets between epochs are admitted while there is room;
* ``codel``: the project's Rust CoDel (:class:`aqmlab.aqm.Queue`), target = PAQMAN's target,
  interval 100 ms; the link dequeues a packet when it starts its (exponential) service, so CoDel
  measures the waiting time; its dequeue-side drops count as drops for the sender;
* ``droptail``: admit while fewer than ``B`` packets are in the system (pure Python).

Metrics after a warm-up (default 20 % of the arrivals): time-averaged packets in the system
(``mean_queue_pkts``), mean sojourn time of delivered packets (``mean_delay_ms``, waiting +
service), departures per second (``throughput_pkts_per_s``) and the time-averaged offered rate.

Examples
--------
>>> from aqmlab.mdp import negligible_rtt_model, solve
>>> from aqmlab.mdp.evaluate import evaluate
>>> pol = solve(negligible_rtt_model(833.3, 0.005, buffer=50, grid=10))
>>> ev = evaluate(pol, runs=2, arrivals=2000, compare=("droptail",), seed=1)
>>> sorted(ev.summary())
['droptail', 'paqman']
"""

from __future__ import annotations

import json
import math
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aqmlab.mdp.model import DROP
from aqmlab.mdp.policy_io import PaqmanPolicy, atomic_write
from aqmlab.protocol import Result, deprecated, new_axes, plotted

__all__ = ["simulate_run", "RunResult", "evaluate", "Evaluation", "AQMS", "model_parameters"]

AQMS = ("paqman", "codel", "droptail")


@dataclass(repr=False)
class RunResult(Result):
    """One run: stationary metrics and a state trajectory sampled at every arrival.

    Attributes
    ----------
    aqm : str
        The AQM that ran (``"paqman"``, ``"codel"``, ``"droptail"``).
    mean_queue_pkts, mean_delay_ms : float
        Time-average queue (packets) and mean queueing delay (ms).
    throughput_pkts_per_s, mean_arrival_rate_pkts_per_s : float
        Departures and the sender's mean rate (packets/s).
    drop_fraction : float
        Dropped arrivals over all arrivals.
    sim_seconds : float
        Simulated time (s).
    t, queue, rate : ndarray
        The trajectory: time (s), queue (packets) and sender rate (packets/s) at each arrival.
    """

    aqm: str
    mean_queue_pkts: float
    mean_delay_ms: float
    throughput_pkts_per_s: float
    mean_arrival_rate_pkts_per_s: float
    drop_fraction: float
    sim_seconds: float
    t: np.ndarray
    queue: np.ndarray
    rate: np.ndarray

    def _figures(self) -> dict:
        return {
            "aqm": self.aqm,
            "mean_queue_pkts": self.mean_queue_pkts,
            "mean_delay_ms": self.mean_delay_ms,
            "throughput_pkts_per_s": self.throughput_pkts_per_s,
            "drop_fraction": self.drop_fraction,
            "sim_seconds": self.sim_seconds,
        }

    def to_pandas(self):
        """The trajectory: one row per arrival, ``t`` (s), ``queue`` (packets), ``rate``
        (packets/s).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame({"t": self.t, "queue": self.queue, "rate": self.rate})

    def plot(self, ax=None):
        """Queue and sender rate over time.

        Parameters
        ----------
        ax : pair of matplotlib Axes, optional
            Queue and rate panels; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, 2, 1, sharex=True, figsize=(6, 4))
        axes[0].plot(self.t, self.queue, lw=0.6)
        axes[0].set_ylabel("queue (packets)")
        axes[1].plot(self.t, self.rate, lw=0.6)
        axes[1].set_ylabel("rate (packets/s)")
        axes[1].set_xlabel("time (s)")
        axes[0].set_title(f"{self.aqm}: mean delay {self.mean_delay_ms:.3g} ms", fontsize=9)
        return plotted(fig, ax)


def model_parameters(policy: PaqmanPolicy) -> tuple[float, float, float, float]:
    """The scenario a policy was solved for, which the model-level evaluation runs.

    The evaluation always runs at the policy's own service rate: a table over absolute rates
    and queue lengths means nothing at another one (docs/paqman.md).

    Parameters
    ----------
    policy : PaqmanPolicy

    Returns
    -------
    tuple of float
        ``(mu, target_s, rtt_s, alpha)``: service rate (packets/s), delay target (s), RTT of
        the model (s, 0 for negligible RTT) and gamma shape of the interarrival times.

    Raises
    ------
    ValueError
        A value is missing or out of range; the message names the policy file's key
        (``service_rate_pps``, ``target_delay_s``, ``rtt_s``, ``gamma_shape``).
    """
    m = policy.meta
    out = []
    for meta_key, file_key, default, positive in (
        ("service_pps", "service_rate_pps", None, True),
        ("target_s", "target_delay_s", None, True),
        ("rtt_s", "rtt_s", 0.0, False),
        ("alpha", "gamma_shape", 1.0, True),
    ):
        v = m.get(meta_key)
        if v is None and default is not None:
            v = default
        if v is None:
            raise ValueError(
                f"{file_key} is missing: the model-level evaluation runs at the scenario the "
                "policy was solved for"
            )
        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        if not ok or (v <= 0 if positive else v < 0):
            raise ValueError(f"{file_key} = {v!r}: must be a number {'>' if positive else '>='} 0")
        out.append(float(v))
    return out[0], out[1], out[2], out[3]


def simulate_run(
    aqm: str,
    policy: PaqmanPolicy,
    arrivals: int,
    seed: int,
    warmup: float = 0.2,
    pkt_size: int = 1500,
    codel_interval_s: float = 0.1,
    estimate_rate: bool = False,
) -> RunResult:
    """Simulate one run of the model-level scenario under ``aqm``.

    Parameters
    ----------
    aqm : {"paqman", "codel", "droptail"}
    policy : PaqmanPolicy
        Supplies the scenario (service rate, target, RTT, gamma shape, buffer, rate grid) and,
        for ``"paqman"``, the drop table.
    arrivals : int
        Packet arrivals per run.
    seed : int
    warmup : float
        Fraction of arrivals excluded from the statistics.
    pkt_size : int
        Bytes per packet (CoDel's queue counts bytes too).
    codel_interval_s : float
        CoDel interval (default 100 ms, RFC 8289).
    estimate_rate : bool
        PAQMAN only: look the policy up with the posterior mode of a
        :class:`~aqmlab.mdp.inference.RateFilter` fed with the observed interarrival times and
        PAQMAN's own drops (PAQ §IV), instead of the sender's true rate.

    Returns
    -------
    RunResult
    """
    if aqm not in AQMS:
        raise ValueError(f"aqm {aqm!r}: expected one of {', '.join(AQMS)}")
    mu, target, rtt, alpha = model_parameters(policy)
    cap = policy.buffer
    grid = policy.grid
    unit, rmax = grid.unit_pps, grid.size
    rng = np.random.default_rng(seed)
    gam = rng.standard_gamma(alpha, arrivals) / alpha  # interarrival = gam / x
    svc = rng.exponential(1.0 / mu, arrivals + 10)
    table = policy.policy
    queue = None
    if aqm == "codel":
        from aqmlab.aqm import Queue

        queue = Queue(
            "codel",
            {"target": target, "interval": codel_interval_s},
            limit_pkts=max(cap - 1, 1),
            link_rate_bps=mu * pkt_size * 8,
            seed=seed,
        )
    filt = None
    if estimate_rate and aqm == "paqman":
        from aqmlab.mdp.inference import RateFilter

        filt = RateFilter(grid, alpha)
    prev_arrival = 0.0
    waiting: deque = deque()  # arrival times of waiting packets (FIFO)
    busy_until = np.inf  # service completion time, inf when idle
    in_service_arrival = 0.0
    r = max(1, min(rmax, int(round(mu / unit))))  # each run starts at rate = service rate
    next_arr = gam[0] / (r * unit)
    last_epoch = -np.inf
    dropped_since = False
    immediate = rtt == 0.0
    n_arr = 0
    n_svc = 0
    start_idx = int(warmup * arrivals)
    t0 = None
    area = rate_area = 0.0
    delivered = 0
    delay_sum = 0.0
    drops = 0
    seen = 0
    last_t = 0.0
    ts = np.empty(arrivals)
    qs = np.empty(arrivals, dtype=np.int32)
    xs = np.empty(arrivals)
    drop_deq_prev = 0

    def start_service(now: float) -> None:
        nonlocal busy_until, in_service_arrival, n_svc, dropped_since, drops, drop_deq_prev
        if queue is None:
            if waiting:
                in_service_arrival = waiting.popleft()
                busy_until = now + svc[n_svc % svc.size]
                n_svc += 1
            return
        size = queue.dequeue(now)
        dd = queue.stats()["dropped_dequeue"]
        for _ in range(dd - drop_deq_prev):  # CoDel dropped these heads
            waiting.popleft()
            dropped_since = True
            if t0 is not None:
                drops += 1
        drop_deq_prev = dd
        if size is not None:
            in_service_arrival = waiting.popleft()
            busy_until = now + svc[n_svc % svc.size]
            n_svc += 1

    while n_arr < arrivals:
        if busy_until <= next_arr:
            now = busy_until
            nsys = len(waiting) + 1
            if t0 is not None:
                area += nsys * (now - last_t)
                rate_area += r * unit * (now - last_t)
                delivered += 1
                delay_sum += now - in_service_arrival
            last_t = now
            busy_until = np.inf
            start_service(now)
            continue
        now = next_arr
        busy = busy_until < np.inf
        nsys = len(waiting) + (1 if busy else 0)
        if n_arr == start_idx:
            t0 = now
            last_t = now
        elif t0 is not None:
            area += nsys * (now - last_t)
            rate_area += r * unit * (now - last_t)
            last_t = now
        ts[n_arr], qs[n_arr], xs[n_arr] = now, nsys, r * unit
        epoch = immediate or now - last_epoch >= rtt
        if filt is not None:
            filt.observe(now - prev_arrival)
            if epoch and not immediate and last_epoch > -np.inf:
                filt.act(DROP if dropped_since else 0)
        prev_arrival = now
        if epoch and not immediate:
            if last_epoch > -np.inf:  # sender reacts to the previous epoch's outcome
                r = max(1, int(r * grid.drop_factor)) if dropped_since else min(rmax, r + 1)
            dropped_since = False
            last_epoch = now
        # --- the AQM decides ---
        if aqm == "paqman":
            r_seen = r if filt is None else filt.index()
            drop = nsys >= cap or (epoch and table[r_seen - 1, nsys] == DROP)
        elif aqm == "droptail":
            drop = nsys >= cap
        else:
            drop = queue.enqueue(now, pkt_size, 0) == "dropped"
        if t0 is not None:
            seen += 1
        if drop:
            dropped_since = True
            if t0 is not None:
                drops += 1
        else:
            waiting.append(now)
            if not busy:
                start_service(now)
        if immediate:
            if filt is not None:
                filt.act(DROP if dropped_since else 0)
            r = max(1, int(r * grid.drop_factor)) if dropped_since else min(rmax, r + 1)
            dropped_since = False
        n_arr += 1
        if n_arr < arrivals:
            next_arr = now + gam[n_arr] / (r * unit)
    span = max(last_t - (t0 or 0.0), 1e-12)
    return RunResult(
        aqm=aqm,
        mean_queue_pkts=area / span,
        mean_delay_ms=1e3 * delay_sum / max(delivered, 1),
        throughput_pkts_per_s=delivered / span,
        mean_arrival_rate_pkts_per_s=rate_area / span,
        drop_fraction=drops / max(seen, 1),
        sim_seconds=last_t,
        t=ts,
        queue=qs,
        rate=xs,
    )


@dataclass(repr=False)
class Evaluation(Result):
    """Runs per AQM for one policy; ``summary()`` (also :meth:`to_dict`) is the
    ``summary.json`` content.

    Attributes
    ----------
    policy : PaqmanPolicy
        The policy evaluated.
    runs : dict
        AQM name to its list of :class:`RunResult`.
    """

    policy: PaqmanPolicy
    runs: dict = field(default_factory=dict)  # aqm -> list[RunResult]

    _KEYS = (
        "mean_queue_pkts",
        "mean_delay_ms",
        "throughput_pkts_per_s",
        "mean_arrival_rate_pkts_per_s",
        "drop_fraction",
    )

    def summary(self) -> dict:
        """``{aqm: {mean_queue_pkts, mean_delay_ms, throughput_pkts_per_s, ...}}`` (run means).

        Returns
        -------
        dict
        """
        out = {}
        for aqm, rs in self.runs.items():
            d = {k: float(np.mean([getattr(x, k) for x in rs])) for k in self._KEYS}
            d["mean_delay_ms_std"] = float(np.std([x.mean_delay_ms for x in rs], ddof=0))
            d["throughput_pkts_per_s_std"] = float(
                np.std([x.throughput_pkts_per_s for x in rs], ddof=0)
            )
            d["runs"] = len(rs)
            out[aqm] = d
        return out

    def _figures(self) -> dict:
        out: dict = {"runs": sum(len(v) for v in self.runs.values())}
        for aqm, d in self.summary().items():
            out[f"{aqm}.mean_delay_ms"] = d["mean_delay_ms"]
            out[f"{aqm}.throughput_pkts_per_s"] = d["throughput_pkts_per_s"]
        return out

    def to_dict(self) -> dict:
        """The ``summary.json`` content (:meth:`summary`).

        Returns
        -------
        dict
        """
        return self.summary()

    def to_pandas(self):
        """One row per (aqm, run) with the stationary metrics.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        rows = []
        for aqm, rs in self.runs.items():
            for i, x in enumerate(rs):
                rows.append({"aqm": aqm, "run": i, **{k: getattr(x, k) for k in self._KEYS}})
        return pd.DataFrame(rows)

    def mean_trajectory(self, aqm: str, points: int = 300) -> tuple[np.ndarray, ...]:
        """Run-averaged ``(t, queue, rate)`` on a common time grid (PAQMAN Fig. 7-10 data).

        Parameters
        ----------
        aqm : str
            One of the AQMs run.
        points : int
            Points of the common grid.

        Returns
        -------
        tuple of numpy.ndarray
            ``(t, queue, rate)``, each of shape (points,).
        """
        rs = self.runs[aqm]
        tmax = min(x.t[-1] for x in rs)
        tg = np.linspace(0, tmax, points)
        qm = np.mean([np.interp(tg, x.t, x.queue) for x in rs], axis=0)
        xm = np.mean([np.interp(tg, x.t, x.rate) for x in rs], axis=0)
        return tg, qm, xm

    def plot(self, ax=None, fig=None):
        """State trajectories (queue vs arrival rate, coloured by time) per AQM, PAQMAN Fig. 7.

        Parameters
        ----------
        ax : array of matplotlib Axes, optional
            One Axes per AQM; without it, a new Figure.
        fig : matplotlib Figure, optional
            Deprecated (kept for one release): a Figure to add the panels to; give ``ax``.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made (or the ``fig`` given), else ``ax``.
        """
        aqms = list(self.runs)
        if fig is not None:
            deprecated("Evaluation.plot(fig=)", "Evaluation.plot(ax=)")
            made, axes = fig, fig.subplots(1, len(aqms), squeeze=False)
        else:
            made, axes = new_axes(ax, 1, len(aqms), squeeze=False, layout="constrained",
                                  figsize=(4 * len(aqms) + 1, 3.8))  # fmt: skip
        axes = np.ravel(axes)
        mu = self.policy.meta["service_pps"]
        for a, aqm in zip(axes, aqms, strict=True):
            tg, qm, xm = self.mean_trajectory(aqm)
            a.plot(qm, xm / mu, color="0.8", lw=0.5, zorder=0)
            sc = a.scatter(qm, xm / mu, c=tg, cmap="viridis", s=6)
            a.set_xlabel("queue (packets, run average)")
            a.set_ylabel("arrival rate / service rate")
            a.set_title(aqm, fontsize=9)
        axes[0].figure.colorbar(sc, ax=axes.tolist(), label="time (s)")
        return plotted(made, ax)

    def plot_boxes(self, fig=None):
        """Box plots of per-run stationary delay and throughput per AQM (PAQMAN Fig. 11 style).

        Parameters
        ----------
        fig : matplotlib Figure, optional
            The Figure to draw on (default: a new one).

        Returns
        -------
        matplotlib Figure
        """
        import matplotlib.pyplot as plt

        if fig is None:
            fig = plt.figure(figsize=(8, 3.4), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        names = list(self.runs)
        ax1.boxplot([[x.mean_delay_ms for x in self.runs[a]] for a in names])
        ax1.set_xticks(range(1, len(names) + 1), names)
        ax1.set_ylabel("mean delay (ms)")
        ax1.set_yscale("log")
        ax2.boxplot([[x.throughput_pkts_per_s for x in self.runs[a]] for a in names])
        ax2.set_xticks(range(1, len(names) + 1), names)
        ax2.set_ylabel("throughput (packets/s)")
        return fig

    def write(self, out_dir: str | os.PathLike) -> dict:
        """Write ``summary.json``, ``config.json``, ``trajectories.png``, ``boxes.png`` atomically.

        Parameters
        ----------
        out_dir : path-like
            The folder (created if missing).

        Returns
        -------
        dict
            :meth:`summary`.
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        summ = self.summary()
        for name, fn in (("trajectories.png", self.plot), ("boxes.png", self.plot_boxes)):
            fig = fn()
            _save_fig(fig, out / name)
            plt.close(fig)
        meta = {k: v for k, v in self.policy.meta.items() if isinstance(v, (int, float, str))}
        atomic_write(out / "config.json", json.dumps(meta, indent=1) + "\n")
        atomic_write(out / "summary.json", json.dumps(summ, indent=1) + "\n")
        return summ


def _save_fig(fig, path: Path) -> None:
    """Save a figure through a temporary file and a rename."""
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)


def evaluate(
    policy: PaqmanPolicy,
    runs: int = 10,
    arrivals: int = 20_000,
    compare: tuple[str, ...] = ("codel", "droptail"),
    seed: int = 0,
    warmup: float = 0.2,
    estimate_rate: bool = False,
) -> Evaluation:
    """Run PAQMAN and the ``compare`` AQMs on the same seeds (common random numbers).

    Parameters
    ----------
    policy : PaqmanPolicy
    runs : int
        Runs per AQM.
    arrivals : int
        Packet arrivals per run.
    compare : tuple of str
        Among ``"codel"``, ``"droptail"``.
    seed : int
        Run ``i`` uses seed ``seed + i`` for every AQM.
    warmup : float
        Fraction of arrivals discarded.
    estimate_rate : bool
        PAQMAN looks up an estimated rate (see :func:`simulate_run`).

    Returns
    -------
    Evaluation
    """
    if runs < 1 or arrivals < 10:
        raise ValueError(f"runs {runs!r} / arrivals {arrivals!r}: need runs >= 1, arrivals >= 10")
    for c in compare:
        if c not in AQMS or c == "paqman":
            raise ValueError(f"compare {c!r}: expected codel or droptail")
    model_parameters(policy)  # refuse a policy without its scenario before any run
    ev = Evaluation(policy)
    for aqm in ("paqman", *compare):
        ev.runs[aqm] = [
            simulate_run(
                aqm, policy, arrivals, seed + i, warmup=warmup, estimate_rate=estimate_rate
            )
            for i in range(runs)
        ]
    return ev
