"""Average-reward solvers for PAQMAN SMDPs (docs/paqman.md, Tijms §7.2).

:func:`solve` applies the SMDP-to-MDP data transformation (3) and relative value iteration with
Tijms' bounds ``m_n <= g* <= M_n`` as the stopping rule. :func:`solve_lp` solves the
average-reward linear program of the SMDP (an independent check for small instances) and
:func:`policy_gain` evaluates a fixed policy exactly from its stationary distribution.

Decisions (PAQ eq. 3 only needs ``tau_bar <= min tau``; docs/paqman.md):
``tau_bar = 0.95 min tau(s, a)`` (strictly below the minimum,
so every transformed state has a self-loop and the chain is aperiodic); stop when
``M_n - m_n <= eps |m_n|`` with ``eps = 1e-4``, plus an absolute floor (``1e-9`` of the largest
reward rate) so that a gain of exactly zero (the literal reward) also terminates.

Examples
--------
>>> from aqmlab.mdp import negligible_rtt_model, solve
>>> res = solve(negligible_rtt_model(833.3, 0.005, buffer=30, grid=10))
>>> res.lower <= res.gain <= res.upper
True
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.optimize import linprog
from threadpoolctl import threadpool_limits

from aqmlab.mdp.model import ADMIT, DROP, Smdp
from aqmlab.mdp.policy_io import PaqmanPolicy
from aqmlab.protocol import Result, new_axes, plotted

__all__ = ["transform", "solve", "solve_lp", "policy_gain", "LpResult"]


def transform(model: Smdp, tau_bar_factor: float = 0.95) -> tuple[np.ndarray, np.ndarray, float]:
    """SMDP -> discrete MDP data transformation (PAQMAN eq. (3), Tijms §7.2).

    Parameters
    ----------
    model : Smdp
    tau_bar_factor : float
        ``tau_bar / min tau(s, a)``, in ``(0, 1]`` (default 0.95, see above).

    Returns
    -------
    rbar : ndarray, shape (2, R, B + 1)
        Reward rates ``r / tau`` (reward units per second).
    weight : ndarray, shape (2, R, B + 1)
        ``tau_bar / tau``: the transformed kernel is ``weight * P + (1 - weight) * I``, so the
        self-loop probability is ``weight * p(s|s,a) + 1 - weight``, in ``[0, 1]``.
    tau_bar : float
        The time step (s).
    """
    if not 0 < tau_bar_factor <= 1:
        raise ValueError(f"tau_bar_factor {tau_bar_factor!r}: must be in (0, 1]")
    tau_bar = tau_bar_factor * float(model.tau[model.feasible].min())
    return model.reward / model.tau, tau_bar / model.tau, tau_bar


def solve(
    model: Smdp,
    eps: float = 1e-4,
    tau_bar_factor: float = 0.95,
    max_iter: int = 200_000,
) -> PaqmanPolicy:
    """Relative value iteration on the transformed MDP with Tijms' stopping bounds.

    ``V_n(s) = max_a { rbar(s,a) + sum_s' pbar(s'|s,a) V_{n-1}(s') }``; ``m_n, M_n`` are the min and
    max of ``V_n - V_{n-1}``; stop when ``M_n - m_n <= eps |m_n|``; the policy is the maximiser of
    the last sweep (ties: admit) and the gain ``(m_n + M_n) / 2``.

    Parameters
    ----------
    model : Smdp
        From :func:`~aqmlab.mdp.negligible_rtt_model` or :func:`~aqmlab.mdp.rtt_model`.
    eps : float
        Relative stopping tolerance of the bounds (default 1e-4).
    tau_bar_factor : float
        ``tau_bar / min tau`` (default 0.95).
    max_iter : int
        Safety cap; reaching it raises ``RuntimeError``.

    Returns
    -------
    PaqmanPolicy
        ``.policy`` (1 = drop, shape ``(R, B + 1)``), ``.gain`` (reward units per second),
        ``.lower`` / ``.upper`` (Tijms' bounds), ``.iterations``, ``.values``.

    Examples
    --------
    >>> from aqmlab.mdp import negligible_rtt_model, solve
    >>> res = solve(negligible_rtt_model(833.3, 0.005, buffer=30, grid=10))
    >>> res.iterations > 0
    True
    """
    for name, v in (("eps", eps), ("tau_bar_factor", tau_bar_factor)):
        if isinstance(v, bool | str) or not isinstance(v, int | float) or not 0 < v < 1:
            raise ValueError(f"{name} {v!r}: must be a number in (0, 1)")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter {max_iter!r}: must be an integer >= 1")
    with threadpool_limits(limits=1, user_api="blas"):  # small batched products, see rtt.py
        return _rvi(model, eps, tau_bar_factor, max_iter)


def _rvi(model: Smdp, eps: float, tau_bar_factor: float, max_iter: int) -> PaqmanPolicy:
    t0 = time.perf_counter()
    rbar, w, tau_bar = transform(model, tau_bar_factor)
    feas = model.feasible
    abs_tol = 1e-9 * float(np.abs(rbar[feas]).max())
    v = np.zeros((model.grid.size, model.buffer + 1))
    keep = 1.0 - w
    n = 0
    while True:
        n += 1
        q = rbar + w * model.expected_next(v) + keep * v[None]
        q[~feas] = -np.inf
        vn = q.max(axis=0)
        d = vn - v
        m, mm = float(d.min()), float(d.max())
        v = vn - vn[0, 0]
        if mm - m <= eps * abs(m) + abs_tol:
            break
        if n >= max_iter:
            raise RuntimeError(f"value iteration did not converge in {max_iter} sweeps")
    # argmax with ties to admit: drop only if strictly better.
    policy = (q[DROP] > q[ADMIT]).astype(np.int8)
    return PaqmanPolicy(
        policy=policy,
        grid=model.grid,
        meta=dict(model.meta, buffer=model.buffer, tau_bar_s=tau_bar, eps=eps),
        gain=(m + mm) / 2,
        lower=m,
        upper=mm,
        iterations=n,
        values=v,
        solve_seconds=time.perf_counter() - t0,
    )


def _policy_arrays(model: Smdp, policy: np.ndarray):
    pol = np.asarray(policy).astype(int)
    pol = np.where(model.feasible[ADMIT], pol, DROP)
    r = np.where(pol == DROP, model.reward[DROP], model.reward[ADMIT]).ravel()
    tau = np.where(pol == DROP, model.tau[DROP], model.tau[ADMIT]).ravel()
    p_a, p_d = model.to_sparse()
    sel = sp.diags((pol.ravel() == DROP).astype(float))
    p = (sp.identity(p_a.shape[0]) - sel) @ p_a + sel @ p_d
    return p.tocsr(), r, tau


def policy_gain(model: Smdp, policy: np.ndarray) -> float:
    """Exact long-run reward per unit time of a fixed policy (renewal-reward theorem).

    ``g = sum_s pi(s) r(s) / sum_s pi(s) tau(s)`` with ``pi`` the stationary law of the embedded
    chain (assumed unichain; transient states get zero weight).

    Parameters
    ----------
    model : Smdp
    policy : ndarray of {0, 1}, shape (R, B + 1)
        1 = drop; admits at a full buffer are treated as drops.

    Returns
    -------
    float
        Reward units per second.
    """
    p, r, tau = _policy_arrays(model, policy)
    n = p.shape[0]
    a = (p.T - sp.identity(n)).tolil()
    a[0, :] = 1.0
    b = np.zeros(n)
    b[0] = 1.0
    pi = spla.spsolve(a.tocsc(), b)
    pi = np.clip(pi, 0, None)
    pi /= pi.sum()
    return float(pi @ r / (pi @ tau))


class LpResult(Result):
    """Solution of the average-reward LP (:func:`solve_lp`).

    Attributes
    ----------
    gain : float
        Optimal reward per second.
    policy : ndarray of int8, shape (R, B + 1)
        ``1`` = drop, by rate index (row) and queue (column).
    x : ndarray, shape (2, R (B + 1))
        Long-run frequencies of admit (row 0) and drop (row 1) per state.
    """

    def __init__(self, gain: float, policy: np.ndarray, x: np.ndarray):
        self.gain, self.policy, self.x = gain, policy, x

    def _figures(self) -> dict:
        return {
            "gain_per_s": self.gain,
            "rates": int(self.policy.shape[0]),
            "buffer": int(self.policy.shape[1]) - 1,
            "drop_fraction": float(self.policy.mean()),
        }

    def to_pandas(self):
        """Long table: ``rate_index`` (1-based), ``queue``, ``drop``, and the frequencies
        ``x_admit``, ``x_drop``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        R, Q = self.policy.shape
        r, q = np.meshgrid(np.arange(1, R + 1), np.arange(Q), indexing="ij")
        return pd.DataFrame(
            {
                "rate_index": r.ravel(),
                "queue": q.ravel(),
                "drop": self.policy.ravel().astype(bool),
                "x_admit": self.x[ADMIT],
                "x_drop": self.x[DROP],
            }
        )

    def plot(self, ax=None):
        """The drop region over (queue, rate index), dark = drop.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, figsize=(5, 4))
        axes.imshow(self.policy, origin="lower", aspect="auto", cmap="Greys", vmin=0, vmax=1.4)
        axes.set_xlabel("queue length (packets)")
        axes.set_ylabel("rate index - 1")
        axes.set_title(f"LP policy (dark = drop), gain {self.gain:.4g}/s", fontsize=8)
        return plotted(fig, ax)


def solve_lp(model: Smdp) -> LpResult:
    """Solve the SMDP's average-reward linear program (Tijms §7.2; small instances only).

    ``max sum_{s,a} r(s,a) x(s,a)`` subject to
    ``sum_a x(j,a) - sum_{s,a} p(j|s,a) x(s,a) = 0`` for all ``j``, ``sum_{s,a} tau(s,a) x(s,a) = 1``,
    ``x >= 0``. ``x(s, a)`` is the long-run frequency of choosing ``a`` in ``s`` per unit time.

    Parameters
    ----------
    model : Smdp
        A small instance (the LP has ``2 (B + 1) R`` variables).

    Returns
    -------
    LpResult
        ``gain``: optimal reward per second; ``policy``: action with positive frequency in
        recurrent states (admit elsewhere).
    """
    p_list = model.to_sparse()
    n = model.n_states
    feas = [model.feasible[a].ravel() for a in (ADMIT, DROP)]
    blocks, c, tau = [], [], []
    for a in (ADMIT, DROP):
        cols = np.nonzero(feas[a])[0]
        pa = p_list[a][cols]  # rows = chosen (s, a)
        e = sp.csr_matrix((np.ones(cols.size), (cols, np.arange(cols.size))), shape=(n, cols.size))
        blocks.append(e - pa.T)
        c.append(model.reward[a].ravel()[cols])
        tau.append(model.tau[a].ravel()[cols])
    a_eq = sp.vstack([sp.hstack(blocks), sp.csr_matrix(np.concatenate(tau)[None, :])]).tocsr()
    b_eq = np.zeros(n + 1)
    b_eq[-1] = 1.0
    res = linprog(-np.concatenate(c), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"LP failed: {res.message}")
    na = int(feas[ADMIT].sum())
    xa = np.zeros(n)
    xd = np.zeros(n)
    xa[np.nonzero(feas[ADMIT])[0]] = res.x[:na]
    xd[np.nonzero(feas[DROP])[0]] = res.x[na:]
    policy = (xd > xa).astype(np.int8).reshape(model.grid.size, model.buffer + 1)
    return LpResult(-float(res.fun), policy, np.stack([xa, xd]))
