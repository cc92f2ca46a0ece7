"""One run of a sweep, as executed in a worker process (local pool or Dask worker).

:func:`execute` is a plain function of plain data, so that it pickles to any worker: it applies
the overrides to the base scenario, simulates, and returns the run's record and, if asked, its
time series as Parquet bytes. It never raises for a failed run: the error is in the record.
A local worker process imports aqmlab once (:func:`init_worker`) and runs many simulations.
"""

from __future__ import annotations

import io
import signal
import time
from typing import Any

__all__ = ["execute", "init_worker", "run_task"]


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text if isinstance(e, ValueError) and text else f"{type(e).__name__}: {text}"


def execute(
    base: dict[str, Any],
    key: str,
    overrides: dict[str, Any],
    seed: int,
    timeseries: bool = False,
) -> tuple[dict[str, Any], bytes | None]:
    """Run one simulation of a sweep.

    Returns
    -------
    record : dict
        ``{"run_key", "overrides", "seed", "summary", "error", "wall_s"}``; ``summary`` is the
        run's summary.json (None if it failed), ``error`` the one-line error (None if it ran),
        ``wall_s`` the wall-clock seconds of the whole run in the worker (set-up included).
    timeseries : bytes or None
        The run's ``timeseries.parquet`` content when asked for and the run succeeded.
    """
    from aqmlab.sim import simulate
    from aqmlab.sweep.spec import resolve

    t0 = time.perf_counter()
    summary = None
    error = None
    ts_bytes = None
    try:
        # as `aqmlab run`: with an [sqm] table, Simulation.run runs SQM's online controller
        res = simulate(resolve(base, overrides, seed))
        summary = res.summary
        if timeseries:
            import pyarrow.parquet as pq

            from aqmlab.arrow import table

            buf = io.BytesIO()
            pq.write_table(table(res.columns["timeseries"]), buf)
            ts_bytes = buf.getvalue()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a failed run (a Rust panic too) is recorded, the sweep goes on
        error = _one_line(e)
    record = {
        "run_key": key,
        "overrides": overrides,
        "seed": seed,
        "summary": summary,
        "error": error,
        "wall_s": time.perf_counter() - t0,
    }
    return record, ts_bytes


def init_worker() -> None:
    """Initializer of a local worker process: import the simulator once; leave Ctrl-C to the
    parent (which stops the pool and keeps the finished runs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import aqmlab.sim  # noqa: F401


def run_task(task: tuple[dict[str, Any], str, dict[str, Any], int, bool]):
    """A local worker's task: ``(base, run_key, overrides, seed, timeseries)``."""
    return execute(*task)
