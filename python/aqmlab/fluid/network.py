"""Routing helpers shared by the multi-link models (Kelly, SQM)."""

from __future__ import annotations

import numpy as np

__all__ = ["routing_matrix", "per_flow"]


def routing_matrix(routing, n_flows: int | None) -> np.ndarray:
    """0/1 flow-by-link matrix ``(N, L)``; ``None`` means every flow crosses one link.

    ``routing`` may be an ``(N, L)`` 0/1 array or a list of link-index lists, one per flow.

    Parameters
    ----------
    routing : array_like or list of lists, optional
        The routing.
    n_flows : int, optional
        ``N`` (checked against the routing).

    Returns
    -------
    numpy.ndarray, shape (N, L)
    """
    if routing is None:
        if n_flows is None:
            raise ValueError("routing or the number of flows is needed")
        return np.ones((n_flows, 1), dtype=bool)
    if len(routing) and not np.ndim(routing[0]) == 0 and not isinstance(routing, np.ndarray):
        try:
            arr = np.asarray(routing, dtype=float)
            if arr.ndim == 2 and np.all((arr == 0) | (arr == 1)):
                return arr.astype(bool)
        except ValueError:
            pass
        n_links = 1 + max(max(r) for r in routing if len(r))
        R = np.zeros((len(routing), n_links), dtype=bool)
        for i, links in enumerate(routing):
            R[i, list(links)] = True
    else:
        R = np.asarray(routing, dtype=float).astype(bool)
    if R.ndim != 2:
        raise ValueError(f"routing must be (flows, links) (got shape {R.shape})")
    if not R.any(axis=1).all():
        raise ValueError("routing: every flow must cross at least one link")
    if n_flows is not None and R.shape[0] != n_flows:
        raise ValueError(f"routing has {R.shape[0]} flows but {n_flows} were given")
    return R


def per_flow(value, name: str, B: int, N: int, *, positive=True) -> np.ndarray:
    """Broadcast a per-flow parameter (scalar, ``(N,)`` or ``(B, N)``) to ``(B, N)``.

    Parameters
    ----------
    value : float or array_like
        The parameter.
    name : str
        Its name, for the error.
    B, N : int
        Batch size and number of flows.
    positive : bool
        Require every value ``> 0``.

    Returns
    -------
    numpy.ndarray, shape (B, N)
    """
    if isinstance(value, str | bytes) or value is None:
        raise ValueError(f"{name} must be numbers, one per flow (got {value!r})")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers, one per flow (got {value!r})") from None
    if arr.ndim == 1 and arr.shape[0] != N:
        raise ValueError(f"{name} has {arr.shape[0]} values but there are {N} flows")
    try:
        arr = np.broadcast_to(arr, (B, N)).astype(float)
    except ValueError:
        raise ValueError(
            f"{name} shape {np.shape(value)} does not fit {B} sets x {N} flows"
        ) from None
    if not np.all(np.isfinite(arr)) or (positive and np.any(arr <= 0)):
        raise ValueError(f"{name} must be finite and > 0 (got {value})")
    return arr
