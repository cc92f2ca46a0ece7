"""`aqmlab fluid` commands."""

import typer

app = typer.Typer(help="fluid commands", no_args_is_help=True)
