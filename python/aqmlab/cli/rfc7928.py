"""``aqmlab rfc7928 --aqms A,B,... --out DIR [--quick] [--workers N | --dask ADDRESS|local]``.

Runs the RFC 7928 suite (:mod:`aqmlab.rfc7928`, ``docs/rfc7928.md``): every section under
``scenarios/rfc7928/`` as a sweep over seeds and the AQMs into ``DIR/<section>/``, then
``DIR/summary.md``. Everything is checked before anything runs (one line ``error: ...``, exit 2).
Ctrl-C and SIGTERM keep the finished runs (exit 130 and 143, one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail
from aqmlab.cli.sweep import Dask, ProgressBar, Workers, interrupted

DEFAULT_AQMS = "droptail,red,pie,codel,fq_codel,cobalt,fq_cobalt,cake"


def register(app: typer.Typer) -> None:
    """Attach ``rfc7928`` to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("rfc7928")
    def rfc7928(
        out: Annotated[Path, typer.Option("--out", help="Output folder (resumed if a suite).")],
        aqms: Annotated[
            str, typer.Option("--aqms", help="Comma-separated AQMs to characterize.")
        ] = DEFAULT_AQMS,
        quick: Annotated[
            bool,
            typer.Option(
                "--quick", help="Two seeds and short runs (under a minute).", show_default=False
            ),
        ] = False,
        workers: Workers = None,
        dask: Dask = None,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help="Replace OUT even if it holds files aqmlab did not write; start afresh.",
                show_default=False,
            ),
        ] = False,
    ) -> None:
        """The RFC 7928 AQM characterization suite: every guideline section as a sweep over
        seeds and AQMs, with a table of means and 95 % confidence intervals."""
        from aqmlab import rfc7928 as suite
        from aqmlab.output import signals_raise

        bars: list[ProgressBar] = []

        def progress(name: str):
            if bars:
                bars[-1].__exit__(None, None, None)
            bars.append(ProgressBar(name).__enter__())
            return bars[-1]

        try:
            with signals_raise():  # SIGTERM as Ctrl-C: the finished runs are kept
                try:
                    suite.prepare(aqms, out, quick=quick, workers=workers, dask=dask, force=force)
                    res = suite.run(
                        aqms,
                        out,
                        quick=quick,
                        workers=workers,
                        dask=dask,
                        force=force,
                        progress=progress,
                    )
                except ValueError as e:
                    _fail(str(e))
                finally:
                    if bars:
                        bars[-1].__exit__(None, None, None)
        except KeyboardInterrupt as e:
            word, code = interrupted(e)
            _fail(f"{word}; the finished runs are kept in {out} (run the same command again "
                  "to finish)", code)  # fmt: skip
        runs = sum(len(t) for t in res.tables.values())
        failed = sum(int(t["error"].notna().sum()) for t in res.tables.values())
        typer.echo(
            f"{len(res.tables)} sections, {runs} runs, {failed} failed; "
            f"summary in {out / 'summary.md'}"
        )
