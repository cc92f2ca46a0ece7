"""Quantities written ns-3/tc style: ``10Mbps``, ``1MBps``, ``5ms``, ``60s``, ``1500B``, ``3750pps``.

The parser is the Rust core's (``aqm::units``), the one the scenario schema uses, so the command
line, the Python API and scenario files read a quantity the same way. Every function returns the
SI base unit as a float: seconds, bits per second, bytes, packets per second. A bare number is the
base unit, except with ``require_unit=True`` (the command line's rule: ``--rate 10`` is an error,
``--rate 10Mbps`` is not). The case of ``b``/``B`` matters and nothing else does: ``Mbps`` and
``mbps`` are megabits per second, ``MBps`` megabytes per second, ``10MBPS`` an error.

Errors are :class:`UnitError` (a ``ValueError``) whose message names the text.

Examples
--------
>>> parse_rate("10Mbps")
10000000.0
>>> parse_rate("1MBps")
8000000.0
>>> parse_time("5ms")
0.005
>>> parse_size("1.5kB")
1500.0
>>> parse_rate("10", require_unit=True)
Traceback (most recent call last):
...
aqmlab.units.UnitError: rate = 10: give a unit, e.g. 10Mbps
"""

from __future__ import annotations

import math

from aqmlab import _core

__all__ = [
    "UnitError",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_packet_rate",
    "format_rate",
    "format_time",
    "to_ns",
]


class UnitError(ValueError):
    """A quantity could not be parsed; the message names the key and the text."""


def _parse(text: str | float | int, kind: str, key: str | None, require_unit: bool) -> float:
    name = key or kind.replace("_", " ")
    if isinstance(text, bool):
        raise UnitError(f"{name} = {text!r}: not a quantity")
    if isinstance(text, (int, float)):
        if require_unit:
            raise UnitError(f"{name} = {text!r}: give a unit")
        if not math.isfinite(text):
            raise UnitError(f"{name} = {text!r}: not a finite {kind.replace('_', ' ')}")
        return float(text)
    try:
        return _core.parse_quantity(kind, str(text), require_unit)
    except ValueError as e:
        raise UnitError(f"{name} = {text}: {e}") from None


def parse_rate(
    text: str | float | int, require_unit: bool = False, key: str | None = None
) -> float:
    """Parse a data rate (``"10Mbps"``, ``"1Gbps"``, ``"500kbps"``, ``"1MBps"``) to bits/s.

    Parameters
    ----------
    text : str or number
        The quantity; a number is bits per second.
    require_unit : bool
        Reject a bare number (the command line's rule).
    key : str, optional
        How the error message names the quantity (default ``rate``).

    Returns
    -------
    float
    """
    return _parse(text, "rate", key, require_unit)


def parse_time(
    text: str | float | int, require_unit: bool = False, key: str | None = None
) -> float:
    """Parse a time (``"5ms"``, ``"60s"``, ``"100us"``) to seconds (see :func:`parse_rate`).

    Parameters
    ----------
    text : str or number
        The quantity; a number is in the base unit.
    require_unit : bool
        Reject a bare number (the command line's rule).
    key : str, optional
        How the error message names the quantity.

    Returns
    -------
    float
    """
    return _parse(text, "time", key, require_unit)


def parse_size(
    text: str | float | int, require_unit: bool = False, key: str | None = None
) -> float:
    """Parse a size (``"1500"``, ``"1500B"``, ``"64kB"``, ``"1MiB"``) to bytes.

    Parameters
    ----------
    text : str or number
        The quantity; a number is in the base unit.
    require_unit : bool
        Reject a bare number (the command line's rule).
    key : str, optional
        How the error message names the quantity.

    Returns
    -------
    float
    """
    return _parse(text, "size", key, require_unit)


def parse_packet_rate(
    text: str | float | int, require_unit: bool = False, key: str | None = None
) -> float:
    """Parse a packet rate (``"3750pps"``, ``"3.75kpps"``) to packets per second.

    Parameters
    ----------
    text : str or number
        The quantity; a number is in the base unit.
    require_unit : bool
        Reject a bare number (the command line's rule).
    key : str, optional
        How the error message names the quantity.

    Returns
    -------
    float
    """
    return _parse(text, "packet_rate", key, require_unit)


def format_rate(bps: float) -> str:
    """Format bits per second with the largest SI prefix that keeps the number >= 1.

    Parameters
    ----------
    bps : float
        Bits per second.

    Returns
    -------
    str
    """
    for unit, mult in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if abs(bps) >= mult:
            return f"{bps / mult:g}{unit}"
    return f"{bps:g}bps"


def format_time(seconds: float) -> str:
    """Format seconds as s, ms or us.

    Parameters
    ----------
    seconds : float
        The time.

    Returns
    -------
    str
    """
    if abs(seconds) >= 1 or seconds == 0:
        return f"{seconds:g}s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:g}ms"
    return f"{seconds * 1e6:g}us"


def to_ns(key: str, t: float) -> int:
    """Seconds to integer nanoseconds by the project's one rounding rule.

    The nearest nanosecond, halves away from zero (the core's
    ``aqm::Duration::try_from_secs_f64``); every time a user gives in seconds is converted
    here, once, and compared in nanoseconds afterwards.

    Parameters
    ----------
    key : str
        The argument's name, for the error message.
    t : float
        A time in seconds.

    Returns
    -------
    int
        Nanoseconds.

    Raises
    ------
    ArgumentError
        ``t`` is not a number, NaN, infinite or negative.

    Examples
    --------
    >>> to_ns("t", 0.1 + 0.2)
    300000000
    """
    if isinstance(t, bool) or not isinstance(t, int | float):
        raise _core.ArgumentError(f"{key} = {t!r}: give a time in seconds")
    return _core.secs_to_ns(key, float(t))
