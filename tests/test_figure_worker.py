"""The forked process that draws ``queue.png`` (aqmlab.figure_worker): the same figure as one
drawn in the process itself, its failures as one line, nothing left behind when it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aqmlab.figure_worker import FigureError, FigureWorker
from aqmlab.results import SimResult
from badinput import default_sigint, snapshot

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["dumbbell", "--duration", "2s", "--flows", "2", "--out", "res"]

# The command line with SimResult.save_queue_figure replaced (the forked worker inherits it).
PATCHED = """
import os, sys, time
from pathlib import Path
from aqmlab import results
def boom(self, path):
    raise RuntimeError("cannot draw\\nthis")
def slow(self, path):
    Path(os.environ["DRAWING"]).write_text("drawing")
    time.sleep(60)
results.SimResult.save_queue_figure = {patch}
from aqmlab.cli import main
sys.argv[0] = "aqmlab"
main()
"""


def _patched(patch: str, *args: str, cwd: Path, marker: Path | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), DRAWING=str(marker))
    return subprocess.Popen(
        [sys.executable, "-c", PATCHED.format(patch=patch), *args], cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")


class Failing:
    """Stands for a result whose figure cannot be drawn."""

    def save_queue_figure(self, path):
        raise ValueError("no data\nat all")


class Slow:
    """Writes its file slowly, so that a test can kill the worker while it writes."""

    def save_queue_figure(self, path):
        Path(path).write_bytes(b"half")
        time.sleep(30)


def test_the_worker_draws_the_same_png_as_the_process_itself(tmp_path):
    out = tmp_path / "res"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    args = ["dumbbell", "--duration", "2s", "--flows", "2", "--quiet", "--out", str(out)]
    subprocess.run([sys.executable, "-m", "aqmlab", *args], check=True, env=env)
    here = tmp_path / "here.png"
    SimResult.load(out).save_queue_figure(here)
    assert (out / "queue.png").read_bytes() == here.read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [
        ".aqmlab", "flows.parquet", "queue.png", "summary.json", "timeseries.parquet",
    ]  # fmt: skip


def test_a_failure_is_one_line_and_leaves_no_file(tmp_path):
    with FigureWorker() as w:
        w.submit(Failing(), tmp_path / "queue.png")
        with pytest.raises(FigureError) as e:
            w.wait()
    assert str(e.value) == "ValueError: no data at all"
    assert list(tmp_path.iterdir()) == []


def test_close_kills_a_busy_worker_and_reaps_it(tmp_path):
    w = FigureWorker()
    pid = w._pid
    w.submit(Slow(), tmp_path / "queue.png")
    deadline = time.monotonic() + 30
    while not any(tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(tmp_path.iterdir()), "the worker started writing its temporary file"
    assert not (tmp_path / "queue.png").exists(), "only a temporary name while writing"
    w.close()
    # what is left is a temporary name, in a folder that its owner (aqmlab.output) removes
    assert [p.name.endswith(".aqmlab-tmp") for p in tmp_path.iterdir()] == [True]
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left
    w.close()  # idempotent


def test_a_worker_without_a_job_exits_quietly():
    w = FigureWorker()
    pid = w._pid
    os.close(w._jobs)  # the parent needs no figure: end of file
    w._jobs = None
    _, status = os.waitpid(pid, 0)
    w._pid = None
    w.close()
    assert status == 0


def test_the_command_reports_a_figure_failure_in_one_line(tmp_path):
    before = snapshot(tmp_path)
    p = _patched("boom", *ARGS, cwd=tmp_path)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1
    assert err.strip().splitlines() == ["error: queue.png: RuntimeError: cannot draw this"], err
    assert snapshot(tmp_path) == before, "nothing is written when the figure fails"


def test_ctrl_c_while_the_figure_is_drawn_leaves_nothing(tmp_path):
    before = snapshot(tmp_path)
    marker = tmp_path.parent / f"{tmp_path.name}-drawing"
    p = _patched("slow", *ARGS, cwd=tmp_path, marker=marker)
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
    "args, early",
    [
        (["dumbbell", "--out", "r"], True),
        (["run", "s.toml", "--out", "r"], True),
        (["dumbbell", "--out", "r", "--no-plots"], False),
        (["dumbbell", "--help"], False),
        (["aqms"], False),
        ([], False),
    ],
)
def test_the_console_forks_early_only_for_a_run_with_figures(args, early):
    from aqmlab.console import _wants_figure

    assert _wants_figure(args) is early


def test_an_early_worker_no_command_takes_is_killed(tmp_path, monkeypatch, capsys):
    from aqmlab import console, figure_worker

    started = []

    class Recorded(FigureWorker):
        def __init__(self):
            super().__init__()
            started.append(self)

    monkeypatch.setattr(figure_worker, "FigureWorker", Recorded)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        console.main(["dumbbell", "--flows", "0", "--out", "res"])  # bad input: exit 2
    assert e.value.code == 2
    if started:  # none on a single core
        assert started[0]._pid is None, "killed and reaped"
    assert figure_worker._early is None
    assert list(tmp_path.iterdir()) == []
