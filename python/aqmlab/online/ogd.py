"""SQM's Algorithm 1: online gradient ascent on the stochastic NUM (docs/online.md).

Rates ``x`` of all K possible flows (packets/s), routing ``R`` (K x L, ``R_il = 1`` if flow i
crosses link l), capacities ``C`` (L,), feasible set ``X = {x >= eps, R' x <= C}``
(SQM eqs. 24-29). In period t only the flows of ``present_t`` exist; their utility is
alpha-fair (SQM eq. 1), the others contribute the constant ``U(eps)`` (zero gradient)::

    y_{t+1} = x_t + eta_t grad U_t(x_t),   grad_i = x_i^-alpha (present), 0 (absent)
    x_{t+1} = Proj_X(y_{t+1}),             eta_t = D / (G sqrt(t))

Theorem 4: ``Regret(T) <= 3/2 G D sqrt(T)``, ``D`` a bound on the diameter of X, ``G`` on
``||grad U_t||`` over X.

Decisions (where Algorithm 1 leaves a choice; docs/online.md)
--------------------------------------------------------------
* ``D = ||u - eps||`` with ``u_i = min_{l in A(i)} C_l`` (every x in X lies in the box
  ``[eps, u]``, whose diagonal bounds the diameter); ``G = sqrt(K) eps^-alpha`` (the largest
  gradient norm on X, reached at ``x = eps``). Both can be passed explicitly.
* Absent flows are pinned at ``eps`` before the projection (``absent="pin"``, the paper's
  text "for non-existent flows we let x = eps", SQM §IV-A; Algorithm 1 itself only projects,
  and nothing but the links bounds an absent flow's rate from above); ``absent="keep"`` leaves
  them where they are (plain OGD, the setting of the regret proof).
* The projection is exact: Lawson and Hanson's least-distance programme solved by NNLS
  (``scipy.optimize.nnls``, a finite active-set method), then re-solved on the identified
  active set as an equality-constrained least-squares problem, and the KKT conditions are
  verified (:func:`kkt_residuals`); a violation beyond the tolerance raises ``RuntimeError``.

Examples
--------
>>> p = project([3.0, 1.0], [[1], [1]], [2.0], epsilon=0.1)
>>> [round(float(v), 12) for v in p.x]
[1.9, 0.1]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import nnls

from aqmlab.online._checks import as_alpha, as_capacity, as_routing, check_real
from aqmlab.protocol import Result, new_axes, plotted

__all__ = [
    "OGDResult",
    "Projection",
    "alpha_fair_gradient",
    "alpha_fair_utility",
    "kkt_residuals",
    "ogd_bounds",
    "ogd_step",
    "online_gradient",
    "project",
    "regret",
]

#: relative tolerance of the projection's KKT check
KKT_TOL = 1e-9


def alpha_fair_utility(x, alpha: float) -> np.ndarray:
    """``U(x) = log x`` (alpha = 1) or ``x^(1-alpha)/(1-alpha)`` (SQM eq. 1), elementwise.

    Parameters
    ----------
    x : array_like
        rates (> 0).
    alpha : float
        fairness exponent (>= 0).

    >>> float(alpha_fair_utility(2.0, 2.0))
    -0.5

    Returns
    -------
    numpy.ndarray
    """
    alpha = as_alpha(alpha)
    x = np.asarray(x, dtype=float)
    if np.any(x <= 0):
        raise ValueError(f"x must be positive for the alpha-fair utility, got {x!r}")
    if alpha == 1.0:
        return np.log(x)
    return x ** (1.0 - alpha) / (1.0 - alpha)


def alpha_fair_gradient(x, alpha: float) -> np.ndarray:
    """``U'(x) = x^-alpha``, elementwise.

    Parameters
    ----------
    x : array_like
        rates (> 0).
    alpha : float
        fairness exponent (>= 0).

    Returns
    -------
    numpy.ndarray
    """
    alpha = as_alpha(alpha)
    x = np.asarray(x, dtype=float)
    if np.any(x <= 0):
        raise ValueError(f"x must be positive for the alpha-fair gradient, got {x!r}")
    return x ** (-alpha)


@dataclass(repr=False)
class Projection(Result):
    """Result of :func:`project`: the point ``x`` and the KKT certificate.

    Attributes
    ----------
    x : numpy.ndarray
        ``argmin_{x in X} ||x - y||``.
    link_price : numpy.ndarray
        multipliers of ``R' x <= C`` (>= 0).
    floor_price : numpy.ndarray
        multipliers of ``x >= eps`` (>= 0).
    residuals : dict
        :func:`kkt_residuals` of the certificate (all ~0).
    """

    x: np.ndarray
    link_price: np.ndarray
    floor_price: np.ndarray
    residuals: dict

    def _figures(self) -> dict:
        return {
            "x": self.x,
            "link_price": self.link_price,
            "max_residual": max(self.residuals.values(), default=0.0),
        }

    def to_pandas(self):
        """One row per flow: ``flow``, ``x`` and its ``floor_price``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(
            {"flow": np.arange(self.x.size), "x": self.x, "floor_price": self.floor_price}
        )

    def plot(self, ax=None):
        """The projected point, one bar per flow.

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
        axes.set_ylabel("x")
        return plotted(fig, ax)


def kkt_residuals(x, y, routing, capacity, epsilon, link_price, floor_price) -> dict:
    """KKT residuals of ``min ||x - y||^2/2  s.t.  x >= eps, R' x <= C``.

    Parameters
    ----------
    x, y : array_like
        the candidate projection and the projected point (K,).
    routing, capacity, epsilon
        the feasible set (as :func:`project`; ``routing`` a (K, L) 0/1 array).
    link_price, floor_price : array_like
        the multipliers of ``R' x <= C`` (L,) and ``x >= eps`` (K,).

    Returns ``{"stationarity", "primal", "dual", "complementarity"}``, each scaled by
    ``max(1, |y|, C)``: stationarity ``|x - y + R lam - mu|``, primal infeasibility,
    negative multipliers, and ``|lam (C - R'x)| + |mu (x - eps)|``.

    Returns
    -------
    dict
        ``stationarity``, ``primal``, ``dual``, ``complementarity`` (see above).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    R = np.asarray(routing, float)
    C = np.asarray(capacity, float)
    lam, mu = np.asarray(link_price, float), np.asarray(floor_price, float)
    scale = max(1.0, float(np.abs(y).max()), float(C.max()))
    slack = C - R.T @ x
    return {
        "stationarity": float(np.abs(x - y + R @ lam - mu).max()) / scale,
        "primal": float(max(0.0, -slack.min(), (epsilon - x).max())) / scale,
        "dual": float(max(0.0, -lam.min(initial=0.0), -mu.min(initial=0.0))) / scale,
        "complementarity": float(
            max(np.abs(lam * slack).max(initial=0.0), np.abs(mu * (x - epsilon)).max(initial=0.0))
        )
        / scale**2,
    }


def _multipliers(x, y, R, A, B):
    """Non-negative (lam on links A, mu on floors B) best satisfying x - y + R lam - mu = 0."""
    K, L = R.shape
    M = np.hstack([R[:, A], -np.eye(K)[:, B]])
    lam, mu = np.zeros(L), np.zeros(K)
    if M.shape[1]:
        sol, _ = nnls(M, y - x, maxiter=50 * M.shape[1] + 100)
        lam[A] = sol[: len(A)]
        mu[B] = sol[len(A) :]
    return lam, mu


def _equality_projection(y, R, C, eps, A, B):
    """Projection of y onto {x_B = eps, R_A' x = C_A} (least squares on the free set)."""
    K = y.size
    free = np.setdiff1d(np.arange(K), B)
    x = y.copy()
    x[B] = eps
    if len(A) and free.size:
        Rf = R[np.ix_(free, A)]
        rhs = C[A] - R[np.ix_(B, A)].T @ np.full(len(B), eps) - Rf.T @ y[free]
        # x_f = y_f + Rf z with Rf' Rf z = rhs (minimum-norm correction)
        z, *_ = np.linalg.lstsq(Rf.T @ Rf, rhs, rcond=None)
        x[free] = y[free] + Rf @ z
    return x


def project(y, routing, capacity, epsilon: float = 1.0) -> Projection:
    """Exact Euclidean projection onto ``X = {x >= eps, R' x <= C}``.

    Parameters
    ----------
    y : array_like
        the point (K,), packets/s.
    routing : (K, L) 0/1 array or list of link-index lists
        flow-link routing matrix ``R``.
    capacity : float or (L,) array
        link capacities ``C`` (packets/s).
    epsilon : float
        lower bound of every rate (SQM: 1 packet/s); ``R' eps <= C`` is required.

    Returns
    -------
    Projection
        the point and its KKT certificate (verified to ``KKT_TOL``).
    """
    R = as_routing(routing)
    K, L = R.shape
    C = as_capacity(capacity, L)
    eps = check_real("epsilon", epsilon, nonneg=True)
    try:
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"y must be numbers, got {y!r}") from None
    if y.shape != (K,) or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {K} finite numbers, got {y!r}")
    if np.any(R.T @ np.full(K, eps) > C):
        raise ValueError(f"epsilon = {eps}: the floors alone exceed a link capacity (X is empty)")
    # Least-distance programme (Lawson & Hanson 1974, ch. 23): x = y + z, min ||z|| s.t. G z >= h
    G = np.vstack([np.eye(K), -R.T])
    h = np.concatenate([eps - y, R.T @ y - C])
    scale = max(1.0, float(np.abs(h).max()))
    E = np.vstack([G.T, h[None, :] / scale])
    f = np.zeros(K + 1)
    f[K] = 1.0
    u, _ = nnls(E, f, maxiter=50 * (K + L) + 100)
    r = E @ u - f
    x0 = y - r[:K] / r[K] * scale if abs(r[K]) > 0 else y.copy()
    # identify the active set, solve it exactly and certify; else certify the LDP point itself
    tol = 1e-7 * max(1.0, float(np.abs(y).max()), float(C.max()))
    B = np.nonzero(x0 <= eps + tol)[0]
    A = np.nonzero(R.T @ x0 >= C - tol)[0]
    x = _equality_projection(y, R, C, eps, A, B)
    lam, mu = _multipliers(x, y, R, A, B)
    res = kkt_residuals(x, y, R, C, eps, lam, mu)
    if max(res.values()) > KKT_TOL:
        x = np.maximum(x0, eps)
        A = np.nonzero(R.T @ x >= C - tol)[0]
        B = np.nonzero(x <= eps + tol)[0]
        lam, mu = _multipliers(x, y, R, A, B)
        res = kkt_residuals(x, y, R, C, eps, lam, mu)
        if max(res.values()) > KKT_TOL:
            raise RuntimeError(f"projection: KKT check failed ({res})")
    return Projection(x, lam, mu, res)


