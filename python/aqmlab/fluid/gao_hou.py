"""Gao-Hou enhanced TCP model (docs/fluid.md, SFC eqs. 4, 10-14).

Abrupt halving at most once per RTT and delayed ACKs (``b`` packets per ACK)::

    dw/dt = w(t-tau)/(b tau w) + [w(t-tau)/(2 b tau w) - w(t-tau)^2/(2 b tau w)] p(t-tau)
            - w w(t-tau)/(2 tau) p(t-tau)                                  # SFC eq. 4
    dq/dt = N w/tau - C   ([.]^+ at q = 0)                                 # SFC eq. 10

``tau`` (s) is constant, as in the paper ("tau treated as constant"); decision: the ``rtt``
parameter is that ``tau`` (not a propagation delay), so the queue does not change the delay.
Equilibrium (SFC eq. 11): ``w0 = tau C/N``, ``p0 = 2/(b w0^2 + w0 - 1)``; meaningful only for
``N < (1 + sqrt(12 b + 1))/6 tau C``. Linearisation (SFC eqs. 12-14, which the identified form
reproduces): ``dq' = (N/tau) dw``, ``dw' = -p0 (1 + 2 b w0)/(2 b tau) dw - dp(t-tau)/(b tau p0)``.

Example
-------
>>> from aqmlab.fluid import GaoHou, SFC
>>> m = GaoHou(n_flows=300, capacity=1250, rtt=0.6, b=2, law=SFC())
>>> round(float(m.equilibrium()["p"][0]), 3)   # SFC worked example: alpha = 2.5, p0 = 0.143
0.143
"""

from __future__ import annotations

import numpy as np

from aqmlab.fluid.base import WindowModel, as_param
from aqmlab.fluid.laws import FluidLaw

__all__ = ["GaoHou"]


class GaoHou(WindowModel):
    """Gao-Hou model with ``N`` homogeneous ECN flows and any fluid AQM law (default use: SFC).

    Parameters
    ----------
    n_flows : float or array
        ``N``.
    capacity : float or array
        ``C`` (packets/s).
    rtt : float or array
        Round-trip time ``tau`` (s), constant.
    law : FluidLaw
    b : float or array
        Packets acknowledged per ACK (1 or 2).
    buffer : float or array
        Queue limit (packets).
    """

    name = "gao-hou"
    queue_dependent_rtt = False

    def __init__(self, n_flows, capacity, rtt, law: FluidLaw, b=2.0, buffer=np.inf):
        super().__init__(n_flows, capacity, rtt, law, buffer)
        self.b = as_param(b, "b", positive=True)

    def window_rhs(self, W, Wd, pd, R, Rd):
        b, tau = self.b, R
        return (
            Wd / (b * tau * W)
            + (Wd / (2 * b * tau * W) - Wd**2 / (2 * b * tau * W)) * pd
            - W * Wd / (2 * tau) * pd
        )  # SFC eq. 4

    def p_required(self, q):
        w0 = self.Tp * self.C / self.N
        return 2.0 / (self.b * w0**2 + w0 - 1.0) + 0.0 * q  # SFC eq. 11

    def max_n_flows(self):
        """Largest ``N`` with a meaningful equilibrium: ``(1 + sqrt(12 b + 1))/6 tau C``.

        Returns
        -------
        numpy.ndarray, shape (B,)
        """
        return (1 + np.sqrt(12 * self.b + 1)) / 6 * self.Tp * self.C

    def window_partials(self, W0, p0, R0):
        b, tau = self.b, R0
        g = 1 + p0 / 2 - W0 * p0 / 2
        return {
            "W": -g / (b * tau * W0) - W0 * p0 / (2 * tau),
            "Wd": g / (b * tau * W0) - p0 / (2 * b * tau) - W0 * p0 / (2 * tau),
            "R": 0.0 * W0,
            "Rd": 0.0 * W0,
            "p": (1 - W0) / (2 * b * tau) - W0**2 / (2 * tau),
        }
