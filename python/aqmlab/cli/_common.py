"""Pieces every CLI module shares: the bad-option exception and the one-line failure."""

from __future__ import annotations

import math
from typing import Annotated

import typer

#: The ``--pkt-size`` option of the commands whose ``--capacity`` may be a bit rate.
PktSize = Annotated[
    str,
    typer.Option("--pkt-size", help="packet size for a bit-rate --capacity, bytes (e.g. 1000)"),
]


class BadOption(Exception):
    """An option's value is not acceptable; the message names the option and the value."""


#: True once :func:`fail` has printed its line, so that the entry point does not add its own.
reported = False

#: The commands that take a program after ``--`` (``aqmlab shell ... -- COMMAND ARGS``).
TAKES_COMMAND = ("shell", "emulate")

#: What followed ``--`` on the command line of a command in :data:`TAKES_COMMAND` (``None``:
#: no ``--``), split off by the entry point before the options are parsed, so that the
#: program's own options are never read as aqmlab's.
trailing_command: list[str] | None = None


def fail(msg: str, code: int = 2) -> None:
    """Print ``error: MSG`` on stderr and exit with ``code`` (2: bad input, 130: interrupted)."""
    global reported
    typer.echo(f"error: {msg}", err=True)
    reported = True
    raise typer.Exit(code)


# --- quantities on the command line (design, fluid, paqman) ------------------------------------
# A bare number is an error wherever a unit matters (a time, a rate, a capacity); dimensionless
# numbers (gains, flows, queues in packets, probabilities) stay bare. Every helper raises
# BadOption with a one-line message ``--key = value: reason``.


def number(key: str, value, *, positive: bool = False, nonneg: bool = False, negative=False):
    """``value`` (already a float/int from typer, or None) checked to be finite and in range."""
    if value is None:
        return None
    if not math.isfinite(value):
        raise BadOption(f"{key} = {value}: must be a finite number")
    if positive and not value > 0:
        raise BadOption(f"{key} = {value}: must be > 0")
    if nonneg and not value >= 0:
        raise BadOption(f"{key} = {value}: must be >= 0")
    if negative and not value < 0:
        raise BadOption(f"{key} = {value}: must be < 0")
    return value


def _range(key: str, text: str, v: float, allow_zero: bool) -> float:
    if not math.isfinite(v):
        raise BadOption(f"{key} = {text}: must be finite")
    if v < 0 or (v == 0 and not allow_zero):
        raise BadOption(f"{key} = {text}: must be {'>= 0' if allow_zero else '> 0'}")
    return v


def time_opt(key: str, text: str, *, allow_zero: bool = False) -> float:
    """A time with its unit (``250ms``, ``0.25s``) in seconds; a bare number is an error."""
    from aqmlab.units import format_time, parse_time

    t = str(text).strip()
    try:
        bare = float(t)
    except ValueError:
        pass
    else:
        if not math.isfinite(bare):
            raise BadOption(f"{key} = {t}: not a finite time (e.g. 100ms)")
        hint = format_time(bare) if 0 < abs(bare) < 1 else f"{t}ms"
        raise BadOption(f"{key} = {t}: give a unit, e.g. {t}s or {hint}")
    try:
        v = parse_time(t, require_unit=True, key=key)
    except ValueError as e:
        raise BadOption(str(e)) from None
    return _range(key, text, v, allow_zero)


def size_opt(key: str, text: str) -> float:
    """A size in bytes (``1000``, ``1000B``, ``1.5kB``); a bare number is bytes."""
    from aqmlab.units import parse_size

    try:
        v = parse_size(str(text).strip(), key=key)
    except ValueError as e:
        raise BadOption(str(e)) from None
    return _range(key, text, v, False)


def capacity_opt(key: str, text: str, pkt_size_bytes: float, pkt_key: str = "--pkt-size") -> float:
    """A capacity in packets/s: a packet rate (``3750pps``) or a bit rate (``10Mbps``) divided
    by ``8 * pkt_size_bytes``; a bare number is an error naming both forms."""
    from aqmlab.units import format_rate, parse_packet_rate, parse_rate

    t = str(text).strip()
    try:
        bare = float(t)
    except ValueError:
        pass
    else:
        bits = format_rate(bare * 8 * pkt_size_bytes) if math.isfinite(bare) else "10Mbps"
        raise BadOption(
            f"{key} = {t}: give a unit: a packet rate ({t}pps) or a bit rate "
            f"({bits} with {pkt_key} {pkt_size_bytes:g})"
        )
    try:
        if t.lower().endswith("pps"):
            v = parse_packet_rate(t, require_unit=True, key=key)
        else:
            v = parse_rate(t, require_unit=True, key=key) / (8.0 * pkt_size_bytes)
    except ValueError as e:
        raise BadOption(str(e)) from None
    return _range(key, text, v, False)


