"""The ``aqmlab`` console script and ``python -m aqmlab``: :func:`aqmlab.cli.main`, after
forking the process that imports matplotlib or pyarrow for a run's writing
(:mod:`aqmlab.forked`) when the arguments ask for a run, so that those imports start before the
command line's own (typer and the command modules, about 0.07 s). The command line itself
decides: a worker it does not take is killed when it ends."""

from __future__ import annotations

import sys

#: Commands that write a result folder (aqmlab.cli.sim); queue.png unless given --no-plots.
_RUN_COMMANDS = ("dumbbell", "run")


def _preload(args: list[str]) -> tuple[str, ...] | None:
    """What a worker for these arguments imports, or None if they ask for no run."""
    from aqmlab import forked

    if not args or args[0] not in _RUN_COMMANDS or "--help" in args:
        return None
    return forked.preload_for("--no-plots" not in args)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (see :func:`aqmlab.cli.main`).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).
    """
    from aqmlab import forked

    preload = _preload(sys.argv[1:] if argv is None else argv)
    if preload is not None:
        forked.start_early(preload)
    try:
        from aqmlab.cli import main as cli_main

        cli_main(argv)
    finally:
        forked.discard()
