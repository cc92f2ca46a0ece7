"""Fluid (delay-differential) models of TCP/AQM and their solver.

Public API (units: packets, packets/s, seconds; array parameters of shape (B,) form a batch):

* ``solve_dde(rhs, t_span, y0, *, dt, max_delay, history=None, lower=None, upper=None,
  record_every=1, hook=None, hook_every=0) -> DDESolution`` -- batched RK4 + Hermite history.
* Laws: ``RED(min_th, max_th, max_p, w_q, gentle)``, ``PI(a, b, fs, qref)`` /
  ``PI.from_continuous(k_pi, z, qref, fs)``, ``REM(gamma, phi, alpha_q, qref, t_u)``,
  ``PDLQ(h1, h2, h3, p1, qref, p_offset)``, ``SFC(k1, k2, qref, c0, p_offset)``, ``make_law(name)``.
* Models (each with ``equilibrium() -> Equilibrium``, ``linearize() -> LinearizedModel``,
  ``simulate(duration, *, dt, y0, history, record_dt) -> FluidResult``):
  ``Misra(n_flows, capacity, rtt, law, buffer)`` (Misra, Gong & Towsley 2000; Hollot et al.
  2001), ``GaoHou(n_flows, capacity, rtt, law, b, buffer)`` (SFC eqs. 4, 10),
  ``KTL(n_flows, capacity, rtt, law, buffer)`` (KTL eq. 1),
  ``Kelly(capacity, rtt, weights, gain, routing)`` (Kelly, Maulloo & Tan 1998),
  ``SQM(capacity, rtt, weights, routing, alpha, k, sigma, beta)`` (SQM eqs. 2-5),
  ``EDC(n_flows, capacity, rtt, qref, kp, ki, n_event, dtheta)`` (EDC eqs. 4-5 and 10).
* Results: ``FluidResult`` (``.plot()``, ``.to_pandas()``, ``result["q"]``, ``.final()``),
  ``Equilibrium`` (``.values``, ``.state``, ``.to_pandas()``), ``LinearizedModel``
  (``A``, ``Ad``, ``B``, ``delay``, ``A_identified``, ``.to_pandas()``, ``.plot()``).

Example
-------
>>> from aqmlab.fluid import Misra, PI
>>> r = Misra(n_flows=60, capacity=3750, rtt=0.2, law=PI(qref=200)).simulate(100)
>>> round(float(r["q"][-1, 0]), 1)
200.0
"""

from aqmlab.fluid.base import FluidCostError
from aqmlab.fluid.edc import EDC
from aqmlab.fluid.gao_hou import GaoHou
from aqmlab.fluid.kelly import Kelly
from aqmlab.fluid.ktl import KTL
from aqmlab.fluid.laws import PDLQ, PI, RED, REM, SFC, FluidLaw, make_law
from aqmlab.fluid.misra import Misra
from aqmlab.fluid.result import Equilibrium, FluidResult, LinearizedModel
from aqmlab.fluid.solver import DDESolution, solve_dde
from aqmlab.fluid.sqm import SQM

__all__ = [
    "solve_dde",
    "DDESolution",
    "FluidResult",
    "Equilibrium",
    "LinearizedModel",
    "FluidLaw",
    "RED",
    "PI",
    "REM",
    "PDLQ",
    "SFC",
    "make_law",
    "Misra",
    "GaoHou",
    "KTL",
    "SQM",
    "Kelly",
    "EDC",
    "FluidCostError",
]
