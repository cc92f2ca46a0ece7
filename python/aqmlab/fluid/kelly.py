"""Kelly-Maulloo-Tan primal rate model with feedback delay (docs/fluid.md).

Routes ``r`` (rates ``x_r``, packets/s) over links ``j`` (capacity ``C_j``, packets/s)::

    dx_r/dt = kappa_r ( w_r - x_r(t) sum_{j in r} mu_j(t - T_r) )        # KMT primal, delayed
    mu_j    = p_j(y_j),  y_j = sum_{s through j} x_s                    # KMT link price
    p_j(y)  = [(y - C_j)/y]^+                                           # KMT's price function

Decision: the price is read one route RTT ``T_r`` late and multiplies the current rate (the
delay-free primal algorithm of Kelly, Maulloo & Tan 1998 with its feedback delayed); the link
rates ``y_j`` seen in the
price are the delayed route rates (no separate forward delays). At equilibrium
``w_r = x_r sum_j p_j(y_j)``; on a single link ``y = C + sum_r w_r`` and ``x_r = w_r y/(y - C)``.

Example
-------
>>> from aqmlab.fluid import Kelly
>>> m = Kelly(capacity=100.0, rtt=[0.1, 0.2], weights=[1.0, 3.0])
>>> [round(float(v), 2) for v in m.equilibrium()["x"][0]]
[26.0, 78.0]
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from aqmlab.fluid.base import FluidModel, as_param
from aqmlab.fluid.network import per_flow, routing_matrix
from aqmlab.fluid.result import Equilibrium, LinearizedModel

__all__ = ["Kelly"]


class Kelly(FluidModel):
    """Kelly-type primal model over an arbitrary routing.

    Parameters
    ----------
    capacity : float, (L,) or (B, L) array
        Link capacities (packets/s).
    rtt : (R,) or (B, R) array
        Feedback delays ``T_r`` (s).
    weights : (R,) or (B, R) array
        Willingness to pay ``w_r`` (packets/s, price units).
    gain : float or array
        ``kappa_r`` (1/s), default 1.
    routing : (R, L) 0/1 array or list of link lists; default one link.
    """

    name = "kelly"

    def __init__(self, capacity, rtt, weights=1.0, gain=1.0, routing=None):
        rtt_arr = as_param(rtt, "rtt", positive=True)
        if rtt_arr.ndim == 0 or rtt_arr.shape[-1] == 0:
            raise ValueError(f"rtt must give one value per route (got {rtt})")
        Rn = rtt_arr.shape[-1]
        self.routing = routing_matrix(routing, Rn)
        L = self.routing.shape[1]
        cap = as_param(capacity, "capacity", positive=True)
        cap = cap[None, :] if cap.ndim == 1 and cap.shape[0] == L else np.atleast_1d(cap)
        if cap.ndim == 1:
            cap = cap[:, None]
        B = max(cap.shape[0], rtt_arr.shape[0] if rtt_arr.ndim == 2 else 1)
        self.B, self.N, self.L = B, Rn, L
        self.C = np.broadcast_to(cap, (B, L)).astype(float)
        self.T = per_flow(rtt_arr, "rtt", B, Rn)
        self.w = per_flow(weights, "weights", B, Rn)
        self.kappa = per_flow(gain, "gain", B, Rn)
        self.A = self.routing.astype(float)  # (R, L)
        self.state_names = tuple(f"x[{r}]" for r in range(Rn))
        self._cols = np.arange(Rn)

    def link_prices(self, y):
        """``p_j(y) = [(y - C_j)/y]^+`` (KMT), shape (B, L).

        Parameters
        ----------
        y : numpy.ndarray, shape (B, L)
            Link loads (packets/s).

        Returns
        -------
        numpy.ndarray, shape (B, L)
        """
        return np.maximum(y - self.C, 0.0) / np.maximum(y, 1e-12)

    def route_prices(self, x):
        """Sum of the link prices along each route.

        Parameters
        ----------
        x : numpy.ndarray, shape (B, R)
            Route rates (packets/s).

        Returns
        -------
        numpy.ndarray, shape (B, R)
        """
        return self.link_prices(x @ self.A) @ self.A.T

    def rhs(self, t, y, lag):
        # all route rates at t - T_r, one delay per route: price of route r from them
        xd_all = np.stack(
            [
                lag.constant(("x", r), self.T[:, [r]].repeat(self.N, 1), self._cols)
                for r in range(self.N)
            ],
            axis=1,
        )  # (B, R_seen_by, R)
        yl = xd_all @ self.A  # (B, R, L) link rates seen by each route
        mu = np.maximum(yl - self.C[:, None, :], 0.0) / np.maximum(yl, 1e-12)
        price = np.einsum("brl,rl->br", mu, self.A)
        return self.kappa * (self.w - y * price)

    def initial_state(self):
        """Each route starts at 1 packet/s.

        Returns
        -------
        numpy.ndarray, shape (B, R)
        """
        return np.ones((self.B, self.N))

    def bounds(self):
        return np.zeros(self.N), np.full(self.N, np.inf)

    def max_delay(self):
        return float(self.T.max())

    def default_dt(self):
        return float(min(0.01, self.T.min() / 4))

    def equilibrium(self) -> Equilibrium:
        """Solve ``w_r = x_r sum_j p_j(y_j)`` per parameter set: minimiser of the convex KMT objective
        ``-sum_r w_r log x_r + sum_j int_{C_j}^{y_j} p_j`` (L-BFGS-B), residual checked.

        Returns
        -------
        Equilibrium
            ``x`` (route rates), ``y`` (link loads), ``p`` (link prices).
        """
        xs = np.empty((self.B, self.N))
        for b in range(self.B):
            C, w = self.C[b], self.w[b]

            def obj(x, C=C, w=w):
                # convex NUM: -sum w log x + sum_j int_C^y_j (1 - C/s) ds  (KMT Lyapunov fn)
                yl = self.A.T @ x
                pen = np.where(yl > C, yl - C - C * np.log(np.maximum(yl, C) / C), 0.0)
                p = np.maximum(yl - C, 0) / yl
                return -(w @ np.log(x)) + pen.sum(), -w / x + self.A @ p

            sol = minimize(
                obj,
                np.full(self.N, C.min() / self.N),
                jac=True,
                method="L-BFGS-B",
                bounds=[(1e-9, None)] * self.N,
                options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000},
            )
            x = sol.x
            res = x * (self.A @ (np.maximum(self.A.T @ x - C, 0) / (self.A.T @ x))) - w
            if np.max(np.abs(res)) > 1e-6 * max(1.0, w.max()):
                raise ValueError(f"Kelly equilibrium not found for parameter set {b}")
            xs[b] = x
        yl = xs @ self.A
        return Equilibrium({"x": xs, "y": yl, "p": self.link_prices(yl)}, xs.copy())

    def linearize(self) -> LinearizedModel:
        """Jacobian at the equilibrium: ``A = -kappa diag(sum p)``, ``Ad`` from ``p_j'(y) = C/y^2``
        through the delayed rates (row ``r`` delayed by ``T_r``).

        Returns
        -------
        LinearizedModel
        """
        eq = self.equilibrium()
        x, yl = eq["x"], eq["y"]
        price = eq["p"] @ self.A.T
        n = self.N
        A = np.zeros((self.B, n, n))
        A[:, np.arange(n), np.arange(n)] = -self.kappa * price
        dp = np.where(yl > self.C, self.C / yl**2, 0.0)  # (B, L)
        # d price_r / d x_s = sum_j A_rj p_j' A_sj
        J = np.einsum("rl,bl,sl->brs", self.A, dp, self.A)
        Ad = -(self.kappa * x)[:, :, None] * J
        delay = np.broadcast_to(self.T, (self.B, n)).copy()
        return LinearizedModel(
            A, Ad, np.zeros((self.B, n, 0)), delay, list(self.state_names), [], {"equilibrium": eq}
        )