def ogd_bounds(routing, capacity, epsilon: float = 1.0, alpha: float = 2.0) -> tuple[float, float]:
    """``(D, G)`` for Theorem 4: ``D = ||u - eps||``, ``u_i = min_{l in A(i)} C_l``;
    ``G = sqrt(K) eps^-alpha``.

    Parameters
    ----------
    routing, capacity, epsilon
        the feasible set, as :func:`project`.
    alpha : float
        fairness exponent (the gradient's ``x^-alpha`` is largest at ``eps``).

    >>> D, G = ogd_bounds([[1], [1]], [10.0], epsilon=1.0, alpha=2.0)
    >>> round(D, 6), round(G, 6)
    (12.727922, 1.414214)

    Returns
    -------
    tuple of (float, float)
        ``(D, G)``.
    """
    R = as_routing(routing)
    C = as_capacity(capacity, R.shape[1])
    eps = check_real("epsilon", epsilon, positive=True)
    alpha = as_alpha(alpha)
    u = np.where(R > 0, C[None, :], np.inf).min(axis=1)
    return float(np.linalg.norm(u - eps)), float(np.sqrt(R.shape[0]) * eps ** (-alpha))


def _present_mask(present, K: int) -> np.ndarray:
    m = np.asarray(present)
    if m.dtype == bool:
        if m.shape != (K,):
            raise ValueError(
                f"present must be {K} booleans or a list of flow indices, got {present!r}"
            )
        return m.copy()
    mask = np.zeros(K, dtype=bool)
    idx = m.astype(int).ravel() if m.size else np.array([], int)
    if np.any(idx < 0) or np.any(idx >= K) or (m.size and not np.all(m.ravel() == idx)):
        raise ValueError(f"present must list flow indices in [0, {K}), got {present!r}")
    mask[idx] = True
    return mask


