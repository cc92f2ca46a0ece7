"""Shared harness of the bad-input tables (tests/test_bad_inputs*.py).

Each row runs the real ``aqmlab`` command in a fresh subprocess, inside a scratch folder that
holds a user's file and folder, and asserts the properties every bad input must have: exit
status 2, exactly one line on stderr that starts with ``error:`` and names the key (and value),
no traceback, no output created, and the user's files untouched.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AQMLAB = [sys.executable, "-m", "aqmlab"]


def default_sigint() -> None:
    """``preexec_fn`` of a child that a test interrupts with SIGINT: the default action, so
    that Python installs its KeyboardInterrupt handler even when the test runner was started
    with SIGINT ignored (a background job of a non-interactive shell inherits SIG_IGN)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: Files every scratch folder starts with; a bad input must leave them as they are.
USER_FILES = {"notes.txt": "my notes\n", "mine/data.csv": "a,b\n1,2\n"}


def scratch(tmp_path: Path) -> Path:
    """A scratch folder with the user's files in it."""
    for name, text in USER_FILES.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def snapshot(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` (hidden ones included) with a hash of its content."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            out[str(Path(root, d).relative_to(folder)) + "/"] = ""
        for f in files:
            p = Path(root, f)
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python"))
    return subprocess.run(
        [*AQMLAB, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )


def assert_bad_input(args: list[str], needles: list[str], tmp_path: Path) -> str:
    """Run ``aqmlab ARGS`` in a scratch folder and assert the bad-input properties.

    ``needles`` must all appear in the one error line (the key, the value). Returns the line.
    """
    cwd = scratch(tmp_path)
    before = snapshot(cwd)
    p = run([a.replace("{tmp}", str(cwd)) for a in args], cwd)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    shown = f"args={args}\nexit={p.returncode}\nstderr={p.stderr}\nstdout={p.stdout[-500:]}"
    assert p.returncode == 2, shown
    assert "Traceback" not in p.stderr + p.stdout, shown
    assert len(lines) == 1, shown
    line = lines[0]
    assert line.startswith("error: "), shown
    for n in needles:
        assert n in line, f"{n!r} not in the error line\n{shown}"
    assert snapshot(cwd) == before, f"files changed\n{shown}"
    return line
