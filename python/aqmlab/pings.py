"""Latency under load: the statistics of the ping probers' probes (``kind = "ping"`` flow
groups) that go into ``summary.json`` as ``pings``; the probes themselves are
``pings.parquet`` (docs/flent.md, "Ping flows")."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["PENDING_S", "ping_summary"]

#: A probe without an echo sent less than this long before the end of the run is pending (its
#: echo may still be on its way), not lost, and is left out of the statistics.
PENDING_S = 1.0


def _quantile(xs: list[float], q: float) -> float:
    """The ``q`` quantile of sorted ``xs`` by linear interpolation between order statistics
    (numpy's default, ``method="linear"``)."""
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def ping_summary(pings: dict[str, list], summary: dict[str, Any]) -> dict[str, Any]:
    """The ``pings`` entry of ``summary.json``: over the probes sent after the warm-up,
    ``sent``, ``received``, ``lost``, ``pending``, ``loss`` (lost / (sent - pending)) and
    the RTT's ``mean_ms``, ``p50_ms``, ``p90_ms``, ``p99_ms`` (exact order statistics,
    interpolated linearly; null without echoes), all probers together and per group
    (``groups``, by group name).

    Parameters
    ----------
    pings : dict
        The ``pings`` columns (``flow``, ``seq``, ``time_s``, ``rtt_ms``; NaN: no echo).
    summary : dict
        The run's summary (``warmup_s``, ``sim_seconds``, ``flows``, ``groups``).

    Returns
    -------
    dict
    """
    warmup = float(summary.get("warmup_s") or 0.0)
    end = float(summary.get("sim_seconds") or 0.0)
    group_of = {f["id"]: f["group"] for f in summary["flows"]}
    names = {g["group"]: g["name"] for g in summary.get("groups") or []}

    def stats(rows: list[tuple[float, float]]) -> dict[str, Any]:
        rtts = sorted(r for _, r in rows if not math.isnan(r))
        pending = sum(1 for t, r in rows if math.isnan(r) and t > end - PENDING_S)
        lost = sum(1 for t, r in rows if math.isnan(r)) - pending
        done = len(rows) - pending
        out: dict[str, Any] = {
            "sent": len(rows),
            "received": len(rtts),
            "lost": lost,
            "pending": pending,
            "loss": lost / done if done else None,
        }
        out["mean_ms"] = sum(rtts) / len(rtts) if rtts else None
        for key, q in (("p50_ms", 0.5), ("p90_ms", 0.9), ("p99_ms", 0.99)):
            out[key] = _quantile(rtts, q) if rtts else None
        return out

    rows: dict[int, list[tuple[float, float]]] = {}
    for f, t, r in zip(pings["flow"], pings["time_s"], pings["rtt_ms"], strict=True):
        if t >= warmup:
            r = float("nan") if r is None else float(r)
            rows.setdefault(group_of.get(f, -1), []).append((t, r))
    total = stats([x for g in rows.values() for x in g])
    total["groups"] = {names.get(g, f"flows[{g}]"): stats(v) for g, v in sorted(rows.items())}
    return total
