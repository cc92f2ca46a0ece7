"""EDC spatial-domain (packet-arrival-indexed) model with its event-driven PI controller
(docs/fluid.md and docs/design/edc.md; EDC eqs. 2-10).

Independent variable: cumulative packet arrivals ``theta`` (packets)::

    dW/dtheta = 1/(N W) - W p/(2 N)                                   # EDC eqs. 2-5
    dq/dtheta = 1 - C (q/C + T_p)/(N W)     ([.]^+ at q = 0)          # EDC eqs. 2-5
    dt/dtheta = R/(N W),  R = q/C + T_p   (wall-clock time, s; since dtheta/dt = N W/R)

The controller runs every ``n_event`` arrivals (EDC §3.1, eq. 10): ``e(k) = q(k) - q_ref``,
``p(k) = p(k-1) + K_P [e(k) - e(k-1)] + K_P K_I e(k)``, clamped to [0, 1], and ``p`` is held
between events (a sampled-data loop: ``p`` and ``e(k-1)`` are solver states with zero derivative
updated by a hook). The RTT delays are dropped (the authors' argument in EDC §3.3: one event
spans much more than an RTT). Decision (EDC §3.1 does not say whether dropped arrivals count):
all arrivals count towards the event threshold (the fluid arrivals ``theta``).

Equilibrium (EDC eq. 6): ``q0 = q_ref``, ``W0 = R0 C/N``, ``p0 = 2N^2/(R0 C)^2``. Linearisation
(EDC eqs. 7-9) per packet: ``dW' = -2N/(R0 C)^2 dW - R0 C/(2N^2) dp``,
``dq' = N/(R0 C) dW - 1/(R0 C) dq``.

Example
-------
>>> from aqmlab.fluid import EDC
>>> m = EDC(n_flows=60, capacity=187.5, rtt=0.1, qref=200)
>>> round(float(m.equilibrium()["W"][0]), 3)   # R0 C / N, R0 = 200/187.5 + 0.1
3.646
"""

from __future__ import annotations

import numpy as np

from aqmlab.fluid.base import FluidModel, as_param, batch_size
from aqmlab.fluid.result import Equilibrium, LinearizedModel
from aqmlab.fluid.solver import project_rate

__all__ = ["EDC"]


