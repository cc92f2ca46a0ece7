"""Draw a run's ``queue.png`` in a forked process while the run goes on.

Importing matplotlib (with numpy) and drawing the figure take about 0.65 s of CPU on the
reference machine, far more than the default dumbbell's simulation (0.05 s). The simulator
commands therefore fork a :class:`FigureWorker` when they start: it imports matplotlib while the
parent checks its input, simulates and writes the Parquet files; the parent then hands it the
figure's columns, it draws the figure, and the parent waits for it before it finishes the result
folder. With a second core free this takes about 0.2 s off ``aqmlab dumbbell``; with none free
the two processes only compete (about 0.1 s slower), and with a single core there is no worker.

* The figure is written to a temporary name beside its target and renamed onto it
  (:func:`aqmlab.output.write_atomic`), inside the result's temporary folder, so a figure is
  never half-written.
* The worker ignores SIGINT (Ctrl-C reaches the whole process group): the parent decides. On any
  exception or signal in the parent, :meth:`FigureWorker.close` kills and reaps the worker
  before the temporary folder is removed, so nothing is left behind.
* If the parent dies, the worker reads an end of file once its imports are done and exits
  without writing anything.
* A failure in the worker reaches the parent as :class:`FigureError`, one line.

The console script (:mod:`aqmlab.console`) forks the worker even earlier, before the command
line's own imports, when its arguments ask for a run with figures (:func:`start_early`); the
command takes that worker (:func:`take`) and one it does not take is killed at exit
(:func:`discard`).

Where there is no ``os.fork`` or one core, :func:`start` returns None and the figure is drawn
in the process itself, as before.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from pathlib import Path
from typing import Any

__all__ = ["FigureError", "FigureWorker", "discard", "start", "start_early", "take"]

_OK = b"0"
_FAILED = b"1"


class FigureError(RuntimeError):
    """The worker could not write the figure; the message is one line."""


def start() -> FigureWorker | None:
    """Fork a worker that imports matplotlib now; None where there is no ``os.fork`` or only
    one core to run on (a worker would only compete with its parent), and the figure is then
    drawn in the process itself."""
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    if not hasattr(os, "fork") or cores < 2:
        return None
    return FigureWorker()


_early: FigureWorker | None = None


def start_early() -> None:
    """Fork a worker now, for the command that :func:`take` s it later."""
    global _early
    if _early is None:
        _early = start()


def take() -> FigureWorker | None:
    """The worker :func:`start_early` forked, else a new one (or None: see :func:`start`)."""
    global _early
    worker, _early = _early, None
    return worker or start()


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


def _serve(jobs: int, replies: int) -> int:
    """The worker's life: import matplotlib, read one job, draw it, reply. Returns the status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the parent owns stdout (its table); warnings still reach stderr
    os.close(devnull)
    # no linear algebra here; OpenBLAS's threads would make numpy's import ~0.06 s slower
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import matplotlib.figure  # noqa: F401  (the slow part, done while the parent simulates)
    from matplotlib.backends import backend_agg  # noqa: F401

    data = _read_all(jobs)
    if not data:  # the parent went away or needs no figure
        return 0
    result, path = pickle.loads(data)
    try:
        from aqmlab.output import write_atomic

        with write_atomic(path) as tmp:
            result.save_queue_figure(tmp)
        reply = _OK
    except Exception as e:  # noqa: BLE001  (any failure becomes the parent's one line)
        reply = _FAILED + " ".join(f"{type(e).__name__}: {e}".split()).encode()
    _write_all(replies, reply)
    return 0


class FigureWorker:
    """A forked process that draws one result's queue figure (see the module's description).

    Use :meth:`submit` once, then :meth:`wait`; :meth:`close` (also a context manager's exit)
    kills a worker that has not finished and reaps it.
    """

    def __init__(self) -> None:
        jobs_r, jobs_w = os.pipe()
        replies_r, replies_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller's code
            status = 1
            try:
                os.close(jobs_w)
                os.close(replies_r)
                status = _serve(jobs_r, replies_w)
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
        self._send_error: BaseException | None = None

    def __enter__(self) -> FigureWorker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def submit(self, result: Any, path: str | os.PathLike[str]) -> None:
        """Hand over the result to draw (an object with ``save_queue_figure(path)``) and the
        figure's path. Returns at once: a thread feeds the pipe while the worker still imports."""
        data = pickle.dumps((result, Path(path)), protocol=pickle.HIGHEST_PROTOCOL)

        def send() -> None:
            try:
                _write_all(self._jobs, data)
            except OSError as e:  # the worker died; wait() reports it
                self._send_error = e
            finally:
                os.close(self._jobs)
                self._jobs = None

        self._sender = threading.Thread(target=send, name="aqmlab-figure", daemon=True)
        self._sender.start()

    def wait(self) -> None:
        """Wait until the figure is written.

        Raises
        ------
        FigureError
            The worker failed (its one-line reason) or died.
        """
        if self._sender is not None:
            self._sender.join()
        reply = _read_all(self._replies)
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        self._close_fds()
        if reply == _OK and status == 0:
            return
        if reply.startswith(_FAILED):
            raise FigureError(reply[1:].decode(errors="replace"))
        raise FigureError(f"the figure process ended without the figure (wait status {status})")

    def close(self) -> None:
        """Kill the worker if it is still running, reap it and close the pipes (idempotent)."""
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self._pid, 0)
            self._pid = None
        if self._sender is not None:
            self._sender.join()  # the write fails at once: the reader is gone
        self._close_fds()

    def _close_fds(self) -> None:
        # after submit, the sender thread owns the job pipe and has closed it (joined above)
        for name in ("_jobs", "_replies"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
