"""A sweep's results as a result object (:mod:`aqmlab.protocol`): what :func:`aqmlab.sweep.run`
returns and what :meth:`SweepResult.load` reads back from a sweep folder.

The results table (``results.parquet``: one row per run, ``docs/sweep.md``) is
:meth:`SweepResult.to_pandas`; :meth:`SweepResult.stats` summarises it across seeds
(:func:`aqmlab.stats.across_seeds`) and :meth:`SweepResult.plot` draws one metric's mean and
confidence interval per configuration (:func:`plot_across_seeds`, which the RFC 7928 suite's
result uses too).

Until the release after this one, a ``SweepResult`` also answers what the DataFrame
:func:`aqmlab.sweep.run` used to return answered (``result["column"]``, ``result.columns``,
...), with a ``DeprecationWarning``: call :meth:`SweepResult.to_pandas` instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aqmlab.protocol import Result, deprecated, json_ready, new_axes, plotted

__all__ = ["SweepResult", "plot_across_seeds", "default_metric"]

#: The metric a sweep's plot shows unless told otherwise: the first of these in the table.
PREFERRED_METRICS = (
    "links.bottleneck.queue_delay_ms.mean",
    "links.bottleneck.utilization",
)


def default_metric(df) -> str:
    """The metric to show by default: the first of :data:`PREFERRED_METRICS` in the table,
    else its first metric column.

    Parameters
    ----------
    df : pandas.DataFrame
        A sweep's results table.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        The table has no metric column.
    """
    from aqmlab.stats import metric_columns

    metrics = metric_columns(df)
    for m in PREFERRED_METRICS:
        if m in metrics:
            return m
    if not metrics:
        raise ValueError("the results table has no metric column (no run finished?)")
    return metrics[0]


def plot_across_seeds(
    df, metric: str | None = None, ax=None, confidence: float = 0.95, labels=None
):
    """One metric's mean and confidence interval over the seeds, per configuration.

    Configurations are named and ordered by the sweep's axes (:class:`aqmlab.report.axes.Axis`):
    ``target = 2 ms`` before ``target = 10 ms``, numbers in one unit per axis.

    Parameters
    ----------
    df : pandas.DataFrame
        A sweep's results table (one row per run).
    metric : str, optional
        The column (default: :func:`default_metric`).
    ax : matplotlib Axes, optional
        Where to draw; without it, a new Figure.
    confidence : float
        Two-sided confidence level of the intervals.
    labels : dict, optional
        The sweep's ``[labels]`` (``sweep.json``'s ``labels``): axis and value names.

    Returns
    -------
    matplotlib Figure or Axes
        The Figure made, else ``ax``.
    """
    from aqmlab.report.axes import Axis
    from aqmlab.stats import across_seeds, override_columns

    metric = default_metric(df) if metric is None else metric
    by = override_columns(df)
    st = across_seeds(df, [metric], by, confidence)
    axes = [Axis.from_values(k, list(df[k]), (labels or {}).get(k)) for k in by]
    order = sorted(range(len(st)), key=lambda i: tuple(a.position(st[a.key].iloc[i]) for a in axes))
    st = st.iloc[order].reset_index(drop=True)
    labels = [", ".join(a.describe(row[a.key]) for a in axes) or "all" for _, row in st.iterrows()]
    fig, axes = new_axes(ax, figsize=(max(4.0, 0.9 * len(st) + 2), 3.5))
    mean = st["mean"].to_numpy(dtype=float)
    lo = (mean - st["ci_low"].to_numpy(dtype=float)).clip(min=0)
    hi = (st["ci_high"].to_numpy(dtype=float) - mean).clip(min=0)
    x = range(len(st))
    axes.errorbar(x, mean, yerr=[lo, hi], fmt="o", capsize=4)
    axes.set_xticks(list(x), labels, rotation=30 if len(st) > 3 else 0, ha="right", fontsize=8)
    axes.set_ylabel(metric, fontsize=8)
    axes.set_title(f"mean and {confidence:.0%} CI over seeds", fontsize=9)
    if fig is not None:
        fig.tight_layout()
    return plotted(fig, ax)


@dataclass(repr=False, eq=False)
class SweepResult(Result):
    """The results of a sweep.

    Attributes
    ----------
    out : Path
        The sweep's folder (``docs/sweep.md``).
    table : pandas.DataFrame
        The results table, ``results.parquet``: ``run_key``, the override columns, ``seed``,
        ``error``, ``wall_s`` and the summary's numeric figures flattened with dots.
    wall_s : float or None
        Wall-clock seconds of :func:`aqmlab.sweep.run` (None when loaded from a folder).
    """

    out: Path
    table: Any
    wall_s: float | None = None

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> SweepResult:
        """Read a sweep folder's results table.

        Parameters
        ----------
        folder : path-like
            A folder written by :func:`aqmlab.sweep.run` or ``aqmlab sweep``.

        Returns
        -------
        SweepResult

        Raises
        ------
        ValueError
            ``folder`` holds no readable ``results.parquet``.
        """
        import pyarrow.parquet as pq

        path = Path(folder) / "results.parquet"
        try:
            table = pq.read_table(path).to_pandas()
        except (OSError, ValueError) as e:
            raise ValueError(f"folder = '{folder}': not a sweep folder ({e})") from None
        return cls(Path(folder), table)

    # -- the result protocol --------------------------------------------------------------------
    def _figures(self) -> dict[str, Any]:
        from aqmlab.stats import override_columns

        t = self.table
        failed = int(t["error"].notna().sum()) if "error" in t.columns else 0
        by = override_columns(t)
        configs = len(t.drop_duplicates(by)) if by and len(t) else (1 if len(t) else 0)
        return {
            "out": str(self.out),
            "runs": len(t),
            "failed": failed,
            "configurations": configs,
            "seeds": int(t["seed"].nunique()) if "seed" in t.columns else 0,
            "wall_s": self.wall_s,
        }

    def _tables(self) -> dict[str, Any]:
        return {"results": self.table}

    def to_pandas(self):
        """The results table (``results.parquet``), one row per run.

        Returns
        -------
        pandas.DataFrame
        """
        return self.table

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``out``, ``wall_s`` and ``runs`` (the table's rows as dicts).

        Returns
        -------
        dict
        """
        return {
            "out": str(self.out),
            "wall_s": self.wall_s,
            "runs": json_ready(self.table.to_dict("records")),
        }

    def stats(self, metrics=None, by=None, confidence: float = 0.95):
        """Mean, standard deviation and confidence interval of each metric over the seeds of
        each configuration (:func:`aqmlab.stats.across_seeds`).

        Parameters
        ----------
        metrics : sequence of str, optional
            Columns to summarise (default: every metric column).
        by : sequence of str, optional
            Columns that name a configuration (default: the override columns).
        confidence : float
            Two-sided confidence level.

        Returns
        -------
        pandas.DataFrame
        """
        from aqmlab.stats import across_seeds

        return across_seeds(self.table, metrics, by, confidence)

    def plot(self, ax=None, metric: str | None = None):
        """One metric's mean and 95 % confidence interval per configuration
        (:func:`plot_across_seeds`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.
        metric : str, optional
            The column (default: the bottleneck's mean queueing delay when there is one).

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        return plot_across_seeds(self.table, metric, ax, labels=self._labels())

    def _labels(self) -> dict[str, Any]:
        """The sweep's ``[labels]`` from its ``sweep.json`` (empty without one)."""
        import json

        try:
            data = json.loads((Path(self.out) / "sweep.json").read_text())
        except (OSError, ValueError, TypeError):
            return {}
        labels = data.get("labels") if isinstance(data, dict) else None
        return labels if isinstance(labels, dict) else {}

    # -- what the DataFrame sweep.run used to return did, kept for one release ----------------
    def __len__(self) -> int:
        return len(self.table)

    def __getitem__(self, key):
        deprecated("sweep.run(...)[key]", "sweep.run(...).to_pandas()[key]")
        return self.table[key]

    def __getattr__(self, name: str):
        table = self.__dict__.get("table")
        if name.startswith("_") or table is None or not hasattr(table, name):
            raise AttributeError(f"'SweepResult' object has no attribute {name!r}")
        deprecated(f"sweep.run(...).{name}", f"sweep.run(...).to_pandas().{name}")
        return getattr(table, name)
