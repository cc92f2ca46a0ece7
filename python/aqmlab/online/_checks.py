"""Argument checks shared by :mod:`aqmlab.online` (one-line ValueErrors naming the argument)."""

from __future__ import annotations

import numpy as np

from aqmlab.design.plants import check_real
from aqmlab.fluid.network import routing_matrix

__all__ = ["as_routing", "as_capacity", "as_alpha", "check_real"]


def as_routing(routing, n_flows: int | None = None) -> np.ndarray:
    """``routing`` as a (K, L) 0/1 float matrix, read by :func:`aqmlab.fluid.network.routing_matrix`:
    a 0/1 matrix, or (when the rows are ragged or not 0/1) one list of link indices per flow
    (``[[0, 1], [0], [1]]``: flow 0 crosses links 0 and 1). Every flow must cross a link.
    """
    if routing is None or isinstance(routing, str | bytes):
        raise ValueError(f"routing must be a 0/1 matrix or link-index lists, got {routing!r}")
    try:
        R = routing_matrix(routing, n_flows)
    except (TypeError, IndexError):
        raise ValueError(
            f"routing must be a 0/1 matrix or link-index lists, got {routing!r}"
        ) from None
    if R.size == 0:
        raise ValueError(f"routing must not be empty, got {routing!r}")
    return R.astype(float)


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
