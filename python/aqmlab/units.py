"""Parsing of quantities written ns-3/tc style: ``10Mbps``, ``1Gbps``, ``5ms``, ``60s``, ``1500B``.

All functions return SI base units as floats: seconds, bits per second, bytes. A bare number is
taken in the base unit. Errors are :class:`UnitError` (a ``ValueError``) naming the text.

Examples
--------
>>> parse_rate("10Mbps")
10000000.0
>>> parse_time("5ms")
0.005
>>> parse_size("1.5KB")
1500.0
"""

from __future__ import annotations

import re

__all__ = ["UnitError", "parse_rate", "parse_time", "parse_size", "format_rate", "format_time"]


class UnitError(ValueError):
    """A quantity could not be parsed or has the wrong sign."""


_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"

# Multipliers to the base unit. ns-3's DataRate uses SI prefixes (k = 1000) for bits per second
# and KiB-style binary prefixes only when written as such; tc likewise.
_RATE = {
    "": 1.0,
    "bps": 1.0,
    "b/s": 1.0,
    "kbps": 1e3,
    "kb/s": 1e3,
    "kbit": 1e3,
    "mbps": 1e6,
    "mb/s": 1e6,
    "mbit": 1e6,
    "gbps": 1e9,
    "gb/s": 1e9,
    "gbit": 1e9,
    "tbps": 1e12,
    "bytes/s": 8.0,
    "kbytes/s": 8e3,
    "mbytes/s": 8e6,
}
_TIME = {
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
    "min": 60.0,
    "h": 3600.0,
}
_SIZE = {
    "": 1.0,
    "b": 1.0,
    "byte": 1.0,
    "bytes": 1.0,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "kib": 1024.0,
    "mib": 1024.0**2,
    "gib": 1024.0**3,
}


def _parse(text: str | float | int, table: dict[str, float], what: str) -> float:
    if isinstance(text, bool):
        raise UnitError(f"{what} {text!r}: not a quantity")
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(_NUM + r"([A-Za-zµ/]*)", str(text).strip())
    if not m:
        raise UnitError(f"{what} {text!r}: not a number with a unit")
    value, unit = float(m.group(1)), m.group(2)
    key = unit.lower()
    if key not in table:
        raise UnitError(f"{what} {text!r}: unknown unit {unit!r}")
    return value * table[key]


def parse_rate(text: str | float | int) -> float:
    """Parse a data rate (``"10Mbps"``, ``"1Gbps"``, ``"500kbps"``) to bits per second."""
    return _parse(text, _RATE, "rate")


def parse_time(text: str | float | int) -> float:
    """Parse a time (``"5ms"``, ``"60s"``, ``"100us"``) to seconds."""
    return _parse(text, _TIME, "time")


def parse_size(text: str | float | int) -> float:
    """Parse a size (``"1500"``, ``"1500B"``, ``"64KB"``, ``"1MiB"``) to bytes."""
    return _parse(text, _SIZE, "size")


def format_rate(bps: float) -> str:
    """Format bits per second with the largest SI prefix that keeps the number >= 1."""
    for unit, mult in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if abs(bps) >= mult:
            return f"{bps / mult:g}{unit}"
    return f"{bps:g}bps"


def format_time(seconds: float) -> str:
    """Format seconds as s, ms or us."""
    if abs(seconds) >= 1 or seconds == 0:
        return f"{seconds:g}s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:g}ms"
    return f"{seconds * 1e6:g}us"
