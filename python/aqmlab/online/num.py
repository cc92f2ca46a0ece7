"""The alpha-fair network utility maximum (the reference of SQM's reproductions).

``max sum_i w_i U_alpha(x_i)  s.t.  R' x <= C,  x >= lower`` with
``U_alpha(x) = log x`` (alpha = 1) or ``x^(1-alpha)/(1-alpha)`` (Mo and Walrand's alpha-fair
utilities, SQM eq. 1). Solved exactly and certified:

* ``0 < alpha < inf``: the dual ``min_{p >= 0} sum_l p_l C_l + sum_i max_{x >= lb_i}
  [w_i U(x) - q_i x]``, ``q = R p``, whose inner maximiser is ``x_i = max(lb_i, (w_i/q_i)^(1/alpha))``.
  L-BFGS-B finds the active links, then Newton's method on ``R_A' x(R_A p_A) = C_A`` (exact
  Jacobian ``dx_i/dq_i = -x_i/(alpha q_i)``) with active-set corrections drives the residual to
  rounding level; the KKT conditions are then checked (:attr:`NUMResult.residuals`).
* ``alpha = inf``: weighted max-min fairness by progressive filling (exact, finitely many steps).
* ``alpha = 0``: a linear programme (HiGHS), maximum throughput (optimum not unique).

Rates are scaled by ``max C`` internally (the maximiser does not depend on the unit).

Examples
--------
>>> r = num_optimum([[0, 1], [0], [1]], [1.0, 1.0], alpha=1.0)   # linear network
>>> [round(float(v), 9) for v in r.x]
[0.333333333, 0.666666667, 0.666666667]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize

from aqmlab.online._checks import as_alpha, as_capacity, as_routing
from aqmlab.protocol import Result, new_axes, plotted

__all__ = ["NUMResult", "num_optimum"]

#: relative tolerance of the KKT certificate
NUM_TOL = 1e-9


@dataclass(repr=False)
class NUMResult(Result):
    """Result of :func:`num_optimum`.

    Attributes
    ----------
    x : numpy.ndarray
        optimal rates (packets/s, the unit of ``capacity``).
    price : numpy.ndarray
        link prices ``p_l`` (the multipliers of ``R' x <= C``, in the utility's unit per
        packet/s); for ``alpha = inf`` the filling level at which each link saturated (inf if
        it never did).
    residuals : dict
        relative KKT residuals: ``primal``, ``dual``, ``complementarity``, ``stationarity``.
    alpha : float
        the fairness parameter (``inf``: max-min).
    """

    x: np.ndarray
    price: np.ndarray
    residuals: dict
    alpha: float

    def to_dict(self) -> dict:
        """JSON-ready: ``x``, ``price``, ``alpha``, ``residuals``.

        Returns
        -------
        dict
        """
        return {
            "x": [float(v) for v in self.x],
            "price": [float(v) for v in self.price],
            "alpha": self.alpha,
            "residuals": self.residuals,
        }

    def _figures(self) -> dict:
        return {
            "alpha": self.alpha,
            "flows": int(self.x.size),
            "links": int(self.price.size),
            "total_x": float(self.x.sum()),
            "max_residual": max(self.residuals.values(), default=0.0),
        }

    def _tables(self) -> dict:
        return {"flows": self.to_pandas(), "links": self.prices()}

    def to_pandas(self):
        """One row per flow: ``flow`` and its optimal rate ``x`` (link prices:
        :meth:`prices`).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame({"flow": np.arange(self.x.size), "x": self.x})

    def prices(self):
        """One row per link: ``link`` (index) and its ``price``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame({"link": np.arange(self.price.size), "price": self.price})

    def plot(self, ax=None):
        """The optimal rate of each flow (bars).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, figsize=(5, 3))
        axes.bar(np.arange(self.x.size), self.x)
        axes.set_xlabel("flow")
        axes.set_ylabel("rate (capacity units)")
        axes.set_title(f"alpha-fair optimum, alpha = {self.alpha:g}", fontsize=9)
        return plotted(fig, ax)


