"""``aqmlab sweep SPEC.toml --out DIR [--workers N | --dask ADDRESS|local] [--timeseries]
[--max-runs N] [--max-time T]``.

The spec and every option are checked before anything runs (one line ``error: ...``, exit 2, no
output); runs are written to ``DIR`` as they finish, so Ctrl-C and SIGTERM keep them and a
rerun resumes (``docs/sweep.md``). Progress with an ETA goes to stderr on a terminal.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail

Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Local worker processes (default: all cores; at most 4 x the cores); with "
        "--dask local, the cluster's.",
        show_default=False,
    ),
]
Dask = Annotated[
    str | None,
    typer.Option(
        "--dask",
        help="Run on Dask: 'local' starts a LocalCluster, else a scheduler address "
        "(tcp://host:8786). Needs aqmlab[dask].",
        show_default=False,
    ),
]


class ProgressBar:
    """A progress bar with ETA on stderr (a terminal only); callable as ``(done, total,
    failed)``.

    Parameters
    ----------
    label : str
        The bar's label (the sweep's name).
    """

    def __init__(self, label: str):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._prog = Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("runs, {task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            disable=not sys.stderr.isatty(),
        )
        self._label = label
        self._task = None

    def __enter__(self):
        self._prog.__enter__()
        return self

    def __exit__(self, *exc):
        return self._prog.__exit__(*exc)

    def __call__(self, done: int, total: int, failed: int) -> None:
        if self._task is None:
            # the ETA counts only runs done in this session (skipped ones are instant)
            self._task = self._prog.add_task(self._label, total=total, failed=0)
            self._prog.update(self._task, completed=done)
            self._prog.reset(self._task, total=total, completed=done, failed=failed)
        self._prog.update(self._task, completed=done, failed=failed)


MaxRuns = Annotated[
    int,
    typer.Option(
        "--max-runs",
        help="Refuse a spec of more runs; the message gives its estimated cost.",
    ),
]
MaxTime = Annotated[
    str,
    typer.Option(
        "--max-time",
        help="Refuse a sweep whose estimated wall-clock time is longer (a time with a unit).",
    ),
]


def interrupted(e: KeyboardInterrupt) -> tuple[str, int]:
    """``(word, exit status)`` of an interruption: SIGTERM is 143, Ctrl-C 130.

    Parameters
    ----------
    e : KeyboardInterrupt
        The interruption (with ``signum`` when a signal raised it).

    Returns
    -------
    tuple of (str, int)
    """
    if getattr(e, "signum", None) == signal.SIGTERM:
        return "terminated", 128 + signal.SIGTERM
    return "interrupted", 130


def counts_line(df) -> str:
    """``N runs, F failed`` for a results table.

    Parameters
    ----------
    df : pandas.DataFrame
        A sweep's results table.

    Returns
    -------
    str
    """
    failed = int(df["error"].notna().sum()) if "error" in df.columns else 0
    return f"{len(df)} runs, {failed} failed"


def register(app: typer.Typer) -> None:
    """Attach ``sweep`` to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("sweep")
    def sweep(
        spec: Annotated[Path, typer.Argument(help="Sweep spec (TOML; docs/sweep.md).")],
        out: Annotated[Path, typer.Option("--out", help="Output folder (resumed if a sweep).")],
        workers: Workers = None,
        dask: Dask = None,
        timeseries: Annotated[
            bool,
            typer.Option("--timeseries", help="Keep every run's time series.", show_default=False),
        ] = False,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help="Replace OUT even if it holds files aqmlab did not write or another "
                "sweep; start afresh.",
                show_default=False,
            ),
        ] = False,
        max_runs: MaxRuns = 10_000,
        max_time: MaxTime = "24h",
    ) -> None:
        """Run a scenario over seeds and a grid of overrides; one row per run in
        OUT/results.parquet."""
        from aqmlab import sweep as sw
        from aqmlab.output import signals_raise
        from aqmlab.units import UnitError, parse_time

        try:  # on the command line a time has a unit
            parse_time(max_time, require_unit=True, key="--max-time")
        except UnitError as e:
            _fail(str(e))
        prep = None
        try:
            with signals_raise():  # SIGTERM as Ctrl-C: finished runs kept, table written
                try:
                    prep = sw.prepare(
                        spec,
                        out,
                        workers=workers,
                        dask=dask,
                        timeseries=timeseries,
                        force=force,
                        max_runs=max_runs,
                        max_time=max_time,
                    )
                except ValueError as e:
                    _fail(str(e))
                line = prep.resume_line()
                if line is not None:
                    typer.echo(line, err=True)
                with ProgressBar(prep.spec.name) as bar:
                    df = sw.execute(prep, progress=bar)
        except KeyboardInterrupt as e:
            word, code = interrupted(e)
            if prep is None:
                _fail(word, code)
            _fail(
                f"{word}; {prep.kept} of {len(prep.runs)} runs kept in {out} "
                "(run the same command again to finish)",
                code,
            )
        typer.echo(f"{counts_line(df)}; results written to {out / 'results.parquet'}")