def ogd_step(
    x,
    present,
    t: int,
    routing,
    capacity,
    alpha: float = 2.0,
    epsilon: float = 1.0,
    D: float | None = None,
    G: float | None = None,
    absent: str = "pin",
) -> np.ndarray:
    """One period of Algorithm 1: ``x_{t+1} = Proj_X(x_t + eta_t grad U_t(x_t))``.

    Parameters
    ----------
    x : array_like
        the played rates ``x_t`` (K,), in X.
    present : array_like
        flows existing in period t: K booleans or a list of indices.
    t : int
        period number, >= 1 (``eta_t = D/(G sqrt t)``).
    routing, capacity, alpha, epsilon
        as :func:`project` and :func:`ogd_bounds`.
    D, G : float, optional
        Theorem 4's bounds (default :func:`ogd_bounds`).
    absent : {"pin", "keep"}
        absent flows reset to eps before projecting, or left in place.

    Returns
    -------
    numpy.ndarray
        ``x_{t+1}``.
    """
    R = as_routing(routing)
    K = R.shape[0]
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or t < 1:
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    if absent not in ("pin", "keep"):
        raise ValueError(f"absent must be 'pin' or 'keep', got {absent!r}")
    alpha = as_alpha(alpha)
    eps = check_real("epsilon", epsilon, positive=True)
    D0, G0 = ogd_bounds(R, capacity, eps, alpha)
    D = D0 if D is None else check_real("D", D, positive=True)
    G = G0 if G is None else check_real("G", G, positive=True)
    x = np.asarray(x, dtype=float)
    if x.shape != (K,) or np.any(x < eps * (1 - 1e-12)):
        raise ValueError(f"x must be {K} rates >= epsilon = {eps}, got {x!r}")
    m = _present_mask(present, K)
    grad = np.where(m, np.maximum(x, eps) ** (-alpha), 0.0)
    y = x + D / (G * np.sqrt(t)) * grad
    if absent == "pin":
        y[~m] = eps
    # the projection meets the floor to round-off (1 - 1e-16 eps): the next step must accept it
    return np.maximum(project(y, R, capacity, eps).x, eps)