def _weights(weights, K):
    if weights is None:
        return np.ones(K)
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be numbers, got {weights!r}") from None
    if w.shape != (K,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be {K} numbers >= 0, got {weights!r}")
    return w


def _lower(lower, K):
    try:
        lb = np.broadcast_to(np.asarray(lower, dtype=float), (K,)).copy()
    except (TypeError, ValueError):
        raise ValueError(f"lower must be a number or one per flow, got {lower!r}") from None
    if not np.all(np.isfinite(lb)) or np.any(lb < 0):
        raise ValueError(f"lower must be >= 0, got {lower!r}")
    return lb


def num_optimum(routing, capacity, alpha: float = 2.0, weights=None, lower=0.0) -> NUMResult:
    """The alpha-fair NUM optimum of flows over links.

    Parameters
    ----------
    routing : (K, L) 0/1 array or list of link-index lists
        ``R_il = 1`` if flow i crosses link l.
    capacity : float or (L,) array
        link capacities (packets/s).
    alpha : float
        fairness exponent, >= 0; ``numpy.inf`` for max-min.
    weights : (K,) array, optional
        utility weights ``w_i >= 0`` (default 1); a weight-0 flow sits at its lower bound.
    lower : float or (K,) array
        lower bounds of the rates (SQM's ``eps``; 0 by default). Not with ``alpha = inf``.

    Returns
    -------
    NUMResult
        the optimum and its KKT residuals (checked against ``NUM_TOL``; ``RuntimeError`` if
        the certificate fails).
    """
    R = as_routing(routing)
    K, L = R.shape
    C = as_capacity(capacity, L)
    alpha = as_alpha(alpha, allow_inf=True)
    w = _weights(weights, K)
    lb = _lower(lower, K)
    if np.any(R.T @ lb > C * (1 + 1e-12)):
        raise ValueError(f"lower = {lower!r}: the lower bounds alone exceed a link capacity")
    s = float(C.max())
    if alpha == np.inf:
        if np.any(lb > 0):
            raise ValueError("lower must be 0 with alpha = inf (max-min by progressive filling)")
        x, level = _maxmin(R, C / s, w)
        res = _check_maxmin(R, C / s, w, x)
        return NUMResult(x * s, level, res, alpha)
    if alpha == 0:
        x, p = _lp(R, C / s, w, lb / s)
        res = _kkt(R, C / s, w, lb / s, 0.0, x, p)
        return NUMResult(x * s, p, res, alpha)
    x, p = _dual_newton(R, C / s, w, lb / s, alpha)
    res = _kkt(R, C / s, w, lb / s, alpha, x, p)
    if max(res.values()) > NUM_TOL:
        raise RuntimeError(f"num_optimum: KKT check failed ({res})")
    # prices in the caller's unit: w x^-alpha scales by s^-alpha; the floor survives rounding
    return NUMResult(np.maximum(x * s, lb), p * s ** (-alpha), res, alpha)


def _x_of_q(q, w, lb, ub, alpha):
    """Inner maximiser ``clip((w/q)^(1/alpha), lb, ub)``; ``ub_i = min_{l in A(i)} C_l`` is
    implied by feasibility, so the box does not change the optimum but keeps x finite."""
    with np.errstate(divide="ignore", over="ignore"):
        free = np.where(w > 0, (w / np.maximum(q, 1e-300)) ** (1.0 / alpha), 0.0)
    return np.clip(free, lb, ub)


def _dual_newton(R, C, w, lb, alpha):
    K, L = R.shape
    ub = np.where(R > 0, C[None, :], np.inf).min(axis=1)

    def dual(p):
        q = R @ p
        x = _x_of_q(q, w, lb, ub, alpha)
        xs = np.where(w > 0, np.maximum(x, 1e-300), 1.0)  # weight-0 flows may sit at 0
        with np.errstate(over="ignore"):
            if alpha == 1.0:
                U = np.where(w > 0, w * np.log(xs), 0.0)
            else:
                U = np.where(w > 0, w * xs ** (1 - alpha) / (1 - alpha), 0.0)
        val = p @ C + (U - q * x).sum()
        return val, C - R.T @ x

    # a start where every link's flows fit: equal split of the tightest link
    share = np.where(R > 0, C[None, :] / np.maximum(R.sum(axis=0), 1)[None, :], np.inf).min(axis=1)
    p0 = np.array(
        [
            max((w[R[:, j] > 0] * share[R[:, j] > 0] ** (-alpha)).max(initial=0), 1e-6)
            for j in range(L)
        ]
    )

    # L-BFGS-B on p / p0 (diagonal scaling: the prices of an alpha-fair problem span many
    # orders of magnitude for large alpha)
    def scaled(v):
        val, g = dual(v * p0)
        return val, g * p0

    opt = minimize(
        scaled,
        np.ones(L),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * L,
        options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-12},
    )
    p = np.maximum(opt.x * p0, 0.0)
    x = _x_of_q(R @ p, w, lb, ub, alpha)
    active = (p > 1e-9 * max(1.0, p.max())) | (R.T @ x >= C * (1 - 1e-6))
    x, p = _active_set(R, C, w, lb, ub, alpha, p, active, p0)
    if max(_kkt(R, C, w, lb, alpha, x, p).values()) > NUM_TOL:
        # second start: every link active at its equal-share price
        x, p = _active_set(R, C, w, lb, ub, alpha, p0.copy(), np.ones(L, bool), p0)
    return x, p


