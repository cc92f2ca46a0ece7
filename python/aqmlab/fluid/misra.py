"""Misra-Gong-Towsley / Hollot TCP-AQM fluid model (docs/fluid.md).

Equations (N Reno flows, capacity C packets/s, propagation RTT T_p s)::

    dW/dt = 1/R(t) - W(t) W(t-R(t)) / (2 R(t-R(t))) * p(t-R(t))      # Hollot et al. 2001
    dq/dt = N W(t)/R(t) - C   ([.]^+ at q = 0)                         # (EDC eq. 1 as well)
    R(t)  = q(t)/C + T_p                                                # state-dependent delay

``W`` window (packets), ``q`` queue (packets), ``p`` mark/drop probability from a fluid AQM law
(:mod:`aqmlab.fluid.laws`: RED, PI, REM, PD-LQ, SFC). Equilibrium ``W0 = R0 C/N``,
``p0 = 2 N^2/(R0 C)^2``. Linearisation (Hollot): ``A_identified = [[-2N/(R0^2 C), 0],
[N/R0, -1/R0]]``, ``B = [-R0 C^2/(2 N^2), 0]^T`` acting on ``dp(t - R0)``.

Example
-------
>>> from aqmlab.fluid import Misra, PI
>>> m = Misra(n_flows=60, capacity=3750, rtt=0.2, law=PI(qref=200))
>>> round(float(m.equilibrium()["p"][0]), 5)   # 2 N^2 / (R0 C)^2, R0 = 200/3750 + 0.2
0.00798
"""

from __future__ import annotations

import numpy as np

from aqmlab.fluid.base import WindowModel
from aqmlab.fluid.laws import FluidLaw

__all__ = ["Misra"]


class Misra(WindowModel):
    """Misra-Hollot model driven by any fluid AQM law.

    Parameters
    ----------
    n_flows : float or array
        Number of long-lived Reno flows ``N``.
    capacity : float or array
        Bottleneck capacity ``C`` (packets/s).
    rtt : float or array
        Propagation round-trip time ``T_p`` (s).
    law : FluidLaw
        The AQM law producing ``p``.
    buffer : float or array
        Queue limit (packets), default unlimited.

    Array parameters of shape ``(B,)`` define a batch of ``B`` models simulated together.
    """

    name = "misra"

    def __init__(self, n_flows, capacity, rtt, law: FluidLaw, buffer=np.inf):
        super().__init__(n_flows, capacity, rtt, law, buffer)

    def window_rhs(self, W, Wd, pd, R, Rd):
        return 1.0 / R - W * Wd / (2.0 * Rd) * pd  # the window equation above

    def p_required(self, q):
        R = self.rtt(q)
        return 2.0 * self.N**2 / (R * self.C) ** 2  # p0 = 2N^2/(R0 C)^2 (EDC eq. 6)

    def window_partials(self, W0, p0, R0):
        return {
            "W": -W0 * p0 / (2 * R0),
            "Wd": -W0 * p0 / (2 * R0),
            "R": -1.0 / R0**2,
            "Rd": W0**2 * p0 / (2 * R0**2),
            "p": -(W0**2) / (2 * R0),
        }
