"""SQM alpha-fair multi-queue, multi-link fluid model (docs/fluid.md, SQM eqs. 2-5).

Flow ``i`` (rate ``x_i``, packets/s, RTT ``D_i`` s) has its own queue ``q_il`` (packets) at every
link ``l`` it crosses (routing matrix, arbitrary)::

    dx_i/dt  = k_i (1 - x_i^alpha sum_{l in A(i)} p_il(t - D_i))            # SQM eq. 2
    dq_il/dt = x_i - C_il      ([.]^+ at q_il = 0)                          # SQM eq. 3
    p_il     = min(1, [(q_il - beta_il)/sigma_il]^+)                        # SQM eq. 4
    C_il     = Q_il C_l / sum_{j in B(l)} Q_jl                              # SQM eq. 5

``Q_il`` are the WFQ weights, ``C_l`` link capacities (packets/s), ``k_i`` gains (default Reno
``1/D_i^2``), ``alpha`` the fairness exponent (2 = Reno). The initial rates are ``epsilon = 1``
packet/s and the queues empty (SQM §IV: flows start at ``epsilon``).

Decisions (docs/fluid.md):

* ``beta = 0`` by default (the §V-A example gives no beta). ``sigma`` defaults to the
  *critically damped* choice for the
  delay-free per-flow loop ``s^2 + (alpha k/x*) s + k x*^alpha/sigma``:
  ``sigma = 4 x*^(alpha+2) / (alpha^2 k)`` (x* = the flow's share). Theorem 3's sufficient
  condition gives sigma ~1e7 with these units (docs/design/sqm_sigma.md) and converges in
  minutes, not the paper's 50 s; pass ``sigma`` explicitly to use it.
* Equilibrium with ``N < M`` (some flow crosses several bottlenecks) is not unique (Theorem 2):
  ``x*_i = min_l C_il`` and the whole price ``x*^-alpha`` sits at the first link attaining the
  minimum; the other queues of that flow are empty.
* The per-flow queue share ``C_il`` is fixed (not work-conserving), as in eq. 3.

Example
-------
>>> from aqmlab.fluid import SQM
>>> m = SQM(capacity=1000, rtt=[0.1 + 0.05 * i / 9 for i in range(10)], weights=[1500] * 5 + [1000] * 5)
>>> r = m.simulate(50)
>>> [round(float(v)) for v in r["x"][-1, 0, [0, 9]]]
[120, 80]
"""

from __future__ import annotations

import numpy as np

from aqmlab.fluid.base import FluidModel, as_param
from aqmlab.fluid.network import per_flow, routing_matrix
from aqmlab.fluid.result import Equilibrium, LinearizedModel
from aqmlab.fluid.solver import project_rate

__all__ = ["SQM"]


