"""Controller design for AQM: linear plants, margins of delayed loops, gains and stability regions.

Units throughout: capacities in packets/s, times in seconds, queues in packets, probabilities in
[0, 1].  Plants come from :mod:`aqmlab.fluid` (``linearize()``); every design function returns a
result object with the gains, bounds and matrices it used, ``to_dict()`` for JSON and ``.plot()``.

Public API
----------
General tools (:mod:`aqmlab.design.margins`)
    ``delayed_freqresp(G, delay, omega)``, ``delayed_margins(G, delay) -> DelayedMargins``
    (gain/phase/delay margins from the exact ``G(jw) e^{-jw delay}``),
    ``unstable_closed_loop_roots(G, delay)`` / ``is_closed_loop_stable(G, delay)`` (argument
    principle, no Pade), ``pade_loop(G, delay, order)``,
    ``stability_map(evaluate, flows, rtts) -> StabilityMap``,
    ``loop_stability_map(loop, flows, rtts)`` (stability + delay margin of ``loop(N, rtt)``);
    ``PIDesign.stability_map`` and ``SFCDesign.stability_map`` use it.
Plants (:mod:`aqmlab.design.plants`)
    ``misra_plant(N, C, R0)``, ``gao_hou_plant(N, C, tau, b) -> GaoHouPlant``,
    ``ktl_constants(c, N, d, q_ref) -> KTLConstants``, ``edc_spatial_plant(N, C, q0, Tp)``.
Hollot PI (:mod:`aqmlab.design.pi_hollot`)
    ``hollot_pi(n_min, capacity, rtt_max, fs, omega_g=, z=, gain_rule=) -> PIDesign``,
    ``tustin_pi(K, z, fs)``, ``pi_loop(K, z, N, C, R)``.
Kim-Tang-Low PD-LQ (:mod:`aqmlab.design.pd_lq`)
    ``pd_lq_design(capacity, n_flows, prop_rtt, q_ref, p1, lam, memory) -> PDLQDesign``,
    ``ktl_state_space``, ``lq_gains`` (Riccati), ``prop1_h1``, ``prop2_weights``,
    ``prop3_weights``, ``equal_eigenvalue_gains``, ``memory_transform`` (T),
    ``predictor_kernel``, ``predictor_weights``.
Gao-Hou SFC (:mod:`aqmlab.design.sfc`)
    ``sfc_design(capacity, n_min, rtt_max, b, k2, k1=None) -> SFCDesign``, ``k2_max``,
    ``k1_max_printed`` (SFC eqs. 17-18), ``k1_max_exact`` (PI on first order plus delay),
    ``kp_max_exact``, ``sfc_loop``.
EDC (:mod:`aqmlab.design.edc`)
    ``edc_design(N, C, q0, Tp, n_event, kp, ki) -> EDCDesign`` (closed-loop poles, root locus
    plot), ``edc_stable_region(...) -> EDCRegion``, ``edc_discrete_plant``.
SQM sigma (:mod:`aqmlab.design.sqm_sigma`)
    ``sqm_sigma(rates, rtts, alpha, k, rho, margin, split, scale) -> SQMSigma`` (Lyapunov
    equation 21 and condition 23), ``sqm_system_matrix``, ``sqm_lyapunov``.

The decisions taken on the papers' ambiguities are recorded in each module's
docstring.

Example
-------
>>> from aqmlab.design import hollot_pi, sfc_design
>>> f"{hollot_pi(60, 3750.0, 0.246, fs=160.0).a:.4g}"
'1.822e-05'
>>> f"{sfc_design(1250.0, 300, 0.6, b=2, k2=0.2).k1_max_printed:.5f}"
'0.00070'
"""

from aqmlab.design.edc import (
    EDCDesign,
    EDCRegion,
    edc_design,
    edc_discrete_plant,
    edc_stable_region,
)
from aqmlab.design.margins import (
    DelayedMargins,
    StabilityMap,
    delayed_freqresp,
    delayed_margins,
    is_closed_loop_stable,
    loop_stability_map,
    pade_loop,
    stability_map,
    unstable_closed_loop_roots,
)
from aqmlab.design.pd_lq import (
    PDLQDesign,
    equal_eigenvalue_gains,
    ktl_state_space,
    lq_gains,
    memory_transform,
    pd_lq_design,
    predictor_kernel,
    predictor_weights,
    prop1_h1,
    prop2_weights,
    prop3_weights,
)
from aqmlab.design.pi_hollot import PIDesign, hollot_pi, pi_loop, tustin_pi
from aqmlab.design.plants import (
    GaoHouPlant,
    KTLConstants,
    edc_spatial_plant,
    gao_hou_plant,
    ktl_constants,
    misra_plant,
)
from aqmlab.design.sfc import (
    SFCDesign,
    k1_max_exact,
    k1_max_printed,
    k2_max,
    kp_max_exact,
    sfc_design,
    sfc_loop,
)
from aqmlab.design.sqm_sigma import SQMSigma, sqm_lyapunov, sqm_sigma, sqm_system_matrix

__all__ = [
    "DelayedMargins",
    "EDCDesign",
    "EDCRegion",
    "GaoHouPlant",
    "KTLConstants",
    "PDLQDesign",
    "PIDesign",
    "SFCDesign",
    "SQMSigma",
    "StabilityMap",
    "delayed_freqresp",
    "delayed_margins",
    "edc_design",
    "edc_discrete_plant",
    "edc_spatial_plant",
    "edc_stable_region",
    "equal_eigenvalue_gains",
    "gao_hou_plant",
    "hollot_pi",
    "is_closed_loop_stable",
    "k1_max_exact",
    "k1_max_printed",
    "k2_max",
    "kp_max_exact",
    "loop_stability_map",
    "ktl_constants",
    "ktl_state_space",
    "lq_gains",
    "memory_transform",
    "misra_plant",
    "pade_loop",
    "pd_lq_design",
    "pi_loop",
    "predictor_kernel",
    "predictor_weights",
    "prop1_h1",
    "prop2_weights",
    "prop3_weights",
    "sfc_design",
    "sfc_loop",
    "sqm_lyapunov",
    "sqm_sigma",
    "sqm_system_matrix",
    "stability_map",
    "tustin_pi",
    "unstable_closed_loop_roots",
]
