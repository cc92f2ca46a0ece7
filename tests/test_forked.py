"""The forked process that does a run's slow-to-import writing (aqmlab.forked): the same files
as written by the process itself, its failures as one line, nothing left behind when it is
killed, and the console script's early worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aqmlab import forked
from aqmlab.forked import Worker, WorkerError
from aqmlab.results import SimResult
from badinput import default_sigint, snapshot

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["dumbbell", "--duration", "2s", "--flows", "2", "--out", "res"]
FILES = [".aqmlab", "flows.parquet", "scenario.toml", "summary.json", "timeseries.parquet"]

# The command line with a SimResult method replaced (the forked worker inherits it).
PATCHED = """
import os, sys, time
from pathlib import Path
from aqmlab import results
def boom(self, path):
    raise RuntimeError("cannot write\\nthis")
def slow(self, path):
    Path(os.environ["WRITING"]).write_text("writing")
    time.sleep(60)
{patch}.__name__ = "{method}"  # a pickled method is looked up by its name
setattr(results.SimResult, "{method}", {patch})
from aqmlab.console import main
sys.argv[0] = "aqmlab"
main()
"""

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or forked.start(()) is None, reason="no os.fork or a single core"
)


def _patched(method: str, patch: str, *args: str, cwd: Path, marker: Path | None = None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), WRITING=str(marker))
    code = PATCHED.format(method=method, patch=patch)
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip


def _aqmlab(*args: str, cwd: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    subprocess.run([sys.executable, "-m", "aqmlab", *args], check=True, cwd=cwd, env=env)


def _fail(message: str) -> None:
    raise ValueError(message)


def _write_slowly(path: Path) -> None:
    path.write_bytes(b"half")
    time.sleep(30)


def test_the_worker_writes_the_same_files_as_the_process_itself(tmp_path):
    """With figures the worker draws queue.png and the command writes the Parquet files;
    without, the worker writes them (the same run twice: the same tables)."""
    _aqmlab(*ARGS, "--quiet", cwd=tmp_path)
    _aqmlab(*ARGS[:-1], "bare", "--quiet", "--no-plots", cwd=tmp_path)
    here = tmp_path / "here.png"
    SimResult.load(tmp_path / "res").save_queue_figure(here)  # in this process
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == sorted([*FILES, "queue.png"])
    assert sorted(p.name for p in (tmp_path / "bare").iterdir()) == FILES
    assert (tmp_path / "res" / "queue.png").read_bytes() == here.read_bytes()
    for name in ("timeseries.parquet", "flows.parquet"):  # this process's, the worker's
        assert (tmp_path / "res" / name).read_bytes() == (tmp_path / "bare" / name).read_bytes()


def test_a_failure_is_one_line(tmp_path):
    with Worker(()) as w:
        w.submit("queue.png", _fail, "no data\nat all")
        with pytest.raises(WorkerError) as e:
            w.wait()
    assert str(e.value) == "queue.png: ValueError: no data at all"


def test_close_kills_a_busy_worker_and_reaps_it(tmp_path):
    w = Worker(())
    pid = w._pid
    w.submit("x", _write_slowly, tmp_path / "x")
    deadline = time.monotonic() + 30
    while not (tmp_path / "x").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "x").exists(), "the worker started its job"
    w.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left
    w.close()  # idempotent


def test_a_worker_without_a_job_exits_quietly():
    w = Worker(())
    pid = w._pid
    os.close(w._jobs)  # the parent needs it no more: end of file
    w._jobs = None
    _, status = os.waitpid(pid, 0)
    w._pid = None
    w.close()
    assert status == 0


@pytest.mark.parametrize(
    "method, extra, line",
    [
        ("save_queue_figure", [], "error: queue.png: RuntimeError: cannot write this"),
        ("_write_tables", ["--no-plots"], "error: Parquet files: RuntimeError: cannot write this"),
    ],
)
def test_the_command_reports_a_failure_in_one_line(tmp_path, method, extra, line):
    before = snapshot(tmp_path)
    p = _patched(method, "boom", *ARGS, *extra, cwd=tmp_path)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1
    assert err.strip().splitlines() == [line], err
    assert snapshot(tmp_path) == before, "nothing is written when the worker fails"


@pytest.mark.parametrize(
    "method, extra", [("save_queue_figure", []), ("_write_tables", ["--no-plots"])]
)
def test_ctrl_c_while_the_worker_writes_leaves_nothing(tmp_path, method, extra):
    before = snapshot(tmp_path)
    marker = tmp_path.parent / f"{tmp_path.name}-writing"
    p = _patched(method, "slow", *ARGS, *extra, cwd=tmp_path, marker=marker)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), p.communicate()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130
    assert err.strip().splitlines() == ["error: interrupted"], err
    assert snapshot(tmp_path) == before, "a partial folder or temporary was left behind"


@pytest.mark.parametrize(
    "args, preload",
    [
        (["dumbbell", "--out", "r"], forked.FIGURE),
        (["run", "s.toml", "--out", "r"], forked.FIGURE),
        (["dumbbell", "--out", "r", "--no-plots"], forked.PARQUET),
        (["dumbbell", "--help"], None),
        (["aqms"], None),
        ([], None),
    ],
)
def test_the_console_forks_early_only_for_a_run(args, preload):
    from aqmlab.console import _preload

    assert _preload(args) == preload


def test_an_early_worker_no_command_takes_is_killed(tmp_path, monkeypatch):
    from aqmlab import console

    started = []

    class Recorded(Worker):
        def __init__(self, preload):
            super().__init__(preload)
            started.append(self)

    monkeypatch.setattr(forked, "Worker", Recorded)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        console.main(["dumbbell", "--flows", "0", "--out", "res"])  # bad input: exit 2
    assert e.value.code == 2
    assert len(started) == 1 and started[0]._pid is None, "forked early, then killed and reaped"
    assert forked._early is None
    assert list(tmp_path.iterdir()) == []
