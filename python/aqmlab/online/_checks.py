"""Argument checks shared by :mod:`aqmlab.online` (one-line ValueErrors naming the argument)."""

from __future__ import annotations

import numpy as np

from aqmlab.design.plants import check_real

__all__ = ["as_routing", "as_capacity", "as_alpha", "check_real"]


def as_routing(routing, n_flows: int | None = None) -> np.ndarray:
    """``routing`` as a (K, L) 0/1 float matrix.

    A NumPy array is the 0/1 matrix itself; a Python list (or tuple) of lists is one list of
    link indices per flow (``[[0, 1], [0], [1]]``: flow 0 crosses links 0 and 1). Every flow
    must cross at least one link (otherwise its rate is unbounded).
    """
    if (
        isinstance(routing, list | tuple)
        and routing
        and all(isinstance(r, list | tuple) for r in routing)
    ):
        links = sorted({int(v) for r in routing for v in r}) if any(routing) else []
        if any(v < 0 for r in routing for v in r):
            raise ValueError(f"routing must list link indices >= 0, got {routing!r}")
        L = (max(links) + 1) if links else 0
        R = np.zeros((len(routing), L))
        for i, r in enumerate(routing):
            R[i, list(r)] = 1.0
    else:
        try:
            R = np.asarray(routing, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"routing must be a 0/1 matrix (flows x links), got {routing!r}"
            ) from None
        if R.ndim == 1:
            R = R[:, None]
    if R.ndim != 2 or R.size == 0 or not np.all((R == 0) | (R == 1)):
        raise ValueError(f"routing must be a non-empty 0/1 matrix (flows x links), got {routing!r}")
    if n_flows is not None and R.shape[0] != n_flows:
        raise ValueError(f"routing has {R.shape[0]} flows, expected {n_flows}")
    if np.any(R.sum(axis=1) == 0):
        bad = [int(i) for i in np.nonzero(R.sum(axis=1) == 0)[0]]
        raise ValueError(f"routing: flows {bad} cross no link (their rate would be unbounded)")
    return R


def as_capacity(capacity, n_links: int) -> np.ndarray:
    """Link capacities (packets/s), one per link (a scalar is broadcast)."""
    try:
        C = np.asarray(capacity, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"capacity must be numbers (packets/s), got {capacity!r}") from None
    if C.ndim == 0:
        C = np.full(n_links, float(C))
    if C.shape != (n_links,):
        raise ValueError(f"capacity has {C.size} values for {n_links} links")
    if not np.all(np.isfinite(C)) or np.any(C <= 0):
        raise ValueError(f"capacity must be positive finite numbers, got {capacity!r}")
    return C


def as_alpha(alpha, allow_inf: bool = False) -> float:
    """The fairness exponent: >= 0 (and ``inf`` for max-min where allowed)."""
    if allow_inf and isinstance(alpha, int | float) and alpha == np.inf:
        return float("inf")
    return check_real("alpha", alpha, nonneg=True)
