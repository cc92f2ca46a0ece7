"""SQM's delay-robust stability condition and the choice of sigma (docs/design/sqm_sigma.md).

Per link, with ``F = [[F1, 0], [I, F2]]``, ``F1 = diag(-alpha k_i / x_i)``,
``F2 = diag(-1/D_i)`` (SQM eqs. 13-20), ``A`` solves the Lyapunov equation
``F' A + A F = -I`` (SQM eq. 21) and Theorem 3 requires (SQM eq. 23)

``sum_i k_i x_i^alpha / sigma_i < 1 / (2 rho J ||A||)``, ``J = sqrt(lmax(A)/lmin(A))``.

Decisions on ambiguities (where SQM §III-B and Algorithm 2 leave a choice)
--------------------------------------------------------------------------
* rho defaults to 1.01 (the paper only says rho > 1).
* The budget is split equally among the queues with a 10 % margin by default:
  ``k_i x_i^alpha / sigma_i = (1 - margin) RHS / n``.  ``split="proportional"`` gives every
  queue the same sigma instead.
* ``scale`` multiplies the literal sigma; the literal condition forces sigma ~ 1e7 and standing
  queues of thousands of packets with Reno's ``k_i = 1/D_i^2`` (the paper's §V-A example
  below and in docs/design/sqm_sigma.md), so both the literal values and the equilibrium queue
  excess ``sigma p* = sigma / x^alpha`` are reported.
* k_i defaults to Reno's ``1/D_i^2``; beta defaults to 0 (Algorithm 2 never sets it).
* The example spaces the §V-A RTTs linearly over 0.100-0.150 s (the paper gives only the
  range).

Examples
--------
>>> import numpy as np
>>> r = sqm_sigma([120.0] * 5 + [80.0] * 5, np.linspace(0.1, 0.15, 10))
>>> f"{r.J:.2f} {r.norm_A:.3f} {r.rhs:.3f}"
'3.03 0.459 0.356'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_continuous_lyapunov

from aqmlab.design.plants import check_real
from aqmlab.protocol import Result, new_axes, plotted

__all__ = ["SQMSigma", "sqm_lyapunov", "sqm_sigma", "sqm_system_matrix"]


def _vector(name: str, values) -> np.ndarray:
    """A non-empty 1-D array of positive finite floats, or a ValueError naming ``name``."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}") from None
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D list of numbers, got {values!r}")
    if not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(f"{name} must be positive finite numbers, got {values!r}")
    return v


def sqm_system_matrix(rates, rtts, alpha: float = 2.0, k=None) -> np.ndarray:
    """``F`` of the linearised single-link subsystem (SQM eqs. 13-20).

    Parameters
    ----------
    rates : array_like
        equilibrium rates ``x_i``, packets/s.
    rtts : array_like
        RTTs ``D_i``, s.
    alpha : float
        fairness parameter (2 for Reno).
    k : array_like, optional
        TCP gains ``k_i`` (default ``1/D_i^2``).

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Examples
    --------
    >>> np.round(sqm_system_matrix([100.0], [0.1]), 6).tolist()
    [[-2.0, 0.0], [1.0, -10.0]]
    """
    x = _vector("rates", rates)
    D = _vector("rtts", rtts)
    if x.shape != D.shape:
        raise ValueError(f"rtts has {D.size} values for {x.size} rates")
    alpha = check_real("alpha", alpha, positive=True)
    kk = 1.0 / D**2 if k is None else _vector("k", k)
    if kk.shape != x.shape:
        raise ValueError(f"k has {kk.size} values for {x.size} rates")
    n = x.size
    F = np.zeros((2 * n, 2 * n))
    F[:n, :n] = np.diag(-alpha * kk / x)  # F1
    F[n:, :n] = np.eye(n)
    F[n:, n:] = np.diag(-1.0 / D)  # F2
    return F


