"""The ``aqmlab`` console script and ``python -m aqmlab``: :func:`aqmlab.cli.main`, after
forking the process that draws ``queue.png`` (:mod:`aqmlab.figure_worker`) when the arguments
ask for a run with figures, so that matplotlib's import starts before the command line's own
(typer and the command modules, about 0.07 s). The command line itself decides: a worker it
does not take is killed when it ends."""

from __future__ import annotations

import sys

#: Commands that write queue.png unless given --no-plots (aqmlab.cli.sim).
_FIGURE_COMMANDS = ("dumbbell", "run")


def _wants_figure(args: list[str]) -> bool:
    return bool(args) and args[0] in _FIGURE_COMMANDS and not {"--no-plots", "--help"} & set(args)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (see :func:`aqmlab.cli.main`)."""
    from aqmlab import figure_worker

    if _wants_figure(sys.argv[1:] if argv is None else argv):
        figure_worker.start_early()
    try:
        from aqmlab.cli import main as cli_main

        cli_main(argv)
    finally:
        figure_worker.discard()