@dataclass(repr=False)
class OGDResult(Result):
    """Result of :func:`online_gradient`.

    Attributes
    ----------
    x : numpy.ndarray
        (T + 1, K): ``x_1 .. x_{T+1}`` (row t-1 is the decision played in period t).
    present : numpy.ndarray
        (T, K) booleans.
    eta : numpy.ndarray
        (T,) step sizes.
    D, G, alpha, epsilon : float
    routing, capacity : numpy.ndarray
    extra : dict
        Further records.
    """

    x: np.ndarray
    present: np.ndarray
    eta: np.ndarray
    D: float
    G: float
    alpha: float
    epsilon: float
    routing: np.ndarray
    capacity: np.ndarray
    extra: dict = field(default_factory=dict)

    def utilities(self) -> np.ndarray:
        """``U_t(x_t)`` (T,): sum of the present flows' utilities (absent: ``U(eps)``, dropped
        as a constant).

        Returns
        -------
        numpy.ndarray, shape (T,)
        """
        U = alpha_fair_utility(self.x[:-1], self.alpha)
        return np.where(self.present, U, 0.0).sum(axis=1)

    def regret(self) -> float:
        """``max_{x in X} sum_t U_t(x) - sum_t U_t(x_t)`` (SQM eq. 30).

        Returns
        -------
        float
        """
        return regret(
            self.x[:-1], self.present, self.routing, self.capacity, self.alpha, self.epsilon
        )

    def bound(self) -> float:
        """Theorem 4's ``3/2 G D sqrt(T)``.

        Returns
        -------
        float
        """
        return 1.5 * self.G * self.D * np.sqrt(self.present.shape[0])

    def _figures(self) -> dict:
        return {
            "periods": int(self.present.shape[0]),
            "flows": int(self.x.shape[1]),
            "alpha": self.alpha,
            "x_final": self.x[-1],
            "D": self.D,
            "G": self.G,
        }

    def to_pandas(self):
        """One row per period and flow: ``period`` (1-based), ``flow``, ``present``, ``x``
        (the decision played in the period) and ``eta`` (the period's step size).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        T, K = self.present.shape
        t, k = np.meshgrid(np.arange(1, T + 1), np.arange(K), indexing="ij")
        return pd.DataFrame(
            {
                "period": t.ravel(),
                "flow": k.ravel(),
                "present": self.present.ravel(),
                "x": self.x[:-1].ravel(),
                "eta": np.repeat(self.eta, K),
            }
        )

    def plot(self, ax=None):
        """The decisions ``x_t`` of every flow over the periods.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, figsize=(6, 3.5))
        t = np.arange(1, self.x.shape[0] + 1)
        for k in range(self.x.shape[1]):
            axes.plot(t, self.x[:, k], lw=1, label=f"flow {k}")
        axes.set_xlabel("period t")
        axes.set_ylabel("x_t")
        if self.x.shape[1] <= 10:
            axes.legend(fontsize=7, ncol=2)
        return plotted(fig, ax)


