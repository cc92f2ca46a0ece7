"""Where a sweep's runs execute: a local pool of worker processes or a Dask cluster.

Both yield ``(record, timeseries_bytes)`` pairs (:func:`aqmlab.sweep.worker.execute`) as runs
finish, in completion order; the caller writes them. Both run :func:`~aqmlab.sweep.worker.execute`
on the same data, so a spec gives the same rows on either.

* :class:`LocalPool`: ``multiprocessing`` processes started with ``forkserver`` (``spawn`` where
  there is none), one run at a time each; each worker imports aqmlab once and runs many
  simulations. A worker killed from outside fails only the run it held and is replaced.
* :class:`DaskCluster`: ``"local"`` starts a ``dask.distributed.LocalCluster`` of single-threaded
  worker processes; any other address connects to a running scheduler. Dask is the optional
  extra ``aqmlab[dask]``.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
from collections import deque
from collections.abc import Iterator
from typing import Any

from aqmlab.scenario import ScenarioError
from aqmlab.sweep.spec import Run

__all__ = ["LocalPool", "DaskCluster", "default_workers", "check_workers", "check_scheduler"]

Result = tuple[dict[str, Any], "bytes | None"]


def default_workers() -> int:
    """All the cores this process may use.

    Returns
    -------
    int
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


#: ``--workers`` may be at most this many times the cores this process may use.
WORKERS_PER_CORE = 4


def check_workers(workers: Any, key: str = "--workers") -> int | None:
    """``workers`` as a whole number in [1, 4 x the cores] (None: the default); else a
    one-line error. (Whether they fit in memory is checked with the spec:
    :func:`aqmlab.sweep.budget.check_budget`.)

    Parameters
    ----------
    workers : any
        The value given.
    key : str
        How the message names it.

    Returns
    -------
    int or None
    """
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ScenarioError(f"{key} = {workers!r}: must be a whole number >= 1")
    cores = default_workers()
    if workers > WORKERS_PER_CORE * cores:
        raise ScenarioError(
            f"{key} = {workers}: more than {WORKERS_PER_CORE} x the {cores} cores this process "
            f"may use ({WORKERS_PER_CORE * cores})"
        )
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


