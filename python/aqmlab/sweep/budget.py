"""What a sweep will cost, estimated before anything runs, and the limits it must stay within.

* **Runs**: at most ``max_runs`` (``--max-runs``, default :data:`DEFAULT_MAX_RUNS`), counted from
  the spec's list lengths before any combination is built.
* **Memory**: each worker process holds about :data:`WORKER_BYTES` plus the run it simulates,
  as the core estimates it (:attr:`aqmlab.scenario.Scenario.memory_bytes`, the estimate its
  8 GiB size limit checks). ``workers`` x that must fit in the memory available now
  (``MemAvailable`` of ``/proc/meminfo``); the default number of workers is lowered to fit.
* **Time**: the estimated wall-clock time, the runs' estimated CPU time over the workers, must
  stay within ``max_time`` (``--max-time``, default :data:`DEFAULT_MAX_TIME`).

A run's CPU time is estimated from what it simulates (:func:`run_seconds`): the packets its
monitored links can carry in its duration (each busy all the time, or less if its flows are
all UDP or short flows that cannot send that much), its flows and how long they last. The
estimate is rough (within a factor of 4 on the scenarios of ``benches/bench_sweep_estimate.py``;
docs/sweep.md); it is there to catch a spec that is off by orders of magnitude before anything
runs, with the figures in the message.

Examples
--------
>>> from aqmlab.sweep.spec import load_spec
>>> spec = load_spec({"base": {"duration": "2s", "dumbbell": {"rate": "10Mbps"},
...                            "flows": [{"count": 2}]}, "seeds": [1, 2, 3]})
>>> est = estimate(spec, workers=1)
>>> est.runs, est.memory_bytes < 2**20, est.wall_seconds < 1
(3, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aqmlab.scenario import Scenario, ScenarioError

__all__ = [
    "DEFAULT_MAX_RUNS",
    "DEFAULT_MAX_TIME",
    "WORKER_BYTES",
    "Estimate",
    "run_seconds",
    "estimate",
    "available_memory",
    "check_budget",
    "fmt_bytes",
    "fmt_seconds",
]

#: Runs a sweep may have unless asked for more (``--max-runs``).
DEFAULT_MAX_RUNS = 10_000
#: Estimated wall-clock seconds a sweep may take unless asked for more (``--max-time``): a day.
DEFAULT_MAX_TIME = 86_400.0
#: Memory of a worker process besides its run, bytes: Python, aqmlab, NumPy and pyarrow
#: (75 MiB measured after a small run with time series; 100 MiB with room).
WORKER_BYTES = 100 * 2**20
#: CPU seconds per run besides the simulation (set-up, summary, record).
SECONDS_PER_RUN = 2e-3
#: CPU seconds per packet a monitored link can carry (its share of the events: the packet's
#: hops, its ACK, timers), per flow, and per long-lived flow and simulated second (the flows'
#: own timers and slow starts); chosen from the measurements of
#: ``benches/bench_sweep_estimate.py`` on the development machine (docs/sweep.md).
SECONDS_PER_PACKET = 0.5e-6
SECONDS_PER_FLOW = 30e-6
SECONDS_PER_FLOW_SECOND = 5e-6


def _fabric(n: dict[str, Any]) -> tuple[int, float, float] | None:
    """``(hosts, host link rate, packet size)`` of a fabric scenario, else None."""
    if "fat_tree" in n:
        f = n["fat_tree"]
        return int(f["k"]) ** 3 // 4, float(f["rate"]), float(f["pkt_size"])
    if "leaf_spine" in n:
        f = n["leaf_spine"]
        hosts = int(f["leaves"]) * int(f["hosts_per_leaf"])
        return hosts, float(f["rate"]), float(f["pkt_size"])
    return None


def _capacity(n: dict[str, Any]) -> float:
    """Packets the monitored links of a normalized scenario can carry in its duration."""
    dur = float(n["duration"])
    sizes = [float(g["packet_size"]) for g in n["flows"] if "packet_size" in g] or [1000.0]
    if "dumbbell" in n:
        d = n["dumbbell"]
        rate = max([float(d["rate"])] + [float(c["rate"]) for c in d.get("rate_changes", [])])
        return rate * dur / (8.0 * float(d["pkt_size"]))
    if "parking_lot" in n:
        p = n["parking_lot"]
        return int(p["hops"]) * float(p["rate"]) * dur / (8.0 * float(p["pkt_size"]))
    if (f := _fabric(n)) is not None:
        # what the hosts' links can carry (every packet crosses up to 6 switch links more)
        hosts, rate, pkt = f
        return hosts * rate * dur / (8.0 * pkt)
    rate = sum(float(link["rate"]) for link in n.get("links", []) if link.get("monitor", True))
    return rate * dur / (8.0 * min(sizes))


def _demand(n: dict[str, Any]) -> float:
    """Packets the flows can send at most (infinite when a long-lived TCP flow is there)."""
    dur = float(n["duration"])
    total = 0.0
    for g in n["flows"]:
        size = float(g.get("packet_size", 1000.0))
        kind = g.get("kind", "tcp")
        if kind == "tcp_short" and "load" in g and (f := _fabric(n)) is not None:
            # a fabric's load: that fraction of the hosts' capacity
            hosts, rate, _ = f
            total += float(g["load"]) * hosts * rate * dur / (8.0 * size)
        elif kind == "tcp_short" and "mean_size" in g:
            total += float(g["arrival_rate"]) * dur * float(g["mean_size"]) / size
        elif kind == "tcp_short":
            return math.inf  # sizes from a CDF at an arrival rate: not estimated here
        elif kind in ("udp_cbr", "udp_onoff") and "rate" in g:
            total += float(g.get("count", 1)) * float(g["rate"]) * dur / (8.0 * size)
        else:
            return math.inf
    return total


def _flows(n: dict[str, Any]) -> tuple[float, float]:
    """``(flows, flow-seconds)`` of a normalized scenario: long-lived flows last the whole
    run; short ones (``tcp_short``) count as they are expected to arrive, for no time."""
    dur = float(n["duration"])
    flows = seconds = 0.0
    for g in n["flows"]:
        if g.get("kind") == "tcp_short":
            # a fabric's `load` gives no rate here: its flows are left out (the packets count)
            flows += float(g.get("arrival_rate", 0.0)) * dur
        else:
            flows += float(g.get("count", 1))
            seconds += float(g.get("count", 1)) * dur
    return flows, seconds


def run_seconds(scenario: Scenario) -> float:
    """A rough estimate of one run's CPU seconds (see the module's description).

    Parameters
    ----------
    scenario : Scenario
        One run's scenario.

    Returns
    -------
    float
    """
    n = scenario.normalized
    flows, flow_seconds = _flows(n)
    return (
        SECONDS_PER_RUN
        + SECONDS_PER_PACKET * min(_capacity(n), _demand(n))
        + SECONDS_PER_FLOW * flows
        + SECONDS_PER_FLOW_SECOND * flow_seconds
    )


@dataclass
class Estimate:
    """The estimated cost of a sweep.

    Attributes
    ----------
    runs : int
        Runs in the spec.
    memory_bytes : float
        The largest run's estimated memory (the core's estimate).
    cpu_seconds : float
        The estimated CPU time of every run together.
    workers : int
        Runs at a time.
    largest : dict
        The overrides of the run with the largest memory estimate.
    """

    runs: int
    memory_bytes: float
    cpu_seconds: float
    workers: int
    largest: dict[str, Any]

    @property
    def wall_seconds(self) -> float:
        """Estimated wall-clock seconds: the CPU time spread over the workers."""
        waves = math.ceil(self.runs / max(1, self.workers))
        per_run = self.cpu_seconds / max(1, self.runs)
        return waves * per_run

    def describe(self) -> str:
        """``N runs, about M of memory per run, about T on W workers``.

        Returns
        -------
        str
        """
        return (
            f"{self.runs} runs, about {fmt_bytes(self.memory_bytes)} of memory per run, about "
            f"{fmt_seconds(self.wall_seconds)} on {self.workers} worker"
            + ("s" if self.workers != 1 else "")
        )


def fmt_bytes(b: float) -> str:
    """``12 MiB``, ``3.1 GiB``.

    Parameters
    ----------
    b : float
        Bytes.

    Returns
    -------
    str
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            v = b / size
            return f"{v:.1f} {unit}" if v < 10 else f"{v:.0f} {unit}"
    return f"{b:.0f} B"