class SQM(FluidModel):
    """SQM fluid model.

    Parameters
    ----------
    capacity : float, (L,) or (B, L) array
        Link capacities ``C_l`` (packets/s).
    rtt : (N,) or (B, N) array
        Flow RTTs ``D_i`` (s).
    weights : (N,) array, (N, L) array or None
        WFQ weights ``Q_il`` (equal if None).
    routing : (N, L) 0/1 array or list of link lists, optional
        Links crossed by each flow (default: all flows on one link).
    alpha : float
        Fairness exponent (> 0 with the default sigma).
    k : (N,) or (B, N) array, optional
        Gains ``k_i`` (1/s^2 units of packets/s per s); default ``1/D_i^2``.
    sigma, beta : float or array broadcastable to (B, M), optional
        Slope and target (packets) of each queue's law, M = number of (flow, link) queues.
    """

    name = "sqm"

    def __init__(
        self, capacity, rtt, weights=None, routing=None, alpha=2.0, k=None, sigma=None, beta=0.0
    ):
        rtt_arr = as_param(rtt, "rtt", positive=True)
        N = rtt_arr.shape[-1] if rtt_arr.ndim else None
        if not N:
            raise ValueError(f"rtt must give one value per flow (got {rtt})")
        self.routing = routing_matrix(routing, N)
        L = self.routing.shape[1]
        cap = as_param(capacity, "capacity", positive=True)
        if cap.ndim == 0 or (cap.ndim == 1 and L != 1 and cap.shape[0] == L):
            cap = np.broadcast_to(cap, (L,))[None, :]
        elif cap.ndim == 1:  # a batch of single-link capacities
            cap = cap[:, None]
        if cap.shape[-1] != L:
            raise ValueError(f"capacity has {cap.shape[-1]} links but routing has {L}")
        B = max(cap.shape[0], rtt_arr.shape[0] if rtt_arr.ndim == 2 else 1)
        self.B, self.N, self.L = B, N, L
        self.D = per_flow(rtt_arr, "rtt", B, N)
        self.Cl = np.broadcast_to(cap, (B, L)).astype(float)
        self.alpha = float(as_param(alpha, "alpha", nonneg=True))
        self.k = 1.0 / self.D**2 if k is None else per_flow(k, "k", B, N)
        Q = np.ones((N, L)) if weights is None else np.asarray(weights, float)
        if Q.ndim == 1:
            if Q.shape[0] != N:
                raise ValueError(f"weights has {Q.shape[0]} values but there are {N} flows")
            Q = np.repeat(Q[:, None], L, axis=1)
        if Q.shape != (N, L) or np.any(Q[self.routing] <= 0) or not np.all(np.isfinite(Q)):
            raise ValueError(f"weights must be positive, one per flow (got {weights})")
        self.Q = Q
        fi, li = np.nonzero(self.routing)
        self.pair_flow, self.pair_link, self.M = fi, li, len(fi)
        share = (Q * self.routing) / (Q * self.routing).sum(axis=0, keepdims=True)
        self.Cpair = share[fi, li][None, :] * self.Cl[:, li]  # SQM eq. 5, (B, M)
        self.xstar = np.full((B, N), np.inf)
        for m in range(self.M):
            self.xstar[:, fi[m]] = np.minimum(self.xstar[:, fi[m]], self.Cpair[:, m])
        self.Dpair = self.D[:, fi]
        self.inc = np.zeros((self.M, N))
        self.inc[np.arange(self.M), fi] = 1.0
        self.beta = np.broadcast_to(as_param(beta, "beta", nonneg=True), (B, self.M)).copy()
        if sigma is None:
            if self.alpha <= 0:
                raise ValueError("sigma must be given when alpha = 0")
            xs = self.xstar[:, fi]
            sigma = 4.0 * xs ** (self.alpha + 2) / (self.alpha**2 * self.k[:, fi])
        self.sigma = np.broadcast_to(as_param(sigma, "sigma", positive=True), (B, self.M)).copy()
        self.state_names = tuple(
            [f"x[{i}]" for i in range(N)] + [f"q[{i},{j}]" for i, j in zip(fi, li, strict=True)]
        )
        self._qcols = N + np.arange(self.M)
        self._one_queue_per_flow = self.M == N and np.array_equal(fi, np.arange(N))

    def prices(self, q):
        """Per-queue probability ``min(1, [(q - beta)/sigma]^+)`` (SQM eq. 4), (B, M).

        Parameters
        ----------
        q : numpy.ndarray, shape (B, M)
            Queues (packets).

        Returns
        -------
        numpy.ndarray, shape (B, M)
        """
        return np.clip((q - self.beta) / self.sigma, 0.0, 1.0)

    def rhs(self, t, y, lag):
        N = self.N
        x, q = y[:, :N], y[:, N:]
        qd = lag.constant("q", self.Dpair, self._qcols)  # q_il(t - D_i)
        price = self.prices(qd)
        if not self._one_queue_per_flow:
            price = price @ self.inc  # sum over the flow's links
        xa = x * x if self.alpha == 2.0 else x**self.alpha
        out = np.empty_like(y)
        out[:, :N] = self.k * (1.0 - xa * price)  # SQM eq. 2
        out[:, N:] = project_rate(q, x[:, self.pair_flow] - self.Cpair)  # SQM eq. 3
        return out

    def initial_state(self):
        """``x = epsilon = 1`` packet/s, empty queues.

        Returns
        -------
        numpy.ndarray, shape (B, n)
        """
        return np.hstack([np.ones((self.B, self.N)), np.zeros((self.B, self.M))])

    def bounds(self):
        n = self.N + self.M
        return np.zeros(n), np.full(n, np.inf)

    def max_delay(self):
        return float(self.D.max())

    def default_dt(self):
        """``min(D)/4`` (at most 25 ms): the delays are constant, RK4 + Hermite is exact to
        ~1e-6 relative at this step on the 10-flow example.

        Returns
        -------
        float
        """
        return float(min(0.025, self.D.min() / 4))

    def equilibrium(self) -> Equilibrium:
        """``x* = min_l C_il``; price ``x*^-alpha`` at the binding queue (SQM eqs. 6-12).

        Returns
        -------
        Equilibrium
            ``x``, ``q``, ``p``.
        """
        x = self.xstar
        fi = self.pair_flow
        q = np.zeros((self.B, self.M))
        p = np.zeros((self.B, self.M))
        done = np.zeros((self.B, self.N), dtype=bool)
        for m in range(self.M):
            bind = (self.Cpair[:, m] <= x[:, fi[m]] * (1 + 1e-12)) & ~done[:, fi[m]]
            pm = x[:, fi[m]] ** (-self.alpha)
            p[:, m] = np.where(bind, pm, 0.0)
            q[:, m] = np.where(bind, self.beta[:, m] + self.sigma[:, m] * pm, 0.0)
            done[:, fi[m]] |= bind
        if np.any(p > 1):
            raise ValueError("no equilibrium with p <= 1: rates below 1 packet/s")
        return Equilibrium({"x": x.copy(), "q": q, "p": p}, np.hstack([x, q]))

    def linearize(self) -> LinearizedModel:
        """Jacobian of the right-hand side at :meth:`equilibrium` (SQM eqs. 13-20).

        ``A`` (current states), ``Ad`` (queues seen ``D_i`` late in the rate of flow ``i``;
        ``delay`` is per row, shape ``(B, n)``). ``extra['F_paper']`` adds the paper's
        ``-dq/D_i`` term (taken from its ref. [11], not from eq. 3) for Theorem 3.

        Returns
        -------
        LinearizedModel
        """
        eq = self.equilibrium()
        N, M, B = self.N, self.M, self.B
        n = N + M
        A = np.zeros((B, n, n))
        Ad = np.zeros((B, n, n))
        x = eq["x"]
        rows = np.arange(N)
        price = eq["p"] @ self.inc
        A[:, rows, rows] = -self.alpha * self.k * x ** (self.alpha - 1) * price
        slope = np.where(eq["q"] > self.beta, 1.0 / self.sigma, 0.0)
        for m in range(M):
            i = self.pair_flow[m]
            Ad[:, i, N + m] = -self.k[:, i] * x[:, i] ** self.alpha * slope[:, m]
            A[:, N + m, i] = 1.0
        delay = np.zeros((B, n))
        delay[:, :N] = self.D
        F = A.copy()
        F[:, N + np.arange(M), N + np.arange(M)] = -1.0 / self.Dpair
        return LinearizedModel(
            A,
            Ad,
            np.zeros((B, n, 0)),
            delay,
            list(self.state_names),
            [],
            {"equilibrium": eq, "F_paper": F},
        )
