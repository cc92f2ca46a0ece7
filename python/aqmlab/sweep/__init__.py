"""Sweeps: one base scenario over seeds and overrides, on all cores or a Dask cluster.

:func:`run` executes a spec (:mod:`aqmlab.sweep.spec`) and returns a :class:`SweepResult`
(:mod:`aqmlab.sweep.result`) whose ``to_pandas()`` is the results table, one row per run
(``results.parquet``, :mod:`aqmlab.sweep.table`); statistics across seeds are in
:mod:`aqmlab.stats` (``SweepResult.stats()``). :meth:`SweepResult.load` reads a sweep folder
back. The output folder is described in :mod:`aqmlab.sweep.store` and ``docs/sweep.md``.

Examples
--------
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "sw"
>>> res = run({"base": {"duration": "2s", "dumbbell": {"rate": "10Mbps"},
...                     "flows": [{"count": 2}]},
...            "seeds": [1, 2], "grid": {"aqm.type": ["codel", "pie"]}}, out, workers=1)
>>> df = res.to_pandas()
>>> list(df.columns[:5]), len(df)
(['run_key', 'aqm.type', 'seed', 'error', 'wall_s'], 4)
>>> len(SweepResult.load(out).to_pandas())
4
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.output import signals_deferred
from aqmlab.sweep.budget import DEFAULT_MAX_RUNS, DEFAULT_MAX_TIME, Estimate, check_budget
from aqmlab.sweep.executors import DaskCluster, LocalPool, check_workers, default_workers
from aqmlab.sweep.result import SweepResult
from aqmlab.sweep.spec import Run, SweepSpec, check_runs, load_spec, run_key
from aqmlab.sweep.store import SweepStore
from aqmlab.sweep.table import flatten_summary, records_table

__all__ = [
    "run",
    "SweepResult",
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
    "Estimate",
    "DEFAULT_MAX_RUNS",
    "DEFAULT_MAX_TIME",
]

#: progress(done, total, failed): called after each finished run (skipped runs count as done).
Progress = Callable[[int, int, int], None]


@dataclass
class Prepared:
    """A sweep checked and ready to run: spec, output folder, executor, the runs to do.

    ``trusted`` maps the runs whose record verified to their scenario checksums; ``rejected``
    lists the records that did not verify (``(runs/KEY.json, why)``: those runs run again);
    ``sweep_json_missing`` says that a resumed folder had lost its ``sweep.json``; ``estimate``
    is the sweep's estimated cost; ``kept`` is set by :func:`execute`: the runs in the table.

    Attributes
    ----------
    spec : SweepSpec
        The sweep.
    out : Path
        Its folder.
    executor : LocalPool or DaskCluster
        Where the runs go.
    runs : list of Run
        Every run of the spec.
    todo : list of Run
        The runs still to do.
    force : bool
        Start afresh.
    own_executor : bool
        :func:`execute` closes the executor (it was made by :func:`prepare`).
    trusted : dict
        Run key to scenario checksum of the records that verified.
    rejected : list of tuple
        ``(runs/KEY.json, why)`` of the records that did not verify.
    sweep_json_missing : bool
        A resumed folder had lost its ``sweep.json``.
    estimate : Estimate or None
        The sweep's estimated cost.
    kept : int
        Set by :func:`execute`: the runs in the table.
    """

    spec: SweepSpec
    out: Path
    executor: LocalPool | DaskCluster
    runs: list[Run]
    todo: list[Run]
    force: bool
    own_executor: bool = True
    trusted: dict[str, str] = field(default_factory=dict)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    sweep_json_missing: bool = False
    estimate: Estimate | None = None
    kept: int = 0

    @property
    def skipped(self) -> int:
        """The runs already done (their records verified)."""
        return len(self.runs) - len(self.todo)

    def resume_line(self) -> str | None:
        """One line on what resuming found (None when nothing was resumed): the runs already
        done, the records that did not verify (they run again) and a missing sweep.json.

        Returns
        -------
        str or None
        """
        if not self.skipped and not self.rejected and not self.sweep_json_missing:
            return None
        parts = [f"resuming {self.out}: {self.skipped} of {len(self.runs)} runs already done"]
        if self.sweep_json_missing:
            parts.append("sweep.json was missing (records checked against the spec)")
        if self.rejected:
            shown = "; ".join(f"{name}: {why}" for name, why in self.rejected[:3])
            more = f"; and {len(self.rejected) - 3} more" if len(self.rejected) > 3 else ""
            n = len(self.rejected)
            parts.append(
                f"{n} record{'s' if n != 1 else ''} did not verify and run again ({shown}{more})"
            )
        return "; ".join(parts)


def _max_time(max_time: float | str | None) -> tuple[float | None, str]:
    """``max_time`` in seconds (a number, or a time with a unit: ``"24h"``) and as given."""
    if max_time is None:
        return None, ""
    from aqmlab.units import UnitError, parse_time

    try:
        secs = parse_time(max_time, key="--max-time")
    except UnitError as e:
        raise ValueError(str(e)) from None
    if not math.isfinite(secs) or secs <= 0:
        raise ValueError(f"--max-time = {max_time}: must be a time > 0, e.g. 24h")
    return secs, str(max_time)


def prepare(
    spec: SweepSpec | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    dask: str | None = None,
    timeseries: bool | None = None,
    force: bool = False,
    executor: LocalPool | DaskCluster | None = None,
    max_runs: int | None = DEFAULT_MAX_RUNS,
    max_time: float | str | None = DEFAULT_MAX_TIME,
) -> Prepared:
    """Check everything a sweep needs before anything runs or is written (see :func:`run`).

    ``executor`` runs the sweep on an existing pool or cluster (which the caller closes);
    ``workers`` and ``dask`` are then not used. A resumed folder's records are verified here
    (:meth:`SweepStore.verify`).

    Parameters
    ----------
    spec : path, dict or SweepSpec
        As for :func:`run`.
    out : path
        As for :func:`run`.
    workers, dask, timeseries, force, max_runs, max_time
        As for :func:`run`.
    executor : LocalPool or DaskCluster, optional
        An existing pool or cluster to run on (the caller closes it).

    Returns
    -------
    Prepared

    Raises
    ------
    ValueError
        A one-line message naming the key and value: the spec, ``workers``, ``dask``,
        ``max_runs``, ``max_time`` (with the estimate) or the output folder.
    """
    if isinstance(spec, SweepSpec):
        sp = spec
        check_runs(sp, max_runs)
    else:
        sp = load_spec(spec, max_runs=max_runs)
    if timeseries is not None:
        sp.timeseries = bool(timeseries) or sp.timeseries
    check_workers(workers)
    limit, limit_text = _max_time(max_time)
    resumed = SweepStore.check(out, sp, force)
    runs = sp.runs()
    trusted: dict[str, str] = {}
    rejected: list[tuple[str, str]] = []
    missing = False
    if resumed:
        trusted, rejected = SweepStore(Path(out), True).verify(sp, runs)
        missing = SweepStore.sweep_json_missing(out)
    todo = [r for r in runs if r.key not in trusted]
    own = executor is None
    remote = (
        (dask is not None and dask != "local")
        if own
        else (isinstance(executor, DaskCluster) and executor.address != "local")
    )
    est = None
    if not remote:
        asked = workers if own else executor.workers
        est, n = check_budget(
            sp, sp.label, asked, default_workers(), limit, limit_text, todo=len(todo)
        )
        if own and workers is None:
            workers = n
    if executor is None:
        executor = DaskCluster(dask, workers) if dask is not None else LocalPool(workers)
    if remote:
        try:
            est, _ = check_budget(
                sp, sp.label, executor.workers, 1, limit, limit_text, local=False, todo=len(todo)
            )
        except ValueError:
            if own:
                executor.close()
            raise
    return Prepared(
        sp, Path(out), executor, runs, todo, force, own, trusted, rejected, missing, est
    )


def execute(prep: Prepared, progress: Progress | None = None):
    """Run a prepared sweep: write each run as it finishes, then ``results.parquet``.

    Ctrl-C (``KeyboardInterrupt``; the command line turns SIGTERM into one too) stops the
    workers, writes ``results.parquet`` from the runs that finished (``prep.kept`` of them) and
    re-raises; a signal that comes while the table is being written waits until it is.

    Parameters
    ----------
    prep : Prepared
        What :func:`prepare` returned.
    progress : callable, optional
        ``progress(done, total, failed)`` after each run.

    Returns
    -------
    pandas.DataFrame
        The results table (``results.parquet``); :func:`run` wraps it in a
        :class:`SweepResult`.
    """
    store = SweepStore.open(prep.out, prep.spec, prep.force, prep.trusted)
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
        with signals_deferred():  # a signal now waits until the table is written
            if prep.own_executor:
                prep.executor.close()
            df = store.finish(prep.spec, prep.runs)
            prep.kept = len(df)
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
    max_runs: int | None = DEFAULT_MAX_RUNS,
    max_time: float | str | None = DEFAULT_MAX_TIME,
):
    """Run a sweep and return its results.

    Parameters
    ----------
    spec : path, dict or SweepSpec
        The sweep spec (TOML file or the same data; :func:`load_spec`).
    out : path
        The output folder (``docs/sweep.md``). A folder holding a sweep of the same base
        scenario is resumed: runs whose record verifies are skipped, the others run again.
    workers : int, optional
        Local worker processes (default: all cores, fewer if their runs would not fit in the
        memory available); with ``dask="local"``, the LocalCluster's. At most 4 x the cores.
    dask : str, optional
        ``"local"`` (start a ``LocalCluster``) or a scheduler address (``tcp://host:8786``).
    timeseries : bool, optional
        Keep every run's time series (also ``timeseries = true`` in the spec).
    force : bool
        Replace ``out`` even if it is not an aqmlab folder, or holds another sweep; never
        resume.
    progress : callable, optional
        ``progress(done, total, failed)`` after each run.
    max_runs : int or None
        Refuse a spec of more runs (None: no limit).
    max_time : float, str or None
        Refuse a sweep whose estimated wall-clock time is longer: seconds, or a time with a
        unit (``"24h"``); None: no limit.

    Returns
    -------
    SweepResult
        Its ``to_pandas()`` is the results table, one row per run (``results.parquet``):
        ``run_key``, the override columns, ``seed``, ``error``, ``wall_s`` and the summary's
        numeric figures flattened with dots. (Before this release ``run`` returned that
        DataFrame itself; indexing the result and DataFrame attributes still work, with a
        ``DeprecationWarning``, for one release.)

    Raises
    ------
    ValueError
        Bad input (spec, workers, dask address, output folder, a sweep beyond ``max_runs`` or
        ``max_time``, workers that would not fit in memory), before anything runs.
    """
    t0 = time.perf_counter()
    prep = prepare(
        spec,
        out,
        workers=workers,
        dask=dask,
        timeseries=timeseries,
        force=force,
        max_runs=max_runs,
        max_time=max_time,
    )
    df = execute(prep, progress)
    wall = time.perf_counter() - t0
    df.attrs["wall_s"] = wall
    return SweepResult(prep.out, df, wall)
