"""Provenance of a result: what produced it, where and when (``summary.json``'s ``meta``).

Flent keeps this kind of metadata in every data file; aqmlab keeps it in every result folder so
that a run can be traced back and rerun (with the folder's ``scenario.toml``). Two runs of one
scenario and seed differ only in ``meta`` and ``wall_seconds``.
"""

from __future__ import annotations

import datetime as _dt
import platform
import shlex
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["meta", "now_utc"]


def now_utc() -> str:
    """The current time as an ISO 8601 UTC timestamp with seconds (``2026-11-26T14:21:56Z``).

    Returns
    -------
    str
    """
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=1)
def _git() -> dict[str, Any]:
    """The commit of the checkout the package runs from (an editable install), or nulls."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or not (root / "crates").is_dir():
        return {"git_commit": None, "git_dirty": None}

    def git(*args: str) -> str | None:
        try:
            p = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return p.stdout.strip() if p.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"git_commit": commit, "git_dirty": None if status is None else bool(status)}


def meta(started: str | None = None, command: list[str] | None = None) -> dict[str, Any]:
    """The ``meta`` object of a result.

    Parameters
    ----------
    started : str, optional
        When the run started (ISO 8601 UTC, :func:`now_utc`); default now.
    command : list of str, optional
        The command line; default ``sys.argv``.

    Returns
    -------
    dict
        ``aqmlab_version``, ``core_version`` (the Rust core's), ``git_commit`` and
        ``git_dirty`` (of the checkout the package runs from; null for an installed
        package), ``python``, ``rustc`` (the compiler the core was built with),
        ``platform``, ``command`` and ``started``.
    """
    from aqmlab import __version__, _core

    argv = sys.argv if command is None else command
    return {
        "aqmlab_version": __version__,
        "core_version": _core.core_version(),
        **_git(),
        "python": platform.python_version(),
        "rustc": _core.rustc_version(),
        "platform": platform.platform(),
        "command": shlex.join(str(a) for a in argv),
        "started": started or now_utc(),
    }