def _death(code: int | None) -> str:
    """The error of a run whose worker process ended (exit code ``code``) before answering."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return (
            f"the worker process running it was killed by {name} (out of memory, or killed "
            "from outside); the sweep went on with a fresh worker"
        )
    return f"the worker process running it exited with status {code}; the sweep went on"


class _Slot:
    """One worker process, its end of the pipe and the run it holds (None: idle)."""

    def __init__(self, proc, conn):
        self.proc = proc
        self.conn = conn
        self.run: Run | None = None


class LocalPool:
    """A pool of ``workers`` local processes (default: all cores), started on first use and
    kept for later sweeps until :meth:`close`.

    Each worker runs one run at a time (:func:`aqmlab.sweep.worker.serve`), so the pool knows
    which run every worker holds: a worker that dies (killed by the out-of-memory killer, or
    SIGKILL from outside) fails only that run, with the signal in its recorded error, and is
    replaced by a fresh worker; the sweep goes on.

    Parameters
    ----------
    workers : int, optional
        Worker processes (default: all cores).
    """

    def __init__(self, workers: int | None = None):
        self.workers = check_workers(workers) or default_workers()
        self._ctx = None
        self._slots: list[_Slot] = []

    def __repr__(self) -> str:
        return f"LocalPool(workers={self.workers})"

    def _context(self):
        if self._ctx is None:
            methods = mp.get_all_start_methods()
            ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
            if ctx.get_start_method() == "forkserver":
                ctx.set_forkserver_preload(["aqmlab.sim", "aqmlab.sweep.worker"])
            self._ctx = ctx
        return self._ctx

    def _spawn(self) -> _Slot:
        from aqmlab.sweep import worker

        ctx = self._context()
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=worker.serve, args=(child,), daemon=True)
        with _main_importable():
            proc.start()
        child.close()
        return _Slot(proc, parent)

    def pids(self) -> list[int]:
        """The process ids of the running workers.

        Returns
        -------
        list of int
        """
        return [s.proc.pid for s in self._slots if s.proc.pid is not None]

    def close(self) -> None:
        """Stop the worker processes (a worker still running a run is killed)."""
        slots, self._slots = self._slots, []
        for s in slots:
            if s.run is None:
                with contextlib.suppress(OSError, ValueError):
                    s.conn.send(None)
            else:
                s.proc.kill()
        for s in slots:
            s.proc.join(timeout=2.0)
            if s.proc.is_alive():
                s.proc.kill()
                s.proc.join()
            s.conn.close()

    def run(self, base: dict[str, Any], runs: list[Run], timeseries: bool) -> Iterator[Result]:
        """Run ``runs`` on the pool's workers, one run per worker at a time.

        Parameters
        ----------
        base : dict
            The base scenario document.
        runs : list of Run
            The runs to do.
        timeseries : bool
            Keep each run's time series.

        Yields
        ------
        tuple of (dict, bytes or None)
            Each finished run's record and time series (:func:`aqmlab.sweep.worker.execute`), in
            the order they finish.
        """
        from multiprocessing.connection import wait

        from aqmlab.sweep.worker import failed_record

        if not runs:
            return
        todo = deque(runs)
        while len(self._slots) < min(self.workers, len(runs)):
            self._slots.append(self._spawn())

        def give(i: int) -> None:
            r = todo.popleft()
            slot = self._slots[i]
            if not slot.proc.is_alive():  # died while idle: a fresh worker takes the run
                slot.conn.close()
                slot = self._slots[i] = self._spawn()
            try:
                slot.conn.send((base, r.key, r.overrides, r.seed, timeseries))
            except (OSError, ValueError):  # it died just now
                slot.conn.close()
                slot = self._slots[i] = self._spawn()
                slot.conn.send((base, r.key, r.overrides, r.seed, timeseries))
            slot.run = r

        finished = False
        try:
            for i in range(len(self._slots)):
                if todo:
                    give(i)
            while any(s.run is not None for s in self._slots):
                slots = list(self._slots)
                waits = [s.proc.sentinel for s in slots]
                waits += [s.conn for s in slots if s.run is not None]
                ready = set(wait(waits))
                for i, s in enumerate(slots):
                    if s.run is None:
                        if s.proc.sentinel in ready:  # an idle worker died: replace it
                            s.conn.close()
                            self._slots[i] = self._spawn()
                        continue
                    if s.conn not in ready and s.proc.sentinel not in ready:
                        continue
                    r = s.run
                    try:
                        if not s.conn.poll():
                            raise EOFError
                        result = s.conn.recv()
                    except (EOFError, OSError):  # the worker died holding this run
                        s.proc.join(timeout=5.0)
                        error = _death(s.proc.exitcode)
                        s.conn.close()
                        self._slots[i] = self._spawn()
                        result = (failed_record(base, r.key, r.overrides, r.seed, error), None)
                    s.run = None
                    yield result
                    if todo:
                        give(i)
            finished = True
        finally:
            if not finished:  # interrupted: stop the runs still going
                self.close()


#: Seconds to wait for a scheduler to accept the connection, and then for its handshake.
DASK_CONNECT_S = 4.0
DASK_HANDSHAKE_S = 4.0


def _recv_exactly(sock, n: int, deadline: float) -> bytes:
    import time

    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(min(n - len(data), 1 << 16))
        if not chunk:
            raise ConnectionResetError("the connection was closed")
        data += chunk
    return data


def check_scheduler(address: str) -> None:
    """Check that a ``tcp://`` address (or ``host:port``) is a Dask scheduler, within about
    8 s: a scheduler sends its handshake (a frame of at most a few hundred bytes, msgpack) as
    soon as it accepts a connection. Anything else (a refused connection, a server that says
    nothing, an HTTP server, a frame that does not decode) is one line, before
    ``dask.distributed.Client`` would hang on it or read its reply as a frame length of
    exabytes. Other protocols (``tls://``, ``inproc://``) are left to the Client's timeout.

    Parameters
    ----------
    address : str
        The scheduler's address.

    Raises
    ------
    ScenarioError
        ``--dask = ADDRESS: ...``.
    """
    import socket
    import struct
    import time

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, loc = parse_address(address)
        if scheme != "tcp":
            return
        host, port = parse_host_port(loc)
    except (ValueError, TypeError) as e:
        raise ScenarioError(f"--dask = {address!r}: not an address ({e})") from None
    where = f"--dask = {address!r}"
    try:
        sock = socket.create_connection((host, port), timeout=DASK_CONNECT_S)
    except TimeoutError:
        raise ScenarioError(
            f"{where}: cannot connect (no answer within {DASK_CONNECT_S:g} s)"
        ) from None
    except OSError as e:
        raise ScenarioError(f"{where}: cannot connect ({e.strerror or e})") from None
    deadline = time.monotonic() + DASK_HANDSHAKE_S
    try:
        with sock:
            (n,) = struct.unpack("<Q", _recv_exactly(sock, 8, deadline))
            if not 16 <= n <= 1 << 20:
                raise ValueError
            body = _recv_exactly(sock, n, deadline)
            import msgpack
            from distributed.protocol.utils import unpack_frames

            hello = msgpack.loads(unpack_frames(body)[0])
            if not isinstance(hello, dict) or "pickle-protocol" not in hello:
                raise ValueError
    except TimeoutError:
        raise ScenarioError(
            f"{where}: not a Dask scheduler (no handshake within {DASK_HANDSHAKE_S:g} s)"
        ) from None
    except OSError as e:
        raise ScenarioError(
            f"{where}: not a Dask scheduler (the connection failed: {e.strerror or e})"
        ) from None
    except Exception:
        raise ScenarioError(
            f"{where}: not a Dask scheduler (it answered with something else)"
        ) from None


class DaskCluster:
    """Runs on Dask: ``address="local"`` starts a LocalCluster of ``workers`` single-threaded
    processes (default: all cores); another address is a running scheduler's (``--workers``
    does not apply then).

    Parameters
    ----------
    address : str
        ``"local"`` or a scheduler's address (``tcp://host:8786``).
    workers : int, optional
        The LocalCluster's workers (default: all cores).
    timeout : float
        Seconds to wait for a remote scheduler.

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
            check_scheduler(address)
            try:
                self.client = Client(address, timeout=timeout)
            except Exception as e:  # any failure to connect is one line
                msg = " ".join(str(e).split()) or type(e).__name__
                raise ScenarioError(f"--dask = {address!r}: cannot connect ({msg})") from None
            self.workers = len(self.client.scheduler_info().get("workers", {}))

    def __repr__(self) -> str:
        return f"DaskCluster({self.address!r}, workers={self.workers})"

    def close(self) -> None:
        """Close the client (and the LocalCluster it started)."""
        with contextlib.suppress(Exception):
            self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()

    def run(self, base: dict[str, Any], runs: list[Run], timeseries: bool) -> Iterator[Result]:
        """Run ``runs`` on the cluster.

        Parameters
        ----------
        base : dict
            The base scenario document.
        runs : list of Run
            The runs to do.
        timeseries : bool
            Keep each run's time series.

        Yields
        ------
        tuple of (dict, bytes or None)
            Each finished run's record and time series (:func:`aqmlab.sweep.worker.execute`), in
            the order they finish.
        """
        from dask.distributed import as_completed

        from aqmlab.sweep.worker import execute, failed_record

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
                    result = fut.result()
                except Exception as e:  # the worker died: record the run as failed
                    msg = " ".join(str(e).split())
                    error = f"{type(e).__name__}: {msg}"
                    result = (failed_record(base, r.key, r.overrides, r.seed, error), None)
                yield result
        finally:
            self.client.cancel(list(futures))