def online_gradient(
    present,
    routing,
    capacity,
    alpha: float = 2.0,
    epsilon: float = 1.0,
    x1=None,
    D: float | None = None,
    G: float | None = None,
    absent: str = "pin",
) -> OGDResult:
    """Run Algorithm 1 over a sequence of flow sets.

    Parameters
    ----------
    present : (T, K) booleans or list of T index lists
        the flows existing in each period.
    routing, capacity, alpha, epsilon, D, G, absent
        as :func:`ogd_step`.
    x1 : array_like, optional
        first decision (default ``eps`` everywhere, SQM: "rates initialised at 1").

    Returns
    -------
    OGDResult

    Examples
    --------
    >>> r = online_gradient([[0, 1]] * 20, [[1], [1]], [100.0])
    >>> [round(float(v), 6) for v in r.x[-1]]
    [50.0, 50.0]
    >>> bool(r.regret() <= r.bound())
    True
    """
    R = as_routing(routing)
    K = R.shape[0]
    C = as_capacity(capacity, R.shape[1])
    alpha = as_alpha(alpha)
    eps = check_real("epsilon", epsilon, positive=True)
    D0, G0 = ogd_bounds(R, C, eps, alpha)
    D = D0 if D is None else check_real("D", D, positive=True)
    G = G0 if G is None else check_real("G", G, positive=True)
    if isinstance(present, np.ndarray) and present.dtype == bool and present.ndim == 2:
        masks = [_present_mask(p, K) for p in present]
    elif isinstance(present, list | tuple | np.ndarray):
        masks = [_present_mask(p, K) for p in present]
    else:
        raise ValueError(f"present must be a list of flow sets, got {present!r}")
    if not masks:
        raise ValueError("present must hold at least one period")
    x = np.full(K, eps) if x1 is None else np.asarray(x1, dtype=float)
    if x.shape != (K,):
        raise ValueError(f"x1 must be {K} rates, got {x1!r}")
    x = project(x, R, C, eps).x if x1 is not None else x
    xs = [x]
    for t, m in enumerate(masks, start=1):
        x = ogd_step(x, m, t, R, C, alpha, eps, D, G, absent)
        xs.append(x)
    T = len(masks)
    eta = D / (G * np.sqrt(np.arange(1, T + 1)))
    return OGDResult(np.array(xs), np.array(masks), eta, D, G, alpha, eps, R, C)


def regret(xs, present, routing, capacity, alpha: float = 2.0, epsilon: float = 1.0) -> float:
    """Regret of played decisions ``xs`` (T, K) against the best fixed ``x in X`` in hindsight.

    ``sum_t U_t(x) = sum_i n_i U(x_i) + const`` with ``n_i`` the number of periods flow i
    exists, so the best fixed decision is the weighted alpha-fair NUM optimum over X
    (:func:`aqmlab.online.num_optimum` with ``weights = n`` and ``lower = eps``).

    Parameters
    ----------
    xs : array_like
        the played decisions ``x_1 .. x_T`` (T, K).
    present : (T, K) booleans or list of T index lists
        the flows existing in each period.
    routing, capacity, alpha, epsilon
        as :func:`online_gradient`.

    Returns
    -------
    float
    """
    from aqmlab.online.num import num_optimum

    R = as_routing(routing)
    K = R.shape[0]
    xs = np.asarray(xs, dtype=float)
    masks = np.array([_present_mask(p, K) for p in present])
    if xs.shape != masks.shape:
        raise ValueError(f"xs has shape {xs.shape}, present {masks.shape}")
    n = masks.sum(axis=0).astype(float)
    best = num_optimum(R, capacity, alpha, weights=n, lower=epsilon)
    played = np.where(masks, alpha_fair_utility(xs, alpha), 0.0).sum()
    U_best = (n * alpha_fair_utility(best.x, alpha)).sum()
    return float(U_best - played)
