"""Statistics across seeds: mean, standard deviation and Student-t confidence intervals.

:func:`mean_ci` summarises one sample; :func:`across_seeds` groups a sweep's results table
(``results.parquet``, :func:`aqmlab.sweep.run`) by its override columns and summarises every
metric over the seeds. Failed runs (``error`` not null) and missing values are left out; ``n``
says how many values each row rests on.

The interval is the two-sided Student-t interval of the mean,
``mean +- t_{(1+c)/2, n-1} * s / sqrt(n)`` with ``s`` the sample standard deviation
(``ddof = 1``); it needs ``n >= 2`` (NaN otherwise).

Examples
--------
>>> r = mean_ci([1.0, 2.0, 3.0])
>>> r.mean, r.std, r.n
(2.0, 1.0, 3)
>>> round(r.ci_low, 4), round(r.ci_high, 4)
(-0.4841, 4.4841)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["MeanCI", "mean_ci", "across_seeds", "override_columns", "metric_columns"]


@dataclass(frozen=True)
class MeanCI:
    """Mean, sample standard deviation and confidence interval of the mean of ``n`` values.

    Attributes
    ----------
    mean : float
        The mean.
    std : float
        The sample standard deviation (``ddof = 1``).
    n : int
        The number of values.
    ci_low, ci_high : float
        The interval (NaN with fewer than two values).
    confidence : float
        The two-sided confidence level.
    """

    mean: float
    std: float
    n: int
    ci_low: float
    ci_high: float
    confidence: float = 0.95

    @property
    def half_width(self) -> float:
        """Half the interval's width (NaN with fewer than two values)."""
        return (self.ci_high - self.ci_low) / 2.0

    def __str__(self) -> str:
        if math.isnan(self.half_width):
            return f"{self.mean:.4g}"
        return f"{self.mean:.4g} ± {self.half_width:.2g}"

    def to_dict(self) -> dict[str, float]:
        """``n``, ``mean``, ``std``, ``ci_low``, ``ci_high``.

        Returns
        -------
        dict
        """
        return {
            "n": self.n,
            "mean": self.mean,
            "std": self.std,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
        }


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> MeanCI:
    """The mean of ``values`` with its Student-t confidence interval.

    Parameters
    ----------
    values : iterable of float
        The sample (NaN and None are dropped).
    confidence : float
        Two-sided confidence level in (0, 1).

    Returns
    -------
    MeanCI
        ``n`` = 0 gives NaN everywhere; ``n`` = 1 gives the value as mean and NaN for the
        standard deviation and the interval.
    """
    from scipy import stats as st

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence = {confidence!r}: must be in (0, 1)")
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    nan = math.nan
    if n == 0:
        return MeanCI(nan, nan, 0, nan, nan, confidence)
    mean = math.fsum(xs) / n
    if n == 1:
        return MeanCI(mean, nan, 1, nan, nan, confidence)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(st.t.ppf((1.0 + confidence) / 2.0, n - 1)) * std / math.sqrt(n)
    return MeanCI(mean, std, n, mean - half, mean + half, confidence)


def override_columns(df) -> list[str]:
    """The override columns of a sweep's results table: those between ``run_key`` and
    ``seed`` (the table's layout, ``docs/sweep.md``).

    Parameters
    ----------
    df : pandas.DataFrame
        A sweep's results table.

    Returns
    -------
    list of str
    """
    cols = list(df.columns)
    if "run_key" in cols and "seed" in cols:
        return cols[cols.index("run_key") + 1 : cols.index("seed")]
    return []


def metric_columns(df) -> list[str]:
    """The numeric summary figures of a sweep's results table: the numeric columns after
    ``wall_s`` (all numeric columns but ``seed`` if there is no ``wall_s``).

    Parameters
    ----------
    df : pandas.DataFrame
        A sweep's results table.

    Returns
    -------
    list of str
    """
    import pandas as pd

    cols = list(df.columns)
    start = cols.index("wall_s") + 1 if "wall_s" in cols else 0
    return [
        c
        for c in cols[start:]
        if c not in ("seed", "run_key")
        and pd.api.types.is_numeric_dtype(df[c])
        and not pd.api.types.is_bool_dtype(df[c])
    ]


def across_seeds(
    df,
    metrics: Sequence[str] | None = None,
    by: Sequence[str] | None = None,
    confidence: float = 0.95,
):
    """Mean, standard deviation and confidence interval of each metric over the seeds of each
    configuration.

    Parameters
    ----------
    df : pandas.DataFrame or aqmlab.sweep.SweepResult
        A sweep's results table (one row per run), or the result of :func:`aqmlab.sweep.run`.
    metrics : sequence of str, optional
        Columns to summarise (default: :func:`metric_columns`).
    by : sequence of str, optional
        Columns that name a configuration (default: :func:`override_columns`; none: the whole
        table is one group).
    confidence : float
        Two-sided confidence level.

    Returns
    -------
    pandas.DataFrame
        One row per configuration and metric: the ``by`` columns, ``metric``, ``n``, ``mean``,
        ``std``, ``ci_low``, ``ci_high``; configurations in order of first appearance.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"aqm.type": ["codel", "codel", "pie", "pie"], "seed": [1, 2, 1, 2],
    ...                    "delay": [1.0, 3.0, 5.0, 5.0]})
    >>> across_seeds(df, ["delay"], ["aqm.type"])[["aqm.type", "mean", "std"]].to_dict("list")
    {'aqm.type': ['codel', 'pie'], 'mean': [2.0, 5.0], 'std': [1.4142135623730951, 0.0]}
    """
    import pandas as pd

    if hasattr(df, "to_pandas"):  # a SweepResult (aqmlab.sweep.result)
        df = df.to_pandas()
    by = list(override_columns(df) if by is None else by)
    metrics = list(metric_columns(df) if metrics is None else metrics)
    for c in [*by, *metrics]:
        if c not in df.columns:
            raise ValueError(f"column = {c!r}: not in the table (columns: {', '.join(df.columns)})")
    ok = df
    if "error" in df.columns:
        ok = df[df["error"].isna()]
    rows = []
    groups = ok.groupby(by, sort=False, dropna=False) if by else [((), ok)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            r = mean_ci(part[m].tolist(), confidence)
            rows.append({**dict(zip(by, key, strict=True)), "metric": m, **r.to_dict()})
    return pd.DataFrame(rows, columns=[*by, "metric", "n", "mean", "std", "ci_low", "ci_high"])
