"""Per-run numbers a report compares: the columns of its table and the axes of its plots."""

from __future__ import annotations

import math
from typing import Any

from aqmlab.report.inputs import Run, primary_link

__all__ = [
    "METRICS",
    "METRIC_RANGE",
    "PARAMETER_METRICS",
    "run_metrics",
    "flow_goodputs_mbps",
    "flow_goodputs_fair",
    "fair_share_mbps",
    "delay_histogram",
]

#: (key, column title, unit) of the table, in order.
METRICS = [
    ("utilization", "utilization", "%"),
    ("delay_mean", "mean queue delay", "ms"),
    ("delay_p99", "p99 queue delay", "ms"),
    ("loss", "loss", "%"),
    ("goodput", "goodput", "Mb/s"),
    ("jain", "Jain index", ""),
]

#: The range each metric can take: a confidence band drawn beyond it is clipped to it.
METRIC_RANGE = {
    "utilization": (0.0, 100.0),
    "jain": (0.0, 1.0),
    "loss": (0.0, 100.0),
}
#: (key, axis title) of the metric-versus-parameter figures, in order.
PARAMETER_METRICS = [
    ("delay_p50", "p50 queue delay [ms]"),
    ("delay_p99", "p99 queue delay [ms]"),
    ("utilization", "utilization [%]"),
    ("loss", "loss [%]"),
    ("jain", "Jain's index"),
    ("goodput_fair", "goodput / fair share"),
]


def _get(run: Run, path: str) -> Any:
    """A summary value by dotted path, from the full summary or the flattened results row."""
    if run.summary is not None:
        node: Any = run.summary
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node
    return run.flat.get(path)


def _num(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def _within(x: float, lo: float, hi: float = math.inf) -> float:
    """``x`` if it is a meaningful value in ``[lo, hi]``, else NaN (the page shows "n/a")."""
    return x if lo <= x <= hi else math.nan


def run_metrics(run: Run) -> dict[str, float]:
    """The table's numbers for one run, on its primary link.

    ``utilization`` and ``loss`` (drops / arrivals) in %, queue delays in ms (mean, p50 and p99
    of the packets' sojourn, post-warm-up), ``goodput`` the sum of every flow's goodput in Mb/s
    (needs the full summary), ``goodput_fair`` the mean goodput of the flows that are not short
    flows over their fair share (:func:`fair_share_mbps`), ``jain`` Jain's index of the
    long-lived TCP flows. A number is NaN
    where it is unavailable or has no meaning: a ratio whose base is zero, negative or missing
    (the loss of a run without arrivals), a fraction outside [0, 1], a negative delay or
    goodput. The page shows NaN as "n/a", never a number such as -100 %.

    Parameters
    ----------
    run : Run
        One run.

    Returns
    -------
    dict of str to float
    """
    link = primary_link(run.summary, run.flat)
    out = dict.fromkeys((m[0] for m in METRICS), math.nan)
    if link is not None:
        base = f"links.{link}"
        out["utilization"] = 100 * _within(_num(_get(run, f"{base}.utilization")), 0.0, 1.0)
        out["delay_mean"] = _within(_num(_get(run, f"{base}.queue_delay_ms.mean")), 0.0)
        out["delay_p50"] = _within(_num(_get(run, f"{base}.queue_delay_ms.p50")), 0.0)
        out["delay_p99"] = _within(_num(_get(run, f"{base}.queue_delay_ms.p99")), 0.0)
        arrivals = _num(_get(run, f"{base}.arrivals"))
        drops = _num(_get(run, f"{base}.drops"))
        if arrivals > 0 and 0 <= drops <= arrivals:
            out["loss"] = 100 * drops / arrivals
    if run.summary is not None and isinstance(run.summary.get("flows"), list):
        goodput = sum(_num(f.get("goodput_bps")) for f in run.summary["flows"]) / 1e6
        out["goodput"] = _within(goodput, 0.0)
    fair = flow_goodputs_fair(run)
    out["goodput_fair"] = sum(fair) / len(fair) if fair else math.nan
    out["jain"] = _within(_num(_get(run, "fairness.jain")), 0.0, 1.0)
    return out


def fair_share_mbps(run: Run) -> float:
    """The fair share of the run's flows: the primary link's rate over the number of flows that
    are not short flows (Mb/s; NaN without a rate or such flows).

    Parameters
    ----------
    run : Run
        One run.

    Returns
    -------
    float
    """
    link = primary_link(run.summary, run.flat)
    rate = _num(_get(run, f"links.{link}.rate_bps")) if link else math.nan
    n = len(flow_goodputs_mbps(run))
    if not (rate > 0) or n == 0:
        return math.nan
    return rate / 1e6 / n


def flow_goodputs_fair(run: Run) -> list[float]:
    """Each flow's goodput over the fair share (:func:`fair_share_mbps`): 1 is a fair share,
    so runs of 10 and of 100 flows compare (short flows left out; empty without a rate).

    Parameters
    ----------
    run : Run
        One run.

    Returns
    -------
    list of float
    """
    share = fair_share_mbps(run)
    if not math.isfinite(share):
        return []
    return [g / share for g in flow_goodputs_mbps(run)]


def flow_goodputs_mbps(run: Run) -> list[float]:
    """Goodput of each flow of the run in Mb/s, short (Poisson) flows left out.

    Parameters
    ----------
    run : Run
        One run.

    Returns
    -------
    list of float
    """
    flows = (run.summary or {}).get("flows") or []
    return [
        _num(f.get("goodput_bps")) / 1e6
        for f in flows
        if f.get("kind") != "short_tcp" and math.isfinite(_num(f.get("goodput_bps")))
    ]


def delay_histogram(run: Run) -> dict[float, tuple[float, int]] | None:
    """The primary link's queue-delay histogram as {lo_ms: (hi_ms, count)}, or None.

    Parameters
    ----------
    run : Run
        One run.

    Returns
    -------
    dict or None
    """
    link = primary_link(run.summary, run.flat)
    h = _get(run, f"links.{link}.queue_delay_hist") if link else None
    if not isinstance(h, dict) or "counts" not in h:
        return None
    return {
        float(lo): (float(hi), int(c))
        for lo, hi, c in zip(h["lo_ms"], h["hi_ms"], h["counts"], strict=True)
    }
