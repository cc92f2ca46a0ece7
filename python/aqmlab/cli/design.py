"""`aqmlab design` commands."""

import typer

app = typer.Typer(help="design commands", no_args_is_help=True)
