"""``aqmlab repro NAME [--quick] --out DIR [--force]``: reproduce a seed paper's evaluation.

Writes ``DIR/scenarios/*.toml``, the figures (PNG), ``DIR/report.md`` and ``DIR/repro.json``
through :mod:`aqmlab.output` (docs/repro.md). Bad input (an unknown NAME, an output folder that
may not be replaced) is one line ``error: ...`` with exit status 2, checked before any run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail
from aqmlab.repro import PAPERS

_NAMES = "; ".join(f"{k}: {v[1]}" for k, v in PAPERS.items())


def claims_table(checks: list[dict]) -> str:
    """The claims as a compact text table: verdict, id and where the paper says it.

    Parameters
    ----------
    checks : list of dict
        The reproduction's checks (``repro.json``'s ``checks``).

    Returns
    -------
    str
    """
    w_v = max((len(c["verdict"]) for c in checks), default=0)
    w_i = max((len(c["id"]) for c in checks), default=0)
    return "\n".join(
        f"  {c['verdict']:<{w_v}}  {c['id']:<{w_i}}  {c['source']['where']}" for c in checks
    )


def register(app: typer.Typer) -> None:
    """Attach ``repro`` to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("repro", help=f"Reproduce a paper's evaluation. NAME is one of: {_NAMES}.")
    def repro(
        name: Annotated[str, typer.Argument(help=f"One of: {', '.join(PAPERS)}.")],
        out: Annotated[Path, typer.Option("--out", help="Output folder (an aqmlab result).")],
        quick: Annotated[
            bool,
            typer.Option(
                "--quick",
                help="Reduced run (fewer seeds, fewer cases) in minutes.",
                show_default=False,
            ),
        ] = False,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help="Replace OUT even if it holds files aqmlab did not write.",
                show_default=False,
            ),
        ] = False,
        ns2: Annotated[
            bool,
            typer.Option(
                "--ns2",
                help="Also run the cases in ns-2.35 (ktl, sfc, edc; needs `make ns2`) "
                "and add an ns-2 column.",
                show_default=False,
            ),
        ] = False,
    ) -> None:
        from aqmlab.output import check_output_dir
        from aqmlab.repro import NS2_PAPERS, run, write_repro

        if name not in PAPERS:
            _fail(f"NAME = {name!r}: unknown reproduction (known: {', '.join(PAPERS)})")
        if ns2:  # ns2 hook: refused before any run
            from aqmlab.repro.ns2 import available

            if name not in NS2_PAPERS:
                _fail(f"--ns2 = {name}: ns-2 runs only {', '.join(NS2_PAPERS)}")
            if why := available():
                _fail(f"--ns2: {why}")
        try:
            check_output_dir(out, force)
        except ValueError as e:
            _fail(str(e))
        rep = run(name, quick=quick, ns2=ns2)
        try:
            write_repro(rep, out, force=force)
        except ValueError as e:
            _fail(str(e))
        counts = {
            v: sum(c["verdict"] == v for c in rep.checks)
            for v in ("reproduced", "not reproduced", "not comparable")
        }
        typer.echo(claims_table(rep.checks))
        in_ns2 = ""
        if ns2:  # ns2 hook: the verdicts on the ns-2 numbers
            judged = [c["ns2"]["verdict"] for c in rep.checks if "ns2" in c]
            in_ns2 = "; in ns-2: " + ", ".join(
                f"{judged.count(v)} {v}" for v in ("reproduced", "not reproduced")
            )
        typer.echo(
            f"{name}: {', '.join(f'{n} {v}' for v, n in counts.items())}{in_ns2} "
            f"({rep.wall_seconds:.0f} s); report in {out / 'report.md'}"
        )
