"""The FCT-slowdown table of a fabric run (``fct_slowdown`` in ``summary.json``)."""

from __future__ import annotations


def fct_table(summary: dict):
    """One row per flow-size bucket: completed flows, median, 99th percentile and mean FCT
    slowdown (FCT / ideal FCT, docs/fabric.md); None for a run that is not on a fabric.

    Parameters
    ----------
    summary : dict
        The run's summary.

    Returns
    -------
    rich.table.Table or None
    """
    from rich.table import Table

    buckets = summary.get("fct_slowdown")
    if not buckets:
        return None
    t = Table(title="FCT slowdown (FCT / ideal FCT)")
    for col in ("flow size", "flows", "p50", "p99", "mean"):
        t.add_column(col, justify="left" if col == "flow size" else "right")

    def x(v):
        return "-" if v is None else f"{v:.2f}"

    for b in buckets:
        t.add_row(b["bucket"], str(b["flows"]), x(b["p50"]), x(b["p99"]), x(b["mean"]))
    return t