def sqm_lyapunov(F: np.ndarray) -> np.ndarray:
    """Positive-definite ``A`` with ``F' A + A F = -I``   # SQM eq. 21

    Parameters
    ----------
    F : numpy.ndarray
        Hurwitz system matrix from :func:`sqm_system_matrix`.

    Returns
    -------
    numpy.ndarray
        Symmetric ``A``.
    """
    # scipy solves a X + X a^H = q; with a = F' this is F' A + A F = -I
    A = solve_continuous_lyapunov(F.T, -np.eye(F.shape[0]))
    return (A + A.T) / 2


@dataclass(repr=False)
class SQMSigma(Result):
    """Result of :func:`sqm_sigma`.

    Attributes
    ----------
    F, A : numpy.ndarray
        system and Lyapunov matrices.
    J : float
        ``sqrt(lmax(A)/lmin(A))``.
    norm_A : float
        spectral norm of A.
    rhs : float
        ``1/(2 rho J ||A||)``, the bound of SQM eq. 23.
    gains : numpy.ndarray
        ``k_i x_i^alpha`` (the numerators, ``||E_i|| sigma_i``).
    sigma : numpy.ndarray
        chosen sigma_i (packets), after ``scale``.
    lhs : float
        ``sum_i k_i x_i^alpha / sigma_i`` for the chosen sigma.
    satisfied : bool
        ``lhs < rhs``.
    queue_excess : numpy.ndarray
        equilibrium ``q* - beta = sigma p* = sigma / x^alpha`` (packets).
    rho : float
    rates : numpy.ndarray
        the rates ``x_i`` (packets/s) the design used; also the WFQ weights of SQM's
        Algorithm 2 (``Q_i = x_i``).
    beta : numpy.ndarray
        queue offsets ``beta_i`` of ``p_i = (q_i - beta_i)/sigma_i`` (packets).
    """

    F: np.ndarray
    A: np.ndarray
    J: float
    norm_A: float
    rhs: float
    gains: np.ndarray
    sigma: np.ndarray
    lhs: float
    satisfied: bool
    queue_excess: np.ndarray
    rho: float
    rates: np.ndarray | None = None
    beta: np.ndarray | None = None

    def to_aqm(self) -> dict:
        """The AQM configuration of this design for the simulator's ``sqm`` AQM.

        ``{"type": "sqm", "sigma": [...], "beta": [...], "weights": [...]}``, one entry per
        queue: the slopes ``sigma_i`` and offsets ``beta_i`` (packets) of
        ``p_i = min(1, [(q_i - beta_i)/sigma_i]^+)`` and the WFQ weights ``Q_i = x_i``
        (SQM Algorithm 2).  The simulator accepts it once its ``sqm`` AQM exists (not yet:
        ``aqmlab aqms`` lists what it has).

        Returns
        -------
        dict

        Examples
        --------
        >>> sorted(sqm_sigma([100.0, 100.0], [0.1, 0.2]).to_aqm())
        ['beta', 'sigma', 'type', 'weights']
        """
        n = self.sigma.size
        rates = np.ones(n) if self.rates is None else self.rates
        beta = np.zeros(n) if self.beta is None else self.beta
        return {
            "type": "sqm",
            "sigma": [float(v) for v in self.sigma],
            "beta": [float(v) for v in beta],
            "weights": [float(v) for v in rates],
        }

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
        """
        return {
            "J": self.J,
            "norm_A": self.norm_A,
            "rhs": self.rhs,
            "lhs": self.lhs,
            "satisfied": self.satisfied,
            "rho": self.rho,
            "sigma": [float(s) for s in self.sigma],
            "queue_excess": [float(q) for q in self.queue_excess],
        }

    def _figures(self) -> dict:
        return {
            "queues": int(self.sigma.size),
            "J": self.J,
            "rho": self.rho,
            "lhs": self.lhs,
            "rhs": self.rhs,
            "satisfied": bool(self.satisfied),
        }

    def to_pandas(self):
        """One row per queue: ``rate`` (packets/s; NaN when the design was given none),
        ``sigma``, ``beta`` (packets), ``gain`` (``k_i x_i^alpha``) and ``queue_excess``
        (packets).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        n = self.sigma.size
        return pd.DataFrame(
            {
                "rate": np.full(n, np.nan) if self.rates is None else self.rates,
                "sigma": self.sigma,
                "beta": np.zeros(n) if self.beta is None else self.beta,
                "gain": self.gains,
                "queue_excess": self.queue_excess,
            },
            index=pd.RangeIndex(1, n + 1, name="queue"),
        )

    def plot(self, ax=None):
        """Bar chart of sigma_i and the implied equilibrium queue excess.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, ax = new_axes(given := ax)
        i = np.arange(1, self.sigma.size + 1)
        ax.bar(i - 0.2, self.sigma, width=0.4, label="sigma_i")
        ax.bar(i + 0.2, self.queue_excess, width=0.4, label="q* - beta (pkts)")
        ax.set_yscale("log")
        ax.set_xlabel("queue i")
        ax.set_title(f"SQM Theorem 3: lhs={self.lhs:.3g} < rhs={self.rhs:.3g}")
        ax.legend()
        return plotted(fig, given)


def sqm_sigma(
    rates,
    rtts,
    alpha: float = 2.0,
    k=None,
    rho: float = 1.01,
    margin: float = 0.1,
    split: str = "equal",
    scale: float = 1.0,
    beta=0.0,
) -> SQMSigma:
    """Evaluate SQM's condition (23) and choose sigma for every queue of a link.

    Parameters
    ----------
    rates : array_like
        rates ``x_i`` (packets/s), e.g. the OGD output.
    rtts : array_like
        RTTs ``D_i``, s.
    alpha : float
        fairness parameter.
    k : array_like, optional
        TCP gains (default ``1/D_i^2``).
    rho : float
        Razumikhin constant, > 1.
    margin : float
        fraction of the bound kept in reserve, in [0, 1).
    split : {"equal", "proportional"}
        equal share of the budget per queue, or one common sigma.
    scale : float
        multiplier on the literal sigma (> 0; values < 1 leave the sufficient condition).
    beta : float or array_like
        queue offsets ``beta_i`` (packets, >= 0), carried into :meth:`SQMSigma.to_aqm` (they
        do not change sigma); e.g. ``0.005 * C`` for a 5 ms delay target.

    Returns
    -------
    SQMSigma

    Examples
    --------
    >>> r = sqm_sigma([100.0, 100.0], [0.1, 0.2])
    >>> bool(r.satisfied)
    True
    """
    rho = check_real("rho", rho)
    if rho <= 1:
        raise ValueError(f"rho must be > 1, got {rho!r}")
    margin = check_real("margin", margin)
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be in [0, 1), got {margin!r}")
    scale = check_real("scale", scale, positive=True)
    x = _vector("rates", rates)
    D = _vector("rtts", rtts)
    try:
        b = np.broadcast_to(np.asarray(beta, dtype=float), x.shape).copy()
    except (TypeError, ValueError):
        raise ValueError(f"beta must be a number or one per rate, got {beta!r}") from None
    if not np.all(np.isfinite(b)) or np.any(b < 0):
        raise ValueError(f"beta must be >= 0, got {beta!r}")
    F = sqm_system_matrix(x, D, alpha, k)
    A = sqm_lyapunov(F)
    ev = np.linalg.eigvalsh(A)
    J = float(np.sqrt(ev.max() / ev.min()))
    norm_A = float(np.linalg.norm(A, 2))
    rhs = 1.0 / (2 * rho * J * norm_A)  # SQM eq. 23
    kk = 1.0 / D**2 if k is None else _vector("k", k)
    gains = kk * x**alpha
    budget = (1 - margin) * rhs
    if split == "equal":
        sigma = gains * x.size / budget
    elif split == "proportional":
        sigma = np.full(x.size, gains.sum() / budget)
    else:
        raise ValueError(f"split must be 'equal' or 'proportional', got {split!r}")
    sigma = sigma * scale
    lhs = float(np.sum(gains / sigma))
    return SQMSigma(F, A, J, norm_A, rhs, gains, sigma, lhs, lhs < rhs, sigma / x**alpha, rho, x, b)
