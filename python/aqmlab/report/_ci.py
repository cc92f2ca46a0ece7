"""Mean, standard deviation and 95 % Student-t confidence interval of repeated runs."""

from __future__ import annotations

import math
from collections.abc import Iterable


def ci95(values: Iterable[float]) -> tuple[float, float, float, float]:
    """Mean, sample standard deviation and two-sided 95 % Student-t interval of the mean.

    Parameters
    ----------
    values : iterable of float
        One value per run (seed); non-finite values are ignored.

    Returns
    -------
    (mean, std, lo, hi) : tuple of float
        ``std`` uses ``n - 1``; ``lo, hi = mean -/+ t(0.975, n - 1) std / sqrt(n)``. With one
        value ``std``, ``lo`` and ``hi`` are NaN; with none, all four are NaN.

    Examples
    --------
    >>> m, s, lo, hi = ci95([1.0, 2.0, 3.0])
    >>> m, s, round(lo, 3), round(hi, 3)
    (2.0, 1.0, -0.484, 4.484)
    """
    from scipy.stats import t

    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return (math.nan, math.nan, math.nan, math.nan)
    mean = sum(xs) / n
    if n == 1:
        return (mean, math.nan, math.nan, math.nan)
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(t.ppf(0.975, n - 1)) * std / math.sqrt(n)
    return (mean, std, mean - half, mean + half)
