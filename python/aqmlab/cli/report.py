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
        formats: Annotated[
            str | None,
            typer.Option(
                "--formats",
                help="Also write every figure into OUT's NAME-figures/ folder in these "
                "formats (comma-separated: png, svg, pdf).",
            ),
        ] = None,
        size: Annotated[
            str,
            typer.Option("--size", help="Figure files one (3.5 in) or two (7.16 in) columns wide."),
        ] = "two",
    ) -> None:
        """One self-contained HTML page: confidence intervals, metric-versus-parameter plots,
        delay CDFs, delay-vs-goodput ellipses, time series and per-flow goodput
        (docs/report.md)."""
        from aqmlab.report import build_report, figures_folder
        from aqmlab.report.export import parse_formats

        try:
            fmts = parse_formats(formats) if formats is not None else None
            build_report(source, out, force=force, formats=fmts, size=size)
        except ValueError as e:
            _fail(str(e))
        typer.echo(f"report written to {out}")
        if fmts:
            typer.echo(f"figures written to {figures_folder(out)}/ ({', '.join(fmts)})")