def rate_list_opt(key: str, text: str, pkt_size_bytes: float) -> list[float]:
    """A comma list of capacities (``120pps,80pps`` or ``1Mbps,...``) in packets/s."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(not p for p in parts):
        raise BadOption(f"{key} = {text}: a comma list of rates, e.g. 120pps,80pps")
    return [capacity_opt(key, p, pkt_size_bytes) for p in parts]


def frequency_opt(key: str, text: str) -> float:
    """A frequency in Hz: ``160Hz``, ``0.16kHz`` or a bare number of Hz (the simulator's
    convention for PI's ``w``)."""

    t = str(text).strip()
    mult = 1.0
    low = t.lower()
    if low.endswith("khz"):
        t, mult = t[:-3], 1e3
    elif low.endswith("hz"):
        t = t[:-2]
    try:
        v = float(t) * mult
    except ValueError:
        raise BadOption(f"{key} = {text}: not a frequency (e.g. 160Hz)") from None
    if not math.isfinite(v) or v <= 0:
        raise BadOption(f"{key} = {text}: must be a finite frequency > 0")
    return v


def time_list_opt(key: str, text: str, n: int | None = None) -> list[float]:
    """Times, each with its unit: ``a:b`` (``n`` values spread linearly from a to b, needs
    ``n``), ``a,b,c`` or ``a`` (repeated ``n`` times when ``n`` is given)."""
    import numpy as np

    t = str(text).strip()
    if ":" in t:
        parts = t.split(":")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise BadOption(f"{key} = {text}: a range is a:b, e.g. 100ms:150ms")
        a, b = (time_opt(key, p) for p in parts)
        if n is None:
            raise BadOption(f"{key} = {text}: a range a:b needs the number of values")
        return [float(v) for v in np.linspace(a, b, n)] if n > 1 else [a]
    parts = [p.strip() for p in t.split(",")]
    if not t or any(not p for p in parts):
        raise BadOption(f"{key} = {text}: a comma list of times, e.g. 100ms,150ms")
    vals = [time_opt(key, p) for p in parts]
    if n is not None and len(vals) == 1:
        return vals * n
    if n is not None and len(vals) != n:
        raise BadOption(f"{key} = {text}: {len(vals)} values for {n}")
    return vals


def number_list_opt(key: str, text: str) -> list[float]:
    """A comma list of positive finite numbers (dimensionless: weights)."""
    parts = [p.strip() for p in str(text).split(",")]
    if any(not p for p in parts):
        raise BadOption(f"{key} = {text}: a comma list of numbers, e.g. 1,2")
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise BadOption(f"{key} = {text}: not a comma list of numbers") from None
    for v in vals:
        if not math.isfinite(v) or v <= 0:
            raise BadOption(f"{key} = {text}: every value must be a finite number > 0")
    return vals


def figure_suffixes() -> tuple[str, ...]:
    """Extensions matplotlib can write (``.png``, ``.pdf``, ``.svg``, ...), lower case."""
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(f".{e}" for e in sorted(FigureCanvasBase.get_supported_filetypes()))


def check_figure(key: str, path, force: bool):
    """Check a figure path (folder, extension, existing file) before any work."""
    from aqmlab.output import OutputError, check_output_file

    if path is None:
        return None
    try:
        return check_output_file(path, force, figure_suffixes(), key)
    except OutputError as e:
        raise BadOption(str(e)) from None


def save_figure(key: str, fig, path, force: bool, dpi: int | None = None) -> None:
    """Write a matplotlib figure to ``path`` through a temporary file (replaces only with
    ``force``); closes the figure."""
    import matplotlib.pyplot as plt

    from aqmlab.output import OutputError, output_file

    try:
        with output_file(path, force, figure_suffixes(), key) as tmp:
            fig.savefig(tmp, dpi=dpi, format=str(tmp).rsplit(".", 1)[-1].lower())
    except OutputError as e:
        raise BadOption(str(e)) from None
    finally:
        plt.close(fig)