class EDC(FluidModel):
    """EDC spatial-domain model.

    Parameters
    ----------
    n_flows : float or array
        ``N``.
    capacity : float or array
        ``C`` (packets/s).
    rtt : float or array
        Propagation RTT ``T_p`` (s).
    qref : float or array
        Reference queue (packets).
    kp : float or array
        ``K_P`` (1/packet).
    ki : float or array
        ``K_I`` (dimensionless).
    n_event : int
        Packet arrivals per controller run.
    dtheta : float, optional
        Packets per RK4 step; must divide ``n_event`` (default ``n_event / 10``).

    Notes
    -----
    EDC §4.2 defaults: ``qref = 200``, ``n_event = 30``, ``K_P = 0.03``, ``K_I = 0.01``.

    Parameters
    ----------
    n_flows, capacity (packets/s), rtt (propagation ``T_p``, s), qref (packets),
    kp (1/packet), ki (dimensionless), n_event (packets per controller run, integer),
    dtheta (packets per RK4 step; must divide ``n_event``).
    EDC §4.2 defaults: ``qref = 200``, ``n_event = 30``, ``K_P = 0.03``, ``K_I = 0.01``.
    """

    name = "edc"
    t_label = "theta [packets]"
    state_names = ("W", "q", "time", "p", "e_prev")

    def __init__(
        self, n_flows, capacity, rtt, qref=200.0, kp=0.03, ki=0.01, n_event=30, dtheta=None
    ):
        self.N = as_param(n_flows, "n_flows", positive=True)
        self.C = as_param(capacity, "capacity", positive=True)
        self.Tp = as_param(rtt, "rtt", positive=True)
        self.qref = as_param(qref, "qref", nonneg=True)
        self.kp = as_param(kp, "kp", nonneg=True)
        self.ki = as_param(ki, "ki", nonneg=True)
        if int(n_event) != n_event or n_event < 1:
            raise ValueError(f"n_event must be a positive integer (got {n_event})")
        self.n_event = int(n_event)
        self.dtheta = float(dtheta or self.n_event / 10)
        steps = self.n_event / self.dtheta
        if abs(steps - round(steps)) > 1e-9:
            raise ValueError(f"dtheta must divide n_event (got {dtheta} for {n_event})")
        self.hook_every = int(round(steps))
        self.B = batch_size(self.N, self.C, self.Tp, self.qref, self.kp, self.ki)

    def rtt(self, q):
        """Round-trip time ``q/C + T_p`` (s).

        Parameters
        ----------
        q : numpy.ndarray, shape (B,)
            Queue (packets).

        Returns
        -------
        numpy.ndarray, shape (B,)
        """
        return q / self.C + self.Tp

    def rhs(self, theta, y, lag):
        """The spatial-domain vector field (EDC eqs. 2-5) per packet arrival.

        Parameters
        ----------
        theta : float
            Packet arrivals so far.
        y : numpy.ndarray, shape (B, 5)
            The states.
        lag : aqmlab.fluid.solver.Lag
            Not used (the model drops the RTT delays).

        Returns
        -------
        numpy.ndarray, shape (B, 5)
        """
        W, q, p = y[:, 0], y[:, 1], y[:, 3]
        R = self.rtt(q)
        out = np.zeros_like(y)
        out[:, 0] = 1.0 / (self.N * W) - W * p / (2.0 * self.N)  # EDC eqs. 2-5
        out[:, 1] = project_rate(q, 1.0 - self.C * R / (self.N * W))
        out[:, 2] = R / (self.N * W)
        return out

    def hook(self, theta, y):
        """Event-driven PI update (EDC eq. 10) every ``n_event`` arrivals.

        Parameters
        ----------
        theta : float
            Packet arrivals so far.
        y : numpy.ndarray, shape (B, n)
            The states.

        Returns
        -------
        numpy.ndarray, shape (B, n)
            The states with ``p`` and ``e(k-1)`` updated.
        """
        y = y.copy()
        e = y[:, 1] - self.qref
        y[:, 3] = np.clip(y[:, 3] + self.kp * (e - y[:, 4]) + self.kp * self.ki * e, 0.0, 1.0)
        y[:, 4] = e
        return y

    def initial_state(self):
        """``W = 1``, empty queue, ``p = 0``, ``e(-1) = -q_ref``.

        Returns
        -------
        numpy.ndarray, shape (B, 5)
        """
        z = np.zeros(self.B)
        return np.column_stack([z + 1.0, z, z, z, z - self.qref])

    def bounds(self):
        return np.array([1e-3, 0, 0, 0, -np.inf]), np.array([np.inf, np.inf, np.inf, 1, np.inf])

    def max_delay(self):
        return self.dtheta

    def default_dt(self):
        return self.dtheta

    def simulate(self, duration, **kw):
        """Integrate over ``duration`` packet arrivals (theta); see :meth:`FluidModel.simulate`.
        The ``time`` state gives wall-clock seconds.

        Parameters
        ----------
        duration : float
            Packet arrivals.
        **kw
            As :meth:`FluidModel.simulate` (``dt`` in packets).

        Returns
        -------
        FluidResult
        """
        if kw.get("dt") not in (None, self.dtheta):
            raise ValueError("EDC: set the step through dtheta")
        return super().simulate(duration, **kw)

    def equilibrium(self) -> Equilibrium:
        B = self.B
        q0 = np.broadcast_to(self.qref, (B,)).astype(float)
        R0 = np.broadcast_to(self.rtt(q0), (B,)).astype(float)
        W0 = np.broadcast_to(R0 * self.C / self.N, (B,)).astype(float)
        p0 = 2.0 / W0**2  # EDC eq. 6
        if np.any(p0 > 1):
            raise ValueError(f"no meaningful equilibrium: p0 = {p0} > 1")
        state = np.column_stack([W0, q0, np.zeros(B), p0, np.zeros(B)])
        return Equilibrium({"W": W0, "q": q0, "p": p0, "R": R0}, state)

    def linearize(self) -> LinearizedModel:
        """Per-packet plant (EDC eqs. 7-9), states ``[dW, dq]``, input ``dp``; no delay.

        ``A`` includes the small ``dq`` term of ``dW/dtheta``' neighbour equation exactly as the
        Jacobian gives it; ``extra['discrete'](n)`` returns the ZOH discretisation over ``n``
        packets (the event step).

        Returns
        -------
        LinearizedModel
        """
        eq = self.equilibrium()
        W0, R0 = eq["W"], eq["R"]
        N, C = np.broadcast_to(self.N, W0.shape), np.broadcast_to(self.C, W0.shape)
        A = np.zeros((self.B, 2, 2))
        A[:, 0, 0] = -2.0 * N / (R0 * C) ** 2
        A[:, 1, 0] = N / (R0 * C)
        A[:, 1, 1] = -1.0 / (R0 * C)
        Bm = np.zeros((self.B, 2, 1))
        Bm[:, 0, 0] = -R0 * C / (2.0 * N**2)

        def discrete(n):
            from scipy.linalg import expm

            out = []
            for b in range(self.B):
                M = np.zeros((3, 3))
                M[:2, :2], M[:2, 2:] = A[b] * n, Bm[b] * n
                E = expm(M)
                out.append((E[:2, :2], E[:2, 2:]))
            return out

        return LinearizedModel(
            A,
            np.zeros_like(A),
            Bm,
            np.zeros(self.B),
            ["W", "q"],
            ["p"],
            {"equilibrium": eq, "discrete": discrete},
        )
