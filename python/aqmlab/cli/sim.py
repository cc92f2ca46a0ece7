"""Simulator commands: ``run``, ``dumbbell``, ``aqms``, ``demo``."""

import typer


def register(app: typer.Typer) -> None:
    """Attach the simulator commands to the top-level app."""
