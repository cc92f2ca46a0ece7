"""Reading what a report is built from: a sweep folder, a folder of single runs, or one run.

* **Sweep** (``DIR/results.parquet``): one row per run with ``run_key``, one column per
  override key (the columns between ``run_key`` and ``seed``), ``seed``, ``error``, ``wall_s``
  and the summary's scalars; ``DIR/runs/<run_key>.json`` holds each run's full summary and
  ``DIR/timeseries/run_key=<key>/part-0.parquet`` its time series when it was kept. A
  *configuration* is a distinct combination of override values; its seeds are repetitions.
* **Folder of runs** (subfolders with ``summary.json``, as ``aqmlab run``/``dumbbell``/``demo``
  write them): runs are grouped into configurations by scenario name and AQM of every link; if
  that puts two runs with the same seed into one group, every run is its own configuration,
  named after its folder.
* **One run** (``DIR/summary.json``): one configuration with one run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.report.axes import Axis

__all__ = ["Run", "RunSet", "ReportInputError", "check_summary", "load_runs", "primary_link"]


class ReportInputError(ValueError):
    """The report's input folder is missing or not something a report can be built from."""


@dataclass
class Run:
    """One simulation run as the report sees it.

    Attributes
    ----------
    key : str
        ``run_key`` of a sweep, else the run's folder name.
    config : str
        Label of its configuration.
    seed : int or None
        Seed of the run.
    summary : dict or None
        The run's ``summary.json`` (None for a failed run or when the sweep kept no JSON).
    error : str or None
        Why the run failed (sweeps), else None.
    flat : dict
        The run's row of ``results.parquet`` (sweeps; empty otherwise).
    timeseries_path : Path or None
        Its time series (Parquet), if kept.
    """

    key: str
    config: str
    seed: int | None
    summary: dict[str, Any] | None
    error: str | None = None
    flat: dict[str, Any] = field(default_factory=dict)
    timeseries_path: Path | None = None

    def timeseries(self):
        """The run's time series as a pandas DataFrame, or None.

        Returns
        -------
        pandas.DataFrame or None
        """
        if self.timeseries_path is None or not self.timeseries_path.is_file():
            return None
        import pyarrow.parquet as pq

        return pq.read_table(self.timeseries_path).to_pandas()


@dataclass
class RunSet:
    """The runs of a report and how they group into configurations.

    Attributes
    ----------
    kind : str
        ``"sweep"``, ``"runs"`` or ``"run"``.
    source : Path
        The folder read.
    runs : list of Run
        Every run, failed ones included, in the order read.
    keys : list of str
        The override keys that define a configuration (sweeps), else empty.
    axes : list of Axis
        The sweep's axes (one per key: name, unit, numeric order; :mod:`aqmlab.report.axes`).
    """

    kind: str
    source: Path
    runs: list[Run]
    keys: list[str] = field(default_factory=list)
    axes: list[Any] = field(default_factory=list)

    @property
    def configs(self) -> list[str]:
        """Configuration labels in order of first appearance."""
        return list(dict.fromkeys(r.config for r in self.runs))

    def ok(self, config: str | None = None) -> list[Run]:
        """The successful runs (with a summary or a results row), of one configuration or all.

        Parameters
        ----------
        config : str, optional
            The configuration (default: all).

        Returns
        -------
        list of Run
        """
        return [
            r
            for r in self.runs
            if r.error is None
            and (r.summary is not None or r.flat)
            and (config is None or r.config == config)
        ]

    @property
    def failed(self) -> list[Run]:
        """The runs that failed."""
        return [r for r in self.runs if r.error is not None]


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ReportInputError(f"{what} = '{path}': not readable JSON ({e})") from None
    if not isinstance(data, dict):
        raise ReportInputError(f"{what} = '{path}': not a JSON object")
    return data


#: Per-link numbers of a summary the report reads or shows, with their lowest value (all are
#: counts, rates or delays) and, for fractions, their highest (docs/design.md, results contract).
_LINK_NUMBERS = {
    "utilization": (0.0, 1.0),
    "mean_queue_pkts": (0.0, math.inf),
    "mean_queue_bytes": (0.0, math.inf),
    "drops": (0.0, math.inf),
    "marks": (0.0, math.inf),
    "enqueued": (0.0, math.inf),
    "arrivals": (0.0, math.inf),
    "lost": (0.0, math.inf),
    "tx_packets": (0.0, math.inf),
    "aqm_activations": (0.0, math.inf),
    "rate_bps": (0.0, math.inf),
}


