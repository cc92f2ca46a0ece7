"""A forked process that imports the slow modules of a command's writing while the command runs.

``aqmlab dumbbell`` simulates its default run in 0.05 s, but writing its results needs pyarrow
(with numpy, about 0.12 s to import on the reference machine) and its figure needs matplotlib
(about 0.45 s more, then 0.2 s to draw). The simulator commands therefore fork a :class:`Worker`
as soon as they start: it imports those modules while the parent checks its input and simulates;
the parent then hands it one job (draw ``queue.png``, or without figures write the Parquet
files), does the rest of the writing itself and waits for the worker before it finishes the
result folder. With a second core free this takes about 0.22 s off ``aqmlab dumbbell`` and
0.08 s off ``aqmlab dumbbell --no-plots``; when other programs keep the cores busy the two
processes only compete (measured: from no gain to 0.13 s slower), and with a single core there
is no worker.

* The worker writes into the result's temporary folder (:func:`aqmlab.output.output_dir`), and
  a figure under a temporary name that is renamed (:func:`aqmlab.output.write_atomic`), so
  nothing is ever half-written in a result.
* The worker ignores SIGINT (Ctrl-C reaches the whole process group): the parent decides. On any
  exception or signal in the parent, :meth:`Worker.close` kills and reaps the worker before the
  temporary folder is removed, so nothing is left behind.
* If the parent dies, the worker reads an end of file once its imports are done and exits
  without writing anything.
* A failure in the worker reaches the parent as :class:`WorkerError`, one line.

The console script (:mod:`aqmlab.console`) forks the worker even earlier, before the command
line's own imports, when its arguments ask for a run (:func:`start_early`); the command takes
that worker (:func:`take`) and one it does not take is killed at exit (:func:`discard`).

Where there is no ``os.fork`` or one core, :func:`start` returns None and the command does all
its writing itself, as before.
"""

from __future__ import annotations

import os

# Only os before the fork, which the console script does first thing: the rest (signal, typing,
# pickle, threading: about 0.015 s) is imported where it is used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Sequence
    from typing import Any

__all__ = [
    "FIGURE",
    "PARQUET",
    "Worker",
    "WorkerError",
    "discard",
    "preload_for",
    "start",
    "start_early",
    "take",
]

#: What a worker imports for drawing ``queue.png``, and for writing Parquet files.
FIGURE = ("matplotlib.figure", "matplotlib.backends.backend_agg")
PARQUET = ("pyarrow.parquet",)


def preload_for(plots: bool) -> tuple[str, ...]:
    """What a worker imports for a run's writing: :data:`FIGURE` with plots, else
    :data:`PARQUET` (the worker then writes the Parquet files).

    Parameters
    ----------
    plots : bool
        The run draws ``queue.png``.

    Returns
    -------
    tuple of str
    """
    return FIGURE if plots else PARQUET


_OK = b"0"
_FAILED = b"1"


class WorkerError(RuntimeError):
    """The worker's job failed or the worker died; the message is one line."""


def start(preload: Sequence[str]) -> Worker | None:
    """Fork a worker that imports the modules ``preload`` names now; None where there is no
    ``os.fork`` or only one core to run on (a worker would only compete with its parent).

    Parameters
    ----------
    preload : sequence of str
        Modules the worker imports at once.

    Returns
    -------
    Worker or None
    """
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    if not hasattr(os, "fork") or cores < 2:
        return None
    return Worker(preload)


_early: Worker | None = None


def start_early(preload: Sequence[str]) -> None:
    """Fork a worker now, for the command that :func:`take` s it later.

    Parameters
    ----------
    preload : sequence of str
        Modules the worker imports at once.
    """
    global _early
    if _early is None:
        _early = start(preload)


def take(preload: Sequence[str]) -> Worker | None:
    """The worker :func:`start_early` forked, else a new one (or None: see :func:`start`).

    Parameters
    ----------
    preload : sequence of str
        Modules the worker imports at once.

    Returns
    -------
    Worker or None
    """
    global _early
    worker, _early = _early, None
    return worker or start(preload)