def _active_set(R, C, w, lb, ub, alpha, p, active, p0):
    """Newton on the active links' equations; drop links whose price goes to 0 (or negative),
    add links that end up overloaded; at most 4 L + 4 rounds."""
    L = R.shape[1]
    for _ in range(4 * L + 4):
        A = np.nonzero(active)[0]
        # an active link without a price starts at its equal-share price (Newton works on
        # log-prices)
        p = np.where(active, np.where(p > 1e-12 * p0, p, p0), 0.0)
        # Newton's equations are not clipped above (a clip makes them flat); the check for
        # overloaded links clips at 2 ub (finite, and never reached at the optimum)
        p = _newton(R, C, w, lb, np.inf, alpha, p, A)
        x = _x_of_q(R @ p, w, lb, 2 * ub, alpha)
        # an active link Newton could not make tight carries no free flow: price 0
        neg = active & ((p < 0) | (R.T @ x < C * (1 - 1e-9)))
        over = ~active & (R.T @ x > C * (1 + 1e-12))
        if not neg.any() and not over.any():
            break
        if neg.any():
            active[np.argmin(np.where(neg, p, np.inf))] = False
        else:
            active[np.argmax(np.where(over, R.T @ x / C, -np.inf))] = True
    return x, np.where(active, np.maximum(p, 0.0), 0.0)


def _newton(R, C, w, lb, ub, alpha, p, A):
    """Newton's method on ``R_A' x(R p) = C_A`` in the log-prices of the active links (the
    prices of one problem can span many orders of magnitude), backtracking on ``||F / C||``."""
    if A.size == 0:
        return p
    RA = R[:, A]
    on = RA.any(axis=1)  # the flows in the equations; their q > 0 (log-prices)
    p = p.copy()

    def resid(pp):
        xx = np.where(on, _x_of_q(R @ pp, w, lb, ub, alpha), 0.0)
        return (RA.T @ xx - C[A]) / C[A], xx

    F, x = resid(p)
    start = p[A].copy()
    for _ in range(200):
        f0 = np.linalg.norm(F)
        # converged, or a price heading to 0 (that link is not active: the caller drops it)
        if f0 <= 1e-15 or np.any(p[A] < 1e-20 * start):
            break
        q = R @ p
        free = on & (w > 0) & (x > lb)
        d = np.where(free, -x / (alpha * np.maximum(q, 1e-300)), 0.0)
        J = (RA.T @ (d[:, None] * RA)) * p[A][None, :] / C[A][:, None]
        step, *_ = np.linalg.lstsq(J, -F, rcond=None)
        step = np.clip(step, -30.0, 30.0)
        t = 1.0
        while t > 1e-10:
            pn = p.copy()
            pn[A] = p[A] * np.exp(t * step)
            Fn, xn = resid(pn)
            if np.linalg.norm(Fn) < f0:
                break
            t /= 2
        else:
            break
        p, F, x = pn, Fn, xn
    return p


