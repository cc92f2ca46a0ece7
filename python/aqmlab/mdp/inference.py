"""PAQMAN inference of traffic parameters from interarrival times (docs/paqman.md, PAQ §IV).

Model (4): ``X_n ~ Gamma(alpha, rate = alpha r_n)`` (mean ``1 / r_n``), ``r_{n+1} = r_n + a`` after an
admit and ``b r_n`` after a drop, so ``r_n = c_n r_1 + d_n`` with ``c_n, d_n`` fixed by the actions.
Unknowns: the shape ``alpha`` and the initial effective rate ``r_1`` (packets/s).

* :func:`fit_gamma_aimd` solves the score equations (6) (a bracketed root for ``r_1``, whose score
  does not involve ``alpha``, then a bracketed root for ``alpha``; the paper says only that (6)
  is solved numerically) and returns standard
  errors from the observed information.
* :func:`fit_polynomial_cc` is the unknown-congestion-control variant (7): ``r' = F(r)`` after an
  admit, ``G(r)`` after a drop, polynomials estimated jointly with ``alpha`` and ``r_1`` by maximum
  likelihood with the analytic score (forward sensitivities).
* :class:`RateFilter` is the online estimate of the current rate the policy needs: a Bayesian
  filter on the policy's rate grid, moved by the AIMD map at each action.
* :func:`epsilon_greedy` is the exploration heuristic while estimating (PAQ §IV leaves its
  exploration-exploitation bandit heuristic unspecified; ours: epsilon-greedy, ``eps = 0.05``).

Examples
--------
>>> import numpy as np
>>> from aqmlab.mdp.inference import simulate_gamma_aimd, fit_gamma_aimd
>>> x, act, _ = simulate_gamma_aimd(4000, alpha=2.0, r1=40.0, rng=np.random.default_rng(1))
>>> fit = fit_gamma_aimd(x, act)
>>> abs(fit.alpha - 2.0) < 4 * fit.se_alpha
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from aqmlab.mdp.model import ADMIT, DROP, RateGrid
from aqmlab.protocol import Result, new_axes, plotted

__all__ = [
    "simulate_gamma_aimd",
    "aimd_coefficients",
    "propagate_rate",
    "loglik",
    "score",
    "fit_gamma_aimd",
    "GammaAimdFit",
    "fit_polynomial_cc",
    "PolynomialFit",
    "RateFilter",
    "epsilon_greedy",
]


def simulate_gamma_aimd(
    n: int,
    alpha: float,
    r1: float,
    a: float = 1.0,
    b: float = 0.5,
    drop_above: float | None = None,
    drop_prob: float = 0.02,
    rng: np.random.Generator | None = None,
    admit_map: Callable[[float], float] | None = None,
    drop_map: Callable[[float], float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate model (4): interarrival times, actions and the true effective rates.

    Parameters
    ----------
    n : int
        Number of interarrival times.
    alpha, r1 : float
        Gamma shape and initial effective rate (packets/s).
    a, b : float
        AIMD additive step (packets/s) and multiplicative factor.
    drop_above : float, optional
        Drop deterministically when the current rate exceeds this (a threshold "AQM");
        default ``3 * r1``.
    drop_prob : float
        Extra random drops (exploration), probability per packet.
    rng : numpy Generator
    admit_map, drop_map : callable, optional
        Replace the AIMD maps (for the polynomial variant).

    Returns
    -------
    x : ndarray, shape (n,)
        Interarrival times (s); ``x[i]`` has rate ``rates[i]``.
    actions : ndarray of int, shape (n,)
        ``actions[i]`` is taken at the end of ``x[i]`` (0 admit, 1 drop) and sets ``rates[i + 1]``.
    rates : ndarray, shape (n,)
    """
    rng = rng or np.random.default_rng()
    drop_above = 3 * r1 if drop_above is None else drop_above
    fa = admit_map or (lambda r: r + a)
    fd = drop_map or (lambda r: b * r)
    g = rng.standard_gamma(alpha, n)
    u = rng.random(n)
    x = np.empty(n)
    act = np.empty(n, dtype=np.int8)
    rates = np.empty(n)
    r = r1
    for i in range(n):
        rates[i] = r
        x[i] = g[i] / (alpha * r)
        act[i] = DROP if (r > drop_above or u[i] < drop_prob) else ADMIT
        r = fd(r) if act[i] == DROP else fa(r)
    return x, act, rates


