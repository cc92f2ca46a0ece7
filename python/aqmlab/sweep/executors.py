"""Where a sweep's runs execute: a local pool of worker processes or a Dask cluster.

Both yield ``(record, timeseries_bytes)`` pairs (:func:`aqmlab.sweep.worker.execute`) as runs
finish, in completion order; the caller writes them. Both run :func:`~aqmlab.sweep.worker.execute`
on the same data, so a spec gives the same rows on either.

* :class:`LocalPool`: ``multiprocessing`` with the ``forkserver`` start method (``spawn`` where
  there is none); each worker imports aqmlab once and runs many simulations.
* :class:`DaskCluster`: ``"local"`` starts a ``dask.distributed.LocalCluster`` of single-threaded
  worker processes; any other address connects to a running scheduler. Dask is the optional
  extra ``aqmlab[dask]``.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
from collections.abc import Iterator
from typing import Any

from aqmlab.scenario import ScenarioError
from aqmlab.sweep.spec import Run

__all__ = ["LocalPool", "DaskCluster", "default_workers", "check_workers"]

Result = tuple[dict[str, Any], "bytes | None"]


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: Any, key: str = "--workers") -> int | None:
    """``workers`` as a whole number >= 1 (None: the default); else a one-line error."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ScenarioError(f"{key} = {workers!r}: must be a whole number >= 1")
    return workers


@contextlib.contextmanager
def _main_importable() -> Iterator[None]:
    """Hide a ``__main__.__file__`` that is no file (``python - <script``: ``<stdin>``) while
    worker processes start: spawn and forkserver would try to run it in each worker and fail.
    The workers need nothing from ``__main__``: their task functions live in aqmlab."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None or os.path.isfile(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


class LocalPool:
    """A pool of ``workers`` local processes (default: all cores), started on first use and
    kept for later sweeps until :meth:`close`."""

    def __init__(self, workers: int | None = None):
        self.workers = check_workers(workers) or default_workers()
        self._pool = None

    def __repr__(self) -> str:
        return f"LocalPool(workers={self.workers})"

    def _start(self):
        from aqmlab.sweep import worker

        if self._pool is None:
            methods = mp.get_all_start_methods()
            ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
            if ctx.get_start_method() == "forkserver":
                ctx.set_forkserver_preload(["aqmlab.sim", "aqmlab.sweep.worker"])
            with _main_importable():
                self._pool = ctx.Pool(self.workers, initializer=worker.init_worker)
        return self._pool

    def close(self) -> None:
        """Stop the worker processes."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def run(self, base: dict[str, Any], runs: list[Run], timeseries: bool) -> Iterator[Result]:
        from aqmlab.sweep import worker

        if not runs:
            return
        pool = self._start()
        tasks = [(base, r.key, r.overrides, r.seed, timeseries) for r in runs]
        finished = False
        try:
            yield from pool.imap_unordered(worker.run_task, tasks, chunksize=1)
            finished = True
        finally:
            if not finished:  # interrupted: stop the runs still going
                self.close()


class DaskCluster:
    """Runs on Dask: ``address="local"`` starts a LocalCluster of ``workers`` single-threaded
    processes (default: all cores); another address is a running scheduler's (``--workers``
    does not apply then).

    Raises
    ------
    ScenarioError
        Dask is not installed, or the scheduler cannot be reached (checked on construction,
        before anything runs).
    """

    def __init__(self, address: str, workers: int | None = None, timeout: float = 3.0):
        address = str(address).strip()
        if not address:
            raise ScenarioError(
                "--dask = '': give 'local' or a scheduler address (tcp://host:8786)"
            )
        workers = check_workers(workers)
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ScenarioError(
                f"--dask = {address!r}: dask.distributed is not installed "
                "(pip install 'aqmlab[dask]')"
            ) from None
        self.address = address
        self._cluster = None
        if address == "local":
            self.workers = workers or default_workers()
            self._cluster = LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=50,
            )
            self.client = Client(self._cluster)
        else:
            if workers is not None:
                raise ScenarioError(
                    f"--workers = {workers}: the cluster at {address!r} has its own workers"
                )
            try:
                self.client = Client(address, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as e:
                msg = " ".join(str(e).split())
                raise ScenarioError(f"--dask = {address!r}: cannot connect ({msg})") from None
            self.workers = len(self.client.scheduler_info().get("workers", {}))

    def __repr__(self) -> str:
        return f"DaskCluster({self.address!r}, workers={self.workers})"

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()

    def run(self, base: dict[str, Any], runs: list[Run], timeseries: bool) -> Iterator[Result]:
        from dask.distributed import as_completed

        from aqmlab.sweep.worker import execute

        if not runs:
            return
        [base_f] = self.client.scatter([base], broadcast=True)
        futures = {
            self.client.submit(
                execute,
                base_f,
                r.key,
                r.overrides,
                r.seed,
                timeseries,
                pure=False,  # a fresh task key per run: keys repeat across sweeps
            ): r
            for r in runs
        }
        try:
            for fut in as_completed(futures):
                r = futures[fut]
                try:
                    yield fut.result()
                except Exception as e:  # the worker died: record the run as failed
                    msg = " ".join(str(e).split())
                    rec = {
                        "run_key": r.key,
                        "overrides": r.overrides,
                        "seed": r.seed,
                        "summary": None,
                        "error": f"{type(e).__name__}: {msg}",
                        "wall_s": 0.0,
                    }
                    yield rec, None
        finally:
            self.client.cancel(list(futures))
