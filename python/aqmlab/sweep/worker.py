"""One run of a sweep, as executed in a worker process (local pool or Dask worker).

:func:`execute` is a plain function of plain data, so that it pickles to any worker: it applies
the overrides to the base scenario, simulates, and returns the run's record and, if asked, its
time series as Parquet bytes. It never raises for a failed run: the error is in the record.
A local worker process imports aqmlab once (:func:`init_worker`) and runs many simulations, one
task at a time from its pipe (:func:`serve`).
"""

from __future__ import annotations

import io
import signal
import time
from typing import Any

__all__ = ["execute", "failed_record", "init_worker", "run_task", "serve"]


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

    Parameters
    ----------
    base : dict
        The base scenario document.
    key : str
        The run key.
    overrides : dict
        The run's overrides.
    seed : int
        The run's seed.
    timeseries : bool
        Return the run's time series.

    Returns
    -------
    record : dict
        ``{"run_key", "overrides", "seed", "scenario_sha256", "scenario_toml", "summary",
        "error", "wall_s"}``; ``scenario_sha256`` the checksum of the run's normalized scenario
        (:func:`aqmlab.sweep.spec.scenario_sha256`), ``scenario_toml`` that scenario as the
        ``scenario.toml`` of a result folder (None if it did not validate), ``summary`` the
        run's summary.json with its ``meta`` (None if
        it failed), ``error`` the one-line error (None if it ran), ``wall_s`` the wall-clock
        seconds of the whole run in the worker (set-up included).
    timeseries : bytes or None
        The run's ``timeseries.parquet`` content when asked for and the run succeeded.
    """
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate
    from aqmlab.sweep.spec import resolve, scenario_sha256

    t0 = time.perf_counter()
    summary = None
    error = None
    ts_bytes = None
    checksum = None
    text = None
    try:
        sc = Scenario(resolve(base, overrides, seed))
        checksum = scenario_sha256(sc)
        text = sc.to_toml()
        # as `aqmlab run`: with an [sqm] table, Simulation.run runs SQM's online controller
        res = simulate(sc)
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
        "scenario_sha256": checksum,
        "scenario_toml": text,
        "summary": summary,
        "error": error,
        "wall_s": time.perf_counter() - t0,
    }
    return record, ts_bytes


def failed_record(
    base: dict[str, Any], key: str, overrides: dict[str, Any], seed: int, error: str
) -> dict[str, Any]:
    """The record of a run that returned nothing because its worker died (computed by the
    parent: the scenario checksum, no summary, ``error``).

    Parameters
    ----------
    base : dict
        The base scenario document.
    key : str
        The run key.
    overrides : dict
        The run's overrides.
    seed : int
        The run's seed.
    error : str
        Why the run returned nothing.

    Returns
    -------
    dict
    """
    from aqmlab.sweep.spec import resolve, scenario_sha256

    return {
        "run_key": key,
        "overrides": overrides,
        "seed": seed,
        "scenario_sha256": scenario_sha256(resolve(base, overrides, seed)),
        "summary": None,
        "error": error,
        "wall_s": 0.0,
    }


def init_worker() -> None:
    """Initializer of a local worker process: import the simulator once; leave Ctrl-C and
    SIGTERM to the parent (which stops the workers and keeps the finished runs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    import aqmlab.sim  # noqa: F401


def run_task(task: tuple[dict[str, Any], str, dict[str, Any], int, bool]):
    """A local worker's task: ``(base, run_key, overrides, seed, timeseries)``.

    Parameters
    ----------
    task : tuple
        ``(base, run_key, overrides, seed, timeseries)``.

    Returns
    -------
    tuple of (dict, bytes or None)
        :func:`execute`'s result.
    """
    return execute(*task)


def serve(conn) -> None:
    """A local worker process: run the tasks received on ``conn`` (a ``multiprocessing``
    connection) one at a time and send back each result, until ``None`` or the parent is gone.

    Parameters
    ----------
    conn : multiprocessing.connection.Connection
        The pipe to the parent.
    """
    init_worker()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        conn.send(run_task(task))