def discard() -> None:
    """Kill and reap a worker :func:`start_early` forked that no command took."""
    global _early
    if _early is not None:
        _early.close()
        _early = None


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _serve(jobs: int, replies: int, preload: Sequence[str]) -> int:
    """The worker's life: import ``preload``, read one job, run it, reply. Returns the status."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the parent owns stdout (its table); warnings still reach stderr
    os.close(devnull)
    # no linear algebra here; OpenBLAS's threads would make numpy's import ~0.06 s slower
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import importlib
    import pickle

    for name in preload:  # the slow part, done while the parent simulates
        importlib.import_module(name)
    data = _read_all(jobs)
    if not data:  # the parent went away or needs the worker no more
        return 0
    try:
        fn, args = pickle.loads(data)
        fn(*args)
        reply = _OK
    except Exception as e:  # noqa: BLE001  (any failure becomes the parent's one line)
        reply = _FAILED + " ".join(f"{type(e).__name__}: {e}".split()).encode()
    _write_all(replies, reply)
    return 0


class Worker:
    """A forked process that runs one job of a command's writing (see the module's description).

    Use :meth:`submit` once, then :meth:`wait`; :meth:`close` (also a context manager's exit)
    kills a worker that has not finished and reaps it.

    Parameters
    ----------
    preload : sequence of str
        Modules the worker imports at once, before its job arrives.
    """

    def __init__(self, preload: Sequence[str]) -> None:
        jobs_r, jobs_w = os.pipe()
        replies_r, replies_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller's code
            status = 1
            try:
                os.close(jobs_w)
                os.close(replies_r)
                status = _serve(jobs_r, replies_w, preload)
            except BaseException:  # noqa: BLE001
                status = 1
            finally:
                os._exit(status)
        os.close(jobs_r)
        os.close(replies_w)
        self._pid: int | None = pid
        self._jobs: int | None = jobs_w
        self._replies: int | None = replies_r
        self._sender: threading.Thread | None = None
        self._what = "the worker"

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def submit(self, what: str, fn: Callable[..., Any], *args: Any) -> None:
        """Have the worker run ``fn(*args)`` (picklable: a module-level function or a method of
        a picklable object); ``what`` names the output in an error (``"queue.png"``). Returns
        at once: a thread feeds the pipe while the worker may still be importing.

        Parameters
        ----------
        what : str
            The output's name, for an error.
        fn : callable
            The function to run (picklable).
        *args
            Its arguments (picklable).
        """
        import pickle
        import threading

        self._what = what
        data = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)

        def send() -> None:
            try:
                _write_all(self._jobs, data)
            except OSError:  # the worker died; wait() reports it
                pass
            finally:
                os.close(self._jobs)
                self._jobs = None

        self._sender = threading.Thread(target=send, name="aqmlab-worker", daemon=True)
        self._sender.start()

    def wait(self) -> None:
        """Wait until the job is done.

        Raises
        ------
        WorkerError
            ``WHAT: reason`` when the job failed or the worker died.
        """
        if self._sender is not None:
            self._sender.join()
        reply = _read_all(self._replies)
        status = self._reap()
        self._close_fds()
        if reply == _OK and status == 0:
            return
        if reply.startswith(_FAILED):
            raise WorkerError(f"{self._what}: {reply[1:].decode(errors='replace')}")
        raise WorkerError(f"{self._what}: the worker process ended (wait status {status})")

    def close(self) -> None:
        """Kill the worker if it is still running, reap it and close the pipes (idempotent)."""
        if self._pid is not None:
            import signal

            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap()
        if self._sender is not None:
            self._sender.join()  # the write fails at once: the reader is gone
        self._close_fds()

    def _reap(self) -> int:
        """Wait for the worker to end; its wait status (0 if it was reaped already: a caller
        that ignores SIGCHLD has its children reaped by the kernel)."""
        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:
            status = 0
        self._pid = None
        return status

    def _close_fds(self) -> None:
        # after submit, the sender thread owns the job pipe and has closed it (joined above)
        for name in ("_jobs", "_replies"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