def aimd_coefficients(
    actions: np.ndarray, a: float = 1.0, b: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """``c_n, d_n`` with ``r_n = c_n r_1 + d_n`` (docs/paqman.md); ``n`` = ``len(actions)``.

    Parameters
    ----------
    actions : ndarray of {0, 1}
        ``actions[i]`` acts between ``r_i`` and ``r_{i+1}`` (0-based); the last one is unused.
    a, b : float
        AIMD additive step (packets/s) and multiplicative factor.

    Returns
    -------
    c, d : ndarray
    """
    n = len(actions)
    c = np.empty(n)
    d = np.empty(n)
    ci, di = 1.0, 0.0
    for i in range(n):
        c[i], d[i] = ci, di
        if actions[i] == DROP:
            ci, di = b * ci, b * di
        else:
            di += a
    return c, d


def propagate_rate(r1: float, actions: np.ndarray, a: float = 1.0, b: float = 0.5) -> float:
    """Current effective rate after all ``actions`` from the initial rate ``r1`` (packets/s).

    Parameters
    ----------
    r1 : float
        Initial effective rate (packets/s).
    actions : ndarray of {0, 1}
        Actions taken so far.
    a, b : float
        AIMD step and factor.

    Returns
    -------
    float
    """
    c, d = aimd_coefficients(np.append(actions, ADMIT), a, b)
    return float(c[-1] * r1 + d[-1])


def loglik(alpha: float, r1: float, x: np.ndarray, actions: np.ndarray, a=1.0, b=0.5) -> float:
    """Log-likelihood (5): ``sum_n [alpha log(alpha r_n) - log Gamma(alpha) + (alpha-1) log X_n
    - alpha r_n X_n]``.

    Parameters
    ----------
    alpha, r1 : float
        Gamma shape and initial effective rate (packets/s).
    x : ndarray
        Interarrival times (s).
    actions : ndarray of {0, 1}
        ``actions[i]`` taken at the end of ``x[i]``.
    a, b : float
        AIMD step and factor.

    Returns
    -------
    float
    """
    c, d = aimd_coefficients(actions, a, b)
    r = c * r1 + d
    return float(
        np.sum(
            alpha * np.log(alpha * r)
            - special.gammaln(alpha)
            + (alpha - 1) * np.log(x)
            - alpha * r * x
        )
    )


def score(alpha: float, r1: float, x: np.ndarray, actions: np.ndarray, a=1.0, b=0.5):
    """Score equations (6): ``(d l / d alpha, d l / d r_1)``.

    Parameters
    ----------
    alpha, r1, x, actions, a, b
        As :func:`loglik`.

    Returns
    -------
    tuple of float
    """
    c, d = aimd_coefficients(actions, a, b)
    r = c * r1 + d
    d_alpha = np.sum(np.log(alpha * r) + 1 - special.digamma(alpha) + np.log(x) - r * x)
    d_r1 = alpha * np.sum(c * (1 / r - x))
    return float(d_alpha), float(d_r1)


@dataclass(repr=False)
class GammaAimdFit(Result):
    """MLE of model (4). Standard errors from the observed information (asymptotic normal).

    Attributes
    ----------
    alpha, r1 : float
        Estimates (shape; initial rate in packets/s).
    se_alpha, se_r1 : float
        Standard errors.
    current_rate : float
        ``r_{n+1}`` propagated through all actions (packets/s): the policy's state.
    loglik : float
    n : int
    """

    alpha: float
    r1: float
    se_alpha: float
    se_r1: float
    current_rate: float
    loglik: float
    n: int

    def ci(self, level: float = 0.95) -> dict:
        """Wald confidence intervals ``{"alpha": (lo, hi), "r1": (lo, hi)}``.

        Parameters
        ----------
        level : float
            Confidence level.

        Returns
        -------
        dict
        """
        z = stats.norm.ppf(0.5 + level / 2)
        return {
            "alpha": (self.alpha - z * self.se_alpha, self.alpha + z * self.se_alpha),
            "r1": (self.r1 - z * self.se_r1, self.r1 + z * self.se_r1),
        }

    def _figures(self) -> dict:
        return {
            "alpha": self.alpha,
            "se_alpha": self.se_alpha,
            "r1": self.r1,
            "se_r1": self.se_r1,
            "current_rate": self.current_rate,
            "n": self.n,
        }

    def plot(self, ax=None):
        """Each estimate with its 95 % Wald interval (one panel per parameter).

        Parameters
        ----------
        ax : pair of matplotlib Axes, optional
            Panels for ``alpha`` and ``r1``; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        return _plot_estimates(self.to_pandas(), ax)

    def to_pandas(self):
        """One row per parameter: estimate, standard error, 95 % interval.

        Returns
        -------
        pandas.DataFrame
            Index ``alpha``, ``r1``; columns ``estimate``, ``se``, ``ci95_lo``, ``ci95_hi``.
        """
        import pandas as pd

        ci = self.ci()
        return pd.DataFrame(
            {
                "estimate": [self.alpha, self.r1],
                "se": [self.se_alpha, self.se_r1],
                "ci95_lo": [ci["alpha"][0], ci["r1"][0]],
                "ci95_hi": [ci["alpha"][1], ci["r1"][1]],
            },
            index=["alpha", "r1"],
        )


def fit_gamma_aimd(x: np.ndarray, actions: np.ndarray, a: float = 1.0, b: float = 0.5):
    """Maximum-likelihood ``alpha`` and ``r_1`` from interarrival times and actions (eq. (5)-(6)).

    The ``r_1`` score ``alpha sum_n c_n (1/r_n - X_n)`` is decreasing in ``r_1`` and free of
    ``alpha``: its root is bracketed first. The ``alpha`` score then reads
    ``log alpha - psi(alpha) = mean(r_n X_n - log(r_n X_n) - 1)``, monotone in ``alpha``.

    Parameters
    ----------
    x : ndarray
        Interarrival times (s), positive.
    actions : ndarray of {0, 1}
        ``actions[i]`` taken at the end of ``x[i]`` (0 admit, 1 drop).
    a, b : float
        Known AIMD step (packets/s) and factor.

    Returns
    -------
    GammaAimdFit

    Examples
    --------
    >>> import numpy as np
    >>> x, act, _ = simulate_gamma_aimd(2000, 1.0, 30.0, rng=np.random.default_rng(0))
    >>> round(fit_gamma_aimd(x, act).alpha, 1)
    1.0
    """
    x = np.asarray(x, dtype=float)
    actions = np.asarray(actions)
    if x.shape != actions.shape or x.size < 2 or np.any(x <= 0):
        raise ValueError("x and actions: need equal lengths >= 2 and positive times")
    c, d = aimd_coefficients(actions, a, b)

    def s_r1(r1: float) -> float:
        return float(np.sum(c * (1 / (c * r1 + d) - x)))

    hi = 1.0 / x.mean()
    while s_r1(hi) > 0:
        hi *= 4
    lo = hi
    while s_r1(lo) < 0:
        lo /= 4
    r1 = optimize.brentq(s_r1, lo, hi, xtol=1e-12 * hi, rtol=1e-12)
    r = c * r1 + d
    target = float(np.mean(r * x - np.log(r * x) - 1))

    def s_alpha(al: float) -> float:
        return np.log(al) - special.digamma(al) - target

    alpha = optimize.brentq(s_alpha, 1e-4, 1e7, rtol=1e-12)
    n = x.size
    info_alpha = n * (special.polygamma(1, alpha) - 1 / alpha)
    info_r1 = alpha * np.sum(c**2 / r**2)
    return GammaAimdFit(
        alpha=float(alpha),
        r1=float(r1),
        se_alpha=float(1 / np.sqrt(info_alpha)),
        se_r1=float(1 / np.sqrt(info_r1)),
        current_rate=float((b * r[-1]) if actions[-1] == DROP else r[-1] + a),
        loglik=loglik(alpha, r1, x, actions, a, b),
        n=n,
    )


# --- unknown congestion control: polynomial maps (eq. (7)) ---------------------------------------


@dataclass(repr=False)
class PolynomialFit(Result):
    """MLE of model (7): ``r' = F(r)`` (admit), ``G(r)`` (drop), ``F, G`` polynomials.

    Attributes
    ----------
    alpha, r1 : float
    f, g : ndarray
        Coefficients in increasing powers (``g`` includes the constant term only if fitted).
    se : dict
        Standard errors by name (``alpha``, ``r1``, ``f0``, ``f1``, ..., ``g1``, ...).
    loglik : float
    g_powers : ndarray of int
        The power of each coefficient of ``g``.
    """

    alpha: float
    r1: float
    f: np.ndarray
    g: np.ndarray
    se: dict
    loglik: float
    g_powers: np.ndarray

    def _figures(self) -> dict:
        return {
            "alpha": self.alpha,
            "r1": self.r1,
            "f": [float(v) for v in self.f],
            "g": [float(v) for v in self.g],
            "loglik": self.loglik,
        }

    def to_pandas(self):
        """Estimates and standard errors by parameter name.

        Returns
        -------
        pandas.DataFrame
            Index the parameter names; columns ``estimate``, ``se``.
        """
        import pandas as pd

        est = {"alpha": self.alpha, "r1": self.r1}
        est.update({f"f{i}": v for i, v in enumerate(self.f)})
        est.update({f"g{p}": v for p, v in zip(self.g_powers, self.g, strict=True)})
        return pd.DataFrame({"estimate": est, "se": self.se})

    def plot(self, ax=None):
        """The fitted maps: the next rate ``F(r)`` after an admit and ``G(r)`` after a drop,
        over ``0 <= r <= 3 r1``, with the identity for reference.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax)
        r = np.linspace(0.0, 3.0 * max(self.r1, 1e-9), 200)
        F = sum(c * r**i for i, c in enumerate(self.f))
        G = sum(c * r**p for p, c in zip(self.g_powers, self.g, strict=True))
        axes.plot(r, F, label="F(r): after admit")
        axes.plot(r, G, label="G(r): after drop")
        axes.plot(r, r, "k:", lw=0.8, label="r")
        axes.set_xlabel("rate r_n (packets/s)")
        axes.set_ylabel("r_{n+1} (packets/s)")
        axes.legend(fontsize=8)
        return plotted(fig, ax)


