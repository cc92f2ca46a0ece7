"""The ``aqmlab`` command line. Each concern registers its commands from its own module."""

from __future__ import annotations

import typer

from aqmlab.cli import design as _design
from aqmlab.cli import fluid as _fluid
from aqmlab.cli import paqman as _paqman
from aqmlab.cli import sim as _sim

app = typer.Typer(
    name="aqmlab",
    help="aqmlab: design, analyse and simulate Active Queue Management.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_sim.register(app)
app.add_typer(
    _design.app, name="design", help="Controller design: PI, PD-LQ, SFC, EDC, SQM sigma, margins."
)
app.add_typer(
    _fluid.app, name="fluid", help="Fluid models: trajectories, equilibria, final states."
)
app.add_typer(
    _paqman.app, name="paqman", help="PAQMAN: solve, plot and evaluate SMDP drop policies."
)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
