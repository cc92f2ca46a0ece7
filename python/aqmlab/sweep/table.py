"""The results table of a sweep: run records -> ``results.parquet``.

One row per run: ``run_key``, one column per override key (named as in the spec), ``seed``,
``KEY.number`` and ``KEY.unit`` for every override key written as quantities with a unit
(``"2ms"`` -> 2.0, ``"ms"``), ``error``, ``wall_s``, then every numeric scalar of the run's ``summary.json`` flattened with dots
(:func:`flatten_summary`). Lists (per-flow rows, histograms) are not flattened.

Examples
--------
>>> flatten_summary({"seed": 1, "links": {"bottleneck": {"utilization": 0.9, "aqm": "codel",
...                  "queue_delay_ms": {"mean": 3.5}}}, "flows": [{"id": 0}],
...                  "fairness": {"jain": 0.99, "flows": 2}})
{'links.bottleneck.utilization': 0.9, 'links.bottleneck.queue_delay_ms.mean': 3.5, 'fairness.jain': 0.99, 'fairness.flows': 2}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["flatten_summary", "records_table", "FIXED_COLUMNS", "SKIPPED_SUMMARY_KEYS"]

#: The first columns of results.parquet (the override columns come between run_key and seed).
FIXED_COLUMNS = ("run_key", "seed", "error", "wall_s")
#: Top-level summary keys not flattened: ``seed`` is a column already; ``wall_seconds`` is
#: wall-clock time (the only figure that differs between identical runs; ``wall_s`` has it).
SKIPPED_SUMMARY_KEYS = ("seed", "wall_seconds")


def flatten_summary(summary: Mapping[str, Any], prefix: str = "") -> dict[str, int | float]:
    """Every numeric scalar of a summary (nested tables joined with dots), in document order.

    Booleans, strings, nulls and lists are left out (and so is everything inside a list), as
    are :data:`SKIPPED_SUMMARY_KEYS` at the top level.

    Parameters
    ----------
    summary : mapping
        A run's summary.
    prefix : str
        Prepended to every key (used for the nested tables).

    Returns
    -------
    dict
    """
    out: dict[str, int | float] = {}
    for k, v in summary.items():
        if not prefix and k in SKIPPED_SUMMARY_KEYS:
            continue
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten_summary(v, name + "."))
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out[name] = v
    return out


def _override_column(values: list[Any]):
    """An Arrow array for one override column: its own type when all values share one, JSON
    text for tables and lists, text otherwise."""
    import pyarrow as pa

    kinds = {type(v) for v in values}
    if kinds <= {bool}:
        return pa.array(values, pa.bool_())
    if kinds <= {int}:
        return pa.array(values, pa.int64())
    if kinds <= {int, float}:
        return pa.array([float(v) for v in values], pa.float64())
    if kinds <= {str}:
        return pa.array(values, pa.string())
    return pa.array(
        [v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in values], pa.string()
    )


def _metric_column(values: list[Any]):
    """int64 when every run has the figure as a whole number, float64 (null when absent)
    otherwise."""
    import pyarrow as pa

    if values and all(isinstance(v, int) for v in values):
        return pa.array(values, pa.int64())
    return pa.array(
        [
            None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
            for v in values
        ],
        pa.float64(),
    )


def _number_columns(records: list[Mapping[str, Any]], override_keys: list[str]) -> dict:
    """``KEY.number`` (float64) and ``KEY.unit`` (string) for every override key whose values
    are quantities written with a unit (``"2ms"``, ``"10Mbps"``): the values as numbers in one
    unit per key (:class:`aqmlab.report.axes.Axis`), so that tables sort and filter them
    numerically."""
    import pyarrow as pa

    from aqmlab.report.axes import Axis

    out: dict[str, Any] = {}
    for k in override_keys:
        values = [r["overrides"].get(k) for r in records]
        if not any(isinstance(v, str) for v in values):
            continue
        axis = Axis.from_values(k, values)
        if not axis.numeric:
            continue
        out[f"{k}.number"] = pa.array(
            [None if v is None else axis.numbers[v] for v in values], pa.float64()
        )
        out[f"{k}.unit"] = pa.array([None if v is None else axis.unit for v in values], pa.string())
    return out


def records_table(records: Iterable[Mapping[str, Any]], override_keys: list[str]):
    """The results table (a ``pyarrow.Table``) of run records, one row per record, in order.

    Parameters
    ----------
    records : iterable of dict
        Run records ``{"run_key", "overrides", "seed", "summary", "error", "wall_s"}``.
    override_keys : list of str
        The override columns, in order.

    Returns
    -------
    pyarrow.Table
    """
    import pyarrow as pa

    records = list(records)
    flat = [flatten_summary(r["summary"]) if r.get("summary") else {} for r in records]
    metrics: dict[str, None] = {}
    for f in flat:
        metrics.update(dict.fromkeys(f))
    cols: dict[str, Any] = {"run_key": pa.array([r["run_key"] for r in records], pa.string())}
    for k in override_keys:
        cols[k] = _override_column([r["overrides"].get(k) for r in records])
    cols["seed"] = pa.array([r["seed"] for r in records], pa.int64())
    cols.update(_number_columns(records, override_keys))
    cols["error"] = pa.array([r.get("error") for r in records], pa.string())
    cols["wall_s"] = pa.array([float(r["wall_s"]) for r in records], pa.float64())
    for m in metrics:
        if m in cols:
            continue
        cols[m] = _metric_column([f.get(m) for f in flat])
    meta = {b"aqmlab.sweep": json.dumps({"override_keys": override_keys}).encode()}
    return pa.table(cols).replace_schema_metadata(meta)
