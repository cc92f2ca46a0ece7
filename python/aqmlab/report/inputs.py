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

__all__ = ["Run", "RunSet", "ReportInputError", "load_runs", "primary_link"]


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
        """The run's time series as a pandas DataFrame, or None."""
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
    """

    kind: str
    source: Path
    runs: list[Run]
    keys: list[str] = field(default_factory=list)

    @property
    def configs(self) -> list[str]:
        """Configuration labels in order of first appearance."""
        return list(dict.fromkeys(r.config for r in self.runs))

    def ok(self, config: str | None = None) -> list[Run]:
        """The successful runs (with a summary or a results row), of one configuration or all."""
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


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


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
    runs = []
    for row in table.to_pylist():
        key = str(row["run_key"])
        error = row.get("error")
        error = None if _is_missing(error) else str(error)
        label = ", ".join(f"{k}={_fmt_value(row[k])}" for k in keys) or "all runs"
        summary = None
        js = folder / "runs" / f"{key}.json"
        if js.is_file():
            summary = _read_json(js, "run").get("summary")
            if not isinstance(summary, dict):
                summary = None
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
    return RunSet("sweep", folder, runs, list(keys))


def _run_from_folder(folder: Path) -> Run:
    summary = _read_json(folder / "summary.json", "summary")
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
    """The link a report describes: ``bottleneck`` if present, else the first link."""
    if summary is not None:
        links = list(summary.get("links", {}))
    else:
        links = list(dict.fromkeys(k.split(".")[1] for k in (flat or {}) if k.startswith("links.")))
    if "bottleneck" in links:
        return "bottleneck"
    return links[0] if links else None
