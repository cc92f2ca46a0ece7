"""The ``aqmlab`` command line. Each concern registers its commands from its own module.

:func:`main` runs the app so that every usage error (an unknown option, a value of the wrong type)
is one line ``error: ...`` with exit status 2, like the commands' own input errors, and Ctrl-C
exits with status 130 without a traceback.
"""

from __future__ import annotations

import copy
import sys
from typing import Annotated

import typer

from aqmlab.cli import _common
from aqmlab.cli import design as _design
from aqmlab.cli import emulate as _emulate
from aqmlab.cli import fluid as _fluid
from aqmlab.cli import paqman as _paqman
from aqmlab.cli import plot as _plot
from aqmlab.cli import report as _report
from aqmlab.cli import repro as _repro
from aqmlab.cli import rfc7928 as _rfc7928
from aqmlab.cli import shell as _shell
from aqmlab.cli import sim as _sim
from aqmlab.cli import sweep as _sweep

app = typer.Typer(
    name="aqmlab",
    help="aqmlab: design, analyse and simulate Active Queue Management.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from aqmlab import __version__

        typer.echo(f"aqmlab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_version,
            is_eager=True,
            show_default=False,
        ),
    ] = False,
) -> None:
    """aqmlab: design, analyse and simulate Active Queue Management."""


_sim.register(app)
_sweep.register(app)
_rfc7928.register(app)
_emulate.register(app)
_shell.register(app)
_repro.register(app)
_report.register(app)
_plot.register(app)
app.add_typer(
    _design.app, name="design", help="Controller design: PI, PD-LQ, SFC, EDC, SQM sigma, margins."
)
app.add_typer(
    _fluid.app, name="fluid", help="Fluid models: trajectories, equilibria, final states."
)
app.add_typer(
    _paqman.app, name="paqman", help="PAQMAN: solve, plot and evaluate SMDP drop policies."
)


def _click_exceptions():
    """(UsageError, ClickException, NoArgsIsHelpError or None, Exit, Abort) of the click that
    typer uses: its own vendored copy in recent versions, the click package before."""
    try:
        from typer._click import exceptions as cx
        from typer.exceptions import Abort, Exit
    except ImportError:
        from click import exceptions as cx

        Abort, Exit = cx.Abort, cx.Exit
    return cx.UsageError, cx.ClickException, getattr(cx, "NoArgsIsHelpError", None), Exit, Abort


def _one_line(e, argv: list[str] | None) -> str:
    """A usage error as one line, with the offending value when the option is known."""
    msg = " ".join(e.format_message().split())
    param = getattr(e, "param", None)
    args = sys.argv[1:] if argv is None else argv
    for opt in getattr(param, "opts", None) or []:
        for i, a in reversed(list(enumerate(args))):
            if a == opt and i + 1 < len(args):
                return f"{msg} (got {args[i + 1]!r})"
            if a.startswith(opt + "="):
                return f"{msg} (got {a.split('=', 1)[1]!r})"
    return msg


def _command(argv: list[str] | None):
    """The click command to run: when the first argument names a command or group, the tree
    holds only that one (typer reads the signature of every command it builds, about 0.06 s
    for all of them); otherwise (no command, an option first, an unknown name) all of them."""
    args = sys.argv[1:] if argv is None else argv
    first = args[0] if args else None

    def named(info, name):
        return info.name or (name and typer.main.get_command_name(name))

    commands = [c for c in app.registered_commands if named(c, c.callback.__name__) == first]
    groups = [g for g in app.registered_groups if named(g, None) == first]
    if not commands and not groups:
        return typer.main.get_command(app)
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return typer.main.get_command(one)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).
    """
    usage_error, click_error, no_args, exit_, abort = _click_exceptions()
    args = list(sys.argv[1:] if argv is None else argv)
    _common.trailing_command = None
    if args and args[0] in _common.TAKES_COMMAND and "--" in args:
        cut = args.index("--")
        args, _common.trailing_command = args[:cut], args[cut + 1 :]
    argv = args
    command = _command(argv)
    try:
        # typer turns Ctrl-C inside a command into Exit(130), returned here as the status
        code = command.main(args=argv, prog_name="aqmlab", standalone_mode=False)
        if code == 130 and not _common.reported:
            typer.echo("error: interrupted", err=True)
    except exit_ as e:
        code = e.exit_code
    except usage_error as e:
        if no_args is not None and isinstance(e, no_args):
            typer.echo(e.format_message())
            code = 0
        else:
            typer.echo(f"error: {_one_line(e, argv)}", err=True)
            code = 2
    except click_error as e:
        typer.echo(f"error: {' '.join(e.format_message().split())}", err=True)
        code = e.exit_code
    except (abort, KeyboardInterrupt):
        typer.echo("error: interrupted", err=True)
        code = 130
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
