"""SQM's Algorithm 2 at one link: scheduler weights and AQM slopes from the OGD rates.

Given the rates ``x_i`` of the flows crossing link l (Algorithm 1's ``x_{t+1}``, packets/s):

1. weights ``Q_i = x_i`` (the paper's example), so the scheduler shares
   ``Q_i / sum_j Q_j * C_l`` match the rates when the link is full;
2. slopes ``sigma_i`` of ``p_i = min(1, [(q_i - beta_i)/sigma_i]^+)``, by one of two rules:

   * ``"theorem3"`` -- Theorem 3's delay-robust condition (SQM eq. 23) through
     :func:`aqmlab.design.sqm_sigma.sqm_sigma` (rho > 1, budget split equally with a margin);
   * ``"delay"`` (default) -- the practical rule: ``sigma`` puts the fluid equilibrium queue
     ``q*_i = beta_i + sigma_i p*_i`` (``p*_i = x_i^-alpha``, SQM eq. 6 on a single
     bottleneck) at a delay target ``d``: queue i drains at ``x_i``, so ``q*_i = d x_i`` and
     ``sigma_i = (d x_i - beta_i) x_i^alpha``.

   * ``"reno"`` -- the delay rule in a real TCP Reno flow's units: at a loss or mark rate ``p``
     a Reno flow of RTT ``D_i`` runs at ``x = sqrt(3/2) / (D_i sqrt(p))`` packets/s (Mathis,
     Semke, Mahdavi & Ott 1997), so its equilibrium probability is ``p*_i = 3 / (2 (x_i D_i)^2)``
     and ``sigma_i = (d x_i - beta_i) / p*_i`` (alpha = 2 only). This is the rule that can be
     written into a packet-level ``sqm`` qdisc, whose law acts on real drop probabilities.

Why a practical rule: Theorem 3 is a sufficient condition from a Razumikhin argument and with
Reno's ``k_i = 1/D_i^2`` and rates in packets/s it asks for ``sigma ~ 1e7`` and standing queues
of thousands of packets (on the paper's own §V-A example: docs/design/sqm_sigma.md); the
paper's packet results (5 ms targets) cannot come from it. Both are computed every time:
:class:`LinkTuning` reports Theorem 3's bound for the sigma actually chosen (``lhs < rhs`` or
not).

Examples
--------
>>> t = link_tuning([120.0] * 5 + [80.0] * 5, [0.1] * 10, capacity=1000.0)
>>> [round(float(v), 1) for v in t.shares[[0, 9]]]
[120.0, 80.0]
>>> round(float(t.queue_star[0]), 3), round(float(t.delay_star[0]), 3)
(0.6, 0.005)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aqmlab.design.sqm_sigma import SQMSigma, sqm_sigma
from aqmlab.online._checks import as_alpha, check_real
from aqmlab.protocol import Result, new_axes, plotted

__all__ = ["SIGMA_RULES", "LinkTuning", "link_tuning"]

SIGMA_RULES = ("delay", "theorem3", "reno")


@dataclass(repr=False)
class LinkTuning(Result):
    """Result of :func:`link_tuning` (one entry per flow/queue of the link).

    Attributes
    ----------
    rates : numpy.ndarray
        the rates ``x_i`` (packets/s).
    weights : numpy.ndarray
        ``Q_i = x_i``.
    shares : numpy.ndarray or None
        ``Q_i / sum Q * C`` (packets/s) when ``capacity`` was given.
    sigma, beta : numpy.ndarray
        slopes and offsets (packets).
    rule : str
        the sigma rule used.
    queue_star, delay_star : numpy.ndarray
        fluid equilibrium queue ``beta + sigma x^-alpha`` (packets) and its delay ``q*/x`` (s).
    theorem3 : SQMSigma
        Theorem 3 evaluated at these rates (its own sigma is the literal choice).
    lhs : float
        ``sum k_i x_i^alpha / sigma_i`` for the chosen sigma.
    satisfied : bool
        ``lhs < theorem3.rhs``: the chosen sigma meets Theorem 3.
    """

    rates: np.ndarray
    weights: np.ndarray
    shares: np.ndarray | None
    sigma: np.ndarray
    beta: np.ndarray
    rule: str
    queue_star: np.ndarray
    delay_star: np.ndarray
    theorem3: SQMSigma
    lhs: float
    satisfied: bool

    def _figures(self) -> dict:
        return {
            "rule": self.rule,
            "queues": int(self.rates.size),
            "lhs": self.lhs,
            "theorem3_rhs": self.theorem3.rhs,
            "satisfied": bool(self.satisfied),
        }

    def to_pandas(self):
        """One row per queue: ``rate``, ``weight``, ``share`` (NaN without a capacity),
        ``sigma``, ``beta``, ``queue_star`` (packets) and ``delay_star`` (s).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        n = self.rates.size
        return pd.DataFrame(
            {
                "rate": self.rates,
                "weight": self.weights,
                "share": np.full(n, np.nan) if self.shares is None else self.shares,
                "sigma": self.sigma,
                "beta": self.beta,
                "queue_star": self.queue_star,
                "delay_star": self.delay_star,
            }
        )

    def plot(self, ax=None):
        """Each queue's slope sigma and equilibrium queue (bars).

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
        i = np.arange(self.rates.size)
        axes.bar(i - 0.2, self.sigma, width=0.4, label="sigma (packets)")
        axes.bar(i + 0.2, self.queue_star, width=0.4, label="q* (packets)")
        axes.set_xlabel("queue")
        axes.set_title(f"Algorithm 2, rule {self.rule!r}", fontsize=9)
        axes.legend(fontsize=8)
        return plotted(fig, ax)

    def to_dict(self) -> dict:
        """JSON-ready: the rule, the per-queue vectors and Theorem 3's check.

        Returns
        -------
        dict
        """
        return {
            "rule": self.rule,
            "rates": self.rates.tolist(),
            "weights": self.weights.tolist(),
            "shares": None if self.shares is None else self.shares.tolist(),
            "sigma": self.sigma.tolist(),
            "beta": self.beta.tolist(),
            "queue_star": self.queue_star.tolist(),
            "delay_star": self.delay_star.tolist(),
            "theorem3_rhs": self.theorem3.rhs,
            "lhs": self.lhs,
            "satisfied": bool(self.satisfied),
        }


def link_tuning(
    rates,
    rtts,
    capacity: float | None = None,
    alpha: float = 2.0,
    sigma_rule: str = "delay",
    delay_target: float = 0.005,
    beta=0.0,
    rho: float = 1.01,
    margin: float = 0.1,
    k=None,
) -> LinkTuning:
    """Algorithm 2 at one link: weights ``Q_i = x_i`` and slopes ``sigma_i``.

    Parameters
    ----------
    rates : array_like
        rates ``x_i`` of the link's flows (packets/s, > 0).
    rtts : array_like
        their RTTs ``D_i`` (s), for Theorem 3's ``F`` and ``k_i = 1/D_i^2``.
    capacity : float, optional
        link capacity (packets/s): fills :attr:`LinkTuning.shares`.
    alpha : float
        fairness exponent (2 for Reno/NewReno).
    sigma_rule : {"delay", "theorem3", "reno"}
        the practical delay-target rule in the fluid model's price, Theorem 3, or the delay
        rule with Reno's real loss rate (see the module docstring).
    delay_target : float
        ``d`` (s) of the delay rule (default 5 ms, the paper's AQM target); > beta_i / x_i.
    beta : float or array_like
        queue offsets ``beta_i`` (packets, >= 0; default 0). Algorithm 2 (SQM §IV-C) does not
        tune beta.
    rho, margin, k
        Theorem 3's constant (> 1), reserved fraction of its budget and TCP gains, as
        :func:`aqmlab.design.sqm_sigma.sqm_sigma`.

    Returns
    -------
    LinkTuning
    """
    if sigma_rule not in SIGMA_RULES:
        raise ValueError(f"sigma_rule must be one of {', '.join(SIGMA_RULES)}, got {sigma_rule!r}")
    alpha = as_alpha(alpha)
    if alpha <= 0:
        raise ValueError(f"alpha must be > 0 for Algorithm 2 (p* = x^-alpha), got {alpha!r}")
    d = check_real("delay_target", delay_target, positive=True)
    th = sqm_sigma(rates, rtts, alpha=alpha, k=k, rho=rho, margin=margin, beta=beta)
    x, b = th.rates, th.beta
    if capacity is not None:
        cap = check_real("capacity", capacity, positive=True)
        shares = x / x.sum() * cap
    else:
        shares = None
    if sigma_rule == "theorem3":
        sigma = th.sigma.copy()
    else:
        excess = d * x - b
        if np.any(excess <= 0):
            raise ValueError(
                f"delay_target = {d}: beta = {b.tolist()} already holds more than d x_i packets"
            )
        if sigma_rule == "reno":
            if alpha != 2.0:
                raise ValueError(f"sigma_rule 'reno' needs alpha = 2, got {alpha!r}")
            p_star = 1.5 / (x * np.broadcast_to(np.asarray(rtts, dtype=float), x.shape)) ** 2
            sigma = excess / p_star
        else:
            sigma = excess * x**alpha
    lhs = float(np.sum(th.gains / sigma))
    if sigma_rule == "reno":
        q_star = b + sigma * p_star
    else:
        q_star = b + sigma * x ** (-alpha)
    return LinkTuning(
        rates=x,
        weights=x.copy(),
        shares=shares,
        sigma=sigma,
        beta=b,
        rule=sigma_rule,
        queue_star=q_star,
        delay_star=q_star / x,
        theorem3=th,
        lhs=lhs,
        satisfied=lhs < th.rhs,
    )
