"""`aqmlab paqman` commands."""

import typer

app = typer.Typer(help="paqman commands", no_args_is_help=True)