def _plot_estimates(df, ax):
    """Each row of a fit's table (``estimate``, ``ci95_lo``, ``ci95_hi``) as a point with its
    interval, one panel per parameter."""
    fig, axes = new_axes(ax, 1, len(df), figsize=(2.5 * len(df) + 1, 3), squeeze=False)
    axes = np.ravel(axes)
    for a, (name, row) in zip(axes, df.iterrows(), strict=True):
        lo, hi = row["estimate"] - row["ci95_lo"], row["ci95_hi"] - row["estimate"]
        a.errorbar([0], [row["estimate"]], yerr=[[lo], [hi]], fmt="o", capsize=4)
        a.set_xticks([0], [name])
        a.set_title(f"{name} = {row['estimate']:.4g}", fontsize=9)
    return plotted(fig, ax)


def _poly_nll(theta, x, actions, deg_f, g_powers):
    """Negative log-likelihood of (7) and its gradient (forward sensitivities of r_n)."""
    alpha, r1 = theta[0], theta[1]
    f = theta[2 : 3 + deg_f]
    g = theta[3 + deg_f :]
    npar = theta.size
    n = x.size
    r = r1
    dr = np.zeros(npar)
    dr[1] = 1.0
    ll = 0.0
    grad = np.zeros(npar)
    lg = special.gammaln(alpha)
    dg = special.digamma(alpha)
    pf = np.arange(deg_f + 1)
    for i in range(n):
        if not 0 < r < 1e9:  # outside the model (line-search excursion)
            return 1e300, np.zeros(npar)
        xi = x[i]
        ll += alpha * np.log(alpha * r) - lg + (alpha - 1) * np.log(xi) - alpha * r * xi
        grad[0] += np.log(alpha * r) + 1 - dg + np.log(xi) - r * xi
        grad[1:] += alpha * (1 / r - xi) * dr[1:]
        if i == n - 1:
            break
        if actions[i] == DROP:
            powers = r**g_powers
            deriv = np.sum(g * g_powers * r ** np.maximum(g_powers - 1, 0))
            new_dr = deriv * dr
            new_dr[3 + deg_f :] += powers
            r = float(g @ powers)
        else:
            powers = r**pf
            deriv = np.sum(f[1:] * pf[1:] * r ** (pf[1:] - 1))
            new_dr = deriv * dr
            new_dr[2 : 3 + deg_f] += powers
            r = float(f @ powers)
        new_dr[0] = 0.0
        dr = new_dr
    return -ll, -grad


