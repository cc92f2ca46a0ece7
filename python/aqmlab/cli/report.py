"""``aqmlab report DIR --out report.html``: the HTML report of a sweep or of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail


def register(app: typer.Typer) -> None:
    """Attach the ``report`` command to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("report")
    def report(
        source: Annotated[
            Path,
            typer.Argument(
                metavar="DIR",
                help="A sweep folder (results.parquet), a folder of run folders, or a run folder.",
                show_default=False,
            ),
        ],
        out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")],
        force: Annotated[
            bool,
            typer.Option("--force", help="Replace an existing OUT file.", show_default=False),
        ] = False,
    ) -> None:
        """One self-contained HTML page: confidence intervals, delay CDFs, delay-vs-goodput
        ellipses, time series and per-flow goodput (docs/report.md)."""
        from aqmlab.report import build_report

        try:
            build_report(source, out, force=force)
        except ValueError as e:
            _fail(str(e))
        typer.echo(f"report written to {out}")
