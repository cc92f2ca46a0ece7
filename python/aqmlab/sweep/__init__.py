"""Sweeps: one base scenario over seeds and overrides, on all cores or a Dask cluster.

:func:`run` executes a spec (:mod:`aqmlab.sweep.spec`) and returns the results table, one row
per run (``results.parquet``, :mod:`aqmlab.sweep.table`); statistics across seeds are in
:mod:`aqmlab.stats`. The output folder is described in :mod:`aqmlab.sweep.store` and
``docs/sweep.md``.

Examples
--------
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "sw"
>>> df = run({"base": {"duration": "2s", "dumbbell": {"rate": "10Mbps"},
...                    "flows": [{"count": 2}]},
...           "seeds": [1, 2], "grid": {"aqm.type": ["codel", "pie"]}}, out, workers=1)
>>> list(df.columns[:5]), len(df)
(['run_key', 'aqm.type', 'seed', 'error', 'wall_s'], 4)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aqmlab.sweep.executors import DaskCluster, LocalPool, check_workers, default_workers
from aqmlab.sweep.spec import Run, SweepSpec, load_spec, run_key
from aqmlab.sweep.store import SweepStore
from aqmlab.sweep.table import flatten_summary, records_table

__all__ = [
    "run",
    "prepare",
    "Prepared",
    "load_spec",
    "SweepSpec",
    "Run",
    "run_key",
    "flatten_summary",
    "records_table",
    "LocalPool",
    "DaskCluster",
    "default_workers",
    "check_workers",
    "SweepStore",
]

#: progress(done, total, failed): called after each finished run (skipped runs count as done).
Progress = Callable[[int, int, int], None]


@dataclass
class Prepared:
    """A sweep checked and ready to run: spec, output folder, executor, the runs to do."""

    spec: SweepSpec
    out: Path
    executor: LocalPool | DaskCluster
    runs: list[Run]
    todo: list[Run]
    force: bool
    own_executor: bool = True

    @property
    def skipped(self) -> int:
        return len(self.runs) - len(self.todo)


def prepare(
    spec: SweepSpec | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    dask: str | None = None,
    timeseries: bool | None = None,
    force: bool = False,
    executor: LocalPool | DaskCluster | None = None,
) -> Prepared:
    """Check everything a sweep needs before anything runs or is written (see :func:`run`).

    ``executor`` runs the sweep on an existing pool or cluster (which the caller closes);
    ``workers`` and ``dask`` are then not used.

    Raises
    ------
    ValueError
        A one-line message naming the key and value: the spec, ``workers``, ``dask`` or the
        output folder.
    """
    sp = load_spec(spec)
    if timeseries is not None:
        sp.timeseries = bool(timeseries) or sp.timeseries
    check_workers(workers)
    resumed = SweepStore.check(out, sp, force)
    runs = sp.runs()
    if resumed and not force:
        done = SweepStore(Path(out), True).done()
        todo = [r for r in runs if r.key not in done]
    else:
        todo = list(runs)
    own = executor is None
    if executor is None:
        executor = DaskCluster(dask, workers) if dask is not None else LocalPool(workers)
    return Prepared(sp, Path(out), executor, runs, todo, force, own)


def execute(prep: Prepared, progress: Progress | None = None):
    """Run a prepared sweep: write each run as it finishes, then ``results.parquet``.

    Ctrl-C (``KeyboardInterrupt``) stops the workers, writes ``results.parquet`` from the runs
    that finished and re-raises. Returns the results table as a pandas DataFrame.
    """
    store = SweepStore.open(prep.out, prep.spec, prep.force)
    total = len(prep.runs)
    done = prep.skipped
    failed = 0
    if progress is not None:
        progress(done, total, failed)
    try:
        for record, ts in prep.executor.run(prep.spec.base, prep.todo, prep.spec.timeseries):
            store.write(record, ts)
            done += 1
            failed += record["error"] is not None
            if progress is not None:
                progress(done, total, failed)
    finally:
        if prep.own_executor:
            prep.executor.close()
        df = store.finish(prep.spec, prep.runs)
    return df


def run(
    spec: SweepSpec | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    dask: str | None = None,
    timeseries: bool | None = None,
    force: bool = False,
    progress: Progress | None = None,
):
    """Run a sweep and return its results table.

    Parameters
    ----------
    spec : path, dict or SweepSpec
        The sweep spec (TOML file or the same data; :func:`load_spec`).
    out : path
        The output folder (``docs/sweep.md``). A folder holding a sweep of the same base
        scenario is resumed: runs already recorded are skipped.
    workers : int, optional
        Local worker processes (default: all cores); with ``dask="local"``, the LocalCluster's.
    dask : str, optional
        ``"local"`` (start a ``LocalCluster``) or a scheduler address (``tcp://host:8786``).
    timeseries : bool, optional
        Keep every run's time series (also ``timeseries = true`` in the spec).
    force : bool
        Replace ``out`` even if it is not an aqmlab folder, or holds another sweep; never
        resume.
    progress : callable, optional
        ``progress(done, total, failed)`` after each run.

    Returns
    -------
    pandas.DataFrame
        One row per run (``results.parquet``): ``run_key``, the override columns, ``seed``,
        ``error``, ``wall_s`` and the summary's numeric figures flattened with dots.

    Raises
    ------
    ValueError
        Bad input (spec, workers, dask address, output folder), before anything runs.
    """
    t0 = time.perf_counter()
    prep = prepare(spec, out, workers=workers, dask=dask, timeseries=timeseries, force=force)
    df = execute(prep, progress)
    df.attrs["wall_s"] = time.perf_counter() - t0
    return df