def _num_hessian(th: np.ndarray, args: tuple) -> np.ndarray:
    """Central finite differences of the analytic score (Hessian of the negative loglik)."""
    hess = np.empty((th.size, th.size))
    for j in range(th.size):
        h = 1e-5 * max(abs(th[j]), 1e-3)
        e = np.zeros(th.size)
        e[j] = h
        hess[:, j] = (_poly_nll(th + e, *args)[1] - _poly_nll(th - e, *args)[1]) / (2 * h)
    return hess


def fit_polynomial_cc(
    x: np.ndarray,
    actions: np.ndarray,
    deg_f: int = 1,
    deg_g: int = 1,
    g_intercept: bool = False,
    start: dict | None = None,
) -> PolynomialFit:
    """Maximum likelihood for unknown congestion control (docs/paqman.md, PAQMAN eq. (7)).

    ``r_{n+1} = F(r_n) = sum_i f_i r_n^i`` after an admit, ``G(r_n) = sum_p g_p r_n^p`` after a drop
    (``p`` from 1, or from 0 with ``g_intercept``: a multiplicative decrease has ``G(0) = 0``).
    The score (one equation per coefficient) is computed by forward sensitivities
    ``dr_{n+1} = F'(r_n) dr_n + dF/dtheta``; L-BFGS-B maximises (5); standard errors come from a
    finite-difference Hessian of the analytic score.

    Parameters
    ----------
    x, actions : ndarray
        As :func:`fit_gamma_aimd`.
    deg_f, deg_g : int
        Polynomial degrees.
    g_intercept : bool
        Fit ``g_0`` too.
    start : dict, optional
        Initial guesses ``alpha``, ``r1``, ``f`` (list), ``g`` (list); default: the AIMD fit.

    Returns
    -------
    PolynomialFit
    """
    x = np.asarray(x, dtype=float)
    actions = np.asarray(actions)
    g_powers = np.arange(0 if g_intercept else 1, deg_g + 1)
    base = fit_gamma_aimd(x, actions)
    start = start or {}
    f0 = np.zeros(deg_f + 1)
    f0[0], f0[1:2] = 1.0, 1.0
    g0 = np.where(g_powers == 1, 0.5, 0.0)
    theta0 = np.concatenate(
        [
            [start.get("alpha", base.alpha), start.get("r1", base.r1)],
            np.asarray(start.get("f", f0), dtype=float),
            np.asarray(start.get("g", g0), dtype=float),
        ]
    )
    if _poly_nll(theta0, x, actions, deg_f, g_powers)[0] >= 1e300:
        raise ValueError("start: the initial polynomials drive the rate outside (0, 1e9)")
    args = (x, actions, deg_f, g_powers)
    # Scale each coordinate by 1 / sqrt(curvature) at the start: the score of the top
    # coefficient of F is ~r^deg larger than the others, and an unscaled first step leaves
    # the model's domain.
    scale = 1.0 / np.sqrt(np.abs(np.diag(_num_hessian(theta0, args))) + 1e-12)
    lo = np.array([1e-3, 1e-9] + [-np.inf] * (theta0.size - 2))

    def fun(z):
        v, gr = _poly_nll(z * scale, *args)
        return v, gr * scale

    res = optimize.minimize(
        fun, theta0 / scale, jac=True, method="L-BFGS-B",
        bounds=[(lo_i / s_i, None) for lo_i, s_i in zip(lo, scale, strict=True)],
        options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10},
    )  # fmt: skip
    res.x = res.x * scale
    th = res.x
    hess = _num_hessian(th, args)
    hess = (hess + hess.T) / 2
    cov = np.linalg.pinv(hess)
    se_all = np.sqrt(np.clip(np.diag(cov), 0, None))
    names = ["alpha", "r1"] + [f"f{i}" for i in range(deg_f + 1)] + [f"g{p}" for p in g_powers]
    return PolynomialFit(
        alpha=float(th[0]),
        r1=float(th[1]),
        f=th[2 : 3 + deg_f].copy(),
        g=th[3 + deg_f :].copy(),
        se=dict(zip(names, se_all.tolist(), strict=True)),
        loglik=-float(res.fun),
        g_powers=g_powers,
    )


