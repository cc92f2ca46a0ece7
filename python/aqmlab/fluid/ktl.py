"""Kim-Tang-Low AIMD model (docs/fluid.md, KTL eqs. 1-2), identical sources, zero forward delay.

::

    dw/dt = w(t-tau)/(d + b(t-tau)/c) [ (1 - p(t-tau))/w(t) - p(t-tau) w(t)/2 ]   # KTL eq. 1
    db/dt = N w(t)/(d + b(t)/c) - c   ([.]^+ at b = 0)                             # KTL eq. 1
    tau(t) = d + b(t)/c

Note the ``(1 - p)`` factor on the increase. Equilibrium: ``tau = d + b*/c``, ``w* = c tau/N``,
``p* = 2/(2 + w*^2) = 2N^2/(2N^2 + c^2 tau^2)``. Linearised queue dynamics (KTL eq. 2):
``db'' = A1 db + A2 db' + B1 dp(t - tau)`` with ``A1 = -p* w*/tau^2``, ``A2 = -(p* w* + 1)/tau``,
``B1 = -N/(tau^2 p*)``, returned in ``linearize().extra``.

Example
-------
>>> from aqmlab.fluid import KTL, PDLQ
>>> m = KTL(n_flows=100, capacity=4000, rtt=0.15, law=PDLQ(qref=200, p_offset=0.0303))
>>> round(float(KTL.p_star(100, 4000, 0.2)), 4)
0.0303
"""

from __future__ import annotations

import numpy as np

from aqmlab.fluid.base import WindowModel
from aqmlab.fluid.laws import FluidLaw

__all__ = ["KTL"]


class KTL(WindowModel):
    """Kim-Tang-Low model with any fluid AQM law (default use: PD-LQ).

    Parameters
    ----------
    n_flows : float or array
        ``N``.
    capacity : float or array
        ``c`` (packets/s).
    rtt : float or array
        Round-trip propagation delay ``d`` (s); the RTT is ``d + b/c``.
    law : FluidLaw
    buffer : float or array
        Queue limit (packets).
    """

    name = "ktl"

    def __init__(self, n_flows, capacity, rtt, law: FluidLaw, buffer=np.inf):
        super().__init__(n_flows, capacity, rtt, law, buffer)

    @staticmethod
    def p_star(n_flows, capacity, tau):
        """``p* = 2N^2/(2N^2 + c^2 tau^2)``: KTL eq. 1 at rest, ``w* = c tau/N``.

        Parameters
        ----------
        n_flows : float or array
            ``N``.
        capacity : float or array
            ``c`` (packets/s).
        tau : float or array
            RTT (s).

        Returns
        -------
        numpy.ndarray
        """
        return 2.0 * n_flows**2 / (2.0 * n_flows**2 + capacity**2 * tau**2)

    def window_rhs(self, W, Wd, pd, R, Rd):
        return Wd / Rd * ((1.0 - pd) / W - pd * W / 2.0)  # KTL eq. 1

    def p_required(self, q):
        return self.p_star(self.N, self.C, self.rtt(q))

    def window_partials(self, W0, p0, R0):
        z = 0.0 * W0
        return {
            "W": W0 / R0 * (-(1 - p0) / W0**2 - p0 / 2),
            "Wd": z,  # multiplies the bracket, which vanishes at equilibrium
            "R": z,
            "Rd": z,
            "p": -(1.0 / R0) * (1 + W0**2 / 2),
        }

    def linearize(self):
        """Plant linearisation plus the KTL eq. 2 coefficients ``A1, A2, B1`` in ``extra``.

        Returns
        -------
        LinearizedModel
        """
        lin = super().linearize()
        eq = lin.extra["equilibrium"]
        p, w, tau = eq["p"], eq["W"], eq["R"]
        lin.extra.update(A1=-p * w / tau**2, A2=-(p * w + 1) / tau, B1=-self.N / (tau**2 * p))
        return lin
