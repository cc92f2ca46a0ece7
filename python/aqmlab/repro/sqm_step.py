"""SQM's Algorithm 1 step size against Theorem 4's assumptions (Ye et al. 2022, §IV;
docs/online.md, "Step size inside Theorem 4").

Theorem 4 (Ye et al., §IV, eq. 31; proof in Appendix F) bounds the regret of Algorithm 1 with
``eta_t = D / (G sqrt(t))`` by ``(3/2) G D sqrt(T)`` under two assumptions: ``D`` bounds the
diameter of the feasible set X (eq. 28) and ``G`` bounds the gradient's norm on X (eq. 29).
Both are *upper bounds*: any ``D' >= D``, ``G' >= G`` satisfy them, so every step
``eta_t = c / sqrt(t)`` with ``c > 0`` lies inside the assumptions (``c >= D/G``: ``G' = G``,
``D' = c G``; ``c < D/G``: ``D' = D``, ``G' = D / c``), with the bound
``(3/2) G D sqrt(T) max(c G / D, D / (c G))``. The paper's step is the tight ``c = D/G``.

The study runs Algorithm 1 (:func:`aqmlab.online.online_gradient`) on the flow sets of
``aqmlab repro sqm-s1`` (the paper's network, 40 flows, 5-s periods, α = 2, ε = 1 packet/s),
per-period, no packets (the level Theorem 4 speaks to), for ``c = kappa D / G`` over
``kappa`` in :data:`KAPPAS`, beside the NUM optimum of each period's present flows (what the
``sqm`` case's controller tunes for, ``state = "num"``). Figures per rule: regret and bound,
the mean relative distance of the present flows' rates from the period's NUM optimum, and the
share of present flow-periods at an extreme (at most ``2 ε`` or at least half a link's
capacity: "jumps between ε and the capacity").
"""

from __future__ import annotations

import numpy as np

from aqmlab.online import num_optimum, online_gradient
from aqmlab.online.ogd import alpha_fair_utility, ogd_bounds, regret
from aqmlab.repro import sqm_net as net
from aqmlab.repro.sqm_s1 import flows_for

#: multiples of the paper's step constant D / G
KAPPAS = (1.0, 1e2, 1e4, 1e6)
ALPHA = 2.0
EPSILON = 1.0


def flow_sets(seed: int = 1, duration: float = 200.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The present flows of each 5-s period of ``sqm-s1``'s schedule for ``seed``.

    Parameters
    ----------
    seed : int
        The schedule's seed (as ``aqmlab repro sqm-s1``).
    duration : float
        Length (s); periods of ``sqm_net.PERIOD``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(present, routing, capacity)``: (T, K) booleans, the (K, 2) routing matrix over
        (l23, l34) and the capacities (packets/s).
    """
    flows = flows_for(seed, duration)
    R, C = net.routing(flows)
    T = int(duration // net.PERIOD)
    mid = (np.arange(T) + 0.5) * net.PERIOD
    present = np.zeros((T, len(flows)), dtype=bool)
    for i, f in enumerate(flows):
        stop = f.get("stop") or np.inf
        present[:, i] = (mid >= f["start"]) & (mid < stop)
    return present, R, C


def _figures(xs: np.ndarray, present: np.ndarray, opt: np.ndarray, C: np.ndarray) -> dict:
    rel = np.abs(xs - opt) / opt
    extreme = (xs <= 2 * EPSILON) | (xs >= 0.5 * C.min())
    util = np.where(present, alpha_fair_utility(np.maximum(xs, EPSILON), ALPHA), 0.0).sum(axis=1)
    best = np.where(present, alpha_fair_utility(np.maximum(opt, EPSILON), ALPHA), 0.0).sum(axis=1)
    return {
        "distance_from_num": float(rel[present].mean()),
        "extreme_share": float(extreme[present].mean()),
        "utility_gap_per_period": float((best - util).mean()),
    }


def step_size_study(seed: int = 1, duration: float = 200.0, kappas=KAPPAS) -> dict:
    """Algorithm 1 with steps ``kappa D / (G sqrt(t))`` beside the per-period NUM optimum.

    Parameters
    ----------
    seed : int
        The ``sqm-s1`` schedule's seed.
    duration : float
        Length (s).
    kappas : sequence of float
        Multiples of the paper's step constant.

    Returns
    -------
    dict
        ``{"kappa=K": {regret, bound, distance_from_num, extreme_share,
        utility_gap_per_period}, "num": {...}}`` plus ``D``, ``G``, ``periods``, ``flows``.
    """
    present, R, C = flow_sets(seed, duration)
    T, K = present.shape
    D0, G0 = ogd_bounds(R, C, EPSILON, ALPHA)
    opt = np.full((T, K), EPSILON)
    for t in range(T):
        idx = np.flatnonzero(present[t])
        if idx.size:
            opt[t, idx] = num_optimum(R[idx], C, ALPHA, lower=EPSILON).x
    out: dict = {"D": D0, "G": G0, "periods": T, "flows": K}
    for k in kappas:
        D, G = (D0 * k, G0) if k >= 1 else (D0, G0 / k)
        r = online_gradient(present, R, C, ALPHA, EPSILON, D=D, G=G)
        xs = r.x[:-1]
        out[f"kappa={k:g}"] = {
            "regret": r.regret(),
            "bound": r.bound(),
            **_figures(xs, present, opt, C),
        }
    out["num"] = {
        "regret": regret(opt, present, R, C, ALPHA, EPSILON),
        "bound": float("nan"),
        **_figures(opt, present, opt, C),
    }
    return out