def fmt_seconds(s: float) -> str:
    """``40 s``, ``12 min``, ``3.5 h``, ``2.1 days``.

    Parameters
    ----------
    s : float
        Seconds.

    Returns
    -------
    str
    """
    if s < 60:
        return f"{s:.2g} s" if s < 10 else f"{s:.0f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    if s < 86_400 * 2:
        return f"{s / 3600:.1f} h"
    return f"{s / 86_400:.1f} days"


def estimate(spec, workers: int, sample: int | None = None) -> Estimate:
    """Estimate a sweep's cost on ``workers`` workers (every combination of overrides; the
    seeds do not change the cost). ``sample``: estimate from at most this many combinations,
    evenly spread, scaled to all of them (for a spec too large to build every one).

    Parameters
    ----------
    spec : SweepSpec
        The sweep.
    workers : int
        Worker processes.
    sample : int, optional
        Estimate from at most this many combinations.

    Returns
    -------
    Estimate
    """
    from aqmlab.sweep.spec import resolve

    combos = spec.combination_count()
    idx: range | list[int] = range(combos)
    if sample is not None and combos > sample:
        idx = sorted({i * combos // sample for i in range(sample)})
    known = len(spec.costs) == combos  # load_spec found them while validating
    mem, cpu, largest = -1.0, 0.0, {}
    for i in idx:
        if known:
            m, t = spec.costs[i]
        else:
            sc = Scenario(resolve(spec.base, spec.combination(i), spec.seeds[0]))
            m, t = sc.memory_bytes, run_seconds(sc)
        if m > mem:
            mem, largest = m, spec.combination(i)
        cpu += t
    cpu *= combos / max(1, len(idx)) * len(spec.seeds)
    return Estimate(combos * len(spec.seeds), max(mem, 0.0), cpu, workers, largest)


def available_memory() -> float | None:
    """Bytes of memory available now (``MemAvailable`` of ``/proc/meminfo``), or None where it
    cannot be read.

    Returns
    -------
    float or None
    """
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def _shown(combo: dict[str, Any]) -> str:
    import json

    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in combo.items())


def check_budget(
    spec,
    label: str,
    workers: int | None,
    cores: int,
    max_time: float | None,
    max_time_text: str = "",
    local: bool = True,
    todo: int | None = None,
) -> tuple[Estimate, int]:
    """Check a sweep against memory and ``max_time``; return the estimate and the number of
    workers to use (``workers``, or the default lowered to fit the memory).

    Parameters
    ----------
    spec : SweepSpec
        The sweep (its run count already within ``max_runs``).
    label : str
        How messages name the spec (its file name).
    workers : int or None
        The workers asked for (None: the default, ``cores``).
    cores : int
        The default number of workers.
    max_time : float or None
        Estimated wall-clock seconds allowed (None: no limit).
    max_time_text : str
        ``max_time`` as the user gave it (for the message).
    local : bool
        The workers run on this machine (False for a remote Dask cluster: no memory check).
    todo : int, optional
        The runs still to do (a resumed sweep): the time estimate counts only those.

    Returns
    -------
    tuple of (Estimate, int)
        The estimate and the workers to use.

    Raises
    ------
    ScenarioError
        One line with the estimate: ``--workers = N: ...`` when the workers do not fit in
        memory, ``--max-time = T: ...`` when the sweep would take longer.
    """
    n = workers if workers is not None else cores
    est = estimate(spec, n)
    if todo is not None and est.runs:
        est.cpu_seconds *= todo / est.runs
        est.runs = todo
    per_worker = WORKER_BYTES + est.memory_bytes
    avail = available_memory() if local else None
    if avail is not None:
        fits = int(avail // per_worker)
        if workers is not None and fits < workers:
            raise ScenarioError(
                f"--workers = {workers}: {workers} workers need about "
                f"{fmt_bytes(workers * per_worker)} of memory (about "
                f"{fmt_bytes(est.memory_bytes)} for the largest run + "
                f"{fmt_bytes(WORKER_BYTES)} per worker process), but "
                f"{fmt_bytes(avail)} is available; use fewer workers"
            )
        if workers is None and fits < 1:
            where = f" (the run with {_shown(est.largest)})" if est.largest else ""
            raise ScenarioError(
                f"{label}: the largest run{where} needs about {fmt_bytes(per_worker)} of "
                f"memory with its worker process, but {fmt_bytes(avail)} is available"
            )
        if workers is None:
            n = min(cores, fits)
            est.workers = n
    if max_time is not None and est.wall_seconds > max_time:
        raise ScenarioError(
            f"--max-time = {max_time_text or fmt_seconds(max_time)}: the sweep would take about "
            f"{fmt_seconds(est.wall_seconds)} ({est.describe()}; a rough estimate); raise "
            "--max-time, or use fewer runs or shorter ones"
        )
    return est, n