# --- online rate estimate -------------------------------------------------------------------------


class RateFilter:
    """Online posterior of the current effective rate on a policy's rate grid.

    At each arrival the interarrival time ``x`` updates the posterior with the gamma likelihood
    ``Gamma(alpha, alpha r)`` (model (4)); the action then moves the mass by the grid's AIMD map
    (admit ``r -> r + 1``, drop ``r -> r / 2`` projected as the grid's ``drop_projection``
    says: ``max(1, floor(r/2))`` or split between floor and ceil). ``mix`` spreads a little
    mass to neighbouring indices at each step, to stay robust when the sender is not exactly
    AIMD.

    Parameters
    ----------
    grid : RateGrid
    alpha : float
        Gamma shape (known, or from :func:`fit_gamma_aimd`).
    mix : float
        Probability moved to each neighbouring index per step.

    Examples
    --------
    >>> g = RateGrid(unit_pps=10.0, size=20)
    >>> f = RateFilter(g, alpha=2.0)
    >>> for _ in range(200):
    ...     _ = f.update(0.01, None)   # interarrivals of 10 ms, no rate change: 100 pkt/s
    >>> f.index()
    10
    """

    def __init__(self, grid: RateGrid, alpha: float, mix: float = 0.0):
        self.grid, self.alpha, self.mix = grid, float(alpha), float(mix)
        self.logp = np.full(grid.size, -np.log(grid.size))
        self._admit = grid.after_admit(grid.index) - 1
        lo, hi, self._drop_w = grid.drop_split(grid.index)  # the grid's drop projection
        self._drop, self._drop_hi = lo - 1, hi - 1

    def update(self, x: float, action: int | None) -> float:
        """Absorb one interarrival time ``x`` (s), then apply ``action`` (None: no rate change).

        Parameters
        ----------
        x : float
            Interarrival time (s) generated under the rate in force.
        action : {0, 1} or None
            Admit / drop outcome that moves the sender's rate, or None.

        Returns
        -------
        float
            Posterior mean rate (packets/s) after the action.
        """
        self.observe(x)
        return self.act(action)

    def observe(self, x: float) -> None:
        """Bayes update with one interarrival time ``x`` (s) (gamma likelihood of model (4)).

        Parameters
        ----------
        x : float
            Interarrival time (s).
        """
        lam = self.alpha * self.grid.rates_pps
        self.logp += self.alpha * np.log(lam) - lam * x
        self.logp -= self.logp.max()

    def act(self, action: int | None) -> float:
        """Move the posterior by the AIMD map of ``action`` (None: no move); return the mean.

        Parameters
        ----------
        action : int or None
            0 admit, 1 drop, None no move.

        Returns
        -------
        float
            The posterior mean (packets/s).
        """
        p = np.exp(self.logp - self.logp.max())
        if action is not None:
            moved = np.zeros_like(p)
            if action == DROP:
                np.add.at(moved, self._drop, (1 - self._drop_w) * p)
                np.add.at(moved, self._drop_hi, self._drop_w * p)
            else:
                np.add.at(moved, self._admit, p)
            p = moved
        if self.mix > 0:
            q = (1 - 2 * self.mix) * p
            q[1:] += self.mix * p[:-1]
            q[:-1] += self.mix * p[1:]
            q[0] += self.mix * p[0]
            q[-1] += self.mix * p[-1]
            p = q
        p /= p.sum()
        with np.errstate(divide="ignore"):
            self.logp = np.log(p)
        return self.mean()

    def probs(self) -> np.ndarray:
        """Posterior probabilities over grid indices.

        Returns
        -------
        numpy.ndarray, shape (R,)
        """
        p = np.exp(self.logp - self.logp.max())
        return p / p.sum()

    def mean(self) -> float:
        """Posterior mean rate (packets/s).

        Returns
        -------
        float
        """
        return float(self.probs() @ self.grid.rates_pps)

    def index(self) -> int:
        """Posterior mode as a 1-based grid index (the policy's rate state).

        Returns
        -------
        int
        """
        return int(np.argmax(self.logp)) + 1


def epsilon_greedy(action: int, eps: float, rng: np.random.Generator) -> int:
    """Exploration while estimating (ours; PAQ §IV's heuristic is unspecified): a random action
    with probability ``eps``.

    Parameters
    ----------
    action : int
        The policy's action.
    eps : float
        Exploration probability (default in use: 0.05).
    rng : numpy Generator

    Returns
    -------
    int
        0 admit, 1 drop.
    """
    return int(rng.integers(2)) if rng.random() < eps else int(action)
