"""Pieces every CLI module shares: the bad-option exception and the one-line failure."""

from __future__ import annotations

import typer


class BadOption(Exception):
    """An option's value is not acceptable; the message names the option and the value."""


def fail(msg: str, code: int = 2) -> None:
    """Print ``error: MSG`` on stderr and exit with ``code`` (2: bad input)."""
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)