def _kkt(R, C, w, lb, alpha, x, p) -> dict:
    q = R @ p
    slack = C - R.T @ x
    # stationarity: free flows w x^-alpha = q; floor flows w lb^-alpha <= q
    with np.errstate(divide="ignore", invalid="ignore"):
        marg = np.where(w > 0, w * x ** (-alpha), 0.0) if alpha > 0 else w.copy()
    at_floor = x <= lb * (1 + 1e-12)
    scale_q = max(float(np.abs(q).max()), float(marg.max(initial=0)), 1e-300)
    stat = np.where(at_floor, np.maximum(marg - q, 0.0), np.abs(marg - q)) / scale_q
    return {
        "primal": float(max(0.0, (-slack / C).max(), ((lb - x) / np.maximum(lb, 1)).max())),
        "dual": float(max(0.0, -p.min()) / max(p.max(), 1e-300)),
        "complementarity": float(np.abs(p * slack / C).max() / max(p.max(), 1e-300)),
        "stationarity": float(stat.max()),
    }


def _lp(R, C, w, lb):
    res = linprog(
        -w, A_ub=R.T, b_ub=C, bounds=list(zip(lb, [None] * len(lb), strict=True)), method="highs"
    )
    if res.status != 0:
        raise RuntimeError(f"num_optimum: linear programme failed ({res.message})")
    return res.x, -res.ineqlin.marginals


def _maxmin(R, C, w):
    """Weighted progressive filling: x_i = w_i t until a link saturates; freeze its flows."""
    K, L = R.shape
    x = np.zeros(K)
    frozen = w <= 0
    level = np.full(L, np.inf)
    t = 0.0
    while not frozen.all():
        used = R.T @ x
        grow = R.T @ np.where(frozen, 0.0, w)
        with np.errstate(divide="ignore", invalid="ignore"):
            dt = np.where(grow > 0, (C - used) / grow, np.inf)
        j = int(np.argmin(dt))
        t += dt[j]
        x = np.where(frozen, x, w * t)
        sat = (grow > 0) & (np.abs(R.T @ x - C) <= 1e-12 * C)
        sat[j] = True
        level[sat & ~np.isfinite(level)] = t
        frozen |= (R[:, sat] > 0).any(axis=1)
    return x, level


def _check_maxmin(R, C, w, x) -> dict:
    """Max-min certificate: feasible, and every flow with w > 0 has a bottleneck link (saturated,
    and the flow's normalised rate x/w is the largest on it)."""
    slack = C - R.T @ x
    sat = np.abs(slack) <= 1e-9 * C
    ok = []
    for i in np.nonzero(w > 0)[0]:
        links = np.nonzero((R[i] > 0) & sat)[0]
        r = x / np.where(w > 0, w, np.inf)
        ok.append(any(r[i] >= r[R[:, j] > 0].max() * (1 - 1e-12) for j in links))
    bad = 0.0 if all(ok) else 1.0
    return {
        "primal": float(max(0.0, (-slack / C).max())),
        "dual": 0.0,
        "complementarity": 0.0,
        "stationarity": bad,
    }
