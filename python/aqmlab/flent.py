"""Flent data files (``.flent.gz``) of aqmlab runs, so that Flent's own plots draw them.

A Flent data file is gzipped JSON (Flent's format version 4, ``flent/resultset.py``):
``version``, ``x_values`` (seconds from the start, one per ``STEP_SIZE``), ``results`` (one
list per series, a value or null per x), ``raw_values`` (per series, the measurements as
``{"t": absolute time, "val": value}``) and ``metadata`` (``NAME``, ``TITLE``, ``TIME``,
``LENGTH``, ``STEP_SIZE``, ``TEST_PARAMETERS``, ``SERIES_META``, ``EGRESS_INFO`` with the
bottleneck's qdisc, ...). Series are named as the Flent test ``NAME`` names them (``TCP upload
BE``, ``TCP download::3``, ``Ping (ms) ICMP``, ``TCP upload sum``, ...), so ``flent -i FILE -p
all_scaled`` plots them. docs/flent.md has the mapping.

:func:`run_sampled` runs a simulation to its end in steps of ``STEP_SIZE``, reading every
flow's delivered bytes at each step (the per-flow throughput series); :func:`write_flent` writes
the file from the result and those samples.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "FLENT_TESTS",
    "STEP_SIZE",
    "FlowSamples",
    "flent_document",
    "flent_filename",
    "ping_steps",
    "run_sampled",
    "save_flent",
    "write_flent",
]

#: Flent's default sampling step (``-s``/``--step-size``), seconds.
STEP_SIZE = 0.2
#: The Flent tests aqmlab's presets reproduce (``scenarios/flent/NAME.toml``).
FLENT_TESTS = ("rrul", "rrul_be", "tcp_nup", "tcp_ndown", "rtt_fair", "cubic_bbr")
#: The format version Flent 2.x reads and writes.
_FORMAT_VERSION = 4
_SERIES_PREFIXES = ("TCP upload", "TCP download", "Ping (ms)")


class FlowSamples:
    """Every flow's delivered bytes at each step of a sampled run (:func:`run_sampled`).

    Attributes
    ----------
    times : list of float
        The sample times, seconds (``k x step``, from ``step`` to the end).
    delivered : list of list of int
        ``delivered[k][i]``: payload bytes flow ``i`` delivered in order by ``times[k]``.
    step : float
        The step, seconds.
    """

    def __init__(self, step: float) -> None:
        self.step = step
        self.times: list[float] = []
        self.delivered: list[list[int]] = []

    def throughput_mbps(self, flow: int) -> list[float]:
        """Flow ``flow``'s goodput in each step, Mbit/s (8 x bytes delivered in it / step).

        Parameters
        ----------
        flow : int
            The flow id.

        Returns
        -------
        list of float
            One value per sample time.
        """
        out, last, t0 = [], 0, 0.0
        for t, row in zip(self.times, self.delivered, strict=True):
            b = row[flow] if flow < len(row) else 0
            out.append(8.0 * (b - last) / (t - t0) / 1e6 if t > t0 else 0.0)
            last, t0 = b, t
        return out


def run_sampled(sim, step: float = STEP_SIZE, progress: Callable[[float], None] | None = None):
    """Run ``sim`` from time 0 to its end, reading every flow's delivered bytes every ``step``.

    Parameters
    ----------
    sim : aqmlab.sim.Simulation
        A simulation at time 0 (not one with an ``[sqm]`` controller, which steps itself).
    step : float
        The sampling step, seconds (Flent's ``STEP_SIZE``).
    progress : callable, optional
        Called with the simulated time after each step.

    Returns
    -------
    FlowSamples
    """
    samples = FlowSamples(step)
    end = sim.end_ns
    step_ns = max(int(round(step * 1e9)), 1)
    k = 1
    while sim.now_ns < end:
        sim.run_until_ns(min(k * step_ns, end))
        samples.times.append(sim.now_ns / 1e9)
        samples.delivered.append(
            [sim.flow_status(i)["bytes_delivered"] for i in range(sim.num_flows)]
        )
        if progress is not None:
            progress(sim.now)
        k += 1
    return samples


def flent_filename(name: str, title: str, time: datetime) -> str:
    """The file name Flent gives a data file: ``NAME-DATE.TITLE.flent.gz``.

    ``DATE`` is ISO 8601 without colons (``2026-11-27T004512.345678``), ``TITLE`` has every
    character but letters, digits and ``-`` replaced by ``_`` (``flent/resultset.py``,
    ``_gen_filename``).

    Parameters
    ----------
    name : str
        The Flent test name.
    title : str
        The run's title (the scenario name).
    time : datetime
        When the run started.

    Returns
    -------
    str
    """
    import re

    date = time.strftime("%Y-%m-%dT%H%M%S.%f")
    return f"{name}-{date}.{re.sub('[^A-Za-z0-9-]', '_', title)[:200]}.flent.gz"


def _test_name(summary: dict) -> str:
    """The Flent test: the scenario's name if it is one of :data:`FLENT_TESTS`, else
    ``tcp_ndown`` if every TCP flow is a reverse one, else ``tcp_nup``."""
    name = summary.get("scenario") or ""
    if name in FLENT_TESTS:
        return name
    tcp = [f for f in summary["flows"] if f["kind"] in ("tcp", "short_tcp")]
    if tcp and all(f.get("direction") == "reverse" for f in tcp):
        return "tcp_ndown"
    return "tcp_nup"


def _series_names(summary: dict) -> dict[int, str]:
    """Flow id -> Flent series name (docs/flent.md, "Series names")."""
    groups = summary.get("groups") or []
    by_group: dict[int, list[int]] = {}
    for f in summary["flows"]:
        by_group.setdefault(f["group"], []).append(f["id"])
    names: dict[int, str] = {}
    counters = {"TCP upload": 0, "TCP download": 0, "Ping (ms) ICMP": 0}
    for g in groups:
        ids = by_group.get(g["group"], [])
        gname = g.get("name") or ""
        if gname.startswith(_SERIES_PREFIXES):  # a preset names its groups as Flent does
            for j, i in enumerate(ids):
                names[i] = gname if len(ids) == 1 else f"{gname}::{j + 1}"
            continue
        if g["kind"] == "ping":
            base = "Ping (ms) ICMP"
        elif g["kind"] in ("tcp", "short_tcp"):
            base = "TCP download" if g.get("direction") == "reverse" else "TCP upload"
        else:
            continue  # UDP load has no Flent series
        for i in ids:
            counters[base] += 1
            n = counters[base]
            names[i] = base if base.startswith("Ping") and n == 1 else f"{base}::{n}"
    return names


def ping_steps(back: list[tuple[float, float]], x: list[float]) -> list[float | None]:
    """A ping series at Flent's x values: at each ``x``, the mean RTT of the echoes that
    arrived in ``(x - step, x]`` (null if none).

    Parameters
    ----------
    back : list of (float, float)
        ``(arrival time, RTT ms)`` of each echo, seconds from the start, sorted by time.
    x : list of float
        The x values, increasing.

    Returns
    -------
    list of float or None
    """
    col, j = [], 0
    for xi in x:
        acc = []
        while j < len(back) and back[j][0] <= xi + 1e-12:
            acc.append(back[j][1])
            j += 1
        col.append(sum(acc) / len(acc) if acc else None)
    return col


def _mean(vals: list) -> float | None:
    xs = [v for v in vals if v is not None]
    return sum(xs) / len(xs) if xs else None


def _jain(vals: list) -> float | None:
    xs = [v for v in vals if v is not None]
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if xs and sq > 0 else None


def _egress_info(summary: dict, scenario) -> dict[str, Any]:
    """``EGRESS_INFO``: the bottleneck's qdisc as Flent records an interface's (``qdiscs``:
    name, id, parent, params) plus aqmlab's own description of it."""
    links = summary.get("links") or {}
    name = "bottleneck" if "bottleneck" in links else next(iter(links), None)
    aqm = links.get(name, {}).get("aqm") if name else None
    params: dict[str, Any] = {}
    if scenario is not None:
        norm = scenario.normalized
        table = (norm.get("dumbbell") or norm.get("parking_lot") or {}).get("aqm") or norm.get(
            "aqm"
        )
        if isinstance(table, dict):
            params = {k: v for k, v in table.items() if not isinstance(v, (dict, list))}
    return {
        "iface": name,
        "qdiscs": [{"name": aqm, "id": "1:", "parent": "root", "params": params}],
        "aqmlab_link": name,
        "rate_bps": links.get(name, {}).get("rate_bps") if name else None,
    }


def build_flent(result, samples: FlowSamples, scenario=None, started: datetime | None = None):
    """The Flent data (the JSON object) of a run.

    Parameters
    ----------
    result : aqmlab.results.SimResult
        The run's result (its summary and ``pings`` table).
    samples : FlowSamples
        The per-step delivered bytes of its flows (:func:`run_sampled`).
    scenario : aqmlab.scenario.Scenario, optional
        The scenario (its AQM parameters go into ``EGRESS_INFO``).
    started : datetime, optional
        The start time (``TIME``; default: the summary's ``meta.started`` or now).

    Returns
    -------
    dict
        ``version``, ``x_values``, ``results``, ``raw_values``, ``metadata``.
    """
    summary = result.summary
    if started is None:
        s = (summary.get("meta") or {}).get("started")
        started = datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None
    started = (started or datetime.now(UTC)).astimezone(UTC)
    t0 = started.timestamp()
    name = _test_name(summary)
    names = _series_names(summary)
    x = list(samples.times)
    results: dict[str, list] = {}
    raw: dict[str, list] = {}
    meta: dict[str, dict] = {}
    kinds = {f["id"]: f["kind"] for f in summary["flows"]}
    for fid, sname in names.items():
        if kinds[fid] == "ping":
            continue
        vals = samples.throughput_mbps(fid)
        results[sname] = vals
        raw[sname] = [{"t": t0 + t, "val": v} for t, v in zip(x, vals, strict=True)]
        meta[sname] = {"UNITS": "Mbits/s", "RUNNER": "aqmlab", "AQMLAB_FLOW": fid}
    pings = (result.columns.get("pings") or {}) if hasattr(result, "columns") else {}
    by_flow: dict[int, list[tuple[float, float | None]]] = {}
    for f, t, r in zip(
        pings.get("flow", []), pings.get("time_s", []), pings.get("rtt_ms", []), strict=True
    ):
        by_flow.setdefault(f, []).append((t, None if r is None or math.isnan(r) else r))
    for fid, sname in names.items():
        if kinds[fid] != "ping":
            continue
        probes = by_flow.get(fid, [])
        # as Flent's ping runner (ping -D) stamps each reply when it arrives: the echo's
        # arrival time, send time + RTT
        back = sorted((t + r / 1e3, r) for t, r in probes if r is not None)
        raw[sname] = [{"t": t0 + t, "val": r} for t, r in back]
        results[sname] = ping_steps(back, x)
        lost = sum(1 for _, r in probes if r is None)
        meta[sname] = {"UNITS": "ms", "RUNNER": "aqmlab", "AQMLAB_FLOW": fid, "LOST": lost}
    n_up = sum(1 for n in names.values() if n.startswith("TCP upload"))
    n_down = sum(1 for n in names.values() if n.startswith("TCP download"))
    # rtt_fair pairs its labels with HOSTS in order: the hosts in the order the uploads come
    hosts = list(
        dict.fromkeys(n.split()[-1] for n in names.values() if name == "rtt_fair" and "upload" in n)
    )
    length = float(summary.get("sim_seconds") or (x[-1] if x else 0.0))
    emulated = "emulation" in summary
    return flent_document(
        name,
        summary.get("scenario") or name,
        started,
        x,
        samples.step,
        results,
        raw,
        meta,
        length=length,
        note="aqmlab emulation (real Linux TCP through aqmlab's emulated bottleneck)"
        if emulated
        else "aqmlab simulation",
        hosts=hosts,
        test_parameters={"upload_streams": str(n_up), "download_streams": str(n_down)},
        egress=_egress_info(summary, scenario),
        aqmlab={
            "source": "emulator" if emulated else "simulator",
            "scenario": summary.get("scenario"),
            "seed": summary.get("seed"),
            "warmup_s": summary.get("warmup_s"),
            "version": (summary.get("meta") or {}).get("aqmlab_version"),
        },
    )


def flent_document(
    name: str,
    title: str,
    started: datetime,
    x: list[float],
    step: float,
    results: dict[str, list],
    raw: dict[str, list],
    meta: dict[str, dict],
    *,
    length: float,
    note: str,
    hosts: list[str] | None = None,
    test_parameters: dict[str, str] | None = None,
    egress: dict[str, Any] | None = None,
    aqmlab: dict[str, Any] | None = None,
) -> dict:
    """A Flent data file's JSON object from its per-flow series: adds Flent's aggregate
    series (``TCP upload sum``, ``TCP totals``, ``Ping (ms) avg``, ...), every series'
    ``MEAN_VALUE`` and the metadata. Every source (the simulator, the emulator, ``aqmlab
    shell``'s tools) writes its file through here.

    Parameters
    ----------
    name : str
        The Flent test (``NAME``).
    title : str
        ``TITLE``.
    started : datetime
        The start (``TIME``, ``T0``; UTC).
    x : list of float
        ``x_values``, seconds from the start.
    step : float
        ``STEP_SIZE``, s.
    results : dict
        Per-flow series (``TCP upload::1``, ``Ping (ms) ICMP``, ...), one value or None per x;
        the aggregates are added to it.
    raw : dict
        ``raw_values`` per series.
    meta : dict
        ``SERIES_META`` per series (``UNITS``, ...); completed here.
    length : float
        ``LENGTH`` and ``TOTAL_LENGTH``, s.
    note : str
        ``NOTE``: what produced the data.
    hosts : list of str, optional
        ``HOSTS`` (default ``["aqmlab"]``).
    test_parameters : dict, optional
        ``TEST_PARAMETERS``.
    egress : dict, optional
        ``EGRESS_INFO``.
    aqmlab : dict, optional
        ``AQMLAB``: aqmlab's own description of the run.

    Returns
    -------
    dict
        ``version``, ``x_values``, ``results``, ``raw_values``, ``metadata``.
    """
    per_flow = list(results)
    # Flent's aggregate series (computed by Flent's aggregators when it runs a test)
    for prefix in ("TCP upload", "TCP download"):
        data = [results[n] for n in per_flow if n.startswith(prefix)]
        if not data:
            continue
        rows = list(zip(*data, strict=True))
        results[f"{prefix} avg"] = [_mean(list(r)) for r in rows]
        results[f"{prefix} sum"] = [sum(v for v in r if v is not None) for r in rows]
        results[f"{prefix} fairness"] = [_jain(list(r)) for r in rows]
        meta[f"{prefix} avg"] = {"UNITS": "Mbits/s"}
        meta[f"{prefix} sum"] = {"UNITS": "Mbits/s"}
        meta[f"{prefix} fairness"] = {"UNITS": "Idx"}
    tcp = [results[n] for n in per_flow if n.startswith("TCP")]
    if tcp:
        results["TCP totals"] = [sum(v for v in r if v is not None) for r in zip(*tcp, strict=True)]
        meta["TCP totals"] = {"UNITS": "Mbits/s"}
    ping = [results[n] for n in per_flow if n.startswith("Ping")]
    if ping:
        results["Ping (ms) avg"] = [_mean(list(r)) for r in zip(*ping, strict=True)]
        meta["Ping (ms) avg"] = {"UNITS": "ms"}
    for k, v in results.items():  # Flent's MEAN_VALUE: the series' mean over its values
        xs = [a for a in v if a is not None]
        meta.setdefault(k, {})["MEAN_VALUE"] = sum(xs) / len(xs) if xs else None
    stamp = started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    metadata = {
        "NAME": name,
        "TITLE": title,
        "NOTE": note,
        "TIME": stamp,
        "T0": stamp,
        "LENGTH": length,
        "TOTAL_LENGTH": length,
        "STEP_SIZE": step,
        "HOST": "aqmlab",
        "HOSTS": hosts or ["aqmlab"],
        "LOCAL_HOST": "aqmlab",
        "IP_VERSION": 4,
        "TEST_PARAMETERS": test_parameters or {},
        "FLENT_VERSION": "2.3.0",
        "SERIES_META": meta,
        "EGRESS_INFO": egress or {},
        "AQMLAB": aqmlab or {},
    }
    return {
        "version": _FORMAT_VERSION,
        "x_values": x,
        "results": results,
        "raw_values": raw,
        "metadata": metadata,
    }


def save_flent(directory: str | Path, data: dict) -> Path:
    """Write Flent data (:func:`flent_document`) gzipped into ``directory`` under Flent's
    file name (:func:`flent_filename`).

    Parameters
    ----------
    directory : path-like
        The (temporary) result folder.
    data : dict
        The Flent data.

    Returns
    -------
    Path
        The file written.
    """
    md = data["metadata"]
    when = datetime.strptime(md["TIME"], "%Y-%m-%dT%H:%M:%S.%fZ")
    path = Path(directory) / flent_filename(md["NAME"], md["TITLE"], when)
    with gzip.open(path, "wt", encoding="utf-8") as fp:
        json.dump(data, fp, indent=1)
    return path


def write_flent(
    directory: str | Path, result, samples: FlowSamples, scenario=None, started=None
) -> Path:
    """Write the run's Flent data file into ``directory`` and return its path.

    Parameters
    ----------
    directory : path-like
        The (temporary) result folder.
    result : aqmlab.results.SimResult
        The run's result.
    samples : FlowSamples
        Its per-step delivered bytes (:func:`run_sampled`).
    scenario : aqmlab.scenario.Scenario, optional
        The scenario (the AQM's parameters for ``EGRESS_INFO``).
    started : datetime, optional
        The start time (default: the summary's ``meta.started``).

    Returns
    -------
    Path
        ``directory / NAME-DATE.TITLE.flent.gz``.
    """
    return save_flent(directory, build_flent(result, samples, scenario, started))
