"""How the reproductions print numbers in a check's ``ours`` column where a plain format misleads:
ratios of near-zero numbers, times that mean "never", bounds of a quantity that is zero.
"""

from __future__ import annotations

import math

__all__ = ["compare_small", "ordinal", "settled_text", "span"]


def compare_small(
    a: float, b: float, *, floor: float, fmt: str = "{:.2%}", names: tuple[str, str] = ("", "")
) -> str:
    """``a`` against ``b`` as a ratio, or as the two values when a ratio would mislead.

    A ratio of two numbers near zero (or over a denominator near zero) is noise: 0.0012 over
    0.000001 prints as "1200x". Below ``floor`` the values are printed side by side, with
    "both near zero" when both are.

    Parameters
    ----------
    a, b : float
        The numerator and the denominator.
    floor : float
        The magnitude under which a value counts as near zero (the measurement's resolution).
    fmt : str
        Format of a value.
    names : tuple of str
        Labels printed before ``a`` and ``b`` (with a space) when the values are shown.

    Returns
    -------
    str
        ``"SFC 12.70% vs PI 0.31% (41×)"``, ``"SFC 12.70% vs AVQ 0.01% (AVQ near zero)"`` or
        ``"0.01% vs 0.00% (both near zero)"``.
    """
    na, nb = (f"{n} " if n else "" for n in names)
    both = f"{na}{fmt.format(a)} vs {nb}{fmt.format(b)}"
    if not (math.isfinite(a) and math.isfinite(b)):
        return both
    if abs(a) < floor and abs(b) < floor:
        return both + " (both near zero)"
    if abs(b) < floor:
        return both + f" ({nb.strip() or 'the denominator'} near zero)"
    return both + f" ({a / b:.2g}×)"


def settled_text(t: float | None, horizon_s: float, unit: str = "s") -> str:
    """A settling time, or "not settled" when the run ended outside the band.

    Parameters
    ----------
    t : float or None
        The settling time; None or NaN when the run never settled.
    horizon_s : float
        The run's length (s).
    unit : str
        Unit printed after a time.

    Returns
    -------
    str
    """
    if t is None or not math.isfinite(t):
        return f"not settled (within the {horizon_s:g} s run)"
    return f"{t:.1f} {unit}"


def span(values, fmt: str = "{:.0f}") -> str:
    """The range of ``values`` as ``"lo-hi"``, or one value when both print the same.

    Parameters
    ----------
    values : iterable of float
        The values (at least one).
    fmt : str
        Format of a value.

    Returns
    -------
    str
    """
    v = list(values)
    lo, hi = fmt.format(min(v)), fmt.format(max(v))
    return lo if lo == hi else f"{lo}-{hi}"


def ordinal(n: int) -> str:
    """``1`` -> ``"first"`` ... ``5`` -> ``"fifth"``; larger numbers as ``"6th"``.

    Parameters
    ----------
    n : int
        A rank from 1.

    Returns
    -------
    str
    """
    words = ("first", "second", "third", "fourth", "fifth")
    return words[n - 1] if 1 <= n <= len(words) else f"{n}th"