def check_summary(summary: Any, where: str) -> None:
    """Check the parts of a run's ``summary.json`` a report reads (docs/design.md).

    Missing keys are allowed (older results lack some); present ones must have the contract's
    type and a meaningful value (no negative count, utilization or delay, a Jain index in
    [0, 1], a well-formed delay histogram). A number may be null.

    Parameters
    ----------
    summary : object
        The parsed ``summary.json`` (or a sweep record's ``summary``).
    where : str
        How the error names the file, e.g. ``"summary = 'run/summary.json'"``.

    Raises
    ------
    ReportInputError
        ``WHERE: KEY = VALUE: reason`` for the first key that does not fit.
    """

    def bad(key: str, value: Any, why: str) -> ReportInputError:
        shown = json.dumps(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return ReportInputError(f"{where}: {key} = {shown}: {why}")

    def number(key: str, v: Any, lo: float = 0.0, hi: float = math.inf) -> None:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise bad(key, v, "not a finite number")
        if not lo <= v <= hi:
            rng = f">= {lo:g}" if hi == math.inf else f"in [{lo:g}, {hi:.6g}]"
            raise bad(key, v, f"must be {rng}")

    def table(key: str, v: Any) -> dict:
        if not isinstance(v, dict):
            raise bad(key, v, "not an object")
        return v

    if not isinstance(summary, dict):
        raise bad("summary", summary, "not an object")
    for key, kind in (("scenario", str), ("seed", int)):
        v = summary.get(key)
        if v is not None and (not isinstance(v, kind) or isinstance(v, bool)):
            raise bad(key, v, f"not {'a string' if kind is str else 'an integer'}")
    if "links" not in summary:
        raise ReportInputError(f"{where}: links is missing (one entry per monitored link)")
    for name, link in table("links", summary["links"]).items():
        k = f"links.{name}"
        link = table(k, link)
        if "aqm" in link and not isinstance(link["aqm"], str):
            raise bad(f"{k}.aqm", link["aqm"], "not a string")
        for field_, (lo, hi) in _LINK_NUMBERS.items():
            number(f"{k}.{field_}", link.get(field_), lo, hi)
        if "queue_delay_ms" in link:
            delays = table(f"{k}.queue_delay_ms", link["queue_delay_ms"])
            for q, v in delays.items():
                number(f"{k}.queue_delay_ms.{q}", v)
        if "queue_delay_hist" in link:
            _check_histogram(f"{k}.queue_delay_hist", link["queue_delay_hist"], bad)
    if "flows" in summary:
        flows = summary["flows"]
        if not isinstance(flows, list):
            raise bad("flows", flows, "not an array")
        for i, f in enumerate(flows):
            f = table(f"flows[{i}]", f)
            if "kind" in f and not isinstance(f["kind"], str):
                raise bad(f"flows[{i}].kind", f["kind"], "not a string")
            number(f"flows[{i}].goodput_bps", f.get("goodput_bps"))
    if "fairness" in summary:
        number("fairness.jain", table("fairness", summary["fairness"]).get("jain"), 0.0, 1.0)


def _check_histogram(key: str, h: Any, bad) -> None:
    """``lo_ms``, ``hi_ms``, ``counts``: lists of one length, ``0 <= lo < hi``, counts >= 0."""
    if not isinstance(h, dict):
        raise bad(key, h, "not an object")
    cols = {c: h.get(c) for c in ("lo_ms", "hi_ms", "counts")}
    for c, v in cols.items():
        if not isinstance(v, list):
            raise bad(f"{key}.{c}", v, "not an array")
    n = len(cols["lo_ms"])
    if len(cols["hi_ms"]) != n or len(cols["counts"]) != n:
        lens = {c: len(v) for c, v in cols.items()}
        raise bad(f"{key} lengths", lens, "lo_ms, hi_ms and counts need one entry per bin")
    for i, (lo, hi, c) in enumerate(zip(cols["lo_ms"], cols["hi_ms"], cols["counts"], strict=True)):
        for name, v in (("lo_ms", lo), ("hi_ms", hi)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise bad(f"{key}.{name}[{i}]", v, "not a finite number")
        if not 0 <= lo < hi:
            raise bad(f"{key}.lo_ms[{i}]", lo, f"must be >= 0 and below hi_ms[{i}] = {hi}")
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise bad(f"{key}.counts[{i}]", c, "not a whole number >= 0")


def _sweep_labels(folder: Path) -> dict[str, Any]:
    """The ``labels`` of the sweep's ``sweep.json`` (empty when absent, as in older sweeps)."""
    try:
        data = json.loads((folder / "sweep.json").read_text())
    except (OSError, ValueError):
        return {}
    labels = data.get("labels") if isinstance(data, dict) else None
    return labels if isinstance(labels, dict) else {}


def _load_sweep(folder: Path) -> RunSet:
    import pyarrow.parquet as pq

    table_path = folder / "results.parquet"
    try:
        table = pq.read_table(table_path)
    except Exception as e:  # pyarrow raises several types for a broken file
        raise ReportInputError(f"DIR = '{folder}': results.parquet is not readable ({e})") from None
    cols = table.column_names
    if "run_key" not in cols or "seed" not in cols:
        raise ReportInputError(
            f"DIR = '{folder}': results.parquet has no run_key/seed columns (not a sweep)"
        )
    i, j = cols.index("run_key"), cols.index("seed")
    keys = cols[i + 1 : j] if j > i else []
    rows = table.to_pylist()
    labels = _sweep_labels(folder)
    axes = [Axis.from_values(k, [r[k] for r in rows], labels.get(k)) for k in keys]
    # numeric axes in numeric order (2 ms before 10 ms), categories in the spec's order
    rows.sort(key=lambda r: tuple(a.position(r[a.key]) for a in axes))
    runs = []
    for row in rows:
        key = str(row["run_key"])
        error = row.get("error")
        error = None if _is_missing(error) else str(error)
        label = ", ".join(a.describe(row[a.key]) for a in axes) or "all runs"
        summary = None
        js = folder / "runs" / f"{key}.json"
        if js.is_file():
            summary = _read_json(js, "run").get("summary")
            if summary is not None:
                check_summary(summary, f"run = '{js}': summary")
        ts = folder / "timeseries" / f"run_key={key}" / "part-0.parquet"
        seed = row.get("seed")
        runs.append(
            Run(
                key=key,
                config=label,
                seed=None if _is_missing(seed) else int(seed),
                summary=summary,
                error=error,
                flat=row,
                timeseries_path=ts if ts.is_file() else None,
            )
        )
    return RunSet("sweep", folder, runs, list(keys), axes)


def _run_from_folder(folder: Path) -> Run:
    summary = _read_json(folder / "summary.json", "summary")
    check_summary(summary, f"summary = '{folder / 'summary.json'}'")
    seed = summary.get("seed")
    ts = folder / "timeseries.parquet"
    return Run(
        key=folder.name,
        config=folder.name,
        seed=seed if isinstance(seed, int) else None,
        summary=summary,
        timeseries_path=ts if ts.is_file() else None,
    )


def _group_single_runs(runs: list[Run]) -> None:
    """Label runs by scenario and AQMs; per folder if that would merge two equal seeds."""
    groups: dict[str, list[Run]] = {}
    for r in runs:
        s = r.summary or {}
        aqms = "+".join(sorted({str(v.get("aqm", "?")) for v in s.get("links", {}).values()}))
        name = str(s.get("scenario", "?"))
        # the demo names its scenarios after the AQM already ("demo-codel")
        label = name if aqms and aqms in name else f"{name} / {aqms or '?'}"
        groups.setdefault(label, []).append(r)
    clash = any(len({r.seed for r in g}) < len(g) for g in groups.values())
    if clash:
        return  # every run keeps its folder name as its configuration
    for label, g in groups.items():
        for r in g:
            r.config = label


def load_runs(source: str | Path) -> RunSet:
    """Read a sweep folder, a folder of single runs, or a single run folder.

    Parameters
    ----------
    source : path
        The folder.

    Returns
    -------
    RunSet

    Raises
    ------
    ReportInputError
        ``source`` does not exist, is not a folder, or holds none of the three layouts.
    """
    folder = Path(source)
    if not folder.exists():
        raise ReportInputError(f"DIR = '{source}': no such folder")
    if not folder.is_dir():
        raise ReportInputError(f"DIR = '{source}': not a folder")
    if (folder / "results.parquet").is_file():
        return _load_sweep(folder)
    if (folder / "summary.json").is_file():
        return RunSet("run", folder, [_run_from_folder(folder)])
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "summary.json").is_file())
    if subs:
        runs = [_run_from_folder(p) for p in subs]
        _group_single_runs(runs)
        return RunSet("runs", folder, runs)
    raise ReportInputError(
        f"DIR = '{source}': not a sweep (results.parquet), a run (summary.json) or a folder of runs"
    )


def primary_link(summary: dict[str, Any] | None, flat: dict[str, Any] | None = None) -> str | None:
    """The link a report describes: ``bottleneck`` if present, else the first link.

    Parameters
    ----------
    summary : dict or None
        A run's ``summary.json``.
    flat : dict, optional
        A sweep's results row (flattened keys), used when there is no summary.

    Returns
    -------
    str or None
    """
    if summary is not None:
        links = list(summary.get("links", {}))
    else:
        links = list(dict.fromkeys(k.split(".")[1] for k in (flat or {}) if k.startswith("links.")))
    if "bottleneck" in links:
        return "bottleneck"
    return links[0] if links else None
